"""Regression-test API: audit a mechanism against a privacy claim in one call.

:func:`audit_mechanism` is the audit's one entry point: it dispatches on what it is
given (a black-box sampler, a tree counter's event, end-to-end samplers of a whole
algorithm, a one-run mechanism) and always returns an :class:`AuditResult`. Its
black-box route, :func:`audit_black_box`, runs ``mechanism(dataset, n_samples, rng)``
on the two datasets of a :class:`NeighboringPair`, in two stages with disjoint SeedSequence
subtrees (DP-Sniper's ``n_check``/``n_final``, StatDP's event/detect iterations):

1. **Pilot** (``pilot_samples`` per world): fix the score (the output itself for
   scalars; a Fisher discriminant fitted on the pilot for vectors; or the caller's
   ``score`` or white-box ``log_density_ratio``), its orientation and
   ``n_thresholds`` thresholds, each chosen to maximise the bound it is *predicted*
   to give at the confirmation size.
2. **Confirmation** (``samples`` per world, fresh draws): Clopper–Pearson bounds on
   the selected events only, Bonferroni over thresholds and both directions. Since
   the selection never saw these samples, the count of tests stays honest. Each batch
   is counted at the thresholds in its worker and dropped, so the confirmation's
   memory stays at one batch per worker at any ``samples``
   (:func:`fedpriv.audit.engine.executor.count_scores`); the pilot keeps its
   ``pilot_samples`` outputs.

The route depends on the claim (``estimator="auto"``): ``PureDP`` — the ε lower bound
(δ = 0) and the curve audit; ``ApproxDP``/``ZCDP``/``RDP``/``PLD`` — the ε lower
bound at the claim's δ, ``ln((p_lo - δ)/q_hi)``, and the curve audit of δ_LB(ε')
against the claimed δ(ε'); ``GaussianDP`` — the μ lower bound, which refutes a μ-GDP claim for
any mechanism, with the ε lower bound at δ measured directly on the same events (never
μ converted through the Gaussian curve, which bounds ε only for Gaussian-shaped
mechanisms; ``estimator="gdp"`` on an ``ApproxDP`` claim reports μ and refutes the
claim only through the direct ε bound). All bounds of one audit come from one simultaneous
family (:mod:`fedpriv.audit.estimators.bounds`), so "violated" — any of them beyond the claim — has a
family-wise false-alarm probability <= 1 - confidence.

Two options sharpen and shorten audits (issue 23), both off by default so default
numbers do not change:

- ``reading="gaussian"`` (Gaussian-DP reading of an (ε, δ) claim): the claim is read as
  "μ₀-GDP" with μ₀ the Gaussian calibration of (ε, δ) (the largest μ whose GDP curve
  gives at most ε at δ), and is refuted when the μ lower bound, which uses the middle of
  the trade-off curve where the rates are measured precisely, exceeds μ₀ (Nasr et al.,
  "Tight Auditing of Differentially Private Machine Learning", USENIX Security 2023,
  arXiv:2302.07956, Sec. 4: GDP-based auditing). The μ bound holds for any mechanism; the
  step from "not μ₀-GDP" to "not (ε, δ)-DP" holds only if the output's trade-off curve is
  Gaussian, so the verdict is stated under that reading and ``epsilon_lower_bound``
  stays the any-mechanism bound (``reading_epsilon_lower_bound`` is ε at δ of the μ
  bound, under the reading). The audit tests that assumption
  (:func:`~fedpriv.audit.estimators.shape.assess_gaussian_shape`: the equal-variance
  binormal curve fitted to pooled-quantile bins, likelihood-ratio G² against χ²) on
  the pilot, and on the confirmation's scores counted at the pilot's bin edges
  (:func:`~fedpriv.audit.estimators.shape.gaussian_shape_from_counts`; extra
  thresholds, the events' counts unchanged; sequential audits: the pilot only), the
  two sharing one share of the audit's Bonferroni family, ``(1 - confidence) / (2
  n_thresholds + 1)``, the Clopper–Pearson bounds keeping the rest. Where the shape is
  rejected, or the pilot is too small to test it, or the shape tests had less power
  than ``confidence`` against the non-Gaussian curves the claim itself allows (the
  Laplace mechanism's at the claim's ε and the lowest (ε, δ)-DP curve, that of
  randomized response and the geometric mechanism;
  :func:`~fedpriv.audit.estimators.shape.shape_test_power_against_claim`, computed
  from the cells and sample sizes in hand), the reading is declined:
  ``reading_verdict`` is ``"unresolved"`` and the reading refutes nothing; the
  any-mechanism bounds still do.
  A GaussianDP claim needs no shape test (the μ bound refutes it for any mechanism).
- ``sequential=True``: the confirmation samples come in ``looks`` equal batches; after
  each, every bound is recomputed from confidence sequences
  (:mod:`fedpriv.audit.estimators.sequential`, valid at any stopping time) and the audit
  stops as soon as the claim is refuted or the budget is spent (``n_samples`` is then
  the samples used, ``samples_budget`` the budget).

Length: the audit's entry point (:func:`audit_mechanism` and its route dispatch), the
black-box route (:func:`audit_black_box`) with its validated plan and its two stages,
and :func:`assert_private`; a third of it is documentation.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from fedpriv.algorithms.seeding import as_seed_sequence, child_seed
from fedpriv.audit.engine.executor import count_scores, mechanism_name, open_executor, sample_scores
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.audit.estimators.bounds import event_bounds_from_counts
from fedpriv.audit.estimators.curve import audit_privacy_curve_from_bounds, default_epsilon_grid
from fedpriv.audit.estimators.gdp import mu_lower_bound_from_bounds
from fedpriv.audit.estimators.result import AuditResult
from fedpriv.audit.estimators.shape import (
    GaussianShapeTest,
    ShapeTestPower,
    assess_gaussian_shape,
    pilot_cells_d_prime,
    pooled_quantile_edges,
)
from fedpriv.audit.estimators.threshold import check_sample_array, epsilon_lower_bound_from_counts
from fedpriv.audit.interfaces import Guarantee, Mechanism, ScoreFunction
from fedpriv.audit.regression._selection import fit_score, select_events
from fedpriv.audit.regression.reading import add_confirmation_shape, reading_evidence, shape_split
from fedpriv.privacy.accounting.guarantees import ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_open_unit
from fedpriv.privacy.errors import MechanismError, PrivacyViolationError, ResourceLimitError

if TYPE_CHECKING:
    from fedpriv.privacy.accounting.events import LaplaceTree

__all__ = [
    "MAX_SAMPLES",
    "AuditResult",
    "NeighboringPair",
    "assert_private",
    "audit_black_box",
    "audit_mechanism",
]

#: Most samples per world (confirmation or pilot) one audit may ask for: 10⁹ scalar
#: draws per world are minutes of sampling in batches; 10¹² would be days.
MAX_SAMPLES = 10**9

_ESTIMATORS = ("auto", "threshold", "curve", "gdp")
_READINGS = ("any", "gaussian")
#: With ``executor="local"``, confirmation sampling predicted (from the pilot) to take
#: less than this many seconds in-process runs in-process: a process pool only pays
#: off for expensive mechanisms (benchmarks/bench_audit.py).
_LOCAL_POOL_MIN_SECONDS = 2.0


def _route(claim: Any, estimator: str, reading: str = "any") -> str:
    if reading not in _READINGS:
        raise ValueError(f"`reading` must be one of {_READINGS}, got {reading!r}.")
    if reading == "gaussian":
        if estimator not in ("auto", "gdp"):
            raise ValueError(
                "`reading='gaussian'` uses the GDP route; pass estimator 'auto' or 'gdp', "
                f"got {estimator!r}."
            )
        estimator = "gdp"
    if estimator not in _ESTIMATORS:
        raise ValueError(f"`estimator` must be one of {_ESTIMATORS}, got {estimator!r}.")
    if estimator == "gdp":
        if not isinstance(claim, GaussianDP | ApproxDP):
            raise ValueError(
                "`estimator='gdp'` needs a GaussianDP or ApproxDP claim, got "
                f"{type(claim).__name__}."
            )
        return "gdp"
    if isinstance(claim, GaussianDP):
        return "gdp"
    if estimator == "threshold" or isinstance(claim, PureDP):
        return "threshold"
    return "curve"


def audit_black_box(
    mechanism: Mechanism,
    pair: NeighboringPair,
    *,
    claim: Guarantee,
    samples: int = 100_000,
    seed: int | np.random.SeedSequence = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    score: ScoreFunction | None = None,
    log_density_ratio: ScoreFunction | None = None,
    estimator: str = "auto",
    pilot_samples: int | None = None,
    n_thresholds: int = 16,
    epsilons: object | None = None,
    batch_size: int = 1 << 18,
    executor: Any = "local",
    n_workers: int | None = None,
    reading: str = "any",
    sequential: bool = False,
    looks: int = 10,
) -> AuditResult:
    """The black-box route of :func:`audit_mechanism`: a sampler on a pair of datasets.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, n_samples, rng) -> ndarray`` with ``n_samples`` rows
        (scalar outputs: shape (n,) or (n, 1)); vectorized over samples.
    pair : NeighboringPair
    claim : guarantee
        ``PureDP``, ``ApproxDP``, ``GaussianDP``, ``ZCDP``, ``RDP`` or ``PLD``.
    samples : int, default 100_000
        Confirmation samples per world, in [1, :data:`MAX_SAMPLES`].
    seed : int or SeedSequence, default 0
        Root of all randomness: pilot and confirmation use disjoint subtrees and
        every batch its own address, so results do not depend on the executor.
    confidence : float, default 0.95
        Family-wise confidence of the verdict, in (0, 1).
    delta : float, optional
        δ at which to state ε; default the claim's δ (ApproxDP), 0 (PureDP), else
        1e-5.
    score : callable, optional
        Black-box score ``outputs -> (n,)``; default identity for scalars, a
        pilot-fitted linear discriminant for vectors.
    log_density_ratio : callable, optional
        White-box score ``ln p_D(y)/p_D'(y)`` (see :mod:`fedpriv.audit.estimators.white_box`); overrides
        `score`.
    estimator : {"auto", "threshold", "curve", "gdp"}
        Route (see module docstring); "auto" picks it from the claim's type.
    pilot_samples : int, optional
        Pilot samples per world; default ``max(1000, samples // 10)``.
    n_thresholds : int, default 16
        Thresholds confirmed (tests = 2 x n_thresholds), >= 1.
    epsilons : array_like of float, optional
        ε' grid of the curve audit; default :func:`fedpriv.audit.estimators.curve.default_epsilon_grid`.
    batch_size : int, default 2**18
        Samples per batch (bounded memory; fixes the random-stream addresses).
    executor : default "local"
        See :mod:`fedpriv.audit.engine.executor` (None, "serial", "local", "processes", a
        concurrent.futures.Executor or a dask Client). ``"local"`` runs the pilot
        in-process and the confirmation on a local process pool when the pilot
        predicts it would take >= 2 s in-process (else in-process). The executor
        never changes the numbers, only the wall time.
    n_workers : int, optional
        Local pool size.
    reading : {"any", "gaussian"}, default "any"
        ``"gaussian"`` also refutes an (ε, δ) claim read as Gaussian-DP, unless the
        pilot rejects the Gaussian shape that reading assumes (module docstring):
        needs ``estimator`` "auto" or "gdp" and a claim with ``delta > 0``.
    sequential : bool, default False
        Draw the confirmation in ``looks`` batches with anytime-valid bounds and stop at
        the first refutation (module docstring).
    looks : int, default 10
        Batches of a sequential audit, in [1, samples].

    Returns
    -------
    AuditResult
        ``method="mechanism"``; details ``claim``, ``route``, ``score``,
        ``orientation``, ``thresholds``, ``n_pilot_samples``, ``curve``, ``mu``,
        ``neighboring_relation``, ``seed_entropy``, ``reading``, ``reading_epsilon_lower_bound``,
        ``reading_verdict`` (``"violated"``, ``"not refuted"`` or ``"unresolved"``
        under the Gaussian-DP reading, else None), ``shape_test`` (a
        :class:`~fedpriv.audit.estimators.shape.GaussianShapeTest`, the deciding one, or
        None where none ran), ``shape_tests`` (every shape test run: pilot, then
        confirmation), ``shape_power`` (a
        :class:`~fedpriv.audit.estimators.shape.ShapeTestPower`: the shape tests' power
        against the claim's own non-Gaussian curves, or None), ``family_confidence`` (the audit's family-wise confidence; the bound's
        ``confidence`` is the bounds' share of it), ``samples_budget``,
        ``samples_saved`` and ``looks``.

    Raises
    ------
    ValueError
        If a count or probability is out of range, the route does not fit the
        claim, or the mechanism/score returns the wrong shape.
    TypeError
        If `pair` is not a NeighboringPair or the claim has no ``get_delta``.

    Examples
    --------
    >>> def laplace(x, n, rng):
    ...     return x + rng.laplace(0.0, 1.0, n)       # ε = 1 for |x - x'| <= 1
    >>> result = audit_black_box(laplace, NeighboringPair(1.0, 0.0),
    ...                          claim=PureDP(1.0), samples=10**5, executor=None)
    >>> result.violated, 0.9 < result.epsilon_lower_bound <= 1.0
    (False, True)
    >>> audit_black_box(laplace, NeighboringPair(1.0, 0.0), claim=PureDP(0.5),
    ...                 samples=10**5, executor=None).violated
    True
    """
    started = time.perf_counter()
    plan = _plan(
        pair,
        claim,
        samples=samples,
        confidence=confidence,
        delta=delta,
        estimator=estimator,
        pilot_samples=pilot_samples,
        n_thresholds=n_thresholds,
        epsilons=epsilons,
        reading=reading,
    )
    if not isinstance(sequential, bool):
        raise TypeError(f"`sequential` must be a bool, got {type(sequential).__name__}.")
    looks = check_int_at_least("looks", looks, 1) if sequential else 1
    if looks > plan.samples:
        raise ValueError(f"`looks` must be in [1, samples = {plan.samples}], got {looks}.")
    root = as_seed_sequence(seed)
    datasets = (pair.dataset, pair.dataset_prime)
    common = {"batch_size": batch_size, "executor": executor, "n_workers": n_workers}
    plan = dataclasses.replace(plan, shape_stages=1 if sequential else 2)
    transform, kind, orientation, thresholds, shape = _pilot_stage(
        mechanism,
        datasets,
        plan,
        child_seed(root, 0),
        common,
        score=score,
        log_density_ratio=log_density_ratio,
    )
    edges = None
    if shape is not None:
        shape, edges, cells = shape
        cell = (cells, plan.pilot, plan.shape_level / plan.shape_stages)
        plan = dataclasses.replace(plan, shape=shape, shape_tests=(shape,), shape_cells=(cell,))
    if sequential:
        evidence = _confirm_sequential(
            mechanism,
            datasets,
            plan,
            child_seed(root, 2),
            common,
            transform,
            orientation,
            thresholds,
            looks,
        )
    else:
        # Stage 2: confirmation on fresh samples (a disjoint subtree), counted batch
        # by batch at the pilot's thresholds.
        # Under the Gaussian reading the same scores are also counted at the pilot's
        # shape-test bin edges (extra thresholds: the events' counts are unchanged).
        counted = thresholds if edges is None else np.concatenate([thresholds, orientation * edges])
        count_d, count_dp = count_scores(
            mechanism,
            datasets,
            n_samples=plan.samples,
            root=child_seed(root, 1),
            transform=transform,
            thresholds=counted,
            orientation=orientation,
            **common,
        )
        if edges is not None:
            plan = add_confirmation_shape(plan, count_d, count_dp, thresholds.size, orientation)
            count_d, count_dp = count_d[: thresholds.size], count_dp[: thresholds.size]
        evidence = _confirm(plan, count_d, count_dp, plan.samples, thresholds)
        evidence["n_samples"] = plan.samples
    n_samples = evidence.pop("n_samples")
    evidence.pop("epsilon_lower_bound")  # read back from the bound it came from
    return AuditResult(
        method="mechanism",
        bound=evidence.pop("bound"),
        claimed_epsilon=evidence.pop("claimed_epsilon"),
        violated=evidence.pop("violated"),
        seconds=time.perf_counter() - started,
        claim=claim,
        route=plan.route,
        score=kind,
        orientation=orientation,
        thresholds=tuple(float(orientation * t) for t in thresholds),
        n_pilot_samples=plan.pilot,
        curve=evidence.pop("curve"),
        mu=evidence.pop("mu"),
        neighboring_relation=pair.neighboring_relation,
        seed_entropy=int(root.entropy),
        reading=plan.reading,
        reading_epsilon_lower_bound=evidence.pop("reading_epsilon_lower_bound", math.nan),
        reading_verdict=evidence.pop("reading_verdict", None),
        shape_test=plan.shape,
        shape_tests=plan.shape_tests,
        shape_power=evidence.pop("shape_power", None),
        family_confidence=plan.family_confidence,
        samples_budget=plan.samples,
        samples_saved=plan.samples - n_samples,
        looks=evidence.pop("looks", 1),
    )


def audit_mechanism(
    mechanism: Mechanism | LaplaceTree | Mapping[str, Any] | Callable[..., np.ndarray],
    pair: NeighboringPair | None = None,
    *,
    claim: Guarantee | None = None,
    **options: Any,
) -> AuditResult:
    """Audit a mechanism against a privacy ``claim``: THE audit entry point.

    What is audited decides the route; every route returns an :class:`AuditResult`
    (``method`` names the route, ``details`` holds its own numbers):

    - a sampler ``mechanism(dataset, n_samples, rng)`` with a :class:`NeighboringPair`:
      the black-box audit :func:`audit_black_box` (``method="mechanism"``);
    - a :class:`~fedpriv.privacy.accounting.events.LaplaceTree` event with a reward-stream pair
      (:func:`~fedpriv.audit.engine.neighbors.stream_pair`): the tree counter the event
      describes (``"tree counter"``, or ``"tree nodes: joint"``/``"tree nodes:
      product"`` for the white-box node audits);
    - a mapping ``{pair description: sampler(world, n_samples, seed)}`` and no pair:
      an end-to-end audit of coupled runs of a whole algorithm (``"end-to-end"``);
    - a one-run mechanism ``mechanism(included, rng)``, no pair and ``n_canaries``:
      the one-run canary audit (``"one-run"``).

    The numbers are those of the route's own function (same seeds, same sampling
    order): :func:`audit_black_box`,
    :func:`~fedpriv.audit.engine.tree.audit_tree_counter` /
    :func:`~fedpriv.audit.engine.tree_nodes.audit_tree_nodes`,
    :func:`~fedpriv.audit.engine.coupled.search_and_confirm`,
    :func:`~fedpriv.audit.estimators.audit_one_run_mechanism`.

    Parameters
    ----------
    mechanism : callable, LaplaceTree or mapping
        What is audited (table above). A sampler follows the
        :class:`~fedpriv.audit.interfaces.Mechanism` protocol.
    pair : NeighboringPair, optional
        The two neighbouring datasets (black box) or reward streams (tree counter,
        :func:`~fedpriv.audit.engine.neighbors.stream_pair`); None for end-to-end samplers
        (each embodies its pair) and one-run audits.
    claim : guarantee, optional
        The claimed guarantee (:class:`~fedpriv.audit.interfaces.Guarantee`);
        required for the black-box and tree routes, optional for the others
        (without it ``claimed_epsilon`` is NaN and ``violated`` False).
    **options
        The route's options. Black box: every keyword of :func:`audit_black_box`.
        Tree counter: ``samples`` (runs per world, default 100_000), ``seed``
        (default 0), ``confidence``, ``noise_on_empty_nodes``, ``batch_size`` and
        ``method`` (``"round by round"``, the default, simulates the counter;
        ``"joint"``, ``"product"`` or ``"both"`` audit its covering nodes white-box,
        with ``pilot_samples`` and ``product_samples``). End-to-end: ``channel``
        (required), ``seed`` (default 0), ``delta`` (default 0), ``samples``,
        ``pilot_samples`` and ``confidence`` (an
        :class:`~fedpriv.audit.engine.coupled.AuditBudget`, defaults 2000, 200,
        0.95), ``names``, ``events``, ``batch_size``, ``executor``, ``n_workers``.
        One run: ``n_canaries`` (required), ``seed``, ``n_guesses``,
        ``confidence``, ``delta``.

    Returns
    -------
    AuditResult

    Raises
    ------
    TypeError
        If ``mechanism``/``pair`` fit no route, a required option is missing, an
        option is unknown to the route, or ``claim`` is not a guarantee.
    ValueError
        If an option is out of range (raised by the route), or a tree event does
        not match the stream pair.

    Examples
    --------
    >>> def laplace(x, n, rng):
    ...     return x + rng.laplace(0.0, 1.0, n)       # ε = 1 for |x - x'| <= 1
    >>> result = audit_mechanism(laplace, NeighboringPair(1.0, 0.0),
    ...                          claim=PureDP(1.0), samples=10**5, executor=None)
    >>> result.method, result.violated, 0.9 < result.epsilon_lower_bound <= 1.0
    ('mechanism', False, True)
    >>> audit_mechanism(laplace, NeighboringPair(1.0, 0.0), claim=PureDP(0.5),
    ...                 samples=10**5, executor=None).violated
    True
    >>> from fedpriv.audit.engine.neighbors import worst_case_reward_pair
    >>> from fedpriv.privacy.accounting.events import LaplaceTree
    >>> tree = audit_mechanism(LaplaceTree(scale=4.0, horizon=16),
    ...                        worst_case_reward_pair(16), claim=PureDP(1.25),
    ...                        samples=20_000)
    >>> tree.method, tree.violated, tree.n_nodes
    ('tree counter', False, 5)
    """
    if claim is not None and not isinstance(claim, Guarantee):
        raise TypeError(f"`claim` must be a privacy guarantee, got {type(claim).__name__}.")
    if _is_laplace_tree(mechanism):
        return _audit_tree(mechanism, pair, claim, options)
    if isinstance(mechanism, Mapping):
        if pair is not None:
            raise TypeError("end-to-end samplers embody their pairs: `pair` must be None.")
        return _audit_end_to_end(mechanism, claim, options)
    if not callable(mechanism):
        raise TypeError(
            "`mechanism` must be a sampler, a LaplaceTree event or a mapping "
            f"of end-to-end samplers, got {type(mechanism).__name__}."
        )
    if pair is None:
        if "n_canaries" not in options:
            raise TypeError("`pair` is required (or `n_canaries` for a one-run audit).")
        return _audit_one_run(mechanism, claim, options)
    if claim is None:
        raise TypeError("`claim` is required to audit a mechanism on a pair.")
    return audit_black_box(mechanism, pair, claim=claim, **options)


def _with_claim(result: AuditResult, claim: Guarantee | None) -> AuditResult:
    """``result`` compared with ``claim`` at the bound's δ (unchanged without one)."""
    if claim is None:
        return result
    return AuditResult(
        method=result.method,
        bound=result.bound,
        claimed_epsilon=float(claim.get_epsilon(result.delta)),
        seconds=result.seconds,
        details={**result.details, "claim": claim},
    )


def _is_laplace_tree(mechanism: object) -> bool:
    """``isinstance(mechanism, LaplaceTree)`` without importing the events module.

    An object can only be a ``LaplaceTree`` once :mod:`fedpriv.privacy.accounting.events`
    is imported, so a black-box audit need not import it (and its thirteen frozen
    dataclasses) at all.
    """
    events = sys.modules.get("fedpriv.privacy.accounting.events")
    return events is not None and isinstance(mechanism, events.LaplaceTree)


def _audit_tree(
    event: LaplaceTree,
    pair: NeighboringPair | None,
    claim: Guarantee | None,
    options: dict[str, Any],
) -> AuditResult:
    """The tree-counter route of :func:`audit_mechanism`."""
    from fedpriv.audit.engine.neighbors import stream_horizon
    from fedpriv.audit.engine.tree import audit_tree_counter
    from fedpriv.audit.engine.tree_nodes import audit_tree_nodes

    if claim is None:
        raise TypeError("`claim` is required to audit a tree counter.")
    if pair is None or stream_horizon(pair) != event.horizon:
        raise ValueError(f"the tree counter needs a stream pair of horizon {event.horizon}.")
    options = dict(options)
    method = options.pop("method", "round by round")
    common = {
        "scale": event.scale,
        "claimed_epsilon": float(claim.get_epsilon(0.0)),
        "n_samples": options.pop("samples", 100_000),
        "seed": options.pop("seed", 0),
        "released_prefixes": event.released_prefixes,
    }
    if method == "round by round":
        result = audit_tree_counter(pair, **common, **options)
    else:
        result = audit_tree_nodes(pair, **common, method=method, **options)
    return AuditResult(
        method=result.method,
        bound=result.bound,
        claimed_epsilon=result.claimed_epsilon,
        seconds=result.seconds,
        details={**result.details, "claim": claim},
    )


def _audit_end_to_end(
    samplers: Mapping[str, Any], claim: Guarantee | None, options: dict[str, Any]
) -> AuditResult:
    """The end-to-end route of :func:`audit_mechanism`."""
    from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm

    options = dict(options)
    if "channel" not in options:
        raise TypeError("an end-to-end audit needs `channel` (what the adversary observes).")
    budget = AuditBudget(
        **{
            name: options.pop(name)
            for name in ("pilot_samples", "samples", "confidence")
            if name in options
        }
    )
    result = search_and_confirm(
        dict(samplers),
        budget=budget,
        seed=options.pop("seed", 0),
        delta=options.pop("delta", 0.0),
        **options,
    )
    return _with_claim(result, claim)


def _audit_one_run(
    mechanism: Callable[..., np.ndarray], claim: Guarantee | None, options: dict[str, Any]
) -> AuditResult:
    """The one-run route of :func:`audit_mechanism`."""
    from fedpriv.audit.estimators.one_run import audit_one_run_mechanism

    return _with_claim(audit_one_run_mechanism(mechanism, **options), claim)


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    """The validated settings of one audit."""

    claim: Any
    route: str
    samples: int
    pilot: int
    confidence: float
    n_thresholds: int
    delta: float
    grid: np.ndarray | None
    reading: str = "any"
    #: level of the Gaussian-shape test (0: not run); ``confidence`` above is then the
    #: bounds' share of ``family_confidence`` (:func:`~fedpriv.audit.regression.reading.shape_split`)
    shape_level: float = 0.0
    shape: GaussianShapeTest | None = None
    family_confidence: float | None = None
    #: shape tests sharing ``shape_level``: 2 (pilot and confirmation), 1 (sequential:
    #: pilot only)
    shape_stages: int = 2
    shape_tests: tuple[GaussianShapeTest, ...] = ()
    #: per shape stage run: (fractions of D' below its cuts, samples per world, level)
    shape_cells: tuple[tuple[np.ndarray, int, float], ...] = ()
    shape_power: ShapeTestPower | None = None


def _check_samples(name: str, value: Any) -> int:
    """A sample count in [1, MAX_SAMPLES]; refused before anything is sampled."""
    value = check_int_at_least(name, value, 1)
    if value > MAX_SAMPLES:
        raise ResourceLimitError(
            f"`{name}` must be in [1, {MAX_SAMPLES:,}] (MAX_SAMPLES per world), got {value:,}."
        )
    return value


def _plan(
    pair: Any,
    claim: Any,
    *,
    samples: Any,
    confidence: Any,
    delta: Any,
    estimator: str,
    pilot_samples: Any,
    n_thresholds: Any,
    epsilons: Any,
    reading: str = "any",
) -> _Plan:
    """Validate :func:`audit_black_box`'s arguments (nothing runs before this)."""
    if not isinstance(pair, NeighboringPair):
        raise TypeError(f"`pair` must be a NeighboringPair, got {type(pair).__name__}.")
    if not isinstance(claim, Guarantee):
        raise TypeError(f"`claim` must be a privacy guarantee, got {type(claim).__name__}.")
    samples = _check_samples("samples", samples)
    confidence = check_open_unit("confidence", confidence)
    n_thresholds = check_int_at_least("n_thresholds", n_thresholds, 1)
    pilot = (
        max(1000, samples // 10)
        if pilot_samples is None
        else _check_samples("pilot_samples", pilot_samples)
    )
    route = _route(claim, estimator, reading)
    if delta is None:
        delta = (
            claim.delta
            if isinstance(claim, ApproxDP)
            else (0.0 if isinstance(claim, PureDP) else 1e-5)
        )
    delta = check_delta("delta", delta)
    if reading == "gaussian" and not isinstance(claim, GaussianDP) and delta <= 0.0:
        raise ValueError(
            "`reading='gaussian'` needs delta > 0: at δ = 0 a Gaussian-DP "
            "curve has ε = inf and the reading would refute nothing."
        )
    grid = (
        None
        if route == "gdp"
        else np.asarray(
            default_epsilon_grid(claim) if epsilons is None else epsilons, dtype=np.float64
        )
    )
    shape_level, family_confidence = 0.0, confidence
    if reading == "gaussian" and not isinstance(claim, GaussianDP):
        # the reading's step from "not μ₀-GDP" to "not (ε, δ)-DP" assumes a Gaussian
        # trade-off curve: the pilot tests it, at a share of the family's level
        confidence, shape_level = shape_split(confidence, n_thresholds)
    return _Plan(
        claim,
        route,
        samples,
        pilot,
        confidence,
        n_thresholds,
        delta,
        grid,
        reading,
        shape_level,
        None,
        family_confidence,
    )


def _pilot_stage(
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    plan: _Plan,
    root: np.random.SeedSequence,
    common: dict[str, Any],
    *,
    score: Callable[[np.ndarray], np.ndarray] | None,
    log_density_ratio: Callable[[np.ndarray], np.ndarray] | None,
) -> tuple[
    Callable[[np.ndarray], np.ndarray],
    str,
    float,
    np.ndarray,
    tuple[GaussianShapeTest, np.ndarray, np.ndarray] | None,
]:
    """Stage 1: pilot samples (their own subtree) choose the score and the events.

    With ``executor="local"`` the (small) pilot runs in-process, and its wall time
    decides whether the confirmation is worth a process pool (``common`` is updated).
    Under the Gaussian-DP reading of an (ε, δ) claim it also tests the Gaussian shape
    of the pilot scores' trade-off curve (:func:`assess_gaussian_shape`, at
    its share of ``plan.shape_level``) and cuts the bins the confirmation is tested
    on. Returns ``(transform, score kind, orientation, thresholds, (shape test, bin
    edges, fractions of D' below the test's cuts) or None)``.
    """
    executor = common["executor"]
    pilot_started = time.perf_counter()
    raw_d, raw_dp = sample_scores(
        mechanism,
        datasets,
        n_samples=plan.pilot,
        root=root,
        transform=None,
        **{**common, "executor": None if executor == "local" else executor},
    )
    if executor == "local":
        predicted = (time.perf_counter() - pilot_started) * plan.samples / plan.pilot
        if predicted < _LOCAL_POOL_MIN_SECONDS:
            common["executor"] = None
    if log_density_ratio is not None:
        transform, kind = log_density_ratio, "llr"
    elif score is not None:
        transform, kind = score, "score"
    else:
        transform, kind = fit_score(raw_d, raw_dp)
    pilot_d = np.asarray(transform(raw_d), dtype=np.float64)
    pilot_dp = np.asarray(transform(raw_dp), dtype=np.float64)
    for name, values in (("pilot scores of D", pilot_d), ("pilot scores of D'", pilot_dp)):
        if values.shape != (plan.pilot,) or not np.all(np.isfinite(values)):
            raise MechanismError(
                f"{name} of mechanism {mechanism_name(mechanism)} must be finite with "
                f"shape ({plan.pilot},), got shape {values.shape} with "
                f"{int(np.size(values) - np.isfinite(values).sum())} non-finite value(s)."
            )
    shape = None
    if plan.shape_level > 0.0:
        shape = (
            assess_gaussian_shape(pilot_d, pilot_dp, level=plan.shape_level / plan.shape_stages),
            pooled_quantile_edges(pilot_d, pilot_dp),
            pilot_cells_d_prime(pilot_d, pilot_dp),
        )
    curve_terms = None
    if plan.grid is not None:
        claim = plan.claim
        curve_terms = (np.exp(plan.grid), np.array([claim.get_delta(e) for e in plan.grid]))
    orientation, thresholds = select_events(
        pilot_d,
        pilot_dp,
        route=plan.route,
        n_confirm=plan.samples,
        n_thresholds=plan.n_thresholds,
        level=(1.0 - plan.confidence) / (4 * plan.n_thresholds),
        delta=plan.delta,
        curve_terms=curve_terms,
    )
    return transform, kind, orientation, thresholds, shape


def _confirm(
    plan: _Plan, count_d: np.ndarray, count_dp: np.ndarray, n_samples: int, thresholds: np.ndarray
) -> dict[str, Any]:
    """Stage 2's bounds from the confirmation counts, and the verdict.

    ``count_d[i]`` (``count_dp[i]``) is the number of the ``n_samples`` oriented
    confirmation scores of world D (D') that are >= ``thresholds[i]``
    (:func:`fedpriv.audit.engine.executor.count_scores`). The ε bound, the curve audit
    and the Gaussian-DP μ all read these counts; the numbers are those of
    :func:`estimate_epsilon_lower_bound`, :func:`audit_privacy_curve` and
    :func:`estimate_gdp_mu_lower_bound` on the scores themselves (each of which sorts
    and counts them), field for field (``tests/audit/test_shared_counts.py``; issue 23).
    """
    claim, confidence, delta = plan.claim, plan.confidence, plan.delta
    bound = curve = mu = None
    thresholds = check_sample_array("thresholds", thresholds)
    confidence = check_open_unit("confidence", confidence)
    counts = (count_d, n_samples, count_dp, n_samples)
    at_delta = {"thresholds": thresholds, "confidence": confidence, "delta": delta}
    event_bounds = event_bounds_from_counts(*counts, thresholds, confidence)
    claimed_epsilon = float(claim.get_epsilon(delta))
    if plan.route == "gdp":
        mu = mu_lower_bound_from_bounds(event_bounds)
        # The ε printed beside μ is measured directly on the same events (the same
        # simultaneous Clopper–Pearson family, so both hold jointly at `confidence`):
        # a valid lower bound on ε at δ for ANY mechanism. μ converted through the
        # Gaussian-DP curve is one only for a Gaussian-shaped mechanism (Laplace(1) is
        # exactly 1-DP, yet a μ bound near 2 would convert to ε ≈ 4.4 at δ = 1e-5).
        bound = epsilon_lower_bound_from_counts(*counts, **at_delta)
        epsilon_lb = bound.epsilon_lower_bound
        # A μ lower bound refutes a μ-GDP claim for any mechanism: μ-GDP means
        # Φ⁻¹(TPR) − Φ⁻¹(FPR) <= μ for every test (Dong, Roth & Su 2019, Def. 2.6 and
        # Prop. 2.4); an (ε, δ) claim is refuted only by the direct ε bound.
        violated = (
            mu.mu_lower_bound > claim.mu
            if isinstance(claim, GaussianDP)
            else epsilon_lb > claimed_epsilon
        )
        extra = reading_evidence(plan, mu)
        reading_violated = extra.pop("reading_violated")
        violated = violated or reading_violated
    else:
        bound = epsilon_lower_bound_from_counts(*counts, **at_delta)
        curve = audit_privacy_curve_from_bounds(event_bounds, claim=claim, epsilons=plan.grid)
        epsilon_lb = bound.epsilon_lower_bound
        violated = epsilon_lb > claimed_epsilon or curve.violated
        extra = {}
    return {
        "epsilon_lower_bound": float(epsilon_lb),
        "violated": bool(violated),
        "claimed_epsilon": claimed_epsilon,
        "bound": bound,
        "curve": curve,
        "mu": mu,
        **extra,
    }


def _confirm_from_bounds(plan: _Plan, bounds: Any) -> dict[str, Any]:
    """:func:`_confirm`'s evidence from anytime-valid bounds (sequential audits)."""
    from fedpriv.audit.estimators.sequential import (
        curve_from_bounds,
        epsilon_from_bounds,
        mu_from_bounds,
    )

    claim, delta = plan.claim, plan.delta
    claimed_epsilon = float(claim.get_epsilon(delta))
    bound = epsilon_from_bounds(bounds, delta)
    epsilon_lb = bound.epsilon_lower_bound
    curve = mu = None
    extra: dict[str, Any] = {}
    if plan.route == "gdp":
        mu = mu_from_bounds(bounds)
        violated = (
            mu.mu_lower_bound > claim.mu
            if isinstance(claim, GaussianDP)
            else epsilon_lb > claimed_epsilon
        )
        extra = reading_evidence(plan, mu)
        reading_violated = extra.pop("reading_violated")
        violated = violated or reading_violated
    else:
        curve = curve_from_bounds(bounds, epsilons=plan.grid, claim=claim)
        violated = epsilon_lb > claimed_epsilon or curve.violated
    return {
        "epsilon_lower_bound": float(epsilon_lb),
        "violated": bool(violated),
        "claimed_epsilon": claimed_epsilon,
        "bound": bound,
        "curve": curve,
        "mu": mu,
        **extra,
    }


def _confirm_sequential(
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    plan: _Plan,
    root: np.random.SeedSequence,
    common: dict[str, Any],
    transform: Callable[[np.ndarray], np.ndarray],
    orientation: int,
    thresholds: np.ndarray,
    looks: int,
) -> dict[str, Any]:
    """Stage 2 in ``looks`` batches (subtree ``root``, batch ``i`` at child ``i``).

    Only the event counts are kept. After each batch the bounds come from confidence
    sequences (:func:`fedpriv.audit.estimators.sequential.sequential_event_bounds`),
    valid simultaneously at every look, so stopping at the first refutation keeps the
    family-wise false-alarm probability <= 1 - confidence. A local process pool is
    opened once for all the looks, not once per look (the executor never changes the
    numbers).
    """
    from fedpriv.audit.estimators.sequential import sequential_event_bounds

    sizes = np.full(looks, plan.samples // looks, dtype=np.int64)
    sizes[: plan.samples % looks] += 1
    count_d = np.zeros(thresholds.size, dtype=np.int64)
    count_dp = np.zeros(thresholds.size, dtype=np.int64)
    used = 0
    evidence: dict[str, Any] = {}
    # the looks run one after another: a pool needs at most one look's tasks' workers
    n_tasks = 2 * -(-int(sizes.max()) // common["batch_size"])
    work = (mechanism, datasets, transform, thresholds, orientation)
    with open_executor(common["executor"], n_tasks, common["n_workers"], work) as pool:
        for look, size in enumerate(sizes, start=1):
            look_d, look_dp = count_scores(
                mechanism,
                datasets,
                n_samples=int(size),
                root=child_seed(root, look - 1),
                transform=transform,
                thresholds=thresholds,
                orientation=orientation,
                batch_size=common["batch_size"],
                executor=pool,
            )
            count_d += look_d
            count_dp += look_dp
            used += int(size)
            bounds = sequential_event_bounds(
                count_d, used, count_dp, used, thresholds=thresholds, confidence=plan.confidence
            )
            evidence = _confirm_from_bounds(plan, bounds)
            evidence.update(n_samples=used, looks=look)
            if evidence["violated"]:
                break
    return evidence


def assert_private(
    mechanism: Callable[..., np.ndarray], pair: NeighboringPair, *, claim: Any, **options: Any
) -> AuditResult:
    """Audit like :func:`audit_mechanism`; raise if the claim is refuted.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, n_samples, rng) -> ndarray``, as for
        :func:`audit_mechanism`.
    pair : NeighboringPair
        The two neighboring datasets D and D'.
    claim : guarantee
        The claimed guarantee (``PureDP``, ``ApproxDP``, ``GaussianDP``, ``ZCDP``,
        ``RDP`` or ``PLD``).
    **options
        Any keyword argument of :func:`audit_mechanism` (``samples``, ``seed``,
        ``confidence``, ``delta``, ``executor``, ...).

    Returns
    -------
    AuditResult
        When no violation was found (which does not certify the claim).

    Raises
    ------
    PrivacyViolationError
        When the audit refutes the claim; the message holds the evidence and the
        exception's ``result`` attribute the full :class:`AuditResult`. It derives
        from AssertionError, so pytest reports it as a test failure.

    Examples
    --------
    >>> def leaky(x, n, rng):
    ...     return x + rng.laplace(0.0, 0.25, n)     # true ε = 4
    >>> assert_private(leaky, NeighboringPair(1.0, 0.0), claim=PureDP(1.0),
    ...                samples=10**4, executor=None)
    Traceback (most recent call last):
    ...
    fedpriv.privacy.errors.PrivacyViolationError: VIOLATED: ...
    """
    __tracebackhide__ = True  # pytest: show the caller's line, not this helper
    result = audit_mechanism(mechanism, pair, claim=claim, **options)
    if result.violated:
        error = PrivacyViolationError(result.evidence)
        error.result = result  # type: ignore[attr-defined]
        raise error
    return result
