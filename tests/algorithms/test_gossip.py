"""Tests of fedpriv.algorithms.gossip_fed_ucb.gossip_ucb: Gossip_UCB and Fed_UCB (Zhu et al. 2021, Alg. 1 and 4).

The count dynamics (Alg. 1 lines 4-6, max-consensus of eq. 1) are re-implemented here
in a few lines (:func:`_replay_counts`) from the public outputs (actions and graph),
and the run is checked against that reference: final counts, the line-6 consistency
rule, the UCB argmax of lines 7-11 (with the recorded trace), and Lemmas 1-3.

Statistical tests pin their seeds and state their false-failure probability
(<= 1e-6 each); everything else is deterministic.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.environments.heterogeneous import (
    HeterogeneousBandit,
    paper_synthetic_bandit,
)
from fedpriv.algorithms.environments.hospital import hospital_bandit, load_diabetes
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import (
    MODES,
    GossipRun,
    confidence_radius,
    draw_active_edges,
    run_gossip_fed_ucb,
    run_gossip_ucb,
)
from fedpriv.algorithms.networks.graphs import GRAPH_KINDS, edge_array, graph_distances, make_graph
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
from fedpriv.privacy import RELATIVE_TOLERANCE
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

__all__: list[str] = []

PROPERTY = settings(database=None, deadline=None, max_examples=15)

FALSE_FAILURE_PROBABILITY = 1e-6

#: The gossip invariant holds exactly in real arithmetic; 1e-12 is float slack.
INVARIANT_TOLERANCE = 1e-12


# ---------------------------------------------------------------------------- helpers
def _paper_env(n_agents: int, *, noise: str = "gaussian", seed: int = 0) -> HeterogeneousBandit:
    """The paper's synthetic environment (U[0,1) means, Gaussian noise by default)."""
    return paper_synthetic_bandit(n_agents, 5, rng=np.random.default_rng(seed), noise=noise)


def _k3() -> nx.Graph:
    return make_graph("complete", 3)


@dataclasses.dataclass(frozen=True)
class _Replay:
    """Reference count dynamics of a run (Alg. 1 lines 4-6 and 15, eq. 1).

    ``n_pre[t - 1]`` is the pre-pull count ``n(t)`` of round ``t`` (``n_pre[T]`` the
    final counts); ``n_tilde_now[t - 1]`` is ``ñ(t)`` as used by line 6 in round t;
    ``n_tilde_next[t - 1]`` is ``ñ(t + 1)`` computed by line 5 in round t. Arrays are
    (T [+1], n_trials, n_agents, n_arms); ``behind[t - 1]`` is the set 𝒜_i of round t.
    """

    n_pre: np.ndarray
    n_tilde_now: np.ndarray
    n_tilde_next: np.ndarray
    behind: np.ndarray


def _replay_counts(actions: np.ndarray, graph: nx.Graph, n_arms: int) -> _Replay:
    """Recompute n, ñ and 𝒜 from the actions, independently of the simulator."""
    n_trials, n_agents, horizon = actions.shape
    adjacency = nx.to_numpy_array(graph, nodelist=range(n_agents)) > 0
    counts = np.ones((n_trials, n_agents, n_arms), dtype=np.int64)
    n_tilde = np.ones_like(counts)
    n_pre = np.empty((horizon + 1,) + counts.shape, dtype=np.int64)
    now = np.empty((horizon,) + counts.shape, dtype=np.int64)
    nxt = np.empty_like(now)
    behind = np.empty(now.shape, dtype=bool)
    for t in range(1, horizon + 1):
        n_pre[t - 1] = counts
        now[t - 1] = n_tilde
        behind[t - 1] = counts < n_tilde - n_agents
        new = counts.copy()
        for i in range(n_agents):
            for j in np.flatnonzero(adjacency[i]):
                new[:, i] = np.maximum(new[:, i], n_tilde[:, j])
        n_tilde = new
        nxt[t - 1] = n_tilde
        counts = counts + (actions[:, :, t - 1, None] == np.arange(n_arms))
    n_pre[horizon] = counts
    return _Replay(n_pre=n_pre, n_tilde_now=now, n_tilde_next=nxt, behind=behind)


def _reward_tables(env, horizon: int, n_trials: int, seed: int) -> np.ndarray:
    """The reward tables of a run, from their documented fixed addresses."""
    root = as_seed_sequence(seed)
    return np.stack(
        [
            env.sample_rewards(horizon, rng=stream_rng(root, trial=j, stream=Stream.ENVIRONMENT))
            for j in range(n_trials)
        ]
    )  # (n_trials, n_agents, horizon + 1, n_arms)


def _pulled_rewards(run: GossipRun, rewards: np.ndarray) -> np.ndarray:
    """Observed rewards ``X_{i, a_i(t)}(t)``, shape (n_trials, n_agents, horizon)."""
    horizon = run.actions.shape[-1]
    per_round = rewards[:, :, 1 : horizon + 1, :]  # (B, N, T, M)
    return np.take_along_axis(per_round, run.actions[..., None].astype(np.int64), -1)[..., 0]


def _sample_means(run: GossipRun, rewards: np.ndarray, *, clip: bool) -> np.ndarray:
    """Eq. (2) with X(0) in the numerator: final sample mean of every arm."""
    if clip:
        rewards = np.clip(rewards, 0.0, 1.0)
    n_arms = rewards.shape[-1]
    pulled = _pulled_rewards(run, rewards)
    onehot = run.actions[..., None] == np.arange(n_arms)  # (B, N, T, M)
    totals = rewards[:, :, 0, :] + np.sum(np.where(onehot, pulled[..., None], 0.0), axis=2)
    return totals / run.counts


@st.composite
def small_networks(draw: st.DrawFn) -> nx.Graph:
    """Connected graphs with 3..6 nodes from every family of `make_graph`."""
    kind = draw(st.sampled_from(GRAPH_KINDS))
    n_agents = draw(st.integers(3, 6))
    if kind != "erdos_renyi":
        return make_graph(kind, n_agents)
    seed = draw(st.integers(0, 2**32 - 1))
    return make_graph(
        "erdos_renyi", n_agents, p=0.5, rng=np.random.default_rng(seed), max_tries=10_000
    )


# ------------------------------------------------ confidence_radius (eq. 11, 12)
def test_confidence_radius_eq11_known_values() -> None:
    n = np.array([1, 4, 100])
    radius = confidence_radius(n, 10, n_agents=3, horizon=100, epsilon=math.inf)
    expected = np.sqrt(2 * 3 * math.log(10) / n) + 64.0 / 3**17
    np.testing.assert_allclose(radius, expected, rtol=1e-15)
    # log(1) = 0: only alpha_1 is left in round 1.
    first = confidence_radius(n, 1, n_agents=3, horizon=100, epsilon=math.inf)
    np.testing.assert_allclose(first, 64.0 / 3**17, rtol=1e-15)


def test_confidence_radius_eq12_known_value_and_order() -> None:
    n, t, big_t, n_agents, eps = 50, 20, 1000, 3, 2.0
    radius = confidence_radius(np.array([n]), t, n_agents=n_agents, horizon=big_t, epsilon=eps)
    private = 128 * n_agents * math.log(big_t) ** 2 * math.log(t) * math.log(n) / (n**2 * eps**2)
    expected = 64.0 / n_agents**17 + math.sqrt(2 * n_agents * (private + 1 / n) * math.log(t))
    assert radius[0] == pytest.approx(expected, rel=1e-14)
    radii = [
        confidence_radius(np.array([n]), t, n_agents=3, horizon=big_t, epsilon=e)[0]
        for e in (1.0, 2.0, 5.0, math.inf)
    ]
    assert radii == sorted(radii, reverse=True)  # more privacy, wider radius


# --------------------------------------------------- 1. Fed_UCB(ε = ∞) is Gossip_UCB
@pytest.mark.parametrize(("n_agents", "kind"), [(3, "complete"), (5, "ring")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fed_ucb_infinite_epsilon_equals_gossip_ucb_on_paper_env(
    n_agents: int, kind: str, seed: int
) -> None:
    # The paper's synthetic environment (Gaussian, unbounded): paper mode feeds the
    # rewards unchanged, so ε = ∞ must reproduce Gossip_UCB action for action.
    env = _paper_env(n_agents)
    graph = make_graph(kind, n_agents)
    gossip = run_gossip_ucb(env, graph, horizon=400, n_trials=3, seed=seed)
    fed = run_gossip_fed_ucb(
        env, graph, horizon=400, n_trials=3, seed=seed, epsilon=math.inf, mode="paper"
    )
    assert np.array_equal(fed.actions, gossip.actions)
    assert np.array_equal(fed.counts, gossip.counts)
    assert np.array_equal(fed.edges, gossip.edges)
    assert fed.scale == 0.0 and math.isinf(fed.node_epsilon)
    assert math.isinf(fed.accountant.get_epsilon(0.0))  # no noise at all


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n_agents", "kind"), [(3, "complete"), (5, "ring")])
def test_fed_ucb_infinite_epsilon_equals_gossip_ucb_on_bounded_env(
    mode: str, n_agents: int, kind: str
) -> None:
    # With rewards in [0, 1] clipping is a no-op, so both modes reduce to Gossip_UCB.
    env = _paper_env(n_agents, noise="bernoulli")
    graph = make_graph(kind, n_agents)
    for seed in (0, 1):
        gossip = run_gossip_ucb(env, graph, horizon=300, n_trials=2, seed=seed)
        fed = run_gossip_fed_ucb(
            env, graph, horizon=300, n_trials=2, seed=seed, epsilon=math.inf, mode=mode
        )
        assert np.array_equal(fed.actions, gossip.actions)


# ----------------------------------------------------------- 2. gossip invariant
def _invariant_error(run: GossipRun) -> float:
    theta, means = run.trace["theta"], run.trace["means"]
    return float(np.max(np.abs(theta.sum(axis=2) - means.sum(axis=2))))


def test_trace_shapes_and_initialisation() -> None:
    env = _paper_env(3)
    run = run_gossip_ucb(env, _k3(), horizon=50, n_trials=2, seed=0, record=True)
    assert run.trace["theta"].shape == (51, 2, 3, 5)
    assert run.trace["means"].shape == (51, 2, 3, 5)
    # ϑ(0) = X̃(0) = X(0) (Alg. 1 line 1).
    x0 = _reward_tables(env, 50, 2, 0)[:, :, 0, :]
    np.testing.assert_array_equal(run.trace["theta"][0], x0)
    np.testing.assert_array_equal(run.trace["means"][0], x0)
    assert run_gossip_ucb(env, _k3(), horizon=5).trace is None


@pytest.mark.parametrize(
    "runner",
    [
        pytest.param(lambda **kw: run_gossip_ucb(**kw), id="gossip-ucb"),
        pytest.param(
            lambda **kw: run_gossip_fed_ucb(epsilon=1.0, mode="paper", **kw), id="fed-paper"
        ),
        pytest.param(
            lambda **kw: run_gossip_fed_ucb(epsilon=1.0, mode="corrected", **kw), id="fed-corrected"
        ),
        pytest.param(
            lambda **kw: run_gossip_fed_ucb(
                epsilon=1.0, mode="corrected", noise_on_empty_nodes=True, **kw
            ),
            id="fed-corrected-noise-on-empty",
        ),
    ],
)
@pytest.mark.parametrize(("n_agents", "kind"), [(3, "complete"), (5, "ring")])
def test_gossip_invariant_sum_theta_equals_sum_means(runner, n_agents: int, kind: str) -> None:
    run = runner(
        env=_paper_env(n_agents),
        graph=make_graph(kind, n_agents),
        horizon=300,
        n_trials=3,
        seed=11,
        record=True,
    )
    assert _invariant_error(run) <= INVARIANT_TOLERANCE


@PROPERTY
@given(graph=small_networks(), seed=st.integers(0, 2**32 - 1))
def test_invariant_and_count_rules_on_random_graphs(graph: nx.Graph, seed: int) -> None:
    n_agents = graph.number_of_nodes()
    env = _paper_env(n_agents, seed=seed % 7)
    for run in (
        run_gossip_ucb(env, graph, horizon=60, n_trials=2, seed=seed, record=True),
        run_gossip_fed_ucb(env, graph, horizon=60, n_trials=2, seed=seed, epsilon=1.0, record=True),
    ):
        assert _invariant_error(run) <= INVARIANT_TOLERANCE
        replay = _replay_counts(run.actions, graph, env.n_arms)
        np.testing.assert_array_equal(replay.n_pre[-1], run.counts)
        _assert_forced_actions_in_consistency_set(run, replay)
        _assert_lemma_2(replay, n_agents=n_agents, n_arms=env.n_arms)


# -------------------------------------------------------------- 3. accountant
@pytest.fixture(scope="module")
def bounded_env() -> HeterogeneousBandit:
    """The paper's synthetic means with Bernoulli rewards (the DP analysis' setting)."""
    return _paper_env(3, noise="bernoulli")


def test_accountant_paper_mode_log2_t16(bounded_env: HeterogeneousBandit) -> None:
    run = run_gossip_fed_ucb(bounded_env, _k3(), horizon=16, epsilon=1.0, mode="paper", seed=0)
    accountant = run.accountant
    # ε' = ε/⌈log2 16⌉ = 1/4. Alg. 4 sends and acts on ϑ̃(t-1) (lines 19, 9), so the
    # prefixes 1..15 reach the view and round 1 sits in 4 of their nodes: exactly ε.
    assert accountant.get_epsilon(0.0, where={"phase": "stream"}) == 1.0
    assert run.scale == 4.0 and run.node_epsilon == 0.25
    assert run.mode == "paper" and run.log_base == "2" and run.epsilon == 1.0
    # The initial pulls are released raw (Alg. 4 line 1): NonPrivate, ε = ∞.
    assert math.isinf(accountant.get_epsilon(0.0, where={"phase": "init"}))
    assert math.isinf(accountant.get_epsilon(0.0))
    charges = accountant.ledger.charges
    init = charges[charges["phase"] == "init"]
    assert set(init["event"]) == {"NonPrivate"}
    assert len(init) == 3 * 5  # one per (agent, arm)
    stream = charges[charges["phase"] == "stream"]
    assert set(stream["event"]) == {"LaplaceTree"}
    assert len(stream) == 3 * 5
    assert (stream["scale"] == 4.0).all() and (stream["horizon"] == 16).all()
    # Publishing the final estimate ϑ̃(16) too (the second reading): 5 nodes, 5/4.
    final = run_gossip_fed_ucb(
        bounded_env, _k3(), horizon=16, epsilon=1.0, mode="paper", seed=0, publish_final=True
    )
    assert final.accountant.get_epsilon(0.0, where={"phase": "stream"}) == 1.25
    np.testing.assert_array_equal(final.actions, run.actions)  # the same run


@pytest.mark.parametrize("horizon", [1, 2, 16, 17, 100])
def test_accountant_corrected_mode_is_exactly_epsilon(
    bounded_env: HeterogeneousBandit, horizon: int
) -> None:
    run = run_gossip_fed_ucb(
        bounded_env, _k3(), horizon=horizon, epsilon=1.0, mode="corrected", n_trials=2, seed=0
    )
    assert run.accountant.get_epsilon(0.0) == 1.0  # every phase, no `where`
    assert run.accountant.get_epsilon(0.0, where={"phase": "stream"}) == 1.0
    # The view's nodes per record: floor(log2(T - 1)) + 1 = ⌈log2 T⌉ (at least 1).
    assert run.scale == max(1, horizon - 1).bit_length()
    final = run_gossip_fed_ucb(
        bounded_env,
        _k3(),
        horizon=horizon,
        epsilon=1.0,
        mode="corrected",
        n_trials=2,
        seed=0,
        publish_final=True,
    )
    assert final.scale == horizon.bit_length()  # floor(log2 T) + 1 levels
    assert final.accountant.get_epsilon(0.0) == 1.0
    # Noised initial pulls: one Lap(b) release of sensitivity 1 per record.
    assert run.accountant.get_epsilon(0.0, where={"phase": "init"}) == pytest.approx(
        1.0 / run.scale, rel=RELATIVE_TOLERANCE
    )


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 5.0])
def test_accountant_corrected_mode_other_epsilons(
    bounded_env: HeterogeneousBandit, epsilon: float
) -> None:
    run = run_gossip_fed_ucb(bounded_env, _k3(), horizon=20, epsilon=epsilon, seed=1)
    assert run.accountant.get_epsilon(0.0) == pytest.approx(epsilon, rel=RELATIVE_TOLERANCE)


def test_accountant_paper_mode_log2_t1024(bounded_env: HeterogeneousBandit) -> None:
    run = run_gossip_fed_ucb(bounded_env, _k3(), horizon=1024, epsilon=1.0, mode="paper", seed=0)
    # ⌈log2 1024⌉ = 10 nodes of the view (prefixes 1..1023) hold round 1: exactly ε.
    assert run.accountant.get_epsilon(0.0, where={"phase": "stream"}) == pytest.approx(
        1.0, rel=RELATIVE_TOLERANCE
    )


def test_accountant_paper_mode_natural_log_t16(bounded_env: HeterogeneousBandit) -> None:
    run = run_gossip_fed_ucb(
        bounded_env, _k3(), horizon=16, epsilon=1.0, mode="paper", log_base="e", seed=0
    )
    # ⌈ln 16⌉ = 3 and 4 nodes of the view: 4/3 (5/3 only if ϑ̃(16) is published).
    assert run.scale == 3.0
    assert run.accountant.get_epsilon(0.0, where={"phase": "stream"}) == pytest.approx(
        4.0 / 3.0, rel=RELATIVE_TOLERANCE
    )


def test_ledger_rows_are_node_draws_of_pulled_arms(bounded_env: HeterogeneousBandit) -> None:
    run = run_gossip_fed_ucb(bounded_env, _k3(), horizon=16, epsilon=1.0, seed=3, n_trials=2)
    ledger = run.accountant.ledger.draws
    stream = ledger[ledger["phase"] == "stream"]
    # Each stream draws at most one noise per node, and only for pulled arms.
    assert not stream.duplicated(["trial", "agent", "arm", "node"]).any()
    pulled = run.counts > 1
    for row in stream.itertuples():
        assert pulled[row.trial, row.agent, row.arm]
    assert (ledger["scale"] == 4.0).all() and (ledger["epsilon"] == 0.25).all()


def test_gossip_ucb_has_no_accountant() -> None:
    run = run_gossip_ucb(_paper_env(3), _k3(), horizon=10)
    assert run.accountant is None
    assert run.algorithm == "gossip-ucb" and math.isinf(run.epsilon)
    assert run.scale == 0.0 and run.n_out_of_bounds == 0


# ----------------------------------------------------------- 4. reward bounds
def test_paper_mode_feeds_out_of_range_gaussian_rewards() -> None:
    env, seed, horizon = _paper_env(3), 4, 200
    run = run_gossip_fed_ucb(
        env, _k3(), horizon=horizon, epsilon=1.0, mode="paper", n_trials=2, seed=seed
    )
    pulled = _pulled_rewards(run, _reward_tables(env, horizon, 2, seed))
    outside = int(np.sum((pulled < 0.0) | (pulled > 1.0)))
    assert outside > 0
    # Every out-of-range observation of rounds 1..T went into the tree unchanged;
    # the raw initial pulls are outside the tree (charged NonPrivate instead).
    assert run.n_out_of_bounds == outside


def test_corrected_mode_clips_and_counts_clipped_rewards() -> None:
    env, seed, horizon = _paper_env(3), 4, 200
    run = run_gossip_fed_ucb(
        env, _k3(), horizon=horizon, epsilon=1.0, mode="corrected", n_trials=2, seed=seed
    )
    rewards = _reward_tables(env, horizon, 2, seed)
    pulled = _pulled_rewards(run, rewards)
    x0 = rewards[:, :, 0, :]
    expected = int(np.sum((pulled < 0) | (pulled > 1)) + np.sum((x0 < 0) | (x0 > 1)))
    assert expected > 0
    assert run.n_out_of_bounds == expected  # rounds 1..T and the initial pulls
    ledger, charges = run.accountant.ledger.draws, run.accountant.ledger.charges
    assert (ledger["l1_sensitivity"] == 1.0).all()
    assert (charges["l1_sensitivity"] == 1.0).all()
    assert run.accountant.get_epsilon(0.0) == 1.0


def test_corrected_mode_means_are_clipped_sample_means() -> None:
    # With ε = ∞ the released means are noise-free, so they must be the sample means
    # (eq. 2, X(0) in the numerator) of the *clipped* rewards: only [0, 1] values
    # reach the tree. Paper mode and Gossip_UCB keep the raw values.
    env, seed, horizon = _paper_env(3), 2, 150
    rewards = _reward_tables(env, horizon, 2, seed)
    kw = {"horizon": horizon, "n_trials": 2, "seed": seed, "record": True}
    clipped = run_gossip_fed_ucb(env, _k3(), epsilon=math.inf, mode="corrected", **kw)
    np.testing.assert_allclose(
        clipped.trace["means"][-1], _sample_means(clipped, rewards, clip=True), atol=1e-12
    )
    assert clipped.trace["means"].min() >= 0.0 and clipped.trace["means"].max() <= 1.0
    for raw in (
        run_gossip_fed_ucb(env, _k3(), epsilon=math.inf, mode="paper", **kw),
        run_gossip_ucb(env, _k3(), **kw),
    ):
        np.testing.assert_allclose(
            raw.trace["means"][-1], _sample_means(raw, rewards, clip=False), atol=1e-12
        )


@pytest.mark.parametrize("mode", MODES)
def test_bernoulli_rewards_are_never_out_of_bounds(
    bounded_env: HeterogeneousBandit, mode: str
) -> None:
    run = run_gossip_fed_ucb(
        bounded_env, _k3(), horizon=200, epsilon=1.0, mode=mode, n_trials=2, seed=0
    )
    assert run.n_out_of_bounds == 0


# ----------------------------------------------------------- 5. reproducibility
@pytest.mark.parametrize(
    "runner",
    [
        pytest.param(lambda **kw: run_gossip_ucb(**kw), id="gossip-ucb"),
        pytest.param(lambda **kw: run_gossip_fed_ucb(epsilon=1.0, mode="paper", **kw), id="paper"),
        pytest.param(lambda **kw: run_gossip_fed_ucb(epsilon=1.0, **kw), id="corrected"),
    ],
)
def test_same_seed_same_run_and_fixed_trial_addresses(runner) -> None:
    env, graph = _paper_env(3), _k3()
    first = runner(env=env, graph=graph, horizon=200, n_trials=4, seed=5)
    again = runner(env=env, graph=graph, horizon=200, n_trials=4, seed=5)
    assert np.array_equal(first.actions, again.actions)
    assert np.array_equal(first.edges, again.edges)
    assert np.array_equal(first.counts, again.counts)
    as_sequence = runner(
        env=env, graph=graph, horizon=200, n_trials=4, seed=np.random.SeedSequence(5)
    )
    assert np.array_equal(first.actions, as_sequence.actions)
    assert first.seed_entropy == 5
    # Fixed addresses: adding trials never changes the earlier ones.
    alone = runner(env=env, graph=graph, horizon=200, n_trials=1, seed=5)
    assert np.array_equal(alone.actions[0], first.actions[0])
    pair = runner(env=env, graph=graph, horizon=200, n_trials=2, seed=5)
    assert np.array_equal(pair.actions, first.actions[:2])
    # Different seeds or different trials give different runs.
    other = runner(env=env, graph=graph, horizon=200, n_trials=4, seed=6)
    assert not np.array_equal(other.actions, first.actions)
    assert not np.array_equal(first.actions[0], first.actions[1])


def test_run_outputs_have_documented_shapes_and_dtypes() -> None:
    env, graph = _paper_env(5), make_graph("ring", 5)
    run = run_gossip_fed_ucb(env, graph, horizon=30, epsilon=2.0, n_trials=3, seed=0)
    assert run.algorithm == "gossip-fed-ucb"
    assert run.actions.shape == (3, 5, 30) and run.actions.dtype == np.int16
    assert run.counts.shape == (3, 5, 5) and run.counts.dtype == np.int64
    assert run.edges.shape == (3, 30, 2)
    # One pull of every arm at time 0, then one pull per round.
    np.testing.assert_array_equal(run.counts.sum(axis=-1), 5 + 30)
    # Every active edge is an edge of the graph.
    edges = {tuple(e) for e in edge_array(graph).tolist()}
    assert {tuple(e) for e in run.edges.reshape(-1, 2).tolist()} <= edges
    np.testing.assert_array_equal(run.gaps, env.gaps)
    summary = run.regret_summary()
    assert list(summary.columns) == ["trial", "regret"] and len(summary) == 3
    np.testing.assert_allclose(summary["regret"], run.cumulative_regret[..., -1].mean(axis=1))


# ------------------------------------------------------------ 6. behaviour checks
def _assert_forced_actions_in_consistency_set(run: GossipRun, replay: _Replay) -> int:
    """Lines 6, 12-13: a forced agent pulls an arm of 𝒜_i. Returns #forced rounds."""
    actions = np.moveaxis(run.actions, -1, 0).astype(np.int64)  # (T, B, N)
    forced = replay.behind.any(axis=-1)
    in_set = np.take_along_axis(replay.behind, actions[..., None], -1)[..., 0]
    assert np.all(in_set[forced])
    return int(forced.sum())


def _assert_lemma_2(replay: _Replay, *, n_agents: int, n_arms: int) -> None:
    """Lemma 2: n_{i,k}(t) > ñ_{i,k}(t + 1) - 3MN for every t, i, k."""
    assert np.all(replay.n_pre[:-1] > replay.n_tilde_next - 3 * n_arms * n_agents)


@pytest.mark.parametrize(
    ("n_agents", "kind"), [(3, "complete"), (5, "ring"), (5, "path"), (6, "star")]
)
@pytest.mark.parametrize("private", [False, True])
def test_consistency_rule_and_ucb_argmax(n_agents: int, kind: str, private: bool) -> None:
    env, graph, horizon = _paper_env(n_agents, seed=1), make_graph(kind, n_agents), 300
    if private:
        run = run_gossip_fed_ucb(
            env, graph, horizon=horizon, epsilon=1.0, mode="paper", n_trials=4, seed=0, record=True
        )
    else:
        run = run_gossip_ucb(env, graph, horizon=horizon, n_trials=4, seed=0, record=True)
    replay = _replay_counts(run.actions, graph, env.n_arms)
    np.testing.assert_array_equal(replay.n_pre[-1], run.counts)
    n_forced = _assert_forced_actions_in_consistency_set(run, replay)
    assert n_forced > 0  # the rule was exercised
    # Lines 7-11: an unforced agent pulls a maximiser of ϑ(t-1) + C(t) (pre-pull n).
    theta = run.trace["theta"]
    forced = replay.behind.any(axis=-1)
    epsilon = 1.0 if private else math.inf
    for t in range(1, horizon + 1):
        index = theta[t - 1] + confidence_radius(
            replay.n_pre[t - 1], t, n_agents=n_agents, horizon=horizon, epsilon=epsilon
        )
        chosen = np.take_along_axis(index, run.actions[:, :, t - 1, None].astype(np.int64), -1)[
            ..., 0
        ]
        free = ~forced[t - 1]
        np.testing.assert_array_equal(chosen[free], index.max(axis=-1)[free])


@pytest.mark.parametrize(("n_agents", "kind"), [(3, "complete"), (5, "path"), (6, "star")])
def test_lemmas_1_2_3_on_counts(n_agents: int, kind: str) -> None:
    env, graph = _paper_env(n_agents, seed=2), make_graph(kind, n_agents)
    n_arms, horizon = env.n_arms, 400
    run = run_gossip_fed_ucb(env, graph, horizon=horizon, epsilon=2.0, n_trials=3, seed=9)
    replay = _replay_counts(run.actions, graph, n_arms)
    # Lemma 1 (pre-pull semantics of line 5): ñ_i(t + 1) = max_j n_j(t - d_{j,i}),
    # with n_j(s) = 1 (the initial pull) for s <= 1.
    distance = graph_distances(graph)
    for t in range(1, horizon + 1):
        rounds = np.maximum(t - distance, 1) - 1  # index into n_pre, [i, j]
        for i in range(n_agents):
            lagged = replay.n_pre[rounds[i], :, np.arange(n_agents), :]  # (N, B, M)
            np.testing.assert_array_equal(replay.n_tilde_next[t - 1][:, i], lagged.max(axis=0))
    _assert_lemma_2(replay, n_agents=n_agents, n_arms=n_arms)
    # Lemma 3: once n_{i,k}(t) >= (3M + 1)N, max_j n_{j,k}(t) <= 2 n_{i,k}(t).
    n_pre = replay.n_pre
    mature = n_pre >= (3 * n_arms + 1) * n_agents
    leader = n_pre.max(axis=2, keepdims=True)
    assert mature.any()
    assert np.all((leader <= 2 * n_pre)[mature])


def test_regret_is_nonnegative_and_cumulative_regret_nondecreasing() -> None:
    env = _paper_env(3)
    run = run_gossip_fed_ucb(env, _k3(), horizon=200, epsilon=1.0, n_trials=3, seed=0)
    regret = run.regret
    assert regret.shape == (3, 3, 200)
    np.testing.assert_array_equal(regret, env.gaps[run.actions])
    assert np.all(regret >= 0.0)
    assert np.all(np.diff(run.cumulative_regret, axis=-1) >= 0.0)
    np.testing.assert_allclose(run.cumulative_regret[..., -1], regret.sum(axis=-1))
    np.testing.assert_array_equal(run.final_regret, run.cumulative_regret[..., -1])


@pytest.mark.statistical
def test_gossip_ucb_regret_per_round_decreases_on_separated_bernoulli_k3() -> None:
    """Average per-round regret falls over time (Gossip_UCB learns the global best).

    Local means disagree (agent 1 prefers arm 1) but the global gaps are 0.43 and 0.6.
    T = 2000 rounds, 50 trials, regret averaged over agents in four quarters.

    False-failure probability (a correct Gossip_UCB fails with prob. < 1e-6):

    * Sign test. ``I_j = 1{quarter-1 regret > quarter-4 regret}`` is i.i.d. over
      trials. A pilot run (seed 0, 50 trials, not the pinned seed) gave ``I_j = 1``
      in every trial, with the per-trial difference at mean/sd ~ 13, so ``P(I_j = 1)
      >= 0.9`` is very conservative; requiring at least ``k`` successes, with ``k``
      the 5e-7 quantile of Bin(50, 0.9), fails with probability < 5e-7.
    * Quarter means, averaged over the 50 trials, are strictly decreasing. In the
      pilot the smallest consecutive gap (quarters 3 -> 4) was 0.0067 and the
      per-trial sd of a quarter <= 0.0042, so each gap is >= 8 standard errors
      (normal approximation: each comparison fails with prob. < 1e-15).
    """
    arm_means = np.array([[0.9, 0.3, 0.1], [0.6, 0.7, 0.0], [0.9, 0.1, 0.5]])
    env = HeterogeneousBandit(arm_means=arm_means)
    assert env.best_arm == 0 and int(np.argmax(arm_means[1])) != env.best_arm
    n_trials, horizon = 50, 2000
    run = run_gossip_ucb(env, _k3(), horizon=horizon, n_trials=n_trials, seed=20240611)
    per_round = run.regret.mean(axis=1)  # (n_trials, horizon)
    quarters = per_round.reshape(n_trials, 4, horizon // 4).mean(axis=-1)
    k = int(stats.binom.ppf(FALSE_FAILURE_PROBABILITY / 2, n_trials, 0.9))
    assert int(np.sum(quarters[:, 0] > quarters[:, 3])) >= k
    assert np.all(np.diff(quarters.mean(axis=0)) < 0.0)


# ----------------------------------------------------------------- 7. bad input
class _NanBandit:
    """Minimal `BanditEnvironment` whose reward table holds a NaN (or an inf)."""

    def __init__(self, bad: float = math.nan) -> None:
        self.bad = bad

    n_agents = 3
    n_arms = 2
    arm_means = np.full((3, 2), 0.5)
    global_means = np.full(2, 0.5)
    reward_bounds = (0.0, 1.0)
    best_arm = 0
    gaps = np.zeros(2)

    def sample_rewards(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        table = (rng.random((3, horizon + 1, 2)) < 0.5).astype(np.float64)
        table[1, horizon, 1] = self.bad
        return table


_ENV = HeterogeneousBandit(arm_means=[[0.1, 0.9], [0.5, 0.5], [0.9, 0.1]])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "`epsilon`"),
        ({"epsilon": -1.0}, ValueError, "`epsilon`"),
        ({"epsilon": math.nan}, ValueError, "`epsilon` must not be NaN"),
        ({"epsilon": "1"}, TypeError, "`epsilon`"),
        ({"epsilon": True}, TypeError, "`epsilon`"),
        ({"horizon": 0}, ValueError, "`horizon`"),
        ({"horizon": 5.0}, TypeError, "`horizon`"),
        ({"n_trials": 0}, ValueError, "`n_trials`"),
        ({"mode": "literal"}, ValueError, "`mode`"),
        ({"log_base": "3"}, ValueError, "`log_base`"),
        ({"log_base": "ln"}, ValueError, "`log_base`"),
        ({"graph": nx.empty_graph(3)}, ValueError, "`graph` must be connected"),
        ({"graph": make_graph("ring", 4)}, ValueError, "`graph` has 4 nodes"),
        ({"graph": nx.DiGraph(make_graph("complete", 3))}, TypeError, "`graph`"),
        ({"seed": -1}, ValueError, "`seed`"),
        ({"seed": 1.5}, TypeError, "`seed`"),
    ],
)
def test_fed_ucb_rejects_bad_input(kwargs: dict, error: type, match: str) -> None:
    arguments = {"env": _ENV, "graph": _k3(), "horizon": 5, "epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        run_gossip_fed_ucb(**arguments)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"horizon": 0}, ValueError, "`horizon`"),
        ({"n_trials": 0}, ValueError, "`n_trials`"),
        ({"graph": nx.Graph([(0, 1), (2, 3), (3, 4)])}, ValueError, "`graph`"),
        ({"graph": make_graph("path", 2)}, ValueError, "`graph` has 2 nodes"),
    ],
)
def test_gossip_ucb_rejects_bad_input(kwargs: dict, error: type, match: str) -> None:
    arguments = {"env": _ENV, "graph": _k3(), "horizon": 5, **kwargs}
    with pytest.raises(error, match=match):
        run_gossip_ucb(**arguments)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_rewards_are_rejected(bad: float) -> None:
    env = _NanBandit(bad)
    with pytest.raises(ValueError, match="rewards must be finite"):
        run_gossip_ucb(env, _k3(), horizon=10)
    for mode in MODES:
        with pytest.raises(ValueError, match="rewards must be finite"):
            run_gossip_fed_ucb(env, _k3(), horizon=10, epsilon=1.0, mode=mode)


def test_fake_environment_without_nan_runs() -> None:
    # The protocol is all the simulator needs (the NaN test is not about the fake).
    env = _NanBandit(0.0)
    run = run_gossip_fed_ucb(env, _k3(), horizon=10, epsilon=1.0, seed=0)
    assert run.actions.shape == (1, 3, 10)


# -------------------------------------------------------------------- 8. hospital
def test_fed_ucb_on_hospital_data_is_exactly_epsilon(hospital_sample) -> None:
    env = hospital_bandit(load_diabetes(hospital_sample))
    assert (env.n_agents, env.n_arms) == (3, 5)
    run = run_gossip_fed_ucb(env, _k3(), horizon=200, epsilon=1.0, n_trials=2, seed=0)
    assert run.accountant.get_epsilon(0.0) == 1.0
    assert run.n_out_of_bounds == 0  # Bernoulli rewards
    assert run.actions.shape == (2, 3, 200)
    assert np.all(run.regret >= 0.0)


# ------------------------------------------------------- 7. stopping early (rounds)
_EARLY_SETTINGS = [
    pytest.param("fed", "corrected", "complete", 3, "bernoulli", False, id="fed-corrected-K3"),
    pytest.param("fed", "paper", "ring", 4, "gaussian", False, id="fed-paper-ring4-unclipped"),
    pytest.param("fed", "paper", "path", 3, "bernoulli", True, id="fed-paper-noise-on-empty"),
    pytest.param("gossip", "paper", "star", 5, "gaussian", False, id="gossip-star5"),
]


def _early_run(
    algorithm: str,
    mode: str,
    kind: str,
    n_agents: int,
    noise: str,
    empty: bool,
    *,
    seed: int,
    rounds: int | None,
) -> GossipRun:
    env, graph = _paper_env(n_agents, noise=noise, seed=seed), make_graph(kind, n_agents)
    common = {"horizon": 40, "n_trials": 5, "seed": seed, "record": True, "rounds": rounds}
    if algorithm == "gossip":
        return run_gossip_ucb(env, graph, **common)
    return run_gossip_fed_ucb(
        env, graph, epsilon=1.0, mode=mode, log_base="e", noise_on_empty_nodes=empty, **common
    )


@pytest.mark.parametrize(
    ("algorithm", "mode", "kind", "n_agents", "noise", "empty"), _EARLY_SETTINGS
)
@pytest.mark.parametrize("seed", [0, 11, 2021])
def test_a_run_stopped_early_is_the_full_runs_prefix(
    algorithm: str, mode: str, kind: str, n_agents: int, noise: str, empty: bool, seed: int
) -> None:
    """The algorithm is causal: ``rounds=r`` gives the full run's first r rounds, bit for bit.

    This is what lets an end-to-end audit stop each run at the last round its
    observable depends on (issue 11 item 4).
    """
    full = _early_run(algorithm, mode, kind, n_agents, noise, empty, seed=seed, rounds=None)
    assert full.rounds == full.horizon == 40
    for r in (0, 1, 2, 7, 40):
        early = _early_run(algorithm, mode, kind, n_agents, noise, empty, seed=seed, rounds=r)
        assert early.rounds == r and early.horizon == 40
        np.testing.assert_array_equal(early.actions, full.actions[..., :r])
        np.testing.assert_array_equal(early.edges, full.edges[:, :r])
        for name in ("theta", "means"):
            assert early.trace[name].shape == (r + 1,) + full.trace[name].shape[1:]
            np.testing.assert_array_equal(early.trace[name], full.trace[name][: r + 1])
        # Counts after round r: the initial pull plus the pulls of rounds 1..r.
        pulls = (early.actions[..., None] == np.arange(full.counts.shape[-1])).sum(axis=2)
        np.testing.assert_array_equal(early.counts, 1 + pulls)
        if algorithm == "fed":
            # The trees are opened for the whole horizon: the same guarantee.
            assert early.accountant.get_epsilon(0.0) == full.accountant.get_epsilon(0.0)
            assert early.scale == full.scale


def test_draw_active_edges_are_the_runs_edges() -> None:
    env, graph = _paper_env(4), make_graph("ring", 4)
    run = run_gossip_fed_ucb(env, graph, horizon=25, epsilon=1.0, n_trials=3, seed=9)
    np.testing.assert_array_equal(draw_active_edges(graph, 25, n_trials=3, seed=9), run.edges)
    np.testing.assert_array_equal(
        draw_active_edges(graph, 25, n_trials=3, seed=np.random.SeedSequence(9)), run.edges
    )


@pytest.mark.parametrize(
    ("rounds", "error", "match"),
    [
        (-1, ValueError, "`rounds` must be >= 0"),
        (6, ValueError, "`rounds` must be <= `horizon` = 5, got 6"),
        (2.0, TypeError, "`rounds`"),
    ],
)
def test_rounds_out_of_range_is_rejected(rounds, error: type, match: str) -> None:
    for run in (lambda **kw: run_gossip_fed_ucb(epsilon=1.0, **kw), run_gossip_ucb):
        with pytest.raises(error, match=match):
            run(env=_ENV, graph=_k3(), horizon=5, rounds=rounds)
