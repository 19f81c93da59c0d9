"""Benchmark: one end-to-end Fed_UCB audit, in-process, on local processes and on dask.

Issue 6 ("Speed") asks for the runs per second of one end-to-end algorithm audit:
Fed_UCB (Zhu et al. 2021, Algorithm 4; :func:`fedpriv.algorithms.gossip.gossip_ucb.run_fed_ucb`), 3 agents
on the complete graph, 5 arms, T = 1024, corrected mode, ε = 1, 10⁵ runs per world.
Each run is the whole algorithm (all T rounds, every release through the accountant).

Neighbouring datasets: two fixed Bernoulli(0.5) reward tables
(:class:`fedpriv.audit.endtoend.gossip.FixedTableBandit`) that differ only in agent 0's
round-1 row: 1 in D, 0 in D'. Agent 0 pulls exactly one arm at round 1, so its reward
stream differs in exactly one reward (round 1), whichever arm it pulls (Definition 1's
one-reward-changed relation on the stream). Observable: agent 0's released noisy
means of the 5 arms after round 1 (``trace["means"][1][:, 0, :]``), i.e. the
statistics it gossips from round 2 on. The audit is :func:`fedpriv.audit.endtoend.engine.
search_and_confirm` (event search on a pilot sample, confirmation on fresh runs) with
``batch_size`` runs per sampler call; peak memory per worker is one batch of the
algorithm's state (the recorded trace dominates: 2 · (T+1) · batch · 15 float64).

10⁵ runs per world (≈ 2 · 10⁵ · 1024 · 3 ≈ 6 · 10⁸ agent-rounds) takes far too long
on a 2-core machine, so the default is ``--runs 2000`` confirming runs per world (plus
``--pilot`` runs per world for the event search); the script prints runs/s (both
worlds, pilot included) and the projected wall time of 10⁵ runs per world. The three
executors must give identical bounds (batches are addressed, not scheduled); the
script prints them side by side. Prints numbers; asserts nothing.

    PYTHONPATH=. python benchmarks/bench_endtoend.py [--runs 2000] [--pilot 200]
        [--batch-size 200] [--workers 2] [--no-dask]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import time

import networkx as nx
import numpy as np

from fedpriv.algorithms.gossip.gossip_ucb import run_fed_ucb
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.audit.endtoend.engine import AuditBudget, search_and_confirm
from fedpriv.audit.endtoend.gossip import FixedTableBandit

__all__: list[str] = []

N_AGENTS, N_ARMS, HORIZON, EPSILON = 3, 5, 1024, 1.0
TARGET_RUNS = 10**5


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class FedUcbRoundOne:
    """Sampler: agent 0's released means after round 1, whole Fed_UCB runs."""

    envs: tuple[FixedTableBandit, FixedTableBandit]
    graph: nx.Graph
    horizon: int
    epsilon: float

    def __call__(self, world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
        run = run_fed_ucb(self.envs[world], self.graph, horizon=self.horizon,
                          epsilon=self.epsilon, mode="corrected", n_trials=n, seed=seed,
                          record_trace=True)
        return run.trace["means"][1][:, 0, :].copy()  # (n, n_arms)


def make_sampler() -> FedUcbRoundOne:
    """The benchmark's sampler (fixed tables, seed 20211)."""
    rng = np.random.default_rng(np.random.SeedSequence(20211, spawn_key=(N_AGENTS, N_ARMS)))
    base = (rng.random((N_AGENTS, HORIZON + 1, N_ARMS)) < 0.5).astype(np.float64)
    envs = []
    for value in (1.0, 0.0):
        table = base.copy()
        table[0, 1, :] = value
        envs.append(FixedTableBandit(table=table, arm_means=np.full((N_AGENTS, N_ARMS), 0.5)))
    return FedUcbRoundOne(envs=(envs[0], envs[1]), graph=make_graph("complete", N_AGENTS),
                          horizon=HORIZON, epsilon=EPSILON)


def _time(label: str, args: argparse.Namespace, executor: object, n_workers: int | None
          ) -> tuple[float, str, float]:
    budget = AuditBudget(pilot_samples=args.pilot, samples=args.runs)
    started = time.perf_counter()
    result = search_and_confirm(
        {"agent 0's round-1 reward, 1 (D) vs 0 (D')": make_sampler()}, budget=budget,
        seed=args.seed, delta=0.0, channel="agent 0's released means after round 1",
        names=tuple(f"mean[agent 0, arm {k}] after round 1" for k in range(N_ARMS)),
        batch_size=args.batch_size, executor=executor, n_workers=n_workers,
    )
    seconds = time.perf_counter() - started
    runs = 2 * (args.pilot + args.runs)
    rate = runs / seconds
    projected = 2 * (TARGET_RUNS + args.pilot) / rate
    print(f"{label:34s} {runs:>7,d} runs in {seconds:7.1f} s = {rate:7.1f} runs/s "
          f"({rate * HORIZON * N_AGENTS / 1e3:7.1f} k agent-rounds/s); projected "
          f"10^5 runs/world: {projected / 60:6.1f} min; ε_LB {result.bound.epsilon_lower_bound:.4f}"
          f" on '{result.event}'")
    return result.bound.epsilon_lower_bound, result.event, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000,
                        help="confirming runs per world (issue 6 target: 100000)")
    parser.add_argument("--pilot", type=int, default=200, help="pilot runs per world")
    parser.add_argument("--batch-size", type=int, default=200, help="runs per batch")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-serial", action="store_true")
    args = parser.parse_args()
    print(f"Fed_UCB end-to-end audit: {N_AGENTS} agents (complete graph), {N_ARMS} arms, "
          f"T = {HORIZON}, corrected mode, ε = {EPSILON:g}; {args.runs:,d} confirming + "
          f"{args.pilot:,d} pilot runs per world, batches of {args.batch_size}.")
    print(f"NOTE: issue 6 asks for {TARGET_RUNS:,d} runs per world; that is too slow for "
          f"this machine, so {args.runs:,d} are timed and the 10^5 time is projected "
          "linearly from the measured runs/s.")
    results = []
    if not args.no_serial:
        results.append(_time("in-process (executor=None)", args, None, None))
        print(f"  peak RSS of this process so far: "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    results.append(_time(f"local processes, {args.workers} workers", args, "processes",
                         args.workers))
    print(f"  peak RSS of the largest pool worker: "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")
    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print("dask.distributed not installed: skipping the LocalCluster run")
        else:
            with (
                LocalCluster(n_workers=args.workers, threads_per_worker=1,
                             dashboard_address=None) as cluster,
                Client(cluster) as client,
            ):
                results.append(_time(f"dask LocalCluster, {args.workers} workers", args,
                                     client, None))
    print(f"The observable's true ε is at most ε' = ε/(⌊log2 T⌋ + 1) = "
          f"{EPSILON / (np.floor(np.log2(HORIZON)) + 1):.3f} (round 1 sits in one tree leaf), "
          "so ε_LB = 0 at these sample counts is expected; the script times the audit.")
    identical = len({(bound, event) for bound, event, _ in results}) == 1
    print(f"identical bounds and events across executors: {identical}")


if __name__ == "__main__":
    main()
