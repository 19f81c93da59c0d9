"""Exact samplers of privacy.secure_noise against their exact distributions.

Statistical tests pin their seeds and reject at p < 1e-6 each (chi-square goodness of
fit on the closed-form pmf, exact binomial tests), so a correct sampler fails one of
them with probability below 1e-6 per test; the pinned seeds fix the outcome.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from fedpriv.privacy.mechanisms.secure_noise import (
    default_granularity,
    from_grid,
    grid_sensitivity,
    round_to_grid,
    sample_bernoulli_exp,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

__all__: list[str] = []

ALPHA = 1e-6


def _chi_square_pvalue(samples: np.ndarray, log_weight) -> float:
    """Chi-square p-value of integer ``samples`` against the pmf ∝ exp(log_weight(z)).

    Integers with expected count >= 20 are their own bins; the rest of each side is
    one tail bin. The pmf is normalised over ``|z| <= 60 * spread``, whose outside
    mass is below 1e-20 for the scales tested.
    """
    spread = max(1.0, float(np.std(samples)))
    support = np.arange(-int(60 * spread) - 60, int(60 * spread) + 61)
    weights = np.exp(log_weight(support) - log_weight(np.zeros(1))[0])
    pmf = weights / weights.sum()
    n = samples.size
    core = support[pmf * n >= 20]
    low, high = core.min(), core.max()
    observed = [np.sum(samples < low)]
    expected = [pmf[support < low].sum() * n]
    counts = np.bincount(
        samples[(samples >= low) & (samples <= high)] - low, minlength=high - low + 1
    )
    observed += list(counts)
    expected += list(pmf[(support >= low) & (support <= high)] * n)
    observed.append(np.sum(samples > high))
    expected.append(pmf[support > high].sum() * n)
    observed, expected = np.asarray(observed, float), np.asarray(expected, float)
    keep = expected > 0
    expected = expected[keep] * observed[keep].sum() / expected[keep].sum()
    return float(stats.chisquare(observed[keep], expected).pvalue)


@pytest.mark.statistical
@pytest.mark.parametrize(
    "gamma", [0, Fraction(1, 3), 0.5, 1, 2.7, 5, Fraction(2**80 + 1, 2**81)], ids=str
)
def test_bernoulli_exp_matches_exp_minus_gamma(gamma) -> None:
    """Exact binomial test of Alg. 1 (the last γ runs the > 62-bit object path)."""
    n = 40_000
    draws = sample_bernoulli_exp(gamma, size=n, rng=np.random.default_rng(11))
    assert draws.dtype == bool and draws.shape == (n,)
    p = math.exp(-float(gamma))
    if p == 1.0:
        assert draws.all()
    else:
        assert stats.binomtest(int(draws.sum()), n, p).pvalue > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize(
    "scale", [0.3, 1.0, 2.5, Fraction(7, 3), 50.5, Fraction(2**70 + 3, 2**70)], ids=str
)
def test_discrete_laplace_matches_its_pmf(scale) -> None:
    """Chi-square against ``P(z) ∝ exp(-|z|/t)``."""
    z = sample_discrete_laplace(scale, size=50_000, rng=np.random.default_rng(12))
    assert z.dtype == np.int64
    t = float(scale)
    assert _chi_square_pvalue(z, lambda s: -np.abs(s) / t) > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.3, 25.0], ids=str)
def test_discrete_gaussian_matches_its_pmf(sigma) -> None:
    """Chi-square against ``P(z) ∝ exp(-z²/(2σ²))`` (σ' - σ < 2**-20 σ is invisible)."""
    z = sample_discrete_gaussian(sigma, size=50_000, rng=np.random.default_rng(13))
    assert z.dtype == np.int64
    assert _chi_square_pvalue(z, lambda s: -(s.astype(float) ** 2) / (2 * sigma**2)) > ALPHA


@pytest.mark.statistical
def test_discrete_gaussian_large_sigma_object_path() -> None:
    """σ = 1e7 takes the Python-int path; chi-square on 20 equiprobable normal bins
    (the discrete and continuous laws differ by O(1/σ) in each bin's mass)."""
    sigma, n = 1e7, 20_000
    z = sample_discrete_gaussian(sigma, size=n, rng=np.random.default_rng(14))
    edges = stats.norm.ppf(np.linspace(0, 1, 21)[1:-1]) * sigma
    observed = np.bincount(np.searchsorted(edges, z), minlength=20)
    assert stats.chisquare(observed).pvalue > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("sampler", [sample_discrete_laplace, sample_discrete_gaussian])
def test_samplers_are_symmetric(sampler) -> None:
    """Exact binomial test that a nonzero draw is positive with probability 1/2."""
    z = sampler(1.7, size=40_000, rng=np.random.default_rng(15))
    nonzero = z[z != 0]
    assert stats.binomtest(int(np.sum(nonzero > 0)), nonzero.size, 0.5).pvalue > ALPHA


@given(
    scale=st.floats(1e-3, 1e6, allow_nan=False),
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(0, 50),
)
def test_samplers_are_integers_and_reproducible(scale, seed, size) -> None:
    for sampler in (sample_discrete_laplace, sample_discrete_gaussian):
        a = sampler(scale, size=size, rng=np.random.default_rng(seed))
        b = sampler(scale, size=size, rng=np.random.default_rng(seed))
        assert a.dtype == np.int64 and a.shape == (size,)
        np.testing.assert_array_equal(a, b)


class _IntegersOnly(np.random.Generator):
    """A Generator whose float methods raise: the samplers may call ``integers`` only."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("a float was drawn")

    random = laplace = normal = standard_normal = exponential = uniform = _refuse


def test_samplers_never_draw_floats() -> None:
    """The noise path uses ``Generator.integers`` only (Mironov's attack needs floats)."""
    rng = _IntegersOnly(np.random.PCG64(3))
    with pytest.raises(AssertionError):
        rng.random()
    sample_discrete_laplace(2.5, size=100, rng=rng)
    sample_discrete_gaussian(1e7, size=100, rng=rng)
    sample_bernoulli_exp(Fraction(2**80 + 1, 2**81), size=100, rng=rng)


@given(
    x=st.floats(-1e6, 1e6, allow_nan=False),
    shift=st.floats(0, 10, allow_nan=False),
    k=st.integers(-30, 4),
)
def test_grid_sensitivity_bounds_rounded_neighbors(x, shift, k) -> None:
    """``|round(x) - round(x')| <= ⌈|x - x'| / g⌉`` for any neighbors (exact)."""
    g = 2.0**k
    other = x + shift
    diff = Fraction(other) - Fraction(x)
    if diff == 0:
        return
    steps = round_to_grid([x, other], g)
    assert abs(int(steps[1]) - int(steps[0])) <= grid_sensitivity(float(diff), g)
    back = from_grid(steps, g)
    assert abs(Fraction(back[0]) - Fraction(x)) <= Fraction(g) / 2


def test_default_granularity_spans_2_to_the_10_steps() -> None:
    for delta in (1.0, 0.3, 1 / 7, 1e4):
        g = default_granularity(delta)
        assert 2**10 <= delta / g < 2**11
        assert grid_sensitivity(delta, g) <= delta / g * (1 + 2**-10)
    assert grid_sensitivity(1.0, default_granularity(1.0)) == 2**10


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: sample_discrete_laplace(0.0, size=3, rng=r), "`scale` must be > 0"),
        (lambda r: sample_discrete_laplace(math.inf, size=3, rng=r), "`scale` must be finite"),
        (lambda r: sample_discrete_gaussian(-1.0, size=3, rng=r), "`sigma` must be > 0"),
        (lambda r: sample_bernoulli_exp(-0.5, size=3, rng=r), "`gamma` must be >= 0"),
        (lambda r: sample_discrete_laplace(1.0, size=-1, rng=r), "`size` must be >= 0"),
        (lambda r: round_to_grid([1.0], 0.3), "power of two"),
        (lambda r: round_to_grid([np.nan], 0.5), "finite"),
        (lambda r: from_grid(np.array([2**53]), 1.0), "2\\*\\*53"),
    ],
)
def test_bad_input_is_named(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call(np.random.default_rng(0))


def test_bad_types_are_named() -> None:
    with pytest.raises(TypeError, match="`rng`"):
        sample_discrete_laplace(1.0, size=3, rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="`scale`"):
        sample_discrete_laplace("1", size=3, rng=np.random.default_rng(0))
