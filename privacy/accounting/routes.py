"""Per-event handlers and composition routes over one cell of the ledger.

A *cell* is the sequential composition of the releases that can touch one record: a
sequence of ``(event, count)`` pairs (the accountant builds cells; parallel composition
*across* cells is the accountant's job). Every event type registers an
:class:`EventHandlers` bundle of small pure functions (CONTRIBUTING.md, Events and accounting: dispatch through a
table, no ``isinstance`` chains); a *route* composes the cell through one family of
handlers and converts the result to ε at a target δ.

Routes
------
``pure``      Σ count·ε_i when every event is pure; finite at ``delta = 0``.
``basic``     Σ count·ε_i(δ_i) with Σ count·δ_i <= target: valid for *any* ledger, so
              every other route is capped by it (a looser route falls back to basic).
``advanced``  Dwork, Rothblum & Vadhan 2010, Thm. III.3, heterogeneous form
              Σ ε_i (e^{ε_i} - 1) + √(2 ln(1/δ') Σ ε_i²), with δ' + Σ δ_i = target.
              An event may price its own parts by an ``approx`` handler (e.g.
              :class:`~fedpriv.privacy.mechanisms.interval.IntervalRelease`: Kairouz et al. 2015,
              Thm. 3.5 over its releases).
``optimal``   Kairouz, Oh & Viswanath 2015, Thm. 3.3: exact k-fold composition of
              (ε, δ)-DP mechanisms, computed in log space (k = 10⁴ works;
              dp-accounting's ``advanced_composition`` overflows at k = 1000).
``rdp``       Σ RDP curves, Balle et al. 2020 conversion (:func:`~fedpriv.privacy.accounting.guarantees.
              rdp_epsilon`).
``zcdp``      Σ ρ, tight zCDP conversion (:func:`~fedpriv.privacy.accounting.guarantees.zcdp_epsilon`).
``gdp``       Exact: μ = √Σ μ_i² when every event is Gaussian (Dong, Roth & Su 2019,
              Cor. 3.3), converted by :func:`~fedpriv.privacy.accounting.guarantees.gaussian_dp_epsilon`.
``pld``       dp-accounting's privacy-loss distribution, pessimistic (an upper bound),
              with a round-off certificate (:func:`_pld_roundoff`): queried at δ minus
              it, ``inf`` where it swamps δ (another route answers: at δ -> 0 the
              pure sum is exact for pure events, KOV for homogeneous ones).
              On a cell whose events are all exactly Gaussian the PLD is not built:
              the ``gdp`` value is exact and is reported for this route too.

A route that does not apply to a cell (an event without that handler, or ``delta = 0``
for the δ-based conversions) is ``inf``. Identical events are batched by
self-composition; Gaussian-family events are merged into one Gaussian of μ = √Σ μ_i²
(exact); per-event curves and PLDs are cached on the (hashable) events.

The per-event handler table (:class:`EventHandlers`, :func:`register_event`,
:func:`handlers_for`, and the built-in handlers) lives in :mod:`fedpriv.privacy.accounting.handlers` and
is re-exported here; importing this module registers the built-in events.

Length: one short function per composition route and its helpers, which together form
one table; a quarter of it is documentation.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from fedpriv.privacy.accounting import composed as _composed  # registers Composed (nested use)
from fedpriv.privacy.accounting.conversions import _delta_from_log
from fedpriv.privacy.accounting.events import (
    Composed,
    DiscreteLaplace,
    Laplace,
    LaplaceTree,
    NonPrivate,
    SelfComposed,
)
from fedpriv.privacy.accounting.exact_sum import at_most, ratio_sum, round_up
from fedpriv.privacy.accounting.guarantees import (
    DEFAULT_ORDERS,
    PureDP,
    gaussian_dp_delta,
    gaussian_dp_epsilon,
    rdp_delta,
    rdp_epsilon,
    zcdp_delta,
    zcdp_epsilon,
)
from fedpriv.privacy.accounting.handlers import (
    EventHandlers,
    _approx,
    _event_pld,
    _gaussian_pld,
    _gdp,
    _pure,
    _rdp,
    _track_caches,
    _zcdp,
    handlers_for,
    register_event,
    self_compose_calls,
)
from fedpriv.privacy.accounting.pld_scan import PldScan
from fedpriv.privacy.accounting.sampling import _lazy_sampled_rdp
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_positive, check_real
from scipy import special

__all__ = [
    "ROUTES",
    "EventHandlers",
    "compose_delta",
    "compose_gdp_mu",
    "compose_routes",
    "compose_zcdp_rho",
    "handlers_for",
    "pld_lower_bound",
    "register_event",
]

#: Route names, in the order :func:`compose_routes` reports them.
ROUTES = ("pure", "basic", "advanced", "optimal", "rdp", "zcdp", "gdp", "pld")

#: δ allowed per PLD operation for tail mass dp-accounting truncates (lower bound).
_TRUNCATION_ALLOWANCE = 1e-14
#: Fractions of the free δ given to δ' by the advanced route (the best one is kept).
_ADVANCED_SPLITS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)

Cell = Sequence[tuple[Any, int]]


# ---------------------------------------------------------------------- cell handling
def _expand(event: Any, count: int) -> list[tuple[Any, int]]:
    """Rewrite structural events into their parts (exact equivalences)."""
    if type(event) is SelfComposed:
        return _expand(event.event, count * event.count)
    if type(event) is Composed:
        return [item for part in event.events for item in _expand(part, count)]
    if type(event) is LaplaceTree:  # depth sequential Laplace releases per record
        part = Laplace(scale=event.scale, l1_sensitivity=event.l1_sensitivity)
        return [(part, count * event.depth)]
    return [(event, count)]


def _normalize(cell: Cell) -> tuple[tuple[Any, int], ...]:
    """Validate ``cell`` and merge it into distinct ``(event, count)`` pairs."""
    if isinstance(cell, (str, bytes)) or not isinstance(cell, Sequence):
        raise TypeError(
            f"`cell` must be a sequence of (event, count) pairs, got {type(cell).__name__}."
        )
    counts: dict[Any, int] = {}
    for item in cell:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"each cell entry must be an (event, count) pair, got {item!r}.")
        event, count = item
        count = check_int_at_least("count", count, 1)
        for part, k in _expand(event, count):
            handlers_for(part)
            counts[part] = counts.get(part, 0) + k
    return tuple(counts.items())


def _check_orders(orders: Sequence[float]) -> tuple[float, ...]:
    """Return RDP orders as a sorted tuple of distinct floats > 1."""
    grid = np.asarray(orders, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 1)):
        raise ValueError("`orders` must be a non-empty 1-D sequence of finite floats > 1.")
    return tuple(float(x) for x in np.unique(grid))


def _per_copy(items, target_delta: float, delta_prime_fraction: float):
    """``([(ε_i, count)], δ')`` for one δ split, or None if the δ's do not fit.

    Events that are (ε_i, δ_i)-DP on their own (pure, opaque) keep their δ_i; the
    rest of ``target_delta`` goes to δ' (a ``delta_prime_fraction`` of it, all of it
    if no event needs a share) and to equal per-copy shares of the other events.
    """
    own = [_approx(event, 0.0) for event, _ in items]
    flexible = [not math.isfinite(epsilon) for epsilon, _ in own]
    fixed = [count * Fraction(delta) for (_, count), (_, delta), flex in zip(items, own, flexible)]
    fixed_delta = sum((f for f, flex in zip(fixed, flexible) if not flex), Fraction(0))
    target = Fraction(target_delta)
    if fixed_delta > target:  # exact: the declared δ_i alone exceed the target
        return None
    free = float(target - fixed_delta)
    n_flexible = sum(count for (_, count), flex in zip(items, flexible) if flex)
    # The shares are floats; their exact sum with the fixed δ must not exceed the
    # target (issue 38: a relative slack let δ 1e-12 below a declared δ_i pass).
    # Rounding can only overshoot by a few ulps, so a shrink by 1e-12 restores it.
    for shrink in (1.0, 1.0 - 1e-12, 1.0 - 1e-9):
        delta_prime = free * (delta_prime_fraction if n_flexible else 1.0) * shrink
        share = (free * shrink - delta_prime) / n_flexible if n_flexible else 0.0
        pairs, spent = [], fixed_delta + Fraction(delta_prime)
        for (event, count), pair, flex in zip(items, own, flexible):
            if flex:
                pair = _approx(event, max(share, 0.0))
                spent += count * Fraction(pair[1])
            pairs.append((pair[0], count))
        if spent <= target:
            return pairs, delta_prime
    return None


def _basic(items, target_delta: float) -> float:
    found = _per_copy(items, target_delta, 0.0)
    if found is None:
        return math.inf
    return math.fsum(count * epsilon for epsilon, count in found[0])


def _advanced(items, target_delta: float) -> float:
    best = math.inf
    for fraction in _ADVANCED_SPLITS:
        found = _per_copy(items, target_delta, fraction)
        if found is None or found[1] <= 0:
            continue
        eps = np.array([e for e, _ in found[0]])
        counts = np.array([c for _, c in found[0]], dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            drift = float(np.sum(counts * eps * np.expm1(eps)))
            spread = math.sqrt(2 * math.log(1 / found[1]) * float(np.sum(counts * eps**2)))
        value = drift + spread
        if not math.isnan(value):
            best = min(best, value)
    return best


@functools.lru_cache(maxsize=256)
def _kov_terms(epsilon: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``j`` and ``log C(k, j) + (k - j) ε - k log(1 + e^ε)`` for j = 0..k."""
    j = np.arange(k + 1, dtype=np.float64)
    log_binom = special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1)
    base = log_binom + (k - j) * epsilon - k * float(np.logaddexp(0.0, epsilon))
    j.flags.writeable = base.flags.writeable = False
    return j, base


def _kov_log_delta(epsilon: float, k: int, target_epsilon: float) -> float:
    """log δ(ε') of k-fold ε randomized response (KOV 2015, Thm. 3.3), in log space.

    ``δ(ε') = Σ_j C(k, j) (e^{(k-j)ε} - e^{ε' + jε})_+ / (1 + e^ε)^k``; at the lattice
    points ``ε' = (k - 2i) ε`` this is Thm. 3.3's ``δ_i``, in between it is the exact
    hockey-stick divergence of the composed randomized response.

    Rounded up: float64 carries an absolute error of a few ulp of the largest
    magnitude in each log term (``log k! ≈ 1.3e7`` at k = 10⁶: about 1e-9, a relative
    1e-9 in δ) and of ``(k - 2j) ε`` in each gap, so every gap is widened by that
    error (a term that might be active is kept) and the log sum is raised by it.
    """
    j, base = _kov_terms(epsilon, k)
    gap = (k - 2 * j) * epsilon - target_epsilon  # log e^{(k-j)ε} - log e^{ε'+jε}
    gap = gap + 4.0 * _UNIT_ROUNDOFF * (np.abs(k - 2 * j) * epsilon + abs(target_epsilon))
    active = int(np.count_nonzero(gap > 0))  # gap decreases in j: a prefix
    if active == 0:
        return -math.inf
    terms = base[:active] + np.log(-np.expm1(-gap[:active]))
    top = float(terms.max())
    total = top + math.log(float(np.sum(np.exp(terms - top))))
    scale = float(special.gammaln(k + 1.0)) + 2.0 * k * (epsilon + 1.0)
    return total + 8.0 * _UNIT_ROUNDOFF * (scale + active)


def _optimal_parts(items) -> tuple[float, int, float] | None:
    """(max ε, total count, log Π(1-δ_i)^count) if every event is (ε, δ)-described."""
    epsilons, k, log_keep = [], 0, 0.0
    for event, count in items:
        epsilon, delta = _approx(event, 0.0)
        if not math.isfinite(epsilon):  # needs a δ share, but may still be pure
            epsilon, delta = _pure(event), 0.0
        if not math.isfinite(epsilon):
            return None
        epsilons.append(epsilon)
        k += count
        log_keep += count * math.log1p(-delta)
    return max(epsilons), k, log_keep


def _optimal_log_delta(parts: tuple[float, int, float], target_epsilon: float) -> float:
    """log δ(ε') of the KOV bound with fixed per-event δ_i (KOV 2015, Thm. 3.3).

    ``δ = 1 - (1 - δ_f)(1 - δ_kov) = δ_f + Π(1 - δ_i)·δ_kov`` with
    ``δ_f = 1 - Π(1 - δ_i)``, evaluated in log space so that no δ below the
    smallest double is flushed to 0 (issue 19, pattern 1); ``-inf`` only where
    ``ε' >= k·ε`` and every δ_i is 0 (the composition is then exactly pure).
    """
    epsilon, k, log_keep = parts
    log_kov = _kov_log_delta(epsilon, k, target_epsilon)
    if log_keep == 0.0:
        return min(log_kov, 0.0)
    log_fixed = math.log(-math.expm1(log_keep))
    return min(0.0, float(np.logaddexp(log_fixed, log_kov + log_keep)))


def _optimal_delta(parts: tuple[float, int, float], target_epsilon: float) -> float:
    return _delta_from_log(_optimal_log_delta(parts, target_epsilon))


def _log_target(target_delta: float) -> float:
    return math.log(target_delta) if target_delta > 0 else -math.inf


#: Most releases a cell may hold for :func:`_exact_top` (``(1 - δ_i)^count`` in exact
#: rationals grows by ~56 bits per release).
_EXACT_TOP_RELEASES = 1024


#: Relative gap between a target δ and the leak probability 1 - Π(1 - δ_i) below which
#: the float KOV evaluation (errors of a few ulps) cannot tell them apart.
_LEAK_MARGIN = 1e-9


def _exact_leak(items) -> Fraction | None:
    """``1 - Π(1 - δ_i)^count`` over the declared δ_i, exactly; None for cells of more
    than :data:`_EXACT_TOP_RELEASES` releases."""
    if sum(count for _, count in items) > _EXACT_TOP_RELEASES:
        return None
    keep = Fraction(1)
    for event, count in items:
        epsilon, delta = _approx(event, 0.0)
        if math.isfinite(epsilon) and delta > 0.0:
            keep *= (1 - Fraction(delta)) ** count
    return 1 - keep


def _exact_top(items, target_delta: float) -> float:
    """``Σ count·ε_i`` (rounded up) if ``1 - Π(1 - δ_i)^count <= target_delta`` holds in
    exact rational arithmetic, else ``inf``; for cells of (ε_i, δ_i)-described events.

    Each (ε_i, δ_i)-DP release is dominated by the mechanism that leaks its input with
    probability δ_i and is otherwise ε_i randomized response (the dominating mechanism
    in the proof of Kairouz, Oh & Viswanath 2015, Thm. 3.3), so at ``ε' = Σ ε_i``,
    where the composed randomized responses have δ = 0, the composition's δ is the
    chance that some release leaked: ``1 - Π(1 - δ_i)`` (Thm. 3.3's ``i = 0`` term when
    the ε_i are equal). Float evaluation of that product can land an ulp above a target it meets
    exactly ((1, 0.1) + (2, 0.2) at δ = 0.28: 1 - 0.9·0.8 is 0.28000000000000001443
    in the doubles' exact values, fl(0.28) = 0.28000000000000002665), so the
    comparison is done in ``Fraction`` and the answer is never below the truth.
    ``inf`` for cells of more than :data:`_EXACT_TOP_RELEASES` releases.
    """
    if target_delta <= 0.0 or sum(count for _, count in items) > _EXACT_TOP_RELEASES:
        return math.inf
    terms, keep = [], Fraction(1)
    for event, count in items:
        epsilon, delta = _approx(event, 0.0)
        if math.isfinite(epsilon) and delta > 0.0:  # a declared (ε, δ): exact floats
            terms.append((count, epsilon, 1.0))
            keep *= (1 - Fraction(delta)) ** count
            continue
        term = _exact_terms(event, count)  # pure: its ε summed exactly
        if term is None:
            return math.inf
        terms.append(term)
    if 1 - keep > Fraction(target_delta):
        return math.inf
    return _round_up(ratio_sum(terms))


def _optimal(items, target_delta: float) -> float:
    """Smallest ε' with log δ(ε') <= log ``target_delta`` (bisection in log space).

    At ``target_delta = 0`` only ε' where the bound is exactly 0 is accepted, i.e.
    ``ε' >= k·max ε_i`` (and no event has a δ_i). Where the float evaluation cannot
    certify the target (the fixed δ rounds above it), the exact top end
    :func:`_exact_top` answers instead of ``inf``; it also caps the bisection (the
    sum of the ε_i, not ``k·max ε_i``, for a mix of ε_i).
    """
    parts = _optimal_parts(items)
    if parts is None:
        return math.inf
    epsilon, k, log_keep = parts
    if target_delta == 0.0:  # KOV: δ(ε') = 0 exactly iff ε' >= k ε and no δ_i
        return math.inf if log_keep < 0.0 else _round_up(k * Fraction(epsilon))
    top = math.inf
    if log_keep < 0.0:
        top = _exact_top(items, target_delta)
        leak = _exact_leak(items)
        if leak is None:  # too many releases for rationals: a conservative float check
            if -math.expm1(log_keep) * (1.0 + _LEAK_MARGIN) >= target_delta:
                return math.inf
        elif leak > Fraction(target_delta):
            return math.inf  # the leak probability alone exceeds the target, exactly
        elif Fraction(target_delta) - leak <= Fraction(target_delta) * _LEAK_MARGIN:
            return top  # δ(ε') is within float error of the leak atom: the exact top
    log_target = _log_target(target_delta)
    if log_keep < 0.0 and math.log(-math.expm1(log_keep)) > log_target:
        return top  # the fixed δ alone exceeds the target in floats
    low, high = 0.0, k * epsilon
    if _optimal_log_delta(parts, high) > log_target:  # rounding at the top end
        return top
    if _optimal_log_delta(parts, low) <= log_target:
        return 0.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if _optimal_log_delta(parts, middle) <= log_target:
            high = middle
        else:
            low = middle
    return min(high, top)


def _gdp_mu(items) -> float | None:
    mus = [_gdp(event) for event, _ in items]
    if any(mu is None for mu in mus):
        return None
    return math.sqrt(math.fsum(count * mu**2 for mu, (_, count) in zip(mus, items)))


def _zcdp_rho(items) -> float | None:
    rhos = [_zcdp(event) for event, _ in items]
    if any(rho is None for rho in rhos):
        return None
    return math.fsum(count * rho for rho, (_, count) in zip(rhos, items))


def compose_zcdp_rho(cell: Cell) -> float:
    """ρ of one cell's sequential composition in zero-concentrated DP (``inf`` if none).

    Each release's ρ comes from its event's ``zcdp`` handler (a pure ε-DP release is
    ε²/2-zCDP, Bun & Steinke 2016, arXiv:1605.02065, Prop. 1.4; a Gaussian of
    multiplier σ is 1/(2σ²)-zCDP, Prop. 1.6), and ρ adds under composition (Lemma
    2.3). A cell holding any release without a zCDP bound (an (ε, δ) event with δ > 0,
    a Poisson-sampled event, a raw release) is not ρ-zCDP for any finite ρ by this
    route: ``inf``.

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts (>= 1).

    Returns
    -------
    float
        ρ >= 0 (dimensionless), or ``inf``.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> compose_zcdp_rho([(events.Gaussian(noise_multiplier=2.0), 4)])
    0.5
    """
    rho = _zcdp_rho(_normalize(cell))
    return math.inf if rho is None else rho


def compose_gdp_mu(cell: Cell) -> float:
    """μ of one cell's sequential composition in Gaussian DP (``inf`` if none).

    Each release's μ comes from its event's ``gdp`` handler (exact for the Gaussian
    family: μ = Δ₂/σ, Dong, Roth & Su 2019, arXiv:1905.02383, Thm. 2.7), and μ
    composes as √Σ μ_i² (Cor. 3.3). A cell holding any release without a μ-GDP
    handler (Laplace, randomized response, (ε, δ), subsampled or raw releases) gets
    ``inf``: this route certifies no finite μ for it.

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts (>= 1).

    Returns
    -------
    float
        μ >= 0 (dimensionless), or ``inf``.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> compose_gdp_mu([(events.Gaussian(noise_multiplier=2.0), 4)])
    1.0
    """
    mu = _gdp_mu(_normalize(cell))
    return math.inf if mu is None else mu


def _rdp_total(items, orders: tuple[float, ...]):
    total = np.zeros(len(orders))
    for event, count in items:
        curve = _rdp(event, orders)
        if curve is None:
            return None
        total = total + count * curve
    finite = np.isfinite(total)
    if not np.any(finite):
        return None
    return np.asarray(orders)[finite], total[finite]


#: Relative error allowed on a computed RDP value against the exact, monotone one
#: when :func:`_rdp_route` skips orders (dp-accounting's sums and series are accurate
#: to ~1e-13 relative); the skipped orders' ε must exceed the best by this much.
_RDP_SKIP_SLACK = 1e-9


def _rdp_route(items, orders: tuple[float, ...], target_delta: float) -> float:
    """ε of the RDP route at ``target_delta`` > 0: ``rdp_epsilon`` of
    :func:`_rdp_total`, bit for bit, with the costly curves evaluated only where
    they can give the minimum (issue 23).

    The Poisson-subsampled Gaussian's curve (dp-accounting's ``_compute_log_a``, a
    Python series per order, ~0.1 s for :data:`DEFAULT_ORDERS`) is a Rényi
    divergence, nondecreasing in the order (:func:`~fedpriv.privacy.accounting.
    sampled_rdp._sampled_gaussian_rdp_at`). Its orders are evaluated one by one, the
    integers first (cheap in dp-accounting), then the rest, each in increasing order;
    an order ``α_j`` is skipped when a lower bound on its ε,

        ``Σ_cheap count·R(α_j) + Σ_costly count·R(α_i)·(1 - s) + log(1 - 1/α_j)
        - (log δ + log α_j) / (α_j - 1)``  (``α_i <= α_j`` the largest evaluated),

    minus a rounding slack, exceeds the smallest ε of the evaluated orders, and
    the curve there cannot be small enough for the KL exit (ε = 0) of
    :func:`~fedpriv.privacy.accounting.conversions.rdp_epsilon`. A skipped order
    then never holds the minimum, so the minimum over the evaluated orders is the
    minimum over all (``s`` = :data:`_RDP_SKIP_SLACK`). Other events' curves are
    taken at every order and summed in the same order as :func:`_rdp_total`.
    Returns ``inf`` where that gives None.
    """
    lazy = [_lazy_sampled_rdp(event) for event, _ in items]
    if not any(lazy):
        rdp = _rdp_total(items, orders)
        return math.inf if rdp is None else rdp_epsilon(rdp[0], rdp[1], target_delta)
    grid = np.asarray(orders, dtype=np.float64)
    size = grid.size
    curves = []  # per item: a full curve (cheap) or a float array filled lazily
    cheap = np.zeros(size)
    for (event, count), value in zip(items, lazy):
        if value is None:
            curve = _rdp(event, orders)
            if curve is None:
                return math.inf
            curves.append(curve)
            cheap = cheap + count * curve
        else:
            curves.append(np.full(size, np.nan))
    log_delta = math.log(target_delta)
    with np.errstate(all="ignore"):
        conversion = np.log1p(-1.0 / grid) - (log_delta + np.log(grid)) / (grid - 1.0)
    kl_floor = -math.log1p(-target_delta * target_delta) * (1.0 + 1e-6) + 1e-300
    costly = [(i, count) for i, ((_, count), value) in enumerate(zip(items, lazy)) if value]
    evaluated = np.zeros(size, dtype=bool)
    best = math.inf

    def evaluate(j: int) -> None:
        nonlocal best
        order = float(grid[j])
        for i, _ in costly:
            curves[i][j] = lazy[i](order)
        total = float(cheap[j]) + math.fsum(count * curves[i][j] for i, count in costly)
        evaluated[j] = True
        if math.isfinite(total):
            epsilon = 0.0 if target_delta**2 + math.expm1(-total) > 0.0 else total + conversion[j]
            best = min(best, max(0.0, float(epsilon)))

    def skippable(j: int, floors: list[float]) -> bool:
        costly_floor = math.fsum(count * floor for (_, count), floor in zip(costly, floors))
        floor = float(cheap[j]) + costly_floor * (1.0 - _RDP_SKIP_SLACK)
        bound = floor + float(conversion[j])
        slack = _RDP_SKIP_SLACK * (1.0 + abs(floor) + abs(float(conversion[j])) + abs(best))
        return floor > kl_floor and bound - slack > best

    def raise_floors(j: int, floors: list[float]) -> None:
        for k, (i, _) in enumerate(costly):
            value = curves[i][j]
            if math.isfinite(value):
                floors[k] = max(floors[k], value)

    integer = [j for j in range(size) if float(grid[j]).is_integer()]
    for phase in (integer, range(size)):
        floors = [0.0] * len(costly)  # largest finite value at an evaluated order <= α_j
        skipped: list[int] = []  # integer orders skipped since the last evaluation
        for j in phase:
            if not evaluated[j] and not skippable(j, floors):
                # An integer order costs dp-accounting ~α terms: before a large one,
                # the smallest skipped order (cheaper) may raise the floor enough.
                while phase is integer and skipped and not skippable(j, floors):
                    smaller = skipped.pop(0)
                    evaluate(smaller)
                    raise_floors(smaller, floors)
                if not skippable(j, floors):
                    evaluate(j)
                    skipped.clear()
                elif phase is integer:
                    skipped.append(j)
            elif not evaluated[j] and phase is integer:
                skipped.append(j)
            if evaluated[j]:
                raise_floors(j, floors)
    # The route's value on the evaluated orders, summed exactly as _rdp_total sums.
    keep = np.flatnonzero(evaluated)
    total = np.zeros(keep.size)
    for (_, count), curve in zip(items, curves):
        total = total + count * curve[keep]
    finite = np.isfinite(total)
    if not np.any(finite):
        return math.inf
    return rdp_epsilon(grid[keep][finite], total[finite], target_delta)


@functools.lru_cache(maxsize=32)
def _cell_pld(items, discretization: float, pessimistic: bool, partial: bool):
    """Composed PLD of a normalized cell and its round-off certificate, or None.

    Gaussian-family events are merged exactly. With ``partial`` events without a
    PLD are dropped (a lower bound); otherwise a missing PLD makes the result None.
    Returns ``(pld, certificate, calls)``: ``calls`` counts dp-accounting
    compositions (each may truncate <= 1e-15 of tail mass) and ``certificate``
    (:func:`_pld_roundoff`) bounds the PLD's round-off (:func:`_roundoff_at`).
    """
    mus, composed, operations, calls = [], None, 0, 0
    for event, count in items:
        mu = _gdp(event)
        if mu is not None:
            mus.append(count * mu**2)
            continue
        part = _event_pld(event, count, discretization, pessimistic)
        if part is None:
            if partial:
                continue
            return None
        operations += count + (composed is not None)
        calls += self_compose_calls(count) + 1
        composed = part if composed is None else composed.compose(part)
    if mus:
        part = _gaussian_pld(math.sqrt(math.fsum(mus)), discretization, pessimistic)
        operations += 1 + (composed is not None)
        calls += 1
        composed = part if composed is None else composed.compose(part)
    if composed is None:
        return None
    return composed, _pld_roundoff(composed, operations), calls


#: Safety factor on the FFT round-off model of :func:`_pld_roundoff`.
_ROUNDOFF_SAFETY = 16.0
_UNIT_ROUNDOFF = 2.0**-53


def _pmf_probs(pmf) -> np.ndarray:
    """Probabilities of a dp-accounting PLD pmf (dense or sparse), as an array."""
    probs = getattr(pmf, "_probs", None)
    if probs is None:
        probs = np.fromiter(pmf._loss_probs.values(), dtype=np.float64)
    return np.asarray(probs, dtype=np.float64)


def _pmfs(pld) -> tuple:
    """The remove (and, if distinct, add) pmfs of a dp-accounting PLD."""
    if pld._symmetric:
        return (pld._pmf_remove,)
    return pld._pmf_remove, pld._pmf_add


def _pld_roundoff(pld, operations: int) -> tuple[tuple[float, float], ...]:
    """Round-off certificate of a composed dp-accounting PLD, per pmf.

    dp-accounting composes by FFT (``ifft(fft(p)**k)`` for a k-fold composition),
    whose output carries round-off in every bin, negative masses included (issue
    19, pattern 3). Returns, for each pmf, ``(l2, floor)``: ``l2`` models
    the ℓ2 norm of the pmf's error vector: Higham, *Accuracy and Stability of
    Numerical Algorithms* (2002), Thm. 24.2 (relative ℓ2 error ``O(log2 L · u)``
    per transform), amplified ``k``-fold by the power, so ``(k + 2 log2 L + 2) u
    ‖p‖₂`` times a safety factor of 16; ``floor`` is the largest negative mass
    (measured: a true mass is >= 0, so every bin's round-off reaches that size
    somewhere). (The mass defect |Σ p + p_∞ - 1| is no measure of it: dp-accounting
    drops lower-tail mass, which no δ at ε >= 0 sees.) ``L`` is the number of
    bins, ``k`` the number of compositions and ``u = 2⁻⁵³``. See
    :func:`_roundoff_at` for the bound on δ.
    """
    certificate = []
    for pmf in _pmfs(pld):
        probs = _pmf_probs(pmf)
        size = max(probs.size, 2)
        l2 = (
            _ROUNDOFF_SAFETY
            * (operations + 2.0 * math.log2(size) + 2.0)
            * _UNIT_ROUNDOFF
            * float(np.linalg.norm(probs))
        )
        floor = max(0.0, -float(probs.min(initial=0.0)))
        certificate.append((l2, floor))
    return tuple(certificate)


def _roundoff_at(certified, epsilon: float) -> float:
    """Bound on |δ_computed(ε') - δ_exact(ε')| for every ε' >= ``epsilon``.

    δ(ε') sums the masses of the bins above ε' with weights in [0, 1], so its error
    is at most the ℓ1 error over the ``n`` bins with loss >= ``epsilon - grid``:
    ``max(√n · l2, 2 n · floor)`` (Cauchy–Schwarz on the ℓ2 model; the measured
    noise floor). Decreasing in ``epsilon``.
    On the worst case of issue 19 (18,935 discrete Laplace, true error 7.5e-13 at
    ε = 13.12) this gives 2.7e-11.
    """
    pld, certificate, _ = certified
    worst = 0.0
    for pmf, (l2, floor) in zip(_pmfs(pld), certificate):
        n = _count_at_least(pmf, epsilon - pmf._discretization)
        worst = max(worst, math.sqrt(n) * l2, 2.0 * n * floor)
    return worst


def _first_at_least(pmf, threshold: float) -> int:
    """First bin of a dense pmf whose loss (:func:`_pmf_losses`) is >= ``threshold``.

    ``(i + lower) * grid`` is nondecreasing in ``i`` (rounding is monotone), so a
    bisection on the same products finds the index that ``losses >= threshold``
    would: the same count, without building the losses (issue 23)."""
    lower, grid = pmf._lower_loss, pmf._discretization
    size = len(pmf._probs)
    return bisect.bisect_left(range(size), threshold, key=lambda i: float(i + lower) * grid)


def _count_at_least(pmf, threshold: float) -> int:
    """Number of bins with loss >= ``threshold`` (dense: by bisection)."""
    if getattr(pmf, "_probs", None) is not None:
        return len(pmf._probs) - _first_at_least(pmf, threshold)
    return int(np.count_nonzero(_pmf_losses(pmf) >= threshold))


def _pmf_losses(pmf) -> np.ndarray:
    """Privacy losses of a pmf's bins (each one product, no accumulated drift)."""
    if getattr(pmf, "_probs", None) is not None:
        index = np.arange(len(pmf._probs), dtype=np.float64) + pmf._lower_loss
    else:
        index = np.fromiter(pmf._loss_probs.keys(), dtype=np.float64)
    return index * pmf._discretization


def _tail_mass(pld, epsilon: float) -> float:
    """Σ |mass| of bins with loss >= ``epsilon - discretization`` (either pmf)."""
    worst = 0.0
    for pmf in _pmfs(pld):
        probs = _pmf_probs(pmf)
        if getattr(pmf, "_probs", None) is not None:  # dense: a suffix (same sum)
            tail = probs[_first_at_least(pmf, epsilon - pmf._discretization) :]
        else:
            tail = probs[_pmf_losses(pmf) >= epsilon - pmf._discretization]
        worst = max(worst, float(np.abs(tail).sum()))
    return worst


def _summation_slack(pld, epsilon: float) -> float:
    """Error of dp-accounting's running sums down to ``epsilon`` (n·u·Σ|terms|)."""
    size = max(_pmf_probs(pmf).size for pmf in _pmfs(pld))
    return 2.0 * size * _UNIT_ROUNDOFF * (_tail_mass(pld, epsilon) + 1e-300)


#: Loss above which ``exp(−loss)`` can underflow inside dp-accounting's ε(δ) scan.
_UNDERFLOW_LOSS = 700.0


def _optimistic_epsilon(pld, delta: float, scan: PldScan | None = None) -> float:
    """ε(δ) of an optimistic PLD: dp-accounting's (``scan``, :class:`PldScan`, gives it
    exactly), or the log-space scan above 700."""
    epsilon = float((scan or PldScan(pld)).epsilon(delta))
    if math.isfinite(epsilon) and epsilon > _UNDERFLOW_LOSS:
        return _log_space_epsilon(pld, delta)
    return epsilon


def _log_space_epsilon(pld, delta: float) -> float:
    """dp-accounting's ε(δ) of a PLD, computed with the lower masses in log space.

    dp-accounting's ``_get_epsilon_for_delta`` sums ``p·exp(−loss)`` in floats; once a
    loss exceeds ~745 the terms underflow to 0 and it returns the loss itself, which
    is the top of the bin, not the ε at δ (1,000 × randomized response at ε = 700 read
    699999.9999994527 against the true 699999.99999). Here the same scan from the top
    loss down keeps ``log Σ p·exp(−loss)`` (``np.logaddexp.accumulate``), so the answer
    is the same where nothing underflows and stays the hockey-stick ε where it would.
    The maximum over the PLD's pmfs, as dp-accounting takes it. Used only where
    dp-accounting's own answer exceeds :data:`_UNDERFLOW_LOSS` (below it the two agree).
    """
    worst = 0.0
    for pmf in _pmfs(pld):
        infinity = float(pmf._infinity_mass)
        if infinity > delta:
            return math.inf
        losses, probs = _pmf_losses(pmf), _pmf_probs(pmf)
        order = np.argsort(losses, kind="stable")[::-1]  # sparse pmfs are unordered
        keep = probs[order] > 0  # FFT's negative round-off: inside the δ allowance
        losses, probs = losses[order][keep], probs[order][keep]
        if losses.size == 0:
            continue
        upper = infinity + np.cumsum(probs)  # mass with loss >= losses[i]
        log_lower = np.logaddexp.accumulate(np.log(probs) - losses)
        # dp-accounting stops before bin i when the bins above it already give
        # ε = log((upper − δ)/lower) >= loss_i; the answer is that ε.
        with np.errstate(divide="ignore", invalid="ignore"):
            eps_above = np.log(np.maximum(upper - delta, 0.0)) - log_lower
        stop = np.nonzero((upper[:-1] > delta) & (eps_above[:-1] >= losses[1:]))[0]
        i = int(stop[0]) if stop.size else losses.size - 1
        if upper[i] <= delta or eps_above[i] <= 0.0:
            continue  # mass_upper <= mass_lower + δ: ε = 0 for this pmf
        worst = max(worst, float(eps_above[i]))
    return worst


def _loss_drift(pld) -> float:
    """Drift of dp-accounting's losses (``itertools.count`` adds the grid L times)."""
    worst = 0.0
    for pmf in _pmfs(pld):
        if getattr(pmf, "_probs", None) is not None:  # dense: monotone, ends are extreme
            size, lower, grid = len(pmf._probs), pmf._lower_loss, pmf._discretization
            largest = max(abs(float(lower) * grid), abs(float(size - 1 + lower) * grid))
        else:
            losses = _pmf_losses(pmf)
            size = losses.size
            largest = float(np.abs(losses).max()) if size else 0.0
        if size:
            worst = max(worst, size * _UNIT_ROUNDOFF * largest)
    return 2.0 * worst


def _certified_epsilon(certified, target_delta: float) -> float:
    """Upper bound on ε(``target_delta``) from a pessimistic PLD and its certificate.

    With ε_a the PLD's own answer, the PLD is queried again at ``target_delta``
    minus the round-off and summation error above ε_a; the answer ε_b >= ε_a, and
    both errors decrease in ε, so round-off cannot have lowered ε_b. ``inf`` when
    the error swamps the query, so that another route answers.

    Both queries are dp-accounting's ``get_epsilon_for_delta``, answered exactly by
    one :class:`~fedpriv.privacy.accounting.pld_scan.PldScan` (one vectorized walk
    per pmf for both δ; issue 23).
    """
    pld = certified[0]
    scan = PldScan(pld)
    first = float(scan.epsilon(target_delta))
    if not math.isfinite(first):
        return math.inf
    query = target_delta - _roundoff_at(certified, first) - _summation_slack(pld, first)
    if query <= 0.0:
        return math.inf
    epsilon = float(scan.epsilon(query))
    return epsilon + _loss_drift(pld) if math.isfinite(epsilon) else math.inf


def _certified_delta(certified, target_epsilon: float) -> float:
    """Upper bound on δ(``target_epsilon``) from a pessimistic PLD and its certificate.

    δ of the computed pmf is summed exactly (``math.fsum``), then the round-off
    certificate is added; never below the smallest positive double.
    """
    pld = certified[0]
    worst = 0.0
    for pmf in _pmfs(pld):
        losses = _pmf_losses(pmf)
        probs = _pmf_probs(pmf)
        above = losses > target_epsilon
        terms = probs[above] * -np.expm1(target_epsilon - losses[above])
        worst = max(worst, pmf._infinity_mass + math.fsum(terms))
    error = _roundoff_at(certified, target_epsilon)
    return min(1.0, max(math.ulp(0.0), worst + error * (1.0 + 1e-9)))


# ----------------------------------------------------------------------- public routes
def compose_routes(
    cell: Cell,
    target_delta: float,
    *,
    pld_discretization: float = 1e-4,
    orders: Sequence[float] = DEFAULT_ORDERS,
) -> dict[str, float]:
    """ε at ``target_delta`` of one cell by every route of :data:`ROUTES`.

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts (>= 1). Repeated events are
        merged and :class:`~fedpriv.privacy.accounting.events.SelfComposed` is expanded.
    target_delta : float
        In [0, 1).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    orders : sequence of float
        RDP orders, all > 1.

    Returns
    -------
    dict of str to float
        One ε per route name, ``inf`` where the route does not apply. Every finite
        value is capped by ``"basic"``: basic composition holds for any ledger, so a
        route that is looser on this cell falls back to it. An empty cell gives 0.

    Raises
    ------
    ValueError
        If ``target_delta`` is outside [0, 1), a count is < 1, or a parameter is bad.
    UnsupportedEventError
        If an event type has no handlers.

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> compose_routes([(events.LaplaceTree(scale=4.0, horizon=16), 1)], 0.0)["pure"]
    1.25
    """
    target_delta = check_delta("target_delta", target_delta)
    discretization = check_positive("pld_discretization", pld_discretization)
    orders = _check_orders(orders)
    items = _normalize(cell)
    values = dict(zip(ROUTES, _routes(items, target_delta, discretization, orders)))
    # The pure route on the events as declared (a tree's depth * Δ / b in one division,
    # not depth additions of Δ / b), so that calibrated trees give exactly ε.
    declared = _declared_pure(cell)
    if math.isfinite(declared):  # a pure cell: basic composition is the same sum
        values["pure"] = values["basic"] = declared
        values = {
            name: min(value, declared) if math.isfinite(value) else value
            for name, value in values.items()
        }
    return values


def _declared_pure(cell: Cell) -> float:
    """Pure ε of a cell on its declared events: SelfComposed unwrapped and identical
    events merged, but trees kept whole (``depth * Δ / b`` in one division)."""
    counts: dict[Any, int] = {}
    stack = [(event, int(count)) for event, count in cell]
    while stack:
        event, count = stack.pop()
        if type(event) is SelfComposed:
            stack.append((event.event, count * event.count))
        elif type(event) is Composed:
            stack.extend((part, count) for part in event.events)
        else:
            counts[event] = counts.get(event, 0) + count
    total = _exact_pure(tuple(counts.items()))
    # Σ count·ε_i rounded up, never below the exact sum
    return math.inf if total is None else _round_up(total)


#: Largest number of privacy-loss grid points per PLD before the grid is coarsened.
_PLD_POINTS = 2_000_000
#: Standard deviations of the composed loss the grid must span on each side.
_PLD_SPREAD = 12.0


def _loss_span(items, merged: bool = False) -> tuple[float, float]:
    """Widths of privacy loss the composed PLD of a cell and its widest single
    release occupy (generous estimates).

    Per release: a pure (or (ε, δ)) event's loss lies in [-ε, ε] with mean at most
    ``ε tanh(ε/2)`` and variance at most ε² (randomized response is extremal,
    Kairouz, Oh & Viswanath 2015, Thm. 3.3); a μ-GDP event's loss is N(μ²/2, μ²)
    (Dong, Roth & Su 2019, Cor. 2.13); a ρ-zCDP event has mean <= ρ (its KL) and is
    treated as Gaussian of μ² = 2ρ. The composed loss is then within
    ``mean ± 12 sd`` (plus one release's largest loss) except for far less mass than
    dp-accounting's truncation keeps; the span is capped by the sum of the ε_i.

    With ``merged``, the widest single PLD is that of the Gaussian-family events
    merged into one Gaussian of μ = √Σ count·μ_i² (the one :func:`_cell_pld`
    builds), not of one of them (issue 23: 10⁵ mixed releases built a Gaussian
    PLD of 4·10⁵ points, one by one in dp-accounting's Python loop).
    """
    span, mean, variance, largest, merged_mu2 = 0.0, 0.0, 0.0, 0.0, 0.0
    for event, count in items:
        epsilon = _pure(event)
        if not math.isfinite(epsilon):
            epsilon, _ = _approx(event, 0.0)
        if math.isfinite(epsilon):
            span += count * epsilon
            mean += count * epsilon * math.tanh(epsilon / 2.0)
            variance += count * epsilon * epsilon
            largest = max(largest, epsilon)
            continue
        span = math.inf
        mu = _gdp(event)
        if mu is None and (rho := _zcdp(event)) is not None:
            mu = math.sqrt(2.0 * rho)
        if mu is None:
            continue  # no estimate: the base discretization decides
        mean += count * mu * mu / 2.0
        variance += count * mu * mu
        largest = max(largest, mu * mu / 2.0 + _PLD_SPREAD * mu)
        if merged and _gdp(event) is not None:
            merged_mu2 += count * mu * mu
    if merged_mu2 > 0.0:
        mu = math.sqrt(merged_mu2)
        largest = max(largest, mu * mu / 2.0 + _PLD_SPREAD * mu)
    spread = 2.0 * (mean + _PLD_SPREAD * math.sqrt(variance) + largest)
    return min(2.0 * span, spread), 2.0 * largest


#: Largest number of grid points of one release's PLD (dp-accounting builds it in
#: Python: about 10 s per million points).
_SINGLE_POINTS = 100_000


def _pld_grid(items, discretization: float, merged: bool = False) -> float:
    """The PLD grid for a cell: ``discretization``, coarsened so that the composed
    PLD has at most about :data:`_PLD_POINTS` bins and one release's PLD at most
    :data:`_SINGLE_POINTS` (bounded time and memory for every cell, mixed ones
    included). A coarser pessimistic PLD is still an upper bound and a coarser
    optimistic one still a lower bound.

    ``merged`` (the upper routes) counts the merged Gaussian of the cell as one
    release (:func:`_loss_span`). The lower bracket keeps the finer grid: dp-accounting's
    optimistic Laplace PLD on a coarse grid reads far below the truth (4.3 against
    19.39 for 5·10⁴ Laplace(100) + 5·10⁴ Gaussian(100) at δ = 1e-6), while the
    pessimistic one moved by 5e-5 relative (19.4037 against 19.4027 at the finer
    grid; ``benchmarks/bench_scale_accounting.py`` prints it beside dp-accounting's)."""
    composed, single = _loss_span(items, merged)
    return max(discretization, composed / _PLD_POINTS, single / _SINGLE_POINTS)


@functools.lru_cache(maxsize=4096)
def _routes(items, target_delta: float, discretization: float, orders) -> tuple:
    """Route values of a normalized cell, in :data:`ROUTES` order (cached)."""
    if not items:
        return (0.0,) * len(ROUTES)
    basic = _basic(items, target_delta)
    exact = _exact_pure(items)
    values = {"pure": math.inf if exact is None else _round_up(exact)}
    values["advanced"] = _advanced(items, target_delta)
    values["optimal"] = _optimal(items, target_delta)
    values["rdp"] = values["zcdp"] = values["gdp"] = values["pld"] = math.inf
    if target_delta > 0:
        values["rdp"] = _rdp_route(items, orders, target_delta)
        if (rho := _zcdp_rho(items)) is not None:
            values["zcdp"] = zcdp_epsilon(rho, target_delta)
        if (mu := _gdp_mu(items)) is not None:
            values["gdp"] = gaussian_dp_epsilon(mu, target_delta)
    # At delta = 0 a PLD is finite only for pure cells, where the exact "pure" route is
    # never worse, so the (costly) PLD is not built. Elsewhere the grid is coarsened for
    # cells of large epsilon so that the PLD has at most ~_PLD_POINTS support points;
    # a coarser pessimistic PLD is still an upper bound.
    # When every event is exactly Gaussian the GDP route is exact and a pessimistic
    # PLD can only approach it from above, so the PLD (seconds for a large mu at the
    # default grid) is not built and the route reports the exact GDP value.
    if target_delta > 0 and math.isfinite(values["gdp"]):
        values["pld"] = values["gdp"]
    elif target_delta > 0:
        certified = _cell_pld(items, _pld_grid(items, discretization, True), True, False)
        if certified is not None:  # inf where round-off swamps target_delta
            values["pld"] = _certified_epsilon(certified, target_delta)
    values = {
        name: min(value, basic) if math.isfinite(value) else math.inf
        for name, value in values.items()
    }
    values["basic"] = basic
    return tuple(max(0.0, values[name]) for name in ROUTES)


def pld_lower_bound(cell: Cell, target_delta: float, *, pld_discretization: float = 1e-4) -> float:
    """Optimistic-PLD ε at ``target_delta``: a LOWER bracket, never a guarantee.

    Every route of :func:`compose_routes` is >= this value (up to float rounding).
    On a cell of exactly Gaussian events (at ``target_delta > 0``) it is the exact
    GDP value, which the optimistic PLD approaches from below. Events without a PLD
    are dropped, which can only lower it (dropping outputs is
    post-processing); a :class:`~fedpriv.privacy.accounting.events.NonPrivate` release makes it ``inf``.

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts, as for :func:`compose_routes`.
    target_delta : float
        In [0, 1).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.

    Returns
    -------
    float
        ε in nats, >= 0 (``inf`` with a ``NonPrivate`` release).

    Raises
    ------
    Same as :func:`compose_routes`.
    """
    target_delta = check_delta("target_delta", target_delta)
    discretization = check_positive("pld_discretization", pld_discretization)
    return _lower(_normalize(cell), target_delta, discretization)


#: Largest merged Gaussian μ for which dp-accounting's optimistic PLD is used in the lower
#: bracket: checked below the exact Gaussian-DP ε up to μ = 30 at δ ∈ {1e-3, 1e-6, 1e-10}
#: on the grids :func:`_pld_grid` picks, and found above it at μ = 50 (issue 19).
_OPTIMISTIC_GAUSSIAN_MU_MAX = 20.0


@functools.lru_cache(maxsize=4096)
def _lower(items, target_delta: float, discretization: float) -> float:
    """Optimistic-PLD ε of a normalized cell (cached)."""
    if any(type(event) is NonPrivate for event, _ in items):
        return math.inf
    if target_delta > 0 and (mu := _gdp_mu(items)) is not None:
        return gaussian_dp_epsilon(mu, target_delta)  # exact, hence also a lower bound
    gaussian = tuple((e, c) for e, c in items if _gdp(e) is not None)
    if gaussian and _gdp_mu(gaussian) > _OPTIMISTIC_GAUSSIAN_MU_MAX:
        # dp-accounting's optimistic Gaussian PLD reads ~0.94 ABOVE the exact value at
        # μ = 50 (and 0.98 at μ = 100), so it is no lower bound there. Dropping outputs is
        # post-processing, so the exact ε of the Gaussian part and the lower bracket of
        # the rest are each a lower bound on the whole cell; the larger is returned.
        if target_delta == 0:
            return math.inf  # a Gaussian release is not pure: ε(0) = ∞ exactly
        rest = tuple((e, c) for e, c in items if _gdp(e) is None)
        exact = gaussian_dp_epsilon(_gdp_mu(gaussian), target_delta)
        return max(exact, _lower(rest, target_delta, discretization) if rest else 0.0)
    certified = _cell_pld(items, _pld_grid(items, discretization), False, True)
    if certified is None:
        return 0.0
    pld, _, calls = certified
    # dp-accounting's dense self-composition sends its truncated tail (<= 1e-15 per
    # operation) to +inf even for optimistic PMFs; allowing that much extra δ keeps
    # the value a lower bound (otherwise a pure cell reads inf at δ = 0). Round-off
    # and dp-accounting's summation error are allowed too, first everywhere (ε_a),
    # then above ε_a minus one grid step, which covers every ε' below the final
    # answer ε_L >= ε_a; the drift of its losses is taken off. Round-off can then
    # only lower the value (issue 19, pattern 4).
    allowance = _TRUNCATION_ALLOWANCE * (1 + calls)
    scan = PldScan(pld)
    try:
        first = _optimistic_epsilon(
            pld,
            target_delta
            + allowance
            + _roundoff_at(certified, -math.inf)
            + _summation_slack(pld, -math.inf),
            scan,
        )
        if not math.isfinite(first):
            return first
        below = first - max(pmf._discretization for pmf in _pmfs(pld))
        epsilon = _optimistic_epsilon(
            pld,
            target_delta
            + allowance
            + _roundoff_at(certified, below)
            + _summation_slack(pld, below),
            scan,
        )
    except OverflowError:  # losses below -709 reached: no finite lower bound read
        return 0.0
    return max(0.0, min(epsilon, first) - _loss_drift(pld))


def compose_delta(
    cell: Cell,
    target_epsilon: float,
    *,
    pld_discretization: float = 1e-4,
    orders: Sequence[float] = DEFAULT_ORDERS,
) -> float:
    """Smallest valid δ at ``target_epsilon`` (min over the δ-capable routes).

    The routes are pure, optimal, gdp, zcdp, rdp and pld (each a valid bound).

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts, as for :func:`compose_routes`.
    target_epsilon : float
        >= 0 (``inf`` gives 0).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    orders : sequence of float
        RDP orders, all > 1.

    Returns
    -------
    float
        In [0, 1]; 1 means no route gives a guarantee at ``target_epsilon``.

    Raises
    ------
    ValueError
        If ``target_epsilon`` is NaN or negative, or another argument is bad.

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> compose_delta([(events.Laplace(scale=8.0), 8)], 1.0)
    0.0
    """
    target_epsilon = check_real("target_epsilon", target_epsilon)
    if target_epsilon < 0:
        raise ValueError(f"`target_epsilon` must be >= 0, got {target_epsilon!r}.")
    discretization = check_positive("pld_discretization", pld_discretization)
    orders = _check_orders(orders)
    items = _normalize(cell)
    return _delta(items, target_epsilon, discretization, orders)


@functools.lru_cache(maxsize=4096)
def _delta(items, target_epsilon: float, discretization: float, orders) -> float:
    """Smallest δ of a normalized cell at ``target_epsilon`` (cached)."""
    if not items or math.isinf(target_epsilon):
        return 0.0
    exact = _exact_pure(items)
    if exact is not None and at_most(*exact, target_epsilon):
        return 0.0  # proven: ε >= Σ count·ε_i exactly (the releases' top losses)
    deltas = [1.0]
    if exact is not None:
        deltas.append(PureDP(_round_up(exact)).get_delta(target_epsilon))
    if (parts := _optimal_parts(items)) is not None:
        deltas.append(_optimal_delta(parts, target_epsilon))
    if (mu := _gdp_mu(items)) is not None:  # exact: no other route can beat it
        return _unproven_delta([*deltas, gaussian_dp_delta(mu, target_epsilon)])
    if (rho := _zcdp_rho(items)) is not None:
        deltas.append(zcdp_delta(rho, target_epsilon))
    if (rdp := _rdp_total(items, orders)) is not None:
        deltas.append(rdp_delta(rdp[0], rdp[1], target_epsilon))
    certified = _cell_pld(items, _pld_grid(items, discretization, True), True, False)
    if certified is not None:
        deltas.append(_certified_delta(certified, target_epsilon))
    return _unproven_delta(deltas)


def _unproven_delta(deltas: list[float]) -> float:
    """Smallest δ of the routes where none proved δ = 0: in [5e-324, 1].

    A route's 0 below the pure sum is float rounding (a gap of one ulp, an
    underflow), never a proof, so it is raised to the smallest positive double.
    """
    return min(1.0, max(math.ulp(0.0), min(deltas)))


def _exact_terms(event: Any, count: int) -> tuple[int, float, float] | None:
    """``(multiplier, a, b)`` with pure ε of ``count`` releases of ``event`` equal to
    ``multiplier · a / b`` exactly, or None if the event is not pure.

    Laplace-type events give ``count · depth · Δ / b`` from their float parameters
    exactly (11 releases of Laplace(11) sum to exactly 1, not 11·fl(1/11) > 1);
    events that declare ε (randomized response) give that float exactly; any other
    event its handler's float.
    """
    kind = type(event)
    if kind in (Laplace, DiscreteLaplace):
        return count, event.l1_sensitivity, event.scale
    if kind is LaplaceTree:
        return count * event.depth, event.l1_sensitivity, event.scale
    epsilon = _pure(event)
    return (count, epsilon, 1.0) if math.isfinite(epsilon) else None


def _exact_pure(items) -> tuple[int, int] | None:
    """Σ count·ε_i exactly (:func:`_exact_terms`), as an unreduced ``(numerator,
    denominator)`` (:func:`fedpriv.privacy.accounting.exact_sum.ratio_sum`: no gcd, equal scales
    grouped; the same rational as a ``Fraction`` sum), or None if an event is not pure."""
    terms = []
    for event, count in items:
        term = _exact_terms(event, count)
        if term is None:
            return None
        terms.append(term)
    return ratio_sum(terms)


def _round_up(value: Fraction | tuple[int, int]) -> float:
    """The smallest double >= ``value`` (a Fraction or a ``(numerator, denominator)``)."""
    if isinstance(value, Fraction):
        value = (value.numerator, value.denominator)
    return round_up(*value)


_track_caches(_cell_pld, _kov_terms, _routes, _lower, _delta)
del _composed
