"""Kept PLDs of the budget check: each cell's composed PLD, extended by one charge.

A budgeted :meth:`~fedpriv.privacy.ledger.accountant.Accountant.spend` whose cheap
routes (:mod:`fedpriv.privacy.ledger.running`) cannot accept it prices the ledger
from scratch: every route of :func:`~fedpriv.privacy.accounting.routes.compose_routes`
on every changed cell, the PLD rebuilt by self-composing each event (issue 36: 10–48
ms per charge, up to 6.3× dp-accounting's ``PLDAccountant``, which keeps its composed
PLD and composes each new event into it). :class:`KeptPlds` keeps, per cell content,
the composed pessimistic PLD and composes a charge's PLD into it, as dp-accounting
does; the from-scratch check runs only where this fast check cannot accept.

What is kept per cell content (a sorted ``(event id, count)`` tuple) mirrors the
from-scratch PLD of :func:`~fedpriv.privacy.accounting.pld_route.cell_pld` on the same
grid (:func:`~fedpriv.privacy.accounting.pld_route.pld_grid`): the composed PLD of the
non-Gaussian releases, and the whole PLD, that one composed with a single Gaussian PLD
of μ = √Σ count·μ_i² (Dong, Roth & Su 2019, Cor. 3.3). A non-Gaussian charge is
composed into the whole PLD (one dp-accounting ``compose``); a Gaussian charge rebuilds
the Gaussian PLD at the new μ and composes it with the non-Gaussian part. When the grid
changes (the cell grew past :data:`~fedpriv.privacy.accounting.pld_route.PLD_POINTS`
bins) the cell is built from scratch once on the new grid.

Why a fast accept is the from-scratch check's accept. Both PLDs are convolutions of
the same pessimistic per-release PLDs and the same merged Gaussian PLD on the same grid
(convolution is associative and commutative: ``p^{∗a} ∗ p^{∗b} = p^{∗(a+b)}``); they
differ only by dp-accounting's tail truncation, floating-point round-off and the loss
drift of its ε(δ) walk. Pessimistic truncation only moves mass up (to the lowest kept
bin, or to the infinite loss), so the kept PLD's δ(ε') is at least the exact
convolution's, and the from-scratch one's exceeds that by at most its truncated mass
(10⁻¹⁴ per dp-accounting call allowed). The fast value is the kept PLD's ε at

    δ - 2 (R_kept + S_kept + R_scratch + S_scratch) - T_scratch,

plus both loss drifts, where ``R_kept``, ``S_kept`` are the kept PLD's round-off
certificate and summation error (:func:`~fedpriv.privacy.accounting.pld_certificate.
roundoff_at`, ``summation_slack``); ``R_scratch`` bounds the from-scratch certificate
``max(√n·l2, 2n·floor)``: ``l2`` from the same model with the from-scratch operation
count, ``n`` the bins that PLD can hold from its own first ε down (its support lies
within the sums of its parts' supports; its first ε is at least the kept PLD's at δ
raised by all these errors), and ``floor`` (measured there) by the per-bin form of the
model (:func:`_bin_error`), which the kept PLD's measured floor must obey, else nothing
is decided here; ``S_scratch`` is that PLD's summation error on the same tail. The fast
value is then >= the from-scratch certified PLD ε (:func:`~fedpriv.privacy.accounting.
pld_certificate.certified_epsilon`), itself >= the from-scratch tightest ε, so a cell content
whose fast value is within the budget passes the from-scratch check, and every fast
value is itself a certified upper bound on the cell's ε. The one assumption is the
round-off model's, as for the from-scratch certificate. A charge is accepted fast only
when every cell's fast value is within the budget's ε; otherwise the from-scratch check
decides, so the decisions are the same (tested against it with hypothesis).

Atomicity: :meth:`KeptPlds.accepts` computes without storing; :meth:`KeptPlds.fold`
installs what it computed once the charge is recorded, and only for that charge's
update. A refused or abandoned charge leaves the kept PLDs as they were.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.cells import cell_gdp_mu, normalize_cell
from fedpriv.privacy.accounting.exact_sum import UNIT_ROUNDOFF
from fedpriv.privacy.accounting.guarantees import ApproxDP, gaussian_dp_epsilon
from fedpriv.privacy.accounting.handlers import (
    event_gdp_mu,
    event_pld,
    gaussian_pld,
    self_compose_calls,
)
from fedpriv.privacy.accounting.pld_certificate import (
    ROUNDOFF_SAFETY,
    loss_drift,
    pmf_probs,
    pmfs,
    roundoff_at,
    summation_slack,
    tail_mass,
)
from fedpriv.privacy.accounting.pld_route import TRUNCATION_ALLOWANCE, cell_pld, pld_grid
from fedpriv.privacy.accounting.pld_scan import PldScan

__all__ = ["KeptPlds"]

#: Cell contents whose composed PLDs are kept (least recently used dropped first).
_KEPT_STATES = 8
#: Cell contents whose fast values are kept.
_KEPT_VALUES = 65536
#: Most charges skipped after fast checks that could not accept a charge another route
#: accepted (the PLD is not the tightest route there: e.g. the optimal route on
#: randomized responses); the skips double from 0 with each such charge in a row.
_MAX_SKIP = 64


class _State:
    """Composed PLDs of one cell content on one grid (never mutated).

    ``ng``: the non-Gaussian releases composed (None if there are none), with its
    operation and dp-accounting call counts; ``pending``: non-Gaussian PLDs composed
    into ``full`` but not yet into ``ng`` (only while a Gaussian part is present);
    ``full``: the whole cell's PLD; ``gaussian``: :func:`_extent` of the merged
    Gaussian PLD (None without one).
    """

    __slots__ = ("calls", "full", "gaussian", "grid", "ng", "ng_calls", "ng_ops", "ops", "pending")

    def __init__(self, grid, ng, ng_ops, ng_calls, pending, full, ops, calls, gaussian) -> None:
        self.grid, self.ng, self.ng_ops, self.ng_calls = grid, ng, ng_ops, ng_calls
        self.pending, self.full, self.ops, self.calls = pending, full, ops, calls
        self.gaussian = gaussian


def _extent(pld) -> tuple[int, int]:
    """``(top, width)`` of a PLD over its pmfs: the largest loss index holding a bin
    (loss = index · grid) and the number of indices its bins span."""
    top, width = -(2**62), 1
    for pmf in pmfs(pld):
        if getattr(pmf, "_probs", None) is not None:
            low, high = int(pmf._lower_loss), int(pmf._lower_loss) + len(pmf._probs) - 1
        elif pmf._loss_probs:
            low, high = min(pmf._loss_probs), max(pmf._loss_probs)
        else:
            continue
        top, width = max(top, high), max(width, high - low + 1)
    return top, width


def _scratch_extent(state: _State, items) -> tuple[int, int]:
    """Bound on :func:`_extent` of the from-scratch PLD of ``items``: its bins lie
    within the sums of its untruncated parts' (each release's PLD, the merged Gaussian)."""
    top, width = 0, 1
    for event, count in items:
        if event_gdp_mu(event) is None:
            part_top, part_width = _extent(event_pld(event, 1, state.grid, True))
            top, width = top + count * part_top, width + count * (part_width - 1)
    if state.gaussian is not None:
        top, width = top + state.gaussian[0], width + state.gaussian[1] - 1
    return top, width


def _counts(items) -> tuple[int, int]:
    """``(operations, calls)`` that :func:`~fedpriv.privacy.accounting.pld_route.cell_pld`
    counts for ``items`` (its round-off and truncation bookkeeping)."""
    operations = calls = 0
    composed = gaussian = False
    for event, count in items:
        if event_gdp_mu(event) is not None:
            gaussian = True
            continue
        operations += count + composed
        calls += self_compose_calls(count) + 1
        composed = True
    if gaussian:
        operations += 1 + composed
        calls += 1
    return operations, calls


def _merged_mu(items) -> float | None:
    """μ of the cell's Gaussian-family releases merged, summed as ``cell_pld`` sums
    them (None if there are none)."""
    mus = [count * mu**2 for event, count in items if (mu := event_gdp_mu(event)) is not None]
    return math.sqrt(math.fsum(mus)) if mus else None


def _scratch(items, grid: float) -> _State | None:
    """State of a cell content built from scratch (None if a release has no PLD)."""
    ng_items = tuple((e, c) for e, c in items if event_gdp_mu(e) is None)
    ng = None
    if ng_items:
        built = cell_pld(ng_items, grid, True, False)
        if built is None:
            return None
        ng = built[0]
    ng_ops, ng_calls = _counts(ng_items)
    mu = _merged_mu(items)
    full, ops, calls, extent = ng, ng_ops, ng_calls, None
    if mu is not None:
        gaussian = gaussian_pld(mu, grid, True)
        full = gaussian if ng is None else ng.compose(gaussian)
        ops, calls, extent = ng_ops + 1 + (ng is not None), ng_calls + 1, _extent(gaussian)
    return _State(grid, ng, ng_ops, ng_calls, (), full, ops, calls, extent)


def _extend(state: _State, parts, items) -> _State | None:
    """``state`` with the releases ``parts`` (normalized ``(event, count)``) composed in;
    ``items`` is the new cell content, normalized. None if a part has no PLD."""
    grid = state.grid
    new, gaussian = [], False
    for part, count in parts:
        if event_gdp_mu(part) is not None:
            gaussian = True
            continue
        pld = event_pld(part, count, grid, True)
        if pld is None:
            return None
        new.append((pld, count))
    if not gaussian and _merged_mu(items) is not None:  # compose into the whole PLD only
        full, ops, calls = state.full, state.ops, state.calls
        for pld, count in new:
            full = full.compose(pld)
            ops += count + 1
            calls += self_compose_calls(count) + 1
        pending = state.pending + tuple(new)
        return _State(
            grid, state.ng, state.ng_ops, state.ng_calls, pending, full, ops, calls, state.gaussian
        )
    ng, ng_ops, ng_calls = state.ng, state.ng_ops, state.ng_calls
    combined = None  # the small PLDs composed first: one composition with the large one
    for pld, count in (*state.pending, *new):
        ng_ops += count + (combined is not None)
        ng_calls += self_compose_calls(count) + 1
        combined = pld if combined is None else combined.compose(pld)
    if combined is not None:
        ng_ops += ng is not None
        ng = combined if ng is None else ng.compose(combined)
    mu = _merged_mu(items)
    if mu is None:
        return _State(grid, ng, ng_ops, ng_calls, (), ng, ng_ops, ng_calls, None)
    merged = gaussian_pld(mu, grid, True)
    full = merged if ng is None else ng.compose(merged)
    ops, calls = ng_ops + 1 + (ng is not None), ng_calls + 1
    return _State(grid, ng, ng_ops, ng_calls, (), full, ops, calls, _extent(merged))


def _certificate(probs, norms, operations: int) -> tuple[tuple[float, float], ...]:
    """:func:`~fedpriv.privacy.accounting.pld_certificate.pld_roundoff`'s certificate, from the
    pmfs' probabilities and ℓ2 norms (``np.einsum``: BLAS's ``dot`` costs 80× as
    much CPU on a busy machine, its threads spinning)."""
    certificate = []
    for p, norm in zip(probs, norms):
        size = max(p.size, 2)
        l2 = ROUNDOFF_SAFETY * (operations + 2.0 * math.log2(size) + 2.0) * UNIT_ROUNDOFF * norm
        certificate.append((l2, max(0.0, -float(p.min(initial=0.0)))))
    return tuple(certificate)


def _bin_error(operations: int, bins: int, peak: float) -> float:
    """Model of the round-off of one bin of a composed PLD: ``pld_roundoff``'s ℓ2
    model with the largest bin mass ``peak`` for the ℓ2 norm."""
    return ROUNDOFF_SAFETY * (operations + 2.0 * math.log2(bins) + 2.0) * UNIT_ROUNDOFF * peak


def _fast_epsilon(state: _State, items, delta: float) -> float:
    """Upper bound on the from-scratch certified PLD ε of ``items`` at ``delta`` from
    the kept PLD (see the module docstring); ``inf`` where round-off swamps δ or the
    kept PLD's round-off leaves the model."""
    pld, grid = state.full, state.grid
    scan = PldScan(pld)
    first = float(scan.epsilon(delta))
    if not math.isfinite(first):
        return math.inf
    probs = [pmf_probs(pmf) for pmf in pmfs(pld)]
    norms = [math.sqrt(float(np.einsum("i,i->", p, p))) for p in probs]
    own_certificate = _certificate(probs, norms, state.ops)
    own = roundoff_at((pld, own_certificate, state.calls), first)
    own += summation_slack(pld, first)
    size = max(max(p.size for p in probs), 2)
    peak = max(float(np.abs(p).max(initial=0.0)) for p in probs) * (1.0 + 1e-6)
    # The FFT error model of `pld_roundoff` per bin (ℓ∞: its ℓ2 model with the
    # largest mass for the norm): the kept PLD's measured floor must obey it, else
    # nothing is decided here; the from-scratch PLD's floor is then bounded by it.
    if max(floor for _, floor in own_certificate) > _bin_error(state.ops, size, peak):
        return math.inf
    operations, calls = _counts(items)
    top, width = _scratch_extent(state, items)
    width = max(width, 2)
    l2 = _bin_error(operations, width, max(norms) * (1.0 + 1e-6))
    bin_error = _bin_error(operations, width, peak)
    truncated = TRUNCATION_ALLOWANCE * (calls + 1)
    # The from-scratch ε at δ is at least `low` (its PLD is below the kept one by at
    # most these errors), so its certificate counts only bins from `low` - grid up.
    crude = max(math.sqrt(width) * l2, 2.0 * width * bin_error)
    low = float(scan.epsilon(min(1.0, delta + own + crude + truncated)))
    low -= 2.0 * grid + 2.0 * loss_drift(pld)
    bins = min(width, max(0, top - math.floor(low / grid)) + 2) if math.isfinite(low) else width
    roundoff = max(math.sqrt(bins) * l2, 2.0 * bins * bin_error)
    tail = (
        tail_mass(pld, low)
        + math.sqrt(width) * (l2 + max(c[0] for c in own_certificate))
        + truncated
    )
    summation = 2.0 * width * UNIT_ROUNDOFF * (tail + 1e-300)
    query = delta - 2.0 * (own + roundoff + summation) - truncated
    if query <= 0.0:
        return math.inf
    epsilon = float(scan.epsilon(query))
    if not math.isfinite(epsilon):
        return math.inf
    largest = max(abs(top), abs(top - width)) * grid
    return epsilon + loss_drift(pld) + 2.0 * width * UNIT_ROUNDOFF * largest


class KeptPlds:
    """The kept PLDs of an accountant's cells and its fast exact budget check.

    Parameters
    ----------
    budget : Guarantee or None
        The accountant's budget; only an ``ApproxDP`` budget with δ > 0 has a PLD
        route, any other never accepts fast.
    discretization : float
        The accountant's ``pld_discretization`` (the base grid of
        :func:`~fedpriv.privacy.accounting.routes.pld_grid`).

    Examples
    --------
    An accountant keeps one. From the 50th release on no cheap route accepts (RDP gives
    7.01 > 7), and the 50th to 54th are accepted on the kept PLD:

    >>> from fedpriv.privacy import Accountant, ApproxDP, events
    >>> acc = Accountant(budget=ApproxDP(epsilon=7.0, delta=1e-6), pld_discretization=1e-3)
    >>> for _ in range(54):
    ...     acc.spend(events.Laplace(scale=5.0))
    >>> round(acc.get_epsilon(1e-6), 4), acc.odometer.would_exceed(events.Laplace(scale=5.0), key=None)
    (6.9991, True)
    """

    def __init__(self, budget: Any, discretization: float) -> None:
        self._on = isinstance(budget, ApproxDP) and budget.delta > 0.0
        self._epsilon = budget.epsilon if self._on else 0.0
        self._delta = budget.delta if self._on else 0.0
        self._discretization = discretization
        self._states: collections.OrderedDict = collections.OrderedDict()
        self._values: collections.OrderedDict = collections.OrderedDict()
        self._ok_through = -1  # after this many charges every cell was within, fast
        self._pending: tuple | None = None
        # Charges recorded although this check could not accept them (another route
        # did) in a row, and charges left to skip before trying again (backoff).
        self._misses = self._skip = 0

    def accepts(self, running: Any, update: tuple, events) -> bool:
        """Whether the kept PLDs keep every cell within the budget after a charge.

        Nothing is stored: :meth:`fold` installs what this computed once the charge
        is recorded. False means "not decided here": the from-scratch check decides.

        Parameters
        ----------
        running : RunningCells
            The accountant's running cells (:mod:`fedpriv.privacy.ledger.running`),
            before the charge.
        update : tuple
            ``RunningCells.price``'s update of the charge (its index, the new cells).
        events : sequence of Event
            The ledger's events with the charge's, indexed by event id.

        Returns
        -------
        bool
            True if every cell's fast value (an upper bound on its from-scratch PLD ε,
            module docstring) is within the budget's ε.
        """
        self._pending = None
        if not self._on:
            return False
        if self._skip:  # the last tries failed where another route accepted
            self._skip -= 1
            return False
        try:
            return self._accepts(running, update, events)
        except ArithmeticError:  # an extreme cell: the from-scratch check handles it
            return False

    def _accepts(self, running: Any, update: tuple, events) -> bool:
        index, updated, _ = update
        states: dict = {}
        values: dict = {}
        self._pending = (update, states, values, False)
        for key, cell in updated.items():
            composition = tuple(sorted(cell.counts.items()))
            if composition in values:
                continue
            old = running.cells.get(key)
            old_counts = old.counts if old is not None else {}
            parts = [
                (events[j], count - old_counts.get(j, 0))
                for j, count in cell.counts.items()
                if count > old_counts.get(j, 0)
            ]
            before = tuple(sorted(old_counts.items()))
            if not self._price(composition, events, states, values, before, parts):
                return False
        if not (self._ok_through == index == running.applied):
            for composition in running.compositions(update):
                if composition not in values and not self._price(
                    composition, events, states, values
                ):
                    return False
        self._pending = (update, states, values, True)
        return True

    def _price(self, composition, events, states, values, before=None, parts=None) -> bool:
        """Fast value of ``composition`` into ``values`` (its state into ``states``),
        extending the kept state of ``before`` by ``parts`` where there is one; True if
        within the budget's ε."""
        value = self._values.get(composition)
        if value is None:
            items = normalize_cell([(events[j], count) for j, count in composition])
            value = math.inf
            if items and all(event_gdp_mu(event) is not None for event, _ in items):
                # the from-scratch PLD route reports the exact GDP value here
                value = gaussian_dp_epsilon(cell_gdp_mu(items), self._delta)
            else:
                grid = pld_grid(items, self._discretization, True)
                kept = self._states.get(before) if before is not None else None
                if kept is not None and kept.grid == grid:
                    state = _extend(kept, normalize_cell(parts), items)
                else:
                    state = _scratch(items, grid)
                if state is not None:
                    states[composition] = state
                    value = _fast_epsilon(state, items, self._delta)
        values[composition] = value
        return value <= self._epsilon

    def fold(self, update: tuple) -> None:
        """Install what :meth:`accepts` computed for ``update`` (its charge is recorded).

        Parameters
        ----------
        update : tuple
            The update the charge was priced with; anything else is ignored.
        """
        pending, self._pending = self._pending, None
        if pending is None or pending[0] is not update:
            return
        _, states, values, accepted = pending
        for store, new, limit in (
            (self._states, states, _KEPT_STATES),
            (self._values, values, _KEPT_VALUES),
        ):
            for key, item in new.items():
                store[key] = item
                store.move_to_end(key)
            while len(store) > limit:
                store.popitem(last=False)
        if accepted:
            self._ok_through = update[0] + 1
            self._misses = 0
        else:  # the from-scratch check accepted by another route: back off
            self._misses += 1
            self._skip = min(_MAX_SKIP, 2 ** (self._misses - 1) - 1)
