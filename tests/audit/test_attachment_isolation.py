"""A user's attachment cannot fake a pass: every call into it runs in a forked worker.

A claims file (or an installed entry point) may attach an experiment to its family
(``Family.attachments``). Its ``configure``, ``planned``, ``run`` and ``write``, and the
assembly of the rows it returns (which runs the rows' recipes), run in forked workers
with ``--timeout``: an ``os._exit(0)``, a ``sys.exit(0)``, a death by a signal or a hang
there exits 2 naming the file and the attachment, and nothing is written. A
well-behaved attachment gives the rows of an unisolated run with the same seed.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import textwrap

import pytest
from fedpriv.audit.claims import attachment_calls, register
from fedpriv.audit.claims import family as registry
from fedpriv.audit.engine.isolation import UserCodeAbortedError, run_isolated
from fedpriv.cli.main import main

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation forks a worker")

#: A claims file whose family attaches the experiment ``exp`` (the file itself is its
#: module): two rows, both evaluated by the attachment from seeded Laplace draws made
#: by one job each through ``parallel_map`` (the run's executor when it has one).
#: ``MISBEHAVE`` maps a step to the statement it runs first.
_FAMILY = """
import os, signal, sys, time
import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.attachment import (
    Attachment, AttachmentOutput, Plan, RowEvidence,
)
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.family import Family
from fedpriv.audit.engine.executor import parallel_map
from fedpriv.audit.engine.views import View
from fedpriv.privacy import NeighboringRelation, PureDP

MISBEHAVE = {misbehave!r}


def _step(name):
    exec(MISBEHAVE.get(name, "pass"))


def configure(*, quick, seed, workers, draws=200):
    _step("configure")
    return {{"seed": seed, "workers": workers, "draws": draws}}


def planned(config, entries):
    _step("planned")
    return PLAN(len(entries), frozenset(e.key for e in entries))


def _draw(job):
    rng = np.random.default_rng(job["seed"])
    return float(rng.laplace(size=job["draws"]).mean())


def run(config, entries, *, progress, executor):
    _step("run")
    root = np.random.SeedSequence(config["seed"])
    jobs = [
        {{"key": e.key, "seed": child_seed(root, 3, i), "draws": config["draws"]}}
        for i, e in enumerate(entries)
    ]
    means = parallel_map(
        _draw, jobs, workers=config["workers"], say=progress, executor=executor,
        describe=lambda job, mean: f"{{job['key']}}: mean {{mean:.4f}}",
    )
    rows = {{
        e.key: RowEvidence(route="toy", epsilon=0.5 + abs(m), notes=(f"mean {{m!r}}",),
                           extras=(("mean", m),))
        for e, m in zip(entries, means)
    }}
    result = {{"means": means, "pid": os.getpid()}}
    return OUTPUT(rows=rows, result=RESULT(result))


# What a test swaps in to make the attachment lie: its plan, its output, its result.
PLAN = {plan}
OUTPUT = {output}
RESULT = {result}


def write(result, folder):
    _step("write")
    (folder / "means.csv").write_text("\\n".join(map(repr, result["means"])) + "\\n")


def mechanism(claim):
    _step("mechanism")
    return "basic", 0.5


def claims():
    out = []
    for agents, name in ((1, "a"), (2, "b")):
        claim = Claim(
            paper="Mine", algorithm="mine", mode="paper", setting=(("n_agents", agents),),
            neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
            claimed=PureDP(1.0), source="here",
        )
        out.append(RegisteredClaim(
            key=f"mine_attached/mine/{{name}}", claim=claim, audit=None,
            accountant=lambda claim: ("basic", 0.5, ()), mechanism=mechanism,
            channel="the output",
            view=View(observer="anyone", outputs=("the output",), definition="here"),
        ))
    return tuple(out)


FAMILY = Family(
    key="mine_attached", title="Mine", claims=claims,
    attachments=(Attachment(name="exp", module=__name__, title="my experiment"),),
)
"""

_HOW = {
    "sys.exit": ("sys.exit(0)", "called sys.exit(0)"),
    "os._exit": ("os._exit(0)", "exited with status 0"),
    "signal": ("os.kill(os.getpid(), signal.SIGKILL)", "killed by signal SIGKILL"),
    "loop": ("while True: time.sleep(0.05)", "ran past its timeout of 2 s"),
}


@pytest.fixture
def clean_registry(monkeypatch):
    """A registry with no claims file loaded (restored afterwards)."""
    monkeypatch.setattr(registry, "_files", {})
    monkeypatch.setattr(registry, "_entry_point_cache", None)
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(register, "_outside_cache", [(), ()])


def _source(misbehave=None, *, plan="Plan", output="AttachmentOutput", result="dict") -> str:
    return textwrap.dedent(_FAMILY).format(
        misbehave=misbehave or {}, plan=plan, output=output, result=result
    )


def _claims_file(tmp_path, misbehave=None, **lies):
    path = tmp_path / "attached_claims.py"
    source = _source(misbehave, **lies)
    path.write_text(source, encoding="utf-8")
    return path


def _verify(path, out, *extra):
    argv = ["verify", "--claims", str(path), "--quick", "--quiet", "--workers", "1"]
    return main([*argv, "--out", str(out), *extra])


@pytest.mark.parametrize("how", sorted(_HOW))
@pytest.mark.parametrize("step", ["configure", "run", "write"])
def test_an_attachment_that_exits_dies_or_hangs_exits_2(
    step, how, tmp_path, clean_registry, capsys
) -> None:
    statement, message = _HOW[how]
    path = _claims_file(tmp_path, {step: statement})
    out = tmp_path / "out"
    timeout = "2" if how == "loop" else "600"  # a loaded machine may take seconds to fork
    status = _verify(path, out, "--timeout", timeout)
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"{step} of attachment 'exp' of claims file {path}" in err, err
    assert message in err, err
    assert not out.exists()  # nothing reported as checked, no folder left behind


@pytest.mark.parametrize("step", ["planned", "mechanism"])
def test_planning_and_row_assembly_are_contained_too(
    step, tmp_path, clean_registry, capsys
) -> None:
    """``planned`` (counted before the run) and a row's recipe run when verify assembles
    the attachment's row (its ``mechanism``) exit 2 naming the file."""
    path = _claims_file(tmp_path, {step: "os._exit(0)"})
    out = tmp_path / "out"
    assert _verify(path, out, "--timeout", "600") == 2
    err = capsys.readouterr().err
    named = (
        f"planned of attachment 'exp' of claims file {path}"
        if step == "planned"
        else f"row mine_attached/mine/a of attachment 'exp' of claims file {path}"
    )
    assert named in err and "exited with status 0" in err, err
    assert not out.exists()


def test_a_well_behaved_attachment_gives_the_rows_of_an_unisolated_run(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """The same seed gives the same rows, isolated (a worker, no executor) or not (this
    process, a thread pool as the executor); the attachment ran in a worker only when
    isolated, and its progress lines reached this process's callback live."""
    from fedpriv.audit.claims import verify

    path = _claims_file(tmp_path)
    out = tmp_path / "out"
    assert _verify(path, out, "--fail-on", "never", "--seed", "3") == 0, capsys.readouterr().err
    written = {r["key"]: r for r in json.loads((out / "claims.json").read_text("utf-8"))}
    means = (out / "mine_attached" / "means.csv").read_text().split()

    lines: list[str] = []
    config = verify.ClaimsConfig.quick_config(claims_files=(str(path),), seed=3, workers=1)
    isolated = verify.verify_claims(config, progress=lines.append)
    monkeypatch.setattr(verify, "user_origins", lambda files=(): {})  # as a built-in
    unisolated_lines: list[str] = []
    plain = verify.ClaimsConfig.quick_config(claims_files=(str(path),), seed=3, workers=1)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        unisolated = verify.verify_claims(plain, progress=unisolated_lines.append, executor=pool)

    rows = [r.to_dict() for r in isolated.results]
    assert rows == [r.to_dict() for r in unisolated.results]
    assert [r["key"] for r in rows] == ["mine_attached/mine/a", "mine_attached/mine/b"]
    for row in rows:  # the numbers the CLI wrote
        assert {k: written[row["key"]][k] for k in row} == json.loads(json.dumps(row))
    assert [repr(m) for m in isolated.attachments[0].output.result["means"]] == means
    assert isolated.attachments[0].output.result["pid"] != os.getpid()
    assert unisolated.attachments[0].output.result["pid"] == os.getpid()
    assert isolated.attachments[0].origin == f"claims file {path}"
    assert unisolated.attachments[0].origin is None
    assert lines[0] == "[mine_attached] my experiment"

    # The same lines; a pool numbers its jobs ``[i/n]`` in the order they finish.
    def jobs(said):
        return sorted(line.split("] ", 1)[1] for line in said)

    assert jobs(lines) == jobs(unisolated_lines)
    assert sum(line.startswith("[") and "/2]" in line for line in lines) == 2


def test_an_unpicklable_result_names_the_attachment(tmp_path, clean_registry) -> None:
    from fedpriv.audit.claims import verify

    path = _claims_file(tmp_path, result="lambda result: (lambda: result)")
    config = verify.ClaimsConfig.quick_config(claims_files=(str(path),), workers=1)
    with pytest.raises(UserCodeAbortedError) as caught:
        verify.verify_claims(config)
    text = str(caught.value)
    assert text.startswith(f"run of attachment 'exp' of claims file {path} failed: ")
    assert "cannot be sent back from the worker process (return picklable values" in text


@pytest.mark.parametrize(
    "misbehave, lies, message",
    [
        (
            {"run": "raise RuntimeError('disk on fire')"},
            {},
            "run of attachment 'exp' of claims file {path} raised RuntimeError: disk on fire",
        ),
        (
            None,
            {"plan": "lambda jobs, keys: 3"},
            "planned of attachment 'exp' of claims file {path} must return a Plan; got int",
        ),
        (
            None,
            {"output": "lambda *, rows, result: dict(rows=rows)"},
            "run of attachment 'exp' of claims file {path} must return an "
            "AttachmentOutput; got dict",
        ),
        (
            None,
            {"output": "lambda *, rows, result: AttachmentOutput(rows={'k': 1.0})"},
            "run of attachment 'exp' of claims file {path} must return rows mapping "
            "register keys to RowEvidence",
        ),
    ],
)
def test_an_attachment_that_raises_or_lies_is_named(
    misbehave, lies, message, tmp_path, clean_registry, capsys
) -> None:
    """An exception from a user's attachment, or a result that is not what the
    protocol says, exits 2 naming it, with no traceback: never 1 (the status of a
    violated claim) and never a half-written report."""
    path = _claims_file(tmp_path, misbehave, **lies)
    out = tmp_path / "out"
    assert _verify(path, out) == 2
    err = capsys.readouterr().err
    assert message.format(path=path) in err and "Traceback" not in err, err
    assert not out.exists()


def test_a_row_recipe_that_raises_gives_an_error_row(tmp_path, clean_registry) -> None:
    from fedpriv.audit.claims import verify

    path = _claims_file(tmp_path, {"mechanism": "raise ZeroDivisionError('no')"})
    config = verify.ClaimsConfig.quick_config(claims_files=(str(path),), workers=1)
    report = verify.verify_claims(config)
    assert [r.verdict for r in report.results] == ["error", "error"]
    assert "ZeroDivisionError: no" in report.results[0].evidence


def test_an_installed_familys_attachment_is_contained(
    tmp_path, clean_registry, monkeypatch, capsys
) -> None:
    """The same family installed as the entry point ``mine``: its attachment's
    ``os._exit(0)`` in ``run`` exits 2 naming the entry point."""
    from tests.audit._plugins import install_distribution

    module = "installed_attachment_exits"
    source = _source({"run": "os._exit(0)"})
    install_distribution(tmp_path, module, source, point="mine")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    out = tmp_path / "out"
    argv = ["verify", "--paper", "mine_attached", "--quick", "--quiet", "--workers", "1"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"run of attachment 'exp' of entry point 'mine' ({module}:FAMILY)" in err, err
    assert not out.exists()


def test_a_builtin_attachment_is_not_forked(clean_registry, monkeypatch) -> None:
    """Built-in families' attachments are configured and planned in this process."""
    from fedpriv.audit.claims import verify

    def refuse(*args, **kwargs):
        raise AssertionError("a built-in attachment was forked")

    monkeypatch.setattr(attachment_calls, "run_isolated", refuse)
    config = verify.ClaimsConfig.quick_config(papers=("gossip_fed_ucb",), workers=1)
    assert verify.planned_jobs(config) > 0


def test_run_isolated_relays_lines_live_and_before_a_death() -> None:
    def talk(n, relay):
        for i in range(n):
            relay(f"line {i}\nsecond part")
        return n

    got: list[str] = []
    assert run_isolated(talk, 3, timeout=60, what="talk", relay=got.append) == 3
    assert got == [f"line {i}\nsecond part" for i in range(3)]

    def dies(relay):
        relay("before")
        os._exit(0)

    got.clear()
    with pytest.raises(UserCodeAbortedError, match="dies exited with status 0"):
        run_isolated(dies, timeout=60, what="dies", relay=got.append)
    assert got == ["before"]

    got.clear()  # more than a pipe holds: the worker waits for this process to read
    assert run_isolated(talk, 5000, timeout=60, what="talk", relay=got.append) == 5000
    assert len(got) == 5000 and got[-1] == "line 4999\nsecond part"


def _pool_pids(path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


def _ended(pid: int) -> bool:
    """Whether ``pid`` is gone or a zombie (killed, not yet reaped by its new parent)."""
    import time

    for _ in range(600):  # a liveness wait, not a timing assertion: SIGKILL is sure
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("hangs", [False, True])
def test_processes_the_worker_starts_end_with_it(hangs, tmp_path) -> None:
    """A pool the user's code starts and leaves running (an attachment run with its own
    ``workers``) neither outlives the worker nor holds its result back."""
    import time

    record = tmp_path / "pids"

    def leaks():
        pool = concurrent.futures.ProcessPoolExecutor(2)
        pool.submit(time.sleep, 0).result()
        record.write_text(" ".join(map(str, pool._processes)))
        while hangs:
            time.sleep(0.05)
        return 7

    if hangs:
        with pytest.raises(UserCodeAbortedError, match="ran past its timeout"):
            run_isolated(leaks, timeout=5, what="leaks")
    else:
        assert run_isolated(leaks, timeout=600, what="leaks") == 7
    pids = _pool_pids(record)
    assert len(pids) == 2 and all(_ended(pid) for pid in pids)
