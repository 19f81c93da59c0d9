"""Inline assets of ``reports/index.html`` (:mod:`fedpriv.audit.claims.html`).

The style sheet and the script are kept as Python strings so that they install with
the package and the page needs no file besides itself. The script only sorts and
filters the claims table (and hides the plots of filtered-out claims); it loads
nothing. Each claim's bracket figure is drawn here as an inline ``<svg>``
(:func:`bracket_svg`, matplotlib) from the record's curves
(:mod:`fedpriv.audit.claims.curves`), with the value formatters the page shares.

Every figure's renderer shares one ``TextToPath`` (:func:`_shared_text_to_path`), so the
mathtext tick labels (``$10^{-6}$``, ...) are parsed once per page instead of once per
figure: matplotlib caches a parse per renderer, and the parses were half of the page's
drawing time (issue 23). The parse depends only on the string, size and font, so the
SVG is the same, byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Iterator
from typing import Any

import matplotlib
from fedpriv.audit.claims.curves import DELTA_GRID
from matplotlib.figure import Figure

__all__ = ["SCRIPT", "STYLE", "VERDICT_COLORS", "as_number", "as_percent", "as_text", "bracket_svg"]

#: Colours of the verdict badges (and of the claim point in the plots).
VERDICT_COLORS = {
    "violated": "#b3261e",
    "holds": "#1b7f3b",
    "unresolved": "#5f5f9e",
    "outside-claim": "#b26a00",
    "no-claim": "#5f6368",
    "error": "#7b1fa2",
}


def as_number(value: Any) -> float | None:
    """A float from a record value (``"inf"`` strings, ``{"epsilon": x}``); else None."""
    if isinstance(value, dict):
        value = value.get("epsilon", value.get("value"))
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def as_text(value: Any) -> str:
    """A compact string for any record value (numbers to 4 significant digits)."""
    if value is None or value == "" or value == []:
        return "–"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {as_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(as_text(v) for v in value)
    if isinstance(value, str):
        return {"inf": "∞", "-inf": "−∞"}.get(value, value)
    number = as_number(value)
    if number is None:
        return str(value)
    return "∞" if number == math.inf else f"{number:.4g}"


def as_percent(value: Any) -> str:
    """A record value as a whole percentage (``"–"`` when it is not a number)."""
    number = as_number(value)
    return "–" if number is None else f"{number:.0%}"


STYLE = """
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 14px; }
body { margin: 1.5rem; color: #1f1f1f; background: #fff; }
#findings, .card { overflow-wrap: anywhere; }
@media (max-width: 600px) { body { margin: .6rem; } }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
[hidden] { display: none !important; }
.note { color: #555; }
#headline { font-size: 1.1rem; font-weight: 600; max-width: 60rem; }
.legend-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr));
               gap: 0 2rem; }
#legend h3 { font-size: 1rem; margin: .4rem 0; }
#legend dl { margin: 0; font-size: .9rem; } #legend dt { font-weight: 600; margin-top: .3rem; }
#legend dd { margin: 0 0 0 1rem; }
.statement { color: #333; font-size: .85rem; margin: .15rem 0 0; }
.badge { display: inline-block; padding: 0 .45em; border-radius: .6em; color: #fff;
         background: #444; font-size: .85em; white-space: nowrap; }
.v-violated { background: #b3261e; } .v-holds { background: #1b7f3b; }
.v-outside-claim { background: #b26a00; } .v-unresolved { background: #5f5f9e; } .v-no-claim { background: #5f6368; }
.v-error { background: #7b1fa2; }
#controls { margin: .5rem 0; display: flex; gap: 1rem; flex-wrap: wrap; align-items: center; }
#controls input { width: min(18rem, 80vw); }
.table-wrap { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
td:first-child { min-width: 16rem; }
th, td { border: 1px solid #ddd; padding: .25rem .4rem; vertical-align: top; text-align: left; }
thead th { position: sticky; top: 0; background: #f3f3f3; }
th button { all: unset; cursor: pointer; font-weight: 600; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
tbody tr:nth-child(even) { background: #fafafa; }
#plots { display: flex; flex-wrap: wrap; gap: 1rem; }
#plots > h2, #plots > p { flex-basis: 100%; }
.card { border: 1px solid #ddd; border-radius: .4rem; padding: .5rem; width: 30rem;
        max-width: 100%; box-sizing: border-box; }
.card h3 { font-size: .95rem; margin: 0 0 .3rem; word-break: break-all; }
.card figure { margin: 0; } .card svg { width: 100%; height: auto; }
.card dl { font-size: .8rem; margin: .3rem 0 0; }
.card dt { font-weight: 600; } .card dd { margin: 0 0 .2rem 1rem; }
"""

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("claims");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var cards = {};
  document.querySelectorAll("article.card").forEach(function (card) {
    cards[card.dataset.index] = card;
  });
  var filter = document.getElementById("filter");
  var verdict = document.getElementById("verdict");
  var paper = document.getElementById("paper");
  var shown = document.getElementById("shown");

  function apply() {
    var query = filter.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (row) {
      var keep = (!query || row.textContent.toLowerCase().indexOf(query) >= 0) &&
        (!verdict.value || row.dataset.verdict === verdict.value) &&
        (!paper.value || row.dataset.paper === paper.value);
      row.hidden = !keep;
      if (cards[row.dataset.index]) { cards[row.dataset.index].hidden = !keep; }
      if (keep) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " claims shown";
  }

  function compare(a, b) {
    var x = Number(a), y = Number(b);
    var nx = a !== "" && !isNaN(x), ny = b !== "" && !isNaN(y);
    if (nx && ny) { return x - y; }
    if (nx !== ny) { return nx ? -1 : 1; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }

  function sortBy(th) {
    var column = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("thead th").forEach(function (h) {
      h.setAttribute("aria-sort", "none");
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.sort(function (r, s) {
      var order = compare(r.cells[column].dataset.sort, s.cells[column].dataset.sort);
      return (ascending ? order : -order) || (r.dataset.index - s.dataset.index);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  table.querySelectorAll("thead th").forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () { sortBy(th); });
  });
  [filter, verdict, paper].forEach(function (control) {
    control.addEventListener("input", apply);
    control.addEventListener("change", apply);
  });
  apply();
}());
"""


# ----------------------------------------------------------------------------- plot
def _finite(values) -> list[float]:
    return [v for v in (as_number(x) for x in values) if v is not None and math.isfinite(v)]


#: Colours of the plot's lines.
_UPPER, _MECHANISM, _AUDIT = "#1f4e9c", "#7a7a7a", "#c2410c"


def _points(deltas, values) -> list[tuple[float, float]]:
    ys = [as_number(v) for v in values or []]
    return [(d, y) for d, y in zip(deltas, ys) if y is not None and math.isfinite(y)]


def _plot_curves(ax, record: dict, deltas: list[float], left: float) -> list[str]:
    """Draw the upper bound, the mechanism, the audit (curves or points); return
    notes for the title. Every label says what is drawn."""
    notes = []
    curve = record.get("curve") or {}
    cdeltas = [float(d) for d in curve.get("delta") or deltas]
    accountant = record.get("accountant") or {}
    acc_eps = as_number(accountant.get("epsilon"))
    claimed_delta = as_number((record.get("claimed") or {}).get("delta")) or 0.0
    at_claim = claimed_delta if claimed_delta > 0 else left
    if acc_eps is not None and math.isinf(acc_eps):
        # ∞ is drawn as arrows at the top edge over the whole δ range: no finite curve
        # stands for the end-to-end bound on such a row.
        xs = [left] + [
            d
            for d in cdeltas
            if abs(math.log10(d) - round(math.log10(d))) < 1e-9 and round(math.log10(d)) % 2 == 0
        ]
        ax.plot(
            xs,
            [0.96] * len(xs),
            "^",
            color=_UPPER,
            markersize=8,
            linestyle="none",
            transform=ax.get_xaxis_transform(),
            clip_on=False,
            label="end-to-end upper bound: ε = ∞ (raw channel)",
        )
        notes.append("end-to-end ε = ∞ (" + str(accountant.get("route", "?")) + ")")
    elif _points(cdeltas, curve.get("accountant")):
        ax.plot(
            *zip(*_points(cdeltas, curve["accountant"])),
            color=_UPPER,
            marker=".",
            label="end-to-end upper bound ε(δ) (accountant)",
        )
    elif acc_eps is not None:
        if claimed_delta == 0.0:
            ax.plot(
                [left, deltas[-1]],
                [acc_eps, acc_eps],
                color=_UPPER,
                label="end-to-end upper bound (pure ε: every δ)",
            )
        else:
            ax.plot(
                [claimed_delta],
                [acc_eps],
                "s",
                color=_UPPER,
                label="end-to-end upper bound (accountant)",
            )
    eps6 = as_number(record.get("epsilon_at_1e-6"))
    if eps6 is not None and math.isfinite(eps6) and not _points(cdeltas, curve.get("accountant")):
        ax.plot(
            [1e-6],
            [eps6],
            "s",
            color=_UPPER,
            mfc="none",
            label="end-to-end upper bound at δ = 10⁻⁶",
        )
    mechanism = _points(cdeltas, curve.get("mechanism"))
    mech_eps = as_number(record.get("mechanism_epsilon"))
    if mechanism:
        ax.plot(
            *zip(*mechanism),
            color=_MECHANISM,
            linestyle="--",
            label="noise alone: mechanism ε(δ) (not end to end)",
        )
    elif (
        mech_eps is not None
        and math.isfinite(mech_eps)
        and acc_eps is not None
        and mech_eps != acc_eps
    ):
        ax.plot(
            [at_claim],
            [mech_eps],
            "D",
            color=_MECHANISM,
            markersize=5,
            label="noise alone: mechanism ε (not end to end)",
        )
    audit = record.get("audit") or {}
    if _points(cdeltas, curve.get("audit")):
        ax.plot(
            cdeltas,
            [as_number(v) for v in curve["audit"]],
            color=_AUDIT,
            label=f"audit lower bound ε_lb(δ) ({as_percent(audit.get('confidence'))})",
        )
    lower = as_number(audit.get("epsilon_lower_bound"))
    if lower is not None:
        at = as_number(audit.get("delta")) or 0.0
        ax.plot(
            [at if at > 0 else left],
            [lower],
            "v",
            color=_AUDIT,
            markersize=8,
            linestyle="none",
            zorder=4,
            label=f"audit lower bound at its δ = {as_text(at) if at else '0'}",
        )
    elif not audit:
        notes.append("not audited")
    second = audit.get("at_1e-6") or {}
    lower6 = as_number(second.get("epsilon_lower_bound", audit.get("epsilon_lower_bound_at_1e-6")))
    if lower6 is not None:
        if _points(cdeltas, curve.get("audit_at_1e-6")):
            ax.plot(
                cdeltas,
                [as_number(v) for v in curve["audit_at_1e-6"]],
                color=_AUDIT,
                linestyle=":",
                label="audit lower bound ε_lb(δ), δ = 10⁻⁶ audit",
            )
        ax.plot(
            [1e-6],
            [lower6],
            "v",
            color=_AUDIT,
            mfc="white",
            markersize=8,
            linestyle="none",
            zorder=4,
            label="audit lower bound at δ = 10⁻⁶",
        )
    return notes


_TEXT_TO_PATH: list[Any] = []


@contextlib.contextmanager
def _shared_text_to_path() -> Iterator[None]:
    """Renderers made inside share one ``matplotlib.textpath.TextToPath`` (and with it
    its mathtext parser's cache); nothing changes where matplotlib has no such hook."""
    import matplotlib.text

    factory = getattr(matplotlib.text, "TextToPath", None)
    if factory is None:
        yield
        return
    if not _TEXT_TO_PATH:
        _TEXT_TO_PATH.append(factory())
    matplotlib.text.TextToPath = lambda: _TEXT_TO_PATH[0]
    try:
        yield
    finally:
        matplotlib.text.TextToPath = factory


def bracket_svg(record: dict) -> str:
    """The bracket of one claim as an inline ``<svg>`` string.

    The legend is below the axes (so it never covers the claim's star or a curve); the
    star and the legend carry the ids ``claim-star-<key>`` and ``legend-<key>`` (SVG
    ``gid``) so a browser test can check that they do not overlap.
    """
    curve = record.get("curve") or {}
    deltas = [float(d) for d in curve.get("delta") or DELTA_GRID]
    left = deltas[0] / 10.0  # where δ = 0 sits on the log axis
    fig = Figure(figsize=(4.6, 3.0))
    ax = fig.add_subplot()
    notes = _plot_curves(ax, record, deltas, left)
    claimed = record.get("claimed") or {}
    eps, delta = as_number(claimed.get("epsilon")), as_number(claimed.get("delta")) or 0.0
    color = VERDICT_COLORS.get(str(record.get("verdict")), "#000000")
    salt = str(record.get("key") or id(record))
    ident = "".join(c if c.isalnum() else "-" for c in salt)
    if eps is not None and math.isfinite(eps):
        (star,) = ax.plot(
            [delta if delta > 0 else left],
            [eps],
            "*",
            color=color,
            markersize=13,
            markeredgecolor="black",
            linestyle="none",
            label="claim" + (" (δ = 0)" if delta == 0 else f" (δ = {delta:g})"),
        )
        star.set_gid(f"claim-star-{ident}")
    ax.set_xscale("log")
    ax.set_xlim(left / 3.0, max(deltas) * 3.0)
    powers = [
        round(math.log10(d)) for d in deltas if abs(math.log10(d) - round(math.log10(d))) < 1e-9
    ]
    ticks = [left] + [10.0**k for k in powers if k % 3 == 0]
    ax.set_xticks(ticks, ["0"] + [f"$10^{{{k}}}$" for k in powers if k % 3 == 0])
    ax.minorticks_off()
    ys = _finite(
        [
            eps,
            *(curve.get("accountant") or []),
            *(curve.get("mechanism") or []),
            *(curve.get("audit") or []),
            *(curve.get("audit_at_1e-6") or []),
            (record.get("accountant") or {}).get("epsilon"),
            record.get("mechanism_epsilon"),
            record.get("epsilon_at_1e-6"),
            (record.get("audit") or {}).get("epsilon_lower_bound"),
            (record.get("audit") or {}).get("epsilon_lower_bound_at_1e-6"),
        ]
    )
    ax.set_ylim(0.0, 1.15 * max(ys + [1e-3]))
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    # Layout in inches: the axes keep their size, the legend rows are added below.
    rows = len(handles)
    top, axes_h, xlabel_h, row_h = 0.3, 2.0, 0.45, 0.17
    height = top + axes_h + xlabel_h + rows * row_h + 0.08
    fig.set_size_inches(4.6, height)
    fig.subplots_adjust(
        left=0.13,
        right=0.97,
        top=1 - top / height,
        bottom=(xlabel_h + rows * row_h + 0.08) / height,
    )  # no layout pass
    if handles:
        legend = fig.legend(
            handles,
            labels,
            loc="lower left",
            fontsize=7,
            frameon=False,
            bbox_to_anchor=(0.02, 0.0),
            borderaxespad=0.2,
        )
        legend.set_gid(f"legend-{ident}")
    if notes:
        ax.set_title("; ".join(notes), fontsize=8)
    buffer = io.StringIO()
    with (
        matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}),
        _shared_text_to_path(),
    ):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]
