"""Running composition per cell: the accountant's incremental budget check.

A budgeted :meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend` must decide whether
the ledger plus one charge stays within the budget. Re-composing the whole ledger for
every charge is O(N) per charge (issue 23: 20 ms at 10⁴ charges). This module keeps,
for every cell of the parallel key levels, what the cheap routes of
:mod:`fedpriv.privacy.accounting.routes` compose additively:

* ``pure``  Σ count·ε_i (each ε_i rounded up);
* ``gdp``   Σ count·μ_i² (Dong, Roth & Su 2019, Cor. 3.3);
* ``zcdp``  Σ count·ρ_i (Bun & Steinke 2016, Lemma 2.3);
* ``rdp``   Σ count·RDP_i(α) at :data:`~fedpriv.privacy.accounting.guarantees.DEFAULT_ORDERS`
  (Mironov 2017, Prop. 1),

together with the cell's composition (``event id -> count``). The budget is turned
once into a threshold per route (the largest statistic whose ε at the budget's δ is
within the budget, minus a relative margin :data:`MARGIN`), so a charge is accepted
at once when every cell stays under one route's threshold: that route's worst-cell ε,
an upper bound the exact check also computes, is then within the budget, and so is
the exact check's minimum over routes. Otherwise the accountant re-prices exactly:
first on each changed cell's kept PLD, the charge composed into it
(:mod:`fedpriv.privacy.accounting.pld_incremental`, issue 36), which accepts only where
the from-scratch check would; then, if that cannot accept, with the same
:func:`~fedpriv.privacy.accounting.routes.compose_routes` on the same distinct cell
compositions as a full re-composition, read from the running compositions (O(cells),
not O(charges)). The accept/refuse decision is therefore always the exact check's.

Atomicity: the state is a function of the ledger's first :attr:`RunningCells.applied`
charges. Prices are computed without touching it; an accepted charge is folded in
after it is recorded, each cell replaced by a new object in one ``dict.update`` and
marked with the charge's index, so a fold that an exception cut short is completed
(never repeated) by :meth:`RunningCells.catch_up`, which also folds charges read
from a store by another process.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.cells import (
    cell_gdp_mu,
    cell_zcdp_rho,
    exact_pure_sum,
    normalize_cell,
    round_up_ratio,
)
from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon, zcdp_epsilon
from fedpriv.privacy.accounting.events import event_shape
from fedpriv.privacy.accounting.guarantees import DEFAULT_ORDERS, ApproxDP, PureDP
from fedpriv.privacy.accounting.handlers import event_rdp_curve

__all__ = ["MARGIN", "RunningCells"]

#: Relative margin below the budget a cheap route must keep to accept a charge
#: without the exact check: it absorbs the float rounding of running sums (at most
#: ``n·2⁻⁵³`` relative for ``n`` <= 10⁶ releases of a cell, about 1e-10) and of the
#: thresholds, so a fast accept is always an accept of the exact check.
MARGIN = 1e-6

_ORDERS = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
_ROUTES = ("pure", "gdp", "zcdp", "rdp")
_DEAD = (False,) * len(_ROUTES)
#: Label of the null cell: pandas groups None and NaN labels together (dropna=False),
#: so the running cells must too.
_NULL = ("fedpriv-null-label",)


class _Stats:
    """Additive statistics of one event (or of one cell): see the module docstring."""

    __slots__ = ("mu2", "pure", "rdp", "releases", "rho")

    def __init__(self, pure: float, mu2: float, rho: float, rdp: np.ndarray, releases: int):
        self.pure, self.mu2, self.rho, self.rdp, self.releases = pure, mu2, rho, rdp, releases


class _Cell:
    """One cell's running composition; replaced, never mutated, when a charge lands
    (``composition`` is only filled in lazily by :meth:`RunningCells.compositions`)."""

    __slots__ = ("composition", "counts", "seen", "stats")

    def __init__(self, counts: dict[int, int], stats: _Stats, seen: int):
        self.counts, self.stats, self.seen, self.composition = counts, stats, seen, None


def _event_stats(event: Any) -> _Stats:
    """Statistics of one release of ``event`` (its parts expanded as the routes do)."""
    items = normalize_cell([(event, 1)])
    exact = exact_pure_sum(items)
    mu = cell_gdp_mu(items)
    rho = cell_zcdp_rho(items)
    curve = np.zeros(_ORDERS.size)
    for part, count in items:
        part_curve = event_rdp_curve(part, DEFAULT_ORDERS)
        if part_curve is None:
            curve = np.full(_ORDERS.size, math.inf)
            break
        curve = curve + count * part_curve
    return _Stats(
        math.inf if exact is None else round_up_ratio(exact),
        math.inf if mu is None else mu * mu,
        math.inf if rho is None else rho,
        curve,
        event_shape(event)[1],
    )


def _largest_within(convert: Callable[[float], float], limit: float) -> float:
    """Largest ``x`` found (bisection) with ``convert(x) <= limit``; ``convert`` is
    increasing. 0 if even a tiny ``x`` exceeds ``limit``."""
    low, high = 0.0, 1.0
    while convert(high) <= limit:
        low, high = high, high * 2.0
        if high > 1e300:
            return low
    for _ in range(200):  # to 1e-7 relative: the margin, not this, makes it sound
        middle = 0.5 * (low + high)
        if middle in (low, high) or high - low <= 1e-7 * high:
            break
        if convert(middle) <= limit:
            low = middle
        else:
            high = middle
    return low


class RunningCells:
    """Running compositions of an accountant's cells and its cheap budget check.

    Parameters
    ----------
    parallel_levels : tuple of str
        The accountant's parallel key levels (a cell is one label of each).
    budget : PureDP or ApproxDP
        The budget the charges are checked against.
    max_releases : int
        Most releases a cell may hold before only the exact check decides (it raises
        :class:`~fedpriv.privacy.errors.ResourceLimitError`).
    """

    def __init__(
        self, parallel_levels: tuple[str, ...], budget: PureDP | ApproxDP, max_releases: int
    ) -> None:
        self.levels = parallel_levels
        self.budget = budget
        self.max_releases = max_releases
        self.cells: dict[tuple, _Cell] = {}
        self.applied = 0  # ledger charges folded in
        self.alive = (True,) * len(_ROUTES)  # route within its threshold in every cell
        self._thresholds: dict[str, Any] | None = None
        self._event_stats: dict[Any, _Stats] = {}

    # ---------------------------------------------------------------- thresholds
    def thresholds(self) -> dict[str, Any]:
        """Per-route thresholds on the cell statistics (computed once)."""
        if self._thresholds is None:
            limit = self.budget.epsilon * (1.0 - MARGIN)
            delta = self.budget.delta if isinstance(self.budget, ApproxDP) else 0.0
            found: dict[str, Any] = {name: None for name in _ROUTES}
            found["pure"] = limit
            if delta > 0 and math.isfinite(limit):
                try:
                    found["gdp"] = _largest_within(
                        lambda mu2: gaussian_dp_epsilon(math.sqrt(mu2), delta), limit
                    )
                    found["zcdp"] = _largest_within(lambda rho: zcdp_epsilon(rho, delta), limit)
                except ArithmeticError:  # an extreme budget: these routes stay off
                    found["gdp"] = found["zcdp"] = None
                # ε(α) = r(α) + log(1 - 1/α) - (log δ + log α)/(α - 1) (Canonne, Kamath &
                # Steinke 2020, Prop. 12; :func:`~fedpriv.privacy.accounting.conversions.rdp_epsilon`
                # takes the minimum of these and 0): increasing in r(α).
                offset = np.log1p(-1.0 / _ORDERS) - (math.log(delta) + np.log(_ORDERS)) / (
                    _ORDERS - 1.0
                )
                found["rdp"] = limit - offset - np.abs(offset) * MARGIN
            # the statistics are compared grown by the margin: s (1 + M) <= t
            found["scaled"] = tuple(
                None if found[name] is None else found[name] / (1.0 + MARGIN) for name in _ROUTES
            )
            self._thresholds = found
        return self._thresholds

    def _ok(self, stats: _Stats, alive: tuple[bool, ...]) -> tuple[bool, ...]:
        """Per route (:data:`_ROUTES` order): alive and within its threshold on a cell
        of ``stats`` (the margin kept). A dead route is not evaluated again."""
        pure, mu2, rho, rdp = self.thresholds()["scaled"]
        return (
            alive[0] and stats.pure <= pure,
            alive[1] and mu2 is not None and stats.mu2 <= mu2,
            alive[2] and rho is not None and stats.rho <= rho,
            alive[3] and rdp is not None and bool((stats.rdp <= rdp).any()),
        )

    # ---------------------------------------------------------------- charges
    def stats_of(self, event: Any) -> _Stats:
        """Statistics of one release of ``event`` (cached on the hashable event).

        Parameters
        ----------
        event : Event
            A hashable event.

        Returns
        -------
        _Stats
            Its pure ε, GDP μ², zCDP ρ, RDP curve and release count (``inf`` where
            overflowing).
        """
        stats = self._event_stats.get(event)
        if stats is None:
            try:
                stats = _event_stats(event)
            except ArithmeticError:  # an extreme event: the exact check prices it
                stats = _Stats(
                    math.inf,
                    math.inf,
                    math.inf,
                    np.full(_ORDERS.size, math.inf),
                    event_shape(event)[1],
                )
            self._event_stats[event] = stats
        return stats

    def cell_keys(self, arrays: dict[str, np.ndarray]) -> dict[tuple, int]:
        """Releases per cell of one charge: ``{cell label tuple: count}``.

        Parameters
        ----------
        arrays : dict of str to ndarray
            One 1-D label array per key level, all of one length.

        Returns
        -------
        dict of tuple to int
            Count of the charge's rows per cell (label tuple over the parallel levels).
        """
        if not self.levels:
            return {(): max(a.size for a in arrays.values())}
        columns = [arrays[level].tolist() for level in self.levels]
        if len(columns[0]) == 1:
            return {tuple(_canonical(column[0]) for column in columns): 1}
        counts: dict[tuple, int] = {}
        for labels in zip(*columns):
            key = tuple(_canonical(label) for label in labels)
            counts[key] = counts.get(key, 0) + 1
        return counts

    def price(
        self, event_id: int, event: Any, arrays: dict[str, np.ndarray], index: int
    ) -> tuple[bool, tuple]:
        """``(accepted_cheaply, update)`` of charge number ``index`` (nothing changes).

        ``accepted_cheaply`` is True when one cheap route keeps every cell within the
        budget after the charge; ``update`` (the new cells, the routes still alive) is
        what :meth:`fold` installs.

        Parameters
        ----------
        event_id : int
            The event's id in the ledger.
        event : Event
            The charged event.
        arrays : dict of str to ndarray
            The charge's label arrays.
        index : int
            The charge's position in the ledger.

        Returns
        -------
        tuple of (bool, tuple)
            ``(accepted_cheaply, update)``.
        """
        stats = self.stats_of(event)
        alive = self.alive
        updated: dict[tuple, _Cell] = {}
        for key, n in self.cell_keys(arrays).items():
            old = self.cells.get(key)
            if old is None:
                counts, total = (
                    {event_id: n},
                    _Stats(
                        n * stats.pure,
                        n * stats.mu2,
                        n * stats.rho,
                        n * stats.rdp,
                        n * stats.releases,
                    ),
                )
            else:
                counts = dict(old.counts)
                counts[event_id] = counts.get(event_id, 0) + n
                base = old.stats
                total = _Stats(
                    base.pure + n * stats.pure,
                    base.mu2 + n * stats.mu2,
                    base.rho + n * stats.rho,
                    base.rdp + n * stats.rdp,
                    base.releases + n * stats.releases,
                )
            updated[key] = _Cell(counts, total, index)
            if total.releases > self.max_releases:
                alive = _DEAD  # only the exact check decides (it refuses)
            elif any(alive):
                alive = self._ok(total, alive)
        return any(alive), (index, updated, alive)

    def compositions(self, update: tuple) -> set[tuple[tuple[int, int], ...]]:
        """Distinct cell compositions (sorted ``(event id, count)`` tuples) of the
        ledger with the cells of ``update`` (from :meth:`price`) in place.

        Parameters
        ----------
        update : tuple
            From :meth:`price`.

        Returns
        -------
        set of tuple
            Each a sorted tuple of ``(event id, count)`` pairs.
        """
        updated = update[1]
        found = set()
        for key, cell in self.cells.items():
            if key not in updated:
                found.add(_composition(cell))
        for cell in updated.values():
            found.add(_composition(cell))
        return found

    def fold(self, update: tuple) -> None:
        """Install the ``update`` :meth:`price` computed, once its charge is recorded.

        Parameters
        ----------
        update : tuple
            From :meth:`price`; ignored if out of order.
        """
        index, updated, alive = update
        if index != self.applied:
            return  # out of order: catch_up folds the ledger instead
        self.cells.update(updated)  # one C call: all cells or none
        self.alive = alive
        self.applied = index + 1

    def _finish(self, index: int, updated: dict[tuple, _Cell]) -> None:
        alive = self.alive
        for cell in updated.values():
            if not any(alive):
                break
            alive = (
                _DEAD if cell.stats.releases > self.max_releases else self._ok(cell.stats, alive)
            )
        self.alive = alive
        self.applied = index + 1

    def catch_up(
        self, charges: Sequence[tuple[int, dict[str, np.ndarray]]], events: Sequence[Any]
    ) -> None:
        """Fold the ledger's charges from :attr:`applied` on (a store's new rows, or
        a fold an exception interrupted): each is folded once.

        Parameters
        ----------
        charges : sequence of (int, dict of str to ndarray)
            The ledger's charges, ``(event id, label arrays)``.
        events : sequence of Event
            The ledger's events, indexed by id.
        """
        while self.applied < len(charges):
            index = self.applied
            event_id, arrays = charges[index]
            _, (_, updated, _) = self.price(event_id, events[event_id], arrays, index)
            done = {
                key: self.cells[key]
                for key in updated
                if key in self.cells and self.cells[key].seen >= index
            }
            if done:  # an interrupted fold had installed this charge already
                updated = done
            else:
                self.cells.update(updated)
            self._finish(index, updated)


def _composition(cell: _Cell) -> tuple[tuple[int, int], ...]:
    if cell.composition is None:
        cell.composition = tuple(sorted(cell.counts.items()))
    return cell.composition


def _canonical(label: Any) -> Any:
    """A label as a dict key grouping as pandas does: nulls (None, NaN) are one."""
    if label is None or label != label:
        return _NULL
    return label
