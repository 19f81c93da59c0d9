"""End-to-end audits of whole algorithms: coupled runs, event search, confirmation.

An end-to-end audit runs a federated algorithm many times in two neighboring worlds
D and D' (a :mod:`fedpriv.audit.engine.neighbors` pair: one reward, one (context, reward) pair or one
user changed) and records what one adversary observes: the released statistics, the
controller's view (sync times), a neighbor's messages or an agent's actions. It then
bounds ε from below with Clopper–Pearson bounds on one distinguishing event,

``ε_lb = ln((P_D(O)_low − δ) / P_D'(O)_up)``  (and the mirror),

which is valid for any event ``O`` fixed before the confirming samples are drawn
(:func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound`). The event is chosen on a
*pilot* sample (a small search over candidate events, and over neighboring pairs when
the caller offers several), then confirmed on *fresh* samples: the selection never
sees the confirming samples, so the confidence is exact. The candidates read each
column of the view and, for a view of several columns, the whole view: linear
statistics and a learned distinguisher trained on a split of its own
(:mod:`fedpriv.audit.engine.joint`, DP-Sniper); the pairs may come from the
worst-neighbour search (:mod:`fedpriv.audit.engine.neighbor_search`, StatDP).

Coupling. The two worlds share the dataset (reward tables, contexts) and, where the
algorithm's API allows it, every random stream but the privacy noise (CONTRIBUTING.md, Seeding: same
seed, ``side`` 0/1 on the NOISE stream). The bound only needs the samples of each world
to be i.i.d. draws of that world's output distribution; the coupling between worlds
reduces variance but is not needed for validity, so an algorithm whose API takes one
root for every stream is audited with one root per world.

Samples are drawn in batches of ``AuditBudget.batch_size`` runs (the ``n_trials``
axis of every algorithm), so memory stays bounded whatever the sample count.
:func:`search_and_confirm` can also split each world's runs into addressed batches
itself (``batch_size``) and run the sampler calls on an executor (``executor``: local
processes or a ``dask.distributed`` client, :mod:`fedpriv.audit.engine.tasks`); each
batch draws from its own SeedSequence address, so the bound does not depend on the
executor or on the number of workers.

Length: the search and its confirmation share one budget, one seed tree and the
pilot's candidate events; the statistics of the whole view live apart in
:mod:`fedpriv.audit.engine.joint`, the neighbour search in
:mod:`fedpriv.audit.engine.neighbor_search`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.joint import JointColumns, fit_distinguisher, flatten_runs
from fedpriv.audit.estimators import EpsilonLowerBound, estimate_epsilon_lower_bound
from fedpriv.audit.estimators.result import AuditResult
from fedpriv.privacy.checks import check_delta, check_int_at_least
from scipy import stats

__all__ = ["AuditBudget", "EndToEndAudit", "SampleFn", "confirm_event", "search_and_confirm"]

#: ``sample(world, n_samples, seed) -> ndarray (n_samples,) or (n_samples, n_features)``
#: of the observable in world 0 (D) or 1 (D').
SampleFn = Callable[[int, int, np.random.SeedSequence], np.ndarray]

_MAX_DISCRETE_VALUES = 64
_N_QUANTILES = 16


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AuditBudget:
    """Sample counts of one end-to-end audit.

    Attributes
    ----------
    pilot_samples : int
        Runs per world used to choose the event (and the neighboring pair), >= 1.
    samples : int
        Fresh runs per world that confirm the chosen event, >= 1.
    confidence : float
        Family-wise confidence of the bound, in (0, 1).
    batch_size : int
        Runs simulated at once (bounded memory), >= 1.
    """

    pilot_samples: int = 200
    samples: int = 2_000
    confidence: float = 0.95
    batch_size: int = 1_000

    def __post_init__(self) -> None:
        check_int_at_least("pilot_samples", self.pilot_samples, 1)
        check_int_at_least("samples", self.samples, 1)
        check_int_at_least("batch_size", self.batch_size, 1)
        if not 0.0 < float(self.confidence) < 1.0:
            raise ValueError(f"`confidence` must be in (0, 1), got {self.confidence!r}.")


#: The result of an end-to-end audit is the audit's one result type, with
#: ``method="end-to-end"`` and the details ``channel`` (what the adversary observes),
#: ``event`` (the confirmed distinguishing event), ``neighbors`` (the neighbouring pair:
#: relation, position, values), ``pilot_epsilon`` (the bound the event was projected to
#: give on the confirming sample, for the record only), ``epsilon_lower_bound_at_1e_6``
#: (the same event's bound at δ = 10⁻⁶,
#: :func:`fedpriv.audit.estimators.epsilon_lower_bound_at_delta`, NaN when not
#: computed; where a second audit bounds ε at 10⁻⁶, FedUCB's Privatizer nodes in
#: :mod:`fedpriv.audit.families.feducb.privatizer`, the larger of the two),
#: ``bound_at_1e_6`` (the bound giving it when it is not this audit's own event, else
#: None) and ``event_at_1e_6`` (that bound's event or score). This alias keeps the
#: older name readable in annotations.
EndToEndAudit = AuditResult


def _as_columns(observed: np.ndarray) -> np.ndarray:
    """(n, columns), or (n, messages, size) kept for :mod:`fedpriv.audit.engine.joint`."""
    observed = np.asarray(observed, dtype=np.float64)
    if observed.ndim == 1:
        return observed[:, None]
    return observed if observed.ndim == 3 else observed.reshape(len(observed), -1)


def _candidate_events(pilot: np.ndarray) -> list[tuple[int, str, float]]:
    """``(column, kind, value)`` events from the pooled pilot observations.

    ``==`` for every value of a discrete column (at most 64 values) and for the atoms
    (values seen at least twice) of a continuous one — a raw release mixed with noisy
    ones shows up as an atom — plus ``>=`` / ``<=`` at 16 pilot quantiles.
    """
    events: list[tuple[int, str, float]] = []
    for column in range(pilot.shape[1]):
        values, counts = np.unique(pilot[:, column], return_counts=True)
        if values.size > _MAX_DISCRETE_VALUES:  # continuous: keep the atoms only
            atoms = np.flatnonzero(counts >= 2)
            values = values[atoms[np.argsort(-counts[atoms])][:_MAX_DISCRETE_VALUES]]
        events += [(column, "==", float(v)) for v in values]
        cuts = np.unique(np.quantile(pilot[:, column], np.linspace(0.02, 0.98, _N_QUANTILES)))
        events += [(column, ">=", float(c)) for c in cuts]
        events += [(column, "<=", float(c)) for c in cuts]
    return events


def _indicator(observed: np.ndarray, event: tuple[int, str, float]) -> np.ndarray:
    column, kind, value = event
    x = observed[:, column]
    if kind == "==":
        hit = x == value
    elif kind == ">=":
        hit = x >= value
    else:
        hit = x <= value
    return hit.astype(np.float64)


def _hit_counts(observed: np.ndarray, events: list[tuple[int, str, float]]) -> np.ndarray:
    """``[_indicator(observed, e).sum() for e in events]``, one sort per column (float64).

    The same integers: ``x == v``, ``x >= v`` and ``x <= v`` counted by binary search
    in the column's sorted values (IEEE comparison, ``-0.0 == 0.0``; NaN compares
    false in both, and sorts last, past every ``searchsorted`` bound).
    """
    counts = np.empty(len(events), dtype=np.float64)
    if not events:
        return counts
    columns = np.array([e[0] for e in events], dtype=np.int64)
    kinds = [e[1] for e in events]
    values = np.array([e[2] for e in events], dtype=np.float64)
    for column in np.unique(columns).tolist():
        x = observed[:, column]
        finite = np.sort(x[~np.isnan(x)])
        at = np.flatnonzero(columns == column)
        v = values[at]
        left = np.searchsorted(finite, v, side="left")
        right = np.searchsorted(finite, v, side="right")
        kind = np.array([kinds[i] for i in at.tolist()])
        hits = np.where(
            kind == "==", right - left, np.where(kind == ">=", finite.size - left, right)
        )
        counts[at] = np.where(np.isnan(v), 0, hits)  # a NaN threshold: no run compares true
    return counts


def _beta_where(function, level: float, a: np.ndarray, b: np.ndarray, where, fill: float):
    """``function(level, a, b)`` (a beta ``ppf`` or ``isf``) where ``where`` holds, else
    ``fill``: one vectorized call, elementwise the scalar calls' values."""
    out = np.full(a.shape, fill)
    if where.any():
        out[where] = function(level, a[where], b[where])
    return out


def _pilot_scores(
    hits_d: np.ndarray,
    n_d: int,
    hits_dp: np.ndarray,
    n_dp: int,
    delta: float,
    *,
    n_confirm: int,
    confidence: float,
) -> list[float]:
    """The bound each event would give on the confirming sample, projected from the
    pilot (hit counts as float64 arrays, one score per event).

    The pilot's proportions are scaled to ``n_confirm`` runs per world and bounded with
    Clopper–Pearson at the confirmation's level ``(1 − confidence)/4``, so the search
    ranks events by what confirmation can certify (rare events whose pilot counts are
    noise, and events too rare for the confirming sample, rank low). One call per
    bound covers every event; ``tests/audit/test_pilot_scores.py`` keeps the per-event
    scalar computation as its reference, float for float."""
    level = (1.0 - confidence) / 4.0
    k_d = np.asarray(hits_d, dtype=np.float64) / n_d * n_confirm
    k_dp = np.asarray(hits_dp, dtype=np.float64) / n_dp * n_confirm
    n = float(n_confirm)
    p_low = _beta_where(stats.beta.ppf, level, k_d, n - k_d + 1, k_d > 0, 0.0)
    q_low = _beta_where(stats.beta.ppf, level, k_dp, n - k_dp + 1, k_dp > 0, 0.0)
    p_up = _beta_where(stats.beta.isf, level, k_d + 1, n - k_d, k_d < n, 1.0)
    q_up = _beta_where(stats.beta.isf, level, k_dp + 1, n - k_dp, k_dp < n, 1.0)
    scores = []
    for bounds in zip(p_low.tolist(), q_up.tolist(), q_low.tolist(), p_up.tolist()):
        best = 0.0
        for num, den in (bounds[:2], bounds[2:]):
            if num - delta > 0:
                best = max(best, math.log((num - delta) / den))
        scores.append(best)
    return scores


def describe_event(event: tuple[int, str, float], names: tuple[str, ...] | None = None) -> str:
    """Readable form of a candidate event."""
    column, kind, value = event
    name = names[column] if names and column < len(names) else f"observable[{column}]"
    return f"{name} {kind} {value:.6g}"


def confirm_event(
    indicator_d: np.ndarray, indicator_d_prime: np.ndarray, *, confidence: float, delta: float
) -> EpsilonLowerBound:
    """Clopper–Pearson ε lower bound of one predeclared event, both directions.

    ``ε_lb = max(ln((p_low − δ)/q_up), ln((q_low − δ)/p_up))`` with the four one-sided
    bounds at level ``(1 − confidence)/4`` (two tests, two bounds each).

    Parameters
    ----------
    indicator_d, indicator_d_prime : ndarray of float64, shape (n,) and (n',)
        0/1 indicators of the event on the runs of D and of D'.
    confidence : float
        In (0, 1).
    delta : float
        In [0, 1).

    Returns
    -------
    EpsilonLowerBound
        ε in nats, >= 0, with the counts and direction.
    """
    return estimate_epsilon_lower_bound(
        np.asarray(indicator_d, dtype=np.float64),
        np.asarray(indicator_d_prime, dtype=np.float64),
        thresholds=np.array([0.5]),
        confidence=confidence,
        delta=check_delta("delta", delta),
    )


def _draw(
    samplers: list[SampleFn],
    requests: list[tuple[int, int, int, tuple[int, ...]]],
    *,
    seed: int | np.random.SeedSequence,
    batch_size: int | None,
    executor: Any,
    n_workers: int | None,
    names: list[str],
) -> list[np.ndarray]:
    """Observations of each ``(sampler, world, n, address)`` request, as (n, columns).

    Without ``batch_size`` and ``executor`` every request is one in-process call at
    ``child_seed(seed, *address)`` (the behaviour before executors existed). With a
    ``batch_size`` the request's runs are split into batches, batch ``b`` drawn at
    ``child_seed(seed, *address, b)``; with an ``executor`` the calls run there.
    """
    if batch_size is None and executor is None:
        return [
            _as_columns(samplers[i](world, n, child_seed(seed, *address)))
            for i, world, n, address in requests
        ]
    from fedpriv.audit.engine.tasks import SampleTask, run_sample_tasks

    tasks: list[SampleTask] = []
    spans: list[tuple[int, int]] = []
    for i, world, n, address in requests:
        first = len(tasks)
        if batch_size is None:
            tasks.append(
                SampleTask(sampler=i, world=world, n_samples=n, seed=child_seed(seed, *address))
            )
        else:
            tasks += [
                SampleTask(
                    sampler=i,
                    world=world,
                    n_samples=min(batch_size, n - start),
                    seed=child_seed(seed, *address, b),
                )
                for b, start in enumerate(range(0, n, batch_size))
            ]
        spans.append((first, len(tasks)))
    parts = run_sample_tasks(samplers, tasks, executor=executor, n_workers=n_workers, names=names)
    return [np.concatenate(parts[a:b], axis=0) for a, b in spans]


def _joint_maps(
    pilot_draws: list[np.ndarray], draw: Callable[..., list[np.ndarray]], *, budget, joint: bool
) -> list[JointColumns]:
    """Each pair's column map: its view, and with ``joint`` and at least two columns the
    linear statistics and a distinguisher trained on a split of its own.

    The training runs are drawn at ``(2, pair_index, world)``, an address neither the
    pilot ``(0, ...)`` nor the confirmation ``(1, ...)`` uses, ``pilot_samples`` per
    world; a view of one column gets nothing added (every statistic of it is a
    monotone map of the column, which the pilot's thresholds already cover).
    """
    n_pairs = len(pilot_draws) // 2
    wide = [
        index
        for index in range(n_pairs)
        if joint and flatten_runs(pilot_draws[2 * index]).shape[1] >= 2
    ]
    maps = [JointColumns(None, linear=index in wide) for index in range(n_pairs)]
    if not wide:
        return maps
    training = draw(
        [
            (index, world, budget.pilot_samples, (2, index, world))
            for index in wide
            for world in (0, 1)
        ]
    )
    for i, index in enumerate(wide):
        features = [maps[index].features(t) for t in training[2 * i : 2 * i + 2]]
        maps[index] = JointColumns(fit_distinguisher(*features), linear=True)
    return maps


def search_and_confirm(
    samplers: dict[str, SampleFn],
    *,
    budget: AuditBudget,
    seed: int | np.random.SeedSequence,
    delta: float,
    channel: str,
    names: tuple[str, ...] | None = None,
    events: dict[str, list[tuple[int, str, float]]] | None = None,
    batch_size: int | None = None,
    executor: Any = None,
    n_workers: int | None = None,
    joint: bool = True,
) -> EndToEndAudit:
    """Choose a neighboring pair and an event on a pilot sample; confirm on fresh runs.

    The search ranks every (pair, event) candidate by the bound it would give on the
    confirming sample; only the winner is drawn again and tested, in two directions,
    so the confirmation's level ``(1 − confidence)/4`` per bound does not depend on
    how many pairs and events the pilot compared (the selection sees no confirming
    run; Ding et al., "Detecting Violations of Differential Privacy", CCS 2018,
    Sec. 4, separate their event selection from the test the same way). The result's
    details ``n_pairs`` and ``n_candidates`` say how many were compared.

    Parameters
    ----------
    samplers : dict of str to SampleFn
        One sampler per candidate neighboring pair (the key describes the pair). A
        sampler returns ``(n,)``, ``(n, n_columns)`` or ``(n, n_messages, size)``
        (a run of several messages of several values each).
    budget : AuditBudget
    seed : int or SeedSequence
        Pilot samples use ``child_seed(seed, 0, pair_index, world)``, confirming
        samples ``child_seed(seed, 1, world)``: disjoint addresses.
    delta : float
        δ of the claim being audited, in [0, 1).
    channel : str
        What the observable is (for the report).
    names : tuple of str, optional
        Names of the observable's columns.
    events : dict of str to list of (column, kind, value), optional
        Extra candidate events per pair, derived from the pair itself (never from
        samples), e.g. the knife edge of a raw-data decision; ``kind`` is ``"=="``,
        ``">="`` or ``"<="``. They compete with the pilot's own candidates.
    batch_size : int, optional
        Runs per sampler call, >= 1. None (the default): one call per pair and world
        at the addresses above, as before executors existed. Given: a world's runs
        are split into batches of ``batch_size`` (the last one shorter), batch ``b``
        drawn at the world's address extended by ``b`` (``child_seed(seed, 0,
        pair_index, world, b)``, ``child_seed(seed, 1, world, b)``). The result
        depends on ``batch_size`` (the addresses) but never on ``executor`` or
        ``n_workers``; peak memory per worker is one batch of the algorithm's state.
    executor : None, str, concurrent.futures.Executor or dask Client, optional
        Where the sampler calls run (:mod:`fedpriv.audit.engine.tasks`): None or
        ``"serial"`` (default, in-process), ``"local"``, ``"processes"``, any
        ``concurrent.futures.Executor``, or a ``dask.distributed.Client``. Process
        pools receive the samplers serialized with cloudpickle (closures allowed).
    n_workers : int, optional
        Process-pool size for ``"local"``/``"processes"`` (default: CPU count).
    joint : bool, default True
        Read the whole view: for a pair whose runs have at least two columns, add the
        linear statistics of :func:`fedpriv.audit.engine.joint.linear_statistics` and
        the score of a logistic-regression distinguisher
        (:func:`fedpriv.audit.engine.joint.fit_distinguisher`, DP-Sniper) as candidate
        columns. The distinguisher is trained on ``pilot_samples`` further runs per
        world drawn at ``child_seed(seed, 2, pair_index, world)`` (batch ``b`` at that
        address extended by ``b``); its threshold is chosen on the pilot and the frozen
        model scores the confirming runs. False: each column alone, as before.

    Returns
    -------
    AuditResult
        ``method="end-to-end"``, the confirmed event's bound and the details of
        :data:`EndToEndAudit`.

    Raises
    ------
    ValueError
        If ``samplers`` is empty, ``delta`` or ``batch_size`` is out of range, the
        executor string is unknown or a sampler cannot be serialized for a process
        pool.
    TypeError
        If ``executor`` is of an unsupported type.
    """
    if not samplers:
        raise ValueError("`samplers` must offer at least one neighboring pair.")
    delta = check_delta("delta", delta)
    if batch_size is not None:
        batch_size = check_int_at_least("batch_size", batch_size, 1)
    if n_workers is not None:
        n_workers = check_int_at_least("n_workers", n_workers, 1)
    started = time.perf_counter()
    pairs = list(samplers)
    functions = [samplers[pair] for pair in pairs]
    draw = functools.partial(
        _draw,
        functions,
        seed=seed,
        batch_size=batch_size,
        executor=executor,
        n_workers=n_workers,
        names=pairs,
    )
    pilot_draws = draw(
        [
            (index, world, budget.pilot_samples, (0, index, world))
            for index in range(len(pairs))
            for world in (0, 1)
        ]
    )
    maps = _joint_maps(pilot_draws, draw, budget=budget, joint=joint)
    best: tuple[float, str, tuple[int, str, float]] | None = None
    n_candidates = 0
    for index, pair in enumerate(pairs):
        pilots = [maps[index].columns(p) for p in pilot_draws[2 * index : 2 * index + 2]]
        pooled = np.concatenate(pilots, axis=0)
        extra = list((events or {}).get(pair, []))
        candidates = _candidate_events(pooled) + extra
        n_candidates += len(candidates)
        scores = _pilot_scores(
            _hit_counts(pilots[0], candidates),
            len(pilots[0]),
            _hit_counts(pilots[1], candidates),
            len(pilots[1]),
            delta,
            n_confirm=budget.samples,
            confidence=budget.confidence,
        )
        for event, score in zip(candidates, scores, strict=True):
            if best is None or score > best[0]:
                best = (score, pair, event)
    assert best is not None
    pilot_epsilon, pair, event = best
    chosen = pairs.index(pair)
    # The event (pair, column map, threshold) is fixed here, before any confirming run
    # exists; confirmation tests it alone, in two directions.
    confirming = [
        maps[chosen].columns(observed)
        for observed in draw([(chosen, world, budget.samples, (1, world)) for world in (0, 1)])
    ]
    bound = confirm_event(
        _indicator(confirming[0], event),
        _indicator(confirming[1], event),
        confidence=budget.confidence,
        delta=delta,
    )
    names = maps[chosen].names(pilot_draws[2 * chosen], names)
    return AuditResult(
        method="end-to-end",
        bound=bound,
        seconds=time.perf_counter() - started,
        channel=channel,
        event=describe_event(event, names),
        neighbors=pair,
        pilot_epsilon=pilot_epsilon,
        epsilon_lower_bound_at_1e_6=math.nan,
        bound_at_1e_6=None,
        event_at_1e_6=None,
        n_pairs=len(pairs),
        n_candidates=n_candidates,
    )
