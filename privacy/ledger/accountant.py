"""The typed accountant: what every release costs, composed by structure.

A release is an *event* (:mod:`fedpriv.privacy.accounting.events`) charged with a *key*: a
mapping from key levels (``"trial"``, ``"agent"``, ``"arm"``, ``"phase"``, ...) to labels.
The accountant is told which levels partition the data under its neighboring relation
(``disjoint``): one record lives in exactly one cell of those levels, so cells compose
in **parallel** (the guarantee is the worst cell) and events inside a cell compose
**sequentially**. Tree depth is part of the
:class:`~fedpriv.privacy.accounting.events.LaplaceTree` event itself (a record sits in
``event.depth = floor(log2 R) + 1`` nodes of the ``R`` released prefixes).
Post-processing is free and is never charged.

The core has dp-accounting's shape (``PrivacyAccountant``): ``neighboring_relation``
(read-only), ``supports(event)``, ``compose(event, count=1)`` returning the accountant,
``get_epsilon(target_delta)`` with ``target_delta`` required, and
``get_delta(target_epsilon)``; ``spend(event, key=...)`` is the keyed charge of the
structured ledger. The rest is grouped in objects reachable from the accountant:

======================  ==========================================================
``accountant.ledger``   :class:`~fedpriv.privacy.ledger.ledger.Ledger`: key levels,
                        cells, the charges and draws frames, ``record_draws``
``accountant.routes``   :class:`~fedpriv.privacy.ledger.pricing.Routes`: ε by every
                        route, and the tightest (``get_epsilon`` is its ε)
``accountant.brackets`` :class:`~fedpriv.privacy.ledger.pricing.Brackets`: the lower
                        bound and the bracket on the true ε
``accountant.odometer`` :class:`~fedpriv.privacy.ledger.budget.Odometer`: the budget,
                        what is spent and left, ``would_exceed``
``accountant.store``    :class:`StoreLink`: the persistent
                        store's receipt, ``refresh`` and ``close``
======================  ==========================================================

Length: the accountant and its store link, whose charge path (validate, check the
cell-size ceiling, price the budget on a candidate ledger, write the store in one
transaction, record in memory) must stay atomic and is shared by their private methods,
so they are kept in one module with their long numpydoc docstrings; the cells, the
pricing, the budget and the exports are the modules named above.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import MAX_COUNT, Composed, Event, SelfComposed
from fedpriv.privacy.accounting.guarantees import (
    RELATIVE_TOLERANCE,
    ZCDP,
    ApproxDP,
    GaussianDP,
    PureDP,
)
from fedpriv.privacy.accounting.pld_incremental import KeptPlds
from fedpriv.privacy.accounting.routes import handlers_for
from fedpriv.privacy.accounting.sampling import check_sampling_relation
from fedpriv.privacy.checks import check_int_at_least, check_nonnegative, check_real
from fedpriv.privacy.errors import (
    BudgetExceededError,
    IncompatibleGuaranteeError,
    UnsupportedEventError,
)
from fedpriv.privacy.ledger.backends import open_store
from fedpriv.privacy.ledger.budget import BUDGET_TYPES, Odometer, budget_parameter, guarantee_spent
from fedpriv.privacy.ledger.cells import (
    MAX_CELL_RELEASES,
    CellTally,
    cell_list,
    compose_cells,
    normalise_keys,
)
from fedpriv.privacy.ledger.integrity import LedgerHead, StoreConfig
from fedpriv.privacy.ledger.ledger import Ledger, LedgerRows
from fedpriv.privacy.ledger.pricing import (
    PLD_DISCRETIZATION_RANGE,
    Brackets,
    Routes,
    delta_of,
    tightest_of,
)
from fedpriv.privacy.ledger.running import RunningCells
from fedpriv.privacy.ledger.store import LedgerStore
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

__all__ = ["Accountant", "StoreLink"]

_SUPPORTED_RELATIONS = frozenset(NeighboringRelation)


class Accountant:
    """Ledger and composition of every release of one run (or one batch of runs).

    Parameters
    ----------
    neighboring_relation : NeighboringRelation or str
        The neighboring relation the guarantees refer to (dp-accounting's name). Default
        ``"replace_one_reward"`` (Zhu et al. 2021, Definition 1).
    disjoint : sequence of str
        Key levels whose cells hold disjoint records under ``neighboring_relation`` (composed in
        parallel). Every charge must give a label for each. Default ``()``: no
        structure, every charge goes to one cell and ``spend`` needs no ``key``
        (a single mechanism, or a dp-accounting ledger replayed as it is).
    sequential : sequence of str
        Extra key levels that only label charges (composed sequentially).
    budget : PureDP, ApproxDP, ZCDP or GaussianDP, optional
        If given, a charge that would take the ledger beyond the budget raises
        :class:`~fedpriv.privacy.errors.BudgetExceededError` and changes nothing.
        ``PureDP``/``ApproxDP``: the tightest ε at the budget's δ must stay within
        the budget's ε; the check is incremental (:mod:`fedpriv.privacy.ledger.running`):
        a charge that a cheap route on the running cells keeps within the budget is
        accepted in O(1), any other is priced exactly; the decisions are the same.
        ``ZCDP``: every cell's ρ (:func:`~fedpriv.privacy.accounting.routes.
        compose_zcdp_rho`) must stay within the budget's ρ; ``GaussianDP``: every
        cell's μ (:func:`~fedpriv.privacy.accounting.routes.compose_gdp_mu`) within
        its μ. A charge whose cell has no bound of the budget's type (a Laplace
        release under a ``GaussianDP`` budget, a Poisson-sampled one under ``ZCDP``)
        is refused the same way. These two re-compose the ledger per charge (O(N)).
        See :data:`~fedpriv.privacy.ledger.budget.BUDGET_TYPES` and
        :attr:`odometer`.
    pld_discretization : float
        dp-accounting's ``value_discretization_interval`` for the PLD route, in
        :data:`~fedpriv.privacy.ledger.pricing.PLD_DISCRETIZATION_RANGE` (finer grids
        need more memory than a query should take; coarser ones give vacuous bounds).
    keep_draw_rows : bool
        Keep one ledger row per noise draw (default). ``False`` only counts draws
        (``ledger.n_draws``), for audits that run a mechanism millions of times.
    store : str or PathLike, optional
        Keep the ledger in this SQLite file (:mod:`fedpriv.privacy.ledger.store`), or in
        the PostgreSQL database of a ``postgresql://`` URL
        (:mod:`fedpriv.privacy.ledger.postgres`): created if absent, restored if
        present. Every charge is one transaction; the budget is enforced over the
        charges of every process that opens the file; queries see them too. The file
        must have been created with the same ``neighboring_relation``, ``disjoint``,
        ``sequential``, ``budget`` and ``keep_draw_rows`` (:meth:`Accountant.open`
        reopens it without restating them). Call ``store.close()`` when done.
    store_synchronous : {"full", "normal"}
        ``"full"`` (default): a charge returns once it is on disk, so it survives a
        power cut; ``"normal"``: it survives a killed process only, and is faster.
    store_key : bytes, optional
        HMAC key of the store, kept outside it (at least 32 bytes): a store created
        with a key can be opened only with it, and nobody without it can forge its
        rows or configuration (:mod:`fedpriv.privacy.ledger.store`).
    store_expect_head : str or LedgerHead, optional
        A receipt kept elsewhere (``store.last_receipt``): the store must extend it, or
        :class:`~fedpriv.privacy.errors.LedgerCorruptedError` names the mismatch.

    Raises
    ------
    ValueError
        If ``neighboring_relation`` is unknown or not supported, a level is repeated or
        ``pld_discretization`` is outside its range.
    IncompatibleGuaranteeError
        If ``budget`` is not one of ``BUDGET_TYPES`` (a ``TypeError``).
    StoreFormatError
        If ``store`` is not a ledger store this version can read.
    StoreMismatchError
        If ``store`` was created with another configuration.

    Examples
    --------
    >>> from fedpriv.privacy import Accountant, events
    >>> single = Accountant()
    >>> single.spend(events.Laplace(scale=2.0))
    >>> single.get_epsilon(target_delta=0.0)
    0.5
    >>> acc = Accountant(disjoint=("agent", "arm"))
    >>> acc.spend(events.LaplaceTree(scale=4.0, horizon=16), key={"agent": 0, "arm": 1})
    >>> acc.get_epsilon(target_delta=0.0)
    1.25
    >>> acc.routes.tightest(0.0)
    ('pure', 1.25)
    >>> acc.ledger.levels
    ('agent', 'arm')
    """

    def __init__(
        self,
        *,
        neighboring_relation: NeighboringRelation | str = NeighboringRelation.REPLACE_ONE_REWARD,
        disjoint: Sequence[str] = (),
        sequential: Sequence[str] = (),
        budget: PureDP | ApproxDP | ZCDP | GaussianDP | None = None,
        pld_discretization: float = 1e-4,
        keep_draw_rows: bool = True,
        store: str | os.PathLike | None = None,
        store_synchronous: str = "full",
        store_key: bytes | None = None,
        store_expect_head: str | LedgerHead | None = None,
    ) -> None:
        relation = parse_relation(neighboring_relation)
        if relation not in _SUPPORTED_RELATIONS:
            allowed = ", ".join(sorted(r.value for r in _SUPPORTED_RELATIONS))
            raise ValueError(
                f"`neighboring_relation` must be one of {allowed} for this accountant; "
                f"got {relation.value!r}."
            )
        self._relation = relation
        if isinstance(disjoint, str) or isinstance(sequential, str):
            raise TypeError("`disjoint` and `sequential` must be sequences of level names.")
        disjoint = tuple(str(level) for level in disjoint)
        sequential = tuple(str(level) for level in sequential)
        levels = disjoint + sequential
        if len(set(levels)) != len(levels):
            raise ValueError(f"key levels must be distinct, got {levels}.")
        if budget is not None and not isinstance(budget, BUDGET_TYPES):
            allowed = ", ".join(kind.__name__ for kind in BUDGET_TYPES)
            raise IncompatibleGuaranteeError(
                f"`budget` must be one of {allowed} (or None), got {type(budget).__name__}."
            )
        self._budget = budget
        low, high = PLD_DISCRETIZATION_RANGE
        try:
            self._pld_discretization = check_real("pld_discretization", pld_discretization)
        except ValueError:  # NaN or an int beyond the float range
            self._pld_discretization = math.nan
        if not low <= self._pld_discretization <= high:
            raise ValueError(
                f"`pld_discretization` must be in [{low:g}, {high:g}], got {pld_discretization!r}."
            )
        # One user present at every agent (FedUCB footnote 4): agents no longer hold
        # disjoint records, so they compose sequentially (k-fold over agents).
        if relation is NeighboringRelation.USER_AT_ALL_AGENTS:
            parallel_levels = tuple(level for level in disjoint if level != "agent")
        else:
            parallel_levels = disjoint
        self._disjoint, self._levels, self._parallel_levels = disjoint, levels, parallel_levels
        self._keep_draw_rows = bool(keep_draw_rows)
        self._rows = LedgerRows()
        self._running: RunningCells | None = None  # budget check state (issue 23)
        self._tally = CellTally(parallel_levels)  # the cell-size ceiling
        backend = None
        if store is not None:
            backend = open_store(
                store,
                StoreConfig(
                    neighboring_relation=relation.value,
                    disjoint=disjoint,
                    sequential=sequential,
                    budget=budget,
                    keep_draw_rows=self._keep_draw_rows,
                ),
                synchronous=store_synchronous,
                key=store_key,
                expect_head=store_expect_head,
            )
        self._store = StoreLink(backend, self._rows)
        self._ledger = Ledger(
            self._rows,
            disjoint=disjoint,
            sequential=sequential,
            parallel_levels=parallel_levels,
            keep_draw_rows=self._keep_draw_rows,
            refresh=self._store.refresh,
            write_draws=self._append_draws,
        )
        self._kept_plds = KeptPlds(budget, self._pld_discretization)  # (issue 36)
        self._routes = Routes(self._ledger.cells, self._pld_discretization)
        self._brackets = Brackets(self._ledger.cells, self._pld_discretization)
        self._odometer = Odometer(
            budget, cells=self._ledger.cells, routes=self._routes, price=self._price
        )

    # ------------------------------------------------------------------ the parts
    @property
    def neighboring_relation(self) -> NeighboringRelation:
        """The neighboring relation the guarantees refer to (read-only, as in
        dp-accounting: the ledger, the store and every route were built for it)."""
        return self._relation

    @property
    def ledger(self) -> Ledger:
        """What was charged and drawn: :class:`~fedpriv.privacy.ledger.ledger.Ledger`."""
        return self._ledger

    @property
    def routes(self) -> Routes:
        """ε by every route: :class:`~fedpriv.privacy.ledger.pricing.Routes`."""
        return self._routes

    @property
    def brackets(self) -> Brackets:
        """The bracket on the true ε: :class:`~fedpriv.privacy.ledger.pricing.Brackets`."""
        return self._brackets

    @property
    def odometer(self) -> Odometer:
        """The budget and its spend: :class:`~fedpriv.privacy.ledger.budget.Odometer`."""
        return self._odometer

    @property
    def store(self) -> StoreLink:
        """The persistent store: :class:`StoreLink`."""
        return self._store

    # ------------------------------------------------------------------ charging
    def supports(self, event: Any) -> bool:
        """Whether this accountant can account for ``event`` (dp-accounting's
        ``PrivacyAccountant.supports``).

        True exactly when :meth:`spend` would accept the event itself: its type, and
        every type nested in it, has a handler (a ``DpEvent`` is converted under
        :attr:`neighboring_relation` first), and every relation-bound part fits this
        accountant's relation (a :class:`~fedpriv.privacy.accounting.sampling.PoissonSampled`
        event of the other relation family, a k-ary ``RandomizedResponse`` under
        ``add_or_remove_one``). Charges nothing and reads no key, budget or cell
        size: ``spend`` may still refuse a supported event for those.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            Any object.

        Returns
        -------
        bool
            True if the event can be charged to this accountant.

        Examples
        --------
        >>> from fedpriv.privacy import Accountant, PoissonSampled, events
        >>> step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.0),
        ...                       sampling_rate=0.01)
        >>> Accountant(neighboring_relation="add_or_remove_one").supports(step)
        True
        >>> Accountant(neighboring_relation="replace_one").supports(step)
        False
        """
        try:
            _check_handlers(self._as_event(event))
        except (UnsupportedEventError, TypeError, ValueError):
            return False
        return True

    def compose(self, event: Any, count: int = 1) -> Accountant:
        """Charge ``count`` independent releases of ``event`` (dp-accounting's
        ``PrivacyAccountant.compose``); returns the accountant.

        ``compose`` is the dp-accounting-compatible call: no key, so it serves an
        accountant without ``disjoint`` levels (one cell, a dp-accounting ledger
        replayed as it is). :meth:`spend` is the keyed call that the structured
        ledgers need (which agent, arm, epoch a release belongs to). ``count > 1``
        is charged as one ``SelfComposed(event, count)``, which every route prices
        exactly as ``count`` charges of ``event``, in one step.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            The release, as for :meth:`spend`.
        count : int, default 1
            Number of releases, in [1, :data:`~fedpriv.privacy.accounting.events.MAX_COUNT`].

        Returns
        -------
        Accountant
            ``self``, so calls chain as in dp-accounting.

        Raises
        ------
        TypeError
            If ``count`` is not an int.
        ValueError
            If ``count`` is outside [1, MAX_COUNT], or the accountant declares
            ``disjoint`` levels (use :meth:`spend` with a key).
        UnsupportedEventError
            If :meth:`supports` is False for ``event``.
        BudgetExceededError, ResourceLimitError
            As :meth:`spend`; the ledger is unchanged.

        Examples
        --------
        >>> from fedpriv.privacy import Accountant, events
        >>> Accountant().compose(events.Laplace(scale=2.0), count=3).get_epsilon(0.0)
        1.5
        """
        count = check_int_at_least("count", count, 1)
        if count > MAX_COUNT:
            raise ValueError(f"`count` must be <= MAX_COUNT = {MAX_COUNT:,}, got {count:,}.")
        if self._disjoint:
            raise ValueError(
                f"`compose` charges without a key, but this accountant declares the "
                f"disjoint level(s) {list(self._disjoint)}; use spend(event, key=...)."
            )
        event = self._as_event(event)
        if count > 1:
            event = SelfComposed(event=event, count=count)
        self.spend(event)
        return self

    def spend(self, event: Any, *, key: Mapping[str, Any] | None = None) -> None:
        """Charge one release of ``event`` to each cell named by ``key``.

        The charge is atomic: the event and key are validated and the budget checked
        before anything is recorded. ``spend`` is the keyed call (which cell of the
        structured ledger a release is charged to); :meth:`compose` is
        dp-accounting's call, without keys, with a count.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            A ``DpEvent`` is converted by :func:`fedpriv.privacy.accounting.interop.from_dp_event`
            under this accountant's relation. The same event for every cell.
        key : mapping of str to label or 1-D array_like of labels, optional
            One label per declared level; may be omitted when no ``disjoint`` level is
            declared. Arrays charge many cells at once: one 1-D label array per
            level, all of one length ``n`` (length-1 arrays broadcast), charge ``n``
            releases, the ``j``-th to cell ``{level: key[level][j]}``. A label keeps
            its type and value in the ledger, the store and the exports; a list may
            mix label types (``["x", 2]``, issue 38: it is not coerced to the list's
            common NumPy dtype). Two labels name the same cell exactly when they are
            equal as Python dict keys: ``True``, ``1``, ``1.0`` and ``np.int64(1)``
            are one label (as ``{1: a, True: b}`` has one key), ``'1'`` is another;
            every missing label (``None``, NaN) is one label. Merging equal values is
            the sound direction: it can only put more releases in one cell.

        Raises
        ------
        UnsupportedEventError
            If the event type has no handler (or a ``DpEvent`` has no counterpart), or
            a Poisson-sampled event states a relation of the other family.
        ValueError
            If ``key`` names an undeclared level or misses a disjoint level.
        TypeError
            If a key label is not a scalar (``str``, ``int``, ``float``, ``bool`` or
            ``None``): a set or a dict is refused, not read as one label.
        BudgetExceededError
            If the charge would exceed the budget; the ledger is unchanged.
        ResourceLimitError
            If a charged cell would hold more than
            :data:`~fedpriv.privacy.ledger.cells.MAX_CELL_RELEASES` releases (with or
            without a budget: a query could not price it), counting a
            ``SelfComposed``/``Composed`` event as the releases it describes.

        Whatever is raised (``KeyboardInterrupt`` included), the charges, every route
        and the store are as before the call.
        """
        if self._store.backend is None:
            self._commit_charge(*self._prepare_charge(event, key))
            return
        self._store._write_charge(lambda: self._prepare_charge(event, key), self._commit_charge)

    # ------------------------------------------------------------------ queries
    def get_epsilon(self, target_delta: float, *, where: Mapping[str, Any] | None = None) -> float:
        """Tightest valid upper bound on ε at ``target_delta`` (dp-accounting's verb).

        The smallest route of ``routes.tightest`` (every route: :attr:`routes`; the
        lower end of the bracket: :attr:`brackets`).

        Parameters
        ----------
        target_delta : float
            In [0, 1). Required, as in dp-accounting's ``get_epsilon(target_delta)``:
            a default of 0 would silently answer ∞ for any Gaussian ledger. Pass
            ``0.0`` explicitly for pure ε. (The same holds for every query of
            :attr:`routes` and :attr:`brackets`.)
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        float
            ε in nats.

        Raises
        ------
        TypeError
            If ``target_delta`` is missing or not a real number.
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        return self._routes.tightest(target_delta, where=where)[1]

    def get_delta(self, target_epsilon: float, *, where: Mapping[str, Any] | None = None) -> float:
        """Smallest δ such that the ledger is (``target_epsilon``, δ)-DP (upper bound).

        0 only where it is proven (``target_epsilon`` at least the exact sum of the
        releases' top losses); otherwise at least the smallest positive double
        (5e-324), the rounded-up value of any δ that underflows.

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        float
            δ in [0, 1] (1 if an overflow makes the bound vacuous).

        Raises
        ------
        TypeError
            If ``target_epsilon`` is not a real number.
        ValueError
            If ``target_epsilon`` is negative or NaN, or ``where`` names an
            undeclared level.
        """
        target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
        return delta_of(self._ledger.cells(where=where), target_epsilon, self._pld_discretization)

    @classmethod
    def open(
        cls,
        store: str | os.PathLike,
        *,
        key: bytes | None = None,
        expect_head: str | LedgerHead | None = None,
        **options: Any,
    ) -> Accountant:
        """Reopen the accountant of an existing ledger store with its stored configuration.

        Parameters
        ----------
        store : str or PathLike
            A file written by ``Accountant(..., store=store)``.
        key : bytes, optional
            The store's HMAC key, if it was created with one (``store_key``).
        expect_head : str or LedgerHead, optional
            A receipt kept elsewhere (``store.last_receipt``, or the head ``fedpriv
            account --verify`` prints): the store must extend it.
        **options
            ``pld_discretization`` and ``store_synchronous``.

        Returns
        -------
        Accountant
            The accountant with the stored relation, levels, budget and charges.

        Raises
        ------
        FileNotFoundError
            If ``store`` does not exist.
        StoreFormatError
            If it is not a ledger store this version can read.
        LedgerCorruptedError
            If it fails its integrity checks or does not extend ``expect_head``.
        StoreMismatchError
            If it is keyed and ``key`` is missing, or unkeyed and ``key`` is given.
        """
        opened = open_store(store, key=key, expect_head=expect_head)
        config = opened.config
        opened.close()
        return cls(
            neighboring_relation=config.neighboring_relation,
            disjoint=config.disjoint,
            sequential=config.sequential,
            budget=config.budget,
            keep_draw_rows=config.keep_draw_rows,
            store=store,
            store_key=key,
            store_expect_head=expect_head,
            **options,
        )

    # ------------------------------------------------------------------ internals
    def _as_event(self, event: Any) -> Event:
        """``event``, converted from dp-accounting if needed, checked against the
        relation when it is Poisson-sampled (its guarantee names a relation)."""
        if type(event).__module__.startswith("dp_accounting"):
            from fedpriv.privacy.accounting.interop import from_dp_event  # imports dp-accounting

            event = from_dp_event(event, neighboring_relation=self._relation)
        check_sampling_relation(event, self._relation)
        return event

    def _prepare_charge(self, event: Any, keys: Mapping[str, Any] | None):
        """Validate and price a charge without touching the ledger.

        Returns ``(event, is_new, (event_id, arrays), running)`` for :meth:`_commit_charge`
        (``running``: the budget check's new running cells, None without a budget).
        Every exception (a refused budget, an arithmetic error while pricing, a
        ``KeyboardInterrupt``) leaves the accountant as it was, since nothing is
        mutated here: the budget is checked on a candidate list of charges.
        """
        rows = self._rows
        arrays = normalise_keys(keys, self._disjoint, self._levels)
        event = self._as_event(event)
        _check_handlers(event)  # UnsupportedEventError for an unknown type, nested too
        self._tally.check(event, arrays, rows.charges, rows.events)
        event_id = rows.event_ids.get(event)
        is_new = event_id is None
        if is_new:
            event_id = len(rows.events)
        charge = (event_id, arrays)
        budget = self._budget
        if budget is None:
            return event, is_new, charge, None
        if isinstance(budget, (ZCDP, GaussianDP)):
            candidate_events = rows.events + [event] if is_new else rows.events
            compositions = compose_cells(
                [*rows.charges, charge], len(candidate_events), self._parallel_levels, None
            )
            name, limit = budget_parameter(budget)
            spent = guarantee_spent(budget, cell_list(compositions, candidate_events))
            if spent > limit * (1 + RELATIVE_TOLERANCE):
                raise BudgetExceededError(
                    f"charging {event} would raise {name} to {spent:.6g} > budget "
                    f"{limit:.6g} ({type(budget).__name__}); nothing was released."
                )
            return event, is_new, charge, None
        # Issue 23: a cheap sound route on the running cells accepts most charges in
        # O(1); otherwise the exact check runs on the running compositions, which are
        # the distinct cells a full re-composition would build (same decision).
        running = self._running_cells()
        accepted, update = running.price(event_id, event, arrays, len(rows.charges))
        if not accepted:  # issue 36: the kept PLDs accept in one composition per cell
            candidate_events = rows.events + [event] if is_new else rows.events
            accepted = self._kept_plds.accepts(running, update, candidate_events)
        if not accepted:
            budget_delta = budget.delta if isinstance(budget, ApproxDP) else 0.0
            cells = [
                [(candidate_events[j], count) for j, count in composition]
                for composition in running.compositions(update)
            ]
            spent = self._tightest_of(cells, budget_delta)[1]
            if spent > budget.epsilon * (1 + RELATIVE_TOLERANCE):
                raise BudgetExceededError(
                    f"charging {event} would raise ε to {spent:.6g} > budget "
                    f"{budget.epsilon:.6g}; nothing was released."
                )
        return event, is_new, charge, update

    def _tightest_of(self, cells: list, target_delta: float) -> tuple[str, float]:
        """The budget check's exact price: ``(route, epsilon)`` of the smallest route."""
        return tightest_of(cells, target_delta, self._pld_discretization)

    def _price(self, event: Any, key: Mapping[str, Any] | None) -> None:
        """Price a charge on the whole (refreshed) ledger without making it."""
        self._store.refresh()
        self._prepare_charge(event, key)

    def _running_cells(self) -> RunningCells:
        """The running compositions of the budget check, caught up with the ledger."""
        if self._running is None:
            self._running = RunningCells(self._parallel_levels, self._budget, MAX_CELL_RELEASES)
        self._running.catch_up(self._rows.charges, self._rows.events)
        return self._running

    def _commit_charge(
        self, event: Event, is_new: bool, charge: tuple, running: tuple | None = None
    ) -> None:
        """Record a prepared charge: the only mutation of a charge, with no call that
        can fail in between (an interned event without a charge is invisible). The
        running cells follow; if that is cut short they catch up at the next charge."""
        rows = self._rows
        if is_new:
            rows.events.append(event)
            rows.event_ids[event] = charge[0]
        rows.charges.append(charge)  # the charge becomes visible here, in one step
        rows.bump()
        if running is not None and self._running is not None:
            self._running.fold(running)
            self._kept_plds.fold(running)

    def _append_draws(
        self,
        *,
        keys: dict[str, np.ndarray],
        node: np.ndarray,
        level: np.ndarray,
        scale: float,
        l1_sensitivity: float,
    ) -> None:
        """Append already-validated draw rows (1-D arrays of one length); O(1)."""
        n = node.size
        block = None
        if self._keep_draw_rows:
            block = dict(keys)
            block["node"] = node
            block["level"] = level
            block["scale"] = (float(scale), n)
            block["l1_sensitivity"] = (float(l1_sensitivity), n)
        if self._store.backend is None:
            self._rows.add_draws(n, block)
            return
        self._store._write_draws(n, block)


class StoreLink:
    """An accountant's persistent store, or its absence (``accountant.store``).

    With ``store=`` the accountant keeps its ledger of record in a
    :class:`~fedpriv.privacy.ledger.store.LedgerStore` (SQLite, or PostgreSQL through
    :mod:`fedpriv.privacy.ledger.postgres`) and composes in memory. This object holds
    that connection: it reads the rows other processes committed, in commit order, into
    the accountant's :class:`~fedpriv.privacy.ledger.ledger.LedgerRows`, and writes each
    charge or block of draws in one store transaction that first reads those rows (so
    the budget is checked on the whole shared ledger), recording it in memory only once
    it is committed. Every write gives a receipt (:attr:`last_receipt`).

    Parameters
    ----------
    backend : LedgerStore, optional
        The open store; None for an accountant kept in memory only (then
        :meth:`refresh` and :meth:`close` do nothing).
    rows : LedgerRows
        The accountant's in-memory rows, caught up with the store here and on every
        :meth:`refresh`.
    """

    def __init__(self, backend: LedgerStore | None, rows: LedgerRows) -> None:
        self._backend = backend
        self._rows = rows
        self._seq = (0, 0)  # last (charge, draw) rows of the store read into memory
        self._last_receipt: LedgerHead | None = None
        if backend is not None:
            self._sync()

    @property
    def backend(self) -> LedgerStore | None:
        """The open :class:`~fedpriv.privacy.ledger.store.LedgerStore` (None without a store)."""
        return self._backend

    @property
    def last_receipt(self) -> LedgerHead | None:
        """The receipt of this accountant's last acknowledged charge or block of draws.

        Row counts and chain head: keep it elsewhere and pass it as ``expect_head`` to
        ``Accountant.open`` to detect a rewound or replaced file. None before any
        write and without a store.
        """
        return self._last_receipt

    def refresh(self) -> None:
        """Read the charges other processes committed to the store (queries do this)."""
        if self._backend is not None and self._backend.changed():
            self._sync()

    def close(self) -> None:
        """Close the store: queries answer from memory, charges raise StoreError."""
        if self._backend is not None:
            self._backend.close()

    def _write_charge(self, prepare: Callable[[], tuple], record: Callable[..., None]) -> None:
        """Write one charge in one store transaction, then record it in memory.

        The accountant's write path: take the write lock, read the rows other
        processes committed, ``prepare()`` (validate and price on the whole ledger),
        insert, commit; only then ``record(*prepared)``. Whatever is raised before the
        commit rolls the transaction back and records nothing.

        Parameters
        ----------
        prepare : callable
            Returns ``(event, is_new, (event_id, keys), running)``; raises to refuse.
        record : callable
            Called with the prepared tuple once it is committed.
        """
        backend = self._backend
        backend.begin()
        try:
            self._sync()
            prepared = prepare()
            seq = backend.insert_charge(prepared[0], prepared[2][1])
            backend.commit()
        except BaseException:
            backend.rollback()
            raise
        # Committed to the store: record it in memory (one append, then the row number).
        record(*prepared)
        self._seq = (seq, self._seq[1])
        self._last_receipt = backend.head()

    def _write_draws(self, n: int, block: dict[str, Any] | None) -> None:
        """Write one block of draw rows in one store transaction, then record it.

        Parameters
        ----------
        n : int
            Number of draws, >= 0.
        block : dict, optional
            The validated draw rows (None when draw rows are not kept).
        """
        backend = self._backend
        backend.begin()
        try:
            self._sync()
            seq = backend.insert_draws(n, block)
            backend.commit()
        except BaseException:
            backend.rollback()
            raise
        self._rows.add_draws(n, block)
        self._seq = (self._seq[0], seq)
        self._last_receipt = backend.head()

    def _sync(self) -> None:
        """Append the store's rows this process has not read yet, in commit order."""
        rows = self._rows
        charges, draws = self._backend.read_since(*self._seq)
        for _, event, arrays in charges:
            rows.charges.append((rows.intern(event), arrays))
        for _, n, block in draws:
            rows.add_draws(n, block)
        if charges:
            rows.bump()
        self._seq = (
            charges[-1][0] if charges else self._seq[0],
            draws[-1][0] if draws else self._seq[1],
        )


def _check_handlers(event: Any) -> None:
    """Raise UnsupportedEventError unless ``event`` and every event nested in it
    (``SelfComposed``, ``Composed``, a wrapper's ``event``) has a handler, so that no
    charge is accepted that a query could not price."""
    stack = [event]
    while stack:
        item = stack.pop()
        handlers_for(item)
        if type(item) is Composed:
            stack.extend(item.events)
            continue
        inner = getattr(item, "event", None)  # SelfComposed, PoissonSampled, ...
        if inner is not None and hasattr(type(inner), "__dataclass_params__"):
            stack.append(inner)
