"""Cells of a structured ledger: key labels, the parallel cells they name, and their sizes.

A charge (:meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend`) is an event id and
one 1-D label array per key level; the *cells* are the label combinations of the
parallel key levels (:attr:`~fedpriv.privacy.ledger.ledger.Ledger.parallel_levels`),
and a cell's *composition* is how many times each distinct event was charged to it
(sequential composition inside a cell, parallel composition across cells). The
functions here are pure: they read charges and never record one, so a candidate
charge can be priced and refused before anything changes.

:class:`CellTally` keeps the one ceiling every accepted ledger obeys: no cell holds more
than :data:`MAX_CELL_RELEASES` releases, so every query can price every cell.

Length: the key rules (which labels name one cell), the grouping of rows into cells and
the ceiling's counting must agree label for label (NaN and None one label, ``True`` and
``1`` one label), so they are kept side by side; each function is short.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import MAX_COUNT, Event, event_shape
from fedpriv.privacy.errors import ResourceLimitError

__all__ = [
    "MAX_CELL_RELEASES",
    "SINGLE_CELL",
    "CellTally",
    "cell_counts",
    "cell_list",
    "check_cell_sizes",
    "compose_cells",
    "integer_cells",
    "label_array",
    "max_cell_rows",
    "normalise_keys",
]

#: Most releases one cell may hold when a query prices it (:data:`fedpriv.privacy.
#: events.MAX_COUNT`): beyond it the PLD and optimal routes overflow or allocate
#: without bound, so the query raises :class:`~fedpriv.privacy.errors.
#: ResourceLimitError` instead, and a charge that would fill a cell beyond it is
#: refused with that error (budget or not), so every accepted ledger can be priced.
MAX_CELL_RELEASES = MAX_COUNT

#: Label column of a charge made without any key level (one release, one cell); it
#: never appears in an exported frame.
SINGLE_CELL = "__single_cell__"


_LABEL_TYPES = (str, int, float, bool, type(None), np.str_, np.integer, np.floating, np.bool_)


def _label_kind(kind: type) -> str:
    """The NumPy kind a label of type ``kind`` would get on its own (``"N"``: other)."""
    if issubclass(kind, (bool, np.bool_)):
        return "b"
    if issubclass(kind, (int, np.integer)):
        return "i"
    if issubclass(kind, (float, np.floating)):
        return "f"
    if issubclass(kind, (str, np.str_)):
        return "U"
    return "N"


def label_array(level: str, labels: Any) -> np.ndarray:
    """``labels`` of one key level as a 1-D array; refuses what is not a scalar label.

    A set or dict is refused by name rather than read as one (unhashable) label, and
    so is any label that is not a ``str``, ``int``, ``float``, ``bool`` or ``None``.

    Each label keeps its type and value (issue 38): a list or tuple whose labels are
    not all of one kind (``["x", 2]``, ``[True, "x"]``, ``[2.5, "x"]``, ``[True, 2]``,
    ``[2, 2.5]``) becomes an object array of the labels as given (NumPy scalars as
    the Python scalars they hold), where ``np.asarray`` would coerce them to one
    dtype (``2`` to ``'2'``, a separate cell). A list of one kind, a scalar or an
    ndarray keeps its NumPy dtype. Which labels name the same cell is decided later,
    by value (see :meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend`).

    Parameters
    ----------
    level : str
        The key level's name (used in the error messages).
    labels : label or 1-D sequence of labels
        A ``str``, ``int``, ``float``, ``bool`` or ``None`` label, or a 1-D list, tuple
        or ndarray of them.

    Returns
    -------
    ndarray, shape (n_labels,)
        The labels; object dtype when they are of several kinds.

    Raises
    ------
    TypeError
        If ``labels`` is a mapping or set, or holds a label of another type.
    ValueError
        If ``labels`` has more than one dimension.
    """
    allowed = "a scalar label (str, int, float, bool or None) or a 1-D sequence of them"
    if isinstance(labels, (Mapping, set, frozenset)):
        raise TypeError(
            f"key level {level!r} must be {allowed}; got a {type(labels).__name__} "
            f"({labels!r:.60}), which is not a label (give a list for several cells)."
        )
    try:
        array = np.asarray(labels)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"key level {level!r} must be {allowed}; got {labels!r:.60} ({error})."
        ) from None
    if array.ndim > 1:
        raise ValueError(
            f"key level {level!r} must be {allowed}; got an array of shape {array.shape}."
        )
    array = np.atleast_1d(array).ravel()
    if array.dtype.kind not in "biufUO":
        raise TypeError(f"key level {level!r} must be {allowed}; got dtype {array.dtype}.")
    if (
        isinstance(labels, (list, tuple))
        and array.dtype.kind in "iufU"  # a dtype NumPy may have coerced other kinds to
        and len({_label_kind(kind) for kind in set(map(type, labels))}) > 1
    ):
        mixed = np.empty(len(labels), dtype=object)
        mixed[:] = list(labels)
        array = mixed
    if array.dtype.kind == "O":
        for label in array:
            if not isinstance(label, _LABEL_TYPES):
                raise TypeError(
                    f"key level {level!r} must be {allowed}; got a label of type "
                    f"{type(label).__name__} ({label!r:.60})."
                )
        array = np.fromiter(
            (label.item() if isinstance(label, np.generic) else label for label in array),
            dtype=object,
            count=array.size,
        )
    return array


def normalise_keys(
    keys: Mapping[str, Any] | None, disjoint: tuple[str, ...], levels: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """One charge's key as label arrays of one length, checked against the key levels.

    Parameters
    ----------
    keys : mapping of str to label or 1-D sequence of labels, optional
        One label (or array of labels) per key level; length-1 arrays broadcast.
    disjoint : tuple of str
        The levels every key must label.
    levels : tuple of str
        Every declared level (``disjoint`` then the sequential ones).

    Returns
    -------
    dict of str to ndarray
        One 1-D label array per level given, all of one length (see
        :func:`label_array`); ``{SINGLE_CELL: [0]}`` for an empty key.

    Raises
    ------
    TypeError
        If ``keys`` is not a mapping or a label is not a scalar.
    ValueError
        If ``keys`` names an undeclared level, misses a disjoint level, or its arrays
        have different lengths.
    """
    if keys is None:
        keys = {}
    if not isinstance(keys, Mapping):
        raise TypeError(f"`key` must be a mapping of level -> label, got {type(keys).__name__}.")
    unknown = sorted((level for level in keys if level not in levels), key=repr)
    if unknown:
        raise ValueError(
            f"key level(s) {unknown} not declared; declared levels are {list(levels)}."
        )
    missing = [level for level in disjoint if level not in keys]
    if missing:
        raise ValueError(f"key is missing the disjoint level(s) {missing}.")
    arrays = {level: label_array(level, keys[level]) for level in keys}
    if not arrays:  # no structure: one charge to the single cell
        return {SINGLE_CELL: np.zeros(1, dtype=np.int64)}
    n = max(a.size for a in arrays.values())
    if any(a.size not in (1, n) for a in arrays.values()):
        raise ValueError("all key arrays must have the same length (or length 1).")
    arrays = {k: (np.repeat(a, n) if a.size == 1 and n > 1 else a) for k, a in arrays.items()}
    return arrays


def compose_cells(
    charges: Sequence[tuple[int, dict[str, np.ndarray]]],
    n_events: int,
    parallel_levels: tuple[str, ...],
    where: Mapping[str, Any] | None,
) -> np.ndarray:
    """Distinct cell compositions of ``charges``: counts matrix (n_compositions, n_events).

    Pure: reads ``charges`` only, so a candidate charge can be priced before it is
    recorded.

    Parameters
    ----------
    charges : sequence of (int, dict of str to ndarray)
        ``(event id, {level: labels})`` per charge, labels of one length per charge.
    n_events : int
        Number of distinct events (the ids are ``0 .. n_events - 1``).
    parallel_levels : tuple of str
        The key levels whose label combinations are the cells.
    where : mapping of str to label, optional
        Keep the rows whose label matches every ``level: label`` given.

    Returns
    -------
    ndarray of int64, shape (n_compositions, n_events)
        Each distinct composition once: row ``i`` counts the releases of each event in
        one kind of cell.
    """
    empty = np.zeros((0, n_events), dtype=np.int64)
    if not charges:
        return empty
    sizes = [max(a.size for a in arrays.values()) for _, arrays in charges]
    columns: dict[str, np.ndarray] = {}
    for level in set(parallel_levels) | set(where or {}):
        parts = [
            arrays[level] if level in arrays else np.full(n, None, dtype=object)
            for (_, arrays), n in zip(charges, sizes)
        ]
        columns[level] = np.concatenate([np.asarray(p, dtype=object) for p in parts])
    event_column = np.repeat([event_id for event_id, _ in charges], sizes)
    keep = np.ones(event_column.size, dtype=bool)
    for level, label in (where or {}).items():
        keep &= columns[level] == label
    if not keep.any():
        return empty
    if parallel_levels:
        import pandas as pd

        frame = pd.DataFrame({level: columns[level][keep] for level in parallel_levels})
        cell = frame.groupby(list(parallel_levels), sort=False, dropna=False).ngroup()
        cell = cell.to_numpy()
    else:  # a single cell: nothing partitions the records
        cell = np.zeros(int(keep.sum()), dtype=np.int64)
    n_cells = int(cell.max()) + 1
    counts = np.bincount(
        cell * n_events + event_column[keep], minlength=n_cells * n_events
    ).reshape(n_cells, n_events)
    return np.unique(counts, axis=0)


def cell_counts(arrays: dict[str, np.ndarray], parallel_levels: tuple[str, ...]) -> dict:
    """Rows of one charge per parallel cell, as ``{labels tuple: rows}``.

    Labels compare as the queries group them (pandas, ``dropna=False``): by value,
    with every NaN and None one label.

    Parameters
    ----------
    arrays : dict of str to ndarray
        One 1-D label array per key level, all of one length (one charge's keys).
    parallel_levels : tuple of str
        The key levels whose label combinations are the cells.

    Returns
    -------
    dict of tuple to int
        Rows per cell, keyed by the cell's labels in ``parallel_levels`` order.
    """
    rows = max(a.size for a in arrays.values())
    if not parallel_levels:
        return {(): rows}
    fast = _numeric_cell_counts([arrays[level] for level in parallel_levels])
    if fast is not None:
        return fast
    columns = [
        [_NA if _is_na(label) else label for label in arrays[level].tolist()]
        for level in parallel_levels
    ]
    counts: dict = {}
    for cell in zip(*columns):
        counts[cell] = counts.get(cell, 0) + 1
    return counts


def max_cell_rows(arrays: dict[str, np.ndarray], parallel_levels: tuple[str, ...]) -> int:
    """Rows of one charge in its fullest parallel cell (an upper bound where the
    labels are not integers: every row in one cell).

    A strictly monotone column holds one row per cell (then 1); a single sorted
    column's fullest cell is its longest run of one label; otherwise the rows of
    every cell are counted (:func:`integer_cells`). A column whose first two labels
    differ is checked for a strict order first (one ``>`` pass, a ``<`` pass if no
    label rises). Sortedness and runs come from one ``!=`` pass: the positions where
    the label changes, between which the labels are equal, so the column is sorted
    iff the label moves one way at every change (read at those positions only). A
    broadcast key (each label repeated over a run of rows) costs that one pass.

    Parameters
    ----------
    arrays : dict of str to ndarray
        One 1-D label array per key level (one charge's keys).
    parallel_levels : tuple of str
        The key levels whose label combinations are the cells.

    Returns
    -------
    int
        At least the number of rows of the fullest cell.
    """
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
        if labels[1] != labels[0]:  # may be strictly monotone
            up = labels[1:] > labels[:-1]
            if up.all():
                return 1
            if not up.any() and (labels[1:] < labels[:-1]).all():
                return 1
        if len(columns) > 1:
            continue
        change = np.flatnonzero(labels[1:] != labels[:-1])
        if change.size < rows - 1:  # else all distinct, not strictly monotone: unsorted
            rises = labels[change + 1] > labels[change]
            if rises.all() or not rises.any():  # sorted: the longest run is the fullest
                return int(np.diff(np.concatenate(([-1], change, [rows - 1]))).max())
    coded = integer_cells(columns)
    return rows if coded is None else int(np.bincount(coded[1]).max())


def integer_cells(columns: list[np.ndarray]) -> tuple[list, np.ndarray, tuple] | None:
    """``(labels per level, flat cell index per row, dims)`` for integer or boolean
    label columns of equal length; ``None`` for any other columns (object, float,
    unequal lengths, uint64 past int64, or more than 2⁴⁰ label combinations).

    A column whose labels span a dense range is coded by its offsets; a sparse one
    through ``np.unique``.

    Parameters
    ----------
    columns : list of ndarray
        One 1-D label column per key level.

    Returns
    -------
    tuple or None
        ``(labels, flat, dims)``: the distinct labels per level, each row's flat cell
        index (int64, shape (n_rows,)) and the number of labels per level; ``None``
        when the columns cannot be coded so.
    """
    rows = max((c.size for c in columns), default=0)
    if not all(
        isinstance(c, np.ndarray) and c.dtype.kind in "iub" and c.ndim == 1 and c.size == rows
        for c in columns
    ):
        return None
    if any(
        c.dtype.kind == "u" and c.size and int(c.max()) > np.iinfo(np.int64).max for c in columns
    ):
        return None
    labels, codes = [], []
    for column in columns:
        column = column.astype(np.int64)
        low, high = (int(column.min()), int(column.max())) if rows else (0, 0)
        if high - low < 4 * rows + 1024:  # a dense range: the offsets are the codes
            labels.append(np.arange(low, high + 1))
            codes.append(column - low)
        else:
            unique, code = np.unique(column, return_inverse=True)
            labels.append(unique)
            codes.append(code.ravel())
    dims = tuple(len(u) for u in labels)
    if math.prod(dims) > 2**40:
        return None
    return labels, np.ravel_multi_index(codes, dims), dims


def _numeric_cell_counts(columns: list[np.ndarray]) -> dict | None:
    """:func:`cell_counts` in C when every column is integer or boolean.

    Such labels have no NaN, and Python compares and hashes ``True``, ``1`` and their
    int64 values alike, so the keys are those of the per-row loop; charges of 10⁶ keys
    (the audits' batches) are counted in C instead of a Python loop per row. ``None``
    (object, float or mixed columns, or unequal lengths): the caller loops.
    """
    coded = integer_cells(columns)
    if coded is None:
        return None
    labels, flat, dims = coded
    counts = np.bincount(flat)
    present = np.flatnonzero(counts)
    index = np.unravel_index(present, dims)
    cells = zip(*(u[i].tolist() for u, i in zip(labels, index)))
    return {cell: int(k) for cell, k in zip(cells, counts[present].tolist())}


class _NAType:
    """The one label every missing (NaN or None) label counts as."""

    def __repr__(self) -> str:
        return "nan"


_NA = _NAType()


def _is_na(label: Any) -> bool:
    return label is None or (isinstance(label, (float, np.floating)) and math.isnan(label))


def check_cell_sizes(cells: list[list[tuple[Event, int]]]) -> None:
    """Refuse to price a cell of more than :data:`MAX_CELL_RELEASES` releases.

    Parameters
    ----------
    cells : list of list of (Event, int)
        Cell compositions, as :func:`cell_list` gives them.

    Raises
    ------
    ResourceLimitError
        If a cell holds more than :data:`MAX_CELL_RELEASES` releases (a ``SelfComposed``
        or ``Composed`` event counted as the releases it describes).
    """
    for cell in cells:
        releases = sum(count * event_shape(event)[1] for event, count in cell)
        if releases > MAX_CELL_RELEASES:
            raise ResourceLimitError(
                f"a cell of the ledger holds {releases:,} releases, more than "
                f"MAX_CELL_RELEASES = {MAX_CELL_RELEASES:,} that a query prices; split "
                "the ledger over a disjoint key level or charge a coarser event."
            )


def cell_list(compositions: np.ndarray, events: Sequence[Event]) -> list[list[tuple[Event, int]]]:
    """Each composition row as ``[(event, count), ...]`` over its nonzero counts.

    Parameters
    ----------
    compositions : ndarray of int64, shape (n_compositions, n_events)
        As :func:`compose_cells` gives it.
    events : sequence of Event
        The events, indexed by id.

    Returns
    -------
    list of list of (Event, int)
        One composition per row.
    """
    return [[(events[j], int(row[j])) for j in np.flatnonzero(row)] for row in compositions]


class CellTally:
    """Releases per parallel cell of the recorded charges: the cell-size ceiling.

    Refuses a charge that would put more than :data:`MAX_CELL_RELEASES` releases in one
    cell (with or without a budget), so that no accepted ledger has a cell its queries
    refuse to price.

    O(1) while the whole ledger holds fewer releases than the ceiling; beyond it, an
    upper bound on the fullest cell (the sum of each charge's fullest cell, counted in
    C for integer labels) decides while it leaves room, and only when it does not is
    a tally of releases per cell built once and then updated with the charges appended
    since, O(rows) per charge. Only the tally (a cache of the recorded charges) is
    written; an exception while updating it drops it, to be rebuilt.

    Parameters
    ----------
    parallel_levels : tuple of str
        The key levels whose label combinations are the cells.
    """

    def __init__(self, parallel_levels: tuple[str, ...]) -> None:
        self.parallel_levels = parallel_levels
        # Releases per parallel cell, folded in from charges[:n] (built lazily, once
        # the total could exceed MAX_CELL_RELEASES): [n, total bound, cells, fullest].
        self._tally: list = [0, 0, None, None]

    def check(
        self,
        event: Event,
        arrays: dict[str, np.ndarray],
        charges: Sequence[tuple[int, dict[str, np.ndarray]]],
        events: Sequence[Event],
    ) -> None:
        """Raise unless charging ``event`` to ``arrays`` keeps every cell within the ceiling.

        Parameters
        ----------
        event : Event
            The candidate charge's event.
        arrays : dict of str to ndarray
            Its keys: one 1-D label array per key level, all of one length.
        charges : sequence of (int, dict of str to ndarray)
            The recorded charges, ``(event id, keys)``, in order; the tally folds in
            those it has not seen.
        events : sequence of Event
            The recorded events, indexed by id.

        Raises
        ------
        ResourceLimitError
            If a cell would hold more than :data:`MAX_CELL_RELEASES` releases.
        """
        releases = event_shape(event)[1]
        rows = max(a.size for a in arrays.values())
        tally = self._tally
        try:
            for event_id, recorded in charges[tally[0] :]:
                _fold(tally, events[event_id], recorded, self.parallel_levels)
                tally[0] += 1
            if tally[1] + releases * rows <= MAX_CELL_RELEASES:
                return
            # tally[3] bounds the fullest cell from above (each charge adds its fullest
            # cell's releases): while that bound leaves room, no cell can pass the
            # ceiling and no per-cell count is kept (audits charge 10⁶ new cells per
            # batch; counting each in Python cost seconds per charge).
            if tally[3] is None:  # first time past the ceiling: bound the fullest cell
                self._refold(charges, events, cells=False)
            if (
                tally[3] + releases * max_cell_rows(arrays, self.parallel_levels)
                <= MAX_CELL_RELEASES
            ):
                return
            if tally[2] is None:  # the bound is too loose: count every cell
                self._refold(charges, events, cells=True)
        except BaseException:
            self._tally = [0, 0, None, None]
            raise
        for cell, k in cell_counts(arrays, self.parallel_levels).items():
            held = tally[2].get(cell, 0)
            if held + k * releases > MAX_CELL_RELEASES:
                raise ResourceLimitError(
                    f"charging {event} would put {held + k * releases:,} releases in the "
                    f"cell {dict(zip(self.parallel_levels, cell))}, more than "
                    f"MAX_CELL_RELEASES = {MAX_CELL_RELEASES:,} that a query prices; "
                    "nothing was charged. Split the ledger over a disjoint key level or "
                    "charge a coarser event."
                )

    def _refold(self, charges: Sequence, events: Sequence[Event], *, cells: bool) -> None:
        """Rebuild the tally over every recorded charge, with the fullest-cell bound
        and, if ``cells``, the exact count per cell."""
        tally = self._tally
        tally[:] = [0, 0, {} if cells else None, 0]
        for event_id, recorded in charges:
            _fold(tally, events[event_id], recorded, self.parallel_levels)
            tally[0] += 1


def _fold(tally: list, event: Event, arrays: dict[str, np.ndarray], parallel_levels) -> None:
    """Add one recorded charge to a ``[n, bound, cells]`` tally (see
    :class:`CellTally`); ``n`` is the caller's."""
    releases = event_shape(event)[1]
    tally[1] += releases * max(a.size for a in arrays.values())
    if tally[2] is not None:
        cells = tally[2]
        counts = cell_counts(arrays, parallel_levels)
        for cell, k in counts.items():
            cells[cell] = cells.get(cell, 0) + k * releases
        tally[3] += releases * max(counts.values(), default=0)
    elif tally[3] is not None:
        tally[3] += releases * max_cell_rows(arrays, parallel_levels)
