"""The shared ``fedpriv run`` machinery: declared commands, one run-record-print-exit path."""

from __future__ import annotations

import argparse
import json
import sys
import types

import pytest
from fedpriv.audit.claims.family import FamilyError
from fedpriv.cli.runs import (
    JSON,
    SEED,
    ExperimentCommand,
    OneOf,
    RunCommand,
    RunReport,
    option,
    register_commands,
    summary,
)


def _parsers():
    parser = argparse.ArgumentParser(prog="fedpriv")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run").add_subparsers(dest="algorithm", required=True)
    experiment = sub.add_parser("experiment").add_subparsers(dest="experiment")
    return parser, run, experiment


def _toy_run(args):
    verdict = "violated" if args.level > 1 else "holds"
    record = {
        "algorithm": "toy",
        "setting": {"level": args.level},
        "guarantee": {"verdict": verdict},
    }
    return RunReport(record, lambda: [f"toy at level {args.level}", f"verdict: {verdict}"])


_COMMANDS = (
    RunCommand(
        "toy-run",
        (
            option("--level", type=int, default=1, help="a level"),
            OneOf((option("--fast", action="store_true"), option("--slow", action="store_true"))),
            SEED,
            JSON,
        ),
        _toy_run,
        {"variant": "plain"},
    ),
    ExperimentCommand("toy-fig", (option("--out", default="reports"),), lambda args: 0),
)


@pytest.mark.parametrize(("level", "status"), [(1, 0), (2, 1)])
def test_every_run_takes_one_path_record_print_exit(level, status, capsys):
    parser, run, experiment = _parsers()
    register_commands(_COMMANDS, run, experiment)
    args = parser.parse_args(["run", "toy-run", "--level", str(level), "--json"])
    assert args.variant == "plain" and args.seed == 0
    assert args.handler(args) == status  # 1 exactly when a verdict is violated
    record = json.loads(capsys.readouterr().out)
    assert record["setting"] == {"level": level} and record["seconds"] >= 0
    args = parser.parse_args(["run", "toy-run", "--level", str(level)])
    assert args.handler(args) == status
    assert capsys.readouterr().out.splitlines()[0] == f"toy at level {level}"


def test_declared_options_keep_their_groups_and_experiments_their_function(capsys):
    parser, run, experiment = _parsers()
    register_commands(_COMMANDS, run, experiment)
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "toy-run", "--fast", "--slow"])
    assert "not allowed with argument" in capsys.readouterr().err
    args = parser.parse_args(["experiment", "toy-fig"])
    assert args.handler(args) == 0 and args.out == "reports"


def test_bad_declarations_are_refused_with_a_named_parameter():
    _, run, experiment = _parsers()
    with pytest.raises(FamilyError, match="'empty' must declare `COMMANDS`"):
        register_commands(types.ModuleType("empty"), run, experiment)
    # the register(run, experiment) form is gone: a module must declare its commands
    legacy = types.ModuleType("legacy_family_cli")
    legacy.register = lambda run, experiment: None
    with pytest.raises(FamilyError, match="'legacy_family_cli' must declare `COMMANDS`"):
        register_commands(legacy, run, experiment)
    with pytest.raises(FamilyError, match="RunCommand or an ExperimentCommand"):
        register_commands(["not a command"], run, experiment)
    not_a_tuple = types.ModuleType("not_a_tuple")
    not_a_tuple.COMMANDS = 3
    with pytest.raises(FamilyError, match="`COMMANDS` must be a tuple"):
        register_commands(not_a_tuple, run, experiment)
    with pytest.raises(ValueError, match="`flags` must be one or more '--name' strings"):
        option("agents", type=int)


def test_a_command_module_declaring_no_commands_exits_2_and_help_still_works(monkeypatch, capsys):
    from fedpriv.audit.claims import family as registry
    from fedpriv.audit.claims.family import Command, Family
    from fedpriv.cli.main import main

    module = types.ModuleType("undeclared_family_cli")
    module.register = lambda run, experiment: None  # the old form: not read any more
    monkeypatch.setitem(sys.modules, module.__name__, module)
    mine = Family(
        key="undeclared",
        title="Undeclared",
        claims=tuple,
        run_commands={"undeclared-run": Command(module.__name__, "declares nothing")},
    )
    monkeypatch.setattr(registry, "_files", {"test": (mine,)})
    assert main(["run", "undeclared-run"]) == 2
    assert "'undeclared_family_cli' must declare `COMMANDS`" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert main(["run", "--help"]) == 0  # listed from its registration, never built
    assert "undeclared-run" in capsys.readouterr().out


def test_an_epilog_is_printed_after_the_options(capsys):
    parser, run, experiment = _parsers()
    command = RunCommand("toy-epilog", (SEED,), _toy_run, epilog="Exit status: see the docs.")
    register_commands([command], run, experiment)
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "toy-epilog", "--help"])
    assert capsys.readouterr().out.rstrip().endswith("Exit status: see the docs.")


def test_summary_is_mean_min_max_as_floats():
    assert summary([1.0, 2.0, 6.0]) == {"mean": 3.0, "min": 1.0, "max": 6.0}
