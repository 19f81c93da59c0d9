"""A family's ``run`` and ``experiment`` commands as data, and the one path they all take.

A family's command module (``cli/<family>.py``) declares its commands and nothing more:
:data:`COMMANDS`, a tuple of :class:`RunCommand` and :class:`ExperimentCommand`, each
naming its options (:func:`option`, :class:`OneOf`, in ``--help`` order) and its run
function. :func:`register_commands` does the argparse wiring for ``fedpriv run`` and
``fedpriv experiment`` (the help line of each command is its registration's,
:class:`fedpriv.audit.claims.family.Command`), and every ``fedpriv run`` takes the same
path: time the family's run function, add ``seconds`` to its record, print the record as
JSON (``--json``) or the family's text lines, and exit with :func:`run_status` (1 when a
verdict in the record is ``violated``; bad input, 2, is :func:`fedpriv.cli.main.main`'s).

A run function takes the parsed arguments and returns a :class:`RunReport`: the JSON
record (algorithm, setting, regret, the guarantee with its verdict) and the text lines.
Nothing here imports NumPy, pandas or an algorithm, so ``fedpriv run ... --help`` stays
fast (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from fedpriv.audit.claims.family import FamilyError
from fedpriv.cli.commands import command_table, run_status

__all__ = [
    "JSON",
    "SEED",
    "TRIALS",
    "ExperimentCommand",
    "OneOf",
    "Option",
    "RunCommand",
    "RunReport",
    "option",
    "options_for",
    "progress_printer",
    "register_commands",
    "summary",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Option:
    """One command-line option: its flags and :meth:`argparse.ArgumentParser.add_argument`'s
    keywords (``type``, ``default``, ``choices``, ``help``, ...)."""

    flags: tuple[str, ...]
    settings: Mapping[str, Any]


def option(*flags: str, **settings: Any) -> Option:
    """An :class:`Option`: ``option("--agents", type=int, default=10, help="n_agents M")``.

    Parameters
    ----------
    *flags : str
        The option's flags, each starting with ``--``.
    **settings
        Keywords of ``add_argument``.

    Returns
    -------
    Option

    Raises
    ------
    ValueError
        If no flag is given or a flag does not start with ``--``.
    """
    if not flags or not all(isinstance(f, str) and f.startswith("--") for f in flags):
        raise ValueError(f"`flags` must be one or more '--name' strings, got {flags!r}.")
    return Option(tuple(flags), dict(settings))


@dataclasses.dataclass(frozen=True, slots=True)
class OneOf:
    """Options of which the command line may give at most one (a mutually exclusive group)."""

    options: tuple[Option, ...]


def options_for(
    name: str, table: Iterable[tuple[Option | OneOf, Iterable[str] | None]]
) -> tuple[Option | OneOf, ...]:
    """The options of command ``name`` from a family's option table.

    A family that shares options between commands declares them once, as one table of
    ``(option, commands)`` rows in ``--help`` order; ``commands`` names the commands that
    take the row's option (None: every command). An option whose default or help differs
    between commands is two rows.

    Parameters
    ----------
    name : str
        The command.
    table : iterable of (Option or OneOf, iterable of str or None)
        The family's option table.

    Returns
    -------
    tuple of Option or OneOf
        The rows for ``name``, in table order.

    Examples
    --------
    >>> table = [(option("--agents", type=int), None), (option("--c1", type=float), ["cdp"])]
    >>> [o.flags for o in options_for("ddp", table)]
    [('--agents',)]
    """
    return tuple(entry for entry, names in table if names is None or name in names)


@dataclasses.dataclass(frozen=True, slots=True)
class RunReport:
    """What a family's run function returns.

    Attributes
    ----------
    record : dict
        The ``--json`` record (nested dicts, lists and JSON numbers; ``float('inf')`` as
        ``"inf"``); every ``"verdict"`` in it decides the exit status. ``seconds`` is added.
    lines : callable
        ``() -> iterable of str``: the text printed without ``--json``, one line each;
        called only then.
    """

    record: dict[str, Any]
    lines: Callable[[], Iterable[str]]


@dataclasses.dataclass(frozen=True, slots=True)
class RunCommand:
    """One ``fedpriv run NAME`` command.

    Attributes
    ----------
    name : str
        The command's name; its registration (``Family.run_commands[name]``) gives its
        help line.
    options : tuple of Option or OneOf
        In ``--help`` order (``--secure-noise`` is added by :mod:`fedpriv.cli.main`).
    run : callable
        ``(args: argparse.Namespace) -> RunReport``.
    defaults : mapping, default {}
        Extra attributes set on ``args`` (``parser.set_defaults``).
    epilog : str, optional
        Text ``--help`` prints after the options (e.g. the exit statuses,
        :data:`fedpriv.cli.commands.EXIT_CODES`). Default: none.
    """

    name: str
    options: tuple[Option | OneOf, ...]
    run: Callable[[argparse.Namespace], RunReport]
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    epilog: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ExperimentCommand:
    """One ``fedpriv experiment NAME`` command.

    Attributes
    ----------
    name : str
        The command's name; its registration (``Family.experiments[name]``) gives its
        help line.
    options : tuple of Option or OneOf
        In ``--help`` order.
    run : callable
        ``(args: argparse.Namespace) -> int``: writes the figure, prints what it wrote
        and returns the exit status.
    defaults : mapping, default {}
        Extra attributes set on ``args`` (``parser.set_defaults``).
    epilog : str, optional
        Text ``--help`` prints after the options. Default: none.
    """

    name: str
    options: tuple[Option | OneOf, ...]
    run: Callable[[argparse.Namespace], int]
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    epilog: str | None = None


#: ``--trials``, ``--seed`` and ``--json`` of every ``run`` command.
TRIALS = option("--trials", type=int, default=1, help="n_trials (default 1)")
SEED = option("--seed", type=int, default=0, help="root seed (default 0)")
JSON = option("--json", action="store_true", help="print one JSON object")


def register_commands(
    module: ModuleType | Iterable[RunCommand | ExperimentCommand],
    run: argparse._SubParsersAction,
    experiment: argparse._SubParsersAction,
) -> None:
    """Add a family module's declared commands to ``fedpriv run`` and ``fedpriv experiment``.

    Parameters
    ----------
    module : module or iterable of RunCommand and ExperimentCommand
        A command module with a ``COMMANDS`` tuple, or the commands themselves.
    run : argparse._SubParsersAction
        The ``fedpriv run`` subcommands.
    experiment : argparse._SubParsersAction
        The ``fedpriv experiment`` subcommands.

    Raises
    ------
    FamilyError
        If ``module`` does not declare ``COMMANDS``, or a command is neither a
        RunCommand nor an ExperimentCommand (a registration naming such a module is
        malformed; ``fedpriv run`` of its command exits 2 with this message).
    """
    if isinstance(module, ModuleType):
        if not hasattr(module, "COMMANDS"):
            raise FamilyError(
                f"command module {module.__name__!r} must declare `COMMANDS`, a tuple of "
                "fedpriv.cli.runs.RunCommand and ExperimentCommand."
            )
        commands = module.COMMANDS
    else:
        commands = module
    if isinstance(commands, str | bytes) or not isinstance(commands, Iterable):
        raise FamilyError(
            f"`COMMANDS` must be a tuple of RunCommand and ExperimentCommand, got {commands!r}."
        )
    for command in commands:
        if isinstance(command, RunCommand):
            kind, subparsers, handler = "run", run, _run_handler(command)
        elif isinstance(command, ExperimentCommand):
            kind, subparsers, handler = "experiment", experiment, command.run
        else:
            raise FamilyError(
                f"a command must be a RunCommand or an ExperimentCommand, got {command!r}."
            )
        registered = command_table(kind).get(command.name)
        parser = subparsers.add_parser(
            command.name,
            help=None if registered is None else registered.help,
            epilog=command.epilog,
        )
        for entry in command.options:
            if isinstance(entry, OneOf):
                group = parser.add_mutually_exclusive_group()
                for member in entry.options:
                    group.add_argument(*member.flags, **member.settings)
            else:
                parser.add_argument(*entry.flags, **entry.settings)
        parser.set_defaults(handler=handler, **command.defaults)


def _run_handler(command: RunCommand) -> Callable[[argparse.Namespace], int]:
    """The one path of ``fedpriv run``: run, record, print, exit status."""

    def handle(args: argparse.Namespace) -> int:
        started = time.perf_counter()
        report = command.run(args)
        record = {**report.record, "seconds": time.perf_counter() - started}
        if getattr(args, "json", False):
            print(json.dumps(record, indent=2, allow_nan=False))
        else:
            for line in report.lines():
                print(line)
        return run_status(record)

    return handle


def summary(values: Any) -> dict[str, float]:
    """``{"mean", "min", "max"}`` of ``values`` as floats (the records' statistics over trials).

    Parameters
    ----------
    values : array_like of float, shape (n_trials,)
        One value per trial (at least one).

    Returns
    -------
    dict of str to float
    """
    import numpy as np  # when a run reports, never for --help

    values = np.asarray(values)
    return {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}


def progress_printer() -> Callable[[str], None]:
    """A progress callback: prints ``[   12.3s] message`` to stderr, time since it was made.

    Returns
    -------
    callable
        ``(message: str) -> None``.
    """
    started = time.perf_counter()

    def say(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    return say
