"""The documentation site builds with no warnings, and every Python block in it runs.

``mkdocs build --strict`` turns every warning (a broken link or anchor, a page missing
from the navigation, a docstring the API reference cannot render) into a failure. The
Python blocks of each page run in order in one namespace per page, as a reader pasting
them into one session would, in a temporary working directory; a block that defines
pytest tests is run by pytest itself, with the installed ``fedpriv_pytest`` plugin.
The README's headline, and any docs page's ``<!-- headline -->`` block, is the committed
report's, word for word; a number a page quotes from ``reports/claims.json`` is marked and
checked against it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"```python\n(.*?)```", flags=re.S)


def _is_pytest_file(block: str) -> bool:
    return "@pytest.mark" in block or "\ndef test_" in block


def _page_id(path: Path) -> str:
    return str(path.relative_to(DOCS))


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [_page_id(p) for p in PAGES if _page_id(p) not in nav]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_site_builds_with_no_warnings(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("fedpriv verify", "fedpriv account", "fedpriv audit", "fedpriv run feducb"):
        assert command in cli, command
    verdicts = (site / "reference" / "verdicts" / "index.html").read_text(encoding="utf-8")
    for verdict in ("violated", "holds", "unresolved", "outside-claim", "no-claim"):
        assert f"<code>{verdict}</code>" in verdicts, verdict
    api = (site / "reference" / "api" / "accountant" / "index.html").read_text(encoding="utf-8")
    assert "get_epsilon" in api and "spend" in api


@pytest.mark.parametrize(
    "page", [p for p in PAGES if FENCE.search(p.read_text(encoding="utf-8"))], ids=_page_id
)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs"}
    for index, block in enumerate(FENCE.findall(page.read_text(encoding="utf-8"))):
        if _is_pytest_file(block):
            path = tmp_path / f"test_docs_block_{index + 1}.py"
            path.write_text(block, encoding="utf-8")
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            continue
        code = compile(block, f"{_page_id(page)} python block {index + 1}", "exec")
        exec(code, namespace)


HEADLINE = re.compile(r"<!-- headline -->\n(.*?)\n<!-- /headline -->", flags=re.S)


def test_readme_headline_is_the_reports() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = HEADLINE.search(readme)
    assert shown, "README.md has no headline block"
    report = (ROOT / "reports" / "claims.md").read_text(encoding="utf-8")
    assert shown.group(1).strip() in report


def test_docs_headlines_are_the_reports() -> None:
    report = (ROOT / "reports" / "claims.md").read_text(encoding="utf-8")
    quoted = [
        (page, block)
        for page in PAGES
        for block in HEADLINE.findall(page.read_text(encoding="utf-8"))
    ]
    assert quoted, "no docs page quotes the headline"
    for page, block in quoted:
        assert block.strip() in report, f"{_page_id(page)}: headline differs from the report's"


def test_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200


#: A number a page quotes from ``reports/claims.json``:
#: ``<!--r:KEY:FIELD.PATH:FORMAT-->shown<!--/r-->`` (FORMAT a format spec, or ``frac`` for a
#: fraction such as 10/7; ∞ as "∞").
REPORT_NUMBER = re.compile(r"<!--r:([^:>]+):([^:>]+):([^>]*?)-->(.*?)<!--/r-->")


def _report_value(record: dict, path: str):
    value = record
    for part in path.split("."):
        value = value[part]
    return value


def _report_shown(value, spec: str) -> str:
    """The text a page shows for a report value: "∞" for ∞; ``frac`` as a fraction."""
    if value == "inf":
        return "∞"
    if spec == "frac":  # only a value within round-off of a small fraction shows as one
        fraction = Fraction(value).limit_denominator(1000)
        return str(fraction) if abs(value - fraction) < 1e-12 else repr(value)
    return format(value, spec)


def test_report_numbers_are_shown_as_the_spec_says() -> None:
    record = {"a": {"b": 0.5406854487779625, "d": "inf"}, "c": 1.4285714285714286}
    assert _report_shown(_report_value(record, "a.b"), ".3g") == "0.541"
    assert _report_shown(_report_value(record, "a.d"), ".3g") == "∞"
    assert _report_shown(_report_value(record, "c"), "frac") == "10/7"
    assert _report_shown(_report_value(record, "c"), ".2f") == "1.43"
    assert _report_shown(4 / 3, "frac") == "4/3"
    assert _report_shown(1.4286, "frac") == "1.4286"  # near 10/7, but not 10/7
    assert REPORT_NUMBER.findall("x <!--r:k/a:b.c:.2f-->1.00<!--/r--> y") == [
        ("k/a", "b.c", ".2f", "1.00")
    ]


def test_numbers_quoted_from_the_reports_are_the_reports() -> None:
    import json

    records = {
        r["key"]: r
        for r in json.loads((ROOT / "reports" / "claims.json").read_text(encoding="utf-8"))
    }
    quoted = 0
    for page in [*PAGES, ROOT / "README.md"]:
        for key, path, spec, shown in REPORT_NUMBER.findall(page.read_text(encoding="utf-8")):
            value = _report_value(records[key], path)
            expected = _report_shown(value, spec)
            assert shown == expected, (
                f"{page.name}: {key} {path} is {expected}, the page says {shown}"
            )
            quoted += 1
    assert quoted >= 10
