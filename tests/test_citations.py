"""No shipped text cites the unshipped analysis notes (issue 18 item 6).

The notes (``feducb.md``, ``gossip.md``, ``li_song.md``, ``byzantine.md``, the
``anchors_*.md`` files, all under ``shared/reference/``) are not shipped, so a reader of
a row, a finding, the HTML page, ``fedpriv run`` output or a docstring cannot open them.
Every citation must name the paper instead (section, algorithm line, equation, lemma,
remark, figure) or say in words that a derivation is fedpriv's own.

Two checks: the shipped sources (package folders, examples, README) must be clean on
every branch; the committed reports are generated from those sources, so
:func:`test_reports_cite_no_unshipped_notes` fails until they are regenerated with one
full ``fedpriv verify`` run after a citation is fixed in code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: A note cited by name. A path or link to a shipped report of the same name
#: (``reports/li_song.md``, ``href="li_song.md"``, ``](li_song.md)``) is not a citation.
NOTE_NAME = re.compile(
    r"(?<![/\w.-])(?<!href=\")(?<!\]\()"
    r"(feducb|gossip|li_song|byzantine|anchors_[a-z_]+|style_anchors)\.md\b"
)
#: The notes' folder (``shared/reference/``, ``reference/byzantine.md``); the docs' own
#: ``docs/reference/`` pages are shipped and may be linked.
NOTE_FOLDER = re.compile(
    r"\bshared/reference/"
    r"|\breference/(feducb|gossip|li_song|byzantine|anchors_[a-z_]+|style_anchors)\.md\b"
)

#: The engineers' unshipped convention notes; code cites CONTRIBUTING.md instead.
CONVENTION_NOTE = re.compile(r"\bSTYLE(\.md\b| §)|\bDESIGN(\.md\b|'s\b)")

SOURCE_DIRS = ("api", "privacy", "algorithms", "audit", "cli", "examples", "docs")
SOURCE_FILES = ("README.md", "mkdocs.yml", "docs_hooks.py")
SKIP_SUFFIXES = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".svg",
    ".pdf",
    ".pyc",
    ".npz",
    ".npy",
    ".parquet",
    ".gz",
    ".zip",
    ".pkl",
}


def _files_under(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if (
            path.is_file()
            and "__pycache__" not in path.parts
            and path.suffix.lower() not in SKIP_SUFFIXES
        ):
            yield path


def _source_files() -> list[Path]:
    files = [ROOT / name for name in SOURCE_FILES if (ROOT / name).is_file()]
    for name in SOURCE_DIRS:
        if (ROOT / name).is_dir():
            files.extend(_files_under(ROOT / name))
    return files


def _report_files() -> list[Path]:
    reports = ROOT / "reports"
    found = {
        *reports.glob("*.md"),
        *reports.glob("**/*.md"),
        *reports.glob("*.json"),
        *reports.glob("**/*.json"),
        *reports.glob("index.html"),
    }
    return sorted(path for path in found if path.is_file())


def offending_lines(paths: Iterable[Path]) -> list[str]:
    """``file:line: text`` for every line that cites an unshipped note."""
    out = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            match = NOTE_NAME.search(line) or NOTE_FOLDER.search(line)
            if match:
                start, end = max(0, match.start() - 70), match.end() + 30
                shown = (
                    ("..." if start else "")
                    + line[start:end].strip()
                    + ("..." if end < len(line) else "")
                )
                out.append(f"{path.relative_to(ROOT)}:{number}: {shown}")
    return out


@pytest.mark.parametrize(
    ("line", "cites"),
    [
        ("(feducb.md §3.6 item 11)", True),
        ('"where": "li_song.md §3.5 P7"', True),
        ("gossip.md Section 5.1", True),
        ("byzantine.md A1 = raw, E4", True),
        ("(anchors_audit.md §4.1 item 5)", True),
        ("``shared/reference/li_song.md`` §2.2", True),
        ("``reference/byzantine.md``", True),
        ("Li & Song, Alg. 2 line 3; Definition 1", False),
        ("see reports/li_song.md and reports/feducb/fig1a.md", False),
        ('<a href="gossip_fed_ucb.md">', False),
        ('<a href="li_song.md">', False),
        ("[the FedUCB report](feducb.md)", False),
        ("[Verdicts](../reference/verdicts.md)", False),
        ("docs/reference/deployment-file.md", False),
    ],
)
def test_patterns(line: str, cites: bool) -> None:
    assert bool(NOTE_NAME.search(line) or NOTE_FOLDER.search(line)) is cites


def test_sources_cite_no_unshipped_notes() -> None:
    files = _source_files()
    assert len(files) > 50, "the package folders were not found"
    bad = offending_lines(files)
    if bad:
        pytest.fail(
            "shipped sources cite the unshipped analysis notes; cite the paper (section, "
            "algorithm line, equation, lemma, remark, figure) or say 'fedpriv's "
            "derivation':\n" + "\n".join(bad),
            pytrace=False,
        )


def _is_experiment_report(path) -> bool:
    """``reports/<paper>/*.md`` from ``fedpriv experiment`` (not from ``fedpriv verify``)."""
    from fedpriv.audit.claims.family import families

    parts = Path(path).parts
    return (
        len(parts) >= 3
        and parts[-1].endswith(".md")
        and parts[-2] in {fam.key for fam in families() if fam.experiments}
    )


def test_reports_cite_no_unshipped_notes() -> None:
    """What ``fedpriv verify`` writes (regenerated after the citation pass)."""
    files = [f for f in _report_files() if not _is_experiment_report(f)]
    if not files:
        pytest.skip("no committed reports")
    bad = offending_lines(files)
    if bad:
        pytest.fail(
            "the committed reports cite the unshipped analysis notes. They are "
            "generated from code strings: if test_sources_cite_no_unshipped_notes "
            "passes, regenerate the reports with one full `fedpriv verify` run. "
            f"{len(bad)} lines:\n" + "\n".join(bad),
            pytrace=False,
        )


def test_experiment_reports_cite_no_unshipped_notes() -> None:
    files = [f for f in _report_files() if _is_experiment_report(f)]
    assert files, "no experiment reports found"
    assert not offending_lines(files)


@pytest.mark.parametrize(
    ("line", "cites"),
    [
        ("(STYLE §6: same streams)", True),
        ('(DESIGN.md, "The layout")', True),
        ("(DESIGN's symbol table)", True),
        ("(CONTRIBUTING.md, Seeding)", False),
        ("DESIGNATED_ROUTE = 1", False),
    ],
)
def test_convention_patterns(line: str, cites: bool) -> None:
    assert bool(CONVENTION_NOTE.search(line)) is cites


def test_code_cites_conventions_users_have() -> None:
    """Conventions are cited from CONTRIBUTING.md, which ships with the repository."""
    assert (ROOT / "CONTRIBUTING.md").is_file()
    files = [*_source_files(), *_files_under(ROOT / "tests"), *_files_under(ROOT / "benchmarks")]
    bad = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        bad += [
            f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), start=1)
            if CONVENTION_NOTE.search(line) and path.name != "test_citations.py"
        ]
    assert not bad, "cite CONTRIBUTING.md, not unshipped notes:\n" + "\n".join(bad)


#: The undefined confidence tags of the reconstruction notes (say it in words instead).
_TAG = re.compile(r"\bR-[hml]\b")


def test_no_internal_confidence_tag_ships() -> None:
    roots = ("api", "audit", "algorithms", "cli", "privacy", "docs", "reports", "examples")
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for name in roots:
        files += [
            p for p in (ROOT / name).rglob("*") if p.suffix in (".py", ".md", ".json", ".html")
        ]
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in files
        if p.is_file()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if _TAG.search(line)
    ]
    assert not found, found
