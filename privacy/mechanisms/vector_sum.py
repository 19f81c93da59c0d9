"""The shuffle protocol for vector sums inside the tree-based mechanism (Zhou & Chowdhury Thm. 5.5).

Every user holds a vector ``v`` in ``[-L, L]^D``. For the p-sum node of level ``l``
(``n_l`` users), each user runs the randomizer ``R_1D`` of Cheu, Joseph, Mao & Peng
(ICLR 2022) per coordinate: ``z = (v + L) g/L``, ``⌊z⌋ + Bern(z - ⌊z⌋)`` ones plus
``Bin(b, p)`` ones; the shuffler releases the multiset of all users' messages labelled by
coordinate; the analyzer debiases: ``L/g (S - p b n_l) - n_l L``. Parameters as Zhou &
Chowdhury's experiment code sets them: ``p = 1/4``, ``g = max(2√n_l, d, 4)``,
``b = scale g² ln(d²/δ)²/(ε² n_l)``, truncated to an integer as ``numpy``'s binomial
sampler truncates it (fedpriv's reading of a float trial count; the code passes the float).

The view of one node is, per coordinate, the count ``S`` of ones: the users' rounded
values plus ``Bin(n_l b, p)``, independent across coordinates
(:class:`~fedpriv.privacy.accounting.binomial_sum.BinomialVectorSum`). One record moving
its vector by at most ``linf`` per coordinate and ``l2`` overall (value units) moves the
rounded sum by ``|s_j| <= ⌈linf g/L⌉ + 1`` and ``‖s‖₂ <= l2 g/L + 2√D`` (each rounded
value is within 1 of ``z``); ``records`` records (a group) multiply both.

:class:`ShuffledVectorSumTree` charges its accountant when it opens, once per stream,
with the worst case of one record: one :class:`BinomialVectorSum` per level in a
:class:`~fedpriv.privacy.accounting.binomial_sum.BinomialVectorSumTree` (a record is in
one node of each level; nodes of one level hold disjoint users).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.binomial_sum import BinomialVectorSum, BinomialVectorSumTree
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.checks import (
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
)
from fedpriv.privacy.ledger.accountant import Accountant

__all__ = ["ShuffledVectorSumTree", "vector_sum_parameters"]

#: ``p`` of the randomizer's binomial (Zhou & Chowdhury's experiment code).
VECSUM_PROBABILITY = 0.25


def vector_sum_parameters(
    n_users: int, *, dim: int, epsilon: float, delta: float, scale: float = 1.0
) -> tuple[float, int]:
    """Grid ``g`` and integer trials ``b`` per user of one node of ``n_users`` users.

    Parameters
    ----------
    n_users : int
        Users in the node, >= 1.
    dim : int
        The bandit's ``d`` (enters ``g`` and the log), >= 1.
    epsilon, delta : float
        The protocol's target, ε > 0, δ in (0, 1).
    scale : float
        The experiment code's ``scale`` (1 in Fig. 2b), > 0.

    Returns
    -------
    tuple of (float, int)
        ``g = max(2√n, d, 4)`` and ``b = ⌊scale g² ln(d²/δ)²/(ε² n)⌋`` (>= 1).

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> vector_sum_parameters(2500, dim=10, epsilon=0.2, delta=0.1)
    (100.0, 4771)
    """
    n = check_int_at_least("n_users", n_users, 1)
    d = check_int_at_least("dim", dim, 1)
    eps = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    scale = check_positive("scale", scale)
    g = max(2.0 * math.sqrt(n), float(d), 4.0)
    b = scale * g * g * math.log(d * d / delta) ** 2 / (eps * eps * n)
    return g, max(int(b), 1)


class ShuffledVectorSumTree:
    """Binary tree of shuffled binomial vector sums over batches of users.

    Parameters
    ----------
    stream_shape : tuple of int
        Leading axes of independent streams (e.g. ``(n_trials,)``).
    n_coords : int
        ``D``, coordinates of each user's vector, >= 1.
    capacity : int
        Leaves (batches) of the tree, >= 1; ``tree_depth(capacity)`` levels.
    users_per_leaf : int
        Users of one batch, >= 1 (``B M``).
    bound : float
        ``L``: every coordinate lies in ``[-L, L]``, > 0.
    dim, epsilon, delta, scale :
        As :func:`vector_sum_parameters`.
    linf, l2 : float
        One record's largest change of its vector, per coordinate and in L2, value
        units, > 0.
    records : int
        Records one changed user can move (group size), >= 1.
    accountant : Accountant
        Charged once, here, for every stream.
    keys : mapping
        Cell labels per stream, broadcast to ``stream_shape``.
    rng : object ndarray of numpy Generator, shape ``stream_shape``
        One privacy-noise stream per tree (its users' rounding and its nodes' binomial
        draws), as :class:`~fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`
        takes them: stream ``i``'s noise does not depend on how many streams run.

    Raises
    ------
    ValueError
        If an argument is out of range.
    TypeError
        If ``rng`` is not an object array of Generators of shape ``stream_shape``.
    BudgetExceededError
        If the charge exceeds the accountant's budget (nothing opens).
    """

    def __init__(
        self,
        *,
        stream_shape: tuple[int, ...],
        n_coords: int,
        capacity: int,
        users_per_leaf: int,
        bound: float,
        dim: int,
        epsilon: float,
        delta: float,
        linf: float,
        l2: float,
        records: int = 1,
        scale: float = 1.0,
        accountant: Accountant,
        keys: Mapping[str, Any],
        rng: Any,
    ) -> None:
        self.shape = tuple(check_int_at_least("stream_shape", n, 1) for n in stream_shape)
        self.n_coords = check_int_at_least("n_coords", n_coords, 1)
        self.capacity = check_int_at_least("capacity", capacity, 1)
        self.users_per_leaf = check_int_at_least("users_per_leaf", users_per_leaf, 1)
        self.bound = check_positive("bound", bound)
        linf = check_positive("linf", linf)
        l2 = check_positive("l2", l2)
        records = check_int_at_least("records", records, 1)
        rngs = np.asarray(rng, dtype=object)
        if rngs.shape != self.shape or not all(
            isinstance(g, np.random.Generator) for g in rngs.flat
        ):
            raise TypeError(
                f"`rng` must be an object array of numpy Generators of shape {self.shape}, "
                f"got {type(rng).__name__} of shape {rngs.shape}."
            )
        self.depth = tree_depth(self.capacity)
        self.grids: list[float] = []
        self.trials: list[int] = []
        events = []
        for level in range(self.depth):
            n = self.users_per_leaf * 2**level
            g, b = vector_sum_parameters(n, dim=dim, epsilon=epsilon, delta=delta, scale=scale)
            self.grids.append(g)
            self.trials.append(b)
            max_shift = records * (math.ceil(linf * g / self.bound) + 1)
            l2_shift = records * (l2 * g / self.bound + 2.0 * math.sqrt(self.n_coords))
            events.append(
                BinomialVectorSum(
                    n_trials=n * b,
                    probability=VECSUM_PROBABILITY,
                    dim=self.n_coords,
                    max_shift=max_shift,
                    l2_shift=max(l2_shift, float(max_shift)),
                )
            )
        self.event = BinomialVectorSumTree(levels=tuple(events))
        flat = {k: np.broadcast_to(np.asarray(v), self.shape).ravel() for k, v in keys.items()}
        accountant.spend(self.event, key=flat)
        self._rngs = rngs.ravel()
        self._grid_column = np.asarray(self.grids)[:, None, None]
        n_streams = len(self._rngs)  # state is kept over the flattened streams
        self._acc = np.zeros((self.depth, n_streams, self.n_coords), dtype=np.int64)
        self._users = np.zeros(self.depth, dtype=np.int64)
        self._nodes = np.zeros((self.depth, n_streams, self.n_coords))
        self._batch = 0

    def release(self, values: np.ndarray) -> np.ndarray:
        """Add one batch of users and release the prefix sum of all batches so far.

        Parameters
        ----------
        values : ndarray of float64, shape (*stream_shape, users_per_leaf, n_coords)
            Each user's vector, clipped to ``[-L, L]``.

        Returns
        -------
        ndarray of float64, shape (*stream_shape, n_coords)
            The debiased sum of the released nodes of the prefix (the analyzer's output).

        Raises
        ------
        ValueError
            If the shape is wrong or the tree is full.
        """
        values = np.asarray(values, dtype=np.float64)
        want = (*self.shape, self.users_per_leaf, self.n_coords)
        if values.shape != want:
            raise ValueError(f"`values` must have shape {want}, got {values.shape}.")
        if self._batch >= self.capacity:
            raise ValueError(f"the tree holds `capacity` = {self.capacity} batches.")
        self._batch += 1
        clipped = np.clip(values, -self.bound, self.bound)
        users = clipped.reshape(len(self._rngs), self.users_per_leaf, self.n_coords)
        idx = (self._batch & -self._batch).bit_length() - 1
        self._users += self.users_per_leaf
        n = int(self._users[idx])
        g, b = self.grids[idx], self.trials[idx]
        noise = np.empty((len(self._rngs), self.n_coords), dtype=np.int64)
        # Each stream reads its own generator: the users' rounding at every level (one
        # draw of shape (depth, users, coords), the same values as level by level), then
        # the released node's binomial. The loop is over streams (trials) only.
        for s, gen in enumerate(self._rngs):
            z = (users[s] + self.bound) * (self._grid_column / self.bound)
            low = np.floor(z)
            up = gen.random(z.shape) < (z - low)
            self._acc[:, s] += (low.astype(np.int64) + up).sum(axis=-2)
            noise[s] = gen.binomial(n * b, VECSUM_PROBABILITY, size=self.n_coords)
        count = self._acc[idx] + noise
        self._nodes[idx] = (self.bound / g) * (count - VECSUM_PROBABILITY * b * n) - n * self.bound
        self._acc[: idx + 1] = 0
        self._users[: idx + 1] = 0
        bits = [lvl for lvl in range(self.depth) if (self._batch >> lvl) & 1]
        return self._nodes[bits].sum(axis=0).reshape(*self.shape, self.n_coords)
