"""Benchmarks of fedpriv's hot paths (a script, not a timed test).

Run from the checkout after ``pip install .``::

    python benchmarks/bench.py            # full sizes (about a minute)
    python benchmarks/bench.py --quick    # smaller sizes

Reports
- audit samples per second: the Fed_UCB tree audit (paper mode, T = 16, ε = 1) at
  10⁶ samples per world, counted over both worlds;
- agent-rounds per second of Fed_UCB and Gossip_UCB vectorized over 100 trials
  (3 agents on K3, 5 arms, the paper's synthetic environment).
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from fedpriv.algorithms.environments.heterogeneous import paper_synthetic_bandit
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb, run_gossip_ucb
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree import audit_tree_counter


def _best_of(repeats: int, function):
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = 10**5 if args.quick else 10**6
    horizon = 1_000 if args.quick else 10_000
    trials = 100
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}, {platform.processor() or 'cpu'}"
    )

    pair = worst_case_reward_pair(16)
    seconds, result = _best_of(
        3,
        lambda: audit_tree_counter(pair, scale=4.0, claimed_epsilon=1.0, n_samples=samples, seed=0),
    )
    print(
        f"tree audit T=16, {samples:.0e} samples/world: {seconds:.2f} s, "
        f"{2 * samples / seconds:,.0f} samples/s "
        f"(lower bound {result.bound.epsilon_lower_bound:.4f})"
    )

    env = paper_synthetic_bandit(3, 5, rng=np.random.default_rng(0))
    graph = make_graph("complete", 3)
    for name, run in (
        (
            "Fed_UCB corrected ε=1",
            lambda: run_gossip_fed_ucb(
                env, graph, horizon=horizon, epsilon=1.0, mode="corrected", n_trials=trials, seed=0
            ),
        ),
        (
            "Gossip_UCB",
            lambda: run_gossip_ucb(env, graph, horizon=horizon, n_trials=trials, seed=0),
        ),
    ):
        seconds, _ = _best_of(2, run)
        agent_rounds = trials * 3 * horizon
        print(
            f"{name}, {trials} trials x 3 agents x T={horizon}: {seconds:.2f} s, "
            f"{agent_rounds / seconds:,.0f} agent-rounds/s"
        )


if __name__ == "__main__":
    main()
