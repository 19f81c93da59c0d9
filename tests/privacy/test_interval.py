"""Tests for `fedpriv.privacy.mechanisms.interval`: Dubey & Pentland's interval releases as one event.

The worst record's pure ε is checked against a brute-force sum over the releases that
cover each record (release ``j`` covers records ``1..counts[j]``), the RDP handler
against numerical integration of the Rényi divergence of two Laplace densities, and
the PLD handler against byzantine.md §3.6's dp-accounting numbers.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from fedpriv.privacy.calibrations import interval_claimed_guarantee
from fedpriv.privacy.mechanisms.interval import (
    IntervalRelease,
    interval_record_epsilons,
    interval_release_advanced_epsilon,
    interval_release_epsilon,
    interval_release_pld,
    interval_release_rdp,
    interval_release_zcdp,
    make_interval_release,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate


@st.composite
def releases(draw: st.DrawFn) -> IntervalRelease:
    """Small schedules: 1–8 releases, non-decreasing counts <= 30."""
    size = draw(st.integers(min_value=1, max_value=8))
    counts = sorted(draw(st.lists(st.integers(1, 30), min_size=size, max_size=size)))
    positive = st.floats(min_value=1e-2, max_value=1e2)
    scales = draw(st.lists(positive, min_size=size, max_size=size))
    sensitivities = draw(st.lists(positive, min_size=size, max_size=size))
    return IntervalRelease(
        scales=tuple(scales), l1_sensitivities=tuple(sensitivities), counts=tuple(counts)
    )


def _brute_force(event: IntervalRelease) -> list[float]:
    """ε of record i = Σ over releases j with i <= counts[j] of Δ_j / b_j."""
    return [
        math.fsum(
            delta / scale
            for scale, delta, count in zip(event.scales, event.l1_sensitivities, event.counts)
            if record <= count
        )
        for record in range(1, max(event.counts) + 1)
    ]


@given(releases())
def test_worst_record_matches_brute_force(event: IntervalRelease) -> None:
    brute = _brute_force(event)
    np.testing.assert_allclose(interval_record_epsilons(event), brute, rtol=1e-12)
    assert interval_release_epsilon(event) == pytest.approx(max(brute), rel=1e-12)
    # Record 1 is in every release, so it is (one of) the worst.
    assert brute[0] == max(brute)


def test_record_epsilons_known_values() -> None:
    # Releases of means of the first 2, 4 and 4 rewards (a redraw at equal count).
    event = IntervalRelease(
        scales=(1.0, 1.0, 2.0), l1_sensitivities=(0.5, 0.25, 0.25), counts=(2, 4, 4)
    )
    # records 1-2: 0.5 + 0.25 + 0.125; records 3-4: 0.25 + 0.125.
    assert interval_record_epsilons(event).tolist() == [0.875, 0.875, 0.375, 0.375]
    assert interval_release_epsilon(event) == 0.875


@given(
    epsilon=st.sampled_from([0.1, 0.2, 0.25, 0.5, 1.0]),
    horizon=st.integers(min_value=10, max_value=300),
    theta=st.floats(min_value=1.05, max_value=1.95),
)
def test_paper_event_matches_claimed_basic_epsilon(
    epsilon: float, horizon: int, theta: float
) -> None:
    event = make_interval_release(epsilon, horizon, theta=theta)
    f = math.ceil(1 / epsilon)
    assert event.counts == tuple(range(f, horizon + 1, f))
    assert event.l1_sensitivities == pytest.approx([1 / n for n in event.counts])
    claim = interval_claimed_guarantee(epsilon, horizon, target_delta=1e-5, theta=theta)
    # Σ_j (1/n_j) / n_j^{-(1-θ/2)} = Σ_j n_j^{-θ/2}.
    expected = math.fsum(n ** (-theta / 2) for n in event.counts)
    assert interval_release_epsilon(event) == pytest.approx(expected, rel=1e-12)
    assert claim.basic_epsilon == pytest.approx(interval_release_epsilon(event), rel=1e-12)


def test_fixed_rule_event_costs_epsilon_per_release() -> None:
    event = make_interval_release(0.5, 9, rule="fixed")
    assert event.counts == (2, 4, 6, 8)
    assert interval_release_epsilon(event) == pytest.approx(4 * 0.5)


@given(releases())
def test_zcdp_is_half_sum_of_squares(event: IntervalRelease) -> None:
    # Pure ε_j ⇒ ε_j²/2-zCDP (Bun & Steinke 2016, Prop. 1.4); ρ adds.
    expected = 0.5 * math.fsum((d / b) ** 2 for b, d in zip(event.scales, event.l1_sensitivities))
    assert interval_release_zcdp(event) == pytest.approx(expected, rel=1e-12)


def _laplace_renyi(order: float, scale: float) -> float:
    """Rényi divergence D_α(Lap(0, b) || Lap(1, b)) by numerical integration."""

    def integrand(x: float) -> float:
        log_p = -abs(x) / scale
        log_q = -abs(x - 1.0) / scale
        return math.exp(order * log_p + (1 - order) * log_q) / (2 * scale)

    total = sum(
        integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
        for lo, hi in ((-np.inf, 0.0), (0.0, 1.0), (1.0, np.inf))
    )
    return math.log(total) / (order - 1)


@pytest.mark.parametrize("order", [1.5, 2.0, 8.0, 32.0])
def test_rdp_matches_numerical_integration(order: float) -> None:
    scales = (0.7, 2.0, 5.0)
    event = IntervalRelease(scales=scales, l1_sensitivities=(1.0, 1.0, 1.0), counts=(1, 2, 3))
    expected = sum(_laplace_renyi(order, b) for b in scales)
    assert interval_release_rdp(event, [order])[0] == pytest.approx(expected, rel=1e-7)


@given(releases())
def test_rdp_is_monotone_and_capped_by_pure(event: IntervalRelease) -> None:
    orders = np.array([1.0, 1.25, 2.0, 4.0, 16.0, 256.0, np.inf])
    curve = interval_release_rdp(event, orders)
    pure = interval_release_epsilon(event)
    assert curve.shape == orders.shape and np.all(np.isfinite(curve))
    assert np.all(np.diff(curve) >= -1e-9 * pure)  # Rényi divergence grows with α
    assert np.all(curve <= pure * (1 + 1e-12))
    assert curve[-1] == pytest.approx(pure, rel=1e-12)  # α = ∞ is the max divergence
    # α = 1 (KL): Σ 1/λ + e^{-1/λ} − 1, λ = b/Δ.
    kl = math.fsum(d / b + math.expm1(-d / b) for b, d in zip(event.scales, event.l1_sensitivities))
    assert curve[0] == pytest.approx(kl, rel=1e-9, abs=1e-15)


def test_rdp_rejects_orders_below_one() -> None:
    event = IntervalRelease(scales=(1.0,), l1_sensitivities=(1.0,), counts=(1,))
    with pytest.raises(ValueError, match=r"`orders` must be a one-dimensional array"):
        interval_release_rdp(event, [0.5, 2.0])


def test_pld_matches_report_and_stays_below_pure() -> None:
    # byzantine.md §3.6: ε_dp = 0.1, ϑ = 1.1, N = 10², 10 releases: PLD 1.32 at
    # δ' = 1e-5 (dp-accounting 0.6.0, discretization 1e-3); basic 1.33.
    event = make_interval_release(0.1, 100, theta=1.1)
    pld = interval_release_pld(event, discretization=1e-3)
    epsilon = pld.get_epsilon_for_delta(1e-5)
    assert epsilon == pytest.approx(1.32, abs=6e-3)
    assert epsilon <= interval_release_epsilon(event)
    optimistic = interval_release_pld(event, discretization=1e-3, pessimistic=False)
    assert optimistic.get_epsilon_for_delta(1e-5) <= epsilon


def test_pld_groups_equal_releases() -> None:
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    # Fixed rule: every release has b/Δ = 1/ε, so the PLD is one Laplace self-composed.
    event = make_interval_release(0.5, 20, rule="fixed")
    assert len(event.counts) == 10
    direct = pld_lib.from_laplace_mechanism(2.0, value_discretization_interval=1e-3).self_compose(
        10
    )
    ours = interval_release_pld(event, discretization=1e-3)
    for delta in (1e-3, 1e-6):
        assert ours.get_epsilon_for_delta(delta) == pytest.approx(
            direct.get_epsilon_for_delta(delta), rel=1e-9
        )


def test_event_is_frozen_hashable_and_coerced() -> None:
    event = IntervalRelease(scales=[1, 2], l1_sensitivities=np.array([0.5, 0.25]), counts=[2, 4])
    assert event.scales == (1.0, 2.0) and isinstance(event.scales, tuple)
    assert event.l1_sensitivities == (0.5, 0.25) and event.counts == (2, 4)
    assert hash(event) == hash(
        IntervalRelease(scales=(1.0, 2.0), l1_sensitivities=(0.5, 0.25), counts=(2, 4))
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.scales = (3.0,)  # type: ignore[misc]


def test_event_validation() -> None:
    ok = {"scales": (1.0, 1.0), "l1_sensitivities": (1.0, 1.0), "counts": (1, 2)}
    with pytest.raises(ValueError, match=r"`scales` must hold at least one release"):
        IntervalRelease(scales=(), l1_sensitivities=(), counts=())
    with pytest.raises(ValueError, match=r"one entry per release, got lengths 2, 2, 1"):
        IntervalRelease(**{**ok, "counts": (1,)})
    with pytest.raises(ValueError, match=r"`scales` must be in \(0, inf\), got 0\.0"):
        IntervalRelease(**{**ok, "scales": (1.0, 0.0)})
    with pytest.raises(ValueError, match=r"`l1_sensitivities` must be in \(0, inf\)"):
        IntervalRelease(**{**ok, "l1_sensitivities": (math.inf, 1.0)})
    with pytest.raises(ValueError, match=r"`counts` must be >= 1, got 0"):
        IntervalRelease(**{**ok, "counts": (0, 2)})
    with pytest.raises(ValueError, match=r"`counts` must be non-decreasing"):
        IntervalRelease(**{**ok, "counts": (3, 2)})
    with pytest.raises(TypeError, match=r"`counts` must hold integers"):
        IntervalRelease(**{**ok, "counts": (1.0, 2.0)})
    with pytest.raises(TypeError, match=r"`scales` must be a real number"):
        IntervalRelease(**{**ok, "scales": ("a", 1.0)})
    with pytest.raises(ValueError, match=r"`scales` must not be NaN"):
        IntervalRelease(**{**ok, "scales": (math.nan, 1.0)})
    with pytest.raises(ValueError, match=r"`horizon` must reach the first release point"):
        make_interval_release(0.1, 9, theta=1.1)
    with pytest.raises(ValueError, match=r"`theta` must be in \(1, 2\)"):
        make_interval_release(0.1, 100, theta=2.0)


def test_registered_with_routes() -> None:
    routes = pytest.importorskip("fedpriv.privacy.accounting.routes")
    event = make_interval_release(0.1, 100, theta=1.1)
    handlers = routes.handlers_for(event)
    assert handlers.pure is interval_release_epsilon
    assert handlers.zcdp is interval_release_zcdp
    assert handlers.rdp is interval_release_rdp
    assert handlers.pld is not None and handlers.approx is not None
    assert handlers.gdp is None
    result = routes.compose_routes([(event, 1)], 0.0)
    assert result["pure"] == pytest.approx(interval_release_epsilon(event), rel=1e-12)
    # the approx handler needs a δ share, yet the optimal route still sees it as pure
    assert result["optimal"] == pytest.approx(result["pure"], rel=1e-9)
    pld = handlers.pld(event, 1e-3, True)
    assert pld.get_epsilon_for_delta(1e-5) == pytest.approx(1.32, abs=6e-3)


# ---------------------------------------------------------------------------------
# Heterogeneous advanced composition (approx handler)
# ---------------------------------------------------------------------------------


def _kov_exact_delta(epsilon: float, k: int, target_epsilon: float) -> float:
    """δ(ε') of k-fold ε randomized response, the exact k-fold composition of ε-DP
    mechanisms (Kairouz, Oh & Viswanath 2015, Thm. 3.3), summed term by term:
    ``Σ_j C(k, j) (e^{(k-j)ε} - e^{ε' + jε})_+ / (1 + e^ε)^k``."""
    total = math.fsum(
        math.comb(k, j)
        * max(math.exp((k - j) * epsilon) - math.exp(target_epsilon + j * epsilon), 0.0)
        for j in range(k + 1)
    )
    return total / (1 + math.exp(epsilon)) ** k


def test_advanced_route_beats_basic_at_hundred_releases() -> None:
    """byzantine.md §3.6 row (ε_dp 0.1, ϑ 1.1, N 10³): basic 4.51 over 100 releases.

    The advanced route must now use the releases' heterogeneous ε_j (below the DRV
    heterogeneous form, computed here from the ε_j) and stay above the optimistic
    PLD of the Laplace releases, a lower bound on the true ε.
    """
    event = make_interval_release(0.1, 1000, theta=1.1)
    assert len(event.counts) == 100
    routes = pytest.importorskip("fedpriv.privacy.accounting.routes")
    result = routes.compose_routes([(event, 1)], 1e-5, pld_discretization=1e-2)
    assert result["basic"] == pytest.approx(4.51, abs=6e-3)
    eps = [d / b for d, b in zip(event.l1_sensitivities, event.scales)]
    drv = math.fsum(e * math.expm1(e) for e in eps) + math.sqrt(
        2 * math.log(1e5) * math.fsum(e * e for e in eps)
    )
    assert drv == pytest.approx(3.16, abs=6e-3)
    assert result["advanced"] <= drv < result["basic"]
    lower = interval_release_pld(event, discretization=1e-3, pessimistic=False)
    assert result["advanced"] >= lower.get_epsilon_for_delta(1e-5)
    assert result["advanced"] == pytest.approx(
        interval_release_advanced_epsilon(event, 1e-5), rel=1e-12
    )


@pytest.mark.parametrize(
    ("epsilon", "k", "delta"), [(0.1, 100, 1e-5), (0.5, 30, 1e-3), (0.05, 400, 1e-6)]
)
def test_advanced_epsilon_is_above_exact_composition(epsilon: float, k: int, delta: float) -> None:
    """Equal ε_j: the bound holds for every ε-DP mechanism, so it is >= the exact
    k-fold composition of randomized response (its δ at the bound is <= δ)."""
    event = IntervalRelease(scales=(1 / epsilon,) * k, l1_sensitivities=(1.0,) * k, counts=(1,) * k)
    bound = interval_release_advanced_epsilon(event, delta)
    assert bound < k * epsilon
    assert _kov_exact_delta(epsilon, k, bound) <= delta
    # and not absurdly loose: within a factor 2 of the exact ε
    assert _kov_exact_delta(epsilon, k, bound / 2) > delta


@settings(max_examples=20, deadline=None)
@given(releases(), st.sampled_from([1e-2, 1e-4, 1e-6]))
def test_advanced_epsilon_brackets(event: IntervalRelease, delta: float) -> None:
    bound = interval_release_advanced_epsilon(event, delta)
    assert 0.0 <= bound <= interval_release_epsilon(event)
    lower = interval_release_pld(event, discretization=1e-2, pessimistic=False)
    assert bound >= lower.get_epsilon_for_delta(delta) - 1e-9
    assert interval_release_advanced_epsilon(event, 0.0) == interval_release_epsilon(event)


def test_advanced_epsilon_rejects_bad_delta() -> None:
    event = make_interval_release(0.5, 5, rule="fixed")
    for bad in (-1e-9, 1.0):
        with pytest.raises(ValueError, match=r"`delta` must be in \[0, 1\)"):
            interval_release_advanced_epsilon(event, bad)
