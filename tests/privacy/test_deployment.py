"""Budget reports of deployments described in TOML (``fedpriv account``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fedpriv.cli.main import main
from fedpriv.privacy.deployment import budget_report, load_deployment, parse_deployment
from fedpriv.privacy.errors import DataFormatError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "feducb.toml"

LAPLACE_AGENTS = """
title = "ten agents"
neighboring_relation = "{relation}"
disjoint = ["agent"]
target_delta = 1e-6

[claim]
epsilon = 1.0
delta = 1e-6

[[release]]
event = "Laplace"
per = {{ agent = 10 }}
scale = 10.0
l1_sensitivity = 1.0
"""


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "deployment.toml"
    path.write_text(text)
    return path


def test_disjoint_agents_compose_in_parallel_and_shared_user_k_fold(tmp_path):
    # Issue 3's reference values: ten disjoint agents each Laplace(eps = 0.1) -> 0.1;
    # the same ten with one user at every agent -> 0.99898 at delta = 1e-6 (< basic 1).
    disjoint = budget_report(
        load_deployment(_write(tmp_path, LAPLACE_AGENTS.format(relation="replace_one_reward")))
    )
    # At delta = 1e-6 one Laplace(eps = 0.1) costs 0.099998 (exactly 0.1 at delta = 0).
    assert disjoint["tightest"]["epsilon"] == pytest.approx(0.1, abs=1e-5)
    assert disjoint["tightest"]["epsilon"] <= 0.1
    assert set(disjoint["per_level"]["agent"]) == {str(a) for a in range(10)}
    shared = budget_report(
        load_deployment(_write(tmp_path, LAPLACE_AGENTS.format(relation="user_at_all_agents")))
    )
    assert shared["tightest"]["epsilon"] == pytest.approx(0.998978, abs=1e-5)
    assert shared["routes"]["basic"] == pytest.approx(1.0)
    assert shared["verdict"] == "holds"


def test_a_file_with_the_former_relation_key_still_loads(tmp_path):
    # Deployment files written before dp-accounting's name `neighboring_relation` was
    # adopted say `relation`: they load to the same deployment and the same report.
    new = LAPLACE_AGENTS.format(relation="user_at_all_agents")
    old = new.replace("neighboring_relation = ", "relation = ")
    assert old != new
    loaded_old = load_deployment(_write(tmp_path, old))
    assert loaded_old.neighboring_relation == "user_at_all_agents"
    report_old = budget_report(loaded_old)
    report_new = budget_report(load_deployment(_write(tmp_path, new)))
    assert report_old == report_new
    assert report_new["neighboring_relation"] == "user_at_all_agents"
    both = new.replace(
        "neighboring_relation = ", "relation = 'replace_one'\nneighboring_relation = "
    )
    with pytest.raises(DataFormatError, match="not both"):
        load_deployment(_write(tmp_path, both))


def test_feducb_example_reports_every_route_next_to_the_claim():
    report = budget_report(load_deployment(EXAMPLE))
    assert report["claim"] == {"epsilon": 1.0, "delta": 0.1, "source": report["claim"]["source"]}
    assert set(report["routes"]) >= {"pure", "basic", "advanced", "rdp", "zcdp", "gdp", "pld"}
    assert report["verdict"] == "holds"
    # The paper's sigma_N buys far more than it claims: GDP mu ~= 0.083 (issue 4).
    calibration = report["calibrations"]["feducb"]
    mu = (
        math.sqrt(calibration["tree_depth"])
        * 2.8284271247461903
        / (math.sqrt(2) * calibration["noise_stddev"])
    )
    assert mu == pytest.approx(0.0835, abs=5e-4)
    assert report["routes"]["gdp"] <= 1e-9  # (0, 0.1)-DP already
    assert report["delta_at_claimed_epsilon"] < 1e-20


def test_cli_account_prints_json_and_writes_markdown(tmp_path, capsys):
    out = tmp_path / "budget.md"
    assert main(["account", str(EXAMPLE), "--json", "--out", str(out)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["verdict"] == "holds" and record["routes"]["pure"] == "inf"
    assert "| route | ε |" in out.read_text()


@pytest.mark.parametrize(
    "text, message",
    [
        ("title = 1\n[[release]]\nevent = 'Nope'\nper = { agent = 1 }\n", "unknown event 'Nope'"),
        ("[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\nscale = -1.0\n", "`scale` must be"),
        (
            "[[release]]\nevent = 'Laplace'\nper = { arm = 1 }\nscale = 1.0\n",
            "no labels for the disjoint level",
        ),
        (
            "target_delta = 1.5\n[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\nscale = 1.0\n",
            "`target_delta` must be in",
        ),
        (
            "neighboring_relation = 'nope'\n[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\nscale = 1.0\n",
            "`neighboring_relation` must be one of",
        ),
        ("bogus = 1\n", "unknown key"),
        ("title = 'x'\n", "at least one"),
        ("[calibration.c]\nfunction = 'nope'\n", "unknown function"),
        (
            "[claim]\nepsilon = -1\n[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\nscale = 1.0\n",
            "claim.epsilon",
        ),
    ],
)
def test_malformed_files_name_the_problem(tmp_path, text, message):
    with pytest.raises(DataFormatError, match=message):
        load_deployment(_write(tmp_path, text))


def test_invalid_toml_and_cli_exit_code(tmp_path, capsys):
    path = _write(tmp_path, "this is = = not toml")
    with pytest.raises(DataFormatError, match="not valid TOML"):
        load_deployment(path)
    assert main(["account", str(path)]) == 2
    assert "not valid TOML" in capsys.readouterr().err


def test_parse_rejects_undeclared_per_level():
    data = {"release": [{"event": "Laplace", "per": {"agent": 1, "arm": 2}, "scale": 1.0}]}
    with pytest.raises(DataFormatError, match="not declared"):
        parse_deployment(data)


def test_account_decides_with_the_one_verdict_rule_and_gates_ci(tmp_path, capsys):
    # One Laplace release of scale 1 is exactly 1-DP at delta = 0 (pure route and the
    # lower bracket agree): a claim of 0.5 is violated on that exact value and `account`
    # exits 1; a claim of 1 holds and exits 0.
    text = (
        "title = 'one release'\nneighboring_relation = 'replace_one_reward'\n"
        "[claim]\nepsilon = {claim}\ndelta = 0.0\n"
        "[[release]]\nevent = 'Laplace'\nper = {{ agent = 1 }}\nscale = 1.0\nl1_sensitivity = 1.0\n"
    )
    violated = _write(tmp_path, text.format(claim=0.5))
    report = budget_report(load_deployment(violated))
    assert report["verdict"] == "violated"
    assert "analytic lower bound" in report["evidence"]
    assert main(["account", str(violated)]) == 1
    assert "verdict: violated" in capsys.readouterr().out
    holds = _write(tmp_path, text.format(claim=1.0))
    assert budget_report(load_deployment(holds))["verdict"] == "holds"
    assert main(["account", str(holds)]) == 0


def test_misspelled_release_field_lists_the_allowed_fields(tmp_path, capsys):
    # The example with `noise_stddev` misspelled: the error names the file, the release
    # table and the event, suggests the nearest field and lists every allowed one.
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        'noise_stddev = "feducb.noise_stddev"', 'noise_stdev = "feducb.noise_stddev"'
    )
    path = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as raised:
        load_deployment(path)
    message = str(raised.value)
    assert message.startswith(
        f"{path}: release[0] ('Privatizer tree nodes covering one "
        "record'): unknown field(s) 'noise_stdev' (did you mean "
        "'noise_stddev'?) for event 'SymmetricMatrixGaussian'"
    )
    assert message.endswith(
        "allowed: event, name, per, count, noise_stddev, dim, frobenius_sensitivity"
    )
    assert "__init__" not in message and "keyword argument" not in message
    assert main(["account", str(path)]) == 2
    assert "did you mean 'noise_stddev'?" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, message",
    [
        # A required field left out is named, with the allowed ones.
        (
            "[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\n",
            (
                r"event 'Laplace' needs the field\(s\) scale; allowed: event, name, per, count, "
                r"scale, l1_sensitivity"
            ),
        ),
        # Gaussian takes noise_multiplier as a keyword (not a dataclass field).
        (
            "[[release]]\nevent = 'Gaussian'\nper = { agent = 1 }\nnoise_multipler = 2.0\n",
            (
                r"'noise_multipler' \(did you mean 'noise_multiplier'\?\) for event 'Gaussian'; "
                r"allowed: event, name, per, count, noise_stddev, l2_sensitivity, noise_multiplier"
            ),
        ),
        # Calibration tables are checked against the paper function's parameters.
        (
            (
                "[calibration.f]\nfunction = 'feducb_privatizer'\nepsilon = 1.0\ndelta = 0.1\n"
                "horizon = 100\nn_agent = 10\ndim = 2\n"
                "[[release]]\nevent = 'Laplace'\nper = { agent = 1 }\nscale = 1.0\n"
            ),
            (
                r"calibration\.f: unknown field\(s\) 'n_agent' \(did you mean 'n_agents'\?\) for "
                r"calibration function 'feducb_privatizer'; allowed: function, epsilon, delta"
            ),
        ),
    ],
)
def test_unknown_and_missing_fields_are_named(tmp_path, text, message):
    with pytest.raises(DataFormatError, match=message):
        load_deployment(_write(tmp_path, text))


def test_a_calibration_typed_by_its_former_name_still_loads(tmp_path):
    # Zhu et al.'s calibration is spelled with the family's key (gossip_fed_ucb_scale); a
    # deployment file written with the former name fed_ucb_scale calibrates the same.
    from fedpriv.privacy.deployment import CALIBRATION_ALIASES, CALIBRATIONS

    assert CALIBRATION_ALIASES == {"fed_ucb_scale": "gossip_fed_ucb_scale"}
    assert set(CALIBRATION_ALIASES.values()) <= set(CALIBRATIONS)
    deployments = []
    for name in ("fed_ucb_scale", "gossip_fed_ucb_scale"):
        text = (
            'title = "Fed_UCB nodes"\nneighboring_relation = "replace_one"\n\n'
            f"[calibration.z]\nfunction = '{name}'\nepsilon = 1.0\nhorizon = 16\nmode = 'paper'\n\n"
            "[[release]]\nevent = 'Laplace'\nper = { agent = 3 }\ncount = 4\n"
            "scale = 4.0\nl1_sensitivity = 1.0\n"
        )
        deployments.append(load_deployment(_write(tmp_path, text)))
    assert deployments[0].calibrations == deployments[1].calibrations == (("z", 4.0),)
