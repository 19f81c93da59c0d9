"""Threshold tests: Clopper–Pearson ε lower bounds over a predeclared grid.

An audit runs a mechanism many times on two neighboring datasets D and D', reduces
each output to a scalar score, and asks how differently the score behaves in the two
worlds. For any event O fixed before the samples are seen, an (ε, δ)-DP mechanism
satisfies ``P_D(O) <= exp(ε) P_D'(O) + δ`` (post-processing), so exact
Clopper–Pearson bounds on the two probabilities give a lower bound on ε that holds
with a stated confidence. This is the estimator shared by Jagielski et al. (2020),
Nasr et al. (2021), DP-Sniper and ``jax_privacy.auditing``.

A lower bound can refute a privacy claim (bound > claimed ε) but can never certify
one. Re-exported by :mod:`fedpriv.audit.estimators` (the public home of these names).

Length: half of it documents the statistics (Clopper–Pearson bounds, the Bonferroni
split, the threshold grid) that every other estimator builds on.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Final

import numpy as np
from fedpriv.privacy.checks import (
    check_delta,
    check_finite_array,
    check_int_at_least,
    check_positive,
    check_real,
)
from fedpriv.privacy.checks import check_open_unit as _check_open_unit

__all__ = [
    "DIRECTIONS",
    "NO_EVIDENCE",
    "EpsilonLowerBound",
    "check_sample_array",
    "clopper_pearson_interval",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "count_at_least",
    "count_at_least_unsorted",
    "epsilon_lower_bound_from_counts",
    "estimate_epsilon_lower_bound",
    "laplace_threshold_grid",
]

DIRECTIONS: Final[tuple[str, str]] = ("D>D'", "D'>D")
"""Test directions: which world's probability is in the numerator."""

NO_EVIDENCE: Final[str] = "none"
"""`EpsilonLowerBound.direction` when no test gave a positive bound."""

_SIDES: Final[tuple[str, str, str]] = ("lower", "upper", "two-sided")


def _check_integral_array(name: str, values: object, lower: int) -> np.ndarray:
    """Return ``values`` as an int64 array of integers >= ``lower``."""
    array = np.asarray(values)
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must contain integers, got dtype {array.dtype}.")
    if array.dtype.kind == "f" and (
        not np.all(np.isfinite(array)) or np.any(array != np.round(array))
    ):
        bad = array[~np.isfinite(array) | (array != np.round(array))].flat[0]
        raise ValueError(f"`{name}` must contain integers, got {bad!r}.")
    array = array.astype(np.int64)
    if array.size and array.min() < lower:
        raise ValueError(f"`{name}` must be >= {lower}, got {array.min()}.")
    return array


def check_sample_array(name: str, values: object) -> np.ndarray:
    """Return ``values`` as a non-empty, finite, 1-D float64 array.

    Parameters
    ----------
    name : str
        The argument's name, for the error message.
    values : array_like of real
        Scores, thresholds or a grid.

    Returns
    -------
    ndarray of float64, shape (n,), n >= 1

    Raises
    ------
    TypeError
        If ``values`` is not an array of real numbers.
    ValueError
        If it is not finite, not 1-D or empty.
    """
    kind = np.asarray(values).dtype.kind
    if kind not in "biuf":
        raise TypeError(f"`{name}` must be an array of real numbers, got dtype kind {kind!r}.")
    array = check_finite_array(name, values)
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got shape {array.shape}.")
    if array.size == 0:
        raise ValueError(f"`{name}` must contain at least 1 value, got 0.")
    return array


def clopper_pearson_lower(successes: np.ndarray, n_trials: np.ndarray, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound at level ``level``; exactly 0 at k = 0.

    The ``level`` quantile of Beta(k, n - k + 1) (Clopper & Pearson 1934).

    Parameters
    ----------
    successes : ndarray of int64, any shape
        Successes k, in [0, n].
    n_trials : ndarray of int64, broadcastable with ``successes``
        Trials n, >= 1.
    level : float
        One-sided error probability, in (0, 1).

    Returns
    -------
    ndarray of float64, the broadcast shape
        Lower bounds on the success probability, in [0, 1].
    """
    from scipy import special

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    positive = k > 0
    safe_k = np.where(positive, k, 1.0)
    # the Beta(k, n-k+1) quantile: scipy.stats.beta.ppf computes the same boost
    # ibeta_inv (bit-identical), without importing scipy.stats (1-2 s, issue 23)
    return np.where(positive, special.betaincinv(safe_k, n - k + 1.0, level), 0.0)


def clopper_pearson_upper(successes: np.ndarray, n_trials: np.ndarray, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound at level ``level``; exactly 1 at k = n.

    The ``1 - level`` quantile of Beta(k + 1, n - k), computed as an inverse
    survival function (no cancellation for tiny levels).

    Parameters
    ----------
    successes : ndarray of int64, any shape
        Successes k, in [0, n].
    n_trials : ndarray of int64, broadcastable with ``successes``
        Trials n, >= 1.
    level : float
        One-sided error probability, in (0, 1).

    Returns
    -------
    ndarray of float64, the broadcast shape
        Upper bounds on the success probability, in [0, 1].
    """
    from scipy import special

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    below_n = k < n
    safe_rest = np.where(below_n, n - k, 1.0)
    # isf(level) rather than ppf(1 - level): no cancellation for tiny levels.
    return np.where(below_n, special.betainccinv(k + 1.0, safe_rest, level), 1.0)


def count_at_least(sorted_scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Number of ``sorted_scores`` that are >= each threshold.

    Parameters
    ----------
    sorted_scores : ndarray of float64, shape (n,)
        Scores in ascending order.
    thresholds : ndarray of float64, shape (m,)
        Thresholds, any order.

    Returns
    -------
    ndarray of int64, shape (m,)
    """
    below = np.searchsorted(sorted_scores, thresholds, side="left")
    return (sorted_scores.size - below).astype(np.int64)


#: Up to this many thresholds :func:`count_at_least_unsorted` compares every score
#: with each threshold (one pass per threshold); above it, it sorts a copy.
_COMPARE_MAX_THRESHOLDS: Final[int] = 64


def count_at_least_unsorted(
    scores: np.ndarray, thresholds: np.ndarray, orientation: int = 1
) -> np.ndarray:
    """Number of ``orientation * scores`` that are >= each threshold (int64), unsorted.

    The same integers as ``count_at_least(np.sort(orientation * scores),
    thresholds)``: both count the scores ``s`` with ``s >= t`` in IEEE comparison
    (``-0.0 == 0.0``; NaN never reaches an audit's counts), and for orientation -1,
    ``-s >= t`` is ``s <= -t`` exactly (negation is exact). With at most
    :data:`_COMPARE_MAX_THRESHOLDS` thresholds that is one comparison pass per
    threshold, ~5x faster than sorting a batch of 2**18 scores (issue 23); with more,
    a sorted copy. ``scores`` is never modified (it may be the caller's own array).

    Parameters
    ----------
    scores : ndarray, shape (n,)
        float64 scores, no NaN.
    thresholds : ndarray, shape (m,)
        float64 thresholds, any order.
    orientation : {1, -1}
        Sign applied to the scores before counting.

    Returns
    -------
    ndarray, shape (m,), int64
    """
    if thresholds.size > _COMPARE_MAX_THRESHOLDS:
        oriented = np.sort(scores if orientation == 1 else -1 * scores)
        return count_at_least(oriented, thresholds)
    hits = np.empty(scores.shape, dtype=bool)
    counts = np.empty(thresholds.size, dtype=np.int64)
    for i, threshold in enumerate(thresholds.tolist()):
        if orientation == 1:
            np.greater_equal(scores, threshold, out=hits)
        else:
            np.less_equal(scores, -threshold, out=hits)
        counts[i] = np.count_nonzero(hits)
    return counts


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EpsilonLowerBound:
    """Result of `estimate_epsilon_lower_bound`: the best test and its bound.

    Attributes
    ----------
    epsilon_lower_bound : float
        Lower bound on ε in nats, >= 0; 0 when no test gave evidence.
    confidence : float
        Family-wise confidence of the bound, in (0, 1).
    n_samples : int
        Samples per world, >= 1; the smaller of the two worlds when they differ.
    n_samples_d, n_samples_d_prime : int
        Samples in world D and in world D', each >= 1.
    threshold : float
        Threshold ``c`` of the best event ``{score >= c}``; NaN when there is no
        evidence.
    direction : str
        ``"D>D'"`` (P_D in the numerator), ``"D'>D"`` (P_D' in the numerator) or
        ``"none"`` when there is no evidence.
    n_tests : int
        Number of (threshold, direction) tests the confidence was split over, >= 1.
    delta : float
        The δ subtracted from the numerator, in [0, 1); 0 for pure DP.
    count_d, count_d_prime : int
        Samples of the best event in world D and in world D'; 0 when there is no
        evidence.

    Raises
    ------
    ValueError
        If a field is out of its range, or if ``direction`` is ``"none"`` while
        ``epsilon_lower_bound > 0`` or ``threshold`` is not NaN.
    """

    epsilon_lower_bound: float
    confidence: float
    n_samples: int
    n_samples_d: int
    n_samples_d_prime: int
    threshold: float
    direction: str
    n_tests: int
    delta: float
    count_d: int
    count_d_prime: int

    def __post_init__(self) -> None:
        epsilon = check_real("epsilon_lower_bound", self.epsilon_lower_bound)
        if not 0.0 <= epsilon < math.inf:
            raise ValueError(f"`epsilon_lower_bound` must be in [0, inf), got {epsilon!r}.")
        _check_open_unit("confidence", self.confidence)
        check_delta("delta", self.delta)
        n_d = check_int_at_least("n_samples_d", self.n_samples_d, 1)
        n_dp = check_int_at_least("n_samples_d_prime", self.n_samples_d_prime, 1)
        check_int_at_least("n_samples", self.n_samples, 1)
        if self.n_samples != min(n_d, n_dp):
            raise ValueError(
                "`n_samples` must equal min(n_samples_d, n_samples_d_prime) = "
                f"{min(n_d, n_dp)}, got {self.n_samples}."
            )
        check_int_at_least("n_tests", self.n_tests, 1)
        check_int_at_least("count_d", self.count_d, 0)
        check_int_at_least("count_d_prime", self.count_d_prime, 0)
        if self.count_d > n_d:
            raise ValueError(f"`count_d` must be <= n_samples_d = {n_d}, got {self.count_d}.")
        if self.count_d_prime > n_dp:
            raise ValueError(
                f"`count_d_prime` must be <= n_samples_d_prime = {n_dp}, got {self.count_d_prime}."
            )
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, numbers.Real):
            raise TypeError(
                f"`threshold` must be a real number, got {type(self.threshold).__name__}."
            )
        allowed = (*DIRECTIONS, NO_EVIDENCE)
        if self.direction not in allowed:
            raise ValueError(f"`direction` must be one of {allowed}, got {self.direction!r}.")
        if self.direction != NO_EVIDENCE and not math.isfinite(self.threshold):
            raise ValueError(
                f"`threshold` must be finite when `direction` is {self.direction!r}, "
                f"got {self.threshold!r}."
            )
        if self.direction == NO_EVIDENCE and (epsilon > 0.0 or not math.isnan(self.threshold)):
            raise ValueError(
                "`direction` 'none' requires epsilon_lower_bound == 0 and a NaN "
                f"threshold, got {epsilon!r} and {self.threshold!r}."
            )

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a flat ``{name: value}`` dict (JSON/pandas friendly)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def clopper_pearson_interval(
    successes: object, n_trials: object, *, significance: float, side: str
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper–Pearson) confidence bounds on a binomial proportion.

    With ``k`` successes in ``n`` trials and ``a = significance`` (``a / 2`` on each
    side when ``side="two-sided"``), the bounds are the Beta quantiles
    ``low = Beta(k, n - k + 1).ppf(a)`` and ``high = Beta(k + 1, n - k).isf(a)``, with
    the exact edge values ``low = 0`` at ``k = 0`` and ``high = 1`` at ``k = n``.
    A one-sided interval leaves its other end at the trivial value (0 or 1).

    Parameters
    ----------
    successes : array_like of int, shape (...)
        Success counts, each in [0, n_trials].
    n_trials : array_like of int, shape broadcastable with `successes`
        Numbers of trials, each >= 1.
    significance : float
        Probability that the interval misses the true proportion, in (0, 1).
    side : {"lower", "upper", "two-sided"}
        ``"lower"`` returns ``(low, 1)``, ``"upper"`` returns ``(0, high)``,
        ``"two-sided"`` splits `significance` equally between both ends.

    Returns
    -------
    low, high : ndarray of float64, shape ``np.broadcast(successes, n_trials).shape``
        Bounds in [0, 1]; 0-d arrays for scalar inputs.

    Raises
    ------
    TypeError
        If `successes` or `n_trials` are not integers, or `significance` is not a
        real number.
    ValueError
        If ``significance`` is not in (0, 1), ``side`` is not one of the three
        values, ``n_trials < 1``, or a count is outside [0, n_trials].

    See Also
    --------
    estimate_epsilon_lower_bound : uses the one-sided bounds.

    References
    ----------
    .. [1] Clopper and Pearson, "The use of confidence or fiducial limits
       illustrated in the case of the binomial", Biometrika 26(4), 1934.

    Examples
    --------
    >>> low, high = clopper_pearson_interval(0, 10, significance=0.05, side="two-sided")
    >>> float(low), round(float(high), 4)
    (0.0, 0.3085)
    >>> low, high = clopper_pearson_interval([5, 10], 10, significance=0.05,
    ...                                      side="lower")
    >>> low.round(4).tolist(), high.tolist()
    ([0.2224, 0.7411], [1.0, 1.0])
    """
    significance = _check_open_unit("significance", significance)
    if side not in _SIDES:
        raise ValueError(f"`side` must be one of {_SIDES}, got {side!r}.")
    k = _check_integral_array("successes", successes, 0)
    n = _check_integral_array("n_trials", n_trials, 1)
    k, n = np.broadcast_arrays(k, n)
    if k.size and np.any(k > n):
        raise ValueError(
            "`successes` must be <= `n_trials`, got successes "
            f"{k[k > n].tolist()} with n_trials {n[k > n].tolist()}."
        )
    level = significance / 2.0 if side == "two-sided" else significance
    low = np.zeros(k.shape) if side == "upper" else clopper_pearson_lower(k, n, level)
    high = np.ones(k.shape) if side == "lower" else clopper_pearson_upper(k, n, level)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def estimate_epsilon_lower_bound(
    scores_d: object,
    scores_d_prime: object,
    *,
    thresholds: object,
    confidence: float = 0.95,
    delta: float = 0.0,
) -> EpsilonLowerBound:
    """Lower-bound ε from threshold tests on a scalar score, Bonferroni-corrected.

    For every threshold ``c`` the event is ``O_c = {score >= c}``, and two tests
    use it (``n_tests = 2 * len(thresholds)``):

    - ``"D>D'"``: ``ε_c = ln((p_lo - δ) / q_hi)`` with ``p_lo`` a lower bound on
      ``P_D(O_c)`` and ``q_hi`` an upper bound on ``P_D'(O_c)``;
    - ``"D'>D"``: the same with the worlds swapped, i.e. ``p_lo`` bounds
      ``P_D'(O_c)`` from below and ``q_hi`` bounds ``P_D(O_c)`` from above.

    Complement events ``{score < c}`` are *not* tested. A score that is large in D
    (e.g. ``ln p_D(y) / p_D'(y)``) is served by ``"D>D'"``; to probe its lower tail
    ``{score <= c}``, pass ``-scores`` with ``-thresholds`` in a separate call and
    split the confidence between the calls yourself. Each bound is one-sided
    Clopper–Pearson at level ``a = (1 - confidence) / (2 * n_tests)``; a test with
    ``p_lo - δ <= 0`` scores 0. The result is the best test, clipped at 0.

    Guarantee: let the scores be a post-processing of the output of an (ε, δ)-DP
    mechanism run on fixed neighbors D and D', i.i.d. within each world (the two
    worlds need not be independent of each other), and let `thresholds` be fixed
    before the scores are seen. Then ``P_D(O) <= exp(ε) P_D'(O) + δ`` and its mirror
    hold for every event, all ``2 * n_tests`` Clopper–Pearson bounds hold
    simultaneously with probability >= confidence (union bound), and on that event
    the returned ``epsilon_lower_bound <= ε``. Choosing the thresholds after looking
    at these scores voids the guarantee; select on a separate pilot sample.

    Parameters
    ----------
    scores_d : array_like of float, shape (n_samples_d,)
        Scores of the outputs in world D. Finite, at least one.
    scores_d_prime : array_like of float, shape (n_samples_d_prime,)
        Scores of the outputs in world D'. Finite, at least one; the count may
        differ from world D (each world's bounds use its own count).
    thresholds : array_like of float, shape (n_thresholds,)
        Predeclared grid of thresholds; finite, at least one, any order. Repeats
        are allowed but still count towards ``n_tests``.
    confidence : float, default 0.95
        Family-wise confidence, in (0, 1).
    delta : float, default 0.0
        The δ of the (ε, δ) claim being audited, in [0, 1).

    Returns
    -------
    EpsilonLowerBound
        The bound with the threshold, direction and counts of the test achieving
        it. ``n_samples`` is ``min(n_samples_d, n_samples_d_prime)``. With no
        evidence the bound is 0, ``threshold`` NaN, ``direction`` ``"none"`` and
        both counts 0.

    Raises
    ------
    ValueError
        If a score array or `thresholds` is empty, not 1-D, or has NaN or
        infinite values, if ``confidence`` is not in (0, 1) or ``delta`` is not in
        [0, 1).
    TypeError
        If `confidence` or `delta` is not a real number.

    See Also
    --------
    clopper_pearson_interval : the exact binomial bounds used here.
    laplace_threshold_grid : a predeclared grid for Laplace log-likelihood ratios.

    Notes
    -----
    Counts come from one sort per world and ``np.searchsorted``, so the cost is
    ``O(n log n + n_thresholds log n)``. With ``n`` samples per world the bound
    cannot exceed about ``ln(n / ln(1/a))``: ``p_lo <= a**(1/n)`` and
    ``q_hi >= 1 - a**(1/n)``.

    References
    ----------
    .. [1] Jagielski, Ullman and Oprea, "Auditing Differentially Private Machine
       Learning: How Private is Private SGD?", NeurIPS 2020, arXiv:2006.07709,
       Sec. 3 (Algorithm 2, ε from Clopper–Pearson bounds on FPR and FNR).
    .. [2] Nasr, Song, Thakurta, Papernot and Carlini, "Adversary Instantiation:
       Lower Bounds for Differentially Private Machine Learning", IEEE S&P 2021,
       arXiv:2101.04535, Sec. 3.
    .. [3] Bichsel, Steffen, Bogunovic and Vechev, "DP-Sniper: Black-Box Discovery
       of Differential Privacy Violations using Classifiers", IEEE S&P 2021.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> b = 1.0  # Laplace scale; values 1 (D) and 0 (D'), so the true ε is 1
    >>> def llr(u):  # ln p_D(y)/p_D'(y) for u = y - 1, exactly 1/b when saturated
    ...     return np.clip(2.0 * u + 1.0, -1.0, 1.0) / b
    >>> scores_d = llr(rng.laplace(0.0, b, 100_000))
    >>> scores_d_prime = llr(rng.laplace(0.0, b, 100_000) - 1.0)
    >>> result = estimate_epsilon_lower_bound(
    ...     scores_d, scores_d_prime, thresholds=laplace_threshold_grid(1.0 / b))
    >>> 0.9 < result.epsilon_lower_bound <= 1.0, result.direction
    (True, "D>D'")
    """
    scores_d = check_sample_array("scores_d", scores_d)
    scores_d_prime = check_sample_array("scores_d_prime", scores_d_prime)
    thresholds = check_sample_array("thresholds", thresholds)
    confidence = _check_open_unit("confidence", confidence)
    delta = check_delta("delta", delta)

    count_d = count_at_least(np.sort(scores_d), thresholds)
    count_dp = count_at_least(np.sort(scores_d_prime), thresholds)
    return epsilon_lower_bound_from_counts(
        count_d,
        scores_d.size,
        count_dp,
        scores_d_prime.size,
        thresholds=thresholds,
        confidence=confidence,
        delta=delta,
    )


def epsilon_lower_bound_from_counts(
    count_d: object,
    n_samples_d: int,
    count_d_prime: object,
    n_samples_d_prime: int,
    *,
    thresholds: object,
    confidence: float = 0.95,
    delta: float = 0.0,
) -> EpsilonLowerBound:
    """:func:`estimate_epsilon_lower_bound` from the counts of its events.

    ``count_d[i]`` is the number of the ``n_samples_d`` scores of world D that are
    ``>= thresholds[i]`` (``count_d_prime`` likewise in D'); the bound, its test and
    its guarantee are those of :func:`estimate_epsilon_lower_bound`, which counts its
    scores and calls this. For callers that count events in a stream of batches
    without keeping the scores.

    Parameters
    ----------
    count_d, count_d_prime : array_like of int, shape (n_thresholds,)
        Scores at least each threshold, in [0, n_samples] of their world.
    n_samples_d, n_samples_d_prime : int
        Scores per world, >= 1.
    thresholds : array_like of float, shape (n_thresholds,)
        The predeclared thresholds, finite.
    confidence : float, default 0.95
        Family-wise confidence, in (0, 1).
    delta : float, default 0.0
        The claim's δ, in [0, 1).

    Returns
    -------
    EpsilonLowerBound

    Raises
    ------
    ValueError
        If a count is outside [0, n_samples], the shapes differ, a threshold is not
        finite, or ``confidence`` / ``delta`` is out of range.
    """
    thresholds = check_sample_array("thresholds", thresholds)
    confidence = _check_open_unit("confidence", confidence)
    delta = check_delta("delta", delta)
    n_d = check_int_at_least("n_samples_d", n_samples_d, 1)
    n_dp = check_int_at_least("n_samples_d_prime", n_samples_d_prime, 1)
    count_d = _check_integral_array("count_d", count_d, 0)
    count_dp = _check_integral_array("count_d_prime", count_d_prime, 0)
    if count_d.shape != thresholds.shape or count_dp.shape != thresholds.shape:
        raise ValueError(
            f"`count_d` and `count_d_prime` must have the thresholds' shape {thresholds.shape}, "
            f"got {count_d.shape} and {count_dp.shape}."
        )
    if np.any(count_d > n_d) or np.any(count_dp > n_dp):
        raise ValueError("a count exceeds its world's number of samples.")
    n_tests = 2 * thresholds.size
    level = (1.0 - confidence) / (2 * n_tests)

    # Test t < n_thresholds is "D>D'" at thresholds[t]; the rest are "D'>D".
    numerator = np.concatenate(
        [clopper_pearson_lower(count_d, n_d, level), clopper_pearson_lower(count_dp, n_dp, level)]
    )
    denominator = np.concatenate(
        [clopper_pearson_upper(count_dp, n_dp, level), clopper_pearson_upper(count_d, n_d, level)]
    )
    excess = numerator - delta
    epsilons = np.zeros(n_tests)
    evident = excess > 0.0
    epsilons[evident] = np.log(excess[evident]) - np.log(denominator[evident])

    best = int(np.argmax(epsilons))
    if epsilons[best] <= 0.0:
        return EpsilonLowerBound(
            epsilon_lower_bound=0.0,
            confidence=confidence,
            n_samples=min(n_d, n_dp),
            n_samples_d=n_d,
            n_samples_d_prime=n_dp,
            threshold=math.nan,
            direction=NO_EVIDENCE,
            n_tests=n_tests,
            delta=delta,
            count_d=0,
            count_d_prime=0,
        )
    index = best % thresholds.size
    return EpsilonLowerBound(
        epsilon_lower_bound=float(epsilons[best]),
        confidence=confidence,
        n_samples=min(n_d, n_dp),
        n_samples_d=n_d,
        n_samples_d_prime=n_dp,
        threshold=float(thresholds[index]),
        direction=DIRECTIONS[best // thresholds.size],
        n_tests=n_tests,
        delta=delta,
        count_d=int(count_d[index]),
        count_d_prime=int(count_dp[index]),
    )


def laplace_threshold_grid(max_llr: float, n: int = 32) -> np.ndarray:
    """Predeclared threshold grid for a Laplace log-likelihood-ratio score.

    Returns ``n`` equally spaced points from ``-max_llr`` to ``max_llr``, both
    endpoints exact. The grid depends only on the mechanism's parameters, never on
    samples, so it is a valid predeclared grid for `estimate_epsilon_lower_bound`.

    For Laplace noise of scale ``b`` on ``m`` values that each shift by 1 between
    D and D', the LLR ``sum_j (|y_j - S'_j| - |y_j - S_j|) / b`` is capped at
    ``max_llr = m / b`` and reaches the cap with probability ``2**-m`` in D. The
    event ``{LLR >= max_llr}`` is the optimal test (likelihood ratio exactly
    ``exp(m / b)``), hence the exact top point.

    Parameters
    ----------
    max_llr : float
        Largest value the LLR can take (ε of the mechanism under test), finite, > 0.
    n : int, default 32
        Number of grid points, >= 2.

    Returns
    -------
    ndarray of float64, shape (n,)
        Increasing grid with ``grid[0] == -max_llr`` and ``grid[-1] == max_llr``.

    Raises
    ------
    TypeError
        If `max_llr` is not a real number or `n` is not an integer.
    ValueError
        If ``max_llr`` is not in (0, inf) or ``n < 2``.

    Notes
    -----
    The top event only works if saturated samples compare ``>= max_llr`` in
    floating point. Computed naively, ``|y - S'| - |y - S|`` can round to
    ``1 - 2**-52``, and summing ``term / b`` over nodes can round below ``m / b``
    (with ``b = 3``, ``m = 5`` every saturated sample misses the event). Compute
    each node's term as ``np.clip(2 * (y - S) + 1, -1, 1)``, which is exactly
    ``±1`` when saturated (for ``S - S' = 1``), sum the terms, divide by ``b`` once,
    and pass ``max_llr = m / b``.

    Examples
    --------
    >>> grid = laplace_threshold_grid(1.25, n=5)
    >>> grid.tolist()
    [-1.25, -0.625, 0.0, 0.625, 1.25]
    """
    max_llr = check_positive("max_llr", max_llr)
    n = check_int_at_least("n", n, 2)
    grid = np.linspace(-max_llr, max_llr, n)
    grid[0], grid[-1] = -max_llr, max_llr
    return grid
