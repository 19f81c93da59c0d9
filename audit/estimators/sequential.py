"""Anytime-valid bounds for sequential audits: confidence sequences on event rates.

A sequential audit draws its samples in batches and looks at the evidence after each
batch, stopping as soon as the claim is refuted. Clopper–Pearson bounds recomputed at
every look are *not* valid under such optional stopping (each look spends the whole
error budget again). A confidence sequence is: a sequence of intervals ``CS_n`` with
``P(for all n: p in CS_n) >= 1 - α``, so the bounds at any data-dependent stopping time
hold at level ``1 - α``.

The sequence used here is the conjugate beta-binomial mixture (Robbins 1970, "Statistical
methods related to the law of the iterated logarithm", Ann. Math. Statist. 41; the
"conjugate mixture" boundaries of Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2), 2021). For
i.i.d. Bernoulli(p) indicators with ``S_n`` successes in ``n`` draws,

    ``M_n(p) = B(a + S_n, b + n - S_n) / B(a, b) / (p^{S_n} (1 - p)^{n - S_n})``

is the likelihood ratio of the Beta(a, b) mixture against ``p``, a nonnegative
martingale with ``M_0 = 1`` under ``p``; Ville's inequality gives ``P(exists n:
M_n(p) >= 1/α) <= α``, so ``CS_n = {p : M_n(p) < 1/α}`` is a confidence sequence. It is
an interval (``ln M_n`` is convex in ``p``), found here by bisection, each end rounded
outwards. Every estimator of the fixed-sample audit (ε at δ, δ at ε', the Gaussian-DP μ)
is then evaluated on these bounds instead of Clopper–Pearson ones, with the same union
bound over thresholds and worlds (:mod:`fedpriv.audit.estimators.bounds`).
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.audit.estimators.bounds import EventBounds
from fedpriv.audit.estimators.curve import CurveAudit
from fedpriv.audit.estimators.gdp import MuLowerBound
from fedpriv.audit.estimators.threshold import DIRECTIONS, NO_EVIDENCE, EpsilonLowerBound
from fedpriv.privacy.checks import check_open_unit

__all__ = [
    "beta_binomial_confidence_sequence",
    "curve_from_bounds",
    "epsilon_from_bounds",
    "mu_from_bounds",
    "sequential_event_bounds",
]

_BISECTIONS = 64  # halves the bracket to 2**-64 of its width; ends rounded outwards


def _log_likelihood(p: np.ndarray, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``ln(p^k (1 - p)^(n - k))`` (``0 ln 0 = 0``)."""
    from scipy import special

    with np.errstate(divide="ignore", invalid="ignore"):
        return special.xlogy(k, p) + special.xlog1py(n - k, -p)


def beta_binomial_confidence_sequence(
    successes: object,
    n_trials: object,
    *,
    significance: float,
    prior: tuple[float, float] = (1.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Time-uniform two-sided bounds on a Bernoulli rate (beta-binomial mixture).

    Parameters
    ----------
    successes, n_trials : array_like of int, broadcastable
        Successes ``S_n`` among the first ``n`` draws, ``0 <= S_n <= n``.
    significance : float
        ``α`` in (0, 1): the probability that the true rate ever leaves the interval,
        over *all* ``n`` (both ends together).
    prior : (float, float), default (1, 1)
        Beta parameters of the mixture, each > 0 (any choice is valid; it moves
        where the sequence is tightest).

    Returns
    -------
    low, high : ndarray of float64
        ``low <= p <= high`` for every ``n`` simultaneously with probability ``>= 1 - α``;
        ``low = 0`` when ``S_n = 0`` and ``high = 1`` when ``S_n = n``.

    Raises
    ------
    ValueError
        If ``significance`` is not in (0, 1), a prior parameter is not > 0, or a count
        is out of range.

    Examples
    --------
    >>> low, high = beta_binomial_confidence_sequence(500, 1000, significance=0.05)
    >>> 0.44 < float(low) < 0.5 < float(high) < 0.56  # Clopper–Pearson: 0.469, 0.531
    True
    """
    from scipy import special

    alpha = check_open_unit("significance", significance)
    a, b = (float(v) for v in prior)
    if not (a > 0.0 and b > 0.0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"`prior` must be two finite numbers > 0, got {prior!r}.")
    k, n = np.broadcast_arrays(
        np.asarray(successes, dtype=np.float64), np.asarray(n_trials, dtype=np.float64)
    )
    if k.size and (np.any(k < 0) or np.any(k > n) or np.any(n < 1)):
        raise ValueError("`successes` must be in [0, n_trials] with n_trials >= 1.")
    # ln M_n(p) < ln(1/α)  <=>  ln p^k (1-p)^(n-k) > ln B(a+k, b+n-k) - ln B(a, b) - ln(1/α)
    floor = special.betaln(a + k, b + n - k) - special.betaln(a, b) - math.log(1.0 / alpha)
    center = k / np.maximum(n, 1.0)

    def solve(inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
        # invariant: ln M(inside) < ln(1/α) <= ln M(outside); returns the outside end
        for _ in range(_BISECTIONS):
            mid = 0.5 * (inside + outside)
            is_in = _log_likelihood(mid, k, n) > floor
            inside = np.where(is_in, mid, inside)
            outside = np.where(is_in, outside, mid)
        return outside

    zero, one = np.zeros_like(center), np.ones_like(center)
    low = np.where(k > 0, solve(center.copy(), zero), 0.0)
    high = np.where(k < n, solve(center.copy(), one), 1.0)
    # ln M(0) = +inf for k > 0 and ln M(1) = +inf for k < n, so the brackets are valid
    return np.asarray(low), np.asarray(high)


def sequential_event_bounds(
    count_d: np.ndarray,
    n_d: int,
    count_d_prime: np.ndarray,
    n_d_prime: int,
    *,
    thresholds: np.ndarray,
    confidence: float,
) -> EventBounds:
    """The four bounds per threshold from confidence sequences, jointly at ``confidence``.

    One two-sided sequence per (threshold, world) at ``α / (2 n_thresholds)``, ``α = 1 -
    confidence`` (a union bound over the ``2 n_thresholds`` sequences, each covering
    every sample size), so the bounds hold at every look and any stopping time.

    Parameters
    ----------
    count_d : ndarray of int64, shape (n_thresholds,)
        Samples of M(D) at or above each threshold.
    n_d : int
        Samples of M(D) drawn so far, >= 1.
    count_d_prime : ndarray of int64, shape (n_thresholds,)
        The same for M(D').
    n_d_prime : int
        Samples of M(D') drawn so far, >= 1.
    thresholds : ndarray of float64, shape (n_thresholds,)
        The score thresholds, fixed before any sample is seen.
    confidence : float
        Joint confidence of all the bounds, in (0, 1).

    Returns
    -------
    EventBounds
        Lower and upper bounds of both event rates per threshold, with the counts.

    Raises
    ------
    ValueError
        If ``confidence`` is not in (0, 1).
    """
    thresholds = np.asarray(thresholds, dtype=np.float64)
    alpha = (1.0 - check_open_unit("confidence", confidence)) / (2 * thresholds.size)
    low_d, high_d = beta_binomial_confidence_sequence(count_d, n_d, significance=alpha)
    low_dp, high_dp = beta_binomial_confidence_sequence(
        count_d_prime, n_d_prime, significance=alpha
    )
    return EventBounds(
        thresholds=thresholds,
        low_d=low_d,
        high_d=high_d,
        low_d_prime=low_dp,
        high_d_prime=high_dp,
        count_d=np.asarray(count_d, dtype=np.int64),
        count_d_prime=np.asarray(count_d_prime, dtype=np.int64),
        n_samples_d=int(n_d),
        n_samples_d_prime=int(n_d_prime),
        n_tests=2 * thresholds.size,
        confidence=confidence,
    )


def epsilon_from_bounds(bounds: EventBounds, delta: float) -> EpsilonLowerBound:
    """``max ln((p_lo − δ)/q_hi)`` over the tests of ``bounds`` (0 without evidence).

    Parameters
    ----------
    bounds : EventBounds
        From :func:`sequential_event_bounds`.
    delta : float
        δ in [0, 1) at which ε is bounded.

    Returns
    -------
    EpsilonLowerBound
        ε in nats with the threshold and direction that attain it; valid at
        ``bounds.confidence`` at any stopping time.
    """
    numerator, denominator = bounds.directed()
    excess = numerator - delta
    epsilons = np.zeros(excess.size)
    evident = excess > 0.0
    epsilons[evident] = np.log(excess[evident]) - np.log(denominator[evident])
    best = int(np.argmax(epsilons))
    n_thr = bounds.thresholds.size
    common = dict(
        confidence=bounds.confidence,
        n_samples=min(bounds.n_samples_d, bounds.n_samples_d_prime),
        n_samples_d=bounds.n_samples_d,
        n_samples_d_prime=bounds.n_samples_d_prime,
        n_tests=bounds.n_tests,
        delta=delta,
    )
    if epsilons[best] <= 0.0:
        return EpsilonLowerBound(
            epsilon_lower_bound=0.0,
            threshold=math.nan,
            direction=NO_EVIDENCE,
            count_d=0,
            count_d_prime=0,
            **common,
        )
    index = best % n_thr
    return EpsilonLowerBound(
        epsilon_lower_bound=float(epsilons[best]),
        threshold=float(bounds.thresholds[index]),
        direction=DIRECTIONS[best // n_thr],
        count_d=int(bounds.count_d[index]),
        count_d_prime=int(bounds.count_d_prime[index]),
        **common,
    )


def mu_from_bounds(bounds: EventBounds) -> MuLowerBound:
    """``max Φ⁻¹(p_lo) − Φ⁻¹(q_hi)`` over the tests (the Gaussian-DP μ lower bound).

    Parameters
    ----------
    bounds : EventBounds
        From :func:`sequential_event_bounds`.

    Returns
    -------
    MuLowerBound
        μ >= 0 with the threshold and direction that attain it (Dong, Roth & Su,
        arXiv:1905.02383, Def. 2.6).
    """
    from scipy import special

    numerator, denominator = bounds.directed()
    with np.errstate(divide="ignore", invalid="ignore"):
        mus = special.ndtri(numerator) - special.ndtri(denominator)
    mus = np.where(np.isnan(mus), -np.inf, mus)
    best = int(np.argmax(mus))
    n_samples = min(bounds.n_samples_d, bounds.n_samples_d_prime)
    if not mus[best] > 0.0:
        return MuLowerBound(
            mu_lower_bound=0.0,
            confidence=bounds.confidence,
            n_samples=n_samples,
            threshold=math.nan,
            direction=NO_EVIDENCE,
            n_tests=bounds.n_tests,
        )
    n_thr = bounds.thresholds.size
    return MuLowerBound(
        mu_lower_bound=float(mus[best]),
        confidence=bounds.confidence,
        n_samples=n_samples,
        threshold=float(bounds.thresholds[best % n_thr]),
        direction=DIRECTIONS[best // n_thr],
        n_tests=bounds.n_tests,
    )


def curve_from_bounds(bounds: EventBounds, *, epsilons: np.ndarray, claim: object) -> CurveAudit:
    """``δ_LB(ε') = max(0, max p_lo − e^{ε'} q_hi)`` on the grid, against ``claim``.

    Parameters
    ----------
    bounds : EventBounds
        From :func:`sequential_event_bounds`.
    epsilons : ndarray of float64, shape (n_epsilons,)
        The ε' grid in nats, predeclared (see
        :func:`~fedpriv.audit.estimators.curve.default_epsilon_grid`).
    claim : guarantee
        Any guarantee with ``get_delta(target_epsilon)``.

    Returns
    -------
    CurveAudit
        ``δ_LB(ε')`` and the claim's δ(ε') on the grid.
    """
    numerator, denominator = bounds.directed()
    grid = np.asarray(epsilons, dtype=np.float64)
    deltas = np.maximum(
        0.0, np.max(numerator[None, :] - np.exp(grid)[:, None] * denominator[None, :], axis=1)
    )
    return CurveAudit(
        epsilons=tuple(float(e) for e in grid),
        delta_lower_bounds=tuple(float(d) for d in deltas),
        claimed_deltas=tuple(float(claim.get_delta(e)) for e in grid),  # type: ignore[attr-defined]
        confidence=bounds.confidence,
        n_samples=min(bounds.n_samples_d, bounds.n_samples_d_prime),
        n_tests=bounds.n_tests,
    )
