"""``_max_cell_rows`` (the charge-size check's fullest cell) equals its former
three-pass implementation, kept here as the oracle, on every kind of label column."""

from __future__ import annotations

import numpy as np
from fedpriv.privacy.ledger.cells import cell_counts, integer_cells, max_cell_rows
from hypothesis import given, settings
from hypothesis import strategies as st


def _max_cell_rows_oracle(arrays: dict[str, np.ndarray], parallel_levels: tuple[str, ...]) -> int:
    """The implementation before issue 23's one-pass version, verbatim."""
    rows = max(a.size for a in arrays.values())
    if not parallel_levels or rows <= 1:
        return rows
    columns = [arrays[level] for level in parallel_levels]
    for column in columns:
        if not (
            isinstance(column, np.ndarray)
            and column.dtype.kind in "iub"
            and column.ndim == 1
            and column.size == rows
        ):
            return rows
        labels = column.astype(np.int64, copy=False)
        up = labels[1:] > labels[:-1]
        if up.all():
            return 1  # labels all distinct in one level: one row per cell
        down = labels[1:] < labels[:-1]
        if down.all():
            return 1
        if len(columns) == 1 and not (up.any() and down.any()):
            # sorted labels: the longest run is the fullest cell
            edges = np.flatnonzero(down if down.any() else up)
            return int(np.diff(np.concatenate(([-1], edges, [column.size - 1]))).max())
    coded = integer_cells(columns)
    return rows if coded is None else int(np.bincount(coded[1]).max())


_EXTREME = st.sampled_from([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1, 1])


@st.composite
def _column(draw, rows: int) -> np.ndarray:
    """An integer label column of ``rows`` rows: random, sorted either way, strictly
    monotone, constant, or a broadcast key (each label repeated over a run)."""
    kind = draw(st.sampled_from(["random", "sorted", "reversed", "strict", "const", "runs"]))
    values = draw(st.lists(st.one_of(st.integers(-5, 5), _EXTREME), min_size=rows, max_size=rows))
    column = np.array(values, dtype=np.int64)
    if kind == "sorted":
        column = np.sort(column)
    elif kind == "reversed":
        column = np.sort(column)[::-1].copy()
    elif kind == "strict":
        column = np.arange(rows, dtype=np.int64) * draw(st.sampled_from([1, -1, 7]))
    elif kind == "const":
        column = np.full(rows, values[0], dtype=np.int64)
    elif kind == "runs":
        repeat = draw(st.integers(1, 4))
        column = np.repeat(column, repeat)[:rows]
        if column.size < rows:
            column = np.concatenate([column, np.full(rows - column.size, column[-1])])
        if draw(st.booleans()):
            column = np.sort(column)
    dtype = draw(st.sampled_from([np.int64, np.int32, np.uint8, bool]))
    if dtype is not np.int64:
        column = column.astype(dtype)
    return column


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data(), st.integers(1, 30), st.integers(1, 3))
def test_equals_the_former_implementation(data, rows, n_levels) -> None:
    levels = tuple(f"level{i}" for i in range(n_levels))
    arrays = {level: data.draw(_column(rows)) for level in levels}
    expected = _max_cell_rows_oracle(arrays, levels)
    assert max_cell_rows(arrays, levels) == expected
    assert expected >= max(cell_counts(arrays, levels).values())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 200), st.integers(1, 30), st.integers(-(2**62), 2**62), st.booleans())
def test_broadcast_keys_are_their_repeat(size, m, start, descending) -> None:
    """An audit's batch key ``arange(start, start + size)[:, None]`` broadcast over ``m``
    nodes: every cell holds ``m`` rows (``size * m`` when one label)."""
    labels = np.arange(start, start + size)[::-1] if descending else np.arange(start, start + size)
    flat = np.broadcast_to(labels[:, None], (size, m)).ravel()
    arrays = {"sample": flat}
    expected = _max_cell_rows_oracle(arrays, ("sample",))
    assert max_cell_rows(arrays, ("sample",)) == expected == (m if size * m > 1 else 1)


def test_non_integer_columns_fall_back_to_every_row() -> None:
    arrays = {"a": np.array(["x", "y", "x"]), "b": np.arange(3)}
    assert max_cell_rows(arrays, ("a", "b")) == _max_cell_rows_oracle(arrays, ("a", "b")) == 3
    arrays = {"a": np.arange(3), "b": np.array([0.5, 1.5, 0.5])}
    assert max_cell_rows(arrays, ("a", "b")) == _max_cell_rows_oracle(arrays, ("a", "b")) == 1
    arrays = {"a": np.array([1, 1, 2]), "b": np.array([0.5, 1.5, 0.5])}
    assert max_cell_rows(arrays, ("a", "b")) == _max_cell_rows_oracle(arrays, ("a", "b")) == 3
