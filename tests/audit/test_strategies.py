"""Tests of fedpriv.audit.regression.strategies: neighboring reward tables for every relation."""

from __future__ import annotations

import fedpriv.audit as audit
import numpy as np
import pytest
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.audit.regression.strategies import (
    neighboring_pairs,
    neighboring_reward_tables,
    neighboring_streams,
)
from fedpriv.privacy.relations import NeighboringRelation as R
from hypothesis import given
from hypothesis import strategies as st

__all__: list[str] = []


def _changed_cells(n: NeighboringPair) -> np.ndarray:
    return np.argwhere(n.dataset[0] != n.dataset_prime[0])


@given(neighboring_reward_tables(R.REPLACE_ONE_REWARD))
def test_replace_one_reward_changes_exactly_one_entry(n: NeighboringPair) -> None:
    (rewards, present), (rewards_prime, present_prime) = n.dataset, n.dataset_prime
    cells = _changed_cells(n)
    assert cells.tolist() == [[n.agent, n.t, n.arm]]
    assert np.array_equal(present, present_prime)
    assert rewards.min() >= 0.0 and rewards_prime.max() <= 1.0


@given(neighboring_reward_tables(R.REPLACE_ONE_CONTEXT_REWARD, dim=3))
def test_context_reward_changes_one_round_of_one_agent(n: NeighboringPair) -> None:
    (rewards, _, contexts), (_, _, contexts_prime) = n.dataset, n.dataset_prime
    cells = _changed_cells(n)
    assert {(a, t) for a, t, _ in cells.tolist()} == {(n.agent, n.t)}
    assert n.arm is None
    assert len(cells) == rewards.shape[2]  # every arm's reward of that round
    assert contexts.shape == (*rewards.shape[:2], 3)
    other = np.ones(rewards.shape[:2], dtype=bool)
    other[n.agent, n.t] = False
    assert np.array_equal(contexts[other], contexts_prime[other])


@given(neighboring_reward_tables(R.USER_AT_ALL_AGENTS))
def test_user_at_all_agents_changes_the_round_at_every_agent(n: NeighboringPair) -> None:
    rewards = n.dataset[0]
    cells = _changed_cells(n)
    assert n.agent is None
    assert {t for _, t, _ in cells.tolist()} == {n.t}
    assert len(cells) == rewards.shape[0] * rewards.shape[2]


@given(neighboring_reward_tables(R.REPLACE_ONE))
def test_replace_one_changes_one_record(n: NeighboringPair) -> None:
    assert {(a, t) for a, t, _ in _changed_cells(n).tolist()} == {(n.agent, n.t)}


@given(neighboring_reward_tables(R.ADD_OR_REMOVE_ONE))
def test_add_or_remove_one_differs_in_presence_only(n: NeighboringPair) -> None:
    (rewards, present), (rewards_prime, present_prime) = n.dataset, n.dataset_prime
    assert np.array_equal(rewards, rewards_prime)
    assert np.argwhere(present != present_prime).tolist() == [[n.agent, n.t]]


@given(neighboring_reward_tables(R.REPLACE_ONE_REWARD, extreme=True, low=-1.0, high=2.0))
def test_extreme_values_take_the_range_ends(n: NeighboringPair) -> None:
    assert n.dataset_prime[0][n.agent, n.t, n.arm] in (-1.0, 2.0)


@given(st.sampled_from(list(R)).flatmap(neighboring_pairs))
def test_pairs_are_audit_pairs_with_the_relation(pair: audit.NeighboringPair) -> None:
    assert isinstance(pair, audit.NeighboringPair) and pair.neighboring_relation in R
    assert pair.neighboring_relation.value in pair.description


@given(neighboring_streams(max_horizon=32))
def test_streams_differ_in_one_observed_round(pair: NeighboringPair) -> None:
    assert np.flatnonzero(pair.dataset != pair.dataset_prime).tolist() == [pair.t]
    assert pair.observed[pair.t]


@given(st.data())
def test_bad_bounds_raise(data: st.DataObject) -> None:
    with pytest.raises(ValueError, match="`low` must be < `high`"):
        data.draw(neighboring_reward_tables(low=1.0, high=0.0))
