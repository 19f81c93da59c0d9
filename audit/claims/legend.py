"""What a first-time reader of the report needs before the table: the headline and the
meaning of every verdict and column.

``index.html`` (:mod:`fedpriv.audit.claims.html`) prints all three; ``claims.md``
(:mod:`fedpriv.audit.claims.report`) prints the same headline and verdict definitions.
The verdict definitions are the verdict rule's own
(:data:`fedpriv.privacy.accounting.verdicts.VERDICT_DEFINITIONS`); the headline is
:func:`fedpriv.audit.claims.findings.headline`, computed here from ``claims.json``
records (:func:`records_headline`) so a page merged from several ``--paper`` runs
counts every row it shows.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from fedpriv.privacy.accounting.verdicts import VERDICT_DEFINITIONS

__all__ = ["COLUMN_DEFINITIONS", "VERDICT_LEGEND", "records_headline"]

#: Every verdict with the evidence rule that decides it (and ``error``, which is not a
#: verdict: the row was not evaluated).
VERDICT_LEGEND: dict[str, str] = {
    **VERDICT_DEFINITIONS,
    "error": "not a verdict: the row's recipe raised, so nothing was evaluated",
}

#: Column name -> what it holds (the names used by ``claims.md`` and ``index.html``).
COLUMN_DEFINITIONS: dict[str, str] = {
    "claim": (
        "the row's register key and one sentence saying, in words, what the paper "
        "claims in that setting and for whom; one claim can have several rows "
        "(settings, readings, channels)"
    ),
    "paper": "the paper the claim comes from",
    "reading": (
        "'as written', or the reading of an ambiguous or lost formula the row "
        "uses (the paper's own algorithm line that supports a reading is in the "
        "row's details)"
    ),
    "relation": (
        "the neighboring relation: what one change of the data is (one reward, "
        "one (context, reward) pair, one user at every agent)"
    ),
    "claimed ε (δ)": (
        "the guarantee the paper states for this setting; '— (no claim)' "
        "where the paper claims none"
    ),
    "accountant ε (route)": (
        "a certified upper bound on ε at the claimed δ, end to end: everything the "
        "claim's observer receives, computed by fedpriv's accountant (route: pure "
        "composition, zCDP, RDP, PLD, GDP or basic composition). ∞ when raw data "
        "reaches an output the claim protects (the channel is named)"
    ),
    "mechanism ε": (
        "ε of the noise mechanisms alone at the claimed δ, the quantity a "
        "paper's proof usually prices; it can be finite where the end-to-end "
        "ε is ∞, and is not an upper bound on what the observer sees then"
    ),
    "audit lower bound": (
        "a statistical lower bound on the true ε from running the algorithm on a pair "
        "of neighbouring datasets (Clopper–Pearson at the stated confidence, samples per "
        "world, at the claimed δ): it can refute a claim, never certify one"
    ),
    "tightness": (
        "audit lower bound / accountant ε where both are finite and positive; "
        "1 means the bracket is closed"
    ),
    "ε at δ = 10⁻⁶": (
        "where the claimed δ is so large that the noise alone costs ε = 0 "
        "there (a vacuous δ), the end-to-end ε at δ = 10⁻⁶ instead"
    ),
    "verdict": "see the verdicts above",
    "findings": "the distinct defects this row shows (one finding can span many rows)",
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _as_result(record: dict) -> SimpleNamespace:
    """A record in the shape :func:`~fedpriv.audit.claims.findings.headline` reads
    (key, verdict, claim.mode, claim.coverage, claim.claimed.epsilon, audit,
    mechanism_epsilon, finding_ids)."""
    claimed = record.get("claimed") or {}
    audit = record.get("audit") or None
    lower = _number(audit.get("epsilon_lower_bound")) if isinstance(audit, dict) else None
    mechanism = _number(record.get("mechanism_epsilon"))
    return SimpleNamespace(
        key=record.get("key"),
        verdict=str(record.get("verdict", "error")),
        claim=SimpleNamespace(
            mode=str(record.get("mode") or "paper"),
            coverage=str(record.get("coverage") or "claim"),
            claimed=SimpleNamespace(epsilon=_number(claimed.get("epsilon")) or math.inf),
        ),
        audit=None if lower is None else SimpleNamespace(epsilon_lower_bound=lower),
        mechanism_epsilon=mechanism,
        finding_ids=tuple(record.get("finding_ids") or ()),
    )


def records_headline(records: list[dict]) -> str:
    """:func:`~fedpriv.audit.claims.findings.headline` of ``claims.json`` records.

    Parameters
    ----------
    records : list of dict
        ``claims.json`` records; missing fields read as a paper's claim (mode
        ``paper``, coverage ``claim``) without an audit.

    Returns
    -------
    str
        The findings count, then the papers' claims as written, then fedpriv's
        corrected variants (the same sentence ``claims.md`` opens with).
    """
    from fedpriv.audit.claims.findings import headline

    return headline([_as_result(r) for r in records if isinstance(r, dict)])
