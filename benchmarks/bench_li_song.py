"""Agent-rounds per second of Li & Song's CDP-MAB (M = 50, K = 100) and DDP-MAB.

Run: ``PYTHONPATH=. python benchmarks/bench_li_song.py [--trials N] [--horizon T]``.
Epochs are simulated in bulk (li_song_core docstring): exploration rewards are read
from the counter-based table, exploitation and commit slots cost only a count update,
so the rate grows with the horizon once the arms are eliminated.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab
from fedpriv.algorithms.environments.bernoulli import homogeneous_bandit
from fedpriv.algorithms.networks.graphs import make_graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = homogeneous_bandit(50, 100, np.random.default_rng(args.seed))
    cases = {
        "cdp-mab (eps=0.1)": lambda: run_cdp_mab(env, horizon=args.horizon, epsilon=0.1,
                                                 n_trials=args.trials, seed=args.seed),
        "ddp-mab ring (eps=0.1)": lambda: run_ddp_mab(env, make_graph("ring", 50),
                                                      horizon=args.horizon, epsilon=0.1,
                                                      n_trials=args.trials, seed=args.seed),
    }
    for name, call in cases.items():
        call()  # warm-up
        started = time.perf_counter()
        run = call()
        seconds = time.perf_counter() - started
        agent_rounds = args.trials * env.n_agents * args.horizon
        print(f"{name}: M=50 K=100 T={args.horizon} trials={args.trials}: "
              f"{seconds:.2f} s, {agent_rounds / seconds / 1e6:.2f} M agent-rounds/s, "
              f"rounds {run.rounds.mean():.1f}, regret {run.regret.mean():.0f}")


if __name__ == "__main__":
    main()
