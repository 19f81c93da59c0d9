"""The binomial mechanism on an integer vector sum, as released by a shuffled vector-sum protocol.

API
---
``BinomialVectorSum(n_trials, probability, dim, max_shift, l2_shift)``
    Event: a vector of ``dim`` integer sums, each plus its own independent
    ``Bin(n_trials, probability)`` noise; one record moves coordinate ``j`` by an integer
    ``s_j`` with ``|s_j| <= max_shift`` and ``‖s‖₂ <= l2_shift``.
``binomial_sum_certificate(n_trials, probability, max_shift) -> (slope, delta0)``
    The per-coordinate domination certificate below.
``binomial_vector_sum_delta(event, epsilon) -> float``
    Upper bound on δ(ε) of one release.

Where it comes from
-------------------
Zhou & Chowdhury (ICLR 2024, arXiv:2302.13945, Thm. 5.5) plug the shuffle protocol for
vector sums of Cheu, Joseph, Mao & Peng ("Shuffle private stochastic convex optimization",
ICLR 2022, Alg. ``R_1D``/``A_1D``) into the tree-based mechanism: every user rounds each
coordinate ``v`` of its statistic to the grid, ``⌊v g/L⌋ + Bern(frac)``, and adds
``Bin(b, p)`` ones; the shuffler releases the multiset of all users' messages, labelled by
coordinate. A multiset of ones and zeros per coordinate carries exactly its count of ones,
so the view is, per coordinate, the sum of the users' rounded values plus
``Bin(n b, p)`` (independent across coordinates): this event with ``n_trials = n b``.

How it is priced (an upper bound at every ε, δ >= 0)
----------------------------------------------------
1. *Per coordinate and shift.* ``X ~ Bin(N, p)`` is log-concave, so its translates have a
   monotone likelihood ratio: for ``0 < j <= k`` the pair ``(X, X + j)`` is dominated by
   ``(X, X + k)`` (the Neyman–Pearson threshold test is the same for both and has more
   power at ``k``), and so is each reversed pair. For each ``k`` of a grid of shifts
   (every ``k <= 64``, then ratio ``r = 1.02`` up to ``max_shift``) and both directions,
   the hockey-stick divergence ``δ_k(ε) = Σ_x (P(x) − e^ε Q(x))_+`` is computed exactly
   from the pmfs (``scipy.stats.binom.logpmf``, in the loss order, which is the order of
   ``x`` by log-concavity) over ``mean ± 14 sd`` (the mass outside is added to δ whole),
   and compared with a *flagged Gaussian* pair: with probability ``1 − δ₀`` the Gaussian
   shift pair of ``μ = c k`` (``c = 1.02/sd``), otherwise a flag revealing the world:
   ``δ_flag(ε) = (1 − δ₀) δ_GDP(ε; c k) + δ₀``. ``δ₀`` is the smallest value with
   ``δ_k(ε_i) <= δ_flag(ε_{i+1})`` on a grid ``ε_0 = 0 < ... < ε_m`` of 3,000 points over
   ``[0, μ²/2 + 12 μ]`` and ``δ_k(ε_m) <= δ₀`` (both curves decrease in ε, so this
   certifies the inequality at every ε >= 0; the reversed pair covers ε < 0). Every
   shift ``|s| <= max_shift`` in either direction is then dominated by the flagged
   Gaussian of ``μ = c r |s|``.
2. *Over coordinates (the L2 sensitivity).* The coordinates' noises are independent, so
   the pair of views is the product of per-coordinate pairs; products of dominated
   pairs are dominated by the product of the dominating pairs (Zhu, Dong & Wang,
   AISTATS 2022, arXiv:2106.08567, Thm. 10), which is a Gaussian of
   ``μ = c r ‖s‖₂ <= c r l2_shift`` (Dong, Roth & Su 2019, Cor. 3.3) flagged with
   probability ``δ' = 1 − (1 − δ₀)^dim``. The users' randomized rounding and the other
   users' values are mixtures taken with the same weights in both worlds (a product
   coupling of the rounding outcomes), which joint convexity of the hockey-stick
   divergence bounds by the worst pair of outcomes: that is why ``max_shift`` and
   ``l2_shift`` are bounds on the *rounded* shift.
3. *Over the tree's levels.* Each level's release is one event; the ledger composes
   them (PLD: the Gaussian PLD composed with the flag; (ε, δ) pairs otherwise).

Neighbouring relation: one record's value replaced (``max_shift`` and ``l2_shift`` are
the caller's bounds for that relation). Nothing here draws noise.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

import numpy as np
from fedpriv.privacy.accounting.handlers import (
    EventHandlers,
    approx_dp_pld,
    gaussian_pld,
    register_event,
)
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive, check_real

__all__ = [
    "MAX_BINOMIAL_SHIFT",
    "BinomialVectorSum",
    "BinomialVectorSumTree",
    "binomial_sum_certificate",
    "binomial_vector_sum_delta",
    "binomial_vector_sum_epsilon",
]

#: Largest ``max_shift`` of one event (the certificate's cost grows with log of it).
MAX_BINOMIAL_SHIFT = 10**6
#: Slope inflation over 1/sd of the dominating Gaussian.
_SLOPE = 1.02
#: Ratio of the geometric grid of shifts beyond :data:`_DENSE_SHIFTS`.
_RATIO = 1.02
_DENSE_SHIFTS = 64
#: Half-width of the bulk in standard deviations (each tail below about e^{-90}).
_BULK_SD = 14.0
_EPS_POINTS = 3000
#: Largest Gaussian μ given a PLD (beyond it the PLD costs seconds and its ε is far
#: above any claim; the basic/advanced/optimal routes still price the event).
_MAX_PLD_MU = 8.0
#: Allowance for floating-point rounding in the cumulative sums.
_ROUNDING = 1e-12


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BinomialVectorSum:
    """``dim`` integer sums, each released plus independent ``Bin(n_trials, probability)``.

    Parameters
    ----------
    n_trials : int
        ``N`` >= 1, binomial trials per coordinate (all users' ``b`` together).
    probability : float
        ``p`` in (0, 1).
    dim : int
        Number of coordinates, >= 1.
    max_shift : int
        Largest ``|s_j|`` by which one record moves one coordinate's rounded sum,
        1 <= max_shift <= :data:`MAX_BINOMIAL_SHIFT`, in grid units.
    l2_shift : float
        Largest ``‖s‖₂`` over all coordinates, ``>= max_shift``, grid units.

    Raises
    ------
    TypeError
        If a parameter has the wrong type.
    ValueError
        If a parameter is out of range.

    Notes
    -----
    Priced by the flagged-Gaussian domination of the module docstring: the release is
    dominated by ``μ = c r l2_shift`` Gaussian DP mixed with a flag of mass
    ``1 − (1 − δ₀)^dim`` (:func:`binomial_sum_certificate`). Pure ε and RDP are
    infinite (the binomial has finite support).

    Examples
    --------
    >>> event = BinomialVectorSum(n_trials=40_000, probability=0.25, dim=3,
    ...                           max_shift=4, l2_shift=5.0)
    >>> 0.0 < binomial_vector_sum_epsilon(event, 1e-6) < 1.0
    True
    """

    #: The bound is for a replaced record (the number of trials is public).
    REPLACE_ONLY: ClassVar[bool] = True

    n_trials: int
    probability: float
    dim: int
    max_shift: int
    l2_shift: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_trials", check_int_at_least("n_trials", self.n_trials, 1))
        object.__setattr__(self, "probability", check_open_unit("probability", self.probability))
        object.__setattr__(self, "dim", check_int_at_least("dim", self.dim, 1))
        shift = check_int_at_least("max_shift", self.max_shift, 1)
        if shift > MAX_BINOMIAL_SHIFT:
            raise ValueError(
                f"`max_shift` must be <= MAX_BINOMIAL_SHIFT = {MAX_BINOMIAL_SHIFT}, got {shift}."
            )
        object.__setattr__(self, "max_shift", shift)
        l2 = check_positive("l2_shift", self.l2_shift)
        if l2 < shift:
            raise ValueError(f"`l2_shift` must be >= max_shift = {shift}, got {l2!r}.")
        object.__setattr__(self, "l2_shift", l2)


def _shift_grid(max_shift: int) -> tuple[np.ndarray, float]:
    """Shifts whose pairs are checked, and the slope factor that covers those between."""
    dense = np.arange(1, min(max_shift, _DENSE_SHIFTS) + 1)
    if max_shift <= _DENSE_SHIFTS:
        return dense, 1.0
    grid = [float(_DENSE_SHIFTS)]
    while grid[-1] < max_shift:
        grid.append(min(math.ceil(grid[-1] * _RATIO), max_shift))
    ks = np.unique(np.concatenate([dense, np.asarray(grid, dtype=np.int64)]))
    # j in (k_{i-1}, k_i] is dominated by k_i <= (k_i / (k_{i-1} + 1)) j
    ratio = float(np.max(ks[1:] / (ks[:-1] + 1.0)))
    return ks, max(ratio, 1.0)


def _gaussian_delta(mu: float, eps: np.ndarray) -> np.ndarray:
    """δ_GDP(ε; μ), rounded down (it is the dominating side)."""
    from scipy.special import log_ndtr

    a = log_ndtr(-eps / mu + mu / 2.0)
    b = eps + log_ndtr(-eps / mu - mu / 2.0)
    value = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return np.maximum(value * (1.0 - 1e-9) - 1e-300, 0.0)


@functools.lru_cache(maxsize=256)
def _certificate(n_trials: int, probability: float, max_shift: int) -> tuple[float, float]:
    from scipy import stats

    n, p = n_trials, probability
    sd = math.sqrt(n * p * (1.0 - p))
    mean = n * p
    lo = max(math.floor(mean - _BULK_SD * sd) - 1, 0)
    hi = min(math.ceil(mean + _BULK_SD * sd) + 1, n)
    tail = float(stats.binom.cdf(lo - 1, n, p)) + float(stats.binom.sf(hi, n, p))
    ks, ratio = _shift_grid(max_shift)
    kmax = int(ks[-1])
    xs = np.arange(lo - kmax, hi + kmax + 1)
    logp = stats.binom.logpmf(xs, n, p)  # -inf outside [0, n]
    mass = np.exp(logp)
    # Prefix sums from the left and suffix sums from the right: each tail sum is then
    # accumulated from its small end (relative accuracy).
    left = np.concatenate([[0.0], np.cumsum(mass)])
    right = np.concatenate([[0.0], np.cumsum(mass[::-1])])
    size = hi - lo + 1
    top = kmax + size  # one past x = hi
    delta0 = tail
    for k in ks.tolist():
        mu = _SLOPE * k / sd
        eps = np.linspace(0.0, mu * mu / 2.0 + 12.0 * mu, _EPS_POINTS)
        gauss = _gaussian_delta(mu, eps)
        # P = P0 on [lo, hi]; Q(x) = P0(x - k): loss non-increasing in x (log-concavity),
        # so {loss > ε} is the first `count` points.
        with np.errstate(invalid="ignore"):
            loss = logp[kmax:top] - logp[kmax - k : top - k]
        count = np.searchsorted(-loss, -eps, side="left")
        cum_a = left[kmax + count] - left[kmax]
        cum_b = left[kmax - k + count] - left[kmax - k]
        curves = [(cum_a, cum_b)]
        # Q(x) = P0(x + k): loss non-decreasing in x, {loss > ε} the last `count` points.
        with np.errstate(invalid="ignore"):
            loss = (logp[kmax:top] - logp[kmax + k : top + k])[::-1]
        count = np.searchsorted(-loss, -eps, side="left")
        end_a = xs.size - top  # right-sums index of x = hi + 1
        end_b = xs.size - top - k
        cum_a = right[end_a + count] - right[end_a]
        cum_b = right[end_b + count] - right[end_b]
        curves.append((cum_a, cum_b))
        for cum_a, cum_b in curves:
            curve = cum_a - np.exp(eps) * cum_b
            curve = np.maximum(curve, 0.0) + _ROUNDING * cum_a + 1e-300
            need = (curve[:-1] - gauss[1:]) / np.maximum(1.0 - gauss[1:], 1e-300)
            delta0 = max(delta0, float(np.max(need)), float(curve[-1]) + tail)
    return _SLOPE * ratio / sd, min(delta0 + tail, 1.0)


def binomial_sum_certificate(
    n_trials: int, probability: float, max_shift: int
) -> tuple[float, float]:
    """The per-coordinate domination certificate ``(slope, δ₀)`` (module docstring, 1).

    Every pair ``(X + a, X + a + s)``, ``X ~ Bin(n_trials, probability)``,
    ``|s| <= max_shift``, either order, is dominated by the Gaussian pair of
    ``μ = slope · |s|`` flagged with probability ``δ₀``.

    Parameters
    ----------
    n_trials : int
        ``N`` >= 1.
    probability : float
        In (0, 1).
    max_shift : int
        In [1, :data:`MAX_BINOMIAL_SHIFT`].

    Returns
    -------
    tuple of float
        ``slope`` (per grid unit, > 0) and ``δ₀`` in [0, 1].

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> slope, delta0 = binomial_sum_certificate(40_000, 0.25, 4)
    >>> round(slope * (40_000 * 0.25 * 0.75) ** 0.5, 3), delta0 < 1e-12
    (1.02, True)
    """
    event = BinomialVectorSum(
        n_trials=n_trials,
        probability=probability,
        dim=1,
        max_shift=max_shift,
        l2_shift=float(max_shift),
    )
    return _certificate(event.n_trials, event.probability, event.max_shift)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BinomialVectorSumTree:
    """The releases holding one record in a tree of binomial vector sums, one per level.

    Parameters
    ----------
    levels : tuple of BinomialVectorSum
        One event per tree level (a record is in one node of each level), >= 1.

    Raises
    ------
    TypeError
        If ``levels`` is not a non-empty tuple of :class:`BinomialVectorSum`.

    Notes
    -----
    Priced as the exact composition of the levels' dominating pairs: Gaussian of
    ``μ = √Σ μ_l²`` (Dong, Roth & Su 2019, Cor. 3.3) flagged with probability
    ``1 − Π (1 − δ'_l)`` (a flag in any level reveals the world); one PLD instead of
    ``κ`` composed ones.
    """

    #: As :class:`BinomialVectorSum`.
    REPLACE_ONLY: ClassVar[bool] = True

    levels: tuple[BinomialVectorSum, ...]

    def __post_init__(self) -> None:
        levels = self.levels
        if (
            not isinstance(levels, tuple)
            or not levels
            or not all(type(e) is BinomialVectorSum for e in levels)
        ):
            raise TypeError("`levels` must be a non-empty tuple of BinomialVectorSum events.")


def _flag_and_mu(event) -> tuple[float, float]:
    """Flag mass δ' and Gaussian μ of the dominating pair of either event type."""
    if type(event) is BinomialVectorSumTree:
        parts = [_flag_and_mu(level) for level in event.levels]
        keep = math.fsum(math.log1p(-min(flag, 1.0 - 1e-300)) for flag, _ in parts)
        flag = min(-math.expm1(keep) * (1.0 + 1e-12), 1.0)
        return flag, math.sqrt(math.fsum(mu * mu for _, mu in parts)) * (1.0 + 1e-12)
    slope, delta0 = _certificate(event.n_trials, event.probability, event.max_shift)
    flag = -math.expm1(event.dim * math.log1p(-delta0)) if delta0 < 1.0 else 1.0
    return min(flag * (1.0 + 1e-12), 1.0), slope * event.l2_shift


def binomial_vector_sum_delta(event: BinomialVectorSum, epsilon: float) -> float:
    """Upper bound on δ(ε) of one release: ``(1 − δ') δ_GDP(ε; μ) + δ'``.

    Parameters
    ----------
    event : BinomialVectorSum or BinomialVectorSumTree
    epsilon : float
        ε >= 0, nats.

    Returns
    -------
    float
        δ in [0, 1].

    Raises
    ------
    ValueError
        If ``epsilon`` is negative or not finite.
    """
    from fedpriv.privacy.accounting.conversions import gaussian_dp_delta

    epsilon = check_real("epsilon", epsilon)
    if not 0.0 <= epsilon < math.inf:
        raise ValueError(f"`epsilon` must be in [0, inf), got {epsilon!r}.")
    flag, mu = _flag_and_mu(event)
    return min((1.0 - flag) * float(gaussian_dp_delta(mu, epsilon)) + flag, 1.0)


def binomial_vector_sum_epsilon(event: BinomialVectorSum, delta: float) -> float:
    """Upper bound on ε(δ) of one release (``inf`` when δ <= the flag mass).

    Parameters
    ----------
    event : BinomialVectorSum or BinomialVectorSumTree
    delta : float
        δ in [0, 1).

    Returns
    -------
    float
        ε >= 0 in nats, or ``inf``.
    """
    from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon

    flag, mu = _flag_and_mu(event)
    if delta <= flag:
        return math.inf
    return float(gaussian_dp_epsilon(mu, (delta - flag) / (1.0 - flag)))


def _approx(event: BinomialVectorSum, delta_share: float) -> tuple[float, float]:
    if delta_share <= 0.0:
        return math.inf, 0.0
    share = min(delta_share, 0.5)
    return binomial_vector_sum_epsilon(event, share), share


def _pld(event: BinomialVectorSum, discretization: float, pessimistic: bool):
    if not pessimistic:
        return None  # a dominating pair: an upper bound only
    flag, mu = _flag_and_mu(event)
    if mu > _MAX_PLD_MU:
        return None  # seconds of PLD for an ε far above any claim: the (ε, δ) routes price it
    gauss = gaussian_pld(mu, discretization, True)
    if flag <= 0.0:
        return gauss
    return gauss.compose(approx_dp_pld(0.0, flag, discretization, True))


for _type in (BinomialVectorSum, BinomialVectorSumTree):
    register_event(_type, EventHandlers(pure=lambda e: math.inf, approx=_approx, pld=_pld))
