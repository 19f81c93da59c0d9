"""The curve audit: empirical δ lower bounds at several ε' against the claimed δ(ε').

A claim is a whole privacy curve ε' -> δ(ε'), not only its headline point. For any
event O and any ε' >= 0, an (ε', δ(ε'))-DP mechanism satisfies
``P_D(O) - exp(ε') P_D'(O) <= δ(ε')``, so ``δ_LB(ε') = p_lo - exp(ε') q_hi`` (with
Clopper–Pearson bounds ``p_lo`` on the numerator world's probability and ``q_hi`` on
the other's) lower-bounds the true δ(ε') of the mechanism. Comparing δ_LB(ε') with
the claim's δ(ε') on a grid of ε' catches under-noising the headline ε misses
(fedpriv's measurement: a 10% under-noised T = 1024 tree is caught at
ε' = 0.2 with 3·10⁵ samples, never at its headline ε).

All ε' reuse the same simultaneous family of bounds (:mod:`fedpriv.audit.estimators.bounds`), so the
whole curve holds at the stated confidence with no correction for the number of ε'.
Source: Delta-Siege (Lokna et al., CCS 2023, ``LinesearchEstimator``) and Google's
``verifyApproximateDp``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Protocol

import numpy as np
from fedpriv.audit.estimators.bounds import EventBounds, simultaneous_event_bounds
from fedpriv.audit.estimators.threshold import check_sample_array

__all__ = [
    "CurveAudit",
    "audit_privacy_curve",
    "audit_privacy_curve_from_bounds",
    "default_epsilon_grid",
    "estimate_delta_lower_bounds",
]


class _HasDeltaCurve(Protocol):
    def get_delta(self, target_epsilon: float) -> float: ...
    def get_epsilon(self, target_delta: float) -> float: ...


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CurveAudit:
    """Empirical δ lower bounds on an ε' grid, optionally against a claimed curve.

    Attributes
    ----------
    epsilons : tuple of float
        The ε' grid (nats), each >= 0.
    delta_lower_bounds : tuple of float
        δ_LB(ε') in [0, 1] for each ε', jointly valid at `confidence`.
    claimed_deltas : tuple of float or None
        The claim's δ(ε') at each ε', or None when no claim was given.
    confidence : float
        Family-wise confidence of all bounds together, in (0, 1).
    n_samples : int
        Samples per world (the smaller world).
    n_tests : int
        (threshold, direction) tests the confidence was split over.
    """

    epsilons: tuple[float, ...]
    delta_lower_bounds: tuple[float, ...]
    claimed_deltas: tuple[float, ...] | None
    confidence: float
    n_samples: int
    n_tests: int

    @property
    def excess(self) -> tuple[float, ...]:
        """δ_LB(ε') - δ_claim(ε') per ε' (NaN when there is no claim)."""
        if self.claimed_deltas is None:
            return tuple(math.nan for _ in self.epsilons)
        return tuple(lb - c for lb, c in zip(self.delta_lower_bounds, self.claimed_deltas))

    @property
    def violated(self) -> bool:
        """Whether some δ_LB(ε') exceeds the claimed δ(ε') (False without a claim)."""
        return self.claimed_deltas is not None and max(self.excess) > 0.0

    @property
    def worst_epsilon(self) -> float:
        """The ε' with the largest excess (or largest δ_LB without a claim)."""
        values = self.delta_lower_bounds if self.claimed_deltas is None else self.excess
        return self.epsilons[int(np.argmax(values))]

    def to_dict(self) -> dict[str, Any]:
        """Fields plus ``violated`` and ``worst_epsilon`` (JSON friendly)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out.update(violated=self.violated, worst_epsilon=self.worst_epsilon)
        return out


def _check_epsilon_grid(epsilons: object) -> np.ndarray:
    grid = check_sample_array("epsilons", epsilons)
    if grid.min() < 0:
        raise ValueError(f"`epsilons` must be >= 0, got {grid.min()!r}.")
    return grid


def estimate_delta_lower_bounds(
    scores_d: object,
    scores_d_prime: object,
    *,
    thresholds: object,
    epsilons: object,
    confidence: float = 0.95,
) -> CurveAudit:
    """δ lower bounds ``max_c max(p_lo - e^{ε'} q_hi, 0)`` at each ε' of a grid.

    Parameters
    ----------
    scores_d, scores_d_prime : array_like of float, shape (n_samples_d,), (n_samples_d_prime,)
        Finite scalar scores of the outputs in worlds D and D'.
    thresholds : array_like of float, shape (n_thresholds,)
        Predeclared (or pilot-selected) thresholds of the events ``{score >= c}``.
    epsilons : array_like of float, shape (n_epsilons,)
        The ε' grid, each >= 0.
    confidence : float, default 0.95
        Family-wise confidence, in (0, 1); the bounds are those of
        :func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound` at the same
        confidence, so both results hold jointly.

    Returns
    -------
    CurveAudit
        With ``claimed_deltas=None``.

    Raises
    ------
    ValueError
        If an array is empty, not 1-D or not finite, an ε' is negative, or
        ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> d, dp = rng.laplace(1, 1, 10**5), rng.laplace(0, 1, 10**5)
    >>> curve = estimate_delta_lower_bounds(d, dp, thresholds=[0.0, 0.5, 1.0],
    ...                                     epsilons=[0.0, 0.5, 2.0])
    >>> curve.delta_lower_bounds[0] > 0.3, curve.delta_lower_bounds[2]
    (True, 0.0)
    """
    grid = _check_epsilon_grid(epsilons)
    bounds = simultaneous_event_bounds(
        scores_d, scores_d_prime, thresholds=thresholds, confidence=confidence
    )
    return _delta_lower_bounds_from(bounds, grid)


def _delta_lower_bounds_from(bounds: EventBounds, grid: np.ndarray) -> CurveAudit:
    """:func:`estimate_delta_lower_bounds` on already computed event bounds."""
    numerator, denominator = bounds.directed()
    excess = numerator[None, :] - np.exp(grid)[:, None] * denominator[None, :]
    deltas = np.clip(excess.max(axis=1), 0.0, 1.0)
    return CurveAudit(
        epsilons=tuple(float(e) for e in grid),
        delta_lower_bounds=tuple(float(d) for d in deltas),
        claimed_deltas=None,
        confidence=bounds.confidence,
        n_samples=min(bounds.n_samples_d, bounds.n_samples_d_prime),
        n_tests=bounds.n_tests,
    )


def default_epsilon_grid(claim: _HasDeltaCurve, n: int = 9) -> np.ndarray:
    """``n`` equally spaced ε' from 0 to the claim's ε at δ = 1e-6 (10 if infinite).

    Depends only on the claim, never on samples, so it is predeclared.

    Parameters
    ----------
    claim : guarantee
        Any guarantee with ``get_epsilon(target_delta)``.
    n : int, default 9
        Number of grid points, >= 1.

    Returns
    -------
    ndarray of float64, shape (n,)
        ε' in nats, increasing from 0.

    Examples
    --------
    >>> from fedpriv.privacy import PureDP
    >>> default_epsilon_grid(PureDP(1.0), n=5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    top = float(claim.get_epsilon(1e-6))
    if not math.isfinite(top) or top <= 0:
        top = 10.0
    return np.linspace(0.0, top, n)


def audit_privacy_curve(
    scores_d: object,
    scores_d_prime: object,
    *,
    claim: _HasDeltaCurve,
    thresholds: object,
    epsilons: object | None = None,
    confidence: float = 0.95,
) -> CurveAudit:
    """Compare empirical δ_LB(ε') with the claimed δ(ε') = ``claim.get_delta(ε')``.

    Parameters
    ----------
    scores_d, scores_d_prime, thresholds, confidence
        As in :func:`estimate_delta_lower_bounds`.
    claim : guarantee
        Any privacy guarantee with ``get_delta(target_epsilon)`` (``PureDP``,
        ``ApproxDP`` through the tight privacy region of Kairouz et al., ``GaussianDP``,
        ``ZCDP``, ``RDP``, ``PLD``).
    epsilons : array_like of float, optional
        The ε' grid; default :func:`default_epsilon_grid` of the claim.

    Returns
    -------
    CurveAudit
        ``violated`` is True when some δ_LB(ε') exceeds the claimed δ(ε'), which
        refutes the claim at the stated confidence.

    Raises
    ------
    ValueError
        As in :func:`estimate_delta_lower_bounds`.
    """
    grid = default_epsilon_grid(claim) if epsilons is None else epsilons
    curve = estimate_delta_lower_bounds(
        scores_d, scores_d_prime, thresholds=thresholds, epsilons=grid, confidence=confidence
    )
    return _with_claimed_deltas(curve, claim)


def audit_privacy_curve_from_bounds(
    bounds: EventBounds, *, claim: _HasDeltaCurve, epsilons: object | None = None
) -> CurveAudit:
    """:func:`audit_privacy_curve` on event bounds already computed from the scores.

    ``bounds`` is :func:`~fedpriv.audit.estimators.bounds.simultaneous_event_bounds`
    of the scores, thresholds and confidence that :func:`audit_privacy_curve` would
    be given (or :func:`~fedpriv.audit.estimators.bounds.event_bounds_from_counts` of
    their counts); the result is then the same, field for field, without sorting the
    scores again (issue 23: the audit's ε bound and its curve share one sort per
    world).

    Parameters
    ----------
    bounds : EventBounds
        The event bounds of the scores.
    claim : Guarantee
        The claimed curve (``get_delta`` and ``get_epsilon``).
    epsilons : array_like of float, optional
        The ε' grid, each >= 0; default :func:`default_epsilon_grid` of ``claim``.

    Returns
    -------
    CurveAudit
    """
    grid = default_epsilon_grid(claim) if epsilons is None else epsilons
    curve = _delta_lower_bounds_from(bounds, _check_epsilon_grid(grid))
    return _with_claimed_deltas(curve, claim)


def _with_claimed_deltas(curve: CurveAudit, claim: _HasDeltaCurve) -> CurveAudit:
    claimed = tuple(float(claim.get_delta(e)) for e in curve.epsilons)
    return dataclasses.replace(curve, claimed_deltas=claimed)
