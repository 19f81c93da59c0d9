"""Numeric conversions between privacy parameters: zCDP, Gaussian DP and RDP to (ε, δ).

The functions here take and return plain numbers (ρ, μ, an RDP curve, ε, δ); the
guarantee types of :mod:`fedpriv.privacy.accounting.guarantees` call the same numerical cores in their
``get_epsilon``/``get_delta``. Every conversion returns a valid bound: the ε (or δ)
it reports is never below the smallest one the input guarantee implies, and for
μ-GDP it is exact.

Every public name is re-exported by :mod:`fedpriv.privacy.accounting.guarantees`, where it used to live.

Length: one short, cited function per conversion between guarantee types; nearly half of
the module is documentation.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable

import numpy as np
from fedpriv.privacy.checks import (
    check_delta,
    check_nonnegative,
    check_nonnegative_parameter,
    check_rdp_curve,
)
from scipy import special

__all__ = [
    "delta_from_log",
    "gaussian_dp_delta",
    "gaussian_dp_epsilon",
    "rdp_delta",
    "rdp_epsilon",
    "zcdp_delta",
    "zcdp_epsilon",
]


# ---------------------------------------------------------------------------------
# Numerical cores (arguments already validated)
# ---------------------------------------------------------------------------------

#: Relative slack added when a δ leaves log space: covers the rounding of ``exp``
#: (< 1 ulp) and of the log-space sums that produced ``log_delta`` (~|log δ|·1e-16).
_DELTA_ROUND_UP = 1e-12


def delta_from_log(log_delta: float) -> float:
    """δ = exp(``log_delta``) rounded the conservative way (up), capped at 1.

    ``-inf`` (a route that proves δ = 0) gives exactly 0. Any finite ``log_delta``
    gives a *positive* δ: below ``log(5e-324) ≈ -744.4`` ``exp`` flushes to 0, which
    would claim pure DP, so the smallest positive double ``math.ulp(0.0)`` (the
    rounded-up value of every δ under it) is returned instead.

    Parameters
    ----------
    log_delta : float
        log δ (``-inf`` for δ = 0).

    Returns
    -------
    float
        δ in [0, 1], rounded up.
    """
    if log_delta == -math.inf:
        return 0.0
    if math.isnan(log_delta):
        return 1.0
    if log_delta >= 0.0:
        return 1.0
    return min(1.0, max(math.ulp(0.0), math.exp(log_delta) * (1.0 + _DELTA_ROUND_UP)))


#: Offsets of log(order - 1) searched around the classic optimum (a wide log grid).
_LOG_GRID = np.linspace(-30.0, 30.0, 121)


def _minimize_log_orders(curve: Callable[[np.ndarray], np.ndarray], centre: float) -> float:
    """Min of ``curve(x)`` over x = log(order - 1): log grid, then bounded Brent."""
    grid = np.clip(centre + _LOG_GRID, -700.0, 700.0)
    with np.errstate(all="ignore"):
        values = curve(grid)
    values = np.where(np.isnan(values), np.inf, values)
    i = int(np.argmin(values))
    best = float(values[i])
    if not math.isfinite(best):
        return best

    def scalar(x: float) -> float:
        with np.errstate(all="ignore"):
            value = float(curve(np.asarray(x)))
        return math.inf if math.isnan(value) else value

    low, high = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    from scipy import optimize  # imported on use: heavy (issue 23)

    result = optimize.minimize_scalar(
        scalar, bounds=(low, high), method="bounded", options={"xatol": 1e-10}
    )
    return min(best, float(result.fun))


def _zcdp_epsilon(rho: float, delta: float) -> float:
    """ε(δ) of ρ-zCDP: min of Canonne et al. Cor. 13, the classic and the KL bound."""
    if rho == 0.0:
        return 0.0
    if delta == 0.0 or math.isinf(rho):
        return math.inf
    if delta * delta + math.expm1(-rho) > 0.0:  # δ >= TV bound sqrt(1 - e^-KL)
        return 0.0
    log_inv_delta = -math.log(delta)
    classic = rho + 2.0 * math.sqrt(rho * log_inv_delta)

    def curve(x: np.ndarray) -> np.ndarray:  # ε at order 1 + e^x
        order_minus_one = np.exp(x)
        log_order = np.logaddexp(0.0, x)
        return (
            (1.0 + order_minus_one) * rho
            + (x - log_order)
            + (log_inv_delta - log_order) / order_minus_one
        )

    centre = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    return max(0.0, min(classic, _minimize_log_orders(curve, centre)))


def _zcdp_delta(rho: float, epsilon: float) -> float:
    """δ(ε) of ρ-zCDP: min of Canonne et al. Cor. 13, the classic and the KL bound."""
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    log_delta = 0.5 * math.log(-math.expm1(-rho))  # KL: TV <= sqrt(1 - e^-rho)
    if epsilon > rho:
        excess = (epsilon - rho) / (2.0 * math.sqrt(rho))
        log_delta = min(log_delta, -excess * excess)

    def curve(x: np.ndarray) -> np.ndarray:  # log δ at order 1 + e^x
        order_minus_one = np.exp(x)
        log_order = np.logaddexp(0.0, x)
        return (
            order_minus_one * ((1.0 + order_minus_one) * rho - epsilon + x - log_order) - log_order
        )

    centre = math.log(max((epsilon - rho) / (2.0 * rho), 1e-6))
    log_delta = min(log_delta, _minimize_log_orders(curve, centre))
    # ρ > 0 and ε finite: δ > 0 (the Gaussian of μ² = 2ρ attains it), never 0.
    return max(math.ulp(0.0), delta_from_log(log_delta))


#: 16-point Gauss-Legendre rule on [-1, 1], for the small-μ GDP integral.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)


def _gdp_log_delta(mu: float, epsilon: float) -> float:
    """log δ(ε) of μ-GDP, 0 < μ < inf, 0 <= ε < inf, in log space.

    δ = Φ(a) (1 - e^r) with a = -ε/μ + μ/2 and r = log(e^ε Φ(a - μ) / Φ(a)) < 0.
    For μ <= 2, r is cancellation-free as ``-∫ (φ/Φ(x) + x) dx`` over [a - μ, a]
    (the ``ε`` term is ``∫ -x dx``), using ``φ/Φ(x) = sqrt(2/π) / erfcx(-x/√2)``.
    """
    centre = -epsilon / mu
    log_first = float(special.log_ndtr(centre + mu / 2.0))
    with np.errstate(all="ignore"):
        if mu <= 2.0:
            x = centre + 0.5 * mu * _GL_NODES
            excess = math.sqrt(2.0 / math.pi) / special.erfcx(-x / math.sqrt(2.0)) + x
            log_ratio = -0.5 * mu * float(np.dot(_GL_WEIGHTS, excess))
        else:
            log_second = float(special.log_ndtr(centre - mu / 2.0))
            log_ratio = epsilon + log_second - log_first
    if not log_ratio < 0.0:
        # Rounding (ratio -> 1 at large ε/μ) or NaN (both terms vanish): δ <= Φ(a)
        # is still a bound, whereas -inf here would claim δ = 0.
        return log_first
    return log_first + math.log(-math.expm1(log_ratio))


def _gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su 2019, Cor. 2.13)."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    # μ > 0 and ε finite: δ > 0, even where log Φ itself underflows to -inf.
    return max(math.ulp(0.0), delta_from_log(_gdp_log_delta(mu, epsilon)))


def _gdp_epsilon(mu: float, delta: float) -> float:
    """ε(δ) of μ-GDP: root of the decreasing log δ(ε) by Brent's method."""
    if mu == 0.0:
        return 0.0
    if delta == 0.0 or math.isinf(mu):
        return math.inf
    log_target = math.log(delta)
    if _gdp_log_delta(mu, 0.0) <= log_target:
        return 0.0
    # μ-GDP implies (μ²/2)-zCDP, so the classic zCDP ε is an upper end; grow it if
    # rounding leaves the sign unchanged.
    rho = 0.5 * mu * mu
    low, high = 0.0, rho + 2.0 * math.sqrt(-rho * log_target)
    while _gdp_log_delta(mu, high) > log_target:
        low, high = high, 2.0 * high
        if math.isinf(high):
            return math.inf
    from scipy import optimize

    root, _ = optimize.brentq(
        lambda epsilon: _gdp_log_delta(mu, epsilon) - log_target,
        low,
        high,
        xtol=1e-300,
        rtol=4.0 * sys.float_info.epsilon,
        maxiter=1000,
        full_output=True,
        disp=False,
    )
    return float(root)


def _rdp_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """ε(δ) of an RDP curve, minimised over its orders (Canonne et al. Prop. 12)."""
    if delta == 0.0:
        return 0.0 if np.all(rdp == 0.0) else math.inf
    with np.errstate(all="ignore"):
        epsilons = (
            rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
        )
        kl = delta * delta + np.expm1(-rdp) > 0.0  # δ >= sqrt(1 - e^-KL): ε = 0
    epsilons = np.where(kl, 0.0, epsilons)
    epsilons = np.where(np.isnan(epsilons), np.inf, epsilons)
    return max(0.0, float(np.min(epsilons)))


def _rdp_delta(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> float:
    """δ(ε) of an RDP curve: min over orders of Prop. 12 and the KL bound."""
    if math.isinf(epsilon):
        return 0.0 if np.any(np.isfinite(rdp)) else 1.0
    with np.errstate(all="ignore"):
        kl = 0.5 * np.log(-np.expm1(-rdp))
        bound = (orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)
    log_deltas = np.fmin(kl, bound)
    if np.any(rdp == 0.0):  # identical output distributions: δ = 0 is proven
        return 0.0
    return max(math.ulp(0.0), delta_from_log(float(np.min(log_deltas))))


# ---------------------------------------------------------------------------------
# Module-level conversions of numbers (validated)
# ---------------------------------------------------------------------------------


def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε such that ρ-zCDP implies (ε, ``delta``)-DP (an upper bound).

    Returns the minimum of three valid bounds:

    * ``inf over orders α > 1 of α ρ + log(1 - 1/α) - (log δ + log α) / (α - 1)``
      (Prop. 12 / Cor. 13 of [1]_), minimised over a continuous α on a log scale
      (grid, then bounded Brent), robust for tiny and huge ρ;
    * the classic ``ρ + 2 sqrt(ρ log(1/δ))`` (Prop. 1.3 of [2]_);
    * ``0`` when ``δ >= sqrt(1 - exp(-ρ))`` (total variation bounded through the
      KL divergence, which is at most ρ).

    Parameters
    ----------
    rho : float
        In [0, inf]; ``inf`` means no guarantee.
    delta : float
        In [0, 1).

    Returns
    -------
    float
        ε >= 0; ``0`` if ``rho == 0``; ``inf`` if ``delta == 0 < rho`` or
        ``rho == inf``.

    Raises
    ------
    ValueError
        If ``rho`` is NaN or negative, or ``delta`` is outside [0, 1).

    References
    ----------
    .. [1] Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
       Privacy", arXiv:2004.00010, Prop. 12 and Cor. 13.
    .. [2] Bun & Steinke, "Concentrated Differential Privacy: Simplifications,
       Extensions, and Lower Bounds", arXiv:1605.02065, Prop. 1.3.

    Examples
    --------
    >>> round(zcdp_epsilon(0.05, 1e-5), 6)  # classic bound: 1.567427
    1.308118
    """
    return _zcdp_epsilon(check_nonnegative_parameter("rho", rho), check_delta("delta", delta))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """Smallest δ such that ρ-zCDP implies (``epsilon``, δ)-DP (an upper bound).

    The inverse of :func:`zcdp_epsilon`: the minimum over α > 1 of
    ``exp((α-1)(αρ-ε)) / (α-1) * (1 - 1/α)**α``, of the classic
    ``exp(-(ε-ρ)**2 / (4ρ))`` (ε > ρ) and of ``sqrt(1 - exp(-ρ))``.

    Parameters
    ----------
    rho : float
        In [0, inf].
    epsilon : float
        In [0, inf].

    Returns
    -------
    float
        δ in [0, 1].

    Raises
    ------
    ValueError
        If ``rho`` or ``epsilon`` is NaN or negative.

    See Also
    --------
    zcdp_epsilon : the bounds and their references.

    Examples
    --------
    >>> f"{zcdp_delta(0.05, 1.308118):.3g}"
    '1e-05'
    """
    return _zcdp_delta(
        check_nonnegative_parameter("rho", rho), check_nonnegative("epsilon", epsilon)
    )


def gaussian_dp_delta(mu: float, epsilon: float) -> float:
    """Exact δ(ε) of μ-Gaussian DP.

    ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` (Cor. 2.13 of [1]_; Thm 8 of
    [2]_), evaluated in log space with ``scipy.special.log_ndtr`` so that it neither
    overflows ``e^ε`` nor cancels for large μ.

    Parameters
    ----------
    mu : float
        In [0, inf]; ``inf`` means no guarantee.
    epsilon : float
        In [0, inf].

    Returns
    -------
    float
        δ in [0, 1]; ``0`` if ``mu == 0`` or ``epsilon == inf`` (finite μ).

    Raises
    ------
    ValueError
        If ``mu`` or ``epsilon`` is NaN or negative.

    References
    ----------
    .. [1] Dong, Roth & Su, "Gaussian Differential Privacy", arXiv:1905.02383,
       Cor. 2.13.
    .. [2] Balle & Wang, "Improving the Gaussian Mechanism for Differential
       Privacy", arXiv:1805.06530, Thm 8.

    Examples
    --------
    >>> round(gaussian_dp_delta(1.0, 0.0), 6)  # total variation 2 Φ(1/2) - 1
    0.382925
    """
    return _gdp_delta(check_nonnegative_parameter("mu", mu), check_nonnegative("epsilon", epsilon))


def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """Exact ε(δ) of μ-Gaussian DP: the root of the decreasing δ(ε).

    Brent's method on ``log δ(ε) - log δ`` over a bracket that starts at the
    classic zCDP bound for ρ = μ²/2 and grows if needed.

    Parameters
    ----------
    mu : float
        In [0, inf].
    delta : float
        In [0, 1).

    Returns
    -------
    float
        ε >= 0; ``0`` if ``mu == 0``; ``inf`` if ``delta == 0 < mu`` or
        ``mu == inf``.

    Raises
    ------
    ValueError
        If ``mu`` is NaN or negative, or ``delta`` is outside [0, 1).

    See Also
    --------
    gaussian_dp_delta : the formula and its references.

    Examples
    --------
    >>> round(gaussian_dp_epsilon(10.0, 1e-5), 8)  # 100 x Gaussian, noise mult. 1
    91.81728962
    """
    return _gdp_epsilon(check_nonnegative_parameter("mu", mu), check_delta("delta", delta))


def rdp_epsilon(orders: Iterable[float], rdp: Iterable[float], delta: float) -> float:
    """Smallest ε such that an RDP curve implies (ε, ``delta``)-DP (an upper bound).

    Minimum over the given orders of
    ``rdp(α) + log(1 - 1/α) - (log δ + log α) / (α - 1)`` (Prop. 12 of
    Canonne, Kamath & Steinke, arXiv:2004.00010), and ``0`` when
    ``δ >= sqrt(1 - exp(-rdp(α)))`` for some order; the same conversion as
    ``dp_accounting.rdp.rdp_privacy_accountant.compute_epsilon``, except that
    orders in (1, 1.01] are used too (the bound holds for every order > 1).

    Parameters
    ----------
    orders : sequence of float
        Finite orders > 1, strictly increasing.
    rdp : sequence of float
        Rényi divergence bound at each order, in [0, inf]; same length.
    delta : float
        In [0, 1).

    Returns
    -------
    float
        ε >= 0; at ``delta == 0``, ``0`` if every ``rdp`` is 0 else ``inf``.

    Raises
    ------
    ValueError
        If the curve is malformed (see :class:`~fedpriv.privacy.accounting.guarantees.RDP`) or ``delta`` is outside [0, 1).
    TypeError
        If ``orders`` or ``rdp`` is not a sequence of real numbers.

    Examples
    --------
    >>> round(rdp_epsilon([14.0], [14 * 0.05], 1e-5), 6)  # tree, T = 1000, σ = 10
    1.308497
    """
    orders, rdp = check_rdp_curve(orders, rdp)
    delta = check_delta("delta", delta)
    return _rdp_epsilon(np.array(orders), np.array(rdp), delta)


def rdp_delta(orders: Iterable[float], rdp: Iterable[float], epsilon: float) -> float:
    """Smallest δ such that an RDP curve implies (``epsilon``, δ)-DP.

    Minimum over the orders of ``exp((α-1)(rdp(α) - ε + log(1 - 1/α)) - log α)``
    and of ``sqrt(1 - exp(-rdp(α)))``: the inverse of :func:`rdp_epsilon`, as in
    ``dp_accounting.rdp.rdp_privacy_accountant.compute_delta``.

    Parameters
    ----------
    orders, rdp : sequence of float
        As in :func:`rdp_epsilon`.
    epsilon : float
        In [0, inf].

    Returns
    -------
    float
        δ in [0, 1].

    Raises
    ------
    ValueError
        If the curve is malformed or ``epsilon`` is NaN or negative.
    TypeError
        If ``orders`` or ``rdp`` is not a sequence of real numbers.

    Examples
    --------
    >>> f"{rdp_delta([14.0], [14 * 0.05], 1.308497):.3g}"
    '1e-05'
    """
    orders, rdp = check_rdp_curve(orders, rdp)
    epsilon = check_nonnegative("epsilon", epsilon)
    return _rdp_delta(np.array(orders), np.array(rdp), epsilon)
