"""Handlers of :class:`~fedpriv.privacy.accounting.events.Composed` when it is nested.

In a ledger cell a ``Composed`` event is expanded into its parts
(:func:`fedpriv.privacy.accounting.cells.normalize_cell`), so these handlers only price it where it
cannot be expanded, e.g. inside a :class:`~fedpriv.privacy.accounting.sampling.PoissonSampled`
event (one sample, several releases): pure ε, ρ and RDP curves add up (sequential
composition), GDP μ's add in squares (exact for Gaussian parts, Dong, Roth & Su 2019,
Cor. 3.3), PLDs compose, and a δ share is split equally among the parts. Importing
this module registers them.
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.privacy.accounting.events import Composed
from fedpriv.privacy.accounting.handlers import (
    EventHandlers,
    event_approx_dp,
    event_gdp_mu,
    event_pld,
    event_pure_epsilon,
    event_rdp_curve,
    event_zcdp_rho,
    register_event,
)

__all__: list[str] = []


def _sum_or_none(values) -> float | None:
    values = list(values)
    return None if any(v is None for v in values) else math.fsum(values)


def _composed_approx(event: Composed, delta_share: float) -> tuple[float, float]:
    parts = [event_approx_dp(part, delta_share / len(event.events)) for part in event.events]
    return math.fsum(e for e, _ in parts), math.fsum(d for _, d in parts)


def _composed_rdp(event: Composed, orders: np.ndarray) -> np.ndarray:
    total = np.zeros(orders.shape)
    for part in event.events:
        curve = event_rdp_curve(part, tuple(orders))
        if curve is None:
            return np.full(orders.shape, np.inf)
        total = total + curve
    return total


def _composed_gdp(event: Composed) -> float | None:
    squares = _sum_or_none(
        None if (mu := event_gdp_mu(part)) is None else mu**2 for part in event.events
    )
    return None if squares is None else math.sqrt(squares)


def _composed_pld(event: Composed, discretization: float, pessimistic: bool):
    composed = None
    for part in event.events:
        pld = event_pld(part, 1, discretization, pessimistic)
        if pld is None:
            return None
        composed = pld if composed is None else composed.compose(pld)
    return composed


register_event(
    Composed,
    EventHandlers(
        pure=lambda e: math.fsum(event_pure_epsilon(part) for part in e.events),
        approx=lambda e, share: _composed_approx(e, share) if e.events else (0.0, 0.0),
        rdp=_composed_rdp,
        zcdp=lambda e: _sum_or_none(event_zcdp_rho(part) for part in e.events),
        gdp=lambda e: _composed_gdp(e) if e.events else None,
        pld=lambda e, d, p: _composed_pld(e, d, p) if e.events else None,
    ),
)
