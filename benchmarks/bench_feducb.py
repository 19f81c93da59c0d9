"""Learner-rounds per second of centralized FedUCB (a script, not a timed test).

Run from the checkout::

    PYTHONPATH=. python benchmarks/bench_feducb.py            # d=10, K=20, M=10, 100 trials
    PYTHONPATH=. python benchmarks/bench_feducb.py --quick    # 10 trials

A learner-round is one agent acting in one round of one trial (issue 4's unit; the
target is >= 200k/s on one core). Reported separately:

- ``environment``: generating the lazy tables (contexts, rewards) alone;
- ``algorithm``: FedUCB on tables held in memory (``LinearBanditTables.from_arrays``);
- ``end to end``: both, as ``fedpriv run feducb`` does.

Times are CPU seconds of this process (``time.process_time``), so that a loaded
machine does not distort them much; the load average is printed too.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from algorithms.feducb import run_feducb, run_feducb_fixed, run_feducb_nonprivate
from algorithms.linear_env import CHUNK_ROUNDS, LinearBandit, LinearBanditTables


def _best_of(repeats: int, function):
    """Best CPU time (``time.process_time``) of ``repeats`` calls, and the last result.

    CPU time, not wall time: on a shared machine the wall time grows with the load
    while the CPU time of this process does not (much). Run with
    ``OPENBLAS_NUM_THREADS=1`` for a one-core figure.
    """
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        result = function()
        best = min(best, time.process_time() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 trials instead of 100")
    parser.add_argument("--horizon", type=int, default=4 * CHUNK_ROUNDS,
                        help="rounds per run (default 128; tables held in memory for "
                             "the algorithm-only figure: 100 trials x 128 rounds = 205 MB)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    n_trials = 10 if args.quick else 100
    n_agents, n_arms, dim, horizon = 10, 20, 10, args.horizon
    learner_rounds = n_trials * n_agents * horizon
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"d={dim}, K={n_arms}, M={n_agents}, {n_trials} trials, T={horizon}: "
          f"{learner_rounds} learner-rounds per run")
    spec = LinearBandit(n_agents=n_agents, n_arms=n_arms, dim=dim)

    def generate():
        tables = spec.sample(0, n_trials=n_trials, horizon=horizon)
        return tables, tables.block(0, horizon)

    seconds, (tables, block) = _best_of(args.repeats, generate)
    print(f"environment         : {learner_rounds / seconds:12,.0f} learner-rounds/s")
    held = LinearBanditTables.from_arrays(spec, block.contexts, block.rewards, tables.theta)
    del block
    runs = {
        "feducb (Thm. 1 D)  ": lambda tab: run_feducb(tab, epsilon=1.0, delta=0.1),
        "feducb (D = 0)     ": lambda tab: run_feducb(tab, epsilon=1.0, delta=0.1, threshold=0.0),
        "feducb-fixed (B=16)": lambda tab: run_feducb_fixed(tab, epsilon=1.0, delta=0.1, sync_every=16),
        "feducb-nonprivate  ": lambda tab: run_feducb_nonprivate(tab),
    }
    for name, runner in runs.items():
        seconds, run = _best_of(args.repeats, lambda runner=runner: runner(held))
        print(f"algorithm {name}: {learner_rounds / seconds:12,.0f} learner-rounds/s "
              f"({run.n_syncs.mean():.0f} syncs per trial)")
    seconds, _ = _best_of(
        args.repeats,
        lambda: run_feducb(spec.sample(0, n_trials=n_trials, horizon=horizon), epsilon=1.0, delta=0.1),
    )
    print(f"end to end feducb   : {learner_rounds / seconds:12,.0f} learner-rounds/s")


if __name__ == "__main__":
    main()
