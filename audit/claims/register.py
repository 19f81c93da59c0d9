"""The claims register: every registered family's privacy claims, as data.

The register is generated from the family registrations
(:func:`fedpriv.audit.claims.family.families`): the concatenation of each family's
claims, in family order. Each :class:`~fedpriv.audit.claims.entry.RegisteredClaim`
names the paper, algorithm, mode, setting, neighboring relation and claimed guarantee
(a :class:`fedpriv.audit.claims.claim.Claim`, with where the paper states it), and how
to evaluate it:

* ``accountant``: a recipe that builds the accountant (or the algorithm's own release
  ledger) for that setting and returns ``(route, ε at the claimed δ, findings)``;
* ``audit`` (optional): an end-to-end audit recipe ``(claim, budget, seed) ->
  EndToEndAudit`` on the observable named by ``channel``.

* ``raw_channel`` (optional): the channel, inside what the claim covers, through which
  raw data reaches an output; the accountant's end-to-end ε is then ∞ with that channel
  named, and the recipe's finite ε is the mechanism-only ε;
* ``mechanism`` (optional): ``claim -> (route, ε)`` of the noise mechanisms alone, for
  rows whose accountant recipe already returns ∞ (default: the recipe's finite ε).

Each claim carries its ``reading`` (``"as written"`` or the alternative reading of an
ambiguous or lost formula, with the line of the paper's algorithm that supports one
reading) and its ``coverage`` (the paper's claim, a channel outside its definition, or no
claim); see :mod:`fedpriv.audit.claims.claim`. The findings each row shows are declared
by the families too (:mod:`fedpriv.audit.claims.findings`).

A claim without an audit recipe rests on the accountant alone, and the report says so.
Each family builds its rows in its own package (``fedpriv.audit.families.<key>.claims``
for the built-in papers); the recipes import the algorithm modules lazily, so the
register is importable whatever is installed.

``REGISTER`` holds the rows of the families fedpriv ships, in family order; the rows of
families registered from outside the package (entry points, ``--claims`` files) follow
it (:func:`outside_claims`). Every row's audit is seeded by its key
(:func:`fedpriv.audit.claims.verify.claim_seed`), so where a row sits moves no number. ``REGISTER``, ``PAPERS`` (``--paper``
name -> title, every family) and ``PAPER_ALIASES`` (alias -> ``--paper`` name) are
computed when first read, so that importing this module imports no family: the registry
finds them at run time.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from fedpriv.audit.claims.entry import (
    AccountantRecipe,
    AuditRecipe,
    MechanismRecipe,
    RegisteredClaim,
    check_setting,
    check_shared_audit,
)
from fedpriv.audit.claims.family import FamilyError, builtin_families, families, family
from fedpriv.audit.engine.views import View

__all__ = [
    "PAPERS",  # noqa: F822 - module __getattr__
    "PAPER_ALIASES",  # noqa: F822 - module __getattr__
    "REGISTER",  # noqa: F822 - module __getattr__
    "AccountantRecipe",
    "AuditRecipe",
    "MechanismRecipe",
    "RegisteredClaim",
    "build_register",
    "claims_for",
    "outside_claims",
    "paper_of",
    "view_of",
]


def _rows(registered, seen: set[str]) -> tuple[RegisteredClaim, ...]:
    """The families' rows in order, each checked for its type, key prefix and uniqueness."""
    rows: list[RegisteredClaim] = []
    for fam in registered:
        where = fam.origin or fam.key
        for row in fam.claims():
            if not isinstance(row, RegisteredClaim):
                raise FamilyError(
                    f"family {fam.key!r} ({where}): claims() must give "
                    f"RegisteredClaim rows, got {type(row).__name__}."
                )
            if not row.key.startswith(fam.key + "/"):
                raise FamilyError(
                    f"family {fam.key!r} ({where}): claim key {row.key!r} "
                    f"must start with {fam.key + '/'!r}."
                )
            if row.key in seen:
                raise FamilyError(
                    f"family {fam.key!r} ({where}): claim key {row.key!r} is registered twice."
                )
            try:
                check_setting(row.claim.setting, fam.setting_fields, where=f"row {row.key!r}")
            except TypeError as error:
                raise FamilyError(f"family {fam.key!r} ({where}): {error}") from None
            seen.add(row.key)
            rows.append(row)
    by_key = {row.key: row for row in rows}
    for row in rows:
        if row.shared_audit is None:
            continue
        source = by_key.get(row.shared_audit)
        if source is None and row.shared_audit in seen:
            continue  # a row of a family registered earlier: checked when verify shares it
        try:
            if source is None:
                raise ValueError(f"row {row.key!r}: shared audit {row.shared_audit!r} is no row.")
            check_shared_audit(row, source)
        except ValueError as error:
            raise FamilyError(f"{error}") from None
    return tuple(rows)


def build_register() -> tuple[RegisteredClaim, ...]:
    """The built-in families' claims, concatenated in family order.

    The order is the families' ``order``, then each family's own order; it orders the
    report, not the audits' seeds (those are addressed by the rows' keys).
    Families registered from outside the package (:func:`outside_claims`) follow it.

    Returns
    -------
    tuple of RegisteredClaim

    Raises
    ------
    FamilyError
        If a row is not a RegisteredClaim, its key does not start with
        ``"<family key>/"``, or a key is registered twice.
    """
    return _rows(builtin_families(), set())


def _register() -> tuple[RegisteredClaim, ...]:
    """The built-in register, built once (a module attribute, so tests may replace it)."""
    found = globals().get("REGISTER")
    if found is None:
        found = build_register()
        globals()["REGISTER"] = found
    return found


#: (the outside families, their rows) of the last call: the registry keeps each
#: family object, so the rows are rebuilt only when the set of families changes.
_outside_cache: list[tuple] = [(), ()]


def outside_claims() -> tuple[RegisteredClaim, ...]:
    """Rows of the families registered outside the package, after the built-in rows.

    Entry points of installed packages and claims files loaded by ``fedpriv verify
    --claims`` register them; their rows follow :data:`REGISTER` in family order.

    Returns
    -------
    tuple of RegisteredClaim
        Empty when no family is registered from outside (rebuilt when the families
        change).

    Raises
    ------
    FamilyError
        As :func:`build_register`, also when a row repeats a built-in key.
    """
    builtin = {fam.key for fam in builtin_families()}
    outside = tuple(fam for fam in families() if fam.key not in builtin)
    cached, rows = _outside_cache
    if len(cached) != len(outside) or any(a is not b for a, b in zip(cached, outside)):
        rows = _rows(outside, {row.key for row in _register()})
        _outside_cache[:] = [outside, rows]
    return rows


def __getattr__(name: str) -> Any:
    """``REGISTER``, ``PAPERS`` and ``PAPER_ALIASES``, computed from the registrations."""
    if name == "REGISTER":
        return _register()
    if name == "PAPERS":
        return {fam.key: fam.title for fam in families()}
    if name == "PAPER_ALIASES":
        return {alias: fam.key for fam in families() for alias in fam.aliases}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def paper_of(name: str) -> str:
    """The ``--paper`` name (the family key) for ``name`` (a key or an alias).

    Parameters
    ----------
    name : str
        A family's key or alias, any case, ``-`` or ``_``.

    Returns
    -------
    str
        The family key.

    Raises
    ------
    ValueError
        If ``name`` names no registered family; the message lists the keys.
    """
    return family(name).key


def claims_for(paper: str | None = None) -> tuple[RegisteredClaim, ...]:
    """The registered claims of one family (all, built-in then outside, when ``paper`` is None).

    Parameters
    ----------
    paper : str, optional
        A ``--paper`` name or alias.

    Returns
    -------
    tuple of RegisteredClaim
        In register order.

    Raises
    ------
    ValueError
        If ``paper`` names no registered family.
    """
    rows = _register() + outside_claims()
    if paper is None:
        return rows
    name = paper_of(paper)
    return tuple(entry for entry in rows if entry.paper == name)


def view_of(key: str) -> View:
    """The view of the register row ``key``: the first pattern of its family's views.

    Parameters
    ----------
    key : str
        A register key (``"<family key>/..."``).

    Returns
    -------
    View
        What the row's claim protects.

    Raises
    ------
    KeyError
        If no pattern of the family matches: every row must declare what it protects
        (in its family's ``views`` or its own ``RegisteredClaim.view``).
    """
    family_key = key.split("/", 1)[0]
    for fam in families():
        if fam.key == family_key:
            for pattern, view in fam.views():
                if fnmatch.fnmatchcase(key, pattern):
                    return view
    raise KeyError(
        f"register key {key!r} has no view: declare one in its family's views "
        "(audit/families/<key>/views.py) or on the row (RegisteredClaim.view)."
    )
