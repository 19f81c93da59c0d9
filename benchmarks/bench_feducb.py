"""Learner-rounds per second of FedUCB and its baselines (a script, not a timed test).

Run from the checkout::

    PYTHONPATH=. python benchmarks/bench_feducb.py            # d=10, K=20, M=10, 100 trials
    PYTHONPATH=. python benchmarks/bench_feducb.py --quick    # 10 trials, one repeat

A learner-round is one agent acting in one round of one trial (issue 4's unit). **Issue
4's target (>= 200k learner-rounds/s on one core) is about the algorithm**: the
``algorithm`` rows below, where FedUCB runs on tables already held in memory
(``LinearBanditTables.from_arrays``), so that generating the environment is not
counted. Reported separately:

- ``environment``: drawing the lazy tables chunk by chunk, as an algorithm reads them
  (``block`` per ``CHUNK_ROUNDS``), and, for reference, as one whole-horizon block
  (which adds a concatenation of every chunk);
- ``algorithm``: centralized FedUCB (adaptive at Theorem 1's D, D = 0 i.e. a sync
  every round, fixed schedule B = 16, non-private), decentralized FedUCB (ring and
  complete graph, γ = 2) and the LinUCB baselines, on the held tables;
- ``end to end``: environment + algorithm, as ``fedpriv run feducb`` does.

Each figure is the best of ``--repeats`` runs, in CPU seconds of this process
(``time.process_time``: a loaded machine distorts it little) and in wall seconds
(``time.perf_counter``). BLAS is limited to one thread (``OPENBLAS_NUM_THREADS=1``
and friends are set before numpy is imported, unless already set), so the figures
are one-core figures; the load average is printed too.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np
from fedpriv.algorithms.environments.linear import CHUNK_ROUNDS, LinearBandit, LinearBanditTables
from fedpriv.algorithms.feducb.centralized import (
    run_feducb,
    run_feducb_fixed,
    run_feducb_nonprivate,
)
from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
from fedpriv.algorithms.feducb.linucb import run_linucb, run_linucb_pooled
from fedpriv.algorithms.feducb.linucb_private import run_linucb_independent_private

__all__ = ["main"]


def _best_of(repeats: int, function: Callable[[], Any]) -> tuple[float, float, Any]:
    """Best CPU and best wall seconds of ``repeats`` calls, and the last result."""
    cpu, wall, result = float("inf"), float("inf"), None
    for _ in range(repeats):
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        result = function()
        cpu = min(cpu, time.process_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started_wall)
    return cpu, wall, result


def _report(name: str, learner_rounds: int, cpu: float, wall: float, note: str = "") -> None:
    print(
        f"{name:<34s}{learner_rounds / cpu:12,.0f} /s CPU {learner_rounds / wall:12,.0f} /s wall"
        + (f"  ({note})" if note else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 trials, one repeat")
    parser.add_argument(
        "--horizon",
        type=int,
        default=4 * CHUNK_ROUNDS,
        help="rounds per run (default 128; tables held in memory for "
        "the algorithm-only figures: 100 trials x 128 rounds = 205 MB)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--skip-baselines",
        action="store_true",
        help="only centralized FedUCB (no decentralized / LinUCB rows)",
    )
    args = parser.parse_args()
    n_trials = 10 if args.quick else 100
    repeats = 1 if args.quick else args.repeats
    n_agents, n_arms, dim, horizon = 10, 20, 10, args.horizon
    learner_rounds = n_trials * n_agents * horizon
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(
        f"d={dim}, K={n_arms}, M={n_agents}, {n_trials} trials, T={horizon}: "
        f"{learner_rounds} learner-rounds per run; best of {repeats}"
    )
    print("issue 4's target (>= 200k/s on one core) is about the 'algorithm' rows")
    spec = LinearBandit(n_agents=n_agents, n_arms=n_arms, dim=dim)

    def generate_chunked() -> None:
        tables = spec.sample(0, n_trials=n_trials, horizon=horizon)
        for start in range(0, horizon, CHUNK_ROUNDS):
            tables.block(start, min(horizon, start + CHUNK_ROUNDS))

    def generate_whole() -> tuple[LinearBanditTables, Any]:
        tables = spec.sample(0, n_trials=n_trials, horizon=horizon)
        return tables, tables.block(0, horizon)

    cpu, wall, _ = _best_of(repeats, generate_chunked)
    _report("environment (chunk by chunk)", learner_rounds, cpu, wall)
    cpu, wall, (tables, block) = _best_of(repeats, generate_whole)
    _report("environment (one whole block)", learner_rounds, cpu, wall)
    held = LinearBanditTables.from_arrays(spec, block.contexts, block.rewards, tables.theta)
    del block
    held.block(0, horizon)  # ⟨x, θ*⟩ of the held arrays is computed once, not timed

    runs: dict[str, Callable[[LinearBanditTables], Any]] = {
        "feducb (Thm. 1 D)": lambda tab: run_feducb(tab, epsilon=1.0, delta=0.1),
        "feducb (D = 0, sync every round)": lambda tab: run_feducb(
            tab, epsilon=1.0, delta=0.1, threshold=0.0
        ),
        "feducb-fixed (B = 16)": lambda tab: run_feducb_fixed(
            tab, epsilon=1.0, delta=0.1, sync_every=16
        ),
        "feducb-nonprivate": lambda tab: run_feducb_nonprivate(tab),
    }
    if not args.skip_baselines:
        runs.update(
            {
                "decentralized ring (γ = 2)": lambda tab: run_feducb_decentralized(
                    tab, nx.cycle_graph(n_agents), gamma=2, epsilon=1.0, delta=0.1
                ),
                "decentralized complete (γ = 2)": lambda tab: run_feducb_decentralized(
                    tab, nx.complete_graph(n_agents), gamma=2, epsilon=1.0, delta=0.1
                ),
                "linucb (independent)": lambda tab: run_linucb(tab),
                "linucb-pooled": lambda tab: run_linucb_pooled(tab),
                "linucb-independent-private": lambda tab: run_linucb_independent_private(
                    tab, epsilon=1.0, delta=0.1
                ),
            }
        )
    print("algorithm on held tables:")
    for name, runner in runs.items():
        cpu, wall, run = _best_of(repeats, lambda runner=runner: runner(held))
        syncs = getattr(run, "n_syncs", None)
        note = f"{syncs.mean():.0f} syncs per trial" if syncs is not None else ""
        releases = getattr(run, "n_releases", None)
        if releases is not None:
            note = f"{releases.mean():.0f} releases per trial"
        _report("  " + name, learner_rounds, cpu, wall, note)
    print("end to end (environment + algorithm):")
    for name in ("feducb (Thm. 1 D)", "feducb-fixed (B = 16)"):
        runner = runs[name]
        cpu, wall, _ = _best_of(
            repeats,
            lambda runner=runner: runner(spec.sample(0, n_trials=n_trials, horizon=horizon)),
        )
        _report("  " + name, learner_rounds, cpu, wall)


if __name__ == "__main__":
    main()
