"""Benchmark: time to build ``reports/index.html`` from the committed ``claims.json``.

``fedpriv verify`` writes the page after every run, so its cost adds to each run.
Measures the two steps separately, in CPU seconds (the machine is shared) and wall
seconds: the bracket curves (the accountant recipes of the approximate-DP claims at
each δ of the grid) and the page with one inline SVG per claim. Prints numbers;
asserts nothing (STYLE: benchmarks are scripts, never timed tests).

    python benchmarks/bench_report_page.py [--claims reports/claims.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import fedpriv.audit.claims.register  # noqa: F401 - import time is not measured
from fedpriv.audit.claims.curves import attach_curves
from fedpriv.audit.claims.html import build_index_html

__all__: list[str] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=Path("reports/claims.json"))
    args = parser.parse_args()
    records = json.loads(args.claims.read_text(encoding="utf-8"))
    cpu, wall = time.process_time(), time.perf_counter()
    with_curves = attach_curves(records)
    print(
        f"curves: {time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s "
        f"wall ({sum('curve' in r for r in with_curves)} of {len(records)} records)"
    )
    cpu, wall = time.process_time(), time.perf_counter()
    page = build_index_html(with_curves, None)
    print(
        f"page:   {time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s "
        f"wall ({len(records)} brackets, {len(page) / 1e6:.2f} MB)"
    )


if __name__ == "__main__":
    main()
