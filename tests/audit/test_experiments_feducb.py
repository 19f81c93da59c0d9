"""FedUCB figures (tiny horizons) and the ``fedpriv run/experiment`` commands of cli/feducb.py."""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest
from fedpriv.audit.families.feducb import experiments as experiments_feducb
from fedpriv.audit.families.feducb.experiments import EXPERIMENTS, run_figure
from fedpriv.cli import feducb as cli_feducb
from fedpriv.cli.commands import run_status
from fedpriv.cli.runs import register_commands

_PNG = b"\x89PNG\r\n\x1a\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedpriv")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run").add_subparsers(dest="algorithm", required=True)
    experiment = sub.add_parser("experiment").add_subparsers(dest="experiment", required=True)
    register_commands(cli_feducb, run, experiment)
    return parser


def _call(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    return args.handler(args)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_each_figure_writes_png_csvs_and_note(tmp_path, name):
    folder = run_figure(name, out=tmp_path, horizon=12, n_trials=2, n_agents=2)
    assert folder == tmp_path / "feducb"
    stem = name.removeprefix("feducb-")  # the folder spells the family, the files do not
    files = sorted(p.name for p in folder.iterdir())
    assert files == sorted([f"{stem}.png", f"{stem}.csv", f"{stem}_curves.csv", f"{stem}.md"])
    assert (folder / f"{stem}.png").read_bytes()[:8] == _PNG
    frame = pd.read_csv(folder / f"{stem}.csv")
    assert {"label", "trial", "regret_per_agent", "n_syncs", "accountant_epsilon"} <= set(frame)
    assert set(frame["trial"]) == {0, 1}
    assert (frame["regret_per_agent"] >= 0).all()
    curves = pd.read_csv(folder / f"{stem}_curves.csv")
    assert (curves["min"] <= curves["mean"] + 1e-12).all()
    assert (curves["mean"] <= curves["max"] + 1e-12).all()
    note = (folder / f"{stem}.md").read_text(encoding="utf-8")
    assert f"fedpriv experiment {name}" in note and "| T |" in note and "| 12 |" in note


def test_private_settings_report_the_accountant_and_nonprivate_ones_do_not(tmp_path):
    run_figure("feducb-fig1b", out=tmp_path, horizon=10, n_trials=1, n_agents=2)
    frame = pd.read_csv(tmp_path / "feducb" / "fig1b.csv")
    private = frame["label"].str.startswith("private")
    assert frame.loc[private, "accountant_epsilon_small_delta"].gt(0).all()
    assert frame.loc[~private, "accountant_epsilon"].isna().all()
    # the MT regime syncs every round
    assert (frame.loc[frame["label"] == "private ε=1, n=O(MT)", "n_syncs"] == 10).all()


def test_a_failure_while_writing_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(experiments_feducb.pd.DataFrame, "to_csv", broken)
    with pytest.raises(OSError, match="disk full"):
        run_figure("feducb-fig2", out=tmp_path, horizon=6, n_trials=1, n_agents=2)
    assert list((tmp_path / "feducb").iterdir()) == []  # staging folder removed, no file


def test_rewriting_a_figure_replaces_it(tmp_path):
    run_figure("feducb-fig1c", out=tmp_path, horizon=6, n_trials=1, n_agents=2)
    run_figure("feducb-fig1c", out=tmp_path, horizon=8, n_trials=1, n_agents=2)
    curves = pd.read_csv(tmp_path / "feducb" / "fig1c_curves.csv")
    assert curves["t"].max() == 8
    assert len(list((tmp_path / "feducb").iterdir())) == 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "feducb-fig3"}, "`name`"),
        ({"horizon": 0}, "`horizon`"),
        ({"n_trials": 0}, "`n_trials`"),
        ({"reward": "gauss"}, "`reward`"),
        ({"beta": "oful"}, "`beta`"),
        ({"beta_value": 0.0}, "`beta_value`"),
    ],
)
def test_bad_input_raises_and_writes_nothing(tmp_path, kwargs, match):
    arguments = {"name": "feducb-fig2", "out": tmp_path, "horizon": 6, "n_trials": 1, **kwargs}
    with pytest.raises(ValueError, match=match):
        run_figure(arguments.pop("name"), **arguments)
    assert not (tmp_path / "feducb").exists()


def test_experiment_command_writes_the_figure(tmp_path, capsys):
    status = _call(
        [
            "experiment",
            "feducb-fig1a",
            "--out",
            str(tmp_path),
            "--horizon",
            "8",
            "--trials",
            "1",
            "--agents",
            "2",
        ]
    )
    assert status == 0
    assert (tmp_path / "feducb" / "fig1a.png").exists()
    assert "feducb-fig1a" in capsys.readouterr().out


@pytest.mark.parametrize("name", cli_feducb.LINEAR_ALGORITHMS)
def test_run_json_has_the_common_keys(name, capsys):
    status = _call(
        [
            "run",
            name,
            "--agents",
            "3",
            "--arms",
            "4",
            "--dim",
            "2",
            "--horizon",
            "16",
            "--trials",
            "2",
            "--json",
        ]
    )
    record = json.loads(capsys.readouterr().out)
    assert status == run_status(record)  # 1 exactly when the run's claim is violated
    assert record["algorithm"] == name
    assert {"setting", "regret", "seconds"} <= set(record)
    assert record["regret"]["min"] <= record["regret"]["mean"] <= record["regret"]["max"]
    private = name in ("feducb-decentralized", "linucb-independent-private")
    assert ("guarantee" in record) == private
    if private:
        g = record["guarantee"]
        assert g["claimed"] == {"epsilon": 1.0, "delta": 0.1, "source": g["claimed"]["source"]}
        # The adaptive decentralized schedule's requests are an un-noised channel, so
        # run judges the claim violated as verify does; the private LinUCB holds.
        assert g["verdict"] == ("violated" if name == "feducb-decentralized" else "holds")
        assert {"epsilon", "delta", "route"} <= set(g["accountant"])
    if name == "feducb-decentralized":
        assert record["gamma"] == 2 and record["n_cliques"] >= 1
        assert record["guarantee"]["accountant_all_channels"] == "inf"  # sync timing
        assert {"requests", "releases", "deliveries", "transmissions"} <= set(
            record["communication"]
        )


def test_run_text_output_and_bad_gamma(capsys):
    assert (
        _call(
            [
                "run",
                "feducb-decentralized",
                "--agents",
                "3",
                "--dim",
                "2",
                "--horizon",
                "8",
                "--graph",
                "path",
            ]
        )
        == 1  # the adaptive schedule's raw sync requests: violated, and run exits 1
    )
    out = capsys.readouterr().out
    assert "cliques" in out and "accountant" in out and "verdict: violated" in out
    with pytest.raises(ValueError, match="`gamma` must be >= 1"):
        _call(["run", "feducb-decentralized", "--agents", "3", "--horizon", "8", "--gamma", "0"])
