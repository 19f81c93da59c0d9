"""What a FedUCB figure records of a run, and its note (Dubey & Pentland 2020, §4.4).

:mod:`fedpriv.audit.families.feducb.experiments` runs each figure's settings into a
:class:`FedUCBFigure`: one CSV row per setting and trial (the average per-agent regret
``R_M(T)/M``, the realised syncs and the accountant's ε of the Privatizer releases at
δ = :data:`DELTA` and :data:`SMALL_DELTA`) and the mean/min/max curves of ``R_M(t)/M``.
Collecting, plotting, the Markdown table and the staged write of
``<out>/feducb/<figure>.png``, ``.csv``, ``_curves.csv`` and ``.md`` are the shared
:mod:`fedpriv.audit.reporting` machinery.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fedpriv.audit.reporting.figures import BandFigure
from fedpriv.audit.reporting.tables import markdown_table

__all__ = ["DELTA", "GRID", "SMALL_DELTA", "FedUCBFigure", "figure_note"]

#: δ at which each private setting's accountant ε is recorded (the runs' claimed δ).
DELTA = 0.1
#: A second δ, where ε is not vacuous.
SMALL_DELTA = 1e-6
#: Points of each plotted curve (at most).
GRID = 100


class FedUCBFigure(BandFigure):
    """A FedUCB figure's runs (module docstring)."""

    def add_run(self, label: str, run: Any, *, style: str = "-", **extra: Any) -> None:
        """Record ``run`` under ``label``: its CSV rows and its ``R_M(t)/M`` curve.

        Parameters
        ----------
        label : str
            The setting's legend entry.
        run : FedUCBRun, DecentralizedFedUCBRun or LinUCBRun
            A finished run (``regret_curve`` of shape (n_trials, horizon)).
        style : str, default "-"
            Matplotlib format string of the curve.
        **extra
            Setting columns added to every row (``epsilon=1.0``, ``M=10``, ...).
        """
        horizon = run.regret_curve.shape[1]
        final = run.final_regret.mean(axis=1)
        eps = eps_small = math.nan
        if getattr(run, "calibration", None) is not None and run.algorithm.startswith("feducb"):
            eps = run.accountant_epsilon(DELTA)[1]
            eps_small = run.accountant_epsilon(SMALL_DELTA)[1]
        syncs = getattr(run, "n_syncs", np.full(final.size, -1))
        rows = [
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
            for j in range(final.size)
        ]
        grid = np.unique(np.linspace(0, horizon - 1, min(GRID, horizon)).astype(int))
        self.add(label, rows, grid + 1, run.regret_curve[:, grid], style=style)

    def plot_curves(self, title: str) -> plt.Figure:
        """The regret curves ``R_M(t)/M`` with their min–max bands.

        Parameters
        ----------
        title : str
            The axis title.

        Returns
        -------
        matplotlib.figure.Figure
        """
        fig, ax = plt.subplots(figsize=(7, 4.5))
        self.draw(ax, alpha=0.15)
        ax.set_xlabel("round t")
        ax.set_ylabel("average per-agent regret R_M(t)/M")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig

    def plot_final_regret(
        self, title: str, x: str, group: str, xlabel: str, log_x: bool
    ) -> plt.Figure:
        """The regret at T against setting ``x``, one band per value of ``group``.

        Parameters
        ----------
        title : str
            The axis title.
        x, group : str
            CSV columns (:meth:`BandFigure.plot_final`).
        xlabel : str
            The abscissa's label.
        log_x : bool
            Logarithmic abscissa.

        Returns
        -------
        matplotlib.figure.Figure
        """
        return self.plot_final(
            title,
            value="regret_per_agent",
            x=x,
            group=group,
            xlabel=xlabel,
            ylabel="average per-agent regret at T",
            log_x=log_x,
            alpha=0.15,
        )


def figure_note(
    name: str, caption: str, rows: list[tuple[str, str, str]], frame: pd.DataFrame, extra: str
) -> str:
    """The ``.md`` note of FedUCB figure ``name``: settings, per-setting summary, findings.

    Parameters
    ----------
    name : str
        The experiment's command name (``feducb-fig1a``, ...).
    caption : str
        What the figure shows.
    rows : list of (str, str, str)
        ``(setting, paper, here)``: each setting beside what the paper states.
    frame : pandas.DataFrame
        The figure's CSV table (:meth:`FedUCBFigure.frame`).
    extra : str
        Markdown appended at the end.

    Returns
    -------
    str
    """
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
        f"rounds, and the accountant's ε at δ = {DELTA} and at δ = {SMALL_DELTA:g} of "
        "the Privatizer releases (Prop. 3's scope; nan = non-private; the sync-timing "
        "channel of the adaptive trigger, Alg. 1 line 12, is not covered):\n\n"
        + markdown_table(summary)
        + "\n\n"
        + extra
        + "\n"
    )
