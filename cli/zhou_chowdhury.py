"""``fedpriv run private-fedlinucb`` (Zhou & Chowdhury, ICLR 2024, Alg. 1).

Runs Private-FedLinUCB on the synthetic instance of Fig. 2a-b and prints the average
per-silo regret, the number of syncs and, for a private protocol, the accountant's ε at
the target δ beside the target (the view of silo-level LDP: every silo's p-sums, each
silo's tree charged for the pairs its own data between syncs can move).
``experiment zhou-chowdhury-fig2`` reproduces Fig. 2a-b
(:mod:`fedpriv.audit.families.zhou_chowdhury.experiments`).

The commands are declared as data (:data:`COMMANDS`: options and run functions); the
shared machinery (:mod:`fedpriv.cli.runs`) wires, times, prints and sets the exit status.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fedpriv.cli.runs import JSON, SEED, TRIALS, ExperimentCommand, RunCommand, RunReport, option

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.zhou_chowdhury.fedlinucb.PROTOCOLS
PROTOCOLS = ("ldp", "ldp-exact", "sdp-amp", "sdp-vecsum", "non-private")

__all__ = ["COMMANDS", "PROTOCOLS"]


_RUN_OPTIONS = (
    option("--agents", type=int, default=10, help="silos M (default 10; Fig. 2: 100)"),
    option("--arms", type=int, default=20, help="arms K (default 20; Fig. 2: 100)"),
    option("--dim", type=int, default=5, help="dimension d >= 3 (default 5; Fig. 2: 10)"),
    option("--horizon", type=int, default=1000, help="rounds T (default 1000)"),
    option("--batch-size", type=int, default=25, help="batch B (default 25)"),
    option("--protocol", choices=PROTOCOLS, default="ldp", help="privacy protocol"),
    option("--epsilon", type=float, default=1.0, help="target ε (default 1)"),
    option("--delta", type=float, default=0.1, help="target δ (default 0.1)"),
    option(
        "--broadcast-only",
        action="store_true",
        help="silos act on the broadcast sums only (fedpriv's correction)",
    ),
    TRIALS,
    SEED,
    JSON,
)

_FIGURE_OPTIONS = (
    option("--horizon", type=int, default=1000, help="rounds T (default 1000; paper 10^4)"),
    option("--trials", type=int, default=1, help="trials (default 1; paper 25)"),
    option("--agents", type=int, default=100, help="silos M (default 100)"),
    SEED,
    option(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report folder; writes <out>/zhou_chowdhury/ (default reports)",
    ),
)


def _run(args: argparse.Namespace) -> RunReport:
    """Run Private-FedLinUCB and price it at the target δ (no verdict: exit status 0)."""
    from fedpriv.algorithms.zhou_chowdhury import SyntheticEnvironment, run_private_fedlinucb
    from fedpriv.audit.claims.claim import json_number

    env = SyntheticEnvironment(n_agents=args.agents, n_arms=args.arms, dim=args.dim)
    run = run_private_fedlinucb(
        env,
        horizon=args.horizon,
        batch_size=args.batch_size,
        protocol=args.protocol,
        epsilon=args.epsilon,
        delta=args.delta,
        n_trials=args.trials,
        seed=args.seed,
        own_data_between_syncs=not args.broadcast_only,
    )
    route, eps = run.accountant.routes.tightest(args.delta)
    record: dict[str, Any] = {
        "algorithm": "private-fedlinucb",
        "protocol": args.protocol,
        "regret_per_silo": float(run.final_regret.mean()),
        "n_syncs": run.n_syncs,
        "noise_stddev": run.calibration.noise_stddev,
        "target": {"epsilon": json_number(args.epsilon), "delta": args.delta},
        "accountant": {"route": route, "epsilon": json_number(float(eps))},
    }
    line = (
        f"Private-FedLinUCB ({args.protocol}): regret per silo "
        f"{record['regret_per_silo']:.4g}, {run.n_syncs} syncs, σ = "
        f"{run.calibration.noise_stddev:.4g}; accountant ε = {float(eps):.4g} ({route}) at "
        f"δ = {args.delta:g} (target ε = {args.epsilon:g})"
    )
    return RunReport(record, lambda: [line])


def _fig2(args: argparse.Namespace) -> int:
    from fedpriv.audit.families.zhou_chowdhury.experiments import run_fig2

    rows = run_fig2(
        horizon=args.horizon,
        n_trials=args.trials,
        n_agents=args.agents,
        seed=args.seed,
        out=args.out / "zhou_chowdhury",
    )
    for r in rows:
        print(f"{r['label']}: R(T)/T per silo {r['avg_regret']:.4g}, {r['n_syncs']} syncs")
    return 0


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = (
    RunCommand("private-fedlinucb", _RUN_OPTIONS, _run),
    ExperimentCommand("zhou-chowdhury-fig2", _FIGURE_OPTIONS, _fig2),
)
