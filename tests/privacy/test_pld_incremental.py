"""Issue 36: the kept PLDs decide a budgeted charge as the from-scratch check does.

A charge that no cheap route accepts is priced on each changed cell's kept PLD, one
composition (:mod:`fedpriv.privacy.accounting.pld_incremental`); only where that cannot
accept does the from-scratch check of every route run. The oracle here is that check
written out (a fresh, unbudgeted accountant holding the accepted charges and the
candidate, or :func:`compose_routes` on the candidate cell).
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting import pld_incremental as incremental
from fedpriv.privacy.accounting import routes as routes_module
from fedpriv.privacy.accounting.cells import normalize_cell
from fedpriv.privacy.accounting.guarantees import ApproxDP, PureDP
from fedpriv.privacy.accounting.handlers import event_gdp_mu
from fedpriv.privacy.accounting.pld_certificate import pmf_probs, pmfs, roundoff_at
from fedpriv.privacy.accounting.pld_route import TRUNCATION_ALLOWANCE, cell_pld, pld_grid
from fedpriv.privacy.accounting.routes import compose_routes
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.ledger.accountant import RELATIVE_TOLERANCE
from hypothesis import given, settings
from hypothesis import strategies as st

#: A coarse grid keeps the PLDs small (10³ to 10⁴ bins) so that many cells are tried.
_GRID = 1e-3
_DELTA = 1e-6
_EVENTS = [
    events.Laplace(scale=3.0),
    events.Laplace(scale=5.0),
    events.Gaussian(noise_multiplier=4.0),
    events.Gaussian(noise_multiplier=6.0),
    events.RandomizedResponse(epsilon=0.3),
    events.DiscreteLaplace(scale=4.0, l1_sensitivity=1),
    events.SelfComposed(event=events.Laplace(scale=6.0), count=3),
    events.Composed(events=(events.Laplace(scale=8.0), events.Gaussian(noise_multiplier=8.0))),
    events.LaplaceTree(scale=12.0, horizon=8),
]
_CHEAP = ("pure", "gdp", "zcdp", "rdp")


def _band_budget(cells, position: float, delta: float = _DELTA) -> ApproxDP:
    """A budget at ``position`` between the ledger's tightest ε (0) and its cheapest
    cheap route (1), each route's worst cell taken as the accountant takes it;
    negative positions are below the tightest ε. ``cells``: one event list per cell."""
    worst = dict.fromkeys(compose_routes([], delta), 0.0)
    for sequence in cells:
        cell: dict = {}
        for event in sequence:
            cell[event] = cell.get(event, 0) + 1
        values = compose_routes(list(cell.items()), delta, pld_discretization=_GRID)
        worst = {name: max(worst[name], value) for name, value in values.items()}
    cheap = min(worst[name] for name in _CHEAP)
    low = min(worst.values())
    return ApproxDP(max(1e-3, low + position * (cheap - low)), delta)


def _refuses(accepted, candidate, budget, disjoint) -> bool:
    """The from-scratch check: a fresh accountant's tightest ε against the budget."""
    reference = Accountant(disjoint=disjoint, pld_discretization=_GRID)
    for event, agents in [*accepted, candidate]:
        reference.spend(event, key={"agent": agents} if disjoint else None)
    return reference.get_epsilon(budget.delta) > budget.epsilon * (1 + RELATIVE_TOLERANCE)


@settings(max_examples=25, deadline=None)
@given(
    sequence=st.lists(st.sampled_from(_EVENTS), min_size=2, max_size=40),
    position=st.floats(-0.3, 1.0),
    delta=st.sampled_from([1e-9, 1e-6, 1e-3]),
)
def test_single_cell_decisions_equal_the_from_scratch_check(sequence, position, delta):
    budget = _band_budget([sequence], position, delta)
    accountant = Accountant(budget=budget, pld_discretization=_GRID)
    accepted = []
    for event in sequence:
        refused = _refuses(accepted, (event, None), budget, ())
        assert accountant.odometer.would_exceed(event, key=None) is refused
        try:
            accountant.spend(event)
        except BudgetExceededError:
            assert refused
            continue
        assert not refused
        accepted.append((event, None))


@settings(max_examples=15, deadline=None)
@given(
    actions=st.lists(
        st.tuples(st.sampled_from(_EVENTS), st.lists(st.integers(0, 2), min_size=1, max_size=3)),
        min_size=2,
        max_size=25,
    ),
    position=st.floats(-0.2, 1.0),
)
def test_disjoint_cells_decisions_equal_the_from_scratch_check(actions, position):
    """Several cells, charges to one or more of them at once (``spend_many``)."""
    cells = [[e for e, agents in actions for a in agents if a == agent] for agent in range(3)]
    budget = _band_budget(cells, position)
    accountant = Accountant(budget=budget, disjoint=("agent",), pld_discretization=_GRID)
    accepted = []
    for event, agents in actions:
        refused = _refuses(accepted, (event, agents), budget, ("agent",))
        try:
            accountant.spend(event, key={"agent": agents})
        except BudgetExceededError:
            assert refused
            continue
        assert not refused
        accepted.append((event, agents))


@settings(max_examples=30, deadline=None)
@given(sequence=st.lists(st.sampled_from(_EVENTS), min_size=1, max_size=30))
def test_kept_pld_dominates_the_from_scratch_pld(sequence):
    """Composed one release at a time, the kept PLD's δ(ε') is never below the
    from-scratch PLD's minus both round-off certificates and the truncation allowance,
    and its fast ε is never below the from-scratch certified PLD ε (checked after
    every release)."""
    cell: dict = {}
    state = None
    for event in sequence:
        cell[event] = cell.get(event, 0) + 1
        items = normalize_cell(list(cell.items()))
        grid = pld_grid(items, _GRID, True)
        if state is not None and state.grid == grid:
            state = incremental._extend(state, normalize_cell([(event, 1)]), items)
        else:
            state = incremental._scratch(items, grid)
        if all(event_gdp_mu(part) is not None for part, _ in items):
            continue  # all Gaussian: the PLD route reports the exact GDP value
        scratch = cell_pld(items, grid, True, False)
        assert state is not None and scratch is not None
        fast = incremental._fast_epsilon(state, items, _DELTA)
        assert fast >= compose_routes(list(cell.items()), _DELTA, pld_discretization=_GRID)["pld"]
        probs = [pmf_probs(pmf) for pmf in pmfs(state.full)]
        norms = [float(np.linalg.norm(p)) for p in probs]
        kept = (state.full, incremental._certificate(probs, norms, state.ops), state.calls)
        for epsilon in (0.0, 1.0, 3.0):
            allowance = (
                roundoff_at(kept, epsilon)
                + roundoff_at(scratch, epsilon)
                + TRUNCATION_ALLOWANCE * (scratch[2] + 1)
            )
            assert state.full.get_delta_for_epsilon(epsilon) >= (
                scratch[0].get_delta_for_epsilon(epsilon) - allowance
            )


def _band_accountant():
    """One cell of Laplace releases whose cheap routes are spent: every further
    charge is priced on the kept PLD until the budget refuses one."""
    accountant = Accountant(budget=ApproxDP(epsilon=7.0, delta=_DELTA), pld_discretization=_GRID)
    event = events.Laplace(scale=5.0)
    while accountant._running_cells().alive != (False,) * 4 or not accountant._kept_plds._values:
        accountant.spend(event)
    return accountant, event


def test_band_charges_compose_instead_of_pricing_from_scratch(monkeypatch):
    accountant, event = _band_accountant()
    accountant.spend(event)  # the kept PLD is in step with the ledger now
    calls = []
    monkeypatch.setattr(
        routes_module, "_routes", lambda *args: calls.append(args) or pytest.fail("from scratch")
    )
    accountant.spend(event)
    assert calls == []


def test_refused_charge_leaves_the_kept_plds_unchanged():
    accountant, event = _band_accountant()
    kept = accountant._kept_plds
    while True:
        before = (dict(kept._states), dict(kept._values), kept._ok_through)
        charges = len(accountant.ledger.charges)
        try:
            accountant.spend(event)
        except BudgetExceededError:
            break
    assert (dict(kept._states), dict(kept._values), kept._ok_through) == before
    assert len(accountant.ledger.charges) == charges
    with pytest.raises(BudgetExceededError):  # and it still refuses, as from scratch
        accountant.spend(event)


def test_interrupted_pricing_leaves_the_kept_plds_unchanged(monkeypatch):
    accountant, event = _band_accountant()
    kept = accountant._kept_plds
    before = (dict(kept._states), dict(kept._values), kept._ok_through)
    charges = len(accountant.ledger.charges)

    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(incremental, "_fast_epsilon", interrupt)
    with pytest.raises(KeyboardInterrupt):
        accountant.spend(event)
    assert (dict(kept._states), dict(kept._values), kept._ok_through) == before
    assert len(accountant.ledger.charges) == charges
    monkeypatch.undo()
    accountant.spend(event)  # priced again, as if nothing had happened
    assert len(accountant.ledger.charges) == charges + 1


def test_pure_budget_never_prices_a_pld():
    accountant = Accountant(budget=PureDP(1.0), pld_discretization=_GRID)
    for _ in range(5):
        accountant.spend(events.Laplace(scale=5.0))
    assert not accountant._kept_plds._values
