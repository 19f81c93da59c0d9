"""The accountant's ledger: every charge and every noise draw, in order (``accountant.ledger``).

:class:`LedgerRows` is the in-memory record the accountant appends to (and, with a
store, the rows other processes committed, read in commit order); :class:`Ledger` is
what a user reads from it: the key levels and their structure, the cells of the
parallel levels (:meth:`Ledger.cells`), one frame per table (:attr:`Ledger.charges`:
one row per charged release; :attr:`Ledger.draws`: one row per noise draw, the two
tables of the persistent store, :mod:`fedpriv.privacy.ledger.store`), and
:meth:`Ledger.record_draws`, which mechanisms call for the draws of a release they
charged. A ``Ledger`` never charges: charging is
:meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend`, which checks the event, the
key and the budget first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from fedpriv.privacy.accounting.events import Event, NonPrivate
from fedpriv.privacy.ledger.cells import (
    SINGLE_CELL,
    cell_list,
    compose_cells,
    label_array,
    normalise_keys,
)
from fedpriv.privacy.ledger.pricing import event_epsilon

if TYPE_CHECKING:  # pandas is imported where a frame is built (import time, issue 23)
    import pandas as pd

__all__ = ["Ledger", "LedgerRows"]


class LedgerRows:
    """The in-memory rows of one accountant: distinct events, charges and draw blocks.

    The accountant appends to it (a charge only once it is validated, priced and, with
    a store, committed there); users read it through :class:`Ledger`.

    Attributes
    ----------
    events : list of Event
        The distinct events charged, indexed by event id.
    event_ids : dict of Event to int
        The id of each event in ``events``.
    charges : list of (int, dict of str to ndarray)
        ``(event id, {level: labels})`` per charge, in charge order; the label arrays
        of one charge have one length (one release per row).
    draws : list of dict
        Draw blocks in order (key levels, node, level, scale, sensitivity); a constant
        column is stored as ``(value, n)``.
    n_draws : int
        Number of noise draws recorded (kept when draw rows are not).
    version : int
        Changes whenever a charge is added (the cell cache's key).
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.event_ids: dict[Event, int] = {}
        self.charges: list[tuple[int, dict[str, np.ndarray]]] = []
        self.draws: list[dict[str, Any]] = []
        self.n_draws = 0
        self.version = 0
        self.cells_cache: dict[tuple, tuple[np.ndarray, list[Event]]] = {}

    def intern(self, event: Event) -> int:
        """Id of ``event``, interning it if new (rows read from a store).

        Parameters
        ----------
        event : Event
            A validated event.

        Returns
        -------
        int
            Its index in :attr:`events`.
        """
        if event not in self.event_ids:
            self.event_ids[event] = len(self.events)
            self.events.append(event)
        return self.event_ids[event]

    def bump(self) -> None:
        """Mark the charges as changed (drops the cached cells)."""
        self.version += 1
        self.cells_cache.clear()

    def add_draws(self, n: int, block: dict[str, Any] | None) -> None:
        """Append already-written draw rows.

        Parameters
        ----------
        n : int
            Number of draws, >= 0.
        block : dict, optional
            The draw rows, or None when draw rows are not kept (only counted).
        """
        if block is not None:
            self.draws.append(block)
        self.n_draws += n


class Ledger:
    """What an accountant has charged and drawn (``accountant.ledger``); read-only.

    dp-accounting's ``PrivacyAccountant.ledger`` is one composed event; this ledger is
    structured: every charge carries a key (one label per key level), the
    ``disjoint`` levels partition the records so their cells compose in parallel, and
    :meth:`cells` gives each kind of cell's sequential composition.

    Parameters
    ----------
    rows : LedgerRows
        The accountant's in-memory rows.
    disjoint, sequential : tuple of str
        The accountant's key levels (see :class:`~fedpriv.privacy.ledger.accountant.
        Accountant`).
    parallel_levels : tuple of str
        The levels whose cells compose in parallel under the accountant's relation.
    keep_draw_rows : bool
        Whether one row per noise draw is kept (else only counted).
    refresh : callable
        Called before every read: reads the rows other processes committed to the
        accountant's store, if any.
    write_draws : callable
        Records validated draw rows (``keys``, ``node``, ``level``, ``scale``,
        ``l1_sensitivity`` keywords), in the store first if there is one.
    """

    def __init__(
        self,
        rows: LedgerRows,
        *,
        disjoint: tuple[str, ...],
        sequential: tuple[str, ...],
        parallel_levels: tuple[str, ...],
        keep_draw_rows: bool,
        refresh: Callable[[], None],
        write_draws: Callable[..., None],
    ) -> None:
        self._rows = rows
        self._disjoint = disjoint
        self._sequential = sequential
        self._parallel_levels = parallel_levels
        self._keep_draw_rows = keep_draw_rows
        self._refresh = refresh
        self._write_draws = write_draws

    @property
    def disjoint(self) -> tuple[str, ...]:
        """Key levels whose cells hold disjoint records (every charge labels each)."""
        return self._disjoint

    @property
    def sequential(self) -> tuple[str, ...]:
        """Key levels that only label charges (composed sequentially)."""
        return self._sequential

    @property
    def levels(self) -> tuple[str, ...]:
        """Every key level: ``disjoint`` then ``sequential``."""
        return self._disjoint + self._sequential

    @property
    def parallel_levels(self) -> tuple[str, ...]:
        """The levels whose cells compose in parallel: ``disjoint``, without ``"agent"``
        under ``user_at_all_agents`` (one user at every agent, FedUCB footnote 4:
        agents then compose sequentially, k-fold over agents)."""
        return self._parallel_levels

    @property
    def keep_draw_rows(self) -> bool:
        """Whether one row per noise draw is kept (``False``: only counted)."""
        return self._keep_draw_rows

    @property
    def n_draws(self) -> int:
        """Number of noise draws in the ledger."""
        self._refresh()
        return self._rows.n_draws

    def cells(self, *, where: Mapping[str, Any] | None = None) -> list[list[tuple[Event, int]]]:
        """The distinct sequential compositions of the ledger, one per kind of cell.

        Cells are the label combinations of :attr:`parallel_levels`; each is a list of
        ``(event, count)`` pairs (how many times each distinct event was charged to
        it), and the guarantee of the ledger is the worst of them (parallel
        composition).

        Parameters
        ----------
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        list of list of (Event, int)
            One composition per distinct kind of cell.

        Raises
        ------
        ValueError
            If ``where`` names an undeclared level.
        """
        if where and (bad := [level for level in where if level not in self.levels]):
            raise ValueError(f"`where` level {bad[0]!r} not declared.")
        if where:
            for level, label in where.items():
                label_array(f"where[{level!r}]", label)
        self._refresh()
        rows = self._rows
        cache_key = (
            rows.version,
            len(rows.charges),
            tuple(sorted((where or {}).items(), key=repr)),
        )
        if cache_key not in rows.cells_cache:
            rows.cells_cache[cache_key] = (
                compose_cells(rows.charges, len(rows.events), self._parallel_levels, where),
                list(rows.events),
            )
        return cell_list(*rows.cells_cache[cache_key])

    def record_draws(
        self, *, keys: Mapping[str, Any], node: Any, level: Any, scale: float, l1_sensitivity: float
    ) -> None:
        """Append ledger rows, one per noise draw, for draws already charged.

        Mechanisms call this for the draws of an event they charged beforehand (for a
        tree: when a node's memoised noise is drawn). Appending is O(1); with a store
        the rows are committed there first.

        Parameters
        ----------
        keys : mapping of str to label or array of labels
            One label (or a 1-D array of labels, one per draw) per declared level.
        node : int or array of int64, shape (n_draws,)
            Index of the tree node (or release) each draw belongs to.
        level : int or array of int64, shape (n_draws,)
            Tree level of each draw (0 for the leaves or a flat release).
        scale : float
            Laplace scale b (or Gaussian stddev σ) of the draws, in units of the
            released statistic.
        l1_sensitivity : float
            Sensitivity Δ of the released statistic per neighboring step.

        Raises
        ------
        ValueError, TypeError
            If ``keys`` names an undeclared level, misses a disjoint level or holds a
            label that is not a scalar (as for ``Accountant.spend``).
        StoreError
            If the accountant's store was closed.
        """
        if _aligned(keys, node, level, self._disjoint, self.levels):
            # A mechanism's rows: one int64 node and level and one label per draw, every
            # label array already 1-D of a scalar dtype (the checks below, done cheaply).
            self._write_draws(
                keys=keys, node=node, level=level, scale=scale, l1_sensitivity=l1_sensitivity
            )
            return
        arrays = normalise_keys(keys, self._disjoint, self.levels)
        n = max([a.size for a in arrays.values()] + [np.size(node)])
        arrays = {k: (np.repeat(a, n) if a.size == 1 and n > 1 else a) for k, a in arrays.items()}
        self._write_draws(
            keys=arrays,
            node=np.broadcast_to(np.asarray(node, dtype=np.int64), (n,)),
            level=np.broadcast_to(np.asarray(level, dtype=np.int64), (n,)),
            scale=scale,
            l1_sensitivity=l1_sensitivity,
        )

    @property
    def draws(self) -> pd.DataFrame:
        """One row per noise draw: key levels, node, level, scale, sensitivity, epsilon.

        ``epsilon`` is the draw's ``l1_sensitivity / scale``. Empty (with these
        columns) when draw rows are not kept.
        """
        import pandas as pd

        columns = list(self.levels) + ["node", "level", "scale", "l1_sensitivity", "epsilon"]
        self._refresh()
        if not self._rows.draws:
            return pd.DataFrame(columns=columns)
        # One frame per run of consecutive blocks with the same columns and dtypes (their
        # arrays joined by numpy), then pandas' concat over the runs: the frame of
        # concatenating every block's frame (tests/privacy/test_ledger_frame.py), without
        # one DataFrame per block (a Fed_UCB run records thousands).
        frames, run, signature = [], [], None
        for block in self._rows.draws:
            arrays = {
                k: (np.full(v[1], v[0]) if isinstance(v, tuple) else v) for k, v in block.items()
            }
            shape = tuple((k, a.dtype) for k, a in arrays.items())
            if shape != signature and run:
                frames.append(_joined_frame(run))
                run = []
            run.append(arrays)
            signature = shape
        frames.append(_joined_frame(run))
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        frame["epsilon"] = frame["l1_sensitivity"] / frame["scale"]
        return frame.reindex(columns=columns)

    @property
    def charges(self) -> pd.DataFrame:
        """One row per charged release: key levels, event type, parameters and pure ε."""
        import pandas as pd

        rows = []
        self._refresh()
        for event_id, arrays in self._rows.charges:
            event = self._rows.events[event_id]
            n = max(a.size for a in arrays.values())
            frame = pd.DataFrame(
                {level: _column(arrays[level]) for level in arrays if level != SINGLE_CELL},
                index=range(n),
            )
            frame["event"] = type(event).__name__
            frame["scale"] = getattr(event, "scale", math.nan)
            frame["horizon"] = getattr(event, "horizon", 0)
            frame["released_prefixes"] = getattr(event, "released_prefixes", 0) or 0
            frame["l1_sensitivity"] = getattr(event, "l1_sensitivity", math.nan)
            frame["epsilon"] = np.full(n, event_epsilon(event))
            frame["reason"] = getattr(event, "reason", "")
            rows.append(frame)
        if not rows:
            return pd.DataFrame(columns=list(self.levels) + ["event", "epsilon"])
        for level in self.levels:  # labels of several kinds: object, so none is coerced
            if len({str(f[level].dtype) for f in rows if level in f}) > 1:
                for f in rows:
                    if level in f:
                        f[level] = f[level].astype(object)
        return pd.concat(rows, ignore_index=True)

    def rows(self) -> Iterator[tuple[Event, dict[str, np.ndarray]]]:
        """Each charge as it was recorded, in charge order.

        Yields
        ------
        event : Event
            The charged event.
        keys : dict of str to ndarray
            One read-only 1-D label array per key level of the charge, all of one length
            (one release per row); a charge made without a key has the one column
            :data:`~fedpriv.privacy.ledger.cells.SINGLE_CELL`.
        """
        self._refresh()
        for event_id, arrays in list(self._rows.charges):
            yield self._rows.events[event_id], {k: _read_only(a) for k, a in arrays.items()}

    def non_private_reasons(self, *, where: Mapping[str, Any] | None = None) -> list[str]:
        """Reasons of the raw (ε = ∞) releases charged, optionally restricted by ``where``.

        Parameters
        ----------
        where : mapping, optional
            Keep charges with at least one row matching every ``level: label`` given.

        Returns
        -------
        list of str
            The distinct ``NonPrivate.reason`` strings, sorted.
        """
        reasons = set()
        self._refresh()
        for event_id, arrays in self._rows.charges:
            event = self._rows.events[event_id]
            if not isinstance(event, NonPrivate):
                continue
            if where and not all(
                level in arrays and np.any(arrays[level] == label) for level, label in where.items()
            ):
                continue
            reasons.add(event.reason)
        return sorted(reasons)


def _aligned(
    keys: Any, node: Any, level: Any, disjoint: tuple[str, ...], levels: tuple[str, ...]
) -> bool:
    """Whether draw rows are already in the ledger's form: ``node`` and ``level`` 1-D int64
    arrays of one length ``n``, and ``keys`` a dict naming every disjoint level and only
    declared ones, each a 1-D array of ``n`` labels of a scalar dtype (bool, int, float,
    str; an object array is checked label by label by :func:`~fedpriv.privacy.ledger.cells.
    normalise_keys` instead)."""
    if not (
        type(node) is np.ndarray
        and type(level) is np.ndarray
        and node.dtype == np.int64
        and level.dtype == np.int64
        and node.ndim == 1
        and level.shape == node.shape
        and type(keys) is dict
    ):
        return False
    n = node.size
    for name, labels in keys.items():
        if not (
            name in levels
            and type(labels) is np.ndarray
            and labels.ndim == 1
            and labels.size == n
            and labels.dtype.kind in "biufU"
        ):
            return False
    return all(name in keys for name in disjoint)


def _read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through."""
    view = array.view()
    view.flags.writeable = False
    return view


def _joined_frame(blocks: list[dict[str, np.ndarray]]):
    """One DataFrame of ``blocks`` (same keys, same dtypes), their rows in order."""
    import pandas as pd

    if len(blocks) == 1:
        return pd.DataFrame({k: _column(v) for k, v in blocks[0].items()})
    return pd.DataFrame({k: _column(np.concatenate([b[k] for b in blocks])) for k in blocks[0]})


def _column(array: np.ndarray):
    """``array`` as a frame column; an object array stays object (pandas would infer
    ``str`` from str and None labels and turn None into NaN)."""
    if array.dtype.kind != "O":
        return array
    import pandas as pd

    return pd.Series(array, dtype=object, index=range(array.size), copy=False)
