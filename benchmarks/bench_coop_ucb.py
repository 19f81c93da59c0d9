"""Agent-rounds per second of Dubey & Pentland's cooperative UCB and the baselines.

Run from the checkout::

    PYTHONPATH=. python benchmarks/bench_coop_ucb.py             # M = 50, K = 10, T = 2000
    PYTHONPATH=. python benchmarks/bench_coop_ucb.py --quick     # T = 500
    PYTHONPATH=. python benchmarks/bench_coop_ucb.py --only private ucb1 --repeats 5

Reports wall-clock and CPU agent-rounds per second (n_trials × n_agents × horizon /
seconds, best of ``--repeats``; the machine may be shared, so CPU time is the steadier
number) of Private Multi-Agent UCB (M = 50, K = 10, Erdős–Rényi p = 0.1, γ = 2,
ε = 0.1, ϑ = 1.1) vectorized over trials and agents, of the non-private cooperative
UCB, of UCB1 and DP-UCB-INT per agent, and of the Byzantine-proof algorithm (it
evaluates a trimmed mean per stream per round: a small batch, M = 20, K = 5, 4
trials, and the M = 50, K = 10 setting with 10 trials). Setup (one SeedSequence per
(trial, agent) stream, the graph's distances) is included in the time. A scalar
Python loop manages about 40 k agent-rounds per second.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from fedpriv.algorithms.dubey_aamas.baselines import run_dp_ucb_int, run_ucb1
from fedpriv.algorithms.dubey_aamas.byzantine import run_byzantine_coop_ucb
from fedpriv.algorithms.dubey_aamas.cooperative import run_coop_ucb_nonprivate, run_private_coop_ucb
from fedpriv.algorithms.dubey_aamas.robust import Contamination
from fedpriv.algorithms.environments.bernoulli import homogeneous_bandit
from fedpriv.algorithms.networks.graphs import make_graph

CASES = ("private", "nonprivate", "ucb1", "dp-ucb-int", "byzantine-small", "byzantine")


def _best_of(repeats: int, function) -> tuple[float, float]:
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        function()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="horizon 500 instead of 2000")
    parser.add_argument("--horizon", type=int, default=None, help="override the horizon")
    parser.add_argument("--trials", type=int, default=40, help="n_trials of the M = 50 cases")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--only", nargs="+", choices=CASES, default=list(CASES))
    args = parser.parse_args()
    horizon = args.horizon or (500 if args.quick else 2000)
    rng = np.random.default_rng(0)
    env = homogeneous_bandit(50, 10, rng)
    graph = make_graph("erdos_renyi", 50, p=0.1, rng=rng)
    small_env = homogeneous_bandit(20, 5, rng)
    small_graph = make_graph("erdos_renyi", 20, p=0.2, rng=rng)
    B = args.trials
    byz_horizon = max(1, horizon // 4)
    complement = Contamination(rate=0.1, kind="complement")
    cases = {
        "private": (
            f"private-coop-ucb (M=50, K=10, ER p=0.1, γ=2, {B} trials)",
            B * 50 * horizon,
            lambda: run_private_coop_ucb(
                env, graph, horizon=horizon, epsilon=0.1, gamma=2, n_trials=B, seed=1
            ),
        ),
        "nonprivate": (
            f"coop-ucb-nonprivate (M=50, K=10, ER p=0.1, γ=2, {B} trials)",
            B * 50 * horizon,
            lambda: run_coop_ucb_nonprivate(
                env, graph, horizon=horizon, gamma=2, n_trials=B, seed=1
            ),
        ),
        "ucb1": (
            f"ucb1 (M=50, K=10, {B} trials)",
            B * 50 * horizon,
            lambda: run_ucb1(env, horizon=horizon, n_trials=B, seed=1),
        ),
        "dp-ucb-int": (
            f"dp-ucb-int (M=50, K=10, {B} trials)",
            B * 50 * horizon,
            lambda: run_dp_ucb_int(env, horizon=horizon, epsilon=0.1, n_trials=B, seed=1),
        ),
        "byzantine-small": (
            "byzantine-coop-ucb (M=20, K=5, ER p=0.2, γ=2, 4 trials)",
            4 * 20 * horizon,
            lambda: run_byzantine_coop_ucb(
                small_env,
                small_graph,
                horizon=horizon,
                gamma=2,
                contamination=complement,
                n_trials=4,
                seed=1,
            ),
        ),
        "byzantine": (
            f"byzantine-coop-ucb (M=50, K=10, ER p=0.1, γ=2, 10 trials, T={byz_horizon})",
            10 * 50 * byz_horizon,
            lambda: run_byzantine_coop_ucb(
                env,
                graph,
                horizon=byz_horizon,
                gamma=2,
                contamination=complement,
                n_trials=10,
                seed=1,
            ),
        ),
    }
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, horizon {horizon}, "
        f"best of {args.repeats}"
    )
    for key in args.only:
        name, agent_rounds, function = cases[key]
        wall, cpu = _best_of(args.repeats, function)
        print(
            f"{name:66s} {agent_rounds / wall / 1e6:6.2f} M agent-rounds/s wall, "
            f"{agent_rounds / cpu / 1e6:6.2f} M CPU ({wall:.2f} s wall, {cpu:.2f} s CPU)",
            flush=True,
        )


if __name__ == "__main__":
    main()
