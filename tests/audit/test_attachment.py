"""Attachments: the experiments a family attaches to its claims, run by ``fedpriv verify``.

One road for every family: a toy family (not one of the papers) declares an attachment
that evaluates one of its two rows; ``verify_claims`` runs it, assembles that row like
any other and runs a per-row job for the other; its files land in the family's folder
beside what was there. The registrations' ``verify`` options equal the CLI's static
mirror, and the built-in attachment takes its rows' keys from the register.
"""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap

import pytest
from fedpriv.audit.claims.attachment import Attachment, Option, RowEvidence
from fedpriv.audit.claims.claim import AS_WRITTEN, ClaimResult
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.family import Family, families
from fedpriv.privacy import PureDP

_TOY_MODULE = textwrap.dedent('''
    """A toy attachment: one 'job', one row evaluated, two files written."""
    from fedpriv.audit.claims.attachment import AttachmentOutput, Plan, RowEvidence

    CALLS = []

    def configure(*, quick, seed, workers, scale=1.0):
        if scale <= 0:
            raise ValueError("`scale` must be > 0")
        return {"quick": quick, "seed": seed, "workers": workers, "scale": scale}

    def planned(config, entries):
        return Plan(1, frozenset(e.key for e in entries if e.key.endswith("/batch")))

    def run(config, entries, *, progress, executor):
        CALLS.append(config)
        progress("[1/1] toy job")
        rows = {e.key: RowEvidence(route="toy", epsilon=0.5 * config["scale"],
                                   notes=("from the toy job",), extras=(("toy_extra", 0.25),))
                for e in entries if e.key.endswith("/batch")}
        return AttachmentOutput(rows=rows, result={"table": "a,b\\n1,2\\n"})

    def write(result, folder):
        (folder / "table.csv").write_text(result["table"])
        (folder / "report.md").write_text("# toy\\n")
''')


def _entry(key: str) -> RegisteredClaim:
    from fedpriv.audit.claims.register import claims_for

    # A registered claim's relation, the rest the toy's own.
    claim = dataclasses.replace(
        claims_for("gossip_fed_ucb")[0].claim,
        paper="Toy 2024",
        algorithm="toy",
        mode="paper",
        setting=(("epsilon", 1.0),),
        claimed=PureDP(1.0),
        source="toy",
        reading=AS_WRITTEN,
        reading_support="",
        coverage="claim",
    )
    return RegisteredClaim(
        key=key,
        claim=claim,
        audit=None,
        channel="accountant only",
        accountant=lambda c: ("toy", 2.0, ()),
    )


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The verify module seeing one toy family with one attachment and two rows."""
    from fedpriv.audit.claims import verify as verify_module

    (tmp_path / "toy_attachment.py").write_text(_TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    attachment = Attachment(
        name="toy",
        module="toy_attachment",
        title="toy job",
        options=(Option(flag="--toy-scale", field="scale", kind="float", help="scale"),),
        index="report.md",
        index_text="Full toy report",
    )
    fam = Family(key="toyfam", title="Toy 2024", claims=tuple, attachments=(attachment,))
    entries = (_entry("toyfam/toy/batch"), _entry("toyfam/toy/alone"))
    monkeypatch.setattr(verify_module, "families", lambda: (fam,))
    monkeypatch.setattr(verify_module, "claims_for", lambda paper=None: entries)
    monkeypatch.setattr(verify_module, "view_of", lambda key: None)  # views: the register's
    return verify_module


def test_an_attachment_evaluates_its_rows_and_the_others_run_as_jobs(toy):
    config = toy.ClaimsConfig(workers=1, options={"toyfam/toy": {"scale": 3.0}})
    assert config.attachments["toyfam/toy"]["scale"] == 3.0
    assert toy.planned_jobs(config) == 1 + 1  # the toy job, then the row it leaves
    lines = []
    report = toy.verify_claims(config, progress=lines.append)
    assert lines[0] == "[toyfam] toy job" and lines[1] == "[1/1] toy job"
    assert len([line for line in lines if line.startswith("[")]) == 3
    batch, alone = report.results
    # The attachment's row: its numbers, assembled by the same rule as every row.
    assert batch.key == "toyfam/toy/batch" and batch.accountant_epsilon == 1.5
    assert batch.accountant_route == "toy" and batch.verdict == "unresolved"
    assert "from the toy job" in batch.notes
    assert batch.to_dict()["toy_extra"] == 0.25
    # The other row went through its own recipe (accountant 2.0).
    assert alone.key == "toyfam/toy/alone" and alone.accountant_epsilon == 2.0
    assert "toy_extra" not in alone.to_dict()
    (run,) = report.attachments
    assert run.id == "toyfam/toy" and run.output.result["table"].startswith("a,b")


def test_attachment_files_go_to_the_family_folder_beside_its_other_files(toy, tmp_path):
    from fedpriv.audit.claims.report import write_attachment

    report = toy.verify_claims(toy.ClaimsConfig(workers=1))
    out = tmp_path / "reports"
    (out / "toyfam").mkdir(parents=True)
    (out / "toyfam" / "toyfam-fig1.csv").write_text("kept")
    folder = write_attachment(report.attachments[0], out)
    assert folder == out / "toyfam"
    assert {p.name for p in folder.iterdir()} == {"toyfam-fig1.csv", "table.csv", "report.md"}
    assert (folder / "toyfam-fig1.csv").read_text() == "kept"
    assert [p.name for p in out.iterdir()] == ["toyfam"]  # no staging folder left


def test_a_failing_attachment_write_leaves_the_folder_as_it_was(toy, tmp_path, monkeypatch):
    import toy_attachment
    from fedpriv.audit.claims.report import write_attachment

    report = toy.verify_claims(toy.ClaimsConfig(workers=1))
    out = tmp_path / "reports"
    folder = write_attachment(report.attachments[0], out)
    before = {p.name: p.read_text() for p in folder.iterdir()}

    def broken(result, staging):
        (staging / "table.csv").write_text("half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(toy_attachment, "write", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_attachment(report.attachments[0], out)
    assert {p.name: p.read_text() for p in folder.iterdir()} == before
    assert [p.name for p in out.iterdir()] == ["toyfam"]


def test_bad_options_fail_when_the_config_is_built(toy):
    with pytest.raises(ValueError, match="`scale` must be > 0"):
        toy.ClaimsConfig(workers=1, options={"toyfam/toy": {"scale": -1.0}})
    with pytest.raises(ValueError, match="must name registered attachments"):
        toy.ClaimsConfig(workers=1, options={"toyfam/nothing": {}})


def test_extras_may_not_shadow_a_standard_key():
    claim = _entry("toyfam/toy/alone").claim
    row = ClaimResult(
        claim=claim,
        accountant_epsilon=1.0,
        accountant_route="r",
        audit=None,
        verdict="holds",
        evidence="e",
        extras=(("verdict", 1.0),),
    )
    with pytest.raises(ValueError, match="standard key"):
        row.to_dict()
    fine = ClaimResult(
        claim=claim,
        accountant_epsilon=1.0,
        accountant_route="r",
        audit=None,
        verdict="holds",
        evidence="e",
        extras=(("x", math.inf),),
    )
    assert json.dumps(fine.to_dict()["x"]) == '"inf"'


def test_row_evidence_defaults_to_no_audit():
    row = RowEvidence(route="r", epsilon=1.0)
    assert row.bound is None and row.extras == () and row.notes == ()


def test_verify_help_lists_each_family_option_under_its_family(capsys):
    import argparse

    from fedpriv.cli.verify import register_verify

    parser = argparse.ArgumentParser(prog="fedpriv")
    sub = parser.add_subparsers(dest="command", required=True)
    text = register_verify(sub).format_help()
    for fam in families():
        for att in fam.attachments:
            if att.options:
                heading = f"{fam.key} ({fam.title}): {att.title}"
                section = text[text.index(heading) :]
                assert all(o.flag in section for o in att.options), heading


def test_malformed_declarations_are_refused():
    with pytest.raises(ValueError, match="`flag`"):
        Option(flag="data", field="data_path", help="x")
    with pytest.raises(ValueError, match="`kind`"):
        Option(flag="--data", field="data_path", help="x", kind="csv")
    with pytest.raises(ValueError, match="two options set one field"):
        Attachment(
            name="a",
            module="m",
            title="t",
            options=(
                Option(flag="--a", field="f", help="x"),
                Option(flag="--b", field="f", help="x"),
            ),
        )
    twice = Attachment(name="a", module="m", title="t")
    with pytest.raises(ValueError, match="distinct names"):
        Family(key="toyfam", title="Toy", claims=tuple, attachments=(twice, twice))


def test_the_grid_rows_keys_come_from_the_register():
    # The built-in attachment evaluates exactly the register's tree-audited grid rows,
    # matched on the claim (algorithm, mode, setting), never on a rebuilt key.
    from fedpriv.audit.claims.register import claims_for
    from fedpriv.audit.claims.verify import ClaimsConfig
    from fedpriv.audit.families.gossip_fed_ucb import regret
    from fedpriv.audit.families.gossip_fed_ucb.recipes import audit_gossip_fed_ucb_tree

    rows = claims_for("gossip_fed_ucb")
    config = ClaimsConfig.quick_config(papers=("gossip_fed_ucb",), workers=1)
    plan = regret.planned(config.attachments["gossip_fed_ucb/regret"], rows)
    assert plan.keys == {e.key for e in rows if e.audit is audit_gossip_fed_ucb_tree}
    assert len(plan.keys) == 45
    # A row whose claim differs (another setting) is not taken over.
    assert not regret.planned(config.attachments["gossip_fed_ucb/regret"], rows[-5:]).keys


def test_the_family_options_reach_its_attachment_only(tmp_path):
    import argparse

    from fedpriv.cli.verify import _config, register_verify

    parser = argparse.ArgumentParser(prog="fedpriv")
    register_verify(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        [
            "verify",
            "--quick",
            "--trials",
            "2",
            "--regret-horizon",
            "100",
            "--seed",
            "4",
            "--workers",
            "1",
        ]
    )
    config = _config(args)
    assert config.options == {"gossip_fed_ucb/regret": {"n_trials": 2, "regret_horizon": 100}}
    fed = config.attachments["gossip_fed_ucb/regret"]
    assert (fed.n_trials, fed.regret_horizon, fed.seed, fed.workers, fed.quick) == (
        2,
        100,
        4,
        1,
        True,
    )
    assert fed.data_path is None and config.budget.samples == 1_000
    # A bad value is refused when the config is built (exit 2 before anything runs),
    # even when the family is not the one selected, as before.
    bad = parser.parse_args(
        ["verify", "--paper", "feducb", "--data", str(tmp_path / "missing.csv")]
    )
    with pytest.raises(ValueError, match="`data_path` must be an existing file"):
        _config(bad)
