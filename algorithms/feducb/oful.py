"""OFUL's numerical core: radius, UCB scores, rank-one updates, Cholesky inverses.

Shared by the LinUCB baselines (:mod:`fedpriv.algorithms.feducb.linucb`) and decentralized FedUCB
(:mod:`fedpriv.algorithms.feducb.decentralized`). No explicit inverse is formed per step: a
changing ``V`` is factorised by Cholesky (``L^{-1}`` by one batched LAPACK solve),
and rank-one changes ``V + x xᵀ`` use Sherman–Morrison and the matrix determinant
lemma.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator

import numpy as np
from fedpriv.algorithms.environments.linear import CHUNK_ROUNDS, LinearBanditTables

__all__ = [
    "cholesky_and_logdet",
    "floored_cholesky",
    "inverse_and_logdet",
    "inverse_from_cholesky",
    "iterate_rounds",
    "oful_radius",
    "sherman_morrison_update",
    "ucb_scores",
]


def oful_radius(
    log_det_v: np.ndarray,
    *,
    dim: int,
    regularizer: float,
    bound_theta: float = 1.0,
    sub_gaussian: float = 0.5,
    failure_probability: float = 0.1,
) -> np.ndarray:
    """OFUL's ``β = σ sqrt(2 ln(1/α) + log det V − d ln λ) + sqrt(λ) S``.

    Abbasi-Yadkori, Pál & Szepesvári (NeurIPS 2011), Thm. 2, with ``V = λ I + Σ x xᵀ``.

    Parameters
    ----------
    log_det_v : ndarray of float64, any shape
        ``log det V`` (natural log).
    dim : int
        ``d``.
    regularizer : float
        ``λ`` > 0.
    bound_theta, sub_gaussian, failure_probability : float
        ``S``, ``σ`` and ``α`` in (0, 1).

    Returns
    -------
    ndarray of float64, shape of ``log_det_v``

    Examples
    --------
    >>> float(oful_radius(np.array(0.0), dim=2, regularizer=1.0,
    ...                   failure_probability=math.exp(-2.0)))
    2.0
    """
    radicand = (
        2.0 * math.log(1.0 / failure_probability)
        + np.asarray(log_det_v, dtype=np.float64)
        - dim * math.log(regularizer)
    )
    return sub_gaussian * np.sqrt(np.maximum(radicand, 0.0)) + math.sqrt(regularizer) * bound_theta


def ucb_scores(
    gram: np.ndarray, target: np.ndarray, contexts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(⟨x, θ̂⟩, ‖x‖_{V^{-1}}, log det V)`` of every action, by one Cholesky factorisation.

    With ``V = L Lᵀ``: ``w = L^{-1} x`` and ``z = L^{-1} ũ`` give ``⟨x, V^{-1} ũ⟩ = w·z``
    and ``‖x‖_{V^{-1}} = ‖w‖`` (``L^{-1}`` from one batched LAPACK solve). A matrix that
    is not positive definite (the privacy noise exceeded Λ, the α event of Prop. 4) has
    its eigenvalues floored at
    ``1e-9 max(1, tr V / d)`` (post-processing) with a RuntimeWarning.

    Parameters
    ----------
    gram : ndarray of float64, shape (..., d, d)
        Symmetric ``V``.
    target : ndarray of float64, shape (..., d)
        ``ũ``.
    contexts : ndarray of float64, shape (..., K, d)

    Returns
    -------
    mean, width : ndarray of float64, shape (..., K)
    log_det : ndarray of float64, shape (...)
    """
    chol = floored_cholesky(gram)
    lower_inv = np.linalg.inv(chol)  # L^{-1}: gesv(L, I), as solve(L, I) without the copies
    w = np.matmul(lower_inv, contexts.swapaxes(-1, -2))  # (..., d, K)
    z = np.matmul(lower_inv, target[..., None])[..., 0]
    mean = np.einsum("...dk,...d->...k", w, z)
    width = np.sqrt(np.einsum("...dk,...dk->...k", w, w))
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return mean, width, log_det


def floored_cholesky(
    matrix: np.ndarray,
    *,
    message: str = "a Gram matrix is not positive definite (noise above Λ); its "
    "eigenvalues were floored.",
    warn_only_if_floored: bool = False,
) -> np.ndarray:
    """Lower Cholesky factors of a batch of symmetric matrices, shape (..., d, d).

    If the batch is not positive definite (the Privatizer's noise exceeded Λ: the α
    event of FedUCB's Prop. 4), every matrix's eigenvalues are floored at
    ``1e-9 · max(1, trace/d)`` (post-processing) with a RuntimeWarning (only when a
    floor actually bites, if ``warn_only_if_floored``), then factored.

    Parameters
    ----------
    matrix : ndarray of float64, shape (..., d, d)
        Symmetric matrices.
    message : str
        The warning's text.
    warn_only_if_floored : bool
        Warn only when a floor changes an eigenvalue.

    Returns
    -------
    ndarray of float64, shape (..., d, d)
        Lower-triangular factors.
    """
    try:
        return np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        pass
    d = matrix.shape[-1]
    values, vectors = np.linalg.eigh(matrix)
    floor = 1e-9 * np.maximum(1.0, np.trace(matrix, axis1=-2, axis2=-1) / d)[..., None]
    if not warn_only_if_floored or np.any(values < floor):
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    values = np.maximum(values, floor)
    return np.linalg.cholesky((vectors * values[..., None, :]) @ vectors.swapaxes(-1, -2))


def inverse_and_logdet(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(V^{-1}, log det V)`` of a batch of SPD matrices from one Cholesky factorisation.

    Used to rebuild a Sherman–Morrison inverse when ``V`` changes by more than a rank-one
    term (a new synchronised statistic). Non-PD input is floored as in :func:`ucb_scores`.

    Parameters
    ----------
    matrix : ndarray of float64, shape (..., d, d)

    Returns
    -------
    inverse : ndarray of float64, shape (..., d, d)
    log_det : ndarray of float64, shape (...)
    """
    chol = floored_cholesky(matrix)
    return inverse_from_cholesky(chol), _logdet_from_cholesky(chol)


def cholesky_and_logdet(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(L, log det V)`` of a batch of SPD matrices, or None if one is not PD.

    The first half of :func:`inverse_and_logdet`, for callers that may not need the
    inverse (:func:`inverse_from_cholesky` finishes it, with the same values); on
    None they call :func:`inverse_and_logdet`, which floors the batch's eigenvalues.

    Parameters
    ----------
    matrix : ndarray of float64, shape (..., d, d)
        Symmetric matrices V.

    Returns
    -------
    tuple of (ndarray, ndarray) or None
        Factors ``(..., d, d)`` and ``log det V`` ``(...,)``.
    """
    try:
        chol = np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return None
    return chol, _logdet_from_cholesky(chol)


def inverse_from_cholesky(chol: np.ndarray) -> np.ndarray:
    """``V^{-1} = L^{-T} L^{-1}`` from lower Cholesky factors, shape (..., d, d).

    ``L^{-1}`` is numpy's inv, i.e. LAPACK gesv(L, I): the very call of
    ``solve(L, I)``, without an identity copied per matrix. Each matrix's result
    does not depend on the batch it is computed in.

    Parameters
    ----------
    chol : ndarray of float64, shape (..., d, d)
        Lower Cholesky factors L.

    Returns
    -------
    ndarray of float64, shape (..., d, d)
    """
    lower_inv = np.linalg.inv(chol)
    return lower_inv.swapaxes(-1, -2) @ lower_inv


def _logdet_from_cholesky(chol: np.ndarray) -> np.ndarray:
    return 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)


def sherman_morrison_update(a_inv: np.ndarray, x: np.ndarray) -> np.ndarray:
    """In-place ``A^{-1} ← (A + x xᵀ)^{-1}``; returns ``xᵀ A^{-1} x`` (before the update).

    ``log det`` grows by ``log1p`` of the returned value (matrix determinant lemma).

    Parameters
    ----------
    a_inv : ndarray of float64, shape (..., d, d)
        Symmetric inverse, updated in place (a writable view is fine).
    x : ndarray of float64, shape (..., d)

    Returns
    -------
    ndarray of float64, shape (...,)
        ``xᵀ A^{-1} x`` before the update.
    """
    ax = np.matmul(a_inv, x[..., None])[..., 0]
    quad = np.einsum("...d,...d->...", ax, x)
    # einsum's outer product: one product per entry, as a broadcast multiply, faster
    correction = np.einsum("...i,...j->...ij", ax, ax)
    correction /= (1.0 + quad)[..., None, None]
    a_inv -= correction
    return quad


def iterate_rounds(tables: LinearBanditTables) -> Iterator[tuple]:
    """Yield ``(t, contexts (J,I,K,d), rewards (J,I,K), means (J,I,K))`` for every round.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds, read block by block.

    Yields
    ------
    tuple
        ``(t, contexts, rewards, means)``: J trials, I agents, K arms, d dimensions.
    """
    for start in range(0, tables.horizon, CHUNK_ROUNDS):
        stop = min(tables.horizon, start + CHUNK_ROUNDS)
        block = tables.block(start, stop)
        for t in range(start, stop):
            k = t - start
            yield t, block.contexts[:, :, k], block.rewards[:, :, k], block.means[:, :, k]
