"""Amplification by shuffling: ``n`` reports of ε₀-LDP randomizers, shuffled.

API (stable; other modules and paper families build on these names)
-------------------------------------------------------------------
``Shuffled(local_epsilon, n_reports, local_delta=0.0)``
    Event: ``n_reports`` reports, each the output of an (ε₀, δ₀)-LDP local randomizer
    on one reporter's whole input, released as a uniformly shuffled multiset. Charged
    like any other event (``Accountant.charge``/``compose_routes``); composes with the
    rest of the ledger through the pure, basic/advanced/optimal ((ε, δ) pairs), RDP
    (derived from ε₀) and PLD routes.
``shuffled_delta(local_epsilon, n_reports, epsilon) -> float``
    Upper bound on δ(ε) of the shuffled view (the privacy profile), ε in nats.
``shuffled_epsilon(local_epsilon, n_reports, delta) -> float``
    Upper bound on ε(δ) of the shuffled view.
``shuffled_pld(local_epsilon, n_reports, discretization) -> PrivacyLossDistribution``
    Pessimistic dp-accounting PLD of the dominating pair (composes with other PLDs).
``MAX_SHUFFLED_REPORTS``
    Largest ``n_reports`` an event may state.

What the bound is
-----------------
Feldman, McMillan & Talwar, "Hiding Among the Clones" (FOCS 2021, arXiv:2012.12803),
Thm. 3.2: let ``R_1, ..., R_n`` be ε₀-DP local randomizers (any two inputs of one
reporter are ε₀-indistinguishable; they may be chosen adaptively) and ``X_0, X_1``
two datasets that differ in one reporter's input. With ``p = e^{-ε₀}``,

``C ~ Bin(n - 1, p)``, ``A ~ Bin(C, 1/2)``, ``Δ ~ Bern(e^{ε₀} / (e^{ε₀} + 1))``,

``P = (A + Δ, C - A + 1 - Δ)`` and ``Q = (A + 1 - Δ, C - A + Δ)``,

the shuffled output on ``X_0`` and on ``X_1`` is a post-processing of ``P`` and of
``Q`` by one randomized map. So ``(P, Q)`` *dominates* the shuffled view: its
hockey-stick divergence bounds the view's at every ε (``δ_view(ε) <= δ_PQ(ε)``), and
its privacy-loss distribution is a dominating pair in the sense of Zhu, Dong & Wang
(AISTATS 2022, arXiv:2106.08567, Def. 7 and Thm. 10): dominating pairs compose under
adaptive composition, which is what the PLD route relies on.

``δ_PQ(ε)`` is computed here exactly (FMT §4 and their Appendix E compute the same
divergence by bracketing it over blocks of ``c``; this module sums every ``c`` that
carries mass). Given ``C = c`` the first coordinate ``a`` of ``P`` has mass
``α b_c(a) + (1 - α) b_c(a - 1)`` and of ``Q`` ``α b_c(a - 1) + (1 - α) b_c(a)``
(``α = e^{ε₀}/(e^{ε₀} + 1)``, ``b_c`` the Bin(c, 1/2) pmf), so with
``r = b_c(a - 1)/b_c(a) = a / (c + 1 - a)`` the privacy loss is

``L(a, c) = log((e^{ε₀} + r) / (e^{ε₀} r + 1))``,

decreasing in ``r`` and in ``[-ε₀, ε₀]``. ``L > ε`` exactly for
``r < t = (e^{ε₀} - e^ε)/(e^{ε + ε₀} - 1)``, i.e. ``a <= m_c = ⌈β (c + 1)⌉ - 1`` with
``β = t/(1 + t)``, and

``δ_c(ε) = F_c(m_c) (e^{ε₀} - e^ε)/(e^{ε₀} + 1) - F_c(m_c - 1) (e^{ε + ε₀} - 1)/(e^{ε₀} + 1)``

with ``F_c`` the Bin(c, 1/2) cdf; ``δ_PQ(ε) = Σ_c P(C = c) δ_c(ε)``. The pair is
symmetric (``a -> C + 1 - a`` swaps ``P`` and ``Q``), so one direction suffices.

Soundness of the arithmetic (an upper bound, never below the true δ_PQ): the mass of
``C`` outside the summed range (below 10⁻³⁰ per tail) is added to δ whole; every
``δ_c`` gets ``10⁻¹²`` of its two terms added for rounding (scipy's binomial cdf is
accurate to about 10⁻¹⁵ relative); the sum is rounded up by ``10⁻¹²`` relative.
``shuffled_epsilon`` bisects and returns the end of the bracket where ``δ <= target``.

Approximate-DP randomizers (``local_delta > 0``): the amplified bounds of FMT §3.3 and
Zhou & Chowdhury (ICLR 2024, arXiv:2302.13945) for (ε, δ)-DP mechanisms are **not**
priced here yet; such an event is charged as ``(ε₀, δ₀)``, which holds because the
view is a post-processing of all reports and the neighbors change one of them
(sound, no amplification).

Neighboring relation: one reporter's input *replaced* (the number of reports is
public). An ``add_or_remove_one`` accountant refuses the event.

Length: one event, its pricing (the profile, its inverse and its PLD) and the
derivation above, which is the argument for soundness.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

import numpy as np
from fedpriv.privacy.accounting.events import MAX_EVENT_EPSILON
from fedpriv.privacy.accounting.handlers import EventHandlers, register_event
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_positive, check_real

__all__ = ["MAX_SHUFFLED_REPORTS", "Shuffled", "shuffled_delta", "shuffled_epsilon", "shuffled_pld"]

#: Largest ``n_reports`` of one :class:`Shuffled` event. The profile sums the ``c``
#: of Bin(n - 1, e^{-ε₀}) that carry mass (about 20 standard deviations, so a few
#: thousand at 10⁷) and the PLD builds one atom per (c, a) pair in the bulk.
MAX_SHUFFLED_REPORTS = 10**7
#: Mass of each tail of a binomial left out of a sum (added to δ or to the PLD's
#: infinity mass, so the bounds stay upper bounds).
_TAIL = 1e-30
#: Relative allowance for floating-point rounding in the profile.
_ROUNDING = 1e-12
#: Bisection steps of :func:`shuffled_epsilon` (the bracket [0, ε₀] halves each step).
_BISECTION_STEPS = 64
#: Largest number of (c, a) atoms handled in one vectorised block of the PLD.
_BLOCK_ATOMS = 2_000_000
#: Most (c, a) atoms of one PLD (about 25 s here); beyond it (n ≳ 2·10⁵ at ε₀ = 1) the
#: event has no PLD and the (ε, δ) routes price it.
_MAX_ATOMS = 20_000_000
#: Infinity mass added to the PLD for rounding in the binomial pmfs (10⁻¹⁵ relative
#: each, on a total mass of 1).
_PMF_ROUNDING = 1e-14


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Shuffled:
    """``n_reports`` locally randomized reports, released as a shuffled multiset.

    Each reporter applies an (ε₀, δ₀)-DP local randomizer to its whole input (any two
    inputs of one reporter are indistinguishable, "LDP"); a trusted shuffler releases
    the reports in a uniformly random order. Neighbors replace one reporter's input.

    Parameters
    ----------
    local_epsilon : float
        ε₀ of every local randomizer, in nats, > 0 and <= ``MAX_EVENT_EPSILON`` (700).
    n_reports : int
        Number of shuffled reports ``n`` (the changed reporter's included),
        1 <= n <= :data:`MAX_SHUFFLED_REPORTS`. ``n = 1`` is the randomizer alone.
    local_delta : float, optional
        δ₀ of every local randomizer, in [0, 1); default 0 (pure ε₀-LDP). With
        δ₀ > 0 the event is priced as (ε₀, δ₀), without amplification (module
        docstring).

    Raises
    ------
    TypeError
        If a parameter has the wrong type (e.g. a float ``n_reports``).
    ValueError
        If a parameter is outside its range.

    Notes
    -----
    Priced by the Feldman–McMillan–Talwar dominating pair (arXiv:2012.12803,
    Thm. 3.2): the (ε, δ) pairs of :func:`shuffled_epsilon`, the PLD of
    :func:`shuffled_pld`, and pure ε₀ (the view is a post-processing of the reports
    and one of them changes). RDP is derived from the pure ε₀ (no amplification).

    Examples
    --------
    >>> from fedpriv.privacy import compose_routes
    >>> event = Shuffled(local_epsilon=4.0, n_reports=100_000)
    >>> round(compose_routes([(event, 1)], 1e-6)["pld"], 4)
    0.1698
    """

    #: The guarantee is for a replaced input: refused under ``add_or_remove_one``.
    REPLACE_ONLY: ClassVar[bool] = True

    local_epsilon: float
    n_reports: int
    local_delta: float = 0.0

    def __post_init__(self) -> None:
        epsilon = check_positive("local_epsilon", self.local_epsilon)
        if epsilon > MAX_EVENT_EPSILON:
            raise ValueError(
                f"`local_epsilon` must be <= {MAX_EVENT_EPSILON:g} (MAX_EVENT_EPSILON of "
                f"fedpriv.privacy.accounting.events), got {epsilon!r}."
            )
        object.__setattr__(self, "local_epsilon", epsilon)
        n = check_int_at_least("n_reports", self.n_reports, 1)
        if n > MAX_SHUFFLED_REPORTS:
            raise ValueError(
                f"`n_reports` must be <= MAX_SHUFFLED_REPORTS = {MAX_SHUFFLED_REPORTS:,}, "
                f"got {n:,}."
            )
        object.__setattr__(self, "n_reports", n)
        object.__setattr__(self, "local_delta", check_delta("local_delta", self.local_delta))


def _check_profile_args(local_epsilon: object, n_reports: object) -> tuple[float, int]:
    """Validate through the event, so that every entry point has the same ranges."""
    event = Shuffled(local_epsilon=local_epsilon, n_reports=n_reports)
    return event.local_epsilon, event.n_reports


def _stats():
    """``scipy.stats``, imported on first use (0.8 s; importing this module registers the
    event whenever fedpriv's built-in events load, and must not cost that)."""
    from scipy import stats

    return stats


def _bulk(n: int, p: float) -> tuple[int, int]:
    """A range of Bin(n, p) outside which each tail holds about :data:`_TAIL` or less
    (the callers add the exact outside mass to δ, so the range only sets the cost)."""
    stats = _stats()
    if n == 0 or p <= 0.0:
        return 0, 0
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    width = 12.0 * sd + 30.0
    while True:
        low = max(int(mean - width), 0)
        high = min(math.ceil(mean + width), n)
        below = float(stats.binom.cdf(low - 1, n, p)) if low > 0 else 0.0
        above = float(stats.binom.sf(high, n, p)) if high < n else 0.0
        if max(below, above) <= _TAIL or (low == 0 and high == n):
            return low, high
        width *= 1.5


@functools.lru_cache(maxsize=4096)
def _delta(local_epsilon: float, n_reports: int, epsilon: float) -> float:
    """``δ_PQ(ε)`` rounded up (module docstring)."""
    stats = _stats()
    e0 = local_epsilon
    if epsilon >= e0:
        return 0.0  # |L| <= ε₀ everywhere
    p = math.exp(-e0)
    low, high = _bulk(n_reports - 1, p)
    c = np.arange(low, high + 1, dtype=np.int64)
    weights = stats.binom.pmf(c, n_reports - 1, p)
    outside = float(stats.binom.cdf(low - 1, n_reports - 1, p)) + float(
        stats.binom.sf(high, n_reports - 1, p)
    )
    # t = (e^{ε₀} - e^ε)/(e^{ε+ε₀} - 1), beta = t/(1 + t), both without cancellation.
    top = math.exp(epsilon) * math.expm1(e0 - epsilon)
    bottom = math.expm1(epsilon + e0)
    beta = top / (top + bottom)
    m = np.ceil(beta * (c + 1)).astype(np.int64) - 1
    f_m = stats.binom.cdf(m, c, 0.5)
    f_below = stats.binom.cdf(m - 1, c, 0.5)
    scale = math.exp(e0) + 1.0
    x = f_m * (top / scale)
    y = f_below * (bottom / scale)
    per_c = np.maximum(x - y, 0.0) + _ROUNDING * (x + y)
    total = float(np.sum(weights * per_c)) * (1.0 + _ROUNDING) + outside
    return min(total, 1.0)


def shuffled_delta(local_epsilon: float, n_reports: int, epsilon: float) -> float:
    """Upper bound on δ(ε) of ``n_reports`` shuffled ε₀-LDP reports.

    The hockey-stick divergence ``sup_S P(S) - e^ε Q(S)`` of the
    Feldman–McMillan–Talwar pair, computed exactly and rounded up (module docstring).

    Parameters
    ----------
    local_epsilon : float
        ε₀ of each local randomizer, nats, in (0, 700].
    n_reports : int
        Number of shuffled reports, 1 <= n <= :data:`MAX_SHUFFLED_REPORTS`.
    epsilon : float
        Central ε at which δ is wanted, nats, >= 0.

    Returns
    -------
    float
        δ in [0, 1]; 0 for ``epsilon >= local_epsilon``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range.

    References
    ----------
    .. [1] Feldman, McMillan & Talwar, "Hiding Among the Clones", FOCS 2021,
       arXiv:2012.12803, Thm. 3.2 and §4.

    Examples
    --------
    One report is ε₀ randomized response: δ(ε) = (e^{ε₀} - e^ε)/(e^{ε₀} + 1).

    >>> round(shuffled_delta(1.0, 1, 0.5), 9)
    0.287649137
    """
    e0, n = _check_profile_args(local_epsilon, n_reports)
    epsilon = check_real("epsilon", epsilon)
    if not 0.0 <= epsilon < math.inf:
        raise ValueError(f"`epsilon` must be in [0, inf), got {epsilon!r}.")
    return _delta(e0, n, epsilon)


@functools.lru_cache(maxsize=4096)
def _epsilon(local_epsilon: float, n_reports: int, delta: float) -> float:
    """Smallest ε on a bisection grid with ``_delta(ε) <= delta`` (an upper bound)."""
    if delta <= 0.0:
        return local_epsilon  # the pair reaches loss ε₀ with positive mass
    if _delta(local_epsilon, n_reports, 0.0) <= delta:
        return 0.0
    low, high = 0.0, local_epsilon  # δ(low) > delta >= δ(high) = 0
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if _delta(local_epsilon, n_reports, middle) <= delta:
            high = middle
        else:
            low = middle
        if high - low <= 1e-12 * max(high, 1e-3):
            break
    return high


def shuffled_epsilon(local_epsilon: float, n_reports: int, delta: float) -> float:
    """Upper bound on ε(δ) of ``n_reports`` shuffled ε₀-LDP reports.

    Bisects :func:`shuffled_delta` over ``[0, ε₀]`` and returns the end of the final
    bracket at which δ(ε) <= ``delta`` holds (so the pair is (ε, δ)-indistinguishable
    at the returned ε), within 10⁻¹² relative of the exact inverse.

    Parameters
    ----------
    local_epsilon : float
        ε₀ of each local randomizer, nats, in (0, 700].
    n_reports : int
        Number of shuffled reports, 1 <= n <= :data:`MAX_SHUFFLED_REPORTS`.
    delta : float
        Target δ in [0, 1); ``delta = 0`` returns ε₀.

    Returns
    -------
    float
        ε in nats, in [0, ε₀].

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range.

    References
    ----------
    .. [1] Feldman, McMillan & Talwar, arXiv:2012.12803, Thm. 3.2; the published
       example of their code (github.com/apple/ml-shuffling-amplification, README):
       n = 10⁵, ε₀ = 4, δ = 10⁻⁶ gives ε between 0.16754 and 0.17279.

    Examples
    --------
    >>> round(shuffled_epsilon(4.0, 100_000, 1e-6), 4)
    0.1698
    """
    e0, n = _check_profile_args(local_epsilon, n_reports)
    return _epsilon(e0, n, check_delta("delta", delta))


def _loss(r: np.ndarray, local_epsilon: float) -> np.ndarray:
    """``L = log((e^{ε₀} + r)/(e^{ε₀} r + 1))`` for ``r`` in [0, inf], stable
    (``L(r) = -L(1/r)``; ``r <= 1`` evaluated with log1p)."""
    e0 = local_epsilon
    small = np.minimum(r, 1.0 / np.maximum(r, 1e-300))  # r or 1/r, whichever is <= 1
    small = np.where(np.isinf(r), 0.0, small)
    value = e0 + np.log1p(small * math.exp(-e0)) - np.log1p(small * math.exp(e0))
    return np.where(r <= 1.0, value, -value)


def _pld_masses(local_epsilon: float, n_reports: int, discretization: float):
    """Pessimistic ``{bin: mass}`` and infinity mass of the pair's privacy loss under P.

    For each ``c`` the kept ``a`` run over ``c/2 ± (6 √c + 30)`` (12 standard
    deviations of Bin(c, 1/2); Hoeffding puts below 2 e^{-72} outside) plus the shifted
    top; the exact P-mass outside goes to the infinite loss."""
    stats = _stats()
    e0 = local_epsilon
    p = math.exp(-e0)
    alpha = 1.0 / (1.0 + math.exp(-e0))
    low, high = _bulk(n_reports - 1, p)
    cs = np.arange(low, high + 1, dtype=np.int64)
    weights = stats.binom.pmf(cs, n_reports - 1, p)
    dropped = float(stats.binom.cdf(low - 1, n_reports - 1, p)) + float(
        stats.binom.sf(high, n_reports - 1, p)
    )
    half_width = 6.0 * np.sqrt(cs) + 30.0
    a_low = np.maximum(np.floor(cs / 2 - half_width), 0).astype(np.int64)
    a_high = np.minimum(np.ceil(cs / 2 + half_width), cs).astype(np.int64)
    # P(a) = α b(a) + (1 - α) b(a - 1) over a in [a_low, a_high + 1] keeps at least
    # the Bin(c, 1/2) mass on [a_low, a_high] in each term, so 1 - kept over-counts
    # the mass left out (more infinity mass: conservative).
    kept = stats.binom.cdf(a_high, cs, 0.5) - stats.binom.cdf(a_low - 1, cs, 0.5)
    dropped += float(np.sum(weights * np.maximum(1.0 - kept, 0.0)))
    counts = a_high + 2 - a_low
    if int(counts.sum()) > _MAX_ATOMS:
        return None
    n_bins = math.ceil(e0 / discretization) + 1
    masses = np.zeros(2 * n_bins + 1, dtype=np.float64)
    ends = np.cumsum(counts)
    first = 0
    while first < cs.size:
        base = ends[first] - counts[first]
        last = int(np.searchsorted(ends, base + _BLOCK_ATOMS, side="right"))
        last = max(last, first + 1)
        block = slice(first, last)
        c_col = np.repeat(cs[block], counts[block])
        starts = np.repeat(ends[block] - counts[block] - base, counts[block])
        a_col = np.arange(c_col.size) - starts + np.repeat(a_low[block], counts[block])
        w_col = np.repeat(weights[block], counts[block])
        b_here = stats.binom.pmf(a_col, c_col, 0.5)
        b_before = stats.binom.pmf(a_col - 1, c_col, 0.5)
        mass = w_col * (alpha * b_here + (1.0 - alpha) * b_before)
        with np.errstate(divide="ignore"):
            r = a_col / (c_col + 1 - a_col).astype(np.float64)
        _add_connect_the_dots(masses, _loss(r, e0), mass, discretization, n_bins)
        first = last
    rounded = {int(k - n_bins): float(v) for k in np.flatnonzero(masses) for v in (masses[k],)}
    return rounded, min(dropped * (1.0 + _ROUNDING) + _PMF_ROUNDING, 1.0)


def _add_connect_the_dots(masses, loss, mass, discretization, offset) -> None:
    """Split each atom between its grid neighbours keeping its mass and E[e^{-L}]
    (connect-the-dots, Doroshenko et al. 2022, as ``handlers._atoms_pld`` does)."""
    low = np.floor(loss / discretization)
    high = np.ceil(loss / discretization)
    a, b = low * discretization, high * discretization
    split = high > low
    upper = np.where(
        split,
        mass * -np.expm1(np.where(split, a - loss, 0.0)) / -np.expm1(np.where(split, a - b, -1.0)),
        0.0,
    )
    np.add.at(masses, low.astype(np.int64) + offset, mass - upper)
    np.add.at(masses, high.astype(np.int64) + offset, upper)


@functools.lru_cache(maxsize=32)
def _pld(local_epsilon: float, n_reports: int, discretization: float):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    masses = _pld_masses(local_epsilon, n_reports, discretization)
    if masses is None:
        return None
    rounded, infinity = masses
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        rounded, infinity, discretization, pessimistic_estimate=True
    )


def shuffled_pld(local_epsilon: float, n_reports: int, discretization: float = 1e-4):
    """Pessimistic privacy-loss distribution of the Feldman–McMillan–Talwar pair.

    One atom per ``(c, a)`` in the bulk of ``C`` and of ``A | C`` (the mass outside,
    below 10⁻³⁰ per tail, goes to the infinite loss), each split between its two grid
    neighbours by connect-the-dots, so δ(ε) of the result is >= the pair's at every
    ε; the pair dominates the shuffled view (module docstring), so composing this PLD
    with others bounds the composed view.

    Parameters
    ----------
    local_epsilon : float
        ε₀ of each local randomizer, nats, in (0, 700].
    n_reports : int
        Number of shuffled reports, 1 <= n <= :data:`MAX_SHUFFLED_REPORTS`.
    discretization : float, default 1e-4
        Loss grid step (dp-accounting's ``value_discretization_interval``), > 0.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution or None
        Symmetric, pessimistic; None when the pair has more than 2·10⁷ atoms in its
        bulk (n beyond about 2·10⁵ at ε₀ = 1), which would take minutes.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range.

    References
    ----------
    .. [1] Feldman, McMillan & Talwar, arXiv:2012.12803, Thm. 3.2.
    .. [2] Zhu, Dong & Wang, "Optimal Accounting of Differential Privacy via
       Characteristic Function", AISTATS 2022, arXiv:2106.08567, Thm. 10
       (dominating pairs compose adaptively).

    Examples
    --------
    >>> pld = shuffled_pld(4.0, 100_000, 1e-4)
    >>> 0.16754 < pld.get_epsilon_for_delta(1e-6) < 0.17279  # published bracket
    True
    """
    e0, n = _check_profile_args(local_epsilon, n_reports)
    return _pld(e0, n, check_positive("discretization", discretization))


# ---------------------------------------------------------------------------- handlers
def _shuffled_approx(event: Shuffled, delta_share: float) -> tuple[float, float]:
    if event.local_delta > 0.0:
        return event.local_epsilon, event.local_delta  # post-processing of one report
    if delta_share <= 0.0:
        # "Needs a δ share" (the routes then ask again with one); the pure handler
        # still gives ε₀ at δ = 0 and to the optimal route.
        return math.inf, 0.0
    share = min(delta_share, 0.5)
    return _epsilon(event.local_epsilon, event.n_reports, share), share


def _shuffled_pld(event: Shuffled, discretization: float, pessimistic: bool):
    if not pessimistic:
        return None  # an upper bound for every ε₀-LDP randomizer, not this one's loss
    if event.local_delta > 0.0:  # the worst (ε₀, δ₀)-DP pair, dp-accounting's own
        from dp_accounting.pld import privacy_loss_distribution as pld_lib
        from dp_accounting.pld.common import DifferentialPrivacyParameters

        return pld_lib.from_privacy_parameters(
            DifferentialPrivacyParameters(event.local_epsilon, event.local_delta),
            value_discretization_interval=discretization,
        )
    return _pld(event.local_epsilon, event.n_reports, discretization)


register_event(
    Shuffled,
    EventHandlers(
        pure=lambda e: e.local_epsilon if e.local_delta == 0.0 else math.inf,
        approx=_shuffled_approx,
        pld=_shuffled_pld,
    ),
)
