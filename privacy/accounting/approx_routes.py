"""The (ε, δ) routes of a cell: basic, advanced and optimal composition.

``basic``     Σ count·ε_i(δ_i) with Σ count·δ_i <= target: valid for *any* ledger.
``advanced``  Dwork, Rothblum & Vadhan 2010, Thm. III.3, heterogeneous form
              Σ ε_i (e^{ε_i} - 1) + √(2 ln(1/δ') Σ ε_i²), with δ' + Σ δ_i = target.
``optimal``   Kairouz, Oh & Viswanath 2015, Thm. 3.3: exact k-fold composition of
              (ε, δ)-DP mechanisms, computed in log space (k = 10⁴ works;
              dp-accounting's ``advanced_composition`` overflows at k = 1000).

Each takes a normalized cell (:func:`fedpriv.privacy.accounting.cells.normalize_cell`)
and prices its events through their ``approx`` handlers
(:func:`fedpriv.privacy.accounting.handlers.event_approx_dp`);
:func:`fedpriv.privacy.accounting.routes.compose_routes` reports them.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from fedpriv.privacy.accounting.cells import exact_pure_terms, round_up_ratio
from fedpriv.privacy.accounting.conversions import delta_from_log
from fedpriv.privacy.accounting.exact_sum import UNIT_ROUNDOFF, ratio_sum
from fedpriv.privacy.accounting.handlers import event_approx_dp, event_pure_epsilon, track_caches
from scipy import special

__all__ = ["advanced_epsilon", "basic_epsilon", "optimal_delta", "optimal_epsilon", "optimal_parts"]

#: Fractions of the free δ given to δ' by the advanced route (the best one is kept).
_ADVANCED_SPLITS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


def _per_copy(items, target_delta: float, delta_prime_fraction: float):
    """``([(ε_i, count)], δ')`` for one δ split, or None if the δ's do not fit.

    Events that are (ε_i, δ_i)-DP on their own (pure, opaque) keep their δ_i; the
    rest of ``target_delta`` goes to δ' (a ``delta_prime_fraction`` of it, all of it
    if no event needs a share) and to equal per-copy shares of the other events.
    """
    own = [event_approx_dp(event, 0.0) for event, _ in items]
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
                pair = event_approx_dp(event, max(share, 0.0))
                spent += count * Fraction(pair[1])
            pairs.append((pair[0], count))
        if spent <= target:
            return pairs, delta_prime
    return None


def basic_epsilon(items, target_delta: float) -> float:
    """ε of the basic route: Σ count·ε_i(δ_i) with Σ count·δ_i <= ``target_delta``.

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    target_delta : float
        δ at which ε is read, in [0, 1).

    Returns
    -------
    float
        ε in nats; ``inf`` if the declared δ_i alone exceed ``target_delta``.
    """
    found = _per_copy(items, target_delta, 0.0)
    if found is None:
        return math.inf
    return math.fsum(count * epsilon for epsilon, count in found[0])


def advanced_epsilon(items, target_delta: float) -> float:
    """ε of the advanced route (Dwork, Rothblum & Vadhan 2010, Thm. III.3, heterogeneous form).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    target_delta : float
        δ at which ε is read, in [0, 1).

    Returns
    -------
    float
        The smallest ε over the δ' splits tried, in nats; ``inf`` if none fits.
    """
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
    gap = gap + 4.0 * UNIT_ROUNDOFF * (np.abs(k - 2 * j) * epsilon + abs(target_epsilon))
    active = int(np.count_nonzero(gap > 0))  # gap decreases in j: a prefix
    if active == 0:
        return -math.inf
    terms = base[:active] + np.log(-np.expm1(-gap[:active]))
    top = float(terms.max())
    total = top + math.log(float(np.sum(np.exp(terms - top))))
    scale = float(special.gammaln(k + 1.0)) + 2.0 * k * (epsilon + 1.0)
    return total + 8.0 * UNIT_ROUNDOFF * (scale + active)


def optimal_parts(items) -> tuple[float, int, float] | None:
    """(max ε, total count, log Π(1-δ_i)^count) if every event is (ε, δ)-described.

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).

    Returns
    -------
    tuple of (float, int, float) or None
        ``(max ε_i, k, log Π(1 - δ_i)^count)``; None if an event has no (ε, δ) description.
    """
    epsilons, k, log_keep = [], 0, 0.0
    for event, count in items:
        epsilon, delta = event_approx_dp(event, 0.0)
        if not math.isfinite(epsilon):  # needs a δ share, but may still be pure
            epsilon, delta = event_pure_epsilon(event), 0.0
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


def optimal_delta(parts: tuple[float, int, float], target_epsilon: float) -> float:
    """δ(``target_epsilon``) of the optimal route, rounded up (:func:`~fedpriv.privacy.accounting.conversions.delta_from_log`).

    Parameters
    ----------
    parts : tuple of (float, int, float)
        As :func:`optimal_parts` returns.
    target_epsilon : float
        ε (nats) at which δ is read, >= 0.

    Returns
    -------
    float
        δ in [0, 1].
    """
    return delta_from_log(_optimal_log_delta(parts, target_epsilon))


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
        epsilon, delta = event_approx_dp(event, 0.0)
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
        epsilon, delta = event_approx_dp(event, 0.0)
        if math.isfinite(epsilon) and delta > 0.0:  # a declared (ε, δ): exact floats
            terms.append((count, epsilon, 1.0))
            keep *= (1 - Fraction(delta)) ** count
            continue
        term = exact_pure_terms(event, count)  # pure: its ε summed exactly
        if term is None:
            return math.inf
        terms.append(term)
    if 1 - keep > Fraction(target_delta):
        return math.inf
    return round_up_ratio(ratio_sum(terms))


def optimal_epsilon(items, target_delta: float) -> float:
    """Smallest ε' with log δ(ε') <= log ``target_delta`` (bisection in log space).

    At ``target_delta = 0`` only ε' where the bound is exactly 0 is accepted, i.e.
    ``ε' >= k·max ε_i`` (and no event has a δ_i). Where the float evaluation cannot
    certify the target (the fixed δ rounds above it), the exact top end
    :func:`_exact_top` answers instead of ``inf``; it also caps the bisection (the
    sum of the ε_i, not ``k·max ε_i``, for a mix of ε_i).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    target_delta : float
        δ at which ε is read, in [0, 1).

    Returns
    -------
    float
        ε in nats, never below the exact k-fold composition's; ``inf`` if the route does not apply.
    """
    parts = optimal_parts(items)
    if parts is None:
        return math.inf
    epsilon, k, log_keep = parts
    if target_delta == 0.0:  # KOV: δ(ε') = 0 exactly iff ε' >= k ε and no δ_i
        return math.inf if log_keep < 0.0 else round_up_ratio(k * Fraction(epsilon))
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


track_caches(_kov_terms)
