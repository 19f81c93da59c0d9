"""Binary-tree (Fenwick) arithmetic for continual counters.

Node ``s`` (1-based round index) covers the rounds ``(s & (s - 1), s]``: the binary
representation of ``s`` with its lowest set bit cleared is the last round *before* the
node (Zhu et al. 2021, Algorithm 2, "flip the rightmost 1"). A prefix ``[1, t]`` is the
disjoint union of the nodes ``t, q(t), q(q(t)), ...`` with ``q(s) = s & (s - 1)``, one
per set bit of ``t``. A round ``tau`` sits in one node per level, so over a horizon
``T`` it is covered by at most ``floor(log2 T) + 1`` nodes, with equality at ``tau = 1``
(Chan, Shi & Song 2011, Sec. 3.4).

Released prefixes
-----------------
Node ``s`` is part of prefix ``t``'s decomposition exactly for ``s <= t < s + (s & -s)``,
so when only the prefixes ``1..R`` reach an output the nodes that do are ``1..R``: a
tree over ``R`` rounds. A round ``tau <= R`` then sits in ``tree_depth(R)`` of them at
most (:func:`released_tree_depth`). Zhu et al.'s Fed_UCB (Algorithm 4) acts on
``ϑ̃(t-1)`` (line 9) and sends ``ϑ̃(t-1)`` (line 19) for ``t = 1..T``, so its outputs
reach the prefixes ``1..T-1`` only: ``tree_depth(T - 1) = ⌈log2 T⌉`` nodes.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy.checks import check_int_at_least

__all__ = [
    "max_coverage",
    "node_interval",
    "nodes_covering",
    "prefix_nodes",
    "released_tree_depth",
    "tree_depth",
]


def tree_depth(horizon: int) -> int:
    """Number of levels ``floor(log2 horizon) + 1`` of a tree over ``horizon`` rounds.

    This is the largest number of released nodes that contain one round.

    Parameters
    ----------
    horizon : int
        Number of rounds T (leaves), >= 1.

    Returns
    -------
    int
        ``floor(log2 horizon) + 1``, >= 1.

    Raises
    ------
    ValueError
        If ``horizon < 1``.

    Examples
    --------
    >>> [tree_depth(t) for t in (1, 2, 15, 16, 17, 1024, 600000)]
    [1, 2, 4, 5, 5, 11, 20]
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    return horizon.bit_length()


def released_tree_depth(horizon: int, released_prefixes: int) -> int:
    """Most nodes holding one round among the nodes that reach the released prefixes.

    A counter of capacity ``horizon`` whose prefixes ``1..released_prefixes`` reach an
    output (module docstring) exposes a round in ``floor(log2 R) + 1`` nodes at most
    (``R = released_prefixes``), and ``0`` when no prefix is released.

    Parameters
    ----------
    horizon : int
        Capacity T of the counter (leaves), >= 1.
    released_prefixes : int
        Number R of prefixes ``1..R`` that reach an output, in ``[0, horizon]``.

    Returns
    -------
    int
        ``floor(log2 R) + 1``, or 0 when ``R = 0``.

    Raises
    ------
    ValueError
        If ``horizon < 1`` or ``released_prefixes`` is outside ``[0, horizon]``.

    Examples
    --------
    >>> [released_tree_depth(t, t - 1) for t in (16, 1024, 600000)]  # Fed_UCB's view
    [4, 10, 20]
    >>> [released_tree_depth(t, t) for t in (16, 1024, 600000)]  # every prefix
    [5, 11, 20]
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    released_prefixes = check_int_at_least("released_prefixes", released_prefixes, 0)
    if released_prefixes > horizon:
        raise ValueError(
            f"`released_prefixes` must be <= `horizon` = {horizon}, got {released_prefixes}."
        )
    return released_prefixes.bit_length()


def prefix_nodes(t: int) -> list[int]:
    """Nodes whose disjoint union is the prefix ``[1, t]`` (Algorithm 2 of Zhu et al.).

    Parameters
    ----------
    t : int
        Round, >= 0 (1-based; 0 is the empty prefix).

    Returns
    -------
    list of int
        Node indices, one per set bit of ``t``, from ``t`` down.

    Raises
    ------
    ValueError
        If ``t < 0``.

    Examples
    --------
    >>> prefix_nodes(13)
    [13, 12, 8]
    """
    t = check_int_at_least("t", t, 0)
    nodes = []
    while t:
        nodes.append(t)
        t &= t - 1
    return nodes


def node_interval(s: int) -> tuple[int, int]:
    """Rounds covered by node ``s`` as the closed interval ``(first, last)``.

    Parameters
    ----------
    s : int
        Node index, >= 1 (node ``s`` covers ``(s & (s - 1), s]``; Zhu et al., Alg. 2).

    Returns
    -------
    tuple of (int, int)
        First and last round covered, 1-based and inclusive.

    Raises
    ------
    ValueError
        If ``s < 1``.

    Examples
    --------
    >>> node_interval(12)
    (9, 12)
    """
    s = check_int_at_least("s", s, 1)
    return (s & (s - 1)) + 1, s


def nodes_covering(tau: int, horizon: int) -> np.ndarray:
    """Nodes ``s <= horizon`` whose interval contains round ``tau``, ascending.

    Parameters
    ----------
    tau : int
        Round, >= 1.
    horizon : int
        Number of rounds T, >= ``tau``.

    Returns
    -------
    ndarray of int64, shape (n_nodes,)
        At most ``tree_depth(horizon)`` node indices.

    Raises
    ------
    ValueError
        If ``tau < 1`` or ``horizon < tau``.

    Examples
    --------
    >>> nodes_covering(1, 16).tolist()
    [1, 2, 4, 8, 16]
    """
    tau = check_int_at_least("tau", tau, 1)
    horizon = check_int_at_least("horizon", horizon, tau)
    nodes = []
    s = tau
    while s <= horizon:
        nodes.append(s)
        s += s & -s  # the parent in the Fenwick update path
    return np.asarray(nodes, dtype=np.int64)


def max_coverage(horizon: int) -> int:
    """Brute-force ``max_tau |nodes_covering(tau, horizon)|`` (a check of ``tree_depth``).

    Parameters
    ----------
    horizon : int
        Number of rounds T, >= 1; O(T log T) time.

    Returns
    -------
    int
        Equal to ``tree_depth(horizon)``.

    Raises
    ------
    ValueError
        If ``horizon < 1``.
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    return max(len(nodes_covering(tau, horizon)) for tau in range(1, horizon + 1))
