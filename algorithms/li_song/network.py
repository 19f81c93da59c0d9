"""Li & Song's communication protocols: GIS, Find-Sink-Agents / SAC, link costs.

Everything here depends on the graph only, never on data, so it is computed once per
run and reused by every epoch (the handshake pattern of GIS and the SAC paths do not
change between epochs; only the content of the DATA messages does).

Resolved ambiguities (the paper passage in brackets)
---------------------------------------------------------
* GIS (Alg. 2) in synchronous slots ``n = 0, 1, ...``: an agent with new labels sends
  ``ADV(New_i)`` to every neighbour (including the one it heard them from, as
  written); a receiver handles the ADVs of a slot one at a time in neighbour-label
  order, answering each with ``REQ(g \\ l_i)`` if non-empty, and the DATA reply is
  added to ``l_i`` before the next ADV is handled. So a label is requested from one
  neighbour only (the SPIN negotiation avoids implosion, §V-A2) [Alg. 2].
* GIS returns the loop counter ``n`` of its last slot, ``d_G - 1`` (Alg. 2 lines
  11–12, proofs, Table I: zero extra regret on a complete graph), but the loop pulls
  an arm in each of its ``d_G`` slots. ``delay_convention="counter"`` (default) takes
  ``d_G - 1`` exploitation slots, ``"slots"`` takes ``d_G`` [Alg. 2 lines 3 and 11–12, Table I].
* Find-Sink-Agents (Alg. 4): the sink is a graph centre (smallest eccentricity, lowest
  label on ties); ``t_delay^q`` is the radius (line 5 and Theorem 4's proof: the
  ``"slots"`` convention, HDP-MAB's default), or the radius minus one under the
  ``"counter"`` convention (line 4 writes ``max sd - 1``) [Alg. 4].
* Link costs (Eq. 2) have two models [Eq. 2; proofs of Theorems 3–4]: ``"paths"`` counts the links a message
  actually crosses (SAC: ``sum_i sd(i, SA_q)`` hops, Theorem 4's proof; GIS: the
  (slot, edge) pairs that carry a DATA message), ``"edges"`` counts every edge of the
  (component) graph in every slot used (GIS: ``d_G |E|``, Theorem 3's proof; SAC:
  ``sum_q |E_q|``, the reading that matches the experiments' narrative, §VII-C).
  The downlink broadcast of the active set is not costed (the theorems count uploads
  only; fedpriv).
* Table II case 2 sums to 110 agents [Table II]; :data:`TABLE_II_CASES` rescales it to 100
  by largest remainders: {63, 24, 10, 6, 7} -> {57, 22, 9, 6, 6}. The random graph of
  case 4 is Erdős–Rényi with ``p = 0.3`` redrawn until connected (unstated, §VII-C).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import networkx as nx
import numpy as np
from fedpriv.algorithms.networks.graphs import check_connected, graph_distances, make_graph
from fedpriv.privacy.checks import check_generator, check_int_at_least, check_real

__all__ = [
    "COST_MODELS",
    "DELAY_CONVENTIONS",
    "TABLE_II_CASES",
    "GisProtocol",
    "SinkAgents",
    "check_cost",
    "find_sink_agents",
    "simulate_gis",
    "table_ii_components",
]

COST_MODELS = ("paths", "edges")
DELAY_CONVENTIONS = ("counter", "slots")

#: Table II of Li & Song: case -> (component sizes, structure). Case 2 rescaled to 100.
TABLE_II_CASES: dict[int, tuple[tuple[int, ...], str]] = {
    1: ((20,) * 5, "complete"),
    2: ((57, 22, 9, 6, 6), "complete"),
    3: ((100,), "complete"),
    4: ((20,) * 5, "erdos_renyi"),
    5: ((20,) * 5, "star"),
    6: ((1,) * 100, "singleton"),
}


def check_cost(name: str, value: object) -> float:
    """A link cost ``c1`` or ``c2``: a finite float >= 0.

    Parameters
    ----------
    name : str
        ``"c1"`` or ``"c2"``, for the message.
    value : float
        The cost.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the cost is not finite or is negative.
    """
    value = check_real(name, value)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"`{name}` must be a finite cost >= 0, got {value!r}.")
    return value


def _check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {list(allowed)}, got {value!r}.")
    return value


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GisProtocol:
    """The handshakes of one GIS round on a graph (Li & Song Alg. 2).

    Attributes
    ----------
    n_slots : int
        Slots used, ``d_G`` (the diameter).
    counter : int
        Alg. 2's returned ``n`` (``n_slots - 1``).
    messages : tuple of (slot, kind, sender, receiver, labels)
        Every ADV, REQ and DATA message in order; ``labels`` is a tuple of agent labels
        (advertised, requested, or whose vectors ȳ_f the DATA message carries).
    data_links : tuple of int
        Per slot, the number of distinct edges that carried a DATA message.
    n_edges : int
        ``|E|``.
    """

    n_slots: int
    counter: int
    messages: tuple[tuple[int, str, int, int, tuple[int, ...]], ...]
    data_links: tuple[int, ...]
    n_edges: int

    def count(self, kind: str) -> int:
        """Number of ``kind`` messages (``"ADV"``, ``"REQ"`` or ``"DATA"``).

        Parameters
        ----------
        kind : {"ADV", "REQ", "DATA"}
            Message kind.

        Returns
        -------
        int
        """
        return sum(1 for m in self.messages if m[1] == kind)

    def delay(self, convention: str = "counter") -> int:
        """Exploitation slots per round: ``d_G - 1`` (``"counter"``) or ``d_G``.

        Parameters
        ----------
        convention : {"counter", "slots"}
            ``d_G - 1`` (Alg. 2's return value) or ``d_G``.

        Returns
        -------
        int
        """
        _check_choice("delay_convention", convention, DELAY_CONVENTIONS)
        return self.counter if convention == "counter" else self.n_slots

    def round_cost(self, c2: float, cost_model: str = "edges") -> float:
        """Cost of one GIS round: ``c2 d_G |E|`` (edges) or ``c2 * DATA link-slots``.

        Parameters
        ----------
        c2 : float
            Agent-agent link cost >= 0.
        cost_model : {"edges", "paths"}
            ``c2 d_G |E|`` (Theorem 3) or the DATA link-slots used.

        Returns
        -------
        float
        """
        c2 = check_cost("c2", c2)
        _check_choice("cost_model", cost_model, COST_MODELS)
        links = self.n_slots * self.n_edges if cost_model == "edges" else sum(self.data_links)
        return c2 * links


def simulate_gis(graph: nx.Graph) -> GisProtocol:
    """Run the GIS handshakes on ``graph`` until every agent holds every label.

    Parameters
    ----------
    graph : networkx.Graph
        Connected, nodes ``0..M-1``.

    Returns
    -------
    GisProtocol
        The messages, slots and DATA links of the run.

    Raises
    ------
    TypeError, ValueError
        If ``graph`` is not a connected simple graph on ``0..M-1`` (disconnected
        graphs never finish GIS).

    Examples
    --------
    >>> gis = simulate_gis(make_graph("path", 3))
    >>> gis.n_slots, gis.count("ADV"), gis.count("REQ"), gis.count("DATA")
    (2, 8, 6, 6)
    """
    check_connected(graph)
    n = graph.number_of_nodes()
    neighbours = [sorted(graph.neighbors(i)) for i in range(n)]
    held = [{i} for i in range(n)]
    new = [{i} for i in range(n)]
    messages: list[tuple[int, str, int, int, tuple[int, ...]]] = []
    data_links: list[int] = []
    slot = 0
    while True:
        inbox: list[list[tuple[int, frozenset[int]]]] = [[] for _ in range(n)]
        for i in range(n):
            if new[i]:
                labels = frozenset(new[i])
                for j in neighbours[i]:
                    messages.append((slot, "ADV", i, j, tuple(sorted(labels))))
                    inbox[j].append((i, labels))
        received: list[set[int]] = [set() for _ in range(n)]
        used = set()
        for j in range(n):
            for i, labels in sorted(inbox[j], key=lambda m: m[0]):
                missing = tuple(sorted(labels - held[j]))
                if missing:
                    messages.append((slot, "REQ", j, i, missing))
                    messages.append((slot, "DATA", i, j, missing))
                    held[j].update(missing)
                    received[j].update(missing)
                    used.add((min(i, j), max(i, j)))
        data_links.append(len(used))
        new = received
        if all(len(h) == n for h in held):
            break
        slot += 1
    return GisProtocol(
        n_slots=slot + 1,
        counter=slot,
        messages=tuple(messages),
        data_links=tuple(data_links),
        n_edges=graph.number_of_edges(),
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SinkAgents:
    """Components, their sinks and SAC distances (Li & Song Alg. 4, §VI-A2).

    Attributes
    ----------
    sizes : tuple of int
        ``M_q`` per component; agents are labelled globally in component order.
    component : ndarray of int64, shape (M,)
        Component of each agent.
    sinks : tuple of int
        Global label of ``SA_q``.
    sink_distance : ndarray of int64, shape (M,)
        ``sd(i, SA_q)`` hops of each agent to its sink.
    radius : tuple of int
        ``max_i sd(i, SA_q)`` per component (Alg. 4 line 5).
    n_edges : tuple of int
        ``|E_q|`` per component.
    diameters : tuple of int
        ``d_G^q`` per component (0 for a single agent).
    """

    sizes: tuple[int, ...]
    component: np.ndarray
    sinks: tuple[int, ...]
    sink_distance: np.ndarray
    radius: tuple[int, ...]
    n_edges: tuple[int, ...]
    diameters: tuple[int, ...]

    @property
    def n_components(self) -> int:
        """``Q``."""
        return len(self.sizes)

    def delay(self, convention: str = "slots") -> int:
        """``t_delay = max_q t_delay^q``: the largest radius (minus one for ``counter``).

        Parameters
        ----------
        convention : {"slots", "counter"}
            The largest radius (Alg. 4 line 5) or one less.

        Returns
        -------
        int
        """
        _check_choice("delay_convention", convention, DELAY_CONVENTIONS)
        largest = max(self.radius)
        return max(largest - 1, 0) if convention == "counter" else largest

    def round_cost(self, c1: float, c2: float, cost_model: str = "paths") -> float:
        """One round: ``c2 sum_q sum_i sd(i, SA_q) + c1 Q`` (paths) or ``c2 sum_q |E_q| + c1 Q``.

        Parameters
        ----------
        c1 : float
            Sink-server link cost >= 0.
        c2 : float
            Agent-agent link cost >= 0.
        cost_model : {"paths", "edges"}
            Theorem 4's paths or the components' edges.

        Returns
        -------
        float

        Examples
        --------
        >>> sinks = find_sink_agents([make_graph("star", 4), make_graph("path", 3)])
        >>> sinks.round_cost(50, 1, "paths"), sinks.round_cost(50, 1, "edges")
        (105.0, 105.0)
        """
        c1 = check_cost("c1", c1)
        c2 = check_cost("c2", c2)
        _check_choice("cost_model", cost_model, COST_MODELS)
        local = int(self.sink_distance.sum()) if cost_model == "paths" else sum(self.n_edges)
        return c2 * local + c1 * self.n_components


def find_sink_agents(components: Sequence[nx.Graph]) -> SinkAgents:
    """Sink agents of each component: a centre of ``G_q`` (Alg. 4).

    Parameters
    ----------
    components : sequence of networkx.Graph
        ``G_q`` with nodes ``0..M_q - 1`` each; a one-node graph is a lone agent
        (its own sink). Every component with >= 2 nodes must be connected.

    Returns
    -------
    SinkAgents
        Each component's sink, radius and sink distances.

    Raises
    ------
    ValueError, TypeError
        If ``components`` is empty or a component is not a connected simple graph.
    """
    if len(components) == 0:
        raise ValueError("`components` must hold at least one graph.")
    sizes, comp, sinks, dist, radius, edges, diam = [], [], [], [], [], [], []
    offset = 0
    for q, graph in enumerate(components):
        if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
            raise TypeError(f"component {q} must be an undirected simple networkx.Graph.")
        size = graph.number_of_nodes()
        if size == 1:
            if sorted(graph.nodes) != [0] or graph.number_of_edges():
                raise ValueError(f"component {q}: a lone agent must be node 0 without edges.")
            d = np.zeros((1, 1), dtype=np.int64)
        else:
            try:
                d = graph_distances(graph)
            except ValueError as error:
                raise ValueError(f"component {q}: {error}") from None
        eccentricity = d.max(axis=1)
        centre = int(np.argmin(eccentricity))  # lowest label among the centres
        sizes.append(size)
        comp.append(np.full(size, q, dtype=np.int64))
        sinks.append(offset + centre)
        dist.append(d[:, centre])
        radius.append(int(eccentricity[centre]))
        edges.append(graph.number_of_edges())
        diam.append(int(eccentricity.max()))
        offset += size
    return SinkAgents(
        sizes=tuple(sizes),
        component=np.concatenate(comp),
        sinks=tuple(sinks),
        sink_distance=np.concatenate(dist).astype(np.int64),
        radius=tuple(radius),
        n_edges=tuple(edges),
        diameters=tuple(diam),
    )


def table_ii_components(
    case: int, *, rng: np.random.Generator | None = None, p: float = 0.3
) -> list[nx.Graph]:
    """The component graphs of Table II's ``case`` (1–6), 100 agents in all.

    Parameters
    ----------
    case : int
        1–6 (see :data:`TABLE_II_CASES`; case 2 rescaled to 100 agents).
    rng : numpy.random.Generator, optional
        Required for case 4 (Erdős–Rényi components, redrawn until connected).
    p : float
        Edge probability of case 4.

    Returns
    -------
    list of networkx.Graph

    Raises
    ------
    ValueError
        If ``case`` is not 1–6.
    """
    case = check_int_at_least("case", case, 1)
    if case not in TABLE_II_CASES:
        raise ValueError(f"`case` must be one of {sorted(TABLE_II_CASES)}, got {case}.")
    sizes, kind = TABLE_II_CASES[case]
    if kind == "singleton":
        return [nx.empty_graph(1) for _ in sizes]
    if kind == "erdos_renyi":
        check_generator("rng", rng)
        return [make_graph(kind, size, p=p, rng=rng) for size in sizes]
    return [make_graph(kind, size) for size in sizes]
