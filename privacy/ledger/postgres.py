"""The ledger store on a PostgreSQL server, for many machines charging one budget.

``Accountant(..., store="postgresql://user@host/db")`` keeps the ledger in that
database (through ``psycopg``, an optional dependency: ``pip install
"psycopg[binary]"``) with the guarantees of the SQLite store
(:mod:`fedpriv.privacy.ledger.store`), whose rows, hash chain, anchor, receipts and
key it shares:

* **One transaction per charge, one budget.** A charge opens a transaction and locks
  both ``chain_head`` rows (``SELECT ... FOR UPDATE``): writers queue on those row
  locks, so the charge reads every row committed before it, checks the budget on the
  whole ledger, inserts and commits as one transaction (PostgreSQL's atomic commit;
  a killed client's open transaction is rolled back by the server).
* **One snapshot per verification.** Opening reads the meta rows, the schema, the
  rows and the chain heads in one ``REPEATABLE READ READ ONLY`` transaction, so a
  charge committed meanwhile is in all of them or in none.
* **The schema is checked.** Besides the anchor (configuration, identity, keying),
  opening refuses a trigger or rule on the ledger's tables and a missing column, and a
  charge re-checks triggers and rules before it writes.

The ledger's tables live in the connection's current schema (``public`` unless the
URL sets ``options=-csearch_path%3D...``): one ledger per database or per search path.
Creating it is one transaction under an advisory lock, so processes racing to create
the same ledger agree on one.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from fedpriv.privacy.errors import LedgerCorruptedError, StoreFormatError, StoreMismatchError
from fedpriv.privacy.ledger.integrity import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    TABLES,
    LedgerHead,
    StoreConfig,
    anchor_of,
    chain_link,
    check_anchor,
    check_key,
    config_mismatch,
    fedpriv_version,
    genesis_link,
)
from fedpriv.privacy.ledger.store import DEFAULT_TIMEOUT, LedgerStore

__all__ = ["PostgresLedgerStore"]

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE events (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "encoding TEXT NOT NULL UNIQUE)",
    "CREATE TABLE charges (seq BIGINT PRIMARY KEY, "
    "event_id BIGINT NOT NULL REFERENCES events(id), "
    "n_cells BIGINT NOT NULL CHECK (n_cells >= 1), keys TEXT NOT NULL, "
    "pid BIGINT NOT NULL, unix_time DOUBLE PRECISION NOT NULL, chain TEXT NOT NULL)",
    "CREATE TABLE draws (seq BIGINT PRIMARY KEY, n_draws BIGINT NOT NULL CHECK (n_draws >= 0), "
    "block TEXT, pid BIGINT NOT NULL, unix_time DOUBLE PRECISION NOT NULL, chain TEXT NOT NULL)",
    "CREATE TABLE chain_head (name TEXT PRIMARY KEY, n_rows BIGINT NOT NULL, "
    "last_seq BIGINT NOT NULL, hash TEXT NOT NULL)",
)
#: Columns of every ledger table (checked on open).
_COLUMNS = {
    "meta": ("key", "value"),
    "events": ("id", "encoding"),
    "charges": ("seq", "event_id", "n_cells", "keys", "pid", "unix_time", "chain"),
    "draws": ("seq", "n_draws", "block", "pid", "unix_time", "chain"),
    "chain_head": ("name", "n_rows", "last_seq", "hash"),
}


def _redact(url: str) -> str:
    """``url`` without its password (for messages)."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


class PostgresLedgerStore(LedgerStore):
    """A ledger in a PostgreSQL database (see the module docstring); opened through
    :meth:`LedgerStore.open` with a ``postgresql://`` URL."""

    @classmethod
    def open_url(
        cls,
        url: str,
        config: StoreConfig | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        key: bytes | None = None,
        expect_head: str | LedgerHead | None = None,
    ) -> PostgresLedgerStore:
        """Open (or, with ``config``, create) the ledger in the database at ``url``.

        Parameters
        ----------
        url : str
            A libpq connection URL (``postgresql://user:password@host:port/db``).
        config, timeout, key, expect_head
            As for :meth:`LedgerStore.open` (``timeout`` in seconds bounds the wait
            for another writer's row lock).

        Returns
        -------
        PostgresLedgerStore

        Raises
        ------
        StoreFormatError
            If the database holds no fedpriv ledger (and ``config`` is None), another
            application's ``meta`` table, or a newer schema.
        StoreMismatchError, LedgerCorruptedError, ValueError, TypeError
            As :meth:`LedgerStore.open`.
        """
        import psycopg  # optional dependency: on use

        key = check_key(key)
        expected = None if expect_head is None else LedgerHead.parse(expect_head)
        where = _redact(url)
        try:
            connection = psycopg.connect(url, autocommit=True)
        except psycopg.Error as error:
            raise StoreFormatError(f"{where}: cannot connect to the ledger: {error}") from None
        try:
            connection.execute(f"SET lock_timeout = {int(timeout * 1000)}")
            if config is not None:
                _create(connection, config, key)
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            meta = _read_meta(where, connection)
            check_anchor(where, meta, key)
            store = cls(where, connection, meta, key)
            store._check_schema()
            if config is not None and config != store.config:
                raise StoreMismatchError(config_mismatch(where, store.config, config))
            store.verify(expect_head=expected)
            connection.execute("COMMIT")
        except psycopg.Error as error:
            connection.close()
            raise StoreFormatError(f"{where}: not a readable fedpriv ledger: {error}") from None
        except BaseException:
            connection.close()
            raise
        return store

    # ------------------------------------------------------------ backend hooks
    def _begin_write(self) -> None:
        self._execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        try:  # writers queue here; later statements see every earlier commit
            self._execute("SELECT name FROM chain_head ORDER BY name FOR UPDATE").fetchall()
            self._check_schema()
        except BaseException:
            self.rollback()
            raise

    def _begin_read(self) -> None:
        self._execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self._connection.info.transaction_status != TransactionStatus.IDLE

    def _data_version_now(self) -> Any:
        return tuple(self._execute("SELECT name, n_rows FROM chain_head ORDER BY name").fetchall())

    def _check_schema(self) -> None:
        """Refuse triggers or rules on the ledger's tables, and missing columns."""
        tables = list(_COLUMNS)
        for name, table in self._execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace "
            "AND c.relname = ANY(?)",
            (tables,),
        ).fetchall():
            raise LedgerCorruptedError(
                f"{self.path}: the schema was changed: trigger {name!r} on {table!r} is not "
                "part of a fedpriv ledger (a trigger can drop or rewrite rows)."
            )
        for name, table in self._execute(
            "SELECT rulename, tablename FROM pg_rules WHERE schemaname = current_schema() "
            "AND tablename = ANY(?)",
            (tables,),
        ).fetchall():
            raise LedgerCorruptedError(
                f"{self.path}: the schema was changed: rule {name!r} on {table!r} is not "
                "part of a fedpriv ledger (a rule can drop or rewrite rows)."
            )
        found: dict[str, set] = {}
        for table, column in self._execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ANY(?)",
            (tables,),
        ).fetchall():
            found.setdefault(table, set()).add(column)
        for table, columns in _COLUMNS.items():
            if set(columns) - found.get(table, set()):
                raise LedgerCorruptedError(
                    f"{self.path}: the schema was changed: table {table!r} is missing or "
                    "lacks columns."
                )

    def _execute(self, sql: str, parameters: tuple = ()) -> Any:
        import psycopg

        try:
            return self._connection.execute(sql.replace("?", "%s"), parameters)
        except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn) as error:
            raise StoreFormatError(f"{self.path}: ledger store failed: {error}") from None


def _read_meta(where: str, connection: Any) -> dict[str, str]:
    exists = connection.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]
    if not exists:
        raise StoreFormatError(f"{where}: holds no fedpriv ledger (no `meta` table).")
    meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("application") != "fedpriv ledger" or meta.get("application_id") != str(
        APPLICATION_ID
    ):
        raise StoreFormatError(f"{where}: its `meta` table is another application's.")
    schema = int(meta.get("schema_version", "0") or 0)
    if schema != SCHEMA_VERSION:
        raise StoreFormatError(
            f"{where}: ledger schema {schema}, but this fedpriv ({fedpriv_version()}) "
            f"reads schema {SCHEMA_VERSION}."
        )
    if len(meta.get("store_id", "")) != 32:
        raise LedgerCorruptedError(f"{where}: the store identity is missing or malformed.")
    return meta


def _create(connection: Any, config: StoreConfig, key: bytes | None) -> None:
    """Create the ledger in one transaction unless it exists (an advisory lock makes
    racing creators agree on one)."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (APPLICATION_ID,))
        if connection.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()[0]:
            return
        for statement in _SCHEMA:
            connection.execute(statement)
        meta = {
            "application": "fedpriv ledger",
            "application_id": str(APPLICATION_ID),
            "schema_version": str(SCHEMA_VERSION),
            "store_id": uuid.uuid4().hex,
            "fedpriv_version": fedpriv_version(),
            "created_unix_time": repr(time.time()),
            "chain": "hmac-sha256" if key is not None else "sha256",
            **config.to_meta(),
        }
        meta["anchor"] = anchor_of(meta)
        if key is not None:
            meta["key_check"] = chain_link("key check", meta["store_id"], [], key)
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO meta VALUES (%s, %s)", list(meta.items()))
            cursor.executemany(
                "INSERT INTO chain_head VALUES (%s, 0, 0, %s)",
                [(table, genesis_link(meta, table, key)) for table in TABLES],
            )
