"""Privacy claims as data, and the verdict rule that compares them with the evidence.

A claim names the paper, the algorithm, the setting, the neighboring relation and the
claimed guarantee, with where the paper states it. A verdict combines three numbers at
the claimed δ (DESIGN.md, "Verdict semantics"): the claimed ε, the accountant's ε for
the noise the algorithm actually adds (tightest valid route), and the audit's empirical
lower bound:

* ``violated`` when the audit's lower bound exceeds the claim (statistical evidence)
  or the accountant proves more than the claim is spent (analytic evidence);
* ``holds`` when the accountant's ε is within the claim.

The comparison with the claim allows :data:`privacy.RELATIVE_TOLERANCE` for float
rounding of sums of ε only.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from fedpriv.audit.estimators import EpsilonLowerBound
from fedpriv.privacy import RELATIVE_TOLERANCE, ApproxDP, NeighboringRelation, PureDP

__all__ = ["Claim", "ClaimResult", "decide_verdict", "json_number"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One privacy claim of a paper.

    Attributes
    ----------
    paper : str
        Short citation, e.g. ``"Zhu et al. 2021"``.
    algorithm : str
        CLI name of the algorithm (``"gossip-fed-ucb"``).
    mode : str
        ``"paper"`` (as written) or ``"corrected"``.
    setting : tuple of (str, value) pairs
        ``n_agents``, ``n_arms``, ``horizon``, ``epsilon``, ``log_base``, ... (a tuple so
        that the claim stays hashable; see :meth:`setting_dict`).
    relation : NeighboringRelation
    claimed : PureDP or ApproxDP
        The claimed guarantee; ``PureDP`` has δ = 0.
    source : str
        Where the paper states the claim.

    Raises
    ------
    TypeError
        If ``claimed`` is neither ``PureDP`` nor ``ApproxDP``, or ``relation`` is not
        a :class:`NeighboringRelation`.
    """

    paper: str
    algorithm: str
    mode: str
    setting: tuple[tuple[str, Any], ...]
    relation: NeighboringRelation
    claimed: PureDP | ApproxDP
    source: str

    def __post_init__(self) -> None:
        if not isinstance(self.claimed, (PureDP, ApproxDP)):
            raise TypeError(
                f"`claimed` must be PureDP or ApproxDP, got {type(self.claimed).__name__}."
            )
        if not isinstance(self.relation, NeighboringRelation):
            raise TypeError(
                f"`relation` must be a NeighboringRelation, got {type(self.relation).__name__}."
            )

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
        The accountant's ε at the claimed δ (tightest valid route).
    accountant_route : str
    audit : EpsilonLowerBound or None
        The audit's lower bound (``None``: the claim rests on the accountant alone).
    verdict, evidence : str
        See :func:`decide_verdict`.
    findings : tuple of str
        Observations beyond the verdict (channels outside the claim, ...).
    initial_pulls_epsilon : float, optional
        Fed_UCB only: ε of the round-0 records.
    channel : str, optional
        What the audit's adversary observes (e.g. "controller: sync times").
    audit_event : str, optional
        The distinguishing event or score of the audit.
    audit_seconds : float, optional
        Wall time of the audit.
    key : str, optional
        Register key of the claim.
    """

    claim: Claim
    accountant_epsilon: float
    accountant_route: str
    audit: EpsilonLowerBound | None
    verdict: str
    evidence: str
    findings: tuple[str, ...] = ()
    initial_pulls_epsilon: float | None = None
    channel: str | None = None
    audit_event: str | None = None
    audit_seconds: float | None = None
    key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``claims.json`` record (schema of the walking skeleton; ∞ as ``"inf"``)."""
        claim = self.claim
        record: dict[str, Any] = {
            "paper": claim.paper,
            "algorithm": claim.algorithm,
            "mode": claim.mode,
            "setting": {k: json_number(v) for k, v in claim.setting},
            "relation": claim.relation.value,
            "claimed": {
                "epsilon": json_number(claim.claimed.epsilon),
                "delta": claim.claimed_delta,
            },
            "accountant": {
                "epsilon": json_number(self.accountant_epsilon),
                "delta": claim.claimed_delta,
                "route": self.accountant_route,
            },
            "audit": None,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "findings": list(self.findings),
            "source": claim.source,
        }
        if self.initial_pulls_epsilon is not None:
            record["initial_pulls_epsilon"] = json_number(self.initial_pulls_epsilon)
        if self.key is not None:
            record["key"] = self.key
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
            }
            record["audit"].update({k: v for k, v in extra.items() if v is not None})
        return record


def json_number(value: Any) -> Any:
    """``value`` for JSON: infinities become ``"inf"`` / ``"-inf"``, NaN becomes ``"nan"``."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def decide_verdict(
    claimed_epsilon: float, accountant_epsilon: float, audit: EpsilonLowerBound | None
) -> tuple[str, str]:
    """``(verdict, evidence)`` for one claim (see the module docstring).

    Examples
    --------
    >>> decide_verdict(1.0, 1.25, None)[0], decide_verdict(1.0, 1.0, None)[0]
    ('violated', 'holds')
    """
    limit = claimed_epsilon * (1.0 + RELATIVE_TOLERANCE)
    reasons = []
    if audit is not None and audit.epsilon_lower_bound > claimed_epsilon:
        reasons.append(
            f"audit lower bound {audit.epsilon_lower_bound:.4f} > claimed "
            f"{claimed_epsilon:g} at {audit.confidence:.0%} confidence "
            f"({audit.n_samples} samples per world)"
        )
    if accountant_epsilon > limit:
        reasons.append(
            f"accountant proves {accountant_epsilon:.6g} > claimed {claimed_epsilon:g}"
        )
    if reasons:
        return "violated", "; ".join(reasons)
    if accountant_epsilon <= 0:
        return "holds", f"accountant ε {accountant_epsilon:.6g} within the claim (slack unbounded)"
    slack = claimed_epsilon / accountant_epsilon
    return "holds", f"accountant ε {accountant_epsilon:.6g} within the claim (slack {slack:.3g}x)"
