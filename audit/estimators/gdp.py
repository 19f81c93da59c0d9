"""Gaussian-DP μ lower bound from bounds on a test's false positive/negative rates.

A mechanism is μ-GDP (Dong, Roth & Su, arXiv:1905.02383, Def. 2.6) when every test
of D' (null) against D has type-II error ``β >= Φ(Φ⁻¹(1 - α) - μ)`` at type-I error
``α``. For the event ``{score >= c}`` read as "reject D'", ``α = FPR = P_D'(O)`` and
``1 - β = TPR = P_D(O)``, which rearranges to ``μ >= Φ⁻¹(TPR) - Φ⁻¹(FPR)``. With a
Clopper–Pearson lower bound on TPR and an upper bound on FPR (so an upper bound on
FNR = 1 - TPR), ``μ_LB = Φ⁻¹(1 - FPR_up) - Φ⁻¹(FNR_up)`` is a lower bound on μ
(Nasr et al., "Tight Auditing of DPML", USENIX Sec. 2023, arXiv:2302.07956, Sec. 4;
``jax_privacy.auditing.CanaryScoreAuditor.epsilon_from_gdp``). The relation is
symmetric, so the mirrored test (worlds swapped) is used too.

Converting μ_LB to ε at a δ (:func:`fedpriv.privacy.accounting.guarantees.gaussian_dp_epsilon`) refutes
a μ-GDP claim, the natural claim of a Gaussian mechanism. It refutes an arbitrary
(ε, δ) claim only under the assumption that the mechanism's trade-off curve has the
Gaussian shape; reports must say so. :func:`fedpriv.audit.estimators.shape.assess_gaussian_shape`
tests that assumption on the scores.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.audit.estimators.bounds import EventBounds, simultaneous_event_bounds
from fedpriv.audit.estimators.threshold import DIRECTIONS, NO_EVIDENCE
from fedpriv.privacy.accounting.guarantees import GaussianDP
from fedpriv.privacy.checks import check_delta

__all__ = ["MuLowerBound", "claim_mu", "estimate_gdp_mu_lower_bound", "mu_lower_bound_from_bounds"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MuLowerBound:
    """Result of :func:`estimate_gdp_mu_lower_bound`.

    Attributes
    ----------
    mu_lower_bound : float
        Lower bound on the GDP parameter μ, >= 0 (0 without evidence).
    confidence : float
        Family-wise confidence, in (0, 1).
    n_samples : int
        Samples per world (the smaller world).
    threshold : float
        Threshold of the best test; NaN without evidence.
    direction : str
        ``"D>D'"``, ``"D'>D"`` or ``"none"``.
    n_tests : int
        (threshold, direction) tests the confidence was split over.
    """

    mu_lower_bound: float
    confidence: float
    n_samples: int
    threshold: float
    direction: str
    n_tests: int

    def epsilon_lower_bound(self, delta: float) -> float:
        """ε at ``delta`` of ``mu_lower_bound``-GDP.

        This is NOT a lower bound on the audited mechanism's ε unless the mechanism is
        Gaussian-DP-shaped (its trade-off curve is a Gaussian one): for Laplace(1), which
        is exactly 1-DP, a μ bound near 2 converts to ε ≈ 4.4 at δ = 1e-5. Use it to
        describe a μ-GDP claim, never as evidence on ε; the audit measures ε directly
        (:func:`~fedpriv.audit.estimators.estimate_epsilon_lower_bound`).

        Parameters
        ----------
        delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats of μ-GDP at ``delta`` (Dong, Roth & Su, arXiv:1905.02383,
            Cor. 2.13), with μ = ``mu_lower_bound``.

        Raises
        ------
        ValueError
            If ``delta`` is not in [0, 1).
        """
        from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon

        return float(gaussian_dp_epsilon(self.mu_lower_bound, check_delta("delta", delta)))

    def to_dict(self) -> dict[str, Any]:
        """Fields as a flat dict."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def estimate_gdp_mu_lower_bound(
    scores_d: object, scores_d_prime: object, *, thresholds: object, confidence: float = 0.95
) -> MuLowerBound:
    """Lower-bound the Gaussian-DP μ: ``max_c Φ⁻¹(TPR_lo(c)) - Φ⁻¹(FPR_up(c))``.

    Uses the same simultaneous Clopper–Pearson family as
    :func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound` (so both results hold
    jointly at `confidence`), over both directions.

    Parameters
    ----------
    scores_d, scores_d_prime : array_like of float, shape (n_samples_d,), (n_samples_d_prime,)
        Finite scalar scores of the outputs in worlds D and D'.
    thresholds : array_like of float, shape (n_thresholds,)
        Thresholds fixed before these scores were seen. For Gaussian-shaped
        scores the best thresholds lie near the middle of the two distributions,
        not in the tails.
    confidence : float, default 0.95
        Family-wise confidence, in (0, 1).

    Returns
    -------
    MuLowerBound

    Raises
    ------
    ValueError
        If an array is empty, not 1-D or not finite, or ``confidence`` is not in
        (0, 1).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d, dp = rng.normal(1, 1, 10**5), rng.normal(0, 1, 10**5)
    >>> bound = estimate_gdp_mu_lower_bound(d, dp, thresholds=[0.25, 0.5, 0.75])
    >>> 0.95 < bound.mu_lower_bound <= 1.0, bound.direction
    (True, "D>D'")
    """
    bounds = simultaneous_event_bounds(
        scores_d, scores_d_prime, thresholds=thresholds, confidence=confidence
    )
    return mu_lower_bound_from_bounds(bounds)


def mu_lower_bound_from_bounds(bounds: EventBounds) -> MuLowerBound:
    """:func:`estimate_gdp_mu_lower_bound` on event bounds already computed from the scores.

    The same result, field for field, without sorting the scores again.

    Parameters
    ----------
    bounds : EventBounds
        :func:`~fedpriv.audit.estimators.bounds.simultaneous_event_bounds` of the
        scores, thresholds and confidence.

    Returns
    -------
    MuLowerBound
    """
    from scipy import special

    numerator, denominator = bounds.directed()
    with np.errstate(divide="ignore", invalid="ignore"):
        mus = special.ndtri(numerator) - special.ndtri(denominator)
    mus = np.where(np.isnan(mus), -np.inf, mus)
    best = int(np.argmax(mus))
    n_samples = min(bounds.n_samples_d, bounds.n_samples_d_prime)
    n_thresholds = bounds.thresholds.size
    if not mus[best] > 0.0:
        return MuLowerBound(
            mu_lower_bound=0.0,
            confidence=bounds.confidence,
            n_samples=n_samples,
            threshold=math.nan,
            direction=NO_EVIDENCE,
            n_tests=bounds.n_tests,
        )
    return MuLowerBound(
        mu_lower_bound=float(mus[best]),
        confidence=bounds.confidence,
        n_samples=n_samples,
        threshold=float(bounds.thresholds[best % n_thresholds]),
        direction=DIRECTIONS[best // n_thresholds],
        n_tests=bounds.n_tests,
    )


def claim_mu(claim: Any, delta: float) -> float:
    """μ₀ of the Gaussian-DP reading: the largest μ with ``ε_μ(δ) <= claim's ε at δ``,
    rounded up (a larger μ₀ only removes alarms).

    A GaussianDP claim is its own μ. Otherwise μ₀ solves ``δ_μ(ε) = δ`` (the GDP δ(ε)
    of Dong, Roth & Su 2019, Cor. 2.13, increasing in μ) with ``ε`` the claim's ε at
    ``δ``; 0 when that ε is 0 and ``inf`` when it is infinite.

    Parameters
    ----------
    claim : Guarantee
        The claim (anything with ``get_epsilon(target_delta)``; a ``GaussianDP`` is read
        directly).
    delta : float
        The δ the claim is read at, in [0, 1).

    Returns
    -------
    float
        μ₀ >= 0, possibly ``inf``.
    """
    if isinstance(claim, GaussianDP):
        return float(claim.mu)
    from fedpriv.privacy.accounting.conversions import gaussian_dp_delta
    from scipy import optimize

    epsilon = float(claim.get_epsilon(delta))
    if epsilon <= 0.0 or delta <= 0.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    high = 1.0
    while gaussian_dp_delta(high, epsilon) < delta:
        high *= 2.0
    # the root rounded up: reading the claim as a larger μ can only remove alarms
    root = optimize.brentq(
        lambda mu: gaussian_dp_delta(mu, epsilon) - delta, 0.0, high, xtol=1e-14, rtol=1e-14
    )
    while gaussian_dp_delta(root, epsilon) < delta:
        root = math.nextafter(root, math.inf)
    return float(root)
