"""Tests for `fedpriv.privacy.accounting.tree`: Fenwick arithmetic of the binary-tree counter.

Every expected value is computed here from the definitions (node ``s`` covers the
``lowbit(s)`` rounds ending at ``s``), never by the functions under test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fedpriv.privacy.accounting.tree import (
    max_coverage,
    node_interval,
    nodes_covering,
    prefix_nodes,
    released_tree_depth,
    tree_depth,
)
from hypothesis import given
from hypothesis import strategies as st

# ---------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------


def _lowbit(s: int) -> int:
    """Largest power of two dividing ``s`` (by repeated halving, no bit tricks)."""
    power = 1
    while s % (2 * power) == 0:
        power *= 2
    return power


def _interval(s: int) -> tuple[int, int]:
    """``(first, last)`` of node ``s``: the ``lowbit(s)`` rounds ending at ``s``."""
    return s - _lowbit(s) + 1, s


def _levels(horizon: int) -> int:
    """``floor(log2 T) + 1``: the number of powers of two ``<= T``."""
    count, power = 0, 1
    while power <= horizon:
        count, power = count + 1, power * 2
    return count


def _covering_brute(tau: int, horizon: int) -> list[int]:
    """Every node ``s <= T`` whose interval contains ``tau``, by scanning all nodes."""
    return [s for s in range(1, horizon + 1) if _interval(s)[0] <= tau <= s]


# ---------------------------------------------------------------------------------
# tree_depth
# ---------------------------------------------------------------------------------


def test_tree_depth_equals_brute_force_coverage_up_to_300() -> None:
    # Coverage of every round over horizon T, built node by node: node T adds one
    # to each round of its interval.
    coverage = [0] * 302
    for horizon in range(1, 301):
        first, last = _interval(horizon)
        for tau in range(first, last + 1):
            coverage[tau] += 1
        worst = max(coverage)
        assert tree_depth(horizon) == worst == _levels(horizon), horizon
        assert max_coverage(horizon) == worst, horizon
        assert coverage[1] == worst  # the maximum is attained at round 1


@given(st.integers(min_value=301, max_value=2_500))
def test_tree_depth_equals_max_coverage_for_larger_horizons(horizon: int) -> None:
    assert tree_depth(horizon) == max_coverage(horizon) == _levels(horizon)


@given(st.integers(min_value=1, max_value=2**62))
def test_tree_depth_is_attained_at_round_one(horizon: int) -> None:
    # Round 1 lies in nodes 1, 2, 4, ..., i.e. in one node per power of two <= T.
    assert tree_depth(horizon) == _levels(horizon) == len(nodes_covering(1, horizon))


@pytest.mark.parametrize(
    ("horizon", "depth"),
    [(1, 1), (2, 2), (3, 2), (15, 4), (16, 5), (17, 5), (600_000, 20), (2**20, 21)],
)
def test_tree_depth_known_values(horizon: int, depth: int) -> None:
    assert tree_depth(horizon) == depth


def test_tree_depth_accepts_numpy_integers() -> None:
    assert tree_depth(np.int64(16)) == 5


def test_tree_depth_rejects_bad_horizons() -> None:
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        tree_depth(0)
    with pytest.raises(TypeError, match=r"`horizon` must be an integer"):
        tree_depth(16.0)
    with pytest.raises(TypeError, match=r"`horizon` must be an integer"):
        tree_depth(True)
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1"):
        max_coverage(0)


# ---------------------------------------------------------------------------------
# prefix_nodes and node_interval
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("t", range(257))
def test_prefix_nodes_partition_the_prefix(t: int) -> None:
    nodes = prefix_nodes(t)
    covered: list[int] = []
    for s in nodes:
        first, last = _interval(s)
        covered.extend(range(first, last + 1))
    assert sorted(covered) == list(range(1, t + 1))  # union is [1, t], no overlap
    assert len(covered) == len(set(covered))
    assert len(nodes) == t.bit_count()  # one node per set bit of t
    assert nodes == sorted(nodes, reverse=True)


@given(st.integers(min_value=1, max_value=2**40))
def test_prefix_nodes_chain_consecutive_intervals(t: int) -> None:
    nodes = prefix_nodes(t)
    assert nodes[0] == t
    # Consecutive nodes abut: each node starts right after the next one ends.
    for later, earlier in itertools.pairwise(nodes):
        assert node_interval(later)[0] == earlier + 1
    assert node_interval(nodes[-1])[0] == 1


def test_prefix_nodes_of_thirteen_matches_the_paper_example() -> None:
    # gossip.md §2.4: t = 13 gives the p-sums (13, 13), (9, 12), (1, 8).
    assert [node_interval(s) for s in prefix_nodes(13)] == [(13, 13), (9, 12), (1, 8)]
    assert [node_interval(s) for s in prefix_nodes(16)] == [(1, 16)]


def test_prefix_node_count_exceeds_ceil_log2_only_at_one() -> None:
    # gossip.md §2.4: "no more than ceil(log t)" p-sums fails only at t = 1.
    failures = [t for t in range(1, 4097) if len(prefix_nodes(t)) > (t - 1).bit_length()]
    assert failures == [1]


@given(st.integers(min_value=1, max_value=2**40))
def test_node_interval_matches_definition(s: int) -> None:
    assert node_interval(s) == _interval(s)


def test_node_and_prefix_validation() -> None:
    with pytest.raises(ValueError, match=r"`s` must be >= 1, got 0"):
        node_interval(0)
    with pytest.raises(ValueError, match=r"`t` must be >= 0, got -1"):
        prefix_nodes(-1)
    assert prefix_nodes(0) == []


# ---------------------------------------------------------------------------------
# nodes_covering
# ---------------------------------------------------------------------------------


def test_nodes_covering_matches_brute_force_scan() -> None:
    for horizon in range(1, 70):
        for tau in range(1, horizon + 1):
            got = nodes_covering(tau, horizon)
            assert got.dtype == np.int64
            assert got.tolist() == _covering_brute(tau, horizon), (tau, horizon)


@given(st.data())
def test_nodes_covering_is_consistent_with_node_interval(data: st.DataObject) -> None:
    horizon = data.draw(st.integers(min_value=1, max_value=2**30))
    tau = data.draw(st.integers(min_value=1, max_value=horizon))
    nodes = nodes_covering(tau, horizon).tolist()
    assert nodes == sorted(set(nodes)) and nodes[0] == tau
    assert all(node_interval(s)[0] <= tau <= s <= horizon for s in nodes)
    # One node per level: their lengths are distinct powers of two.
    lengths = [s - node_interval(s)[0] + 1 for s in nodes]
    assert len(set(lengths)) == len(lengths)
    assert len(nodes) <= tree_depth(horizon)
    # Completeness: at level l the only candidate is the multiple m of 2**l with
    # m - 2**l < tau <= m; it is a level-l node iff m / 2**l is odd.
    expected = []
    for level in range(horizon.bit_length()):
        m = -(-tau // 2**level) * 2**level
        if (m // 2**level) % 2 == 1 and m <= horizon:
            expected.append(m)
    assert nodes == sorted(expected)


def test_nodes_covering_validation() -> None:
    with pytest.raises(ValueError, match=r"`horizon` must be >= 5, got 4"):
        nodes_covering(5, 4)
    with pytest.raises(ValueError, match=r"`tau` must be >= 1, got 0"):
        nodes_covering(0, 4)


# ---------------------------------------------------------------------------------
# Released prefixes (Zhu et al. Algorithm 4: the view holds the prefixes 1..T-1)
# ---------------------------------------------------------------------------------


def _released_coverage(released: int) -> int:
    """Most nodes holding one round among the nodes of the prefixes ``1..released``.

    Brute force from the definitions: the nodes of prefix ``t`` are ``t``, then ``t``
    minus its lowbit, and so on (Algorithm 2); a node holds the rounds of
    :func:`_interval`.
    """
    reached = set()
    for t in range(1, released + 1):
        s = t
        while s:
            reached.add(s)
            s -= _lowbit(s)
    return max(
        (sum(1 for s in reached if _interval(s)[0] <= tau <= s) for tau in range(1, released + 1)),
        default=0,
    )


@pytest.mark.parametrize("horizon", range(1, 70))
def test_released_tree_depth_matches_brute_force(horizon: int) -> None:
    for released in range(0, horizon + 1):
        assert released_tree_depth(horizon, released) == _released_coverage(released)


def test_released_tree_depth_of_fed_ucb_view() -> None:
    # ⌈log2 T⌉ = floor(log2(T - 1)) + 1 for the view, floor(log2 T) + 1 for every prefix.
    assert [released_tree_depth(t, t - 1) for t in (16, 1024, 600_000)] == [4, 10, 20]
    assert [released_tree_depth(t, t) for t in (16, 1024, 600_000)] == [5, 11, 20]
    with pytest.raises(ValueError, match=r"`released_prefixes` must be <= `horizon` = 4"):
        released_tree_depth(4, 5)
    with pytest.raises(ValueError, match=r"`released_prefixes` must be >= 0, got -1"):
        released_tree_depth(4, -1)
