"""Issue 20: the CLI refuses sizes it cannot run before allocating anything.

Every case exits with status 2 (argparse's usage-error convention), a message on
stderr naming the option and the allowed range, and no traceback.
"""

from __future__ import annotations

import argparse

import pytest
from fedpriv.cli.main import MEMORY_FRACTION, OPTION_CEILINGS, check_memory, main


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["run", "feducb", "--horizon", "1000000000000"], "--horizon"),
        (["run", "gossip-fed-ucb", "--horizon", "1000000000000"], "--horizon"),
        (["run", "private-coop-ucb", "--horizon", "1000000000000"], "--horizon"),
        (["run", "ucb1", "--horizon", "1000000000000"], "--horizon"),
        (["run", "linucb", "--horizon", "1000000000000"], "--horizon"),
        (["experiment", "feducb-fig1b", "--horizon", "1000000000000"], "--horizon"),
        (["verify", "--regret-horizon", "1000000000000"], "--regret-horizon"),
        (["run", "feducb", "--epsilon", "1e308"], "--epsilon"),
        (["run", "gossip-fed-ucb", "--agents", "1000000000"], "--agents"),
        (
            ["audit", "m:f", "--pair", "0", "1", "--claim", "pure:1", "--samples", "1000000000000"],
            "--samples",
        ),
    ],
)
def test_sizes_beyond_the_ceilings_are_usage_errors(argv, named, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{named} must be in [0, " in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "feducb", "--horizon", "100000000"],
        ["run", "gossip-fed-ucb", "--horizon", "900000000", "--trials", "1000"],
        ["run", "private-coop-ucb", "--horizon", "100000000"],
        ["run", "ucb1", "--horizon", "100000000", "--trials", "100"],
        ["run", "linucb", "--horizon", "100000000"],
        ["experiment", "feducb-fig1b", "--horizon", "100000000"],
        ["verify", "--regret-horizon", "100000000"],
    ],
)
def test_planned_tables_beyond_available_memory_are_refused_up_front(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "GiB" in err and "must be <=" in err and "Traceback" not in err
    assert "--horizon" in err or "--regret-horizon" in err


def test_memory_check_uses_the_documented_fraction():
    args = argparse.Namespace(
        command="run", algorithm="ucb1", horizon=1000, trials=1, agents=10, arms=5
    )
    per_run = 8 * 1000 * 10 * 5
    check_memory(args, available=int(per_run / MEMORY_FRACTION) + 1)  # fits
    with pytest.raises(ValueError, match="`--horizon` 1,000 plans"):
        check_memory(args, available=int(per_run / MEMORY_FRACTION) - 8)


def test_ceilings_match_the_library_constants():
    from fedpriv.audit.regression.api import MAX_SAMPLES
    from fedpriv.privacy.accounting.events import MAX_EVENT_EPSILON

    assert OPTION_CEILINGS["--samples"] == MAX_SAMPLES
    assert OPTION_CEILINGS["--epsilon"] == MAX_EVENT_EPSILON


@pytest.mark.parametrize("value", ["NaN", "Infinity", "[1, NaN]", "1e400"])
def test_audit_pair_blames_the_input_not_the_mechanism(value, capsys):
    argv = [
        "audit",
        "builtins:print",
        "--pair",
        value,
        "0",
        "--claim",
        "pure:1",
        "--samples",
        "1000",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "`--pair` D must" in err and "finite" in err and "mechanism" not in err.split(";")[0]


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (
            'count = "feducb.tree_depth"',
            "count = 1000000000000",
            "count: must be an integer in [1, 1,000,000]",
        ),
        (
            "per = { agent = 10 }",
            "per = { agent = 1000000000000 }",
            "per.agent: a label count must be in [1, 1,000,000]",
        ),
    ],
)
def test_deployment_with_huge_counts_is_a_clean_error(tmp_path, capsys, old, new, named):
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "feducb.toml"
    text = example.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "big.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    assert main(["account", str(path)]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
