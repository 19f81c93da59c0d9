"""Mechanism-level audit of symmetrised Gaussian matrix releases (FedUCB's Privatizer nodes).

FedUCB's Privatizer (:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`) releases
prefix sums of a binary tree whose nodes are ``(d+1) × (d+1)`` sums of ``v vᵀ``
(``v = [x; y]``) plus symmetrised Gaussian noise ``σ_N (N̂ + N̂ᵀ)/√2``. A substituted
``(x, y)`` pair changes one leaf, hence only the nodes covering that leaf; as for the
Laplace tree (:mod:`fedpriv.audit.engine.tree_nodes`), the released prefix sums and
the node values are functions of each other, and a node that does not cover the leaf
has the same law in both worlds and cancels from the likelihood ratio. This module
simulates only the covering nodes.

The score
---------
The upper-triangle entries of one node's noise are independent, ``N(0, σ²)`` off the
diagonal and ``N(0, 2σ²)`` on it (:mod:`fedpriv.privacy.mechanisms.matrix_release`). For node
means ``A`` (world D) and ``A'`` (D') the white-box log-likelihood ratio of the
released entries ``y`` is linear::

    LLR(y) = Σ_nodes Σ_{i<=j observed} (A_ij − A'_ij) / var_ij · (y_ij − (A_ij + A'_ij)/2)

and ``LLR ~ N(+μ²/2, μ²)`` in D, ``N(−μ²/2, μ²)`` in D', with
``μ² = Σ (A_ij − A'_ij)² / var_ij`` (the whitened shift; ``‖Δ‖_F² / (2σ²)`` per node when
every entry is observed, :class:`~fedpriv.privacy.accounting.events.SymmetricMatrixGaussian`).
``observed`` restricts the score to the released entries: the Privatizer returns
``Û = M[:d, :d] + shift I`` and ``û = M[:d, d]``, not the corner ``M[d, d]``
(:func:`privatizer_observed`); the shift is public and cancels.

The event
---------
The law above is declared by the mechanism's parameters, so the one threshold ``c`` of
the event ``{LLR >= c}`` is chosen before any sample exists: the ``c`` whose expected
counts on ``n`` fresh runs per world give the largest Clopper–Pearson bound
``ln((p_low − δ) / q_high)`` at the audit's δ (:func:`gaussian_llr_threshold`). Fresh
samples drawn through :func:`fedpriv.privacy.mechanisms.matrix_release.symmetric_gaussian_release`
(charged to an accountant) then confirm it with
:func:`~fedpriv.audit.estimators.estimate_epsilon_lower_bound`. The choice never sees
the confirming samples, so the stated confidence is exact; a wrong declared law could
only cost power. It could cost all of it: a mechanism that draws *less* noise than it
declares has almost no mass at the declared-law threshold. So a second, *guard* event
is tested beside it by default, the threshold that would be best were the noise half
the declared (the confidence split over the two events); and where the noise is in
doubt the threshold can be chosen on a pilot of the mechanism itself
(``pilot_samples``, the same candidates). Tests show both refute a Privatizer whose
noise is halved.

The worst-case pair
-------------------
:func:`worst_case_pair` builds ``v = [x; y]``, ``v' = [x'; y']`` with ``‖x‖ = ‖x'‖ = L``,
``|y| = |y'| = B`` and ``v ⊥ v'``, so that ``‖v vᵀ − v' v'ᵀ‖_F = √2 (L² + B²)``, the
substitution sensitivity the accountant charges, and ``y² = y'²``, so that the
unreleased corner does not move: the released entries carry the whole shift.

Length: the white-box audit of the matrix Privatizer's nodes keeps its threshold rule,
guard event and confirmation together, so that the declared law and the sampled one are
compared in one place.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng
from fedpriv.audit.engine.thresholds import pilot_probabilities, projected_bounds
from fedpriv.audit.estimators import EpsilonLowerBound, estimate_epsilon_lower_bound
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.events import SelfComposed, SymmetricMatrixGaussian
from fedpriv.privacy.accounting.tree import nodes_covering
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive
from fedpriv.privacy.mechanisms.matrix_release import symmetric_gaussian_release
from scipy import stats

__all__ = [
    "PrivatizerAuditResult",
    "audit_privatizer_nodes",
    "audit_symmetric_gaussian_release",
    "gaussian_llr_threshold",
    "llr_shift",
    "privatizer_observed",
    "sample_symmetric_gaussian_llr",
    "symmetric_llr",
    "worst_case_pair",
]

_DEFAULT_BATCH = 1 << 17
#: Thresholds scanned by the design, in standard deviations of the LLR.
_GRID_Z = np.linspace(-4.0, 8.0, 2401)
#: Noise ratio of the guard event (``guard=True``): placed for half the declared noise.
_GUARD_RATIO = 0.5


def privatizer_observed(side: int) -> np.ndarray:
    """Entries of a ``side × side`` node the Privatizer releases: all but the corner.

    ``Û = M[:d, :d]`` and ``û = M[:d, d]`` (``d = side − 1``;
    :meth:`~fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer.release`). Boolean, symmetric.

    Parameters
    ----------
    side : int
        ``d + 1`` >= 2.

    Returns
    -------
    ndarray of bool, shape (side, side)
    """
    side = check_int_at_least("side", side, 2)
    mask = np.ones((side, side), dtype=bool)
    mask[-1, -1] = False
    return mask


def _check_means(
    means_d: object, means_d_prime: object, observed: object | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.asarray(means_d, dtype=np.float64)
    b = np.asarray(means_d_prime, dtype=np.float64)
    if a.ndim != 3 or a.shape[-1] != a.shape[-2] or a.shape != b.shape:
        raise ValueError(
            "`means_d` and `means_d_prime` must both have shape (n_nodes, k, k), "
            f"got {a.shape} and {b.shape}."
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("`means_d` and `means_d_prime` must be finite.")
    if not (np.array_equal(a, a.swapaxes(-1, -2)) and np.array_equal(b, b.swapaxes(-1, -2))):
        raise ValueError("`means_d` and `means_d_prime` must be symmetric matrices.")
    k = a.shape[-1]
    mask = np.ones((k, k), dtype=bool) if observed is None else np.asarray(observed)
    if mask.shape != (k, k) or mask.dtype != bool or not np.array_equal(mask, mask.T):
        raise ValueError(f"`observed` must be a symmetric boolean ({k}, {k}) array.")
    mask = np.triu(mask)  # the independent entries: upper triangle
    if not np.any((a != b) & mask):
        raise ValueError("`means_d` and `means_d_prime` must differ in an observed entry.")
    return a, b, mask


def _weights(
    a: np.ndarray, b: np.ndarray, mask: np.ndarray, noise_stddev: float
) -> tuple[np.ndarray, float]:
    """``W = (A − A')/var`` on the observed upper triangle, and ``Σ W (A + A')/2``."""
    k = a.shape[-1]
    variance = np.full((k, k), noise_stddev**2)
    variance[np.diag_indices(k)] = 2.0 * noise_stddev**2
    w = np.where(mask, (a - b) / variance, 0.0)
    return w, float(np.sum(w * (a + b)) / 2.0)


def symmetric_llr(
    released: object,
    means_d: object,
    means_d_prime: object,
    noise_stddev: float,
    observed: object | None = None,
) -> np.ndarray:
    """White-box ``ln p_D(y)/p_D'(y)`` of released node matrices (module docstring).

    Parameters
    ----------
    released : array_like of float, shape (n, n_nodes, k, k)
        Released node values (only the observed upper triangle is read).
    means_d, means_d_prime : array_like of float, shape (n_nodes, k, k)
        Symmetric true node values in D and D'.
    noise_stddev : float
        Declared ``σ_N``, > 0.
    observed : array_like of bool, shape (k, k), optional
        Released entries (default all).

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    ValueError
        If the means, ``observed`` or the shape of ``released`` are malformed, or
        ``noise_stddev`` is not > 0.
    """
    a, b, mask = _check_means(means_d, means_d_prime, observed)
    w, offset = _weights(a, b, mask, check_positive("noise_stddev", noise_stddev))
    y = np.asarray(released, dtype=np.float64)
    if y.ndim != 4 or y.shape[1:] != a.shape:
        raise ValueError(
            f"`released` must have shape (n, {', '.join(map(str, a.shape))}), got {y.shape}."
        )
    return np.einsum("nmij,mij->n", y, w) - offset


def llr_shift(
    means_d: object, means_d_prime: object, noise_stddev: float, observed: object | None = None
) -> float:
    """``μ``: the LLR is ``N(±μ²/2, μ²)`` in D / D' (module docstring).

    Parameters
    ----------
    means_d, means_d_prime : array_like of float64, shape (n_nodes, k, k)
        The nodes' true values in D and D'.
    noise_stddev : float
        σ per entry, > 0.
    observed : array_like of bool, shape (k, k), optional
        The released entries (default all).

    Returns
    -------
    float
        μ > 0.

    Raises
    ------
    ValueError
        If the means are malformed or equal on every observed entry, or
        ``noise_stddev`` is not > 0.
    """
    a, b, mask = _check_means(means_d, means_d_prime, observed)
    w, _ = _weights(a, b, mask, check_positive("noise_stddev", noise_stddev))
    return math.sqrt(float(np.sum(w * (a - b))))


def sample_symmetric_gaussian_llr(
    means_d: object,
    means_d_prime: object,
    *,
    world: int,
    noise_stddev: float,
    frobenius_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    observed: object | None = None,
    batch_size: int = _DEFAULT_BATCH,
) -> np.ndarray:
    """White-box LLR ``ln p_D(y)/p_D'(y)`` of ``n_samples`` releases of the node means.

    Each run releases every node of ``means_d`` (world 0) or ``means_d_prime``
    (world 1) through :func:`~fedpriv.privacy.mechanisms.matrix_release.symmetric_gaussian_release`,
    charged to the run's own ``"sample"`` cell; batch ``b`` of world ``w`` draws from
    ``stream_rng(seed, trial=b, side=w, stream=NOISE)``.

    ``means_d``, ``means_d_prime``, ``observed`` and ``noise_stddev`` are as in
    :func:`symmetric_llr`; ``frobenius_sensitivity`` (> 0) is charged per node;
    ``world`` is 0 (D) or 1 (D'); ``n_samples`` runs (>= 1) are drawn
    ``batch_size`` at a time (memory ``batch_size × n_nodes × k²`` floats). Returns
    the scores, float64 of shape (n_samples,). Raises ValueError if ``world`` is not
    0 or 1, the means or ``observed`` are malformed, or a count or scale is out of
    range.

    Parameters
    ----------
    means_d, means_d_prime : array_like of float64, shape (n_nodes, k, k)
        The nodes' true values in D and D'.
    world : {0, 1}
        D or D'.
    noise_stddev : float
        σ per entry, > 0.
    frobenius_sensitivity : float
        Charged per node, > 0.
    n_samples : int
        Runs, >= 1.
    seed : int or SeedSequence
        Root of the noise streams.
    observed : array_like of bool, shape (k, k), optional
        The released entries.
    batch_size : int
        Runs per batch, >= 1.

    Returns
    -------
    ndarray of float64, shape (n_samples,)

    Raises
    ------
    ValueError
        If ``world`` is not 0 or 1, or an argument is out of range.
    """
    if world not in (0, 1):
        raise ValueError(f"`world` must be 0 (D) or 1 (D'), got {world!r}.")
    a, b, mask = _check_means(means_d, means_d_prime, observed)
    noise_stddev = check_positive("noise_stddev", noise_stddev)
    frobenius_sensitivity = check_positive("frobenius_sensitivity", frobenius_sensitivity)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    root = as_seed_sequence(seed)
    w, offset = _weights(a, b, mask, noise_stddev)
    released = a if world == 0 else b
    scores = np.empty(n_samples)
    for batch, start in enumerate(range(0, n_samples, batch_size)):
        size = min(batch_size, n_samples - start)
        y = symmetric_gaussian_release(
            np.broadcast_to(released, (size,) + released.shape),
            noise_stddev=noise_stddev,
            frobenius_sensitivity=frobenius_sensitivity,
            accountant=Accountant(disjoint=("sample",), keep_draw_rows=False),
            keys={"sample": np.arange(start, start + size)[:, None]},
            rng=stream_rng(root, trial=batch, side=world, stream=Stream.NOISE),
        )
        scores[start : start + size] = np.einsum("nmij,mij->n", y, w) - offset
    return scores


def gaussian_llr_threshold(
    mu: float, *, n_samples: int, confidence: float, delta: float, noise_ratio: float = 1.0
) -> float:
    """The threshold ``c`` of ``{LLR >= c}`` chosen from the declared law alone.

    ``P_D(LLR >= c) = Φ̄((c − μ²/2)/μ)``, ``P_D'(LLR >= c) = Φ̄((c + μ²/2)/μ)``; the
    expected counts on ``n_samples`` runs per world are projected to the Clopper–Pearson
    bound at δ (:func:`~fedpriv.audit.engine.thresholds.projected_bounds`) over
    ``c = μ²/2 + z μ``, ``z`` in [−4, 8], and the best ``c`` is returned.

    With ``noise_ratio = r`` the same score is read under a mechanism that draws ``r``
    times the declared noise: it is ``N(±μ²/2, (rμ)²)``, so ``c = μ²/2 + z r μ`` with
    ``P_D = Φ̄(z)`` and ``P_D' = Φ̄(z + μ/r)``. ``r = ½`` places the guard event of
    :func:`audit_symmetric_gaussian_release`.

    Parameters
    ----------
    mu : float
        μ > 0 of the LLR's law.
    n_samples : int
        Runs per world, >= 1.
    confidence : float
        In (0, 1).
    delta : float
        In [0, 1).
    noise_ratio : float
        r > 0.

    Returns
    -------
    float
        The threshold ``c``.

    Raises
    ------
    ValueError
        If ``mu`` or ``noise_ratio`` is not > 0, ``n_samples`` < 1, or ``confidence`` /
        ``delta`` is outside (0, 1) / [0, 1).
    """
    mu = check_positive("mu", mu)
    ratio = check_positive("noise_ratio", noise_ratio)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    confidence = check_open_unit("confidence", confidence)
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"`delta` must be in [0, 1), got {delta!r}.")
    grid = mu * mu / 2.0 + _GRID_Z * ratio * mu
    p_d = stats.norm.sf(_GRID_Z)
    p_dp = stats.norm.sf(_GRID_Z + mu / ratio)
    projected = projected_bounds(
        p_d, p_dp, n_confirm=n_samples, confidence=confidence, delta=float(delta)
    )
    return float(grid[int(np.argmax(projected))])


def audit_symmetric_gaussian_release(
    means_d: object,
    means_d_prime: object,
    *,
    noise_stddev: float,
    frobenius_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    delta: float,
    observed: object | None = None,
    confidence: float = 0.95,
    pilot_samples: int | None = None,
    batch_size: int = _DEFAULT_BATCH,
    guard: bool = True,
) -> EpsilonLowerBound:
    """White-box ε lower bound at ``delta`` of one release of ``n_nodes`` matrices.

    Parameters
    ----------
    means_d, means_d_prime, observed, noise_stddev, frobenius_sensitivity, batch_size
        As in :func:`sample_symmetric_gaussian_llr`.
    n_samples : int
        Fresh confirming runs per world, >= 1.
    seed : int or SeedSequence
        Pilot world ``w`` draws at ``child_seed(seed, 0, w)``, confirmation at
        ``child_seed(seed, 1, w)``.
    delta : float
        The δ of the bound, in [0, 1).
    confidence : float
        In (0, 1).
    pilot_samples : int, optional
        0 or None (default): the threshold comes from the declared law
        (:func:`gaussian_llr_threshold`). Otherwise, runs per world of a pilot that
        chooses it among the same candidates (proportions moved against the event as
        in :mod:`~fedpriv.audit.engine.thresholds`). The declared law places the
        event where the declared mechanism's ratio is best; a mechanism that draws
        *less* noise than declared has almost no mass that far out, so an audit of a
        mechanism whose noise is in doubt should use a pilot.
    guard : bool, default True
        With the declared law: also test a second event, the threshold that would be
        best if the mechanism drew half the declared noise
        (``gaussian_llr_threshold(..., noise_ratio=0.5)``), so that an under-noised
        release is caught without a pilot; the confidence is split over both events
        (``n_tests`` = 4). Ignored with a pilot.

    Returns
    -------
    EpsilonLowerBound
        Of the best event ``{LLR >= c}`` (``n_tests`` = 2 per event, both directions).

    Raises
    ------
    ValueError
        If an argument is out of range or the means are malformed (named).
    """
    mu = llr_shift(means_d, means_d_prime, noise_stddev, observed)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    pilot = check_int_at_least("pilot_samples", pilot_samples or 0, 0)
    root = as_seed_sequence(seed)

    def draw(stage: int, world: int, n: int) -> np.ndarray:
        return sample_symmetric_gaussian_llr(
            means_d,
            means_d_prime,
            world=world,
            noise_stddev=noise_stddev,
            frobenius_sensitivity=frobenius_sensitivity,
            n_samples=n,
            seed=child_seed(root, stage, world),
            observed=observed,
            batch_size=batch_size,
        )

    if pilot:
        grid = mu * mu / 2.0 + _GRID_Z * mu
        p_d, p_dp = pilot_probabilities(draw(0, 0, pilot), draw(0, 1, pilot), grid)
        confidence = check_open_unit("confidence", confidence)
        projected = projected_bounds(
            p_d, p_dp, n_confirm=n_samples, confidence=confidence, delta=float(delta)
        )
        threshold = float(grid[int(np.argmax(projected))])
        thresholds = [threshold]
    else:
        thresholds = [
            gaussian_llr_threshold(
                mu, n_samples=n_samples, confidence=confidence, delta=delta, noise_ratio=ratio
            )
            for ratio in (1.0, *((_GUARD_RATIO,) if guard else ()))
        ]
    return estimate_epsilon_lower_bound(
        draw(1, 0, n_samples),
        draw(1, 1, n_samples),
        thresholds=np.array(thresholds),
        confidence=confidence,
        delta=delta,
    )


def worst_case_pair(dim: int, *, bound_x: float, bound_y: float) -> tuple[np.ndarray, np.ndarray]:
    """``v = [x; y]``, ``v' = [x'; y']`` reaching the substitution sensitivity (module docstring).

    ``x = L e₀``, ``x' = L (c e₀ + s e₁)`` with ``c = B²/L²``, ``y = B``, ``y' = −B``:
    ``v·v' = L² c − B² = 0``, so ``‖v vᵀ − v' v'ᵀ‖_F = √2 (L² + B²)``, and ``y² = y'²``.

    Parameters
    ----------
    dim : int
        Context dimension d >= 1.
    bound_x : float
        ``L`` > 0, the contexts' norm bound.
    bound_y : float
        ``B`` in (0, L], the rewards' bound.

    Returns
    -------
    v, v_prime : ndarray of float64, shape (dim + 1,)

    Raises
    ------
    ValueError
        If ``dim`` < 1, a bound is not > 0, ``bound_y > bound_x``, or ``dim = 1``
        with ``bound_x != bound_y`` (no such pair exists then).
    """
    dim = check_int_at_least("dim", dim, 1)
    big_l = check_positive("bound_x", bound_x)
    big_b = check_positive("bound_y", bound_y)
    if big_b > big_l or (dim == 1 and big_b != big_l):
        raise ValueError(
            "`bound_y` must be <= `bound_x` (and equal to it when dim = 1) for "
            f"an orthogonal pair with y² = y'², got bound_x={bound_x!r}, "
            f"bound_y={bound_y!r}, dim={dim}."
        )
    cos = big_b**2 / big_l**2
    v = np.zeros(dim + 1)
    v_prime = np.zeros(dim + 1)
    v[0], v[-1] = big_l, big_b
    v_prime[0], v_prime[-1] = big_l * cos, -big_b
    if dim > 1:
        v_prime[1] = big_l * math.sqrt(max(0.0, 1.0 - cos * cos))
    return v, v_prime


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PrivatizerAuditResult:
    """A mechanism-level audit of the Privatizer nodes covering one leaf.

    Attributes
    ----------
    bound : EpsilonLowerBound
        At ``bound.delta``.
    accountant_epsilon : float
        ε at the same δ of ``SelfComposed(SymmetricMatrixGaussian, n_nodes)`` with the
        declared ``σ_N`` and sensitivity (what the accountant charges for the pair).
    leaf, n_leaves, n_nodes : int
        The changed leaf (1-based), the leaves released, the nodes covering the leaf.
    mu : float
        The declared LLR's shift (module docstring).
    description : str
        The pair and the nodes, for the report.
    seconds : float
    """

    bound: EpsilonLowerBound
    accountant_epsilon: float
    leaf: int
    n_leaves: int
    n_nodes: int
    mu: float
    description: str
    seconds: float


def audit_privatizer_nodes(
    *,
    noise_stddev: float,
    frobenius_sensitivity: float,
    dim: int,
    n_leaves: int,
    bound_x: float,
    bound_y: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    delta: float,
    confidence: float = 0.95,
    pilot_samples: int | None = None,
    batch_size: int = _DEFAULT_BATCH,
    guard: bool = True,
) -> PrivatizerAuditResult:
    """Audit a Privatizer tree of ``n_leaves`` leaves at the worst-case leaf and pair.

    The leaf is one covered by the most released nodes (leaf 1: ``⌊log₂ n⌋ + 1``
    nodes); D puts ``v vᵀ`` and D' ``v' vᵀ'`` of :func:`worst_case_pair` in it (the
    other leaves' sums are common to both worlds and cancel, so they are set to 0);
    the score reads the released entries (:func:`privatizer_observed`).

    Parameters
    ----------
    noise_stddev, frobenius_sensitivity, n_samples, seed, delta, confidence,
    pilot_samples, batch_size, guard
        As in :func:`audit_symmetric_gaussian_release`.
    dim : int
        Context dimension ``d`` (nodes are ``(d+1) × (d+1)``), >= 1.
    n_leaves : int
        Leaves the tree releases, >= 1.
    bound_x, bound_y : float
        ``L`` and ``B``.

    Returns
    -------
    PrivatizerAuditResult

    Raises
    ------
    ValueError
        If an argument is out of range (named), or the declared sensitivity is below
        the pair's shift ``√2 (L² + B²)``.
    """
    started = time.perf_counter()
    n_leaves = check_int_at_least("n_leaves", n_leaves, 1)
    v, v_prime = worst_case_pair(dim, bound_x=bound_x, bound_y=bound_y)
    shift = math.sqrt(2.0) * (bound_x**2 + bound_y**2)
    if check_positive("frobenius_sensitivity", frobenius_sensitivity) < shift * (1 - 1e-12):
        raise ValueError(
            f"`frobenius_sensitivity` must be >= √2(L² + B²) = {shift:.6g} "
            f"(the pair's shift), got {frobenius_sensitivity!r}."
        )
    leaf = max(range(1, n_leaves + 1), key=lambda t: nodes_covering(t, n_leaves).size)
    nodes = nodes_covering(leaf, n_leaves)
    means_d = np.broadcast_to(np.outer(v, v), (nodes.size, dim + 1, dim + 1))
    means_dp = np.broadcast_to(np.outer(v_prime, v_prime), (nodes.size, dim + 1, dim + 1))
    observed = privatizer_observed(dim + 1)
    bound = audit_symmetric_gaussian_release(
        means_d,
        means_dp,
        noise_stddev=noise_stddev,
        frobenius_sensitivity=frobenius_sensitivity,
        n_samples=n_samples,
        seed=seed,
        delta=delta,
        observed=observed,
        confidence=confidence,
        pilot_samples=pilot_samples,
        batch_size=batch_size,
        guard=guard,
    )
    accountant = Accountant()
    accountant.spend(
        SelfComposed(
            event=SymmetricMatrixGaussian(
                noise_stddev=noise_stddev, dim=dim + 1, frobenius_sensitivity=frobenius_sensitivity
            ),
            count=int(nodes.size),
        )
    )
    description = (
        f"white-box LLR of the {nodes.size} Privatizer nodes {nodes.tolist()} covering "
        f"leaf {leaf} of {n_leaves}: v = {np.round(v, 4).tolist()} (D) vs "
        f"v' = {np.round(v_prime, 4).tolist()} (D'), ‖vvᵀ − v'v'ᵀ‖_F = √2(L²+B²)"
    )
    return PrivatizerAuditResult(
        bound=bound,
        accountant_epsilon=float(accountant.routes.tightest(delta)[1]),
        leaf=leaf,
        n_leaves=n_leaves,
        n_nodes=int(nodes.size),
        mu=llr_shift(means_d, means_dp, noise_stddev, observed),
        description=description,
        seconds=time.perf_counter() - started,
    )
