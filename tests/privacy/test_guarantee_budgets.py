"""zCDP and Gaussian-DP budgets (issue 38, item 3).

A ``ZCDP(rho)`` budget caps every cell's ρ (Σρ_i, Bun & Steinke 2016, Lemma 2.3), a
``GaussianDP(mu)`` budget every cell's μ (√Σμ_i², Dong, Roth & Su 2019, Cor. 3.3).
Both were refused with a ``TypeError``. The tests fill a budget to its boundary
(exact in binary: Gaussians of multiplier 2 are 1/8-zCDP and 1/2-GDP), refuse the next
charge atomically, refuse a release with no bound of the budget's type, and check
the decisions against ρ and μ summed here in exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from fedpriv.privacy import ZCDP, Accountant, ApproxDP, GaussianDP, PoissonSampled, PureDP
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.guarantees import RDP
from fedpriv.privacy.errors import BudgetExceededError, IncompatibleGuaranteeError
from fedpriv.privacy.ledger.budget import BUDGET_TYPES
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.privacy._support import assert_unchanged, snapshot

GAUSSIAN = events.Gaussian(noise_multiplier=2.0)  # ρ = 1/8, μ = 1/2 exactly


@pytest.mark.parametrize("stored", [False, True], ids=["memory", "store"])
def test_a_zcdp_budget_is_filled_to_its_boundary_then_refuses(stored, tmp_path) -> None:
    options = {"store": tmp_path / "ledger.sqlite"} if stored else {}
    accountant = Accountant(disjoint=("agent",), budget=ZCDP(0.5), **options)
    for _ in range(4):  # 4 × 1/8 = 1/2: exactly at the budget, accepted
        accountant.spend(GAUSSIAN, key={"agent": 0})
    assert accountant.odometer.spent() == 0.5 and accountant.odometer.remaining() == 0.0
    accountant.spend(GAUSSIAN, key={"agent": 1})  # another cell: parallel
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError, match=r"ρ to 0\.625 > budget 0\.5"):
        accountant.spend(GAUSSIAN, key={"agent": 0})
    assert_unchanged(accountant, before)
    assert accountant.odometer.would_exceed(GAUSSIAN, key={"agent": 0})
    assert not accountant.odometer.would_exceed(GAUSSIAN, key={"agent": 2})
    # a pure release is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4): ε = 1 costs 1/2
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 3})
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=0.99), key={"agent": 4})
    if stored:
        accountant.store.close()
        reopened = Accountant.open(tmp_path / "ledger.sqlite")
        assert reopened.odometer.budget == ZCDP(0.5) and reopened.odometer.spent() == 0.5
        with pytest.raises(BudgetExceededError):
            reopened.spend(GAUSSIAN, key={"agent": 0})
        reopened.store.close()


@pytest.mark.parametrize("stored", [False, True], ids=["memory", "store"])
def test_a_gaussian_dp_budget_is_filled_to_its_boundary_then_refuses(stored, tmp_path) -> None:
    options = {"store": tmp_path / "ledger.sqlite"} if stored else {}
    accountant = Accountant(budget=GaussianDP(1.0), **options)
    for _ in range(4):  # √(4 × 1/4) = 1: exactly at the budget, accepted
        accountant.spend(GAUSSIAN)
    assert accountant.odometer.spent() == 1.0 and accountant.odometer.remaining() == 0.0
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError, match=r"μ to 1\.11803 > budget 1"):
        accountant.spend(events.Gaussian(noise_multiplier=2.0))
    assert_unchanged(accountant, before)
    if stored:
        accountant.store.close()
        assert Accountant.open(tmp_path / "ledger.sqlite").odometer.spent() == 1.0


def test_a_release_without_a_bound_of_the_budgets_type_is_refused() -> None:
    gdp = Accountant(budget=GaussianDP(5.0))
    before = snapshot(gdp)
    with pytest.raises(BudgetExceededError, match="μ to inf"):  # Laplace: no μ handler
        gdp.spend(events.Laplace(scale=100.0))
    assert_unchanged(gdp, before)
    zcdp = Accountant(neighboring_relation="add_or_remove_one", budget=ZCDP(5.0))
    sampled = PoissonSampled(event=GAUSSIAN, sampling_rate=0.01)
    with pytest.raises(BudgetExceededError, match="ρ to inf"):
        zcdp.spend(sampled)
    with pytest.raises(BudgetExceededError, match="ρ to inf"):  # δ > 0: no ρ
        zcdp.spend(events.OpaqueApproxDP(epsilon=0.1, delta=1e-9))
    assert zcdp.odometer.spent() == 0.0


def test_other_guarantees_are_refused_by_name() -> None:
    assert (PureDP, ApproxDP, ZCDP, GaussianDP) == BUDGET_TYPES
    with pytest.raises(IncompatibleGuaranteeError, match="PureDP, ApproxDP, ZCDP, GaussianDP"):
        Accountant(budget=RDP(orders=(2.0, 4.0), rdp=(0.1, 0.2)))
    with pytest.raises(TypeError, match="got float"):
        Accountant(budget=0.5)


@settings(max_examples=40)
@given(
    sigmas=st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 10.0]), min_size=1, max_size=12),
    budget=st.sampled_from([Fraction(1, 8), Fraction(1, 2), Fraction(3, 2), Fraction(7, 3)]),
    kind=st.sampled_from(["zcdp", "gdp"]),
)
def test_decisions_equal_exact_rational_sums(sigmas, budget, kind) -> None:
    """Each charge is accepted iff the exact ρ (Σ 1/(2σ²)) or μ² (Σ 1/σ²) stays within
    the budget; ties at the boundary are accepted."""
    cap = ZCDP(float(budget)) if kind == "zcdp" else GaussianDP(float(budget))
    accountant = Accountant(budget=cap)
    total = Fraction(0)
    for sigma in sigmas:
        step = Fraction(1, 2) / Fraction(sigma) ** 2 if kind == "zcdp" else 1 / Fraction(sigma) ** 2
        limit = Fraction(float(budget)) if kind == "zcdp" else Fraction(float(budget)) ** 2
        within = total + step <= limit
        near = abs(total + step - limit) <= limit * Fraction(1, 10**9)
        try:
            accountant.spend(events.Gaussian(noise_multiplier=sigma))
        except BudgetExceededError:
            assert not within or near, (total, step, limit)
            continue
        assert within or near, (total, step, limit)
        total += step
    spent = Fraction(accountant.odometer.spent())
    exact = total if kind == "zcdp" else None
    if exact is not None:
        assert abs(spent - exact) <= exact * Fraction(1, 10**12)
    else:
        assert math.isclose(float(spent) ** 2, float(total), rel_tol=1e-12, abs_tol=0.0)


def test_a_store_report_states_a_zcdp_budget_in_rho(tmp_path) -> None:
    from fedpriv.privacy.deployment import render_store_text, store_report

    path = tmp_path / "ledger.sqlite"
    accountant = Accountant(budget=ZCDP(0.5), store=path)
    accountant.spend(GAUSSIAN)
    accountant.store.close()
    report = store_report(path)
    assert (report["budget"], report["spent"], report["remaining"]) == ({"rho": 0.5}, 0.125, 0.375)
    assert "budget: ρ = 0.5 (zCDP); spent 0.125, remaining 0.375" in render_store_text(report)
