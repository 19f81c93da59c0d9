"""Every option of every command says what it does, and ``verify`` reports progress.

The parser is walked, not listed: a new option without ``help`` fails here.
"""

from __future__ import annotations

import argparse
import io

import pytest
from fedpriv.cli.main import build_parser


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("fedpriv",)):
    """(command path, action) of every action of ``parser`` and its subparsers."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _walk(child, (*path, name))
        else:
            yield path, action


ACTIONS = [
    (" ".join(path), action)
    for path, action in _walk(build_parser())
    if not isinstance(action, argparse._HelpAction)
]


def test_the_walk_reaches_every_command():
    commands = {path for path, _ in ACTIONS}
    assert {
        "fedpriv verify",
        "fedpriv account",
        "fedpriv audit",
        "fedpriv run gossip-fed-ucb",
        "fedpriv run private-coop-ucb",
        "fedpriv experiment li-song-fig4",
        "fedpriv experiment feducb-fig1a",
    } <= commands
    assert len(ACTIONS) > 300


@pytest.mark.parametrize(
    ("command", "action"),
    ACTIONS,
    ids=[f"{c} {'/'.join(a.option_strings) or a.dest}" for c, a in ACTIONS],
)
def test_every_option_has_help(command, action):
    assert action.help and action.help.strip() and action.help is not argparse.SUPPRESS, (
        f"`{command}` option {action.option_strings or action.dest} has no help text"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_verify_progress_is_one_bar_over_every_step():
    from fedpriv.cli.verify import _Progress

    stream = _Terminal()
    progress = _Progress(3, quiet=False, stream=stream)
    progress("[gossip_fed_ucb] Fed_UCB job (regret runs, tree audits)")
    progress("[1/1] regret paper 2 ε=1 T=100 trials=2: 12.0")
    progress("[1/2] audit T=16 R=15: lower bound 0.9")
    progress("[2/2] feducb/feducb/adaptive: violated (accountant inf)")
    progress.close()
    drawn = stream.getvalue()
    assert "3/3" in drawn and "feducb" in drawn
    assert "[1/2]" not in drawn  # the steps' own counters are replaced by the bar


def test_verify_progress_without_a_terminal_numbers_jobs_over_the_run():
    from fedpriv.cli.verify import _Progress

    stream = io.StringIO()
    progress = _Progress(3, quiet=False, stream=stream)
    progress("[1/1] regret paper 2 ε=1: 12.0")
    progress("[ledger] one Fed_UCB run per variant")
    progress("[1/2] audit T=16")
    progress.close()
    lines = stream.getvalue().splitlines()
    assert [line.split("] ", 1)[1].split(" ", 1)[0] for line in lines] == [
        "[1/3]",
        "[ledger]",
        "[2/3]",
    ]
    quiet = _Terminal()
    silent = _Progress(3, quiet=True, stream=quiet)
    silent("[1/1] regret paper 2 ε=1: 12.0")
    silent.close()
    assert quiet.getvalue() == ""


def test_planned_jobs_counts_every_progress_line_of_a_paper(tmp_path):
    from fedpriv.audit.claims.family import families
    from fedpriv.audit.claims.register import claims_for
    from fedpriv.audit.claims.verify import ClaimsConfig, planned_jobs

    for paper in (fam.key for fam in families() if not fam.attachments):  # one job a row
        config = ClaimsConfig.quick_config(papers=(paper,), workers=1)
        assert planned_jobs(config) == sum(e.paper == paper for e in claims_for(None))
    # Fed_UCB: its attachment's 1 + 2 x 3 regret runs and the four parts (joint and
    # product audit, each world) of each group of tree audits sharing their released
    # nodes (6: 3 horizons x 2 output sets), which evaluate the 45 grid rows, and the
    # ledger; the rows outside the grid as claim jobs.
    config = ClaimsConfig.quick_config(papers=("gossip_fed_ucb",), workers=1)
    n_rows = sum(e.paper == "gossip_fed_ucb" for e in claims_for(None))
    fed = config.attachments["gossip_fed_ucb/regret"]
    from fedpriv.audit.families.gossip_fed_ucb.regret import _audit_groups, _claim_grid

    grid = _claim_grid(fed)
    groups = _audit_groups(fed, grid)
    assert len(groups) == 6 and sum(len(rows) for rows in groups.values()) == len(grid) == 45
    assert planned_jobs(config) == (1 + 2 * len(fed.epsilons)) + 4 * 6 + 1 + (n_rows - len(grid))


def test_paper_mode_fed_ucb_says_why_epsilon_is_infinite(capsys):
    from fedpriv.cli.main import main

    assert (
        main(
            [
                "run",
                "gossip-fed-ucb",
                "--horizon",
                "64",
                "--agents",
                "2",
                "--arms",
                "3",
                "--mode",
                "paper",
            ]
        )
        == 1  # violated: run exits 1 like verify, account and audit
    )
    out = capsys.readouterr().out
    assert "accountant ε = inf" in out
    assert "why accountant ε = inf: rewards outside the declared [0, 1]" in out
    assert "why ε including round-0 records = inf: initial pulls released raw" in out
    assert (
        main(
            [
                "run",
                "gossip-fed-ucb",
                "--horizon",
                "64",
                "--agents",
                "2",
                "--arms",
                "3",
                "--mode",
                "corrected",
            ]
        )
        == 0
    )
    assert "why" not in capsys.readouterr().out
