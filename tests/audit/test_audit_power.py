"""Issue 23 item 3: audit power on Gaussians (GDP reading) and anytime-valid sequential audits.

Statistical tests pin their seeds; each states its false-failure probability:

- power: a Gaussian calibrated to (1, 1e-5) drawing 1.5x less noise, audited against
  ApproxDP(1, 1e-5) under ``reading="gaussian"`` at 10^5 samples per world, is caught in
  >= 16 of 20 seeds. If the power were exactly 90% this fails with probability
  P(Bin(20, 0.9) <= 15) = 0.043; the benchmark measures 100/100
  (``benchmarks/bench_audit_power.py``);
- false alarms: the correctly calibrated Gaussian raises <= 3 alarms in 20 seeds. If the
  false-alarm rate were exactly 5%, P(Bin(20, 0.05) >= 4) = 0.016;
- optional stopping: sequential audits of mechanisms that sit exactly on their claim
  (randomized response at its ε; the Gaussian at its μ), 10 looks each at 80% confidence,
  alarm in at most 12 of 30 seeds: at the nominal 20% level P(Bin(30, 0.2) >= 13) = 0.0031;
- the confidence sequence's time-uniform coverage: 300 Bernoulli paths leave it at some
  look at most 45 times at α = 0.1 (P(Bin(300, 0.1) >= 46) = 0.0022).
"""

from __future__ import annotations

import functools

import fedpriv.audit as audit
import numpy as np
import pytest
from fedpriv.audit.estimators.gdp import claim_mu
from fedpriv.audit.estimators.sequential import beta_binomial_confidence_sequence
from fedpriv.audit.regression.corpus_mechanisms import gaussian_count, laplace_count
from fedpriv.privacy import ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.accounting.conversions import gaussian_dp_delta
from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

PAIR = audit.NeighboringPair(1.0, 0.0)
CLAIM = ApproxDP(1.0, 1e-5)
MU0 = claim_mu(CLAIM, 1e-5)


def _gaussian(factor: float):
    return functools.partial(gaussian_count, noise_stddev=1.0 / MU0 / factor)


def test_claim_mu_is_the_gaussian_calibration() -> None:
    # rounded up (never below the calibration: a smaller μ₀ would add alarms)
    assert gaussian_dp_delta(MU0, 1.0) >= 1e-5
    assert gaussian_dp_epsilon(MU0 * (1 - 1e-9), 1e-5) < 1.0
    assert gaussian_dp_epsilon(MU0 * (1 + 1e-9), 1e-5) > 1.0
    assert pytest.approx(0.26805112321129754, rel=1e-9) == MU0
    assert claim_mu(GaussianDP(0.3), 1e-5) == 0.3


def test_binomial_thresholds_stated_in_the_docstring() -> None:
    assert stats.binom.cdf(15, 20, 0.9) == pytest.approx(0.043, abs=5e-4)
    assert stats.binom.sf(3, 20, 0.05) == pytest.approx(0.016, abs=5e-4)
    assert stats.binom.sf(12, 30, 0.2) == pytest.approx(0.0031, abs=5e-5)
    assert stats.binom.sf(45, 300, 0.1) < 0.0025


def test_power_against_one_and_a_half_times_less_noise() -> None:
    caught = [
        audit.audit_mechanism(
            _gaussian(1.5),
            PAIR,
            claim=CLAIM,
            samples=10**5,
            seed=s,
            executor=None,
            reading="gaussian",
        ).violated
        for s in range(20)
    ]
    assert sum(caught) >= 16


def test_false_alarms_on_the_calibrated_gaussian() -> None:
    results = [
        audit.audit_mechanism(
            _gaussian(1.0),
            PAIR,
            claim=CLAIM,
            samples=10**5,
            seed=s,
            executor=None,
            reading="gaussian",
        )
        for s in range(100, 120)
    ]
    assert sum(r.violated for r in results) <= 3
    # the any-mechanism bound stays below the truth, and the reading's ε is stated
    assert all(r.epsilon_lower_bound <= 1.0 for r in results)
    assert all(np.isfinite(r.reading_epsilon_lower_bound) for r in results)


def test_default_reading_is_unchanged_and_sound_only() -> None:
    # Without the reading an ApproxDP claim is refuted only by any-mechanism bounds.
    base = audit.audit_mechanism(
        _gaussian(1.5), PAIR, claim=CLAIM, samples=10**4, seed=0, executor=None
    )
    assert base.reading == "any" and np.isnan(base.reading_epsilon_lower_bound)
    assert base.looks == 1 and base.samples_saved == 0
    read = audit.audit_mechanism(
        _gaussian(1.5), PAIR, claim=CLAIM, samples=10**4, seed=0, executor=None, reading="gaussian"
    )
    assert read.route == "gdp" and read.violated and "Gaussian-DP reading" in read.evidence


def _randomized_response(epsilon: float):
    def mechanism(x, n, rng):
        keep = rng.random(n) < np.exp(epsilon) / (1.0 + np.exp(epsilon))
        return np.where(keep, x, 1.0 - x)

    return mechanism


@pytest.mark.parametrize("case", ["rr", "gaussian"])
def test_sequential_false_alarms_under_optional_stopping(case: str) -> None:
    if case == "rr":
        mechanism, claim = _randomized_response(1.0), PureDP(1.0)
    else:
        mechanism, claim = _gaussian(1.0), GaussianDP(MU0)
    alarms = sum(
        audit.audit_mechanism(
            mechanism,
            PAIR,
            claim=claim,
            samples=20_000,
            seed=s,
            executor=None,
            confidence=0.8,
            sequential=True,
            looks=10,
        ).violated
        for s in range(30)
    )
    assert alarms <= 12


def test_sequential_stops_early_and_reports_the_samples_saved() -> None:
    leaky = functools.partial(laplace_count, scale=0.5)  # true ε = 2
    fixed = audit.audit_mechanism(
        leaky, PAIR, claim=PureDP(1.0), samples=10**5, seed=3, executor=None
    )
    seq = audit.audit_mechanism(
        leaky,
        PAIR,
        claim=PureDP(1.0),
        samples=10**5,
        seed=3,
        executor=None,
        sequential=True,
        looks=10,
    )
    assert fixed.violated and seq.violated
    assert seq.looks == 1 and seq.n_samples == 10**4 and seq.samples_saved == 9 * 10**4
    assert seq.samples_budget == 10**5 and "sequential" in seq.evidence
    # a correct mechanism spends the whole budget
    fair = audit.audit_mechanism(
        functools.partial(laplace_count, scale=1.0),
        PAIR,
        claim=PureDP(1.0),
        samples=10**4,
        seed=3,
        executor=None,
        sequential=True,
        looks=4,
    )
    assert not fair.violated and fair.looks == 4 and fair.n_samples == 10**4


def test_confidence_sequence_is_time_uniform() -> None:
    rng = np.random.default_rng(7)
    p, alpha = 0.3, 0.1
    draws = rng.random((300, 3000)) < p
    looks = np.arange(10, 3001, 10)
    counts = np.cumsum(draws, axis=1)[:, looks - 1]
    low, high = beta_binomial_confidence_sequence(counts, looks[None, :], significance=alpha)
    left = np.any((low > p) | (high < p), axis=1)
    assert left.sum() <= 45
    # the check has teeth: Clopper–Pearson recomputed at every look (valid at a fixed n
    # only) leaves on most paths (193 of these 300)
    cp_low, cp_high = audit.clopper_pearson_interval(
        counts, np.broadcast_to(looks, counts.shape), significance=alpha, side="two-sided"
    )
    assert np.any((cp_low > p) | (cp_high < p), axis=1).sum() > 45


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**7), frac=st.floats(0.0, 1.0), alpha=st.floats(1e-8, 0.5))
def test_confidence_sequence_contains_the_estimate_and_is_wider_than_clopper_pearson(
    n: int, frac: float, alpha: float
) -> None:
    k = round(frac * n)
    low, high = beta_binomial_confidence_sequence(k, n, significance=alpha)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert (low == 0.0) == (k == 0) and (high == 1.0) == (k == n)
    # a time-uniform interval is never narrower than the fixed-n exact one at α/2 per side
    cp_low, cp_high = audit.clopper_pearson_interval(k, n, significance=alpha, side="two-sided")
    assert low <= cp_low * (1 + 1e-9) and high >= cp_high * (1 - 1e-9)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"reading": "normal"}, "reading"),
        ({"reading": "gaussian", "estimator": "curve"}, "reading='gaussian'"),
        ({"reading": "gaussian", "delta": 0.0}, "delta > 0"),
        ({"sequential": True, "looks": 0}, "looks"),
        ({"sequential": True, "looks": 2000, "samples": 1000}, "looks"),
        ({"sequential": 1}, "sequential"),
    ],
)
def test_bad_options_are_refused(options: dict, match: str) -> None:
    options = {"samples": 10**4, **options}
    with pytest.raises((ValueError, TypeError), match=match):
        audit.audit_mechanism(_gaussian(1.0), PAIR, claim=CLAIM, executor=None, **options)
