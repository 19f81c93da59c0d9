"""Benchmark: one end-to-end Fed_UCB audit, reference and fast path, in-process and on executors.

Issue 6 ("Speed") asks for the runs per second of one end-to-end algorithm audit:
Fed_UCB (Zhu et al. 2021, Algorithm 4; :func:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.run_gossip_fed_ucb`),
3 agents on the complete graph, 5 arms, T = 1024, corrected mode, ε = 1, 10⁵ runs per
world; issue 11 asks the fast path to be ≥ 10× the reference in one benchmark run.

Neighbouring datasets: two fixed Bernoulli(0.5) reward tables
(:class:`fedpriv.audit.families.gossip_fed_ucb.recipes.FixedTableBandit`) that differ only in agent 0's
round-1 row: 1 in D, 0 in D'. Agent 0 pulls exactly one arm at round 1, so its reward
stream differs in exactly one reward (round 1), whichever arm it pulls (Definition 1's
one-reward-changed relation on the stream). Observable: agent 0's released noisy
means of the 5 arms after round 1 (``trace["means"][1][:, 0, :]``), i.e. the
statistics it gossips from round 2 on (:class:`fedpriv.audit.families.gossip_fed_ucb.initial.
GossipFedUcbMeansSampler`). The audit is :func:`fedpriv.audit.engine.coupled.search_and_confirm`
(event search on a pilot sample, confirmation on fresh runs) with ``batch_size`` runs
per sampler call.

Two paths, timed in the same process on the same budget and seed:

* reference (``fast=False``): every run simulates all T rounds (the implementation
  before issue 11);
* fast (``fast=True``): every run stops after round 1, the last round the observable
  depends on (``run_gossip_fed_ucb(rounds=1)``; the algorithm is causal, so the observable is
  bit-identical: the two bounds and events printed must agree).

The speed-up is the ratio of runs per CPU second of this process (both paths run
in-process, so that is their whole work, and other jobs on a shared machine barely
move it); the wall-clock ratio is printed beside it.

The fast path is then timed on a local process pool, on a dask ``LocalCluster`` and,
with ``--scheduler ADDRESS``, on an existing dask cluster, with runs/s per worker.
Every executor must give the identical bound (batches are addressed, not
scheduled). 10⁵ runs per world of the reference path take far too long on a 2-core
machine, so ``--runs`` confirming runs (plus ``--pilot`` pilot runs) per world are
timed and the 10⁵ time is projected linearly. Prints numbers; asserts nothing.

    PYTHONPATH=. python benchmarks/bench_endtoend.py [--runs 2000] [--pilot 200]
        [--batch-size 200] [--workers 2] [--no-processes] [--no-dask]
        [--no-reference] [--scheduler tcp://HOST:PORT]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm
from fedpriv.audit.families.gossip_fed_ucb.initial import GossipFedUcbMeansSampler
from fedpriv.audit.families.gossip_fed_ucb.recipes import FixedTableBandit

__all__: list[str] = []

N_AGENTS, N_ARMS, HORIZON, EPSILON = 3, 5, 1024, 1.0
TARGET_RUNS = 10**5


def make_sampler(*, fast: bool) -> GossipFedUcbMeansSampler:
    """The benchmark's sampler (fixed tables, seed 20211); ``fast``: stop after round 1."""
    rng = np.random.default_rng(child_seed(20211, N_AGENTS, N_ARMS))
    base = (rng.random((N_AGENTS, HORIZON + 1, N_ARMS)) < 0.5).astype(np.float64)
    envs = []
    for value in (1.0, 0.0):
        table = base.copy()
        table[0, 1, :] = value
        envs.append(FixedTableBandit(table=table, arm_means=np.full((N_AGENTS, N_ARMS), 0.5)))
    return GossipFedUcbMeansSampler(
        envs=(envs[0], envs[1]),
        graph=make_graph("complete", N_AGENTS),
        horizon=HORIZON,
        epsilon=EPSILON,
        agent=0,
        round=1,
        fast=fast,
    )


def _time(
    label: str,
    args: argparse.Namespace,
    executor: object,
    n_workers: int | None,
    *,
    fast: bool = True,
    per_worker: int | None = None,
) -> tuple[float, str, float, float]:
    """Run one audit; print runs/s (and per worker).

    Returns (bound, event, runs per wall second, runs per CPU second of this process).
    """
    budget = AuditBudget(pilot_samples=args.pilot, samples=args.runs)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = search_and_confirm(
        {"agent 0's round-1 reward, 1 (D) vs 0 (D')": make_sampler(fast=fast)},
        budget=budget,
        seed=args.seed,
        delta=0.0,
        channel="agent 0's released means after round 1",
        names=tuple(f"mean[agent 0, arm {k}] after round 1" for k in range(N_ARMS)),
        batch_size=args.batch_size,
        executor=executor,
        n_workers=n_workers,
    )
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    runs = 2 * (args.pilot + args.runs)
    rate = runs / seconds
    projected = 2 * (TARGET_RUNS + args.pilot) / rate
    workers = f" = {rate / per_worker:7.1f} runs/s per worker" if per_worker else ""
    print(
        f"{label:40s} {runs:>7,d} runs in {seconds:7.2f} s = {rate:8.1f} runs/s{workers}; "
        f"projected 10^5 runs/world: {projected / 60:6.2f} min; "
        f"ε_LB {result.bound.epsilon_lower_bound:.4f} on '{result.event}'"
    )
    return result.bound.epsilon_lower_bound, result.event, rate, runs / cpu_seconds


def _dask_runs(args: argparse.Namespace) -> list[tuple[float, str, float, float]]:
    """The fast path on a dask LocalCluster and, with ``--scheduler``, an existing cluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask.distributed not installed: skipping the dask runs")
        return []
    results = []
    if not args.no_dask:
        with (
            LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
            ) as cluster,
            Client(cluster) as client,
        ):
            results.append(
                _time(
                    f"fast, dask LocalCluster, {args.workers} workers",
                    args,
                    client,
                    None,
                    per_worker=args.workers,
                )
            )
    if args.scheduler:
        with Client(args.scheduler, timeout=30) as client:
            threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
            results.append(
                _time(
                    f"fast, dask at {args.scheduler} ({threads} threads)",
                    args,
                    client,
                    None,
                    per_worker=threads,
                )
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=2000, help="confirming runs per world (issue 6 target: 100000)"
    )
    parser.add_argument("--pilot", type=int, default=200, help="pilot runs per world")
    parser.add_argument("--batch-size", type=int, default=200, help="runs per batch")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dask", action="store_true", help="skip the LocalCluster run")
    parser.add_argument(
        "--no-processes", action="store_true", help="skip the local process-pool run"
    )
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the reference path (time the executors at larger --runs)",
    )
    parser.add_argument(
        "--scheduler", default=None, help="also time an existing dask cluster at this address"
    )
    args = parser.parse_args()
    print(
        f"Fed_UCB end-to-end audit: {N_AGENTS} agents (complete graph), {N_ARMS} arms, "
        f"T = {HORIZON}, corrected mode, ε = {EPSILON:g}; {args.runs:,d} confirming + "
        f"{args.pilot:,d} pilot runs per world, batches of {args.batch_size}."
    )
    print(
        f"NOTE: issue 6 asks for {TARGET_RUNS:,d} runs per world; that is too slow for "
        f"this machine, so {args.runs:,d} are timed and the 10^5 time is projected "
        "linearly from the measured runs/s."
    )
    results = []
    if not args.no_reference:
        results.append(_time("reference (all T rounds), in-process", args, None, None, fast=False))
    results.append(_time("fast (stop after round 1), in-process", args, None, None))
    if not args.no_reference:
        print(
            f"  speed-up of the fast path in-process: {results[1][3] / results[0][3]:.1f}x "
            f"in CPU seconds of this process ({results[1][2] / results[0][2]:.1f}x in wall "
            "seconds, which other jobs on a shared machine distort)"
        )
    print(
        f"  peak RSS of this process: "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    if not args.no_processes:
        results.append(
            _time(
                f"fast, local processes, {args.workers} workers",
                args,
                "processes",
                args.workers,
                per_worker=args.workers,
            )
        )
    results += _dask_runs(args)
    print(
        f"The observable's true ε is at most ε' = ε/(⌊log2 T⌋ + 1) = "
        f"{EPSILON / (np.floor(np.log2(HORIZON)) + 1):.3f} (round 1 sits in one tree leaf), "
        "so ε_LB = 0 at these sample counts is expected; the script times the audit."
    )
    identical = len({(bound, event) for bound, event, *_ in results}) == 1
    print(f"identical bounds and events (reference, fast, every executor): {identical}")


if __name__ == "__main__":
    main()
