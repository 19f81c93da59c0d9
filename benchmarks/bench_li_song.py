"""Li & Song's CDP-MAB (M = 50, K = 100) against lean numpy loops, and DDP-MAB.

Run: ``PYTHONPATH=. python benchmarks/bench_li_song.py [--trials N] [--horizon T]``.

Regret path (issue 36, item 1): ``run_cdp_mab(..., rewards="binomial")`` draws each
epoch's round-robin reward sum of one agent and arm as one ``Binomial(n_r, μ)`` and
releases every epoch mean through ``privacy/`` (charged), noise from one run-wide
generator. Anchor, measured in the same run: :func:`per_epoch_cdp_mab`, the per-epoch
numpy loop a careful user would write (per trial, one Binomial array and one Laplace
array per epoch, the same ``S(r)``, ``C(r)``, elimination and commit, no accountant).
Prints both CPU times, the ratio (target <= 2), both mean regrets with their standard
errors and the two-sample Kolmogorov–Smirnov p-value of the two regret samples.

Audit path (the default, ``rewards="table"``): epochs are simulated in bulk
(li_song_core docstring): exploration rewards are read from the counter-based table
(``RewardTable.pull_sums``: the trial/agent/arm part of each entry's hash once per
(agent, arm), one mix per pull), so every reward has the identity coupled audit runs
need; exploitation and commit slots cost only a count update. It is printed against
the same per-epoch anchor and against the earlier anchor (issue 23, item 4): a per-pull
numpy loop of the same algorithm (Alg. 1 of Li & Song, JSAC 2022: the same ``S(r)``,
``C(r)``, Laplace scale ``1/(M ε n_r)`` per (agent, arm, epoch), the same round-robin
pulls and elimination rule), one slot at a time, each slot one vectorized Bernoulli
draw over the agents from a numpy Generator over (trial, agent) (trials in lock step
while their schedules agree), noise drawn with numpy directly (no accountant), and the
commit phase as one count update. The anchors have the same noise and regret
distribution, not the same streams. Every time is CPU seconds of this process
(``time.process_time``: user + system, best of ``--repeats``; the README's Speed table
quotes CPU time, which a shared machine's other jobs do not inflate), with the wall
seconds of the same best run beside the main ones. Asserts nothing (benchmarks are
scripts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedpriv.algorithms.environments.bernoulli import RewardTable, homogeneous_bandit
from fedpriv.algorithms.li_song.core import confidence_width, sample_target
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab
from fedpriv.algorithms.networks.graphs import make_graph
from scipy import stats


def per_pull_cdp_mab(
    means: np.ndarray, *, horizon: int, epsilon: float, n_trials: int, seed: int
) -> np.ndarray:
    """The anchor: CDP-MAB one pull slot at a time; returns the regret per trial.

    Trials that share an epoch's schedule (same active-set size and ``S(r-1)``) run in
    lock step: one ``rng.random((trials, agents))`` draw per slot.
    """
    rng = np.random.default_rng(seed)
    n_agents, n_arms = means.shape
    gaps = means.mean(axis=0).max() - means.mean(axis=0)
    active = [np.arange(n_arms) for _ in range(n_trials)]
    ybar = np.zeros((n_trials, n_agents, n_arms))
    counts = np.zeros((n_trials, n_arms), dtype=np.int64)  # pulls per arm, all agents
    s_prev = np.zeros(n_trials, dtype=np.int64)
    t = np.zeros(n_trials, dtype=np.int64)
    live = np.ones(n_trials, dtype=bool)
    r = 0
    while live.any():
        r += 1
        groups: dict[tuple[int, int], list[int]] = {}
        for b in np.flatnonzero(live):
            groups.setdefault((active[b].size, int(s_prev[b])), []).append(int(b))
        for (n_i, s_old), rows in groups.items():
            s_new = max(
                int(
                    np.ceil(
                        sample_target(
                            n_i,
                            r,
                            n_arms=n_arms,
                            horizon=horizon,
                            divisor=n_agents,
                            epsilon=epsilon,
                            target_gap=2.0**-r,
                        )
                    )
                ),
                s_old + 1,
            )
            n_r = s_new - s_old
            arms = np.stack([active[b] for b in rows])  # (g, n_i)
            table = np.ascontiguousarray(means.T[arms].transpose(1, 0, 2))  # (n_i, g, M)
            counts_ep = np.zeros((n_i, len(rows), n_agents), dtype=np.int64)
            draw = np.empty((len(rows), n_agents))
            slots = int(min(n_i * n_r, horizon - t[rows[0]]))
            for slot in range(slots):  # round-robin, one slot at a time
                j = slot % n_i
                rng.random(out=draw)
                counts_ep[j] += draw < table[j]
            sums = counts_ep.transpose(1, 0, 2).astype(np.float64)  # (g, n_i, M)
            for g, b in enumerate(rows):
                counts[b, arms[g]] += n_agents * (slots // n_i)
                counts[b, arms[g][: slots % n_i]] += n_agents
                t[b] += slots
            if slots < n_i * n_r:
                live[rows] = False  # truncated epoch: no release
                continue
            noise = rng.laplace(0.0, 1.0 / (n_agents * epsilon * n_r), sums.shape)
            noisy = np.swapaxes(sums / n_r + noise, 1, 2)  # (g, M, n_i)
            width = confidence_width(
                n_i,
                r,
                n_arms=n_arms,
                horizon=horizon,
                divisor=n_agents,
                epsilon=epsilon,
                n_samples=s_new,
            )
            for g, b in enumerate(rows):
                ybar[b][:, arms[g]] = (s_old * ybar[b][:, arms[g]] + n_r * noisy[g]) / s_new
                agg = ybar[b][:, arms[g]].mean(axis=0)
                active[b] = arms[g][agg.max() - agg < 2.0 * width]
                s_prev[b] = s_new
                live[b] = t[b] < horizon and active[b].size > 1
    for b in range(n_trials):  # commit (Alg. 1 line 17)
        if t[b] < horizon:
            agg = ybar[b][:, active[b]].mean(axis=0)
            counts[b, active[b][np.argmax(agg)]] += n_agents * (horizon - t[b])
    return counts @ gaps


def per_epoch_cdp_mab(
    means: np.ndarray, *, horizon: int, epsilon: float, n_trials: int, seed: int
) -> np.ndarray:
    """The lean anchor: CDP-MAB one epoch at a time; returns the regret per trial.

    What a careful user would write (issue 36, item 1): per trial, each epoch draws the
    round-robin reward sums of every agent and active arm as one
    ``Binomial(n_r, mu_{i,k})`` array (the sum of ``n_r`` Bernoulli rewards), adds the
    same Laplace noise ``Lap(1/(M eps n_r))`` with numpy (no accountant), and applies
    the same ``S(r)``, ``C(r)``, elimination (Alg. 1 lines 5-15 of Li & Song, JSAC
    2022) and commit (line 17). One numpy Generator per call.
    """
    rng = np.random.default_rng(seed)
    n_agents, n_arms = means.shape
    global_means = means.mean(axis=0)
    gaps = global_means.max() - global_means
    regret = np.empty(n_trials)
    for b in range(n_trials):
        active = np.arange(n_arms)
        ybar = np.zeros((n_agents, n_arms))
        counts = np.zeros(n_arms, dtype=np.int64)  # pulls per arm, all agents
        s_prev = t = r = 0
        while t < horizon and active.size > 1:
            r += 1
            n_i = active.size
            s_real = sample_target(
                n_i,
                r,
                n_arms=n_arms,
                horizon=horizon,
                divisor=n_agents,
                epsilon=epsilon,
                target_gap=2.0**-r,
            )
            s_new = max(int(np.ceil(s_real)), s_prev + 1)
            n_r = s_new - s_prev
            if n_i * n_r > horizon - t:  # truncated epoch: round-robin, no release
                q, rem = divmod(horizon - t, n_i)
                counts[active] += n_agents * q
                counts[active[:rem]] += n_agents
                t = horizon
                break
            sums = rng.binomial(n_r, means[:, active])  # (M, n_i)
            noisy = sums / n_r + rng.laplace(0.0, 1.0 / (n_agents * epsilon * n_r), sums.shape)
            ybar[:, active] = (s_prev * ybar[:, active] + n_r * noisy) / s_new
            counts[active] += n_agents * n_r
            t += n_i * n_r
            width = confidence_width(
                n_i,
                r,
                n_arms=n_arms,
                horizon=horizon,
                divisor=n_agents,
                epsilon=epsilon,
                n_samples=s_new,
            )
            agg = ybar[:, active].mean(axis=0)
            active = active[agg.max() - agg < 2.0 * width]
            s_prev = s_new
        if t < horizon:  # commit (Alg. 1 line 17)
            agg = ybar[:, active].mean(axis=0)
            counts[active[np.argmax(agg)]] += n_agents * (horizon - t)
        regret[b] = counts @ gaps
    return regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = homogeneous_bandit(50, 100, np.random.default_rng(args.seed))

    def best_of(call):
        """Best CPU seconds of ``--repeats`` calls, its output and that call's wall seconds."""
        times, out = [], None
        for _ in range(args.repeats):
            started, started_wall = time.process_time(), time.perf_counter()
            out = call()
            times.append((time.process_time() - started, time.perf_counter() - started_wall))
        cpu, wall = min(times)
        return cpu, out, wall

    def cdp(rewards="table"):
        return run_cdp_mab(
            env,
            horizon=args.horizon,
            epsilon=0.1,
            n_trials=args.trials,
            seed=args.seed,
            rewards=rewards,
        )

    def lean():
        return per_epoch_cdp_mab(
            env.arm_means, horizon=args.horizon, epsilon=0.1, n_trials=args.trials, seed=args.seed
        )

    def sem(x):
        return x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else np.nan

    cdp()  # warm-up
    cdp("binomial")
    lean()
    fast_s, fast, fast_wall = best_of(lambda: cdp("binomial"))
    lean_s, lean_regret, lean_wall = best_of(lean)
    print(
        f"cdp-mab (eps=0.1) M=50 K=100 T={args.horizon} trials={args.trials}, CPU seconds "
        f"(wall), best of {args.repeats}: regret path (rewards='binomial') {fast_s:.3f} s "
        f"({fast_wall:.3f} s), per-epoch numpy loop (anchor) {lean_s:.3f} s "
        f"({lean_wall:.3f} s), ratio {fast_s / lean_s:.2f} (target <= 2); mean regret "
        f"{fast.total_regret.mean():.0f} ± {sem(fast.total_regret):.0f} vs anchor "
        f"{lean_regret.mean():.0f} ± {sem(lean_regret):.0f} (standard errors), KS p = "
        f"{stats.ks_2samp(fast.total_regret, lean_regret).pvalue:.2f}"
    )
    seconds, run, wall = best_of(cdp)
    anchor_s, anchor_regret, anchor_wall = best_of(
        lambda: per_pull_cdp_mab(
            env.arm_means, horizon=args.horizon, epsilon=0.1, n_trials=args.trials, seed=args.seed
        )
    )
    fast_read = RewardTable.pull_sums
    RewardTable.pull_sums = lambda self, *a, **k: None  # type: ignore[method-assign]
    try:
        before_s, before, _ = best_of(cdp)  # the read before issue 23
    finally:
        RewardTable.pull_sums = fast_read  # type: ignore[method-assign]
    print(
        f"audit path (rewards='table', per-reward identity): {seconds:.3f} s ({wall:.3f} s), "
        f"{seconds / lean_s:.1f}x the per-epoch anchor; per-pull numpy loop "
        f"{anchor_s:.3f} s ({anchor_wall:.3f} s), ratio {seconds / anchor_s:.2f}; "
        f"entry-by-entry read (before issue 23) {before_s:.3f} s, ratio "
        f"{before_s / anchor_s:.2f}, same regret bit for bit: "
        f"{np.array_equal(before.total_regret, run.total_regret)}; "
        f"regret {run.total_regret.mean():.0f} vs per-pull anchor "
        f"{anchor_regret.mean():.0f}; rounds {run.rounds.mean():.1f}"
    )

    def ddp():
        return run_ddp_mab(
            env,
            make_graph("ring", 50),
            horizon=args.horizon,
            epsilon=0.1,
            n_trials=args.trials,
            seed=args.seed,
        )

    ddp()
    seconds, run, wall = best_of(ddp)
    agent_rounds = args.trials * env.n_agents * args.horizon
    print(
        f"ddp-mab ring (eps=0.1): {seconds:.2f} s CPU ({wall:.2f} s wall), "
        f"{agent_rounds / seconds / 1e6:.2f} M agent-rounds/s, "
        f"rounds {run.rounds.mean():.1f}, regret {run.total_regret.mean():.0f}"
    )


if __name__ == "__main__":
    main()
