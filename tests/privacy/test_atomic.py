"""Issue 20: a charge is atomic on every exception, KeyboardInterrupt included.

`spend` (one key or key arrays) and `odometer.would_exceed` price a candidate charge
before it touches the ledger, so whatever raises (a refused budget, an arithmetic error while pricing,
an interrupt, a bad key label) leaves charges, every route and the store as before.
"""

from __future__ import annotations

import pandas as pd
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.guarantees import ApproxDP, PureDP
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.ledger import pricing as pricing_module
from fedpriv.privacy.ledger.running import RunningCells
from hypothesis import given
from hypothesis import strategies as st

from tests.privacy._support import assert_unchanged, snapshot

#: The hostile events of issue 20. Each is either refused at construction (a
#: ValueError naming the parameter) or, if built, charged atomically.
HOSTILE_EVENTS = [
    lambda: events.Gaussian(noise_stddev=1e308),
    lambda: events.Laplace(scale=1.0, l1_sensitivity=2**70),
    lambda: events.RandomizedResponse(epsilon=1e308),
    lambda: events.Gaussian(noise_stddev=5e-324),
]


def _budgeted(**options) -> Accountant:
    accountant = Accountant(budget=ApproxDP(1.0, 1e-5), disjoint=("agent",), **options)
    accountant.spend(events.Laplace(scale=4.0), key={"agent": 0})
    return accountant


@pytest.mark.parametrize("make_event", HOSTILE_EVENTS)
@pytest.mark.parametrize("call", ["spend", "spend_several", "would_exceed"])
def test_hostile_event_charges_all_or_nothing(make_event, call):
    try:
        event = make_event()
    except ValueError:
        return  # refused at construction: nothing to charge
    accountant = _budgeted()
    before = snapshot(accountant)
    try:
        if call == "spend":
            accountant.spend(event, key={"agent": 1})
        elif call == "spend_several":
            accountant.spend(event, key={"agent": [1, 2]})
        else:
            accountant.odometer.would_exceed(event, key={"agent": 1})
    except (BudgetExceededError, ValueError):
        assert_unchanged(accountant, before)
        return
    if call == "would_exceed":
        assert_unchanged(accountant, before)
    accountant.routes.epsilons(1e-5)  # accepted: every query answers
    accountant.brackets.lower_bound(1e-5)


@pytest.mark.parametrize(
    "exception", [KeyboardInterrupt, MemoryError, RecursionError, ZeroDivisionError, OverflowError]
)
@pytest.mark.filterwarnings("ignore:pricing an extreme cell overflowed")
@pytest.mark.parametrize("call", ["spend", "spend_several", "would_exceed"])
def test_exception_during_budget_check_changes_nothing(monkeypatch, exception, call):
    accountant = _budgeted()
    before = snapshot(accountant)

    def broken(*args, **kwargs):
        raise exception("injected while pricing the charge")

    monkeypatch.setattr(pricing_module, "compose_routes", broken)
    # An arithmetic error prices the cell at ε = inf (sound): the charge is refused.
    expected = BudgetExceededError if issubclass(exception, ArithmeticError) else exception
    with pytest.raises(expected):
        if call == "spend":
            accountant.spend(events.Laplace(scale=0.01), key={"agent": 1})
        elif call == "spend_several":
            accountant.spend(events.Laplace(scale=0.01), key={"agent": [1, 2]})
        elif accountant.odometer.would_exceed(events.Laplace(scale=0.01), key={"agent": 1}):
            raise BudgetExceededError("would_exceed said True")
    monkeypatch.undo()
    assert_unchanged(accountant, before)
    assert accountant.get_epsilon(0.0) == pytest.approx(0.25)


def test_interrupt_during_store_write_changes_nothing(tmp_path, monkeypatch):
    store = tmp_path / "ledger.sqlite"
    accountant = Accountant(budget=PureDP(1.0), store=store)
    accountant.spend(events.Laplace(scale=4.0))
    before = snapshot(accountant)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(accountant.store.backend, "insert_charge", interrupted)
    with pytest.raises(KeyboardInterrupt):
        accountant.spend(events.Laplace(scale=4.0))
    monkeypatch.undo()
    assert_unchanged(accountant, before)
    accountant.store.close()
    reopened = Accountant.open(store)
    assert len(reopened.ledger.charges) == 1
    reopened.store.close()


@pytest.mark.parametrize(
    ("keys", "kind"),
    [
        ({"agent": {"x": 1}}, "dict"),
        ({"agent": {0, 1}}, "set"),
        ({"agent": frozenset({0})}, "frozenset"),
        ({"agent": [{"x": 1}]}, "dict"),
        ({"agent": [[0, 1], [2, 3]]}, "shape"),
        ({"agent": [object()]}, "object"),
    ],
)
def test_unhashable_or_nested_key_labels_are_refused(keys, kind):
    accountant = _budgeted()
    before = snapshot(accountant)
    with pytest.raises((TypeError, ValueError), match="key level 'agent'"):
        accountant.spend(events.Laplace(scale=4.0), key=keys)
    with pytest.raises((TypeError, ValueError), match="key level 'agent'"):
        accountant.odometer.would_exceed(events.Laplace(scale=4.0), key=keys)
    assert_unchanged(accountant, before)
    accountant.spend(events.Laplace(scale=4.0), key={"agent": 1})  # still usable
    assert accountant.get_epsilon(0.0) == pytest.approx(0.25)


def test_refused_budget_keeps_no_charge_and_no_event():
    accountant = Accountant(budget=PureDP(1.0))
    accountant.spend(events.Laplace(scale=2.0))
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=0.01))
    assert_unchanged(accountant, before)
    assert accountant.ledger.cells() == [[(events.Laplace(scale=2.0), 1)]]
    assert accountant.odometer.spent() == 0.5


# ---------------------------------------------------------------------- property
_VALID = [events.Laplace(scale=s) for s in (2.0, 4.0, 8.0)]
_HOSTILE_KEYS = [{"agent": {"x": 1}}, {"agent": {0, 1}}, {"agent": [[0], [1]]}, {"arm": 0}, {}]
_ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("spend"), st.sampled_from(_VALID), st.integers(0, 3)),
        st.tuples(
            st.just("spend_several"),
            st.sampled_from(_VALID),
            st.lists(st.integers(0, 3), min_size=1, max_size=3),
        ),
        st.tuples(st.just("would_exceed"), st.sampled_from(_VALID), st.integers(0, 3)),
        st.tuples(st.just("bad_key"), st.sampled_from(_VALID), st.sampled_from(_HOSTILE_KEYS)),
        st.tuples(st.just("interrupt"), st.sampled_from(_VALID), st.integers(0, 3)),
    ),
    max_size=12,
)


@given(_ACTIONS)
def test_any_sequence_of_spends_keeps_exactly_the_accepted_charges(actions):
    """Property: after any mix of valid, over-budget, malformed and interrupted
    charges, the ledger equals the ledger of the accepted charges replayed alone."""
    accountant = Accountant(budget=PureDP(1.0), disjoint=("agent",))
    replay = Accountant(disjoint=("agent",))
    for kind, event, key in actions:
        before = snapshot(accountant)
        accepted = False
        if kind == "interrupt":
            with pytest.MonkeyPatch.context() as patch:

                def interrupted(*args, **kwargs):
                    raise KeyboardInterrupt

                # while pricing: exactly, or on the running cells (issue 23)
                patch.setattr(pricing_module, "compose_routes", interrupted)
                patch.setattr(RunningCells, "price", interrupted)
                with pytest.raises(KeyboardInterrupt):
                    accountant.spend(event, key={"agent": key})
        elif kind == "would_exceed":
            accountant.odometer.would_exceed(event, key={"agent": key})
        elif kind == "bad_key":
            with pytest.raises((TypeError, ValueError)):
                accountant.spend(event, key=key)
        else:
            keys = {"agent": key}
            try:
                accountant.spend(event, key=keys)
                accepted = True
            except BudgetExceededError:
                pass
            if accepted:
                replay.spend(event, key=keys)
        if not accepted:
            assert_unchanged(accountant, before)
    pd.testing.assert_frame_equal(accountant.ledger.charges, replay.ledger.charges)
    assert accountant.routes.epsilons(0.0) == replay.routes.epsilons(0.0)
    assert accountant.get_epsilon(0.0) <= 1.0 * (1 + 1e-12)
