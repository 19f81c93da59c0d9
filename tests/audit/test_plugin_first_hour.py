"""A plugin author's first hour: the claims file's folder is importable while it loads
(and only then), a user family's report is titled by its own families, and a violated
row of a family that declares no findings is counted as a finding.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from fedpriv.audit.claims import family as registry
from fedpriv.audit.claims import register
from fedpriv.audit.claims.family import load_claims_file
from fedpriv.audit.claims.findings import findings_records, headline
from fedpriv.audit.claims.legend import records_headline
from fedpriv.audit.claims.report import write_claims_report
from fedpriv.audit.claims.verify import ClaimsConfig, verify_claims
from fedpriv.audit.engine.coupled import AuditBudget

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_registry(monkeypatch):
    """A registry with no claims file loaded (restored afterwards)."""
    monkeypatch.setattr(registry, "_files", {})
    monkeypatch.setattr(registry, "_entry_point_cache", None)
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(register, "_outside_cache", [(), ()])


def test_the_claims_files_folder_is_importable_while_it_loads(tmp_path, clean_registry) -> None:
    (tmp_path / "sibling_algorithm_33.py").write_text("VALUE = 33\n", encoding="utf-8")
    (tmp_path / "claims.py").write_text(
        textwrap.dedent(
            """
            from fedpriv.audit.claims.family import Family
            from sibling_algorithm_33 import VALUE

            FAMILY = Family(key="sibling_test", title=f"Sibling {VALUE}", claims=tuple)
            """
        ),
        encoding="utf-8",
    )
    before = list(sys.path)
    try:
        (loaded,) = load_claims_file(tmp_path / "claims.py")
        assert loaded.title == "Sibling 33"
        assert sys.path == before  # nothing leaks into later imports
    finally:
        sys.modules.pop("sibling_algorithm_33", None)


def test_a_failing_claims_file_leaves_sys_path_unchanged(tmp_path, clean_registry) -> None:
    (tmp_path / "broken.py").write_text("import not_a_module_anywhere_33\n", encoding="utf-8")
    before = list(sys.path)
    with pytest.raises(ModuleNotFoundError):
        load_claims_file(tmp_path / "broken.py")
    assert sys.path == before


def test_a_user_familys_report_is_its_own(tmp_path, clean_registry) -> None:
    config = ClaimsConfig(
        claims_files=(str(ROOT / "examples" / "my_claims.py"),),
        budget=AuditBudget(pilot_samples=100, samples=1_000, batch_size=1_000),
        workers=1,
    )
    report = verify_claims(config)
    verdicts = {r.key: r.verdict for r in report.results}
    assert verdicts["my_fed_ucb/leaky-fed-ucb/eps1"] == "violated"
    write_claims_report(report, tmp_path)
    page = (tmp_path / "claims.md").read_text(encoding="utf-8")
    assert page.startswith("# Privacy claims of My private federated UCB (fedpriv example)")
    assert "four seed papers" not in page
    # the violated row its family names no finding for counts as one finding
    records = findings_records(report.results)
    assert [r["id"] for r in records] == ["my_fed_ucb/leaky-fed-ucb/eps1"]
    assert headline(report.results).startswith("1 finding (")
    rows = json.loads((tmp_path / "claims.json").read_text(encoding="utf-8"))
    assert records_headline(rows) == headline(report.results)
    assert all("declarations" in row for row in rows)  # the example checks them
