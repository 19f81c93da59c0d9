"""The accountant's side of its persistent store (``accountant.store``).

An accountant built with ``store=`` keeps its ledger of record in a
:class:`~fedpriv.privacy.ledger.store.LedgerStore` (SQLite, or PostgreSQL through
:mod:`fedpriv.privacy.ledger.postgres`) and composes in memory. :class:`StoreLink`
holds that connection: it reads the rows other processes committed, in commit order,
into the accountant's :class:`~fedpriv.privacy.ledger.ledger.LedgerRows`, and writes
each charge or block of draws in one store transaction that first reads those rows
(so the budget is checked on the whole shared ledger), then records it in memory only
once it is committed. Every write gives a receipt (:attr:`StoreLink.last_receipt`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fedpriv.privacy.ledger.ledger import LedgerRows
from fedpriv.privacy.ledger.store import LedgerHead, LedgerStore

__all__ = ["StoreLink"]


class StoreLink:
    """An accountant's persistent store, or its absence (``accountant.store``).

    Parameters
    ----------
    backend : LedgerStore, optional
        The open store; None for an accountant kept in memory only (then
        :meth:`refresh` and :meth:`close` do nothing).
    rows : LedgerRows
        The accountant's in-memory rows, caught up with the store here and on every
        :meth:`refresh`.
    """

    def __init__(self, backend: LedgerStore | None, rows: LedgerRows) -> None:
        self._backend = backend
        self._rows = rows
        self._seq = (0, 0)  # last (charge, draw) rows of the store read into memory
        self._last_receipt: LedgerHead | None = None
        if backend is not None:
            self._sync()

    @property
    def backend(self) -> LedgerStore | None:
        """The open :class:`~fedpriv.privacy.ledger.store.LedgerStore` (None without a store)."""
        return self._backend

    @property
    def last_receipt(self) -> LedgerHead | None:
        """The receipt of this accountant's last acknowledged charge or block of draws.

        Row counts and chain head: keep it elsewhere and pass it as ``expect_head`` to
        ``Accountant.open`` to detect a rewound or replaced file. None before any
        write and without a store.
        """
        return self._last_receipt

    def refresh(self) -> None:
        """Read the charges other processes committed to the store (queries do this)."""
        if self._backend is not None and self._backend.changed():
            self._sync()

    def close(self) -> None:
        """Close the store: queries answer from memory, charges raise StoreError."""
        if self._backend is not None:
            self._backend.close()

    def write_charge(self, prepare: Callable[[], tuple], record: Callable[..., None]) -> None:
        """Write one charge in one store transaction, then record it in memory.

        The accountant's write path: take the write lock, read the rows other
        processes committed, ``prepare()`` (validate and price on the whole ledger),
        insert, commit; only then ``record(*prepared)``. Whatever is raised before the
        commit rolls the transaction back and records nothing.

        Parameters
        ----------
        prepare : callable
            Returns ``(event, is_new, (event_id, keys), running)``; raises to refuse.
        record : callable
            Called with the prepared tuple once it is committed.
        """
        backend = self._backend
        backend.begin()
        try:
            self._sync()
            prepared = prepare()
            seq = backend.insert_charge(prepared[0], prepared[2][1])
            backend.commit()
        except BaseException:
            backend.rollback()
            raise
        # Committed to the store: record it in memory (one append, then the row number).
        record(*prepared)
        self._seq = (seq, self._seq[1])
        self._last_receipt = backend.head()

    def write_draws(self, n: int, block: dict[str, Any] | None) -> None:
        """Write one block of draw rows in one store transaction, then record it.

        Parameters
        ----------
        n : int
            Number of draws, >= 0.
        block : dict, optional
            The validated draw rows (None when draw rows are not kept).
        """
        backend = self._backend
        backend.begin()
        try:
            self._sync()
            seq = backend.insert_draws(n, block)
            backend.commit()
        except BaseException:
            backend.rollback()
            raise
        self._rows.add_draws(n, block)
        self._seq = (self._seq[0], seq)
        self._last_receipt = backend.head()

    def _sync(self) -> None:
        """Append the store's rows this process has not read yet, in commit order."""
        rows = self._rows
        charges, draws = self._backend.read_since(*self._seq)
        for _, event, arrays in charges:
            rows.charges.append((rows.intern(event), arrays))
        for _, n, block in draws:
            rows.add_draws(n, block)
        if charges:
            rows.bump()
        self._seq = (
            charges[-1][0] if charges else self._seq[0],
            draws[-1][0] if draws else self._seq[1],
        )
