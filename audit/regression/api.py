"""Regression-test API: audit a mechanism against a privacy claim in one call.

:func:`audit_mechanism` runs ``mechanism(dataset, n_samples, rng)`` on the two
datasets of a :class:`NeighboringPair`, in two stages with disjoint SeedSequence
subtrees (DP-Sniper's ``n_check``/``n_final``, StatDP's event/detect iterations):

1. **Pilot** (``pilot_samples`` per world): fix the score (the output itself for
   scalars; a Fisher discriminant fitted on the pilot for vectors; or the caller's
   ``score`` or white-box ``log_density_ratio``), its orientation and
   ``n_thresholds`` thresholds, each chosen to maximise the bound it is *predicted*
   to give at the confirmation size.
2. **Confirmation** (``samples`` per world, fresh draws): Clopper–Pearson bounds on
   the selected events only, Bonferroni over thresholds and both directions. Since
   the selection never saw these samples, the count of tests stays honest.

The route depends on the claim (``estimator="auto"``): ``PureDP`` — the ε lower bound
(δ = 0) and the curve audit; ``ApproxDP``/``ZCDP``/``RDP``/``PLD`` — the ε lower
bound at the claim's δ, ``ln((p_lo - δ)/q_hi)``, and the curve audit of δ_LB(ε')
against the claimed δ(ε'); ``GaussianDP`` — the μ lower bound, which refutes a μ-GDP claim for
any mechanism, with the ε lower bound at δ measured directly on the same events (never
μ converted through the Gaussian curve, which bounds ε only for Gaussian-shaped
mechanisms; ``estimator="gdp"`` on an ``ApproxDP`` claim reports μ and refutes the
claim only through the direct ε bound). All bounds of one audit come from one simultaneous
family (:mod:`fedpriv.audit.estimators._bounds`), so "violated" — any of them beyond the claim — has a
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
  bound, under the reading).
- ``sequential=True``: the confirmation samples come in ``looks`` equal batches; after
  each, every bound is recomputed from confidence sequences
  (:mod:`fedpriv.audit.estimators.sequential`, valid at any stopping time) and the audit
  stops as soon as the claim is refuted or the budget is spent (``n_samples`` is then
  the samples used, ``samples_budget`` the budget).

Length: the public regression-test API (:class:`NeighboringPair`, :class:`AuditResult`,
:func:`audit_mechanism`, :func:`assert_private`) with its validated plan and its two
stages; a third of it is documentation.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.audit.regression._selection import fit_score, select_events
from fedpriv.audit.estimators.curve import CurveAudit, audit_privacy_curve, default_epsilon_grid
from fedpriv.audit.executor import child_root, mechanism_name, sample_scores
from fedpriv.audit.neighbors import NeighboringPair
from fedpriv.audit.estimators.gdp import MuLowerBound, estimate_gdp_mu_lower_bound
from fedpriv.audit.estimators.threshold import (
    EpsilonLowerBound,
    _check_open_unit,
    estimate_epsilon_lower_bound,
)
from fedpriv.privacy._checks import check_delta, check_int_at_least
from fedpriv.privacy.errors import MechanismError, PrivacyViolationError, ResourceLimitError
from fedpriv.privacy.guarantees import ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.relations import NeighboringRelation

__all__ = ["MAX_SAMPLES", "AuditResult", "NeighboringPair", "assert_private", "audit_mechanism"]

#: Most samples per world (confirmation or pilot) one audit may ask for: 10⁹ scalar
#: draws per world are minutes of sampling in batches; 10¹² would be days.
MAX_SAMPLES = 10**9

_ESTIMATORS = ("auto", "threshold", "curve", "gdp")
_READINGS = ("any", "gaussian")
#: With ``executor="local"``, confirmation sampling predicted (from the pilot) to take
#: less than this many seconds in-process runs in-process: a process pool only pays
#: off for expensive mechanisms (benchmarks/bench_audit.py).
_LOCAL_POOL_MIN_SECONDS = 2.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    epsilon_lower_bound : float
        ε lower bound at ``delta`` (nats, >= 0); for the GDP route, ε at ``delta``
        of ``mu.mu_lower_bound``-GDP.
    confidence : float
        Family-wise confidence of every bound in the result.
    violated : bool
        Whether some bound exceeds the claim (statistical evidence the claim is
        false). False never certifies the claim.
    claim : guarantee
    claimed_epsilon : float
        ``claim.get_epsilon(delta)``.
    delta : float
        δ at which ``epsilon_lower_bound`` is stated.
    route : str
        ``"threshold"`` (PureDP), ``"curve"`` or ``"gdp"``.
    score : str
        ``"identity"``, ``"projection"``, ``"score"`` (caller's) or ``"llr"``.
    orientation : int
        +1 if events are ``{score >= c}``, -1 if ``{score <= c}``.
    thresholds : tuple of float
        Pilot-selected thresholds, in the original score units.
    n_samples, n_pilot_samples : int
        Confirmation and pilot samples per world.
    bound : EpsilonLowerBound or None
        Threshold-test details. In a sequential audit it was computed from confidence
        sequences; re-reading it at another δ with
        :func:`~fedpriv.audit.estimators.epsilon_lower_bound_at_delta` (Clopper–Pearson at
        the stopping time) is not anytime-valid.
    curve : CurveAudit or None
        Curve audit (None on the GDP route).
    mu : MuLowerBound or None
        GDP details (GDP route only).
    relation : NeighboringRelation or None
    seed_entropy : int
        ``root.entropy`` of the audit's SeedSequence (write it into reports).
    seconds : float
        Wall time.
    reading : str
        ``"any"`` (every bound holds for any mechanism) or ``"gaussian"`` (the
        verdict may also rest on the Gaussian-DP reading of the claim, see the module
        docstring).
    reading_epsilon_lower_bound : float
        Under ``reading="gaussian"``: ε at ``delta`` of ``mu.mu_lower_bound``-GDP (a lower
        bound on ε only if the output's trade-off curve is Gaussian); NaN otherwise.
    samples_budget : int
        Confirmation samples per world the audit could use (``n_samples`` unless the
        audit was sequential and stopped early).
    looks : int
        Looks taken at the evidence (1 for a fixed-sample audit).
    """

    epsilon_lower_bound: float
    confidence: float
    violated: bool
    claim: Any
    claimed_epsilon: float
    delta: float
    route: str
    score: str
    orientation: int
    thresholds: tuple[float, ...]
    n_samples: int
    n_pilot_samples: int
    bound: EpsilonLowerBound | None
    curve: CurveAudit | None
    mu: MuLowerBound | None
    relation: NeighboringRelation | None
    seed_entropy: int
    seconds: float
    reading: str = "any"
    reading_epsilon_lower_bound: float = math.nan
    samples_budget: int = 0
    looks: int = 1

    def __post_init__(self) -> None:
        if self.samples_budget == 0:
            object.__setattr__(self, "samples_budget", self.n_samples)

    @property
    def samples_saved(self) -> int:
        """Confirmation samples per world not drawn (``samples_budget - n_samples``)."""
        return self.samples_budget - self.n_samples

    @property
    def tightness(self) -> float:
        """``epsilon_lower_bound / claimed_epsilon`` (NaN if the claim's ε is 0 or inf)."""
        if not 0.0 < self.claimed_epsilon < math.inf:
            return math.nan
        return self.epsilon_lower_bound / self.claimed_epsilon

    @property
    def evidence(self) -> str:
        """One human-readable sentence with the numbers behind the verdict."""
        verdict = "VIOLATED" if self.violated else "no evidence of a violation"
        text = (
            f"{verdict}: claim {self.claim!r}; ε lower bound {self.epsilon_lower_bound:.4g}"
            f" at δ={self.delta:.3g} vs claimed ε {self.claimed_epsilon:.4g}"
            f" ({self.confidence:.0%} confidence, {self.n_samples} samples per world,"
            f" {self.score} score, route {self.route}"
        )
        if self.bound is not None and self.bound.direction != "none":
            sign = ">=" if self.orientation > 0 else "<="
            threshold = self.orientation * self.bound.threshold
            text += (
                f"; best event {{score {sign} {threshold:.4g}}} {self.bound.direction},"
                f" counts {self.bound.count_d}/{self.bound.count_d_prime}"
            )
        if self.mu is not None:
            claimed_mu = getattr(self.claim, "mu", math.nan)
            text += f"; μ lower bound {self.mu.mu_lower_bound:.4g} vs claimed μ {claimed_mu:.4g}"
        if self.reading == "gaussian" and self.mu is not None:
            text += (f"; Gaussian-DP reading: claim read as μ <= {_claim_mu(self.claim, self.delta):.4g},"
                     f" ε {self.reading_epsilon_lower_bound:.4g} at δ={self.delta:.3g} if the"
                     " trade-off curve is Gaussian")
        if self.looks > 1 or self.samples_budget != self.n_samples:
            text += f"; sequential: {self.looks} look(s), {self.samples_saved} samples per world saved"
        if self.curve is not None and self.curve.violated:
            e = self.curve.worst_epsilon
            i = self.curve.epsilons.index(e)
            text += (
                f"; curve: δ_LB({e:.3g}) = {self.curve.delta_lower_bounds[i]:.4g}"
                f" > claimed {self.curve.claimed_deltas[i]:.4g}"  # type: ignore[index]
            )
        if self.relation is not None:
            text += f"; relation {self.relation.value}"
        return text + ")"

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-friendly summary (nested results as dicts, claim as repr)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif f.name == "claim":
                value = repr(value)
            elif isinstance(value, NeighboringRelation):
                value = value.value
            out[f.name] = value
        out.update(tightness=self.tightness, evidence=self.evidence)
        return out


def _claim_mu(claim: Any, delta: float) -> float:
    """μ₀ of the Gaussian-DP reading: the largest μ with ``ε_μ(δ) <= claim's ε at δ``,
    rounded up (a larger μ₀ only removes alarms).

    A GaussianDP claim is its own μ. Otherwise μ₀ solves ``δ_μ(ε) = δ`` (the GDP δ(ε)
    of Dong, Roth & Su 2019, Cor. 2.13, increasing in μ) with ``ε`` the claim's ε at
    ``δ``; 0 when that ε is 0 and ``inf`` when it is infinite.
    """
    if isinstance(claim, GaussianDP):
        return float(claim.mu)
    from scipy import optimize

    from fedpriv.privacy.conversions import gaussian_dp_delta

    epsilon = float(claim.get_epsilon(delta))
    if epsilon <= 0.0 or delta <= 0.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    high = 1.0
    while gaussian_dp_delta(high, epsilon) < delta:
        high *= 2.0
    # the root rounded up: reading the claim as a larger μ can only remove alarms
    root = optimize.brentq(lambda mu: gaussian_dp_delta(mu, epsilon) - delta, 0.0, high,
                           xtol=1e-14, rtol=1e-14)
    while gaussian_dp_delta(root, epsilon) < delta:
        root = math.nextafter(root, math.inf)
    return float(root)


def _route(claim: Any, estimator: str, reading: str = "any") -> str:
    if reading not in _READINGS:
        raise ValueError(f"`reading` must be one of {_READINGS}, got {reading!r}.")
    if reading == "gaussian":
        if estimator not in ("auto", "gdp"):
            raise ValueError(
                "`reading='gaussian'` uses the GDP route; pass estimator 'auto' or 'gdp', "
                f"got {estimator!r}.")
        estimator = "gdp"
    if estimator not in _ESTIMATORS:
        raise ValueError(
            f"`estimator` must be one of {_ESTIMATORS}, got {estimator!r}."
        )
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


def audit_mechanism(
    mechanism: Callable[..., np.ndarray],
    pair: NeighboringPair,
    *,
    claim: Any,
    samples: int = 100_000,
    seed: int | np.random.SeedSequence = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    score: Callable[[np.ndarray], np.ndarray] | None = None,
    log_density_ratio: Callable[[np.ndarray], np.ndarray] | None = None,
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
    """Audit ``mechanism`` on a neighboring pair against a privacy ``claim``.

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
        See :mod:`fedpriv.audit.executor` (None, "serial", "local", "processes", a
        concurrent.futures.Executor or a dask Client). ``"local"`` runs the pilot
        in-process and the confirmation on a local process pool when the pilot
        predicts it would take >= 2 s in-process (else in-process). The executor
        never changes the numbers, only the wall time.
    n_workers : int, optional
        Local pool size.
    reading : {"any", "gaussian"}, default "any"
        ``"gaussian"`` also refutes an (ε, δ) claim read as Gaussian-DP (module
        docstring): needs ``estimator`` "auto" or "gdp" and a claim with ``delta > 0``.
    sequential : bool, default False
        Draw the confirmation in ``looks`` batches with anytime-valid bounds and stop at
        the first refutation (module docstring).
    looks : int, default 10
        Batches of a sequential audit, in [1, samples].

    Returns
    -------
    AuditResult

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
    >>> result = audit_mechanism(laplace, NeighboringPair(1.0, 0.0),
    ...                          claim=PureDP(1.0), samples=10**5, executor=None)
    >>> result.violated, 0.9 < result.epsilon_lower_bound <= 1.0
    (False, True)
    >>> audit_mechanism(laplace, NeighboringPair(1.0, 0.0), claim=PureDP(0.5),
    ...                 samples=10**5, executor=None).violated
    True
    """
    started = time.perf_counter()
    plan = _plan(pair, claim, samples=samples, confidence=confidence, delta=delta,
                 estimator=estimator, pilot_samples=pilot_samples,
                 n_thresholds=n_thresholds, epsilons=epsilons, reading=reading)
    if not isinstance(sequential, bool):
        raise TypeError(f"`sequential` must be a bool, got {type(sequential).__name__}.")
    looks = check_int_at_least("looks", looks, 1) if sequential else 1
    if looks > plan.samples:
        raise ValueError(f"`looks` must be in [1, samples = {plan.samples}], got {looks}.")
    root = as_seed_sequence(seed)
    datasets = (pair.dataset, pair.dataset_prime)
    common = {"batch_size": batch_size, "executor": executor, "n_workers": n_workers}
    transform, kind, orientation, thresholds = _pilot_stage(
        mechanism, datasets, plan, child_root(root, 0), common,
        score=score, log_density_ratio=log_density_ratio,
    )
    if sequential:
        evidence = _confirm_sequential(mechanism, datasets, plan, child_root(root, 2),
                                       common, transform, orientation, thresholds, looks)
    else:
        # Stage 2: confirmation on fresh samples (a disjoint subtree).
        scores_d, scores_dp = sample_scores(
            mechanism, datasets, n_samples=plan.samples, root=child_root(root, 1),
            transform=transform, **common,
        )
        evidence = _confirm(plan, orientation * scores_d, orientation * scores_dp, thresholds)
        evidence["n_samples"] = plan.samples
    return AuditResult(
        **evidence,
        confidence=plan.confidence,
        claim=claim,
        delta=plan.delta,
        route=plan.route,
        score=kind,
        orientation=orientation,
        thresholds=tuple(float(orientation * t) for t in thresholds),
        n_pilot_samples=plan.pilot,
        samples_budget=plan.samples,
        reading=plan.reading,
        relation=pair.relation,
        seed_entropy=int(root.entropy),
        seconds=time.perf_counter() - started,
    )


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


def _check_samples(name: str, value: Any) -> int:
    """A sample count in [1, MAX_SAMPLES]; refused before anything is sampled."""
    value = check_int_at_least(name, value, 1)
    if value > MAX_SAMPLES:
        raise ResourceLimitError(
            f"`{name}` must be in [1, {MAX_SAMPLES:,}] (MAX_SAMPLES per world), got {value:,}."
        )
    return value


def _plan(pair: Any, claim: Any, *, samples: Any, confidence: Any, delta: Any,
          estimator: str, pilot_samples: Any, n_thresholds: Any, epsilons: Any,
          reading: str = "any") -> _Plan:
    """Validate :func:`audit_mechanism`'s arguments (nothing runs before this)."""
    if not isinstance(pair, NeighboringPair):
        raise TypeError(f"`pair` must be a NeighboringPair, got {type(pair).__name__}.")
    if not (hasattr(claim, "get_delta") and hasattr(claim, "get_epsilon")):
        raise TypeError(
            f"`claim` must be a privacy guarantee, got {type(claim).__name__}."
        )
    samples = _check_samples("samples", samples)
    confidence = _check_open_unit("confidence", confidence)
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
        raise ValueError("`reading='gaussian'` needs delta > 0: at δ = 0 a Gaussian-DP "
                         "curve has ε = inf and the reading would refute nothing.")
    grid = (
        None
        if route == "gdp"
        else np.asarray(
            default_epsilon_grid(claim) if epsilons is None else epsilons,
            dtype=np.float64,
        )
    )
    return _Plan(claim, route, samples, pilot, confidence, n_thresholds, delta, grid, reading)


def _pilot_stage(
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    plan: _Plan,
    root: np.random.SeedSequence,
    common: dict[str, Any],
    *,
    score: Callable[[np.ndarray], np.ndarray] | None,
    log_density_ratio: Callable[[np.ndarray], np.ndarray] | None,
) -> tuple[Callable[[np.ndarray], np.ndarray], str, float, np.ndarray]:
    """Stage 1: pilot samples (their own subtree) choose the score and the events.

    With ``executor="local"`` the (small) pilot runs in-process, and its wall time
    decides whether the confirmation is worth a process pool (``common`` is updated).
    Returns ``(transform, score kind, orientation, thresholds)``.
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
    for name, values in (
        ("pilot scores of D", pilot_d),
        ("pilot scores of D'", pilot_dp),
    ):
        if values.shape != (plan.pilot,) or not np.all(np.isfinite(values)):
            raise MechanismError(
                f"{name} of mechanism {mechanism_name(mechanism)} must be finite with "
                f"shape ({plan.pilot},), got shape {values.shape} with "
                f"{int(np.size(values) - np.isfinite(values).sum())} non-finite value(s)."
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
    return transform, kind, orientation, thresholds


def _confirm(plan: _Plan, scores_d: np.ndarray, scores_dp: np.ndarray,
             thresholds: np.ndarray) -> dict[str, Any]:
    """Stage 2's bounds on the (oriented) confirmation scores, and the verdict."""
    claim, confidence, delta = plan.claim, plan.confidence, plan.delta
    bound = curve = mu = None
    claimed_epsilon = float(claim.get_epsilon(delta))
    if plan.route == "gdp":
        mu = estimate_gdp_mu_lower_bound(
            scores_d, scores_dp, thresholds=thresholds, confidence=confidence
        )
        # The ε printed beside μ is measured directly on the same events (the same
        # simultaneous Clopper–Pearson family, so both hold jointly at `confidence`):
        # a valid lower bound on ε at δ for ANY mechanism. μ converted through the
        # Gaussian-DP curve is one only for a Gaussian-shaped mechanism (Laplace(1) is
        # exactly 1-DP, yet a μ bound near 2 would convert to ε ≈ 4.4 at δ = 1e-5).
        bound = estimate_epsilon_lower_bound(
            scores_d, scores_dp, thresholds=thresholds, confidence=confidence, delta=delta,
        )
        epsilon_lb = bound.epsilon_lower_bound
        # A μ lower bound refutes a μ-GDP claim for any mechanism: μ-GDP means
        # Φ⁻¹(TPR) − Φ⁻¹(FPR) <= μ for every test (Dong, Roth & Su 2019, Def. 2.6 and
        # Prop. 2.4); an (ε, δ) claim is refuted only by the direct ε bound.
        violated = (
            mu.mu_lower_bound > claim.mu
            if isinstance(claim, GaussianDP)
            else epsilon_lb > claimed_epsilon
        )
        extra = _reading_evidence(plan, mu)
        reading_violated = extra.pop("reading_violated")
        violated = violated or reading_violated
    else:
        bound = estimate_epsilon_lower_bound(
            scores_d, scores_dp, thresholds=thresholds, confidence=confidence, delta=delta,
        )
        curve = audit_privacy_curve(
            scores_d, scores_dp, claim=claim, thresholds=thresholds,
            epsilons=plan.grid, confidence=confidence,
        )
        epsilon_lb = bound.epsilon_lower_bound
        violated = epsilon_lb > claimed_epsilon or curve.violated
        extra = {}
    return {"epsilon_lower_bound": float(epsilon_lb), "violated": bool(violated),
            "claimed_epsilon": claimed_epsilon, "bound": bound, "curve": curve, "mu": mu,
            **extra}


def _reading_evidence(plan: _Plan, mu: MuLowerBound) -> dict[str, Any]:
    """The Gaussian-DP reading's verdict and ε (module docstring); empty under "any"."""
    if plan.reading != "gaussian":
        return {"reading_violated": False}
    from fedpriv.privacy.guarantees import gaussian_dp_epsilon

    return {"reading_violated": mu.mu_lower_bound > _claim_mu(plan.claim, plan.delta),
            "reading_epsilon_lower_bound": float(
                gaussian_dp_epsilon(mu.mu_lower_bound, plan.delta))}


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
        violated = (mu.mu_lower_bound > claim.mu if isinstance(claim, GaussianDP)
                    else epsilon_lb > claimed_epsilon)
        extra = _reading_evidence(plan, mu)
        reading_violated = extra.pop("reading_violated")
        violated = violated or reading_violated
    else:
        curve = curve_from_bounds(bounds, epsilons=plan.grid, claim=claim)
        violated = epsilon_lb > claimed_epsilon or curve.violated
    return {"epsilon_lower_bound": float(epsilon_lb), "violated": bool(violated),
            "claimed_epsilon": claimed_epsilon, "bound": bound, "curve": curve, "mu": mu,
            **extra}


def _confirm_sequential(mechanism: Callable[..., np.ndarray], datasets: tuple[Any, Any],
                        plan: _Plan, root: np.random.SeedSequence, common: dict[str, Any],
                        transform: Callable[[np.ndarray], np.ndarray], orientation: int,
                        thresholds: np.ndarray, looks: int) -> dict[str, Any]:
    """Stage 2 in ``looks`` batches (subtree ``root``, batch ``i`` at child ``i``).

    Only the event counts are kept. After each batch the bounds come from confidence
    sequences (:func:`fedpriv.audit.estimators.sequential.sequential_event_bounds`),
    valid simultaneously at every look, so stopping at the first refutation keeps the
    family-wise false-alarm probability <= 1 - confidence.
    """
    from fedpriv.audit.estimators.sequential import sequential_event_bounds
    from fedpriv.audit.estimators.threshold import _count_at_least

    sizes = np.full(looks, plan.samples // looks, dtype=np.int64)
    sizes[: plan.samples % looks] += 1
    count_d = np.zeros(thresholds.size, dtype=np.int64)
    count_dp = np.zeros(thresholds.size, dtype=np.int64)
    used = 0
    evidence: dict[str, Any] = {}
    for look, size in enumerate(sizes, start=1):
        scores_d, scores_dp = sample_scores(
            mechanism, datasets, n_samples=int(size), root=child_root(root, look - 1),
            transform=transform, **common,
        )
        count_d += _count_at_least(np.sort(orientation * scores_d), thresholds)
        count_dp += _count_at_least(np.sort(orientation * scores_dp), thresholds)
        used += int(size)
        bounds = sequential_event_bounds(count_d, used, count_dp, used,
                                         thresholds=thresholds, confidence=plan.confidence)
        evidence = _confirm_from_bounds(plan, bounds)
        evidence.update(n_samples=used, looks=look)
        if evidence["violated"]:
            break
    return evidence


def assert_private(
    mechanism: Callable[..., np.ndarray],
    pair: NeighboringPair,
    *,
    claim: Any,
    **options: Any,
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
