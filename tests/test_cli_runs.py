"""The shared ``fedpriv run`` machinery: declared commands, one run-record-print-exit path."""

from __future__ import annotations

import argparse
import json
import types

import pytest
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


def test_a_module_with_its_own_register_still_loads():
    calls = []
    legacy = types.ModuleType("legacy_family_cli")
    legacy.register = lambda run, experiment: calls.append((run, experiment))
    _, run, experiment = _parsers()
    register_commands(legacy, run, experiment)
    assert calls == [(run, experiment)]


def test_bad_declarations_are_refused_with_a_named_parameter():
    _, run, experiment = _parsers()
    with pytest.raises(TypeError, match="must declare `COMMANDS`"):
        register_commands(types.ModuleType("empty"), run, experiment)
    with pytest.raises(TypeError, match="RunCommand or an ExperimentCommand"):
        register_commands(["not a command"], run, experiment)
    with pytest.raises(ValueError, match="`flags` must be one or more '--name' strings"):
        option("agents", type=int)


def test_summary_is_mean_min_max_as_floats():
    assert summary([1.0, 2.0, 6.0]) == {"mean": 3.0, "min": 1.0, "max": 6.0}
