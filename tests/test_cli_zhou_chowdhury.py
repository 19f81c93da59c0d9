"""``fedpriv run private-fedlinucb`` decides its claim and exits by the project convention.

0 nothing refuted, 1 the run's claim violated, 2 bad input (the message names the
parameter, nothing is printed on stdout). The verdict is the rule ``fedpriv verify``
applies to the family's rows: the claimed (ε, δ) against the run's own ledger (upper
bound) and the exact ε of the family's adaptive pair at the run's setting (lower bound,
:func:`fedpriv.audit.families.zhou_chowdhury.recipes.adaptive_pair`). Nothing here is
statistical: the noise only moves the regret, and every bound is computed in closed form
(the adaptive pair's first batch is noiseless and deterministic), so no false-alarm rate
applies. Runs are small (M = 3 silos, K = 6 arms, T = 100 rounds, B = 25).
"""

from __future__ import annotations

import json
import math

import pytest
from fedpriv.cli.main import main
from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SMALL = ["--agents", "3", "--arms", "6", "--horizon", "100"]


def _no_constant(name):
    raise ValueError(f"not JSON: {name}")


def _record(argv, capsys):
    """``(status, record)`` of ``fedpriv run private-fedlinucb ARGV --json``."""
    status = main(["run", "private-fedlinucb", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out, parse_constant=_no_constant)


def _number(value):
    return math.inf if value == "inf" else float(value)


def test_the_papers_default_run_is_violated_and_exits_1_in_text_and_json(capsys):
    # Silo-level LDP as in Alg. 1: a silo acts on its raw batch, so one user moves the
    # rest of it, and the paper's σ covers one pair: the exact lower bound exceeds ε = 1.
    status, record = _record(SMALL, capsys)
    g = record["guarantee"]
    assert status == 1 and g["verdict"] == "violated"
    assert (
        g["claimed"] == {"epsilon": 1.0, "delta": 0.1, "source": g["claimed"]["source"]}
        and "Thm. 5.1" in g["claimed"]["source"]
    )
    lower, upper = g["lower_bound"], g["accountant"]
    assert lower["kind"] == "analytic" and lower["delta"] == upper["delta"] == 0.1
    assert 1.0 < lower["epsilon"] <= upper["epsilon"] < math.inf
    assert g["evidence"].startswith("analytic lower bound")
    assert record["records_per_leaf"] == 25 and record["setting"]["acts_on"] == "own-batch-data"
    assert main(["run", "private-fedlinucb", *SMALL]) == 1
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("Private-FedLinUCB (ldp): regret per silo ")
    assert text[1].startswith("claimed (ε, δ) = (1, 0.1); accountant ε at δ = 0.1: ")
    assert text[2].startswith("verdict: violated (analytic lower bound ")


def test_the_corrected_run_holds_and_exits_0(capsys):
    # fedpriv's correction: silos act on the broadcast sums (one user moves one pair)
    # and σ is solved for the view's exact (ε, δ): the ledger spends at most the claim.
    argv = [*SMALL, "--protocol", "ldp-exact", "--broadcast-only"]
    status, record = _record(argv, capsys)
    g = record["guarantee"]
    assert status == 0 and g["verdict"] == "holds"
    assert record["records_per_leaf"] == 1 and record["setting"]["acts_on"] == "broadcast-sums"
    assert g["lower_bound"]["epsilon"] <= g["accountant"]["epsilon"] <= 1.0
    assert g["non_private_releases"] == []
    assert main(["run", "private-fedlinucb", *argv]) == 0
    assert "verdict: holds (" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--protocol", "non-private"], "protocol non-private: "),
        (["--epsilon", "inf"], "epsilon = inf: "),
    ],
)
def test_the_raw_sums_claim_nothing_and_exit_0(argv, reason, capsys):
    status, record = _record([*SMALL, *argv], capsys)
    g = record["guarantee"]
    assert status == 0 and record["protocol"] == "non-private" and record["noise_stddev"] == 0
    assert g["verdict"] == "no-claim" and g["evidence"].startswith(reason)
    assert g["claimed"]["epsilon"] == "inf" and g["accountant"]["epsilon"] == "inf"
    assert g["lower_bound"] is None and g["non_private_releases"]
    assert main(["run", "private-fedlinucb", *SMALL, *argv]) == 0
    assert "verdict: no-claim (" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["--epsilon", "0"], "epsilon"),
        (["--epsilon", "-1"], "--epsilon"),
        (["--delta", "0"], "delta"),
        (["--delta", "1"], "delta"),
        (["--delta", "0", "--protocol", "non-private"], "delta"),
        (["--batch-size", "0"], "batch_size"),
        (["--horizon", "10"], "horizon"),
        (["--dim", "2"], "dim"),
        (["--arms", "2"], "n_arms"),
        (["--agents", "0"], "n_agents"),
        (["--trials", "0"], "n_trials"),
        (["--protocol", "central"], "--protocol"),
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_input_exits_2_naming_the_parameter_and_prints_nothing(argv, name, as_json, capsys):
    status = main(["run", "private-fedlinucb", *argv, *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and name in err


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    protocol=st.sampled_from(["ldp", "ldp-exact", "sdp-amp"]),
    broadcast=st.booleans(),
    epsilon=st.sampled_from([0.01, 0.2, 1.0, 5.0]),
    delta=st.sampled_from([1e-4, 0.1]),
    agents=st.integers(1, 3),
    batch=st.sampled_from([5, 10]),
)
def test_the_verdict_follows_the_rule_and_the_bounds_are_ordered(
    protocol, broadcast, epsilon, delta, agents, batch, capsys
):
    # The invariant of every row: the exact lower bound never exceeds the ledger's upper
    # bound; "violated" iff the lower bound exceeds the claim, else "holds" iff the upper
    # bound is within it (both up to the rule's relative tolerance); exit 1 iff violated.
    argv = ["--agents", str(agents), "--arms", "4", "--dim", "3", "--horizon", "20"]
    argv += ["--batch-size", str(batch), "--protocol", protocol]
    argv += ["--epsilon", str(epsilon), "--delta", str(delta)]
    status, record = _record([*argv, *(["--broadcast-only"] if broadcast else [])], capsys)
    g = record["guarantee"]
    lower, upper = g["lower_bound"]["epsilon"], _number(g["accountant"]["epsilon"])
    assert 0.0 <= lower <= upper * (1 + 1e-9) + 1e-12
    assert "CONTRADICTION" not in g["evidence"]
    if lower > epsilon * (1 + RELATIVE_TOLERANCE):
        assert g["verdict"] == "violated"
    elif upper <= epsilon * (1 + RELATIVE_TOLERANCE):
        assert g["verdict"] == "holds"
    else:
        assert g["verdict"] == "unresolved"
    assert status == (1 if g["verdict"] == "violated" else 0)


def test_the_figure_command_writes_its_files_under_the_family_folder(tmp_path, capsys):
    argv = ["experiment", "zhou-chowdhury-fig2b", "--horizon", "50", "--agents", "3"]
    assert main([*argv, "--trials", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "zhou_chowdhury"
    assert out.startswith(f"zhou-chowdhury-fig2b: wrote {folder}/fig2b.png")
    assert sorted(p.name for p in folder.iterdir()) == [
        "fig2b.csv",
        "fig2b.md",
        "fig2b.png",
        "fig2b_curves.csv",
    ]
    assert "SDP-VecSum ε=0.2" in (folder / "fig2b_curves.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["--horizon", "24"], "horizon"),
        (["--horizon", "-1"], "--horizon"),
        (["--trials", "0"], "n_trials"),
        (["--trials", "two"], "--trials"),
        (["--agents", "0"], "n_agents"),
        (["--seed", "-3"], "--seed"),
    ],
)
@pytest.mark.parametrize("figure", ["zhou-chowdhury-fig2a", "zhou-chowdhury-fig2b"])
def test_bad_figure_options_exit_2_naming_the_option_and_write_nothing(
    figure, argv, name, tmp_path, capsys
):
    status = main(["experiment", figure, *argv, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and name in err
    assert list(tmp_path.iterdir()) == []


def test_the_single_fig2_command_is_gone(capsys):
    # Fig. 2a and 2b are two commands (two files each); the old name wrote other files
    assert main(["experiment", "zhou-chowdhury-fig2"]) == 2
    assert "zhou-chowdhury-fig2a" in capsys.readouterr().err
