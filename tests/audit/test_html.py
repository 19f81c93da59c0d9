"""The report page ``index.html`` (fedpriv.audit.claims.html) and its bracket curves.

The browser test opens the page in headless Chromium (DevTools over a pipe,
``tests/audit/_chromium.py``) and skips with the reason when no Chromium is
installed (Debian: ``apt-get install chromium``). By default it builds the page from
the committed ``reports/claims.json`` into a temporary folder and saves its
screenshot there; with ``FEDPRIV_REPORT_DIR=reports`` it opens
``reports/index.html`` (written by ``fedpriv verify``) and saves
``reports/index.png`` beside it.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from fedpriv.audit.claims.curves import DELTA_GRID, accountant_curve, attach_curves, audit_curve
from fedpriv.audit.claims.html import build_index_html, index_html, load_findings
from fedpriv.audit.estimators import estimate_epsilon_lower_bound

ROOT = Path(__file__).resolve().parents[2]

#: A record of the walking-skeleton schema (today's claims.json).
OLD = {
    "paper": "Zhu et al. 2021", "algorithm": "gossip-fed-ucb", "mode": "paper",
    "setting": {"horizon": 16, "epsilon": 1.0}, "relation": "replace_one_reward",
    "claimed": {"epsilon": 1.0, "delta": 0.0},
    "accountant": {"epsilon": 1.25, "delta": 0.0, "route": "pure"},
    "audit": {"epsilon_lower_bound": 1.2, "confidence": 0.95, "samples": 10**6},
    "verdict": "violated", "evidence": "audit lower bound 1.2 > claimed 1",
    "findings": ["initial pulls are released raw"], "source": "Definition 1",
    "key": "gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1",
}
#: A record of the register schema (reading, mechanism ε, ε at 1e-6, finding ids, ...).
NEW = {
    **OLD, "key": "li_song/ddp-mab/actions", "paper": "Li & Song", "verdict": "outside-claim",
    "reading": "as written", "mechanism_epsilon": 1.5, "epsilon_at_1e-6": "inf",
    "finding_ids": ["F3"], "tightness": 0.8,
    "accountant": {"epsilon": "inf", "delta": 0.0, "route": "nonprivate"}, "audit": None,
}
FINDINGS = [{"id": "F3", "statement": "actions during t_delay use the raw mean",
             "claims": ["li_song/ddp-mab/actions"], "evidence": "audit LB 7.7",
             "where": "Alg. 2 line 3, Definition 1"}]


def _hrefs(page: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', page)


def test_page_is_self_contained_and_lists_every_claim():
    page = build_index_html([OLD, NEW, {"verdict": "holds"}], FINDINGS)
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3
    # nothing is loaded: no external script, style sheet, image or font
    assert "<link" not in page and " src=" not in page and "@import" not in page
    assert all(h.startswith("#") for h in _hrefs(page)), _hrefs(page)
    assert not re.search(r"url\((?!#)", page)
    for key in (OLD["key"], NEW["key"]):
        assert f'data-key="{key}"' in page
    assert 'id="finding-F3"' in page and 'href="#finding-F3"' in page
    assert "Alg. 2 line 3, Definition 1" in page and "outside-claim" in page
    assert ">∞ (nonprivate)<" in page  # "inf" read as ∞ in the accountant column


def test_page_without_findings_json_says_so(tmp_path):
    assert load_findings(tmp_path) is None
    page = build_index_html([OLD], None)
    assert "No findings.json beside claims.json" in page
    (tmp_path / "findings.json").write_text(json.dumps(FINDINGS))
    assert load_findings(tmp_path) == FINDINGS
    assert 'id="finding-F3"' in index_html([OLD], tmp_path)


def test_audit_curve_matches_the_estimator_at_the_audited_delta():
    rng = np.random.default_rng(5)
    scores_d = rng.laplace(1.0, 1.0, 20_000)
    scores_dp = rng.laplace(0.0, 1.0, 20_000)
    grid = np.linspace(-2.0, 4.0, 13)
    deltas = [1e-9, 1e-6, 1e-4, 1e-3, 1e-2]
    curve = audit_curve(estimate_epsilon_lower_bound(
        scores_d, scores_dp, thresholds=grid, delta=1e-3), deltas)
    at = estimate_epsilon_lower_bound(scores_d, scores_dp, thresholds=grid, delta=1e-3)
    assert curve[3] == pytest.approx(at.epsilon_lower_bound, rel=1e-12)
    assert all(a >= b for a, b in zip(curve, curve[1:]))  # non-increasing in δ
    assert 0.0 < curve[0] <= 1.0  # a lower bound on the true ε = 1


def test_accountant_curve_of_an_approximate_claim_is_the_recipe_at_each_delta():
    from fedpriv.audit.claims.register import claims_for

    entry = next(e for e in claims_for("feducb") if e.key == "feducb/feducb/fixed")
    deltas = [1e-9, 1e-6, entry.claim.claimed_delta]
    curve = accountant_curve(entry.key, deltas)
    assert curve[-1] == pytest.approx(entry.accountant(entry.claim)[1])
    assert curve[0] > curve[1] > curve[2] >= 0.0
    assert accountant_curve("li_song/cdp-mab/messages", deltas) is None  # pure: drawn flat
    assert accountant_curve("no/such/claim", deltas) is None
    record = attach_curves([{"key": entry.key, "claimed": {"delta": 0.1}}])[0]
    assert record["curve"]["delta"] == sorted(set(DELTA_GRID) | {0.1})


# ----------------------------------------------------------------------------- browser
def _page_and_records(tmp_path: Path) -> tuple[Path, list[dict], Path]:
    """(page, its records, screenshot path): reports/ on request, else a fresh page."""
    wanted = os.environ.get("FEDPRIV_REPORT_DIR")
    if wanted:
        folder = Path(wanted).resolve()
        records = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
        return folder / "index.html", records, folder / "index.png"
    records = json.loads((ROOT / "reports" / "claims.json").read_text(encoding="utf-8"))
    records += [NEW]  # a record of the register schema renders too
    page = tmp_path / "index.html"
    page.write_text(index_html(records, ROOT / "reports"), encoding="utf-8")
    return page, records, tmp_path / "index.png"


def test_page_renders_sorts_and_filters_in_headless_chromium(tmp_path):
    from tests.audit._chromium import Browser, find_chromium

    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    page, records, shot = _page_and_records(tmp_path)
    keys = [r.get("key") for r in records]
    with Browser(binary) as browser:
        browser.open(page.as_uri())
        shown = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'), r => r.dataset.key)")
        assert sorted(shown) == sorted(keys)
        assert browser.evaluate("document.querySelectorAll('article.card svg').length") \
            == len(records)
        browser.screenshot(shot)  # as a reader first sees it
        # filter by verdict: exactly the rows (and plots) of that verdict stay visible
        verdict = "violated"
        browser.evaluate(f"(s => {{ s.value = '{verdict}'; s.dispatchEvent("
                         "new Event('change')); })(document.getElementById('verdict'))")
        visible = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'))"
            ".filter(r => !r.hidden).map(r => r.dataset.verdict)")
        assert visible == [verdict] * sum(r.get("verdict") == verdict for r in records)
        assert browser.evaluate("document.querySelectorAll('article.card:not([hidden])')"
                                ".length") == len(visible)
        # text filter on a key prefix, combined with "all" verdicts
        browser.evaluate("(s => { s.value = ''; s.dispatchEvent(new Event('change')); })"
                         "(document.getElementById('verdict'))")
        browser.evaluate("(f => { f.value = 'li_song/'; f.dispatchEvent(new Event('input')); })"
                         "(document.getElementById('filter'))")
        visible = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'))"
            ".filter(r => !r.hidden).map(r => r.dataset.key)")
        assert sorted(visible) == sorted(k for k in keys if "li_song/" in k)
        # sorting by the claimed ε puts the numbers in ascending order
        browser.evaluate("(f => { f.value = ''; f.dispatchEvent(new Event('input')); })"
                         "(document.getElementById('filter'))")
        browser.evaluate("document.querySelector('th[data-col=claimed] button').click()")
        column = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'), r => Number("
            "r.cells[4].dataset.sort))")
        assert column == sorted(column) and not any(math.isnan(c) for c in column)
        assert browser.errors() == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_guide_report_page_example_writes_the_page(tmp_path):
    """The verify guide's ``fedpriv verify ... --out my-report`` example, run as shown."""
    import subprocess
    import sys

    text = (ROOT / "docs" / "guides" / "verify.md").read_text(encoding="utf-8")
    section = text[text.index("## The report page: `reports/index.html`"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    command, listing = [line.split("#")[0].strip() for line in block.splitlines()[:2]]
    assert command.startswith("fedpriv verify ") and listing.startswith("ls ")
    env = {**os.environ,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    folder = tmp_path / listing.split()[1]
    records = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
    # The shared exit-code convention: 1 when a row is violated (or errored), else 0.
    failed = any(r["verdict"] in ("violated", "error") for r in records)
    assert done.returncode == (1 if failed else 0), done.stderr
    shown = block.splitlines()[1].split("#")[1].split()
    assert sorted(p.name for p in folder.iterdir()) == sorted(shown)
    page = (folder / "index.html").read_text(encoding="utf-8")
    records = json.loads((folder / "claims.json").read_text(encoding="utf-8"))
    from fedpriv.audit.claims.register import claims_for

    paper = command.split("--paper")[1].split()[0]
    expected = len(claims_for(paper))  # every claim of the paper the example runs
    assert len(records) == expected and page.count("<svg") == expected
    for record in records:
        assert f'data-key="{record["key"]}"' in page
        assert f'data-verdict="{record["verdict"]}"' in page
