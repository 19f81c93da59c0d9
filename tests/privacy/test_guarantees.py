"""Tests for `fedpriv.privacy.accounting.guarantees`: validated, immutable guarantees and conversions.

The tight δ(ε') of Kairouz, Oh & Viswanath (2015, Thm 2.1) is checked against a direct
computation: the hockey-stick divergence ``sup_O P(O) - e^ε' Q(O)`` of the mechanism
that attains the privacy region, found by enumerating every output set.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from fedpriv.privacy.accounting.guarantees import (
    DEFAULT_ORDERS,
    PLD,
    RDP,
    ZCDP,
    ApproxDP,
    GaussianDP,
    PureDP,
    format_epsilon,
    gaussian_dp_delta,
    gaussian_dp_epsilon,
    gdp_to_approx_dp,
    gdp_to_zcdp,
    pure_to_approx_dp,
    pure_to_zcdp,
    rdp_delta,
    rdp_epsilon,
    rdp_to_approx_dp,
    to_approx_dp,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_to_approx_dp,
    zcdp_to_rdp,
)
from fedpriv.privacy.errors import IncompatibleGuaranteeError, ToolkitError
from hypothesis import given
from hypothesis import strategies as st

# ---------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------


def _hockey_stick(p: list[float], q: list[float], target_epsilon: float) -> float:
    """``max over output sets O of P(O) - e^ε' Q(O)``, by enumerating every subset."""
    weight = math.exp(target_epsilon)
    best = 0.0  # the empty set
    outputs = range(len(p))
    for size in range(1, len(p) + 1):
        for subset in itertools.combinations(outputs, size):
            best = max(best, sum(p[i] for i in subset) - weight * sum(q[i] for i in subset))
    return best


def _randomized_response(epsilon: float) -> tuple[list[float], list[float]]:
    """Output distributions of ε-DP randomized response on the two inputs."""
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    flip = 1.0 / (1.0 + math.exp(epsilon))  # not 1 - keep: no cancellation
    return [keep, flip], [flip, keep]


def _approx_dominating(epsilon: float, delta: float) -> tuple[list[float], list[float]]:
    """The four-output mechanism whose privacy region is exactly that of (ε, δ)-DP."""
    big = (1.0 - delta) * math.exp(epsilon) / (1.0 + math.exp(epsilon))
    small = (1.0 - delta) / (1.0 + math.exp(epsilon))
    return [delta, big, small, 0.0], [0.0, small, big, delta]


epsilons = st.floats(min_value=1e-3, max_value=30.0)
deltas = st.floats(min_value=0.0, max_value=0.999)
fractions = st.floats(min_value=0.0, max_value=1.0)

# ---------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "message"),
    [
        (0.0, r"`epsilon` must be in \(0, inf\], got 0\.0"),
        (-1.0, r"`epsilon` must be in \(0, inf\], got -1\.0"),
        (-math.inf, r"`epsilon` must be in \(0, inf\]"),
        (math.nan, r"`epsilon` must not be NaN"),
    ],
)
def test_bad_epsilon_raises_value_error(epsilon: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PureDP(epsilon)
    with pytest.raises(ValueError, match=message):
        ApproxDP(epsilon, 0.0)


@pytest.mark.parametrize(
    ("delta", "message"),
    [
        (1.0, r"`delta` must be in \[0, 1\), got 1\.0"),
        (1.5, r"`delta` must be in \[0, 1\), got 1\.5"),
        (-1e-9, r"`delta` must be in \[0, 1\)"),
        (math.nan, r"`delta` must not be NaN"),
    ],
)
def test_bad_delta_raises_value_error(delta: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ApproxDP(1.0, delta)


@pytest.mark.parametrize("bad", ["1.0", None, True, 1 + 0j])
def test_non_real_epsilon_raises_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match=r"`epsilon` must be a real number"):
        PureDP(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`delta` must be a real number"):
        ApproxDP(1.0, bad)  # type: ignore[arg-type]


def test_values_are_stored_as_floats_and_infinity_is_allowed() -> None:
    assert type(PureDP(2).epsilon) is float
    assert type(ApproxDP(2, 0).delta) is float
    assert PureDP(math.inf).get_epsilon(0.0) == math.inf
    assert PureDP(math.inf).get_delta(5.0) == 1.0
    assert ApproxDP(math.inf, 0.5).get_delta(5.0) == 1.0


@pytest.mark.parametrize("guarantee", [PureDP(1.0), ApproxDP(1.0, 1e-6)])
def test_query_arguments_are_validated(guarantee: PureDP | ApproxDP) -> None:
    with pytest.raises(ValueError, match=r"`target_delta` must be in \[0, 1\), got 1\.0"):
        guarantee.get_epsilon(1.0)
    with pytest.raises(ValueError, match=r"`target_delta` must not be NaN"):
        guarantee.get_epsilon(math.nan)
    with pytest.raises(ValueError, match=r"`target_epsilon` must be >= 0, got -0\.5"):
        guarantee.get_delta(-0.5)
    with pytest.raises(ValueError, match=r"`target_epsilon` must not be NaN"):
        guarantee.get_delta(math.nan)


# ---------------------------------------------------------------------------------
# Immutability
# ---------------------------------------------------------------------------------


def test_guarantees_are_frozen_and_hashable() -> None:
    pure, approx = PureDP(1.0), ApproxDP(1.0, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pure.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        approx.delta = 0.0  # type: ignore[misc]
    assert pure.epsilon == 1.0 and approx.delta == 1e-5
    assert PureDP(1) == pure and hash(PureDP(1)) == hash(pure)
    assert ApproxDP(1, 1e-5) == approx and hash(ApproxDP(1, 1e-5)) == hash(approx)
    assert len({pure, PureDP(1.0), approx, ApproxDP(1.0, 1e-5)}) == 2
    # Types are not interchangeable: ε-DP is not "equal" to (ε, 0)-DP without a
    # conversion.
    assert pure != ApproxDP(1.0, 0.0)


# ---------------------------------------------------------------------------------
# get_epsilon / get_delta
# ---------------------------------------------------------------------------------


@given(epsilons, deltas)
def test_get_epsilon(epsilon: float, delta: float) -> None:
    assert PureDP(epsilon).get_epsilon(delta) == epsilon
    assert ApproxDP(epsilon, delta).get_epsilon(delta) == epsilon
    assert ApproxDP(epsilon, delta).get_epsilon(min(0.999, delta + 0.1 * (1 - delta))) == epsilon
    if delta > 0:
        assert ApproxDP(epsilon, delta).get_epsilon(delta / 2) == math.inf


@given(epsilons, deltas, st.floats(min_value=0.0, max_value=100.0))
def test_get_delta_at_or_above_epsilon_is_delta(epsilon: float, delta: float, extra: float) -> None:
    assert PureDP(epsilon).get_delta(epsilon + extra) == 0.0
    assert ApproxDP(epsilon, delta).get_delta(epsilon + extra) == delta


@given(epsilons, fractions)
def test_pure_get_delta_matches_randomized_response(epsilon: float, fraction: float) -> None:
    target = fraction * epsilon
    p, q = _randomized_response(epsilon)
    expected = _hockey_stick(p, q, target)
    assert PureDP(epsilon).get_delta(target) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # The RR mechanism is exactly ε-DP: its divergence vanishes at ε' = ε.
    assert _hockey_stick(p, q, epsilon) == pytest.approx(0.0, abs=1e-12)


@given(epsilons, deltas, fractions)
def test_approx_get_delta_matches_dominating_mechanism(
    epsilon: float, delta: float, fraction: float
) -> None:
    target = fraction * epsilon
    p, q = _approx_dominating(epsilon, delta)
    expected = _hockey_stick(p, q, target)
    got = ApproxDP(epsilon, delta).get_delta(target)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert delta <= got <= 1.0


@given(st.floats(min_value=1e-3, max_value=5.0), fractions)
def test_pure_get_delta_dominates_the_laplace_mechanism(epsilon: float, fraction: float) -> None:
    # Lap(1/ε) with sensitivity 1 is ε-DP; its exact δ(ε') is 1 - exp((ε' - ε)/2).
    # The tight bound for *every* ε-DP mechanism must be at least that.
    target = fraction * epsilon
    laplace = -math.expm1((target - epsilon) / 2.0)
    assert PureDP(epsilon).get_delta(target) >= laplace - 1e-12


@given(epsilons, deltas, fractions, fractions)
def test_get_delta_is_non_increasing_in_target_epsilon(
    epsilon: float, delta: float, a: float, b: float
) -> None:
    low, high = sorted((a * 1.5 * epsilon, b * 1.5 * epsilon))
    guarantee = ApproxDP(epsilon, delta)
    assert guarantee.get_delta(low) >= guarantee.get_delta(high)


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_pure_get_delta_at_zero_is_tanh(epsilon: float) -> None:
    # δ(0) = (e^ε - 1)/(e^ε + 1) = tanh(ε/2): the total-variation distance of RR.
    assert PureDP(epsilon).get_delta(0.0) == pytest.approx(math.tanh(epsilon / 2), rel=1e-12)


def test_get_delta_does_not_overflow_for_huge_epsilon() -> None:
    # (e^ε - e^ε')/(1 + e^ε) -> 1 - e^(ε' - ε) without overflowing e^1000.
    assert PureDP(1000.0).get_delta(990.0) == pytest.approx(-math.expm1(-10.0), rel=1e-12)
    assert ApproxDP(1000.0, 0.5).get_delta(0.0) == pytest.approx(1.0)


# ---------------------------------------------------------------------------------
# Composition and conversions
# ---------------------------------------------------------------------------------


def test_approx_compose_adds_epsilon_and_delta() -> None:
    composed = ApproxDP(1.0, 1e-6).compose(ApproxDP(0.5, 2e-6))
    assert isinstance(composed, ApproxDP)
    assert composed.epsilon == pytest.approx(1.5)
    assert composed.delta == pytest.approx(3e-6)


def test_mixing_guarantee_types_raises() -> None:
    with pytest.raises(IncompatibleGuaranteeError, match=r"cannot compose ApproxDP with PureDP"):
        ApproxDP(1.0, 0.0).compose(PureDP(1.0))  # type: ignore[arg-type]
    with pytest.raises(IncompatibleGuaranteeError, match=r"expected PureDP, got ApproxDP"):
        pure_to_approx_dp(ApproxDP(1.0, 0.0))  # type: ignore[arg-type]
    # The error is both a toolkit error and an ordinary TypeError.
    with pytest.raises(TypeError):
        ApproxDP(1.0, 0.0).compose(1.0)  # type: ignore[arg-type]
    assert issubclass(IncompatibleGuaranteeError, ToolkitError)


@given(epsilons)
def test_pure_to_approx_dp_keeps_the_curve(epsilon: float) -> None:
    converted = pure_to_approx_dp(PureDP(epsilon))
    assert converted == ApproxDP(epsilon, 0.0)
    for fraction in (0.0, 0.3, 1.0, 2.0):
        target = fraction * epsilon
        assert converted.get_delta(target) == PureDP(epsilon).get_delta(target)
    assert converted.compose(converted).epsilon == pytest.approx(2 * epsilon)


@pytest.mark.parametrize(
    ("epsilon", "text"),
    [(math.inf, "inf"), (1.25, "1.25"), (1.0, "1"), (1 / 3, "0.333333"), (20 / 14, "1.42857")],
)
def test_format_epsilon(epsilon: float, text: str) -> None:
    assert format_epsilon(epsilon) == text


def test_compose_with_delta_sum_at_least_one_does_not_crash():
    composed = ApproxDP(1.0, 0.6).compose(ApproxDP(1.0, 0.5))
    assert math.isinf(composed.epsilon)
    assert composed.get_delta(5.0) >= 0.999


# =================================================================================
# ZCDP, GaussianDP, RDP, PLD and the explicit conversions between them
# =================================================================================
#
# References used below (all independent of `fedpriv.privacy.accounting.guarantees`):
# * anchors_accounting.md §1.5 (b), (c): exact Gaussian and dp-accounting RDP values;
# * dp-accounting's `compute_epsilon` / `compute_delta` (the same RDP -> DP
#   conversion, Canonne, Kamath & Steinke 2020, Prop. 12), on coarse or very fine
#   order grids, and its analytic Gaussian `get_epsilon_gaussian` (Balle & Wang);
# * a 50-digit mpmath evaluation of the Gaussian hockey-stick divergence.

#: dp-accounting's default RDP orders (1.1 ... 10.9, 11 ... 63, 128 ... 1024).
DP_ACCOUNTING_ORDERS = tuple(float(order) for order in dp_rdp.DEFAULT_RDP_ORDERS)
#: 50k orders in (1.01, 1 + 1e9): dp-accounting's conversion minimised almost
#: continuously (it ignores orders <= 1.01).
FINE_ORDERS = 1.0 + np.exp(np.linspace(math.log(0.0101), math.log(1e9), 50_001))


def _classic_zcdp(rho: float, delta: float) -> float:
    """Bun & Steinke (2016) Prop. 1.3: ρ + 2 sqrt(ρ log(1/δ))."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


rhos = st.floats(min_value=1e-6, max_value=1e3)
mus = st.floats(min_value=1e-3, max_value=50.0)
small_deltas = st.floats(min_value=1e-15, max_value=0.5)
query_epsilons = st.floats(min_value=0.0, max_value=200.0)

# ---------------------------------------------------------------------------------
# Reference values
# ---------------------------------------------------------------------------------


def test_gaussian_dp_reference_values() -> None:
    # 100 x Gaussian with noise multiplier 1.0 is 10-GDP (anchors §1.5 b).
    assert GaussianDP(10.0).get_epsilon(1e-5) == pytest.approx(91.81728962466, rel=1e-9)
    assert gaussian_dp_epsilon(10.0, 1e-5) == pytest.approx(91.81728962466, rel=1e-9)
    # Gaussian tree, σ = 10 per node, depth 10: one Gaussian with σ/√10 (§1.5 c).
    assert GaussianDP(math.sqrt(10) / 10).get_epsilon(1e-5) == pytest.approx(1.199370, abs=1e-6)
    # 100 x noise multiplier 10 is 1-GDP: exact 4.377178 (§1.5 b).
    assert GaussianDP(1.0).get_epsilon(1e-5) == pytest.approx(4.377178, abs=1e-6)


@pytest.mark.parametrize(
    ("sigma", "exact", "rdp_default_orders", "classic"),
    [  # anchors §1.5 (c): tree T = 1000 (depth 10), δ = 1e-5
        (5.0, 2.594383, 2.813653, 3.234854),
        (10.0, 1.199370, 1.308497, 1.567427),
        (20.0, 0.561285, 0.615802, 0.771214),
    ],
)
def test_tree_anchor_table(
    sigma: float, exact: float, rdp_default_orders: float, classic: float
) -> None:
    rho = 10 / (2 * sigma**2)
    zcdp = ZCDP(rho)
    assert GaussianDP(math.sqrt(2 * rho)).get_epsilon(1e-5) == pytest.approx(exact, abs=1e-6)
    assert _classic_zcdp(rho, 1e-5) == pytest.approx(classic, abs=1e-6)
    on_grid = zcdp_to_rdp(zcdp, DP_ACCOUNTING_ORDERS).get_epsilon(1e-5)
    assert on_grid == pytest.approx(rdp_default_orders, abs=1e-6)
    # The continuous optimum over orders is tighter than any grid, looser than exact.
    assert exact < zcdp.get_epsilon(1e-5) <= on_grid < classic


def test_zcdp_reference_values() -> None:
    # 100 x noise multiplier 1 is 50-zCDP. anchors §1.5 (b): RDP over 2000+ fine
    # orders 96.03527417, autodp 96.035271, OpenDP's zCDP -> approx-DP 96.03527;
    # dp-accounting's default orders (optimal order 1.5) 96.11630843.
    assert ZCDP(50.0).get_epsilon(1e-5) == pytest.approx(96.035271, abs=1e-5)
    assert ZCDP(50.0).get_epsilon(1e-5) <= 96.03527417
    default_grid = zcdp_to_rdp(ZCDP(50.0), DP_ACCOUNTING_ORDERS)
    assert default_grid.get_epsilon(1e-5) == pytest.approx(96.11630843, abs=1e-7)
    # 100 x noise multiplier 10 (ρ = 0.5) on dp-accounting's orders: 4.728507.
    default_grid = zcdp_to_rdp(ZCDP(0.5), DP_ACCOUNTING_ORDERS)
    assert default_grid.get_epsilon(1e-5) == pytest.approx(4.728507, abs=1e-6)


@pytest.mark.parametrize("mu", [1e-8, 1e-4, 0.3, 1.0, 2.0, 2.5, 10.0, 100.0])
@pytest.mark.parametrize("z", [-1.0, 0.0, 0.5, 3.0, 8.0, 20.0])
def test_gaussian_dp_delta_matches_high_precision(mu: float, z: float) -> None:
    mpmath = pytest.importorskip("mpmath")
    epsilon = z * mu + mu * mu / 2  # a = -z, covers δ from ~0.5 down to ~1e-89
    if epsilon < 0:
        return
    with mpmath.workdps(50):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        exact = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
    assert gaussian_dp_delta(mu, epsilon) == pytest.approx(float(exact), rel=1e-10)


@given(mus, small_deltas)
def test_gaussian_dp_matches_dp_accounting_analytic_gaussian(mu: float, delta: float) -> None:
    expected = get_epsilon_gaussian(1.0 / mu, delta)
    assert GaussianDP(mu).get_epsilon(delta) == pytest.approx(expected, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------------
# Properties of the conversions
# ---------------------------------------------------------------------------------


@given(st.floats(min_value=1e-4, max_value=100.0), st.floats(1e-300, 0.9))
def test_gaussian_dp_round_trip(mu: float, delta: float) -> None:
    epsilon = GaussianDP(mu).get_epsilon(delta)
    back = GaussianDP(mu).get_delta(epsilon)
    if epsilon == 0.0:
        assert back <= delta
    else:
        assert back == pytest.approx(delta, rel=1e-9)


@given(rhos, small_deltas)
def test_zcdp_is_between_exact_gaussian_and_classic(rho: float, delta: float) -> None:
    # The Gaussian with the same ρ is the tightest ρ-zCDP mechanism.
    tight = ZCDP(rho).get_epsilon(delta)
    exact = GaussianDP(math.sqrt(2 * rho)).get_epsilon(delta)
    assert exact <= tight * (1 + 1e-12) + 1e-15
    assert tight <= _classic_zcdp(rho, delta)
    assert zcdp_epsilon(rho, delta) == tight


@pytest.mark.parametrize("rho", [1e-6, 0.05, 0.5, 50.0, 1e4])
@pytest.mark.parametrize("delta", [1e-12, 1e-5, 0.1])
def test_zcdp_is_the_continuous_optimum_of_dp_accountings_conversion(
    rho: float, delta: float
) -> None:
    tight = ZCDP(rho).get_epsilon(delta)
    rdp = [a * rho for a in DEFAULT_ORDERS]
    on_grid = dp_rdp.compute_epsilon(DEFAULT_ORDERS, rdp, delta)[0]
    fine, order = dp_rdp.compute_epsilon(FINE_ORDERS, FINE_ORDERS * rho, delta)
    assert tight <= on_grid * (1 + 1e-12)
    assert tight <= fine * (1 + 1e-12)
    if fine == 0.0:  # δ >= sqrt(1 - exp(-ρ)): both use the total-variation bound
        assert tight == 0.0
        return
    assert order > 1.0102  # the optimum is inside the fine grid's range
    assert tight == pytest.approx(fine, rel=1e-7)


@given(rhos, small_deltas)
def test_zcdp_round_trip(rho: float, delta: float) -> None:
    epsilon = ZCDP(rho).get_epsilon(delta)
    back = ZCDP(rho).get_delta(epsilon)
    assert back <= delta * (1 + 1e-7)
    if epsilon > 0:
        assert back == pytest.approx(delta, rel=1e-7)
    assert zcdp_delta(rho, epsilon) == back


@given(rhos, query_epsilons)
def test_zcdp_delta_is_below_classic_and_above_gaussian(rho: float, epsilon: float) -> None:
    delta = ZCDP(rho).get_delta(epsilon)
    assert 0.0 <= delta <= 1.0
    if epsilon > rho:
        # The classic bound rounded up: below 5e-324 it flushes to 0, and δ is
        # never 0 where it is positive (issue 19).
        assert delta <= max(math.exp(-((epsilon - rho) ** 2) / (4 * rho)), math.ulp(0.0))
    assert GaussianDP(math.sqrt(2 * rho)).get_delta(epsilon) <= delta * (1 + 1e-9)


nonnegative_or_zero = st.one_of(st.just(0.0), st.floats(min_value=1e-4, max_value=5.0))


@st.composite
def rdp_curves(draw: st.DrawFn) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Non-decreasing RDP curves ρα + c log α + d on one of two order grids.

    (Tiny positive values are avoided: dp-accounting's ``compute_delta`` raises a
    math domain error for ``0 < rdp < 1e-16``, where ours returns the KL bound.)
    """
    orders = draw(st.sampled_from([DEFAULT_ORDERS, DP_ACCOUNTING_ORDERS]))
    rho, c, d = (draw(nonnegative_or_zero) for _ in range(3))
    return orders, tuple(rho * a + c * math.log(a) + d for a in orders)


@given(rdp_curves(), st.floats(min_value=1e-12, max_value=0.9), query_epsilons)
def test_rdp_matches_dp_accounting(
    curve: tuple[tuple[float, ...], tuple[float, ...]], delta: float, epsilon: float
) -> None:
    orders, rdp = curve
    guarantee = RDP(orders, rdp)
    expected_epsilon = dp_rdp.compute_epsilon(orders, rdp, delta)[0]
    expected_delta = dp_rdp.compute_delta(orders, rdp, epsilon)[0]
    assert guarantee.get_epsilon(delta) == pytest.approx(expected_epsilon, rel=1e-9, abs=1e-12)
    assert guarantee.get_delta(epsilon) == pytest.approx(expected_delta, rel=1e-9, abs=1e-300)
    assert rdp_epsilon(orders, rdp, delta) == guarantee.get_epsilon(delta)
    assert rdp_delta(orders, rdp, epsilon) == guarantee.get_delta(epsilon)


@given(rhos, small_deltas, small_deltas)
def test_epsilon_is_non_increasing_in_delta(rho: float, a: float, b: float) -> None:
    low, high = sorted((a, b))
    mu = math.sqrt(2 * rho)
    for guarantee in (ZCDP(rho), GaussianDP(mu), zcdp_to_rdp(ZCDP(rho))):
        assert guarantee.get_epsilon(high) <= guarantee.get_epsilon(low) * (1 + 1e-9)


@given(rhos, rhos, small_deltas, query_epsilons)
def test_epsilon_and_delta_are_non_decreasing_in_rho_and_mu(
    a: float, b: float, delta: float, epsilon: float
) -> None:
    low, high = sorted((a, b))
    for make in (ZCDP, lambda rho: GaussianDP(math.sqrt(2 * rho))):
        assert make(low).get_epsilon(delta) <= make(high).get_epsilon(delta) * (1 + 1e-9)
        assert make(low).get_delta(epsilon) <= make(high).get_delta(epsilon) * (1 + 1e-9) + 1e-300


@given(rhos, query_epsilons, query_epsilons)
def test_delta_is_non_increasing_in_epsilon(rho: float, a: float, b: float) -> None:
    low, high = sorted((a, b))
    for guarantee in (ZCDP(rho), GaussianDP(math.sqrt(2 * rho))):
        assert guarantee.get_delta(high) <= guarantee.get_delta(low) * (1 + 1e-9)


DELTA_GRID = (0.0, 1e-12, 1e-8, 1e-5, 1e-3, 0.1, 0.5, 0.9)


@given(st.floats(min_value=1e-3, max_value=20.0))
def test_pure_to_zcdp_never_lowers_the_privacy_curve(epsilon: float) -> None:
    # The tight δ(ε') of ε-DP is attained by randomized response, which is
    # (ε²/2)-zCDP, so the zCDP bound must be at least as large at every ε'.
    pure = PureDP(epsilon)
    converted = pure_to_zcdp(pure)
    assert converted == ZCDP(epsilon**2 / 2)
    for fraction in (0.0, 0.25, 0.5, 0.9, 1.0, 1.5):
        target = fraction * epsilon
        assert converted.get_delta(target) >= pure.get_delta(target) - 1e-12


@given(mus)
def test_gdp_to_zcdp_never_lowers_epsilon(mu: float) -> None:
    converted = gdp_to_zcdp(GaussianDP(mu))
    assert converted.rho == pytest.approx(mu * mu / 2, rel=1e-15)
    for delta in DELTA_GRID:
        assert converted.get_epsilon(delta) >= GaussianDP(mu).get_epsilon(delta) * (1 - 1e-12)


@given(rhos)
def test_zcdp_to_rdp_never_lowers_epsilon(rho: float) -> None:
    converted = zcdp_to_rdp(ZCDP(rho))
    assert converted.orders == DEFAULT_ORDERS
    assert converted.rdp == tuple(a * rho for a in DEFAULT_ORDERS)
    for delta in DELTA_GRID:
        assert converted.get_epsilon(delta) >= ZCDP(rho).get_epsilon(delta) * (1 - 1e-12)
    for epsilon in (0.0, 0.5, 2.0, 10.0):
        assert converted.get_delta(epsilon) >= ZCDP(rho).get_delta(epsilon) * (1 - 1e-9)


def _guarantees_for_conversion(rho: float) -> list:
    mu = math.sqrt(2 * rho)
    return [PureDP(mu), ApproxDP(mu, 1e-6), ZCDP(rho), GaussianDP(mu), zcdp_to_rdp(ZCDP(rho))]


@given(rhos, small_deltas)
def test_to_approx_dp_never_lowers_epsilon(rho: float, delta: float) -> None:
    for guarantee in _guarantees_for_conversion(rho):
        converted = to_approx_dp(guarantee, delta)
        assert isinstance(converted, ApproxDP)
        assert converted.delta == delta
        assert converted.epsilon >= guarantee.get_epsilon(delta)
        for other in DELTA_GRID:
            assert converted.get_epsilon(other) >= guarantee.get_epsilon(other) * (1 - 1e-12)


def test_explicit_approx_dp_conversions_agree_with_dispatch() -> None:
    rho, delta = 0.05, 1e-5
    assert zcdp_to_approx_dp(ZCDP(rho), delta) == to_approx_dp(ZCDP(rho), delta)
    assert gdp_to_approx_dp(GaussianDP(1.0), delta) == to_approx_dp(GaussianDP(1.0), delta)
    curve = zcdp_to_rdp(ZCDP(rho))
    assert rdp_to_approx_dp(curve, delta) == to_approx_dp(curve, delta)
    assert zcdp_to_approx_dp(ZCDP(rho), delta).epsilon == ZCDP(rho).get_epsilon(delta)
    # ApproxDP below its own δ has no finite ε.
    assert to_approx_dp(ApproxDP(1.0, 1e-5), 1e-6) == ApproxDP(math.inf, 1e-6)
    assert to_approx_dp(ApproxDP(1.0, 1e-5), 1e-4) == ApproxDP(1.0, 1e-4)
    assert to_approx_dp(PureDP(1.0), 0.0) == ApproxDP(1.0, 0.0)


def test_exact_zero_epsilon_is_reported_as_smallest_positive_float() -> None:
    # ApproxDP needs ε > 0; (0, δ) is reported as the weaker (tiny, δ).
    for guarantee in (ZCDP(0.0), GaussianDP(0.0), ZCDP(1e-9), RDP([2.0], [0.0])):
        converted = to_approx_dp(guarantee, 0.5)
        assert 0.0 < converted.epsilon <= 1e-300
        assert converted.delta == 0.5


# ---------------------------------------------------------------------------------
# Edge cases
# ---------------------------------------------------------------------------------


def test_delta_zero_and_infinite_parameters() -> None:
    assert ZCDP(0.1).get_epsilon(0.0) == math.inf
    assert GaussianDP(0.1).get_epsilon(0.0) == math.inf
    assert ZCDP(0.0).get_epsilon(0.0) == 0.0
    assert GaussianDP(0.0).get_epsilon(0.0) == 0.0
    assert ZCDP(0.0).get_delta(0.0) == 0.0
    assert GaussianDP(0.0).get_delta(0.0) == 0.0
    assert ZCDP(math.inf).get_epsilon(0.5) == math.inf
    assert ZCDP(math.inf).get_delta(100.0) == 1.0
    assert GaussianDP(math.inf).get_epsilon(0.5) == math.inf
    assert GaussianDP(math.inf).get_delta(100.0) == 1.0
    assert ZCDP(1.0).get_delta(math.inf) == 0.0
    assert GaussianDP(1.0).get_delta(math.inf) == 0.0
    assert RDP([2.0, 3.0], [0.0, 0.0]).get_epsilon(0.0) == 0.0
    assert RDP([2.0, 3.0], [0.0, 0.1]).get_epsilon(0.0) == math.inf
    assert RDP([2.0], [math.inf]).get_epsilon(0.5) == math.inf
    assert RDP([2.0], [math.inf]).get_delta(5.0) == 1.0
    assert RDP([2.0, 3.0], [math.inf, 1.0]).get_delta(math.inf) == 0.0
    assert to_approx_dp(ZCDP(0.1), 0.0) == ApproxDP(math.inf, 0.0)


def test_total_variation_shortcut_gives_zero_epsilon() -> None:
    # δ >= sqrt(1 - exp(-ρ)) bounds the total variation: (0, δ)-DP.
    rho = 0.01
    threshold = math.sqrt(-math.expm1(-rho))
    assert ZCDP(rho).get_epsilon(threshold * 1.001) == 0.0
    # ε(δ) = 0 exactly when δ >= δ(0).
    delta_at_zero = ZCDP(rho).get_delta(0.0)
    assert delta_at_zero <= threshold
    assert ZCDP(rho).get_epsilon(delta_at_zero * 1.001) == 0.0
    assert ZCDP(rho).get_epsilon(delta_at_zero * 0.999) > 0.0
    # The exact Gaussian total variation 2Φ(μ/2) - 1 is below it.
    mu = math.sqrt(2 * rho)
    assert GaussianDP(mu).get_delta(0.0) == pytest.approx(
        math.erf(mu / (2 * math.sqrt(2))), rel=1e-12
    )
    assert GaussianDP(mu).get_delta(0.0) <= delta_at_zero


@pytest.mark.parametrize("rho", [1e-300, 1e-30, 1e-12, 1e6, 1e12, 1e300])
def test_zcdp_is_robust_for_tiny_and_huge_rho(rho: float) -> None:
    for delta in (1e-300, 1e-10, 1e-5, 0.5):
        epsilon = ZCDP(rho).get_epsilon(delta)
        assert 0.0 <= epsilon <= _classic_zcdp(rho, delta)
        assert math.isfinite(epsilon)
    for epsilon in (0.0, 1.0, 1e3, 1e300):
        assert 0.0 <= ZCDP(rho).get_delta(epsilon) <= 1.0


def test_large_epsilon_does_not_overflow() -> None:
    for epsilon in (710.0, 1e5, 1e300):
        # True δ is positive (about e^-2500 or less): never 0, which would claim
        # pure DP (issue 19), but the smallest positive double, its rounded-up value.
        tiny = math.ulp(0.0)
        assert GaussianDP(10.0).get_delta(epsilon) == tiny
        assert ZCDP(5.0).get_delta(epsilon) == tiny
        assert RDP(DEFAULT_ORDERS, [a * 5.0 for a in DEFAULT_ORDERS]).get_delta(epsilon) == tiny
    # Huge μ: ε ≈ μ²/2, computed without overflow, and its δ round-trips.
    epsilon = GaussianDP(1e3).get_epsilon(1e-5)
    assert epsilon == pytest.approx(5e5 + 1e3 * 4.26, rel=1e-3)
    assert GaussianDP(1e3).get_delta(epsilon) == pytest.approx(1e-5, rel=1e-6)


# ---------------------------------------------------------------------------------
# Types: validation, immutability, dispatch
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: ZCDP(-1.0), r"`rho` must be in \[0, inf\], got -1\.0"),
        (lambda: ZCDP(math.nan), r"`rho` must not be NaN"),
        (lambda: GaussianDP(-0.5), r"`mu` must be in \[0, inf\], got -0\.5"),
        (lambda: RDP([], []), r"`orders` must be non-empty"),
        (lambda: RDP([1.0, 2.0], [0.1, 0.2]), r"`orders\[0\]` must be in \(1, inf\), got 1\.0"),
        (lambda: RDP([2.0, math.inf], [0.1, 0.2]), r"`orders\[1\]` must be in \(1, inf\), got inf"),
        (
            lambda: RDP([3.0, 2.0], [0.1, 0.2]),
            r"`orders` must be strictly increasing, got orders\[1\] = 2\.0",
        ),
        (lambda: RDP([2.0, 2.0], [0.1, 0.2]), r"`orders` must be strictly increasing"),
        (
            lambda: RDP([2.0, 3.0], [0.1]),
            r"`rdp` must have the same length as `orders` \(2\), got 1",
        ),
        (lambda: RDP([2.0, 3.0], [0.1, -0.2]), r"`rdp\[1\]` must be in \[0, inf\], got -0\.2"),
        (lambda: RDP([2.0], [math.nan]), r"`rdp\[0\]` must not be NaN"),
        (lambda: zcdp_epsilon(-1.0, 1e-5), r"`rho` must be in \[0, inf\], got -1\.0"),
        (lambda: zcdp_epsilon(1.0, 1.0), r"`delta` must be in \[0, 1\), got 1\.0"),
        (lambda: zcdp_delta(1.0, -1.0), r"`epsilon` must be >= 0, got -1\.0"),
        (lambda: gaussian_dp_delta(-1.0, 1.0), r"`mu` must be in \[0, inf\], got -1\.0"),
        (lambda: gaussian_dp_epsilon(1.0, -0.1), r"`delta` must be in \[0, 1\), got -0\.1"),
        (lambda: rdp_epsilon([2.0], [0.1], 1.5), r"`delta` must be in \[0, 1\), got 1\.5"),
        (lambda: rdp_delta([2.0], [0.1], -2.0), r"`epsilon` must be >= 0, got -2\.0"),
        (lambda: zcdp_to_approx_dp(ZCDP(1.0), 1.0), r"`delta` must be in \[0, 1\), got 1\.0"),
        (lambda: to_approx_dp(GaussianDP(1.0), -1.0), r"`delta` must be in \[0, 1\)"),
        (lambda: zcdp_to_rdp(ZCDP(1.0), [0.5]), r"`orders\[0\]` must be in \(1, inf\), got 0\.5"),
    ],
)
def test_new_guarantees_validate_values(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: ZCDP("1"), r"`rho` must be a real number, got str"),
        (lambda: GaussianDP(None), r"`mu` must be a real number, got NoneType"),
        (lambda: RDP(2.0, [0.1]), r"`orders` must be a sequence of real numbers, got float"),
        (lambda: RDP("23", [0.1]), r"`orders` must be a sequence of real numbers, got str"),
        (lambda: RDP([2.0], ["0.1"]), r"`rdp\[0\]` must be a real number, got str"),
        (
            lambda: PLD([1, 2]),
            r"`distribution` must be a dp_accounting PrivacyLossDistribution, got list",
        ),
    ],
)
def test_new_guarantees_validate_types(factory, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        factory()


@pytest.mark.parametrize("guarantee", [ZCDP(0.5), GaussianDP(1.0), RDP([2.0, 4.0], [0.1, 0.3])])
def test_new_guarantee_queries_are_validated(guarantee) -> None:
    with pytest.raises(ValueError, match=r"`target_delta` must be in \[0, 1\), got 1\.0"):
        guarantee.get_epsilon(1.0)
    with pytest.raises(ValueError, match=r"`target_delta` must not be NaN"):
        guarantee.get_epsilon(math.nan)
    with pytest.raises(ValueError, match=r"`target_epsilon` must be >= 0, got -0\.5"):
        guarantee.get_delta(-0.5)
    with pytest.raises(TypeError, match=r"`target_epsilon` must be a real number"):
        guarantee.get_delta("1")


def test_new_guarantees_are_frozen_hashable_and_typed() -> None:
    zcdp, gdp = ZCDP(1), GaussianDP(2)
    curve = RDP(np.array([2, 3]), [np.float64(0.5), 1])
    assert type(zcdp.rho) is float and type(gdp.mu) is float
    assert curve.orders == (2.0, 3.0) and curve.rdp == (0.5, 1.0)
    assert all(type(v) is float for v in curve.orders + curve.rdp)
    for guarantee, field in ((zcdp, "rho"), (gdp, "mu"), (curve, "rdp")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(guarantee, field, 0.0)
    assert len({zcdp, ZCDP(1.0), gdp, GaussianDP(2.0), curve, RDP([2, 3], [0.5, 1])}) == 3
    # Different types are never equal, even when they describe the same mechanism.
    assert gdp_to_zcdp(GaussianDP(1.0)) != GaussianDP(1.0)


def test_default_orders() -> None:
    assert DEFAULT_ORDERS[0] == 1.25
    assert all(a < b for a, b in itertools.pairwise(DEFAULT_ORDERS))
    assert 256.0 in DEFAULT_ORDERS and DEFAULT_ORDERS[-1] > 256.0
    assert set(range(2, 64)) <= set(DEFAULT_ORDERS)
    RDP(DEFAULT_ORDERS, [0.0] * len(DEFAULT_ORDERS))  # valid as a curve


def test_conversions_reject_wrong_types() -> None:
    cases = [
        (pure_to_zcdp, (ZCDP(1.0),), r"expected PureDP, got ZCDP"),
        (gdp_to_zcdp, (ZCDP(1.0),), r"expected GaussianDP, got ZCDP"),
        (zcdp_to_rdp, (GaussianDP(1.0),), r"expected ZCDP, got GaussianDP"),
        (zcdp_to_approx_dp, (GaussianDP(1.0), 1e-5), r"expected ZCDP, got GaussianDP"),
        (gdp_to_approx_dp, (ZCDP(1.0), 1e-5), r"expected GaussianDP, got ZCDP"),
        (rdp_to_approx_dp, (ZCDP(1.0), 1e-5), r"expected RDP, got ZCDP"),
        (to_approx_dp, (1.0, 1e-5), r"cannot convert float to ApproxDP"),
        (to_approx_dp, (None, 1e-5), r"cannot convert NoneType to ApproxDP"),
    ]
    for function, args, message in cases:
        with pytest.raises(IncompatibleGuaranteeError, match=message):
            function(*args)
    with pytest.raises(TypeError):  # also an ordinary TypeError
        pure_to_zcdp(1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------
# PLD wrapper
# ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gaussian_pld():
    from dp_accounting.pld import privacy_loss_distribution

    return privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=1.0, value_discretization_interval=1e-3
    )


def test_pld_delegates_and_bounds_the_exact_gaussian(gaussian_pld) -> None:
    wrapped = PLD(gaussian_pld)
    assert wrapped.pessimistic is True
    for delta in (1e-8, 1e-5, 1e-2):
        exact = GaussianDP(1.0).get_epsilon(delta)
        got = wrapped.get_epsilon(delta)
        assert got == gaussian_pld.get_epsilon_for_delta(delta)
        assert exact - 1e-9 <= got <= exact + 5e-3  # pessimistic, near-tight
    for epsilon in (0.0, 1.0, 3.0):
        assert wrapped.get_delta(epsilon) == pytest.approx(
            float(gaussian_pld.get_delta_for_epsilon(epsilon)), rel=1e-15
        )
        assert wrapped.get_delta(epsilon) >= GaussianDP(1.0).get_delta(epsilon) - 1e-12
    converted = to_approx_dp(wrapped, 1e-5)
    assert converted == ApproxDP(wrapped.get_epsilon(1e-5), 1e-5)


def test_pld_compares_by_identity_and_is_frozen(gaussian_pld) -> None:
    from dp_accounting.pld import privacy_loss_distribution

    same = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=1.0, value_discretization_interval=1e-3
    )
    assert PLD(gaussian_pld) == PLD(gaussian_pld, pessimistic=True)
    assert hash(PLD(gaussian_pld)) == hash(PLD(gaussian_pld))
    assert PLD(gaussian_pld) != PLD(same)  # equal contents, different object
    assert PLD(gaussian_pld) != PLD(gaussian_pld, pessimistic=False)
    assert PLD(gaussian_pld) != GaussianDP(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        PLD(gaussian_pld).pessimistic = False  # type: ignore[misc]


def test_pld_validation_and_optimistic_conversion(gaussian_pld) -> None:
    with pytest.raises(TypeError, match=r"`pessimistic` must be a bool, got int"):
        PLD(gaussian_pld, pessimistic=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`target_delta` must be in \[0, 1\)"):
        PLD(gaussian_pld).get_epsilon(1.0)
    with pytest.raises(ValueError, match=r"`guarantee.pessimistic` must be True"):
        to_approx_dp(PLD(gaussian_pld, pessimistic=False), 1e-5)
