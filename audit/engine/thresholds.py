"""Choosing the threshold of a Laplace LLR audit before its confirming samples exist.

The mechanism-level Laplace audits (:func:`fedpriv.audit.engine.tree_nodes.audit_laplace_release`,
and the Gaussian node audit of :mod:`fedpriv.audit.engine.gaussian_nodes`) bound ``ε`` on the
single event ``{LLR >= c}``. ``c`` comes from a grid fixed by the mechanism's parameters
(:func:`laplace_llr_grid`), scored by the bound each candidate would give
(:func:`projected_bounds`) under the declared law (:func:`_design_probabilities`) or a pilot
sample (:func:`pilot_probabilities`); the choice never sees the confirming samples.
"""

from __future__ import annotations

import numpy as np
from fedpriv.audit.engine.tree_product import release_locations
from fedpriv.audit.estimators import clopper_pearson_interval

__all__ = ["design_threshold", "laplace_llr_grid", "pilot_probabilities", "projected_bounds"]

_N_LINEAR = 129


def laplace_llr_grid(loc_d: object, loc_d_prime: object, scale: float) -> np.ndarray:
    """Candidate thresholds, fixed by the locations and the scale (never by samples).

    129 equally spaced points on ``[-max, max]`` (``max = Σ|S - S'| / b``, the LLR's
    cap) and, when every coordinate moves by the same ``g``, the exact lattice
    ``k g / b`` (``|k| <= m``) on which saturated samples sit.

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True values in D and D'.
    scale : float
        Laplace scale b > 0.

    Returns
    -------
    ndarray of float64, shape (n_thresholds,)
        Sorted, unique.
    """
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    gaps = np.abs(loc_d - loc_d_prime)
    top = float(gaps.sum()) / scale
    grid = [np.linspace(-top, top, _N_LINEAR)]
    if np.all(gaps == gaps[0]):
        # Same arithmetic as the LLR: a sum of exact ±g terms, divided by b once.
        grid.append(np.arange(-gaps.size, gaps.size + 1) * gaps[0] / scale)
    return np.unique(np.concatenate(grid))


def _node_law(gap: float, scale: float, step: float, world: int) -> np.ndarray:
    """Declared law of one node's LLR term ``sign(g) clip(2y − S − S', −|g|, |g|)``.

    On the grid ``−|g|, −|g| + step, ..., |g|``: in D the term is ``2N + |g|`` clipped
    (``N ~ Lap(b)``): atom ½ at ``+|g|``, atom ``½ e^{−|g|/b}`` at ``−|g|``, density
    ``e^{−(|g| − t)/(2b)} / (4b)`` between; in D' it is the mirror image.
    """
    g = abs(gap)
    n = round(2 * g / step)
    inner = -g + step * np.arange(1, n)  # the open interval (−g, g)
    law = np.zeros(n + 1)
    law[1:n] = np.exp(-(g - inner) / (2 * scale)) / (4 * scale) * step
    law[n] = 0.5
    law[0] = 0.5 * np.exp(-g / scale)
    law /= law.sum()  # the discretized density's mass, renormalised
    return law if world == 0 else law[::-1]


def _design_probabilities(
    gaps: np.ndarray, scale: float, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``P(LLR >= c)`` in D and D' for each ``c`` of ``grid``, from the declared law.

    ``gaps`` are the ``|S − S'|`` of the independent coordinates. The per-coordinate
    laws (:func:`_node_law`, 200 bins per smallest gap) are convolved. Used only to
    choose the threshold before any sample is drawn, so its discretization error can
    cost power, never validity.
    """
    step = float(gaps.min()) / 200.0
    tails = []
    for world in (0, 1):
        law = np.ones(1)
        for gap in gaps:
            law = np.convolve(law, _node_law(gap, scale, step, world))
        values = (-gaps.sum() + step * np.arange(law.size)) / scale
        tail = np.cumsum(law[::-1])[::-1]  # P(LLR >= values[i])
        index = np.searchsorted(values, grid - 0.5 * step / scale, side="left")
        tails.append(np.where(index < law.size, tail[np.minimum(index, law.size - 1)], 0.0))
    return tails[0], tails[1]


def pilot_probabilities(
    pilot_d: np.ndarray, pilot_dp: np.ndarray, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``P(LLR >= c)`` from pilot samples, moved against the event.

    ``k − √k/2 − 1`` in D and ``k + √k/2 + 1`` in D', so that a far tail seen a
    handful of times in the pilot (its ratio there mostly noise) does not win.

    Parameters
    ----------
    pilot_d, pilot_dp : ndarray of float64, shape (n,) and (n',)
        Pilot LLR samples in D and in D'.
    grid : ndarray of float64, shape (m,)
        Candidate thresholds c.

    Returns
    -------
    p_d, p_dp : ndarray of float64, shape (m,)
        The moved estimates of ``P_D(LLR >= c)`` (down) and ``P_D'(LLR >= c)`` (up).
    """
    hits_d = pilot_d.size - np.searchsorted(np.sort(pilot_d), grid, side="left")
    hits_dp = pilot_dp.size - np.searchsorted(np.sort(pilot_dp), grid, side="left")
    hits_d = np.maximum(hits_d - 0.5 * np.sqrt(hits_d) - 1.0, 0.0)
    hits_dp = np.minimum(hits_dp + 0.5 * np.sqrt(hits_dp) + 1.0, pilot_dp.size)
    return hits_d / pilot_d.size, hits_dp / pilot_dp.size


def projected_bounds(
    p_d: np.ndarray, p_dp: np.ndarray, *, n_confirm: int, confidence: float, delta: float = 0.0
) -> np.ndarray:
    """The bound each event of probabilities ``(p_d, p_dp)`` would give on ``n_confirm`` runs.

    Expected counts, Clopper–Pearson at the confirmation's level ``(1 − confidence)/4``
    (one threshold, two directions), ``ln((low − δ)/high)`` as the confirmation
    computes it (:func:`estimate_epsilon_lower_bound`).

    Parameters
    ----------
    p_d, p_dp : ndarray of float64, shape (m,)
        Event probabilities in D and in D'.
    n_confirm : int
        Confirming runs per world, >= 1.
    confidence : float
        The confirmation's confidence, in (0, 1).
    delta : float
        The δ of the bound, in [0, 1).

    Returns
    -------
    ndarray of float64, shape (m,)
        The projected ε lower bound of each event (``-inf`` where it gives none).
    """
    k_d = np.rint(np.clip(p_d, 0.0, 1.0) * n_confirm).astype(np.int64)
    k_dp = np.rint(np.clip(p_dp, 0.0, 1.0) * n_confirm).astype(np.int64)
    significance = (1.0 - confidence) / 4.0
    low, _ = clopper_pearson_interval(k_d, n_confirm, significance=significance, side="lower")
    _, high = clopper_pearson_interval(k_dp, n_confirm, significance=significance, side="upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(low > delta, np.log(low - delta) - np.log(high), -np.inf)


def design_threshold(
    loc_d: np.ndarray, loc_d_prime: np.ndarray, *, scale: float, n_samples: int, confidence: float
) -> float:
    """The joint audit's threshold ``c`` chosen from the declared Laplace law (no sample).

    The candidate of :func:`~fedpriv.audit.engine.thresholds.laplace_llr_grid` whose
    projected bound on ``n_samples`` confirming runs per world is the largest
    (:mod:`fedpriv.audit.engine.thresholds`).

    Parameters
    ----------
    loc_d, loc_d_prime : ndarray of float64, shape (m,)
        Checked locations (:func:`~fedpriv.audit.engine.tree_product.release_locations`).
    scale : float
        Laplace scale b > 0.
    n_samples : int
        Confirming runs per world, >= 1.
    confidence : float
        Confidence of the confirmation, in (0, 1).

    Returns
    -------
    float
    """
    grid = laplace_llr_grid(loc_d, loc_d_prime, scale)
    p_d, p_dp = _design_probabilities(np.abs(loc_d - loc_d_prime), scale, grid)
    projected = projected_bounds(p_d, p_dp, n_confirm=n_samples, confidence=confidence)
    return float(grid[int(np.argmax(projected))])
