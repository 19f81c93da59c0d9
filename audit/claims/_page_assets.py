"""Inline style sheet and script of ``reports/index.html`` (:mod:`fedpriv.audit.claims.html`).

Kept as Python strings so that they install with the package and the page needs no
file besides itself. The script only sorts and filters the claims table (and hides
the plots of filtered-out claims); it loads nothing.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

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
