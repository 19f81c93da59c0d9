"""Pricing a ledger's cells: every route, the tightest, δ, and the bracket on the true ε.

Every cell (:meth:`~fedpriv.privacy.ledger.ledger.Ledger.cells`) is evaluated by each route
of :mod:`fedpriv.privacy.accounting.routes` — ``pure`` (exact sum of pure ε, finite at
δ = 0), ``basic``, ``advanced`` (Dwork–Rothblum–Vadhan), ``optimal`` (Kairouz–Oh–
Viswanath, log space), ``rdp``, ``zcdp``, ``gdp`` (exact for Gaussian mechanisms) and
``pld`` (dp-accounting, pessimistic) — and the worst cell is reported (parallel
composition). Every route is an upper bound and is capped by basic composition; the
optimistic PLD gives the lower end of the bracket. Sensitivities are declared by the
events for the accountant's relation, so no route rescales them
(google/differential-privacy#378).

:class:`Routes` (``accountant.routes``) answers every route and the tightest;
:class:`Brackets` (``accountant.brackets``) the lower bound and the bracket
``(lower, upper)``. The functions below are the pure arithmetic both share with the
accountant's ``get_epsilon``, ``get_delta`` and budget check. An extreme cell that
overflows a route is reported at the sound, vacuous end (ε = ∞, δ = 1, lower bound 0)
with a ``RuntimeWarning``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from fedpriv.privacy.accounting.events import Event
from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE
from fedpriv.privacy.accounting.routes import ROUTES, compose_delta, compose_routes, pld_lower_bound
from fedpriv.privacy.checks import check_delta
from fedpriv.privacy.ledger.cells import check_cell_sizes

__all__ = [
    "PLD_DISCRETIZATION_RANGE",
    "Brackets",
    "Routes",
    "delta_of",
    "event_epsilon",
    "lower_bound_of",
    "routes_of",
    "tightest_of",
]

#: Allowed ``pld_discretization`` (inclusive).
PLD_DISCRETIZATION_RANGE = (1e-6, 1.0)

#: A ledger's cells, optionally restricted: ``cells(where=None) -> [[(event, count)]]``.
Cells = Callable[..., list[list[tuple[Event, int]]]]


def event_epsilon(event: Event) -> float:
    """Pure ε of one event under a relation its sensitivity is declared for (∞ if none).

    Parameters
    ----------
    event : Event
        One event of :mod:`fedpriv.privacy.accounting.events`.

    Returns
    -------
    float
        ε in nats at δ = 0 (the ``pure`` route of
        :func:`~fedpriv.privacy.accounting.routes.compose_routes`); ``inf`` when the event has no
        pure-DP bound.

    Raises
    ------
    UnsupportedEventError
        If ``event`` is not an event type registered in :mod:`fedpriv.privacy.accounting.routes`.

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> event_epsilon(events.LaplaceTree(scale=4.0, horizon=16))
    1.25
    """
    return float(compose_routes([(event, 1)], 0.0)["pure"])


def routes_of(cells: list, target_delta: float, pld_discretization: float) -> dict[str, float]:
    """Worst-cell ε of every route over ``cells``.

    Parameters
    ----------
    cells : list of list of (Event, int)
        Cell compositions (:meth:`~fedpriv.privacy.ledger.ledger.Ledger.cells`).
    target_delta : float
        δ in [0, 1) (not checked here).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval`` for the PLD route.

    Returns
    -------
    dict of str to float
        ε in nats of each route of :data:`~fedpriv.privacy.accounting.routes.ROUTES`;
        ``inf`` where a route does not apply, 0 for no cells.

    Raises
    ------
    ResourceLimitError
        If a cell holds more releases than a query prices.
    """
    values = {name: 0.0 for name in ROUTES}
    check_cell_sizes(cells)
    for cell in cells:
        try:
            cell_values = compose_routes(cell, target_delta, pld_discretization=pld_discretization)
        except ArithmeticError as error:  # overflow of an extreme but valid cell
            _warn_overflow("ε", "inf", error)
            cell_values = dict.fromkeys(ROUTES, math.inf)  # a sound upper bound
        for name, value in cell_values.items():
            values[name] = max(values[name], value)
    return values


def tightest_of(cells: list, target_delta: float, pld_discretization: float) -> tuple[str, float]:
    """``(route, epsilon)`` of the smallest route over ``cells``.

    Routes within float rounding of the minimum are ties: the simplest wins (in
    :data:`~fedpriv.privacy.accounting.routes.ROUTES` order, pure first), so an exact pure
    answer is not displaced by a PLD value 1 ulp below it.

    Parameters
    ----------
    cells : list of list of (Event, int)
        Cell compositions.
    target_delta : float
        δ in [0, 1) (not checked here).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval`` for the PLD route.

    Returns
    -------
    tuple of (str, float)
        The route's name and its ε in nats (an upper bound on the true ε).

    Raises
    ------
    ResourceLimitError
        If a cell holds more releases than a query prices.
    """
    values = routes_of(cells, target_delta, pld_discretization)
    smallest = min(values.values())
    route = next(
        name for name in ROUTES if values[name] <= smallest + abs(smallest) * RELATIVE_TOLERANCE
    )
    return route, values[route]


def lower_bound_of(cells: list, target_delta: float, pld_discretization: float) -> float:
    """Optimistic-PLD ε of the worst cell at ``target_delta``: a lower bound on the true ε.

    Parameters
    ----------
    cells : list of list of (Event, int)
        Cell compositions.
    target_delta : float
        δ in [0, 1) (not checked here).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``.

    Returns
    -------
    float
        ε in nats, >= 0 (0 if an overflow makes the bound vacuous).

    Raises
    ------
    ResourceLimitError
        If a cell holds more releases than a query prices.
    """
    # 0 on an overflow: a valid (vacuous) lower bound
    return _worst_cell(
        cells,
        lambda c: pld_lower_bound(c, target_delta, pld_discretization=pld_discretization),
        what="the lower bound",
        fallback=0.0,
    )


def delta_of(cells: list, target_epsilon: float, pld_discretization: float) -> float:
    """Smallest δ such that every cell is (``target_epsilon``, δ)-DP (an upper bound).

    Parameters
    ----------
    cells : list of list of (Event, int)
        Cell compositions.
    target_epsilon : float
        ε in nats, >= 0 (not checked here).
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``.

    Returns
    -------
    float
        δ in [0, 1] (1 if an overflow makes the bound vacuous).

    Raises
    ------
    ResourceLimitError
        If a cell holds more releases than a query prices.
    """
    # 1 on an overflow: a sound (vacuous) upper bound
    return _worst_cell(
        cells,
        lambda c: compose_delta(c, target_epsilon, pld_discretization=pld_discretization),
        what="δ",
        fallback=1.0,
    )


def _worst_cell(cells: list, price, *, what: str, fallback: float) -> float:
    """The largest ``price(cell)`` over ``cells`` (0 for none); ``fallback`` with a warning
    naming ``what`` when the pricing overflows."""
    check_cell_sizes(cells)
    try:
        return max((price(c) for c in cells), default=0.0)
    except ArithmeticError as error:
        _warn_overflow(what, f"{fallback:g}", error, stacklevel=4)
        return fallback


class Routes:
    """ε by every route of :data:`~fedpriv.privacy.accounting.routes.ROUTES`
    (``accountant.routes``).

    Parameters
    ----------
    cells : callable
        The ledger's ``cells(where=...)``.
    pld_discretization : float
        dp-accounting's ``value_discretization_interval`` for the PLD route, in
        :data:`PLD_DISCRETIZATION_RANGE`.
    """

    def __init__(self, cells: Cells, pld_discretization: float) -> None:
        self._cells = cells
        self._pld_discretization = pld_discretization

    @property
    def names(self) -> tuple[str, ...]:
        """The routes, simplest first (the order ties are broken in)."""
        return ROUTES

    @property
    def pld_discretization(self) -> float:
        """dp-accounting's ``value_discretization_interval`` of the PLD routes."""
        return self._pld_discretization

    def epsilons(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> dict[str, float]:
        """ε at ``target_delta`` by every route.

        Each route is evaluated on every distinct cell composition and the worst cell
        is reported (parallel composition); a route that does not apply is ``inf``.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required (see ``Accountant.get_epsilon``).
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given (for
            example ``{"phase": "stream"}`` for the records a claim covers).

        Returns
        -------
        dict of str to float
            ε in nats of each route, keyed by route name; ``inf`` where a route does
            not apply.

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        target_delta = check_delta("target_delta", target_delta)
        return routes_of(self._cells(where=where), target_delta, self._pld_discretization)

    def tightest(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> tuple[str, float]:
        """``(route, epsilon)`` of the smallest valid upper bound at ``target_delta``.

        Ties go to the simplest route in :attr:`names` order (pure first);
        ``Accountant.get_epsilon`` is its ε.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required.
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        tuple of (str, float)
            The route's name and its ε in nats (an upper bound on the true ε).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        target_delta = check_delta("target_delta", target_delta)
        return tightest_of(self._cells(where=where), target_delta, self._pld_discretization)


class Brackets:
    """Where the true ε lies: ``[lower_bound, get_epsilon]`` (``accountant.brackets``).

    Parameters
    ----------
    cells : callable
        The ledger's ``cells(where=...)``.
    pld_discretization : float
        dp-accounting's ``value_discretization_interval``.
    """

    def __init__(self, cells: Cells, pld_discretization: float) -> None:
        self._cells = cells
        self._pld_discretization = pld_discretization

    def lower_bound(self, target_delta: float, *, where: Mapping[str, Any] | None = None) -> float:
        """Optimistic-PLD ε at ``target_delta``: the lower end of the bracket.

        A lower bound on the true ε of the ledger's mechanisms at every δ (0
        included): the optimistic PLD is queried at ``target_delta`` plus its
        certified round-off and truncated tail (:func:`~fedpriv.privacy.accounting.routes.
        pld_lower_bound`), so the truth lies in ``[lower_bound, get_epsilon]``. It
        is not a guarantee, and it may be loose where the round-off is large.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required.
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        float
            ε in nats, >= 0 (0 if an overflow makes the bound vacuous).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        target_delta = check_delta("target_delta", target_delta)
        return lower_bound_of(self._cells(where=where), target_delta, self._pld_discretization)

    def epsilon(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> tuple[float, float]:
        """``(lower_bound, get_epsilon)`` at ``target_delta``: the bracket on the true ε.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required.
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        tuple of (float, float)
            :meth:`lower_bound` and the tightest upper bound, in nats.

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        lower = self.lower_bound(target_delta, where=where)
        target_delta = check_delta("target_delta", target_delta)
        upper = tightest_of(self._cells(where=where), target_delta, self._pld_discretization)[1]
        return lower, upper


def _warn_overflow(what: str, answer: str, error: ArithmeticError, *, stacklevel: int = 3) -> None:
    """Warn that an extreme cell overflowed a route and ``answer`` is reported (the
    warning points ``stacklevel`` frames up: the caller of the public function)."""
    warnings.warn(
        f"pricing an extreme cell overflowed ({error!r}); {what} is reported as "
        f"{answer}, which is sound but vacuous.",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
