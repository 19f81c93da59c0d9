"""The ``fedpriv`` command line.

``fedpriv verify``
    Check every registered privacy claim (accountant and audit) and write
    ``<out>/claims.md``, ``claims.json`` and one page per paper
    (:mod:`fedpriv.cli.verify`).
``fedpriv audit MODULE:FUNCTION``
    Audit a user's own mechanism against a claim (:mod:`fedpriv.cli.audit`).
``fedpriv run ALGORITHM``
    Run one algorithm inside the accountant; print its regret, ledger summary and
    guarantee next to the paper's claim.
``fedpriv experiment NAME``
    Reproduce one of a paper's figures.
``fedpriv account FILE``
    Privacy budget report of a deployment described in TOML, or of what a running
    deployment has spent so far when ``FILE`` is a ledger store
    (:mod:`fedpriv.privacy.ledger.store`).

Algorithms and experiments come from the family registrations
(:mod:`fedpriv.cli.commands`): each command names the module that declares it
(``COMMANDS``, :mod:`fedpriv.cli.runs`), whose options and run function the shared
machinery wires into a subparser with a ``handler``.

Errors in the arguments or the data exit with status 2 and a message that names the
parameter; nothing is written to the report folder in that case.

``--secure-noise`` (every ``run`` command) releases with exact discrete noise on a grid
(:mod:`fedpriv.privacy.mechanisms.secure_noise`) instead of floating-point Laplace noise. The
commands registered with ``secure_noise=True`` (:data:`SECURE_NOISE_RUNS`) support it; the
others exit with status 2 and say which do.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from fedpriv.cli import commands
from fedpriv.cli.audit import register_audit
from fedpriv.cli.commands import EXIT_CODES, FAMILIES, SECURE_NOISE_RUNS, command_table, family_of
from fedpriv.cli.new_family import register_new_family
from fedpriv.cli.runs import register_commands
from fedpriv.cli.verify import register_verify

# Nothing above imports NumPy, pandas, matplotlib or dp-accounting: the commands import
# what they use when they run, so ``fedpriv --help`` and ``fedpriv <command> --help``
# answer at once (tests/test_cli_startup.py, benchmarks/bench_cli.py).

__all__ = [
    "FAMILIES",
    "MEMORY_FRACTION",
    "OPTION_CEILINGS",
    "SECURE_NOISE_RUNS",
    "build_parser",
    "check_memory",
    "main",
]


def build_parser(families: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``fedpriv``.

    ``families`` names the command modules (:data:`FAMILIES`) whose ``run`` and
    ``experiment`` commands get their full parsers; the others are listed by name and
    help only (:mod:`fedpriv.cli.commands`). Default: every module.

    Parameters
    ----------
    families : tuple of str, optional
        Command modules (dotted paths) to register in full.

    Returns
    -------
    argparse.ArgumentParser
    """
    run_commands, experiment_commands = command_table("run"), command_table("experiment")
    if families is None:
        families = tuple(
            dict.fromkeys(c.module for c in (*run_commands.values(), *experiment_commands.values()))
        )
    families = tuple(families)
    parser = argparse.ArgumentParser(
        prog="fedpriv",
        description="Verify the differential-privacy claims of federated bandit algorithms.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    register_verify(sub)
    register_audit(sub)
    register_new_family(sub)

    account = sub.add_parser(
        "account",
        help="privacy budget report of a deployment (TOML) or a ledger store",
        description="Privacy budget report of a deployment described in TOML (see "
        "examples/), or of what a ledger store has spent.",
        epilog=f"{EXIT_CODES} Here 1 means the deployment's [claim] is violated (a "
        "lower bound exceeds it); holds, unresolved and reports without a claim "
        "exit 0. A deployment file with an unknown or missing field exits 2 "
        "and lists the allowed fields; so does a FILE that is not a regular file "
        "(a FIFO, /dev/zero), a deployment file over 16 MiB or nested too deeply, "
        "or one over --max-cells; `--verify` exits 2 on a defective ledger.",
    )
    account.add_argument(
        "file",
        type=_account_target,
        help="deployment description (see examples/), ledger store (SQLite file), or a "
        "PostgreSQL ledger store's postgresql:// URL",
    )
    account.add_argument(
        "--delta",
        type=float,
        default=None,
        help="δ for a ledger store's report (default: the budget's δ, else 0)",
    )
    account.add_argument("--json", action="store_true", help="print the report as JSON")
    account.add_argument("--out", type=Path, default=None, help="also write Markdown here")
    account.add_argument(
        "--max-cells",
        type=int,
        default=None,
        metavar="N",
        help="most cell charges a deployment file may make in total (cells named "
        "by `per` × `count`, summed over releases; default 1,000,000)",
    )
    account.add_argument(
        "--verify",
        action="store_true",
        help="only verify a ledger store (hash chain, event rows, cell "
        "counts, configuration, schema); exit 2 naming the first defect. A keyed "
        "store reads its key (hex) from FEDPRIV_LEDGER_KEY",
    )
    account.add_argument(
        "--expect-head",
        default=None,
        metavar="CHARGES:DRAWS:DIGEST",
        help="with --verify: a ledger head kept elsewhere (a receipt, or the head an "
        "earlier --verify printed) that the store must extend; exit 2 if it does not "
        "(a rewound, truncated, older or other ledger's file)",
    )

    run = sub.add_parser(
        "run",
        help="run one algorithm inside the accountant",
        epilog=f"{EXIT_CODES} Here 1 means the run's claim is violated.",
    )
    run_sub = run.add_subparsers(dest="algorithm", required=True, metavar="ALGORITHM")
    experiment = sub.add_parser("experiment", help="reproduce a paper's figure")
    kind = {"dest": "experiment", "required": True, "metavar": "EXPERIMENT"}
    experiment_sub = experiment.add_subparsers(**kind)
    for family in families:
        register_commands(importlib.import_module(family), run_sub, experiment_sub)
    for table, subparsers in ((run_commands, run_sub), (experiment_commands, experiment_sub)):
        for name, command in table.items():
            if command.module not in families:  # listed, not built
                subparsers.add_parser(name, help=command.help, add_help=False)
    for name, command in run_sub.choices.items():
        if run_commands[name].module not in families:
            continue
        command.add_argument(
            "--secure-noise",
            action="store_true",
            help="exact discrete noise on a grid instead of floating-point noise "
            f"(supported by: {', '.join(SECURE_NOISE_RUNS)})",
        )
    guard_numeric_options(parser)
    return parser


def _check_secure_noise(args: argparse.Namespace) -> None:
    """Refuse ``--secure-noise`` for a run command whose mechanism cannot take it."""
    if getattr(args, "secure_noise", False) and args.algorithm not in SECURE_NOISE_RUNS:
        raise ValueError(
            f"`--secure-noise` is not supported by `run {args.algorithm}` (it draws no "
            f"noise, or its mechanism has no secure twin); supported: "
            f"{', '.join(SECURE_NOISE_RUNS)}."
        )


#: Float options where ``inf`` is meaningful (ε = inf: no noise).
INFINITE_OK = frozenset({"--epsilon"})
#: Float options that may be negative (a contaminating reward value).
SIGNED_OK = frozenset({"--q-value"})
#: Largest value each size option takes (refused by argparse, exit 2, before anything
#: runs). ``--epsilon`` is capped at ``fedpriv.privacy.accounting.events.MAX_EVENT_EPSILON``
#: (``inf`` stays allowed where documented); ``--samples`` at
#: ``fedpriv.audit.regression.api.MAX_SAMPLES``; memory is checked separately
#: (:func:`check_memory`). Literals, so that ``fedpriv --help`` imports no NumPy.
OPTION_CEILINGS = {
    "--horizon": 10**9,
    "--regret-horizon": 10**9,
    "--agents": 10**5,
    "--arms": 10**6,
    "--actions": 10**6,
    "--trials": 10**6,
    "--samples": 10**9,
    "--dimension": 10**4,
    "--dim": 10**4,
    "--epsilon": 700.0,
}
#: Fraction of the machine's available memory the planned arrays of a run may take.
MEMORY_FRACTION = 0.5


def _checked_number(option: str, kind: type) -> Any:
    """An argparse ``type`` that parses ``kind`` and refuses NaN, and what ``option``
    cannot take: negatives (all but :data:`SIGNED_OK`) and infinities (all but
    :data:`INFINITE_OK`). Finer ranges (δ < 1, ε > 0, ...) are checked by the
    function the command calls, with a message naming the parameter."""
    allow_inf, allow_negative = option in INFINITE_OK, option in SIGNED_OK

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(
                f"{option} must be {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if kind is float and math.isnan(value):
            raise argparse.ArgumentTypeError(f"{option} must be a number, got NaN")
        if kind is float and math.isinf(value) and not allow_inf:
            raise argparse.ArgumentTypeError(f"{option} must be finite, got {text!r}")
        if value < 0 and not allow_negative:
            kind_name = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{option} must be {kind_name} >= 0, got {text!r}")
        ceiling = OPTION_CEILINGS.get(option)
        if ceiling is not None and value > ceiling and not math.isinf(value):
            raise argparse.ArgumentTypeError(f"{option} must be in [0, {ceiling:,}], got {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def guard_numeric_options(parser: argparse.ArgumentParser) -> None:
    """Give every int/float option of ``parser`` (and its subparsers) a checked type."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                guard_numeric_options(child)
        elif action.type in (int, float) and action.option_strings:
            action.type = _checked_number(action.option_strings[-1], action.type)


def _available_memory() -> int:
    """Bytes of memory available to a new allocation (MemAvailable; 8 GiB if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def check_memory(args: argparse.Namespace, available: int | None = None) -> None:
    """Refuse a run whose planned reward/context tables exceed :data:`MEMORY_FRACTION`
    of the available memory, before anything is allocated.

    The estimate is ``8 bytes × trials × agents × horizon × arms`` (× dimension for
    commands registered with ``tables="contexts"``), the float64 tables the runs sample
    up front; commands registered with ``tables=""`` plan none and are not checked.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    available : int, optional
        Available memory in bytes (default: measured).

    Raises
    ------
    ResourceLimitError
        Naming the options and the largest ``--horizon`` that would fit.
    """
    from fedpriv.privacy.errors import ResourceLimitError

    name = getattr(args, "algorithm", None) or getattr(args, "experiment", None)
    table = command_table("run" if getattr(args, "algorithm", None) else "experiment")
    command = table.get(name) if name else None
    tables = command.tables if command is not None else ""
    horizon = getattr(args, "horizon", None) or 0
    with_dim = {"contexts": True, "rewards": False}.get(tables)
    if args.command == "verify":
        horizon, with_dim = getattr(args, "regret_horizon", None) or 0, True
    elif with_dim is None:
        return
    if not horizon:
        return
    per_round = 8 * (getattr(args, "trials", None) or 1) * (getattr(args, "agents", None) or 10)
    per_round *= getattr(args, "arms", None) or getattr(args, "actions", None) or 20
    if with_dim:
        per_round *= getattr(args, "dimension", None) or getattr(args, "dim", None) or 10
    available = _available_memory() if available is None else available
    limit = MEMORY_FRACTION * available
    if per_round * horizon > limit:
        flag = "--regret-horizon" if args.command == "verify" else "--horizon"
        raise ResourceLimitError(
            f"`{flag}` {horizon:,} plans about {per_round * horizon / 2**30:,.1f} GiB of "
            f"tables (8 bytes × trials × agents × horizon × arms{' × dimension' if with_dim else ''}), "
            f"more than {MEMORY_FRACTION:g} of the {available / 2**30:,.1f} GiB available; "
            f"with these options `{flag}` must be <= {int(limit // per_round):,}."
        )


_STORE_URL_SCHEMES = ("postgresql://", "postgres://")


def _account_target(text: str) -> Path | str:
    """``fedpriv account``'s FILE: a PostgreSQL store's URL as given, anything else a path."""
    return text if text.startswith(_STORE_URL_SCHEMES) else Path(text)


def _shown(target: Path | str) -> str:
    """``target`` for printing: a URL's password replaced by ``***``."""
    from urllib.parse import urlsplit, urlunsplit

    if isinstance(target, Path):
        return str(target)
    parts = urlsplit(target)
    if parts.password is None:
        return target
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _check_regular_file(path: Path) -> None:
    """Refuse a ``fedpriv account`` FILE that is missing or not a regular file.

    ``os.stat`` does not open the file, so a FIFO (which would block ``open``) or a
    device such as ``/dev/zero`` or ``/dev/urandom`` (which would be read without
    end) is refused before anything reads it."""
    import stat

    mode = path.stat().st_mode  # FileNotFoundError (an OSError: exit 2) if missing
    if not stat.S_ISREG(mode):
        kind = "directory" if stat.S_ISDIR(mode) else "FIFO, device or socket"
        raise ValueError(
            f"`file` {path} must be a regular file (a deployment TOML or a ledger "
            f"store), got a {kind}."
        )


def _account(args: argparse.Namespace) -> int:
    from fedpriv.privacy.deployment import (
        budget_report,
        load_deployment,
        render_markdown,
        render_store_markdown,
        render_store_text,
        render_text,
        store_report,
    )
    from fedpriv.privacy.ledger.backends import open_store
    from fedpriv.privacy.ledger.sqlite_file import is_store

    url = isinstance(args.file, str)  # a PostgreSQL store (see _account_target)
    if not url:
        _check_regular_file(args.file)
    key = _ledger_key()
    if args.expect_head is not None and not args.verify:
        raise ValueError("`--expect-head` applies with `--verify`.")
    if args.verify:
        if not (url or is_store(args.file)):
            raise ValueError(f"`--verify` checks a ledger store; {args.file} is not one.")
        # verifies the whole ledger, and that it extends the expected head
        store = open_store(args.file, key=key, expect_head=args.expect_head)
        try:
            head = store.head()
        finally:
            store.close()
        print(
            f"{_shown(args.file)}: ledger verified (store {store.store_id}"
            f"{', keyed' if key is not None else ''}"
            f"{', extends the expected head' if args.expect_head else ''}): "
            f"{head.charges} charge row(s), {head.draws} draw row(s), head {head}"
        )
        return 0
    if url or is_store(args.file):
        report = store_report(args.file, delta=args.delta, key=key)
        text, markdown = render_store_text(report), render_store_markdown(report)
    else:
        if args.delta is not None:
            raise ValueError(
                "`--delta` applies to a ledger store; a deployment file "
                "sets `target_delta` (or its claim's δ)."
            )
        if args.max_cells is not None and args.max_cells < 1:
            raise ValueError(f"`--max-cells` must be an integer >= 1, got {args.max_cells}.")
        limit = {} if args.max_cells is None else {"max_total_cells": args.max_cells}
        report = budget_report(load_deployment(args.file, **limit))
        text, markdown = render_text(report), render_markdown(report)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        staging = args.out.with_name(f".{args.out.name}.tmp")
        staging.write_text(markdown, encoding="utf-8")
        staging.replace(args.out)
    if args.json:
        from fedpriv.audit.claims.claim import jsonable

        print(json.dumps(jsonable(report), indent=2, allow_nan=False))
    else:
        print(text)
    # Exit codes gate CI: 1 when the claim is violated (a lower bound exceeds it), as
    # `fedpriv audit` does; `holds`, `unresolved` and reports without a claim exit 0.
    return 1 if report.get("verdict") == "violated" else 0


def _ledger_key() -> bytes | None:
    """The ledger store's HMAC key from ``FEDPRIV_LEDGER_KEY`` (hexadecimal), if set."""
    text = os.environ.get("FEDPRIV_LEDGER_KEY")
    if not text:
        return None
    try:
        return bytes.fromhex(text.strip())
    except ValueError:
        raise ValueError(
            "FEDPRIV_LEDGER_KEY must hold the ledger key as hexadecimal digits."
        ) from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fedpriv`` console script.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 nothing refuted, 1 a claim or budget violated, 2 bad input
        (or code that called ``sys.exit``, died or ran past ``--timeout``).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    from fedpriv.privacy.errors import ToolkitError

    try:  # the parser reads the registered families (installed entry points included)
        for why in commands.load_registrations():  # a broken installed family: skipped, named
            print(f"fedpriv: warning: {why}", file=sys.stderr)
        family, installed = family_of(argv), commands.probe_command_module(argv)
        parser = build_parser(() if family is None else (family,))
    except (ValueError, ImportError, ToolkitError) as error:  # a colliding family; a
        print(f"fedpriv: error: {error}", file=sys.stderr)  # missing or exiting module
        return 2
    except SystemExit as stop:  # a family's command module exited while loading
        print(f"fedpriv: error: a command module called sys.exit({stop.code!r})", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a refused argument (2)
        return int(stop.code or 0)

    try:
        if args.command == "account":
            return _account(args)
        if args.command == "run":
            _check_secure_noise(args)
        check_memory(args)
        return args.handler(args) if not installed else commands.run_installed(args, installed)
    except SystemExit as stop:  # code run in this process (an installed family's recipe)
        print(
            f"fedpriv: error: code run by `fedpriv {args.command}` called "
            f"sys.exit({stop.code!r}); nothing is reported as checked.",
            file=sys.stderr,
        )
        return 2
    except (ToolkitError, ValueError, TypeError, OSError) as error:
        print(f"fedpriv: error: {error}", file=sys.stderr)
        return 2
    except RecursionError:  # an input nested deeper than any parser here can follow
        print(
            f"fedpriv: error: an input of `fedpriv {args.command}` is nested too deeply "
            "to read (a TOML file, a JSON --pair value, ...); flatten it.",
            file=sys.stderr,
        )
        return 2
    except (MemoryError, OverflowError) as error:  # a size the guards did not foresee
        print(
            f"fedpriv: error: the arguments ask for more than this machine can compute "
            f"({type(error).__name__}: {error}); lower the sizes (--horizon, --agents, "
            f"--trials, --samples, counts) or --epsilon.",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
