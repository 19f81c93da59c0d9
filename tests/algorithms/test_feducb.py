"""Centralized FedUCB (algorithms/feducb/centralized.py) and its sync helpers (feducb_sync.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit, LinearBanditTables
from fedpriv.algorithms.feducb.centralized import (
    SYNC_TIMING_REASON,
    run_feducb,
    run_feducb_fixed,
    run_feducb_nonprivate,
)
from fedpriv.algorithms.feducb.sync import (
    communication_bound,
    exploration_radius,
    private_threshold_for_syncs,
    recommended_threshold,
    syncs_for_order,
    threshold_for_syncs,
)
from fedpriv.algorithms.feducb.worlds import run_in_world
from fedpriv.privacy.errors import CapacityExceededError
from scipy import stats


def _tables(*, n_agents=3, n_arms=4, dim=3, n_trials=2, horizon=60, seed=1, **kwargs):
    spec = LinearBandit(n_agents=n_agents, n_arms=n_arms, dim=dim, **kwargs)
    return spec.sample(seed, n_trials=n_trials, horizon=horizon)


def _reference(tables, *, threshold, initial, shift_w, radius, releases=None, regularizer=None):
    """Slow Alg. 1 (recommended reading): explicit solves and slogdet per agent and round.

    ``releases[j][k]`` = (Û, û) of every agent at trial j's k-th sync (private), or
    None for the raw statistics plus ``regularizer · I`` (non-private).
    """
    block = tables.block(0, tables.horizon)
    n_trials, n_agents, horizon, _, d = block.contexts.shape
    actions = np.zeros((n_trials, n_agents, horizon), dtype=int)
    syncs = np.zeros((n_trials, horizon), dtype=bool)
    for j in range(n_trials):
        s_gram, s_vec = initial * np.eye(d), np.zeros(d)
        gram = np.zeros((n_agents, d, d))
        vec = np.zeros((n_agents, d))
        total_gram = np.zeros((n_agents, d, d))
        total_vec = np.zeros((n_agents, d))
        dt, k = 0, 0
        for t in range(horizon):
            for i in range(n_agents):
                v = s_gram + gram[i]
                theta = np.linalg.solve(v, s_vec + vec[i])
                beta = radius(np.linalg.slogdet(v)[1])
                xs = block.contexts[j, i, t]
                widths = np.sqrt(np.einsum("kd,kd->k", xs, np.linalg.solve(v, xs.T).T))
                arm = int(np.argmax(xs @ theta + beta * widths))
                x, y = xs[arm], block.rewards[j, i, t, arm]
                actions[j, i, t] = arm
                gram[i] += np.outer(x, x)
                vec[i] += y * x
                total_gram[i] += np.outer(x, x)
                total_vec[i] += y * x
            dt += 1
            stat = [
                dt
                * (
                    np.linalg.slogdet(s_gram + gram[i] + shift_w * np.eye(d))[1]
                    - np.linalg.slogdet(s_gram)[1]
                )
                for i in range(n_agents)
            ]
            if max(stat) >= threshold:
                syncs[j, t] = True
                if releases is None:
                    s_gram = regularizer * np.eye(d) + total_gram.sum(axis=0)
                    s_vec = total_vec.sum(axis=0)
                else:
                    s_gram = releases[j][0][k].sum(axis=0)
                    s_vec = releases[j][1][k].sum(axis=0)
                    k += 1
                gram[:] = 0.0
                vec[:] = 0.0
                dt = 0
    return actions, syncs


def test_nonprivate_matches_a_slow_reference():
    tables = _tables(horizon=50)
    run = run_feducb_nonprivate(tables, threshold=3.0, regularizer=1.0, record=True)
    d, lam, alpha = 3, 1.0, 0.1

    def radius(logdet):  # OFUL: σ √(2 ln(2/α) + log det V − d ln λ) + S √λ
        return 0.5 * math.sqrt(max(2 * math.log(2 / alpha) + logdet - d * math.log(lam), 0)) + 1.0

    actions, syncs = _reference(
        tables, threshold=3.0, initial=lam, shift_w=0.0, radius=radius, regularizer=lam
    )
    assert syncs.sum() > 3
    np.testing.assert_array_equal(run.sync_rounds, syncs)
    np.testing.assert_array_equal(run.transcript.actions, actions)


def test_private_matches_a_slow_reference_given_the_releases():
    tables = _tables(horizon=40)
    run = run_feducb(
        tables,
        epsilon=50.0,
        delta=0.1,
        threshold=20.0,
        beta="tuned",
        beta_value=0.3,
        record=True,
        seed=4,
    )
    cal = run.calibration
    releases = [
        (run.transcript.releases_gram[j], run.transcript.releases_vector[j]) for j in range(2)
    ]
    actions, syncs = _reference(
        tables,
        threshold=20.0,
        initial=3 * cal.rho_min,
        shift_w=3 * (cal.rho_max - cal.rho_min),
        radius=lambda logdet: 0.3,
        releases=releases,
    )
    assert syncs.sum() >= 2
    np.testing.assert_array_equal(run.sync_rounds, syncs)
    np.testing.assert_array_equal(run.transcript.actions, actions)
    # the controller broadcasts S = Σ_i Û_i, s = Σ_i û_i
    for j in range(2):
        np.testing.assert_allclose(run.transcript.broadcasts_gram[j], releases[j][0].sum(axis=1))
        np.testing.assert_allclose(run.transcript.broadcasts_vector[j], releases[j][1].sum(axis=1))


def test_accountant_reports_gdp_mu_0083_for_the_privatizer_as_the_algorithm_opens_it():
    # Issue 4: paper's σ_N at ε = 1, δ = 0.1, L = B = 1, substitution of one (x, y) pair.
    # μ = ε/(4 ln(2/δ)) = 1/(4 ln 20) (derivation in tests/privacy/test_matrix_tree.py).
    mu = 1.0 / (4.0 * math.log(20.0))
    run = run_feducb(_tables(n_agents=10, dim=10, horizon=20), epsilon=1.0, delta=0.1)
    assert run.accountant.neighboring_relation.value == "replace_one_context_reward"
    for epsilon in (0.05, 0.3):
        expected = stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(
            -epsilon / mu - mu / 2
        )
        delta = run.accountant.get_delta(epsilon, where={"channel": "privatizer"})
        assert delta == pytest.approx(expected, rel=1e-6)
    assert run.accountant_epsilon(0.1)[1] <= 1.0
    # the adaptive sync timing is named as an unaccounted (raw) channel
    assert run.accountant.ledger.non_private_reasons() == [SYNC_TIMING_REASON]
    assert math.isinf(run.accountant.get_epsilon(0.1))
    # one ledger row per node draw: n syncs x M agents x trials
    assert run.accountant.ledger.n_draws == int(run.n_syncs.sum()) * 10


def _sync_channel_pair():
    tables = _tables(n_agents=4, n_arms=5, dim=3, n_trials=20, horizon=300, seed=1)
    new_set = np.zeros((5, 3))
    new_set[:, 0] = 1.0  # agent 0's first user: every action along e1
    return tables, tables.substitute(agent=0, t=0, contexts=new_set)


def test_sync_timing_channel_adaptive_vs_fixed():
    # Shared seed (same environment and noise streams), one context set of agent 0
    # changed at round 0. The adaptive trigger reads raw data, the fixed schedule not.
    tables, neighbor = _sync_channel_pair()
    runs = {
        "nonprivate": lambda tab: run_feducb_nonprivate(tab, threshold=5.0),
        "private eps=1e4": lambda tab: run_feducb(tab, epsilon=1e4, delta=0.1, threshold=50.0),
    }
    for name, runner in runs.items():
        changed = np.any(runner(tables).sync_rounds != runner(neighbor).sync_rounds, axis=1)
        assert changed.any(), name
    for epsilon in (1.0, 1e4):
        a = run_feducb_fixed(tables, epsilon=epsilon, delta=0.1, sync_every=10)
        b = run_feducb_fixed(neighbor, epsilon=epsilon, delta=0.1, sync_every=10)
        np.testing.assert_array_equal(a.sync_rounds, b.sync_rounds)
        assert a.accountant.ledger.non_private_reasons() == []  # nothing unaccounted
    nonprivate = run_feducb_nonprivate(tables, sync_every=10)
    np.testing.assert_array_equal(
        nonprivate.sync_rounds, run_feducb_nonprivate(neighbor, sync_every=10).sync_rounds
    )


def test_fixed_schedule_syncs_every_b_rounds():
    run = run_feducb_fixed(_tables(horizon=50), epsilon=1.0, delta=0.1, sync_every=7)
    expected = np.zeros(50, dtype=bool)
    expected[6::7] = True
    np.testing.assert_array_equal(run.sync_rounds, np.broadcast_to(expected, (2, 50)))
    assert run.tree_depth == 1 + math.ceil(math.log2(50 // 7))
    assert math.isnan(run.threshold)


def test_syncs_scale_with_threshold_as_documented():
    tables = _tables(n_agents=5, n_arms=5, dim=4, n_trials=2, horizon=200)
    previous = math.inf
    for threshold in (1.0, 5.0, 20.0, 80.0):
        run = run_feducb_nonprivate(tables, threshold=threshold, regularizer=1.0)
        bound = communication_bound(threshold, horizon=200, dim=4, rho_min=0.2, rho_max=0.2)
        assert np.all(run.n_syncs <= bound)  # Prop. 1 (exact for the non-private trigger)
        assert np.all(run.n_syncs <= previous)
        previous = run.n_syncs.max()
    assert np.all(run_feducb_nonprivate(tables, threshold=0.0).n_syncs == 200)
    for target in (10, 40):  # private: the 2MΛ shift sets the pace (feducb_sync docstring)
        threshold = private_threshold_for_syncs(target, horizon=200, dim=4)
        run = run_feducb(tables, epsilon=1.0, delta=0.1, threshold=threshold)
        assert np.all((run.n_syncs >= 0.6 * target) & (run.n_syncs <= target + 1))


def test_sync_helpers():
    # Theorem 1: D = 2Td/(ln X + 1), X = ρmax/ρmin + T L²/(d ρmin) = 3 + 100/20 = 8
    assert recommended_threshold(horizon=100, dim=2, rho_min=10.0, rho_max=30.0) == pytest.approx(
        400 / (math.log(8.0) + 1)
    )
    threshold = threshold_for_syncs(30, horizon=1000, dim=5, rho_min=1.0, rho_max=3.0)
    assert communication_bound(
        threshold, horizon=1000, dim=5, rho_min=1.0, rho_max=3.0
    ) == pytest.approx(30)
    assert syncs_for_order("MlogT", n_agents=10, horizon=2000) == math.ceil(10 * math.log(2000))
    assert syncs_for_order("M1.5", n_agents=100, horizon=10**4) == 1000
    assert syncs_for_order("MT", n_agents=3, horizon=50) == 50
    with pytest.raises(ValueError, match="`n_syncs` must be > 4"):
        threshold_for_syncs(4, horizon=100, dim=2, rho_min=1.0, rho_max=1.0)
    with pytest.raises(ValueError, match="`order` must be one of"):
        syncs_for_order("M2", n_agents=3, horizon=50)
    # Prop. 2 as printed has d·log det V; the default corrects it (Abbasi-Yadkori et al. 2011, Thm. 1).
    corrected = exploration_radius(np.array(5.0), dim=2, n_agents=1, rho_min=1.0, privacy_term=0.0)
    literal = exploration_radius(
        np.array(5.0), dim=2, n_agents=1, rho_min=1.0, privacy_term=0.0, literal_d_factor=True
    )
    assert corrected == pytest.approx(0.5 * math.sqrt(2 * math.log(20) + 5.0))
    assert literal == pytest.approx(0.5 * math.sqrt(2 * math.log(20) + 10.0))


def test_capacity_and_bad_input():
    tables = _tables(horizon=30)
    with pytest.raises(CapacityExceededError, match="tree holds 2 leaves"):
        run_feducb(tables, epsilon=1.0, delta=0.1, threshold=0.0, n_syncs=2)
    stopped = run_feducb(
        tables, epsilon=1.0, delta=0.1, threshold=0.0, n_syncs=2, on_capacity="stop"
    )
    assert np.all(stopped.n_syncs == 2)
    with pytest.raises(ValueError, match="`beta_value` must be in"):
        run_feducb(tables, epsilon=1.0, delta=0.1, beta="tuned")
    with pytest.raises(ValueError, match="`beta` must be one of"):
        run_feducb(tables, epsilon=1.0, delta=0.1, beta="Q")
    with pytest.raises(ValueError, match="`threshold` must be >= 0"):
        run_feducb(tables, epsilon=1.0, delta=0.1, threshold=-1.0)
    with pytest.raises(ValueError, match="`sync_every` must be >= 1"):
        run_feducb_fixed(tables, epsilon=1.0, delta=0.1, sync_every=0)
    with pytest.raises(ValueError, match="`epsilon` must be in"):
        run_feducb(tables, epsilon=0.0, delta=0.1)
    with pytest.raises(ValueError, match="`delta` must be in"):
        run_feducb(tables, epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="`mode` must be one of"):
        run_feducb(tables, epsilon=1.0, delta=0.1, mode="loose")
    with pytest.raises(ValueError, match="`on_capacity` must be one of"):
        run_feducb(tables, epsilon=1.0, delta=0.1, on_capacity="ignore")
    with pytest.raises(ValueError, match="at most one of"):
        run_feducb_nonprivate(tables, threshold=1.0, sync_every=3)
    with pytest.raises(TypeError, match="LinearBanditTables"):
        run_feducb(np.zeros(3), epsilon=1.0, delta=0.1)


def test_transcript_shapes_and_determinism():
    tables = _tables(horizon=30)
    a = run_feducb(tables, epsilon=1.0, delta=0.1, threshold=30.0, record=True, seed=3)
    b = run_feducb(tables, epsilon=1.0, delta=0.1, threshold=30.0, record=True, seed=3)
    c = run_in_world(
        run_feducb, tables, epsilon=1.0, delta=0.1, threshold=30.0, record=True, seed=3, side=1
    )
    same = run_in_world(
        run_feducb, tables, epsilon=1.0, delta=0.1, threshold=30.0, record=True, seed=3, side=0
    )
    np.testing.assert_array_equal(same.regret_curve, a.regret_curve)
    np.testing.assert_array_equal(same.transcript.releases_gram[0], a.transcript.releases_gram[0])
    with pytest.raises(ValueError, match="`run` must be one of"):
        run_in_world(run_feducb_nonprivate, tables, side=1)
    with pytest.raises(ValueError, match="`side` must be >= 0"):
        run_in_world(run_feducb, tables, epsilon=1.0, delta=0.1, side=-1)
    tr = a.transcript
    assert tr.requests.shape == tr.actions.shape == tr.rewards.shape == (2, 3, 30)
    for j in range(2):
        n = int(a.n_syncs[j])
        assert tr.releases_gram[j].shape == (n, 3, 3, 3) and tr.broadcasts_vector[j].shape == (n, 3)
        np.testing.assert_array_equal(tr.sync_times[j], a.sync_times[j])
        # a sync happens exactly when some agent requests one
        np.testing.assert_array_equal(tr.requests[j].any(axis=0), a.sync_rounds[j])
    np.testing.assert_array_equal(a.regret_curve, b.regret_curve)
    np.testing.assert_array_equal(tr.releases_gram[0], b.transcript.releases_gram[0])
    assert not np.allclose(tr.releases_gram[0], c.transcript.releases_gram[0])  # fresh noise
    # regret is the pseudo-regret of the recorded actions
    block = tables.block(0, 30)
    chosen = np.take_along_axis(block.means, tr.actions[..., None].astype(int), -1)[..., 0]
    per_agent = (block.means.max(-1) - chosen).sum(-1)
    np.testing.assert_allclose(a.final_regret, per_agent)
    np.testing.assert_allclose(a.regret_curve[:, -1], per_agent.mean(1))


def test_shared_users_compose_over_agents():
    # footnote 4: one user at all M agents: the M trees compose, μ grows by √M.
    tables = _tables(n_agents=4, horizon=10, shared_users=True)
    run = run_feducb(tables, epsilon=1.0, delta=0.1)
    assert run.accountant.neighboring_relation.value == "user_at_all_agents"
    mu = 2.0 / (4.0 * math.log(20.0))  # √4 · 1/(4 ln 20)
    expected = stats.norm.cdf(-0.3 / mu + mu / 2) - math.exp(0.3) * stats.norm.cdf(
        -0.3 / mu - mu / 2
    )
    assert run.accountant.get_delta(0.3, where={"channel": "privatizer"}) == pytest.approx(
        expected, rel=1e-6
    )


@pytest.mark.statistical
def test_regret_sanity():
    """Seeded sanity check (fixed seeds, no resampling): regret falls with ε and the
    non-private algorithm beats the private one. Margins observed at these seeds are
    large (see the asserted factors); a code change that breaks learning fails it."""
    tables = _tables(n_agents=10, n_arms=10, dim=5, n_trials=4, horizon=400, seed=2)
    kwargs = {"delta": 0.1, "beta": "tuned", "beta_value": 0.1, "threshold": 100.0}
    regret = {
        eps: run_feducb(tables, epsilon=eps, **kwargs).regret_curve[:, -1].mean()
        for eps in (0.1, 10.0, 1e3)
    }
    nonprivate = (
        run_feducb_nonprivate(tables, beta="tuned", beta_value=0.1).regret_curve[:, -1].mean()
    )
    assert regret[1e3] < regret[10.0] < regret[0.1]
    assert nonprivate < regret[10.0]
    assert nonprivate < 0.5 * regret[0.1]


def test_transcript_groups_each_trials_syncs_in_order():
    """Trials that sync at different rounds each get their own releases, in round order:
    the broadcast of sync k is the sum of that sync's releases (plus λ I without noise),
    and a trial without a sync gets empty arrays of the documented shapes."""
    tables = _tables(n_trials=4, horizon=40, seed=7)
    run = run_feducb_nonprivate(tables, threshold=3.0, record=True, seed=2)
    tr = run.transcript
    assert len({tuple(np.flatnonzero(row)) for row in run.sync_rounds}) > 1  # they differ
    for j in range(4):
        n = int(run.n_syncs[j])
        np.testing.assert_array_equal(tr.sync_times[j], np.flatnonzero(run.sync_rounds[j]))
        assert tr.releases_gram[j].shape == (n, 3, 3, 3)
        assert tr.releases_vector[j].shape == (n, 3, 3)
        assert tr.broadcasts_gram[j].shape == (n, 3, 3)
        np.testing.assert_array_equal(
            tr.broadcasts_gram[j], tr.releases_gram[j].sum(axis=1) + 1.0 * np.eye(3)
        )
        np.testing.assert_array_equal(tr.broadcasts_vector[j], tr.releases_vector[j].sum(axis=1))
    # each trial's arrays are that trial's own: the trial run alone (no noise) gives them
    block = tables.block(0, tables.horizon)
    for j in range(4):
        alone = run_feducb_nonprivate(
            LinearBanditTables.from_arrays(
                tables.spec,
                block.contexts[j : j + 1],
                block.rewards[j : j + 1],
                tables.theta[j : j + 1],
            ),
            threshold=3.0,
            record=True,
            seed=2,
        ).transcript
        for field in ("releases_gram", "releases_vector", "broadcasts_gram", "broadcasts_vector"):
            np.testing.assert_allclose(getattr(alone, field)[0], getattr(tr, field)[j], rtol=1e-12)
    silent = run_feducb(tables, epsilon=5.0, delta=0.1, threshold=1e300, record=True, seed=2)
    for j in range(4):
        assert silent.transcript.releases_gram[j].shape == (0, 3, 3, 3)
        assert silent.transcript.broadcasts_vector[j].shape == (0, 3)


@pytest.mark.parametrize("fixed", [False, True])
@pytest.mark.parametrize("side", [0, 1])
def test_a_run_stopped_at_the_first_syncs_is_the_full_runs_prefix(fixed, side):
    """``until_first_sync``: every trial's first sync time and first broadcast and the
    rounds played are bit for bit the full run's; later rounds are not played."""
    tables = _tables(n_trials=4, horizon=40, seed=7)
    run, options = (
        (run_feducb_fixed, {"sync_every": 8}) if fixed else (run_feducb, {"threshold": 12.0})
    )
    kwargs = dict(epsilon=5.0, delta=0.1, record=True, seed=3, side=side, **options)
    full = run_in_world(run, tables, **kwargs)
    short = run_in_world(run, tables, until_first_sync=True, **kwargs)
    played = short.setting["rounds_played"]
    assert played == 1 + max(int(times[0]) for times in full.sync_times) < tables.horizon
    assert "rounds_played" not in full.setting
    np.testing.assert_array_equal(
        short.sync_rounds, np.where(np.arange(40) < played, full.sync_rounds, False)
    )
    np.testing.assert_array_equal(short.regret_curve[:, :played], full.regret_curve[:, :played])
    assert np.isnan(short.regret_curve[:, played:]).all()
    np.testing.assert_array_equal(
        short.transcript.actions[..., :played], full.transcript.actions[..., :played]
    )
    for j in range(4):
        n = short.sync_times[j].size
        for field in ("releases_gram", "releases_vector", "broadcasts_gram", "broadcasts_vector"):
            np.testing.assert_array_equal(
                getattr(short.transcript, field)[j], getattr(full.transcript, field)[j][:n]
            )


@pytest.mark.parametrize("side", [0, 1])
def test_a_decentralized_run_stopped_at_the_first_requests_is_the_full_runs_prefix(side):
    """Decentralized, adaptive schedule: the requests and actions of the rounds played
    are bit for bit the full run's, and every trial has made its first request."""
    from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
    from fedpriv.algorithms.networks.graphs import make_graph

    tables = _tables(n_trials=4, horizon=40, seed=7)
    kwargs = dict(gamma=2, epsilon=1.0, delta=0.1, threshold=20.0, record=True, seed=5, side=side)
    graph = make_graph("path", 3)
    full = run_in_world(run_feducb_decentralized, tables, graph, **kwargs)
    short = run_in_world(run_feducb_decentralized, tables, graph, until_first_sync=True, **kwargs)
    played = short.setting["rounds_played"]
    first = full.transcript.requests.groupby("trial")["t"].min()
    assert len(first) == 4 and played == 1 + int(first.max()) < tables.horizon
    kept = full.transcript.requests[full.transcript.requests["t"] < played]
    np.testing.assert_array_equal(
        short.transcript.requests.to_numpy(), kept.reset_index(drop=True).to_numpy()
    )
    np.testing.assert_array_equal(
        short.transcript.actions[..., :played], full.transcript.actions[..., :played]
    )
    np.testing.assert_array_equal(short.regret_curve[:, :played], full.regret_curve[:, :played])
    assert np.isnan(short.regret_curve[:, played:]).all()
    with pytest.raises(ValueError, match="`until_first_sync` stops at requests"):
        run_in_world(
            run_feducb_decentralized,
            tables,
            graph,
            gamma=2,
            epsilon=1.0,
            delta=0.1,
            schedule="fixed",
            sync_every=4,
            side=0,
            until_first_sync=True,
        )
