"""The PLD route of a cell: its composed privacy-loss distribution, grid and lower bracket.

:func:`cell_pld` composes a normalized cell's PLDs with dp-accounting (Gaussian-family
events merged exactly into one Gaussian) and attaches the round-off certificate of
:mod:`fedpriv.privacy.accounting.pld_certificate`; :func:`pld_grid` picks the grid
that bounds its size; :func:`pld_lower_epsilon` reads the optimistic PLD as a lower
bracket (:func:`fedpriv.privacy.accounting.routes.pld_lower_bound`).
"""

from __future__ import annotations

import functools
import math

from fedpriv.privacy.accounting.cells import cell_gdp_mu
from fedpriv.privacy.accounting.events import NonPrivate
from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
from fedpriv.privacy.accounting.handlers import (
    event_approx_dp,
    event_gdp_mu,
    event_pld,
    event_pure_epsilon,
    event_zcdp_rho,
    gaussian_pld,
    self_compose_calls,
    track_caches,
)
from fedpriv.privacy.accounting.pld_certificate import (
    loss_drift,
    optimistic_epsilon,
    pld_roundoff,
    pmfs,
    roundoff_at,
    summation_slack,
)
from fedpriv.privacy.accounting.pld_scan import PldScan

__all__ = [
    "PLD_POINTS",
    "PLD_SPREAD",
    "SINGLE_POINTS",
    "TRUNCATION_ALLOWANCE",
    "cell_pld",
    "pld_grid",
    "pld_lower_epsilon",
]

#: δ allowed per PLD operation for tail mass dp-accounting truncates (lower bound).
TRUNCATION_ALLOWANCE = 1e-14


@functools.lru_cache(maxsize=32)
def cell_pld(items, discretization: float, pessimistic: bool, partial: bool):
    """Composed PLD of a normalized cell and its round-off certificate, or None.

    Gaussian-family events are merged exactly. With ``partial`` events without a
    PLD are dropped (a lower bound); otherwise a missing PLD makes the result None.
    Returns ``(pld, certificate, calls)``: ``calls`` counts dp-accounting
    compositions (each may truncate <= 1e-15 of tail mass) and ``certificate``
    (:func:`pld_roundoff`) bounds the PLD's round-off (:func:`roundoff_at`).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    pessimistic : bool
        True for an upper bound (pessimistic PLD), False for a lower one.
    partial : bool
        Drop events without a PLD (a lower bound) instead of returning None.

    Returns
    -------
    tuple or None
        ``(pld, certificate, calls)``.
    """
    mus, composed, operations, calls = [], None, 0, 0
    for event, count in items:
        mu = event_gdp_mu(event)
        if mu is not None:
            mus.append(count * mu**2)
            continue
        part = event_pld(event, count, discretization, pessimistic)
        if part is None:
            if partial:
                continue
            return None
        operations += count + (composed is not None)
        calls += self_compose_calls(count) + 1
        composed = part if composed is None else composed.compose(part)
    if mus:
        part = gaussian_pld(math.sqrt(math.fsum(mus)), discretization, pessimistic)
        operations += 1 + (composed is not None)
        calls += 1
        composed = part if composed is None else composed.compose(part)
    if composed is None:
        return None
    return composed, pld_roundoff(composed, operations), calls


#: Largest number of privacy-loss grid points per PLD before the grid is coarsened.
PLD_POINTS = 2_000_000
#: Standard deviations of the composed loss the grid must span on each side.
PLD_SPREAD = 12.0


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
    merged into one Gaussian of μ = √Σ count·μ_i² (the one :func:`cell_pld`
    builds), not of one of them (issue 23: 10⁵ mixed releases built a Gaussian
    PLD of 4·10⁵ points, one by one in dp-accounting's Python loop).
    """
    span, mean, variance, largest, merged_mu2 = 0.0, 0.0, 0.0, 0.0, 0.0
    for event, count in items:
        epsilon = event_pure_epsilon(event)
        if not math.isfinite(epsilon):
            epsilon, _ = event_approx_dp(event, 0.0)
        if math.isfinite(epsilon):
            span += count * epsilon
            mean += count * epsilon * math.tanh(epsilon / 2.0)
            variance += count * epsilon * epsilon
            largest = max(largest, epsilon)
            continue
        span = math.inf
        mu = event_gdp_mu(event)
        if mu is None and (rho := event_zcdp_rho(event)) is not None:
            mu = math.sqrt(2.0 * rho)
        if mu is None:
            continue  # no estimate: the base discretization decides
        mean += count * mu * mu / 2.0
        variance += count * mu * mu
        largest = max(largest, mu * mu / 2.0 + PLD_SPREAD * mu)
        if merged and event_gdp_mu(event) is not None:
            merged_mu2 += count * mu * mu
    if merged_mu2 > 0.0:
        mu = math.sqrt(merged_mu2)
        largest = max(largest, mu * mu / 2.0 + PLD_SPREAD * mu)
    spread = 2.0 * (mean + PLD_SPREAD * math.sqrt(variance) + largest)
    return min(2.0 * span, spread), 2.0 * largest


#: Largest number of grid points of one release's PLD (dp-accounting builds it in
#: Python: about 10 s per million points).
SINGLE_POINTS = 100_000


def pld_grid(items, discretization: float, merged: bool = False) -> float:
    """The PLD grid for a cell: ``discretization``, coarsened so that the composed
    PLD has at most about :data:`PLD_POINTS` bins and one release's PLD at most
    :data:`SINGLE_POINTS` (bounded time and memory for every cell, mixed ones
    included). A coarser pessimistic PLD is still an upper bound and a coarser
    optimistic one still a lower bound.

    ``merged`` (the upper routes) counts the merged Gaussian of the cell as one
    release (:func:`_loss_span`). The lower bracket keeps the finer grid: dp-accounting's
    optimistic Laplace PLD on a coarse grid reads far below the truth (4.3 against
    19.39 for 5·10⁴ Laplace(100) + 5·10⁴ Gaussian(100) at δ = 1e-6), while the
    pessimistic one moved by 5e-5 relative (19.4037 against 19.4027 at the finer
    grid; ``benchmarks/bench_scale_accounting.py`` prints it beside dp-accounting's).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    merged : bool, default False
        Count the merged Gaussian of the cell as one release.

    Returns
    -------
    float
        The grid, >= ``discretization``.
    """
    composed, single = _loss_span(items, merged)
    return max(discretization, composed / PLD_POINTS, single / SINGLE_POINTS)


#: Largest merged Gaussian μ for which dp-accounting's optimistic PLD is used in the lower
#: bracket: checked below the exact Gaussian-DP ε up to μ = 30 at δ ∈ {1e-3, 1e-6, 1e-10}
#: on the grids :func:`pld_grid` picks, and found above it at μ = 50 (issue 19).
_OPTIMISTIC_GAUSSIAN_MU_MAX = 20.0


@functools.lru_cache(maxsize=4096)
def pld_lower_epsilon(items, target_delta: float, discretization: float) -> float:
    """Optimistic-PLD ε of a normalized cell (cached).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    target_delta : float
        δ at which ε is read, in [0, 1).
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.

    Returns
    -------
    float
        ε in nats, >= 0 (``inf`` with a ``NonPrivate`` release).
    """
    if any(type(event) is NonPrivate for event, _ in items):
        return math.inf
    if target_delta > 0 and (mu := cell_gdp_mu(items)) is not None:
        return gaussian_dp_epsilon(mu, target_delta)  # exact, hence also a lower bound
    gaussian = tuple((e, c) for e, c in items if event_gdp_mu(e) is not None)
    if gaussian and cell_gdp_mu(gaussian) > _OPTIMISTIC_GAUSSIAN_MU_MAX:
        # dp-accounting's optimistic Gaussian PLD reads ~0.94 ABOVE the exact value at
        # μ = 50 (and 0.98 at μ = 100), so it is no lower bound there. Dropping outputs is
        # post-processing, so the exact ε of the Gaussian part and the lower bracket of
        # the rest are each a lower bound on the whole cell; the larger is returned.
        if target_delta == 0:
            return math.inf  # a Gaussian release is not pure: ε(0) = ∞ exactly
        rest = tuple((e, c) for e, c in items if event_gdp_mu(e) is None)
        exact = gaussian_dp_epsilon(cell_gdp_mu(gaussian), target_delta)
        return max(exact, pld_lower_epsilon(rest, target_delta, discretization) if rest else 0.0)
    certified = cell_pld(items, pld_grid(items, discretization), False, True)
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
    allowance = TRUNCATION_ALLOWANCE * (1 + calls)
    scan = PldScan(pld)
    try:
        first = optimistic_epsilon(
            pld,
            target_delta
            + allowance
            + roundoff_at(certified, -math.inf)
            + summation_slack(pld, -math.inf),
            scan,
        )
        if not math.isfinite(first):
            return first
        below = first - max(pmf._discretization for pmf in pmfs(pld))
        epsilon = optimistic_epsilon(
            pld,
            target_delta + allowance + roundoff_at(certified, below) + summation_slack(pld, below),
            scan,
        )
    except OverflowError:  # losses below -709 reached: no finite lower bound read
        return 0.0
    return max(0.0, min(epsilon, first) - loss_drift(pld))


track_caches(cell_pld, pld_lower_epsilon)
