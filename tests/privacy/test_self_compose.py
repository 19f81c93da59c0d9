"""Tests for `fedpriv.privacy.accounting.handlers.self_compose_pld` above 1024 releases.

A count above ``_SINGLE_CALL_COUNT`` is composed in one dp-accounting call when its
Chernoff truncation is tight (``_truncation_is_tight``), else by base-256 digits. Either
plan must leave the pessimistic PLD an upper bound: checked against the exact ε of
composed randomized response (a binomial sum), against dp-accounting's own pessimistic
PLD and the optimistic (lower) bracket for DP-SGD, and below the RDP route.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from fedpriv.privacy import PoissonSampled, compose_routes
from fedpriv.privacy.accounting import events, handlers
from fedpriv.privacy.accounting.routes import pld_lower_bound
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

GRID = 1e-3


def _exact_rr_delta(epsilon0: float, count: int, epsilon: float) -> float:
    """Exact δ(ε) of ``count`` binary randomized responses at ``epsilon0``: the loss is
    ``ε0 (2j - k)`` with ``j ~ Binomial(k, e^ε0 / (1 + e^ε0))`` under the first input
    (Kairouz, Oh & Viswanath 2015, Thm. 3.3), δ(ε) = E[(1 - e^{ε - L})_+]."""
    j = np.arange(count + 1)
    losses = epsilon0 * (2.0 * j - count)
    log_mass = stats.binom.logpmf(j, count, special.expit(epsilon0))
    above = losses > epsilon
    return float(np.sum(np.exp(log_mass[above]) * -np.expm1(epsilon - losses[above])))


@settings(max_examples=15, deadline=None)
@given(
    epsilon0=st.floats(0.002, 0.2),
    count=st.integers(handlers._SINGLE_CALL_COUNT + 1, 12_000),
    delta=st.sampled_from([1e-3, 1e-6, 1e-9]),
)
def test_composed_randomized_response_pld_is_an_upper_bound(epsilon0, count, delta) -> None:
    """Whichever plan ``self_compose_pld`` takes, the PLD route's ε is at least the exact
    ε: the exact δ at it is within ``delta`` (float slack 1e-9 relative)."""
    event = events.RandomizedResponse(epsilon=epsilon0)
    epsilon = compose_routes([(event, count)], delta, pld_discretization=GRID)["pld"]
    assert math.isfinite(epsilon)
    assert _exact_rr_delta(epsilon0, count, epsilon) <= delta * (1.0 + 1e-9)


@pytest.mark.parametrize("steps", [2_000, 10_000])
def test_dpsgd_pld_is_dp_accountings_pessimistic_value_or_above(steps: int) -> None:
    """DP-SGD (q = 0.01, σ = 1.1): one self-composition, as dp-accounting's
    ``PLDAccountant`` makes it, so the route's ε is dp-accounting's pessimistic ε plus
    the round-off certificate; above the optimistic bracket and below the RDP route."""
    step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.1), sampling_rate=0.01)
    assert handlers._truncation_is_tight(handlers.event_pld(step, 1, GRID, True), steps)
    routes = compose_routes([(step, steps)], 1e-5, pld_discretization=GRID)
    anchor = dp_accounting.pld.PLDAccountant(value_discretization_interval=GRID)
    anchor.compose(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), steps
    )
    theirs = anchor.get_epsilon(1e-5)
    assert theirs <= routes["pld"] <= theirs * (1.0 + 1e-5)
    assert pld_lower_bound([(step, steps)], 1e-5, pld_discretization=GRID) <= routes["pld"]
    assert routes["pld"] <= routes["rdp"]


def test_loose_truncation_keeps_the_digits() -> None:
    """700,000 randomized responses at ε = 0.004 (issue 19: 13 million bins in one call)
    stay with the base-256 digits; the tight DP-SGD step at 10⁵ takes one call."""
    rr = handlers.event_pld(events.RandomizedResponse(epsilon=0.004), 1, 1e-4, True)
    assert not handlers._truncation_is_tight(rr, 700_000)
    step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.1), sampling_rate=0.01)
    assert handlers._truncation_is_tight(handlers.event_pld(step, 1, 1e-4, True), 100_000)
