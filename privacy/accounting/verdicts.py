"""The one verdict rule: a claimed ε against certified upper and lower bounds.

``fedpriv verify``, ``fedpriv run`` and ``fedpriv account`` all decide with
:func:`judge`, so the same claim in the same setting gets the same verdict everywhere
(docs/reference/verdicts.md). The rule is about evidence, not about numbers:

* ``violated`` only when a **lower** bound on the true ε of what the observer sees
  exceeds the claim: an audit's confidence bound, an exact analytic value, or an
  un-noised channel (raw data reaching a protected output: ε = ∞);
* ``holds`` only when a **certified end-to-end upper** bound is within the claim;
* ``unresolved`` otherwise: the upper bound exceeds the claim but no lower bound does.
  An upper bound above a claim shows nothing; both numbers are reported;
* ``outside-claim``: a leak on a channel the paper's definition does not protect (never
  compared with the claim);
* ``no-claim``: the paper makes no privacy claim there (no claimed ε is compared).

Comparisons allow :data:`~fedpriv.privacy.ledger.accountant.RELATIVE_TOLERANCE` for float
rounding of sums of ε only, in the direction that never turns a tie into a violation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Literal, get_args

from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE

__all__ = [
    "COVERAGES",
    "LOWER_BOUND_KINDS",
    "VERDICTS",
    "VERDICT_DEFINITIONS",
    "Coverage",
    "LowerBoundEvidence",
    "Verdict",
    "judge",
]

#: The closed set of verdicts.
Verdict = Literal["violated", "holds", "unresolved", "outside-claim", "no-claim"]
VERDICTS: tuple[str, ...] = get_args(Verdict)

#: One-sentence definition of every verdict (the README, claims.md and the CLI print these).
VERDICT_DEFINITIONS: dict[str, str] = {
    "violated": (
        "a lower bound on the true ε of what the paper's observer sees exceeds the "
        "claim: an audit lower bound, an exact analytic value or an un-noised "
        "channel, under the paper's own definition"
    ),
    "holds": "a certified end-to-end upper bound on ε at the claimed δ is within the claim",
    "unresolved": (
        "the upper bound exceeds the claim but no lower bound does; both "
        "numbers are shown and neither side is proved"
    ),
    "outside-claim": (
        "a real leak on a channel the paper's definition does not protect; "
        "its ε is reported, never compared with the claim as if it were "
        "the claim"
    ),
    "no-claim": (
        "the paper makes no privacy claim for the algorithm, or disclaims one; "
        "audited anyway, and what leaks is reported (no claimed ε is shown)"
    ),
}

#: What a row covers: the paper's claim, a channel outside its definition, or no claim.
Coverage = Literal["claim", "outside-claim", "no-claim"]
COVERAGES: tuple[str, ...] = get_args(Coverage)

#: Kinds of lower-bound evidence, strongest statement first.
LOWER_BOUND_KINDS: tuple[str, ...] = ("channel", "analytic", "audit")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LowerBoundEvidence:
    """A lower bound on the true ε of the observer's view, with what it rests on.

    Attributes
    ----------
    epsilon : float
        The bound, >= 0 (``inf`` for an un-noised channel).
    kind : {"channel", "analytic", "audit"}
        ``channel``: raw data reaches a protected output; ``analytic``: an exact value
        (e.g. the accountant's lower bracket where it is tight); ``audit``: a
        statistical confidence bound.
    description : str
        How it was obtained, in words (printed in the evidence).

    Raises
    ------
    ValueError
        If ``epsilon`` is NaN or negative, or ``kind`` is not one of
        :data:`LOWER_BOUND_KINDS`.
    """

    epsilon: float
    kind: str
    description: str

    def __post_init__(self) -> None:
        value = float(self.epsilon)
        if math.isnan(value) or value < 0:
            raise ValueError(f"`epsilon` must be >= 0 (inf allowed), got {self.epsilon!r}.")
        if self.kind not in LOWER_BOUND_KINDS:
            raise ValueError(
                f"`kind` must be one of {', '.join(LOWER_BOUND_KINDS)}; got {self.kind!r}."
            )
        object.__setattr__(self, "epsilon", value)


def _shown(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.6g}"


def judge(
    claimed_epsilon: float | None,
    upper: float,
    lowers: Sequence[LowerBoundEvidence] = (),
    *,
    coverage: str = "claim",
    upper_note: str = "",
    contradicted: str = "",
) -> tuple[str, str]:
    """``(verdict, evidence)`` for one claim (rule in the module docstring).

    Parameters
    ----------
    claimed_epsilon : float or None
        The claimed ε (ignored, and may be None, for ``no-claim`` / ``outside-claim``).
    upper : float
        A certified end-to-end upper bound on ε at the claimed δ (``inf`` when none is
        known: the verdict is then never ``holds``).
    lowers : sequence of LowerBoundEvidence
        Every lower bound on the true ε of the view at the claimed δ.
    coverage : {"claim", "outside-claim", "no-claim"}
        Only ``"claim"`` rows are compared with the claimed ε.
    upper_note : str
        Words shown after the upper bound (e.g. the route or the raw channel).
    contradicted : str
        A declaration the upper bound rests on (a sensitivity, a ``disjoint`` level,
        a data-independent release schedule) that coupled runs contradict, with its
        witness (:func:`fedpriv.privacy.mechanisms.recording.compare_releases`). The
        upper bound is then not certified: the verdict is never ``holds`` (a would-be
        ``holds`` is ``unresolved``), and the contradiction is part of the evidence.

    Returns
    -------
    tuple of (str, str)
        The verdict (one of :data:`VERDICTS`) and the evidence in words.

    Raises
    ------
    ValueError
        If ``coverage`` is not one of :data:`COVERAGES`, ``upper`` is NaN or negative,
        or a ``"claim"`` row has no finite ``claimed_epsilon`` >= 0.

    Examples
    --------
    >>> judge(1.0, 1.0)[0], judge(1.0, 1.25)[0]
    ('holds', 'unresolved')
    >>> audit = LowerBoundEvidence(epsilon=1.2, kind="audit", description="95% audit")
    >>> judge(1.0, 1.25, [audit])[0]
    'violated'
    >>> judge(1.0, 1.0, contradicted="disjoint level 'epoch': one reward in 10 epochs")[0]
    'unresolved'
    """
    if coverage not in COVERAGES:
        raise ValueError(f"`coverage` must be one of {', '.join(COVERAGES)}; got {coverage!r}.")
    upper = float(upper)
    if math.isnan(upper) or upper < 0:
        raise ValueError(f"`upper` must be >= 0 (inf allowed), got {upper!r}.")
    best = max(lowers, key=lambda b: b.epsilon, default=None)
    leak = f"upper bound {_shown(upper)}" + (f" ({upper_note})" if upper_note else "")
    if best is not None:
        leak += f", lower bound {_shown(best.epsilon)} ({best.description})"
    if coverage == "outside-claim":
        return "outside-claim", "leak on a channel outside the paper's definition: " + leak
    if coverage == "no-claim":
        return "no-claim", "the paper makes no privacy claim here; what leaks: " + leak
    if claimed_epsilon is None or not math.isfinite(float(claimed_epsilon)) or claimed_epsilon < 0:
        raise ValueError(
            f"`claimed_epsilon` must be a finite float >= 0 for a claim, got {claimed_epsilon!r}."
        )
    claimed = float(claimed_epsilon)
    if contradicted:
        verdict, text = judge(claimed, math.inf, lowers, upper_note=upper_note)
        broken = (
            f"the accountant's upper bound {_shown(upper)} rests on a declaration the "
            f"coupled runs contradict ({contradicted}), so it certifies nothing"
        )
        if verdict == "violated":
            return verdict, text + "; besides, " + broken
        lower = f" (best: {_shown(best.epsilon)}, {best.description})" if best else ""
        return "unresolved", broken + ", and no lower bound exceeds the claim" + lower
    above = [b for b in lowers if b.epsilon > claimed * (1.0 + RELATIVE_TOLERANCE)]
    if above:
        reasons = "; ".join(
            f"{b.kind} lower bound {_shown(b.epsilon)} > claimed {claimed:g} ({b.description})"
            for b in sorted(above, key=lambda b: -b.epsilon)
        )
        if upper <= claimed * (1.0 + RELATIVE_TOLERANCE):
            reasons += (
                f"; CONTRADICTION: the upper bound {_shown(upper)} is within the "
                "claim, so one of the two bounds is wrong"
            )
        return "violated", reasons
    if upper <= claimed * (1.0 + RELATIVE_TOLERANCE):
        slack = "unbounded" if upper <= 0 else f"{claimed / upper:.3g}x"
        text = f"certified upper bound {_shown(upper)} within the claim (slack {slack})"
        if upper_note:
            text += f" ({upper_note})"
        return "holds", text
    text = (
        f"upper bound {_shown(upper)}"
        + (f" ({upper_note})" if upper_note else "")
        + f" > claimed {claimed:g}, but no lower bound exceeds the claim"
    )
    if best is not None:
        text += f" (best: {_shown(best.epsilon)}, {best.description})"
    else:
        text += " (no lower bound measured)"
    return "unresolved", text
