"""Cells of a ledger: validation, merging, and the sums that are exact per cell.

A *cell* is the sequential composition of the releases that can touch one record: a
sequence of ``(event, count)`` pairs (the accountant builds cells; parallel composition
*across* cells is the accountant's job). :func:`normalize_cell` validates a cell and
merges it into distinct ``(event, count)`` pairs, expanding the structural events
(``SelfComposed``, ``Composed``, ``LaplaceTree``) into their parts (exact
equivalences); every route of :mod:`fedpriv.privacy.accounting.routes` works on that
normalized form. The quantities that compose by plain addition are here too: the pure
ε summed exactly (:func:`exact_pure_sum`, :mod:`fedpriv.privacy.accounting.exact_sum`),
ρ of zCDP (Bun & Steinke 2016, Lemma 2.3) and μ of Gaussian DP (Dong, Roth & Su 2019,
Cor. 3.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    Composed,
    DiscreteLaplace,
    Laplace,
    LaplaceTree,
    SelfComposed,
)
from fedpriv.privacy.accounting.exact_sum import ratio_sum, round_up
from fedpriv.privacy.accounting.handlers import (
    event_gdp_mu,
    event_pure_epsilon,
    event_zcdp_rho,
    handlers_for,
)
from fedpriv.privacy.checks import check_int_at_least

__all__ = [
    "Cell",
    "cell_gdp_mu",
    "cell_zcdp_rho",
    "check_orders",
    "exact_pure_sum",
    "exact_pure_terms",
    "normalize_cell",
    "round_up_ratio",
]

#: A cell as callers give it: ``(event, count)`` pairs, counts >= 1.
Cell = Sequence[tuple[Any, int]]


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


def normalize_cell(cell: Cell) -> tuple[tuple[Any, int], ...]:
    """Validate ``cell`` and merge it into distinct ``(event, count)`` pairs.

    Parameters
    ----------
    cell : sequence of (event, int)
        Sequentially composed releases with their counts (>= 1).

    Returns
    -------
    tuple of (event, int)
        Distinct events with their total counts, structural events expanded.

    Raises
    ------
    TypeError
        If ``cell`` is not a sequence of ``(event, count)`` pairs.
    ValueError
        If a count is < 1.
    UnsupportedEventError
        If an event type has no handlers.
    """
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


def check_orders(orders: Sequence[float]) -> tuple[float, ...]:
    """Return RDP orders as a sorted tuple of distinct floats > 1.

    Parameters
    ----------
    orders : sequence of float
        RDP orders.

    Returns
    -------
    tuple of float
        Sorted, distinct.

    Raises
    ------
    ValueError
        If ``orders`` is empty, not 1-D, or holds a value that is not finite and > 1.
    """
    grid = np.asarray(orders, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 1)):
        raise ValueError("`orders` must be a non-empty 1-D sequence of finite floats > 1.")
    return tuple(float(x) for x in np.unique(grid))


def cell_gdp_mu(items) -> float | None:
    """μ of Gaussian DP of a normalized cell, √Σ count·μ_i² (Dong, Roth & Su 2019, Cor. 3.3).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).

    Returns
    -------
    float or None
        μ >= 0; None if an event has no μ.
    """
    mus = [event_gdp_mu(event) for event, _ in items]
    if any(mu is None for mu in mus):
        return None
    return math.sqrt(math.fsum(count * mu**2 for mu, (_, count) in zip(mus, items)))


def cell_zcdp_rho(items) -> float | None:
    """ρ of zCDP of a normalized cell, Σ count·ρ_i (Bun & Steinke 2016, Lemma 2.3).

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).

    Returns
    -------
    float or None
        ρ >= 0; None if an event has no ρ.
    """
    rhos = [event_zcdp_rho(event) for event, _ in items]
    if any(rho is None for rho in rhos):
        return None
    return math.fsum(count * rho for rho, (_, count) in zip(rhos, items))


def exact_pure_terms(event: Any, count: int) -> tuple[int, float, float] | None:
    """``(multiplier, a, b)`` with pure ε of ``count`` releases of ``event`` equal to
    ``multiplier · a / b`` exactly, or None if the event is not pure.

    Laplace-type events give ``count · depth · Δ / b`` from their float parameters
    exactly (11 releases of Laplace(11) sum to exactly 1, not 11·fl(1/11) > 1);
    events that declare ε (randomized response) give that float exactly; any other
    event its handler's float.

    Parameters
    ----------
    event : Event
        One release (a registered event type).
    count : int
        Releases of ``event``, >= 1.

    Returns
    -------
    tuple of (int, float, float) or None
        ``(multiplier, a, b)``; None if the event is not pure.
    """
    kind = type(event)
    if kind in (Laplace, DiscreteLaplace):
        return count, event.l1_sensitivity, event.scale
    if kind is LaplaceTree:
        return count * event.depth, event.l1_sensitivity, event.scale
    epsilon = event_pure_epsilon(event)
    return (count, epsilon, 1.0) if math.isfinite(epsilon) else None


def exact_pure_sum(items) -> tuple[int, int] | None:
    """Σ count·ε_i exactly (:func:`exact_pure_terms`), as an unreduced ``(numerator,
    denominator)`` (:func:`fedpriv.privacy.accounting.exact_sum.ratio_sum`: no gcd, equal scales
    grouped; the same rational as a ``Fraction`` sum), or None if an event is not pure.

    Parameters
    ----------
    items : tuple of (event, int)
        A normalized cell (:func:`~fedpriv.privacy.accounting.cells.normalize_cell`).

    Returns
    -------
    tuple of (int, int) or None
        ``(numerator, denominator)``; None if an event is not pure.
    """
    terms = []
    for event, count in items:
        term = exact_pure_terms(event, count)
        if term is None:
            return None
        terms.append(term)
    return ratio_sum(terms)


def round_up_ratio(value: Fraction | tuple[int, int]) -> float:
    """The smallest double >= ``value`` (a Fraction or a ``(numerator, denominator)``).

    Parameters
    ----------
    value : Fraction or tuple of (int, int)
        A rational, as a Fraction or ``(numerator, denominator)``.

    Returns
    -------
    float
        The smallest double >= ``value``.
    """
    if isinstance(value, Fraction):
        value = (value.numerator, value.denominator)
    return round_up(*value)
