"""The SQLite file of a ledger store: its schema, creation, header and path checks.

:class:`~fedpriv.privacy.ledger.store.LedgerStore` opens the file these functions make and
check: :func:`create_store` builds a complete store beside the path and links it into
place atomically (another process creating it first wins); :func:`check_path`,
:func:`check_header` and :func:`read_meta` refuse, before and while SQLite opens it, what
cannot be a fedpriv ledger this version reads (a directory, a FIFO, another
application's database, a newer or older schema, a damaged file); :func:`reference_schema`
is what :meth:`~fedpriv.privacy.ledger.store.LedgerStore.verify` compares the file's
tables, indexes and triggers with.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from fedpriv.privacy.errors import LedgerCorruptedError, StoreFormatError, StorePathError
from fedpriv.privacy.ledger.integrity import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    TABLES,
    StoreConfig,
    anchor_of,
    chain_link,
    fedpriv_version,
    genesis_link,
)

__all__ = [
    "SCHEMA",
    "check_header",
    "check_path",
    "connect",
    "create_store",
    "is_store",
    "read_meta",
    "reference_schema",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (id INTEGER PRIMARY KEY, encoding TEXT NOT NULL UNIQUE);
CREATE TABLE charges (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id INTEGER NOT NULL REFERENCES events(id),
    n_cells INTEGER NOT NULL CHECK (n_cells >= 1),
    keys TEXT NOT NULL,
    pid INTEGER NOT NULL,
    unix_time REAL NOT NULL,
    chain TEXT NOT NULL
);
CREATE TABLE draws (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    n_draws INTEGER NOT NULL CHECK (n_draws >= 0),
    block TEXT,
    pid INTEGER NOT NULL,
    unix_time REAL NOT NULL,
    chain TEXT NOT NULL
);
CREATE TABLE chain_head (
    name TEXT PRIMARY KEY,
    n_rows INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
"""


def connect(path: Path, timeout: float, synchronous: str) -> sqlite3.Connection:
    """An autocommit connection to ``path`` in WAL mode with foreign keys on.

    Parameters
    ----------
    path : Path
        The store file.
    timeout : float
        Seconds to wait for another connection's lock.
    synchronous : {"full", "normal"}
        SQLite's ``synchronous`` setting.

    Returns
    -------
    sqlite3.Connection
        Transactions are begun and committed explicitly (``isolation_level=None``).
    """
    connection = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def create_store(path: Path, config: StoreConfig, key: bytes | None) -> None:
    """Build a complete store beside ``path`` and link it into place atomically.

    The schema, the ``meta`` rows (identity, versions, keying, configuration, anchor) and
    the chains' starts are written to a staging file, which is then hard-linked to
    ``path``; if another process created ``path`` first, its store is kept.

    Parameters
    ----------
    path : Path
        Where the store goes (absent).
    config : StoreConfig
        The accountant's configuration.
    key : bytes, optional
        The HMAC key the chain is linked with (checked by the caller).
    """
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    connection = sqlite3.connect(staging, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(
            f"BEGIN; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; "
            f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        )
        meta = {
            "application": "fedpriv ledger",
            "schema_version": str(SCHEMA_VERSION),
            "store_id": uuid.uuid4().hex,
            "fedpriv_version": fedpriv_version(),
            "created_unix_time": repr(time.time()),
            "chain": "hmac-sha256" if key is not None else "sha256",
            **config.to_meta(),
        }
        meta["anchor"] = anchor_of(meta)
        if key is not None:  # lets a wrong key be named (nobody can make it without the key)
            meta["key_check"] = chain_link("key check", meta["store_id"], [], key)
        with connection:
            connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            connection.executemany(
                "INSERT INTO chain_head VALUES (?, 0, 0, ?)",
                [(table, genesis_link(meta, table, key)) for table in TABLES],
            )
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    try:
        os.link(staging, path)  # fails if another process created it first: use theirs
    except FileExistsError:
        pass
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{staging}{suffix}").unlink(missing_ok=True)


def check_header(path: Path) -> None:
    """Refuse a file that does not start with SQLite's header.

    Parameters
    ----------
    path : Path
        A regular file.

    Raises
    ------
    StoreFormatError
        If the file is empty or not an SQLite database.
    """
    with open(path, "rb") as handle:
        header = handle.read(len(_SQLITE_MAGIC))
    if header != _SQLITE_MAGIC:
        what = "an empty file" if not header else "not an SQLite database"
        raise StoreFormatError(f"{path}: {what}, so not a fedpriv ledger store.")


def read_meta(path: Path, connection: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` rows of an open store, after checking it is a fedpriv ledger this
    version reads (application id, schema version, ``PRAGMA quick_check``, identity).

    Parameters
    ----------
    path : Path
        The store, for the messages.
    connection : sqlite3.Connection
        An open connection inside a read transaction.

    Returns
    -------
    dict of str to str
        The ``meta`` table.

    Raises
    ------
    StoreFormatError
        If it is another application's database, its schema is newer or older than
        this version's, or SQLite finds it damaged.
    LedgerCorruptedError
        If the store identity is missing or malformed.
    """
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    if application_id != APPLICATION_ID:
        raise StoreFormatError(
            f"{path}: an SQLite database of another application (application_id "
            f"{application_id:#x}, expected {APPLICATION_ID:#x}), not a fedpriv ledger."
        )
    schema = connection.execute("PRAGMA user_version").fetchone()[0]
    if schema > SCHEMA_VERSION:
        raise StoreFormatError(
            f"{path}: ledger schema {schema} is newer than this fedpriv "
            f"({fedpriv_version()}) reads (<= {SCHEMA_VERSION}); upgrade fedpriv."
        )
    if schema < SCHEMA_VERSION:
        raise StoreFormatError(
            f"{path}: ledger schema {schema} predates the tamper-evident chain of schema "
            f"{SCHEMA_VERSION}; this fedpriv cannot verify it (it was written by an older "
            "fedpriv: read it with that version)."
            if schema >= 1
            else f"{path}: ledger schema {schema} is invalid."
        )
    problems = [row[0] for row in connection.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise StoreFormatError(f"{path}: damaged ledger store: {'; '.join(problems[:3])}")
    meta = dict(connection.execute("SELECT key, value FROM meta"))
    if len(meta.get("store_id", "")) != 32:
        raise LedgerCorruptedError(f"{path}: the store identity is missing or malformed.")
    return meta


_REFERENCE_SCHEMA: set | None = None


def reference_schema() -> set:
    """``sqlite_master`` rows of a freshly created ledger (built once, in memory).

    Returns
    -------
    set of tuple
        ``(type, name, tbl_name, sql)`` of every table, index and trigger.
    """
    global _REFERENCE_SCHEMA
    if _REFERENCE_SCHEMA is None:
        connection = sqlite3.connect(":memory:")
        connection.executescript(SCHEMA)
        _REFERENCE_SCHEMA = set(
            connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        )
        connection.close()
    return _REFERENCE_SCHEMA


def check_path(path: Any, *, create: bool) -> Path:
    """``path`` as a Path, refusing what cannot be a store file.

    Parameters
    ----------
    path : str or PathLike
        The ``store`` argument.
    create : bool
        Whether the store may be created (then its folder must exist).

    Returns
    -------
    Path

    Raises
    ------
    StorePathError
        If ``path`` is not a path, is empty, a directory or not a regular file (a FIFO,
        device or socket), or its folder is missing when it would be created.
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise StorePathError(f"`store` must be a file path, got {type(path).__name__}.")
    if str(os.fspath(path)).strip() == "":
        raise StorePathError("`store` must be a file path, got an empty string.")
    path = Path(path)
    if path.is_dir():
        raise StorePathError(f"`store` must be a file, got the directory {path}.")
    if path.exists() and not path.is_file():  # stat only: opening a FIFO would block
        raise StorePathError(
            f"`store` must be a regular file, got {path} (a FIFO, device or socket)."
        )
    if create and not path.exists() and not path.parent.is_dir():
        raise StorePathError(
            f"`store` {path}: its folder {path.parent} does not exist (create it first)."
        )
    return path


def is_store(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an SQLite file (a ledger store candidate), by its header.

    Parameters
    ----------
    path : str or PathLike
        Any path; a missing, unreadable or non-regular file (a FIFO, a device)
        gives False.

    Returns
    -------
    bool
        True if the file starts with the SQLite header.
    """
    try:
        if not Path(path).is_file():  # stat only: opening a FIFO would block
            return False
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False
