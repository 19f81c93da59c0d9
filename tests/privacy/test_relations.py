"""Tests for `fedpriv.privacy.relations`: parsing neighboring relations."""

from __future__ import annotations

import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.relations import NeighboringRelation, parse_relation


@pytest.mark.parametrize("relation", list(NeighboringRelation))
def test_parse_relation_round_trips(relation: NeighboringRelation) -> None:
    assert parse_relation(relation) is relation
    assert parse_relation(relation.value) is relation
    assert parse_relation(relation.value.upper()) is relation


@pytest.mark.parametrize("bad", ["replace-one", "", "user", 3])
def test_parse_relation_rejects_unknown_names(bad: object) -> None:
    with pytest.raises(
        ValueError, match=r"`neighboring_relation` must be one of .*replace_one_reward"
    ):
        parse_relation(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("relation", list(NeighboringRelation))
def test_accountant_accepts_every_relation(relation: NeighboringRelation) -> None:
    assert Accountant(neighboring_relation=relation.value).neighboring_relation is relation


def test_user_at_all_agents_composes_agents_sequentially() -> None:
    # FedUCB footnote 4: one user present at every agent. Ten agents each release a
    # Laplace(epsilon = 0.1) statistic: disjoint agents give 0.1 (parallel), a shared
    # user gives basic 1.0 at delta = 0 and the PLD value 0.99898 at delta = 1e-6
    # (anchors_accounting.md §1.5 (a)).
    disjoint = Accountant(disjoint=("agent",))
    shared = Accountant(neighboring_relation="user_at_all_agents", disjoint=("agent",))
    for agent in range(10):
        disjoint.spend(events.Laplace(scale=10.0), key={"agent": agent})
        shared.spend(events.Laplace(scale=10.0), key={"agent": agent})
    assert disjoint.get_epsilon(0.0) == pytest.approx(0.1, rel=1e-12)
    assert shared.get_epsilon(0.0) == pytest.approx(1.0, rel=1e-12)
    assert shared.get_epsilon(1e-6) == pytest.approx(0.998978, abs=1e-5)
    assert shared.get_epsilon(1e-6) < 1.0


def test_accountant_default_relation_is_the_papers() -> None:
    # Zhu et al. 2021, Definition 1: adjacent streams differ at one t.
    assert Accountant().neighboring_relation is NeighboringRelation.REPLACE_ONE_REWARD
    assert Accountant(neighboring_relation="add_or_remove_one").neighboring_relation is (
        NeighboringRelation.ADD_OR_REMOVE_ONE
    )
