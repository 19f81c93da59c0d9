"""The accountant's public surface (issue 35): a small dp-accounting-shaped core, the rest in
objects reachable from it, a configuration nobody can reassign, and ``dir(fedpriv)``
listing only public names."""

from __future__ import annotations

import dp_accounting
import fedpriv
import numpy as np
import pandas as pd
import pytest
from fedpriv.privacy import Accountant, ApproxDP, PureDP, events
from fedpriv.privacy.ledger.accountant import StoreLink
from fedpriv.privacy.ledger.budget import Odometer
from fedpriv.privacy.ledger.ledger import Ledger
from fedpriv.privacy.ledger.pricing import Brackets, Routes
from hypothesis import given, settings
from hypothesis import strategies as st

#: Issue 35's ceiling on the accountant's public names.
MOST_PUBLIC_NAMES = 15


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_accountant_has_at_most_fifteen_public_names() -> None:
    names = _public(Accountant)
    assert len(names) <= MOST_PUBLIC_NAMES, sorted(names)


def test_an_instance_has_no_public_name_its_class_does_not_document() -> None:
    # The configuration lives in the objects it concerns, read-only: no public
    # instance attribute can be reassigned behind the class's back.
    accountant = Accountant(disjoint=("agent",), sequential=("phase",), budget=PureDP(1.0))
    assert _public(accountant) == _public(Accountant)


def test_dp_accountings_privacy_accountant_names_are_all_here() -> None:
    # dp-accounting's PrivacyAccountant: compose, get_epsilon, get_delta, supports,
    # neighboring_relation and ledger (CompositionErrorDetails is its nested type).
    theirs = _public(dp_accounting.PrivacyAccountant) - {"CompositionErrorDetails"}
    assert theirs <= _public(Accountant)


def test_the_grouped_objects_are_reachable_and_typed() -> None:
    accountant = Accountant(disjoint=("agent",))
    assert isinstance(accountant.ledger, Ledger)
    assert isinstance(accountant.routes, Routes)
    assert isinstance(accountant.brackets, Brackets)
    assert isinstance(accountant.odometer, Odometer)
    assert isinstance(accountant.store, StoreLink)
    for part in ("ledger", "routes", "brackets", "odometer", "store"):
        assert getattr(Accountant, part).__doc__, part


@pytest.mark.parametrize(
    ("part", "name"),
    [
        (None, "neighboring_relation"),
        (None, "ledger"),
        (None, "routes"),
        (None, "odometer"),
        ("ledger", "disjoint"),
        ("ledger", "sequential"),
        ("ledger", "levels"),
        ("ledger", "parallel_levels"),
        ("ledger", "keep_draw_rows"),
        ("odometer", "budget"),
        ("routes", "pld_discretization"),
        ("store", "last_receipt"),
    ],
)
def test_the_configuration_is_read_only(part: str | None, name: str) -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    owner = accountant if part is None else getattr(accountant, part)
    before = getattr(owner, name)
    with pytest.raises(AttributeError):
        setattr(owner, name, "add_or_remove_one")
    assert getattr(owner, name) == before


def test_the_neighboring_relation_cannot_be_reassigned_and_still_governs_the_charges() -> None:
    accountant = Accountant(neighboring_relation="user_at_all_agents", disjoint=("agent",))
    with pytest.raises(AttributeError):
        accountant.neighboring_relation = "replace_one_reward"  # type: ignore[misc]
    for agent in range(10):
        accountant.spend(events.Laplace(scale=10.0), key={"agent": agent})
    # One user at every agent: agents compose sequentially (FedUCB footnote 4).
    assert accountant.neighboring_relation.value == "user_at_all_agents"
    assert accountant.get_epsilon(0.0) == pytest.approx(1.0, rel=1e-12)


def test_ledger_rows_cannot_be_written_through() -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": [0, 1, 2]})
    ((event, keys),) = list(accountant.ledger.rows())
    assert event == events.Laplace(scale=2.0)
    with pytest.raises(ValueError, match="read-only"):
        keys["agent"][0] = 1  # would merge two cells behind the accountant's back
    assert accountant.get_epsilon(0.0) == 0.5


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.integers(0, 4), min_size=1, max_size=12),
    scale=st.sampled_from([0.5, 1.0, 3.0]),
    delta=st.sampled_from([0.0, 1e-6]),
)
def test_one_spend_of_many_keys_is_many_spends_of_one(labels, scale, delta) -> None:
    # spend(key=arrays) charges many cells at once: the same cells, charges and every route.
    batched = Accountant(disjoint=("agent",))
    single = Accountant(disjoint=("agent",))
    batched.spend(events.Laplace(scale=scale), key={"agent": np.asarray(labels)})
    for label in labels:
        single.spend(events.Laplace(scale=scale), key={"agent": label})
    assert batched.routes.epsilons(delta) == single.routes.epsilons(delta)
    assert batched.brackets.epsilon(delta) == single.brackets.epsilon(delta)
    pd.testing.assert_frame_equal(batched.ledger.charges, single.ledger.charges)


def test_the_odometer_reads_the_budget_it_enforces() -> None:
    accountant = Accountant(disjoint=("agent",), budget=ApproxDP(1.0, 1e-6))
    assert accountant.odometer.budget == ApproxDP(1.0, 1e-6)
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0})
    spent = accountant.odometer.spent()
    assert spent == accountant.get_epsilon(1e-6)
    assert accountant.odometer.remaining() == pytest.approx(1.0 - spent)
    assert not accountant.odometer.would_exceed(events.Laplace(scale=2.0), key={"agent": 0})
    assert accountant.odometer.would_exceed(events.Laplace(scale=0.5), key={"agent": 0})
    assert accountant.get_epsilon(1e-6) == spent  # pricing a charge charged nothing


def test_dir_fedpriv_lists_only_the_public_names() -> None:
    fedpriv.Accountant  # noqa: B018  (a loaded name must not add helpers to dir)
    assert dir(fedpriv) == sorted(fedpriv.__all__)
    for private in ("Any", "importlib", "annotations", "_EXPORTS", "_version"):
        assert private not in dir(fedpriv)


def test_a_postgresql_url_is_opened_by_open_store_not_by_the_sqlite_store(tmp_path) -> None:
    # The backend is chosen above both store modules (no import cycle between them).
    from fedpriv.privacy.errors import StorePathError
    from fedpriv.privacy.ledger.backends import is_url, open_store
    from fedpriv.privacy.ledger.store import LedgerStore

    assert is_url("postgresql://user@host/db") and not is_url(tmp_path / "ledger.sqlite")
    with pytest.raises(StorePathError, match="open_store"):
        LedgerStore.open("postgresql://user@host/db")
    with pytest.raises(ValueError, match="store_synchronous"):
        open_store("postgresql://user@host/db", synchronous="off")
    accountant = Accountant(store=tmp_path / "ledger.sqlite")
    accountant.spend(events.Laplace(scale=2.0))
    accountant.store.close()
    reopened = open_store(tmp_path / "ledger.sqlite")
    assert reopened.head().charges == 1
    reopened.close()


@settings(max_examples=30, deadline=None)
@given(
    agents=st.lists(st.integers(0, 3), min_size=1, max_size=8), scale=st.sampled_from([0.5, 2.0])
)
def test_draw_rows_are_the_same_whether_given_as_arrays_or_as_lists(agents, scale) -> None:
    # record_draws takes a mechanism's aligned int64 arrays as they are and normalises
    # anything else; both give one row per draw with the same values.
    aligned, loose = (Accountant(disjoint=("agent",)) for _ in range(2))
    n = len(agents)
    aligned.ledger.record_draws(
        keys={"agent": np.asarray(agents, dtype=np.int64)},
        node=np.arange(n, dtype=np.int64),
        level=np.zeros(n, dtype=np.int64),
        scale=scale,
        l1_sensitivity=1.0,
    )
    loose.ledger.record_draws(
        keys={"agent": list(agents)}, node=list(range(n)), level=0, scale=scale, l1_sensitivity=1.0
    )
    pd.testing.assert_frame_equal(aligned.ledger.draws, loose.ledger.draws)
    assert aligned.ledger.n_draws == loose.ledger.n_draws == n


def test_aligned_draw_rows_are_still_checked_against_the_levels() -> None:
    accountant = Accountant(disjoint=("agent",))
    node = np.arange(2, dtype=np.int64)
    with pytest.raises(ValueError, match="missing the disjoint level"):
        accountant.ledger.record_draws(
            keys={}, node=node, level=node, scale=1.0, l1_sensitivity=1.0
        )
    with pytest.raises(ValueError, match="not declared"):
        accountant.ledger.record_draws(
            keys={"agent": node, "arm": node}, node=node, level=node, scale=1.0, l1_sensitivity=1.0
        )
    assert accountant.ledger.n_draws == 0
