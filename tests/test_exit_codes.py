"""One exit-status convention for ``fedpriv verify``, ``account``, ``audit`` and ``run``.

0 nothing refuted, 1 a claim or budget violated, 2 bad input (the message names the
parameter). Every command is run for every code, through ``main(argv)`` (the console
script's entry point) and, for one case each, as a subprocess. ``verify``'s claim
jobs are replaced by register rows evaluated without an audit (accountant-only rows,
well under a second each), so the test checks the command's exit logic, not the
audits (those have their own tests).

The ``audit`` verdicts are statistical with pinned seeds: the Laplace ε = 1 mechanism
tested against ε = 1 is refuted with probability <= 5% at 95% confidence (seed 0 gives
a bound of about 0.97 <= 1); the ε = 4 mechanism against ε = 1 is refuted at 20 000
samples with a bound near 3.5 (false-pass probability far below 1e-6).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fedpriv.audit.claims.findings import headline
from fedpriv.cli.commands import EXIT_CODES
from fedpriv.cli.main import build_parser, main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "feducb.toml"

# ---------------------------------------------------------------------------- verify

#: Register rows evaluated without an audit: (key, verdict the accountant gives).
HOLDS = "feducb/feducb/user-at-all-agents"
VIOLATED = "feducb/feducb/user-at-all-agents/adaptive"


@pytest.fixture(scope="module")
def rows():
    from fedpriv.audit.claims.verify import evaluate_claim
    from fedpriv.audit.engine.coupled import AuditBudget

    budget = AuditBudget(pilot_samples=30, samples=120, batch_size=120)
    out = {key: evaluate_claim(key, budget, np.random.SeedSequence(0)) for key in (HOLDS, VIOLATED)}
    assert out[HOLDS].verdict == "holds" and out[VIOLATED].verdict == "violated"
    return out


def _fake_verify(monkeypatch, results):
    """Make ``verify_claims`` return ``results`` for whatever config it is given."""
    from fedpriv.audit.claims import verify as verify_module

    def fake(config, *, progress=None, executor=None):
        for index, result in enumerate(results, start=1):
            if progress is not None:
                progress(f"[{index}/{len(results)}] {result.key}: {result.verdict}")
        return verify_module.ClaimsReport(
            config=config, seed_entropy=0, results=tuple(results), seconds=0.0
        )

    monkeypatch.setattr(verify_module, "verify_claims", fake)


def _verify(tmp_path, *options: str) -> int:
    return main(
        [
            "verify",
            "--quick",
            "--paper",
            "feducb",
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(tmp_path / "reports"),
            *options,
        ]
    )


def test_verify_exits_0_when_nothing_is_refuted(rows, tmp_path, monkeypatch, capsys):
    _fake_verify(monkeypatch, [rows[HOLDS]])
    assert _verify(tmp_path) == 0
    out = capsys.readouterr().out
    # The headline the report opens with is printed at the end.
    page = (tmp_path / "reports" / "feducb.md").read_text(encoding="utf-8")
    assert HOLDS in out and out.rstrip().endswith(headline([rows[HOLDS]]))
    assert headline([rows[HOLDS]]) in page


def test_verify_exits_1_on_a_violated_claim_unless_told_never(rows, tmp_path, monkeypatch, capsys):
    _fake_verify(monkeypatch, [rows[HOLDS], rows[VIOLATED]])
    assert _verify(tmp_path) == 1
    captured = capsys.readouterr()
    assert captured.out.rstrip().endswith(headline([rows[HOLDS], rows[VIOLATED]]))
    # both rows are the paper's own claims (the fixed schedule is its Alg. 2 line 2 protocol)
    assert "1 violated, 1 holds of 2" in captured.out
    assert "exit status 1 (--fail-on violated" in captured.err
    assert (tmp_path / "reports" / "feducb.md").exists()  # the reports are written first
    assert _verify(tmp_path, "--fail-on", "never") == 0
    assert _verify(tmp_path, "--json") == 1  # --json decides alike


def test_verify_fail_on_levels(rows, tmp_path, monkeypatch):
    from fedpriv.audit.claims import report as report_module

    # Only the exit logic here: the reports are written by the two tests above.
    monkeypatch.setattr(report_module, "write_claims_report", lambda report, out: [])
    unresolved = dataclasses.replace(rows[HOLDS], verdict="unresolved")
    _fake_verify(monkeypatch, [rows[HOLDS], unresolved])
    assert _verify(tmp_path) == 0
    assert _verify(tmp_path, "--fail-on", "unresolved") == 1
    assert _verify(tmp_path, "--fail-on", "never") == 0
    # A row that could not be evaluated fails the gate: nothing was checked there.
    error = dataclasses.replace(rows[HOLDS], verdict="error")
    _fake_verify(monkeypatch, [rows[HOLDS], error])
    assert _verify(tmp_path) == 1
    assert _verify(tmp_path, "--fail-on", "never") == 0


def test_exit_status_function():
    from fedpriv.cli.verify import FAIL_ON, exit_status

    assert set(FAIL_ON) == {"violated", "unresolved", "never"}
    assert exit_status(["holds", "outside-claim", "no-claim", "unresolved"]) == 0
    assert exit_status(["holds", "violated"]) == 1
    assert exit_status(["unresolved"], "unresolved") == 1
    assert exit_status(["violated", "error"], "never") == 0
    assert exit_status([]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--paper", "no_such_paper"], "no_such_paper"),
        (["--workers", "0"], "workers"),
        (["--fail-on", "sometimes"], "--fail-on"),
    ],
)
def test_verify_exits_2_on_bad_input(argv, message, tmp_path, capsys):
    out = tmp_path / "reports"
    assert main(["verify", "--quick", "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


# --------------------------------------------------------------------------- account

ONE_RELEASE = (
    "title = 'one release'\nneighboring_relation = 'replace_one_reward'\n"
    "[claim]\nepsilon = {claim}\ndelta = 0.0\n"
    "[[release]]\nevent = 'Laplace'\nper = {{ agent = 1 }}\nscale = 1.0\n"
    "{field} = 1.0\n"
)


def _deployment(tmp_path: Path, claim: float, field: str = "l1_sensitivity") -> Path:
    path = tmp_path / f"deployment-{claim}-{field}.toml"
    path.write_text(ONE_RELEASE.format(claim=claim, field=field), encoding="utf-8")
    return path


def test_account_exit_codes(tmp_path, capsys):
    # Laplace(1) with sensitivity 1 is exactly 1-DP: a claim of 1 holds, 0.5 is violated.
    assert main(["account", str(_deployment(tmp_path, 1.0))]) == 0
    assert main(["account", str(_deployment(tmp_path, 0.5))]) == 1
    assert "verdict: violated" in capsys.readouterr().out
    assert main(["account", str(EXAMPLE)]) == 0
    capsys.readouterr()
    assert main(["account", str(_deployment(tmp_path, 1.0, "l1_sensitivty"))]) == 2
    err = capsys.readouterr().err
    assert "'l1_sensitivty' (did you mean 'l1_sensitivity'?)" in err
    assert main(["account", str(tmp_path / "missing.toml")]) == 2


# ----------------------------------------------------------------------------- audit

MECHANISMS = textwrap.dedent("""
    def noisy_count(count, n_samples, rng):
        return count + rng.laplace(0.0, 1.0, n_samples)     # ε = 1 for |D - D'| <= 1

    def leaky(count, n_samples, rng):
        return count + rng.laplace(0.0, 0.25, n_samples)    # ε = 4
""")


def test_audit_exit_codes(tmp_path, monkeypatch, capsys):
    (tmp_path / "exit_mech.py").write_text(MECHANISMS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    common = ["--pair", "1", "0", "--samples", "20000", "--seed", "0"]
    assert main(["audit", "exit_mech.py:noisy_count", "--claim", "pure:1", *common]) == 0
    assert main(["audit", "exit_mech.py:leaky", "--claim", "pure:1", *common]) == 1
    assert main(["audit", "exit_mech.py:leaky", "--claim", "pure:-1", *common]) == 2
    assert main(["audit", "exit_mech.py:nothing", "--claim", "pure:1", *common]) == 2
    capsys.readouterr()


# ------------------------------------------------------------- the console script


def test_console_script_returns_the_codes(tmp_path):
    """The same codes reach the shell (``python -m fedpriv.cli.main`` = ``fedpriv``)."""

    def run(*argv: str) -> int:
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        return subprocess.run(
            [sys.executable, "-m", "fedpriv.cli.main", *argv],
            check=False,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        ).returncode

    assert run("account", str(_deployment(tmp_path, 0.5))) == 1
    assert run("account", str(_deployment(tmp_path, 1.0, "scale_typo"))) == 2
    assert run("verify", "--fail-on", "sometimes") == 2


@pytest.mark.parametrize("command", ["verify", "account", "audit"])
def test_help_documents_the_shared_exit_codes(command):
    parser = build_parser(())
    subparsers = next(a for a in parser._actions if a.choices and command in a.choices)
    epilog = subparsers.choices[command].epilog or ""
    assert EXIT_CODES in epilog, command


# ------------------------------------------------------------------------------- run


@pytest.mark.parametrize(("mode", "status"), [("paper", 1), ("corrected", 0)])
@pytest.mark.parametrize("as_json", [False, True])
def test_run_exits_1_on_a_violated_claim(mode, status, as_json, capsys):
    # Fed_UCB as written releases the initial pulls raw (Alg. 4 line 1): violated; the
    # corrected run spends exactly its claim: holds.
    argv = ["run", "gossip-fed-ucb", "--horizon", "32", "--trials", "1", "--mode", mode]
    assert main(argv + (["--json"] if as_json else [])) == status
    assert ("violated" in capsys.readouterr().out) == (status == 1)


def test_run_status_reads_every_verdict():
    from fedpriv.cli.commands import run_status

    assert run_status({"guarantee": {"verdict": "holds"}}) == 0
    assert run_status({"a": [{"verdict": "unresolved"}, {"verdict": "violated"}]}) == 1
    assert run_status({"verdict": "no-claim"}) == 0
    assert run_status({}) == 0


def test_run_with_infinite_epsilon_is_a_run_without_a_claim(capsys):
    # --epsilon inf is allowed by the help: a run with no privacy noise and no claim
    argv = ["run", "gossip-fed-ucb", "--epsilon", "inf", "--horizon", "32", "--trials", "1"]
    assert main(argv) == 0
    assert "-> no-claim" in capsys.readouterr().out
