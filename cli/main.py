"""The ``fedpriv`` command line.

``fedpriv verify``
    Check every privacy claim of the four papers (accountant and audit) and write
    ``<out>/claims.md``, ``claims.json`` and one page per paper
    (:mod:`fedpriv.cli.verify`).
``fedpriv run ALGORITHM``
    Run one algorithm inside the accountant; print its regret, ledger summary and
    guarantee next to the paper's claim.
``fedpriv experiment NAME``
    Reproduce one of a paper's figures.
``fedpriv account FILE``
    Privacy budget report of a deployment described in TOML.

Algorithms and experiments come from the family modules in :data:`FAMILIES`; each
defines ``register(run, experiment)``, which adds its subparsers with a ``handler``.

Errors in the arguments or the data exit with status 2 and a message that names the
parameter; nothing is written to the report folder in that case.

``--secure-noise`` (every ``run`` command) releases with exact discrete noise on a grid
(:mod:`fedpriv.privacy.secure_noise`) instead of floating-point Laplace noise. The
commands in :data:`SECURE_NOISE_RUNS` support it; the others exit with status 2 and
say which do.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from fedpriv.audit.claims.claim import json_number
from fedpriv.cli.verify import register_verify
from fedpriv.privacy.deployment import (
    budget_report,
    load_deployment,
    render_markdown,
    render_text,
)
from fedpriv.privacy.errors import ToolkitError

__all__ = ["build_parser", "main"]

#: Modules that add ``run`` and ``experiment`` subcommands through ``register``.
FAMILIES = (
    "fedpriv.cli.gossip",
    "fedpriv.cli.feducb",
    "fedpriv.cli.linucb",
    "fedpriv.cli.li_song",
    "fedpriv.cli.coop",
)

#: ``run`` commands whose privacy mechanism takes ``secure=True`` (Laplace releases).
SECURE_NOISE_RUNS = (
    "gossip-fed-ucb",
    "cdp-mab",
    "ce-cdp-mab",
    "ddp-mab",
    "hdp-mab",
    "single-mab",
    "private-coop-ucb",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``fedpriv``."""
    parser = argparse.ArgumentParser(
        prog="fedpriv",
        description="Verify the differential-privacy claims of federated bandit algorithms.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    register_verify(sub)

    account = sub.add_parser("account", help="privacy budget report of a deployment (TOML)")
    account.add_argument("file", type=Path, help="deployment description (see examples/)")
    account.add_argument("--json", action="store_true", help="print the report as JSON")
    account.add_argument("--out", type=Path, default=None, help="also write Markdown here")

    run = sub.add_parser("run", help="run one algorithm inside the accountant")
    run_sub = run.add_subparsers(dest="algorithm", required=True, metavar="ALGORITHM")
    experiment = sub.add_parser("experiment", help="reproduce a paper's figure")
    experiment_sub = experiment.add_subparsers(dest="experiment", required=True,
                                               metavar="EXPERIMENT")
    for family in FAMILIES:
        importlib.import_module(family).register(run_sub, experiment_sub)
    for command in run_sub.choices.values():
        command.add_argument(
            "--secure-noise", action="store_true",
            help="exact discrete noise on a grid instead of floating-point Laplace noise "
                 f"(supported by: {', '.join(SECURE_NOISE_RUNS)})",
        )
    return parser


def _check_secure_noise(args: argparse.Namespace) -> None:
    """Refuse ``--secure-noise`` for a run command whose mechanism cannot take it."""
    if getattr(args, "secure_noise", False) and args.algorithm not in SECURE_NOISE_RUNS:
        raise ValueError(
            f"`--secure-noise` is not supported by `run {args.algorithm}` (its noise is "
            f"not a Laplace release, or it draws none); supported: "
            f"{', '.join(SECURE_NOISE_RUNS)}."
        )


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
        if args.command == "account":
            return _account(args)
        if args.command == "run":
            _check_secure_noise(args)
        return args.handler(args)
    except (ToolkitError, ValueError, TypeError, OSError) as error:
        print(f"fedpriv: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
