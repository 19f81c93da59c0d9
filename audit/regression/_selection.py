"""Pilot-stage selection for :func:`audit.audit_mechanism` (private helpers).

On the pilot samples only: fit the score of vector outputs (a ridge Fisher
discriminant), and rank candidate events ``{score >= c}`` in both orientations by the
bound each is predicted to give on the fresh confirmation samples. Nothing here
produces a bound: the ranking is a heuristic (fast Wilson bounds stand in for
Clopper–Pearson), and validity comes from confirming on samples the selection never
saw.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fedpriv.audit.estimators.threshold import count_at_least

__all__ = ["fit_score", "select_events"]

_MAX_CANDIDATES = 512
#: One-sided level of the pilot's shrinkage bounds (z ≈ 2.6): strong enough that the
#: maximum of the pilot noise over hundreds of candidate events does not win.
_PILOT_LEVEL = 0.005


class _Projection:
    """Picklable linear score ``outputs @ weights`` (fitted on the pilot)."""

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = weights

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        y = np.asarray(outputs, dtype=np.float64).reshape(outputs.shape[0], -1)
        return y @ self.weights


def _identity(outputs: np.ndarray) -> np.ndarray:
    """Scalar outputs as float64 scores."""
    return np.asarray(outputs, dtype=np.float64).reshape(outputs.shape[0])


def fit_score(
    pilot_d: np.ndarray, pilot_dp: np.ndarray
) -> tuple[Callable[[np.ndarray], np.ndarray], str]:
    """Identity for scalar outputs, else a ridge Fisher discriminant on the pilot."""
    if pilot_d.ndim == 1 or int(np.prod(pilot_d.shape[1:])) == 1:
        return _identity, "identity"
    x0 = pilot_d.reshape(pilot_d.shape[0], -1).astype(np.float64)
    x1 = pilot_dp.reshape(pilot_dp.shape[0], -1).astype(np.float64)
    diff = x0.mean(axis=0) - x1.mean(axis=0)
    cov = 0.5 * (np.cov(x0, rowvar=False) + np.cov(x1, rowvar=False))
    cov = np.atleast_2d(cov)
    ridge = 1e-6 * max(float(np.trace(cov)) / cov.shape[0], 1e-12)
    weights = np.linalg.solve(cov + ridge * np.eye(cov.shape[0]), diff)
    if not np.all(np.isfinite(weights)) or not np.any(weights):
        weights = diff if np.any(diff) else np.ones_like(diff)
    return _Projection(weights), "projection"


def _candidates(s0: np.ndarray, s1: np.ndarray, ordered: np.ndarray | None) -> np.ndarray:
    """Candidate thresholds: the pooled pilot scores, or 513 of their quantiles.

    ``pooled`` is ``s0`` followed by ``s1``. ``ordered``, when given, is ``pooled``
    sorted (a permutation of the same bits): :func:`np.unique` and the quantiles are
    then read from it without sorting or partitioning ``pooled`` again, with the same
    result (``np.unique`` keeps the first of each run of equal values of its own
    sort, and equal values are the same bits when no score is ±0, which
    :func:`_sorted_pilots` checks; the quantiles are read at np.quantile's positions,
    :func:`_inverted_cdf_positions`).
    """
    levels = np.linspace(0.0, 1.0, _MAX_CANDIDATES + 1)
    if ordered is None:
        pooled = np.concatenate([s0, s1])
        unique = np.unique(pooled)
        if unique.size <= _MAX_CANDIDATES:
            return unique
        return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))
    first = np.empty(ordered.shape, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    unique = ordered[first]
    if unique.size <= _MAX_CANDIDATES:
        return unique
    return np.unique(ordered[_inverted_cdf_positions(ordered.size, levels)])


def _inverted_cdf_positions(n: int, levels: np.ndarray) -> np.ndarray:
    """Positions in a sorted array of ``n`` values of its ``method="inverted_cdf"``
    quantiles at ``levels``: index ``n·q − 1`` when that is a whole number, else the
    next one up, and 0 below it, as :func:`np.quantile` computes them (NumPy's
    ``_inverted_cdf``). Reading them from the sorted pool gives np.quantile's values
    without its copy and partition of the whole pool (~0.13 s CPU at 2·10⁶ pilot
    scores; issue 23); tested against np.quantile."""
    index = n * levels - 1
    previous = np.floor(index)
    positions = np.where(index - previous == 0, previous, previous + 1).astype(np.intp)
    positions[positions < 0] = 0
    return positions


def _has_zero(ordered: np.ndarray) -> bool:
    """Whether a sorted array holds 0.0 or -0.0."""
    return bool(np.searchsorted(ordered, 0.0, "right") > np.searchsorted(ordered, 0.0, "left"))


def _sorted_pilots(
    scores_d: np.ndarray, scores_dp: np.ndarray
) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
    """``(sign, sort(sign·D), sort(sign·D'), sorted pool or None)`` for sign +1 and -1.

    One sort per world and one merge of the two sorted worlds (issue 23): the sign -1
    arrays are the sign +1 ones negated and reversed, which is ``np.sort(-x)`` bit
    for bit unless a score is ±0 (equal values whose order ``np.sort`` leaves open).
    Pilots holding a zero therefore sort each orientation afresh, as before.
    """
    s0, s1 = np.sort(scores_d), np.sort(scores_dp)
    if _has_zero(s0) or _has_zero(s1):
        return [(1, s0, s1, None), (-1, np.sort(-1 * scores_d), np.sort(-1 * scores_dp), None)]
    # a stable sort of two sorted runs is a linear merge (timsort)
    pooled = np.sort(np.concatenate([s0, s1]), kind="stable")
    return [(1, s0, s1, pooled), (-1, -s0[::-1], -s1[::-1], -pooled[::-1])]


def _wilson(p: np.ndarray, n: int, z: float, side: float) -> np.ndarray:
    """Wilson score bound (``side`` -1 lower, +1 upper): a fast stand-in for
    Clopper–Pearson used only to *rank* events on the pilot, never for a bound."""
    center = p + z * z / (2 * n)
    spread = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return np.clip((center + side * spread) / (1 + z * z / n), 0.0, 1.0)


def _predicted(
    route: str,
    p_num: np.ndarray,
    p_den: np.ndarray,
    n: int,
    level: float,
    delta: float,
    curve_terms: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    """Bound each event is predicted to give on ``n`` fresh samples.

    ``p_num``/``p_den`` are already shrunk towards "no evidence" by pilot confidence
    bounds (:func:`_select`), so that among events with equal true ratios the
    frequent ones, whose pilot estimates are reliable, win over rare ones that only
    look good by chance.
    """
    from scipy import special

    z = float(special.ndtri(1.0 - level))
    low, high = _wilson(p_num, n, z, -1.0), _wilson(p_den, n, z, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if route == "gdp":
            value = special.ndtri(low) - special.ndtri(high)
        else:
            value = np.log(np.maximum(low - delta, 0.0)) - np.log(high)
            if curve_terms is not None:  # relative δ excess on the claimed curve
                exp_eps, claimed = curve_terms
                excess = (low[None, :] - exp_eps[:, None] * high[None, :]) / np.maximum(
                    claimed[:, None], 1e-12
                )
                value = np.maximum(value, np.max(excess, axis=0) - 1.0)
    return np.where(np.isnan(value), -np.inf, value)


def select_events(
    scores_d: np.ndarray,
    scores_dp: np.ndarray,
    *,
    route: str,
    n_confirm: int,
    n_thresholds: int,
    level: float,
    delta: float,
    curve_terms: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[int, np.ndarray]:
    """Orientation and thresholds (in oriented units) chosen on the pilot scores."""
    from scipy import special

    best: tuple[float, int, np.ndarray] | None = None
    for sign, s0, s1, ordered in _sorted_pilots(scores_d, scores_dp):
        cands = _candidates(s0, s1, ordered)
        k0, k1 = count_at_least(s0, cands), count_at_least(s1, cands)
        z = float(special.ndtri(1.0 - _PILOT_LEVEL))
        p0, p1 = k0 / s0.size, k1 / s1.size
        low0, high0 = _wilson(p0, s0.size, z, -1.0), _wilson(p0, s0.size, z, 1.0)
        low1, high1 = _wilson(p1, s1.size, z, -1.0), _wilson(p1, s1.size, z, 1.0)
        value = np.maximum(
            _predicted(route, low0, high1, n_confirm, level, delta, curve_terms),
            _predicted(route, low1, high0, n_confirm, level, delta, curve_terms),
        )
        order = np.argsort(-value, kind="stable")[:n_thresholds]
        score = float(value[order[0]])
        if best is None or score > best[0]:
            best = (score, sign, np.sort(cands[order]))
    assert best is not None
    return best[1], best[2]
