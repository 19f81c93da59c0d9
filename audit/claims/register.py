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

``REGISTER``, ``PAPERS`` (``--paper`` name -> title) and ``PAPER_ALIASES`` (alias ->
``--paper`` name) are computed when first read, so that importing this module imports
no family: the registry finds them at run time.
"""

from __future__ import annotations

from typing import Any

from fedpriv.audit.claims.entry import (
    AccountantRecipe,
    AuditRecipe,
    MechanismRecipe,
    RegisteredClaim,
)
from fedpriv.audit.claims.family import families, family

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
    "paper_of",
]


def build_register() -> tuple[RegisteredClaim, ...]:
    """Every registered family's claims, concatenated in family order.

    ``fedpriv verify`` audits row ``i`` under the ``i``-th child seed, so this order is
    the seeds' address: the families' ``order``, then each family's own order.

    Returns
    -------
    tuple of RegisteredClaim

    Raises
    ------
    FamilyError
        If a family's claim key does not start with ``"<key>/"``, or a key is
        registered twice.
    """
    from fedpriv.audit.claims.family import FamilyError

    rows: list[RegisteredClaim] = []
    seen: set[str] = set()
    for fam in families():
        for row in fam.claims():
            if not row.key.startswith(fam.key + "/"):
                raise FamilyError(
                    f"family {fam.key!r}: claim key {row.key!r} must start with "
                    f"{fam.key + '/'!r}."
                )
            if row.key in seen:
                raise FamilyError(f"claim key {row.key!r} is registered twice.")
            seen.add(row.key)
            rows.append(row)
    return tuple(rows)


def _register() -> tuple[RegisteredClaim, ...]:
    """The register, built once (a module attribute, so tests may replace it)."""
    found = globals().get("REGISTER")
    if found is None:
        found = build_register()
        globals()["REGISTER"] = found
    return found


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
    """The registered claims of one paper (all papers when ``paper`` is None).

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
    if paper is None:
        return _register()
    name = paper_of(paper)
    return tuple(entry for entry in _register() if entry.paper == name)
