"""``fedpriv verify``: run every claim of the register, accountant and audit.

``cli/main.py`` calls :func:`register_verify` with its top-level subparsers:

    fedpriv verify [--quick] [--paper NAME] [--out reports] [--seed 0] [--workers N]
                   [--scheduler ADDRESS] [--json] [--data CSV] [--trials N]
                   [--regret-horizon T]

Writes ``<out>/claims.md``, ``<out>/claims.json``, ``<out>/findings.json``,
``<out>/<paper>.md`` (and Fed_UCB's ``<out>/gossip_fed_ucb/`` folder when that paper runs).
``--paper`` runs one paper, merges its records into ``claims.json`` and leaves
``claims.md`` and ``findings.json`` (computed over every paper) alone. The table printed
at the end has the verdict, the end-to-end and mechanism ε, the audit's lower bound, the
tightness and the row's finding ids.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from fedpriv.cli.commands import PAPER_NAMES

# The claims machinery is imported by the handler, so `fedpriv verify --help` is instant.

__all__ = ["register_verify"]


def register_verify(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``verify`` subcommand to ``sub``; its handler is ``args.handler``."""
    p = sub.add_parser("verify", help="check every privacy claim of the four papers")
    p.add_argument("--quick", action="store_true",
                   help="small audit budgets (all claims in < 5 min on 2 cores)")
    p.add_argument("--paper", default=None,
                   help=f"run one paper's claims: {', '.join(PAPER_NAMES)}")
    p.add_argument("--out", type=Path, default=Path("reports"),
                   help="report folder (default: reports)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes (default: every core)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the jobs on an existing dask.distributed cluster, e.g. "
                        "tcp://10.0.0.5:8786 (workers need this fedpriv version)")
    p.add_argument("--json", action="store_true", help="print the claims as JSON")
    p.add_argument("--data", type=Path, default=None,
                   help="UCI Diabetes-130 CSV or zip for Fed_UCB's regret runs")
    p.add_argument("--trials", type=int, default=None, help="Fed_UCB regret-run trials")
    p.add_argument("--regret-horizon", type=int, default=None,
                   help="Fed_UCB regret-run horizon")
    p.set_defaults(handler=_verify)
    return p


def _progress(started: float):
    def say(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr,
              flush=True)

    return say


def _config(args: argparse.Namespace) -> Any:
    from fedpriv.audit.claims.fed_ucb import VerifyConfig
    from fedpriv.audit.claims.verify import ClaimsConfig

    common: dict[str, Any] = {"seed": args.seed}
    if args.workers is not None:
        common["workers"] = args.workers
    fed: dict[str, Any] = {**common, "data_path": args.data}
    if args.trials is not None:
        fed["n_trials"] = args.trials
    if args.regret_horizon is not None:
        fed["regret_horizon"] = args.regret_horizon
    fed_config = ClaimsConfig.quick_fed_ucb(**fed) if args.quick else VerifyConfig(**fed)
    papers = None if args.paper is None else (args.paper,)
    overrides = {**common, "papers": papers, "fed_ucb": fed_config,
                 "scheduler": args.scheduler}
    return ClaimsConfig.quick_config(**overrides) if args.quick else ClaimsConfig(**overrides)


def _verify(args: argparse.Namespace) -> int:
    from fedpriv.audit.claims.report import write_claims_report
    from fedpriv.audit.claims.verify import verify_claims
    from fedpriv.privacy import format_epsilon

    started = time.perf_counter()
    config = _config(args)
    report = verify_claims(config, progress=_progress(started))
    written = write_claims_report(report, args.out)
    if args.json:
        print(json.dumps([r.to_dict() for r in report.results], indent=2, allow_nan=False))
        return 0
    header = (f"{'claim':<58}{'claimed ε':>11}{'accountant ε':>14}{'mechanism ε':>13}"
              f"{'audit LB':>10}{'tightness':>11}  verdict [findings]")
    print(header)
    print("-" * len(header))
    for r in report.results:
        lower = "-" if r.audit is None else f"{r.audit.epsilon_lower_bound:.3f}"
        tight = "-" if r.tightness is None else f"{r.tightness:.2f}"
        mech = "-" if r.mechanism_epsilon is None else format_epsilon(r.mechanism_epsilon)
        print(f"{(r.key or r.claim.algorithm)[:57]:<58}"
              f"{format_epsilon(float(r.claim.claimed.epsilon)):>11}"
              f"{format_epsilon(r.accountant_epsilon):>14}{mech:>13}{lower:>10}{tight:>11}"
              f"  {r.verdict}" + (f" [{', '.join(r.finding_ids)}]" if r.finding_ids else ""))
    bracketed = [r for r in report.results
                 if r.delta_is_vacuous and r.audit_epsilon_at_1e6 is not None]
    if bracketed:
        print("\nclaimed δ vacuous, bracketed at δ = 1e-6 (audit LB <= ε <= accountant):")
    for r in bracketed:
        tight = "-" if r.tightness_at_1e6 is None else f"{r.tightness_at_1e6:.2f}"
        print(f"  {r.key or r.claim.algorithm}: audit LB {r.audit_epsilon_at_1e6:.3f}, "
              f"accountant {format_epsilon(float(r.epsilon_at_1e6))}, tightness {tight}")
    print(f"\n{len(report.results)} claims in {report.seconds:.0f} s; wrote "
          + ", ".join(str(p) for p in written))
    return 0
