"""Opening a ledger store by where it lives: an SQLite file or a PostgreSQL URL.

:func:`open_store` is the one entry point that picks the backend: a ``postgresql://``
(or ``postgres://``) URL opens :class:`~fedpriv.privacy.ledger.postgres.PostgresLedgerStore`,
anything else the SQLite :class:`~fedpriv.privacy.ledger.store.LedgerStore`. It sits
above both, so neither backend module imports the other's user.
"""

from __future__ import annotations

import os

from fedpriv.privacy.ledger.integrity import LedgerHead, StoreConfig
from fedpriv.privacy.ledger.postgres import PostgresLedgerStore
from fedpriv.privacy.ledger.store import DEFAULT_TIMEOUT, POSTGRES_SCHEMES, LedgerStore

__all__ = ["is_url", "open_store"]


def is_url(path: object) -> bool:
    """Whether ``path`` names a PostgreSQL store (a ``postgresql://`` URL).

    Parameters
    ----------
    path : object
        A store argument: a file path or a URL.

    Returns
    -------
    bool
        True for a string starting with one of
        :data:`~fedpriv.privacy.ledger.store.POSTGRES_SCHEMES`.
    """
    return isinstance(path, str) and path.startswith(POSTGRES_SCHEMES)


def open_store(
    path: str | os.PathLike,
    config: StoreConfig | None = None,
    *,
    synchronous: str = "full",
    timeout: float = DEFAULT_TIMEOUT,
    key: bytes | None = None,
    expect_head: str | LedgerHead | None = None,
) -> LedgerStore:
    """Open (or, with ``config``, create) the ledger store at ``path``, whichever backend.

    Parameters
    ----------
    path : str or PathLike
        An SQLite file, or a PostgreSQL URL (``postgresql://user@host/db``).
    config : StoreConfig, optional
        The accountant's configuration; must equal the stored one. ``None`` opens an
        existing store with whatever configuration it holds.
    synchronous : {"full", "normal"}
        SQLite's ``synchronous`` setting (:meth:`LedgerStore.open
        <fedpriv.privacy.ledger.store.LedgerStore.open>`); a PostgreSQL commit is
        always durable.
    timeout : float
        Seconds to wait for another process's lock.
    key : bytes, optional
        The store's HMAC-SHA256 key (kept outside it).
    expect_head : str or LedgerHead, optional
        A receipt kept elsewhere that the ledger must extend.

    Returns
    -------
    LedgerStore
        An open store (a :class:`~fedpriv.privacy.ledger.postgres.PostgresLedgerStore`
        for a URL); close it with ``close()``.

    Raises
    ------
    ValueError
        If ``synchronous`` is not "full" or "normal" (and as the backend's ``open``).
    StoreFormatError, StoreMismatchError, LedgerCorruptedError, StorePathError
        As the backend's ``open``.
    """
    if synchronous not in ("full", "normal"):
        raise ValueError(f"`store_synchronous` must be 'full' or 'normal', got {synchronous!r}.")
    if is_url(path):
        return PostgresLedgerStore.open_url(
            path, config, timeout=timeout, key=key, expect_head=expect_head
        )
    return LedgerStore.open(
        path, config, synchronous=synchronous, timeout=timeout, key=key, expect_head=expect_head
    )
