"""Small things a new user hits: an accountant without structure, (0, δ) events, and the
exact PLD route of the discrete Gaussian."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.privacy import Accountant, compose_routes
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.routes import pld_lower_bound
from scipy import optimize, special

from ._support import assert_unchanged, snapshot


# ------------------------------------------------------------ Accountant() unstructured
def test_accountant_without_structure_charges_one_cell() -> None:
    accountant = Accountant()
    accountant.spend(events.Laplace(scale=2.0))
    accountant.spend(events.Laplace(scale=4.0), key={})
    assert accountant.get_epsilon(0.0) == pytest.approx(0.75)
    assert accountant.ledger.cells() == [
        [(events.Laplace(scale=2.0), 1), (events.Laplace(scale=4.0), 1)]
    ]
    charges = accountant.ledger.charges
    assert list(charges["event"]) == ["Laplace", "Laplace"]
    assert "__single_cell__" not in charges.columns


def test_accountant_without_structure_refuses_undeclared_levels() -> None:
    accountant = Accountant()
    before = snapshot(accountant)
    with pytest.raises(ValueError, match="not declared"):
        accountant.spend(events.Laplace(scale=1.0), key={"agent": 0})
    assert_unchanged(accountant, before)


def test_declared_levels_still_need_their_key() -> None:
    accountant = Accountant(disjoint=("agent",))
    with pytest.raises(ValueError, match="missing the disjoint level"):
        accountant.spend(events.Laplace(scale=1.0))
    with pytest.raises(TypeError, match="sequences of level names"):
        Accountant(disjoint="agent")


def test_budget_without_structure_is_atomic() -> None:
    from fedpriv.privacy import PureDP
    from fedpriv.privacy.errors import BudgetExceededError

    accountant = Accountant(budget=PureDP(1.0))
    accountant.spend(events.Laplace(scale=2.0))
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=1.0))
    assert_unchanged(accountant, before)


# ------------------------------------------------------------------------ (0, δ) events
def test_zero_epsilon_approximate_event_is_accepted_and_composes_exactly() -> None:
    """k releases of (0, δ) are exactly (0, 1 - (1 - δ)^k)-DP (Kairouz et al. 2015)."""
    event = events.OpaqueApproxDP(epsilon=0, delta=1e-6)
    accountant = Accountant()
    for _ in range(3):
        accountant.spend(event)
    assert accountant.get_delta(0.0) == pytest.approx(-math.expm1(3 * math.log1p(-1e-6)))
    assert accountant.get_epsilon(3e-6) == 0.0
    assert compose_routes([(event, 3)], 2e-6)["basic"] == math.inf  # δ does not fit
    with pytest.raises(ValueError, match=r"\[0, inf\)"):
        events.OpaqueApproxDP(epsilon=-0.1, delta=1e-6)


# ------------------------------------------------------------- discrete Gaussian route
def _discrete_gaussian_epsilon(sigma: float, delta: float) -> float:
    """Exact ε(δ) of the scalar discrete Gaussian at sensitivity 1, from its pmf.

    ``δ(ε) = Σ_z (P(z) - e^ε P(z - 1))_+`` over the integers (the pair is symmetric),
    summed where the pmf is above 1e-300 and solved for ε by Brent's method.
    """
    z = np.arange(-int(40 * sigma) - 40, int(40 * sigma) + 41)
    log_p = -(z**2) / (2 * sigma**2)
    log_p = log_p - special.logsumexp(log_p)
    log_q = -((z - 1) ** 2) / (2 * sigma**2)
    log_q = log_q - special.logsumexp(log_q)

    def excess(epsilon: float) -> float:
        return float(np.sum(np.clip(np.exp(log_p) - np.exp(epsilon + log_q), 0, None))) - delta

    return optimize.brentq(excess, 0.0, 50.0, xtol=1e-12)


@pytest.mark.parametrize("sigma", [1.0, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_discrete_gaussian_pld_is_between_exact_and_zcdp(sigma: float, delta: float) -> None:
    cell = [(events.DiscreteGaussian(sigma=sigma, l2_sensitivity=1.0), 1)]
    routes = compose_routes(cell, delta)
    exact = _discrete_gaussian_epsilon(sigma, delta)
    assert exact - 1e-9 <= routes["pld"] <= routes["zcdp"]
    assert routes["pld"] == pytest.approx(exact, abs=2e-3)  # grid 1e-4, connect-the-dots
    assert pld_lower_bound(cell, delta) <= exact + 1e-9


def test_discrete_gaussian_pld_composes_below_zcdp() -> None:
    cell = [(events.DiscreteGaussian(sigma=5.0, l2_sensitivity=1.0), 4)]
    routes = compose_routes(cell, 1e-6)
    assert routes["pld"] < routes["zcdp"]
    assert pld_lower_bound(cell, 1e-6) <= routes["pld"]


def test_discrete_gaussian_pld_only_for_unit_integer_shifts() -> None:
    """Only 1 <= Δ² < 2 pins the shift to ±1 in one coordinate; otherwise zCDP."""
    for sensitivity in (0.5, 2.0):
        cell = [(events.DiscreteGaussian(sigma=5.0, l2_sensitivity=sensitivity), 1)]
        assert compose_routes(cell, 1e-6)["pld"] == math.inf
