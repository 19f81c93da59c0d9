"""What a Li & Song figure records of a run, its plot and its note (§VII, Figs. 4–12).

:mod:`fedpriv.audit.families.li_song.experiments` runs each figure's settings into a
:class:`LiSongFigure`: one CSV row per setting and trial (regret, exploitation regret,
communication cost, rounds and the accountant's per-message ε) and mean/min/max regret
curves on a grid of :data:`GRID` + 1 time slots; the plot adds a regret-against-cost panel
where the paper has one. Collecting, the Markdown table and the staged write of
``<out>/li_song/figN.png``, ``.csv``, ``_curves.csv`` and ``.md`` are the shared
:mod:`fedpriv.audit.reporting` machinery.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fedpriv.audit.reporting.figures import BandFigure
from fedpriv.audit.reporting.tables import markdown_table

__all__ = ["GRID", "LiSongFigure", "figure_note"]

#: Time-slot intervals of each plotted curve (GRID + 1 points from 0 to T).
GRID = 200
_STYLES = ("-", "--", "-.", ":")


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


class LiSongFigure(BandFigure):
    """A Li & Song figure's runs (module docstring).

    Parameters
    ----------
    horizon : int
        T of every run, >= 1.
    per_agent : bool, default False
        Plot the regret per agent (Figs. 11, 12) instead of the sum over agents.
    """

    def __init__(self, horizon: int, per_agent: bool = False) -> None:
        super().__init__()
        self.horizon, self.per_agent = horizon, per_agent
        self.grid = np.linspace(0, horizon, GRID + 1)

    def add_run(self, label: str, run: Any, **extra: Any) -> None:
        """Record ``run`` (a :class:`~fedpriv.algorithms.li_song.mab.LiSongRun`) under ``label``.

        Parameters
        ----------
        label : str
            The setting's legend entry.
        run : LiSongRun
            A finished run.
        **extra
            Setting columns added to every row (``epsilon=0.5``, ...).
        """
        curve = run.total_regret_at(self.grid)
        curve = curve / run.setting["n_agents"] if self.per_agent else curve
        style = _STYLES[len(self.curves) % len(_STYLES)]
        self.add(label, _rows(label, run, extra), self.grid, curve, style=style)

    def plot(self, title: str, cost_panel: bool = False) -> plt.Figure:
        """The regret curves with their min–max bands (and the cost panel).

        Parameters
        ----------
        title : str
            The first panel's title.
        cost_panel : bool, default False
            Add a panel of the final regret against the communication cost C(T).

        Returns
        -------
        matplotlib.figure.Figure
        """
        n_panels = 2 if cost_panel else 1
        fig, axes = plt.subplots(1, n_panels, figsize=(6.5 * n_panels, 4.5), squeeze=False)
        ax = axes[0, 0]
        self.draw(ax, alpha=0.2)
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


def figure_note(
    number: int,
    caption: str,
    rows: list[tuple[str, str, str]],
    frame: pd.DataFrame,
    extra: str = "",
) -> str:
    """The ``.md`` note of Li & Song's Fig. ``number``: settings and per-setting summary.

    Parameters
    ----------
    number : int
        The figure's number (4–12).
    caption : str
        What the figure shows ("per agent" in it selects the per-agent regret).
    rows : list of (str, str, str)
        ``(setting, paper, here)``: each setting beside what the paper states.
    frame : pandas.DataFrame
        The figure's CSV table (:meth:`LiSongFigure.frame`).
    extra : str, default ""
        Markdown appended at the end.

    Returns
    -------
    str
    """
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
        + markdown_table(summary)
        + "\n"
        + (f"\n{extra}\n" if extra else "")
    )
