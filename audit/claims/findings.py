"""Findings: one entry per distinct defect of a paper, as data, and the functions over them.

A finding is a defect, not a row: one defect read under two log bases, at three values of
ε or under two reconstructions of a lost formula is one finding (docs/reference/verdicts.md,
"The headline"). Each :class:`Finding` names the register keys it affects (``fnmatch``
patterns), says where in the paper it lives, and whether the analysis proves it (the
accountant's end-to-end ε or a derivation in the per-paper reference report). Whether the
audit shows it too is computed from a run's results (:func:`audited`): some affected row
has an audit lower bound above the row's reference, which is the claimed ε for a row
under the paper's claim (the audit refutes it) and the mechanism-only ε (0 without a noise
mechanism) for a row outside the claim or without one (more leaks than the noise
accounts for).

``findings.json`` holds one record per finding: ``{id, statement, claims, evidence,
where}`` with ``evidence`` one of ``proved``, ``audited``, ``both``, ``open`` (``claims``: the keys of
the run's rows it affects).

Each family declares its own findings in its registration (``Family(findings=...)``;
``fedpriv.audit.families.<key>.findings`` for the papers fedpriv ships): :data:`FINDINGS`
is their concatenation in family order, computed when read (so a family loaded later,
from a ``--claims`` file, adds its own).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from collections.abc import Iterable
from typing import Any

from fedpriv.audit.claims.family import FamilyError, families

__all__ = [
    "FINDINGS",  # noqa: F822 - module __getattr__
    "Finding",
    "as_written",
    "audited",
    "build_findings",
    "finding_ids",
    "findings_records",
    "headline",
    "verdict_counts",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One distinct defect.

    Attributes
    ----------
    id : str
        Stable identifier, ``"<paper>-<short-name>"``.
    statement : str
        One sentence.
    claims : tuple of str
        ``fnmatch`` patterns of the register keys the defect affects.
    where : str
        Where in the paper (and in the reference report) it lives.
    proved : bool
        True when an analysis shows it: an exact value, a derivation or an un-noised
        channel, never an upper bound above a claim (that shows nothing: the finding
        is then ``open`` unless an audit shows it).
    audit_claims : tuple of str or None
        Patterns of the rows whose audit targets this defect (default: :attr:`claims`;
        empty when no audit targets it, e.g. a calibration constant that only the
        analysis sees).
    """

    id: str
    statement: str
    claims: tuple[str, ...]
    where: str
    proved: bool = True
    audit_claims: tuple[str, ...] | None = None

    def audited_by(self, key: str) -> bool:
        """True if the audit of row ``key`` targets this defect.

        Parameters
        ----------
        key : str
            A register key, ``"<family key>/<algorithm>/..."``.

        Returns
        -------
        bool
        """
        patterns = self.claims if self.audit_claims is None else self.audit_claims
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)

    def affects(self, key: str) -> bool:
        """True if the register key ``key`` matches one of :attr:`claims`.

        Parameters
        ----------
        key : str
            A register key.

        Returns
        -------
        bool
        """
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.claims)


def build_findings() -> tuple[Finding, ...]:
    """Every registered family's findings, concatenated in family order.

    Returns
    -------
    tuple of Finding

    Raises
    ------
    FamilyError
        If a finding's id does not start with its family's key and ``"-"``, or an id
        is declared twice.
    """
    out: list[Finding] = []
    for fam in families():
        for finding in fam.findings():
            if not isinstance(finding, Finding):
                raise FamilyError(
                    f"family {fam.key!r}: findings must be Finding objects, "
                    f"got {type(finding).__name__}."
                )
            if not finding.id.startswith(fam.key + "-"):
                raise FamilyError(
                    f"family {fam.key!r}: finding id {finding.id!r} must "
                    f"start with {fam.key + '-'!r}."
                )
            if any(finding.id == other.id for other in out):
                raise FamilyError(f"finding id {finding.id!r} is declared twice.")
            out.append(finding)
    return tuple(out)


#: (the families, their findings) of the last call: the registry keeps each family
#: object, so the findings are rebuilt only when the set of families changes.
_cache: list[tuple] = [(), ()]


def _findings() -> tuple[Finding, ...]:
    """The findings of the families registered now (a claims file may add some)."""
    registered = families()
    cached, found = _cache
    if len(cached) != len(registered) or any(a is not b for a, b in zip(cached, registered)):
        found = build_findings()
        _cache[:] = [registered, found]
    return found


def __getattr__(name: str) -> Any:
    """``FINDINGS``: every finding, in report order, from the registrations."""
    if name == "FINDINGS":
        return _findings()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def finding_ids(key: str) -> tuple[str, ...]:
    """Ids of the findings that affect the register key ``key``.

    Parameters
    ----------
    key : str
        A register key.

    Returns
    -------
    tuple of str
        In the order of :data:`FINDINGS`.
    """
    return tuple(f.id for f in _findings() if f.affects(key))


def _shown_by_audit(result) -> bool:
    """True if ``result``'s audit lower bound exceeds the row's reference ε."""
    if result.audit is None:
        return False
    lower = result.audit.epsilon_lower_bound
    if result.claim.coverage == "claim":
        return lower > float(result.claim.claimed.epsilon)
    reference = result.mechanism_epsilon or 0.0
    return math.isfinite(lower) and lower > reference


def audited(finding: Finding, results: Iterable) -> bool:
    """True if some affected row of ``results`` shows the finding in its audit.

    Parameters
    ----------
    finding : Finding
        One finding.
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    bool
    """
    return any(_shown_by_audit(r) for r in results if r.key and finding.audited_by(r.key))


def _evidence(finding: Finding, shown: bool) -> str:
    """``both``, ``proved``, ``audited`` or ``open`` (neither a lower bound nor a proof)."""
    if finding.proved:
        return "both" if shown else "proved"
    return "audited" if shown else "open"


def findings_records(results) -> list[dict]:
    """The ``findings.json`` records for the findings that affect some row of ``results``.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    list of dict
        ``id``, ``statement``, ``claims`` (the affected keys), ``evidence`` and
        ``where`` of each finding that affects a row; then one record per
        ``violated`` row that no finding affects (a user's family that declares no
        findings), its id the row's key, so that no violation goes uncounted.
    """
    results = tuple(results)
    records = []
    for finding in _findings():
        keys = [r.key for r in results if r.key and finding.affects(r.key)]
        if not keys:
            continue
        records.append(
            {
                "id": finding.id,
                "statement": finding.statement,
                "claims": keys,
                "evidence": _evidence(finding, audited(finding, results)),
                "where": finding.where,
            }
        )
    for r in results:  # a violated row its family names no finding for is one itself
        key = getattr(r, "key", None)
        if key and r.verdict == "violated" and not getattr(r, "finding_ids", ()):
            records.append(
                {
                    "id": key,
                    "statement": "the row is violated and its family declares no finding "
                    "for it (the row's evidence says why)",
                    "claims": [key],
                    "evidence": "audited" if _shown_by_audit(r) else "proved",
                    "where": "not declared (the family's `findings`)",
                }
            )
    return records


def as_written(result) -> bool:
    """True for a row of the paper's algorithm as written (mode ``paper...``); False
    for fedpriv's corrected variants (mode ``corrected...``).

    Parameters
    ----------
    result : ClaimResult
        One register row.

    Returns
    -------
    bool
    """
    return not result.claim.mode.startswith("corrected")


def verdict_counts(results) -> dict[str, dict[str, int]]:
    """Rows per verdict, apart for the papers' claims as written and fedpriv's corrected
    variants: ``{"as_written": {verdict: n}, "corrected": {verdict: n}}``.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    dict of str to dict of str to int
    """
    out: dict[str, dict[str, int]] = {"as_written": {}, "corrected": {}}
    for result in results:
        side = out["as_written" if as_written(result) else "corrected"]
        side[result.verdict] = side.get(result.verdict, 0) + 1
    return out


def _counted(counts: dict[str, int], order) -> str:
    return ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v))


def headline(results) -> str:
    """The headline, computed from the findings and the verdicts: findings are counted
    once each (never a sum of rows restating a defect), and the papers' claims as
    written are counted apart from fedpriv's corrected variants.

    Parameters
    ----------
    results : iterable of ClaimResult
        The register rows.

    Returns
    -------
    str
        One paragraph, no trailing newline.
    """
    results = tuple(results)
    records = findings_records(results)
    shown = [r for r in records if r["evidence"] != "open"]
    both = sum(r["evidence"] == "both" for r in records)
    open_ = len(records) - len(shown)
    counts = verdict_counts(results)
    written, corrected = counts["as_written"], counts["corrected"]
    claims = ("violated", "holds", "unresolved")
    n_written = sum(written.get(v, 0) for v in claims)
    n_corrected = sum(corrected.get(v, 0) for v in claims)
    text = (
        f"{len(shown)} finding{'' if len(shown) == 1 else 's'} ({both} shown by the audit as well as by analysis)"
        + (
            f" and {open_} open question{'s' if open_ != 1 else ''} (an upper bound "
            "above the claim, no lower bound)"
            if open_
            else ""
        )
        + f". The papers' claims as written, per setting and reading: "
        f"{_counted(written, claims) or 'none'} of {n_written}"
    )
    outside = {v: written.get(v, 0) + corrected.get(v, 0) for v in ("outside-claim", "no-claim")}
    if sum(outside.values()):
        text += (
            f"; besides, {sum(outside.values())} rows outside any claim "
            f"({_counted(outside, ('outside-claim', 'no-claim'))})"
        )
    if n_corrected:
        text += f". fedpriv's corrected variants: {_counted(corrected, claims)} of {n_corrected}"
    return text + "."
