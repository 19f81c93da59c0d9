"""Product audit of independent Laplace coordinates: the LLR's top atom, one factor at a time.

Why a second audit of the same nodes
------------------------------------
The joint audit (:func:`fedpriv.audit.engine.tree_nodes.audit_laplace_release`)
confirms one event ``{LLR >= c}`` by counting the runs in which it happens. When a
record sits in ``m`` nodes that each carry ``ε/m`` of the budget, every event whose
probability ratio is near ``e^ε`` is rare: the top atom ``{LLR = Σ|g_j|/b}`` has
probability ``2^-m`` in D. At ``T = 600 000`` (``m = 20``) ``2·10⁷`` runs per world reach
0.72-0.80 of the accountant's ε, and the declared law projects ``≈ 4·10⁹`` runs for 0.9.

This module bounds the *same* top atom without waiting for it to happen. The atom is the
intersection ``A = ∩_j A_j`` of one event per coordinate, ``A_j = {y_j on D's side of
both locations}`` (``y_j <= S_j`` when ``S_j < S'_j``, ``y_j >= S_j`` otherwise), on
which coordinate ``j``'s LLR term is saturated at ``+|g_j|/b``. Every factor is frequent
(``½`` in D, ``½ e^{-|g_j|/b}`` in D' under the declared law), so ``n`` runs bound each
tightly. With Clopper–Pearson bounds ``p_j^lo`` on ``P_D(A_j)`` and ``q_j^hi`` on
``P_D'(A_j)``, all ``2m`` at level ``α/(2m)``::

    ε >= ln P_D(A) / P_D'(A) = Σ_j ln P_D(A_j) / P_D'(A_j) >= Σ_j ln(p_j^lo / q_j^hi)

with probability ``>= 1 − α`` (union bound). The events are fixed by the locations alone,
before any sample exists, so a wrong declared law could only cost power.

The assumption, stated
----------------------
The equality in the middle needs the coordinates' noises to be *independent*:
``P_W(∩_j A_j) = Π_j P_W(A_j)``. The counter draws every node's noise afresh
(:class:`fedpriv.privacy.accounting.events.LaplaceTree` declares it, and the accountant's ε rests on
it), and here the ``m`` coordinates of a run are ``m`` entries of one
:func:`fedpriv.privacy.mechanisms.laplace_release` draw, whose ``n`` rows the
Clopper–Pearson bounds already need independent. The joint audit does not need the
assumption; a mechanism that reused one noise value across nodes would fool this audit
into a bound above its true ε, never the joint one (a test shows both). This is why
:func:`fedpriv.audit.engine.tree_nodes.audit_tree_nodes` runs both by default and
reports the stronger at ``1 − α/2`` each, naming which one it is.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
from fedpriv.audit.estimators import NO_EVIDENCE, EpsilonLowerBound, clopper_pearson_interval
from fedpriv.privacy import Accountant
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive
from fedpriv.privacy.mechanisms import laplace_release

__all__ = [
    "audit_laplace_product",
    "laplace_release_batches",
    "product_bound",
    "release_locations",
    "saturation_counts",
]

_DEFAULT_BATCH = 1 << 18


def release_locations(loc_d: object, loc_d_prime: object) -> tuple[np.ndarray, np.ndarray]:
    """``loc_d`` and ``loc_d_prime`` as float arrays, checked (finite, 1-D, equal length, differing in every coordinate; ValueError otherwise).

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float
        True values in D and D'.

    Returns
    -------
    tuple of (ndarray, ndarray)
        float64, shape (m,).

    Raises
    ------
    ValueError
        If they are not finite, 1-D, of equal length and different everywhere.
    """
    a = np.atleast_1d(np.asarray(loc_d, dtype=np.float64))
    b = np.atleast_1d(np.asarray(loc_d_prime, dtype=np.float64))
    if (
        a.shape != b.shape
        or a.ndim != 1
        or not np.all(np.isfinite(a) & np.isfinite(b))
        or not np.all(a != b)
    ):
        raise ValueError(
            "`loc_d` and `loc_d_prime` must be finite, 1-D of equal length and "
            f"differ in every coordinate, got {a.tolist()} and {b.tolist()}."
        )
    return a, b


def laplace_release_batches(
    loc_d: object,
    loc_d_prime: object,
    *,
    world: int,
    scale: float,
    l1_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    batch_size: int = _DEFAULT_BATCH,
) -> Iterator[tuple[int, np.ndarray]]:
    """``(start, y)`` batches of ``n_samples`` Laplace releases of one world's locations.

    Each run releases every coordinate of ``loc_d`` (world 0) or ``loc_d_prime``
    (world 1) with independent ``Lap(scale)`` noise through
    :func:`fedpriv.privacy.mechanisms.laplace_release`, charged to the run's own
    ``"sample"`` cell; batch ``b`` draws from ``stream_rng(seed, trial=b, side=world,
    stream=NOISE)`` (fixed addresses), and ``y`` has shape ``(size, m)``. Every argument
    is checked before the first batch.

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True values in D and D'.
    world : {0, 1}
        D or D'.
    scale : float
        Laplace scale b > 0.
    l1_sensitivity : float
        Charged sensitivity, > 0.
    n_samples : int
        Runs, >= 1.
    seed : int or SeedSequence
        Root of the noise streams.
    batch_size : int
        Runs per batch, >= 1.

    Returns
    -------
    iterator of (int, ndarray)
        ``(start, y)`` with ``y`` of shape ``(size, m)``.

    Raises
    ------
    ValueError
        If ``world`` is not 0 or 1, the locations are malformed, or a count, ``scale``
        or ``l1_sensitivity`` is out of range.
    """
    if world not in (0, 1):
        raise ValueError(f"`world` must be 0 (D) or 1 (D'), got {world!r}.")
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    scale = check_positive("scale", scale)
    l1_sensitivity = check_positive("l1_sensitivity", l1_sensitivity)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    root = as_seed_sequence(seed)
    released = loc_d if world == 0 else loc_d_prime

    def batches() -> Iterator[tuple[int, np.ndarray]]:
        for batch, start in enumerate(range(0, n_samples, batch_size)):
            size = min(batch_size, n_samples - start)
            yield (
                start,
                laplace_release(
                    np.broadcast_to(released, (size, released.size)),
                    scale=scale,
                    l1_sensitivity=l1_sensitivity,
                    accountant=Accountant(disjoint=("sample",), keep_draw_rows=False),
                    keys={"sample": np.arange(start, start + size)[:, None]},
                    rng=stream_rng(root, trial=batch, side=world, stream=Stream.NOISE),
                ),
            )

    return batches()


def saturation_counts(
    loc_d: object,
    loc_d_prime: object,
    *,
    world: int,
    scale: float,
    l1_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    batch_size: int = _DEFAULT_BATCH,
) -> tuple[np.ndarray, int]:
    """Runs in which each coordinate lands on D's side, and runs in which all do.

    The runs are those of :func:`laplace_release_batches` (the same addresses).

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True released values in D and D', finite and differing in every coordinate.
    world : {0, 1}
    scale, l1_sensitivity : float
        Laplace scale ``b`` and declared per-coordinate sensitivity, > 0.
    n_samples, batch_size : int
        Runs (>= 1) and runs drawn at once (memory ``batch_size × m`` floats).
    seed : int or SeedSequence

    Returns
    -------
    per_coordinate : ndarray of int64, shape (m,)
        Runs with ``y_j`` on D's side of both locations (``A_j``), per coordinate.
    joint : int
        Runs with every coordinate there (the LLR's top atom ``A``).

    Raises
    ------
    ValueError
        If ``world`` is not 0 or 1, the locations are malformed, or a count, ``scale``
        or ``l1_sensitivity`` is out of range.
    """
    batches = laplace_release_batches(
        loc_d,
        loc_d_prime,
        world=world,
        scale=scale,
        l1_sensitivity=l1_sensitivity,
        n_samples=n_samples,
        seed=seed,
        batch_size=batch_size,
    )
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    below = loc_d < loc_d_prime  # D's side is below S_j where S_j < S'_j
    per_coordinate = np.zeros(loc_d.size, dtype=np.int64)
    joint = 0
    for _, y in batches:
        inside = np.where(below, y <= loc_d, y >= loc_d)
        per_coordinate += inside.sum(axis=0)
        joint += int(np.count_nonzero(inside.all(axis=1)))
    return per_coordinate, joint


def audit_laplace_product(
    loc_d: object,
    loc_d_prime: object,
    *,
    scale: float,
    l1_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    confidence: float = 0.95,
    batch_size: int = _DEFAULT_BATCH,
) -> EpsilonLowerBound:
    """ε lower bound of ``m`` independent Laplace releases from their saturation events.

    See the module docstring for the bound and the independence it assumes.

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True released values in D and D', finite and differing in every coordinate.
    scale, l1_sensitivity : float
        Laplace scale ``b`` and declared per-coordinate sensitivity, > 0.
    n_samples : int
        Runs per world, >= 1.
    seed : int or SeedSequence
        World ``w`` draws below ``stream_rng(seed, trial=b, side=w, stream=NOISE)``.
    confidence : float
        Family-wise confidence of the ``2m`` Clopper–Pearson bounds, in (0, 1).
    batch_size : int
        Runs drawn at once.

    Returns
    -------
    EpsilonLowerBound
        ``threshold`` is the top atom's LLR ``Σ|g_j|/b`` (the event is ``{LLR >=
        threshold}``), ``direction`` ``"D>D'"``, ``n_tests = 2m``; ``count_d`` and
        ``count_d_prime`` are the runs in which the whole atom happened (reported, not
        used by the bound). Without evidence (a sum <= 0) the result is the estimator's
        "no evidence" value: bound 0, ``threshold`` NaN, ``direction`` ``"none"``.

    Raises
    ------
    ValueError
        If the locations are malformed or a count, ``scale``, ``l1_sensitivity`` or
        ``confidence`` is out of range.
    """
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    scale = check_positive("scale", scale)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    confidence = check_open_unit("confidence", confidence)
    root = as_seed_sequence(seed)
    counts, joints = [], []
    for world in (0, 1):
        per, joint = saturation_counts(
            loc_d,
            loc_d_prime,
            world=world,
            scale=scale,
            l1_sensitivity=l1_sensitivity,
            n_samples=n_samples,
            seed=root,
            batch_size=batch_size,
        )
        counts.append(per)
        joints.append(joint)
    return product_bound(
        counts, joints, loc_d, loc_d_prime, scale=scale, n_samples=n_samples, confidence=confidence
    )


def product_bound(
    counts: list[np.ndarray],
    joints: list[int],
    loc_d: np.ndarray,
    loc_d_prime: np.ndarray,
    *,
    scale: float,
    n_samples: int,
    confidence: float,
) -> EpsilonLowerBound:
    """The product audit's bound from its saturation counts (:func:`audit_laplace_product`).

    Parameters
    ----------
    counts : list of two ndarray of int64, shape (m,)
        Per-coordinate counts of ``A_j`` in D and in D' (:func:`saturation_counts`).
    joints : list of two int
        Runs with the whole atom in D and in D' (reported, not used by the bound).
    loc_d, loc_d_prime : ndarray of float64, shape (m,)
        Checked locations (:func:`release_locations`).
    scale : float
        Laplace scale b > 0.
    n_samples : int
        Runs per world.
    confidence : float
        Family-wise confidence of the ``2m`` bounds, in (0, 1).

    Returns
    -------
    EpsilonLowerBound
        As :func:`audit_laplace_product` returns it.
    """
    significance = (1.0 - confidence) / (2 * loc_d.size)
    low, _ = clopper_pearson_interval(counts[0], n_samples, significance=significance, side="lower")
    _, high = clopper_pearson_interval(
        counts[1], n_samples, significance=significance, side="upper"
    )
    bound = float(np.sum(np.log(low) - np.log(high))) if np.all(low > 0) else 0.0
    if bound <= 0.0:
        return EpsilonLowerBound(
            epsilon_lower_bound=0.0,
            confidence=confidence,
            n_samples=n_samples,
            n_samples_d=n_samples,
            n_samples_d_prime=n_samples,
            threshold=math.nan,
            direction=NO_EVIDENCE,
            n_tests=2 * int(loc_d.size),
            delta=0.0,
            count_d=0,
            count_d_prime=0,
        )
    top = float(np.sum(np.abs(loc_d - loc_d_prime))) / scale
    return EpsilonLowerBound(
        epsilon_lower_bound=bound,
        confidence=confidence,
        n_samples=n_samples,
        n_samples_d=n_samples,
        n_samples_d_prime=n_samples,
        threshold=top,
        direction="D>D'",
        n_tests=2 * int(loc_d.size),
        delta=0.0,
        count_d=joints[0],
        count_d_prime=joints[1],
    )
