"""The budget of an accountant: what it may spend, what it has spent (``accountant.odometer``).

An accountant built with a ``budget`` is a privacy filter: a charge that would take the
ledger beyond it raises :class:`~fedpriv.privacy.errors.BudgetExceededError` and changes
nothing (Rogers, Roth, Ullman & Vadhan 2016, "Privacy Odometers and Filters"). The
:class:`Odometer` reads the spend in the budget's own parameter and prices a charge
without making it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from fedpriv.privacy.accounting.events import Event
from fedpriv.privacy.accounting.guarantees import ZCDP, ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.accounting.routes import compose_gdp_mu, compose_zcdp_rho
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.ledger.cells import check_cell_sizes
from fedpriv.privacy.ledger.pricing import Routes

__all__ = ["BUDGET_TYPES", "Odometer", "budget_parameter", "guarantee_spent"]

#: Guarantee types a budget may have. ``PureDP``/``ApproxDP`` budgets are checked on
#: the tightest ε route at the budget's δ; a ``ZCDP`` budget on the cell's ρ
#: (:func:`~fedpriv.privacy.accounting.routes.compose_zcdp_rho`, ρ adds: Bun & Steinke
#: 2016, Lemma 2.3); a ``GaussianDP`` budget on the cell's μ
#: (:func:`~fedpriv.privacy.accounting.routes.compose_gdp_mu`, √Σμ²: Dong, Roth & Su
#: 2019, Cor. 3.3). An RDP curve or a PLD is not a budget (no one number to exhaust).
BUDGET_TYPES = (PureDP, ApproxDP, ZCDP, GaussianDP)


def budget_parameter(budget: PureDP | ApproxDP | ZCDP | GaussianDP) -> tuple[str, float]:
    """``(name, value)`` of the one number a budget caps: ε, ρ or μ.

    Parameters
    ----------
    budget : PureDP, ApproxDP, ZCDP or GaussianDP
        A budget of :data:`BUDGET_TYPES`.

    Returns
    -------
    tuple of (str, float)
        ``("ε", epsilon)``, ``("ρ", rho)`` or ``("μ", mu)``.
    """
    if isinstance(budget, ZCDP):
        return "ρ", budget.rho
    if isinstance(budget, GaussianDP):
        return "μ", budget.mu
    return "ε", budget.epsilon


def guarantee_spent(budget: ZCDP | GaussianDP, cells: list[list[tuple[Event, int]]]) -> float:
    """Worst cell's ρ (``ZCDP`` budget) or μ (``GaussianDP``) over ``cells``.

    Parameters
    ----------
    budget : ZCDP or GaussianDP
        Selects the parameter.
    cells : list of list of (Event, int)
        Cell compositions.

    Returns
    -------
    float
        ρ or μ of the worst cell (``inf`` if a cell has no such bound; 0 for none).

    Raises
    ------
    ResourceLimitError
        If a cell holds more releases than a query prices.
    """
    compose = compose_zcdp_rho if isinstance(budget, ZCDP) else compose_gdp_mu
    check_cell_sizes(cells)
    return max((compose(cell) for cell in cells), default=0.0)


class Odometer:
    """The budget, the spend and the price of a charge (``accountant.odometer``).

    Parameters
    ----------
    budget : PureDP, ApproxDP, ZCDP or GaussianDP, optional
        The accountant's budget (None: no budget).
    cells : callable
        The ledger's ``cells(where=...)``.
    routes : Routes
        The accountant's routes (the ε of ``PureDP``/``ApproxDP`` budgets).
    price : callable
        ``price(event, key)`` validates and prices a charge without making it, raising
        what ``Accountant.spend`` would (``BudgetExceededError`` included).
    """

    def __init__(
        self,
        budget: PureDP | ApproxDP | ZCDP | GaussianDP | None,
        *,
        cells: Callable[..., list],
        routes: Routes,
        price: Callable[[Any, Mapping[str, Any] | None], None],
    ) -> None:
        self._budget = budget
        self._cells = cells
        self._routes = routes
        self._price = price

    @property
    def budget(self) -> PureDP | ApproxDP | ZCDP | GaussianDP | None:
        """The budget the accountant enforces (None: none)."""
        return self._budget

    def spent(self) -> float:
        """The odometer, in the budget's own parameter.

        Returns
        -------
        float
            The tightest ε at the budget's δ (δ = 0 without a budget or with a
            ``PureDP`` one); the worst cell's ρ under a ``ZCDP`` budget, its μ under a
            ``GaussianDP`` one (``inf`` if a cell has no such bound).
        """
        if isinstance(self._budget, (ZCDP, GaussianDP)):
            return guarantee_spent(self._budget, self._cells())
        delta = self._budget.delta if isinstance(self._budget, ApproxDP) else 0.0
        return self._routes.tightest(delta)[1]

    def remaining(self) -> float:
        """Budget left in its own parameter (ε, ρ or μ; ``inf`` without a budget).

        Returns
        -------
        float
            ``max(0, budget - spent())``.
        """
        if self._budget is None:
            return math.inf
        return max(0.0, budget_parameter(self._budget)[1] - self.spent())

    def would_exceed(self, event: Any, *, key: Mapping[str, Any] | None = None) -> bool:
        """Whether charging ``event`` to ``key`` would exceed the budget.

        Changes nothing, whatever it raises: the charge is priced on a candidate
        ledger. Raises what ``Accountant.spend`` raises for an invalid event or key.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            The release to price, as for ``Accountant.spend``.
        key : mapping of str to label, optional
            One label per declared level, as for ``Accountant.spend``.

        Returns
        -------
        bool
            True if ``Accountant.spend`` would raise ``BudgetExceededError``; always
            False without a budget.
        """
        if self._budget is None:
            return False
        try:
            self._price(event, key)
        except BudgetExceededError:
            return True
        return False
