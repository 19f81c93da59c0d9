"""γ-hop message flooding with delays (Dubey & Pentland, AAMAS 2020, §2 "γ protocol").

Every agent creates one message per round and broadcasts it to its neighbors; an agent
that receives a message it has not seen before delivers it to its algorithm and, while
the message has life left, forwards it to all its neighbors. A message lives ``γ`` hops
(AAMAS 2020, §2 "Communication Protocol"). Hence (fedpriv's derivation):

* a message created by ``u`` at round ``t0`` reaches exactly the agents ``v`` with
  ``1 <= d(u, v) <= γ`` (``d`` is the shortest-path distance), once each;
* it is first usable in ``v``'s decision at round ``t0 + d(u, v)`` (§2: "they will
  receive messages from each other at a delay of d(v, v') trials");
* it is sent over ``Σ_{w : d(u, w) <= γ - 1} deg(w)`` links: every agent within
  ``γ - 1`` hops forwards it once to every neighbor (duplicates are discarded on
  receipt, not avoided on sending).

:func:`flood_messages` is the literal message-passing protocol (reference, one Python
object per message); :class:`FloodingSchedule` is its closed form, which the
vectorized algorithms use; the tests check that the two agree. :class:`DelayLine`
delivers additive updates of message contents after their per-pair delay, vectorized
over ``(n_trials, n_agents, n_arms)``.

The authors' companion MP-UCB code never decrements a message's life (public
code, abhimanyudubey/bandits, mp_ucb.py); here the life decreases by one per hop.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pandas as pd
from fedpriv.algorithms.networks.graphs import check_connected, graph_distances
from fedpriv.privacy.checks import check_int_at_least

__all__ = ["DelayLine", "FloodingSchedule", "flood_messages", "make_schedule"]


def _check_gamma(gamma: object) -> int:
    """Return ``gamma`` as an int >= 1 (γ = 0 is no communication: use UCB1)."""
    return check_int_at_least("gamma", gamma, 1)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FloodingSchedule:
    """Who receives whose messages, after how many rounds, at what link cost.

    Attributes
    ----------
    gamma : int
        Message life γ (hops), >= 1.
    distances : ndarray of int64, shape (n_agents, n_agents)
        Shortest-path distances ``d(u, v)``.
    reach : ndarray of bool, shape (n_agents, n_agents)
        ``reach[u, v]``: a message of ``u`` reaches ``v`` (``1 <= d(u, v) <= γ``).
    max_delay : int
        Largest delay of a delivered message, ``min(γ, diameter)``.
    transmissions : ndarray of int64, shape (n_agents,)
        Link transmissions of one message created by ``u`` (duplicates included).
    deliveries : ndarray of int64, shape (n_agents,)
        Agents that receive one message of ``u`` (``|N_γ(u)| - 1``).
    senders, receivers, delays : ndarray of int64, shape (n_pairs,)
        The pairs of ``reach`` in row-major order and their delays ``d(u, v)``.
    """

    gamma: int
    distances: np.ndarray
    reach: np.ndarray
    max_delay: int
    transmissions: np.ndarray
    deliveries: np.ndarray
    senders: np.ndarray
    receivers: np.ndarray
    delays: np.ndarray

    @property
    def n_agents(self) -> int:
        """Number of agents M."""
        return int(self.distances.shape[0])

    def delivery_table(self, sender: int, created_round: int) -> pd.DataFrame:
        """Every delivery of the message of ``sender`` created at ``created_round``.

        Parameters
        ----------
        sender : int
            Agent index.
        created_round : int
            Round the message was created.

        Returns
        -------
        pandas.DataFrame
            Columns ``sender, created_round, receiver, delivered_round, hops``; one
            row per receiver, sorted by receiver.
        """
        mask = self.senders == sender
        receivers = self.receivers[mask]
        delays = self.delays[mask]
        return pd.DataFrame(
            {
                "sender": np.full(receivers.size, sender, dtype=np.int64),
                "created_round": np.full(receivers.size, created_round, dtype=np.int64),
                "receiver": receivers,
                "delivered_round": created_round + delays,
                "hops": delays,
            }
        )


def make_schedule(graph: nx.Graph, gamma: int) -> FloodingSchedule:
    """The closed-form flooding schedule of ``graph`` with message life ``gamma``.

    Parameters
    ----------
    graph : networkx.Graph
        Connected, undirected, nodes ``0..n_agents-1`` (see
        :func:`fedpriv.algorithms.networks.graphs.check_connected`).
    gamma : int
        Message life γ in hops, >= 1.

    Returns
    -------
    FloodingSchedule

    Raises
    ------
    ValueError
        If the graph is disconnected or badly labelled, or ``gamma < 1``.
    TypeError
        If ``gamma`` is not an integer or ``graph`` not a simple undirected graph.

    Examples
    --------
    >>> schedule = make_schedule(nx.path_graph(4), gamma=2)
    >>> schedule.reach[0].astype(int).tolist(), schedule.transmissions.tolist()
    ([0, 1, 1, 0], [3, 5, 5, 3])
    """
    gamma = _check_gamma(gamma)
    check_connected(graph)
    distances = graph_distances(graph)
    reach = (distances >= 1) & (distances <= gamma)
    degrees = np.array([graph.degree(v) for v in range(distances.shape[0])], dtype=np.int64)
    forwarders = distances <= gamma - 1  # forwarders[u, w]: w forwards u's message
    senders, receivers = np.nonzero(reach)
    return FloodingSchedule(
        gamma=gamma,
        distances=distances,
        reach=reach,
        max_delay=int(np.where(reach, distances, 0).max()),
        transmissions=(forwarders * degrees[None, :]).sum(axis=1).astype(np.int64),
        deliveries=reach.sum(axis=1).astype(np.int64),
        senders=senders.astype(np.int64),
        receivers=receivers.astype(np.int64),
        delays=distances[senders, receivers].astype(np.int64),
    )


def flood_messages(
    graph: nx.Graph, gamma: int, messages: list[tuple[int, int]]
) -> tuple[pd.DataFrame, int]:
    """Run the literal flooding protocol (AAMAS 2020, §2 "Communication Protocol") on messages.

    Each message ``(sender, created_round)`` is created at the end of round
    ``created_round`` with life ``gamma``. In every communication phase each agent
    sends every message in its outbox to every neighbor; a receiver that has not seen
    the message id delivers it (usable from the next round) and, if its remaining
    life after this hop is >= 1, puts it in its outbox for the next phase; seen ids
    are discarded. This is the slow reference of :func:`make_schedule`.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph.
    gamma : int
        Message life γ, >= 1.
    messages : list of (int, int)
        ``(sender, created_round)`` pairs, distinct.

    Returns
    -------
    deliveries : pandas.DataFrame
        One row per first receipt: ``sender, created_round, receiver,
        delivered_round, hops`` (``delivered_round`` is the first round whose
        decision can use the message).
    transmissions : int
        Link transmissions, duplicates included.

    Raises
    ------
    ValueError, TypeError
        As :func:`make_schedule`, or if a message id repeats.

    Examples
    --------
    >>> table, sent = flood_messages(nx.path_graph(3), 1, [(0, 5)])
    >>> table[["receiver", "delivered_round"]].values.tolist(), sent
    ([[1, 6]], 1)
    """
    gamma = _check_gamma(gamma)
    check_connected(graph)
    if len(set(messages)) != len(messages):
        raise ValueError("`messages` must hold distinct (sender, created_round) ids.")
    rows: list[tuple[int, int, int, int, int]] = []
    transmissions = 0
    for sender, created in messages:
        seen = {sender}
        outbox = {sender: gamma}  # agent -> remaining life of its copy
        phase = 0
        while outbox:
            phase += 1
            inbox: dict[int, int] = {}
            for agent, life in outbox.items():
                for neighbor in graph.neighbors(agent):
                    transmissions += 1
                    if neighbor not in seen and neighbor not in inbox:
                        inbox[neighbor] = life - 1
            outbox = {}
            for receiver, life in sorted(inbox.items()):
                seen.add(receiver)
                rows.append((sender, created, receiver, created + phase, phase))
                if life >= 1:
                    outbox[receiver] = life
    table = pd.DataFrame(
        rows, columns=["sender", "created_round", "receiver", "delivered_round", "hops"]
    ).astype(np.int64)
    return table, transmissions


class DelayLine:
    """Additive message updates delivered after the per-pair delay ``d(u, v)``.

    Receivers keep, per sender, the content of the latest message received; all that
    the algorithms need is the sum over senders of that content, per ``(trial,
    receiver, arm)``. Because messages of one sender reach one receiver in creation
    order (all with the same delay), that sum changes only when a sender's content
    changes: :meth:`send` schedules the change ``Δ`` of sender ``u``'s content at
    round ``t0`` to be added at every receiver ``v`` at round ``t0 + d(u, v)``;
    :meth:`deliver` returns everything due at round ``t`` (sparse).

    Parameters
    ----------
    schedule : FloodingSchedule
    shape : tuple of int
        ``(n_trials, n_agents, n_arms)``; cells are flattened in C order.
    n_fields : int
        Number of additive fields per cell (e.g. 2: weighted mean sum and weight).
    """

    def __init__(
        self, schedule: FloodingSchedule, shape: tuple[int, int, int], n_fields: int
    ) -> None:
        self.schedule = schedule
        self.shape = tuple(int(s) for s in shape)
        self.n_slots = schedule.max_delay + 1
        self.n_fields = int(n_fields)
        self._slots: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(self.n_slots)]
        # Per delay d: CSR of the receivers at distance exactly d, by sender.
        self._by_lag = []
        for d in range(1, self.n_slots):
            mask = schedule.delays == d
            senders, receivers = schedule.senders[mask], schedule.receivers[mask]
            order = np.argsort(senders, kind="stable")
            start = np.searchsorted(senders[order], np.arange(schedule.n_agents + 1))
            self._by_lag.append((d, receivers[order], start))

    def send(
        self, t0: int, trial: np.ndarray, sender: np.ndarray, arm: np.ndarray, deltas: np.ndarray
    ) -> None:
        """Schedule the content change ``deltas`` (n_fields, n) of ``n`` cells made at ``t0``.

        Parameters
        ----------
        t0 : int
            Creation round.
        trial, sender, arm : ndarray of int64, shape (n,)
            The changed cells.
        deltas : ndarray of float64, shape (n_fields, n)
            Content changes.
        """
        if trial.size == 0:
            return
        _, n_agents, n_arms = self.shape
        for d, targets, start in self._by_lag:
            first = start[sender]
            counts = start[sender + 1] - first
            total = int(counts.sum())
            if total == 0:
                continue
            rep = np.repeat(np.arange(trial.size), counts)
            position = np.arange(total) + np.repeat(first - (np.cumsum(counts) - counts), counts)
            flat = (trial[rep] * n_agents + targets[position]) * n_arms + arm[rep]
            self._slots[(t0 + d) % self.n_slots].append((flat, deltas[:, rep]))

    def deliver(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Updates due at round ``t``: flat cell indices (n,) and deltas (n_fields, n).

        Parameters
        ----------
        t : int
            Round, called in increasing order.

        Returns
        -------
        tuple of (ndarray, ndarray)
            Flat cell indices ``(n,)`` and deltas ``(n_fields, n)``.
        """
        slot = self._slots[t % self.n_slots]
        if not slot:
            return np.zeros(0, dtype=np.int64), np.zeros((self.n_fields, 0))
        flat = np.concatenate([part[0] for part in slot])
        values = np.concatenate([part[1] for part in slot], axis=1)
        slot.clear()
        return flat, values
