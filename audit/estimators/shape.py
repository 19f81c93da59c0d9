"""Is a trade-off curve Gaussian? The shape test of the Gaussian-DP reading.

The Gaussian-DP reading of an (ε, δ) claim (``reading="gaussian"`` of
:func:`fedpriv.audit.audit_mechanism`) turns a μ lower bound
(:mod:`fedpriv.audit.estimators.gdp`) into "not (ε, δ)-DP", which follows only when
the output's trade-off curve is a Gaussian one, G_μ (Dong, Roth & Su,
arXiv:1905.02383, Def. 2.5). That holds exactly when some increasing map sends the
scores of D' to N(0, 1) and those of D to N(μ, 1): the equal-variance binormal model
of ROC analysis. :func:`assess_gaussian_shape` fits it by maximum likelihood to
pooled-quantile bins of the scores (Dorfman & Alf, "Maximum-likelihood estimation of
parameters of signal-detection theory and determination of confidence intervals -
rating-method data", J. Math. Psych. 6, 1969, 487-496, with the variances held equal)
and judges the fit by its likelihood-ratio statistic G² against χ²;
:func:`gaussian_shape_from_counts` does the same on counts at bin edges fixed in
advance (the audit's confirmation, counted at :func:`pooled_quantile_edges` of its
pilot). :func:`shape_test_power_against_claim` computes the tests' power against the
non-Gaussian curves an (ε, δ) claim itself allows, which the reading needs before it
refutes.

Length: the shape test (two stages), its power against the claim's own curves and the
binormal fit they share; half of it is documentation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from fedpriv.audit.estimators.threshold import check_sample_array
from fedpriv.privacy.checks import check_int_at_least, check_open_unit

__all__ = [
    "SHAPE_BINS",
    "SHAPE_MIN_SAMPLES",
    "GaussianShapeTest",
    "ShapeTestPower",
    "assess_gaussian_shape",
    "gaussian_shape_from_counts",
    "laplace_tradeoff",
    "pilot_cells_d_prime",
    "pooled_quantile_edges",
    "shape_test_power",
    "shape_test_power_against_claim",
    "tight_tradeoff",
]

#: Bins of the Gaussian-shape test: pooled-quantile cells of the two worlds' scores.
SHAPE_BINS = 10
#: Fewest samples per world the shape test runs on (50 pooled per bin): below it the
#: test is not run and the Gaussian-DP reading is declined.
SHAPE_MIN_SAMPLES = 250


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

    scores_d = np.sort(check_sample_array("scores_d", scores_d))
    scores_dp = np.sort(check_sample_array("scores_d_prime", scores_d_prime))
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


def laplace_tradeoff(epsilon: float) -> Callable[[np.ndarray], np.ndarray]:
    """The Laplace mechanism's trade-off curve at ε (sensitivity 1, scale 1/ε).

    ``f(α) = F(F⁻¹(1 − α) − ε)`` with F the standard Laplace CDF (Dong, Roth & Su,
    arXiv:1905.02383, Sec. 2: the curve of Lap(0, 1) against Lap(ε, 1)).

    Parameters
    ----------
    epsilon : float
        The mechanism's ε, >= 0 (scale 1/ε for a sensitivity-1 query).

    Returns
    -------
    callable
        ``f(alpha)``: type II error at type I error ``alpha`` (array_like in [0, 1],
        clipped), vectorized, same shape.
    """
    from scipy import stats

    def curve(alpha: np.ndarray) -> np.ndarray:
        alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
        return stats.laplace.cdf(stats.laplace.isf(alpha) - epsilon)

    return curve


def tight_tradeoff(epsilon: float, delta: float) -> Callable[[np.ndarray], np.ndarray]:
    """The (ε, δ)-DP trade-off curve ``max(0, 1 − δ − e^ε α, e^-ε (1 − δ − α))``.

    The lowest curve an (ε, δ)-DP mechanism can have (Dong, Roth & Su,
    arXiv:1905.02383, Sec. 2.2, after Wasserman & Zhou 2010); randomized response and the
    geometric mechanism at ε have it with δ = 0 (two likelihood-ratio values e^±ε).

    Parameters
    ----------
    epsilon : float
        ε, >= 0.
    delta : float
        δ, in [0, 1).

    Returns
    -------
    callable
        ``f(alpha)``: type II error at type I error ``alpha`` (array_like in [0, 1],
        clipped), vectorized, same shape.
    """

    def curve(alpha: np.ndarray) -> np.ndarray:
        alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
        e = math.exp(epsilon)
        return np.maximum.reduce(
            [np.zeros_like(alpha), 1.0 - delta - e * alpha, (1.0 - delta - alpha) / e]
        )

    return curve


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ShapeTestPower:
    """Could the shape tests have seen the claim's own non-Gaussian curves?

    Result of :func:`shape_test_power_against_claim`.

    Attributes
    ----------
    power : float
        In [0, 1]: the smaller, over the two alternatives, of the probability that at
        least one shape stage rejects (stages independent: disjoint samples, cells
        fixed before the confirmation is drawn).
    required : float
        The power the reading needs, in (0, 1): ``1 - α`` of the audit's family.
    epsilon, delta : float
        The claim's (ε, δ) the alternatives are built at.
    weakest : str
        The alternative with the smaller power: ``"Laplace"`` (the Laplace mechanism's
        curve at ε) or ``"(ε, δ)-tight"`` (the lowest (ε, δ)-DP curve: randomized
        response, the geometric mechanism).
    stage_powers : tuple of float
        Per stage (pilot, then confirmation), the power against ``weakest``.
    """

    power: float
    required: float
    epsilon: float
    delta: float
    weakest: str
    stage_powers: tuple[float, ...]

    @property
    def sufficient(self) -> bool:
        """Whether ``power >= required``."""
        return bool(self.power >= self.required)

    @property
    def description(self) -> str:
        """The power, against what, and whether it suffices, in words."""
        verdict = "enough" if self.sufficient else "too little"
        return (
            f"the shape tests' power against the claim's own non-Gaussian curves at "
            f"ε = {self.epsilon:.4g}, δ = {self.delta:.3g} (the weaker: {self.weakest}) "
            f"is {self.power:.3g}, {verdict} (the reading needs >= {self.required:.3g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Fields and the description as a flat dict."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["description"] = self.description
        return out


def pilot_cells_d_prime(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, n_bins: int = SHAPE_BINS
) -> np.ndarray:
    """The fractions of D''s scores below each cut of :func:`assess_gaussian_shape`.

    Parameters
    ----------
    scores_d, scores_d_prime : ndarray of float, shape (n_d,), (n_d_prime,)
        Finite scalar scores (the pilot's), oriented as tested.
    n_bins : int, default SHAPE_BINS
        Bins, >= 3.

    Returns
    -------
    ndarray of float64, shape (n_bins - 1,)
        Non-decreasing, in [0, 1] (atoms split in proportion, as the test splits them).
    """
    bins_dp, _ = _pooled_bins(
        np.sort(np.ravel(scores_d)), np.sort(np.ravel(scores_d_prime)), n_bins
    )
    return np.cumsum(bins_dp)[:-1] / bins_dp.sum()


def shape_test_power(
    below_d_prime: object,
    n_samples: int,
    curve: Callable[[np.ndarray], np.ndarray],
    *,
    level: float,
) -> float:
    """Power of the G² shape test on fixed cells against the trade-off curve ``curve``.

    The cells are cut where world D' has cumulative mass ``below_d_prime``; under a
    mechanism with trade-off curve f, world D has mass ``f(1 - u)`` below the cut where
    D' has ``u`` (the scores oriented so that D lies above). The equal-variance
    binormal model is fitted to the expected table; its G² is the noncentrality λ of
    the test statistic's asymptotic noncentral χ² law on ``cells - 2`` degrees of
    freedom (the expected-data method of power analysis for likelihood-ratio tests:
    Agresti, "Categorical Data Analysis", 3rd ed., 2013, Sec. 6.6.4), and the power is
    ``P(χ²_df(λ) > χ²_df,1-level)``.

    Parameters
    ----------
    below_d_prime : array_like of float, shape (m,)
        Non-decreasing fractions of D''s scores below each cut, in [0, 1].
    n_samples : int
        Samples per world the test is run on, >= 1.
    curve : callable
        Trade-off curve: type II error as a function of type I error, vectorized.
    level : float
        Level of the test, in (0, 1).

    Returns
    -------
    float
        In [0, 1]; 0 when fewer than 2 cuts (the test is not run).

    Raises
    ------
    ValueError
        If ``level`` is not in (0, 1) or ``n_samples < 1``.
    """
    from scipy import stats

    level = check_open_unit("level", level)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    below = np.clip(np.asarray(below_d_prime, dtype=np.float64), 0.0, 1.0)
    if below.size < 2:
        return 0.0
    below_d = np.maximum.accumulate(np.clip(curve(1.0 - below), 0.0, 1.0))
    p = np.diff(np.concatenate([[0.0], below, [1.0]]))
    q = np.diff(np.concatenate([[0.0], below_d, [1.0]]))
    noncentrality, _ = _fit_binormal(n_samples * p, n_samples * q)
    df = below.size - 1
    critical = stats.chi2.isf(level, df)
    return float(stats.ncx2.sf(critical, df, max(noncentrality, 1e-12)))


def shape_test_power_against_claim(
    stages: Sequence[tuple[object, int, float]], *, epsilon: float, delta: float, required: float
) -> ShapeTestPower:
    """The shape tests' power against the non-Gaussian curves the claim itself allows.

    The Gaussian-DP reading refutes an (ε, δ) claim from the middle of the trade-off
    curve; a mechanism that satisfies the claim with a non-Gaussian curve can show the
    same middle, and only the shape tests tell them apart. Two such curves are
    checked, both (ε, δ)-DP: the Laplace mechanism's at ε (:func:`laplace_tradeoff`)
    and the lowest (ε, δ)-DP curve (:func:`tight_tradeoff`: randomized response and
    the geometric mechanism at ε with δ = 0). For each, the probability that at least
    one stage rejects is ``1 - prod(1 - power_stage)`` (:func:`shape_test_power`, on
    the cells and sample sizes in hand; the stages see disjoint samples); the reported
    power is the smaller of the two. Where it is below ``required``, a mechanism with
    the claim's own curve would pass the shape tests with probability above
    ``1 - required``, and the reading's refutation is declined.

    Parameters
    ----------
    stages : sequence of (below_d_prime, n_samples, level)
        Per shape stage: the fractions of D''s scores below its cuts, shape (m,), its
        samples per world and its level.
    epsilon : float
        The claim's ε at δ, >= 0 and finite.
    delta : float
        The claim's δ, in [0, 1).
    required : float
        Power the reading needs, in (0, 1).

    Returns
    -------
    ShapeTestPower

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not finite, ``delta`` not in [0, 1) or
        ``required`` not in (0, 1).
    """
    if not (math.isfinite(epsilon) and epsilon >= 0.0):
        raise ValueError(f"`epsilon` must be finite and >= 0, got {epsilon}.")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"`delta` must be in [0, 1), got {delta}.")
    required = check_open_unit("required", required)
    alternatives = {
        "Laplace": laplace_tradeoff(epsilon),
        "(ε, δ)-tight": tight_tradeoff(epsilon, delta),
    }
    best: tuple[float, str, tuple[float, ...]] | None = None
    for name, curve in alternatives.items():
        powers = tuple(shape_test_power(below, n, curve, level=level) for below, n, level in stages)
        power = 1.0 - float(np.prod([1.0 - p for p in powers]))
        if best is None or power < best[0]:
            best = (power, name, powers)
    power, weakest, stage_powers = best
    return ShapeTestPower(
        power=power, required=required, epsilon=float(epsilon), delta=float(delta),
        weakest=weakest, stage_powers=stage_powers,
    )  # fmt: skip
