"""A persistent, crash-safe ledger shared by every process that opens it (SQLite).

``Accountant(..., store=PATH)`` keeps its ledger in an SQLite database through the
standard library's :mod:`sqlite3` (this module); the accountant itself still composes
in memory. The file is the ledger of record:

* **One transaction per charge.** A charge (one :meth:`~fedpriv.privacy.ledger.accountant.
  Accountant.spend`, one key or a
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
  chain. Each chain starts from a link over the *anchor* (``meta.anchor``: a hash of
  the identity, schema version, keying and configuration: relation, key levels,
  budget, ``keep_draw_rows``), so every link commits to the configuration. Opening
  a store (and every later sync) verifies, in one read transaction, the anchor
  against each configuration row (a budget raised or removed, a level or relation
  changed is named), the schema against the one this version creates (an added
  trigger or view is named; a charge re-checks it when ``PRAGMA schema_version``
  moved), the chain, that each charge's event row exists and that its cell count
  matches its keys, so an edited, removed or reordered row, an emptied table, or a
  WAL file copied from another store raises
  :class:`~fedpriv.privacy.errors.LedgerCorruptedError` naming the first bad row
  (``fedpriv account --verify PATH``).
* **Receipts, expected heads, a key.** Whoever can write the file can recompute plain
  SHA-256 links, so a rewritten file (a tail truncated with the head rewound, an older
  copy, another ledger's file) opens as valid *unless* something outside it is
  checked. As transparency logs do (Certificate Transparency, RFC 9162), every
  acknowledged write gives a receipt (:class:`~fedpriv.privacy.ledger.integrity.LedgerHead`: row counts and a digest of
  both chains; ``accountant.store.last_receipt``); ``open(..., expect_head=...)`` checks that
  the ledger still extends a head kept elsewhere. An HMAC-SHA256 key held outside the
  file (``key=``, RFC 2104) makes every link, the chain's start and the key check
  unforgeable without it. What each detects is tabled in ``docs/guides/
  budget-reports.md``.
* **Refuses what it cannot read.** The file carries SQLite's ``application_id``
  (:data:`~fedpriv.privacy.ledger.integrity.APPLICATION_ID`), a schema version
  (``user_version``, :data:`~fedpriv.privacy.ledger.integrity.SCHEMA_VERSION`)
  and the fedpriv version that created it. A file that is not SQLite, is damaged
  (``PRAGMA quick_check``), is empty, belongs to another application or has a newer
  schema raises :class:`~fedpriv.privacy.errors.StoreFormatError`; reopening with a
  different neighboring relation, key levels, budget or ``keep_draw_rows`` raises
  :class:`~fedpriv.privacy.errors.StoreMismatchError`.

A connection must not cross ``fork``: open the store in each process.

Length: one class, the open SQLite ledger: its transactions, its rows and the integrity
checks run on every open and sync, which read the same snapshot and belong together. The
hash chain, anchor and heads both stores share are in :mod:`~fedpriv.privacy.ledger.
integrity`, the file's creation and checks in :mod:`~fedpriv.privacy.ledger.sqlite_file`,
and the accountant's side of a store is :class:`~fedpriv.privacy.ledger.accountant.StoreLink`.
"""

from __future__ import annotations

import hmac
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
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
from fedpriv.privacy.ledger.integrity import (
    TABLES,
    LedgerHead,
    StoreConfig,
    chain_link,
    check_anchor,
    check_key,
    config_mismatch,
    genesis_link,
    head_digest,
)
from fedpriv.privacy.ledger.sqlite_file import (
    check_header,
    check_path,
    connect,
    create_store,
    read_meta,
    reference_schema,
)

__all__ = ["DEFAULT_TIMEOUT", "POSTGRES_SCHEMES", "LedgerStore"]

#: URL schemes that select the PostgreSQL store (:mod:`fedpriv.privacy.ledger.postgres`).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: Seconds a charge waits for another process's write lock before failing.
DEFAULT_TIMEOUT = 60.0


# ---------------------------------------------------------------------- the store
class LedgerStore:
    """An open ledger file (see the module docstring); used by the accountant.

    Use :meth:`open`; rows are read with :meth:`read_since` and written inside
    :meth:`begin` ... :meth:`commit` (or :meth:`rollback`).
    """

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        meta: dict[str, str],
        key: bytes | None = None,
    ):
        self.path = path
        self._connection = connection
        self.meta = meta
        self.config = StoreConfig.from_meta(meta)
        self._data_version: int | None = None
        self._schema_version: int | None = None
        self._event_ids: dict[Any, int] = {}
        self.closed = False
        self.store_id = meta.get("store_id", "")
        self._key = key
        self._genesis = {t: genesis_link(meta, t, key) for t in TABLES}
        #: Verified end of each chain: table -> (n_rows, last_seq, hash).
        self._heads: dict[str, tuple[int, int, str]] = {t: (0, 0, self._genesis[t]) for t in TABLES}
        self._pending: dict[str, tuple[int, int, str]] = {}
        self._capture: dict[str, int] = {}  # table -> row count whose hash verify() keeps
        self._captured: dict[str, str] = {}

    # -------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        config: StoreConfig | None = None,
        *,
        synchronous: str = "full",
        timeout: float = DEFAULT_TIMEOUT,
        key: bytes | None = None,
        expect_head: str | LedgerHead | None = None,
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
        key : bytes, optional
            HMAC-SHA256 key (at least :data:`~fedpriv.privacy.ledger.integrity.MIN_KEY_BYTES` bytes, kept outside the
            file): a store created with a key links its rows with HMAC instead of plain
            SHA-256 and opens only with the same key, so that nobody without it can
            forge a row, the configuration or the chain.
        expect_head : str or LedgerHead, optional
            A head kept elsewhere (a receipt): the ledger must extend it, i.e. its
            chains at the receipt's row counts must give the same digest.

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
            If ``config`` differs from the stored configuration, or the store is keyed
            and no key was given (or the other way round).
        LedgerCorruptedError
            If the ledger fails a check (module docstring), its configuration or
            schema was changed, the key does not match, or it does not extend
            ``expect_head``, naming the first bad row or the mismatch.
        ValueError
            If ``synchronous`` is not "full" or "normal", ``key`` is shorter than
            :data:`~fedpriv.privacy.ledger.integrity.MIN_KEY_BYTES`, or ``expect_head`` is malformed.
        TypeError
            If ``key`` is not bytes.
        FileNotFoundError
            If ``path`` does not exist and ``config`` is None.
        """
        if synchronous not in ("full", "normal"):
            raise ValueError(
                f"`store_synchronous` must be 'full' or 'normal', got {synchronous!r}."
            )
        if isinstance(path, str) and path.startswith(POSTGRES_SCHEMES):
            raise StorePathError(
                f"`store` {path[:40]!r}... is a PostgreSQL URL, not an SQLite file: open it "
                "with fedpriv.privacy.ledger.backends.open_store (or Accountant(store=URL))."
            )
        key = check_key(key)
        expected = None if expect_head is None else LedgerHead.parse(expect_head)
        path = check_path(path, create=config is not None)
        if not path.exists():
            if config is None:
                raise FileNotFoundError(f"no ledger store at {path}.")
            create_store(path, config, key)
        check_header(path)
        connection = None
        try:
            connection = connect(path, timeout, synchronous)
            connection.execute("BEGIN")  # one snapshot: meta, schema, rows, heads
            meta = read_meta(path, connection)
            check_anchor(path, meta, key)
            store = cls(path, connection, meta, key)
            store._check_schema()
            if config is not None and config != store.config:
                raise StoreMismatchError(config_mismatch(path, store.config, config))
            store.verify(expect_head=expected)
            connection.execute("COMMIT")
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
            if connection is not None:
                connection.close()
            raise StoreFormatError(f"{path}: not a readable fedpriv ledger: {error}") from None
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        return store

    def verify(self, *, expect_head: LedgerHead | None = None) -> None:
        """Check the whole ledger: every row's hash chain (over the store identity, the
        previous row and its own content), its event row, its cell count, and the
        chain heads (so an emptied or truncated table is seen), all read in one
        transaction (one snapshot), so that charges other processes commit meanwhile
        are never mistaken for tampering.

        Parameters
        ----------
        expect_head : LedgerHead, optional
            A receipt kept elsewhere that the ledger must extend.

        Raises
        ------
        LedgerCorruptedError
            Naming the first bad row, or how the ledger fails ``expect_head``.
        """
        # One read transaction: the rows and the heads come from one snapshot, so a
        # charge another process commits meanwhile is in both or in neither (SQLite
        # WAL readers see the database as of their transaction's first read).
        own = not self._in_transaction()
        if own:
            self._begin_read()
        try:
            self._heads = {t: (0, 0, self._genesis[t]) for t in TABLES}
            self._captured = {}
            if expect_head is not None:
                self._capture = {"charges": expect_head.charges, "draws": expect_head.draws}
                self._captured = {t: self._genesis[t] for t in TABLES if self._capture[t] == 0}
            try:
                self._check_rows(0, 0)
            finally:
                self._capture = {}
            heads = {
                name: (n, last, digest)
                for name, n, last, digest in self._execute(
                    "SELECT name, n_rows, last_seq, hash FROM chain_head"
                )
            }
        finally:
            if own and self._in_transaction():
                self._execute("COMMIT")
        for table in TABLES:
            if heads.get(table) != self._heads[table]:
                raise LedgerCorruptedError(
                    f"{self.path}: the {table} table holds {self._heads[table][0]} row(s) "
                    f"ending at seq {self._heads[table][1]}, but its chain head records "
                    f"{heads.get(table, ('no head',))[0]} row(s) ending at seq "
                    f"{heads.get(table, (0, '?'))[1]}: rows were removed or replaced."
                )
            if heads[table][0] == 0 and heads[table][2] != self._genesis[table]:
                raise LedgerCorruptedError(
                    f"{self.path}: the {table} chain does not start from this store's "
                    "configuration and identity"
                    + (" under this key (a wrong key, or forged)." if self._key else ".")
                )
        if expect_head is not None:
            self._check_expected(expect_head)

    def _check_expected(self, expected: LedgerHead) -> None:
        """Raise unless the verified chains extend ``expected`` (see :meth:`verify`)."""
        for table, count in (("charges", expected.charges), ("draws", expected.draws)):
            held = self._heads[table][0]
            if held < count:
                raise LedgerCorruptedError(
                    f"{self.path}: the expected head covers {count} {table[:-1]} row(s), "
                    f"but the ledger holds {held}: rows were removed, the chain was "
                    "rewound, or this is an older copy or another ledger's file."
                )
        digest = head_digest(self._captured["charges"], self._captured["draws"], self._key)
        if not hmac.compare_digest(digest, expected.digest):
            raise LedgerCorruptedError(
                f"{self.path}: the ledger's head at {expected.charges} charge row(s) and "
                f"{expected.draws} draw row(s) is {digest[:16]}..., not the expected "
                f"{expected.digest[:16]}...: another ledger's file, or rows up to there "
                "were rewritten."
            )

    def head(self) -> LedgerHead:
        """The verified head of the ledger as this connection last read or wrote it
        (after a charge: that charge's receipt).

        Returns
        -------
        LedgerHead
        """
        (n_charges, _, charges), (n_draws, _, draws) = (self._heads[t] for t in TABLES)
        return LedgerHead(n_charges, n_draws, head_digest(charges, draws, self._key))

    def _check_schema(self) -> None:
        """Refuse a file whose tables, indexes or triggers differ from the schema this
        version creates (a trigger could delete or rewrite rows as they are written),
        naming the first difference; remembers ``PRAGMA schema_version``."""
        version = self._execute("PRAGMA schema_version").fetchone()[0]
        found = set(self._execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        expected = reference_schema()
        for kind, name, table, _ in sorted(found - expected, key=repr):
            raise LedgerCorruptedError(
                f"{self.path}: the schema was changed: {kind} {name!r} on {table!r} is not "
                "part of a fedpriv ledger (a trigger or view can drop or rewrite rows)."
            )
        for kind, name, table, _ in sorted(expected - found, key=repr):
            raise LedgerCorruptedError(
                f"{self.path}: the schema was changed: {kind} {name!r} on {table!r} is "
                "missing or altered."
            )
        self._schema_version = version

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
            digest = chain_link(digest, self.store_id, [seq, encoding, n_cells, keys], self._key)
            if chain != digest:
                raise LedgerCorruptedError(
                    f"{where} fails the hash chain: edited, reordered, or written by "
                    "another store (a foreign WAL file)."
                )
            n, last = n + 1, seq
            decoded_keys[seq] = arrays
            if self._capture.get("charges") == n:
                self._captured["charges"] = digest
        self._heads["charges"] = (n, last, digest)
        start = min(draw_seq, self._heads["draws"][1])
        draws = self._execute(
            "SELECT seq, n_draws, block, chain FROM draws WHERE seq > ? ORDER BY seq", (start,)
        ).fetchall()
        n, last, digest = self._heads["draws"]
        for seq, n_draws, block, chain in draws:
            if seq <= last:
                continue
            digest = chain_link(digest, self.store_id, [seq, n_draws, block], self._key)
            if chain != digest:
                raise LedgerCorruptedError(
                    f"{self.path}: draw row seq {seq} fails the hash chain (edited, "
                    "reordered, or written by another store)."
                )
            n, last = n + 1, seq
            if self._capture.get("draws") == n:
                self._captured["draws"] = digest
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
        self._begin_write()

    # Backend hooks (SQLite here; :mod:`fedpriv.privacy.ledger.postgres` overrides them).
    def _begin_write(self) -> None:
        """Open a write transaction holding the store's write lock, and re-check the
        schema if it changed since it was last checked."""
        self._execute("BEGIN IMMEDIATE")
        if self._execute("PRAGMA schema_version").fetchone()[0] != self._schema_version:
            try:  # someone changed the schema while this store was open
                self._check_schema()
            except BaseException:
                self.rollback()
                raise

    def _begin_read(self) -> None:
        """Open a read transaction: one snapshot until it ends (WAL)."""
        self._execute("BEGIN")

    def _in_transaction(self) -> bool:
        return self._connection.in_transaction

    def _data_version_now(self) -> Any:
        """A value that changes whenever another connection commits."""
        return self._execute("PRAGMA data_version").fetchone()[0]

    def commit(self) -> None:
        """Commit the open transaction."""
        self._execute("COMMIT")
        self._heads.update(self._pending)
        self._pending.clear()

    def rollback(self) -> None:
        """Roll back the open transaction, if any (and forget event ids it inserted)."""
        self._event_ids.clear()
        self._pending.clear()
        if self._in_transaction():
            self._execute("ROLLBACK")

    def changed(self) -> bool:
        """Whether another connection committed since this one last read."""
        if self.closed:
            return False
        return self._data_version_now() != self._data_version

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
        self._data_version = self._data_version_now()
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
        chain = chain_link(digest, self.store_id, content(seq), self._key)
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
            self._execute(
                "INSERT INTO events (encoding) VALUES (?) ON CONFLICT (encoding) DO NOTHING",
                (encoding,),
            )
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
