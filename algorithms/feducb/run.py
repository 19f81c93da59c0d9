"""Results of FedUCB runs and the linear algebra of its hot loop.

:class:`FedUCBRun` and :class:`FedUCBTranscript` are returned by
:mod:`fedpriv.algorithms.feducb.centralized`, :class:`DecentralizedFedUCBRun` by
:mod:`fedpriv.algorithms.feducb.decentralized`; :func:`inverse_and_logdet` (Cholesky, at syncs) and the
Sherman–Morrison updates (every round) keep ``V^{-1}`` and ``log det V`` without an
explicit inverse per step.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
from fedpriv.algorithms.feducb.oful import floored_cholesky
from fedpriv.algorithms.feducb.privatizer import PrivatizerCalibration
from fedpriv.privacy.accounting.events import NonPrivate
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer
from fedpriv.privacy.relations import NeighboringRelation

if TYPE_CHECKING:  # annotation only: importing network (networkx, pandas) stays lazy
    from fedpriv.algorithms.feducb.network import DecentralizedTranscript

__all__ = [
    "DecentralizedFedUCBRun",
    "FedUCBRun",
    "FedUCBTranscript",
    "inverse_and_logdet",
    "open_accounting",
    "rank_one_update",
    "subtract_outer",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FedUCBTranscript:
    """What each observer saw (recorded with ``record=True``).

    Attributes
    ----------
    requests : ndarray of bool, shape (n_trials, n_agents, horizon)
        Agent ``i`` asked for a sync at the end of round ``t`` (controller's view).
    actions : ndarray of int16, shape (n_trials, n_agents, horizon)
        Index of the action each agent picked.
    rewards : ndarray of float64, shape (n_trials, n_agents, horizon)
        Reward each agent observed (its own view).
    sync_times : tuple of ndarray of int64
        Per trial, the rounds ``t`` (0-based) at whose end a sync happened.
    releases_gram, releases_vector : tuple of ndarray
        Per trial, each agent's Privatizer releases: Û of shape
        (n_syncs_j, n_agents, d, d) and û of shape (n_syncs_j, n_agents, d)
        (the controller's view).
    broadcasts_gram, broadcasts_vector : tuple of ndarray
        Per trial, the controller's broadcasts S (n_syncs_j, d, d) and s
        (n_syncs_j, d) (what every agent receives).
    """

    requests: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    sync_times: tuple[np.ndarray, ...]
    releases_gram: tuple[np.ndarray, ...]
    releases_vector: tuple[np.ndarray, ...]
    broadcasts_gram: tuple[np.ndarray, ...]
    broadcasts_vector: tuple[np.ndarray, ...]


class _PrivatizerEpsilons:
    """The ε queries of a FedUCB result that holds ``accountant`` and ``mechanism_accountant``."""

    __slots__ = ()
    accountant: Accountant
    mechanism_accountant: Accountant | None

    def accountant_epsilon(self, target_delta: float) -> tuple[str, float]:
        """``(route, ε)`` of the Privatizer releases (Prop. 3's scope) at ``target_delta``,
        each leaf charged for the ``records_per_leaf`` pairs one change can move.

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        tuple of (str, float)
            The tightest route and ε in nats at ``target_delta``.
        """
        return self.accountant.routes.tightest(target_delta, where={"channel": "privatizer"})

    def mechanism_epsilon(self, target_delta: float) -> tuple[str, float]:
        """``(route, ε)`` of the Privatizer for one changed pair of an oblivious stream
        (the mechanism alone; equal to :meth:`accountant_epsilon` when
        ``records_per_leaf == 1``).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        tuple of (str, float)
            The tightest route and ε in nats at ``target_delta``.
        """
        if self.mechanism_accountant is None:
            return self.accountant_epsilon(target_delta)
        return self.mechanism_accountant.routes.tightest(
            target_delta, where={"channel": "privatizer"}
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FedUCBRun(_PrivatizerEpsilons):
    """Result of a batch of FedUCB runs.

    Attributes
    ----------
    algorithm : str
        ``"feducb"``, ``"feducb-fixed"`` or ``"feducb-nonprivate"``.
    setting : dict
        Parameters of the run (JSON-friendly scalars).
    regret_curve : ndarray of float64, shape (n_trials, horizon)
        Average per-agent cumulative pseudo-regret ``R_M(t)/M`` after round ``t``.
    final_regret : ndarray of float64, shape (n_trials, n_agents)
        Each agent's cumulative pseudo-regret at ``T``.
    sync_rounds : ndarray of bool, shape (n_trials, horizon)
        The controller synchronised at the end of round ``t``.
    n_syncs : ndarray of int64, shape (n_trials,)
    threshold : float
        ``D`` (``nan`` for the fixed schedule).
    sync_every : int or None
    tree_depth, capacity : int
        ``m`` and ``2**(m-1)`` of every agent's tree (``0`` for non-private).
    calibration : PrivatizerCalibration or None
    accountant : Accountant
        The view's accountant: every release charged at the sensitivity adaptivity
        gives (``records_per_leaf`` pairs of a leaf per changed pair).
    transcript : FedUCBTranscript or None
    seed_entropy : int
    records_per_leaf : int
        Leaf pairs one changed pair can move (1: the adaptive schedule's Privatizer is
        priced per pair, Prop. 3's scope; the fixed schedule's ``B``,
        :func:`fedpriv.algorithms.feducb.adaptivity.leaf_reach`).
    mechanism_accountant : Accountant or None
        The same releases charged for one changed pair of an oblivious stream (the
        mechanism alone); None when ``records_per_leaf == 1`` (then ``accountant``).
    """

    algorithm: str
    setting: dict
    regret_curve: np.ndarray
    final_regret: np.ndarray
    sync_rounds: np.ndarray
    n_syncs: np.ndarray
    threshold: float
    sync_every: int | None
    tree_depth: int
    capacity: int
    calibration: PrivatizerCalibration | None
    accountant: Accountant
    transcript: FedUCBTranscript | None
    seed_entropy: int
    records_per_leaf: int = 1
    mechanism_accountant: Accountant | None = None

    @property
    def sync_times(self) -> tuple[np.ndarray, ...]:
        """Per trial, the rounds at whose end a sync happened (int64)."""
        return tuple(np.flatnonzero(row) for row in self.sync_rounds)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DecentralizedFedUCBRun(_PrivatizerEpsilons):
    """Result of a batch of decentralized FedUCB runs.

    Attributes
    ----------
    algorithm : str
        ``"feducb-decentralized"``.
    setting : dict
    regret_curve : ndarray of float64, shape (n_trials, horizon)
        Average per-agent cumulative pseudo-regret after round ``t``.
    final_regret : ndarray of float64, shape (n_trials, n_agents)
    n_requests, n_releases, n_deliveries, n_transmissions : ndarray of int64, (n_trials,)
        Sync requests, Privatizer releases, message deliveries and link transmissions
        (every forward of a message to every neighbour, duplicates included).
    threshold : float
        ``D`` (NaN with the fixed schedule).
    gamma, tree_depth, capacity : int
    cover : tuple of tuple of int
        The clique cover of G_γ used; ``len(cover)`` bounds χ̄(G_γ) from above.
    calibration : PrivatizerCalibration or None
    accountant : Accountant
    transcript : DecentralizedTranscript or None
    seed_entropy : int
    schedule : {"adaptive", "fixed"}
    sync_every : int or None
        ``B`` of the fixed schedule.
    records_per_leaf : int
        Leaf pairs one changed pair can move: ``⌈B/γ⌉`` with the fixed schedule (the
        agent's own actions on set g between releases,
        :mod:`fedpriv.algorithms.feducb.adaptivity`), else 1.
    mechanism_accountant : Accountant or None
        The trees charged for one changed pair of an oblivious stream (None when
        ``records_per_leaf == 1``).
    """

    algorithm: str
    setting: dict
    regret_curve: np.ndarray
    final_regret: np.ndarray
    n_requests: np.ndarray
    n_releases: np.ndarray
    n_deliveries: np.ndarray
    n_transmissions: np.ndarray
    threshold: float
    gamma: int
    tree_depth: int
    capacity: int
    cover: tuple[tuple[int, ...], ...]
    calibration: PrivatizerCalibration | None
    accountant: Accountant
    transcript: DecentralizedTranscript | None
    seed_entropy: int
    schedule: str = "adaptive"
    sync_every: int | None = None
    records_per_leaf: int = 1
    mechanism_accountant: Accountant | None = None


def inverse_and_logdet(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(M^{-1}, log det M)`` of a batch of SPD matrices by Cholesky.

    A matrix that is not positive definite (the noise exceeded Λ: the α event of
    Prop. 4) has its eigenvalues floored at ``1e-9 · max(1, trace/d)`` (post-
    processing) with a RuntimeWarning.

    Parameters
    ----------
    matrix : ndarray of float64, shape (..., d, d)
        Symmetric matrices M.

    Returns
    -------
    tuple of (ndarray, ndarray)
        ``M^{-1}`` of shape ``(..., d, d)`` and ``log det M`` of shape ``(...,)``.
    """
    chol = floored_cholesky(
        matrix,
        message="a synchronised Gram matrix is not positive definite (noise above Λ); "
        "its eigenvalues were floored.",
        warn_only_if_floored=True,
    )
    # L^{-1}: numpy's inv is LAPACK gesv(L, I), the very call of solve(L, I), without
    # broadcasting an identity per matrix (same values, ~1.7x faster)
    lower_inv = np.linalg.inv(chol)
    inverse = lower_inv.swapaxes(-1, -2) @ lower_inv
    logdet = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return inverse, logdet


def rank_one_update(
    inverse: np.ndarray, x: np.ndarray, *, work: np.ndarray | None = None
) -> np.ndarray:
    """Sherman–Morrison update of ``inverse`` (J, I, d, d) by ``+ x xᵀ`` in place.

    Returns ``xᵀ A x`` (before the update), for the matrix determinant lemma.
    ``work`` is an optional scratch array shaped like ``inverse`` (see
    :func:`subtract_outer`).

    Parameters
    ----------
    inverse : ndarray of float64, shape (J, I, d, d)
        Updated in place.
    x : ndarray of float64, shape (J, I, d)
        The new contexts.
    work : ndarray of float64, shape (J, I, d, d), optional
        Scratch space.

    Returns
    -------
    ndarray of float64, shape (J, I)
    """
    ax = np.einsum("jide,jie->jid", inverse, x)
    quad = np.einsum("jid,jid->ji", ax, x)
    subtract_outer(inverse, ax, quad, work=work)
    return quad


def subtract_outer(
    inverse: np.ndarray, ax: np.ndarray, quad: np.ndarray, *, work: np.ndarray | None = None
) -> None:
    """``inverse -= (A x)(A x)ᵀ / (1 + xᵀ A x)`` in place (Sherman–Morrison).

    ``work``: optional float64 scratch array of ``inverse``'s shape for the outer
    product, so that the hot loop does not allocate (and page in) a fresh batch of
    matrices per round; the values are the same with or without it.

    Parameters
    ----------
    inverse : ndarray of float64, shape (..., d, d)
        Updated in place.
    ax : ndarray of float64, shape (..., d)
        ``A x``.
    quad : ndarray of float64, shape (...)
        ``xᵀ A x``.
    work : ndarray of float64, shape (..., d, d), optional
        Scratch space.
    """
    scaled = ax / np.sqrt(1.0 + quad)[..., None]
    if work is None:
        inverse -= scaled[..., :, None] * scaled[..., None, :]
    else:
        # einsum's outer product is one product per entry, as the broadcast multiply,
        # and about twice as fast on (…, 10, 10) batches
        np.einsum("...i,...j->...ij", scaled, scaled, out=work)
        inverse -= work


def open_accounting(
    *,
    shared_users: bool,
    n_trials: int,
    n_agents: int,
    dim: int,
    capacity: int,
    noise_stddev: float,
    shift: float,
    frobenius_sensitivity: float,
    sync_timing_reason: str | None,
    rng: np.ndarray,
    secure_noise: bool = False,
    records_per_leaf: int = 1,
) -> tuple[Accountant, MatrixTreePrivatizer, Accountant | None]:
    """The run's accountant and its (trial, agent) Privatizers, charged when opened.

    Relation ``REPLACE_ONE_CONTEXT_REWARD`` with (trial, agent) disjoint, or
    ``USER_AT_ALL_AGENTS`` with only trials disjoint when one user is at every agent
    (footnote 4: the M trees then compose sequentially). ``sync_timing_reason``
    (adaptive schedule) charges each (trial, agent) one ``NonPrivate`` release on the
    ``"sync-timing"`` channel; the Privatizer's channel is ``"privatizer"``.
    ``secure_noise``: the Privatizer's ``secure=True`` (exact integer noise on a grid,
    :mod:`fedpriv.privacy.mechanisms.secure_matrix`). ``records_per_leaf``: the Privatizer's
    (leaf pairs one change can move); when > 1 (and private) a second accountant is
    charged the same trees for one pair, the mechanism alone (third item, else None).

    Parameters
    ----------
    shared_users : bool
        One user at every agent (footnote 4).
    n_trials, n_agents : int
        Sizes, each >= 1.
    dim : int
        Context dimension d (the Privatizer's matrices are ``(d+1) × (d+1)``).
    capacity : int
        Leaves of each Privatizer tree.
    noise_stddev : float
        σ_N per entry, >= 0 (0: non-private).
    shift : float
        Λ, the Privatizer's diagonal shift.
    frobenius_sensitivity : float
        Per-pair Frobenius sensitivity of a leaf.
    sync_timing_reason : str, optional
        Reason of the sync-timing ``NonPrivate`` charges (adaptive schedule), or None.
    rng : ndarray of object, shape (n_trials, n_agents)
        The Privatizers' noise generators.
    secure_noise : bool
        Exact integer noise on a grid.
    records_per_leaf : int
        Leaf pairs one change can move, >= 1.

    Returns
    -------
    tuple of (Accountant, MatrixTreePrivatizer, Accountant or None)
        The run's accountant, the Privatizers and the mechanism-alone accountant.
    """

    def new_accountant() -> Accountant:
        if shared_users:
            return Accountant(
                neighboring_relation=NeighboringRelation.USER_AT_ALL_AGENTS,
                disjoint=("trial",),
                sequential=("agent", "channel"),
            )
        return Accountant(
            neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
            disjoint=("trial", "agent"),
            sequential=("channel",),
        )

    accountant = new_accountant()
    keys = {"trial": np.arange(n_trials)[:, None], "agent": np.arange(n_agents)[None, :]}
    privatizer = MatrixTreePrivatizer(
        stream_shape=(n_trials, n_agents),
        dim=dim,
        capacity=capacity,
        noise_stddev=noise_stddev,
        shift=shift,
        frobenius_sensitivity=frobenius_sensitivity,
        accountant=accountant,
        keys={**keys, "channel": "privatizer"},
        rng=rng,
        secure=secure_noise,
        records_per_leaf=records_per_leaf,
    )
    flat = {k: np.broadcast_to(v, (n_trials, n_agents)).ravel() for k, v in keys.items()}
    mechanism = None
    if records_per_leaf > 1 and noise_stddev > 0:
        mechanism = new_accountant()
        mechanism.spend(privatizer.event_for(1), key={**flat, "channel": "privatizer"})
    if sync_timing_reason is not None:
        accountant.spend(
            NonPrivate(reason=sync_timing_reason), key={**flat, "channel": "sync-timing"}
        )
    return accountant, privatizer, mechanism
