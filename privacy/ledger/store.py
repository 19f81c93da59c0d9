"""A persistent, crash-safe ledger shared by every process that opens it (SQLite).

``Accountant(..., store=PATH)`` keeps its ledger in an SQLite database through the
standard library's :mod:`sqlite3` (this module); the accountant itself still composes
in memory. The file is the ledger of record:

* **One transaction per charge.** A charge (one :meth:`~fedpriv.privacy.ledger.accountant.
  Accountant.spend` or one :meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend_many`
  batch) is one ``INSERT`` committed on its own, so a process killed at any point
  leaves it whole or absent, never half of it, never twice (SQLite's atomic commit,
  WAL journal). With ``synchronous="full"`` (the default) every commit is flushed to
  disk before the charge returns, so an acknowledged charge also survives a power cut
  or an operating-system crash; ``"normal"`` survives a killed process but may lose
  the last acknowledged charges on a power cut (SQLite's documented WAL behaviour), at
  a fraction of the cost (``benchmarks/bench_store.py``).
* **Shared budget.** The charge opens ``BEGIN IMMEDIATE`` (SQLite's write lock),
  loads every row other processes appended since this process last read, checks the
  budget on the whole ledger, inserts and commits: the check and the charge are one
  transaction, so two processes racing for the last of a budget cannot both succeed.
* **Lossless, typed encoding, no pickle.** An event is stored as canonical JSON
  ``{"type": class name, "fields": {...}}`` (nested events recursively, tuples as
  lists) and must decode to an equal event, checked before anything is written. The
  type registry is the accountant's own (:func:`fedpriv.privacy.accounting.routes.
  register_event`): any event the accountant can price can be stored. Key labels keep
  their NumPy dtype; labels of object arrays must be ``str``, ``int``, ``float``,
  ``bool`` or ``None``.
* **Tamper-evident.** The store has a write-once identity (``meta.store_id``, a
  UUID). Every charge and draw row carries ``chain = sha256(previous chain, store
  identity, its own canonical content)`` and ``chain_head`` counts the rows of each
  chain. Opening a store (and every later sync) verifies the chain, that each
  charge's event row exists and that its cell count matches its keys, so an edited,
  removed or reordered row, an emptied table, or a WAL file copied from another store
  raises :class:`~fedpriv.privacy.errors.LedgerCorruptedError` naming the first bad
  row (``fedpriv account --verify PATH``). It is tamper-*evident*, not tamper-proof:
  whoever can rewrite the whole file can recompute the chain.
* **Refuses what it cannot read.** The file carries SQLite's ``application_id``
  (:data:`APPLICATION_ID`), a schema version (``user_version``, :data:`SCHEMA_VERSION`)
  and the fedpriv version that created it. A file that is not SQLite, is damaged
  (``PRAGMA quick_check``), is empty, belongs to another application or has a newer
  schema raises :class:`~fedpriv.privacy.errors.StoreFormatError`; reopening with a
  different neighboring relation, key levels, budget or ``keep_draw_rows`` raises
  :class:`~fedpriv.privacy.errors.StoreMismatchError`.

A connection must not cross ``fork``: open the store in each process.

Length: the SQLite ledger with its write-once identity, hash chain and the integrity checks run on every open and sync, which belong together.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.guarantees import ApproxDP, PureDP
from fedpriv.privacy.errors import (
    LedgerCorruptedError,
    StoreError,
    StoreFormatError,
    StoreMismatchError,
    StorePathError,
)
from fedpriv.privacy.ledger.codec import (
    decode_draws,
    decode_event,
    decode_keys,
    encode_draws,
    encode_event,
    encode_keys,
)

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "LedgerStore",
    "StoreConfig",
    "StoredLedgerMixin",
    "is_store",
]

#: SQLite ``PRAGMA application_id`` of a fedpriv ledger (ASCII "fdpv").
APPLICATION_ID = 0x66647076
#: Version of the table layout below; a file with another one is refused (2 added
#: the store identity and the hash chain).
SCHEMA_VERSION = 2
#: Seconds a charge waits for another process's write lock before failing.
DEFAULT_TIMEOUT = 60.0

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SCHEMA = """
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
INSERT INTO chain_head VALUES ('charges', 0, 0, ''), ('draws', 0, 0, '');
"""
_TABLES = ("charges", "draws")


def _fedpriv_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # on use: import time

    try:
        return version("fedpriv")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "0+unknown"


# ---------------------------------------------------------------------- configuration
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StoreConfig:
    """What an accountant must agree on to share a store (checked on every open).

    The relation is written to ``meta`` as ``neighboring_relation``; stores written
    before that name (``relation``) are read too.
    """

    neighboring_relation: str
    disjoint: tuple[str, ...]
    sequential: tuple[str, ...]
    budget: PureDP | ApproxDP | None
    keep_draw_rows: bool

    def to_meta(self) -> dict[str, str]:
        """The ``meta`` rows of this configuration (JSON values)."""
        budget = None
        if self.budget is not None:
            budget = {"type": type(self.budget).__name__, **dataclasses.asdict(self.budget)}
        return {
            "neighboring_relation": json.dumps(self.neighboring_relation),
            "disjoint": json.dumps(list(self.disjoint)),
            "sequential": json.dumps(list(self.sequential)),
            "budget": json.dumps(budget),
            "keep_draw_rows": json.dumps(self.keep_draw_rows),
        }

    @classmethod
    def from_meta(cls, meta: Mapping[str, str]) -> StoreConfig:
        """Inverse of :meth:`to_meta`; raises StoreFormatError on a bad record.

        Parameters
        ----------
        meta : mapping of str to str
            The JSON-encoded fields written by :meth:`to_meta`.

        Returns
        -------
        StoreConfig

        Raises
        ------
        StoreFormatError
            If a field is missing or malformed.
        """
        try:
            budget = json.loads(meta["budget"])
            if budget is not None:
                kind = {"PureDP": PureDP, "ApproxDP": ApproxDP}[budget.pop("type")]
                budget = kind(**budget)
            return cls(
                neighboring_relation=json.loads(
                    meta["neighboring_relation"]
                    if "neighboring_relation" in meta
                    else meta["relation"]  # stores written before the rename
                ),
                disjoint=tuple(json.loads(meta["disjoint"])),
                sequential=tuple(json.loads(meta["sequential"])),
                budget=budget,
                keep_draw_rows=bool(json.loads(meta["keep_draw_rows"])),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise StoreFormatError(f"malformed store configuration: {error!r}") from None


# ---------------------------------------------------------------------- the store
class LedgerStore:
    """An open ledger file (see the module docstring); used by the accountant.

    Use :meth:`open`; rows are read with :meth:`read_since` and written inside
    :meth:`begin` ... :meth:`commit` (or :meth:`rollback`).
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, meta: dict[str, str]):
        self.path = path
        self._connection = connection
        self.meta = meta
        self.config = StoreConfig.from_meta(meta)
        self._data_version: int | None = None
        self._event_ids: dict[Any, int] = {}
        self.closed = False
        self.store_id = meta.get("store_id", "")
        #: Verified end of each chain: table -> (n_rows, last_seq, hash).
        self._heads: dict[str, tuple[int, int, str]] = {t: (0, 0, "") for t in _TABLES}
        self._pending: dict[str, tuple[int, int, str]] = {}

    # -------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        config: StoreConfig | None = None,
        *,
        synchronous: str = "full",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> LedgerStore:
        """Open (or, with ``config``, create) the store at ``path``.

        Parameters
        ----------
        path : str or PathLike
            The database file. Created (atomically, fully initialised) if absent
            and ``config`` is given.
        config : StoreConfig, optional
            The accountant's configuration; must equal the stored one. ``None`` opens
            an existing store with whatever configuration it holds.
        synchronous : {"full", "normal"}
            SQLite's ``synchronous`` setting for this connection (module docstring).
        timeout : float
            Seconds to wait for another process's lock.

        Returns
        -------
        LedgerStore
            An open connection; close it with :meth:`close`.

        Raises
        ------
        StoreFormatError
            If the file is not a readable fedpriv ledger of a schema this version
            knows (corrupted, truncated, empty, another application's, newer).
        StoreMismatchError
            If ``config`` differs from the stored configuration.
        ValueError
            If ``synchronous`` is not "full" or "normal".
        FileNotFoundError
            If ``path`` does not exist and ``config`` is None.
        """
        if synchronous not in ("full", "normal"):
            raise ValueError(
                f"`store_synchronous` must be 'full' or 'normal', got {synchronous!r}."
            )
        path = _check_path(path, create=config is not None)
        if not path.exists():
            if config is None:
                raise FileNotFoundError(f"no ledger store at {path}.")
            _create(path, config)
        _check_header(path)
        connection = None
        try:
            connection = _connect(path, timeout, synchronous)
            meta = _read_meta(path, connection)
            store = cls(path, connection, meta)
            if config is not None and config != store.config:
                raise StoreMismatchError(_mismatch(path, store.config, config))
            store.verify()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            if connection is not None:
                connection.close()
            raise StoreFormatError(f"{path}: not a readable fedpriv ledger: {error}") from None
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        return store

    def verify(self) -> None:
        """Check the whole ledger: every row's hash chain (over the store identity, the
        previous row and its own content), its event row, its cell count, and the
        chain heads (so an emptied or truncated table is seen), all read in one
        transaction (one snapshot), so that charges other processes commit meanwhile
        are never mistaken for tampering.

        Raises
        ------
        LedgerCorruptedError
            Naming the first bad row.
        """
        # One read transaction: the rows and the heads come from one snapshot, so a
        # charge another process commits meanwhile is in both or in neither (SQLite
        # WAL readers see the database as of their transaction's first read).
        own = not self._connection.in_transaction
        if own:
            self._execute("BEGIN")
        try:
            self._heads = {t: (0, 0, "") for t in _TABLES}
            self._check_rows(0, 0)
            heads = {
                name: (n, last, digest)
                for name, n, last, digest in self._execute(
                    "SELECT name, n_rows, last_seq, hash FROM chain_head"
                )
            }
        finally:
            if own and self._connection.in_transaction:
                self._execute("COMMIT")
        for table in _TABLES:
            if heads.get(table) != self._heads[table]:
                raise LedgerCorruptedError(
                    f"{self.path}: the {table} table holds {self._heads[table][0]} row(s) "
                    f"ending at seq {self._heads[table][1]}, but its chain head records "
                    f"{heads.get(table, ('no head',))[0]} row(s) ending at seq "
                    f"{heads.get(table, (0, '?'))[1]}: rows were removed or replaced."
                )

    def chain_heads(self) -> dict[str, tuple[int, int, str]]:
        """Verified end of each chain: ``{table: (n_rows, last_seq, hash)}``."""
        return dict(self._heads)

    def _check_rows(self, charge_seq: int, draw_seq: int) -> tuple[list, list]:
        """Rows after the verified heads, verified and chained; returns the raw rows
        after ``charge_seq`` / ``draw_seq`` (already-verified ones included)."""
        start = min(charge_seq, self._heads["charges"][1])
        charges = self._execute(
            "SELECT c.seq, c.event_id, e.encoding, c.n_cells, c.keys, c.chain FROM charges c "
            "LEFT JOIN events e ON e.id = c.event_id WHERE c.seq > ? ORDER BY c.seq",
            (start,),
        ).fetchall()
        n, last, digest = self._heads["charges"]
        decoded_keys = {}
        for seq, event_id, encoding, n_cells, keys, chain in charges:
            if seq <= last:
                continue
            where = f"{self.path}: charge row seq {seq}"
            if encoding is None:
                raise LedgerCorruptedError(
                    f"{where} names event id {event_id}, which is missing from the events table."
                )
            arrays = decode_keys(keys)
            sizes = {np.size(a) for a in arrays.values()}
            if sizes != {n_cells}:
                raise LedgerCorruptedError(
                    f"{where} records {n_cells} cell(s) but its key "
                    f"lists have {sorted(sizes)} label(s)."
                )
            digest = _chain(digest, self.store_id, [seq, encoding, n_cells, keys])
            if chain != digest:
                raise LedgerCorruptedError(
                    f"{where} fails the hash chain: edited, reordered, or written by "
                    "another store (a foreign WAL file)."
                )
            n, last = n + 1, seq
            decoded_keys[seq] = arrays
        self._heads["charges"] = (n, last, digest)
        start = min(draw_seq, self._heads["draws"][1])
        draws = self._execute(
            "SELECT seq, n_draws, block, chain FROM draws WHERE seq > ? ORDER BY seq", (start,)
        ).fetchall()
        n, last, digest = self._heads["draws"]
        for seq, n_draws, block, chain in draws:
            if seq <= last:
                continue
            digest = _chain(digest, self.store_id, [seq, n_draws, block])
            if chain != digest:
                raise LedgerCorruptedError(
                    f"{self.path}: draw row seq {seq} fails the hash chain (edited, "
                    "reordered, or written by another store)."
                )
            n, last = n + 1, seq
        self._heads["draws"] = (n, last, digest)
        return (
            [row for row in charges if row[0] > charge_seq],
            [row for row in draws if row[0] > draw_seq],
        )

    def close(self) -> None:
        """Close the connection (the file stays valid at every moment)."""
        self._connection.close()
        self.closed = True

    # -------------------------------------------------------------- transactions
    def begin(self) -> None:
        """``BEGIN IMMEDIATE``: take the write lock (waits up to the timeout).

        Raises
        ------
        StoreError
            If the store was closed (a charge would not be recorded).
        """
        if self.closed:
            raise StoreError(f"{self.path}: the ledger store is closed; nothing was charged.")
        self._execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the open transaction."""
        self._execute("COMMIT")
        self._heads.update(self._pending)
        self._pending.clear()

    def rollback(self) -> None:
        """Roll back the open transaction, if any (and forget event ids it inserted)."""
        self._event_ids.clear()
        self._pending.clear()
        if self._connection.in_transaction:
            self._connection.rollback()

    def changed(self) -> bool:
        """Whether another connection committed since this one last read."""
        if self.closed:
            return False
        current = self._execute("PRAGMA data_version").fetchone()[0]
        return current != self._data_version

    # -------------------------------------------------------------- rows
    def read_since(self, charge_seq: int, draw_seq: int) -> tuple[list, list]:
        """Rows appended after the given sequence numbers, in commit order.

        Returns
        -------
        charges : list of (seq, event, {level: ndarray})
        draws : list of (seq, n_draws, block or None)

        Parameters
        ----------
        charge_seq : int
            Last charge sequence number already read (0 for none).
        draw_seq : int
            Last draw-block sequence number already read (0 for none).

        Raises
        ------
        StoreFormatError
            If a row cannot be decoded (a damaged ledger).
        """
        self._data_version = self._execute("PRAGMA data_version").fetchone()[0]
        try:
            rows, draw_rows = self._check_rows(charge_seq, draw_seq)
        except UnicodeDecodeError as error:
            raise StoreFormatError(f"{self.path}: damaged ledger row: {error}") from None
        decoded: dict[str, Any] = {}
        charges = []
        for seq, _, encoding, _, keys, _ in rows:
            if encoding not in decoded:
                decoded[encoding] = decode_event(encoding)
            charges.append((seq, decoded[encoding], decode_keys(keys)))
        draws = [(seq, n, decode_draws(block, n)) for seq, n, block, _ in draw_rows]
        return charges, draws

    def insert_charge(self, event: Any, arrays: Mapping[str, np.ndarray]) -> int:
        """Insert one charge (inside :meth:`begin`); returns its sequence number.

        Parameters
        ----------
        event : Event
            The charged event (interned in the ``events`` table).
        arrays : mapping of str to ndarray
            One 1-D label array per key level, all of one length (one row per cell).

        Returns
        -------
        int
            The charge's sequence number.
        """
        keys = encode_keys(arrays)
        event_id = self._stored_event_id(event)
        encoding = encode_event(event)
        n_cells = max(np.size(a) for a in arrays.values())
        seq, chain = self._next_link("charges", lambda seq: [seq, encoding, n_cells, keys])
        self._execute(
            "INSERT INTO charges (seq, event_id, n_cells, keys, pid, unix_time, chain) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (seq, event_id, n_cells, keys, os.getpid(), time.time(), chain),
        )
        return seq

    def _next_link(self, table: str, content) -> tuple[int, str]:
        """Sequence number and chain hash of the next row of ``table`` (inside
        :meth:`begin`, after the rows of other writers were read), and its head."""
        n, last, digest = self._heads[table]
        seq = last + 1
        chain = _chain(digest, self.store_id, content(seq))
        self._execute(
            "UPDATE chain_head SET n_rows = ?, last_seq = ?, hash = ? WHERE name = ?",
            (n + 1, seq, chain, table),
        )
        self._pending[table] = (n + 1, seq, chain)
        return seq, chain

    def insert_draws(self, n_draws: int, block: Mapping[str, Any] | None) -> int:
        """Insert one block of draw rows (inside :meth:`begin`); returns its number.

        Parameters
        ----------
        n_draws : int
            Number of noise draws in the block, >= 0.
        block : mapping of str to Any, optional
            The draw rows (keys, node, level, scale, sensitivity), or None when the
            accountant does not keep draw rows (only the count is stored).

        Returns
        -------
        int
            The block's sequence number.
        """
        encoded = encode_draws(block)
        seq, chain = self._next_link("draws", lambda seq: [seq, int(n_draws), encoded])
        self._execute(
            "INSERT INTO draws (seq, n_draws, block, pid, unix_time, chain) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (seq, int(n_draws), encoded, os.getpid(), time.time(), chain),
        )
        return seq

    def _stored_event_id(self, event: Any) -> int:
        if event not in self._event_ids:
            encoding = encode_event(event)
            self._execute("INSERT OR IGNORE INTO events (encoding) VALUES (?)", (encoding,))
            row = self._execute("SELECT id FROM events WHERE encoding = ?", (encoding,))
            self._event_ids[event] = row.fetchone()[0]
        return self._event_ids[event]

    def _execute(self, sql: str, parameters: tuple = ()) -> sqlite3.Cursor:
        try:
            return self._connection.execute(sql, parameters)
        except sqlite3.OperationalError:
            raise  # locked, disk full, I/O: not a statement about the file's format
        except sqlite3.DatabaseError as error:
            raise StoreFormatError(f"{self.path}: ledger store failed: {error}") from None


class StoredLedgerMixin:
    """The accountant's side of a store: sync, refresh, close.

    The host (:class:`~fedpriv.privacy.ledger.accountant.Accountant`) holds ``_store``
    (a :class:`LedgerStore` or None), ``_store_seq`` (last charge and draw rows read),
    ``_charges``, ``_event_id``, ``_add_draws`` and ``_bump``. Writes are the host's:
    each is validated and priced first, written and committed in one store
    transaction, and only then recorded in memory.
    """

    def _sync(self) -> None:
        """Append the store's rows this process has not read yet, in commit order."""
        charges, draws = self._store.read_since(*self._store_seq)
        for _, event, arrays in charges:
            self._charges.append((self._event_id(event), arrays))
        for _, n, block in draws:
            self._add_draws(n, block)
        if charges:
            self._bump()
        self._store_seq = (
            charges[-1][0] if charges else self._store_seq[0],
            draws[-1][0] if draws else self._store_seq[1],
        )

    def _refresh(self) -> None:
        """Read other processes' charges, if any were committed since the last read."""
        if self._store is not None and self._store.changed():
            self._sync()

    def refresh(self) -> None:
        """Read the charges other processes committed to the store (queries do this)."""
        self._refresh()

    def close(self) -> None:
        """Close the store: queries answer from memory, charges raise StoreError."""
        if self._store is not None:
            self._store.close()


def _connect(path: Path, timeout: float, synchronous: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def _create(path: Path, config: StoreConfig) -> None:
    """Build a complete store beside ``path`` and link it into place atomically."""
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    connection = sqlite3.connect(staging, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.executescript(
            f"BEGIN; {_SCHEMA} PRAGMA application_id = {APPLICATION_ID}; "
            f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        )
        meta = {
            "application": "fedpriv ledger",
            "schema_version": str(SCHEMA_VERSION),
            "store_id": uuid.uuid4().hex,
            "fedpriv_version": _fedpriv_version(),
            "created_unix_time": repr(time.time()),
            **config.to_meta(),
        }
        with connection:
            connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
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


def _check_header(path: Path) -> None:
    with open(path, "rb") as handle:
        header = handle.read(len(_SQLITE_MAGIC))
    if header != _SQLITE_MAGIC:
        what = "an empty file" if not header else "not an SQLite database"
        raise StoreFormatError(f"{path}: {what}, so not a fedpriv ledger store.")


def _read_meta(path: Path, connection: sqlite3.Connection) -> dict[str, str]:
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
            f"({_fedpriv_version()}) reads (<= {SCHEMA_VERSION}); upgrade fedpriv."
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


def _chain(previous: str, store_id: str, content: list) -> str:
    """Hash of one row: the previous row's hash, the store identity and the row's
    canonical content (so a row of another store, or an edited one, breaks the chain)."""
    text = json.dumps([previous, store_id, content], separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_path(path: Any, *, create: bool) -> Path:
    """``path`` as a Path, refusing what cannot be a store file (StorePathError)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise StorePathError(f"`store` must be a file path, got {type(path).__name__}.")
    if str(os.fspath(path)).strip() == "":
        raise StorePathError("`store` must be a file path, got an empty string.")
    path = Path(path)
    if path.is_dir():
        raise StorePathError(f"`store` must be a file, got the directory {path}.")
    if create and not path.exists() and not path.parent.is_dir():
        raise StorePathError(
            f"`store` {path}: its folder {path.parent} does not exist (create it first)."
        )
    return path


def _mismatch(path: Path, stored: StoreConfig, asked: StoreConfig) -> str:
    differences = [
        f"{field.name}: stored {getattr(stored, field.name)!r}, "
        f"asked {getattr(asked, field.name)!r}"
        for field in dataclasses.fields(StoreConfig)
        if getattr(stored, field.name) != getattr(asked, field.name)
    ]
    return (
        f"{path} was created for another accountant ({'; '.join(differences)}); "
        "open it with the stored configuration (Accountant.open)."
    )


def is_store(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an SQLite file (a ledger store candidate), by its header.

    Parameters
    ----------
    path : str or PathLike
        Any path; a missing or unreadable file gives False.

    Returns
    -------
    bool
        True if the file starts with the SQLite header.
    """
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False
