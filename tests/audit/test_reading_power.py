"""Issue 38 item 4: the Gaussian-DP reading refutes only where the shape test could see.

A correct mechanism whose two output distributions overlap almost fully (Laplace(10)
against its true ε = 0.1) has a non-Gaussian trade-off curve whose middle, which the
μ bound measures, exceeds the Gaussian calibration of the claim, while the tails, where
Laplace and Gaussian differ, are too thin at 10⁴ samples for the shape test to reject
(14 false alarms in 50 seeds before this check). The audit now computes the shape
tests' power against the non-Gaussian curves the claim itself allows (the Laplace
mechanism's at the claim's ε and the lowest (ε, δ)-DP curve, that of randomized
response and the geometric mechanism), from the cells and sample sizes in hand, and
declines the reading when that power is below the audit's confidence.

False-failure arithmetic of the statistical tests:

- calibration of the computed power (multinomial counts at fixed cells under the
  Laplace curve, the confirmation's test): at a predicted power near 0.5, 200
  simulations, the rejection rate within 0.12 of the prediction: 3.4 standard errors
  (sd <= 0.0354), two-sided false failure <= 7e-4 if the prediction were exact; at a
  predicted power p >= 0.97, 300 simulations, at most 15 non-rejections (5%): if the
  non-rejection rate were 1 - p <= 0.03, P(Bin(300, 0.03) >= 16) = 0.020.
- end to end, each mechanism the shape test cannot see at 10⁴ samples per world is
  audited on 3 pinned seeds and every seed must be declined for power; the decision
  depends on the data only through the cells (the computed power varies by < 0.2
  across seeds, far below the 0.95 it needs: 0.28, 0.005, 0.002, 0.004 and 0.24 mean
  over 50 seeds, ``benchmarks/bench_reading_false_alarms.py``), so this is
  deterministic in practice.

The full sweep (Laplace scales 1 to 100, randomized response and the geometric
mechanism at ε = 0.1 and 1, 10⁴ and 10⁵ samples, 50 seeds each) is
``benchmarks/bench_reading_false_alarms.py``; its numbers are in docs/benchmarks.md.
"""

from __future__ import annotations

import functools
import math

import fedpriv.audit as audit
import numpy as np
import pytest
from fedpriv.audit.estimators.shape import (
    gaussian_shape_from_counts,
    laplace_tradeoff,
    shape_test_power,
    shape_test_power_against_claim,
    tight_tradeoff,
)
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import ApproxDP
from scipy import stats

PAIR = audit.NeighboringPair(1.0, 0.0)
LEVEL = 0.05 / 33 / 2  # one shape stage's level at the defaults


def _randomized_response(dataset, n_samples, rng, *, epsilon):
    keep = rng.random(n_samples) < math.exp(epsilon) / (1.0 + math.exp(epsilon))
    return np.where(keep, dataset, 1.0 - dataset)


def _geometric(dataset, n_samples, rng, *, epsilon):
    p = 1.0 - math.exp(-epsilon)
    return dataset + (rng.geometric(p, n_samples) - rng.geometric(p, n_samples)).astype(float)


def test_binomial_thresholds_stated_in_the_docstring() -> None:
    assert 0.12 / math.sqrt(0.25 / 200) == pytest.approx(3.39, abs=0.01)
    assert 2 * stats.norm.sf(3.39) < 7e-4
    assert stats.binom.sf(15, 300, 0.03) == pytest.approx(0.020, abs=5e-4)


def _laplace_cells(epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """D' and D masses below the 9 pooled deciles of Laplace(0, 1) and Laplace(ε, 1)."""
    grid = np.linspace(-40.0, 40.0 + epsilon, 400_001)
    pooled = 0.5 * (stats.laplace.cdf(grid) + stats.laplace.cdf(grid - epsilon))
    edges = np.interp(np.arange(1, 10) / 10, pooled, grid)
    return stats.laplace.cdf(edges), stats.laplace.cdf(edges - epsilon)


@pytest.mark.statistical
@pytest.mark.parametrize(("n", "reps"), [(20_000, 200), (30_000, 300)])
def test_computed_power_matches_the_simulated_rejection_rate(n: int, reps: int) -> None:
    below_dp, below_d = _laplace_cells(0.1)
    predicted = shape_test_power(below_dp, n, laplace_tradeoff(0.1), level=LEVEL)
    rng = np.random.default_rng(2026)
    p, q = np.diff(np.r_[0.0, below_dp, 1.0]), np.diff(np.r_[0.0, below_d, 1.0])
    rejected = 0
    for _ in range(reps):
        count_d, count_dp = rng.multinomial(n, q), rng.multinomial(n, p)
        rejected += gaussian_shape_from_counts(
            np.cumsum(count_d)[:-1], n, np.cumsum(count_dp)[:-1], n, level=LEVEL
        ).rejected
    if n == 20_000:
        assert 0.3 < predicted < 0.9
        assert abs(rejected / reps - predicted) <= 0.12
    else:  # the regime that matters: the power the reading relies on
        assert predicted >= 0.97
        assert reps - rejected <= 15


def test_power_against_a_gaussian_fit_is_the_level() -> None:
    # a Gaussian curve G_μ is fitted exactly: noncentrality 0, power = level
    from scipy import special

    def gaussian(alpha, mu=0.5):
        return special.ndtr(special.ndtri(1.0 - np.asarray(alpha)) - mu)

    below = np.linspace(0.1, 0.9, 9)
    assert shape_test_power(below, 10**6, gaussian, level=0.01) == pytest.approx(0.01, abs=1e-3)


def test_power_grows_with_samples_and_epsilon() -> None:
    below = np.linspace(0.1, 0.9, 9)
    for curve in (laplace_tradeoff, functools.partial(tight_tradeoff, delta=1e-5)):
        by_n = [shape_test_power(below, n, curve(0.1), level=LEVEL) for n in (10**3, 10**4, 10**5)]
        by_eps = [shape_test_power(below, 10**4, curve(e), level=LEVEL) for e in (0.03, 0.1, 0.3)]
        assert by_n == sorted(by_n) and by_eps == sorted(by_eps)
        assert by_n[-1] > 0.99 and by_n[0] < 0.05


def test_power_against_the_claim_takes_the_weaker_alternative_and_combines_stages() -> None:
    below = np.linspace(0.1, 0.9, 9)
    stages = [(below, 1000, LEVEL), (below, 10**4, LEVEL)]
    power = shape_test_power_against_claim(stages, epsilon=0.1, delta=1e-5, required=0.95)
    each = {
        name: [shape_test_power(b, n, c, level=lv) for b, n, lv in stages]
        for name, c in (
            ("Laplace", laplace_tradeoff(0.1)),
            ("(ε, δ)-tight", tight_tradeoff(0.1, 1e-5)),
        )
    }
    combined = {k: 1.0 - (1.0 - v[0]) * (1.0 - v[1]) for k, v in each.items()}
    assert power.power == pytest.approx(min(combined.values()))
    assert power.weakest == min(combined, key=combined.get)
    assert not power.sufficient and "too little" in power.description
    assert shape_test_power(below[:1], 10**6, laplace_tradeoff(1.0), level=LEVEL) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": math.inf, "delta": 0.0, "required": 0.95}, "epsilon"),
        ({"epsilon": -1.0, "delta": 0.0, "required": 0.95}, "epsilon"),
        ({"epsilon": 1.0, "delta": 1.0, "required": 0.95}, "delta"),
        ({"epsilon": 1.0, "delta": 0.0, "required": 1.0}, "required"),
    ],
)
def test_bad_input_is_refused(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        shape_test_power_against_claim([(np.linspace(0.1, 0.9, 9), 100, 0.01)], **kwargs)


BLIND_AT_1E4 = {
    "Laplace(10)": (functools.partial(laplace_count, scale=10.0), 0.1),
    "Laplace(30)": (functools.partial(laplace_count, scale=30.0), 1.0 / 30.0),
    "Laplace(100)": (functools.partial(laplace_count, scale=100.0), 0.01),
    "randomized response ε=0.1": (functools.partial(_randomized_response, epsilon=0.1), 0.1),
    "geometric ε=0.1": (functools.partial(_geometric, epsilon=0.1), 0.1),
}


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(BLIND_AT_1E4))
def test_reading_is_declined_where_the_shape_test_is_blind(name: str) -> None:
    mechanism, epsilon = BLIND_AT_1E4[name]
    for seed in (0, 1, 2):
        result = audit.audit_mechanism(
            mechanism, PAIR, claim=ApproxDP(epsilon, 1e-5), samples=10**4, seed=seed,
            executor=None, reading="gaussian",
        )  # fmt: skip
        power = result.details["shape_power"]
        assert not result.violated and result.reading_verdict == "unresolved"
        assert power.power < 0.5 and not power.sufficient and power.required == 0.95
        assert len(power.stage_powers) == 2
        assert "shape tests' power" in result.evidence


def test_laplace_10_seed_that_was_a_false_alarm_is_now_declined_for_power() -> None:
    # seed 4 passed both shape tests and the reading refuted the true claim before
    laplace = functools.partial(laplace_count, scale=10.0)
    result = audit.audit_mechanism(
        laplace, PAIR, claim=ApproxDP(0.1, 1e-5), samples=10**4, seed=4, executor=None,
        reading="gaussian",
    )  # fmt: skip
    assert not any(t.rejected for t in result.shape_tests)
    assert result.reading_epsilon_lower_bound > 0.1  # what the reading alone would say
    assert result.reading_verdict == "unresolved" and not result.violated
