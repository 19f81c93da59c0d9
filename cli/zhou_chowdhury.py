"""``fedpriv run private-fedlinucb`` (Zhou & Chowdhury, ICLR 2024, Alg. 1).

Runs Private-FedLinUCB on the synthetic instance of Fig. 2a-b and prints the average
per-silo regret, the number of syncs and, for a private protocol, the accountant's ε at
the target δ beside the target (the view of silo-level LDP: every silo's p-sums, each
silo's tree charged for the pairs its own data between syncs can move).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from fedpriv.cli.commands import run_status

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm.
#: fedpriv.algorithms.zhou_chowdhury.fedlinucb.PROTOCOLS
PROTOCOLS = ("ldp", "ldp-exact", "sdp-amp", "non-private")

__all__ = ["register"]


def register(run: argparse._SubParsersAction, experiment: argparse._SubParsersAction) -> None:
    """Add ``private-fedlinucb`` to ``run``.

    Parameters
    ----------
    run : argparse._SubParsersAction
        The ``fedpriv run`` subcommands.
    experiment : argparse._SubParsersAction
        The ``fedpriv experiment`` subcommands (``zhou-chowdhury-fig2``).
    """
    p = run.add_parser(
        "private-fedlinucb", help="Private-FedLinUCB, fixed batches (Zhou & Chowdhury Alg. 1)"
    )
    p.add_argument("--agents", type=int, default=10, help="silos M (default 10; Fig. 2: 100)")
    p.add_argument("--arms", type=int, default=20, help="arms K (default 20; Fig. 2: 100)")
    p.add_argument("--dim", type=int, default=5, help="dimension d >= 3 (default 5; Fig. 2: 10)")
    p.add_argument("--horizon", type=int, default=1000, help="rounds T (default 1000)")
    p.add_argument("--batch-size", type=int, default=25, help="batch B (default 25)")
    p.add_argument("--protocol", choices=PROTOCOLS, default="ldp", help="privacy protocol")
    p.add_argument("--epsilon", type=float, default=1.0, help="target ε (default 1)")
    p.add_argument("--delta", type=float, default=0.1, help="target δ (default 0.1)")
    p.add_argument(
        "--broadcast-only",
        action="store_true",
        help="silos act on the broadcast sums only (fedpriv's correction)",
    )
    p.add_argument("--trials", type=int, default=1, help="n_trials (default 1)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_run)
    e = experiment.add_parser(
        "zhou-chowdhury-fig2", help="Zhou & Chowdhury Fig. 2a-b (synthetic regret)"
    )
    e.add_argument("--horizon", type=int, default=1000, help="rounds T (default 1000; paper 10^4)")
    e.add_argument("--trials", type=int, default=1, help="trials (default 1; paper 25)")
    e.add_argument("--agents", type=int, default=100, help="silos M (default 100)")
    e.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    e.add_argument(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report folder; writes <out>/zhou_chowdhury/ (default reports)",
    )
    e.set_defaults(handler=_fig2)


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


def _run(args: argparse.Namespace) -> int:
    from fedpriv.algorithms.zhou_chowdhury import SyntheticEnvironment, run_private_fedlinucb

    env = SyntheticEnvironment(n_agents=args.agents, n_arms=args.arms, dim=args.dim)
    started = time.perf_counter()
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
    record = {
        "algorithm": "private-fedlinucb",
        "protocol": args.protocol,
        "regret_per_silo": float(run.final_regret.mean()),
        "n_syncs": run.n_syncs,
        "noise_stddev": run.calibration.noise_stddev,
        "target": {"epsilon": args.epsilon, "delta": args.delta},
        "accountant": {"route": route, "epsilon": float(eps)},
        "seconds": time.perf_counter() - started,
    }
    if args.json:
        print(json.dumps(record))
    else:
        print(
            f"Private-FedLinUCB ({args.protocol}): regret per silo "
            f"{record['regret_per_silo']:.4g}, {run.n_syncs} syncs, σ = "
            f"{run.calibration.noise_stddev:.4g}; accountant ε = {float(eps):.4g} ({route}) at "
            f"δ = {args.delta:g} (target ε = {args.epsilon:g})"
        )
    return run_status(record)
