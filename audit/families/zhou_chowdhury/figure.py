"""What a Zhou & Chowdhury Fig. 2 panel records of a run, its plot and its note.

:mod:`fedpriv.audit.families.zhou_chowdhury.experiments` runs each panel's protocols into
a :class:`ZCFigure`: one CSV row per run and trial (the time-averaged regret per silo
``R(T)/T`` and ``R(T)``, the syncs, the noise and regulariser, the target (ε, δ) and the
run's own accountant ε at that δ) and the mean/min/max curves of ``R(t)/t`` per silo on
at most :data:`GRID` rounds. Collecting, plotting the bands, the Markdown table and the
staged write of ``<out>/zhou_chowdhury/fig2a.png``, ``.csv``, ``_curves.csv`` and ``.md``
are the shared :mod:`fedpriv.audit.reporting` machinery.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fedpriv.audit.reporting.figures import BandFigure
from fedpriv.audit.reporting.tables import markdown_table

__all__ = ["GRID", "ZCFigure", "figure_note"]

#: Points of each plotted curve (at most).
GRID = 200
#: Line style of each protocol.
_STYLES = {"non-private": "-", "ldp": "--", "sdp-amp": "-.", "sdp-vecsum": ":"}


class ZCFigure(BandFigure):
    """A Fig. 2 panel's runs (module docstring)."""

    def add_run(self, label: str, run: Any, *, epsilon: float | None, delta: float | None) -> None:
        """Record ``run`` under ``label``: its CSV rows and its ``R(t)/t`` curve.

        Parameters
        ----------
        label : str
            The run's legend entry.
        run : PrivateFedLinUCBRun
            A finished run (:func:`fedpriv.algorithms.zhou_chowdhury.run_private_fedlinucb`):
            ``regret_curve`` of shape (n_trials, horizon), the average per-silo
            cumulative pseudo-regret.
        epsilon, delta : float or None
            The run's target (None for the non-private run): the accountant's ε is read
            at ``delta``.
        """
        cal = run.calibration
        horizon = run.regret_curve.shape[1]
        if delta is None:
            route, accountant_epsilon = "none (raw sums)", math.inf
        else:
            route, eps = run.accountant.routes.tightest(delta)
            accountant_epsilon = float(eps)
        final = run.regret_curve[:, -1]
        rows = [
            {
                "label": label,
                "protocol": cal.protocol,
                "target_epsilon": math.inf if epsilon is None else float(epsilon),
                "target_delta": math.nan if delta is None else float(delta),
                "trial": j,
                "avg_regret_per_silo": float(final[j] / horizon),
                "regret_per_silo": float(final[j]),
                "n_syncs": int(run.n_syncs),
                "noise_stddev": float(cal.noise_stddev),
                "regularizer": float(cal.regularizer),
                "records_per_leaf": int(cal.records_per_leaf),
                "accountant_epsilon": accountant_epsilon,
                "accountant_route": route,
            }
            for j in range(final.size)
        ]
        t = np.unique(np.linspace(1, horizon, min(GRID, horizon)).round().astype(np.int64))
        curve = run.regret_curve[:, t - 1] / t
        self.add(label, rows, t, curve, style=_STYLES.get(cal.protocol, "-"))

    def plot(self, title: str) -> plt.Figure:
        """The time-averaged regret curves ``R(t)/t`` per silo with their min–max bands.

        Parameters
        ----------
        title : str
            The axis title.

        Returns
        -------
        matplotlib.figure.Figure
        """
        fig, ax = plt.subplots(figsize=(8, 4.8))
        self.draw(ax, alpha=0.2)
        ax.set_xlabel("round t")
        ax.set_ylabel("time-averaged regret R(t)/t per silo")
        ax.set_ylim(bottom=0.0)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig


def figure_note(
    name: str, caption: str, rows: list[tuple[str, str, str]], frame: pd.DataFrame, extra: str
) -> str:
    """The ``.md`` note of panel ``name``: settings beside the paper's, per-run summary.

    Parameters
    ----------
    name : str
        The experiment's command name (``zhou-chowdhury-fig2a``, ...).
    caption : str
        What the panel shows.
    rows : list of (str, str, str)
        ``(setting, paper, here)``: each setting beside what the paper's experiment code
        sets.
    frame : pandas.DataFrame
        The panel's CSV table (:meth:`ZCFigure.frame`).
    extra : str
        Markdown appended at the end.

    Returns
    -------
    str
    """
    table = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    summary = frame.groupby("label", sort=False).agg(
        avg_regret_mean=("avg_regret_per_silo", "mean"),
        avg_regret_min=("avg_regret_per_silo", "min"),
        avg_regret_max=("avg_regret_per_silo", "max"),
        syncs=("n_syncs", "max"),
        noise_stddev=("noise_stddev", "max"),
        regularizer=("regularizer", "max"),
        target_epsilon=("target_epsilon", "max"),
        target_delta=("target_delta", "max"),
        accountant_epsilon=("accountant_epsilon", "max"),
    )
    return (
        f"# Zhou & Chowdhury {name.removeprefix('zhou-chowdhury-')}: {caption}\n\n"
        f"Generated by `fedpriv experiment {name}` "
        "(audit/families/zhou_chowdhury/experiments.py).\n\n"
        "| setting | paper (its experiment code) | here |\n|---|---|---|\n" + table + "\n\n"
        "Time-averaged regret per silo at T, R(T)/T (mean, min, max over trials), syncs "
        "(batches sent by every silo), the node noise σ and regulariser λ of the "
        "protocol's calibration, the target (ε, δ) and the run's own accountant ε at "
        "that δ (inf = non-private: the raw sums, nan = no δ):\n\n"
        + markdown_table(summary)
        + "\n\n"
        + extra
        + "\n"
    )
