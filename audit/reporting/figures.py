"""Regret bands of a figure's runs: collected by label, tabled, plotted and written.

Every family's experiment figures show the same thing, the mean over trials of a regret
curve with its min–max band, one curve per setting (label), next to one CSV row per
setting and trial. :class:`BandFigure` collects those; the family says what a run's rows
and curve are (its own regret convention and accountant numbers) and which labels to plot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from fedpriv.audit.reporting.files import staged_files

__all__ = ["BandFigure", "figure_stem", "plot_band", "write_figure"]


def figure_stem(name: str, family: str) -> str:
    """The report files' stem of experiment ``name``: the name without its family's prefix.

    A family's experiments are typed ``fedpriv experiment <family>-<figure>`` (the key
    with ``-`` for ``_``, the command line's spelling) and written to
    ``<out>/<family>/<figure>.*``: the folder spells the family once, so the file names
    do not spell it again.

    Parameters
    ----------
    name : str
        The experiment's command name, e.g. ``"li-song-fig4"``.
    family : str
        The family's key, e.g. ``"li_song"``.

    Returns
    -------
    str
        E.g. ``"fig4"``.

    Raises
    ------
    ValueError
        If ``name`` does not start with the family's prefix or has nothing after it.

    Examples
    --------
    >>> figure_stem("dubey-aamas-fig1a", "dubey_aamas")
    'fig1a'
    """
    prefix = family.replace("_", "-") + "-"
    if not name.startswith(prefix) or name == prefix:
        raise ValueError(f"`name` must be '{prefix}<figure>' for family {family!r}, got {name!r}.")
    return name.removeprefix(prefix)


def plot_band(
    ax: Any,
    x: Any,
    mean: Any,
    low: Any,
    high: Any,
    *,
    label: str,
    style: str | None = None,
    marker: str | None = None,
    alpha: float = 0.2,
) -> Any:
    """Plot one mean line and shade its min–max band in the line's colour.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    x, mean, low, high : array_like of float, shape (n_points,)
        Abscissae, the mean curve and the band's lower and upper edges.
    label : str
        The legend entry.
    style : str, optional
        A matplotlib format string (``"-"``, ``"--"``, ``":"``, ``"o-"``); default the
        axis's next style.
    marker : str, optional
        A marker drawn at every point (``"o"``); default none.
    alpha : float, default 0.2
        Opacity of the band, in [0, 1].

    Returns
    -------
    matplotlib.lines.Line2D
        The mean line.

    Raises
    ------
    ValueError
        If ``alpha`` is outside [0, 1].
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"`alpha` must be in [0, 1], got {alpha!r}.")
    args = (x, mean) if style is None else (x, mean, style)
    extra = {} if marker is None else {"marker": marker}
    (line,) = ax.plot(*args, label=label, **extra)
    ax.fill_between(x, low, high, alpha=alpha, color=line.get_color())
    return line


def write_figure(
    folder: str | Path,
    name: str,
    figure: Any,
    *,
    table: pd.DataFrame,
    note: str,
    curves: pd.DataFrame | None = None,
    dpi: int = 120,
) -> list[Path]:
    """Write ``<name>.png``, ``.csv``, (``_curves.csv``) and ``.md`` into ``folder``.

    The files are written into a staging folder and moved into place only when all are
    written (:func:`fedpriv.audit.reporting.staged_files`); the figure is closed either way.

    Parameters
    ----------
    folder : str or Path
        The family's report folder (created if needed).
    name : str
        The files' stem.
    figure : matplotlib.figure.Figure
        The plot.
    table : pandas.DataFrame
        One row per setting and trial; written without its index.
    note : str
        The Markdown page.
    curves : pandas.DataFrame, optional
        The plotted curves (:meth:`BandFigure.curve_frame`); not written when None.
    dpi : int, default 120
        Resolution of the PNG.

    Returns
    -------
    list of Path
        The files written, sorted by name.

    Raises
    ------
    OSError
        If a file cannot be written or moved.
    """
    folder = Path(folder)
    names = [f"{name}.png", f"{name}.csv", f"{name}.md"]
    try:
        with staged_files(folder, prefix=name) as staging:
            figure.savefig(staging / f"{name}.png", dpi=dpi)
            table.to_csv(staging / f"{name}.csv", index=False)
            if curves is not None:
                curves.to_csv(staging / f"{name}_curves.csv", index=False)
                names.append(f"{name}_curves.csv")
            (staging / f"{name}.md").write_text(note, encoding="utf-8")
    finally:
        plt.close(figure)
    return sorted(folder / n for n in names)


class BandFigure:
    """Runs of one figure: CSV rows per setting and trial, and a regret band per label.

    Examples
    --------
    >>> import numpy as np
    >>> fig = BandFigure()
    >>> fig.add("eps = 1", [{"trial": 0, "regret": 3.0}], np.array([1, 2]), np.ones((1, 2)))
    >>> list(fig.curve_frame().columns)
    ['label', 't', 'mean', 'min', 'max']
    """

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.curves: dict[str, np.ndarray] = {}
        self.times: dict[str, np.ndarray] = {}
        self.styles: dict[str, str | None] = {}

    def add(
        self,
        label: str,
        rows: Sequence[Mapping[str, Any]],
        times: Any,
        curve: Any,
        *,
        style: str | None = None,
    ) -> None:
        """Add one setting: its CSV rows and its curve over trials.

        Parameters
        ----------
        label : str
            The setting's legend entry; a new label, or the earlier one is replaced.
        rows : sequence of mapping
            One CSV row per trial (any columns; the family's own).
        times : array_like of float, shape (n_times,)
            The curve's abscissae (rounds).
        curve : array_like of float, shape (n_trials, n_times)
            The regret of each trial at ``times``.
        style : str, optional
            Matplotlib format string of the line (:func:`plot_band`).

        Raises
        ------
        ValueError
            If ``curve`` is not 2-D with ``n_times`` columns.
        """
        times = np.asarray(times)
        curve = np.asarray(curve, dtype=np.float64)
        if curve.ndim != 2 or curve.shape[1] != times.shape[0]:
            raise ValueError(
                f"`curve` must have shape (n_trials, {times.shape[0]}), got {curve.shape}."
            )
        self.rows.extend(dict(row) for row in rows)
        self.times[label], self.curves[label], self.styles[label] = times, curve, style

    def frame(self) -> pd.DataFrame:
        """The CSV table: one row per setting and trial.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(self.rows)

    def curve_frame(self) -> pd.DataFrame:
        """The plotted curves: ``label, t, mean, min, max`` over trials.

        Returns
        -------
        pandas.DataFrame
        """
        parts = [
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
        ]
        return pd.concat(parts, ignore_index=True)

    def draw(self, ax: Any, *, alpha: float = 0.2) -> None:
        """Draw every label's mean curve and band on ``ax`` (:func:`plot_band`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes
            Where to draw.
        alpha : float, default 0.2
            Opacity of the bands.
        """
        for label, c in self.curves.items():
            plot_band(
                ax,
                self.times[label],
                c.mean(axis=0),
                c.min(axis=0),
                c.max(axis=0),
                label=label,
                style=self.styles[label],
                alpha=alpha,
            )

    def plot_final(
        self,
        title: str,
        *,
        value: str,
        x: str,
        group: str,
        xlabel: str,
        ylabel: str,
        log_x: bool = False,
        alpha: float = 0.2,
    ) -> Any:
        """Plot a final value against a setting, one band per group of settings.

        Parameters
        ----------
        title : str
            The axis title.
        value : str
            The CSV column plotted (mean, min and max over its rows).
        x : str
            The CSV column on the abscissa.
        group : str
            The CSV column whose values each get one curve (legend ``group = value``).
        xlabel, ylabel : str
            Axis labels.
        log_x : bool, default False
            Logarithmic abscissa.
        alpha : float, default 0.2
            Opacity of the bands.

        Returns
        -------
        matplotlib.figure.Figure
        """
        frame = self.frame()
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key, g in frame.groupby(group, sort=False):
            stats = g.groupby(x, sort=True)[value].agg(["mean", "min", "max"])
            plot_band(
                ax,
                stats.index,
                stats["mean"],
                stats["min"],
                stats["max"],
                label=f"{group} = {key}",
                style="o-",
                alpha=alpha,
            )
        if log_x:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig
