"""``fedpriv run cdp-mab|...|single-mab`` and ``fedpriv experiment li-song-fig*``."""

from __future__ import annotations

import argparse
import json

import pytest
from fedpriv.cli import li_song as cli_li_song
from fedpriv.cli.runs import register_commands


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedpriv")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run").add_subparsers(dest="algorithm", required=True)
    experiment = sub.add_parser("experiment").add_subparsers(dest="experiment", required=True)
    register_commands(cli_li_song, run, experiment)
    return parser


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    args = _parser().parse_args(argv)
    assert args.handler(args) == 0
    return json.loads(capsys.readouterr().out)


def test_cdp_mab_reports_m_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    record = _run(
        [
            "run",
            "cdp-mab",
            "--agents",
            "50",
            "--arms",
            "5",
            "--horizon",
            "5000",
            "--epsilon",
            "0.1",
            "--trials",
            "2",
            "--json",
        ],
        capsys,
    )
    g = record["guarantee"]
    assert record["algorithm"] == "cdp-mab"
    assert g["claimed"]["epsilon"] == pytest.approx(5.0)
    assert g["accountant"]["epsilon"] == pytest.approx(5.0, rel=1e-12)
    assert g["accountant"]["route"] == "pure"
    assert g["verdict"] == "holds"
    assert g["input_epsilon"] == 0.1 and g["claim_read_as_input_epsilon"] == "violated"
    assert set(record["regret"]) == {"mean", "min", "max"}
    assert record["communication_cost"]["mean"] == 25.0 * 50 * record["rounds"]["mean"]


@pytest.mark.parametrize(
    ("argv", "algorithm", "accountant"),
    [
        (["ce-cdp-mab", "--participation", "0.2", "--rounds", "3"], "ce-cdp-mab", 1.0),
        (["ddp-mab", "--graph", "ring"], "ddp-mab", 5.0),
        (["ddp-mab", "--graph", "erdos_renyi", "--edge-p", "0.3"], "ddp-mab", 5.0),
        (["single-mab", "--epsilon", "1"], "single-mab", 1.0),
    ],
)
def test_every_algorithm_runs(
    argv: list[str], algorithm: str, accountant: float, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _run(
        ["run", *argv, "--agents", "50", "--arms", "4", "--horizon", "3000", "--json"], capsys
    )
    assert record["algorithm"] == algorithm
    assert record["guarantee"]["accountant"]["epsilon"] == pytest.approx(accountant)
    assert record["guarantee"]["verdict"] == "holds"


def test_hdp_mab_and_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    record = _run(
        ["run", "hdp-mab", "--case", "6", "--arms", "3", "--horizon", "2000", "--json"], capsys
    )
    assert record["setting"]["n_agents"] == 100
    assert record["communication_cost"]["mean"] == 5000 * record["rounds"]["mean"]
    args = _parser().parse_args(
        ["run", "cdp-mab", "--agents", "4", "--arms", "3", "--horizon", "500", "--epsilon", "inf"]
    )
    assert args.handler(args) == 0
    assert "cdp-mab" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["cdp-mab", "--participation", "0"], "participation_rate"),
        (["ce-cdp-mab", "--rounds", "0"], "n_rounds"),
        (["cdp-mab", "--c1", "-1"], "c1"),
        (["ddp-mab", "--c2", "-1"], "c2"),
    ],
)
def test_bad_input(argv: list[str], match: str) -> None:
    args = _parser().parse_args(["run", *argv, "--agents", "4", "--arms", "3", "--horizon", "100"])
    with pytest.raises(ValueError, match=match):
        args.handler(args)


def test_experiment_writes_outputs(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    for figure in ("li-song-fig9", "li-song-fig8"):
        args = _parser().parse_args(
            ["experiment", figure, "--out", str(tmp_path), "--trials", "2", "--horizon", "3000"]
        )
        assert args.handler(args) == 0
    folder = tmp_path / "li_song"
    names = {p.name for p in folder.iterdir()}
    assert {
        "fig9.png",
        "fig9.csv",
        "fig9.md",
        "fig8.png",
        "fig8.csv",
        "fig8.md",
        "fig8_curves.csv",
    } <= names
    assert not [n for n in names if n.startswith(".")]  # staging folders removed
    assert "| setting | paper | here |" in (folder / "fig8.md").read_text()
