"""Tests for `fedpriv.privacy.accounting.shuffling`: amplification by shuffling.

The route's δ(ε) is an upper bound for *every* ε₀-LDP randomizer, so it must be at
least the exact δ(ε) of every shuffled mechanism on every neighboring pair; the
reference is the exact law of shuffled k-ary randomized response
(:mod:`fedpriv.privacy.mechanisms.shuffle`), computed independently of the route (a
convolution over reporters, not the Feldman–McMillan–Talwar pair). The reference's
own float error is below 1e-15 absolute (a loss a few ulps above ε₀ gives a
positive term of that size at ε = ε₀), hence the 1e-12 allowance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.privacy import Accountant, Shuffled, compose_routes, events
from fedpriv.privacy.accounting.shuffling import (
    MAX_SHUFFLED_REPORTS,
    shuffled_delta,
    shuffled_epsilon,
    shuffled_pld,
)
from fedpriv.privacy.errors import UnsupportedEventError
from fedpriv.privacy.mechanisms.shuffle import (
    shuffled_randomized_response_delta,
    shuffled_randomized_response_log_pmf,
)
from hypothesis import given, settings
from hypothesis import strategies as st

#: Allowance for the reference's float error (module docstring).
REFERENCE_TOLERANCE = 1e-12
#: github.com/apple/ml-shuffling-amplification README (the code accompanying
#: Feldman, McMillan & Talwar, arXiv:2012.12803): "Shuffling 100000 4 -DP local
#: randomizers results is (eps, 1e-06)-DP in the shuffle model for eps between
#: 0.1675385583317841 and 0.172790550755978" (their numerical lower and upper bounds
#: on the pair's ε; the exact value lies between).
PUBLISHED_N, PUBLISHED_EPSILON0, PUBLISHED_DELTA = 100_000, 4.0, 1e-6
PUBLISHED_LOW, PUBLISHED_HIGH = 0.1675385583317841, 0.172790550755978


def _pairs(n: int, k: int):
    """Neighboring datasets: reporter 0 holds 0 or 1, the others one background."""
    backgrounds = [np.full(n - 1, v) for v in range(k)]
    backgrounds.append(np.arange(n - 1) % k)  # mixed
    for rest in backgrounds:
        first = np.concatenate([[0], rest]).astype(int)
        second = first.copy()
        second[0] = 1
        yield first, second
        yield second, first  # the other direction


# ----------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"local_epsilon": 0.0, "n_reports": 10}, ValueError, "local_epsilon"),
        ({"local_epsilon": -1.0, "n_reports": 10}, ValueError, "local_epsilon"),
        ({"local_epsilon": math.nan, "n_reports": 10}, ValueError, "local_epsilon"),
        ({"local_epsilon": math.inf, "n_reports": 10}, ValueError, "local_epsilon"),
        ({"local_epsilon": 701.0, "n_reports": 10}, ValueError, "MAX_EVENT_EPSILON"),
        ({"local_epsilon": 1.0, "n_reports": 0}, ValueError, "n_reports"),
        ({"local_epsilon": 1.0, "n_reports": 2.0}, TypeError, "n_reports"),
        (
            {"local_epsilon": 1.0, "n_reports": MAX_SHUFFLED_REPORTS + 1},
            ValueError,
            "MAX_SHUFFLED_REPORTS",
        ),
        ({"local_epsilon": 1.0, "n_reports": 10, "local_delta": 1.0}, ValueError, "local_delta"),
        ({"local_epsilon": 1.0, "n_reports": 10, "local_delta": -0.1}, ValueError, "local_delta"),
        ({"local_epsilon": "1", "n_reports": 10}, TypeError, "local_epsilon"),
    ],
)
def test_bad_input_is_refused_with_the_parameter_named(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        Shuffled(**kwargs)


def test_profile_functions_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        shuffled_delta(1.0, 10, -0.5)
    with pytest.raises(ValueError, match="delta"):
        shuffled_epsilon(1.0, 10, 1.0)
    with pytest.raises(ValueError, match="discretization"):
        shuffled_pld(1.0, 10, 0.0)
    with pytest.raises(ValueError, match="n_reports"):
        shuffled_epsilon(1.0, 0, 1e-6)


def test_event_is_frozen_and_hashable() -> None:
    event = Shuffled(local_epsilon=1.0, n_reports=10)
    assert hash(event) == hash(Shuffled(local_epsilon=1.0, n_reports=10))
    with pytest.raises(AttributeError):
        event.n_reports = 11  # type: ignore[misc]


# ------------------------------------------------------------ known values, sources
def test_one_report_is_randomized_response() -> None:
    """n = 1: the pair is ε₀ randomized response, δ(ε) = (e^{ε₀} - e^ε)/(e^{ε₀} + 1)."""
    for e0 in (0.3, 1.0, 3.0):
        for eps in np.linspace(0.0, e0, 7):
            expected = (math.exp(e0) - math.exp(eps)) / (math.exp(e0) + 1)
            assert shuffled_delta(e0, 1, float(eps)) == pytest.approx(expected, rel=1e-9, abs=1e-15)
            assert shuffled_delta(e0, 1, float(eps)) >= expected


def test_reproduces_the_published_example() -> None:
    """The FMT code's README example (PUBLISHED_*): both the (ε, δ) and the PLD
    routes land inside the published bracket."""
    epsilon = shuffled_epsilon(PUBLISHED_EPSILON0, PUBLISHED_N, PUBLISHED_DELTA)
    assert PUBLISHED_LOW <= epsilon <= PUBLISHED_HIGH
    pld = shuffled_pld(PUBLISHED_EPSILON0, PUBLISHED_N, 1e-4)
    assert PUBLISHED_LOW <= pld.get_epsilon_for_delta(PUBLISHED_DELTA) <= PUBLISHED_HIGH
    event = Shuffled(local_epsilon=PUBLISHED_EPSILON0, n_reports=PUBLISHED_N)
    routes = compose_routes([(event, 1)], PUBLISHED_DELTA)
    assert PUBLISHED_LOW <= routes["pld"] <= PUBLISHED_HIGH
    assert routes["pure"] == PUBLISHED_EPSILON0  # δ-free: no amplification claimed


def test_epsilon_inverts_delta() -> None:
    for e0, n, delta in ((1.0, 1000, 1e-6), (2.0, 50, 1e-3), (0.5, 10_000, 1e-9)):
        epsilon = shuffled_epsilon(e0, n, delta)
        assert shuffled_delta(e0, n, epsilon) <= delta
        assert shuffled_delta(e0, n, epsilon * (1 - 1e-6)) > delta
    assert shuffled_epsilon(1.0, 100, 0.0) == 1.0


# ---------------------------------------------------- soundness against the reference
@pytest.mark.parametrize("num_buckets", [2, 3, 4])
@pytest.mark.parametrize("n_reports", [2, 3, 5, 8])
@pytest.mark.parametrize("local_epsilon", [0.5, 1.0, 2.0, 3.5])
def test_route_is_at_least_the_exact_profile_on_a_grid(
    num_buckets: int, n_reports: int, local_epsilon: float
) -> None:
    grid = np.linspace(0.0, local_epsilon, 11)
    route = np.array([shuffled_delta(local_epsilon, n_reports, float(e)) for e in grid])
    pld = shuffled_pld(local_epsilon, n_reports, 1e-3)
    pld_route = np.array([pld.get_delta_for_epsilon(float(e)) for e in grid])
    for first, second in _pairs(n_reports, num_buckets):
        exact = shuffled_randomized_response_delta(
            first, second, grid, local_epsilon=local_epsilon, num_buckets=num_buckets
        )
        assert np.all(route >= exact - REFERENCE_TOLERANCE), (first, second, route - exact)
        assert np.all(pld_route >= exact - REFERENCE_TOLERANCE), (first, second)


@settings(max_examples=40)
@given(
    num_buckets=st.integers(2, 4),
    inputs=st.lists(st.integers(0, 3), min_size=2, max_size=9),
    changed=st.integers(0, 3),
    local_epsilon=st.floats(0.05, 5.0),
    fraction=st.floats(0.0, 1.0),
)
def test_route_is_at_least_the_exact_profile_property(
    num_buckets, inputs, changed, local_epsilon, fraction
) -> None:
    """Any dataset, any changed value, any ε: route δ >= exact δ, both directions."""
    first = np.array(inputs) % num_buckets
    second = first.copy()
    second[0] = changed % num_buckets
    epsilon = fraction * local_epsilon
    route = shuffled_delta(local_epsilon, first.size, epsilon)
    for a, b in ((first, second), (second, first)):
        exact = shuffled_randomized_response_delta(
            a, b, epsilon, local_epsilon=local_epsilon, num_buckets=num_buckets
        )
        assert route >= float(exact) - REFERENCE_TOLERANCE


def test_reference_is_a_distribution() -> None:
    log_pmf = shuffled_randomized_response_log_pmf([0, 2, 1, 1], local_epsilon=1.3, num_buckets=3)
    assert math.fsum(np.exp(log_pmf[np.isfinite(log_pmf)])) == pytest.approx(1.0, abs=1e-12)


def test_amplification_is_real_for_many_reports() -> None:
    """Not a vacuous bound: 1000 reports at ε₀ = 1 give ε well below ε₀ at δ = 1e-6
    (FMT's asymptotic rate is √(e^{ε₀} log(1/δ)/n))."""
    assert shuffled_epsilon(1.0, 1000, 1e-6) < 0.5


# ------------------------------------------------------------------- composition
def _exact_composed_epsilon(first, second, local_epsilon: float, count: int, delta: float):
    """ε(δ) of ``count`` independent shuffled binary randomized responses on the pair,
    exactly: the privacy-loss atoms of one run convolved ``count`` times."""
    log_p = shuffled_randomized_response_log_pmf(first, local_epsilon=local_epsilon)
    log_q = shuffled_randomized_response_log_pmf(second, local_epsilon=local_epsilon)
    support = np.isfinite(log_p)
    losses, masses = log_p[support] - log_q[support], np.exp(log_p[support])
    total_l, total_m = np.zeros(1), np.ones(1)
    for _ in range(count):
        total_l = (total_l[:, None] + losses[None, :]).ravel()
        total_m = (total_m[:, None] * masses[None, :]).ravel()

    def delta_at(eps: float) -> float:
        return float(np.sum(total_m * np.maximum(-np.expm1(np.minimum(eps - total_l, 0.0)), 0)))

    low, high = 0.0, count * local_epsilon
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (low, middle) if delta_at(middle) <= delta else (middle, high)
    return low  # a value just below the exact ε (a lower end for the comparison)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_composed_route_is_at_least_the_exact_composition(count: int) -> None:
    """k shuffled releases composed through the ledger: every route's ε is at least the
    exact ε of k independent runs of shuffled binary randomized response."""
    local_epsilon, n, delta = 1.5, 6, 1e-3
    event = Shuffled(local_epsilon=local_epsilon, n_reports=n)
    routes = compose_routes([(event, count)], delta, pld_discretization=1e-3)
    for first, second in _pairs(n, 2):
        exact = _exact_composed_epsilon(first, second, local_epsilon, count, delta)
        for name, value in routes.items():
            assert value >= exact - 1e-9, (name, value, exact)


def test_composes_with_the_rest_of_the_ledger() -> None:
    """A shuffled round and Gaussian releases in one cell: the PLD route prices both
    (tighter than basic composition), and the accountant's ε is finite and at least
    the Gaussian part alone."""
    accountant = Accountant(neighboring_relation="replace_one", sequential=("round",))
    accountant.spend(Shuffled(local_epsilon=2.0, n_reports=500), key={"round": 0})
    accountant.spend(events.Gaussian(noise_multiplier=8.0), key={"round": 1})
    routes = accountant.routes.epsilons(1e-6)
    assert routes["pld"] <= routes["basic"] < math.inf
    gaussian_only = compose_routes([(events.Gaussian(noise_multiplier=8.0), 1)], 1e-6)["gdp"]
    assert accountant.get_epsilon(1e-6) >= gaussian_only


def test_add_or_remove_accountant_refuses_the_event() -> None:
    accountant = Accountant(neighboring_relation="add_or_remove_one")
    event = Shuffled(local_epsilon=1.0, n_reports=10)
    assert not accountant.supports(event)
    with pytest.raises(UnsupportedEventError, match="replace"):
        accountant.compose(event)
    with pytest.raises(UnsupportedEventError, match="replace"):
        accountant.compose(events.Composed(events=(event,)))


def test_approximate_local_randomizers_are_not_amplified() -> None:
    """δ₀ > 0: priced as (ε₀, δ₀), the post-processing of one report (no amplified
    bound for (ε₀, δ₀) randomizers is implemented)."""
    event = Shuffled(local_epsilon=1.0, n_reports=1000, local_delta=1e-8)
    routes = compose_routes([(event, 1)], 1e-6)
    assert routes["basic"] == pytest.approx(1.0)
    assert compose_routes([(event, 1)], 1e-9)["basic"] == math.inf  # δ₀ alone exceeds it


def test_ledger_store_round_trip() -> None:
    from fedpriv.privacy.ledger import codec

    event = Shuffled(local_epsilon=2.0, n_reports=500, local_delta=1e-9)
    assert codec.decode_event(codec.encode_event(event)) == event


def _pair_delta_mpmath(local_epsilon: float, n: int, epsilon: float):
    """δ(ε) of the Feldman–McMillan–Talwar pair by brute force in 50-digit arithmetic
    (every (c, a) summed; no cdf, no truncation, no float)."""
    import mpmath

    with mpmath.workdps(50):
        e0, eps = mpmath.mpf(local_epsilon), mpmath.mpf(epsilon)
        p, alpha = mpmath.e**-e0, mpmath.e**e0 / (mpmath.e**e0 + 1)
        total = mpmath.mpf(0)
        for c in range(n):
            weight = mpmath.binomial(n - 1, c) * p**c * (1 - p) ** (n - 1 - c)

            def b(a: int, c: int = c):
                return mpmath.binomial(c, a) / mpmath.mpf(2) ** c if 0 <= a <= c else 0

            for a in range(c + 2):
                mass_p = alpha * b(a) + (1 - alpha) * b(a - 1)
                mass_q = alpha * b(a - 1) + (1 - alpha) * b(a)
                total += weight * max(mass_p - mpmath.e**eps * mass_q, 0)
        return total


@pytest.mark.parametrize(("local_epsilon", "n_reports"), [(5.0, 2), (2.0, 30), (1.0, 20)])
def test_route_is_at_least_the_pair_in_high_precision(local_epsilon: float, n_reports: int) -> None:
    """The float evaluation of the pair (profile and PLD) is never below its 50-digit
    value: the rounding allowances cover the arithmetic. (At ε = ε₀ the true δ is 0
    and mpmath's own rounding leaves about 10⁻⁵⁰, hence the 10⁻⁴⁰.)"""
    pld = shuffled_pld(local_epsilon, n_reports, 1e-4)
    for epsilon in np.linspace(0.0, local_epsilon, 9):
        exact = _pair_delta_mpmath(local_epsilon, n_reports, float(epsilon))
        assert shuffled_delta(local_epsilon, n_reports, float(epsilon)) >= exact - 1e-40
        assert pld.get_delta_for_epsilon(float(epsilon)) >= exact - 1e-40
