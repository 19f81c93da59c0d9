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
worst case per record: :class:`SymmetricMatrixGaussianTree` (an event of
:mod:`fedpriv.privacy.accounting.matrix_tree`, re-exported here) over its leaf capacity
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

Calibration
-----------
The mechanism takes its noise ``σ_N`` as given. FedUCB's own calibrations (the
paper's σ_N, Λ, κ and a corrected one) are the family's
(:func:`fedpriv.algorithms.feducb.privatizer.privatizer_calibration`); what the
mechanism knows is what it is charged, so it gives the smallest σ_N whose charge
meets a claim (:func:`exact_noise_stddev`), for float and for secure noise.

Length: FedUCB's Privatizer as one unit: the mechanism and the noise its charge
calls for; 40% of it is documentation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    NonPrivate,
    SelfComposed,
    SymmetricMatrixDiscreteGaussian,
)
from fedpriv.privacy.accounting.guarantees import gaussian_dp_delta
from fedpriv.privacy.accounting.matrix_tree import SymmetricMatrixGaussianTree, matrix_tree_gdp
from fedpriv.privacy.accounting.tree import tree_depth
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
    "MatrixTreePrivatizer",
    "SymmetricMatrixGaussianTree",
    "exact_noise_stddev",
    "matrix_tree_gdp",
]

#: Most nodes pre-drawn per stream at a time (memory bound; values do not depend on
#: it). A stream's refills grow 1, 2, 4, ... up to this, so a run with few releases
#: draws little more noise than it uses.
_NODES_PER_REFILL = 32


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


def exact_noise_stddev(
    epsilon: float,
    delta: float,
    *,
    depth: int,
    frobenius_sensitivity: float,
    side: int,
    records_per_leaf: int = 1,
    secure: bool = False,
) -> float:
    """The smallest σ_N for which the Privatizer's charge meets ``(ε, δ)``.

    Float noise: the tree is charged :class:`SymmetricMatrixGaussianTree`, exactly
    ``μ``-GDP, so ``μ`` solves ``δ_GDP(ε; μ) = δ`` and ``σ = √m Δ / (√2 μ)`` with
    ``Δ = records_per_leaf × frobenius_sensitivity`` (the product the charged event
    carries), raised by float ulps until the accountant's ε at ``delta`` is at most
    ``epsilon`` (never above the claim). Secure noise: the release is charged as its grid
    twin through zCDP, so σ is solved by bisection against that charge instead.

    Parameters
    ----------
    epsilon, delta : float
        The target (ε > 0 finite, δ in (0, 1)).
    depth : int
        Released nodes per record, ``m`` (the tree's capacity is ``2**(m-1)``), >= 1.
    frobenius_sensitivity : float
        ``‖D‖_F`` of one record's leaf, > 0.
    side : int
        Side of the leaf matrices (``d + 1``), >= 1.
    records_per_leaf : int, default 1
        As in :class:`MatrixTreePrivatizer`.
    secure : bool, default False
        As in :class:`MatrixTreePrivatizer`.

    Returns
    -------
    float
        σ_N > 0, in the units of the leaves.

    Examples
    --------
    >>> sigma = exact_noise_stddev(1.0, 1e-5, depth=4, frobenius_sensitivity=2.0, side=3)
    >>> round(sigma, 4)
    10.5518
    """
    if secure:
        return _secure_exact_sigma(
            epsilon,
            delta,
            depth=depth,
            frobenius_sensitivity=frobenius_sensitivity,
            side=side,
            records_per_leaf=records_per_leaf,
        )
    charged = records_per_leaf * frobenius_sensitivity  # the product the charged event carries
    sigma = math.sqrt(depth) * charged / (math.sqrt(2.0) * _exact_mu(epsilon, delta))
    return _never_above(
        epsilon, delta, sigma=sigma, depth=depth, side=side, frobenius_sensitivity=charged
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
