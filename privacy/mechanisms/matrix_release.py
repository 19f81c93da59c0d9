"""Symmetrised Gaussian release of a batch of symmetric matrices (FedUCB's node noise).

The node noise of FedUCB's Privatizer (Dubey & Pentland 2020, Alg. 2 lines 5–6,
§4.3) is ``Z = σ (N̂ + N̂ᵀ)/√2`` with ``N̂_ij ~ N(0, 1)`` i.i.d. over all
``(i, j)``: off-diagonal entries ``Z_ij = Z_ji ~ N(0, σ²)``, diagonal entries
``Z_ii = √2 σ N̂_ii ~ N(0, 2σ²)``, and the ``k (k + 1)/2`` upper-triangle entries are
independent (:class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian`). The tree
(:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`) and
:func:`symmetric_gaussian_release` both symmetrise through :func:`symmetrized_gaussian`,
so the two draw one law with one formula.

:func:`symmetric_gaussian_release` releases many matrices at once from one generator
(each matrix one :class:`~fedpriv.privacy.accounting.events.SymmetricMatrixGaussian`, charged
before any noise is drawn). It serves audits that simulate only the Privatizer nodes
covering a changed record (:mod:`fedpriv.audit.engine.gaussian_nodes`), millions of
them per second, where the tree's per-stream generators would be too slow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import SymmetricMatrixGaussian
from fedpriv.privacy.checks import check_positive
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.release_keys import distinct_entries as _distinct_entries
from fedpriv.privacy.mechanisms.release_keys import flatten_keys as _flatten_keys

__all__ = ["symmetric_gaussian_release", "symmetrized_gaussian"]


def symmetrized_gaussian(standard: np.ndarray, noise_stddev: float) -> np.ndarray:
    """``σ (N̂ + N̂ᵀ)/√2`` of standard normal matrices ``N̂`` (Alg. 2 lines 5–6).

    Parameters
    ----------
    standard : ndarray of float64, shape (..., k, k)
        i.i.d. ``N(0, 1)`` draws.
    noise_stddev : float
        ``σ_N`` (not checked: callers validate it).

    Returns
    -------
    ndarray of float64, shape (..., k, k), symmetric
    """
    noise = standard + standard.swapaxes(-1, -2)
    noise *= noise_stddev / math.sqrt(2.0)  # in place: the same product, one array less
    return noise


def symmetric_gaussian_release(
    values: Any,
    *,
    noise_stddev: float,
    frobenius_sensitivity: float,
    accountant: Accountant,
    keys: Mapping[str, Any],
    rng: np.random.Generator,
) -> np.ndarray:
    """Release every ``k × k`` matrix of ``values`` plus symmetrised Gaussian noise.

    Matrix ``j`` (over the leading axes) is charged
    ``SymmetricMatrixGaussian(noise_stddev, k, frobenius_sensitivity)`` under
    ``{level: keys[level][j]}`` before anything is drawn; its noise is
    :func:`symmetrized_gaussian` of ``k²`` fresh standard normals from ``rng``, read
    in C order over ``values.shape``.

    Parameters
    ----------
    values : array_like of float64, shape (..., k, k)
        Symmetric, finite true statistics (e.g. tree-node sums of ``v vᵀ``).
    noise_stddev : float
        ``σ_N`` of the unsymmetrised entries, > 0.
    frobenius_sensitivity : float
        Declared ``max ||M − M'||_F`` of one matrix, > 0.
    accountant : Accountant
    keys : mapping of str to array_like
        Labels per level, each broadcastable to ``values.shape[:-2]``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float64, shape of ``values``

    Raises
    ------
    ValueError
        If ``values`` is not a finite, symmetric stack of square matrices, or
        ``noise_stddev`` / ``frobenius_sensitivity`` is not > 0.
    TypeError
        If ``rng`` is not a numpy Generator.
    BudgetExceededError
        If the accountant's budget would be exceeded (nothing is drawn).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim < 2 or values.shape[-1] != values.shape[-2] or values.shape[-1] < 1:
        raise ValueError(f"`values` must have shape (..., k, k), got {values.shape}.")
    distinct = _distinct_entries(values)  # a broadcast's repeats checked once
    if not np.all(np.isfinite(distinct)):
        raise ValueError("`values` must be finite.")
    if not np.array_equal(distinct, distinct.swapaxes(-1, -2)):
        raise ValueError("`values` must be symmetric matrices.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy Generator, got {type(rng).__name__}.")
    event = SymmetricMatrixGaussian(
        noise_stddev=check_positive("noise_stddev", noise_stddev),
        dim=values.shape[-1],
        frobenius_sensitivity=check_positive("frobenius_sensitivity", frobenius_sensitivity),
    )
    flat = _flatten_keys(keys, values.shape[:-2])
    accountant.spend(event, key=flat)
    noise = symmetrized_gaussian(rng.standard_normal(values.shape), event.noise_stddev)
    accountant.ledger.record_draws(
        keys=flat,
        node=-1,
        level=-1,
        scale=event.noise_stddev,
        l1_sensitivity=event.frobenius_sensitivity,
    )
    noise += values  # values + noise (IEEE addition commutes), without another array
    return noise
