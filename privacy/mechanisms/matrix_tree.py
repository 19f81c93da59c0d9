"""FedUCB's Privatizer (Dubey & Pentland 2020, Alg. 2): a binary tree over Gram matrices.

Each agent keeps a binary-tree (continual-release) aggregator whose leaves are the
``(d+1) × (d+1)`` matrices ``Q = Σ v vᵀ``, ``v = [x; y]``, accumulated since the last
synchronisation (one leaf per sync, Alg. 1 line 16, Alg. 2 line 10). On the k-th
sync it releases the noisy prefix sum ``M_k = Σ_{j<=k} Q_j + Σ_{nodes} N_node`` over
the dyadic nodes of ``[1, k]`` (node ``s`` covers leaves ``(s & (s-1), s]``, the
Fenwick layout of :mod:`fedpriv.privacy.accounting.tree`), and returns

    Û = M_k[:d, :d] + shift · I        û = M_k[:d, d]

with the data-independent PSD shift ``shift = 2Λ`` (§4.3: "we can shift each H by
2ΛI"; not in any pseudocode, so it is applied here, fedpriv's choice).

Node noise (Alg. 2 lines 5–6): ``N̂_ij ~ N(0, σ_N²)`` i.i.d. and ``N = (N̂ + N̂ᵀ)/√2``,
drawn from ``standard_normal`` once per node, memoised and reused by every later
prefix that contains the node. Node ``k`` of a stream is the ``k``-th
``(d+1) × (d+1)`` block of that stream's generator, so the noise depends only on the
seed and the node's address.

Accounting
----------
The Privatizer charges its accountant **when it opens**, once per stream, with the
worst case per record: :class:`SymmetricMatrixGaussianTree` over its leaf capacity
``2**(m-1)``. One record (an ``(x, y)`` pair of one agent) lies in one leaf and in at
most ``tree_depth(capacity) = m`` released nodes, each of which moves by at most the
Frobenius sensitivity ``‖v vᵀ - v' v'ᵀ‖_F <= √2 (L² + B²)`` under substitution of
the pair (Definition 1; fedpriv's derivation). Since ``(M + Z)`` with symmetrised
noise is exactly the Gaussian mechanism with ``μ = ‖D‖_F / (√2 σ)``
(:class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian`), the tree is exactly
``μ = √m · ‖D‖_F / (√2 σ_N)``-GDP: the accountant's ``gdp`` and ``pld`` routes are
exact for it. Every node draw appends one ledger row (``scale`` = σ_N,
``l1_sensitivity`` = the Frobenius sensitivity; the row's "epsilon" column is then
their ratio, not an ε).

With ``secure=True`` (issue 13 part 3) leaves and node noise are integers on a grid
``g = 2**k`` and the tree is charged ``SelfComposed(SymmetricMatrixDiscreteGaussian,
depth)`` (zCDP, CKS 2020 Thm. 14); the grid sensitivity ``Δ_F/g + d + 1`` and the
construction are derived in :mod:`fedpriv.privacy.mechanisms.secure_matrix`. Its ledger rows
are in grid steps (``scale`` = σ_N/g, ``l1_sensitivity`` = the grid bound).

Calibrations (:func:`privatizer_calibration`)
-------------------------------------------
``"paper"``
    σ_N² = 16 m (L²+1)² ln(2/δ)² / ε² and Prop. 4's Λ, ρ_min = Λ, ρ_max = 3Λ, κ, from
    :func:`fedpriv.privacy.calibrations.feducb_privatizer`.
``"corrected"``
    Fixes two calibration errors of Alg. 2 line 5 (fedpriv's derivation) while keeping the paper's
    proof structure (per-node budget ``ε₀ = ε/√(8 m ln(2/δ))``, ``δ₀ = δ/(2m)``,
    advanced composition over ``m`` nodes): (a) the classical Gaussian constant
    ``σ = Δ₂ √(2 ln(1.25/δ₀)) / ε₀`` instead of ``ln(2/δ)``; (b) the
    substitution sensitivity ``Δ₂ = √2 (L² + B²)`` of Definition 1 instead of the
    add/remove ``L² + 1``. Λ is scaled with σ (``Λ σ/σ_paper``, keeping the paper's
    ``ln(4/δ)``), and κ is re-derived from σ and Λ (fedpriv's derivation):
    ``κ = √m σ (√d + √(2 ln(2nM/α))) / √Λ``.
``"exact"``
    The smallest σ for which the exact accountant gives the claim: ``μ`` solves
    ``δ_GDP(ε; μ) = δ`` and ``σ = √m Δ₂ / (√2 μ)``; Λ and κ as in ``"corrected"``.
    With secure noise (``secure=True``) the release is charged as its grid twin through
    zCDP, not by the Gaussian-DP curve, so σ is solved for that charge instead
    (``_secure_exact_sigma``).

Length: FedUCB's Privatizer as one unit: its event, its three calibrations and the
mechanism; 40% of it is documentation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    MAX_GAUSSIAN_MU,
    NonPrivate,
    SelfComposed,
    SymmetricMatrixDiscreteGaussian,
    check_privacy_loss,
)
from fedpriv.privacy.accounting.guarantees import gaussian_dp_delta
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.calibrations import feducb_privatizer
from fedpriv.privacy.checks import check_int_at_least, check_positive, check_real
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.matrix_release import symmetrized_gaussian
from fedpriv.privacy.mechanisms.release_keys import flatten_keys as _flatten_keys
from fedpriv.privacy.mechanisms.secure_matrix import (
    matrix_grid_sensitivity,
    round_symmetric_to_grid,
    sample_symmetric_discrete_gaussian,
)
from fedpriv.privacy.mechanisms.secure_noise import default_granularity, from_grid
from fedpriv.privacy.mechanisms.secure_noise import release_grid as _grid
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "PRIVATIZER_CALIBRATIONS",
    "MatrixTreePrivatizer",
    "PrivatizerCalibration",
    "SymmetricMatrixGaussianTree",
    "matrix_tree_gdp",
    "privatizer_calibration",
]

#: Noise calibrations of the Privatizer (module docstring).
PRIVATIZER_CALIBRATIONS = ("paper", "corrected", "exact")

#: Most nodes pre-drawn per stream at a time (memory bound; values do not depend on
#: it). A stream's refills grow 1, 2, 4, ... up to this, so a run with few releases
#: draws little more noise than it uses.
_NODES_PER_REFILL = 32


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SymmetricMatrixGaussianTree:
    """A binary tree over one stream of symmetric matrices, symmetrised Gaussian nodes.

    Parameters
    ----------
    noise_stddev : float
        σ of the unsymmetrised node entries ``N̂_ij`` (FedUCB's σ_N), > 0.
    dim : int
        Side of the matrices (``d + 1``), >= 1; descriptive only.
    frobenius_sensitivity : float
        Largest ``‖D‖_F`` by which one record moves a node, > 0 (``√2 (L² + B²)``
        for substitution of one ``(x, y)`` pair, ``L² + B²`` for add/remove).
    capacity : int
        Number of leaves the tree can hold (``2**(m-1)`` for depth ``m``), >= 1.
        One record is in at most ``tree_depth(capacity) = floor(log2 capacity) + 1``
        released nodes.

    Notes
    -----
    Exactly ``μ``-GDP with ``μ = √depth · frobenius_sensitivity / (√2 noise_stddev)``:
    ``depth`` independent :class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian` releases
    (see its derivation), composed by Dong, Roth & Su 2019, Cor. 3.3.
    """

    noise_stddev: float
    dim: int
    frobenius_sensitivity: float
    capacity: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_stddev", check_positive("noise_stddev", self.noise_stddev))
        object.__setattr__(self, "dim", check_int_at_least("dim", self.dim, 1))
        object.__setattr__(
            self,
            "frobenius_sensitivity",
            check_positive("frobenius_sensitivity", self.frobenius_sensitivity),
        )
        object.__setattr__(self, "capacity", check_int_at_least("capacity", self.capacity, 1))
        check_privacy_loss(
            "frobenius_sensitivity",
            self.frobenius_sensitivity,
            "noise_stddev",
            self.noise_stddev,
            MAX_GAUSSIAN_MU,
        )

    @property
    def depth(self) -> int:
        """Largest number of released nodes holding one record."""
        return tree_depth(self.capacity)


def matrix_tree_gdp(event: SymmetricMatrixGaussianTree) -> float:
    """μ of Gaussian DP of the whole tree: ``√depth ‖D‖_F / (√2 σ)``.

    Parameters
    ----------
    event : SymmetricMatrixGaussianTree
        The tree's noise stddev σ, Frobenius sensitivity ‖D‖_F and capacity.

    Returns
    -------
    float
        μ >= 0 (Dong, Roth & Su, arXiv:1905.02383: the depth Gaussian releases of one
        record compose to μ = √(Σ μ_i²)).

    Examples
    --------
    >>> event = SymmetricMatrixGaussianTree(noise_stddev=2.0, dim=3,
    ...                                     frobenius_sensitivity=2.0 ** 0.5, capacity=8)
    >>> matrix_tree_gdp(event)
    1.0
    """
    return (
        math.sqrt(event.depth) * event.frobenius_sensitivity / (math.sqrt(2.0) * event.noise_stddev)
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PrivatizerCalibration:
    """Noise, shift and β terms of one Privatizer; see :func:`privatizer_calibration`.

    Attributes
    ----------
    calibration : str
        ``"paper"``, ``"corrected"`` or ``"exact"``.
    version : str
        Text version for the β terms: ``"full"`` ([H]) or ``"neurips"`` ([P]).
    claimed_epsilon, claimed_delta : float
    n_syncs : int
        ``n`` used for the depth (``horizon`` when unknown a priori).
    tree_depth : int
        ``m = 1 + ⌈log2 n⌉``.
    capacity : int
        ``2**(m-1)`` leaves.
    frobenius_sensitivity : float
        ``√2 (L² + B²)``: substitution of one ``(x, y)`` pair (what the accountant uses).
    noise_stddev : float
        σ_N of this calibration.
    op_norm_bound, rho_min, rho_max, kappa : float
        Λ, ρ_min = Λ, ρ_max = 3Λ and κ.
    shift : float
        PSD shift ``2Λ`` added to the diagonal of every released Û.
    beta_privacy_term : float
        Privacy terms of β (Prop. 2): ``M S √ρ_max + M κ`` ([H]) or
        ``S √(M ρ_max) + κ √M`` ([P]).
    """

    calibration: str
    version: str
    claimed_epsilon: float
    claimed_delta: float
    n_syncs: int
    tree_depth: int
    capacity: int
    frobenius_sensitivity: float
    noise_stddev: float
    op_norm_bound: float
    rho_min: float
    rho_max: float
    kappa: float
    shift: float
    beta_privacy_term: float


def _exact_mu(epsilon: float, delta: float) -> float:
    """The μ with ``δ_GDP(ε; μ) = δ`` (δ(ε; μ) increases with μ)."""
    high = 1.0
    while gaussian_dp_delta(high, epsilon) < delta:
        high *= 2.0
    from scipy import optimize  # imported on use: heavy (issue 23)

    return optimize.brentq(
        lambda mu: gaussian_dp_delta(mu, epsilon) - delta, 1e-12, high, xtol=1e-14
    )


def _secure_exact_sigma(
    epsilon: float,
    delta: float,
    *,
    depth: int,
    frobenius_sensitivity: float,
    side: int,
    records_per_leaf: int = 1,
) -> float:
    """The smallest σ whose secure Privatizer tree is charged at most ``(ε, δ)``.

    The secure release puts leaves on the default grid ``g`` of the sensitivity and
    charges ``depth`` nodes of :class:`~fedpriv.privacy.accounting.events.SymmetricMatrixDiscreteGaussian`
    with ``σ/g`` and the grid sensitivity (:func:`MatrixTreePrivatizer._noise_event`);
    the accountant's tightest ε at δ falls as σ grows, so it is solved by bisection on
    ``σ/g`` and the end of the bracket that meets the claim is returned (never above
    it). ``g`` is a power of two, so ``σ/g`` is exact in the Privatizer.
    """
    granularity = default_granularity(frobenius_sensitivity)
    node_sensitivity = matrix_grid_sensitivity(
        records_per_leaf * frobenius_sensitivity, granularity, side
    )

    def charged(grid_sigma: float) -> float:
        accountant = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
        accountant.spend(
            SelfComposed(
                event=SymmetricMatrixDiscreteGaussian(
                    sigma=grid_sigma, dim=side, frobenius_sensitivity=node_sensitivity
                ),
                count=depth,
            )
        )
        return accountant.routes.tightest(delta)[1]

    low, high = node_sensitivity, node_sensitivity
    while charged(high) > epsilon:
        high *= 2.0
    while charged(low) <= epsilon:
        low /= 2.0
    for _ in range(200):  # charged(low) > ε >= charged(high)
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        low, high = (middle, high) if charged(middle) > epsilon else (low, middle)
    return high * granularity


def _never_above(
    epsilon: float,
    delta: float,
    *,
    sigma: float,
    depth: int,
    side: int,
    frobenius_sensitivity: float,
) -> float:
    """``sigma`` raised by float ulps until the charged tree's ε at ``delta`` is <= ``epsilon``
    (the closed form can land a few ulps above the claim after rounding)."""

    def charged(value: float) -> float:
        accountant = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
        accountant.spend(
            SymmetricMatrixGaussianTree(
                noise_stddev=value,
                dim=side,
                frobenius_sensitivity=frobenius_sensitivity,
                capacity=2 ** (depth - 1),
            )
        )
        return accountant.routes.tightest(delta)[1]

    for _ in range(64):
        if charged(sigma) <= epsilon:
            return sigma
        sigma = math.nextafter(sigma, math.inf)
    return sigma * (1.0 + 1e-12)


def privatizer_calibration(
    epsilon: float,
    delta: float,
    *,
    horizon: int,
    n_agents: int,
    dim: int,
    n_syncs: int | None = None,
    tree_depth: int | None = None,
    calibration: str = "paper",
    version: str = "full",
    bound_x: float = 1.0,
    bound_y: float = 1.0,
    bound_theta: float = 1.0,
    failure_probability: float = 0.1,
    secure: bool = False,
    records_per_leaf: int = 1,
) -> PrivatizerCalibration:
    """σ_N, Λ, ρ_min, ρ_max, κ and β's privacy term of one calibration.

    Parameters
    ----------
    epsilon, delta : float
        The claim (ε > 0 finite, δ in (0, 1)).
    horizon, n_agents, dim : int
        ``T``, ``M`` and ``d`` (>= 1).
    n_syncs : int, optional
        ``n`` fixed a priori (``m = 1 + ⌈log2 n⌉``); None uses ``n = T``
        (Alg. 2 line 2, Remark 4).
    tree_depth : int, optional
        Depth ``m`` instead of ``1 + ⌈log2 n⌉`` (e.g. decentralised FedUCB's
        ``1 + ⌈log2(T/γ)⌉``); must hold ``n`` leaves.
    calibration : {"paper", "corrected", "exact"}
        See the module docstring.
    version : {"full", "neurips"}
        Text version of β's privacy terms ([H] / [P]).
    bound_x, bound_y, bound_theta, failure_probability
        ``L``, ``B``, ``S`` and ``α`` as in
        :func:`fedpriv.privacy.calibrations.feducb_privatizer`.
    secure : bool, default False
        The Privatizer will draw secure noise (``MatrixTreePrivatizer(secure=True)``).
        Changes only ``"exact"``: σ is then the smallest for which what the secure
        release is *charged* (its grid twin, priced through zCDP,
        :func:`_secure_exact_sigma`) gives the claim, instead of the float Gaussian's
        exact curve, which the secure event is not priced by; ``"paper"`` and
        ``"corrected"`` keep their σ whatever the noise.
    records_per_leaf : int, default 1
        Pairs of one leaf a changed pair can move (the Privatizer's
        ``records_per_leaf``; FedUCB's fixed schedule, where the agent acts on its own
        raw data between syncs). ``"corrected"`` and ``"exact"`` calibrate to the
        sensitivity the view is charged, ``records_per_leaf × √2 (L² + B²)``;
        ``"paper"`` keeps the paper's σ_N (Alg. 2 line 5, one observation).

    Returns
    -------
    PrivatizerCalibration

    Raises
    ------
    ValueError
        On any argument out of range (see :func:`~fedpriv.privacy.calibrations.feducb_privatizer`)
        or an unknown ``calibration``.

    Examples
    --------
    >>> cal = privatizer_calibration(1.0, 0.1, horizon=10**4, n_agents=10, dim=10)
    >>> cal.tree_depth, cal.capacity, round(cal.noise_stddev, 2)
    (15, 16384, 92.82)
    """
    if calibration not in PRIVATIZER_CALIBRATIONS:
        raise ValueError(
            f"`calibration` must be one of {PRIVATIZER_CALIBRATIONS}, got {calibration!r}."
        )
    paper = feducb_privatizer(
        epsilon,
        delta,
        horizon=horizon,
        n_agents=n_agents,
        dim=dim,
        n_syncs=n_syncs,
        tree_depth=tree_depth,
        bound_x=bound_x,
        bound_y=bound_y,
        bound_theta=bound_theta,
        failure_probability=failure_probability,
        version=version,
    )
    m = paper.tree_depth
    l2 = paper.l2_sensitivity
    frobenius = math.sqrt(2.0) * l2
    records = check_int_at_least("records_per_leaf", records_per_leaf, 1)
    if calibration == "paper":
        sigma, lam, kappa = paper.noise_stddev, paper.op_norm_bound, paper.kappa
    else:
        if calibration == "corrected":
            sigma = (
                records
                * frobenius
                * math.sqrt(2.0 * math.log(1.25 / paper.node_delta))
                / (paper.node_epsilon)
            )
        elif secure:
            sigma = _secure_exact_sigma(
                epsilon,
                delta,
                depth=m,
                frobenius_sensitivity=frobenius,
                side=dim + 1,
                records_per_leaf=records,
            )
        else:
            charged = records * frobenius  # the product the charged event carries
            sigma = math.sqrt(m) * charged / (math.sqrt(2.0) * _exact_mu(epsilon, delta))
            sigma = _never_above(
                epsilon, delta, sigma=sigma, depth=m, side=dim + 1, frobenius_sensitivity=charged
            )
        lam = paper.op_norm_bound * sigma / paper.noise_stddev
        log_union = math.log(2.0 * paper.n_syncs * n_agents / failure_probability)
        kappa = (
            math.sqrt(m) * sigma * (math.sqrt(dim) + math.sqrt(2.0 * log_union)) / math.sqrt(lam)
        )
    rho_min, rho_max = lam, 3.0 * lam
    if version == "full":
        beta_term = n_agents * bound_theta * math.sqrt(rho_max) + n_agents * kappa
    else:
        beta_term = bound_theta * math.sqrt(n_agents * rho_max) + kappa * math.sqrt(n_agents)
    return PrivatizerCalibration(
        calibration=calibration,
        version=version,
        claimed_epsilon=paper.claimed_epsilon,
        claimed_delta=paper.claimed_delta,
        n_syncs=paper.n_syncs,
        tree_depth=m,
        capacity=2 ** (m - 1),
        frobenius_sensitivity=frobenius,
        noise_stddev=sigma,
        op_norm_bound=lam,
        rho_min=rho_min,
        rho_max=rho_max,
        kappa=kappa,
        shift=2.0 * lam,
        beta_privacy_term=beta_term,
    )


class MatrixTreePrivatizer:
    """Alg. 2 for a batch of streams (e.g. ``(n_trials, n_agents)``), one tree each.

    Parameters
    ----------
    stream_shape : tuple of int
        Batch of independent trees.
    dim : int
        ``d``: leaves are ``(d+1) × (d+1)``.
    capacity : int
        Leaves per tree (``2**(m-1)``); a release past it raises
        :class:`~fedpriv.privacy.errors.CapacityExceededError` (Remark 4).
    noise_stddev : float
        σ_N >= 0. ``0`` is the non-private aggregator (raw sums; charged as
        :class:`~fedpriv.privacy.accounting.events.NonPrivate`).
    shift : float
        Added to the diagonal of every released Û (``2Λ``; ``0`` for none), >= 0.
    frobenius_sensitivity : float
        Declared ``‖D‖_F`` per record under the accountant's relation, > 0.
    accountant : Accountant
        Charged once per stream when the Privatizer opens (worst case per record).
    records_per_leaf : int, default 1
        Most records of one leaf that one changed record can move (>= 1): the agent's
        own actions between syncs re-derived from its raw data (FedUCB's fixed
        schedule, :func:`fedpriv.algorithms.feducb.adaptivity.leaf_reach`). The charged
        node sensitivity is ``records_per_leaf × frobenius_sensitivity`` (a node is a
        sum of leaves, so group privacy over those records scales its L2 sensitivity);
        the noise and the secure grid do not change.
    keys : mapping of str to array_like
        Accountant labels of each stream, broadcastable to ``stream_shape``.
    rng : object ndarray of numpy Generator, shape ``stream_shape``
        One privacy-noise stream per tree (unused when ``noise_stddev == 0``).
    secure : bool, default False
        Exact integer noise on a grid (:mod:`fedpriv.privacy.mechanisms.secure_matrix`): leaves
        rounded to the grid (upper triangle, mirrored), node noise a mirrored discrete
        Gaussian of ``σ_N / g`` steps (``√2`` that on the diagonal), charged
        ``SelfComposed(SymmetricMatrixDiscreteGaussian(σ_N/g, d+1,
        frobenius_sensitivity/g + d + 1), depth)`` (zCDP). The prefix sums are exact
        grid points; ``Û`` adds ``shift`` to them (post-processing). Ignored when
        ``noise_stddev == 0``.
    granularity : float, optional
        Grid spacing ``g`` (a power of two) when ``secure``; default
        :func:`~fedpriv.privacy.mechanisms.secure_noise.default_granularity` of
        ``frobenius_sensitivity``.

    Raises
    ------
    ValueError
        On a bad parameter (named in the message).
    BudgetExceededError
        If opening would exceed the accountant's budget (nothing is opened).
    """

    def __init__(
        self,
        *,
        stream_shape: tuple[int, ...],
        dim: int,
        capacity: int,
        noise_stddev: float,
        shift: float,
        frobenius_sensitivity: float,
        accountant: Accountant,
        keys: Mapping[str, Any],
        rng: Any,
        secure: bool = False,
        granularity: float | None = None,
        records_per_leaf: int = 1,
    ) -> None:
        self.stream_shape = tuple(check_int_at_least("stream_shape", n, 1) for n in stream_shape)
        self.dim = check_int_at_least("dim", dim, 1)
        self.capacity = check_int_at_least("capacity", capacity, 1)
        noise_stddev = check_real("noise_stddev", noise_stddev)
        if not 0.0 <= noise_stddev < math.inf:
            raise ValueError(f"`noise_stddev` must be in [0, inf), got {noise_stddev!r}.")
        self.noise_stddev = noise_stddev
        shift = check_real("shift", shift)
        if not 0.0 <= shift < math.inf:
            raise ValueError(f"`shift` must be in [0, inf), got {shift!r}.")
        self.shift = shift
        self.frobenius_sensitivity = check_positive("frobenius_sensitivity", frobenius_sensitivity)
        self.records_per_leaf = check_int_at_least("records_per_leaf", records_per_leaf, 1)
        self.granularity = _grid(secure, granularity, self.frobenius_sensitivity)
        self.secure = self.granularity is not None and noise_stddev > 0
        n_streams = int(np.prod(self.stream_shape))
        if noise_stddev > 0:
            rng = np.asarray(rng, dtype=object)
            if rng.shape != self.stream_shape or not all(
                isinstance(g, np.random.Generator) for g in rng.flat
            ):
                raise TypeError(
                    f"`rng` must be an object array of numpy Generators of shape {self.stream_shape}."
                )
            self._rng = rng.ravel()
            self.event: Any = self._noise_event()
        else:
            self._rng = None
            self.event = NonPrivate(
                reason="FedUCB Gram statistics sent to the controller without noise "
                "(non-private FedUCB, H = λI)"
            )
        self.depth = tree_depth(self.capacity)
        self._keys = _flatten_keys(keys, self.stream_shape, "stream shape")
        accountant.spend(self.event, key=self._keys)  # raises before any state exists
        self.accountant = accountant
        side = self.dim + 1
        self.n_leaves = np.zeros(n_streams, dtype=np.int64)
        self._total = np.zeros((n_streams, side, side))
        self._level_noise = np.zeros((self.depth, n_streams, side, side))
        self._prefix_noise = np.zeros((n_streams, side, side))  # Σ noise of prefix nodes
        self._refill = min(_NODES_PER_REFILL, self.capacity)
        self._buffer = np.zeros((n_streams if noise_stddev > 0 else 0, self._refill, side, side))
        # node noise of stream s is _buffer[s, pos[s]:end[s]]; the next refill draws
        # _next_fill[s] nodes (doubling up to _refill): a stream's generator is read
        # in order, so the values do not depend on the refill sizes
        self._buffer_pos = np.zeros(n_streams, dtype=np.int64)
        self._buffer_end = np.zeros(n_streams, dtype=np.int64)
        self._next_fill = np.ones(n_streams, dtype=np.int64)
        self.n_draws = 0

    def _noise_event(self) -> Any:
        """The event charged per stream: the float tree, or its secure grid twin."""
        return self.event_for(self.records_per_leaf)

    def event_for(self, records_per_leaf: int) -> Any:
        """The per-stream event with ``records_per_leaf`` records of a leaf moved.

        ``event_for(1)`` is the mechanism alone (one record changed, an oblivious
        stream); the Privatizer is charged ``event_for(self.records_per_leaf)``.

        Parameters
        ----------
        records_per_leaf : int
            Records of one leaf that a neighboring dataset moves, >= 1.

        Returns
        -------
        Event
            A ``SymmetricMatrixGaussianTree`` (float noise) or its secure-noise
            counterpart, with the sensitivity scaled by ``records_per_leaf``.

        Raises
        ------
        ValueError
            If ``records_per_leaf`` < 1 or the Privatizer is non-private.
        """
        records = check_int_at_least("records_per_leaf", records_per_leaf, 1)
        if self.noise_stddev <= 0:
            raise ValueError("a non-private Privatizer (noise_stddev = 0) has no noise event.")
        side = self.dim + 1
        charged = records * self.frobenius_sensitivity
        if not self.secure:
            return SymmetricMatrixGaussianTree(
                noise_stddev=self.noise_stddev,
                dim=side,
                frobenius_sensitivity=charged,
                capacity=self.capacity,
            )
        self._grid_sigma = self.noise_stddev / self.granularity  # exact: g = 2**k
        node = SymmetricMatrixDiscreteGaussian(
            sigma=self._grid_sigma,
            dim=side,
            frobenius_sensitivity=matrix_grid_sensitivity(charged, self.granularity, side),
        )
        return SelfComposed(event=node, count=tree_depth(self.capacity))

    def _fresh_noise(self, index: np.ndarray) -> np.ndarray:
        """Node noise of the next node of each stream: ``σ (N̂ + N̂ᵀ)/√2``, or (secure)
        a mirrored discrete Gaussian matrix of grid steps."""
        empty = index[self._buffer_pos[index] >= self._buffer_end[index]]
        if empty.size:  # refill those streams (index holds each stream once)
            fills = self._next_fill[empty]
            buffer, rngs = self._buffer, self._rng
            for s, n in zip(empty.tolist(), fills.tolist()):
                if self.secure:
                    buffer[s, :n] = sample_symmetric_discrete_gaussian(
                        self._grid_sigma, self.dim + 1, count=n, rng=rngs[s]
                    )
                else:
                    rngs[s].standard_normal(out=buffer[s, :n])
            self._buffer_pos[empty], self._buffer_end[empty] = 0, fills
            self._next_fill[empty] = np.minimum(2 * fills, self._refill)
        raw = self._buffer[index, self._buffer_pos[index]]
        self._buffer_pos[index] += 1
        if self.secure:
            return raw
        return symmetrized_gaussian(raw, self.noise_stddev)

    @property
    def remaining_capacity(self) -> np.ndarray:
        """Leaves each tree can still take, int64 of ``stream_shape``."""
        return (self.capacity - self.n_leaves).reshape(self.stream_shape)

    def release(self, leaves: Any, mask: Any) -> tuple[np.ndarray, np.ndarray]:
        """Insert one leaf into the streams in ``mask`` and release their ``(Û, û)``.

        Parameters
        ----------
        leaves : ndarray of float64, shape ``stream_shape + (d+1, d+1)``
            ``Q`` of every stream since its last leaf (read only where ``mask``).
        mask : ndarray of bool, shape ``stream_shape``

        Returns
        -------
        U_hat : ndarray of float64, shape ``stream_shape + (d, d)``
            ``Û = (prefix sum + node noises)[:d, :d] + shift I``; NaN outside ``mask``.
        u_hat : ndarray of float64, shape ``stream_shape + (d,)``
            ``û = (prefix sum + node noises)[:d, d]``; NaN outside ``mask``.

        Raises
        ------
        CapacityExceededError
            If a stream in ``mask`` already holds ``capacity`` leaves (nothing changes).
        ValueError
            On a wrong shape or non-finite leaves in ``mask``.
        """
        side, d = self.dim + 1, self.dim
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != self.stream_shape:
            raise ValueError(f"`mask` must have shape {self.stream_shape}, got {mask.shape}.")
        leaves = np.asarray(leaves, dtype=np.float64)
        if leaves.shape != self.stream_shape + (side, side):
            raise ValueError(
                f"`leaves` must have shape {self.stream_shape + (side, side)}, got {leaves.shape}."
            )
        index = np.flatnonzero(mask)
        # every stream at once (a global sync): slices instead of gathers, same values
        where: Any = slice(None) if index.size == self.n_leaves.size else index
        flat_leaves = leaves.reshape(-1, side, side)[where]
        if not np.all(np.isfinite(flat_leaves)):
            raise ValueError("`leaves` must be finite where released (NaN or inf found).")
        if self.secure:  # grid steps: node sums are exact integer sums
            flat_leaves = round_symmetric_to_grid(flat_leaves, self.granularity)
        full = self.n_leaves[index] >= self.capacity
        if full.any():
            raise CapacityExceededError(
                f"Privatizer tree capacity is {self.capacity} leaves (depth m = "
                f"{self.depth}); {int(full.sum())} stream(s) asked for leaf "
                f"{self.capacity + 1} (Remark 4: m must cover the number of syncs)."
            )
        k = self.n_leaves[where] + 1
        self.n_leaves[where] = k
        self._total[where] += flat_leaves
        if self.noise_stddev > 0 and index.size:
            level = np.log2(k & -k).astype(np.int64)  # node k sits at level ctz(k)
            fresh = self._fresh_noise(index)
            node_event = self.event.event if self.secure else self.event
            self.accountant.ledger.record_draws(
                keys={name: labels[index] for name, labels in self._keys.items()},
                node=k,
                level=level,
                scale=node_event.sigma if self.secure else self.noise_stddev,
                l1_sensitivity=node_event.frobenius_sensitivity,
            )
            self.n_draws += int(index.size)
            # Prefix [1, k] = prefix [1, k-1] minus its nodes below level ctz(k) (they
            # merge into node k) plus node k: only levels < ctz(k) are touched.
            prefix = self._prefix_noise[where]  # a copy (gather) or a view (slice)
            for lower in range(int(level.max())):
                sel = level > lower
                if sel.all():
                    prefix -= self._level_noise[lower, where]
                else:
                    prefix[sel] -= self._level_noise[lower, index[sel]]
            prefix += fresh
            self._level_noise[level, index] = fresh
            if isinstance(where, np.ndarray):
                self._prefix_noise[where] = prefix
            noise = prefix
        else:
            noise = 0.0
        released = self._total[where] + noise
        if self.secure:  # exact integers of grid steps, times g = 2**k (exact)
            released = from_grid(released, self.granularity)
        if isinstance(where, np.ndarray):
            u_hat_all = np.full((self.n_leaves.size, d, d), np.nan)
            small_all = np.full((self.n_leaves.size, d), np.nan)
            u_hat_all[index] = released[:, :d, :d] + self.shift * np.eye(d)
            small_all[index] = released[:, :d, d]
        else:
            u_hat_all = released[:, :d, :d] + self.shift * np.eye(d)
            small_all = np.ascontiguousarray(released[:, :d, d])
        return (
            u_hat_all.reshape(self.stream_shape + (d, d)),
            small_all.reshape(self.stream_shape + (d,)),
        )


def _gdp_handler(event: SymmetricMatrixGaussianTree) -> float:
    return matrix_tree_gdp(event)


# fedpriv.privacy.accounting.routes is imported by fedpriv.privacy.ledger.accountant above, so it exists here.
from fedpriv.privacy.accounting.routes import EventHandlers, register_event  # noqa: E402

register_event(SymmetricMatrixGaussianTree, EventHandlers(gdp=_gdp_handler))
