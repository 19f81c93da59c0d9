"""``fedpriv --help`` and ``fedpriv <command> --help`` import no heavy library.

Startup time is measured by ``benchmarks/bench_cli.py`` (never by a timed assertion);
what this checks is its cause: answering a top-level ``--help`` imports none of NumPy,
pandas, SciPy, matplotlib or dp-accounting. Also checks that the command tables of
:mod:`fedpriv.cli.commands`, generated from the family registrations, equal what the
command modules register.
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
from fedpriv.cli.runs import register_commands

HEAVY = ("numpy", "pandas", "scipy", "matplotlib", "dp_accounting")
PROBE = (
    "import contextlib, io, json, sys\n"
    "from fedpriv.cli.main import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main(sys.argv[1:])\n"
    "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]))\n"
)


LIGHT_COMMANDS = [
    [kind, name, "--help"]  # every family's commands
    for kind, table in (("run", RUN_COMMANDS), ("experiment", EXPERIMENT_COMMANDS))
    for name in table
]


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "--help"],
        ["experiment", "--help"],
        ["verify", "--help"],
        ["account", "--help"],
        ["audit", "--help"],
        *LIGHT_COMMANDS[::4],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_help_imports_no_heavy_library(argv: list[str], tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
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
        register_commands(importlib.import_module(family), run_sub, experiment_sub)
        for kind, subparsers in (("run", run_sub), ("experiment", experiment_sub)):
            helps = {action.dest: action.help for action in subparsers._choices_actions}
            for name in subparsers.choices:
                found[kind][name] = (family, helps[name])
    return found


def test_command_tables_equal_what_the_modules_register() -> None:
    registered = _registered()
    assert {n: (c.module, c.help) for n, c in RUN_COMMANDS.items()} == registered["run"]
    assert {n: (c.module, c.help) for n, c in EXPERIMENT_COMMANDS.items()} == registered[
        "experiment"
    ]


def test_tables_are_generated_from_the_registrations() -> None:
    from fedpriv.audit.claims.family import families
    from fedpriv.audit.claims.register import PAPERS
    from fedpriv.cli.main import SECURE_NOISE_RUNS

    registered = families()
    assert PAPER_NAMES == tuple(PAPERS) == tuple(fam.key for fam in registered)
    assert {n: c for fam in registered for n, c in fam.run_commands.items()} == RUN_COMMANDS
    assert {n: c for fam in registered for n, c in fam.experiments.items()} == EXPERIMENT_COMMANDS
    assert set(FAMILIES) == {
        c.module for t in (RUN_COMMANDS, EXPERIMENT_COMMANDS) for c in t.values()
    }
    assert tuple(n for n, c in RUN_COMMANDS.items() if c.secure_noise) == SECURE_NOISE_RUNS


def test_command_modules_are_named_by_their_family_key() -> None:
    from fedpriv.audit.claims.family import builtin_families

    for fam in builtin_families():
        for command in (*fam.run_commands.values(), *fam.experiments.values()):
            assert command.module.rsplit(".", 1)[1].startswith(fam.key), (fam.key, command)


def test_a_command_name_registered_twice_is_refused(monkeypatch) -> None:
    from fedpriv.audit.claims import family as registry
    from fedpriv.audit.claims.family import Command, Family, FamilyError
    from fedpriv.cli.commands import command_table

    clash = Family(
        key="mine",
        title="Mine",
        claims=tuple,
        run_commands={"cdp-mab": Command("mine.cli", "again")},
    )
    monkeypatch.setattr(registry, "_files", {"test": (clash,)})
    with pytest.raises(
        FamilyError, match="`fedpriv run cdp-mab` is registered by 'li_song' and by 'mine'"
    ):
        command_table("run")


def test_a_command_builds_only_its_family_and_lists_the_others(capsys) -> None:
    assert main(["run", "--help"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in RUN_COMMANDS)
    full = build_parser()  # every family, as tests and tools use it
    run_action = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    run_parser = run_action.choices["run"]
    names = next(a for a in run_parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(names.choices) == set(RUN_COMMANDS)


def test_cli_choices_equal_their_sources() -> None:
    from fedpriv.algorithms.dubey_aamas import baselines, cooperative, robust
    from fedpriv.algorithms.environments import linear
    from fedpriv.algorithms.feducb import decentralized, linucb, loop, privatizer, sync
    from fedpriv.algorithms.gossip_fed_ucb import gossip_ucb
    from fedpriv.algorithms.li_song import network
    from fedpriv.algorithms.networks import graphs
    from fedpriv.algorithms.zhou_chowdhury import fedlinucb
    from fedpriv.audit.families.dubey_aamas import experiments as dubey_aamas
    from fedpriv.audit.families.zhou_chowdhury import experiments as zhou_chowdhury
    from fedpriv.cli import choices
    from fedpriv.cli import dubey_aamas as cli_dubey_aamas
    from fedpriv.cli import feducb as cli_feducb
    from fedpriv.cli import gossip_fed_ucb as cli_gossip_fed_ucb
    from fedpriv.cli import li_song as cli_li_song
    from fedpriv.cli import zhou_chowdhury as cli_zhou_chowdhury
    from fedpriv.privacy import PAPER_LOG_BASES
    from fedpriv.privacy import calibrations as calibration

    assert choices.GRAPH_KINDS == graphs.GRAPH_KINDS
    assert choices.MODES == gossip_ucb.MODES
    assert tuple(sorted(PAPER_LOG_BASES)) == cli_gossip_fed_ucb.LOG_BASES
    assert cli_li_song.COST_MODELS == network.COST_MODELS
    assert cli_li_song.DELAY_CONVENTIONS == network.DELAY_CONVENTIONS
    assert cli_dubey_aamas.CONTAMINATION_KINDS == robust.CONTAMINATION_KINDS
    assert cli_dubey_aamas.NORMALIZATIONS == robust.NORMALIZATIONS
    assert cli_dubey_aamas.INTERVAL_RULES == calibration.INTERVAL_RULES
    assert cli_dubey_aamas.OWN_TERMS == cooperative.OWN_TERMS
    assert cli_dubey_aamas.COUNT_FIELDS == cooperative.COUNT_FIELDS
    assert cli_dubey_aamas.INDEX_UPDATES == baselines.INDEX_UPDATES
    assert cli_dubey_aamas.LOG_TIMES == baselines.LOG_TIMES
    assert cli_feducb.BETA_VERSIONS == loop.BETA_VERSIONS
    assert cli_feducb.BETA_CHOICES == decentralized.BETA_CHOICES
    assert cli_feducb.REWARD_MODELS == linear.REWARD_MODELS
    assert cli_feducb.PRIVATIZER_CALIBRATIONS == privatizer.PRIVATIZER_CALIBRATIONS
    assert cli_feducb.SYNC_ORDERS == sync.SYNC_ORDERS
    assert cli_feducb.ON_CAPACITY == decentralized.ON_CAPACITY
    assert cli_zhou_chowdhury.PROTOCOLS == fedlinucb.PROTOCOLS
    assert cli_zhou_chowdhury.EXPERIMENTS == zhou_chowdhury.EXPERIMENTS
    for command in cli_zhou_chowdhury.COMMANDS[1:]:  # the figures' help states DEFAULTS
        horizon, n_trials, n_agents = zhou_chowdhury.DEFAULTS[command.name]
        helps = {o.flags[0]: o.settings["help"] for o in command.options}
        assert f"(default {horizon};" in helps["--horizon"]
        assert f"(default {n_trials};" in helps["--trials"]
        assert f"(default {n_agents}," in helps["--agents"]
    assert cli_feducb.RESPOND == decentralized.RESPOND
    assert cli_feducb.SCHEDULES == decentralized.SCHEDULES
    assert cli_feducb.UPDATE_ORDERS == linucb.UPDATE_ORDERS
    assert tuple(cli_dubey_aamas.DUBEY_AAMAS_EXPERIMENTS) == dubey_aamas.EXPERIMENTS
    for name, (
        horizon,
        n_trials,
        n_agents,
        n_arms,
        seed,
    ) in cli_dubey_aamas.DUBEY_AAMAS_EXPERIMENTS.items():
        config = dubey_aamas.default_config(name)
        assert (config.horizon, config.n_trials, config.n_agents, config.n_arms, config.seed) == (
            horizon,
            n_trials,
            n_agents,
            n_arms,
            seed,
        )
