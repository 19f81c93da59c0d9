"""The figure collector and writer of FedUCB's experiments (Dubey & Pentland 2020, §4.4).

:mod:`fedpriv.audit.families.feducb.experiments` runs each figure's settings; this module
collects the runs (one CSV row per setting and trial, mean/min/max curves of the average
per-agent regret ``R_M(t)/M``), plots them, writes the ``.md`` note (the settings table
and, per setting, the accountant's ε of the Privatizer releases at δ = ``_DELTA`` and
``_SMALL_DELTA``) and moves ``<out>/feducb/<name>.png``, ``.csv``, ``_curves.csv`` and
``.md`` into place from a staging folder (``os.replace``).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

# Package-internal helpers of experiments.py; nothing public.
__all__: list[str] = []

_DELTA = 0.1
_SMALL_DELTA = 1e-6
_GRID = 100


class _Figure:
    """Collects runs (rows and curves), then writes PNG, CSVs and the note."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[dict[str, Any]] = []
        self.curves: dict[str, np.ndarray] = {}
        self.times: dict[str, np.ndarray] = {}
        self.styles: dict[str, str] = {}

    def add(self, label: str, run: Any, *, style: str = "-", **extra: Any) -> None:
        horizon = run.regret_curve.shape[1]
        final = run.final_regret.mean(axis=1)
        eps = eps_small = math.nan
        if getattr(run, "calibration", None) is not None and run.algorithm.startswith("feducb"):
            eps = run.accountant_epsilon(_DELTA)[1]
            eps_small = run.accountant_epsilon(_SMALL_DELTA)[1]
        syncs = getattr(run, "n_syncs", np.full(final.size, -1))
        for j in range(final.size):
            self.rows.append(
                {
                    "label": label,
                    "algorithm": run.algorithm,
                    "trial": j,
                    "regret_per_agent": float(final[j]),
                    "n_syncs": int(syncs[j]),
                    "accountant_epsilon": eps,
                    "accountant_epsilon_small_delta": eps_small,
                    **extra,
                }
            )
        grid = np.unique(np.linspace(0, horizon - 1, min(_GRID, horizon)).astype(int))
        self.times[label] = grid + 1
        self.curves[label] = run.regret_curve[:, grid]
        self.styles[label] = style

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def curve_frame(self) -> pd.DataFrame:
        return pd.concat(
            [
                pd.DataFrame(
                    {
                        "label": label,
                        "t": self.times[label],
                        "mean": c.mean(axis=0),
                        "min": c.min(axis=0),
                        "max": c.max(axis=0),
                    }
                )
                for label, c in self.curves.items()
            ],
            ignore_index=True,
        )

    def plot_curves(self, title: str) -> plt.Figure:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, c in self.curves.items():
            (line,) = ax.plot(self.times[label], c.mean(axis=0), self.styles[label], label=label)
            ax.fill_between(
                self.times[label], c.min(axis=0), c.max(axis=0), alpha=0.15, color=line.get_color()
            )
        ax.set_xlabel("round t")
        ax.set_ylabel("average per-agent regret R_M(t)/M")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig

    def plot_final(self, title: str, x: str, group: str, xlabel: str, log_x: bool) -> plt.Figure:
        frame = self.frame()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key, g in frame.groupby(group, sort=False):
            stats = g.groupby(x, sort=True)["regret_per_agent"].agg(["mean", "min", "max"])
            (line,) = ax.plot(stats.index, stats["mean"], "o-", label=f"{group} = {key}")
            ax.fill_between(
                stats.index, stats["min"], stats["max"], alpha=0.15, color=line.get_color()
            )
        if log_x:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("average per-agent regret at T")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig


def _write(
    out: Path, name: str, fig: plt.Figure, frame: pd.DataFrame, curves: pd.DataFrame, note: str
) -> Path:
    folder = Path(out) / "feducb"
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder))
    try:
        fig.savefig(staging / f"{name}.png", dpi=120)
        frame.to_csv(staging / f"{name}.csv", index=False)
        curves.to_csv(staging / f"{name}_curves.csv", index=False)
        (staging / f"{name}.md").write_text(note, encoding="utf-8")
        for path in sorted(staging.iterdir()):
            os.replace(path, folder / path.name)
    finally:
        plt.close(fig)
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _note(
    name: str, caption: str, rows: list[tuple[str, str, str]], frame: pd.DataFrame, extra: str
) -> str:
    table = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    summary = frame.groupby("label", sort=False).agg(
        regret_mean=("regret_per_agent", "mean"),
        regret_min=("regret_per_agent", "min"),
        regret_max=("regret_per_agent", "max"),
        syncs=("n_syncs", "mean"),
        accountant_epsilon=("accountant_epsilon", "max"),
        accountant_epsilon_small_delta=("accountant_epsilon_small_delta", "max"),
    )
    return (
        f"# FedUCB {name.removeprefix('feducb-')}: {caption}\n\n"
        f"Generated by `fedpriv experiment {name}` (audit/families/feducb/experiments.py).\n\n"
        "| setting | paper | here |\n|---|---|---|\n" + table + "\n\n"
        "Average per-agent regret at T (mean, min, max over trials), realised sync "
        f"rounds, and the accountant's ε at δ = {_DELTA} and at δ = {_SMALL_DELTA:g} of "
        "the Privatizer releases (Prop. 3's scope; nan = non-private; the sync-timing "
        "channel of the adaptive trigger, Alg. 1 line 12, is not covered):\n\n"
        + _markdown(summary)
        + "\n\n"
        + extra
        + "\n"
    )


def _markdown(frame: pd.DataFrame) -> str:
    """A Markdown table of ``frame`` (index first; floats with 4 significant digits)."""

    def cell(value: Any) -> str:
        return f"{value:.4g}" if isinstance(value, (float, np.floating)) else str(value)

    header = [frame.index.name or ""] + [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for index, row in frame.iterrows():
        lines.append("| " + " | ".join([cell(index)] + [cell(v) for v in row]) + " |")
    return "\n".join(lines)
