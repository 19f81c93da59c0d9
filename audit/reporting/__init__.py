"""Report files written once for every family: tables, regret bands and staged writes.

A family's experiments and report attachments describe *what* a figure or page holds (the
rows of a run, the paper's settings, the caption); this package does the rest the same way
for all of them:

- :mod:`~fedpriv.audit.reporting.tables`: ``markdown_table``, a GitHub Markdown table of a
  pandas DataFrame (``DataFrame.to_markdown`` needs ``tabulate``, not a dependency);
- :mod:`~fedpriv.audit.reporting.figures`: ``BandFigure`` (runs collected by label: one
  CSV row per setting and trial, a mean/min/max band per label, plotted with matplotlib),
  ``plot_band`` (one mean line with its min–max band) and ``write_figure`` (a figure's PNG,
  CSV tables and Markdown note, staged together);
- :mod:`~fedpriv.audit.reporting.files`: ``staged_files``, a folder's files written into
  a staging folder and moved into place one atomic rename each, only once every file is
  written.

Nothing here names a family (``tests/test_architecture.py``); the claims machinery
(:func:`fedpriv.audit.claims.report.write_attachment`) writes through it too. The package
imports none of its modules, so the light ones (``files``) load no pandas or matplotlib.
"""

from __future__ import annotations

__all__: list[str] = []
