"""``fedpriv run ... --secure-noise``: the Laplace runs release grid values with the
same accountant ε as float noise, the FedUCB runs (matrix-tree Privatizer, priced by
zCDP) with an ε at least the float one; every other run command refuses the flag."""

from __future__ import annotations

import json

import pytest
from fedpriv.cli.commands import run_status
from fedpriv.cli.main import SECURE_NOISE_RUNS, build_parser, main

__all__: list[str] = []

_SMALL = {
    "gossip-fed-ucb": ["--horizon", "64"],
    "cdp-mab": ["--agents", "4", "--arms", "3", "--horizon", "400", "--epsilon", "0.5"],
    "private-coop-ucb": ["--agents", "4", "--arms", "3", "--horizon", "60"],
}


def _guarantee(record: dict) -> object:
    return record.get("guarantee")


def _plain_and_secure(argv: list[str], capsys) -> tuple[dict, dict]:
    """The JSON records of ``argv`` without and with ``--secure-noise``."""
    status = main(argv)
    plain = json.loads(capsys.readouterr().out)
    assert status == run_status(plain)  # 1 exactly when the record holds a violated verdict
    status = main([*argv, "--secure-noise"])
    secure = json.loads(capsys.readouterr().out)
    assert status == run_status(secure)
    return plain, secure


@pytest.mark.parametrize("algorithm", sorted(_SMALL))
def test_secure_noise_keeps_the_reported_guarantee(algorithm, capsys) -> None:
    plain, secure = _plain_and_secure(["run", algorithm, *_SMALL[algorithm], "--json"], capsys)
    assert _guarantee(secure) is not None
    for record in (plain, secure):
        record.pop("seconds", None)
    if algorithm == "private-coop-ucb":  # one DiscreteLaplace per release point
        assert secure["guarantee"]["accountant"]["pure_epsilon"] == pytest.approx(
            plain["guarantee"]["accountant"]["pure_epsilon"], rel=1e-12
        )
    else:  # ε kept exactly: the grid noise scale absorbs the sensitivity's rounding
        assert json.dumps(_guarantee(secure), sort_keys=True) == json.dumps(
            _guarantee(plain), sort_keys=True
        )


_FEDUCB_SMALL = {
    "feducb-fixed": [
        "--agents",
        "2",
        "--horizon",
        "60",
        "--dimension",
        "2",
        "--actions",
        "4",
        "--sync-every",
        "6",
        "--calibration",
        "exact",
    ],
    "feducb-decentralized": [
        "--agents",
        "3",
        "--horizon",
        "40",
        "--dim",
        "2",
        "--arms",
        "4",
        "--calibration",
        "exact",
    ],
}


def _privatizer_epsilon(record: dict) -> float:
    return float(
        record["guarantee"]["accountant"]["epsilon"]
        if "guarantee" in record
        else record["accountant"]["epsilon"]
    )


@pytest.mark.parametrize("algorithm", sorted(_FEDUCB_SMALL))
def test_feducb_secure_noise_pays_at_least_the_float_price(algorithm, capsys) -> None:
    plain, secure = _plain_and_secure(
        ["run", algorithm, *_FEDUCB_SMALL[algorithm], "--json"], capsys
    )
    assert secure["setting"]["secure_noise"] is True
    assert "secure_noise" not in plain["setting"]
    assert _privatizer_epsilon(secure) >= _privatizer_epsilon(plain) > 0


def test_every_other_run_command_refuses_the_flag(capsys) -> None:
    commands = build_parser()._subparsers._group_actions[0].choices["run"]
    names = commands._subparsers._group_actions[0].choices
    others = sorted(set(names) - set(SECURE_NOISE_RUNS))
    assert others and set(SECURE_NOISE_RUNS) <= set(names)
    for name in others:
        assert main(["run", name, "--secure-noise"]) == 2
        err = capsys.readouterr().err
        assert f"not supported by `run {name}`" in err and "gossip-fed-ucb" in err
