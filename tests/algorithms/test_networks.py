"""Tests of fedpriv.algorithms.networks.graphs: graph builders, gossip matrix, edge schedule."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.networks.graphs import (
    GRAPH_KINDS,
    check_connected,
    edge_array,
    gossip_matrix,
    graph_distances,
    make_graph,
    neighbor_matrix,
    sample_active_edges,
    second_eigenvalue,
)
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []

PROPERTY = settings(database=None, deadline=None, max_examples=40)

FALSE_FAILURE_PROBABILITY = 1e-6


@st.composite
def connected_graphs(draw: st.DrawFn) -> nx.Graph:
    """Connected Erdős–Rényi graphs with 2..10 nodes."""
    n_agents = draw(st.integers(2, 10))
    p = draw(st.floats(0.3, 1.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return make_graph("erdos_renyi", n_agents, p=p, rng=rng, max_tries=10_000)


# ------------------------------------------------------------------------ make_graph
@pytest.mark.parametrize(
    ("kind", "n_agents", "n_edges"),
    [("complete", 5, 10), ("ring", 5, 5), ("path", 5, 4), ("star", 5, 4)],
)
def test_make_graph_deterministic_kinds(kind: str, n_agents: int, n_edges: int) -> None:
    graph = make_graph(kind, n_agents)
    assert sorted(graph.nodes) == list(range(n_agents))
    assert graph.number_of_edges() == n_edges
    assert nx.is_connected(graph)
    assert type(graph) is nx.Graph


def test_star_centre_is_node_zero() -> None:
    graph = make_graph("star", 6)
    assert graph.degree(0) == 5
    assert all(graph.degree(node) == 1 for node in range(1, 6))


def test_ring_and_path_edges() -> None:
    assert sorted(make_graph("ring", 4).edges()) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert sorted(make_graph("path", 4).edges()) == [(0, 1), (1, 2), (2, 3)]


def test_deterministic_kinds_draw_nothing_from_rng() -> None:
    rng = np.random.default_rng(7)
    make_graph("ring", 4, rng=rng)
    assert rng.random() == np.random.default_rng(7).random()


def test_erdos_renyi_p_one_is_complete() -> None:
    graph = make_graph("erdos_renyi", 6, p=1.0, rng=np.random.default_rng(0))
    assert graph.number_of_edges() == 15


def test_erdos_renyi_is_reproducible() -> None:
    def edges(seed: int) -> list[tuple[int, int]]:
        rng = np.random.default_rng(seed)
        return sorted(make_graph("erdos_renyi", 8, p=0.4, rng=rng).edges())

    assert edges(3) == edges(3)


@PROPERTY
@given(n_agents=st.integers(2, 12), p=st.floats(0.15, 1.0), seed=st.integers(0, 2**32 - 1))
def test_erdos_renyi_is_always_connected(n_agents: int, p: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = make_graph("erdos_renyi", n_agents, p=p, rng=rng, max_tries=100_000)
    assert nx.is_connected(graph)
    assert sorted(graph.nodes) == list(range(n_agents))
    assert nx.number_of_selfloops(graph) == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"kind": "grid", "n_agents": 4},
            ValueError,
            (
                r"`kind` must be one of \['complete', 'ring', 'path', 'star', "
                r"'erdos_renyi'\], got 'grid'\."
            ),
        ),
        ({"kind": "complete", "n_agents": 1}, ValueError, r"`n_agents` must be >= 2"),
        ({"kind": "ring", "n_agents": 2}, ValueError, r"`n_agents` must be >= 3, got 2"),
        ({"kind": "path", "n_agents": 3.0}, TypeError, r"`n_agents` must be an integer"),
        (
            {"kind": "ring", "n_agents": 4, "p": 0.5},
            ValueError,
            r"`p` is only used with kind='erdos_renyi'",
        ),
        (
            {"kind": "erdos_renyi", "n_agents": 4, "rng": np.random.default_rng(0)},
            ValueError,
            r"`p` is required for kind='erdos_renyi'",
        ),
        (
            {"kind": "erdos_renyi", "n_agents": 4, "p": 0.0},
            ValueError,
            r"`p` must be in \(0, 1\], got 0\.0",
        ),
        (
            {"kind": "erdos_renyi", "n_agents": 4, "p": 1.5},
            ValueError,
            r"`p` must be in \(0, 1\], got 1\.5",
        ),
        (
            {"kind": "erdos_renyi", "n_agents": 4, "p": 0.5},
            TypeError,
            r"`rng` must be a numpy\.random\.Generator, got NoneType",
        ),
        (
            {
                "kind": "erdos_renyi",
                "n_agents": 4,
                "p": 0.5,
                "rng": np.random.default_rng(0),
                "max_tries": 0,
            },
            ValueError,
            r"`max_tries` must be >= 1, got 0",
        ),
    ],
)
def test_make_graph_rejects(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_graph(**kwargs)


def test_make_graph_gives_up_after_max_tries() -> None:
    # G(30, 0.01) has about 4 edges, so it is never connected.
    with pytest.raises(ValueError, match=r"no connected Erdős–Rényi graph.*=3 draws"):
        make_graph("erdos_renyi", 30, p=0.01, rng=np.random.default_rng(0), max_tries=3)


def test_graph_kinds_constant() -> None:
    assert GRAPH_KINDS == ("complete", "ring", "path", "star", "erdos_renyi")


# ------------------------------------------------------------------- check_connected
def test_check_connected_returns_the_graph() -> None:
    graph = make_graph("path", 3)
    assert check_connected(graph) is graph


def test_check_connected_accepts_numpy_integer_labels() -> None:
    graph = nx.Graph([(np.int64(0), np.int64(1))])
    assert check_connected(graph) is graph


@pytest.mark.parametrize(
    ("graph", "error", "match"),
    [
        (nx.empty_graph(3), ValueError, r"^`graph` must be connected; it has 3 components\.$"),
        (
            nx.Graph([(0, 1), (2, 3)]),
            ValueError,
            r"^`graph` must be connected; it has 2 components\.$",
        ),
        (nx.empty_graph(1), ValueError, r"`graph` must have >= 2 nodes, got 1"),
        (nx.Graph(), ValueError, r"`graph` must have >= 2 nodes, got 0"),
        (nx.Graph([(0, 1), (1, 1)]), ValueError, r"`graph` must have no self-loops, found 1"),
        (
            nx.Graph([("a", "b")]),
            ValueError,
            r"`graph` nodes must be labelled 0\.\.1; found unexpected label\(s\) 'a', 'b'",
        ),
        (nx.Graph([(1, 2)]), ValueError, r"labelled 0\.\.1; found unexpected label\(s\) 2"),
        (nx.DiGraph([(0, 1)]), TypeError, r"`graph` must be an undirected simple"),
        (nx.MultiGraph([(0, 1)]), TypeError, r"got MultiGraph"),
        ([(0, 1)], TypeError, r"got list"),
    ],
)
def test_check_connected_rejects(graph: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        check_connected(graph)


@pytest.mark.parametrize(
    "function", [gossip_matrix, second_eigenvalue, edge_array, graph_distances, neighbor_matrix]
)
def test_graph_functions_reject_disconnected_graphs(function) -> None:
    with pytest.raises(ValueError, match=r"it has 2 components"):
        function(nx.Graph([(0, 1), (2, 3)]))


def test_sample_active_edges_rejects_disconnected_graph() -> None:
    with pytest.raises(ValueError, match=r"it has 2 components"):
        sample_active_edges(nx.Graph([(0, 1), (2, 3)]), 5, rng=np.random.default_rng(0))


# ----------------------------------------------------------------- gossip matrix, λ₂
def _gossip_matrix_by_definition(graph: nx.Graph) -> np.ndarray:
    """(1/|E|) sum over edges of I - (e_i - e_j)(e_i - e_j)^T / 2 (Zhu et al. §3)."""
    n_agents = graph.number_of_nodes()
    identity = np.eye(n_agents)
    total = np.zeros((n_agents, n_agents))
    for i, j in graph.edges():
        diff = identity[i] - identity[j]
        total += identity - 0.5 * np.outer(diff, diff)
    return total / graph.number_of_edges()


def test_gossip_matrix_of_triangle() -> None:
    expected = np.array([[2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]])
    np.testing.assert_allclose(
        gossip_matrix(make_graph("complete", 3)), expected, rtol=0, atol=1e-15
    )


def test_gossip_matrix_of_path() -> None:
    expected = np.array([[0.75, 0.25, 0.0], [0.25, 0.5, 0.25], [0.0, 0.25, 0.75]])
    np.testing.assert_allclose(gossip_matrix(make_graph("path", 3)), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind", ["complete", "ring", "path", "star"])
def test_gossip_matrix_matches_its_definition(kind: str) -> None:
    graph = make_graph(kind, 7)
    np.testing.assert_allclose(
        gossip_matrix(graph), _gossip_matrix_by_definition(graph), rtol=0, atol=1e-14
    )


@PROPERTY
@given(graph=connected_graphs())
def test_gossip_matrix_is_symmetric_doubly_stochastic_psd(graph: nx.Graph) -> None:
    w = gossip_matrix(graph)
    n_agents = graph.number_of_nodes()
    assert w.shape == (n_agents, n_agents)
    assert w.dtype == np.float64
    np.testing.assert_array_equal(w, w.T)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    assert np.all(w >= 0.0)
    eigenvalues = np.linalg.eigvalsh(w)
    assert eigenvalues.min() >= -1e-12
    assert eigenvalues.max() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(w, _gossip_matrix_by_definition(graph), atol=1e-12)


@PROPERTY
@given(graph=connected_graphs())
def test_second_eigenvalue_is_below_one_for_connected_graphs(graph: nx.Graph) -> None:
    lambda_2 = second_eigenvalue(graph)
    assert -1e-12 <= lambda_2 < 1.0
    algebraic_connectivity = nx.algebraic_connectivity(graph, method="tracemin_lu")
    expected = 1.0 - algebraic_connectivity / (2 * graph.number_of_edges())
    assert lambda_2 == pytest.approx(expected, abs=1e-7)


def _closed_form_lambda_2(kind: str, n: int) -> float:
    """1 - a(G) / (2|E|) with the textbook algebraic connectivity a(G)."""
    connectivity_and_edges = {
        "complete": (n, n * (n - 1) / 2),
        "star": (1.0, n - 1),
        "ring": (2 - 2 * math.cos(2 * math.pi / n), n),
        "path": (2 - 2 * math.cos(math.pi / n), n - 1),
    }
    connectivity, n_edges = connectivity_and_edges[kind]
    return 1.0 - connectivity / (2 * n_edges)


@pytest.mark.parametrize(
    ("kind", "n_agents", "table_value"),
    [
        ("complete", 3, 0.5),  # Zhu et al., Fig. 2(a, c)
        ("path", 3, 0.75),
        ("complete", 10, 0.889),  # gossip.md §1.2 table
        ("star", 10, 0.944),
        ("ring", 10, 0.981),
        ("path", 10, 0.9946),
    ],
)
def test_second_eigenvalue_known_values(kind: str, n_agents: int, table_value: float) -> None:
    lambda_2 = second_eigenvalue(make_graph(kind, n_agents))
    assert lambda_2 == pytest.approx(_closed_form_lambda_2(kind, n_agents), abs=1e-12)
    assert lambda_2 == pytest.approx(table_value, abs=5e-4)


def test_second_eigenvalue_of_triangle_is_one_half() -> None:
    assert second_eigenvalue(make_graph("complete", 3)) == pytest.approx(0.5, abs=1e-15)
    assert second_eigenvalue(make_graph("path", 3)) == pytest.approx(0.75, abs=1e-15)


# ------------------------------------------------------------------------ edge_array
def test_edge_array_is_sorted_int64() -> None:
    graph = nx.Graph([(2, 1), (1, 0), (0, 2), (3, 0)])
    edges = edge_array(graph)
    assert edges.dtype == np.int64
    np.testing.assert_array_equal(edges, [[0, 1], [0, 2], [0, 3], [1, 2]])


@PROPERTY
@given(graph=connected_graphs())
def test_edge_array_lists_every_edge_once(graph: nx.Graph) -> None:
    edges = edge_array(graph)
    assert edges.shape == (graph.number_of_edges(), 2)
    assert np.all(edges[:, 0] < edges[:, 1])
    assert [tuple(row) for row in edges.tolist()] == sorted(
        (min(u, v), max(u, v)) for u, v in graph.edges()
    )


# --------------------------------------------------------------- sample_active_edges
def test_sample_active_edges_shape_dtype_and_membership() -> None:
    graph = make_graph("ring", 5)
    active = sample_active_edges(graph, 1000, rng=np.random.default_rng(1))
    assert active.shape == (1000, 2)
    assert active.dtype == np.int64
    edge_set = {tuple(row) for row in edge_array(graph).tolist()}
    assert {tuple(row) for row in active.tolist()} == edge_set


def test_sample_active_edges_is_one_integers_call() -> None:
    graph = make_graph("star", 6)
    active = sample_active_edges(graph, 50, rng=np.random.default_rng(5))
    indices = np.random.default_rng(5).integers(0, 5, size=50)
    np.testing.assert_array_equal(active, edge_array(graph)[indices])


@PROPERTY
@given(graph=connected_graphs(), horizon=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_sample_active_edges_is_reproducible(graph: nx.Graph, horizon: int, seed: int) -> None:
    first = sample_active_edges(graph, horizon, rng=np.random.default_rng(seed))
    second = sample_active_edges(graph, horizon, rng=np.random.default_rng(seed))
    assert first.shape == (horizon, 2)
    np.testing.assert_array_equal(first, second)


@pytest.mark.statistical
def test_sample_active_edges_is_uniform() -> None:
    # Hoeffding + union bound over the 4 edges: P(any |freq - 1/4| >= tol)
    # <= 4 * 2 exp(-2 T tol^2) = FALSE_FAILURE_PROBABILITY.
    graph = make_graph("star", 5)
    horizon = 200_000
    n_edges = 4
    tol = math.sqrt(math.log(2 * n_edges / FALSE_FAILURE_PROBABILITY) / (2 * horizon))
    active = sample_active_edges(graph, horizon, rng=np.random.default_rng(20240601))
    frequencies = np.count_nonzero(active[:, 1][:, None] == np.arange(1, 5), axis=0)
    np.testing.assert_array_less(np.abs(frequencies / horizon - 1 / n_edges), tol)


@pytest.mark.parametrize(
    ("horizon", "rng", "error", "match"),
    [
        (0, np.random.default_rng(0), ValueError, r"`horizon` must be >= 1, got 0"),
        (2.0, np.random.default_rng(0), TypeError, r"`horizon` must be an integer"),
        (5, None, TypeError, r"`rng` must be a numpy\.random\.Generator"),
        (5, 0, TypeError, r"`rng` must be a numpy\.random\.Generator, got int"),
    ],
)
def test_sample_active_edges_rejects(horizon, rng, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        sample_active_edges(make_graph("path", 3), horizon, rng=rng)


# ------------------------------------------------------- graph_distances, neighbours
def test_graph_distances_of_path_and_star() -> None:
    distances = graph_distances(make_graph("path", 4))
    assert distances.dtype == np.int64
    np.testing.assert_array_equal(
        distances, [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]
    )
    star = graph_distances(make_graph("star", 4))
    np.testing.assert_array_equal(star, [[0, 1, 1, 1], [1, 0, 2, 2], [1, 2, 0, 2], [1, 2, 2, 0]])


@PROPERTY
@given(graph=connected_graphs())
def test_graph_distances_match_networkx_bfs(graph: nx.Graph) -> None:
    distances = graph_distances(graph)
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        for target, length in lengths.items():
            assert distances[source, target] == length


def test_neighbor_matrix_of_star() -> None:
    adjacency = neighbor_matrix(make_graph("star", 4))
    assert adjacency.dtype == np.bool_
    np.testing.assert_array_equal(
        adjacency.astype(int), [[0, 1, 1, 1], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]
    )


@PROPERTY
@given(graph=connected_graphs())
def test_neighbor_matrix_matches_networkx(graph: nx.Graph) -> None:
    n_agents = graph.number_of_nodes()
    adjacency = neighbor_matrix(graph)
    expected = nx.to_numpy_array(graph, nodelist=range(n_agents)) > 0
    np.testing.assert_array_equal(adjacency, expected)
    assert not adjacency.diagonal().any()
    np.testing.assert_array_equal(adjacency, adjacency.T)
