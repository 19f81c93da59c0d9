"""Privacy claims as data, and the verdict rule that compares them with the evidence.

A claim names the paper, the algorithm, the setting, the neighboring relation and the
claimed guarantee, with where the paper states it, which *reading* of the paper's text it
uses, and its *coverage*: whether the row's channel is the paper's own claim under the
paper's own definition, a channel that definition does not cover, or an algorithm for
which the paper makes no claim.

The verdict is one of the closed set :data:`VERDICTS` and is decided by the one rule
:func:`fedpriv.privacy.accounting.verdicts.judge` (docs/reference/verdicts.md): ``violated``
only on a lower bound above the claim (audit, exact analytic value, un-noised channel),
``holds`` only on a certified end-to-end upper bound within it, ``unresolved`` otherwise;
``outside-claim`` and ``no-claim`` rows are never compared with a claimed ε.

Three ε sit in a row: the accountant's **end-to-end** ε of everything the claim covers
(∞, with the channel named, when raw data reaches an output the claim protects), the
**mechanism-only** ε of the noise the algorithm adds (``mechanism_epsilon``), and the
audit's lower bound; ``tightness`` is lower bound / end-to-end ε where both are finite
and positive.

Length: the claim, its result record (``claims.json``: every field, the upper and
lower bound fields side by side and the declaration check) and the one verdict
rule are one schema and belong together; split, each would import the others.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from fedpriv.audit.estimators import EpsilonLowerBound
from fedpriv.privacy import ApproxDP, NeighboringRelation, PureDP
from fedpriv.privacy.accounting.verdicts import (
    COVERAGES,
    VERDICT_DEFINITIONS,
    VERDICTS,
    Coverage,
    LowerBoundEvidence,
    Verdict,
    judge,
)

__all__ = [
    "AS_WRITTEN",
    "COVERAGES",
    "VACUOUS_DELTA_PROBE",
    "VERDICTS",
    "VERDICT_DEFINITIONS",
    "Claim",
    "ClaimResult",
    "Coverage",
    "LowerBoundEvidence",
    "Verdict",
    "audit_evidence",
    "decide_verdict",
    "json_number",
    "jsonable",
    "run_verdict",
]

#: ``reading`` of a claim that takes the paper's text literally.
AS_WRITTEN = "as written"

#: δ at which ε is also reported when the claimed δ makes ε vacuous (ε = 0).
VACUOUS_DELTA_PROBE = 1e-6


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One privacy claim of a paper.

    Attributes
    ----------
    paper : str
        Short citation of the source, e.g. ``"Smith et al. 2024"`` (the family's
        ``title``).
    algorithm : str
        CLI name of the algorithm (``"my-private-ucb"``).
    mode : str
        ``"paper"`` (as written) or ``"corrected"`` (with a qualifier).
    setting : tuple of (str, value) pairs
        ``n_agents``, ``n_arms``, ``horizon``, ``epsilon``, ``log_base``, ... (a tuple so
        that the claim stays hashable; see :meth:`setting_dict`).
    neighboring_relation : NeighboringRelation
    claimed : PureDP or ApproxDP
        The claimed guarantee; ``PureDP`` has δ = 0.
    source : str
        The exact statement the claim rests on ("inferred from Theorem N" where the
        paper states no privacy result there).
    reading : str
        :data:`AS_WRITTEN`, or the name of the alternative reading of an ambiguous or
        lost text that the row uses (e.g. "⌈log T⌉ read as ⌈ln T⌉").
    reading_support : str
        Which reading the paper's own algorithm supports, with the line it rests on
        (empty when the text is unambiguous).
    coverage : {"claim", "outside-claim", "no-claim"}
        Whether the row is the paper's own claim under its own definition, a channel
        that definition does not cover, or an algorithm the paper makes no claim for.

    Raises
    ------
    TypeError
        If ``claimed`` is neither ``PureDP`` nor ``ApproxDP``, or
        ``neighboring_relation`` is not
        a :class:`NeighboringRelation`.
    ValueError
        If ``coverage`` is not one of :data:`COVERAGES` or ``reading`` is empty.
    """

    paper: str
    algorithm: str
    mode: str
    setting: tuple[tuple[str, Any], ...]
    neighboring_relation: NeighboringRelation
    claimed: PureDP | ApproxDP
    source: str
    reading: str = AS_WRITTEN
    reading_support: str = ""
    coverage: str = "claim"

    def __post_init__(self) -> None:
        if not isinstance(self.claimed, (PureDP, ApproxDP)):
            raise TypeError(
                f"`claimed` must be PureDP or ApproxDP, got {type(self.claimed).__name__}."
            )
        if not isinstance(self.neighboring_relation, NeighboringRelation):
            raise TypeError(
                "`neighboring_relation` must be a NeighboringRelation, got "
                f"{type(self.neighboring_relation).__name__}."
            )
        if self.coverage not in COVERAGES:
            raise ValueError(
                f"`coverage` must be one of {', '.join(COVERAGES)}; got {self.coverage!r}."
            )
        if not str(self.reading).strip():
            raise ValueError("`reading` must be a non-empty string (e.g. 'as written').")

    @property
    def claimed_delta(self) -> float:
        """δ of the claim (0 for pure DP)."""
        return float(self.claimed.delta) if isinstance(self.claimed, ApproxDP) else 0.0

    def setting_dict(self) -> dict[str, Any]:
        """The setting as a dict."""
        return dict(self.setting)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClaimResult:
    """A claim with its evidence and verdict.

    Attributes
    ----------
    claim : Claim
    accountant_epsilon : float
        The accountant's end-to-end ε at the claimed δ: everything the claim covers,
        ∞ when raw data reaches an output the claim protects (``raw_channel``).
    accountant_route : str
    audit : EpsilonLowerBound or None
        The audit's lower bound (``None``: the claim rests on the accountant alone).
    verdict : str
        One of :data:`VERDICTS` (or ``"error"`` when a recipe raised).
    evidence : str
        See :func:`decide_verdict`.
    notes : tuple of str
        Observations of the recipes (calibrations, channels, ...).
    mechanism_epsilon : float or None
        ε of the noise mechanisms alone at the claimed δ (``None``: no noise mechanism
        covers the row's outputs).
    raw_channel : str or None
        The channel through which raw data reaches a covered output.
    epsilon_at_1e6, mechanism_epsilon_at_1e6 : float or None
        End-to-end and mechanism-only ε at δ = 10⁻⁶, reported where the claimed δ is
        vacuous (mechanism ε = 0 at the claimed δ).
    finding_ids : tuple of str
        Ids of the findings (:mod:`fedpriv.audit.claims.findings`) the row shows.
    extras : tuple of (str, float)
        Further named quantities a family's recipe reports for the row (e.g. the ε of
        records outside the claimed stream), each written as its own key of the
        ``claims.json`` record; a name may not be one of the record's standard keys.
    channel : str, optional
        What the audit's adversary observes (e.g. "controller: sync times").
    audit_event : str, optional
        The distinguishing event or score of the audit.
    audit_seconds : float, optional
        Wall time of the audit.
    audit_epsilon_at_1e6 : float, optional
        The audit's lower bound at δ = 10⁻⁶ (where the audit recipe reports one): the
        same confirmed event read there, or the stronger of it and a second audit made
        for δ = 10⁻⁶ (``audit_at_1e6``), so a row with a vacuous claimed δ is bracketed
        there too.
    audit_at_1e6 : EpsilonLowerBound, optional
        The bound behind ``audit_epsilon_at_1e6`` when a second audit gives it (its
        confidence and samples per world).
    audit_event_at_1e6 : str, optional
        The event or score of ``audit_at_1e6``.
    key : str, optional
        Register key of the claim.
    view : View, optional
        The observer and outputs the claim protects
        (:mod:`fedpriv.audit.engine.views`).
    recipe_curves : dict, optional
        :func:`fedpriv.audit.claims.curves.recipe_curves` of the row (page only).
    declarations : DeclarationCheck, optional
        What coupled runs showed about the row's declared sensitivities and disjoint
        levels (:mod:`fedpriv.audit.engine.declarations`); None when not checked.
    analytic_lower : float, optional
        The register's exact analytic ε of the view at the claimed δ (nats), when the
        row has one (``RegisteredClaim.analytic_lower``): lower-bound evidence.
    """

    claim: Claim
    accountant_epsilon: float
    accountant_route: str
    audit: EpsilonLowerBound | None
    verdict: str
    evidence: str
    notes: tuple[str, ...] = ()
    mechanism_epsilon: float | None = None
    raw_channel: str | None = None
    epsilon_at_1e6: float | None = None
    mechanism_epsilon_at_1e6: float | None = None
    finding_ids: tuple[str, ...] = ()
    extras: tuple[tuple[str, float], ...] = ()
    channel: str | None = None
    audit_event: str | None = None
    audit_seconds: float | None = None
    audit_epsilon_at_1e6: float | None = None
    audit_at_1e6: EpsilonLowerBound | None = None
    audit_event_at_1e6: str | None = None
    key: str | None = None
    view: Any = None
    recipe_curves: dict[str, Any] | None = None
    declarations: Any = None
    analytic_lower: float | None = None

    @property
    def delta_is_vacuous(self) -> bool:
        """True when the claimed δ > 0 makes the mechanism's ε exactly 0."""
        return (
            self.claim.claimed_delta > 0
            and self.mechanism_epsilon is not None
            and self.mechanism_epsilon == 0.0
        )

    @property
    def tightness(self) -> float | None:
        """Audit lower bound / end-to-end accountant ε, where both are finite and > 0."""
        if self.audit is None:
            return None
        lower, upper = self.audit.epsilon_lower_bound, self.accountant_epsilon
        if not (math.isfinite(lower) and math.isfinite(upper)) or lower <= 0 or upper <= 0:
            return None
        return lower / upper

    @property
    def tightness_at_1e6(self) -> float | None:
        """``audit_epsilon_at_1e6 / epsilon_at_1e6`` where both are finite and > 0."""
        lower, upper = self.audit_epsilon_at_1e6, self.epsilon_at_1e6
        if lower is None or upper is None:
            return None
        if not (math.isfinite(lower) and math.isfinite(upper)) or lower <= 0 or upper <= 0:
            return None
        return lower / upper

    def lower_bound(self) -> dict[str, Any] | None:
        """The strongest lower-bound evidence on the view's ε, as the ``lower_bound`` record.

        The same evidence :func:`decide_verdict` weighs: the audit's bound (at the δ it
        was computed for), an un-noised channel (ε = ∞ at every δ < 1: a covered output
        is a deterministic function of the data) and the register's exact analytic
        value (at the claimed δ). The largest ε wins; at a tie the first in that order.

        Returns
        -------
        dict or None
            ``{epsilon, delta, source, where}`` with ``source`` one of ``"audit"``,
            ``"un-noised channel"``, ``"analytic"`` (ε in nats, ∞ as ``"inf"``);
            ``None`` when the row has no lower bound.
        """
        delta = self.claim.claimed_delta
        found: list[tuple[float, float, str, str]] = []
        if self.audit is not None:
            where = "; ".join(t for t in (self.channel, self.audit_event) if t)
            found.append(
                (
                    max(0.0, float(self.audit.epsilon_lower_bound)),
                    float(self.audit.delta or 0.0),
                    "audit",
                    where or "end-to-end audit",
                )
            )
        if self.raw_channel and math.isinf(self.accountant_epsilon):
            found.append((math.inf, delta, "un-noised channel", self.raw_channel))
        if self.analytic_lower is not None:
            found.append(
                (
                    float(self.analytic_lower),
                    delta,
                    "analytic",
                    "exact analytic ε of the view (register recipe)",
                )
            )
        if not found:
            return None
        best = max(found, key=lambda f: f[0])
        return {
            "epsilon": json_number(best[0]),
            "delta": best[1],
            "source": best[2],
            "where": best[3],
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``claims.json`` record (schema in :mod:`fedpriv.audit.claims.report`)."""
        claim = self.claim
        record: dict[str, Any] = {
            "paper": claim.paper,
            "algorithm": claim.algorithm,
            "mode": claim.mode,
            "setting": {k: json_number(v) for k, v in claim.setting},
            "neighboring_relation": claim.neighboring_relation.value,
            # A no-claim row prints no claimed ε: the paper claims nothing there.
            "claimed": None
            if claim.coverage == "no-claim"
            else {"epsilon": json_number(claim.claimed.epsilon), "delta": claim.claimed_delta},
            "accountant": {
                "epsilon": json_number(self.accountant_epsilon),
                "delta": claim.claimed_delta,
                "route": self.accountant_route,
            },
            "lower_bound": self.lower_bound(),
            "mechanism_epsilon": json_number(self.mechanism_epsilon),
            "raw_channel": self.raw_channel,
            "audit": None,
            "tightness": self.tightness,
            "verdict": self.verdict,
            "coverage": claim.coverage,
            "reading": claim.reading,
            "reading_support": claim.reading_support,
            "evidence": self.evidence,
            "finding_ids": list(self.finding_ids),
            "notes": list(self.notes),
            "source": claim.source,
        }
        if self.delta_is_vacuous:
            record["delta_vacuous"] = True
            record["epsilon_at_1e-6"] = json_number(self.epsilon_at_1e6)
            record["mechanism_epsilon_at_1e-6"] = json_number(self.mechanism_epsilon_at_1e6)
            if self.tightness_at_1e6 is not None:
                record["tightness_at_1e-6"] = self.tightness_at_1e6
        for name, value in self.extras:
            if name in record or name in _RECORD_KEYS:
                raise ValueError(f"`extras` name {name!r} is a standard key of the record.")
            record[name] = json_number(value)
        if self.key is not None:
            record["key"] = self.key
        if self.view is not None:
            record["view"] = self.view.to_dict()
        if self.declarations is not None:
            record["declarations"] = self.declarations.to_dict()
        if self.audit is not None:
            record["audit"] = {
                "epsilon_lower_bound": self.audit.epsilon_lower_bound,
                "confidence": self.audit.confidence,
                "samples": self.audit.n_samples,
            }
            extra = {
                "delta": self.audit.delta if self.audit.delta else None,
                "channel": self.channel,
                "event": self.audit_event,
                "seconds": self.audit_seconds,
                "epsilon_lower_bound_at_1e-6": self.audit_epsilon_at_1e6,
            }
            record["audit"].update({k: v for k, v in extra.items() if v is not None})
            if self.audit_at_1e6 is not None:
                record["audit"]["at_1e-6"] = {
                    "epsilon_lower_bound": self.audit_epsilon_at_1e6,
                    "confidence": self.audit_at_1e6.confidence,
                    "samples": self.audit_at_1e6.n_samples,
                    "event": self.audit_event_at_1e6,
                }
        return record


#: Keys ``to_dict`` writes after a row's ``extras`` (``statement`` is added by the report).
_RECORD_KEYS = frozenset(
    {
        "key",
        "view",
        "declarations",
        "audit",
        "statement",
        "delta_vacuous",
        "epsilon_at_1e-6",
        "mechanism_epsilon_at_1e-6",
        "tightness_at_1e-6",
    }
)


def json_number(value: Any) -> Any:
    """``value`` for JSON: infinities become ``"inf"`` / ``"-inf"``, NaN becomes ``"nan"``.

    Parameters
    ----------
    value : Any
        Any value; only float infinities and NaN are changed.

    Returns
    -------
    Any
        ``value`` or one of the strings ``"inf"``, ``"-inf"``, ``"nan"``.
    """
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def jsonable(value: Any) -> Any:
    """``value`` with its containers, arrays and NumPy scalars made JSON-ready
    (dict keys as str, every number through :func:`json_number`).

    Parameters
    ----------
    value : Any
        Nested dicts, lists, tuples, arrays and scalars.

    Returns
    -------
    Any
        Dicts, lists and JSON scalars only.
    """
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    return json_number(value)


def audit_evidence(audit: EpsilonLowerBound) -> LowerBoundEvidence:
    """An audit's confidence bound as lower-bound evidence for :func:`judge`.

    Parameters
    ----------
    audit : EpsilonLowerBound
        The audit's ε lower bound (nats) and its confidence and sample size.

    Returns
    -------
    LowerBoundEvidence
        ``kind="audit"``, ε clipped at 0.
    """
    return LowerBoundEvidence(
        epsilon=max(0.0, float(audit.epsilon_lower_bound)),
        kind="audit",
        description=(
            f"audit at {audit.confidence:.0%} confidence, {audit.n_samples} samples per world"
        ),
    )


def decide_verdict(
    claimed_epsilon: float | None,
    accountant_epsilon: float,
    audit: EpsilonLowerBound | None,
    *,
    coverage: str = "claim",
    raw_channel: str | None = None,
    analytic_lower: LowerBoundEvidence | None = None,
    contradicted: str = "",
    unchecked: str = "",
) -> tuple[str, str]:
    """``(verdict, evidence)`` for one claim: :func:`fedpriv.privacy.accounting.verdicts.judge` on
    the row's evidence (the one rule ``verify``, ``run`` and ``account`` share).

    Parameters
    ----------
    claimed_epsilon : float or None
        None only for ``no-claim`` / ``outside-claim`` rows.
    accountant_epsilon : float
        The certified end-to-end upper bound at the claimed δ (``inf`` with
        ``raw_channel`` when raw data reaches a protected output).
    audit : EpsilonLowerBound or None
        The audit's lower bound on the view, if one was measured.
    coverage : {"claim", "outside-claim", "no-claim"}
    raw_channel : str, optional
        An un-noised channel to a protected output: with ``accountant_epsilon = inf`` it
        is a lower bound of ∞ (the output is a deterministic function of the data).
    analytic_lower : LowerBoundEvidence, optional
        An exact analytic lower bound (e.g. the accountant's tight lower bracket).
    contradicted : str
        A declaration coupled runs contradict, with its witness
        (:mod:`fedpriv.audit.engine.declarations`): never ``holds`` then.
    unchecked : str
        Why the declarations were not checked and how to check them (a user's row
        without a check): never ``holds`` either.

    Returns
    -------
    tuple of (str, str)
        The verdict (``holds``, ``violated``, ``unresolved``, ...) and a one-line
        statement of the evidence that decided it.

    Raises
    ------
    ValueError
        As :func:`~fedpriv.privacy.accounting.verdicts.judge`.

    Examples
    --------
    >>> decide_verdict(1.0, 1.25, None)[0], decide_verdict(1.0, 1.0, None)[0]
    ('unresolved', 'holds')
    >>> decide_verdict(1.0, float("inf"), None, raw_channel="raw sync times")[0]
    'violated'
    >>> decide_verdict(None, float("inf"), None, coverage="outside-claim")[0]
    'outside-claim'
    """
    lowers = []
    if audit is not None:
        lowers.append(audit_evidence(audit))
    if raw_channel and math.isinf(accountant_epsilon):
        lowers.append(
            LowerBoundEvidence(
                epsilon=math.inf, kind="channel", description=f"un-noised: {raw_channel}"
            )
        )
    if analytic_lower is not None:
        lowers.append(analytic_lower)
    note = raw_channel if raw_channel and math.isinf(accountant_epsilon) else ""
    return judge(
        claimed_epsilon,
        accountant_epsilon,
        lowers,
        coverage=coverage,
        upper_note=note,
        contradicted=contradicted,
        unchecked=unchecked,
    )


def run_verdict(
    claimed_epsilon: float, accountant: Any, target_delta: float, *, where: Any = None
) -> tuple[str, str, float, str | None]:
    """``(verdict, evidence, end_to_end_epsilon, raw_channel)`` of one ``fedpriv run``.

    The same rule as ``fedpriv verify`` (:func:`decide_verdict`) on the run's own ledger:
    the upper bound is the end-to-end ε of every release charged (restricted by
    ``where`` to the claim's scope), and every raw release charged as
    :class:`~fedpriv.privacy.accounting.events.NonPrivate` is an un-noised channel (ε = ∞).

    Parameters
    ----------
    claimed_epsilon : float
        The claim's ε in nats.
    accountant : Accountant
        The run's accountant.
    target_delta : float
        The claim's δ, in [0, 1).
    where : mapping, optional
        Restrict the ledger to the claim's scope (``level: label``).

    Returns
    -------
    tuple of (str, str, float, str or None)
        Verdict, evidence, end-to-end ε (nats) and the raw channels' reasons joined
        by ``"; "`` (None if there is none).
    """
    upper = float(accountant.get_epsilon(target_delta, where=where))
    reasons = accountant.ledger.non_private_reasons(where=where)
    raw = "; ".join(sorted(reasons)) if reasons else None
    verdict, evidence = decide_verdict(claimed_epsilon, upper, None, raw_channel=raw)
    return verdict, evidence, upper, raw
