"""User code that exits, dies or hangs cannot fake a pass (issue 34, item 5).

A claims file (``fedpriv verify --claims``) or a mechanism (``fedpriv audit``) that
calls ``sys.exit(0)`` or ``os._exit(0)``, or loops, must give exit status 2 naming the
file, with no report written: it runs in a forked worker with a ``--timeout``.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from fedpriv.audit.claims import family as registry
from fedpriv.audit.claims import register
from fedpriv.audit.engine.isolation import UserCodeAbortedError, check_timeout, run_isolated
from fedpriv.cli.main import main

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation forks a worker")


@pytest.fixture
def clean_registry(monkeypatch):
    """A registry with no claims file loaded (restored afterwards)."""
    monkeypatch.setattr(registry, "_files", {})
    monkeypatch.setattr(registry, "_entry_point_cache", None)
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(register, "_outside_cache", [(), ()])


def _forever() -> None:
    while True:
        time.sleep(0.05)


@pytest.mark.parametrize(
    "function, message",
    [
        (lambda: sys.exit(0), "called sys.exit(0)"),
        (lambda: os._exit(0), "exited with status 0"),
        (lambda: os.kill(os.getpid(), 9), "killed by signal SIGKILL"),
        (_forever, "ran past its timeout of 0.5 s"),
    ],
)
def test_run_isolated_reports_exit_death_and_hang(function, message) -> None:
    with pytest.raises(UserCodeAbortedError, match="my code") as caught:
        run_isolated(function, timeout=0.5, what="my code")
    assert message in str(caught.value)


def test_run_isolated_returns_the_result_and_reraises_exceptions() -> None:
    assert run_isolated(pow, 2, 10, timeout=60, what="pow") == 1024
    with pytest.raises(ZeroDivisionError):
        run_isolated(divmod, 1, 0, timeout=60, what="divmod")


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_check_timeout_refuses_non_positive(bad) -> None:
    with pytest.raises(ValueError, match="`timeout`"):
        check_timeout(bad)


_FAMILY = """
import os, sys, time
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.family import Family
from fedpriv.audit.engine.views import View
from fedpriv.privacy import NeighboringRelation, PureDP

{top}

def accountant(claim):
    {body}
    return "basic", 0.5, ()

def claims():
    claim = Claim(
        paper="Mine", algorithm="mine", mode="paper", setting=(("n_agents", 1),),
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        claimed=PureDP(1.0), source="here",
    )
    return (
        RegisteredClaim(
            key="mine_exits/mine/eps1", claim=claim, accountant=accountant, audit=None,
            channel="the output",
            view=View(observer="anyone", outputs=("the output",), definition="here"),
        ),
    )

FAMILY = Family(key="mine_exits", title="Mine", claims=claims)
"""

_EXITS = {
    "sys.exit": ("sys.exit(0)", "called sys.exit(0)"),
    "os._exit": ("os._exit(0)", "exited with status 0"),
    "loop": ("while True: time.sleep(0.05)", "ran past its timeout"),
}


@pytest.mark.parametrize("where", ["module", "recipe"])
@pytest.mark.parametrize("how", sorted(_EXITS))
def test_a_claims_file_that_exits_or_hangs_exits_2(
    how, where, tmp_path, clean_registry, capsys
) -> None:
    statement, message = _EXITS[how]
    top, body = (statement, "pass") if where == "module" else ("", statement)
    path = tmp_path / "exiting_claims.py"
    path.write_text(textwrap.dedent(_FAMILY).format(top=top, body=body), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["verify", "--claims", str(path), "--quick", "--quiet", "--workers", "1"]
    timeout = "2" if how == "loop" else "600"  # a loaded machine may take seconds to load
    status = main([*argv, "--timeout", timeout, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert str(path) in err and message in err, err
    assert not out.exists()  # nothing reported as checked


def test_a_well_behaved_claims_file_still_runs(tmp_path, clean_registry, capsys) -> None:
    path = tmp_path / "fine_claims.py"
    path.write_text(textwrap.dedent(_FAMILY).format(top="", body="pass"), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["verify", "--claims", str(path), "--quick", "--quiet", "--workers", "1"]
    status = main([*argv, "--out", str(out), "--fail-on", "never"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "mine_exits/mine/eps1" in captured.out
    (row,) = json.loads((out / "claims.json").read_text("utf-8"))
    # Evaluated in the worker and returned: the accountant's 0.5 is there. With no
    # declaration check (the row has no run function) it cannot hold on that bound.
    assert row["accountant"]["epsilon"] == 0.5
    assert row["verdict"] == "unresolved" and "not checked" in row["evidence"], row["evidence"]


_MECHANISM = """
import os, sys, time
import numpy as np

def mechanism(dataset, n_samples, rng):
    {body}
    return dataset + rng.laplace(size=n_samples)
"""


@pytest.mark.parametrize("how", sorted(_EXITS))
def test_an_audited_mechanism_that_exits_or_hangs_exits_2(how, tmp_path, capsys) -> None:
    statement, message = _EXITS[how]
    path = tmp_path / "exiting_mechanism.py"
    path.write_text(textwrap.dedent(_MECHANISM).format(body=statement), encoding="utf-8")
    status = main(
        [
            "audit",
            f"{path}:mechanism",
            "--pair",
            "0",
            "1",
            "--claim",
            "pure:1",
            "--samples",
            "2000",
            "--timeout",
            "2" if how == "loop" else "600",
        ]
    )
    captured = capsys.readouterr()
    assert status == 2, captured.err
    assert f"{path}:mechanism" in captured.err and message in captured.err, captured.err
    assert "verdict" not in captured.out


@pytest.mark.parametrize("how", ["sys.exit", "os._exit"])
def test_an_audited_module_that_exits_on_import_exits_2(how, tmp_path, capsys) -> None:
    path = tmp_path / "exits_on_import.py"
    statement = _EXITS[how][0]
    path.write_text(f"import os, sys\n{statement}\n", encoding="utf-8")
    status = main(["audit", f"{path}:f", "--pair", "0", "1", "--claim", "pure:1"])
    assert status == 2
    assert str(path) in capsys.readouterr().err


def test_timeout_must_be_positive(capsys) -> None:
    assert main(["audit", "x.py:f", "--pair", "0", "1", "--claim", "pure:1", "--timeout", "0"]) == 2
    assert "--timeout" in capsys.readouterr().err


def test_the_source_says_why_a_fork(tmp_path) -> None:
    """The worker is a fork: user functions need not be picklable (a closure works)."""
    offset = 3
    assert run_isolated(lambda: offset + 1, timeout=60, what="closure") == 4
    assert Path(run_isolated(os.getcwd, timeout=60, what="cwd")) == Path.cwd()


def test_an_installed_entry_point_that_exits_on_import_exits_2(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """An installed family's module runs in this process (it builds the parser): a
    ``sys.exit(0)`` there is caught and reported, never exit 0 with nothing run. The
    entry point is skipped with a warning naming it (the other families still run,
    tests/audit/test_plugin_loading.py); asked for by name it exits 2."""
    from fedpriv.audit.claims.family import ENTRY_POINT_GROUP

    (tmp_path / "exiting_fedpriv_paper.py").write_text(
        "import sys\nsys.exit(0)\n", encoding="utf-8"
    )
    info = tmp_path / "exiting_fedpriv_paper-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: exiting-fedpriv-paper\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nexiting = exiting_fedpriv_paper:FAMILY\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    assert main(["verify", "--paper", "exiting", "--quick", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "fedpriv: warning: entry point 'exiting'" in err and "sys.exit(0)" in err
    assert "fedpriv: error: `paper` 'exiting'" in err
    assert not out.exists()


def _install_family(tmp_path, monkeypatch, body: str, module: str) -> None:
    """Install ``_FAMILY`` (accountant body ``body``) as the entry point ``mine``.

    ``module`` differs between tests: an imported module stays in ``sys.modules``."""
    from tests.audit._plugins import install_distribution

    source = textwrap.dedent(_FAMILY).format(top="", body=body)
    install_distribution(tmp_path, module, source, point="mine")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)  # forgotten afterwards


@pytest.mark.parametrize("how", sorted(_EXITS))
def test_an_installed_familys_claim_that_exits_or_hangs_exits_2(
    how, tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """Its module loads (the probe passes); its accountant recipe exits, dies or
    hangs inside the claim's forked worker: exit 2 naming the claim and the entry
    point, nothing written."""
    statement, message = _EXITS[how]
    module = "installed_" + how.replace(".", "_")
    _install_family(tmp_path, monkeypatch, statement, module)
    out = tmp_path / "out"
    argv = ["verify", "--paper", "mine_exits", "--quick", "--quiet", "--workers", "1"]
    timeout = "2" if how == "loop" else "600"
    status = main([*argv, "--timeout", timeout, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"claim mine_exits/mine/eps1 of entry point 'mine' ({module}:FAMILY)" in err
    assert message in err and "warning" not in err, err
    assert not out.exists()  # nothing reported as checked


def test_an_installed_familys_good_claim_is_evaluated_in_a_worker(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    body = "open('pids.txt', 'a').write(f'{os.getpid()}\\n')"
    _install_family(tmp_path, monkeypatch, body, "installed_records_pid")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    argv = ["verify", "--paper", "mine_exits", "--quick", "--quiet", "--workers", "1"]
    status = main([*argv, "--out", str(out), "--fail-on", "never"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    (row,) = json.loads((out / "claims.json").read_text("utf-8"))
    assert row["key"] == "mine_exits/mine/eps1" and row["accountant"]["epsilon"] == 0.5
    pids = {int(line) for line in (tmp_path / "pids.txt").read_text().split()}
    assert pids and os.getpid() not in pids  # the recipe ran in a forked worker only


def test_a_builtin_claim_is_not_forked(clean_registry, monkeypatch) -> None:
    """Built-in families' claims run in the job's own process, unchanged."""
    from fedpriv.audit.claims import verify
    from fedpriv.audit.engine.coupled import AuditBudget

    def refuse(*args, **kwargs):
        raise AssertionError("a built-in claim was forked")

    monkeypatch.setattr(verify, "run_isolated", refuse)
    key = "feducb/feducb/fig1b/M1.5"  # accountant only: no audit to run
    seed = verify.claim_seed(np.random.SeedSequence(0), key)
    budget = AuditBudget(pilot_samples=20, samples=50, batch_size=50)
    job = {"key": key, "budget": budget, "seed": seed, "origin": None, "entry_point": None}
    direct = verify._evaluate_job(job)
    assert verify._job({**job, "timeout": 1.0}) == direct


_RUN_FAMILY = """
from fedpriv.audit.claims.family import Command, Family
FAMILY = Family(key="mine_runs", title="Mine", claims=tuple,
                run_commands={{"mine-run": Command("{module}_cli", "my run")}})
"""

_RUN_MODULE = """
import os, sys, time
from fedpriv.cli.runs import JSON, RunCommand, RunReport
{top}

def _run(args):
    {body}
    return RunReport(record={{"verdict": "violated"}}, lines=lambda: ["my run ran"])

COMMANDS = (RunCommand("mine-run", (JSON,), _run),)
"""


def _install_run_family(tmp_path, module: str, *, top: str = "", body: str = "pass") -> None:
    """An installed family whose ``fedpriv run mine-run`` is ``_RUN_MODULE``."""
    from tests.audit._plugins import install_distribution

    install_distribution(tmp_path, module, _RUN_FAMILY.format(module=module), point="runs")
    source = textwrap.dedent(_RUN_MODULE).format(top=top, body=body)
    (tmp_path / f"{module}_cli.py").write_text(source, encoding="utf-8")


@pytest.mark.parametrize("where", ["module", "run"])
@pytest.mark.parametrize("how", ["sys.exit", "os._exit"])
def test_an_installed_run_command_that_exits_exits_2(
    how, where, tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """``fedpriv run`` of an installed family: its command module is imported in a
    forked worker first, and the run itself runs in one."""
    statement, message = _EXITS[how]
    module = f"installed_run_{where}_{how.replace('.', '_')}"
    top, body = (statement, "pass") if where == "module" else ("", statement)
    _install_run_family(tmp_path, module, top=top, body=body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.delitem(sys.modules, f"{module}_cli", raising=False)
    assert main(["run", "mine-run"]) == 2
    err = capsys.readouterr().err
    named = (
        f"command module '{module}_cli' of entry point 'runs'"
        if where == "module"
        else "`fedpriv run mine-run` of entry point 'runs'"
    )
    assert named in err and message in err, err


def test_an_installed_run_command_still_runs_and_decides(tmp_path) -> None:
    """In a fresh process (the run prints from its worker to the real stdout): the
    record's violated verdict still gives exit 1, and ``--help`` is unaffected."""
    import subprocess

    _install_run_family(tmp_path, "installed_run_good")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "fedpriv.cli.main"]
    run = {"capture_output": True, "text": True, "timeout": 600, "env": env, "cwd": tmp_path}
    done = subprocess.run([*command, "run", "mine-run"], **run)
    assert done.returncode == 1 and done.stdout.strip() == "my run ran", done.stderr
    done = subprocess.run([*command, "run", "mine-run", "--json"], **run)
    assert done.returncode == 1 and json.loads(done.stdout)["verdict"] == "violated"


def test_an_installed_run_commands_output_reaches_a_redirected_stdout(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """Under ``capsys`` (a user's own test of their command) the worker's output is
    sent back and written here, and the command's exit status is kept."""
    _install_run_family(tmp_path, "installed_run_captured", body="print('from the worker')")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", "mine-run", "--json"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("from the worker\n")
    assert json.loads(out.split("\n", 1)[1])["verdict"] == "violated"
