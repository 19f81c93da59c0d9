"""Users' own claims: ``fedpriv verify --claims FILE`` and the ``fedpriv.papers`` entry point.

The worked example (``examples/my_claims.py``, docs/guides/your-claims.md) is run as
the guide shows it, in a subprocess, and must give its two verdicts: ``holds`` for the
algorithm as designed (its accountant certifies ε = 1 = the claim, an upper bound the
audit cannot contradict) and ``violated`` for the leaky variant (noise for a mean's
sensitivity 1/8 on a sum of 8 rewards: true ε = 8, the audit's 95% lower bound at the
``--quick`` budget is about 4.6 at the pinned seed 0, the claim 1). The leaky verdict
is statistical with a fixed seed; its false-pass probability at a true ε of 8 is far
below 1e-6. The ``holds`` verdict rests on the accountant (exact: pure Laplace, one
release per reward); its audit, at 95% confidence, could exceed the claim with
probability <= 5% over seeds, and at the pinned seed it does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fedpriv.audit.claims import family as registry
from fedpriv.audit.claims import register
from fedpriv.audit.claims.family import ENTRY_POINT_GROUP, families, family
from fedpriv.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "my_claims.py"
HOLDS = "my_fed_ucb/private-fed-ucb/eps1"
LEAKY = "my_fed_ucb/leaky-fed-ucb/eps1"


@pytest.fixture
def clean_registry(monkeypatch):
    """A registry with no claims file loaded (restored afterwards)."""
    monkeypatch.setattr(registry, "_files", {})
    monkeypatch.setattr(registry, "_entry_point_cache", None)  # entry points: read once per process
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(register, "_outside_cache", [(), ()])


def test_the_example_runs_as_the_guide_shows_it(tmp_path) -> None:
    out = tmp_path / "my-report"
    script = Path(sys.executable).with_name("fedpriv")  # the console script
    command = [str(script)] if script.exists() else [sys.executable, "-m", "fedpriv.cli.main"]
    done = subprocess.run(
        [*command, "verify", "--claims", "examples/my_claims.py", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # a claim is violated
    records = {r["key"]: r for r in json.loads((out / "claims.json").read_text("utf-8"))}
    assert set(records) == {HOLDS, LEAKY}  # --claims alone: only the file's rows
    assert records[HOLDS]["verdict"] == "holds"
    assert records[HOLDS]["accountant"]["epsilon"] <= records[HOLDS]["claimed"]["epsilon"]
    assert records[LEAKY]["verdict"] == "violated"
    assert records[LEAKY]["audit"]["epsilon_lower_bound"] > records[LEAKY]["claimed"]["epsilon"]
    assert records[HOLDS]["view"]["observer"] == "the server"
    for name in ("claims.md", "claims.json", "findings.json", "my_fed_ucb.md", "index.html"):
        assert (out / name).is_file(), name
    assert not (out / "li_song.md").exists()  # no built-in paper ran
    page = (out / "my_fed_ucb.md").read_text("utf-8")
    assert page.startswith("# My private federated UCB (fedpriv example)")
    assert "--claims my_claims.py" in page
    assert HOLDS in done.stdout and LEAKY in done.stdout
    # the guide shows this command's table: its two rows are the run's own lines
    guide = (ROOT / "docs" / "guides" / "your-claims.md").read_text("utf-8")
    printed = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line}
    for key in (HOLDS, LEAKY):
        shown = next(line.split() for line in guide.splitlines() if line.startswith(key + " "))
        assert shown == printed[key], (shown, printed[key])
    bound = records[LEAKY]["audit"]["epsilon_lower_bound"]
    assert f"lower bound is {bound:.2g} > 1" in " ".join(guide.split())


def test_fail_on_never_exits_0_and_workers_change_nothing(tmp_path, clean_registry) -> None:
    runs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        status = main(
            [
                "verify",
                "--claims",
                str(EXAMPLE),
                "--quick",
                "--quiet",
                "--workers",
                workers,
                "--fail-on",
                "never",
                "--out",
                str(out),
            ]
        )
        assert status == 0
        runs[workers] = json.loads((out / "claims.json").read_text("utf-8"))
        for record in runs[workers]:
            record["audit"].pop("seconds")  # wall time, the one field that may differ
    assert runs["1"] == runs["2"]


def test_a_worker_process_loads_the_claims_file(clean_registry) -> None:
    """A spawned worker knows only the built-in register until the job's files load."""
    import concurrent.futures
    import multiprocessing

    from fedpriv.audit.claims.verify import _job, claim_seed
    from fedpriv.audit.engine.coupled import AuditBudget

    job = {
        "key": HOLDS,
        "budget": AuditBudget(pilot_samples=20, samples=50, batch_size=50),
        "seed": claim_seed(np.random.SeedSequence(0), HOLDS),
        "claims_files": (str(EXAMPLE),),
    }
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        result = pool.submit(_job, job).result(timeout=300)
    assert result.key == HOLDS and result.verdict == "holds"


def test_user_rows_are_seeded_by_key_whatever_runs(clean_registry, monkeypatch) -> None:
    from fedpriv.audit.claims.verify import claim_seed

    root = np.random.SeedSequence(0)
    first = claim_seed(root, HOLDS).generate_state(4)
    # The built-in register growing (or shrinking) moves no user row's seed ...
    monkeypatch.setattr(register, "REGISTER", register.REGISTER[1:])
    assert np.array_equal(claim_seed(root, HOLDS).generate_state(4), first)
    # ... and a built-in row is addressed by its key too, not by its position.
    built_in = register.REGISTER[1].key
    before = claim_seed(root, built_in).generate_state(4)
    monkeypatch.setattr(register, "REGISTER", register.REGISTER[1:])
    assert np.array_equal(claim_seed(root, built_in).generate_state(4), before)
    assert not np.array_equal(claim_seed(root, LEAKY).generate_state(4), first)


def test_paper_selects_a_user_family(tmp_path, clean_registry) -> None:
    out = tmp_path / "r"
    status = main(
        [
            "verify",
            "--claims",
            str(EXAMPLE),
            "--paper",
            "my-fed-ucb",
            "--quick",
            "--quiet",
            "--workers",
            "1",
            "--out",
            str(out),
        ]
    )
    assert status == 1
    keys = [r["key"] for r in json.loads((out / "claims.json").read_text("utf-8"))]
    assert keys == [HOLDS, LEAKY]
    assert (out / "my_fed_ucb.md").is_file()


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body, message",
    [
        (None, "`claims` file not found"),
        ("x = 1\n", "must define FAMILY"),
        ("raise RuntimeError('my bug')\n", "RuntimeError: my bug"),
        ("def broken(:\n", "SyntaxError"),
        (
            """
     from fedpriv.audit.claims.family import Family
     FAMILY = Family(key="mine", title="Mine", claims=lambda: (1,))
     """,
            "must give RegisteredClaim rows",
        ),
        (
            """
     from fedpriv.audit.claims.family import Family
     FAMILY = Family(key="li_song", title="Mine", claims=tuple)
     """,
            "'li_song' is registered twice",
        ),
    ],
)
def test_a_bad_claims_file_exits_2_naming_the_option(
    body, message, tmp_path, clean_registry, capsys
) -> None:
    path = tmp_path / "bad_claims.py"
    if body is not None:
        _write(path, body)
    status = main(
        ["verify", "--claims", str(path), "--quick", "--quiet", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert status == 2
    assert "`--claims`" in err and message in err, err
    assert not (tmp_path / "out").exists()  # nothing written
    built_in = registry.builtin_families()
    assert families()[: len(built_in)] == built_in  # the registry is as it was
    assert registry.loaded_claims_files() == ()  # the registry is as it was


def test_a_row_outside_its_family_key_is_refused(tmp_path, clean_registry, capsys) -> None:
    path = _write(
        tmp_path / "prefix.py",
        """
        from fedpriv.audit.claims.entry import RegisteredClaim
        from fedpriv.audit.claims.family import Family
        from fedpriv.audit.claims.register import REGISTER

        row = next(e for e in REGISTER if e.paper == "li_song")
        FAMILY = Family(key="mine", title="Mine", claims=lambda: (row,))
    """,
    )
    assert (
        main(
            ["verify", "--claims", str(path), "--quick", "--quiet", "--out", str(tmp_path / "out")]
        )
        == 2
    )
    assert "must start with 'mine/'" in capsys.readouterr().err


def test_an_installed_distribution_registers_through_the_entry_point(
    tmp_path, clean_registry, monkeypatch
) -> None:
    """A fake distribution on sys.path (its dist-info names an entry point in the group
    ``fedpriv.papers``) is found by the real ``importlib.metadata.entry_points``."""
    _write(
        tmp_path / "fake_fedpriv_paper.py",
        """
        from fedpriv.audit.claims.family import Family
        from fedpriv.audit.claims.register import REGISTER
        import dataclasses

        def _claims():
            row = next(e for e in REGISTER if e.paper == "li_song")
            return (dataclasses.replace(row, key="fake_paper/" + row.key.split("/", 1)[1]),)

        FAMILY = Family(key="fake_paper", title="A fake installed paper", claims=_claims,
                        setting_fields={"structure": str, "rounds": int, "rewards": str,
                                        "gap": float, "graph_seed": int, "graph_p": float,
                                        "components": int, "delay_convention": str,
                                        "participation_rate": float, "table_ii_case": int})
    """,
    )
    info = tmp_path / "fake_fedpriv_paper-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-fedpriv-paper\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nfake_paper = fake_fedpriv_paper:FAMILY\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = family("fake-paper")
    assert found.key == "fake_paper" and found.origin.startswith("entry point 'fake_paper'")
    assert [f.key for f in families()][-1] == "fake_paper"
    rows = register.claims_for("fake_paper")
    assert len(rows) == 1 and rows[0].key.startswith("fake_paper/")
    assert register.claims_for(None)[-1] is rows[0]  # after every built-in row
    assert register.paper_of("FAKE_PAPER") == "fake_paper"
