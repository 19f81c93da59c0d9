"""The figure collector and writer of Li & Song's §VII experiments (Figs. 4–12).

:mod:`fedpriv.audit.families.li_song.experiments` runs each figure's settings; this module
collects the runs (one CSV row per setting and trial with regret, exploitation regret,
communication cost, rounds and the accountant's per-message ε; mean/min/max regret curves
on a grid of ``_GRID`` + 1 time slots), plots them (with a regret-against-cost panel where
the paper has one), writes the ``.md`` note and moves ``<out>/li_song/figN.png``, ``.csv``,
``_curves.csv`` and ``.md`` into place from a staging folder (``os.replace``).
"""

from __future__ import annotations

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

_GRID = 200


def _rows(label: str, run: Any, extra: dict[str, Any]) -> list[dict[str, Any]]:
    m = run.setting["n_agents"]
    return [
        {
            "label": label,
            "algorithm": run.algorithm,
            "trial": j,
            "regret": float(run.total_regret[j]),
            "regret_per_agent": float(run.total_regret[j] / m),
            "exploitation_regret": float(run.exploitation_regret[j]),
            "communication_cost": float(run.communication_cost[j]),
            "rounds": int(run.rounds[j]),
            "best_arm_eliminated": bool(run.best_arm_eliminated[j]),
            "accountant_epsilon": run.message_epsilon()[1],
            **extra,
        }
        for j in range(run.total_regret.size)
    ]


class _Figure:
    """Collects runs, then writes the PNG, CSVs and the settings note."""

    def __init__(self, number: int, horizon: int, per_agent: bool = False) -> None:
        self.number, self.horizon, self.per_agent = number, horizon, per_agent
        self.rows: list[dict[str, Any]] = []
        self.curves: dict[str, np.ndarray] = {}
        self.times = np.linspace(0, horizon, _GRID + 1)

    def add(self, label: str, run: Any, **extra: Any) -> None:
        self.rows.extend(_rows(label, run, extra))
        curve = run.total_regret_at(self.times)
        self.curves[label] = curve / run.setting["n_agents"] if self.per_agent else curve

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def curve_frame(self) -> pd.DataFrame:
        parts = [
            pd.DataFrame(
                {
                    "label": label,
                    "t": self.times,
                    "mean": c.mean(axis=0),
                    "min": c.min(axis=0),
                    "max": c.max(axis=0),
                }
            )
            for label, c in self.curves.items()
        ]
        return pd.concat(parts, ignore_index=True)

    def plot(self, title: str, cost_panel: bool = False) -> plt.Figure:
        n_panels = 2 if cost_panel else 1
        fig, axes = plt.subplots(1, n_panels, figsize=(6.5 * n_panels, 4.5), squeeze=False)
        ax = axes[0, 0]
        styles = ("-", "--", "-.", ":")
        for n, (label, c) in enumerate(self.curves.items()):
            (line,) = ax.plot(
                self.times, c.mean(axis=0), label=label, linestyle=styles[n % len(styles)]
            )
            ax.fill_between(
                self.times, c.min(axis=0), c.max(axis=0), alpha=0.2, color=line.get_color()
            )
        ax.set_xlabel("time slot t")
        ax.set_ylabel("per-agent regret" if self.per_agent else "regret (sum over agents)")
        ax.legend(fontsize=7)
        ax.set_title(title, fontsize=9)
        if cost_panel:
            frame = self.frame()
            col = "regret_per_agent" if self.per_agent else "regret"
            ax2 = axes[0, 1]
            for label, g in frame.groupby("label", sort=False):
                cost, reg = g["communication_cost"].mean(), g[col]
                low, high = max(reg.mean() - reg.min(), 0.0), max(reg.max() - reg.mean(), 0.0)
                ax2.errorbar(
                    cost, reg.mean(), yerr=[[low], [high]], fmt="o", capsize=3, label=label
                )
            ax2.set_xlabel("communication cost C(T)")
            ax2.set_ylabel(f"final {col.replace('_', ' ')}")
            ax2.legend(fontsize=7)
        fig.tight_layout()
        return fig


def _write(
    out: Path,
    number: int,
    fig: plt.Figure,
    frame: pd.DataFrame,
    curves: pd.DataFrame | None,
    note: str,
) -> Path:
    folder = Path(out) / "li_song"
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".fig{number}-", dir=folder))
    try:
        fig.savefig(staging / f"fig{number}.png", dpi=120)
        plt.close(fig)
        frame.to_csv(staging / f"fig{number}.csv", index=False)
        if curves is not None:
            curves.to_csv(staging / f"fig{number}_curves.csv", index=False)
        (staging / f"fig{number}.md").write_text(note, encoding="utf-8")
        for path in staging.iterdir():
            os.replace(path, folder / path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _markdown(frame: pd.DataFrame, index: bool = True) -> str:
    """A GitHub table of ``frame`` (numbers to 4 significant digits)."""
    frame = frame.reset_index() if index else frame

    def cell(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines)


def _note(
    number: int,
    caption: str,
    rows: list[tuple[str, str, str]],
    frame: pd.DataFrame,
    extra: str = "",
) -> str:
    table = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    col = "regret_per_agent" if "per agent" in caption else "regret"
    summary = frame.groupby("label", sort=False).agg(
        regret_mean=(col, "mean"),
        regret_min=(col, "min"),
        regret_max=(col, "max"),
        exploitation=("exploitation_regret", "mean"),
        cost=("communication_cost", "mean"),
        rounds=("rounds", "mean"),
        accountant_epsilon=("accountant_epsilon", "max"),
    )
    return (
        f"# Li & Song Fig. {number}: {caption}\n\n"
        "Generated by `fedpriv experiment li-song-fig"
        f"{number}` (audit/families/li_song/experiments.py).\n\n"
        "| setting | paper | here |\n|---|---|---|\n" + table + "\n\n"
        "Final regret (mean, min, max over trials), communication cost, rounds and the "
        "accountant's per-message ε:\n\n"
        + _markdown(summary)
        + "\n"
        + (f"\n{extra}\n" if extra else "")
    )
