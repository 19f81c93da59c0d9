"""Issue 38 item 4: the Gaussian-DP reading tests the Gaussian shape it assumes.

``reading="gaussian"`` turns the μ lower bound into "not (ε, δ)-DP" only for a
Gaussian-shaped trade-off curve. The audit tests that shape on its pilot
(:func:`fedpriv.audit.estimators.shape.assess_gaussian_shape`, at the level
``(1 - confidence) / (2 n_thresholds + 1)``, one share of the audit's Bonferroni
family) and declines the reading where the shape is rejected: ``reading_verdict`` is
``"unresolved"`` and the reading refutes nothing, while the any-mechanism bound is still
reported and still refutes.

Statistical tests pin their seeds; each states its false-failure probability:

- false alarms of the reading (``violated`` on a correct mechanism against its true
  claim): Laplace(1), randomized response at ε = 1 and the geometric (discrete Laplace)
  mechanism at ε = 1, each against ApproxDP(ε, 1e-5), 10⁴ samples per world (the
  smallest default pilot, 1000 per world), 200 seeds each, and Laplace(1) against its
  tight ApproxDP(0.998, 1e-3) claim: at most 2 alarms in 200. Two alarms in 200 put the
  one-sided 99% Clopper–Pearson upper bound on the rate at 0.041 < α = 0.05, so passing
  shows the rate is <= α; if the rate were α, the test would pass with probability
  P(Bin(200, 0.05) <= 2) = 0.0023. (Before the shape test: 200 alarms in 200.)
- the shape tests' level on Gaussians: at level 0.01, at most 7 rejections in 200
  seeds, for the pilot's test and for the confirmation's (bins cut on a 1000-sample
  pilot, 10x fresh samples counted at them): P(Bin(200, 0.01) >= 8) = 0.0010.

Power on under-noised Gaussians is pinned in ``tests/audit/test_audit_power.py`` and
measured by ``benchmarks/bench_audit_power.py``.
"""

from __future__ import annotations

import functools
import math

import fedpriv.audit as audit
import numpy as np
import pytest
from fedpriv.audit.estimators.gdp import claim_mu
from fedpriv.audit.estimators.shape import (
    SHAPE_MIN_SAMPLES,
    assess_gaussian_shape,
    gaussian_shape_from_counts,
    pooled_quantile_edges,
)
from fedpriv.audit.regression.corpus_mechanisms import gaussian_count, laplace_count
from fedpriv.privacy import ApproxDP, GaussianDP
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

PAIR = audit.NeighboringPair(1.0, 0.0)
RR_PAIR = audit.NeighboringPair(1.0, 0.0)
MU0 = claim_mu(ApproxDP(1.0, 1e-5), 1e-5)


def _randomized_response(dataset: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Randomized response on one bit at ε = 1: the bit kept w.p. e/(1 + e)."""
    keep = rng.random(n_samples) < math.e / (1.0 + math.e)
    return np.where(keep, dataset, 1.0 - dataset)


def _geometric(dataset: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """The geometric (discrete Laplace) mechanism at ε = 1 for a count of sensitivity 1:
    ``x + G1 - G2``, G1, G2 geometric with success 1 - e^-1, so P(k) ∝ e^-|k|."""
    p = 1.0 - math.exp(-1.0)
    return dataset + (rng.geometric(p, n_samples) - rng.geometric(p, n_samples)).astype(float)


CORRECT = {
    "laplace": (functools.partial(laplace_count, scale=1.0), ApproxDP(1.0, 1e-5)),
    "laplace, tight claim": (functools.partial(laplace_count, scale=1.0), ApproxDP(0.998, 1e-3)),
    "randomized response": (_randomized_response, ApproxDP(1.0, 1e-5)),
    "geometric": (_geometric, ApproxDP(1.0, 1e-5)),
}


def test_binomial_thresholds_stated_in_the_docstring() -> None:
    assert stats.beta.ppf(0.99, 3, 198) == pytest.approx(0.041, abs=5e-4)
    assert stats.binom.cdf(2, 200, 0.05) == pytest.approx(0.0023, abs=5e-5)
    assert stats.binom.sf(7, 200, 0.01) == pytest.approx(0.0010, abs=5e-5)


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(CORRECT))
def test_reading_false_alarms_on_correct_non_gaussian_mechanisms(name: str) -> None:
    mechanism, claim = CORRECT[name]
    results = [
        audit.audit_mechanism(
            mechanism, PAIR, claim=claim, samples=10**4, seed=s, executor=None, reading="gaussian"
        )
        for s in range(200)
    ]
    assert sum(r.violated for r in results) <= 2
    # the reading would refute these true claims: it is the shape test that declines
    declined = [r for r in results if r.reading_verdict == "unresolved"]
    assert len(declined) >= 198
    assert all(
        r.shape_test.rejected and r.shape_test.p_value < r.shape_test.level for r in declined
    )
    # the any-mechanism bound is still reported, and below the truth
    assert all(0.0 <= r.epsilon_lower_bound <= 1.0 for r in results)


def _counted(edges: np.ndarray, scores: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.sort(scores), edges, "left")


@pytest.mark.statistical
@pytest.mark.parametrize("stage", ["pilot", "confirmation"])
def test_shape_test_level_on_gaussians(stage: str) -> None:
    rejected = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        mu = (0.27, 0.4, 0.54, 2.0)[seed % 4]
        d, dp = rng.normal(mu, 1.0, 1000), rng.normal(0.0, 1.0, 1000)
        if stage == "pilot":
            shape = assess_gaussian_shape(d, dp, level=0.01)
        else:  # bins cut on these, tested on 10x fresh samples
            edges = pooled_quantile_edges(d, dp)
            fresh_d, fresh_dp = rng.normal(mu, 1.0, 10**4), rng.normal(0.0, 1.0, 10**4)
            shape = gaussian_shape_from_counts(
                _counted(edges, fresh_d), 10**4, _counted(edges, fresh_dp), 10**4, level=0.01
            )
            assert shape.stage == "confirmation" and shape.df == 8
        rejected += shape.rejected
    assert rejected <= 7


def test_confirmation_stage_sees_what_the_pilot_cannot() -> None:
    # Laplace(3): the two worlds overlap; 1000 pilot samples rarely tell its curve from a
    # Gaussian one, 10^5 confirmation samples at the pilot's bins do (pinned seed).
    laplace = functools.partial(laplace_count, scale=3.0)
    result = audit.audit_mechanism(
        laplace, PAIR, claim=ApproxDP(1.0 / 3.0, 1e-5), samples=10**5, seed=0, executor=None,
        reading="gaussian", pilot_samples=1000,
    )  # fmt: skip
    pilot, confirmation = result.shape_tests
    assert not pilot.rejected and confirmation.rejected
    assert result.shape_test is confirmation and result.reading_verdict == "unresolved"
    assert not result.violated


def test_sequential_audits_test_the_pilot_only() -> None:
    result = audit.audit_mechanism(
        functools.partial(laplace_count, scale=1.0), PAIR, claim=ApproxDP(1.0, 1e-5),
        samples=10**4, seed=0, executor=None, reading="gaussian", sequential=True,
    )  # fmt: skip
    assert len(result.shape_tests) == 1 and result.shape_test.stage == "pilot"
    assert result.shape_test.level == pytest.approx(0.05 / 33)
    assert result.reading_verdict == "unresolved" and not result.violated


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="below_d"):
        gaussian_shape_from_counts([5, 3], 10, [1, 2], 10, level=0.01)
    with pytest.raises(ValueError, match="below_d_prime"):
        gaussian_shape_from_counts([1, 3], 10, [1, 11], 10, level=0.01)
    with pytest.raises(ValueError, match="level"):
        gaussian_shape_from_counts([1, 3], 10, [1, 2], 10, level=1.0)
    assert math.isnan(gaussian_shape_from_counts([4], 10, [5], 10, level=0.01).statistic)


def test_a_declined_reading_is_unresolved_and_keeps_the_any_mechanism_verdict() -> None:
    laplace = functools.partial(laplace_count, scale=1.0)
    kept = audit.audit_mechanism(
        laplace, PAIR, claim=ApproxDP(1.0, 1e-5), samples=10**4, seed=3, executor=None,
        reading="gaussian",
    )  # fmt: skip
    assert kept.reading_verdict == "unresolved" and not kept.violated
    assert kept.reading_epsilon_lower_bound > 1.0  # what the reading alone would say
    assert "declined" in kept.evidence and "Gaussian shape rejected at level" in kept.evidence
    # a violation by the any-mechanism bound still stands (Laplace(1) is not 0.5-DP)
    broken = audit.audit_mechanism(
        laplace, PAIR, claim=ApproxDP(0.5, 1e-5), samples=10**5, seed=3, executor=None,
        reading="gaussian",
    )  # fmt: skip
    assert broken.reading_verdict == "unresolved"
    assert broken.violated and broken.epsilon_lower_bound > 0.5


def test_family_split_between_the_bounds_and_the_shape_test() -> None:
    result = audit.audit_mechanism(
        _gaussian(1.5), PAIR, claim=ApproxDP(1.0, 1e-5), samples=10**4, seed=0, executor=None,
        reading="gaussian", confidence=0.9, n_thresholds=8,
    )  # fmt: skip
    share = 0.1 / 17  # split between the pilot's and the confirmation's shape tests
    assert [t.stage for t in result.shape_tests] == ["pilot", "confirmation"]
    assert all(t.level == pytest.approx(share / 2) for t in result.shape_tests)
    assert result.shape_test is result.shape_tests[1]
    assert result.confidence == pytest.approx(1.0 - (0.1 - share))
    assert result.family_confidence == 0.9
    assert result.reading_verdict == "violated" and result.violated
    assert "Gaussian shape not rejected" in result.evidence


def test_untestable_shape_declines_the_reading() -> None:
    result = audit.audit_mechanism(
        _gaussian(3.0), PAIR, claim=ApproxDP(1.0, 1e-5), samples=10**4, seed=0, executor=None,
        reading="gaussian", pilot_samples=SHAPE_MIN_SAMPLES - 1,
    )  # fmt: skip
    assert math.isnan(result.shape_test.statistic) and result.shape_test.rejected
    assert result.reading_verdict == "unresolved"
    assert "could not be tested" in result.evidence


def test_gaussian_dp_claims_and_the_default_reading_need_no_shape_test() -> None:
    gdp = audit.audit_mechanism(
        _gaussian(1.5), PAIR, claim=GaussianDP(MU0), samples=10**4, seed=0, executor=None,
        reading="gaussian",
    )  # fmt: skip
    assert gdp.shape_test is None and gdp.violated and gdp.family_confidence == 0.95
    assert gdp.confidence == 0.95
    base = audit.audit_mechanism(
        _gaussian(1.5), PAIR, claim=ApproxDP(1.0, 1e-5), samples=10**4, seed=0, executor=None
    )
    assert base.shape_test is None and base.reading_verdict is None


def _gaussian(factor: float):
    return functools.partial(gaussian_count, noise_stddev=1.0 / MU0 / factor)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(0.1, 10.0), shift=st.floats(-5.0, 5.0))
def test_shape_test_is_invariant_under_increasing_maps(
    seed: int, scale: float, shift: float
) -> None:
    rng = np.random.default_rng(seed)
    d, dp = rng.laplace(0.5, 1.0, 600), rng.laplace(0.0, 1.0, 600)
    base = assess_gaussian_shape(d, dp, level=0.01)
    moved = assess_gaussian_shape(
        np.arctan(scale * d + shift), np.arctan(scale * dp + shift), level=0.01
    )
    assert moved.rejected == base.rejected
    assert moved.statistic == pytest.approx(base.statistic, rel=1e-4, abs=1e-6)


def test_atoms_are_split_like_randomized_tests() -> None:
    # randomized response: two atoms, a piecewise-linear trade-off curve, never G_μ
    rng = np.random.default_rng(0)
    shape = assess_gaussian_shape(
        _randomized_response(1.0, 1000, rng), _randomized_response(0.0, 1000, rng), level=1e-3
    )
    assert shape.rejected and shape.p_value < 1e-6
    # identical worlds are a Gaussian curve (μ = 0): nothing to reject
    same = assess_gaussian_shape(np.zeros(500), np.zeros(500), level=0.05)
    assert not same.rejected and same.mu_fit == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"level": 0.0}, ValueError, "level"),
        ({"level": 1.5}, ValueError, "level"),
        ({"level": 0.01, "n_bins": 2}, ValueError, "n_bins"),
    ],
)
def test_bad_input_is_refused(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        assess_gaussian_shape(np.zeros(300), np.ones(300), **kwargs)


def test_bad_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="scores_d"):
        assess_gaussian_shape(np.array([np.nan] * 300), np.ones(300), level=0.01)
    with pytest.raises(TypeError, match="scores_d_prime"):
        assess_gaussian_shape(np.ones(300), np.array(["a"] * 300), level=0.01)
