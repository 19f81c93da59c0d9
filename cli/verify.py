"""``fedpriv verify``: run every claim of the register, accountant and audit.

``cli/main.py`` calls :func:`register_verify` with its top-level subparsers:

    fedpriv verify [--quick] [--paper NAME] [--out reports] [--seed 0] [--workers N]
                   [--scheduler ADDRESS] [--json] [--fail-on violated|unresolved|never]
                   [--quiet] [--claims FILE ...] [options of the families' attachments]

Writes ``<out>/claims.md``, ``<out>/claims.json``, ``<out>/findings.json``,
``<out>/<paper>.md`` (and, for a paper whose family attaches an experiment to its
claims, that experiment's files in ``<out>/<paper>/``). The options an attachment
declares (:class:`fedpriv.audit.claims.attachment.Option`) are listed by ``--help``
under their family's heading, read from the registrations (which import nothing heavy),
and reach only that attachment.
``--paper`` runs one paper, merges its records into ``claims.json`` and leaves
``claims.md`` and ``findings.json`` (computed over every paper) alone. ``--claims FILE``
(repeatable) loads a user's claims file (a Python file defining ``FAMILY`` or
``FAMILIES``, :func:`fedpriv.audit.claims.family.load_claims_file`); without ``--paper``
only its families run and the report covers them alone (``claims.md``, ``claims.json``,
``findings.json``, ``<key>.md``, ``index.html``); a file that cannot be loaded exits 2
with a message naming ``--claims``. Each claims file is loaded, and each claim of a
claims file or of an installed entry point's family evaluated, in a forked worker
process: one that calls ``sys.exit`` or ``os._exit``, is killed, or runs past
``--timeout`` seconds (default 3600, per load and per claim) exits 2 naming the file or
the entry point and the claim, and no report is written (families' attachments run in
this process, docs/reference/cli.md). The table printed
at the end has the verdict, the end-to-end and mechanism ε, the audit's lower bound, the
tightness and the row's finding ids, followed by the headline the reports open with.

Progress goes to stderr: one bar for the whole run (tqdm) on a terminal, one line per
finished job (numbered over the whole run) otherwise, nothing with ``--quiet``.

Exit status, shared with ``fedpriv account`` and ``fedpriv audit``: 0 when nothing is
refuted, 1 when a claim is violated, 2 on bad input (nothing is written then).
``--fail-on`` sets what counts: ``violated`` (default) exits 1 when a row is violated
or could not be evaluated (verdict ``error``); ``unresolved`` also when a row is
unresolved; ``never`` exits 0 whatever the verdicts (reports only). The built-in papers
have violated claims, so a full ``fedpriv verify`` of them exits 1.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from fedpriv.cli.commands import EXIT_CODES, PAPER_NAMES

# The claims machinery is imported by the handler, so `fedpriv verify --help` is instant.

__all__ = ["FAIL_ON", "exit_status", "register_verify"]

#: ``--fail-on`` level -> the verdicts that make ``fedpriv verify`` exit 1.
FAIL_ON: dict[str, frozenset[str]] = {
    "violated": frozenset({"violated", "error"}),
    "unresolved": frozenset({"violated", "error", "unresolved"}),
    "never": frozenset(),
}

_EPILOG = (
    EXIT_CODES + " `--fail-on` sets what exits 1: violated (default: a violated row, or "
    "a row that could not be evaluated, verdict error), unresolved (those or an "
    "unresolved row) or never (always 0 after writing the reports). The built-in "
    "papers have violated claims, so a full run exits 1 by default."
)


def register_verify(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``verify`` subcommand to ``sub``; its handler is ``args.handler``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``fedpriv`` subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The ``verify`` parser.
    """
    p = sub.add_parser(
        "verify",
        help="check every registered privacy claim",
        description="Check every registered privacy claim with the "
        "accountant and an audit; write the reports.",
        epilog=_EPILOG,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small audit budgets (all claims in < 5 min on 2 cores)",
    )
    p.add_argument(
        "--paper",
        default=None,
        help=f"run one paper's claims: {', '.join(PAPER_NAMES)} (or a key of a "
        "family registered by --claims or an installed package)",
    )
    p.add_argument(
        "--claims",
        type=Path,
        action="append",
        default=None,
        metavar="FILE",
        help="a Python file defining FAMILY or FAMILIES: your own claims "
        "(repeatable); alone, only its families run (docs/guides/"
        "your-claims.md)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="seconds that loading a --claims file, or evaluating one claim of a "
        "--claims file or an installed family, may take before it is stopped and the "
        "run exits 2 (default 3600)",
    )
    p.add_argument(
        "--out", type=Path, default=Path("reports"), help="report folder (default: reports)"
    )
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: every core)")
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the jobs on an existing dask.distributed cluster, e.g. "
        "tcp://10.0.0.5:8786 (workers need this fedpriv version)",
    )
    p.add_argument("--json", action="store_true", help="print the claims as JSON")
    p.add_argument(
        "--fail-on",
        choices=tuple(FAIL_ON),
        default="violated",
        help="which verdicts exit with status 1: violated (default; also a "
        "row that could not be evaluated), unresolved (those and "
        "unresolved rows) or never",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (the bar is off anyway when stderr is "
        "not a terminal: one line per job then)",
    )
    _add_attachment_options(p)
    p.set_defaults(handler=_verify)
    return p


#: ``Option.kind`` -> argparse ``type`` (as :data:`fedpriv.audit.claims.attachment.OPTION_KINDS`).
_KINDS = {"str": str, "int": int, "float": float, "path": Path}


def _add_attachment_options(p: argparse.ArgumentParser) -> None:
    """One argument group per attachment with options, headed by its family.

    A flag another option already took is prefixed with the family's CLI name
    (``--<key>-<flag>``). ``args.attachment_options`` lists ``(attachment id, field,
    dest)`` for :func:`_config`.
    """
    from fedpriv.audit.claims.family import families

    taken = {flag for action in p._actions for flag in action.option_strings}
    specs = []
    for fam in families():
        for attachment in fam.attachments:
            if not attachment.options:
                continue
            ident = f"{fam.key}/{attachment.name}"
            group = p.add_argument_group(f"{fam.key} ({fam.title}): {attachment.title}")
            for option in attachment.options:
                flag = option.flag
                if flag in taken:
                    flag = f"--{fam.cli_name}-{flag[2:]}"
                action = group.add_argument(
                    flag,
                    type=_KINDS[option.kind],
                    default=None,
                    metavar=option.metavar,
                    help=option.help,
                )
                taken.add(flag)
                specs.append((ident, option.field, action.dest))
    p.set_defaults(attachment_options=tuple(specs))


_JOB_LINE = re.compile(r"^\[\d+/\d+\] ")


def _terminal_columns(stream) -> int:
    """Width of the terminal ``stream`` writes to; 0 when it reports none."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 0


def _short(message: str) -> str:
    """A finished job's line cut to fit beside the bar: the key's last two parts (or
    the step's first words) and what follows the colon up to a comma or parenthesis
    (the verdict, a regret, an audit's lower bound)."""
    head, _, tail = message.partition(":")
    name = "/".join(head.split("/")[-2:]) if "/" in head else head
    word = tail.split(",")[0].split("(")[0].strip()[:20]
    return f"{name[:26]}: {word}" if word else name[:26]


class _Progress:
    """The progress callback of one run: one tqdm bar over every job on a terminal,
    one line per finished job (numbered over the whole run) otherwise, or nothing.

    Jobs are the lines :func:`verify_claims` starts with ``[i/n]``; their number is
    :func:`planned_jobs`. Step lines (``[audit] ...``) name the bar's current step.
    """

    def __init__(self, total: int, *, quiet: bool, stream=None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.total, self.done, self.quiet = total, 0, quiet
        self.started = time.perf_counter()
        self.bar = None
        if not quiet and self.stream.isatty():
            from tqdm import tqdm

            # A terminal that reports no width (a bare pty) gets 80 columns: tqdm
            # would draw nothing at width (or height) 0.
            sized = _terminal_columns(self.stream) > 0
            self.bar = tqdm(
                total=total,
                file=self.stream,
                unit="job",
                desc="verify",
                dynamic_ncols=sized,
                ncols=None if sized else 80,
                nrows=None if sized else 24,
                smoothing=0.1,
            )

    def __call__(self, message: str) -> None:
        job = _JOB_LINE.match(message)
        if job:
            self.done += 1
            message = message[job.end() :]
        if self.bar is not None:
            if job:  # described by its step: regret, audit, or the claim's paper
                self.bar.set_description_str(
                    message.split(None, 1)[0].split("/", 1)[0], refresh=False
                )
                self.bar.set_postfix_str(_short(message), refresh=False)
                self.bar.update(1)
            else:
                self.bar.set_description_str(message.split("]", 1)[0].lstrip("["))
        elif not self.quiet:
            count = f"[{self.done}/{self.total}] " if job else ""
            print(
                f"[{time.perf_counter() - self.started:6.1f}s] {count}{message}",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _headline(results) -> str:
    """The headline ``claims.md`` opens with (:func:`findings.headline` and the count of
    rows not evaluated)."""
    from fedpriv.audit.claims.findings import headline

    errors = sum(r.verdict == "error" for r in results)
    return headline(results) + (f" Not evaluated (recipe error): {errors}." if errors else "")


def exit_status(verdicts, fail_on: str = "violated") -> int:
    """1 when one of ``verdicts`` is in ``FAIL_ON[fail_on]``, else 0.

    Parameters
    ----------
    verdicts : iterable of str
        The rows' verdicts.
    fail_on : str
        A key of ``FAIL_ON``.

    Returns
    -------
    int
        0 or 1.
    """
    failing = FAIL_ON[fail_on]
    return 1 if any(v in failing for v in verdicts) else 0


def _config(args: argparse.Namespace) -> Any:
    from fedpriv.audit.claims.verify import ClaimsConfig

    common: dict[str, Any] = {"seed": args.seed}
    if args.workers is not None:
        common["workers"] = args.workers
    options: dict[str, dict[str, Any]] = {}
    for ident, field, dest in getattr(args, "attachment_options", ()):
        value = getattr(args, dest, None)
        if value is not None:
            options.setdefault(ident, {})[field] = value
    papers = None if args.paper is None else (args.paper,)
    overrides = {
        **common,
        "papers": papers,
        "options": options,
        "scheduler": args.scheduler,
        "claims_files": _claims_files(args),
        "timeout": _timeout(args),
    }
    return ClaimsConfig.quick_config(**overrides) if args.quick else ClaimsConfig(**overrides)


def _timeout(args: argparse.Namespace) -> float:
    """``--timeout``, > 0 (argparse already refused negatives and NaN)."""
    from fedpriv.audit.engine.isolation import DEFAULT_TIMEOUT

    timeout = getattr(args, "timeout", None)
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    if not timeout > 0:
        raise ValueError(f"`--timeout` must be a number of seconds > 0, got {timeout!r}.")
    return timeout


def _claims_files(args: argparse.Namespace) -> tuple[str, ...]:
    """Load every ``--claims`` file; a file that fails is bad input (exit 2), named.

    Each file is loaded in a forked worker first (``--timeout``), so that one that
    exits, dies or hangs while loading exits 2 instead of ending this process."""
    from fedpriv.audit.claims.register import outside_claims
    from fedpriv.audit.claims.verify import load_claims_files

    paths = tuple(getattr(args, "claims", None) or ())
    for path in paths:
        try:
            load_claims_files((path,), timeout=_timeout(args))
            outside_claims()  # the rows' keys and types are checked now, not mid-run
        except (Exception, SystemExit) as error:
            from fedpriv.audit.claims.family import unload_claims_file

            # A file whose rows are malformed leaves the registry as it found it.
            unload_claims_file(path)
            raise ValueError(f"`--claims` {path}: {type(error).__name__}: {error}") from error
    return load_claims_files(paths)


def _verify(args: argparse.Namespace) -> int:
    from fedpriv.audit.claims.report import write_claims_report
    from fedpriv.audit.claims.verify import planned_jobs, verify_claims
    from fedpriv.privacy import format_epsilon

    config = _config(args)
    progress = _Progress(planned_jobs(config), quiet=args.quiet)
    try:
        report = verify_claims(config, progress=progress)
    finally:
        progress.close()
    written = write_claims_report(report, args.out)
    status = exit_status((r.verdict for r in report.results), args.fail_on)
    if args.json:
        print(json.dumps([r.to_dict() for r in report.results], indent=2, allow_nan=False))
        if not args.quiet:
            print(_headline(report.results), file=sys.stderr)
        return status
    header = (
        f"{'claim':<58}{'claimed ε':>11}{'accountant ε':>14}{'mechanism ε':>13}"
        f"{'audit LB':>10}{'tightness':>11}  verdict [findings]"
    )
    print(header)
    print("-" * len(header))
    for r in report.results:
        lower = "-" if r.audit is None else f"{r.audit.epsilon_lower_bound:.3f}"
        tight = "-" if r.tightness is None else f"{r.tightness:.2f}"
        mech = "-" if r.mechanism_epsilon is None else format_epsilon(r.mechanism_epsilon)
        print(
            f"{(r.key or r.claim.algorithm)[:57]:<58}"
            f"{format_epsilon(float(r.claim.claimed.epsilon)):>11}"
            f"{format_epsilon(r.accountant_epsilon):>14}{mech:>13}{lower:>10}{tight:>11}"
            f"  {r.verdict}" + (f" [{', '.join(r.finding_ids)}]" if r.finding_ids else "")
        )
    bracketed = [
        r for r in report.results if r.delta_is_vacuous and r.audit_epsilon_at_1e6 is not None
    ]
    if bracketed:
        print("\nclaimed δ vacuous, bracketed at δ = 1e-6 (audit LB <= ε <= accountant):")
    for r in bracketed:
        tight = "-" if r.tightness_at_1e6 is None else f"{r.tightness_at_1e6:.2f}"
        print(
            f"  {r.key or r.claim.algorithm}: audit LB {r.audit_epsilon_at_1e6:.3f}, "
            f"accountant {format_epsilon(float(r.epsilon_at_1e6))}, tightness {tight}"
        )
    print(
        f"\n{len(report.results)} claims in {report.seconds:.0f} s; wrote "
        + ", ".join(str(p) for p in written)
    )
    print(f"\n{_headline(report.results)}")
    if status:
        print(
            f"exit status 1 (--fail-on {args.fail_on}; `--fail-on never` exits 0)", file=sys.stderr
        )
    return status
