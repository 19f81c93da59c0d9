"""Tests of fedpriv.audit.engine.neighbors: worst-case neighboring reward streams for tree counters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.audit.engine.neighbors import (
    NeighboringPair,
    stream_horizon,
    stream_pair,
    worst_case_reward_pair,
    worst_tree_position,
)
from fedpriv.privacy import NeighboringRelation, tree_depth
from fedpriv.privacy.accounting.tree import nodes_covering
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []

PROPERTY = settings(database=None, deadline=None, max_examples=40)


# ------------------------------------------------------------ worst_tree_position
def test_worst_tree_position_is_argmax_of_coverage_brute_force() -> None:
    for horizon in range(1, 201):
        coverage = [nodes_covering(tau, horizon).size for tau in range(1, horizon + 1)]
        t = worst_tree_position(horizon)
        assert t == int(np.argmax(coverage))  # the smallest maximiser, 0-based
        assert coverage[t] == max(coverage) == tree_depth(horizon)
        assert t == 0  # round 1 is in every level (Zhu et al., Algorithms 2-3)


@pytest.mark.parametrize("horizon", [16, 1024, 4096, 4097, 600_000])
def test_worst_tree_position_large_horizons(horizon: int) -> None:
    t = worst_tree_position(horizon)
    assert t == 0
    assert nodes_covering(t + 1, horizon).size == horizon.bit_length()


@pytest.mark.parametrize(("horizon", "error"), [(0, ValueError), (2.0, TypeError)])
def test_worst_tree_position_rejects_bad_horizon(horizon: object, error: type) -> None:
    with pytest.raises(error, match="`horizon`"):
        worst_tree_position(horizon)


# --------------------------------------------------------- worst_case_reward_pair
@pytest.mark.parametrize("horizon", [1, 2, 16, 17, 100])
def test_worst_case_pair_differs_at_one_position(horizon: int) -> None:
    pair = worst_case_reward_pair(horizon)
    assert isinstance(pair, NeighboringPair) and stream_horizon(pair) == horizon
    assert pair.dataset.shape == pair.dataset_prime.shape == pair.observed.shape == (horizon,)
    differ = np.flatnonzero(pair.dataset != pair.dataset_prime)
    assert differ.tolist() == [pair.t]
    assert pair.t == worst_tree_position(horizon)
    assert pair.dataset[pair.t] == 1.0
    assert pair.dataset_prime[pair.t] == 0.0
    assert np.all(np.delete(pair.dataset, pair.t) == 0.0)  # background = low
    assert pair.observed.all()
    assert pair.neighboring_relation is NeighboringRelation.REPLACE_ONE_REWARD


@PROPERTY
@given(
    horizon=st.integers(1, 300),
    low=st.floats(-10.0, 10.0, allow_nan=False),
    width=st.floats(1e-3, 10.0, allow_nan=False),
    background=st.one_of(st.none(), st.floats(-10.0, 10.0, allow_nan=False)),
)
def test_worst_case_pair_property(
    horizon: int, low: float, width: float, background: float | None
) -> None:
    high = low + width
    pair = worst_case_reward_pair(horizon, low=low, high=high, background=background)
    differ = np.flatnonzero(pair.dataset != pair.dataset_prime)
    assert differ.tolist() == [pair.t]
    assert {pair.dataset[differ[0]], pair.dataset_prime[differ[0]]} == {low, high}
    assert pair.dataset[differ[0]] == high  # D holds the high value
    fill = low if background is None else background
    rest = np.delete(np.arange(horizon), differ)
    assert np.all(pair.dataset[rest] == fill) and np.all(pair.dataset_prime[rest] == fill)
    assert nodes_covering(pair.t + 1, horizon).size == tree_depth(horizon)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"horizon": 0}, ValueError, "`horizon`"),
        ({"horizon": 4, "low": 1.0, "high": 1.0}, ValueError, "`low` must be < `high`"),
        ({"horizon": 4, "low": 2.0, "high": 1.0}, ValueError, "`low` must be < `high`"),
        ({"horizon": 4, "low": math.nan}, ValueError, "`low`"),
        ({"horizon": 4, "high": "1"}, TypeError, "`high`"),
        ({"horizon": 4, "background": math.nan}, ValueError, "`background`"),
    ],
)
def test_worst_case_pair_rejects_bad_input(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        worst_case_reward_pair(**kwargs)


# ------------------------------------------------------------------- stream_pair
def _streams(horizon: int, rounds: list[int]) -> tuple[np.ndarray, np.ndarray]:
    stream = np.zeros(horizon)
    stream_prime = stream.copy()
    for t in rounds:
        stream[t] = 1.0
    return stream, stream_prime


def test_stream_pair_accepts_one_difference() -> None:
    stream, stream_prime = _streams(8, [2])
    pair = stream_pair(stream, stream_prime, observed=np.ones(8, bool), t=2)
    assert stream_horizon(pair) == 8 and pair.t == 2
    assert pair.neighboring_relation is NeighboringRelation.REPLACE_ONE_REWARD


@pytest.mark.parametrize(
    ("rounds", "claimed"),
    [([], 0), ([1, 4], 1), ([1, 4], 4), ([3], 2), ([0], 1)],
    ids=[
        "zero-differences",
        "two-differences-a",
        "two-differences-b",
        "wrong-round",
        "one-based-round",
    ],
)
def test_stream_pair_rejects_other_than_one_difference(rounds: list[int], claimed: int) -> None:
    stream, stream_prime = _streams(8, rounds)
    with pytest.raises(ValueError, match="exactly at round `t`"):
        stream_pair(stream, stream_prime, observed=np.ones(8, bool), t=claimed)


def test_pair_location_is_zero_based_and_validated() -> None:
    assert NeighboringPair(1.0, 0.0, agent=0, t=0, arm=0).t == 0
    with pytest.raises(ValueError, match="`t`"):
        NeighboringPair(1.0, 0.0, t=-1)
    with pytest.raises(TypeError, match=r"`stream_pair`|reward-stream"):
        stream_horizon(NeighboringPair(1.0, 0.0))


@pytest.mark.parametrize(
    ("stream", "stream_prime"),
    [(np.zeros(4), np.zeros(5)), (np.zeros((2, 2)), np.ones((2, 2)))],
    ids=["length-mismatch", "two-dimensional"],
)
def test_stream_pair_rejects_bad_shapes(stream: np.ndarray, stream_prime: np.ndarray) -> None:
    with pytest.raises(ValueError, match="`stream` and `stream_prime`"):
        stream_pair(stream, stream_prime, observed=np.ones(4, bool), t=0)


def test_stream_pair_is_frozen() -> None:
    pair = worst_case_reward_pair(4)
    with pytest.raises((AttributeError, TypeError)):
        pair.t = 1
