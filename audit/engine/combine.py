"""Two audits of one claim, reported as the stronger bound at a family-wise confidence.

Each audit runs at confidence ``1 − α/2`` on its own samples; by the union bound both
hold at once with probability ``>= 1 − α``, so the larger of the two bounds is a valid
lower bound at ``1 − α`` and is reported at that confidence. Used where a whole-
transcript search is joined by a white-box audit of one release (Li & Song's message
at the mechanism level, the cooperative UCB's first release).
"""

from __future__ import annotations

import dataclasses

from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit

__all__ = ["half_confidence", "halved", "stronger_of"]


def half_confidence(confidence: float) -> float:
    """``1 − α/2`` for a family-wise ``confidence = 1 − α`` split over two audits.

    Parameters
    ----------
    confidence : float
        Family-wise confidence ``1 − α``, in (0, 1).

    Returns
    -------
    float
        ``1 − α/2``.
    """
    return 1.0 - (1.0 - confidence) / 2.0


def halved(budget: AuditBudget) -> AuditBudget:
    """``budget`` at confidence ``1 − α/2`` (each of two audits).

    Parameters
    ----------
    budget : AuditBudget
        The family-wise budget.

    Returns
    -------
    AuditBudget
        A copy at confidence ``1 − α/2``.
    """
    return dataclasses.replace(budget, confidence=half_confidence(budget.confidence))


def stronger_of(
    first: EndToEndAudit, second: EndToEndAudit, *, confidence: float, names: tuple[str, str]
) -> EndToEndAudit:
    """The audit with the larger bound, at family-wise ``confidence``; see the module.

    Both audits must have run at ``1 − (1 − confidence)/2``. The event names both
    bounds; ``seconds`` is the sum.

    Parameters
    ----------
    first, second : EndToEndAudit
        The two audits, each at ``1 − (1 − confidence)/2``.
    confidence : float
        The family-wise confidence, in (0, 1).
    names : tuple of (str, str)
        Names of the two audits, in the event text.

    Returns
    -------
    EndToEndAudit
        The stronger audit, stated at ``confidence`` (union bound).
    """
    best = second if second.bound.epsilon_lower_bound > first.bound.epsilon_lower_bound else first
    each = first.bound.confidence
    event = (
        f"the stronger of two audits at {each:.4g} each: {names[0]} "
        f"{first.bound.epsilon_lower_bound:.4g} ({first.event}); {names[1]} "
        f"{second.bound.epsilon_lower_bound:.4g} ({second.event})"
    )
    return dataclasses.replace(
        best,
        bound=dataclasses.replace(best.bound, confidence=confidence),
        event=event,
        seconds=first.seconds + second.seconds,
    )
