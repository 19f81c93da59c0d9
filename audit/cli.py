"""The ``fedpriv`` command line.

``fedpriv verify``
    Check Fed_UCB's privacy claim end to end and write ``<out>/gossip_fed_ucb/``.
``fedpriv run ALGORITHM``
    Run one algorithm inside the accountant; print its regret, ledger summary and
    guarantee next to the paper's claim.

Errors in the arguments or the data exit with status 2 and a message that names the
parameter; nothing is written to the report folder in that case.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from algorithms.environments import paper_synthetic_bandit
from algorithms.gossip import MODES, run_fed_ucb, run_gossip_ucb
from algorithms.hospital import hospital_bandit, load_diabetes
from algorithms.networks import GRAPH_KINDS, make_graph
from algorithms.seeding import Stream, as_seed_sequence, stream_rng
from audit.claims import decide_verdict, json_number
from audit.report import claims_records, claims_table, regret_table, write_report
from audit.verify import VerifyConfig, verify_gossip_fed_ucb
from privacy import PAPER_LOG_BASES, format_epsilon
from privacy.deployment import (
    budget_report,
    load_deployment,
    render_markdown,
    render_text,
)
from privacy.errors import ToolkitError

__all__ = ["build_parser", "main"]

ALGORITHMS = ("gossip-ucb", "gossip-fed-ucb")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``fedpriv``."""
    parser = argparse.ArgumentParser(
        prog="fedpriv",
        description="Verify the differential-privacy claims of federated bandit algorithms.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    verify = sub.add_parser("verify", help="check Fed_UCB's privacy claim end to end")
    verify.add_argument("--quick", action="store_true", help="smaller audits and runs (< 1 min)")
    verify.add_argument("--data", type=Path, default=None,
                        help="UCI Diabetes-130 CSV or zip (hospital environment); "
                             "default: the paper's synthetic generator")
    verify.add_argument("--out", type=Path, default=Path("reports"),
                        help="report folder (default: reports)")
    verify.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    verify.add_argument("--json", action="store_true", help="print the claims as JSON")
    verify.add_argument("--trials", type=int, default=None, help="trials of the regret runs")
    verify.add_argument("--regret-horizon", type=int, default=None,
                        help="horizon of the regret runs")
    verify.add_argument("--workers", type=int, default=None,
                        help="processes for the audits and regret runs (default: every core)")

    account = sub.add_parser("account", help="privacy budget report of a deployment (TOML)")
    account.add_argument("file", type=Path, help="deployment description (see examples/)")
    account.add_argument("--json", action="store_true", help="print the report as JSON")
    account.add_argument("--out", type=Path, default=None, help="also write Markdown here")

    run = sub.add_parser("run", help="run one algorithm inside the accountant")
    run.add_argument("algorithm", choices=ALGORITHMS)
    run.add_argument("--agents", type=int, default=3, help="n_agents (default 3)")
    run.add_argument("--arms", type=int, default=5, help="n_arms (default 5)")
    run.add_argument("--horizon", type=int, default=10_000, help="horizon T (default 10000)")
    run.add_argument("--epsilon", type=float, default=1.0, help="claimed ε (inf allowed)")
    run.add_argument("--mode", choices=MODES, default="corrected")
    run.add_argument("--log-base", choices=sorted(PAPER_LOG_BASES), default="2",
                     help="base of the paper's ⌈log T⌉ (paper mode)")
    run.add_argument("--noise-on-empty-nodes", action="store_true",
                     help="Algorithm 3 as printed: noise on nodes without observations")
    run.add_argument("--graph", choices=GRAPH_KINDS, default="complete")
    run.add_argument("--p", type=float, default=None, help="edge probability (erdos_renyi)")
    run.add_argument("--trials", type=int, default=1)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--data", type=Path, default=None, help="UCI Diabetes-130 CSV or zip")
    run.add_argument("--json", action="store_true")
    return parser


def _progress(started: float):
    def say(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    return say


def _verify(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {"seed": args.seed, "data_path": args.data}
    if args.trials is not None:
        overrides["n_trials"] = args.trials
    if args.regret_horizon is not None:
        overrides["regret_horizon"] = args.regret_horizon
    if args.workers is not None:
        overrides["workers"] = args.workers
    config = VerifyConfig.quick_config(**overrides) if args.quick else VerifyConfig(**overrides)
    report = verify_gossip_fed_ucb(config, progress=_progress(time.perf_counter()))
    folder = write_report(report, args.out)
    if args.json:
        print(json.dumps(claims_records(report), indent=2, allow_nan=False))
    else:
        print("Fed_UCB (Zhu et al. 2021): ε-DP per agent's reward stream, relation "
              "replace_one_reward, δ = 0")
        print(claims_table(report))
        print()
        print(f"Regret at T = {config.regret_horizon} ({config.n_trials} trials, {report.environment}):")
        print(regret_table(report))
        print()
        print(f"wrote {folder}/ (report.md, claims.json, ledger.csv, regret.png)")
    return 0


def _run(args: argparse.Namespace) -> int:
    root = as_seed_sequence(args.seed)
    if args.data is not None:
        env = hospital_bandit(load_diabetes(args.data), n_agents=args.agents)
    else:
        env = paper_synthetic_bandit(
            args.agents, args.arms,
            rng=stream_rng(np.random.SeedSequence(root.entropy, spawn_key=(0,)), trial=0,
                           stream=Stream.ENVIRONMENT),
            noise="gaussian",
        )
    graph_rng = stream_rng(root, trial=0, stream=Stream.NETWORK)
    graph = make_graph(args.graph, env.n_agents, p=args.p,
                       rng=graph_rng if args.graph == "erdos_renyi" else None)
    started = time.perf_counter()
    if args.algorithm == "gossip-ucb":
        run = run_gossip_ucb(env, graph, horizon=args.horizon, n_trials=args.trials, seed=root)
    else:
        run = run_fed_ucb(
            env, graph, horizon=args.horizon, epsilon=args.epsilon, mode=args.mode,
            log_base=args.log_base, noise_on_empty_nodes=args.noise_on_empty_nodes,
            n_trials=args.trials, seed=root,
        )
    seconds = time.perf_counter() - started
    final = run.cumulative_regret[..., -1].mean(axis=1)
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": {
            "n_agents": env.n_agents, "n_arms": env.n_arms, "horizon": args.horizon,
            "graph": args.graph, "n_trials": args.trials, "seed": args.seed,
            "environment": "hospital" if args.data else "synthetic",
        },
        "regret": {"mean": float(final.mean()), "min": float(final.min()),
                   "max": float(final.max())},
        "seconds": seconds,
    }
    if run.accountant is not None:
        acc = run.accountant
        ledger = acc.ledger
        route, eps_stream = acc.tightest(0.0, where={"phase": "stream"})
        eps_all = acc.get_epsilon(0.0)
        verdict, evidence = decide_verdict(args.epsilon, eps_stream, None)
        record["setting"].update(
            {"epsilon": json_number(args.epsilon), "mode": args.mode, "log_base": args.log_base}
        )
        record["ledger"] = {
            "noise_draws": acc.n_draws,
            "draws_per_agent": {int(k): int(v) for k, v in ledger.groupby("agent").size().items()},
            "node_scale": run.scale,
            "epsilon_per_draw": json_number(run.node_epsilon),
            "rewards_outside_0_1": run.n_out_of_bounds,
        }
        record["guarantee"] = {
            "claimed": {"epsilon": json_number(args.epsilon), "delta": 0.0,
                        "source": "Zhu et al. 2021, Definition 1 and §4.1"},
            "accountant": {"epsilon": json_number(eps_stream), "delta": 0.0, "route": route,
                           "scope": "rounds 1..T (Definition 1)"},
            "accountant_including_initial_pulls": json_number(eps_all),
            "routes": {k: json_number(v) for k, v in acc.routes(0.0, where={"phase": "stream"}).items()},
            "verdict": verdict,
            "evidence": evidence,
            "non_private_releases": acc.non_private_reasons(),
        }
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
    else:
        print(f"{run.algorithm}: regret at T={args.horizon}: {final.mean():.2f} "
              f"(min {final.min():.2f}, max {final.max():.2f} over {args.trials} trials)")
        if run.accountant is not None:
            g = record["guarantee"]
            print(f"ledger: {record['ledger']['noise_draws']} noise draws, node scale "
                  f"{run.scale:.4g}, ε per draw {format_epsilon(run.node_epsilon)}")
            print(f"claimed ε = {format_epsilon(args.epsilon)}; accountant ε = "
                  f"{format_epsilon(eps_stream)} ({route}); including round-0 records: "
                  f"{format_epsilon(eps_all)} -> {g['verdict']}")
    return 0


def _account(args: argparse.Namespace) -> int:
    deployment = load_deployment(args.file)
    report = budget_report(deployment)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        staging = args.out.with_name(f".{args.out.name}.tmp")
        staging.write_text(render_markdown(report), encoding="utf-8")
        staging.replace(args.out)
    if args.json:
        print(json.dumps(_jsonable(report), indent=2, allow_nan=False))
    else:
        print(render_text(report))
    return 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return json_number(value)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fedpriv`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args)
        if args.command == "account":
            return _account(args)
        return _run(args)
    except (ToolkitError, ValueError, TypeError, OSError) as error:
        print(f"fedpriv: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
