"""Issue 23: the incremental budget check decides as the exact re-composition does.

A budgeted charge is accepted at once when a cheap route on the running cells keeps
every cell within the budget, and re-priced exactly otherwise
(:mod:`fedpriv.privacy.ledger.running`). The reference here is today's exact check written
out: a fresh, unbudgeted accountant holding the accepted charges plus the candidate,
whose tightest ε at the budget's δ is compared with the budget.
"""

from __future__ import annotations

import math

import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import cells, events, pld_route
from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE, ApproxDP, PureDP
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.ledger import pricing as pricing_module
from fedpriv.privacy.ledger.cells import normalise_keys
from fedpriv.privacy.ledger.running import RunningCells
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

_EVENTS = [
    events.Laplace(scale=2.0),
    events.Laplace(scale=5.0),
    events.Gaussian(noise_multiplier=2.0),
    events.Gaussian(noise_multiplier=4.0),
    events.RandomizedResponse(epsilon=0.3),
    events.SelfComposed(event=events.Laplace(scale=8.0), count=3),
    events.SelfComposed(event=events.Gaussian(noise_multiplier=6.0), count=4),
    events.LaplaceTree(scale=10.0, horizon=8),
]
#: Labels pandas groups as one cell (1, 1.0, True; None and NaN) must share a
#: running cell too; lists mix every label type (issue 38: ``["x", 2]`` split 2's cell).
_LABELS = st.sampled_from([0, 1, 1.0, True, "1", None, math.nan, 2, "x", 2.5, "2"])
_ACTION = st.tuples(
    st.sampled_from(_EVENTS), st.one_of(_LABELS, st.lists(_LABELS, min_size=1, max_size=3))
)
_BUDGETS = st.one_of(
    st.builds(PureDP, st.floats(0.2, 4.0)),
    st.builds(ApproxDP, st.floats(0.2, 6.0), st.sampled_from([1e-9, 1e-6, 1e-3])),
)


def _exact_refuses(accepted, candidate, budget, disjoint) -> bool:
    """Today's check: re-compose the whole ledger plus the candidate, each label of a
    list charged on its own (so a list's labels cannot be coerced to one dtype)."""
    reference = Accountant(disjoint=disjoint)
    for event, labels in [*accepted, candidate]:
        if not disjoint:
            reference.spend(event, key=None)
            continue
        for label in labels if isinstance(labels, list) else [labels]:
            reference.spend(event, key={"agent": label})
    delta = budget.delta if isinstance(budget, ApproxDP) else 0.0
    return reference.get_epsilon(delta) > budget.epsilon * (1 + RELATIVE_TOLERANCE)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    actions=st.lists(_ACTION, min_size=1, max_size=12), budget=_BUDGETS, structured=st.booleans()
)
@example(  # issue 38: ["x", 2] became ['x', '2'], a second cell for agent 2
    actions=[(_EVENTS[0], 2), (_EVENTS[0], ["x", 2])], budget=PureDP(0.75), structured=True
)
def test_incremental_decisions_equal_the_exact_recomposition(actions, budget, structured):
    disjoint = ("agent",) if structured else ()
    accountant = Accountant(budget=budget, disjoint=disjoint)
    accepted = []
    for event, labels in actions:
        refused = _exact_refuses(accepted, (event, labels), budget, disjoint)
        assert (
            accountant.odometer.would_exceed(event, key={"agent": labels} if structured else None)
            is refused
        )
        try:
            accountant.spend(event, key={"agent": labels} if structured else None)
        except BudgetExceededError:
            assert refused
            continue
        assert not refused
        accepted.append((event, labels))
    delta = budget.delta if isinstance(budget, ApproxDP) else 0.0
    assert accountant.get_epsilon(delta) <= budget.epsilon * (1 + RELATIVE_TOLERANCE)


def test_a_charge_well_within_the_budget_is_not_re_priced(monkeypatch):
    accountant = Accountant(budget=ApproxDP(10.0, 1e-6), disjoint=("agent",))
    accountant.spend(events.Gaussian(noise_multiplier=5.0), key={"agent": 0})

    def exact(*args, **kwargs):
        raise AssertionError("the exact check ran")

    monkeypatch.setattr(pricing_module, "compose_routes", exact)
    for agent in range(3):  # GDP on the running cells accepts these
        accountant.spend(events.Gaussian(noise_multiplier=5.0), key={"agent": agent})
    with pytest.raises(AssertionError, match="the exact check ran"):  # near the budget
        accountant.spend(events.Laplace(scale=0.11), key={"agent": 0})
    monkeypatch.undo()
    assert len(accountant.ledger.charges) == 4


def test_filling_a_pure_budget_exactly_is_decided_exactly():
    accountant = Accountant(budget=PureDP(1.0))
    for _ in range(16):  # 16 x 1/16 = 1 exactly: beyond the margin, the exact sum accepts
        accountant.spend(events.Laplace(scale=16.0))
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=16.0))
    assert accountant.get_epsilon(0.0) == 1.0


def test_an_interrupted_fold_is_completed_once():
    accountant = Accountant(budget=PureDP(1.0), disjoint=("agent",))
    accountant.spend(events.Laplace(scale=8.0), key={"agent": 0})
    running = accountant._running
    event = events.Laplace(scale=8.0)
    arrays = normalise_keys({"agent": 0}, accountant.ledger.disjoint, accountant.ledger.levels)
    accepted, update = running.price(0, event, arrays, len(accountant._rows.charges))
    assert accepted
    # A KeyboardInterrupt after the charge is recorded, cells installed, the count not:
    accountant._rows.charges.append((0, arrays))
    accountant._rows.bump()
    running.cells.update(update[1])
    for _ in range(5):  # 7 x 1/8 in agent 0: the 8th fills it, the 9th is refused
        accountant.spend(event, key={"agent": 0})
    assert running.applied == 7
    assert running.cells[(0,)].counts == {0: 7}
    accountant.spend(event, key={"agent": 0})
    with pytest.raises(BudgetExceededError):
        accountant.spend(event, key={"agent": 0})


def test_running_cells_are_rebuilt_from_a_store(tmp_path):
    path = tmp_path / "ledger.sqlite"
    first = Accountant(budget=ApproxDP(2.0, 1e-6), disjoint=("agent",), store=path)
    second = Accountant(budget=ApproxDP(2.0, 1e-6), disjoint=("agent",), store=path)
    event = events.Gaussian(noise_multiplier=3.0)
    accepted = 0
    for turn in range(40):
        writer = (first, second)[turn % 2]
        try:
            writer.spend(event, key={"agent": 0})
            accepted += 1
        except BudgetExceededError:
            pass
    # the exact answer: the largest k with k Gaussians of σ = 3 within (2, 1e-6)
    reference = Accountant(disjoint=("agent",))
    exact = 0
    while True:
        reference.spend(event, key={"agent": 0})
        if reference.get_epsilon(1e-6) > 2.0 * (1 + RELATIVE_TOLERANCE):
            break
        exact += 1
    assert accepted == exact
    first.store.close()
    second.store.close()
    reopened = Accountant.open(path)
    with pytest.raises(BudgetExceededError):
        reopened.spend(event, key={"agent": 0})
    assert reopened._running.applied == exact
    reopened.store.close()


def test_thresholds_are_sound_for_each_route():
    budget = ApproxDP(1.5, 1e-6)
    running = RunningCells((), budget, 10**6)
    limits = running.thresholds()
    from fedpriv.privacy.accounting.conversions import (
        gaussian_dp_epsilon,
        rdp_epsilon,
        zcdp_epsilon,
    )
    from fedpriv.privacy.accounting.guarantees import DEFAULT_ORDERS

    assert gaussian_dp_epsilon(math.sqrt(limits["gdp"]), 1e-6) <= 1.5
    assert gaussian_dp_epsilon(math.sqrt(limits["gdp"] * 1.001), 1e-6) > 1.5 * (1 - 1e-5)
    assert zcdp_epsilon(limits["zcdp"], 1e-6) <= 1.5
    for order, limit in zip(DEFAULT_ORDERS, limits["rdp"]):
        if limit > 0:
            assert rdp_epsilon([order], [limit], 1e-6) <= 1.5


# ---------------------------------------------------------------------- grid per cell
def test_the_merged_gaussian_counts_as_one_release_of_the_upper_grid():
    """Issue 23 item 2: the upper PLD route's grid bounds the merged Gaussian PLD it
    builds (<= 10^5 points), and the coarser upper value stays above the lower bracket."""
    from fedpriv.privacy.accounting.routes import compose_routes, pld_lower_bound

    cell = [(events.Laplace(scale=100.0), 5000), (events.Gaussian(noise_multiplier=100.0), 5000)]
    items = cells.normalize_cell(cell)
    grid = pld_route.pld_grid(items, 1e-4, True)
    mu = math.sqrt(5000) / 100.0
    assert grid > pld_route.pld_grid(items, 1e-4, False)  # the lower bracket keeps its grid
    assert 2 * (mu * mu / 2 + pld_route.PLD_SPREAD * mu) / grid <= pld_route.SINGLE_POINTS * (
        1 + 1e-9
    )
    upper = compose_routes(cell, 1e-6)
    assert upper["pld"] <= min(upper["rdp"], upper["zcdp"])
    assert pld_lower_bound(cell, 1e-6) <= upper["pld"]
