"""Communication graphs and the gossip model of Zhu et al.

Agents sit on the nodes of a simple, undirected, connected, static graph G = (V, E)
whose nodes are labelled ``0, ..., n_agents - 1``. In the gossip model of Boyd et al.
used by Gossip_UCB and Fed_UCB, exactly one edge of E is active per round, drawn
uniformly from E and i.i.d. over rounds; the expected gossip matrix is
``W = I - L / (2 |E|)`` and its second largest eigenvalue ``lambda_2(W)`` sets the
mixing rate in the regret bounds.

Every function that takes a graph validates it with :func:`check_connected` first.

References
----------
.. [1] Z. Zhu, J. Zhu, J. Liu, Y. Liu, "Federated Bandit: A Gossiping Approach",
   Proc. ACM Meas. Anal. Comput. Syst. 5(1), 2021, Section 3 (gossip model,
   expected gossip matrix W, lambda_2).
.. [2] S. Boyd, A. Ghosh, B. Prabhakar, D. Shah, "Randomized gossip algorithms",
   IEEE Trans. Inf. Theory 52(6), 2006.
"""

from __future__ import annotations

import numbers

import networkx as nx
import numpy as np
from fedpriv.privacy.checks import check_generator, check_int_at_least, check_probability
from scipy.sparse.csgraph import shortest_path

__all__ = [
    "GRAPH_KINDS",
    "check_connected",
    "edge_array",
    "gossip_matrix",
    "graph_distances",
    "make_graph",
    "neighbor_matrix",
    "sample_active_edges",
    "second_eigenvalue",
]

GRAPH_KINDS: tuple[str, ...] = ("complete", "ring", "path", "star", "erdos_renyi")
"""Graph families accepted by :func:`make_graph`."""


def make_graph(
    kind: str,
    n_agents: int,
    *,
    p: float | None = None,
    rng: np.random.Generator | None = None,
    max_tries: int = 1000,
) -> nx.Graph:
    """Build a connected communication graph on nodes ``0, ..., n_agents - 1``.

    Parameters
    ----------
    kind : {"complete", "ring", "path", "star", "erdos_renyi"}
        Graph family. ``"star"`` has node 0 as its centre. ``"erdos_renyi"`` is
        G(n_agents, p), every one of the ``n_agents * (n_agents - 1) / 2`` possible
        edges present independently with probability ``p``, redrawn until the graph
        is connected (so it is G(n, p) *conditioned on connectivity*).
    n_agents : int
        Number of agents N, >= 2 (>= 3 for ``"ring"``, which must be simple).
    p : float, optional
        Edge probability in (0, 1]; required for ``"erdos_renyi"`` and rejected for
        every other kind.
    rng : numpy.random.Generator, optional
        Randomness for ``"erdos_renyi"`` (required there); the deterministic kinds
        ignore it and draw nothing from it.
    max_tries : int, default 1000
        Number of Erdős–Rényi draws before giving up, >= 1.

    Returns
    -------
    networkx.Graph
        A simple, undirected, connected graph with ``n_agents`` nodes.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``n_agents`` is too small, ``p`` is missing, outside
        (0, 1] or given for a deterministic kind, or no connected Erdős–Rényi graph
        was drawn within ``max_tries`` tries.
    TypeError
        If ``n_agents`` or ``max_tries`` is not an integer, or ``rng`` is not a
        ``numpy.random.Generator`` when one is needed.

    See Also
    --------
    second_eigenvalue : lambda_2 of the expected gossip matrix of the graph.

    References
    ----------
    .. [1] Zhu et al. (2021), Section 5: K_3 (lambda_2 = 0.5) for N = 3; the N = 10
       graph with lambda_2 ~ 0.99 is unstated (path, ring or sparse Erdős–Rényi all
       fit; Fig. 2(b)'s caption gives only lambda_2 ~ 0.99).

    Examples
    --------
    >>> sorted(make_graph("path", 3).edges())
    [(0, 1), (1, 2)]
    >>> g = make_graph("erdos_renyi", 6, p=0.5, rng=np.random.default_rng(0))
    >>> nx.is_connected(g)
    True
    """
    if kind not in GRAPH_KINDS:
        raise ValueError(f"`kind` must be one of {list(GRAPH_KINDS)}, got {kind!r}.")
    n_agents = check_int_at_least("n_agents", n_agents, 3 if kind == "ring" else 2)
    if kind != "erdos_renyi":
        if p is not None:
            raise ValueError(
                f"`p` is only used with kind='erdos_renyi'; got p={p!r} with kind={kind!r}."
            )
        builders = {
            "complete": nx.complete_graph,
            "ring": nx.cycle_graph,
            "path": nx.path_graph,
            "star": lambda n: nx.star_graph(n - 1),
        }
        return nx.Graph(builders[kind](n_agents))
    if p is None:
        raise ValueError("`p` is required for kind='erdos_renyi'; got None.")
    p = check_probability("p", p)
    check_generator("rng", rng)
    max_tries = check_int_at_least("max_tries", max_tries, 1)
    rows, cols = np.triu_indices(n_agents, k=1)
    for _ in range(max_tries):
        present = rng.random(rows.size) < p
        graph = nx.empty_graph(n_agents)
        graph.add_edges_from(zip(rows[present].tolist(), cols[present].tolist()))
        if nx.is_connected(graph):
            return graph
    raise ValueError(
        f"no connected Erdős–Rényi graph G(n_agents={n_agents}, p={p!r}) in "
        f"`max_tries`={max_tries} draws; increase `p` or `max_tries`."
    )


def check_connected(graph: nx.Graph) -> nx.Graph:
    """Validate a communication graph and return it unchanged.

    Parameters
    ----------
    graph : networkx.Graph
        Candidate graph. Must be a simple undirected ``nx.Graph`` (not directed, not a
        multigraph) with >= 2 nodes labelled ``0, ..., N - 1``, no self-loops, and
        connected.

    Returns
    -------
    networkx.Graph
        The same object.

    Raises
    ------
    TypeError
        If ``graph`` is not an undirected, simple ``networkx.Graph``.
    ValueError
        If it has fewer than 2 nodes, nodes not labelled ``0..N-1``, self-loops, or
        more than one connected component.

    Examples
    --------
    >>> check_connected(nx.empty_graph(3))
    Traceback (most recent call last):
    ...
    ValueError: `graph` must be connected; it has 3 components.
    """
    if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
        raise TypeError(
            f"`graph` must be an undirected simple networkx.Graph, got {type(graph).__name__}."
        )
    n_nodes = graph.number_of_nodes()
    if n_nodes < 2:
        raise ValueError(f"`graph` must have >= 2 nodes, got {n_nodes}.")
    bad = [
        node
        for node in graph.nodes
        if isinstance(node, bool)
        or not isinstance(node, numbers.Integral)
        or not 0 <= node < n_nodes
    ]
    if bad:
        bad = sorted(map(repr, bad))[:5]
        raise ValueError(
            f"`graph` nodes must be labelled 0..{n_nodes - 1}; found unexpected "
            f"label(s) {', '.join(bad)}."
        )
    n_loops = nx.number_of_selfloops(graph)
    if n_loops:
        raise ValueError(f"`graph` must have no self-loops, found {n_loops}.")
    n_components = nx.number_connected_components(graph)
    if n_components != 1:
        raise ValueError(f"`graph` must be connected; it has {n_components} components.")
    return graph


def neighbor_matrix(graph: nx.Graph) -> np.ndarray:
    """Adjacency matrix of the graph as booleans.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).

    Returns
    -------
    ndarray of bool, shape (n_agents, n_agents)
        ``A[i, j]`` is True iff agents i and j are neighbours. Symmetric, with a
        False diagonal.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_connected`.

    Examples
    --------
    >>> neighbor_matrix(make_graph("path", 3)).astype(int)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """
    edges = edge_array(graph)
    n_agents = graph.number_of_nodes()
    adjacency = np.zeros((n_agents, n_agents), dtype=bool)
    adjacency[edges[:, 0], edges[:, 1]] = True
    adjacency[edges[:, 1], edges[:, 0]] = True
    return adjacency


def gossip_matrix(graph: nx.Graph) -> np.ndarray:
    """Expected gossip matrix ``W = I - L / (2 |E|)``.

    With one edge (i, j) drawn uniformly from E per round, the per-round matrix is
    ``W(t) = I - (e_i - e_j)(e_i - e_j)^T / 2`` and
    ``W = E[W(t)] = (1/|E|) sum_{(i,j) in E} W_ij = I - L / (2 |E|)``, where ``L`` is
    the graph Laplacian. W is symmetric, doubly stochastic and positive
    semi-definite, with largest eigenvalue 1.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).

    Returns
    -------
    ndarray of float64, shape (n_agents, n_agents)
        The matrix W.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_connected`.

    References
    ----------
    .. [1] Zhu et al. (2021), Section 3, definition of W (Section 3.1).
    .. [2] Boyd et al. (2006), Section II.

    Examples
    --------
    >>> gossip_matrix(make_graph("path", 2))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    adjacency = neighbor_matrix(graph).astype(np.float64)
    n_edges = graph.number_of_edges()
    laplacian = np.diag(adjacency.sum(axis=1)) - adjacency
    return np.eye(adjacency.shape[0]) - laplacian / (2.0 * n_edges)


def second_eigenvalue(graph: nx.Graph) -> float:
    """Second largest eigenvalue ``lambda_2(W)`` of the expected gossip matrix.

    Equals ``1 - a(G) / (2 |E|)`` with ``a(G)`` the algebraic connectivity; it lies
    in [0, 1) for a connected graph, and a smaller value means faster mixing.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).

    Returns
    -------
    float
        lambda_2(W), computed with a symmetric eigensolver (absolute error of order
        1e-15).

    Raises
    ------
    TypeError, ValueError
        As :func:`check_connected`.

    See Also
    --------
    gossip_matrix : the matrix W.

    References
    ----------
    .. [1] Zhu et al. (2021), Section 3 and Fig. 2 (lambda_2 = 0.5 for K_3).

    Examples
    --------
    >>> round(second_eigenvalue(make_graph("complete", 3)), 12)
    0.5
    >>> round(second_eigenvalue(make_graph("path", 3)), 12)
    0.75
    """
    eigenvalues = np.linalg.eigvalsh(gossip_matrix(graph))
    return float(eigenvalues[-2])


def edge_array(graph: nx.Graph) -> np.ndarray:
    """Edges of the graph as a sorted integer array.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).

    Returns
    -------
    ndarray of int64, shape (n_edges, 2)
        One row ``(u, v)`` per edge with ``u < v``, rows in lexicographic order. Row
        ``e`` is edge number ``e`` for :func:`sample_active_edges`.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_connected`.

    Examples
    --------
    >>> edge_array(make_graph("star", 3))
    array([[0, 1],
           [0, 2]])
    """
    check_connected(graph)
    edges = np.array(list(graph.edges()), dtype=np.int64).reshape(-1, 2)
    edges.sort(axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return edges[order]


def sample_active_edges(graph: nx.Graph, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
    """Draw the active gossip edge of every round, uniformly from E and i.i.d.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).
    horizon : int
        Number of rounds T, >= 1.
    rng : numpy.random.Generator
        Source of randomness (the network-schedule stream); exactly one
        ``rng.integers`` call of size ``horizon`` is made.

    Returns
    -------
    ndarray of int64, shape (horizon, 2)
        Row ``t - 1`` is the edge ``(u, v)``, ``u < v``, active in round
        ``t = 1, ..., T``.

    Raises
    ------
    TypeError
        If ``horizon`` is not an integer or ``rng`` is not a Generator, or as
        :func:`check_connected`.
    ValueError
        If ``horizon < 1``, or as :func:`check_connected`.

    References
    ----------
    .. [1] Zhu et al. (2021), Section 3: "at each time t, exactly one pair of two
       neighboring agents on an edge in E are activated".

    Examples
    --------
    >>> sample_active_edges(make_graph("path", 2), 3, rng=np.random.default_rng(0))
    array([[0, 1],
           [0, 1],
           [0, 1]])
    """
    edges = edge_array(graph)
    horizon = check_int_at_least("horizon", horizon, 1)
    check_generator("rng", rng)
    return edges[rng.integers(0, edges.shape[0], size=horizon)]


def graph_distances(graph: nx.Graph) -> np.ndarray:
    """Hop distances between all pairs of agents.

    Parameters
    ----------
    graph : networkx.Graph
        Connected communication graph (see :func:`check_connected`).

    Returns
    -------
    ndarray of int64, shape (n_agents, n_agents)
        ``D[i, j]`` is the number of edges on a shortest path from i to j (the
        d_{i,j} of Zhu et al.'s Lemma 1); zero diagonal, symmetric.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_connected`.

    Examples
    --------
    >>> graph_distances(make_graph("path", 3))
    array([[0, 1, 2],
           [1, 0, 1],
           [2, 1, 0]])
    """
    adjacency = neighbor_matrix(graph)
    distances = shortest_path(adjacency, method="D", directed=False, unweighted=True)
    return np.rint(distances).astype(np.int64)
