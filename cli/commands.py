"""The ``run`` and ``experiment`` commands and the ``--paper`` names, from the registrations.

Every table here is generated from the family registrations
(:func:`fedpriv.audit.claims.family.families`): each :class:`~fedpriv.audit.claims.family.Command`
names the module that declares it (``COMMANDS``, wired by
:func:`fedpriv.cli.runs.register_commands`), and its help.
``fedpriv --help``, ``fedpriv run --help`` and ``fedpriv experiment --help`` list the
commands from the registrations alone, which import nothing heavy; a command's own
module (NumPy, pandas, matplotlib, the algorithms) is imported only when that command is
asked for. ``tests/test_cli_startup.py`` checks that what the modules register equals
what the registrations declare.

``RUN_COMMANDS``, ``EXPERIMENT_COMMANDS`` (name -> Command), ``FAMILIES`` (the command
modules), ``PAPER_NAMES`` (the family keys) and ``SECURE_NOISE_RUNS`` are computed when
read, so they include every family registered at that moment.

A command of an installed family (an entry point of the group ``fedpriv.papers``) is a
user's code: its module is imported in a forked worker first
(:func:`probe_command_module`) and the command then runs in one (:func:`run_installed`,
:func:`fedpriv.audit.engine.isolation.run_isolated`, untimed), so that its exit or death
exits 2 naming it; built-in families' commands run in this process.
"""

from __future__ import annotations

import argparse
import importlib
import io
import math
import sys
import warnings
from typing import Any

from fedpriv.audit.claims.family import (
    Command,
    FamilyError,
    PluginWarning,
    entry_point_origins,
    families,
    skipped_entry_points,
)

__all__ = [
    "EXIT_CODES",
    "EXPERIMENT_COMMANDS",  # noqa: F822 - module __getattr__
    "FAMILIES",  # noqa: F822 - module __getattr__
    "PAPER_NAMES",  # noqa: F822 - module __getattr__
    "RUN_COMMANDS",  # noqa: F822 - module __getattr__
    "SECURE_NOISE_RUNS",  # noqa: F822 - module __getattr__
    "command_table",
    "family_of",
    "installed_owner",
    "load_registrations",
    "probe_command_module",
    "run_installed",
    "run_status",
]

#: The exit statuses ``fedpriv verify``, ``account``, ``audit`` and ``run`` share (each ends its
#: ``--help`` with this; ``tests/test_exit_codes.py`` runs every one of them).
EXIT_CODES = (
    "Exit status: 0 nothing refuted; 1 a claim or budget violated; 2 bad input "
    "(the message names the parameter; nothing is written)."
)

_KINDS = {"run": "run_commands", "experiment": "experiments"}


def command_table(kind: str) -> dict[str, Command]:
    """``fedpriv run NAME`` or ``fedpriv experiment NAME`` -> its Command, in family order.

    Parameters
    ----------
    kind : {"run", "experiment"}

    Returns
    -------
    dict of str to Command

    Raises
    ------
    ValueError
        If ``kind`` is neither.
    FamilyError
        If two families register the same command name.
    """
    if kind not in _KINDS:
        raise ValueError(f"`kind` must be 'run' or 'experiment'; got {kind!r}.")
    table: dict[str, Command] = {}
    owner: dict[str, str] = {}
    for fam in families():
        for name, command in getattr(fam, _KINDS[kind]).items():
            if name in table:
                raise FamilyError(
                    f"`fedpriv {kind} {name}` is registered by {owner[name]!r} and by {fam.key!r}."
                )
            table[name], owner[name] = command, fam.key
    return table


def __getattr__(name: str) -> Any:
    """The tables of the module docstring, computed from the registrations."""
    if name == "RUN_COMMANDS":
        return command_table("run")
    if name == "EXPERIMENT_COMMANDS":
        return command_table("experiment")
    if name == "FAMILIES":
        modules = [c.module for kind in _KINDS for c in command_table(kind).values()]
        return tuple(dict.fromkeys(modules))
    if name == "PAPER_NAMES":
        return tuple(fam.key for fam in families())
    if name == "SECURE_NOISE_RUNS":
        return tuple(n for n, c in command_table("run").items() if c.secure_noise)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_registrations() -> tuple[str, ...]:
    """Read every family registration once, installed entry points included.

    A broken entry point is skipped (:func:`fedpriv.audit.claims.family.skipped_entry_points`);
    its :class:`~fedpriv.audit.claims.family.PluginWarning` is not shown here but
    returned, for the command line to print as its own warning.

    Returns
    -------
    tuple of str
        One message per skipped entry point, naming it and why (empty: none).

    Raises
    ------
    FamilyError
        If a claims file's family collides with another registration.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        families()
    return tuple(skipped_entry_points().values())


def family_of(argv: list[str]) -> str | None:
    """The module that registers the command ``argv`` asks for, if any.

    ``["run", NAME, ...]`` -> the module its Command names; anything else (another
    command, ``--help``, an unknown name) -> None.

    Parameters
    ----------
    argv : list of str
        The command line, without the program name.

    Returns
    -------
    str or None
    """
    words = [word for word in argv if not word.startswith("-")][:2]
    if len(words) < 2 or words[0] not in _KINDS:
        return None
    command = command_table(words[0]).get(words[1])
    return None if command is None else command.module


def installed_owner(argv: list[str]) -> str | None:
    """The entry point whose family registers the command ``argv`` asks for, if any.

    ``["run", NAME, ...]`` or ``["experiment", NAME, ...]`` of a family an installed
    distribution registered (group ``fedpriv.papers``) -> ``"entry point 'POINT'
    (module:attribute)"``; a built-in family's command, another command or an unknown
    name -> None. Such a command's module is imported first in a forked worker
    (:func:`probe_command_module`) and the command runs in one (:func:`run_installed`).

    Parameters
    ----------
    argv : list of str
        The command line, without the program name.

    Returns
    -------
    str or None
    """
    words = [word for word in argv if not word.startswith("-")][:2]
    if len(words) < 2 or words[0] not in _KINDS:
        return None
    origins = entry_point_origins()
    for fam in families():
        if words[1] in getattr(fam, _KINDS[words[0]]) and fam.key in origins:
            return origins[fam.key]
    return None


def probe_command_module(argv: list[str]) -> str | None:
    """Import an installed family's command module in a forked worker first.

    For ``fedpriv run NAME`` or ``fedpriv experiment NAME`` of a family an installed
    entry point registers (:func:`installed_owner`), the module that declares the
    command is imported in a forked worker before this process imports it to build
    the parser; any other command line probes nothing.

    Parameters
    ----------
    argv : list of str
        The command line, without the program name.

    Returns
    -------
    str or None
        The entry point that registers the command (for :func:`run_installed`), or
        None when no installed family's command is asked for.

    Raises
    ------
    UserCodeAbortedError
        If the import exits, dies or runs past
        :data:`~fedpriv.audit.claims.family.ENTRY_POINT_LOAD_TIMEOUT` (the caller
        then exits 2 without importing it).
    Exception
        What the import raised (as importing it in this process would).
    """
    owner = installed_owner(argv)
    if owner is None:
        return None
    module = family_of(argv)
    from fedpriv.audit.claims.family import ENTRY_POINT_LOAD_TIMEOUT
    from fedpriv.audit.engine.isolation import run_isolated

    def load() -> None:
        importlib.import_module(module)

    run_isolated(
        load,
        timeout=ENTRY_POINT_LOAD_TIMEOUT,
        what=f"command module {module!r} of {owner}",
        hint="ENTRY_POINT_LOAD_TIMEOUT",
    )
    return owner


def run_installed(args: argparse.Namespace, owner: str) -> int:
    """``fedpriv run``/``experiment`` of an installed family, in a forked worker.

    The whole command (the run, its printing, its files) runs in the worker, untimed (a
    run may take hours and these commands take no ``--timeout``); its exit status comes
    back. A hang is not contained.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``handler`` runs in the worker).
    owner : str
        The entry point that registers the command, for messages.

    Returns
    -------
    int
        The command's exit status.

    Raises
    ------
    UserCodeAbortedError
        If the command calls ``sys.exit`` or ``os._exit`` or its worker dies (the
        caller exits 2 naming it, never 0 with nothing run).
    """
    from fedpriv.audit.engine.isolation import run_isolated

    name = args.algorithm if args.command == "run" else args.experiment
    kind, value, texts = run_isolated(
        _command_in_worker,
        args,
        timeout=math.inf,
        what=f"`fedpriv {args.command} {name}` of {owner}",
        hint="it has no timeout",
    )
    for stream, text in texts.items():
        getattr(sys, stream).write(text)
    if kind == "raise":
        raise value
    return value


def _command_in_worker(args: argparse.Namespace) -> tuple[str, Any, dict[str, str]]:
    """Worker side of :func:`run_installed`: ``(kind, status or error, texts)``.

    A stream this process redirected (``sys.stdout is not sys.__stdout__``: pytest's
    ``capsys``, ``contextlib.redirect_stdout``) is collected and sent back, for the
    caller to write where it redirected it; the real streams are written as the
    command runs (its progress shows live)."""
    buffers = {
        stream: io.StringIO()
        for stream in ("stdout", "stderr")
        if getattr(sys, stream) is not getattr(sys, f"__{stream}__")
    }
    for stream, buffer in buffers.items():
        setattr(sys, stream, buffer)
    try:
        return "ok", args.handler(args), {k: b.getvalue() for k, b in buffers.items()}
    except Exception as error:  # re-raised by the caller after the output is written
        return "raise", error, {k: b.getvalue() for k, b in buffers.items()}


def run_status(record: object) -> int:
    """Exit status of ``fedpriv run``: 1 if the run's record holds a violated verdict.

    ``run`` follows the convention of ``verify``, ``account`` and ``audit``
    (:data:`EXIT_CODES`): 0 nothing refuted, 1 a claim violated (bad input, 2, is
    decided before a run starts).

    Parameters
    ----------
    record : object
        The run's JSON record (nested dicts and lists); every ``"verdict"`` in it counts.

    Returns
    -------
    int
        1 if some ``"verdict"`` is ``"violated"``, else 0.
    """
    if isinstance(record, dict):
        if record.get("verdict") == "violated":
            return 1
        return max((run_status(value) for value in record.values()), default=0)
    if isinstance(record, list | tuple):
        return max((run_status(value) for value in record), default=0)
    return 0
