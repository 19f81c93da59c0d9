"""The RDP route of a cell: Σ RDP curves, converted to ε at a target δ.

The curves add under composition (Mironov 2017, Prop. 1) and the sum is converted by
Balle et al. 2020 (:func:`fedpriv.privacy.accounting.guarantees.rdp_epsilon`).
Poisson-subsampled Gaussian curves, a Python series per order in dp-accounting, are
evaluated lazily, only at the orders that can hold the minimum (issue 23).
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.privacy.accounting.guarantees import rdp_epsilon
from fedpriv.privacy.accounting.handlers import event_rdp_curve
from fedpriv.privacy.accounting.sampling import lazy_sampled_rdp

__all__ = ["rdp_route_epsilon", "rdp_total"]


def rdp_total(items, orders: tuple[float, ...]):
    """Σ count·RDP curve of a normalized cell, on the orders where it is finite.

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    orders : tuple of float
        RDP orders, each > 1 (:func:`~fedpriv.privacy.accounting.cells.check_orders`).

    Returns
    -------
    tuple of (ndarray, ndarray) or None
        ``(orders, curve)``; None if an event has no curve or the sum is nowhere finite.
    """
    total = np.zeros(len(orders))
    for event, count in items:
        curve = event_rdp_curve(event, orders)
        if curve is None:
            return None
        total = total + count * curve
    finite = np.isfinite(total)
    if not np.any(finite):
        return None
    return np.asarray(orders)[finite], total[finite]


#: Relative error allowed on a computed RDP value against the exact, monotone one
#: when :func:`rdp_route_epsilon` skips orders (dp-accounting's sums and series are accurate
#: to ~1e-13 relative); the skipped orders' ε must exceed the best by this much.
_RDP_SKIP_SLACK = 1e-9


def rdp_route_epsilon(items, orders: tuple[float, ...], target_delta: float) -> float:
    """ε of the RDP route at ``target_delta`` > 0: ``rdp_epsilon`` of
    :func:`rdp_total`, bit for bit, with the costly curves evaluated only where
    they can give the minimum (issue 23).

    The Poisson-subsampled Gaussian's curve (dp-accounting's ``_compute_log_a``, a
    Python series per order, ~0.1 s for :data:`DEFAULT_ORDERS`) is a Rényi
    divergence, nondecreasing in the order (:func:`~fedpriv.privacy.accounting.
    sampled_rdp.sampled_gaussian_rdp_at`). Its orders are evaluated one by one, the
    integers first (cheap in dp-accounting), then the rest, each in increasing order;
    an order ``α_j`` is skipped when a lower bound on its ε,

        ``Σ_cheap count·R(α_j) + Σ_costly count·R(α_i)·(1 - s) + log(1 - 1/α_j)
        - (log δ + log α_j) / (α_j - 1)``  (``α_i <= α_j`` the largest evaluated),

    minus a rounding slack, exceeds the smallest ε of the evaluated orders, and
    the curve there cannot be small enough for the KL exit (ε = 0) of
    :func:`~fedpriv.privacy.accounting.conversions.rdp_epsilon`. A skipped order
    then never holds the minimum, so the minimum over the evaluated orders is the
    minimum over all (``s`` = :data:`_RDP_SKIP_SLACK`). Other events' curves are
    taken at every order and summed in the same order as :func:`rdp_total`.
    Returns ``inf`` where that gives None.

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).
    orders : tuple of float
        RDP orders, each > 1 (:func:`~fedpriv.privacy.accounting.cells.check_orders`).
    target_delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε in nats, or ``inf``.
    """
    lazy = [lazy_sampled_rdp(event) for event, _ in items]
    if not any(lazy):
        rdp = rdp_total(items, orders)
        return math.inf if rdp is None else rdp_epsilon(rdp[0], rdp[1], target_delta)
    grid = np.asarray(orders, dtype=np.float64)
    size = grid.size
    curves = []  # per item: a full curve (cheap) or a float array filled lazily
    cheap = np.zeros(size)
    for (event, count), value in zip(items, lazy):
        if value is None:
            curve = event_rdp_curve(event, orders)
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
    # The route's value on the evaluated orders, summed exactly as rdp_total sums.
    keep = np.flatnonzero(evaluated)
    total = np.zeros(keep.size)
    for (_, count), curve in zip(items, curves):
        total = total + count * curve[keep]
    finite = np.isfinite(total)
    if not np.any(finite):
        return math.inf
    return rdp_epsilon(grid[keep][finite], total[finite], target_delta)
