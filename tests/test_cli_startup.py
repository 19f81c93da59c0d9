"""``fedpriv --help`` and ``fedpriv <command> --help`` import no heavy library.

Startup time is measured by ``benchmarks/bench_cli.py`` (never by a timed assertion);
what this checks is its cause: answering a top-level ``--help`` imports none of NumPy,
pandas, SciPy, matplotlib or dp-accounting. Also checks that the static command table
of :mod:`fedpriv.cli.commands` equals what the family modules register.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from fedpriv.cli.commands import EXPERIMENT_COMMANDS, FAMILIES, PAPER_NAMES, RUN_COMMANDS
from fedpriv.cli.main import build_parser, main

HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "dp_accounting")
PROBE = (
    "import contextlib, io, json, sys\n"
    "from fedpriv.cli.main import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(sys.argv[1:])\n"
    "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]))\n"
)


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["experiment", "--help"],
                                  ["verify", "--help"], ["account", "--help"],
                                  ["audit", "--help"]])
def test_help_imports_no_heavy_library(argv: list[str], tmp_path) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    code, modules = json.loads(done.stdout)
    assert code == 0, done.stderr
    assert not set(HEAVY) & set(modules), f"{argv} imported {set(HEAVY) & set(modules)}"


def _registered() -> dict[str, dict[str, tuple[str, str]]]:
    found: dict[str, dict[str, tuple[str, str]]] = {"run": {}, "experiment": {}}
    for family in FAMILIES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        run_sub = sub.add_parser("run").add_subparsers()
        experiment_sub = sub.add_parser("experiment").add_subparsers()
        importlib.import_module(family).register(run_sub, experiment_sub)
        for kind, subparsers in (("run", run_sub), ("experiment", experiment_sub)):
            helps = {action.dest: action.help for action in subparsers._choices_actions}
            for name in subparsers.choices:
                found[kind][name] = (family.rsplit(".", 1)[1], helps[name])
    return found


def test_static_command_table_equals_the_families_registration() -> None:
    registered = _registered()
    assert RUN_COMMANDS == registered["run"]
    assert EXPERIMENT_COMMANDS == registered["experiment"]


def test_paper_names_are_the_registers() -> None:
    from fedpriv.audit.claims.register import PAPERS

    assert PAPER_NAMES == tuple(PAPERS)


def test_a_command_builds_only_its_family_and_lists_the_others(capsys) -> None:
    assert main(["run", "--help"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in RUN_COMMANDS)
    full = build_parser()  # every family, as tests and tools use it
    run_action = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    run_parser = run_action.choices["run"]
    names = next(a for a in run_parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(names.choices) == set(RUN_COMMANDS)
