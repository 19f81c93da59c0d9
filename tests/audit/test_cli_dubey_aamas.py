"""Tests of ``fedpriv run`` / ``fedpriv experiment`` for Dubey & Pentland's algorithms."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest
from fedpriv.audit.families.dubey_aamas.experiments import (
    EXPERIMENTS,
    default_config,
    run_experiment,
)
from fedpriv.audit.families.dubey_aamas.report import write_experiment
from fedpriv.cli import dubey_aamas as cli_dubey_aamas
from fedpriv.cli.runs import register_commands
from fedpriv.privacy.accounting.verdicts import VERDICTS
from fedpriv.privacy.errors import ToolkitError


def _main(argv: list[str]) -> int:
    """``fedpriv`` with only this family registered (cli/main.py's dispatch)."""
    parser = argparse.ArgumentParser(prog="fedpriv")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run").add_subparsers(dest="algorithm", required=True)
    experiment = sub.add_parser("experiment").add_subparsers(dest="experiment", required=True)
    register_commands(cli_dubey_aamas, run, experiment)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ToolkitError, ValueError, TypeError) as error:
        print(f"fedpriv: error: {error}")
        return 2


_SMALL = ["--agents", "5", "--arms", "3", "--horizon", "60", "--trials", "2", "--json"]


@pytest.mark.parametrize("algorithm", cli_dubey_aamas.ALGORITHMS)
def test_run_json_has_the_common_keys(algorithm, capsys):
    extra = ["--epsilon", "0.5"] if algorithm in ("private-coop-ucb", "dp-ucb-int") else []
    assert _main(["run", algorithm, *_SMALL, *extra]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["algorithm"] == algorithm
    assert {"setting", "regret", "seconds", "rounds", "communication"} <= set(record)
    assert record["regret"]["min"] <= record["regret"]["mean"] <= record["regret"]["max"]
    assert record["rounds"] == 60
    if algorithm in ("private-coop-ucb", "dp-ucb-int"):
        g = record["guarantee"]
        assert {"claimed", "accountant", "verdict", "evidence"} <= set(g)
        assert g["claimed"]["per_message_epsilon"] == pytest.approx(2**-0.55)
        assert g["verdict"] == "holds"
    if "guarantee" in record:  # the closed vocabulary of every command and report
        assert record["guarantee"]["verdict"] in VERDICTS
    if algorithm in ("private-coop-ucb", "byzantine-coop-ucb", "coop-ucb-nonprivate"):
        assert record["communication"]["link_transmissions_per_trial"] > 0


def test_raw_own_term_reports_infinite_epsilon_and_a_violation(capsys):
    assert _main(["run", "private-coop-ucb", *_SMALL, "--epsilon", "0.5", "--own-term", "raw"]) == 1
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["accountant"]["epsilon"] == "inf"
    assert g["verdict"] == "violated"
    assert g["non_private_releases"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "private-coop-ucb", *_SMALL, "--gamma", "0"], "`gamma` must be >= 1"),
        (["run", "private-coop-ucb", *_SMALL, "--theta", "2"], "`theta` must be in"),
        (["run", "dp-ucb-int", *_SMALL, "--theta", "0.9"], "`theta` must be in"),
        (
            ["run", "byzantine-coop-ucb", *_SMALL, "--assumed-contamination", "0.3"],
            "`assumed_contamination` must be in",
        ),
        (["run", "ucb1", *_SMALL, "--mean-range", "0.5", "1.5"], "mean_range"),
    ],
)
def test_bad_input_exits_with_status_2(argv, message, capsys):
    assert _main(argv) == 2
    assert message in capsys.readouterr().out


def test_experiments_write_png_csv_and_md(tmp_path):
    for name in EXPERIMENTS:
        config = dataclasses.replace(
            default_config(name), n_agents=4, n_arms=2, horizon=40, n_trials=2, max_gamma=2, p=0.6
        )
        result = write_experiment(name, tmp_path, config)
        folder = tmp_path / "dubey_aamas"
        stem = name.removeprefix("dubey-aamas-")  # the folder spells the family
        for suffix in (".png", ".csv", ".md"):
            assert (folder / f"{stem}{suffix}").stat().st_size > 0
        assert result["files"] == sorted(
            str(folder / f"{stem}{s}") for s in (".csv", ".md", ".png")
        )
        note = (folder / f"{stem}.md").read_text(encoding="utf-8")
        assert note.count("| setting | value |") == 1  # one header (markdown_table prints it)
        assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # staging removed
        assert result["seconds"] >= 0


def test_experiment_band_contains_the_mean():
    config = dataclasses.replace(
        default_config("dubey-aamas-fig1a"), n_agents=4, n_arms=2, horizon=30, n_trials=3, p=0.6
    )
    frame = run_experiment("dubey-aamas-fig1a", config)
    assert ((frame["min"] <= frame["mean"]) & (frame["mean"] <= frame["max"])).all()
    assert set(frame["algorithm"]) == {
        "Private MA-UCB",
        "Non-private cooperative UCB",
        "UCB1 (isolated)",
        "DP-UCB-INT (isolated)",
    }
    with pytest.raises(ValueError, match="`name` must be one of"):
        run_experiment("dubey-aamas-fig2")
