"""Simultaneous Clopper–Pearson bounds shared by the threshold-based estimators.

Every estimator built on a threshold grid (ε at δ, δ at ε', the Gaussian-DP μ) uses
the *same* family of bounds: for each threshold ``c`` of the grid, a lower and an
upper one-sided Clopper–Pearson bound on ``P_D(score >= c)`` and on
``P_D'(score >= c)``, each at level ``(1 - confidence) / (4 * n_thresholds)``. This
is exactly the family of :func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound`, so
all estimators evaluated on the same scores, grid and confidence hold *jointly* with
probability >= ``confidence`` (one union bound covers them all): their results may
be combined into one verdict without a further split.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from fedpriv.audit.estimators.threshold import (
    DIRECTIONS,
    NO_EVIDENCE,
    EpsilonLowerBound,
    check_sample_array,
    clopper_pearson_lower,
    clopper_pearson_upper,
    count_at_least,
)
from fedpriv.privacy.checks import check_delta, check_open_unit

__all__ = [
    "EventBounds",
    "epsilon_lower_bound_at_delta",
    "event_bounds_from_counts",
    "simultaneous_event_bounds",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EventBounds:
    """Bounds on the event probabilities of a threshold grid (private helper type).

    Attributes
    ----------
    thresholds : ndarray of float64, shape (n_thresholds,)
    low_d, high_d : ndarray of float64, shape (n_thresholds,)
        Lower and upper bounds on ``P_D(score >= c)``.
    low_d_prime, high_d_prime : ndarray of float64, shape (n_thresholds,)
        The same for ``P_D'(score >= c)``.
    count_d, count_d_prime : ndarray of int64, shape (n_thresholds,)
    n_samples_d, n_samples_d_prime : int
    n_tests : int
        ``2 * n_thresholds`` (threshold, direction) tests.
    confidence : float
    """

    thresholds: np.ndarray
    low_d: np.ndarray
    high_d: np.ndarray
    low_d_prime: np.ndarray
    high_d_prime: np.ndarray
    count_d: np.ndarray
    count_d_prime: np.ndarray
    n_samples_d: int
    n_samples_d_prime: int
    n_tests: int
    confidence: float

    def directed(self) -> tuple[np.ndarray, np.ndarray]:
        """Numerator lower bounds and denominator upper bounds of the 2n tests.

        Test ``t < n_thresholds`` is ``"D>D'"`` at ``thresholds[t]``; test
        ``n_thresholds + t`` is ``"D'>D"`` at the same threshold.
        """
        numerator = np.concatenate([self.low_d, self.low_d_prime])
        denominator = np.concatenate([self.high_d_prime, self.high_d])
        return numerator, denominator


def simultaneous_event_bounds(
    scores_d: object, scores_d_prime: object, *, thresholds: object, confidence: float
) -> EventBounds:
    """All four Clopper–Pearson bounds per threshold, jointly valid at ``confidence``.

    Parameters
    ----------
    scores_d, scores_d_prime : array_like of float, shape (n,) and (n',)
        Scores of the runs on D and on D'.
    thresholds : array_like of float, shape (n_thresholds,)
        The predeclared threshold grid.
    confidence : float
        Family-wise confidence of all ``4 * n_thresholds`` bounds, in (0, 1).

    Returns
    -------
    EventBounds

    Raises
    ------
    ValueError
        If a score array or `thresholds` is empty, not 1-D or not finite, or if
        ``confidence`` is not in (0, 1).
    """
    scores_d = check_sample_array("scores_d", scores_d)
    scores_d_prime = check_sample_array("scores_d_prime", scores_d_prime)
    thresholds = check_sample_array("thresholds", thresholds)
    confidence = check_open_unit("confidence", confidence)
    count_d = count_at_least(np.sort(scores_d), thresholds)
    count_dp = count_at_least(np.sort(scores_d_prime), thresholds)
    return event_bounds_from_counts(
        count_d, scores_d.size, count_dp, scores_d_prime.size, thresholds, confidence
    )


def event_bounds_from_counts(
    count_d: np.ndarray,
    n_d: int,
    count_dp: np.ndarray,
    n_dp: int,
    thresholds: np.ndarray,
    confidence: float,
) -> EventBounds:
    """:func:`simultaneous_event_bounds` from its counts (already checked inputs).

    ``count_d[i]`` is the number of the ``n_d`` scores of world D that are
    ``>= thresholds[i]`` (int64; ``count_dp`` likewise in D'), as
    ``count_at_least`` returns them. A caller that sorts and counts each world once
    shares the counts between this family and
    :func:`fedpriv.audit.estimators.epsilon_lower_bound_from_counts` (issue 23).

    Parameters
    ----------
    count_d, count_dp : ndarray of int64, shape (n_thresholds,)
        Scores at or above each threshold, in D and in D'.
    n_d, n_dp : int
        Scores per world, >= 1.
    thresholds : ndarray of float64, shape (n_thresholds,)
        The threshold grid.
    confidence : float
        Family-wise confidence, in (0, 1).

    Returns
    -------
    EventBounds
    """
    n_tests = 2 * thresholds.size
    level = (1.0 - confidence) / (2 * n_tests)
    return EventBounds(
        thresholds=thresholds,
        low_d=clopper_pearson_lower(count_d, n_d, level),
        high_d=clopper_pearson_upper(count_d, n_d, level),
        low_d_prime=clopper_pearson_lower(count_dp, n_dp, level),
        high_d_prime=clopper_pearson_upper(count_dp, n_dp, level),
        count_d=count_d,
        count_d_prime=count_dp,
        n_samples_d=n_d,
        n_samples_d_prime=n_dp,
        n_tests=n_tests,
        confidence=confidence,
    )


def epsilon_lower_bound_at_delta(bound: EpsilonLowerBound, delta: float) -> float:
    """The bound's event re-read at another δ: ``ln((p_low − δ) / q_up)``, clipped at 0.

    The Clopper–Pearson bounds ``p_low`` and ``q_up`` of the confirmed event (its
    counts, sample sizes, direction and level ``(1 − confidence)/(2 n_tests)``) do not
    depend on δ, and on the event that they hold, ``P(O) <= e^ε Q(O) + δ`` gives
    ``ε >= ln((p_low − δ)/q_up)`` for *every* δ at once. So the value holds at the
    bound's confidence simultaneously with ``bound`` itself, with no further
    correction (the event was chosen for ``bound.delta``, so it may be weak at another
    δ, never invalid).

    Parameters
    ----------
    bound : EpsilonLowerBound
    delta : float
        In [0, 1).

    Returns
    -------
    float
        >= 0; 0 when ``bound`` has no event (direction ``"none"``).

    Examples
    --------
    >>> from fedpriv.audit.estimators import estimate_epsilon_lower_bound
    >>> b = estimate_epsilon_lower_bound([1.0] * 90 + [0.0] * 10, [1.0] * 10 + [0.0] * 90,
    ...                                  thresholds=[0.5], delta=0.0)
    >>> epsilon_lower_bound_at_delta(b, 0.0) == b.epsilon_lower_bound
    True
    >>> epsilon_lower_bound_at_delta(b, 0.5) < b.epsilon_lower_bound
    True
    """
    delta = check_delta("delta", delta)
    if bound.direction == NO_EVIDENCE:
        return 0.0
    level = (1.0 - bound.confidence) / (2 * bound.n_tests)
    if bound.direction == DIRECTIONS[0]:
        k_num, n_num, k_den, n_den = (
            bound.count_d,
            bound.n_samples_d,
            bound.count_d_prime,
            bound.n_samples_d_prime,
        )
    else:
        k_num, n_num, k_den, n_den = (
            bound.count_d_prime,
            bound.n_samples_d_prime,
            bound.count_d,
            bound.n_samples_d,
        )
    excess = float(clopper_pearson_lower(k_num, n_num, level)) - delta
    if excess <= 0.0:
        return 0.0
    return max(0.0, math.log(excess) - math.log(float(clopper_pearson_upper(k_den, n_den, level))))
