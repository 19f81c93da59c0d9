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

import contextlib
import itertools
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from fedpriv.audit.claims._page_assets import bracket_svg
from fedpriv.audit.claims.curves import DELTA_GRID, accountant_curve, attach_curves, audit_curve
from fedpriv.audit.claims.html import build_index_html, index_html, load_findings
from fedpriv.audit.claims.legend import COLUMN_DEFINITIONS, VERDICT_LEGEND, records_headline
from fedpriv.audit.estimators import estimate_epsilon_lower_bound

ROOT = Path(__file__).resolve().parents[2]

#: A record of the walking-skeleton schema (today's claims.json).
OLD = {
    "paper": "Zhu et al. 2021",
    "algorithm": "gossip-fed-ucb",
    "mode": "paper",
    "setting": {"horizon": 16, "epsilon": 1.0},
    "relation": "replace_one_reward",
    "claimed": {"epsilon": 1.0, "delta": 0.0},
    "accountant": {"epsilon": 1.25, "delta": 0.0, "route": "pure"},
    "audit": {"epsilon_lower_bound": 1.2, "confidence": 0.95, "samples": 10**6},
    "verdict": "violated",
    "evidence": "audit lower bound 1.2 > claimed 1",
    "findings": ["initial pulls are released raw"],
    "source": "Definition 1",
    "key": "gossip_fed_ucb/gossip-fed-ucb/paper-log2/T16/eps1",
}
#: A record of the register schema (reading, mechanism ε, ε at 1e-6, finding ids, ...).
NEW = {
    **{k: v for k, v in OLD.items() if k != "relation"},
    "neighboring_relation": OLD["relation"],
    "key": "li_song/ddp-mab/actions",
    "paper": "Li & Song",
    "verdict": "outside-claim",
    "reading": "as written",
    "mechanism_epsilon": 1.5,
    "epsilon_at_1e-6": "inf",
    "finding_ids": ["F3"],
    "tightness": 0.8,
    "accountant": {"epsilon": "inf", "delta": 0.0, "route": "nonprivate"},
    "audit": None,
}
FINDINGS = [
    {
        "id": "F3",
        "statement": "actions during t_delay use the raw mean",
        "claims": ["li_song/ddp-mab/actions"],
        "evidence": "audit LB 7.7",
        "where": "Alg. 2 line 3, Definition 1",
    }
]


#: A row whose end-to-end ε is ∞ (a raw channel) while its noise alone is finite, with
#: a vacuous claimed δ and a second audit at δ = 10⁻⁶ (FedUCB's adaptive schedule).
INFINITE = {
    "key": "feducb/feducb/adaptive",
    "paper": "Dubey & Pentland 2020 (NeurIPS, FedUCB)",
    "algorithm": "feducb",
    "mode": "paper",
    "coverage": "claim",
    "setting": {"n_agents": 3, "horizon": 64, "epsilon": 1.0, "delta": 0.1},
    "neighboring_relation": "replace_one_context_reward",
    "claimed": {"epsilon": 1.0, "delta": 0.1},
    "accountant": {"epsilon": "inf", "delta": 0.1, "route": "nonprivate"},
    "mechanism_epsilon": 0.0,
    "epsilon_at_1e-6": "inf",
    "verdict": "violated",
    "audit": {
        "epsilon_lower_bound": 7.6,
        "confidence": 0.95,
        "samples": 10_000,
        "delta": 0.1,
        "at_1e-6": {"epsilon_lower_bound": 2.3, "confidence": 0.95, "samples": 10_000},
    },
    "curve": {
        "delta": [1e-9, 1e-6, 1e-3, 0.1],
        "accountant": ["inf"] * 4,
        "mechanism": [0.5, 0.33, 0.1, 0.0],
        "audit": [7.7, 7.7, 7.6, 7.6],
    },
}


def _svg_texts(svg: str) -> list[str]:
    return [t.strip() for t in re.findall(r">([^<]+)</text>", svg) if t.strip()]


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
    # The relation column reads `neighboring_relation` (NEW) and the former key (OLD).
    assert page.count("replace_<wbr>one_<wbr>reward") >= 2


def test_page_opens_with_the_headline_and_a_legend_of_verdicts_and_columns():
    records = [OLD, NEW, INFINITE]
    page = build_index_html(records, FINDINGS)
    headline = records_headline(records)
    assert headline.split(" findings")[0].isdigit()  # the findings come first
    assert "The papers' claims as written" in headline
    # The headline and the legend come before the findings, the table and the plots.
    order = [
        page.index(s)
        for s in ('id="headline"', 'id="legend"', 'id="findings"', 'id="claims"', 'id="plots"')
    ]
    assert order == sorted(order)
    assert f'<p id="headline">{headline.replace(chr(39), "&#x27;")}</p>' in page
    legend = page[page.index('id="legend"') : page.index('id="findings"')]
    for verdict in ("violated", "holds", "unresolved", "outside-claim", "no-claim"):
        assert f">{verdict}</span></dt>" in legend
    assert "lower bound" in VERDICT_LEGEND["violated"]
    assert "end-to-end upper bound" in VERDICT_LEGEND["holds"]
    head = page[page.index("<thead>") : page.index("</thead>")]
    labels = re.findall(r"<button type=\"button\">([^<]+)</button>", head)
    assert labels and all(label in COLUMN_DEFINITIONS for label in labels)
    for label in labels:
        assert f"<dt>{label}</dt>" in legend.replace("&#x27;", "'"), label


def test_each_key_has_its_plain_language_statement_beside_it():
    page = build_index_html([OLD, INFINITE], None)
    for record in (OLD, INFINITE):
        row = page[page.index(f'data-key="{record["key"]}"') :]
        first_cell = row[: row.index("</td>")]
        assert '<div class="statement">' in first_cell
    assert "FedUCB as written" in page and "Fed_UCB as written" in page


def test_an_infinite_row_draws_arrows_never_a_finite_accountant_curve():
    texts = _svg_texts(bracket_svg(INFINITE))
    assert "end-to-end upper bound: ε = ∞ (raw channel)" in texts
    assert not any(t.startswith(("accountant ε(δ)", "end-to-end upper bound ε(δ)")) for t in texts)
    # The noise alone is drawn, and said not to be the end-to-end bound.
    assert "noise alone: mechanism ε(δ) (not end to end)" in texts
    # The audit at the δ it was measured, and the δ = 10⁻⁶ audit at 10⁻⁶.
    assert "audit lower bound at its δ = 0.1" in texts
    assert "audit lower bound at δ = 10⁻⁶" in texts


def test_a_finite_row_draws_the_end_to_end_upper_bound():
    record = {
        **INFINITE,
        "accountant": {"epsilon": 3.1, "delta": 0.1, "route": "basic"},
        "verdict": "holds",
        "epsilon_at_1e-6": 3.1,
        "curve": {**INFINITE["curve"], "accountant": [4.0, 3.1, 2.0, 0.54]},
    }
    texts = _svg_texts(bracket_svg(record))
    assert "end-to-end upper bound ε(δ) (accountant)" in texts
    assert not any("ε = ∞" in t for t in texts)


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
    curve = audit_curve(
        estimate_epsilon_lower_bound(scores_d, scores_dp, thresholds=grid, delta=1e-3), deltas
    )
    at = estimate_epsilon_lower_bound(scores_d, scores_dp, thresholds=grid, delta=1e-3)
    assert curve[3] == pytest.approx(at.epsilon_lower_bound, rel=1e-12)
    assert all(a >= b for a, b in itertools.pairwise(curve))  # non-increasing in δ
    assert 0.0 < curve[0] <= 1.0  # a lower bound on the true ε = 1


def test_the_curve_of_a_raw_channel_row_is_infinite_and_its_noise_is_apart():
    from fedpriv.audit.claims.curves import mechanism_curve
    from fedpriv.audit.claims.register import claims_for

    entry = next(e for e in claims_for("feducb") if e.key == "feducb/feducb/adaptive")
    assert entry.raw_channel
    deltas = [1e-6, entry.claim.claimed_delta]
    assert accountant_curve(entry.key, deltas) == ["inf", "inf"]
    mechanism = mechanism_curve(entry.key, deltas)
    assert mechanism[-1] == pytest.approx(entry.accountant(entry.claim)[1])
    assert all(math.isfinite(v) for v in mechanism)


def test_an_audit_curve_is_attached_only_where_it_gives_the_reported_bound():
    import dataclasses
    from types import SimpleNamespace

    rng = np.random.default_rng(7)
    bound = estimate_epsilon_lower_bound(
        rng.laplace(1.0, 1.0, 5_000),
        rng.laplace(0.0, 1.0, 5_000),
        thresholds=np.linspace(-2.0, 4.0, 13),
    )
    record = {"key": "x/y", "claimed": {"epsilon": 1.0, "delta": 0.0}}
    same = SimpleNamespace(key="x/y", audit=bound, audit_at_1e6=None)
    curve = attach_curves([record], [same])[0]["curve"]["audit"]
    assert curve[0] == pytest.approx(bound.epsilon_lower_bound, rel=1e-6)
    # A bound from another estimator (its counts belong to another event): no curve
    # that would contradict the point the page draws.
    other = SimpleNamespace(
        key="x/y", audit_at_1e6=None, audit=dataclasses.replace(bound, epsilon_lower_bound=6.0)
    )
    assert "curve" not in attach_curves([record], [other])[0]


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


def test_recipe_curves_computed_with_the_row_are_the_ones_the_page_would_compute():
    """verify's claim jobs attach each row's recipe curves (where its recipes' caches are
    warm); the page takes them as they are, and they equal what it computes itself."""
    import dataclasses
    from types import SimpleNamespace

    from fedpriv.audit.claims.curves import recipe_curves
    from fedpriv.audit.claims.verify import _job
    from fedpriv.audit.engine.coupled import AuditBudget

    key = "feducb/feducb/user-at-all-agents"  # an approximate claim with no audit
    budget = AuditBudget(pilot_samples=100, samples=100, batch_size=100)
    result = _job({"key": key, "budget": budget, "seed": np.random.SeedSequence(0)})
    record = result.to_dict()
    assert result.recipe_curves == recipe_curves(key, result.claim.claimed_delta)
    assert set(result.recipe_curves) == {"delta", "accountant", "mechanism"}
    assert attach_curves([record], [result]) == attach_curves([record])
    # Taken as they are: a marked curve comes through; another grid is recomputed.
    marked = {**result.recipe_curves, "accountant": ["marked"] * len(result.recipe_curves["delta"])}
    taken = attach_curves([record], [dataclasses.replace(result, recipe_curves=marked)])
    assert taken[0]["curve"]["accountant"] == marked["accountant"]
    moved = SimpleNamespace(key=key, audit=None, audit_at_1e6=None, recipe_curves={"delta": [0.5]})
    assert attach_curves([record], [moved]) == attach_curves([record])


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
            "Array.from(document.querySelectorAll('#claims tbody tr'), r => r.dataset.key)"
        )
        assert sorted(shown) == sorted(keys)
        assert browser.evaluate("document.querySelectorAll('article.card svg').length") == len(
            records
        )
        browser.screenshot(shot)  # as a reader first sees it
        # filter by verdict: exactly the rows (and plots) of that verdict stay visible
        verdict = "violated"
        browser.evaluate(
            f"(s => {{ s.value = '{verdict}'; s.dispatchEvent("
            "new Event('change')); })(document.getElementById('verdict'))"
        )
        visible = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'))"
            ".filter(r => !r.hidden).map(r => r.dataset.verdict)"
        )
        assert visible == [verdict] * sum(r.get("verdict") == verdict for r in records)
        assert browser.evaluate(
            "document.querySelectorAll('article.card:not([hidden])').length"
        ) == len(visible)
        # text filter on a key prefix, combined with "all" verdicts
        browser.evaluate(
            "(s => { s.value = ''; s.dispatchEvent(new Event('change')); })"
            "(document.getElementById('verdict'))"
        )
        browser.evaluate(
            "(f => { f.value = 'li_song/'; f.dispatchEvent(new Event('input')); })"
            "(document.getElementById('filter'))"
        )
        visible = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'))"
            ".filter(r => !r.hidden).map(r => r.dataset.key)"
        )
        assert sorted(visible) == sorted(k for k in keys if "li_song/" in k)
        # sorting by the claimed ε puts the numbers in ascending order
        browser.evaluate(
            "(f => { f.value = ''; f.dispatchEvent(new Event('input')); })"
            "(document.getElementById('filter'))"
        )
        browser.evaluate("document.querySelector('th[data-col=claimed] button').click()")
        column = browser.evaluate(
            "Array.from(document.querySelectorAll('#claims tbody tr'), r => Number("
            "r.cells[4].dataset.sort))"
        )
        assert column == sorted(column) and not any(math.isnan(c) for c in column)
        assert browser.errors() == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


#: One row of each paper (the first in reports/claims.json) and the ∞ row, for the
#: layout test: every kind of plot, without building 125 of them twice.
def _layout_page(tmp_path: Path) -> tuple[Path, list[dict]]:
    wanted = os.environ.get("FEDPRIV_REPORT_DIR")
    if wanted:
        folder = Path(wanted).resolve()
        return (
            folder / "index.html",
            json.loads((folder / "claims.json").read_text(encoding="utf-8")),
        )
    committed = json.loads((ROOT / "reports" / "claims.json").read_text(encoding="utf-8"))
    records, papers = [], set()
    for record in committed:
        if record.get("paper") not in papers:
            papers.add(record.get("paper"))
            records.append(record)
    records += [INFINITE, NEW]
    page = tmp_path / "index.html"
    page.write_text(index_html(records, ROOT / "reports"), encoding="utf-8")
    return page, records


#: Layout facts of the page, measured in the browser (CSS pixels).
_LAYOUT = """(() => {
  const rect = e => { const r = e.getBoundingClientRect();
                      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                              width: r.width, height: r.height}; };
  const one = s => { const e = document.querySelector(s); return e ? rect(e) : null; };
  const cards = Array.from(document.querySelectorAll('article.card'), card => {
    const svg = card.querySelector('svg');
    const star = svg.querySelector('g[id^="claim-star-"]');
    const legend = svg.querySelector('g[id^="legend-"]');
    return {key: card.querySelector('h3').textContent, svg: rect(svg),
            star: star ? rect(star) : null, legend: legend ? rect(legend) : null,
            statement: (card.querySelector('.statement') || {}).textContent || ''};
  });
  return {
    viewport: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
    bodyWidth: document.body.scrollWidth,
    headline: one('#headline'), headlineText: document.getElementById('headline').textContent,
    legend: one('#legend'), table: one('.table-wrap'), tableRows: one('#claims tbody tr'),
    verdicts: Array.from(document.querySelectorAll('#verdict-legend dt'), e => e.textContent),
    columns: Array.from(document.querySelectorAll('#column-legend dt'), e => e.textContent),
    headers: Array.from(document.querySelectorAll('#claims thead th'), e => e.textContent),
    cards: cards,
  };
})()"""


def _overlap(a: dict, b: dict) -> bool:
    return min(a["right"], b["right"]) > max(a["left"], b["left"]) and min(
        a["bottom"], b["bottom"]
    ) > max(a["top"], b["top"])


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_page_headline_legend_and_plots_in_chromium_at_desktop_and_phone_widths(tmp_path, width):
    from tests.audit._chromium import Browser, find_chromium

    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    page, records = _layout_page(tmp_path)
    with Browser(binary) as browser:
        browser.open(page.as_uri(), width=width, height=900)
        layout = browser.evaluate(_LAYOUT)
        browser.screenshot(tmp_path / f"index-{width}.png")
        assert browser.errors() == []
    # Nothing makes the page wider than the screen: the table scrolls in its own box
    # (a phone would otherwise widen its layout viewport to the content).
    assert layout["scrollWidth"] <= width and layout["bodyWidth"] <= width, layout["scrollWidth"]
    assert layout["viewport"] == width
    # The headline is on the first screen, first: findings, then the claims as written.
    headline = layout["headline"]
    assert 0 <= headline["top"] < 900 and headline["height"] > 0
    assert headline["right"] <= width
    assert layout["headlineText"] == records_headline(records)
    # The legend follows, with every verdict and every column of the table defined.
    assert layout["legend"]["top"] > headline["top"] and layout["legend"]["right"] <= width
    assert layout["verdicts"][:5] == [
        "violated",
        "holds",
        "unresolved",
        "outside-claim",
        "no-claim",
    ]
    assert layout["columns"] == layout["headers"] and len(layout["headers"]) >= 10
    table = layout["table"]
    assert table["width"] > 0 and table["right"] <= width and layout["tableRows"]["height"] > 0
    # Every plot is drawn within the screen, with its sentence; the legend never covers
    # the claim's star.
    assert len(layout["cards"]) == len(records)
    for card in layout["cards"]:
        svg = card["svg"]
        assert svg["width"] > 100 and svg["height"] > 100, card["key"]
        assert svg["left"] >= 0 and svg["right"] <= width + 0.5, card["key"]
        assert card["statement"].strip(), card["key"]
        if card["star"] is not None and card["legend"] is not None:
            assert not _overlap(card["star"], card["legend"]), card["key"]
            assert card["legend"]["bottom"] <= svg["bottom"] + 0.5, card["key"]


def test_guide_report_page_example_writes_the_page(tmp_path):
    """The verify guide's ``fedpriv verify ... --out my-report`` example, run as shown."""
    import subprocess
    import sys

    text = (ROOT / "docs" / "guides" / "verify.md").read_text(encoding="utf-8")
    section = text[text.index("## The report page: `reports/index.html`") :]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    command, listing = [line.split("#")[0].strip() for line in block.splitlines()[:2]]
    assert command.startswith("fedpriv verify ") and listing.startswith("ls ")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
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


def test_brackets_with_a_shared_text_to_path_are_the_per_figure_ones_byte_for_byte(monkeypatch):
    """The shared TextToPath (one mathtext parse per page) changes no byte of any SVG."""
    import matplotlib.text
    from fedpriv.audit.claims import _page_assets

    records = attach_curves([OLD, NEW, {**NEW, "key": "x/y", "claimed": None}])
    shared = [bracket_svg(record) for record in records * 2]

    @contextlib.contextmanager
    def fresh():  # the old behaviour: every renderer gets its own TextToPath
        yield

    monkeypatch.setattr(_page_assets, "_shared_text_to_path", fresh)
    alone = [bracket_svg(record) for record in records * 2]
    assert shared == alone
    assert all("<!-- $10^{-12}$ -->" in svg for svg in shared)  # mathtext drawn
    assert matplotlib.text.TextToPath is not _page_assets._TEXT_TO_PATH[0]


def test_page_drawn_on_a_process_pool_is_the_serial_page_byte_for_byte():
    """index_html draws curves and brackets on the run's workers: same page as in one
    process, and as the page built from attach_curves alone."""
    from types import SimpleNamespace

    fixed = {**OLD, "key": "feducb/feducb/fixed", "claimed": {"epsilon": 1.0, "delta": 0.1}}
    records = [OLD, NEW, fixed] + [
        {**OLD, "key": f"{OLD['key']}/copy{i}", "verdict": v}
        for i, v in enumerate(["holds", "unresolved"] * 9)
    ]

    def report(workers):
        config = SimpleNamespace(workers=workers, quick=True, papers=None, seed=0)
        return SimpleNamespace(config=config, results=(), seed_entropy=0, seconds=1.0)

    serial = index_html(records, report=report(1))
    assert index_html(records, report=report(2)) == serial
    generated = (
        "Generated by fedpriv verify --quick (seed 0, SeedSequence entropy 0) in 1 s. "
        "Do not edit by hand."
    )
    assert serial == build_index_html(attach_curves(records), None, generated=generated)
