"""The black-box audit's shared counts give the numbers of the separate estimators.

`audit_black_box` counts each confirmation world once, batch by batch and without
sorting, and reads the ε bound, the curve audit and the Gaussian-DP μ from the same
counts; its pilot sorts each world once for both orientations (issue 23). These
property tests check, over random scores (with ties, ±0 and infinities), thresholds,
confidences and claims, that the shared path returns exactly (by ``repr``, so bit for
bit and NaN-aware) what the public estimators return when each sorts the scores
itself. Deterministic: no false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.audit.engine.executor import count_scores, sample_scores
from fedpriv.audit.estimators import (
    audit_privacy_curve,
    default_epsilon_grid,
    estimate_epsilon_lower_bound,
    estimate_gdp_mu_lower_bound,
)
from fedpriv.audit.estimators.threshold import (
    _COMPARE_MAX_THRESHOLDS,
    count_at_least,
    count_at_least_unsorted,
)
from fedpriv.audit.regression import _selection
from fedpriv.audit.regression.api import _confirm, _Plan
from fedpriv.privacy import ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.errors import MechanismError
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
    # the audit draws the same number of confirmation samples in both worlds
    scores_dp = np.resize(scores_dp, scores_d.size)
    plan = _Plan(claim, route, scores_d.size, 1000, confidence, thresholds.size, delta, grid)
    count_d = count_at_least_unsorted(scores_d, thresholds)
    count_dp = count_at_least_unsorted(scores_dp, thresholds)
    shared = _confirm(plan, count_d, count_dp, scores_d.size, thresholds)

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


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(["continuous", "rounded", "pool"]),
    size=st.integers(1, 900),
    orientation=st.sampled_from([1, -1]),
    n_thresholds=st.sampled_from([1, 7, _COMPARE_MAX_THRESHOLDS, _COMPARE_MAX_THRESHOLDS + 1, 200]),
    with_infinities=st.booleans(),
    data=st.data(),
)
def test_unsorted_counts_equal_sorted_counts(
    seed, kind, size, orientation, n_thresholds, with_infinities, data
):
    """Both regimes (comparisons, sorted copy) count exactly what sorting counts,
    including ±0 on either side, ties and infinite scores, and leave the scores alone."""
    scores = _scores(data.draw, seed, size, kind)
    if with_infinities:
        scores[:: max(1, size // 5)] = np.inf
        scores[1 :: max(2, size // 3)] = -np.inf
    rng = np.random.default_rng(seed)
    thresholds = np.concatenate(
        [rng.choice(np.array(_POOL), n_thresholds // 2), rng.normal(0.0, 2.0, n_thresholds)]
    )[:n_thresholds]
    before = _bits(scores)
    got = count_at_least_unsorted(scores, thresholds, orientation)
    assert _bits(scores) == before
    expected = count_at_least(np.sort(orientation * scores), thresholds)
    assert got.dtype == np.int64 and got.tolist() == expected.tolist()


def _laplace_or_ties(dataset: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return np.round(dataset + rng.laplace(0.0, 1.0, n), 1)


def _score(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs, dtype=np.float64)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_samples=st.integers(1, 3000),
    batch_size=st.integers(1, 1200),
    orientation=st.sampled_from([1, -1]),
)
def test_count_scores_counts_the_sampled_scores(seed, n_samples, batch_size, orientation):
    """Batch-by-batch counts equal counting the concatenated scores of the same
    addressed batches (the audit's confirmation before issue 23)."""
    root = np.random.SeedSequence(seed)
    thresholds = np.array([-1.0, -0.0, 0.3, 1.0, 2.5])
    options = {"n_samples": n_samples, "root": root, "transform": _score}
    options.update(batch_size=batch_size, executor=None)
    datasets = (1.0, 0.0)
    counts = count_scores(
        _laplace_or_ties, datasets, thresholds=thresholds, orientation=orientation, **options
    )
    for got, scores in zip(counts, sample_scores(_laplace_or_ties, datasets, **options)):
        expected = count_at_least(np.sort(orientation * scores), thresholds)
        assert got.tolist() == expected.tolist()


def test_an_infinite_confirmation_score_names_the_mechanism():
    def _spiky(dataset: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.where(rng.random(n) < 0.01, np.inf, dataset + rng.laplace(0.0, 1.0, n))

    with pytest.raises(
        MechanismError,
        match=r"the score function .*_score on the outputs of .*_spiky gave \d+ NaN or "
        r"infinite value\(s\) in one batch of 1000 on world D\.",
    ):
        count_scores(
            _spiky,
            (1.0, 0.0),
            n_samples=5000,
            root=np.random.SeedSequence(0),
            transform=_score,
            thresholds=np.array([0.0]),
            orientation=1,
            batch_size=1000,
        )


@settings(max_examples=200, deadline=None)
@given(
    n=st.one_of(st.integers(1, 5000), st.integers(5000, 3_000_000)),
    n_levels=st.sampled_from([2, 3, 64, _selection._MAX_CANDIDATES + 1]),
)
def test_inverted_cdf_positions_are_np_quantiles(n, n_levels):
    """The pilot reads np.quantile's inverted-CDF order statistics by position."""
    levels = np.linspace(0.0, 1.0, n_levels)
    ordered = np.arange(n, dtype=np.float64)  # value == position
    expected = np.quantile(ordered, levels, method="inverted_cdf")
    got = ordered[_selection._inverted_cdf_positions(n, levels)]
    assert _bits(got) == _bits(expected)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"orientation": 0}, "`orientation` must be 1 or -1, got 0"),
        ({"orientation": True}, "`orientation` must be 1 or -1, got True"),
        ({"thresholds": np.array([0.0, np.nan])}, "`thresholds`"),
        ({"thresholds": np.zeros((2, 2))}, "`thresholds` must be a non-empty 1-D array"),
        ({"thresholds": np.array([])}, "`thresholds` must be a non-empty 1-D array"),
        ({"transform": None}, "`transform` must be a score function"),
    ],
)
def test_count_scores_refuses_bad_options(options, match):
    arguments = {"thresholds": np.array([0.0]), "orientation": 1, "transform": _score}
    arguments.update(options)
    error = TypeError if "transform" in options else ValueError
    with pytest.raises(error, match=match):
        count_scores(
            _laplace_or_ties,
            (1.0, 0.0),
            n_samples=10,
            root=np.random.SeedSequence(0),
            batch_size=5,
            **arguments,
        )
