"""What both ledger stores share: their configuration, hash chain, anchor and heads.

A ledger store (:mod:`fedpriv.privacy.ledger.store` for SQLite,
:mod:`fedpriv.privacy.ledger.postgres` for PostgreSQL) is tamper-evident the same way
whatever holds it. Every charge and draw row carries ``chain = sha256(previous chain,
store identity, its own canonical content)`` (:func:`chain_link`); each chain starts
from a link over the *anchor* (:func:`anchor_of`: a hash of the identity, schema
version, keying and configuration, :class:`StoreConfig`), so every link commits to
the configuration, and :func:`check_anchor` names a configuration row changed after
creation. A :class:`LedgerHead` is a receipt (row counts and a digest of both chains'
heads, as a signed tree head of Certificate Transparency, RFC 9162, section 4.10); an
HMAC-SHA256 key held outside the store (RFC 2104) makes every link unforgeable without
it (:func:`check_key`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedpriv.privacy.accounting.guarantees import ZCDP, ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.errors import LedgerCorruptedError, StoreFormatError, StoreMismatchError

__all__ = [
    "APPLICATION_ID",
    "MIN_KEY_BYTES",
    "SCHEMA_VERSION",
    "TABLES",
    "LedgerHead",
    "StoreConfig",
    "anchor_of",
    "chain_link",
    "check_anchor",
    "check_key",
    "config_mismatch",
    "fedpriv_version",
    "genesis_link",
    "head_digest",
]

#: SQLite ``PRAGMA application_id`` of a fedpriv ledger (ASCII "fdpv"); the PostgreSQL
#: store records it in its ``meta`` table.
APPLICATION_ID = 0x66647076
#: Version of the table layout; a store with another one is refused (2 added the store
#: identity and the hash chain; 3 chains the configuration and the schema through the
#: chain's start, the optional HMAC key and the ledger heads).
SCHEMA_VERSION = 3
#: Shortest HMAC key accepted, in bytes: the SHA-256 output length, below which
#: RFC 2104 (section 3) says a key weakens the MAC.
MIN_KEY_BYTES = 32
#: The two chained tables of a store.
TABLES = ("charges", "draws")

#: ``meta`` rows the chain's start commits to (the configuration, the identity, the
#: schema version and whether the links are keyed): changing any is refused on open.
_ANCHORED = (
    "store_id",
    "schema_version",
    "chain",
    "neighboring_relation",
    "disjoint",
    "sequential",
    "budget",
    "keep_draw_rows",
)


def fedpriv_version() -> str:
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
    budget: PureDP | ApproxDP | ZCDP | GaussianDP | None
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
                kind = {
                    "PureDP": PureDP,
                    "ApproxDP": ApproxDP,
                    "ZCDP": ZCDP,
                    "GaussianDP": GaussianDP,
                }[budget.pop("type")]
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


# ---------------------------------------------------------------------- ledger heads
@dataclasses.dataclass(frozen=True, slots=True)
class LedgerHead:
    """A receipt: the ledger's size and chain head after one acknowledged write.

    ``digest`` commits to every charge and draw row up to ``charges`` and
    ``draws`` rows, the store identity and its configuration (each link hashes the
    previous one; the first hashes the configuration), as a signed tree head of
    Certificate Transparency does for a log (RFC 9162, section 4.10). Kept outside
    the file, it lets a later open check that the ledger still extends it
    (``Accountant.open(path, expect_head=...)``): a rewound, truncated or older copy,
    another ledger's file, or any edit of those rows is then detected, key or not.
    ``str(head)`` is ``"CHARGES:DRAWS:DIGEST"``, which :meth:`parse` reads back.

    Parameters
    ----------
    charges : int
        Number of charge rows the head covers (the last charge's index, 1-based).
    draws : int
        Number of draw-block rows it covers.
    digest : str
        64 hexadecimal digits: SHA-256 (HMAC-SHA256 with a key) of the two chains'
        heads at those rows.
    """

    charges: int
    draws: int
    digest: str

    def __str__(self) -> str:
        return f"{self.charges}:{self.draws}:{self.digest}"

    @classmethod
    def parse(cls, text: str | LedgerHead) -> LedgerHead:
        """Read ``"CHARGES:DRAWS:DIGEST"`` (or return a head as it is).

        Parameters
        ----------
        text : str or LedgerHead
            A head as printed by ``str(head)`` or ``fedpriv account --verify``.

        Returns
        -------
        LedgerHead

        Raises
        ------
        ValueError
            If ``text`` is not two counts >= 0 and 64 hexadecimal digits, naming
            ``expect_head``.
        """
        if isinstance(text, LedgerHead):
            return text
        parts = text.split(":") if isinstance(text, str) else []
        if (
            len(parts) == 3
            and parts[0].isdigit()
            and parts[1].isdigit()
            and len(parts[2]) == 64
            and all(c in "0123456789abcdef" for c in parts[2])
        ):
            return cls(int(parts[0]), int(parts[1]), parts[2])
        raise ValueError(
            "`expect_head` must be a ledger head 'CHARGES:DRAWS:DIGEST' (two counts >= 0 "
            f"and 64 lower-case hexadecimal digits, as a receipt prints it), got {text!r:.100}."
        )


def chain_link(previous: str, store_id: str, content: list, key: bytes | None = None) -> str:
    """Hash of one row: the previous row's hash, the store identity and the row's
    canonical content (so a row of another store, or an edited one, breaks the chain);
    HMAC-SHA256 under ``key`` when the store is keyed.

    Parameters
    ----------
    previous : str
        The previous link (64 hexadecimal digits), or a label for a chain's start.
    store_id : str
        The store's identity (``meta.store_id``).
    content : list
        The row's canonical content (JSON-serialisable).
    key : bytes, optional
        The store's HMAC key.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    text = json.dumps([previous, store_id, content], separators=(",", ":"), allow_nan=True)
    if key is not None:
        return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def anchor_of(meta: Mapping[str, str]) -> str:
    """The ``anchor`` meta row: SHA-256 of each anchored ``meta`` value (JSON).

    Parameters
    ----------
    meta : mapping of str to str
        The store's ``meta`` rows.

    Returns
    -------
    str
        A JSON object of hexadecimal digests, keyed by ``meta`` row name.
    """
    return json.dumps(
        {
            name: hashlib.sha256(meta.get(name, "").encode("utf-8")).hexdigest()
            for name in _ANCHORED
        },
        sort_keys=True,
    )


def genesis_link(meta: Mapping[str, str], table: str, key: bytes | None) -> str:
    """Where ``table``'s chain starts: a link over the anchor (so the configuration,
    identity, schema version and keying are in every later link).

    Parameters
    ----------
    meta : mapping of str to str
        The store's ``meta`` rows (with its ``anchor``).
    table : str
        One of :data:`TABLES`.
    key : bytes, optional
        The store's HMAC key.

    Returns
    -------
    str
        The chain's first link.
    """
    return chain_link("genesis:" + table, meta.get("store_id", ""), [meta.get("anchor", "")], key)


def head_digest(charges: str, draws: str, key: bytes | None) -> str:
    """The ledger head of two chain heads (:class:`LedgerHead`).

    Parameters
    ----------
    charges, draws : str
        The two chains' heads.
    key : bytes, optional
        The store's HMAC key.

    Returns
    -------
    str
        The digest of a :class:`LedgerHead`.
    """
    return chain_link("head", "", [charges, draws], key)


def check_anchor(path: Path, meta: Mapping[str, str], key: bytes | None) -> None:
    """Refuse a store whose configuration, identity or keying differs from what its
    chain starts from (naming the field), or a key that does not fit the store.

    Parameters
    ----------
    path : Path or str
        The store, for the messages.
    meta : mapping of str to str
        Its ``meta`` rows.
    key : bytes, optional
        The key it is opened with.

    Raises
    ------
    LedgerCorruptedError
        If the anchor is missing or a configuration row differs from it, or the key
        does not match.
    StoreMismatchError
        If the store is keyed and no key was given, or the other way round.
    """
    try:
        anchor = json.loads(meta["anchor"])
    except (KeyError, ValueError):
        raise LedgerCorruptedError(
            f"{path}: the chain anchor (meta row 'anchor') is missing or malformed."
        ) from None
    for name in _ANCHORED:
        digest = hashlib.sha256(meta.get(name, "").encode("utf-8")).hexdigest()
        if not isinstance(anchor, dict) or anchor.get(name) != digest:
            raise LedgerCorruptedError(
                f"{path}: the stored {name} ({meta.get(name, 'missing')!s:.80}) is not "
                "the one the ledger's chain was started with: the configuration was "
                "changed after the store was created."
            )
    keyed = meta.get("chain") == "hmac-sha256"
    if keyed and key is None:
        raise StoreMismatchError(
            f"{path} is keyed (HMAC-SHA256): open it with its key (`key=`, or "
            "FEDPRIV_LEDGER_KEY for fedpriv account)."
        )
    if keyed and not hmac.compare_digest(
        meta.get("key_check", ""), chain_link("key check", meta.get("store_id", ""), [], key)
    ):
        raise LedgerCorruptedError(
            f"{path}: the key does not match this ledger's (a wrong key, or the key "
            "check was forged)."
        )
    if not keyed and key is not None:
        raise StoreMismatchError(
            f"{path} was created without a key, but a key was given: its links are "
            "plain SHA-256, so this is not the keyed ledger you expect."
        )


def check_key(key: Any) -> bytes | None:
    """Check an HMAC key: bytes of at least :data:`MIN_KEY_BYTES`, or None.

    Parameters
    ----------
    key : bytes, optional
        The key given.

    Returns
    -------
    bytes or None
        ``key``.

    Raises
    ------
    TypeError
        If ``key`` is not bytes.
    ValueError
        If it is shorter than :data:`MIN_KEY_BYTES`.
    """
    if key is None:
        return None
    if not isinstance(key, bytes):
        raise TypeError(f"`key` must be bytes, got {type(key).__name__}.")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"`key` must hold at least {MIN_KEY_BYTES} bytes (RFC 2104, section 3), got "
            f"{len(key)}; use secrets.token_bytes({MIN_KEY_BYTES})."
        )
    return key


def config_mismatch(path: Path, stored: StoreConfig, asked: StoreConfig) -> str:
    """The message of a store opened with another configuration, naming each field.

    Parameters
    ----------
    path : Path or str
        The store.
    stored, asked : StoreConfig
        Its configuration, and the one asked for.

    Returns
    -------
    str
        One sentence listing the fields that differ.
    """
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
