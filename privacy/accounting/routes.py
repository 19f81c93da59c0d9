"""Composition routes over one cell of the ledger: every route, and the public entry points.

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
              with a round-off certificate
              (:func:`~fedpriv.privacy.accounting.pld_certificate.pld_roundoff`): queried at δ minus
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
is re-exported here; every event type registers its handlers where it is defined.

This module holds the entry points (:func:`compose_routes`, :func:`compose_delta`,
:func:`pld_lower_bound`, :func:`compose_zcdp_rho`, :func:`compose_gdp_mu`) and the
table of routes; each route's computation lives in its own module, imported one way:
:mod:`~fedpriv.privacy.accounting.cells` (validation and merging of a cell, the exact
pure sum, ρ and μ), :mod:`~fedpriv.privacy.accounting.approx_routes` (basic, advanced,
optimal), :mod:`~fedpriv.privacy.accounting.rdp_route`,
:mod:`~fedpriv.privacy.accounting.pld_route` (the composed PLD, its grid, the lower
bracket) and :mod:`~fedpriv.privacy.accounting.pld_certificate` (round-off
certificates of dp-accounting's PLDs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from fedpriv.privacy.accounting.approx_routes import (
    advanced_epsilon,
    basic_epsilon,
    optimal_delta,
    optimal_epsilon,
    optimal_parts,
)
from fedpriv.privacy.accounting.cells import (
    Cell,
    cell_gdp_mu,
    cell_zcdp_rho,
    check_orders,
    exact_pure_sum,
    normalize_cell,
    round_up_ratio,
)
from fedpriv.privacy.accounting.events import Composed, SelfComposed
from fedpriv.privacy.accounting.exact_sum import at_most
from fedpriv.privacy.accounting.guarantees import (
    DEFAULT_ORDERS,
    PureDP,
    gaussian_dp_delta,
    gaussian_dp_epsilon,
    rdp_delta,
    zcdp_delta,
    zcdp_epsilon,
)
from fedpriv.privacy.accounting.handlers import (
    EventHandlers,
    handlers_for,
    register_event,
    track_caches,
)
from fedpriv.privacy.accounting.pld_certificate import certified_delta, certified_epsilon
from fedpriv.privacy.accounting.pld_route import cell_pld, pld_grid, pld_lower_epsilon
from fedpriv.privacy.accounting.rdp_route import rdp_route_epsilon, rdp_total
from fedpriv.privacy.checks import check_delta, check_nonnegative, check_positive

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
    rho = cell_zcdp_rho(normalize_cell(cell))
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
    mu = cell_gdp_mu(normalize_cell(cell))
    return math.inf if mu is None else mu


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
    orders = check_orders(orders)
    items = normalize_cell(cell)
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
    total = exact_pure_sum(tuple(counts.items()))
    # Σ count·ε_i rounded up, never below the exact sum
    return math.inf if total is None else round_up_ratio(total)


@functools.lru_cache(maxsize=4096)
def _routes(items, target_delta: float, discretization: float, orders) -> tuple:
    """Route values of a normalized cell, in :data:`ROUTES` order (cached)."""
    if not items:
        return (0.0,) * len(ROUTES)
    basic = basic_epsilon(items, target_delta)
    exact = exact_pure_sum(items)
    values = {"pure": math.inf if exact is None else round_up_ratio(exact)}
    values["advanced"] = advanced_epsilon(items, target_delta)
    values["optimal"] = optimal_epsilon(items, target_delta)
    values["rdp"] = values["zcdp"] = values["gdp"] = values["pld"] = math.inf
    if target_delta > 0:
        values["rdp"] = rdp_route_epsilon(items, orders, target_delta)
        if (rho := cell_zcdp_rho(items)) is not None:
            values["zcdp"] = zcdp_epsilon(rho, target_delta)
        if (mu := cell_gdp_mu(items)) is not None:
            values["gdp"] = gaussian_dp_epsilon(mu, target_delta)
    # At delta = 0 a PLD is finite only for pure cells, where the exact "pure" route is
    # never worse, so the (costly) PLD is not built. Elsewhere the grid is coarsened for
    # cells of large epsilon so that the PLD has at most ~PLD_POINTS support points;
    # a coarser pessimistic PLD is still an upper bound.
    # When every event is exactly Gaussian the GDP route is exact and a pessimistic
    # PLD can only approach it from above, so the PLD (seconds for a large mu at the
    # default grid) is not built and the route reports the exact GDP value.
    if target_delta > 0 and math.isfinite(values["gdp"]):
        values["pld"] = values["gdp"]
    elif target_delta > 0:
        certified = cell_pld(items, pld_grid(items, discretization, True), True, False)
        if certified is not None:  # inf where round-off swamps target_delta
            values["pld"] = certified_epsilon(certified, target_delta)
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
    return pld_lower_epsilon(normalize_cell(cell), target_delta, discretization)


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
    target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
    discretization = check_positive("pld_discretization", pld_discretization)
    orders = check_orders(orders)
    items = normalize_cell(cell)
    return _delta(items, target_epsilon, discretization, orders)


@functools.lru_cache(maxsize=4096)
def _delta(items, target_epsilon: float, discretization: float, orders) -> float:
    """Smallest δ of a normalized cell at ``target_epsilon`` (cached)."""
    if not items or math.isinf(target_epsilon):
        return 0.0
    exact = exact_pure_sum(items)
    if exact is not None and at_most(*exact, target_epsilon):
        return 0.0  # proven: ε >= Σ count·ε_i exactly (the releases' top losses)
    deltas = [1.0]
    if exact is not None:
        deltas.append(PureDP(round_up_ratio(exact)).get_delta(target_epsilon))
    if (parts := optimal_parts(items)) is not None:
        deltas.append(optimal_delta(parts, target_epsilon))
    if (mu := cell_gdp_mu(items)) is not None:  # exact: no other route can beat it
        return _unproven_delta([*deltas, gaussian_dp_delta(mu, target_epsilon)])
    if (rho := cell_zcdp_rho(items)) is not None:
        deltas.append(zcdp_delta(rho, target_epsilon))
    if (rdp := rdp_total(items, orders)) is not None:
        deltas.append(rdp_delta(rdp[0], rdp[1], target_epsilon))
    certified = cell_pld(items, pld_grid(items, discretization, True), True, False)
    if certified is not None:
        deltas.append(certified_delta(certified, target_epsilon))
    return _unproven_delta(deltas)


def _unproven_delta(deltas: list[float]) -> float:
    """Smallest δ of the routes where none proved δ = 0: in [5e-324, 1].

    A route's 0 below the pure sum is float rounding (a gap of one ulp, an
    underflow), never a proof, so it is raised to the smallest positive double.
    """
    return min(1.0, max(math.ulp(0.0), min(deltas)))


track_caches(_routes, _delta)
