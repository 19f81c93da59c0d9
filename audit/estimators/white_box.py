"""White-box scores: the log-likelihood ratio of an output under D versus D'.

When the mechanism's output density is known, the Neyman–Pearson lemma makes the
log-likelihood ratio ``LLR(y) = ln p_D(y) / p_D'(y)`` the optimal test statistic:
the events ``{LLR >= c}`` are the most powerful tests at every level, and for pure DP
the event ``{LLR >= ε}`` attains the privacy loss exactly. Pass such a function as
``log_density_ratio=`` to :func:`audit.audit_mechanism`; these factories build the
ones of the two standard noise distributions (Laplace and Gaussian).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fedpriv.privacy.checks import check_finite_array, check_positive

__all__ = ["gaussian_log_density_ratio", "laplace_log_density_ratio"]


def _locations(loc_d: object, loc_d_prime: object) -> tuple[np.ndarray, np.ndarray]:
    a = np.atleast_1d(check_finite_array("loc_d", loc_d))
    b = np.atleast_1d(check_finite_array("loc_d_prime", loc_d_prime))
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"`loc_d` and `loc_d_prime` must be 1-D of equal length, got {a.shape} and {b.shape}."
        )
    return a, b


def _as_matrix(outputs: np.ndarray, width: int) -> np.ndarray:
    y = np.asarray(outputs, dtype=np.float64)
    y = y.reshape(y.shape[0], -1) if y.ndim != 1 else y[:, None]
    if y.shape[1] != width:
        raise ValueError(f"outputs must have {width} column(s), got {y.shape[1]}.")
    return y


class _LaplaceRatio:
    """Picklable Laplace LLR (so audits can ship it to process pools and dask)."""

    def __init__(self, loc_d: np.ndarray, loc_d_prime: np.ndarray, scale: float) -> None:
        self.loc_d, self.loc_d_prime, self.scale = loc_d, loc_d_prime, scale

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        a, b = self.loc_d, self.loc_d_prime
        gap = a - b
        y = _as_matrix(outputs, a.size)
        terms = np.sign(gap) * np.clip(2.0 * y - a - b, -np.abs(gap), np.abs(gap))
        return terms.sum(axis=1) / self.scale


class _GaussianRatio:
    """Picklable Gaussian LLR."""

    def __init__(self, loc_d: np.ndarray, loc_d_prime: np.ndarray, sigma: float) -> None:
        self.loc_d, self.loc_d_prime, self.sigma = loc_d, loc_d_prime, sigma

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        a, b = self.loc_d, self.loc_d_prime
        y = _as_matrix(outputs, a.size)
        return ((a - b) * (2.0 * y - a - b)).sum(axis=1) / (2.0 * self.sigma**2)


def laplace_log_density_ratio(
    loc_d: object, loc_d_prime: object, scale: float
) -> Callable[[np.ndarray], np.ndarray]:
    """LLR of independent Laplace(loc, scale) coordinates, exact at saturation.

    ``LLR(y) = sum_j (|y_j - loc'_j| - |y_j - loc_j|) / scale``, each term computed as
    ``sign(g_j) clip(2 y_j - loc_j - loc'_j, -|g_j|, |g_j|)`` with ``g = loc - loc'``
    so that saturated samples reach the maximum ``sum |g_j| / scale`` exactly
    (see :func:`fedpriv.audit.estimators.laplace_threshold_grid`, Notes).

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (k,) or scalar
        Noise-free outputs in D and D'.
    scale : float
        Laplace scale b > 0 of every coordinate.

    Returns
    -------
    callable
        ``llr(outputs) -> ndarray (n,)`` for outputs of shape (n,) or (n, k).

    Raises
    ------
    ValueError
        If the locations differ in shape or are not finite, or ``scale <= 0``.

    Examples
    --------
    >>> llr = laplace_log_density_ratio(1.0, 0.0, 1.0)
    >>> llr(np.array([-5.0, 0.5, 9.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    a, b = _locations(loc_d, loc_d_prime)
    return _LaplaceRatio(a, b, check_positive("scale", scale))


def gaussian_log_density_ratio(
    loc_d: object, loc_d_prime: object, noise_stddev: float
) -> Callable[[np.ndarray], np.ndarray]:
    """LLR of independent Gaussian(loc, noise_stddev²) coordinates.

    ``LLR(y) = sum_j (loc_j - loc'_j)(2 y_j - loc_j - loc'_j) / (2 σ²)``.

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (k,) or scalar
    noise_stddev : float
        σ > 0.

    Returns
    -------
    callable
        ``llr(outputs) -> ndarray (n,)``.

    Raises
    ------
    ValueError
        If the locations differ in shape or are not finite, or ``noise_stddev <= 0``.

    Examples
    --------
    >>> gaussian_log_density_ratio(1.0, 0.0, 1.0)(np.array([0.5, 1.0])).tolist()
    [0.0, 0.5]
    """
    a, b = _locations(loc_d, loc_d_prime)
    return _GaussianRatio(a, b, check_positive("noise_stddev", noise_stddev))
