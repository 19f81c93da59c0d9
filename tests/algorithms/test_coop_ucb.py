"""Tests of γ-hop flooding and Dubey & Pentland's private / non-private cooperative UCB."""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.dubey_aamas.baselines import interval_guarantee, run_ucb1
from fedpriv.algorithms.dubey_aamas.cooperative import run_coop_ucb_nonprivate, run_private_coop_ucb
from fedpriv.algorithms.dubey_aamas.kernels import ArmMajorDelayLine
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, RewardTable
from fedpriv.algorithms.networks.flooding import DelayLine, flood_messages, make_schedule
from fedpriv.algorithms.networks.graphs import graph_distances, make_graph
from fedpriv.privacy.calibrations import interval_claimed_guarantee, interval_length
from hypothesis import given
from hypothesis import strategies as st


@st.composite
def connected_graphs(draw):
    n = draw(st.integers(2, 9))
    # a random spanning tree plus random extra edges: always connected
    edges = [(i, draw(st.integers(0, i - 1))) for i in range(1, n)]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    graph.add_edges_from((a, b) for a, b in extra if a != b)
    return graph


@given(connected_graphs(), st.integers(1, 6), st.integers(1, 20))
def test_flooding_reaches_exactly_the_gamma_ball_after_d_rounds_once_each(graph, gamma, t0):
    """Invariant (c): receivers = {v: 1 <= d(u, v) <= γ}, delivered at t0 + d(u, v), once."""
    distances = graph_distances(graph)
    schedule = make_schedule(graph, gamma)
    messages = [(u, t0) for u in graph.nodes]
    table, transmissions = flood_messages(graph, gamma, messages)
    assert not table.duplicated(["sender", "created_round", "receiver"]).any()
    for u in graph.nodes:
        rows = table[table["sender"] == u]
        expected = {v for v in graph.nodes if 1 <= distances[u, v] <= gamma}
        assert set(rows["receiver"]) == expected
        for _, row in rows.iterrows():
            assert row["delivered_round"] == t0 + distances[u, row["receiver"]]
            assert row["hops"] == distances[u, row["receiver"]]
        # the closed-form schedule agrees with the literal protocol
        assert set(schedule.receivers[schedule.senders == u]) == expected
    assert transmissions == int(schedule.transmissions.sum())
    assert schedule.deliveries.sum() == len(table)


def test_flooding_on_a_path_counts_forwarders_only():
    # Path 0-1-2-3, γ = 2: agent 0's message is sent by 0 (1 link) and 1 (2 links).
    table, sent = flood_messages(nx.path_graph(4), 2, [(0, 1)])
    assert sorted(table["receiver"]) == [1, 2]
    assert table.set_index("receiver")["delivered_round"].to_dict() == {1: 2, 2: 3}
    assert sent == 3


def test_delay_line_delivers_each_update_after_its_delay():
    graph = nx.path_graph(4)
    schedule = make_schedule(graph, 3)
    line = DelayLine(schedule, (1, 4, 2), n_fields=1)
    line.send(5, np.array([0]), np.array([0]), np.array([1]), np.array([[2.5]]))
    arrivals = {}
    for t in range(6, 10):
        cells, deltas = line.deliver(t)
        for c, d in zip(cells.tolist(), deltas[0].tolist()):
            arrivals[c] = (t, d)
    # flat cell = (trial * n_agents + receiver) * n_arms + arm
    assert arrivals == {1 * 2 + 1: (6, 2.5), 2 * 2 + 1: (7, 2.5), 3 * 2 + 1: (8, 2.5)}


def test_schedule_rejects_bad_gamma_and_disconnected_graphs():
    with pytest.raises(ValueError, match="`gamma` must be >= 1"):
        make_schedule(nx.path_graph(3), 0)
    with pytest.raises(ValueError, match="must be connected"):
        make_schedule(nx.empty_graph(3), 1)
    with pytest.raises(TypeError, match="`gamma` must be an integer"):
        make_schedule(nx.path_graph(3), 1.5)


def _env(n_agents=4, means=(0.7, 0.5, 0.3)):
    return BernoulliMAB(np.tile(means, (n_agents, 1)))


def _reference_indices(run, t, own_term):
    """Group UCB index of every agent at round t from the transcript (slow reference)."""
    content = run.transcript.content
    d = run.schedule.distances
    gamma = run.schedule.gamma
    B, M, _ = run.actions.shape
    K = run.gaps.size
    out = np.empty((B, M, K))
    for b in range(B):
        for v in range(M):
            num, den = np.zeros(K), np.zeros(K)
            for u in range(M):
                if u == v:
                    if own_term == "raw":
                        acts, rews = run.actions[b, v, : t - 1], run.rewards[b, v, : t - 1]
                        num += np.bincount(acts, weights=rews, minlength=K)
                        den += np.bincount(acts, minlength=K)
                        continue
                    created = t - 1
                elif 1 <= d[u, v] <= gamma:
                    created = t - d[u, v]
                else:
                    continue
                if created < 1:
                    continue
                w = content["count"][b, u, created - 1].astype(float)
                mean = np.nan_to_num(content["mean"][b, u, created - 1])
                num += w * mean
                den += w
            with np.errstate(divide="ignore", invalid="ignore"):
                index = num / den + np.sqrt(2 * math.log(t) / den)
            out[b, v] = np.where(den > 0, index, np.inf)
    return out


@pytest.mark.parametrize(
    "own_term,count_field", [("noisy", "release"), ("raw", "release"), ("noisy", "current")]
)
def test_private_actions_match_a_slow_reference_of_the_group_index(own_term, count_field):
    graph = nx.path_graph(4)
    run = run_private_coop_ucb(
        _env(),
        graph,
        horizon=60,
        epsilon=0.5,
        gamma=2,
        n_trials=2,
        seed=3,
        own_term=own_term,
        count_field=count_field,
        record=True,
    )
    f = 2
    checked = 0
    for t in range(3 * f + 1, 61):
        index = _reference_indices(run, t, own_term)
        best = index.max(axis=-1)
        chosen = np.take_along_axis(index, run.actions[:, :, t - 1][..., None], axis=-1)[..., 0]
        np.testing.assert_allclose(chosen, best, rtol=1e-9, atol=1e-9)
        checked += 1
    assert checked == 54


def test_nonprivate_matches_the_reference_with_raw_messages():
    run = run_coop_ucb_nonprivate(
        _env(5), nx.cycle_graph(5), horizon=40, gamma=1, n_trials=2, seed=4, record=True
    )
    for t in range(4, 41):
        index = _reference_indices(run, t, "raw")
        chosen = np.take_along_axis(index, run.actions[:, :, t - 1][..., None], axis=-1)[..., 0]
        np.testing.assert_allclose(chosen, index.max(axis=-1), rtol=1e-9)


def test_round_robin_then_one_ledger_row_per_release():
    """Each stream releases exactly floor(n/f) times (no redraw per round, E7)."""
    env = _env()
    run = run_private_coop_ucb(
        env, make_graph("complete", 4), horizon=200, epsilon=0.1, gamma=1, n_trials=3, seed=0
    )
    f = 10
    assert (run.actions[:, :, : 3 * f] == np.tile(np.arange(3), f)).all()
    counts = np.stack([(run.actions == k).sum(axis=-1) for k in range(3)], axis=-1)
    ledger = run.accountant.ledger.draws
    draws = ledger.groupby(["trial", "agent", "arm"]).size()
    for (b, v, k), n in np.ndenumerate(counts):
        assert draws.get((b, v, k), 0) == n // f
    assert run.accountant.ledger.n_draws == int((counts // f).sum())


def test_raw_own_term_makes_the_accountant_report_infinity_noisy_gives_the_claim():
    """Done-when (d): raw own term -> ε = ∞; noisy -> the claimed per-message and composed ε."""
    env, graph = _env(), make_graph("complete", 4)
    kwargs = {"horizon": 300, "epsilon": 0.1, "theta": 1.1, "gamma": 1, "n_trials": 2, "seed": 1}
    raw = run_private_coop_ucb(env, graph, own_term="raw", **kwargs)
    noisy = run_private_coop_ucb(env, graph, own_term="noisy", **kwargs)
    assert raw.accountant.get_epsilon(0.0) == math.inf
    assert raw.accountant.get_epsilon(1e-5) == math.inf
    assert any("own term raw" in r for r in raw.accountant.ledger.non_private_reasons())
    assert noisy.accountant.ledger.non_private_reasons() == []
    # Claimed per message: f^(-θ/2) with f = 10 (AAMAS 2020 §3.2, fedpriv's reconstruction reconstructed with medium confidence).
    g = interval_guarantee(
        noisy.accountant, epsilon=0.1, horizon=300, theta=1.1, rule="decaying", target_delta=1e-5
    )
    assert g["accountant"]["first_release_epsilon"] == pytest.approx(10**-0.55, rel=1e-12)
    # Pure ε of a stream's 30 releases = Σ_j (10 j)^(-0.55), the claim's basic composition.
    expected = sum((10 * j) ** -0.55 for j in range(1, 31))
    assert noisy.accountant.get_epsilon(0.0) == pytest.approx(expected, rel=1e-12)
    claim = interval_claimed_guarantee(0.1, 300, target_delta=1e-5, theta=1.1)
    assert g["accountant"]["epsilon"] <= claim.homogeneous_epsilon
    assert g["accountant"]["epsilon"] <= expected


def test_transcript_lists_every_delivery_with_its_delay():
    graph = nx.path_graph(3)
    run = run_private_coop_ucb(
        _env(3), graph, horizon=30, epsilon=0.5, gamma=2, seed=0, record=True
    )
    deliveries = run.transcript.deliveries(0)
    d = graph_distances(graph)
    assert (
        deliveries["delivered_round"] - deliveries["created_round"]
        == d[deliveries["sender"], deliveries["receiver"]]
    ).all()
    assert len(deliveries) == run.deliveries
    assert len(run.transcript.messages(0)) == 3 * 30
    actions = run.transcript.action_table(0)
    assert (actions["arm"].to_numpy() == run.actions[0].ravel()).all()


def test_cooperation_beats_isolation_on_a_complete_graph():
    env = BernoulliMAB(np.tile([0.8, 0.5, 0.4, 0.3], (10, 1)))
    graph = make_graph("complete", 10)
    coop = run_coop_ucb_nonprivate(env, graph, horizon=500, gamma=1, n_trials=3, seed=2)
    alone = run_ucb1(env, horizon=500, n_trials=3, seed=2)
    assert coop.group_regret[:, -1].mean() < 0.5 * alone.group_regret[:, -1].mean()


class _BadTable(RewardTable):
    def rewards(self, trial, agent, arm, pull):
        return np.full(np.broadcast(trial, agent, arm, pull).shape, 2.0)


def test_bad_input_gives_clear_errors():
    env, graph = _env(), nx.path_graph(4)
    with pytest.raises(ValueError, match="`theta` must be in"):
        run_private_coop_ucb(env, graph, horizon=10, epsilon=0.1, gamma=1, theta=2.0)
    with pytest.raises(ValueError, match="`theta` must be in"):
        run_private_coop_ucb(env, graph, horizon=10, epsilon=0.1, gamma=1, theta=1.0)
    with pytest.raises(ValueError, match="`epsilon` must be in"):
        run_private_coop_ucb(env, graph, horizon=10, epsilon=0.0, gamma=1)
    with pytest.raises(ValueError, match="`gamma` must be >= 1"):
        run_private_coop_ucb(env, graph, horizon=10, epsilon=0.1, gamma=0)
    with pytest.raises(ValueError, match="must be connected"):
        run_coop_ucb_nonprivate(env, nx.empty_graph(4), horizon=10, gamma=1)
    with pytest.raises(ValueError, match="3 nodes but the environment has 4"):
        run_coop_ucb_nonprivate(env, nx.path_graph(3), horizon=10, gamma=1)
    with pytest.raises(ValueError, match="`own_term`"):
        run_private_coop_ucb(env, graph, horizon=10, epsilon=0.1, gamma=1, own_term="both")
    table = env.reward_table(0)
    bad = _BadTable(table.arm_means, table.key)
    with pytest.raises(ValueError, match="rewards must lie in \\[0, 1\\]"):
        run_coop_ucb_nonprivate(env, graph, horizon=10, gamma=1, table=bad)


@given(st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_arm_major_delay_line_delivers_what_the_delay_line_delivers(seed, gamma):
    """Same updates, same order (so the same floating-point sums), cells renumbered."""
    rng = np.random.default_rng(seed)
    graph = make_graph("erdos_renyi", 6, p=0.5, rng=rng)
    schedule = make_schedule(graph, gamma)
    n_trials, n_agents, n_arms = 2, 6, 3
    n_rows = n_trials * n_agents
    line = DelayLine(schedule, (n_trials, n_agents, n_arms), n_fields=2)
    fast = ArmMajorDelayLine(schedule, n_trials, n_arms)
    for t in range(1, 25):
        cells, deltas = line.deliver(t)
        got = fast.deliver(t)
        if got is None:
            assert cells.size == 0
        else:
            row, arm = np.divmod(cells, n_arms)
            np.testing.assert_array_equal(got[0], arm * n_rows + row)
            np.testing.assert_array_equal(got[1], deltas[0])
            np.testing.assert_array_equal(got[2], deltas[1])
        kind = rng.integers(3)  # nobody, everybody, or some senders change
        rows = {0: np.zeros(0, dtype=np.int64), 1: np.arange(n_rows)}.get(
            int(kind), np.flatnonzero(rng.random(n_rows) < 0.4)
        )
        if rows.size:
            arm = rng.integers(0, n_arms, rows.size)
            d_num, d_den = rng.normal(size=rows.size), rng.integers(1, 3, rows.size) * 1.0
            line.send(t, rows // n_agents, rows % n_agents, arm, np.stack([d_num, d_den]))
            fast.send(t, rows, arm, d_num, d_den)


@given(
    entropy=st.integers(0, 2**128),
    key=st.lists(st.integers(0, 2**31), max_size=3).map(tuple),
    n_trials=st.integers(0, 3),
    n_agents=st.integers(1, 3),
)
def test_byzantine_contamination_streams_keep_their_addresses(entropy, key, n_trials, n_agents):
    """The flips' generators (one batch) and the draws' (lazy: one row, or all at once)
    are those at the ENVIRONMENT address extended by 1 and by 2 (one SeedSequence
    each, as before issue 23)."""
    from fedpriv.algorithms.dubey_aamas.byzantine import _contamination_streams
    from fedpriv.algorithms.seeding import Stream

    root = np.random.SeedSequence(entropy, spawn_key=key)
    flips, draws = _contamination_streams(root, n_trials, n_agents, 5)
    every = np.asarray(draws.build_all()).reshape(n_trials, n_agents)
    assert flips.rngs.shape == (n_trials, n_agents)
    for j in range(n_trials):
        for i in range(n_agents):
            row = j * n_agents + i
            for extra, rng in ((1, flips.rngs[j, i]), (2, every[j, i]), (2, draws.build_one(row))):
                address = (*key, j, 0, i, int(Stream.ENVIRONMENT), extra)
                ref = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=address))
                assert rng.bit_generator.state == ref.bit_generator.state


@pytest.mark.parametrize("stop", [1, 7, 25])
def test_a_stopped_private_run_is_the_prefix_of_the_whole_run(stop):
    """``stop`` simulates the first rounds of the horizon-T run: same actions, rewards,
    messages and noise draws, and the accountant charged for the horizon's schedule."""
    env = BernoulliMAB(np.array([[0.2, 0.7, 0.5]] * 4))
    options = dict(horizon=25, epsilon=0.4, gamma=2, n_trials=30, seed=3, record=True)
    whole = run_private_coop_ucb(env, nx.cycle_graph(4), **options)
    short = run_private_coop_ucb(env, nx.cycle_graph(4), stop=stop, **options)
    np.testing.assert_array_equal(short.actions, whole.actions[..., :stop])
    np.testing.assert_array_equal(short.rewards, whole.rewards[..., :stop])
    for name, values in whole.transcript.content.items():
        np.testing.assert_array_equal(short.transcript.content[name], values[:, :, :stop])
    assert short.accountant.get_epsilon(0.0) == whole.accountant.get_epsilon(0.0)

    # the draws' ledger rows: those of the whole run's first `stop` rounds
    def rows(run):
        return Counter(map(tuple, run.accountant.ledger.draws.to_numpy().tolist()))

    assert not rows(short) - rows(whole)
    released = short.transcript.content["count"].max(axis=2).sum()  # f per release
    assert sum(rows(short).values()) == released // interval_length(0.4)


def test_stop_outside_the_horizon_is_refused():
    env = BernoulliMAB(np.full((2, 2), 0.5))
    for stop in (0, 11):
        with pytest.raises(ValueError, match="`stop` must be"):
            run_private_coop_ucb(env, nx.path_graph(2), horizon=10, epsilon=0.5, gamma=1, stop=stop)
