"""Tests of Li & Song's CDP/CE-CDP/DDP/HDP/Single-MAB (algorithms/li_song*.py)."""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.environments.bernoulli import (
    BernoulliMAB,
    heterogeneous_bandit,
    homogeneous_bandit,
)
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab, run_hdp_mab, run_single_mab
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
from fedpriv.audit.claims.claim import LowerBoundEvidence, decide_verdict

EASY = BernoulliMAB([[0.9, 0.5, 0.4, 0.3, 0.2]] * 5)


def _env(m: int, k: int, seed: int = 0) -> BernoulliMAB:
    return homogeneous_bandit(m, k, np.random.default_rng(seed))


# --------------------------------------------------------------------- accounting
def test_cdp_per_message_guarantee_is_m_epsilon() -> None:
    # Done-when: M = 50, ε = 0.1 -> the accountant reports Mε = 5.0 (Theorem 1), and
    # the input ε = 0.1 is not the guarantee (Alg. 1 line 9 scales the noise by M).
    run = run_cdp_mab(_env(50, 5), horizon=20_000, epsilon=0.1, n_trials=2, seed=3)
    route, eps = run.message_epsilon()
    assert route == "pure"
    assert eps == pytest.approx(5.0, rel=1e-12)
    assert run.claimed_epsilon == pytest.approx(5.0, rel=1e-12)
    assert decide_verdict(run.claimed_epsilon, eps, None)[0] == "holds"
    # Read with the input ε as the guarantee, an upper bound of 5 > 0.1 alone shows
    # nothing; the messages' exact ε (pure Laplace: the lower bracket is exact) does.
    assert decide_verdict(run.epsilon, eps, None)[0] == "unresolved"
    exact = LowerBoundEvidence(
        epsilon=run.accountant.brackets.lower_bound(0.0, where={"channel": "message"}),
        kind="analytic",
        description="exact message ε",
    )
    assert exact.epsilon == pytest.approx(5.0, rel=1e-9)
    assert decide_verdict(run.epsilon, eps, None, analytic_lower=exact)[0] == "violated"
    # one ledger row per (trial, agent, active arm, epoch): every draw's ε is Mε
    ledger = run.accountant.ledger.draws
    assert np.allclose(ledger["epsilon"], 5.0, rtol=1e-12)
    assert not ledger.duplicated(["trial", "agent", "arm", "epoch"]).any()
    assert len(ledger) == 50 * sum(
        int(n) for n in run.accountant.ledger.charges.groupby(["trial", "epoch"]).size() // 50
    )


def test_partial_participation_guarantee_is_n_epsilon() -> None:
    run = run_cdp_mab(_env(50, 5), horizon=20_000, epsilon=0.1, seed=3, participation_rate=0.2)
    assert run.algorithm == "ce-cdp-mab"
    assert run.message_epsilon()[1] == pytest.approx(1.0, rel=1e-12)  # N = 10
    assert run.claimed_epsilon == pytest.approx(1.0, rel=1e-12)


def test_infinite_epsilon_is_named_non_private() -> None:
    run = run_cdp_mab(EASY, horizon=5_000, epsilon=math.inf, seed=0)
    assert run.message_epsilon()[1] == math.inf
    assert run.accountant.ledger.non_private_reasons()


def test_ddp_action_channel_is_separate_and_non_private() -> None:
    run = run_ddp_mab(_env(6, 4), make_graph("ring", 6), horizon=20_000, epsilon=0.5, seed=1)
    assert run.message_epsilon()[1] == pytest.approx(3.0, rel=1e-12)
    assert run.accountant.get_epsilon(0.0) == math.inf
    assert run.accountant.ledger.non_private_reasons(where={"channel": "action"})


# --------------------------------------------------------------------- bulk = slot by slot
def _reference_cdp(env, table, horizon, epsilon, seed):
    """Slot-by-slot CDP-MAB (Li & Song Alg. 1), natural logs, ceil(S)."""
    m, k = env.n_agents, env.n_arms
    root = as_seed_sequence(seed)
    rngs = [stream_rng(root, trial=0, agent=i, stream=Stream.NOISE) for i in range(m)]
    active, s_prev, t, r = list(range(k)), 0, 0, 0
    ybar, pulls = np.zeros((m, k)), np.zeros((m, k), dtype=int)
    uploads = []
    while t < horizon and len(active) > 1:
        r += 1
        n_i, gap = len(active), 2.0**-r
        l1 = math.log(8 * n_i * r * r * horizon)
        l2 = math.log(8 * k * r * r * horizon)
        s = max(8 * l1 / (m * gap**2), 8 * r * math.sqrt(2 * l2) / (m**1.5 * epsilon * gap))
        s = max(math.ceil(s), s_prev + 1)
        n = s - s_prev
        sums = np.zeros((m, k))
        for slot in range(n_i * n):
            if t == horizon:
                return pulls, uploads
            arm = active[slot % n_i]
            for i in range(m):
                sums[i, arm] += float(table.rewards(0, i, arm, pulls[i, arm]))
                pulls[i, arm] += 1
            t += 1
        for i in range(m):
            noise = rngs[i].laplace(0.0, 1.0 / (m * epsilon * n), size=n_i)
            ybar[i, active] = s_prev / s * ybar[i, active] + n / s * (sums[i, active] / n + noise)
            uploads.append(ybar[i, active].copy())
        agg = ybar[:, active].mean(axis=0)
        width = math.sqrt(l1 / (2 * m * s)) + r * math.sqrt(8 * l2) / (m**1.5 * epsilon * s)
        active = [a for a, v in zip(active, agg, strict=True) if agg.max() - v < 2 * width]
        s_prev = s
    best = active[0] if len(active) == 1 else None
    if best is not None:
        pulls[:, best] += horizon - t
    return pulls, uploads


def test_bulk_epochs_equal_slot_by_slot_reference() -> None:
    env = BernoulliMAB([[0.7, 0.5, 0.45, 0.2]] * 3)
    table = env.reward_table(11)
    run = run_cdp_mab(env, horizon=6_000, epsilon=1.0, seed=5, table=table, record=True)
    pulls, uploads = _reference_cdp(env, table, 6_000, 1.0, 5)
    np.testing.assert_array_equal(run.counts[0], pulls)
    sent = run.messages[run.messages["kind"] == "upload"]["content"].tolist()
    assert len(sent) == len(uploads)
    for a, b in zip(sent, uploads, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_actions_transcript_matches_counts() -> None:
    run = run_ddp_mab(
        _env(4, 5), make_graph("path", 4), horizon=3_000, epsilon=1.0, seed=2, record=True
    )
    actions = run.actions_array(0)
    assert (actions >= 0).all()
    for i in range(4):
        np.testing.assert_array_equal(np.bincount(actions[i], minlength=5), run.counts[0, i])


def test_regret_is_counts_times_gaps() -> None:
    env = _env(5, 8)
    run = run_cdp_mab(env, horizon=7_777, epsilon=0.3, n_trials=3, seed=4)
    assert (run.counts.sum(axis=(1, 2)) == 5 * 7_777).all()
    np.testing.assert_allclose(run.total_regret, np.einsum("jak,k->j", run.counts, env.gaps))
    curve = run.total_regret_at([0, 7_777])
    np.testing.assert_allclose(curve[:, 1], run.total_regret)
    assert run.final_regret.shape == (3, 5)
    np.testing.assert_allclose(run.final_regret, np.einsum("jak,k->ja", run.counts, env.gaps))
    np.testing.assert_allclose(run.final_regret.sum(axis=1), run.total_regret)
    assert (curve[:, 0] == 0).all()


# --------------------------------------------------------------------- elimination
@pytest.mark.statistical
def test_best_arm_never_eliminated_without_noise() -> None:
    """At ε = ∞ the best arm survives on E_R, and P(not E_R) <= 1/(2T) per trial
    (Hoeffding + union bound, li_song.md §3.4 Eq. 14–15, valid for our integer S(r)
    because C(r) is computed from it). With T = 1e8 and 200 trials the false-alarm
    rate is <= 200 / (2e8) = 1e-6."""
    run = run_cdp_mab(EASY, horizon=10**8, epsilon=math.inf, n_trials=200, seed=2024)
    assert not run.best_arm_eliminated.any()
    assert (run.active.sum(axis=1) == 1).all()  # and every trial finishes eliminating


# --------------------------------------------------------------------- partial participation
def test_partial_participation_uses_exactly_n_uploaders() -> None:
    run = run_cdp_mab(
        _env(10, 6),
        horizon=40_000,
        epsilon=1.0,
        n_trials=2,
        seed=7,
        participation_rate=0.35,
        c1=3.0,
        record=True,
    )
    assert run.setting["n_participants"] == 4  # ⌈0.35 * 10⌉
    uploads = run.messages[run.messages["kind"] == "upload"]
    per_round = uploads.groupby(["trial", "epoch"])["sender"].agg(["size", "nunique"])
    assert (per_round["size"] == 4).all() and (per_round["nunique"] == 4).all()
    assert len(per_round) == run.rounds.sum() > 1
    np.testing.assert_allclose(run.communication_cost, 3.0 * 4 * run.rounds)
    # the uploaders change between rounds (drawn afresh)
    sets = uploads.groupby(["trial", "epoch"])["sender"].apply(frozenset)
    assert sets.nunique() > 1


def test_round_limit_and_schedules() -> None:
    env = BernoulliMAB([[0.9, 0.8, 0.3]] * 10)  # Δ = 0.1
    paper = run_cdp_mab(env, horizon=200_000, epsilon=1.0, n_trials=4, seed=1, n_rounds=2)
    fixed = run_cdp_mab(
        env, horizon=200_000, epsilon=1.0, n_trials=4, seed=1, n_rounds=2, mode="corrected"
    )
    assert (paper.rounds <= 2).all() and (fixed.rounds <= 2).all()
    assert paper.setting["gap"] == pytest.approx(0.1)
    # Δ̃_R = Δ leaves the second arm (gap exactly Δ) alive: commit by the last aggregate
    # (Theorem 2's proof, Step 2); (Δ/2)^{r/R} eliminates it.
    assert (fixed.active.sum(axis=1) == 1).all()
    assert not fixed.best_arm_eliminated.any()


# --------------------------------------------------------------------- DDP / HDP
def test_ddp_on_complete_graph_equals_cdp() -> None:
    # Table I: on a fully connected graph t_delay = d_G - 1 = 0 and R_D = R_C.
    env = _env(8, 6)
    cdp = run_cdp_mab(env, horizon=30_000, epsilon=0.5, n_trials=2, seed=9)
    ddp = run_ddp_mab(
        env, make_graph("complete", 8), horizon=30_000, epsilon=0.5, n_trials=2, seed=9
    )
    np.testing.assert_array_equal(cdp.counts, ddp.counts)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_ddp_extra_regret_grows_with_diameter(seed: int) -> None:
    """Deterministic given the pinned seeds (no false alarms): CDP and DDP share the
    reward table and noise streams, so their exploration and eliminations are
    identical and DDP's extra regret is the local exploitation during t_delay =
    d_G - 1 slots per round (App. D, R_D(2); star: 1 slot, ring of 20: 9). Margin:
    ring's must exceed 2x star's. On an instance where every run ends in the commit
    phase (gaps >= 0.04), the total regret difference DDP - CDP is exactly that part
    (the delay only shortens the zero-regret commit phase)."""
    env = _env(20, 10, seed)
    kw = {"horizon": 100_000, "epsilon": 0.5, "seed": seed}
    cdp = run_cdp_mab(env, **kw)
    star = run_ddp_mab(env, make_graph("star", 20), **kw)
    ring = run_ddp_mab(env, make_graph("ring", 20), **kw)
    np.testing.assert_array_equal(star.rounds, cdp.rounds)
    assert ring.exploitation_regret[0] > 2 * star.exploitation_regret[0] > 0
    assert cdp.exploitation_regret[0] == 0
    easy = BernoulliMAB([[0.9, 0.86, 0.6, 0.5, 0.3]] * 20)
    kw["horizon"] = 1_000_000
    base = run_cdp_mab(easy, **kw)
    assert (base.active.sum(axis=1) == 1).all()
    extra = {g: run_ddp_mab(easy, make_graph(g, 20), **kw) for g in ("star", "ring")}
    for run in extra.values():
        np.testing.assert_allclose(run.total_regret - base.total_regret, run.exploitation_regret)
    assert extra["ring"].total_regret[0] >= extra["star"].total_regret[0] >= base.total_regret[0]


def test_hdp_singletons_equal_cdp_and_weighting() -> None:
    env = _env(6, 5)
    lone = [nx.empty_graph(1) for _ in range(6)]
    cdp = run_cdp_mab(env, horizon=30_000, epsilon=0.5, seed=3)
    hdp = run_hdp_mab(env, lone, horizon=30_000, epsilon=0.5, seed=3)
    assert hdp.setting["t_delay"] == 0
    np.testing.assert_array_equal(cdp.counts, hdp.counts)  # §VI-B2: Q = M is CDP
    assert hdp.message_epsilon()[1] == pytest.approx(3.0)
    comps = [make_graph("complete", 4), make_graph("path", 2)]
    het = heterogeneous_bandit(6, 5, np.random.default_rng(1), min_mismatch=2)
    runs = {
        a: run_hdp_mab(het, comps, horizon=30_000, epsilon=1.0, seed=3, record=True, aggregation=a)
        for a in ("unweighted", "weighted")
    }
    ups = {a: r.messages[r.messages["kind"] == "sink_upload"] for a, r in runs.items()}
    first = {a: np.array(u[u["epoch"] == 1]["content"].tolist()) for a, u in ups.items()}
    np.testing.assert_allclose(first["unweighted"], first["weighted"])  # same sink means
    y = runs["weighted"].messages
    y = y[(y["kind"] == "SAC") & (y["epoch"] == 1)].drop_duplicates("origin")
    assert set(y["origin"]) == {1, 2, 3, 5}  # every agent but the sinks 0 and 4


def test_hdp_sac_messages_follow_shortest_paths() -> None:
    comps = [make_graph("path", 5), make_graph("star", 3)]
    run = run_hdp_mab(_env(8, 4), comps, horizon=5_000, epsilon=1.0, seed=0, record=True)
    assert run.setting["sinks"] == [2, 5]
    sac = run.messages[(run.messages["kind"] == "SAC") & (run.messages["epoch"] == 1)]
    assert len(sac) == (2 + 1 + 1 + 2) + (1 + 1)  # one row per hop = sum sd(i, SA_q)
    assert run.setting["t_delay"] == 2  # radius of the path (Alg. 4 line 5)
    counter = run_hdp_mab(
        _env(8, 4), comps, horizon=5_000, epsilon=1.0, seed=0, delay_convention="counter"
    )
    assert counter.setting["t_delay"] == 1  # Alg. 4 line 4: max sd - 1


def test_single_mab_heterogeneous_is_worse_than_cdp() -> None:
    env = heterogeneous_bandit(5, 10, np.random.default_rng(0), min_mismatch=3)
    single = run_single_mab(env, horizon=100_000, epsilon=math.inf, n_trials=2, seed=0)
    cdp = run_cdp_mab(env, horizon=100_000, epsilon=math.inf, n_trials=2, seed=0)
    assert single.message_epsilon()[1] == math.inf
    assert (single.total_regret > 2 * cdp.total_regret).all()
    private = run_single_mab(env, horizon=10_000, epsilon=0.5, seed=0)
    assert private.message_epsilon()[1] == pytest.approx(0.5)


# --------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"participation_rate": 0.0}, "participation_rate"),
        ({"participation_rate": 1.5}, "participation_rate"),
        ({"n_rounds": 0}, "n_rounds"),
        ({"c1": -1.0}, "c1"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"horizon": 0}, "horizon"),
        ({"n_rounds": 2, "gap": 1.5}, "gap"),
        ({"n_rounds": 2, "mode": "bogus"}, "mode"),
    ],
)
def test_cdp_bad_input(kwargs: dict, match: str) -> None:
    args = {"horizon": 100, "epsilon": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        run_cdp_mab(EASY, **args)


def test_graph_and_cost_bad_input() -> None:
    env = _env(4, 3)
    split = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="connected"):
        run_ddp_mab(env, split, horizon=100, epsilon=1.0)
    with pytest.raises(ValueError, match="n_agents"):
        run_ddp_mab(env, make_graph("ring", 5), horizon=100, epsilon=1.0)
    with pytest.raises(ValueError, match="c2"):
        run_ddp_mab(env, make_graph("ring", 4), horizon=100, epsilon=1.0, c2=-0.5)
    with pytest.raises(ValueError, match="connected"):
        run_hdp_mab(env, [split], horizon=100, epsilon=1.0)
    with pytest.raises(ValueError, match="sum to n_agents"):
        run_hdp_mab(env, [make_graph("path", 3)], horizon=100, epsilon=1.0)
    with pytest.raises(ValueError, match="c1"):
        run_hdp_mab(env, [make_graph("path", 4)], horizon=100, epsilon=1.0, c1=-2)


def test_rewards_outside_unit_interval_rejected() -> None:
    @dataclasses.dataclass
    class Doubled:
        inner: object

        def rewards(self, *index):
            return 2.0 * self.inner.rewards(*index)

    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        run_cdp_mab(EASY, horizon=1_000, epsilon=1.0, table=Doubled(EASY.reward_table(0)))
