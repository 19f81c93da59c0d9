"""The Gaussian-DP reading's decision: the family split, the shape tests and their power.

``audit_mechanism(..., reading="gaussian")`` reads an (ε, δ) claim as the Gaussian-DP
curve through it and may refute it through a μ lower bound
(:mod:`fedpriv.audit.regression.api`, module docstring). That step assumes a Gaussian
trade-off curve, so the audit tests the assumption on its own samples
(:mod:`fedpriv.audit.estimators.shape`). These functions decide, from an audit's plan
(the validated settings of :mod:`fedpriv.audit.regression.api`), how the family's error
is shared with the shape test, what the confirmation's shape test says, how much power
the shape tests had against the claim's own non-Gaussian curves, and the reading's
verdict. They do not sample.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.audit.estimators.gdp import MuLowerBound, claim_mu
from fedpriv.audit.estimators.shape import (
    ShapeTestPower,
    gaussian_shape_from_counts,
    shape_test_power_against_claim,
)

__all__ = ["add_confirmation_shape", "reading_evidence", "shape_power_of", "shape_split"]


def shape_split(confidence: float, n_thresholds: int) -> tuple[float, float]:
    """``(bounds' confidence, shape test's level)`` of a Gaussian-reading audit.

    Bonferroni over the audit's tests: the 2 x ``n_thresholds`` (threshold, direction)
    tests of the simultaneous Clopper–Pearson family and the shape test, each with an
    equal share of ``1 - confidence``.

    Parameters
    ----------
    confidence : float
        The audit's family-wise confidence, in (0, 1).
    n_thresholds : int
        Thresholds of the Clopper–Pearson family, >= 1.

    Returns
    -------
    (float, float)
        The bounds' confidence and the shape test's level; they add up to
        ``confidence``'s error, ``1 - confidence``.
    """
    alpha = 1.0 - confidence
    share = alpha / (2 * n_thresholds + 1)
    return 1.0 - (alpha - share), share


def add_confirmation_shape(
    plan: Any, count_d: np.ndarray, count_dp: np.ndarray, n_events: int, orientation: int
) -> Any:
    """``plan`` with the confirmation's shape test added (counts past ``n_events`` are
    at the pilot's bin edges, increasing in the score); the deciding test is the first
    that rejects, else the confirmation's when it ran.

    Parameters
    ----------
    plan : audit plan
        The validated settings of one audit (``fedpriv.audit.regression.api``'s plan:
        ``claim``, ``delta``, ``samples``, ``reading``, ``shape``, ``shape_level``,
        ``shape_cells``, ``family_confidence``).
    count_d, count_dp : ndarray of int64, shape (n_events + n_edges,)
        The confirmation's counts in D and D': the selected events, then the scores at
        or beyond each of the pilot's bin edges.
    n_events : int
        How many of the counts are the selected events.
    orientation : {1, -1}
        1 when the counts are of ``score >= edge``, -1 when of ``-score >= -edge``.

    Returns
    -------
    audit plan
        A copy of ``plan`` with ``shape`` (the deciding test), ``shape_tests`` (pilot,
        confirmation) and the confirmation's cells added to ``shape_cells``.
    """
    at_edges_d, at_edges_dp = count_d[n_events:], count_dp[n_events:]
    if orientation > 0:  # counts of score >= edge: the rest lie strictly below
        below_d, below_dp = plan.samples - at_edges_d, plan.samples - at_edges_dp
    else:  # counts of -score >= -edge: the scores at or below the edge
        below_d, below_dp = at_edges_d, at_edges_dp
    confirmation = gaussian_shape_from_counts(
        below_d, plan.samples, below_dp, plan.samples, level=plan.shape_level / 2
    )
    pilot = plan.shape
    deciding = pilot
    if not pilot.rejected and not math.isnan(confirmation.statistic):
        deciding = confirmation
    cell = (np.asarray(below_dp, dtype=np.float64) / plan.samples, plan.samples, confirmation.level)
    return dataclasses.replace(
        plan,
        shape=deciding,
        shape_tests=(pilot, confirmation),
        shape_cells=(*plan.shape_cells, cell),
    )


def shape_power_of(plan: Any) -> ShapeTestPower | None:
    """The shape tests' power against the claim's own non-Gaussian curves
    (:func:`~fedpriv.audit.estimators.shape.shape_test_power_against_claim`), which
    the reading needs to be at least ``family_confidence``; None where no shape test
    ran or the claim's ε is infinite (the reading then refutes nothing).

    Parameters
    ----------
    plan : audit plan
        The validated settings of one audit (``fedpriv.audit.regression.api``'s plan:
        ``claim``, ``delta``, ``samples``, ``reading``, ``shape``, ``shape_level``,
        ``shape_cells``, ``family_confidence``).

    Returns
    -------
    ShapeTestPower or None
    """
    if plan.shape is None or not plan.shape_cells:
        return None
    epsilon = float(plan.claim.get_epsilon(plan.delta))
    if not math.isfinite(epsilon):
        return None
    return shape_test_power_against_claim(
        plan.shape_cells, epsilon=epsilon, delta=plan.delta, required=plan.family_confidence
    )


def reading_evidence(plan: Any, mu: MuLowerBound) -> dict[str, Any]:
    """The Gaussian-DP reading's verdict and ε (module docstring); empty under "any".

    The reading refutes the claim only when its μ bound exceeds μ₀, no shape test
    rejected the Gaussian shape, AND the shape tests had power >= ``family_confidence``
    against the claim's own non-Gaussian curves (:func:`shape_power_of`); otherwise (or
    where the shape could not be tested) the reading is declined: its verdict is
    ``"unresolved"`` and it refutes nothing (the any-mechanism bounds still may).

    Parameters
    ----------
    plan : audit plan
        The validated settings of one audit (``fedpriv.audit.regression.api``'s plan:
        ``claim``, ``delta``, ``samples``, ``reading``, ``shape``, ``shape_level``,
        ``shape_cells``, ``family_confidence``).
    mu : MuLowerBound
        The audit's Gaussian-DP μ lower bound.

    Returns
    -------
    dict
        ``{"reading_violated": False}`` under ``reading="any"``; else
        ``reading_violated``, ``reading_verdict`` (``"violated"``, ``"not refuted"`` or
        ``"unresolved"``), ``reading_epsilon_lower_bound`` and ``shape_power``.
    """
    if plan.reading != "gaussian":
        return {"reading_violated": False}
    from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon

    beyond = mu.mu_lower_bound > claim_mu(plan.claim, plan.delta)
    power = shape_power_of(plan)
    declined = plan.shape is not None and (
        plan.shape.rejected or (power is not None and not power.sufficient)
    )
    verdict = "unresolved" if declined else ("violated" if beyond else "not refuted")
    return {
        "shape_power": power,
        "reading_violated": beyond and not declined,
        "reading_verdict": verdict,
        "reading_epsilon_lower_bound": float(gaussian_dp_epsilon(mu.mu_lower_bound, plan.delta)),
    }
