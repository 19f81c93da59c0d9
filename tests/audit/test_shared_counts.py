"""The black-box audit's shared sorts give the numbers of the separate estimators.

`audit_black_box` sorts and counts each confirmation world once and reads the ε bound,
the curve audit and the Gaussian-DP μ from the same counts; its pilot sorts each world
once for both orientations (issue 23). These property tests check, over random
scores (with ties and ±0), thresholds, confidences and claims, that the shared path
returns exactly (by ``repr``, so bit for bit and NaN-aware) what the public estimators
return when each sorts the scores itself. Deterministic: no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
from fedpriv.audit.estimators import (
    audit_privacy_curve,
    default_epsilon_grid,
    estimate_epsilon_lower_bound,
    estimate_gdp_mu_lower_bound,
)
from fedpriv.audit.regression import _selection
from fedpriv.audit.regression.api import _confirm, _Plan
from fedpriv.privacy import ApproxDP, GaussianDP, PureDP
from hypothesis import given, settings
from hypothesis import strategies as st

_POOL = [-0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0]


def _scores(draw: st.DrawFn, seed: int, size: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        return rng.laplace(draw(st.floats(-2.0, 2.0)), 1.0, size)
    if kind == "rounded":  # many ties
        return np.round(rng.normal(0.0, 2.0, size), 1)
    return rng.choice(np.array(_POOL), size)  # few values, both zeros


@st.composite
def _worlds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["continuous", "rounded", "pool"]))
    scores_d = _scores(draw, seed, draw(st.integers(1, 400)), kind)
    scores_dp = _scores(draw, seed + 1, draw(st.integers(1, 400)), kind)
    thresholds = np.array(
        draw(
            st.lists(
                st.one_of(st.sampled_from(_POOL), st.floats(-4.0, 4.0, allow_nan=False)),
                min_size=1,
                max_size=24,
            )
        )
    )
    return scores_d, scores_dp, thresholds


_CLAIMS = st.one_of(
    st.builds(PureDP, st.floats(0.05, 3.0)),
    st.builds(ApproxDP, st.floats(0.05, 3.0), st.floats(1e-8, 0.2)),
    st.builds(GaussianDP, st.floats(0.05, 3.0)),
)


@settings(max_examples=300, deadline=None)
@given(
    worlds=_worlds(),
    claim=_CLAIMS,
    route=st.sampled_from(["threshold", "curve", "gdp"]),
    confidence=st.floats(0.5, 0.999),
)
def test_confirm_matches_the_separate_estimators(worlds, claim, route, confidence):
    scores_d, scores_dp, thresholds = worlds
    delta = float(getattr(claim, "delta", 0.0 if isinstance(claim, PureDP) else 1e-5))
    grid = None if route == "gdp" else default_epsilon_grid(claim)
    plan = _Plan(claim, route, scores_d.size, 1000, confidence, thresholds.size, delta, grid)
    shared = _confirm(plan, scores_d.copy(), scores_dp.copy(), thresholds)

    bound = estimate_epsilon_lower_bound(
        scores_d, scores_dp, thresholds=thresholds, confidence=confidence, delta=delta
    )
    assert repr(shared["bound"]) == repr(bound)
    assert shared["epsilon_lower_bound"] == bound.epsilon_lower_bound
    if route == "gdp":
        mu = estimate_gdp_mu_lower_bound(
            scores_d, scores_dp, thresholds=thresholds, confidence=confidence
        )
        assert repr(shared["mu"]) == repr(mu)
        assert shared["curve"] is None
    else:
        curve = audit_privacy_curve(
            scores_d,
            scores_dp,
            claim=claim,
            thresholds=thresholds,
            epsilons=grid,
            confidence=confidence,
        )
        assert repr(shared["curve"]) == repr(curve)
        assert shared["mu"] is None
        assert shared["violated"] == (
            bound.epsilon_lower_bound > float(claim.get_epsilon(delta)) or curve.violated
        )


def _bits(values: np.ndarray) -> list[int]:
    return np.asarray(values, dtype=np.float64).view(np.uint64).tolist()


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["continuous", "rounded", "pool"]),
    sizes=st.tuples(st.integers(1, 900), st.integers(1, 900)),
    data=st.data(),
)
def test_pilot_sorts_match_sorting_each_orientation(seed, kind, sizes, data):
    """Both orientations' sorted worlds and candidates, bit for bit, as when each
    orientation was sorted afresh and the pool handed to np.unique / np.quantile."""
    scores_d = _scores(data.draw, seed, sizes[0], kind)
    scores_dp = _scores(data.draw, seed + 1, sizes[1], kind)
    levels = np.linspace(0.0, 1.0, _selection._MAX_CANDIDATES + 1)
    shared = _selection._sorted_pilots(scores_d, scores_dp)
    assert [entry[0] for entry in shared] == [1, -1]
    for sign, s0, s1, ordered in shared:
        ref0, ref1 = np.sort(sign * scores_d), np.sort(sign * scores_dp)
        assert _bits(s0) == _bits(ref0) and _bits(s1) == _bits(ref1)
        pooled = np.concatenate([ref0, ref1])
        unique = np.unique(pooled)
        if unique.size > _selection._MAX_CANDIDATES:
            unique = np.unique(np.quantile(pooled, levels, method="inverted_cdf"))
        assert _bits(_selection._candidates(s0, s1, ordered)) == _bits(unique)
