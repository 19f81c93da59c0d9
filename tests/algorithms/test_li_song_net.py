"""GIS handshakes, sink agents and link costs of Li & Song, checked by hand."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.li_song.network import (
    TABLE_II_CASES,
    find_sink_agents,
    simulate_gis,
    table_ii_components,
)
from fedpriv.algorithms.networks.graphs import make_graph
from hypothesis import given
from hypothesis import strategies as st


def _paw() -> nx.Graph:
    # triangle 0-1-2 with a pendant 3 on 2; diameter 2
    return nx.Graph([(0, 1), (0, 2), (1, 2), (2, 3)])


@pytest.mark.parametrize(
    ("graph", "slots", "adv", "req"),
    [
        # path 0-1-2. slot 0: 4 ADV (one per directed edge), every label missing: 4 REQ.
        # slot 1: 4 ADV; 0 lacks {2}, 2 lacks {0}: 2 REQ.
        (make_graph("path", 3), 2, 8, 6),
        # star, centre 0: slot 0: 6 ADV, 6 REQ; slot 1: centre advertises {1,2,3} to
        # 3 leaves (each lacks 2 of them: 3 REQ), leaves advertise {0} (held): 6 ADV.
        (make_graph("star", 4), 2, 12, 9),
        # K4: one slot, 12 ADV / 12 REQ, nothing new afterwards.
        (make_graph("complete", 4), 1, 12, 12),
        # paw: slot 0: 8 ADV (sum of degrees), 8 REQ; slot 1: New = {1,2},{0,2},{0,1,3},{2}
        # -> 2+2+3+1 = 8 ADV; 0 and 1 request {3} from 2, 3 requests {0,1}: 3 REQ.
        (_paw(), 2, 16, 11),
    ],
)
def test_gis_handshake_counts(graph: nx.Graph, slots: int, adv: int, req: int) -> None:
    gis = simulate_gis(graph)
    assert gis.n_slots == slots == nx.diameter(graph)
    assert gis.counter == slots - 1
    assert (gis.count("ADV"), gis.count("REQ"), gis.count("DATA")) == (adv, req, req)
    # every agent receives every other agent's vector exactly once
    m = graph.number_of_nodes()
    delivered = [
        (rcv, f) for _, kind, _, rcv, labels in gis.messages if kind == "DATA" for f in labels
    ]
    assert len(delivered) == len(set(delivered)) == m * (m - 1)


def test_gis_round_costs_by_hand() -> None:
    gis = simulate_gis(_paw())
    assert gis.round_cost(2.0, "edges") == 2.0 * 2 * 4  # d_G slots x |E|
    # DATA links: slot 0 all 4 edges; slot 1 only (0,2), (1,2), (2,3)
    assert gis.data_links == (4, 3)
    assert gis.round_cost(2.0, "paths") == 2.0 * 7
    assert gis.delay("counter") == 1 and gis.delay("slots") == 2
    # Table I: star costs 2(M-1) per round, ring (M/2)|E|, complete M(M-1)/2
    assert simulate_gis(make_graph("star", 50)).round_cost(1.0) == 98
    assert simulate_gis(make_graph("ring", 50)).round_cost(1.0) == 25 * 50
    assert simulate_gis(make_graph("complete", 50)).round_cost(1.0) == 1225


def test_sink_agents_path_and_star() -> None:
    sinks = find_sink_agents([make_graph("path", 5), make_graph("star", 3), nx.empty_graph(1)])
    assert sinks.sinks == (2, 5, 8)
    np.testing.assert_array_equal(sinks.sink_distance, [2, 1, 0, 1, 2, 0, 1, 1, 0])
    assert sinks.radius == (2, 1, 0)
    assert sinks.delay("slots") == 2 and sinks.delay("counter") == 1
    # paths: c2 (6 + 2 + 0) + c1 Q ; edges: c2 (4 + 2 + 0) + c1 Q
    assert sinks.round_cost(10.0, 1.0, "paths") == 8 + 30
    assert sinks.round_cost(10.0, 1.0, "edges") == 6 + 30


@pytest.mark.parametrize(
    ("case", "paths", "edges"),
    # li_song.md §5.3, c1 = 50, c2 = 1 (computed there independently of this code)
    [(1, 345, 1200), (3, 149, 5000), (5, 345, 345), (6, 5000, 5000)],
)
def test_table_ii_costs_match_report(case: int, paths: int, edges: int) -> None:
    sinks = find_sink_agents(table_ii_components(case))
    assert sum(sinks.sizes) == 100
    assert sinks.round_cost(50, 1, "paths") == paths
    assert sinks.round_cost(50, 1, "edges") == edges


def test_table_ii_case2_rescaled_and_random_case() -> None:
    assert TABLE_II_CASES[2][0] == (57, 22, 9, 6, 6)
    comps = table_ii_components(4, rng=np.random.default_rng(0))
    assert [g.number_of_nodes() for g in comps] == [20] * 5
    assert all(nx.is_connected(g) for g in comps)
    with pytest.raises(ValueError, match="case"):
        table_ii_components(7)


def test_bad_costs_and_graphs() -> None:
    gis = simulate_gis(make_graph("path", 3))
    with pytest.raises(ValueError, match="c2"):
        gis.round_cost(-1.0)
    with pytest.raises(ValueError, match="cost_model"):
        gis.round_cost(1.0, "hops")
    with pytest.raises(ValueError, match="connected"):
        simulate_gis(nx.Graph([(0, 1), (2, 3)]))
    with pytest.raises(ValueError, match="component 0"):
        find_sink_agents([nx.Graph([(0, 1), (2, 3)])])
    with pytest.raises(ValueError, match="c1"):
        find_sink_agents([make_graph("path", 3)]).round_cost(-1, 1)


@given(st.integers(2, 9), st.floats(0.2, 1.0), st.integers(0, 2**31 - 1))
def test_gis_invariants_on_random_connected_graphs(n: int, p: float, seed: int) -> None:
    graph = make_graph("erdos_renyi", n, p=p, rng=np.random.default_rng(seed))
    gis = simulate_gis(graph)
    assert gis.n_slots == nx.diameter(graph)
    delivered = [
        (rcv, f) for _, kind, _, rcv, labels in gis.messages if kind == "DATA" for f in labels
    ]
    assert sorted(delivered) == [(i, f) for i in range(n) for f in range(n) if f != i]
    assert gis.count("REQ") == gis.count("DATA") <= gis.count("ADV")
    assert gis.round_cost(1.0, "paths") <= gis.round_cost(1.0, "edges")
    sinks = find_sink_agents([graph])
    assert sinks.radius[0] == nx.radius(graph)
    assert sinks.sink_distance.max() == sinks.radius[0]
