"""Tests for `privacy.relations`: parsing neighboring relations."""

from __future__ import annotations

import pytest

from privacy import Accountant
from privacy.relations import NeighboringRelation, parse_relation


@pytest.mark.parametrize("relation", list(NeighboringRelation))
def test_parse_relation_round_trips(relation: NeighboringRelation) -> None:
    assert parse_relation(relation) is relation
    assert parse_relation(relation.value) is relation
    assert parse_relation(relation.value.upper()) is relation


@pytest.mark.parametrize("bad", ["replace-one", "", "user", 3])
def test_parse_relation_rejects_unknown_names(bad: object) -> None:
    with pytest.raises(
        ValueError, match=r"`relation` must be one of .*replace_one_reward"
    ):
        parse_relation(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "relation",
    [NeighboringRelation.USER_AT_ALL_AGENTS, "replace_one_context_reward"],
)
def test_accountant_rejects_relations_it_cannot_account_for(
    relation: NeighboringRelation | str,
) -> None:
    with pytest.raises(
        ValueError, match=r"`relation` must be one of .* for this accountant"
    ):
        Accountant(relation=relation)


def test_accountant_default_relation_is_the_papers() -> None:
    # Zhu et al. 2021, Definition 1: adjacent streams differ at one t.
    assert Accountant().relation is NeighboringRelation.REPLACE_ONE_REWARD
    assert Accountant(relation="add_or_remove_one").relation is (
        NeighboringRelation.ADD_OR_REMOVE_ONE
    )
