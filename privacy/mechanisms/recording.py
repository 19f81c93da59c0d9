"""Check mode: the pre-noise statistic of every release, recorded, replayed and compared.

An accountant prices the releases as they are *declared*: each entry's
``l1_sensitivity`` and the key levels declared ``disjoint`` (a record lives in one cell
of them). Whether the algorithm's statistics honour the declaration is a property of
the code, and a coupled pair of runs shows it: run the algorithm on a neighbouring
pair D, D' with every random stream coupled and compare, release by release, the
statistics before noise. Under :func:`record_releases` every release function of
:mod:`fedpriv.privacy.mechanisms` (:func:`~fedpriv.privacy.mechanisms.laplace_release`,
:func:`~fedpriv.privacy.mechanisms.laplace_noise`,
:func:`~fedpriv.privacy.mechanisms.raw_release` and the
:class:`~fedpriv.privacy.mechanisms.LaplaceTreeCounter`'s releases) records its true
statistic, its output, its keys, the accountant's parallel levels and the declared
sensitivity. Off (the default) a release reads one context variable and records
nothing.

Replay. Sensitivity is defined for one release given everything released before it
(adaptive composition: Dwork & Roth 2014, Theorem 3.16 and §3.5). The run on D' is
therefore made under ``record_releases(replay=...)`` with the records of the run on D:
each release of D' returns the output D's run got at the same position, so both runs
see the same earlier outputs, take the same decisions, and the difference of a
statistic is exactly what its declared sensitivity must bound. If D' nonetheless makes
another release (other keys, shape or sensitivity, or more or fewer releases), raw data
decided which releases are made: the release schedule itself leaks, which no
declaration prices.

:func:`compare_releases` is the one rule that reads two recordings: a release whose
statistic moves by more than its declared ``l1_sensitivity``, changed statistics in two
or more cells of the accountant's parallel (``disjoint``) levels, or a schedule that
diverges, each contradicts the declaration the accountant's bound rests on. The audit
layer runs the pairs (:mod:`fedpriv.audit.engine.declarations`); every caller that runs
user code decides with this function.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "DeclarationContradiction",
    "RecordedRelease",
    "ReleaseRecorder",
    "active_recorder",
    "compare_releases",
    "record_releases",
]

#: The recorder of the current context (None: check mode off, nothing recorded).
_ACTIVE: contextvars.ContextVar[ReleaseRecorder | None] = contextvars.ContextVar(
    "fedpriv_release_recorder", default=None
)
#: Relative change below which a statistic counts as unchanged (float summation order).
_CHANGE_TOLERANCE = 1e-9
#: Entries of a witness shown in words.
_SHOWN = 4


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRelease:
    """One release as check mode saw it.

    Attributes
    ----------
    index : int
        Position of the release in the run (0-based).
    kind : str
        ``"laplace"``, ``"raw"`` (un-noised) or ``"tree"`` (a tree counter's prefix sums).
    shape : tuple of int
        Shape of the released array.
    values : ndarray of float64, shape (n_entries,)
        The true statistics of the released entries, before noise.
    output : ndarray of float64
        What the release returned (shape ``shape``).
    keys : dict of str to ndarray, each shape (n_entries,)
        The accountant labels of every entry.
    parallel_levels : tuple of str
        The accountant's levels composed in parallel (its ``disjoint`` levels under its
        relation).
    l1_sensitivity : float or None
        The declared sensitivity of one entry; None for a raw release (ε = ∞).
    """

    index: int
    kind: str
    shape: tuple[int, ...]
    values: np.ndarray
    output: np.ndarray
    keys: dict[str, np.ndarray]
    parallel_levels: tuple[str, ...]
    l1_sensitivity: float | None

    def same_release(self, other: RecordedRelease) -> bool:
        """Whether ``other`` is the same release: kind, shape, sensitivity and keys.

        Parameters
        ----------
        other : RecordedRelease
            A release of the coupled run.

        Returns
        -------
        bool
        """
        return (
            self.kind == other.kind
            and self.shape == other.shape
            and self.values.shape == other.values.shape
            and self.l1_sensitivity == other.l1_sensitivity
            and self.keys.keys() == other.keys.keys()
            and all(np.array_equal(self.keys[k], other.keys[k]) for k in self.keys)
        )

    def describe(self) -> str:
        """``release #i (kind, n entries)``."""
        return f"release #{self.index} ({self.kind}, {self.values.size} entries)"


class ReleaseRecorder:
    """The releases of one run in check mode (see :func:`record_releases`).

    Parameters
    ----------
    replay : sequence of RecordedRelease, optional
        The releases of the coupled run on the other world: release ``i`` returns
        ``replay[i].output`` while the schedules agree.

    Attributes
    ----------
    releases : list of RecordedRelease
        In order.
    divergence : str or None
        Where the schedule left ``replay`` (None: it did not, or no replay).
    """

    def __init__(self, replay: Sequence[RecordedRelease] | None = None) -> None:
        self.releases: list[RecordedRelease] = []
        self.replay = None if replay is None else tuple(replay)
        self.divergence: str | None = None

    def observe(
        self,
        kind: str,
        values: Any,
        output: np.ndarray,
        keys: Mapping[str, np.ndarray],
        accountant: Any,
        l1_sensitivity: float | None,
    ) -> np.ndarray:
        """Record one release; return its output (the replayed one while replaying).

        Parameters
        ----------
        kind : str
            As :attr:`RecordedRelease.kind`.
        values : array_like of float64, shape (n_entries,)
            True statistics of the released entries.
        output : ndarray of float64
            The release's own output.
        keys : mapping of str to ndarray, each shape (n_entries,)
            Accountant labels of the entries.
        accountant : Accountant
            The accountant charged (its ``ledger.parallel_levels`` are read).
        l1_sensitivity : float or None
            Declared sensitivity (None for a raw release).

        Returns
        -------
        ndarray of float64
            ``output``, or the other world's output at this position while replaying.
        """
        record = RecordedRelease(
            index=len(self.releases),
            kind=kind,
            shape=tuple(np.shape(output)),
            values=np.array(values, dtype=np.float64).reshape(-1),
            output=np.array(output, dtype=np.float64),
            keys={k: np.asarray(v).reshape(-1).copy() for k, v in keys.items()},
            parallel_levels=tuple(
                getattr(getattr(accountant, "ledger", None), "parallel_levels", ())
            ),
            l1_sensitivity=None if l1_sensitivity is None else float(l1_sensitivity),
        )
        self.releases.append(record)
        if self.replay is None or self.divergence is not None:
            return output
        if record.index >= len(self.replay):
            self.divergence = (
                f"D' made {record.describe()} {_keys_text(record, slice(0, _SHOWN))}, "
                f"beyond the {len(self.replay)} releases of D"
            )
            return output
        expected = self.replay[record.index]
        if not expected.same_release(record):
            self.divergence = (
                f"at {record.describe()}, D' released {_keys_text(record, slice(0, _SHOWN))} "
                f"where D released {_keys_text(expected, slice(0, _SHOWN))}"
            )
            return output
        return expected.output.copy()

    def finish(self) -> None:
        """Note a replayed run that made fewer releases than the replayed one."""
        if self.replay is None or self.divergence is not None:
            return
        if len(self.releases) < len(self.replay):
            missing = self.replay[len(self.releases)]
            self.divergence = (
                f"D' made {len(self.releases)} releases where D made {len(self.replay)} "
                f"(D's {missing.describe()} {_keys_text(missing, slice(0, _SHOWN))} "
                "has no counterpart)"
            )


def active_recorder() -> ReleaseRecorder | None:
    """The recorder of the current context, or None (check mode off).

    Returns
    -------
    ReleaseRecorder or None
    """
    return _ACTIVE.get()


@contextlib.contextmanager
def record_releases(replay: Sequence[RecordedRelease] | None = None) -> Iterator[ReleaseRecorder]:
    """Check mode for the releases made inside the ``with`` block (this context only).

    Parameters
    ----------
    replay : sequence of RecordedRelease, optional
        The other world's releases, replayed (module docstring).

    Yields
    ------
    ReleaseRecorder
        Its ``releases`` fill as the block runs; ``finish`` is called on exit.

    Examples
    --------
    >>> import numpy as np
    >>> from fedpriv.privacy import Accountant, laplace_release
    >>> with record_releases() as recorder:
    ...     _ = laplace_release([3.0], scale=1.0, l1_sensitivity=1.0, accountant=Accountant(),
    ...                         keys={}, rng=np.random.default_rng(0))
    >>> recorder.releases[0].values, recorder.releases[0].l1_sensitivity
    (array([3.]), 1.0)
    """
    recorder = ReleaseRecorder(replay)
    token = _ACTIVE.set(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.reset(token)
        recorder.finish()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeclarationContradiction:
    """A declaration the coupled runs contradict, with its witness.

    Attributes
    ----------
    declaration : str
        What was declared: ``"l1_sensitivity"``, ``"disjoint level(s) ..."`` or
        ``"release schedule"`` (the releases made do not depend on raw data).
    pair : str
        The neighbouring pair that shows it.
    witness : str
        Positions, releases and sizes, in words.
    """

    declaration: str
    pair: str
    witness: str

    def describe(self) -> str:
        """One line: ``declaration contradicted by pair: witness``."""
        return f"{self.declaration} contradicted by {self.pair}: {self.witness}"

    def to_dict(self) -> dict[str, str]:
        """The record of ``claims.json``."""
        return {"declaration": self.declaration, "pair": self.pair, "witness": self.witness}


def _label(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _keys_text(record: RecordedRelease, which) -> str:
    """The labels of the entries ``which`` (a slice from 0, or one index) of ``record``."""
    n = record.values.size
    picked = [which] if isinstance(which, int) else np.arange(n)[which].tolist()
    parts = [
        "{" + ", ".join(f"{k}: {_label(v[i])!r}" for k, v in record.keys.items()) + "}"
        for i in picked
    ]
    more = f" and {n - len(picked)} more" if isinstance(which, slice) and n > len(picked) else ""
    return "[" + "; ".join(parts) + more + "]"


def compare_releases(
    released_d: Sequence[RecordedRelease],
    released_d_prime: Sequence[RecordedRelease],
    *,
    pair: str,
    divergence: str | None = None,
) -> tuple[DeclarationContradiction, ...]:
    """The declarations two coupled runs on a neighbouring pair contradict.

    Parameters
    ----------
    released_d, released_d_prime : sequence of RecordedRelease
        The releases of the run on D and of the run on D' (replaying D's outputs).
    pair : str
        The neighbouring pair, in words (e.g. ``"agent 0, first reward: 0 -> 1"``).
    divergence : str, optional
        :attr:`ReleaseRecorder.divergence` of the run on D'.

    Returns
    -------
    tuple of DeclarationContradiction
        Empty when every release agrees with its declaration: at most one per kind
        (the release schedule, the sensitivity, the disjoint levels), each with the
        largest witness.
    """
    found: list[DeclarationContradiction] = []
    if divergence:
        found.append(
            DeclarationContradiction(
                declaration="release schedule",
                pair=pair,
                witness=divergence + " though every earlier output was the same: raw data "
                "decides which releases are made",
            )
        )
    over: list[tuple[float, RecordedRelease, int, float]] = []
    cells: dict[tuple, list[tuple[RecordedRelease, int, float]]] = {}
    for d, dp in zip(released_d, released_d_prime):
        if not d.same_release(dp):
            break  # the schedules diverged here (reported above)
        change = np.abs(dp.values - d.values)
        scale = np.maximum(1.0, np.maximum(np.abs(d.values), np.abs(dp.values)))
        moved = np.flatnonzero(change > _CHANGE_TOLERANCE * scale)
        for i in moved.tolist():
            size = float(change[i])
            if d.l1_sensitivity is not None and size > d.l1_sensitivity * (1 + 1e-9) + 1e-12:
                over.append((size / d.l1_sensitivity, d, i, size))
            cell = tuple((level, _label(d.keys[level][i])) for level in d.parallel_levels)
            cells.setdefault(cell, []).append((d, i, size))
    if over:
        over.sort(key=lambda item: -item[0])
        ratio, record, i, size = over[0]
        found.append(
            DeclarationContradiction(
                declaration=f"l1_sensitivity {record.l1_sensitivity:g}",
                pair=pair,
                witness=(
                    f"{record.describe()} entry {_keys_text(record, i)} moved "
                    f"by {size:.6g} = {ratio:.3g} x its declared sensitivity "
                    f"{record.l1_sensitivity:g} ({len(over)} entr{'y' if len(over) == 1 else 'ies'} "
                    "over their declared sensitivity)"
                ),
            )
        )
    if len(cells) > 1:
        levels = [
            level
            for level in dict.fromkeys(level for cell in cells for level, _ in cell)
            if len({dict(cell).get(level, math.nan) for cell in cells}) > 1
        ]
        shown = []
        for cell, entries in list(cells.items())[:_SHOWN]:
            record, i, size = entries[0]
            labels = ", ".join(f"{level} = {label!r}" for level, label in cell if level in levels)
            shown.append(f"{labels} ({record.describe()}, moved by {size:.6g})")
        more = f" and {len(cells) - _SHOWN} more" if len(cells) > _SHOWN else ""
        found.append(
            DeclarationContradiction(
                declaration="disjoint level(s) " + ", ".join(repr(v) for v in levels),
                pair=pair,
                witness=(
                    f"one changed record moved statistics in {len(cells)} cells of the "
                    f"levels declared disjoint, where it may reach one: " + "; ".join(shown) + more
                ),
            )
        )
    return tuple(found)
