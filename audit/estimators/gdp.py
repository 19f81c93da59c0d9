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
Gaussian shape; reports must say so. :func:`assess_gaussian_shape` tests that
assumption on the scores: the equal-variance binormal model of the trade-off curve
(Dorfman & Alf 1969), fitted by maximum likelihood to pooled-quantile bins and judged
by its likelihood-ratio G² statistic.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.audit.estimators._bounds import EventBounds, simultaneous_event_bounds
from fedpriv.audit.estimators.threshold import DIRECTIONS, NO_EVIDENCE, _check_samples
from fedpriv.privacy.accounting.guarantees import GaussianDP
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_open_unit

__all__ = [
    "SHAPE_BINS",
    "SHAPE_MIN_SAMPLES",
    "GaussianShapeTest",
    "MuLowerBound",
    "assess_gaussian_shape",
    "estimate_gdp_mu_lower_bound",
    "gaussian_shape_from_counts",
    "pooled_quantile_edges",
]

#: Bins of the Gaussian-shape test: pooled-quantile cells of the two worlds' scores.
SHAPE_BINS = 10
#: Fewest samples per world the shape test runs on (50 pooled per bin): below it the
#: test is not run and the Gaussian-DP reading is declined.
SHAPE_MIN_SAMPLES = 250


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
    return _mu_lower_bound_from_bounds(bounds)


def _mu_lower_bound_from_bounds(bounds: EventBounds) -> MuLowerBound:
    """:func:`estimate_gdp_mu_lower_bound` on event bounds already computed from the
    scores (the same result, field for field, without sorting the scores again)."""
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GaussianShapeTest:
    """Result of :func:`assess_gaussian_shape`: is the trade-off curve Gaussian?

    Attributes
    ----------
    rejected : bool
        Whether the Gaussian shape is rejected at ``level`` (``p_value < level``; also
        True when the test could not be run, ``statistic`` NaN: too few samples).
    level : float
        Level of the test, in (0, 1).
    p_value : float
        Asymptotic p-value, ``P(χ²_df >= statistic)``; NaN when not run.
    statistic : float
        Likelihood-ratio statistic G² of the fitted Gaussian curve against the
        binned empirical one, >= 0; NaN when not run.
    df : int
        Degrees of freedom, ``n_bins - 2``.
    n_bins : int
        Pooled-quantile bins.
    n_samples : int
        Samples per world (the smaller world).
    mu_fit : float
        Maximum-likelihood μ of the fitted Gaussian trade-off curve G_μ (signed:
        positive when D's scores lie above D''s); NaN when not run.
    stage : str
        The samples tested: ``"pilot"`` (the scores themselves) or ``"confirmation"``
        (counts at bin edges fixed on the pilot, :func:`gaussian_shape_from_counts`).
    """

    rejected: bool
    level: float
    p_value: float
    statistic: float
    df: int
    n_bins: int
    n_samples: int
    mu_fit: float
    stage: str = "pilot"

    @property
    def description(self) -> str:
        """What was tested, at which level and the outcome, in words."""
        if math.isnan(self.statistic):
            return (
                f"the Gaussian shape could not be tested: {self.n_samples} pilot samples "
                f"per world, the test needs >= {SHAPE_MIN_SAMPLES}"
            )
        outcome = "rejected" if self.rejected else "not rejected"
        bins = "pooled-quantile bins" if self.stage == "pilot" else "bins cut on the pilot"
        return (
            f"Gaussian shape {outcome} at level {self.level:.3g}: the {self.stage}'s "
            f"empirical trade-off curve ({self.n_samples} samples per world, {self.n_bins} "
            f"{bins}) against the fitted Gaussian-DP curve G_μ with "
            f"μ = {abs(self.mu_fit):.4g}, G² = {self.statistic:.4g} on {self.df} df, "
            f"p = {self.p_value:.3g}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Fields and the description as a flat dict."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["description"] = self.description
        return out


def assess_gaussian_shape(
    scores_d: object, scores_d_prime: object, *, level: float, n_bins: int = SHAPE_BINS
) -> GaussianShapeTest:
    """Test whether the scores' trade-off curve is a Gaussian one, G_μ for some μ.

    The trade-off curve of the tests ``{score >= c}`` (randomized at ties) is G_μ
    (Dong, Roth & Su, arXiv:1905.02383, Def. 2.5) exactly when some increasing map
    sends the scores of D' to N(0, 1) and those of D to N(μ, 1): the equal-variance
    binormal model of ROC analysis. The pooled scores are cut at ``n_bins - 1``
    pooled quantiles (an atom shared by both worlds is split between the bins it
    spans in proportion, as a randomized test splits it, so a discrete output's flat
    stretches of likelihood ratio are seen as such); the model (``n_bins - 1``
    ordered cutpoints and μ) is fitted to the 2 × ``n_bins`` table by maximum
    likelihood (Dorfman & Alf, J. Math. Psych. 6, 1969, 487-496, with the variances
    held equal), and its likelihood-ratio statistic G² against the table is compared
    with χ² on ``n_bins - 2`` degrees of freedom. The test is invariant under any
    increasing map of the scores.

    Parameters
    ----------
    scores_d, scores_d_prime : array_like of float, shape (n_d,), (n_d_prime,)
        Finite scalar scores of worlds D and D'.
    level : float
        Level of the test, in (0, 1): under a Gaussian curve it rejects with
        probability about ``level`` (asymptotically).
    n_bins : int, default SHAPE_BINS
        Pooled-quantile bins, >= 3.

    Returns
    -------
    GaussianShapeTest
        Not run (``rejected`` True, statistic NaN) when a world has fewer than
        :data:`SHAPE_MIN_SAMPLES` scores.

    Raises
    ------
    ValueError
        If a score array is empty, not 1-D or not finite, ``level`` is not in (0, 1)
        or ``n_bins < 3``.
    TypeError
        If a score array does not hold real numbers.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> gauss = assess_gaussian_shape(rng.normal(1, 1, 10**4), rng.normal(0, 1, 10**4),
    ...                               level=0.01)
    >>> gauss.rejected, round(gauss.mu_fit, 1)
    (False, 1.0)
    >>> assess_gaussian_shape(rng.laplace(1, 1, 10**4), rng.laplace(0, 1, 10**4),
    ...                       level=0.01).rejected
    True
    """
    from scipy import stats

    scores_d = np.sort(_check_samples("scores_d", scores_d))
    scores_dp = np.sort(_check_samples("scores_d_prime", scores_d_prime))
    level = check_open_unit("level", level)
    n_bins = check_int_at_least("n_bins", n_bins, 3)
    n_samples = min(scores_d.size, scores_dp.size)
    if n_samples < SHAPE_MIN_SAMPLES:
        nan = math.nan
        return GaussianShapeTest(
            rejected=True, level=level, p_value=nan, statistic=nan, df=n_bins - 2,
            n_bins=n_bins, n_samples=n_samples, mu_fit=nan,
        )  # fmt: skip
    bins_dp, bins_d = _pooled_bins(scores_d, scores_dp, n_bins)
    statistic, mu = _fit_binormal(bins_dp, bins_d)
    p_value = float(stats.chi2.sf(statistic, n_bins - 2))
    return GaussianShapeTest(
        rejected=bool(p_value < level),
        level=level,
        p_value=p_value,
        statistic=float(statistic),
        df=n_bins - 2,
        n_bins=n_bins,
        n_samples=n_samples,
        mu_fit=float(mu),
    )


def pooled_quantile_edges(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, n_bins: int = SHAPE_BINS
) -> np.ndarray:
    """The distinct inner edges of :func:`assess_gaussian_shape`'s pooled-quantile bins.

    Parameters
    ----------
    scores_d, scores_d_prime : ndarray of float, shape (n_d,), (n_d_prime,)
        Finite scalar scores (the pilot's).
    n_bins : int, default SHAPE_BINS
        Bins, >= 3.

    Returns
    -------
    ndarray of float64, shape (m,), m <= n_bins - 1
        Increasing edges (an atom spanning several quantiles gives one edge).
    """
    pooled = np.sort(np.concatenate([np.ravel(scores_d), np.ravel(scores_d_prime)]))
    ranks = np.round(np.arange(1, n_bins) * pooled.size / n_bins).astype(np.intp)
    return np.unique(pooled[ranks]).astype(np.float64)


def gaussian_shape_from_counts(
    below_d: object, n_d: int, below_d_prime: object, n_d_prime: int, *, level: float
) -> GaussianShapeTest:
    """:func:`assess_gaussian_shape` on counts at bin edges fixed in advance.

    For fresh samples counted at edges chosen on other data (the audit's
    confirmation, at :func:`pooled_quantile_edges` of its pilot), the cells are fixed
    and the G² test is the textbook one (Dorfman & Alf 1969): ``m`` edges give
    ``m + 1`` cells and ``m - 1`` degrees of freedom. Ties at an edge fall on one side
    (no randomized split); atoms are the pilot test's business.

    Parameters
    ----------
    below_d, below_d_prime : array_like of int, shape (m,)
        Non-decreasing counts of each world's scores at or below (or strictly below)
        each increasing edge; the same convention for both worlds.
    n_d, n_d_prime : int
        Samples per world, >= each count.
    level : float
        Level of the test, in (0, 1).

    Returns
    -------
    GaussianShapeTest
        ``stage="confirmation"``; not run (statistic NaN, ``rejected`` False: the pilot
        test decides alone) with fewer than 2 edges.

    Raises
    ------
    ValueError
        If ``level`` is not in (0, 1), or the counts are not non-decreasing within
        [0, n].
    """
    from scipy import stats

    level = check_open_unit("level", level)
    cum_d = np.asarray(below_d, dtype=np.float64)
    cum_dp = np.asarray(below_d_prime, dtype=np.float64)
    for name, cum, n in (("below_d", cum_d, n_d), ("below_d_prime", cum_dp, n_d_prime)):
        if cum.ndim != 1 or np.any(np.diff(cum) < 0) or np.any(cum < 0) or np.any(cum > n):
            raise ValueError(f"`{name}` must be non-decreasing counts in [0, {n}], got {cum}.")
    n_bins = cum_d.size + 1
    n_samples = int(min(n_d, n_d_prime))
    if n_bins < 3:
        nan = math.nan
        return GaussianShapeTest(
            rejected=False, level=level, p_value=nan, statistic=nan, df=0, n_bins=n_bins,
            n_samples=n_samples, mu_fit=nan, stage="confirmation",
        )  # fmt: skip
    bins_d = np.diff(np.concatenate([[0.0], cum_d, [float(n_d)]]))
    bins_dp = np.diff(np.concatenate([[0.0], cum_dp, [float(n_d_prime)]]))
    statistic, mu = _fit_binormal(bins_dp, bins_d)
    p_value = float(stats.chi2.sf(statistic, n_bins - 2))
    return GaussianShapeTest(
        rejected=bool(p_value < level),
        level=level,
        p_value=p_value,
        statistic=float(statistic),
        df=n_bins - 2,
        n_bins=n_bins,
        n_samples=n_samples,
        mu_fit=float(mu),
        stage="confirmation",
    )


def _pooled_bins(
    sorted_d: np.ndarray, sorted_dp: np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of D' and D in ``n_bins`` pooled-quantile bins, atoms split in proportion."""
    pooled = np.sort(np.concatenate([sorted_d, sorted_dp]), kind="stable")
    ranks = np.round(np.arange(1, n_bins) * pooled.size / n_bins).astype(np.intp)
    edges = pooled[ranks]
    below = np.searchsorted(pooled, edges, "left")
    share = (ranks - below) / (np.searchsorted(pooled, edges, "right") - below)

    def counts(world: np.ndarray) -> np.ndarray:
        low = np.searchsorted(world, edges, "left")
        cumulative = low + share * (np.searchsorted(world, edges, "right") - low)
        return np.diff(np.concatenate([[0.0], cumulative, [float(world.size)]]))

    return counts(sorted_dp), counts(sorted_d)


def _cell_masses(edges: np.ndarray, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """N(shift, 1) masses between consecutive ``edges`` (±inf at the ends), computed
    on the side of the nearer tail, and the density at each edge."""
    from scipy import special

    z = edges - shift
    upper = special.ndtr(-z[:-1]) - special.ndtr(-z[1:])
    lower = special.ndtr(z[1:]) - special.ndtr(z[:-1])
    mass = np.where(z[:-1] > 0.0, upper, lower)
    return np.maximum(mass, 1e-300), np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _fit_binormal(bins_dp: np.ndarray, bins_d: np.ndarray) -> tuple[float, float]:
    """G² and μ of the maximum-likelihood equal-variance binormal fit to the table.

    Parameters ``x = (z_1, log(z_2 - z_1), ..., log(z_k-1 - z_k-2), μ)`` keep the
    cutpoints ordered; the gradient is analytic.
    """
    from scipy import optimize, special

    k = bins_dp.size

    def unpack(x: np.ndarray) -> tuple[np.ndarray, float]:
        inner = x[0] + np.concatenate([[0.0], np.cumsum(np.exp(x[1 : k - 1]))])
        return np.concatenate([[-np.inf], inner, [np.inf]]), float(x[k - 1])

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        edges, mu = unpack(x)
        p, dens_p = _cell_masses(edges, 0.0)
        q, dens_q = _cell_masses(edges, mu)
        value = -(bins_dp @ np.log(p) + bins_d @ np.log(q))
        ratio_p, ratio_q = bins_dp / p, bins_d / q
        # d value / d z_j for the inner edges j = 1..k-1 (bin j below, j+1 above)
        grad_z = dens_p[1:-1] * (ratio_p[1:] - ratio_p[:-1]) + dens_q[1:-1] * (
            ratio_q[1:] - ratio_q[:-1]
        )
        grad_mu = -np.sum(ratio_q * (dens_q[:-1] - dens_q[1:]))
        tail = np.cumsum(grad_z[::-1])[::-1]  # sum over j >= i
        grad = np.concatenate([[tail[0]], np.exp(x[1 : k - 1]) * tail[1:], [grad_mu]])
        return float(value), grad

    n_dp, n_d = bins_dp.sum(), bins_d.sum()
    clip = 0.5 / max(n_dp, n_d)
    z_dp = special.ndtri(np.clip(np.cumsum(bins_dp)[:-1] / n_dp, clip, 1.0 - clip))
    z_d = special.ndtri(np.clip(np.cumsum(bins_d)[:-1] / n_d, clip, 1.0 - clip))
    mu0 = float(np.mean(z_dp - z_d))
    start = np.maximum.accumulate(0.5 * (z_dp + z_d + mu0))
    x0 = np.concatenate([[start[0]], np.log(np.maximum(np.diff(start), 1e-3)), [mu0]])
    fit = optimize.minimize(objective, x0, jac=True, method="BFGS")
    edges, mu = unpack(fit.x)
    p, _ = _cell_masses(edges, 0.0)
    q, _ = _cell_masses(edges, mu)
    statistic = 0.0
    for observed, expected in ((bins_dp, n_dp * p), (bins_d, n_d * q)):
        seen = observed > 0
        statistic += 2.0 * float(np.sum(observed[seen] * np.log(observed[seen] / expected[seen])))
    return max(statistic, 0.0), mu


def _claim_mu(claim: Any, delta: float) -> float:
    """μ₀ of the Gaussian-DP reading: the largest μ with ``ε_μ(δ) <= claim's ε at δ``,
    rounded up (a larger μ₀ only removes alarms).

    A GaussianDP claim is its own μ. Otherwise μ₀ solves ``δ_μ(ε) = δ`` (the GDP δ(ε)
    of Dong, Roth & Su 2019, Cor. 2.13, increasing in μ) with ``ε`` the claim's ε at
    ``δ``; 0 when that ε is 0 and ``inf`` when it is infinite.
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
