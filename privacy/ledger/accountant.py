"""The typed accountant: what every release costs, composed by structure.

A release is an *event* (:mod:`fedpriv.privacy.accounting.events`) charged with a *key*: a mapping from
key levels (``"trial"``, ``"agent"``, ``"arm"``, ``"phase"``, ...) to labels. The
accountant is told which levels partition the data under its neighboring relation
(``disjoint``): one record lives in exactly one cell of those levels, so cells compose
in **parallel** (the guarantee is the worst cell) and events inside a cell compose
**sequentially**. Tree depth is part of the :class:`~fedpriv.privacy.accounting.events.LaplaceTree` event
itself (a record sits in ``event.depth = floor(log2 R) + 1`` nodes of the ``R`` released
prefixes). Post-processing is free and is
never charged.

Routes
------
Every cell is evaluated by each route of :mod:`fedpriv.privacy.accounting.routes` — ``pure`` (exact sum
of pure ε, finite at δ = 0), ``basic``, ``advanced`` (Dwork–Rothblum–Vadhan),
``optimal`` (Kairouz–Oh–Viswanath, log space), ``rdp``, ``zcdp``, ``gdp`` (exact for
Gaussian mechanisms) and ``pld`` (dp-accounting, pessimistic) — and the worst cell is
reported. Every route is an upper bound and is capped by basic composition;
:meth:`Accountant.lower_bound` gives the optimistic PLD, the lower end of the bracket.
Sensitivities are declared by the events for the accountant's relation, so no route
rescales them (google/differential-privacy#378).

``get_epsilon`` returns the tightest valid route; ``routes`` returns all of them.
Where it uses dp-accounting's names it has dp-accounting's shape (``PrivacyAccountant``):
``neighboring_relation``, ``supports(event)``, ``compose(event, count=1)`` returning the
accountant, and ``get_epsilon(target_delta)`` with ``target_delta`` required. ``spend``
is the keyed charge of the structured ledger.
The ledger has one row per noise draw and is exported as a pandas DataFrame.

Length: one class, :class:`Accountant`: atomic, budgeted charging and the queries over
its ledger (every route, the tightest, the bracket, per-key spend). Splitting one
object's methods across modules would scatter its invariants; the route arithmetic
(:mod:`~fedpriv.privacy.accounting.routes`), the handlers and the persistent store
(:mod:`~fedpriv.privacy.ledger.store`) already live elsewhere.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    MAX_COUNT,
    Composed,
    Event,
    NonPrivate,
    SelfComposed,
    event_shape,
)
from fedpriv.privacy.accounting.guarantees import (
    RELATIVE_TOLERANCE,
    ZCDP,
    ApproxDP,
    GaussianDP,
    PureDP,
)
from fedpriv.privacy.accounting.pld_incremental import KeptPlds
from fedpriv.privacy.accounting.routes import (
    ROUTES,
    compose_delta,
    compose_gdp_mu,
    compose_routes,
    compose_zcdp_rho,
    handlers_for,
    pld_lower_bound,
)
from fedpriv.privacy.accounting.sampling import check_sampling_relation
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_real
from fedpriv.privacy.errors import (
    BudgetExceededError,
    IncompatibleGuaranteeError,
    ResourceLimitError,
    UnsupportedEventError,
)
from fedpriv.privacy.ledger.running import RunningCells
from fedpriv.privacy.ledger.store import LedgerHead, LedgerStore, StoreConfig, StoredLedgerMixin
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

if TYPE_CHECKING:  # pandas is imported where a frame is built (import time, issue 23)
    import pandas as pd

__all__ = [
    "BUDGET_TYPES",
    "MAX_CELL_RELEASES",
    "PLD_DISCRETIZATION_RANGE",
    "RELATIVE_TOLERANCE",
    "Accountant",
    "event_epsilon",
]


#: Allowed ``pld_discretization`` (inclusive).
PLD_DISCRETIZATION_RANGE = (1e-6, 1.0)
#: Most releases one cell may hold when a query prices it (:data:`fedpriv.privacy.
#: events.MAX_COUNT`): beyond it the PLD and optimal routes overflow or allocate
#: without bound, so the query raises :class:`~fedpriv.privacy.errors.
#: ResourceLimitError` instead, and a charge that would fill a cell beyond it is
#: refused with that error (budget or not), so every accepted ledger can be priced.
MAX_CELL_RELEASES = MAX_COUNT

#: Guarantee types a budget may have. ``PureDP``/``ApproxDP`` budgets are checked on
#: the tightest ε route at the budget's δ; a ``ZCDP`` budget on the cell's ρ
#: (:func:`~fedpriv.privacy.accounting.routes.compose_zcdp_rho`, ρ adds: Bun & Steinke
#: 2016, Lemma 2.3); a ``GaussianDP`` budget on the cell's μ
#: (:func:`~fedpriv.privacy.accounting.routes.compose_gdp_mu`, √Σμ²: Dong, Roth & Su
#: 2019, Cor. 3.3). An RDP curve or a PLD is not a budget (no one number to exhaust).
BUDGET_TYPES = (PureDP, ApproxDP, ZCDP, GaussianDP)

_SUPPORTED_RELATIONS = frozenset(NeighboringRelation)
#: Internal label column of a charge made without any key level (one release).
_SINGLE_CELL = "__single_cell__"


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


class Accountant(StoredLedgerMixin):
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
        See :data:`BUDGET_TYPES`.
    pld_discretization : float
        dp-accounting's ``value_discretization_interval`` for the PLD route, in
        :data:`PLD_DISCRETIZATION_RANGE` (finer grids need more memory than a query
        should take; coarser ones give vacuous bounds).
    keep_draw_rows : bool
        Keep one ledger row per noise draw (default). ``False`` only counts draws
        (:attr:`n_draws`), for audits that run a mechanism millions of times.
    store : str or PathLike, optional
        Keep the ledger in this SQLite file (:mod:`fedpriv.privacy.ledger.store`), or in
        the PostgreSQL database of a ``postgresql://`` URL
        (:mod:`fedpriv.privacy.ledger.postgres`): created if absent, restored if present. Every charge is one transaction; the budget is
        enforced over the charges of every process that opens the file; queries see
        them too. The file must have been created with the same ``neighboring_relation``,
        ``disjoint``, ``sequential``, ``budget`` and ``keep_draw_rows``
        (:meth:`Accountant.open` reopens it without restating them). Call
        :meth:`close` when done.
    store_synchronous : {"full", "normal"}
        ``"full"`` (default): a charge returns once it is on disk, so it survives a
        power cut; ``"normal"``: it survives a killed process only, and is faster.
    store_key : bytes, optional
        HMAC key of the store, kept outside it (at least 32 bytes): a store created
        with a key can be opened only with it, and nobody without it can forge its
        rows or configuration (:mod:`fedpriv.privacy.ledger.store`).
    store_expect_head : str or LedgerHead, optional
        A receipt kept elsewhere (:attr:`last_receipt`): the store must extend it, or
        :class:`~fedpriv.privacy.errors.LedgerCorruptedError` names the mismatch.

    Attributes
    ----------
    last_receipt : LedgerHead or None
        With a store: the receipt of this accountant's last acknowledged charge or
        block of draws (row counts and chain head; keep it elsewhere and pass it as
        ``expect_head`` to detect a rewound or replaced file). None before any write
        and without a store.

    Raises
    ------
    ValueError
        If ``neighboring_relation`` is unknown or not supported, a level is repeated or
        ``pld_discretization`` is outside :data:`PLD_DISCRETIZATION_RANGE`.
    IncompatibleGuaranteeError
        If ``budget`` is not one of :data:`BUDGET_TYPES` (a ``TypeError``).
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
        self.neighboring_relation = parse_relation(neighboring_relation)
        if self.neighboring_relation not in _SUPPORTED_RELATIONS:
            allowed = ", ".join(sorted(r.value for r in _SUPPORTED_RELATIONS))
            raise ValueError(
                f"`neighboring_relation` must be one of {allowed} for this accountant; "
                f"got {self.neighboring_relation.value!r}."
            )
        if isinstance(disjoint, str) or isinstance(sequential, str):
            raise TypeError("`disjoint` and `sequential` must be sequences of level names.")
        self.disjoint = tuple(str(level) for level in disjoint)
        self.sequential = tuple(str(level) for level in sequential)
        levels = self.disjoint + self.sequential
        if len(set(levels)) != len(levels):
            raise ValueError(f"key levels must be distinct, got {levels}.")
        self.levels = levels
        if budget is not None and not isinstance(budget, BUDGET_TYPES):
            allowed = ", ".join(kind.__name__ for kind in BUDGET_TYPES)
            raise IncompatibleGuaranteeError(
                f"`budget` must be one of {allowed} (or None), got {type(budget).__name__}."
            )
        self.budget = budget
        low, high = PLD_DISCRETIZATION_RANGE
        try:
            self.pld_discretization = check_real("pld_discretization", pld_discretization)
        except ValueError:  # NaN or an int beyond the float range
            self.pld_discretization = math.nan
        if not low <= self.pld_discretization <= high:
            raise ValueError(
                f"`pld_discretization` must be in [{low:g}, {high:g}], got {pld_discretization!r}."
            )
        self._events: list[Event] = []  # distinct events, index = event id
        self._event_ids: dict[Event, int] = {}
        self._charges: list[tuple[int, dict[str, np.ndarray]]] = []
        self._draws: list[dict[str, np.ndarray]] = []
        self._cells_cache: dict[tuple, tuple[np.ndarray, list[Event]]] = {}
        self._running: RunningCells | None = None  # budget check state (issue 23)
        self._kept_plds = KeptPlds(self.budget, self.pld_discretization)  # (issue 36)
        self._version = 0  # changes on every append or removal of a charge
        # Releases per parallel cell, folded in from self._charges[:n] (built lazily,
        # once the total could exceed MAX_CELL_RELEASES): [n, total bound, cells].
        self._cell_tally: list = [0, 0, None, None]
        # One user present at every agent (FedUCB footnote 4): agents no longer hold
        # disjoint records, so they compose sequentially (k-fold over agents).
        if self.neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS:
            self.parallel_levels = tuple(level for level in self.disjoint if level != "agent")
        else:
            self.parallel_levels = self.disjoint
        self.keep_draw_rows = bool(keep_draw_rows)
        self._n_draws = 0
        self._store: LedgerStore | None = None
        self._store_seq = (0, 0)  # last (charge, draw) rows of the store read into memory
        self.last_receipt: LedgerHead | None = None
        if store is not None:
            self._store = LedgerStore.open(
                store,
                StoreConfig(
                    neighboring_relation=self.neighboring_relation.value,
                    disjoint=self.disjoint,
                    sequential=self.sequential,
                    budget=self.budget,
                    keep_draw_rows=self.keep_draw_rows,
                ),
                synchronous=store_synchronous,
                key=store_key,
                expect_head=store_expect_head,
            )
            self._sync()

    # ------------------------------------------------------------------ charging
    def _normalise_keys(self, keys: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
        if keys is None:
            keys = {}
        if not isinstance(keys, Mapping):
            raise TypeError(
                f"`key` must be a mapping of level -> label, got {type(keys).__name__}."
            )
        unknown = sorted((level for level in keys if level not in self.levels), key=repr)
        if unknown:
            raise ValueError(
                f"key level(s) {unknown} not declared; declared levels are {list(self.levels)}."
            )
        missing = [level for level in self.disjoint if level not in keys]
        if missing:
            raise ValueError(f"key is missing the disjoint level(s) {missing}.")
        arrays = {level: _label_array(level, keys[level]) for level in keys}
        if not arrays:  # no structure: one charge to the single cell
            return {_SINGLE_CELL: np.zeros(1, dtype=np.int64)}
        n = max(a.size for a in arrays.values())
        if any(a.size not in (1, n) for a in arrays.values()):
            raise ValueError("all key arrays must have the same length (or length 1).")
        arrays = {k: (np.repeat(a, n) if a.size == 1 and n > 1 else a) for k, a in arrays.items()}
        return arrays

    def _bump(self) -> None:
        self._version += 1
        self._cells_cache.clear()

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
        if self.disjoint:
            raise ValueError(
                f"`compose` charges without a key, but this accountant declares the "
                f"disjoint level(s) {list(self.disjoint)}; use spend(event, key=...)."
            )
        event = self._as_event(event)
        if count > 1:
            event = SelfComposed(event=event, count=count)
        self.spend(event)
        return self

    def spend(self, event: Event, *, key: Mapping[str, Any] | None = None) -> None:
        """Charge one release of ``event`` to the cell named by ``key``.

        The charge is atomic: the event and key are validated and the budget checked
        before anything is recorded. ``spend`` is the keyed call (which cell of the
        structured ledger a release is charged to); :meth:`compose` is
        dp-accounting's call, without keys, with a count.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            A ``DpEvent`` is converted by :func:`fedpriv.privacy.accounting.interop.from_dp_event`
            under this accountant's relation.
        key : mapping of str to label, optional
            One label per declared level; may be omitted when no ``disjoint`` level is
            declared. A label keeps its type and value in the ledger, the store and
            the exports. Two labels name the same cell exactly when they are equal as
            Python dict keys: ``True``, ``1``, ``1.0`` and ``np.int64(1)`` are one
            label (as ``{1: a, True: b}`` has one key), ``'1'`` is another; every
            missing label (``None``, NaN) is one label. Merging equal values is the
            sound direction: it can only put more releases in one cell.

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
            If the charge would exceed ``budget``; the ledger is unchanged.
        ResourceLimitError
            If a charged cell would hold more than :data:`MAX_CELL_RELEASES`
            releases (with or without a budget: a query could not price it), counting
            a ``SelfComposed``/``Composed`` event as the releases it describes.

        Whatever is raised (``KeyboardInterrupt`` included), the charges, every route
        and the store are as before the call.
        """
        self.spend_many(event, keys=key)

    def _as_event(self, event: Any) -> Event:
        """``event``, converted from dp-accounting if needed, checked against the
        relation when it is Poisson-sampled (its guarantee names a relation)."""
        if type(event).__module__.startswith("dp_accounting"):
            from fedpriv.privacy.accounting.interop import from_dp_event  # imports dp-accounting

            event = from_dp_event(event, neighboring_relation=self.neighboring_relation)
        check_sampling_relation(event, self.neighboring_relation)
        return event

    def spend_many(self, event: Event, *, keys: Mapping[str, Any] | None = None) -> None:
        """Charge one release of ``event`` to each of many cells at once.

        Parameters
        ----------
        event : Event
            The same event for every cell.
        keys : mapping of str to array_like
            One 1-D label array per level, all of one length ``n`` (length-1 arrays
            broadcast): ``n`` releases, the ``j``-th charged to cell
            ``{level: keys[level][j]}``. Labels are scalars (``str``, ``int``,
            ``float``, ``bool`` or ``None``); a set or a dict is refused, not read as
            one label. A list may mix label types (``["x", 2]``): each label keeps
            its type and names the cell it names in :meth:`spend` (issue 38; it is
            not coerced to the list's common NumPy dtype).

        Raises
        ------
        Same as :meth:`spend`.
        """
        if self._store is None:
            self._commit_charge(*self._prepare_charge(event, keys))
            return
        store = self._store
        store.begin()
        try:
            self._sync()
            prepared = self._prepare_charge(event, keys)
            seq = store.insert_charge(prepared[0], prepared[2][1])
            store.commit()
        except BaseException:
            store.rollback()
            raise
        # Committed to the store: record it in memory (one append, then the row number).
        self._commit_charge(*prepared)
        self._store_seq = (seq, self._store_seq[1])
        self.last_receipt = store.head()

    def _prepare_charge(self, event: Any, keys: Mapping[str, Any] | None):
        """Validate and price a charge without touching the ledger.

        Returns ``(event, is_new, (event_id, arrays), running)`` for :meth:`_commit_charge`
        (``running``: the budget check's new running cells, None without a budget).
        Every exception (a refused budget, an arithmetic error while pricing, a
        ``KeyboardInterrupt``) leaves the accountant as it was, since nothing is
        mutated here: the budget is checked on a candidate list of charges.
        """
        arrays = self._normalise_keys(keys)
        event = self._as_event(event)
        _check_handlers(event)  # UnsupportedEventError for an unknown type, nested too
        self._check_charge_size(event, arrays)
        event_id = self._event_ids.get(event)
        is_new = event_id is None
        if is_new:
            event_id = len(self._events)
        charge = (event_id, arrays)
        if self.budget is None:
            return event, is_new, charge, None
        if isinstance(self.budget, (ZCDP, GaussianDP)):
            candidate_events = self._events + [event] if is_new else self._events
            compositions = _compose_cells(
                [*self._charges, charge], len(candidate_events), self.parallel_levels, None
            )
            name, limit = _budget_parameter(self.budget)
            spent = _guarantee_spent(self.budget, _cell_list(compositions, candidate_events))
            if spent > limit * (1 + RELATIVE_TOLERANCE):
                raise BudgetExceededError(
                    f"charging {event} would raise {name} to {spent:.6g} > budget "
                    f"{limit:.6g} ({type(self.budget).__name__}); nothing was released."
                )
            return event, is_new, charge, None
        # Issue 23: a cheap sound route on the running cells accepts most charges in
        # O(1); otherwise the exact check runs on the running compositions, which are
        # the distinct cells a full re-composition would build (same decision).
        running = self._running_cells()
        accepted, update = running.price(event_id, event, arrays, len(self._charges))
        if not accepted:  # issue 36: the kept PLDs accept in one composition per cell
            candidate_events = self._events + [event] if is_new else self._events
            accepted = self._kept_plds.accepts(running, update, candidate_events)
        if not accepted:
            budget_delta = self.budget.delta if isinstance(self.budget, ApproxDP) else 0.0
            cells = [
                [(candidate_events[j], count) for j, count in composition]
                for composition in running.compositions(update)
            ]
            spent = self._tightest_of(cells, budget_delta)[1]
            if spent > self.budget.epsilon * (1 + RELATIVE_TOLERANCE):
                raise BudgetExceededError(
                    f"charging {event} would raise ε to {spent:.6g} > budget "
                    f"{self.budget.epsilon:.6g}; nothing was released."
                )
        return event, is_new, charge, update

    def _running_cells(self) -> RunningCells:
        """The running compositions of the budget check, caught up with the ledger."""
        if self._running is None:
            self._running = RunningCells(self.parallel_levels, self.budget, MAX_CELL_RELEASES)
        self._running.catch_up(self._charges, self._events)
        return self._running

    def _check_charge_size(self, event: Event, arrays: dict[str, np.ndarray]) -> None:
        """Refuse a charge that would put more than :data:`MAX_CELL_RELEASES` releases
        in one cell (with or without a budget), so that no accepted ledger has a cell
        its queries refuse to price.

        O(1) while the whole ledger holds fewer releases than the ceiling; beyond it,
        an upper bound on the fullest cell (the sum of each charge's fullest cell,
        counted in C for integer labels) decides while it leaves room, and only when it
        does not is a tally of releases per cell (over :attr:`parallel_levels`) built
        once and then updated with the charges appended since, O(rows) per charge.
        Only the tally (a cache of the recorded charges) is written; an exception while
        updating it drops it, to be rebuilt.
        """
        releases = event_shape(event)[1]
        rows = max(a.size for a in arrays.values())
        tally = self._cell_tally
        try:
            for event_id, recorded in self._charges[tally[0] :]:
                _fold(tally, self._events[event_id], recorded, self.parallel_levels)
                tally[0] += 1
            if tally[1] + releases * rows <= MAX_CELL_RELEASES:
                return
            # tally[3] bounds the fullest cell from above (each charge adds its fullest
            # cell's releases): while that bound leaves room, no cell can pass the
            # ceiling and no per-cell count is kept (audits charge 10⁶ new cells per
            # batch; counting each in Python cost seconds per charge).
            if tally[3] is None:  # first time past the ceiling: bound the fullest cell
                self._refold(tally, cells=False)
            if (
                tally[3] + releases * _max_cell_rows(arrays, self.parallel_levels)
                <= MAX_CELL_RELEASES
            ):
                return
            if tally[2] is None:  # the bound is too loose: count every cell
                self._refold(tally, cells=True)
        except BaseException:
            self._cell_tally = [0, 0, None, None]
            raise
        for cell, k in _cell_counts(arrays, self.parallel_levels).items():
            held = tally[2].get(cell, 0)
            if held + k * releases > MAX_CELL_RELEASES:
                raise ResourceLimitError(
                    f"charging {event} would put {held + k * releases:,} releases in the "
                    f"cell {dict(zip(self.parallel_levels, cell))}, more than "
                    f"MAX_CELL_RELEASES = {MAX_CELL_RELEASES:,} that a query prices; "
                    "nothing was charged. Split the ledger over a disjoint key level or "
                    "charge a coarser event."
                )

    def _refold(self, tally: list, *, cells: bool) -> None:
        """Rebuild the size tally over every recorded charge, with the fullest-cell
        bound and, if ``cells``, the exact count per cell."""
        tally[:] = [0, 0, {} if cells else None, 0]
        for event_id, recorded in self._charges:
            _fold(tally, self._events[event_id], recorded, self.parallel_levels)
            tally[0] += 1

    def _commit_charge(
        self, event: Event, is_new: bool, charge: tuple, running: tuple | None = None
    ) -> None:
        """Record a prepared charge: the only mutation of a charge, with no call that
        can fail in between (an interned event without a charge is invisible). The
        running cells follow; if that is cut short they catch up at the next charge."""
        if is_new:
            self._events.append(event)
            self._event_ids[event] = charge[0]
        self._charges.append(charge)  # the charge becomes visible here, in one step
        self._bump()
        if running is not None and self._running is not None:
            self._running.fold(running)
            self._kept_plds.fold(running)

    def _event_id(self, event: Event) -> int:
        """Id of ``event``, interning it (used when reading rows from the store)."""
        if event not in self._event_ids:
            self._event_ids[event] = len(self._events)
            self._events.append(event)
        return self._event_ids[event]

    def would_exceed(self, event: Event, *, key: Mapping[str, Any]) -> bool:
        """Whether charging ``event`` to ``key`` would exceed the budget.

        Changes nothing, whatever it raises: the charge is priced on a candidate
        ledger. Raises what :meth:`spend` raises for an invalid event or key.

        Parameters
        ----------
        event : Event or dp_accounting.DpEvent
            The release to price, as for :meth:`spend`.
        key : mapping of str to label
            One label per declared level, as for :meth:`spend`.

        Returns
        -------
        bool
            True if :meth:`spend` would raise ``BudgetExceededError``; always False
            without a budget.
        """
        if self.budget is None:
            return False
        self._refresh()
        try:
            self._prepare_charge(event, key)
        except BudgetExceededError:
            return True
        return False

    def record_draws(
        self, *, keys: Mapping[str, Any], node: Any, level: Any, scale: float, l1_sensitivity: float
    ) -> None:
        """Append ledger rows, one per noise draw, for draws already charged.

        Mechanisms call this for the draws of an event they charged beforehand (for a
        tree: when a node's memoised noise is drawn). Appending is O(1).

        Parameters
        ----------
        keys : mapping of str to label or array of labels
            One label (or a 1-D array of labels, one per draw) per declared level.
        node : int or array of int64, shape (n_draws,)
            Index of the tree node (or release) each draw belongs to.
        level : int or array of int64, shape (n_draws,)
            Tree level of each draw (0 for the leaves or a flat release).
        scale : float
            Laplace scale b (or Gaussian stddev σ) of the draws, in units of the
            released statistic.
        l1_sensitivity : float
            Sensitivity Δ of the released statistic per neighboring step.
        """
        arrays = self._normalise_keys(keys)
        n = max([a.size for a in arrays.values()] + [np.size(node)])
        arrays = {k: (np.repeat(a, n) if a.size == 1 and n > 1 else a) for k, a in arrays.items()}
        self._append_draws(
            keys=arrays,
            node=np.broadcast_to(np.asarray(node, dtype=np.int64), (n,)),
            level=np.broadcast_to(np.asarray(level, dtype=np.int64), (n,)),
            scale=scale,
            l1_sensitivity=l1_sensitivity,
        )

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
        if self.keep_draw_rows:
            block = dict(keys)
            block["node"] = node
            block["level"] = level
            block["scale"] = (float(scale), n)
            block["l1_sensitivity"] = (float(l1_sensitivity), n)
        if self._store is None:
            self._add_draws(n, block)
            return
        store = self._store
        store.begin()
        try:
            self._sync()
            seq = store.insert_draws(n, block)
            store.commit()
        except BaseException:
            store.rollback()
            raise
        self._add_draws(n, block)
        self._store_seq = (self._store_seq[0], seq)
        self.last_receipt = store.head()

    def _add_draws(self, n: int, block: dict[str, Any] | None) -> None:
        """Append already-written draw rows."""
        if block is not None:
            self._draws.append(block)
        self._n_draws += n

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
            A receipt kept elsewhere (:attr:`last_receipt`, or the head ``fedpriv
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
        opened = LedgerStore.open(store, key=key, expect_head=expect_head)
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

    # ------------------------------------------------------------------ queries
    def _cells(self, where: Mapping[str, Any] | None) -> tuple[np.ndarray, list[Event]]:
        """Distinct cell compositions: (counts matrix (n_compositions, n_events), events).

        Cells are the label combinations of :attr:`parallel_levels`; a cell's
        composition is how many times each distinct event was charged to it.
        """
        if where and (bad := [level for level in where if level not in self.levels]):
            raise ValueError(f"`where` level {bad[0]!r} not declared.")
        if where:
            for level, label in where.items():
                _label_array(f"where[{level!r}]", label)
        self._refresh()
        cache_key = (
            self._version,
            len(self._charges),
            tuple(sorted((where or {}).items(), key=repr)),
        )
        if cache_key in self._cells_cache:
            return self._cells_cache[cache_key]
        result = (
            _compose_cells(self._charges, len(self._events), self.parallel_levels, where),
            list(self._events),
        )
        self._cells_cache[cache_key] = result
        return result

    def cells(self, *, where: Mapping[str, Any] | None = None) -> list[list[tuple[Event, int]]]:
        """The distinct sequential compositions of the ledger, one per kind of cell.

        Each is a list of ``(event, count)`` pairs; the guarantee of the ledger is the
        worst of them (parallel composition).

        Parameters
        ----------
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        list of list of (Event, int)
            One composition per distinct kind of cell.

        Raises
        ------
        ValueError
            If ``where`` names an undeclared level.
        """
        return _cell_list(*self._cells(where))

    def routes(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> dict[str, float]:
        """ε at ``target_delta`` by every route of :data:`fedpriv.privacy.accounting.routes.ROUTES`.

        Each route is evaluated on every distinct cell composition and the worst cell
        is reported (parallel composition); a route that does not apply is ``inf``.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required (see :meth:`get_epsilon`).
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
        return self._routes_of(self.cells(where=where), target_delta)

    def _routes_of(self, cells: list, target_delta: float) -> dict[str, float]:
        """Worst-cell ε of every route over ``cells`` (see :meth:`routes`)."""
        values = {name: 0.0 for name in ROUTES}
        _check_cell_sizes(cells)
        for cell in cells:
            try:
                cell_values = compose_routes(
                    cell, target_delta, pld_discretization=self.pld_discretization
                )
            except ArithmeticError as error:  # overflow of an extreme but valid cell
                _warn_overflow("ε", "inf", error)
                cell_values = dict.fromkeys(ROUTES, math.inf)  # a sound upper bound
            for name, value in cell_values.items():
                values[name] = max(values[name], value)
        return values

    def _tightest_of(self, cells: list, target_delta: float) -> tuple[str, float]:
        """``(route, epsilon)`` of the smallest route over ``cells`` (see :meth:`tightest`)."""
        values = self._routes_of(cells, target_delta)
        smallest = min(values.values())
        # Routes within float rounding of the minimum are ties: prefer the simplest,
        # so an exact pure answer is not displaced by a PLD value 1 ulp below it.
        route = next(
            name for name in ROUTES if values[name] <= smallest + abs(smallest) * RELATIVE_TOLERANCE
        )
        return route, values[route]

    def tightest(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> tuple[str, float]:
        """``(route, epsilon)`` of the smallest valid upper bound at ``target_delta``.

        Ties go to the simplest route in :data:`~fedpriv.privacy.accounting.routes.ROUTES` order (pure first).

        Parameters
        ----------
        target_delta : float
            In [0, 1); required (see :meth:`get_epsilon`).
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
        return self._tightest_of(self.cells(where=where), target_delta)

    def get_epsilon(self, target_delta: float, *, where: Mapping[str, Any] | None = None) -> float:
        """Tightest valid upper bound on ε at ``target_delta`` (dp-accounting's verb).

        Parameters
        ----------
        target_delta : float
            In [0, 1). Required, as in dp-accounting's ``get_epsilon(target_delta)``:
            a default of 0 would silently answer ∞ for any Gaussian ledger. Pass
            ``0.0`` explicitly for pure ε. (The same holds for :meth:`routes`,
            :meth:`tightest`, :meth:`lower_bound` and :meth:`bracket`.)
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        float
            ε in nats, the smallest route of :meth:`tightest`.

        Raises
        ------
        TypeError
            If ``target_delta`` is missing or not a real number.
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        return self.tightest(target_delta, where=where)[1]

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
            In [0, 1); required (see :meth:`get_epsilon`).
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
        cells = self.cells(where=where)
        _check_cell_sizes(cells)
        try:
            return max(
                (
                    pld_lower_bound(c, target_delta, pld_discretization=self.pld_discretization)
                    for c in cells
                ),
                default=0.0,
            )
        except ArithmeticError as error:
            _warn_overflow("the lower bound", "0", error)
            return 0.0  # a valid (vacuous) lower bound

    def bracket(
        self, target_delta: float, *, where: Mapping[str, Any] | None = None
    ) -> tuple[float, float]:
        """``(lower_bound, get_epsilon)`` at ``target_delta``.

        Parameters
        ----------
        target_delta : float
            In [0, 1); required (see :meth:`get_epsilon`).
        where : mapping, optional
            Restrict to charges whose key matches every ``level: label`` given.

        Returns
        -------
        tuple of (float, float)
            :meth:`lower_bound` and :meth:`get_epsilon`, in nats.

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1) or ``where`` names an undeclared
            level.
        """
        return self.lower_bound(target_delta, where=where), self.get_epsilon(
            target_delta, where=where
        )

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
        target_epsilon = check_real("target_epsilon", target_epsilon)
        if target_epsilon < 0:
            raise ValueError(f"`target_epsilon` must be >= 0, got {target_epsilon!r}.")
        cells = self.cells(where=where)
        _check_cell_sizes(cells)
        try:
            return max(
                (
                    compose_delta(c, target_epsilon, pld_discretization=self.pld_discretization)
                    for c in cells
                ),
                default=0.0,
            )
        except ArithmeticError as error:
            _warn_overflow("δ", "1", error)
            return 1.0  # a sound (vacuous) upper bound

    def spent(self) -> float:
        """The odometer, in the budget's own parameter.

        Returns
        -------
        float
            The tightest ε at the budget's δ (δ = 0 without a budget or with a
            ``PureDP`` one); the worst cell's ρ under a ``ZCDP`` budget, its μ under a
            ``GaussianDP`` one (``inf`` if a cell has no such bound).
        """
        if isinstance(self.budget, (ZCDP, GaussianDP)):
            return _guarantee_spent(self.budget, self.cells())
        delta = self.budget.delta if isinstance(self.budget, ApproxDP) else 0.0
        return self.get_epsilon(delta)

    def remaining(self) -> float:
        """Budget left in its own parameter (ε, ρ or μ; ``inf`` without a budget)."""
        if self.budget is None:
            return math.inf
        return max(0.0, _budget_parameter(self.budget)[1] - self.spent())

    # ------------------------------------------------------------------ exports
    @property
    def ledger(self) -> pd.DataFrame:
        """One row per noise draw: key levels, node, level, scale, sensitivity, epsilon."""
        import pandas as pd

        columns = list(self.levels) + ["node", "level", "scale", "l1_sensitivity", "epsilon"]
        self._refresh()
        if not self._draws:
            return pd.DataFrame(columns=columns)
        # One frame per run of consecutive blocks with the same columns and dtypes (their
        # arrays joined by numpy), then pandas' concat over the runs: the frame of
        # concatenating every block's frame (tests/privacy/test_ledger_frame.py), without
        # one DataFrame per block (a Fed_UCB run records thousands).
        frames, run, signature = [], [], None
        for block in self._draws:
            arrays = {
                k: (np.full(v[1], v[0]) if isinstance(v, tuple) else v) for k, v in block.items()
            }
            shape = tuple((k, a.dtype) for k, a in arrays.items())
            if shape != signature and run:
                frames.append(_joined_frame(run))
                run = []
            run.append(arrays)
            signature = shape
        frames.append(_joined_frame(run))
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        frame["epsilon"] = frame["l1_sensitivity"] / frame["scale"]
        return frame.reindex(columns=columns)

    @property
    def charges(self) -> pd.DataFrame:
        """One row per charged release: key levels, event type, parameters and pure ε."""
        import pandas as pd

        rows = []
        self._refresh()
        for event_id, arrays in self._charges:
            event = self._events[event_id]
            n = max(a.size for a in arrays.values())
            frame = pd.DataFrame(
                {level: _column(arrays[level]) for level in arrays if level != _SINGLE_CELL},
                index=range(n),
            )
            frame["event"] = type(event).__name__
            frame["scale"] = getattr(event, "scale", math.nan)
            frame["horizon"] = getattr(event, "horizon", 0)
            frame["released_prefixes"] = getattr(event, "released_prefixes", 0) or 0
            frame["l1_sensitivity"] = getattr(event, "l1_sensitivity", math.nan)
            frame["epsilon"] = np.full(n, event_epsilon(event))
            frame["reason"] = getattr(event, "reason", "")
            rows.append(frame)
        if not rows:
            return pd.DataFrame(columns=list(self.levels) + ["event", "epsilon"])
        for level in self.levels:  # labels of several kinds: object, so none is coerced
            if len({str(f[level].dtype) for f in rows if level in f}) > 1:
                for f in rows:
                    if level in f:
                        f[level] = f[level].astype(object)
        return pd.concat(rows, ignore_index=True)

    def non_private_reasons(self, *, where: Mapping[str, Any] | None = None) -> list[str]:
        """Reasons of the raw (ε = ∞) releases charged, optionally restricted by ``where``.

        Parameters
        ----------
        where : mapping, optional
            Keep charges with at least one row matching every ``level: label`` given.

        Returns
        -------
        list of str
            The distinct ``NonPrivate.reason`` strings, sorted.
        """
        reasons = set()
        self._refresh()
        for event_id, arrays in self._charges:
            event = self._events[event_id]
            if not isinstance(event, NonPrivate):
                continue
            if where and not all(
                level in arrays and np.any(arrays[level] == label) for level, label in where.items()
            ):
                continue
            reasons.add(event.reason)
        return sorted(reasons)

    @property
    def n_draws(self) -> int:
        """Number of noise draws in the ledger."""
        self._refresh()
        return self._n_draws


# ---------------------------------------------------------------------- helpers
def _budget_parameter(budget: Any) -> tuple[str, float]:
    """``(name, value)`` of the one number a budget caps: ε, ρ or μ."""
    if isinstance(budget, ZCDP):
        return "ρ", budget.rho
    if isinstance(budget, GaussianDP):
        return "μ", budget.mu
    return "ε", budget.epsilon


def _guarantee_spent(budget: ZCDP | GaussianDP, cells: list[list[tuple[Event, int]]]) -> float:
    """Worst cell's ρ (``ZCDP`` budget) or μ (``GaussianDP``) over ``cells``."""
    compose = compose_zcdp_rho if isinstance(budget, ZCDP) else compose_gdp_mu
    _check_cell_sizes(cells)
    return max((compose(cell) for cell in cells), default=0.0)


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


#: Python types a key label may have (NumPy scalars of these kinds are accepted too).
_LABEL_TYPES = (str, int, float, bool, type(None), np.str_, np.integer, np.floating, np.bool_)


def _label_kind(kind: type) -> str:
    """The NumPy kind a label of type ``kind`` would get on its own (``"N"``: other)."""
    if issubclass(kind, (bool, np.bool_)):
        return "b"
    if issubclass(kind, (int, np.integer)):
        return "i"
    if issubclass(kind, (float, np.floating)):
        return "f"
    if issubclass(kind, (str, np.str_)):
        return "U"
    return "N"


def _label_array(level: str, labels: Any) -> np.ndarray:
    """``labels`` of one key level as a 1-D array; refuses what is not a scalar label.

    A set or dict is refused by name rather than read as one (unhashable) label, and
    so is any label that is not a ``str``, ``int``, ``float``, ``bool`` or ``None``.

    Each label keeps its type and value (issue 38): a list or tuple whose labels are
    not all of one kind (``["x", 2]``, ``[True, "x"]``, ``[2.5, "x"]``, ``[True, 2]``,
    ``[2, 2.5]``) becomes an object array of the labels as given (NumPy scalars as
    the Python scalars they hold), where ``np.asarray`` would coerce them to one
    dtype (``2`` to ``'2'``, a separate cell). A list of one kind, a scalar or an
    ndarray keeps its NumPy dtype. Which labels name the same cell is decided later,
    by value (see :meth:`Accountant.spend`).
    """
    allowed = "a scalar label (str, int, float, bool or None) or a 1-D sequence of them"
    if isinstance(labels, (Mapping, set, frozenset)):
        raise TypeError(
            f"key level {level!r} must be {allowed}; got a {type(labels).__name__} "
            f"({labels!r:.60}), which is not a label (give a list for several cells)."
        )
    try:
        array = np.asarray(labels)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"key level {level!r} must be {allowed}; got {labels!r:.60} ({error})."
        ) from None
    if array.ndim > 1:
        raise ValueError(
            f"key level {level!r} must be {allowed}; got an array of shape {array.shape}."
        )
    array = np.atleast_1d(array).ravel()
    if array.dtype.kind not in "biufUO":
        raise TypeError(f"key level {level!r} must be {allowed}; got dtype {array.dtype}.")
    if (
        isinstance(labels, (list, tuple))
        and array.dtype.kind in "iufU"  # a dtype NumPy may have coerced other kinds to
        and len({_label_kind(kind) for kind in set(map(type, labels))}) > 1
    ):
        mixed = np.empty(len(labels), dtype=object)
        mixed[:] = list(labels)
        array = mixed
    if array.dtype.kind == "O":
        for label in array:
            if not isinstance(label, _LABEL_TYPES):
                raise TypeError(
                    f"key level {level!r} must be {allowed}; got a label of type "
                    f"{type(label).__name__} ({label!r:.60})."
                )
        array = np.fromiter(
            (label.item() if isinstance(label, np.generic) else label for label in array),
            dtype=object,
            count=array.size,
        )
    return array


def _compose_cells(
    charges: Sequence[tuple[int, dict[str, np.ndarray]]],
    n_events: int,
    parallel_levels: tuple[str, ...],
    where: Mapping[str, Any] | None,
) -> np.ndarray:
    """Distinct cell compositions of ``charges``: counts matrix (n_compositions, n_events).

    Pure: reads ``charges`` only, so a candidate charge can be priced before it is
    recorded.
    """
    empty = np.zeros((0, n_events), dtype=np.int64)
    if not charges:
        return empty
    sizes = [max(a.size for a in arrays.values()) for _, arrays in charges]
    columns: dict[str, np.ndarray] = {}
    for level in set(parallel_levels) | set(where or {}):
        parts = [
            arrays[level] if level in arrays else np.full(n, None, dtype=object)
            for (_, arrays), n in zip(charges, sizes)
        ]
        columns[level] = np.concatenate([np.asarray(p, dtype=object) for p in parts])
    event_column = np.repeat([event_id for event_id, _ in charges], sizes)
    keep = np.ones(event_column.size, dtype=bool)
    for level, label in (where or {}).items():
        keep &= columns[level] == label
    if not keep.any():
        return empty
    if parallel_levels:
        import pandas as pd

        frame = pd.DataFrame({level: columns[level][keep] for level in parallel_levels})
        cell = frame.groupby(list(parallel_levels), sort=False, dropna=False).ngroup()
        cell = cell.to_numpy()
    else:  # a single cell: nothing partitions the records
        cell = np.zeros(int(keep.sum()), dtype=np.int64)
    n_cells = int(cell.max()) + 1
    counts = np.bincount(
        cell * n_events + event_column[keep], minlength=n_cells * n_events
    ).reshape(n_cells, n_events)
    return np.unique(counts, axis=0)


def _cell_counts(arrays: dict[str, np.ndarray], parallel_levels: tuple[str, ...]) -> dict:
    """Rows of one charge per parallel cell, as ``{labels tuple: rows}``.

    Labels compare as the queries group them (pandas, ``dropna=False``): by value,
    with every NaN and None one label.
    """
    rows = max(a.size for a in arrays.values())
    if not parallel_levels:
        return {(): rows}
    fast = _numeric_cell_counts([arrays[level] for level in parallel_levels])
    if fast is not None:
        return fast
    columns = [
        [_NA if _is_na(label) else label for label in arrays[level].tolist()]
        for level in parallel_levels
    ]
    counts: dict = {}
    for cell in zip(*columns):
        counts[cell] = counts.get(cell, 0) + 1
    return counts


def _joined_frame(blocks: list[dict[str, np.ndarray]]):
    """One DataFrame of ``blocks`` (same keys, same dtypes), their rows in order."""
    import pandas as pd

    if len(blocks) == 1:
        return pd.DataFrame({k: _column(v) for k, v in blocks[0].items()})
    return pd.DataFrame({k: _column(np.concatenate([b[k] for b in blocks])) for k in blocks[0]})


def _column(array: np.ndarray):
    """``array`` as a frame column; an object array stays object (pandas would infer
    ``str`` from str and None labels and turn None into NaN)."""
    if array.dtype.kind != "O":
        return array
    import pandas as pd

    return pd.Series(array, dtype=object, index=range(array.size), copy=False)


def _max_cell_rows(arrays: dict[str, np.ndarray], parallel_levels: tuple[str, ...]) -> int:
    """Rows of one charge in its fullest parallel cell (an upper bound where the
    labels are not integers: every row in one cell).

    A strictly monotone column holds one row per cell (then 1); a single sorted
    column's fullest cell is its longest run of one label; otherwise the rows of
    every cell are counted (:func:`_integer_cells`). A column whose first two labels
    differ is checked for a strict order first (one ``>`` pass, a ``<`` pass if no
    label rises). Sortedness and runs come from one ``!=`` pass: the positions where
    the label changes, between which the labels are equal, so the column is sorted
    iff the label moves one way at every change (read at those positions only). A
    broadcast key (each label repeated over a run of rows) costs that one pass.
    """
    rows = max(a.size for a in arrays.values())
    if not parallel_levels or rows <= 1:
        return rows
    columns = [arrays[level] for level in parallel_levels]
    for column in columns:
        if not (
            isinstance(column, np.ndarray)
            and column.dtype.kind in "iub"
            and column.ndim == 1
            and column.size == rows
        ):
            return rows
        labels = column.astype(np.int64, copy=False)
        if labels[1] != labels[0]:  # may be strictly monotone
            up = labels[1:] > labels[:-1]
            if up.all():
                return 1
            if not up.any() and (labels[1:] < labels[:-1]).all():
                return 1
        if len(columns) > 1:
            continue
        change = np.flatnonzero(labels[1:] != labels[:-1])
        if change.size < rows - 1:  # else all distinct, not strictly monotone: unsorted
            rises = labels[change + 1] > labels[change]
            if rises.all() or not rises.any():  # sorted: the longest run is the fullest
                return int(np.diff(np.concatenate(([-1], change, [rows - 1]))).max())
    coded = _integer_cells(columns)
    return rows if coded is None else int(np.bincount(coded[1]).max())


def _integer_cells(columns: list[np.ndarray]) -> tuple[list, np.ndarray, tuple] | None:
    """``(labels per level, flat cell index per row, dims)`` for integer or boolean
    label columns of equal length; ``None`` for any other columns (object, float,
    unequal lengths, uint64 past int64, or more than 2⁴⁰ label combinations).

    A column whose labels span a dense range is coded by its offsets; a sparse one
    through ``np.unique``.
    """
    rows = max((c.size for c in columns), default=0)
    if not all(
        isinstance(c, np.ndarray) and c.dtype.kind in "iub" and c.ndim == 1 and c.size == rows
        for c in columns
    ):
        return None
    if any(
        c.dtype.kind == "u" and c.size and int(c.max()) > np.iinfo(np.int64).max for c in columns
    ):
        return None
    labels, codes = [], []
    for column in columns:
        column = column.astype(np.int64)
        low, high = (int(column.min()), int(column.max())) if rows else (0, 0)
        if high - low < 4 * rows + 1024:  # a dense range: the offsets are the codes
            labels.append(np.arange(low, high + 1))
            codes.append(column - low)
        else:
            unique, code = np.unique(column, return_inverse=True)
            labels.append(unique)
            codes.append(code.ravel())
    dims = tuple(len(u) for u in labels)
    if math.prod(dims) > 2**40:
        return None
    return labels, np.ravel_multi_index(codes, dims), dims


def _numeric_cell_counts(columns: list[np.ndarray]) -> dict | None:
    """:func:`_cell_counts` in C when every column is integer or boolean.

    Such labels have no NaN, and Python compares and hashes ``True``, ``1`` and their
    int64 values alike, so the keys are those of the per-row loop; charges of 10⁶ keys
    (the audits' batches) are counted in C instead of a Python loop per row. ``None``
    (object, float or mixed columns, or unequal lengths): the caller loops.
    """
    coded = _integer_cells(columns)
    if coded is None:
        return None
    labels, flat, dims = coded
    counts = np.bincount(flat)
    present = np.flatnonzero(counts)
    index = np.unravel_index(present, dims)
    cells = zip(*(u[i].tolist() for u, i in zip(labels, index)))
    return {cell: int(k) for cell, k in zip(cells, counts[present].tolist())}


def _fold(tally: list, event: Event, arrays: dict[str, np.ndarray], parallel_levels) -> None:
    """Add one recorded charge to a ``[n, bound, cells]`` tally (see
    :meth:`Accountant._check_charge_size`); ``n`` is the caller's."""
    releases = event_shape(event)[1]
    tally[1] += releases * max(a.size for a in arrays.values())
    if tally[2] is not None:
        cells = tally[2]
        counts = _cell_counts(arrays, parallel_levels)
        for cell, k in counts.items():
            cells[cell] = cells.get(cell, 0) + k * releases
        tally[3] += releases * max(counts.values(), default=0)
    elif tally[3] is not None:
        tally[3] += releases * _max_cell_rows(arrays, parallel_levels)


class _NAType:
    """The one label every missing (NaN or None) label counts as."""

    def __repr__(self) -> str:
        return "nan"


_NA = _NAType()


def _is_na(label: Any) -> bool:
    return label is None or (isinstance(label, (float, np.floating)) and math.isnan(label))


def _warn_overflow(what: str, answer: str, error: ArithmeticError) -> None:
    """Warn that an extreme cell overflowed a route and ``answer`` is reported."""
    warnings.warn(
        f"pricing an extreme cell overflowed ({error!r}); {what} is reported as "
        f"{answer}, which is sound but vacuous.",
        RuntimeWarning,
        stacklevel=3,
    )


def _check_cell_sizes(cells: list[list[tuple[Event, int]]]) -> None:
    """Refuse to price a cell of more than :data:`MAX_CELL_RELEASES` releases."""
    for cell in cells:
        releases = sum(count * event_shape(event)[1] for event, count in cell)
        if releases > MAX_CELL_RELEASES:
            raise ResourceLimitError(
                f"a cell of the ledger holds {releases:,} releases, more than "
                f"MAX_CELL_RELEASES = {MAX_CELL_RELEASES:,} that a query prices; split "
                "the ledger over a disjoint key level or charge a coarser event."
            )


def _cell_list(compositions: np.ndarray, events: Sequence[Event]) -> list[list[tuple[Event, int]]]:
    """Each composition row as ``[(event, count), ...]`` over its nonzero counts."""
    return [[(events[j], int(row[j])) for j in np.flatnonzero(row)] for row in compositions]
