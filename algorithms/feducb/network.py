"""Network side of decentralized FedUCB (Dubey & Pentland 2020, §4.2, Alg. 3, Thm. 2/4).

The power graph ``G_γ`` (edge iff ``1 <= d_G(u, v) <= γ``) and its clique cover:
agents exchange synchronisation data only inside a clique, and the regret bound
carries the clique-cover number ``χ̄(G_γ)`` (§4.2, Theorem 2 / Theorem 4). Also the table
of releases (per-peer storage is by release id) and the transcript of what every
agent saw, used by :mod:`fedpriv.algorithms.feducb.decentralized`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from fedpriv.algorithms.networks.graphs import check_connected
from fedpriv.privacy.checks import check_int_at_least

__all__ = [
    "MESSAGE_KINDS",
    "DecentralizedTranscript",
    "ReleaseStore",
    "build_transcript",
    "check_clique_cover",
    "clique_cover",
    "power_graph",
]

#: Message kinds of Alg. 3: ``Synchronize(i, g, t)`` and a release ``(Û, û)``.
MESSAGE_KINDS = ("request", "release")

_GREEDY = (
    "largest_first",
    "smallest_last",
    "connected_sequential_bfs",
    "connected_sequential_dfs",
    "saturation_largest_first",
    "independent_set",
)


def power_graph(graph: nx.Graph, gamma: int) -> nx.Graph:
    """The γ-th power G_γ: an edge ``(u, v)`` iff ``1 <= d_G(u, v) <= γ``.

    Parameters
    ----------
    graph : networkx.Graph
        Connected, simple, undirected.
    gamma : int
        γ >= 1.

    Returns
    -------
    networkx.Graph
        Same nodes.

    Raises
    ------
    ValueError
        If ``gamma < 1`` or the graph is not connected (:func:`check_connected`).
    TypeError
        If ``gamma`` is not an integer or ``graph`` not a simple undirected graph.

    Examples
    --------
    >>> sorted(power_graph(nx.path_graph(4), 2).edges())
    [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    """
    gamma = check_int_at_least("gamma", gamma, 1)
    check_connected(graph)
    return nx.Graph(nx.power(graph, gamma))


def clique_cover(graph_gamma: nx.Graph) -> tuple[tuple[int, ...], ...]:
    """A partition of the nodes into cliques of ``graph_gamma`` (few of them).

    Method: a clique cover of G is a proper colouring of its complement. networkx's
    greedy colourings of the complement are tried with every deterministic strategy
    (largest_first, smallest_last, connected_sequential_bfs/dfs, saturation_largest_first,
    independent_set) and the one with the fewest colours wins (ties: that order). The
    minimum, χ̄(G_γ) of Thm. 2, is NP-hard in general; the greedy count is an upper
    bound on it (exact on the path graph, ``⌈M/(γ+1)⌉``, and on complete graphs, 1).

    Parameters
    ----------
    graph_gamma : networkx.Graph
        G_γ (:func:`power_graph`).

    Returns
    -------
    tuple of tuple of int
        Cliques sorted by their smallest node, members ascending.

    Examples
    --------
    >>> clique_cover(power_graph(nx.path_graph(5), 1))
    ((0, 1), (2,), (3, 4))
    """
    complement = nx.complement(graph_gamma)
    best = None
    for strategy in _GREEDY:
        colours = nx.greedy_color(complement, strategy=strategy)
        groups: dict[int, list[int]] = {}
        for node, colour in colours.items():
            groups.setdefault(colour, []).append(int(node))
        cover = tuple(sorted(tuple(sorted(g)) for g in groups.values()))
        if best is None or len(cover) < len(best):
            best = cover
    return best


def check_clique_cover(graph_gamma: nx.Graph, cover: Any) -> np.ndarray:
    """Validate a clique cover of ``graph_gamma`` and return each node's clique label.

    Parameters
    ----------
    graph_gamma : networkx.Graph
        G_γ.
    cover : sequence of sequence of int
        The cliques.

    Returns
    -------
    ndarray of int64, shape (M,)

    Raises
    ------
    ValueError
        If the sets do not partition the nodes ``0..M-1`` or a set is not a clique.

    Examples
    --------
    >>> check_clique_cover(nx.path_graph(3), [(0, 1), (2,)]).tolist()
    [0, 0, 1]
    """
    n = graph_gamma.number_of_nodes()
    label = np.full(n, -1, dtype=np.int64)
    for c, members in enumerate(cover):
        for node in members:
            if not isinstance(node, (int, np.integer)) or not 0 <= int(node) < n:
                raise ValueError(f"`clique_cover` has node {node!r} outside 0..{n - 1}.")
            if label[node] >= 0:
                raise ValueError(f"`clique_cover` lists node {node} twice; it must partition.")
            label[node] = c
        for u in members:
            for v in members:
                if u < v and not graph_gamma.has_edge(u, v):
                    raise ValueError(
                        f"`clique_cover` set {tuple(members)} is not a clique of G_γ: "
                        f"d({u}, {v}) > γ."
                    )
    if np.any(label < 0):
        raise ValueError(f"`clique_cover` misses node(s) {np.flatnonzero(label < 0).tolist()}.")
    return label


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DecentralizedTranscript:
    """What every observer saw (recorded with ``record=True``).

    Attributes
    ----------
    messages : pandas.DataFrame
        One row per delivery: ``trial, kind ("request"|"release"), sender, subset,
        t_sent, receiver, t_received, hops, release_id (-1 for requests), accepted``
        (same clique and ``t_sent >= t_received − γ``). What agent ``receiver`` sees.
    releases : pandas.DataFrame
        One row per Privatizer release: ``release_id, trial, agent, subset, t, cause``
        (``"request"`` own trigger, ``"response"`` to a peer's request, ``"schedule"``
        the fixed schedule's clock).
    release_gram, release_vector : ndarray of float64, shapes (n, d, d) and (n, d)
        Released ``(Û, û)`` by id (row 0 is the ``ρ_min I`` placeholder of a peer not
        yet heard from; ``0`` without noise).
    requests : pandas.DataFrame
        ``trial, agent, subset, t`` of every ``Synchronize(i, g, t)`` broadcast.
    actions : ndarray of int16, shape (n_trials, n_agents, horizon)
    """

    messages: pd.DataFrame
    releases: pd.DataFrame
    release_gram: np.ndarray
    release_vector: np.ndarray
    requests: pd.DataFrame
    actions: np.ndarray


class ReleaseStore:
    """Growing table of releases ``id -> (Û, û)``; id 0 is the placeholder ``c I``, 0.

    Parameters
    ----------
    d : int
        Dimension of ``Û`` (d × d) and ``û`` (d).
    placeholder : float
        ``c``: the statistic of a peer not yet heard from (``ρ_min``, or 0 without noise).
    """

    def __init__(self, d: int, placeholder: float) -> None:
        self.gram = np.zeros((64, d, d))
        self.vec = np.zeros((64, d))
        self.gram[0] = placeholder * np.eye(d)
        self.n = 1

    def add(self, gram: np.ndarray, vec: np.ndarray) -> np.ndarray:
        """Append releases ``gram`` (n, d, d), ``vec`` (n, d); return their ids (n,).

        Parameters
        ----------
        gram : ndarray of float64, shape (n, d, d)
            Released Gram matrices.
        vec : ndarray of float64, shape (n, d)
            Released vectors.

        Returns
        -------
        ndarray of int64, shape (n,)
        """
        k = gram.shape[0]
        while self.n + k > self.gram.shape[0]:
            self.gram = np.concatenate([self.gram, np.zeros_like(self.gram)])
            self.vec = np.concatenate([self.vec, np.zeros_like(self.vec)])
        ids = np.arange(self.n, self.n + k)
        self.gram[ids], self.vec[ids] = gram, vec
        self.n += k
        return ids


def build_transcript(
    logs: dict[str, list], store: ReleaseStore, actions: np.ndarray
) -> DecentralizedTranscript:
    """The transcript from the run's integer logs (kinds 0/1 as in :data:`MESSAGE_KINDS`;
    release causes 0 response, 1 request, 2 schedule).

    Parameters
    ----------
    logs : dict of str to list
        The run's integer logs (``messages``, ``releases``, ...).
    store : ReleaseStore
        The released statistics.
    actions : ndarray of int64
        Actions of every (trial, agent, round).

    Returns
    -------
    DecentralizedTranscript
    """

    def frame(parts: list, columns: list[str]) -> pd.DataFrame:
        data = np.concatenate(parts) if parts else np.zeros((0, len(columns)), dtype=np.int64)
        return pd.DataFrame(data.astype(np.int64), columns=columns)

    messages = frame(
        logs["messages"],
        [
            "trial",
            "kind",
            "sender",
            "subset",
            "t_sent",
            "receiver",
            "t_received",
            "hops",
            "release_id",
            "accepted",
        ],
    )
    messages["kind"] = np.where(messages["kind"] == 0, "request", "release")
    messages["accepted"] = messages["accepted"].astype(bool)
    releases = frame(logs["releases"], ["release_id", "trial", "agent", "subset", "t", "cause"])
    releases["cause"] = np.select(
        [releases["cause"] == 1, releases["cause"] == 2], ["request", "schedule"], "response"
    )
    return DecentralizedTranscript(
        messages=messages,
        releases=releases,
        release_gram=store.gram[: store.n].copy(),
        release_vector=store.vec[: store.n].copy(),
        requests=frame(logs["requests"], ["trial", "agent", "subset", "t"]),
        actions=actions,
    )
