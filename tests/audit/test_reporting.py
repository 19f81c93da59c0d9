"""The shared report writers: Markdown tables, regret bands, staged figure files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedpriv.audit.reporting.figures import BandFigure, figure_stem, plot_band, write_figure
from fedpriv.audit.reporting.files import staged_files
from fedpriv.audit.reporting.tables import format_cell, markdown_table
from hypothesis import given, settings
from hypothesis import strategies as st

_PNG = b"\x89PNG\r\n\x1a\n"


def test_markdown_table_prints_the_index_and_floats_to_four_digits():
    frame = pd.DataFrame(
        {"regret": [1 / 3, 2.0], "n": [3, 12345], "ok": [True, False]},
        index=pd.Index(["a", "b"], name="label"),
    )
    assert markdown_table(frame) == (
        "| label | regret | n | ok |\n"
        "|---|---|---|---|\n"
        "| a | 0.3333 | 3 | True |\n"
        "| b | 2 | 12345 | False |"
    )
    assert markdown_table(frame, index=False).splitlines()[0] == "| regret | n | ok |"
    assert markdown_table(frame, digits=2).splitlines()[2] == "| a | 0.33 | 3 | True |"


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=6
    )
)
def test_markdown_table_has_one_line_per_row_and_equal_cells(values):
    table = markdown_table(pd.DataFrame({"x": values, "y": range(len(values))}))
    lines = table.splitlines()
    assert len(lines) == len(values) + 2
    assert {line.count("|") for line in lines} == {4}
    assert all(
        float(line.split("|")[2]) == pytest.approx(v, rel=1e-3)
        for line, v in zip(lines[2:], values)
    )


def test_table_errors_name_the_parameter():
    with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame"):
        markdown_table([[1, 2]])
    with pytest.raises(ValueError, match="`digits` must be an integer >= 1"):
        format_cell(1.0, digits=0)


def test_staged_files_move_everything_or_nothing(tmp_path):
    folder = tmp_path / "paper"
    with staged_files(folder, prefix="fig") as staging:
        (staging / "a.md").write_text("one")
        (staging / "b.csv").write_text("two")
    (folder / "kept.png").write_text("other file")
    assert sorted(p.name for p in folder.iterdir()) == ["a.md", "b.csv", "kept.png"]
    with pytest.raises(RuntimeError, match="disk full"), staged_files(folder) as staging:
        (staging / "a.md").write_text("half")
        raise RuntimeError("disk full")
    # The previous files are intact, nothing half-written moved in, no staging left.
    assert (folder / "a.md").read_text() == "one"
    assert sorted(p.name for p in folder.iterdir()) == ["a.md", "b.csv", "kept.png"]


def test_figure_stem_drops_the_family_prefix_and_refuses_other_names():
    assert figure_stem("feducb-fig1a", "feducb") == "fig1a"
    assert figure_stem("li-song-fig12", "li_song") == "fig12"
    assert figure_stem("feducb-decentralized-schedules", "feducb") == "decentralized-schedules"
    with pytest.raises(ValueError, match="`name` must be 'li-song-<figure>'"):
        figure_stem("feducb-fig1a", "li_song")
    with pytest.raises(ValueError, match="`name` must be"):
        figure_stem("feducb-", "feducb")


def test_band_figure_tables_bands_that_contain_their_mean(tmp_path):
    rng = np.random.default_rng(3)
    fig = BandFigure()
    times = np.arange(1, 6)
    for label in ("a", "b"):
        curve = np.cumsum(rng.random((3, times.size)), axis=1)
        fig.add(label, [{"label": label, "trial": j} for j in range(3)], times, curve)
    curves = fig.curve_frame()
    assert list(curves.columns) == ["label", "t", "mean", "min", "max"]
    assert len(curves) == 2 * times.size
    assert ((curves["min"] <= curves["mean"]) & (curves["mean"] <= curves["max"])).all()
    assert len(fig.frame()) == 6
    with pytest.raises(ValueError, match="`curve` must have shape"):
        fig.add("c", [], times, np.ones(5))
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots()
    fig.draw(ax)
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    files = write_figure(
        tmp_path / "paper", "fig1", figure, table=fig.frame(), curves=curves, note="# fig1\n"
    )
    assert [p.name for p in files] == ["fig1.csv", "fig1.md", "fig1.png", "fig1_curves.csv"]
    assert files[2].read_bytes()[:8] == _PNG
    assert sorted(p.name for p in (tmp_path / "paper").iterdir()) == [p.name for p in files]


def test_plot_band_refuses_an_opacity_outside_0_1():
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="`alpha` must be in"):
        plot_band(ax, [0, 1], [0, 1], [0, 1], [0, 1], label="x", alpha=2.0)
    plt.close("all")
