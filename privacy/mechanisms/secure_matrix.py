"""Exact integer noise for FedUCB's matrix tree (the Privatizer with ``secure=True``).

The floating-point Privatizer (:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`)
adds ``σ (N̂ + N̂ᵀ)/√2`` with ``N̂`` from ``standard_normal``: floating-point noise,
whose reachable outputs can reveal the input (Mironov, CCS 2012). With
``secure=True`` every leaf and every node noise is an integer number of grid steps
``g = 2**k`` (:mod:`fedpriv.privacy.mechanisms.secure_noise`), so prefix sums are exact and the
release ``g · M_k`` is exact in float64.

Leaves
------
Each leaf's upper triangle (diagonal included) is rounded to the grid,
``⌊Q_ij / g + 1/2⌋`` exactly (:func:`~fedpriv.privacy.mechanisms.secure_noise.round_to_grid`), and
mirrored (:func:`round_symmetric_to_grid`); FedUCB releases only upper-triangle entries
(``Û = M[:d, :d]`` symmetric, ``û = M[:d, d]``), and the lower triangle of a float
``Σ v vᵀ`` computed by BLAS need not equal its upper one bit for bit.

Sensitivity on the grid (:func:`matrix_grid_sensitivity`)
--------------------------------------------------------
Let neighbouring leaves differ by ``D`` (upper triangle mirrored) with
``‖D‖_F <= Δ_F`` (the declared ``frobenius_sensitivity``, a bound on the leaves *as
passed*, in floating point), ``x_ij = |D_ij| / g``, and ``E`` the difference of the
rounded leaves. Rounding is ``⌊u + 1/2⌋`` and ``⌊a⌋ - ⌊b⌋ <= ⌈a - b⌉``, so
``|E_ij| <= ⌈x_ij⌉ <= x_ij + 1`` (and ``E_ij = 0`` where ``D_ij = 0``). Over the
``n = side²`` entries of the ``side × side`` matrix (``side = d + 1``), by
Cauchy–Schwarz (``Σ x_ij <= √n ‖x‖``)::

    ‖E‖_F² <= Σ (x_ij + 1)² = ‖x‖² + 2 Σ x_ij + n <= (‖x‖ + √n)²,

hence ``‖E‖_F <= Δ_F / g + side`` grid steps, whatever ``D``. What is not covered:
FedUCB's leaves are floating-point sums ``Σ v vᵀ``, so two neighbouring leaves can
differ by the exact ``√2 (L² + B²)`` plus their summation error (of order
``k² 2**-53 (L² + B²)`` per entry for ``k`` records in a leaf); the declared ``Δ_F``
must include it, and the runs declare the exact-arithmetic value. This is pessimistic
(every entry is taken to round the wrong way); on the default grid
``g = 2**(⌊log2 Δ_F⌋ - 10)``, ``Δ_F/g >= 1024`` and the extra ``side`` adds
``side/1024`` at most (1.1 % for ``d = 10``). A record lies in one leaf, hence in at
most ``depth`` nodes, each of whose integer sums moves by the same ``E``
(Dubey & Pentland 2020, Alg. 2: node ``s`` sums leaves ``(s & (s-1), s]``).

Node noise (:func:`sample_symmetric_discrete_gaussian`)
-------------------------------------------------------
``(N + Nᵀ)/√2`` of a discrete Gaussian ``N`` is not a discrete Gaussian on the grid
(its diagonal is ``√2 N_ii``, off the integers). Instead the upper triangle is drawn
directly: ``Z_ij ~ N_Z(0, σ²)`` for ``i < j`` and ``Z_ii ~ N_Z(0, σ_diag²)`` with
``σ_diag² >= 2σ²`` (:func:`diagonal_sigma`), all independent, and ``Z_ji = Z_ij``:
the scale parameters of the float mechanism's entries (``σ`` off, ``√2 σ`` on the
diagonal; a discrete Gaussian's variance is slightly below its ``σ²``), drawn
with the exact sampler (:func:`~fedpriv.privacy.mechanisms.secure_noise.sample_discrete_gaussian`,
integers only, from the stream's generator).

Guarantee
---------
On the upper triangle the noise is a product of independent discrete Gaussians, so
for an integer shift ``E`` (Canonne, Kamath & Steinke 2020, arXiv:2004.00010,
Thm. 14) the node is ``ρ``-zCDP with ``2ρ = Σ_{i<j} E_ij²/σ² + Σ_i E_ii²/σ_diag²
<= ‖E‖_F²/(2σ²)``: ``ρ_node = ‖E‖_F²/(4σ²)``, the event
:class:`~fedpriv.privacy.accounting.events.SymmetricMatrixDiscreteGaussian`. ``depth`` nodes
compose to ``depth · ρ_node`` (adaptive composition of zCDP, Bun & Steinke 2016): the
Privatizer charges
``SelfComposed(SymmetricMatrixDiscreteGaussian(σ/g, side, Δ_F/g + side), depth)``.
At the same σ this ρ is at least the float tree's ``μ²/2`` with
``μ = √depth Δ_F / (√2 σ)``, and it is priced through zCDP (no exact GDP or PLD
route), so the secure Privatizer is never charged less than the float one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from fedpriv.privacy.checks import check_int_at_least, check_positive
from fedpriv.privacy.mechanisms.secure_noise import round_to_grid, sample_discrete_gaussian

__all__ = [
    "diagonal_sigma",
    "matrix_grid_sensitivity",
    "round_symmetric_to_grid",
    "sample_symmetric_discrete_gaussian",
]


def _round_up(exact: Fraction) -> float:
    """The smallest float ``>= exact``."""
    value = float(exact)
    while Fraction(value) < exact:
        value = math.nextafter(value, math.inf)
    return value


def matrix_grid_sensitivity(frobenius_sensitivity: float, granularity: float, side: int) -> float:
    """``Δ_F / g + side``: Frobenius sensitivity of the rounded leaves, in grid steps.

    Parameters
    ----------
    frobenius_sensitivity : float
        ``Δ_F`` of the leaves as passed, > 0.
    granularity : float
        Grid spacing ``g``, a power of two.
    side : int
        Side of the symmetric matrices (``d + 1``), >= 1.

    Returns
    -------
    float
        The bound, rounded up to a float (module docstring for the derivation).

    Raises
    ------
    ValueError
        If a parameter is out of range (named in the message).
    """
    delta = Fraction(check_positive("frobenius_sensitivity", frobenius_sensitivity))
    g = Fraction(check_positive("granularity", granularity))
    if g.numerator & (g.numerator - 1) or g.denominator & (g.denominator - 1):
        raise ValueError(f"`granularity` must be a power of two, got {granularity!r}.")
    return _round_up(delta / g + check_int_at_least("side", side, 1))


def diagonal_sigma(sigma: float) -> float:
    """The smallest float ``σ_diag`` with ``σ_diag² >= 2 σ²`` exactly (as rationals).

    Parameters
    ----------
    sigma : float
        σ > 0, finite.

    Returns
    -------
    float
        ``σ_diag``, within one ulp of ``sqrt(2) σ``.

    Raises
    ------
    ValueError
        If ``sigma`` is not finite and > 0.
    """
    target = 2 * Fraction(check_positive("sigma", sigma)) ** 2
    value = math.sqrt(2.0) * sigma
    while Fraction(math.nextafter(value, 0.0)) ** 2 >= target:
        value = math.nextafter(value, 0.0)
    while Fraction(value) ** 2 < target:
        value = math.nextafter(value, math.inf)
    return value


def round_symmetric_to_grid(leaves: Any, granularity: float) -> np.ndarray:
    """Upper triangle (diagonal included) of each leaf rounded to the grid, mirrored.

    Parameters
    ----------
    leaves : array_like of float64, shape (..., side, side)
    granularity : float
        A power of two.

    Returns
    -------
    ndarray of float64, shape (..., side, side)
        Integer numbers of grid steps (exact in float64), symmetric.

    Raises
    ------
    ValueError
        As :func:`~fedpriv.privacy.mechanisms.secure_noise.round_to_grid`.
    """
    leaves = np.asarray(leaves, dtype=np.float64)
    side = leaves.shape[-1]
    rows, cols = np.triu_indices(side)
    upper = round_to_grid(leaves[..., rows, cols], granularity).astype(np.float64)
    out = np.empty(leaves.shape)
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out


def sample_symmetric_discrete_gaussian(
    sigma: float, side: int, *, count: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` symmetric integer noise matrices (module docstring, "Node noise").

    Off-diagonal entries ``N_Z(0, σ²)``, diagonal ``N_Z(0, σ_diag²)`` with
    :func:`diagonal_sigma`; drawn off-diagonal first, then diagonal, node-major.

    Parameters
    ----------
    sigma : float
        ``σ`` in grid steps, > 0.
    side : int
        ``d + 1``, >= 1.
    count : int
        Number of matrices, >= 0.
    rng : numpy.random.Generator
        Source of integer bits.

    Returns
    -------
    ndarray of float64, shape (count, side, side)
        Integer values (exact while below ``2**53``).

    Raises
    ------
    ValueError, TypeError
        As :func:`~fedpriv.privacy.mechanisms.secure_noise.sample_discrete_gaussian`.
    """
    side = check_int_at_least("side", side, 1)
    count = check_int_at_least("count", count, 0)
    rows, cols = np.triu_indices(side, k=1)
    off = sample_discrete_gaussian(sigma, size=count * rows.size, rng=rng)
    diag = sample_discrete_gaussian(diagonal_sigma(sigma), size=count * side, rng=rng)
    out = np.zeros((count, side, side))
    out[:, rows, cols] = off.reshape(count, rows.size)
    out[:, cols, rows] = out[:, rows, cols]
    out[:, np.arange(side), np.arange(side)] = diag.reshape(count, side)
    return out
