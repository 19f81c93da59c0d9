"""Decentralized FedUCB (Alg. 3): graphs, cliques, messages, storage and accounting."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.decentralized import SYNC_TIMING_REASON, run_feducb_decentralized
from fedpriv.algorithms.feducb.network import check_clique_cover, clique_cover, power_graph
from fedpriv.algorithms.feducb.privatizer import privatizer_calibration
from fedpriv.algorithms.networks.graphs import graph_distances, make_graph
from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
from fedpriv.privacy.errors import CapacityExceededError
from hypothesis import given
from hypothesis import strategies as st


def _tables(n_agents=4, horizon=24, n_trials=2, dim=3, seed=0, **kw):
    spec = LinearBandit(n_agents=n_agents, n_arms=5, dim=dim, **kw)
    return spec.sample(seed, n_trials=n_trials, horizon=horizon)


@st.composite
def _graphs(draw):
    kind = draw(st.sampled_from(["path", "ring", "star", "complete", "erdos_renyi"]))
    n = draw(st.integers(3, 9))
    if kind == "erdos_renyi":
        seed = draw(st.integers(0, 10_000))
        return make_graph(kind, n, p=0.4, rng=np.random.default_rng(seed))
    return make_graph(kind, n)


@given(graph=_graphs(), gamma=st.integers(1, 4))
def test_power_graph_has_an_edge_exactly_within_distance_gamma(graph, gamma):
    dist = graph_distances(graph)
    powered = power_graph(graph, gamma)
    n = graph.number_of_nodes()
    expected = {(u, v) for u in range(n) for v in range(u + 1, n) if dist[u, v] <= gamma}
    assert {tuple(sorted(e)) for e in powered.edges()} == expected


@given(graph=_graphs(), gamma=st.integers(1, 4))
def test_clique_cover_partitions_the_nodes_into_cliques_of_the_power_graph(graph, gamma):
    powered = power_graph(graph, gamma)
    cover = clique_cover(powered)
    members = sorted(node for clique in cover for node in clique)
    assert members == list(range(graph.number_of_nodes()))
    dist = graph_distances(graph)
    for clique in cover:
        for u in clique:
            for v in clique:
                assert dist[u, v] <= gamma
    check_clique_cover(powered, cover)  # the validator accepts it


@pytest.mark.parametrize(("n", "gamma"), [(10, 1), (10, 2), (7, 2), (12, 4), (5, 9)])
def test_clique_cover_of_a_path_is_minimal(n, gamma):
    # Nodes 0, γ+1, 2(γ+1), ... are pairwise more than γ apart, so at least
    # ⌈n/(γ+1)⌉ cliques are needed; consecutive blocks of γ+1 nodes achieve it.
    cover = clique_cover(power_graph(nx.path_graph(n), gamma))
    assert len(cover) == math.ceil(n / (gamma + 1))


def test_complete_graph_is_one_clique():
    assert clique_cover(power_graph(nx.complete_graph(6), 1)) == ((0, 1, 2, 3, 4, 5),)


@pytest.mark.parametrize(
    ("cover", "match"),
    [
        ([(0, 1, 2), (3,)], "not a clique"),
        ([(0, 1), (1, 2), (3,)], "twice"),
        ([(0, 1)], "misses"),
        ([(0, 1), (2, 7)], "outside"),
    ],
)
def test_bad_clique_cover_is_rejected(cover, match):
    with pytest.raises(ValueError, match=match):
        check_clique_cover(power_graph(nx.path_graph(4), 1), cover)


def test_bad_gamma_graph_and_parameters_raise_clear_errors():
    tables = _tables()
    with pytest.raises(ValueError, match="`gamma` must be >= 1"):
        run_feducb_decentralized(tables, nx.path_graph(4), gamma=0, epsilon=1.0, delta=0.1)
    disconnected = nx.empty_graph(4)
    with pytest.raises(ValueError, match="connected"):
        run_feducb_decentralized(tables, disconnected, gamma=1, epsilon=1.0, delta=0.1)
    with pytest.raises(ValueError, match="nodes but the tables have"):
        run_feducb_decentralized(tables, nx.path_graph(5), gamma=1, epsilon=1.0, delta=0.1)
    with pytest.raises(ValueError, match="`respond`"):
        run_feducb_decentralized(
            tables, nx.path_graph(4), gamma=1, epsilon=1.0, delta=0.1, respond="later"
        )
    with pytest.raises(ValueError, match="`threshold`"):
        run_feducb_decentralized(
            tables, nx.path_graph(4), gamma=1, epsilon=1.0, delta=0.1, threshold=-1.0
        )
    with pytest.raises(ValueError, match="`epsilon`"):
        run_feducb_decentralized(tables, nx.path_graph(4), gamma=1, epsilon=0.0, delta=0.1)
    with pytest.raises(ValueError, match="not a clique"):
        run_feducb_decentralized(
            tables, nx.path_graph(4), gamma=1, epsilon=1.0, delta=0.1, cover=[(0, 1, 2, 3)]
        )


@pytest.fixture(scope="module")
def chatty_run():
    """A non-private run on a path with γ = 2 that requests often (threshold 2)."""
    tables = _tables(n_agents=5, horizon=30, n_trials=2)
    graph = nx.path_graph(5)
    run = run_feducb_decentralized(
        tables, graph, gamma=2, epsilon=math.inf, delta=0.1, threshold=2.0, record=True
    )
    return tables, graph, run


def test_messages_move_one_hop_per_round_and_expire_after_gamma_hops(chatty_run):
    tables, graph, run = chatty_run
    messages = run.transcript.messages
    assert len(messages) > 0
    dist = graph_distances(graph)
    d = dist[messages["sender"], messages["receiver"]]
    assert (messages["hops"] == d).all()
    assert (messages["t_received"] - messages["t_sent"] == d).all()
    assert (messages["hops"] <= run.gamma).all() and (messages["hops"] >= 1).all()
    # every message reaches exactly the agents within 1..γ hops, once each (or the run
    # ended before it could)
    horizon = tables.horizon
    for _, group in messages.groupby(["trial", "kind", "sender", "subset", "t_sent"]):
        first = group.iloc[0]
        expected = {
            r
            for r in range(5)
            if 1 <= dist[first.sender, r] <= run.gamma
            and first.t_sent + dist[first.sender, r] < horizon
        }
        assert sorted(group["receiver"]) == sorted(expected)


def test_only_fresh_messages_from_the_same_clique_are_accepted(chatty_run):
    _, graph, run = chatty_run
    messages = run.transcript.messages
    label = check_clique_cover(power_graph(graph, run.gamma), run.cover)
    same = label[messages["sender"]] == label[messages["receiver"]]
    fresh = messages["t_sent"] >= messages["t_received"] - run.gamma
    assert (messages["accepted"] == (same & fresh)).all()
    accepted = messages[messages["accepted"]]
    assert (accepted["t_received"] - accepted["t_sent"] <= run.gamma).all()
    assert (~same).any()  # the path with γ = 2 has two cliques: some are refused


def test_releases_are_the_cumulative_statistic_of_their_parameter_set(chatty_run):
    # Without noise, the release of agent i for set g at round t is exactly
    # Σ_{τ <= t, τ ≡ g (mod γ)} x_{i,τ} x_{i,τ}ᵀ (and Σ y x): each set only holds the
    # rounds it was used in (the round-robin subsequences).
    tables, _, run = chatty_run
    tr = run.transcript
    block = tables.block(0, tables.horizon)
    rows = tr.releases
    assert len(rows) > 0
    for _, r in rows.iterrows():
        taus = np.arange(r.t + 1)
        taus = taus[taus % run.gamma == r.subset]
        arms = tr.actions[r.trial, r.agent, taus]
        x = block.contexts[r.trial, r.agent, taus, arms]
        y = block.rewards[r.trial, r.agent, taus, arms]
        np.testing.assert_allclose(tr.release_gram[r.release_id], x.T @ x, atol=1e-12)
        np.testing.assert_allclose(tr.release_vector[r.release_id], x.T @ y, atol=1e-12)


def test_requests_are_broadcast_and_answered_by_a_release(chatty_run):
    _, _, run = chatty_run
    tr = run.transcript
    assert len(tr.requests) == run.n_requests.sum() > 0
    own = tr.releases[tr.releases["cause"] == "request"]
    assert len(own) == len(tr.requests)
    assert run.n_releases.sum() == len(tr.releases)
    assert run.n_deliveries.sum() == len(tr.messages)


def test_receipt_responses_can_exceed_the_tree_capacity():
    tables = _tables(n_agents=4, horizon=64, n_trials=1)
    with pytest.raises(CapacityExceededError, match="capacity"):
        run_feducb_decentralized(
            tables, nx.path_graph(4), gamma=2, epsilon=1.0, delta=0.1, threshold=0.0
        )
    stopped = run_feducb_decentralized(
        tables, nx.path_graph(4), gamma=2, epsilon=1.0, delta=0.1, threshold=0.0, on_capacity="stop"
    )
    assert stopped.n_releases.sum() <= 4 * 2 * stopped.capacity


def test_next_use_responses_stay_within_one_leaf_per_use():
    tables = _tables(n_agents=4, horizon=64, n_trials=1)
    run = run_feducb_decentralized(
        tables,
        nx.path_graph(4),
        gamma=2,
        epsilon=1.0,
        delta=0.1,
        threshold=0.0,
        respond="next_use",
        record=True,
    )
    per_tree = run.transcript.releases.groupby(["trial", "agent", "subset"]).size()
    assert per_tree.max() <= math.ceil(64 / 2) <= run.capacity
    assert run.tree_depth == 1 + math.ceil(math.log2(64 / 2))


def test_parameter_sets_compose_in_parallel_and_sync_timing_is_named():
    tables = _tables(n_agents=4, horizon=40, n_trials=1)
    run = run_feducb_decentralized(tables, make_graph("ring", 4), gamma=2, epsilon=1.0, delta=0.1)
    cal = privatizer_calibration(1.0, 0.1, horizon=40, n_agents=4, dim=3, n_syncs=20)
    # One record lies in one tree (its agent and round's set); that tree is
    # μ = √m Δ_F / (√2 σ_N)-GDP. Parallel composition over agents and sets keeps μ.
    depth = (cal.capacity).bit_length()
    mu = math.sqrt(depth) * cal.frobenius_sensitivity / (math.sqrt(2.0) * cal.noise_stddev)
    _, eps = run.accountant_epsilon(1e-6)
    assert eps == pytest.approx(gaussian_dp_epsilon(mu, 1e-6), rel=1e-6)
    assert run.accountant.get_epsilon(1e-6) == math.inf
    assert SYNC_TIMING_REASON in run.accountant.ledger.non_private_reasons()


def test_same_seed_same_run_and_complete_graph_is_one_clique():
    tables = _tables(n_agents=3, horizon=20)
    a = run_feducb_decentralized(
        tables,
        nx.complete_graph(3),
        gamma=1,
        epsilon=1.0,
        delta=0.1,
        threshold=1.0,
        seed=3,
        record=True,
    )
    b = run_feducb_decentralized(
        tables,
        nx.complete_graph(3),
        gamma=1,
        epsilon=1.0,
        delta=0.1,
        threshold=1.0,
        seed=3,
        record=True,
    )
    assert a.cover == ((0, 1, 2),)
    np.testing.assert_array_equal(a.transcript.actions, b.transcript.actions)
    np.testing.assert_array_equal(a.regret_curve, b.regret_curve)
    assert a.regret_curve.shape == (2, 20)
    assert np.all(np.diff(a.regret_curve, axis=1) >= -1e-12)


def test_link_transmissions_match_the_flooding_schedule(chatty_run):
    # A message of u is forwarded once by every agent w with d(u, w) <= γ - 1 to all of
    # w's neighbours (one hop per round); hops that fall after the horizon never happen.
    tables, graph, run = chatty_run
    dist = graph_distances(graph)
    degree = np.array([graph.degree(v) for v in range(5)])
    messages = run.transcript.messages
    sent = messages.drop_duplicates(["trial", "kind", "sender", "subset", "t_sent"])
    expected = np.zeros(2, dtype=np.int64)
    for _, m in sent.iterrows():
        for hop in range(min(run.gamma, tables.horizon - 1 - m.t_sent)):
            expected[m.trial] += degree[dist[m.sender] == hop].sum()
    np.testing.assert_array_equal(run.n_transmissions, expected)


def test_next_use_releases_happen_only_when_their_set_is_in_use():
    tables = _tables(n_agents=5, horizon=30, n_trials=1)
    run = run_feducb_decentralized(
        tables,
        nx.path_graph(5),
        gamma=3,
        epsilon=math.inf,
        delta=0.1,
        threshold=2.0,
        respond="next_use",
        record=True,
    )
    releases = run.transcript.releases
    assert (releases["cause"] == "response").any()
    assert (releases["t"] % 3 == releases["subset"]).all()


def test_request_times_depend_on_raw_contexts():
    # The sync-timing channel (FedUCB Alg. 3 line 6): with the same noise seed,
    # replacing one decision set of agent 0 changes when agent 0 requests a sync. A
    # large ε keeps Λ small, so that the raw data, not the noise shift, drives the test.
    tables = _tables(n_agents=3, horizon=30, n_trials=1, dim=3)
    kwargs = {
        "gamma": 1,
        "epsilon": 1e4,
        "delta": 0.1,
        "threshold": 10.0,
        "record": True,
        "seed": 5,
    }
    base = run_feducb_decentralized(tables, nx.complete_graph(3), **kwargs)
    contexts = tables.block(0, 1).contexts[0, 0, 0]
    changed = tables.substitute(agent=0, t=0, contexts=np.roll(contexts, 1, axis=1) * 0.1)
    other = run_feducb_decentralized(changed, nx.complete_graph(3), **kwargs)
    first = base.transcript.requests.query("agent == 0")["t"].tolist()
    second = other.transcript.requests.query("agent == 0")["t"].tolist()
    assert first != second
