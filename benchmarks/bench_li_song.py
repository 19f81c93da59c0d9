"""Li & Song's CDP-MAB (M = 50, K = 100) against a lean per-pull numpy loop, and DDP-MAB.

Run: ``PYTHONPATH=. python benchmarks/bench_li_song.py [--trials N] [--horizon T]``.
Epochs are simulated in bulk (li_song_core docstring): exploration rewards are read
from the counter-based table (``RewardTable.pull_sums``: the trial/agent/arm part of
each entry's hash once per (agent, arm), one mix per pull), exploitation and commit
slots cost only a count update.

Anchor (issue 23, item 4), measured in the same run: a per-pull numpy loop of the same
algorithm (Alg. 1 of Li & Song, JSAC 2022: the same ``S(r)``, ``C(r)``, Laplace scale
``1/(M ε n_r)`` per (agent, arm, epoch), the same round-robin pulls and elimination
rule), one slot at a time, each slot one vectorized Bernoulli draw over the agents from
a numpy Generator over (trial, agent) (trials in lock step while their schedules
agree), noise drawn with numpy directly (no accountant), and the commit phase as one
count update. It has the same noise and regret
distribution, not the same streams. Prints CPU seconds of this process
(``time.process_time``: user + system, best of ``--repeats``; the README's Speed table
quotes CPU time, which a shared machine's other jobs do not inflate) with the wall
seconds of the same best run beside them, the ratio fedpriv / anchor in CPU time
(target <= 2) and the mean regrets of both. Asserts nothing (benchmarks are scripts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedpriv.algorithms.environments.bernoulli import RewardTable, homogeneous_bandit
from fedpriv.algorithms.li_song.core import confidence_width, sample_target
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab
from fedpriv.algorithms.networks.graphs import make_graph


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

    def cdp():
        return run_cdp_mab(
            env, horizon=args.horizon, epsilon=0.1, n_trials=args.trials, seed=args.seed
        )

    cdp()  # warm-up
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
        f"cdp-mab (eps=0.1) M=50 K=100 T={args.horizon} trials={args.trials}: "
        f"CPU seconds (wall): fedpriv {seconds:.2f} s ({wall:.2f} s), per-pull numpy loop "
        f"(anchor) {anchor_s:.2f} s ({anchor_wall:.2f} s), "
        f"ratio {seconds / anchor_s:.2f} (target <= 2); entry-by-entry read (before) "
        f"{before_s:.2f} s CPU, ratio {before_s / anchor_s:.2f}, same regret bit for bit: "
        f"{np.array_equal(before.total_regret, run.total_regret)}; "
        f"regret {run.total_regret.mean():.0f} "
        f"vs anchor {anchor_regret.mean():.0f}; rounds {run.rounds.mean():.1f}"
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
