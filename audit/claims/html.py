"""``reports/index.html``: the claims register as one self-contained page.

The page opens with the headline (findings, then the papers' claims as written, then
fedpriv's corrected variants: :func:`fedpriv.audit.claims.legend.records_headline`)
and a legend of the verdicts (with the evidence each needs) and of the columns. Then
the findings, the claims table (sortable by any column, filterable by text, verdict
and paper through a small inline script; each key with its plain-language sentence,
:mod:`fedpriv.audit.claims.statements`) and, for each claim, an inline SVG of its
bracket (drawn by :mod:`fedpriv.audit.claims._page_assets` with matplotlib from
:mod:`fedpriv.audit.claims.curves`): the end-to-end upper bound
ε(δ) (a row of arrows at the top where it is ∞), the noise mechanisms' ε(δ) dashed
where they are priced apart, the audit's lower bound at the δ where it was measured
(and its curve over δ where the run's counts are known, the δ = 10⁻⁶ audit too), and
the claim as a star. Legends sit below the axes, never over the data. Nothing is
loaded from anywhere: no server, no network, no external script, style sheet or
font, so the file can be mailed or opened from a CI artifact.

The page reads the records of ``claims.json`` and, where it exists, ``findings.json``
beside it (entries ``{id, statement, claims, evidence, where}``). Every field is
read with a default, so records of the walking-skeleton schema (``verdict``,
``findings`` as text) and of the register schema (``reading``,
``mechanism_epsilon``, ``epsilon_at_1e-6``, ``finding_ids``, ``tightness``) both
render.
"""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path
from typing import Any

from fedpriv.audit.claims._page_assets import SCRIPT as _SCRIPT
from fedpriv.audit.claims._page_assets import STYLE as _STYLE
from fedpriv.audit.claims._page_assets import as_number as _number
from fedpriv.audit.claims._page_assets import as_percent as _percent
from fedpriv.audit.claims._page_assets import as_text as _text
from fedpriv.audit.claims._page_assets import bracket_svg as _bracket_svg
from fedpriv.audit.claims.curves import attach_curves
from fedpriv.audit.claims.legend import COLUMN_DEFINITIONS, VERDICT_LEGEND, records_headline
from fedpriv.audit.claims.statements import statement_of_record

__all__ = ["build_index_html", "index_html", "load_findings"]


def _count(value: Any) -> str:
    number = _number(value)
    return "–" if number is None or not math.isfinite(number) else f"{round(number):,}"


def _sort_key(value: Any) -> str:
    """The ``data-sort`` of a cell: a number where there is one, else the text."""
    number = _number(value)
    if number is None or math.isnan(number):
        return _text(value).lower()
    return repr(1e308 if number == math.inf else number)


def load_findings(out_dir: str | os.PathLike) -> list[dict] | None:
    """The entries of ``out_dir/findings.json`` (None when absent or unreadable).

    Parameters
    ----------
    out_dir : str or PathLike
        A report folder.

    Returns
    -------
    list of dict or None
    """
    path = Path(out_dir) / "findings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict):
        data = data.get("findings", [])
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else None


# ----------------------------------------------------------------------------- page
_COLUMNS = (
    ("key", "claim"),
    ("paper", "paper"),
    ("reading", "reading"),
    ("relation", "relation"),
    ("claimed", "claimed ε (δ)"),
    ("accountant", "accountant ε (route)"),
    ("mechanism", "mechanism ε"),
    ("audit", "audit lower bound"),
    ("tightness", "tightness"),
    ("eps6", "ε at δ = 10⁻⁶"),
    ("verdict", "verdict"),
    ("findings", "findings"),
)


def _key(record: dict, index: int) -> str:
    return str(record.get("key") or f"{record.get('algorithm', 'claim')}/{index}")


def _statement(record: dict) -> str:
    """The record's plain-language sentence (its own, or generated from its fields)."""
    return str(record.get("statement") or statement_of_record(record))


def _cells(record: dict) -> dict[str, tuple[Any, str]]:
    """``column -> (sort value, cell HTML)`` of one record."""
    claimed = record.get("claimed") or {}
    accountant = record.get("accountant") or {}
    audit = record.get("audit") or {}
    lower = audit.get("epsilon_lower_bound")
    ids = record.get("finding_ids") or []
    links = " ".join(
        f'<a href="#finding-{html.escape(str(i))}">{html.escape(str(i))}</a>' for i in ids
    )
    verdict = str(record.get("verdict", "–"))
    # ``relation``: the key of registers written before dp-accounting's name
    relation = record.get("neighboring_relation", record.get("relation"))
    return {
        "paper": (record.get("paper"), html.escape(_text(record.get("paper")))),
        "reading": (
            record.get("reading") or record.get("mode"),
            html.escape(_text(record.get("reading") or record.get("mode"))),
        ),
        "relation": (relation, html.escape(_text(relation)).replace("_", "_<wbr>")),
        # A no-claim row has no claimed ε (``claimed`` is null): it sorts first, as an
        # unaudited row does in the audit column.
        "claimed": (
            (
                claimed.get("epsilon"),
                html.escape(f"{_text(claimed.get('epsilon'))} ({_text(claimed.get('delta'))})"),
            )
            if claimed
            else (-1.0, "— (no claim)")
        ),
        "accountant": (
            accountant.get("epsilon"),
            html.escape(f"{_text(accountant.get('epsilon'))} ({_text(accountant.get('route'))})"),
        ),
        "mechanism": (
            record.get("mechanism_epsilon"),
            html.escape(_text(record.get("mechanism_epsilon"))),
        ),
        "audit": (
            lower if lower is not None else -1.0,
            html.escape(
                "not audited"
                if not audit
                else f"{_text(lower)} ({_percent(audit.get('confidence'))}, "
                f"{_count(audit.get('samples'))}/world)"
            ),
        ),
        "tightness": (record.get("tightness"), html.escape(_text(record.get("tightness")))),
        "eps6": (record.get("epsilon_at_1e-6"), html.escape(_text(record.get("epsilon_at_1e-6")))),
        "verdict": (
            verdict,
            f'<span class="badge v-{html.escape(verdict)}">{html.escape(verdict)}</span>',
        ),
        "findings": (len(ids), links or "–"),
    }


def _table(records: list[dict]) -> list[str]:
    head = "".join(
        f'<th data-col="{c}" aria-sort="none"><button type="button">'
        f"{html.escape(label)}</button></th>"
        for c, label in _COLUMNS
    )
    rows = [f'<div class="table-wrap"><table id="claims"><thead><tr>{head}</tr></thead><tbody>']
    for index, record in enumerate(records):
        key = _key(record, index)
        cells = _cells(record)
        cells["key"] = (
            key,
            f'<a href="#plot-{index}">{html.escape(key)}</a>'
            f'<div class="statement">{html.escape(_statement(record))}</div>',
        )
        tds = "".join(
            f'<td data-sort="{html.escape(_sort_key(cells[c][0]))}">{cells[c][1]}</td>'
            for c, _ in _COLUMNS
        )
        rows.append(
            f'<tr data-key="{html.escape(key)}" data-index="{index}" '
            f'data-verdict="{html.escape(str(record.get("verdict", "")))}" '
            f'data-paper="{html.escape(str(record.get("paper", "")))}">{tds}</tr>'
        )
    rows.append("</tbody></table></div>")
    return rows


def _card(record: dict, index: int, svg: str | None = None) -> str:
    key = _key(record, index)
    details = [
        ("evidence", record.get("evidence")),
        ("source", record.get("source")),
        ("audit channel", (record.get("audit") or {}).get("channel")),
        ("audit event", (record.get("audit") or {}).get("event")),
    ]
    texts = record.get("findings") or []
    if texts and all(isinstance(t, str) for t in texts):
        details.append(("notes", "; ".join(texts)))
    dl = "".join(
        f"<dt>{html.escape(name)}</dt><dd>{html.escape(str(value))}</dd>"
        for name, value in details
        if value
    )
    verdict = html.escape(str(record.get("verdict", "–")))
    return (
        f'<article class="card" id="plot-{index}" data-index="{index}">'
        f'<h3>{html.escape(key)} <span class="badge v-{verdict}">{verdict}</span></h3>'
        f'<p class="statement">{html.escape(_statement(record))}</p>'
        f"<figure>{_bracket_svg(record) if svg is None else svg}</figure><dl>{dl}</dl></article>"
    )


def _findings_section(findings: list[dict] | None) -> list[str]:
    out = ['<section id="findings"><h2>Findings</h2>']
    if findings is None:
        out.append(
            '<p class="note">No findings.json beside claims.json: the findings of '
            "this run are listed per claim (notes under each plot).</p>"
        )
    elif not findings:
        out.append("<p>None.</p>")
    else:
        out.append("<ol>")
        for entry in findings:
            fid = html.escape(str(entry.get("id", "")))
            claims = ", ".join(html.escape(str(c)) for c in entry.get("claims") or [])
            out.append(
                f'<li id="finding-{fid}"><strong>{fid}</strong> '
                f"{html.escape(str(entry.get('statement', '')))}"
                + (f"<br><small>claims: {claims}</small>" if claims else "")
                + (
                    f"<br><small>evidence: {html.escape(_text(entry.get('evidence')))}</small>"
                    if entry.get("evidence")
                    else ""
                )
                + (
                    f"<br><small>where: {html.escape(_text(entry.get('where')))}</small>"
                    if entry.get("where")
                    else ""
                )
                + "</li>"
            )
        out.append("</ol>")
    return out + ["</section>"]


def _legend(records: list[dict]) -> list[str]:
    """The verdicts (with the evidence each needs) and the columns, defined."""
    shown = set(str(r.get("verdict", "")) for r in records)
    verdicts = [v for v in VERDICT_LEGEND if v != "error" or "error" in shown]
    out = [
        '<section id="legend"><h2>How to read this page</h2>',
        '<div class="legend-grid"><div><h3>Verdicts</h3><dl id="verdict-legend">',
    ]
    out += [
        f'<dt><span class="badge v-{html.escape(v)}">{html.escape(v)}</span></dt>'
        f"<dd>{html.escape(VERDICT_LEGEND[v])}.</dd>"
        for v in verdicts
    ]
    out += ["</dl></div>", '<div><h3>Columns</h3><dl id="column-legend">']
    out += [
        f"<dt>{html.escape(label)}</dt><dd>{html.escape(COLUMN_DEFINITIONS[label])}.</dd>"
        for _, label in _COLUMNS
    ]
    out += ["</dl></div></div></section>"]
    return out


def _controls(records: list[dict]) -> str:
    verdicts = sorted({str(r.get("verdict", "")) for r in records})
    papers = sorted({str(r.get("paper", "")) for r in records})

    def options(values: list[str]) -> str:
        return "".join(
            f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
        )

    return (
        '<div id="controls"><label>filter <input id="filter" type="search" '
        'placeholder="text in any column"></label> <label>verdict <select id="verdict">'
        f'<option value="">all</option>{options(verdicts)}</select></label> '
        f'<label>paper <select id="paper"><option value="">all</option>{options(papers)}'
        '</select></label> <span id="shown"></span></div>'
    )


def build_index_html(
    records: list[dict],
    findings: list[dict] | None = None,
    *,
    title: str = "fedpriv: privacy claims and verdicts",
    generated: str = "",
    brackets: list[str] | None = None,
) -> str:
    """The page for ``records`` (``claims.json`` records, optionally with ``curve``).

    Parameters
    ----------
    records : list of dict
        One record per claim, in table order.
    findings : list of dict or None
        ``findings.json`` entries; None says that there is no such file.
    title, generated : str
        Page heading and a line saying how the records were produced.
    brackets : list of str, optional
        The bracket ``<svg>`` of each record, already drawn (:func:`index_html` draws
        them on a process pool); default: drawn here.

    Returns
    -------
    str
        A complete HTML5 document with inline CSS, SVG and script only.
    """
    counts: dict[str, int] = {}
    for record in records:
        counts[str(record.get("verdict", "–"))] = counts.get(str(record.get("verdict", "–")), 0) + 1
    summary = ", ".join(
        f'<span class="badge v-{html.escape(v)}">{n} {html.escape(v)}</span>'
        for v, n in sorted(counts.items())
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<header><h1>{html.escape(title)}</h1>",
        f'<p id="headline">{html.escape(records_headline(records))}</p>',
        f'<p class="note">{len(records)} rows (one per claim, setting, reading and '
        f"channel): {summary}. {html.escape(generated)}</p></header>",
        *_legend(records),
        *_findings_section(findings),
        '<section id="register"><h2>Claims</h2>',
        _controls(records),
        *_table(records),
        "</section>",
        '<section id="plots"><h2>Brackets</h2>',
        (
            '<p class="note">Each plot brackets the true ε of one row over δ: the '
            "end-to-end upper bound from the accountant (blue; a row of arrows at the top "
            "when it is ∞), the noise mechanisms alone where they are priced apart (grey, "
            "dashed: not an upper bound on what the observer sees), the audit's lower bound "
            "(orange) at the δ where it was measured (triangles; dotted: the δ = 10⁻⁶ audit) "
            "and over δ, and the claim as a star coloured by its verdict. A claim is refuted "
            "when a lower bound rises above the star, and holds when the upper bound is at "
            "or below it.</p>"
        ),
        *(
            _card(record, i, None if brackets is None else brackets[i])
            for i, record in enumerate(records)
        ),
        "</section>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def index_html(
    records: list[dict], out_dir: str | os.PathLike | None = None, *, report=None
) -> str:
    """The ``index.html`` of a report folder (written by ``write_claims_report``).

    Parameters
    ----------
    records : list of dict
        The ``claims.json`` records (after any ``--paper`` merge).
    out_dir : path, optional
        The report folder; its ``findings.json`` is read when present.
    report : ClaimsReport, optional
        The run that produced the records: its results add the audit curves
        (:func:`fedpriv.audit.claims.curves.attach_curves`) and its configuration
        the "generated by" line.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    generated = ""
    results = ()
    if report is not None:
        config = report.config
        results = report.results
        generated = (
            "Generated by fedpriv verify"
            + (" --quick" if config.quick else "")
            + (f" --paper {' '.join(config.papers)}" if config.papers else "")
            + "".join(f" --claims {Path(f).name}" for f in getattr(config, "claims_files", ()))
            + f" (seed {config.seed}, SeedSequence entropy {report.seed_entropy}) in "
            f"{report.seconds:.0f} s. Do not edit by hand."
        )
    findings = None if out_dir is None else load_findings(out_dir)
    workers = 1 if report is None else int(getattr(report.config, "workers", 1) or 1)
    curved, brackets = _curves_and_brackets(records, results, workers)
    return build_index_html(curved, findings, generated=generated, brackets=brackets)


def _brackets_job(job: dict) -> list[tuple[dict, str]]:
    """Curves and bracket ``<svg>`` of one family's records (a picklable unit of work)."""
    curved = attach_curves(job["records"], job["results"])
    return [(record, _bracket_svg(record)) for record in curved]


def _curves_and_brackets(records: list[dict], results, workers: int):
    """``(attach_curves(records, results), [bracket svg per record])`` on a local
    process pool of ``workers`` (in this process when 1).

    Every record's curves and plot depend on that record (and its result) alone, so
    the page is the same whatever the workers. The jobs are arranged for speed only: a
    family's records with a claimed δ > 0 stay in one job, the largest first (rows whose
    recipe curves did not come with their result, e.g. shared audits or records of an
    earlier run, re-run its accountant recipes, which share what a process caches, e.g.
    the AAMAS rows' PLD of a setting); the others (plots only) follow in chunks of 16.
    """
    from fedpriv.audit.engine.executor import parallel_map

    families: dict[str, list[int]] = {}
    plots_only: list[int] = []
    for index, record in enumerate(records):
        delta = (record.get("claimed") or {}).get("delta")
        if isinstance(delta, (int, float)) and delta == 0:
            plots_only.append(index)
        else:
            family = str(record.get("key") or "").split("/", 1)[0]
            families.setdefault(family, []).append(index)
    order = sorted(families.values(), key=len, reverse=True)
    order += [plots_only[i : i + 16] for i in range(0, len(plots_only), 16)]
    results = [r for r in results if getattr(r, "key", None)]
    jobs = []
    for indices in order:
        keys = {records[i].get("key") for i in indices}
        jobs.append(
            {
                "records": [records[i] for i in indices],
                "results": [r for r in results if r.key in keys],
            }
        )
    outputs = parallel_map(
        _brackets_job, jobs, workers=workers, say=lambda _: None, describe=lambda *_: ""
    )
    curved: list[Any] = [None] * len(records)
    brackets: list[Any] = [None] * len(records)
    for indices, output in zip(order, outputs, strict=True):
        for index, (record, svg) in zip(indices, output, strict=True):
            curved[index], brackets[index] = record, svg
    return curved, brackets
