"""Private-FedLinUCB (Zhou & Chowdhury, ICLR 2024, Alg. 1), vectorised over trials and silos.

Every silo runs LinUCB; at the end of every batch of ``B`` rounds (the fixed schedule,
§4) it sends its batch's Gram matrix ``ΔG = Σ x xᵀ`` and reward vector ``Δu = Σ y x``
through the privacy protocol ``P``; the server broadcasts the sums ``G, u`` of what it
receives. Between syncs a silo acts on ``V = λ I + G + ΔG_i`` and
``θ̂ = V⁻¹ (u + Δu_i)`` (its own raw data of the current batch, as the paper's experiment
code does) and picks ``argmax ⟨x, θ̂⟩ + β_t ‖x‖_{V⁻¹}`` (ties: the first arm).

Protocols (``protocol``):

``"ldp"`` (silo-level LDP, Thm. 5.1)
    Each silo's own binary tree over its batches (``κ = ⌊log₂(T/B)⌋ + 1`` levels) with
    Gaussian node noise ``σ`` (:func:`fedpriv.privacy.calibrations.zhou_chowdhury.zc_ldp_noise_stddev`),
    through :class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`: the
    leaf is ``[[ΔG, Δu/√2], [Δuᵀ/√2, 0]]`` and the node noise ``(σ/√2)(N̂ + N̂ᵀ)/√2``,
    which is the paper's law exactly (Gram ``(Z + Zᵀ)/2``, ``Z_ij ~ N(0, σ²)``; reward
    vector ``N(0, σ² I)`` after the ``√2`` is undone), and the tree's event prices it
    exactly (μ = √κ · sensitivity / σ).
``"ldp-exact"`` (fedpriv's corrected calibration)
    The same trees with σ solved so that the view spends exactly (ε, δ) at the charged
    sensitivity (:func:`~fedpriv.privacy.calibrations.zhou_chowdhury.zc_exact_noise_stddev`).
``"sdp-amp"`` (shuffle model by amplification, Thm. 5.3)
    The same trees with the smaller ``σ`` of
    :func:`~fedpriv.privacy.calibrations.zhou_chowdhury.zc_amp_noise_stddev`; the
    accountant holds each silo's own (local) guarantee, which the shuffle's amplification
    turns into the central one.
``"sdp-vecsum"`` (shuffle model, vector sum, Thm. 5.5)
    Every user (one silo's pair of one round) sends ``[y x, upper(x xᵀ)]`` through the
    shuffled binomial vector sum (:class:`fedpriv.privacy.mechanisms.vector_sum.ShuffledVectorSumTree`):
    one tree over batches for all silos together, a node's users randomized at its own
    grid ``g`` and trials ``b``; the server's sums are the analyzer's debiased prefix
    sums. ``λ`` from :func:`~fedpriv.privacy.calibrations.zhou_chowdhury.zc_vecsum_noise_stddev`
    (without ``√M``). Charged once per trial: one user moves its vector by at most 2 per
    coordinate and ``√6`` in L2 (``L = Y = 1``), ``B`` users with own data between syncs.
``"non-private"``
    The raw sums, published through :func:`fedpriv.privacy.mechanisms.raw_release`.

Adaptivity (``own_data_between_syncs``): a silo acting on its raw batch data moves its
later actions within the batch when one user changes, so one user can move up to ``B``
pairs of the leaf. The tree is then charged ``records_per_leaf = B`` (group privacy over
the batch, exact for a Gaussian sum: the L2 sensitivity scales by ``B``); with
``own_data_between_syncs=False`` (fedpriv's corrected variant) a silo acts on the
broadcast ``G, u`` only, and one user moves one pair.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rngs
from fedpriv.privacy import Accountant, NeighboringRelation
from fedpriv.privacy.calibrations.zhou_chowdhury import (
    zc_amp_noise_stddev,
    zc_confidence_width,
    zc_exact_noise_stddev,
    zc_ldp_noise_stddev,
    zc_n_batches,
    zc_regularizer,
    zc_tree_depth,
    zc_user_sensitivity,
    zc_vecsum_noise_stddev,
)
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive
from fedpriv.privacy.mechanisms import raw_release
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer
from fedpriv.privacy.mechanisms.vector_sum import ShuffledVectorSumTree

__all__ = [
    "PROTOCOLS",
    "PrivateFedLinUCBRun",
    "ZCCalibration",
    "run_private_fedlinucb",
    "zc_calibration",
]

#: The privacy protocols of Alg. 1 that fedpriv runs.
PROTOCOLS = ("ldp", "ldp-exact", "sdp-amp", "sdp-vecsum", "non-private")

_SQRT2 = math.sqrt(2.0)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ZCCalibration:
    """Noise and regulariser of one run (:func:`zc_calibration`).

    Attributes
    ----------
    protocol : str
    noise_stddev : float
        σ of the paper's law (0 without noise).
    regularizer : float
        λ.
    depth : int
        κ.
    n_batches : int
        Leaves per silo's tree, ``⌊T/B⌋``.
    sensitivity : float
        One user's L2 shift of one release (:func:`zc_user_sensitivity`).
    records_per_leaf : int
        Pairs of one leaf one user can move (``B`` with own data, else 1).
    """

    protocol: str
    noise_stddev: float
    regularizer: float
    depth: int
    n_batches: int
    sensitivity: float
    records_per_leaf: int


def zc_calibration(
    *,
    protocol: str,
    epsilon: float | None,
    delta: float | None,
    horizon: int,
    batch_size: int,
    n_agents: int,
    dim: int,
    alpha: float = 0.01,
    bound_x: float = 1.0,
    bound_y: float = 1.0,
    own_data_between_syncs: bool = True,
) -> ZCCalibration:
    """The calibration of a run of ``T = horizon`` rounds (module docstring).

    Parameters
    ----------
    protocol : {"ldp", "ldp-exact", "sdp-amp", "sdp-vecsum", "non-private"}
    epsilon, delta : float or None
        The target guarantee (ignored for ``"non-private"``).
    horizon : int
        ``T`` >= ``batch_size``.
    batch_size : int
        ``B`` >= 1.
    n_agents : int
        ``M`` >= 1.
    dim : int
        ``d`` >= 1.
    alpha : float
        In (0, 1).
    bound_x, bound_y : float
        ``L``, ``Y`` > 0.
    own_data_between_syncs : bool
        See the module docstring.

    Returns
    -------
    ZCCalibration

    Raises
    ------
    ValueError
        If an argument is out of range or ``protocol`` is unknown.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"`protocol` must be one of {PROTOCOLS}, got {protocol!r}.")
    depth = zc_tree_depth(horizon, batch_size)
    sensitivity = zc_user_sensitivity(bound_x, bound_y)
    records = int(batch_size) if own_data_between_syncs else 1
    if protocol == "ldp-exact":
        sigma = zc_exact_noise_stddev(
            epsilon, delta, depth=depth, sensitivity=records * sensitivity
        )
    elif protocol == "ldp":
        sigma = zc_ldp_noise_stddev(epsilon, delta, depth=depth, bound_x=bound_x)
    elif protocol == "sdp-amp":
        sigma = zc_amp_noise_stddev(
            epsilon, delta, depth=depth, n_agents=n_agents, horizon=horizon, bound_x=bound_x
        )
    elif protocol == "sdp-vecsum":
        sigma = zc_vecsum_noise_stddev(epsilon, delta, depth=depth, dim=dim, bound_x=bound_x)
    else:
        sigma = 0.0
    lam_agents = 1 if protocol == "sdp-vecsum" else n_agents
    return ZCCalibration(
        protocol=protocol,
        noise_stddev=sigma,
        regularizer=zc_regularizer(sigma, n_agents=lam_agents, depth=depth, dim=dim, alpha=alpha),
        depth=depth,
        n_batches=zc_n_batches(horizon, batch_size),
        sensitivity=sensitivity,
        records_per_leaf=records,
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PrivateFedLinUCBRun:
    """Result of :func:`run_private_fedlinucb`.

    Attributes
    ----------
    algorithm : str
        ``"private-fedlinucb"``.
    calibration : ZCCalibration
    final_regret : ndarray, shape (n_trials, n_agents)
        Cumulative pseudo-regret of each silo.
    regret_curve : ndarray, shape (n_trials, rounds)
        Average per-silo cumulative pseudo-regret after each round.
    n_syncs : int
        Batches sent (each a message from every silo).
    accountant : Accountant
    seed_entropy : int
    leaves : ndarray or None, shape (n_trials, n_syncs, d+1, d+1)
        Silo 0's leaves ``[[ΔG, Δu/√2], [Δuᵀ/√2, 0]]`` (``keep_leaves``).
    releases : ndarray or None, shape (n_trials, n_syncs, d, d+1)
        Silo 0's released prefix sums ``[Ĝ | û]`` (``keep_releases``).
    actions : ndarray or None, shape (n_trials, n_agents, rounds)
        Chosen arms (``keep_actions``).
    """

    algorithm: str
    calibration: ZCCalibration
    final_regret: np.ndarray
    regret_curve: np.ndarray
    n_syncs: int
    accountant: Accountant
    seed_entropy: int
    leaves: np.ndarray | None = None
    releases: np.ndarray | None = None
    actions: np.ndarray | None = None


def run_private_fedlinucb(
    env: Any,
    *,
    horizon: int,
    batch_size: int = 25,
    protocol: str = "ldp",
    epsilon: float | None = None,
    delta: float | None = None,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    alpha: float = 0.01,
    confidence_scale: float = 1.0,
    bound_x: float = 1.0,
    own_data_between_syncs: bool = True,
    planned_horizon: int | None = None,
    keep_leaves: bool = False,
    keep_releases: bool = False,
    keep_actions: bool = False,
) -> PrivateFedLinUCBRun:
    """Run Private-FedLinUCB (Alg. 1) on ``env`` for ``n_trials`` trials at once.

    Parameters
    ----------
    env : SyntheticEnvironment or TableEnvironment
        :mod:`fedpriv.algorithms.zhou_chowdhury.environment`.
    horizon : int
        Rounds to run, ``1 <= horizon <= planned_horizon``.
    batch_size : int
        ``B`` >= 1 (25 in Fig. 2).
    protocol : {"ldp", "ldp-exact", "sdp-amp", "sdp-vecsum", "non-private"}
    epsilon, delta : float
        The protocol's target (ε > 0, δ in (0, 1)); unused without noise.
    n_trials : int
        >= 1, the leading axis of every result.
    seed : int or SeedSequence
        Root: node noise from ``Stream.NOISE`` of each (trial, silo) (``"sdp-vecsum"``:
        of each (trial, silo ``M``), the shuffled protocol's), reward noise from
        ``Stream.ENVIRONMENT`` of each trial; trial ``j``'s streams do not depend on
        ``n_trials``.
    alpha : float
        Confidence level of the width, in (0, 1) (0.01 in Fig. 2).
    confidence_scale : float
        Multiplies ``β_t`` (1 synthetic, 0.1 real data in the experiment code), > 0.
    bound_x : float
        ``L``, the feature-norm bound the calibration uses, > 0.
    own_data_between_syncs : bool
        True (the paper's algorithm): a silo acts on its raw batch data between syncs.
    planned_horizon : int, optional
        ``T`` of the calibration and the trees (default ``horizon``): an audit runs the
        first batches of a longer run.
    keep_leaves, keep_releases, keep_actions : bool
        Keep silo 0's leaves and releases, and every action.

    Returns
    -------
    PrivateFedLinUCBRun

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    planned = (
        horizon
        if planned_horizon is None
        else check_int_at_least("planned_horizon", planned_horizon, horizon)
    )
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    n_trials = check_int_at_least("n_trials", n_trials, 1)
    alpha = check_open_unit("alpha", alpha)
    crs = check_positive("confidence_scale", confidence_scale)
    root = as_seed_sequence(seed)
    m, d = env.n_agents, env.dim
    cal = zc_calibration(
        protocol=protocol,
        epsilon=epsilon,
        delta=delta,
        horizon=planned,
        batch_size=batch_size,
        n_agents=m,
        dim=d,
        alpha=alpha,
        bound_x=bound_x,
        bound_y=env.reward_bound,
        own_data_between_syncs=own_data_between_syncs,
    )
    vecsum = protocol == "sdp-vecsum"
    accountant = Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
        disjoint=("trial",) if vecsum else ("trial", "agent"),
    )
    keys = {"trial": np.arange(n_trials)[:, None], "agent": np.arange(m)[None, :]}
    privatizer = shuffler = None
    upper = np.triu_indices(d)
    if vecsum:
        lx, ly = float(bound_x), float(env.reward_bound)
        shuffler = ShuffledVectorSumTree(
            stream_shape=(n_trials,),
            n_coords=d + upper[0].size,
            capacity=max(cal.n_batches, 1),
            users_per_leaf=batch_size * m,
            bound=max(lx * ly, lx * lx),
            dim=d,
            epsilon=epsilon,
            delta=delta,
            linf=2.0 * max(lx * ly, lx * lx),
            l2=cal.sensitivity,
            records=cal.records_per_leaf,
            accountant=accountant,
            keys={"trial": np.arange(n_trials)},
            # one stream per trial for its shuffled protocol: the noise stream of address
            # (trial j, agent M), which no silo uses, so trial j's rounding and binomial
            # noise do not depend on n_trials
            rng=stream_rngs(root, n_trials=n_trials, n_agents=m + 1, stream=Stream.NOISE)[:, m],
        )
    elif cal.noise_stddev > 0:
        privatizer = MatrixTreePrivatizer(
            stream_shape=(n_trials, m),
            dim=d,
            capacity=max(cal.n_batches, 1),
            noise_stddev=cal.noise_stddev / _SQRT2,
            shift=0.0,
            frobenius_sensitivity=cal.sensitivity,
            accountant=accountant,
            keys=keys,
            rng=stream_rngs(root, n_trials=n_trials, n_agents=m, stream=Stream.NOISE),
            records_per_leaf=cal.records_per_leaf,
        )
    trial_rngs = env.trial_rngs(root, n_trials)
    ybound = float(env.reward_bound)
    g_sync = np.zeros((n_trials, 1, d, d))
    u_sync = np.zeros((n_trials, 1, d))
    g_loc = np.zeros((n_trials, m, d, d))
    u_loc = np.zeros((n_trials, m, d))
    eye = cal.regularizer * np.eye(d)
    per_round = np.zeros((n_trials, horizon))
    final = np.zeros((n_trials, m))
    n_syncs = horizon // batch_size
    leaves = np.zeros((n_trials, n_syncs, d + 1, d + 1)) if keep_leaves else None
    releases = np.zeros((n_trials, n_syncs, d, d + 1)) if keep_releases else None
    actions = np.zeros((n_trials, m, horizon), dtype=np.int64) if keep_actions else None
    rows_t, rows_m = np.arange(n_trials)[:, None], np.arange(m)[None, :]
    if shuffler is not None:
        batch_x = np.zeros((n_trials, batch_size, m, d))
        batch_y = np.zeros((n_trials, batch_size, m))
        batch_gram = np.zeros((n_trials, batch_size, m, upper[0].size))
    g_prev, u_prev = np.zeros((n_trials, m, d, d)), np.zeros((n_trials, m, d))
    for t in range(horizon):
        x, means = env.round(t)  # (M, K, d), (M, K)
        if own_data_between_syncs:
            v = eye + g_sync + g_loc
            b = u_sync + u_loc
        else:
            v = np.broadcast_to(eye + g_sync, (n_trials, m, d, d))
            b = np.broadcast_to(u_sync, (n_trials, m, d))
        v_inv = np.linalg.inv(v)
        theta = np.einsum("tmij,tmj->tmi", v_inv, b)
        beta = crs * zc_confidence_width(
            t + 1,
            regularizer=cal.regularizer,
            dim=d,
            n_agents=m,
            reward_stddev=env.reward_stddev,
            alpha=alpha,
            bound_x=bound_x,
        )
        xv = np.einsum("mkd,tmde->tmke", x, v_inv)
        width = np.sqrt(np.maximum(np.einsum("tmke,mke->tmk", xv, x), 0.0))
        ucb = np.einsum("mkd,tmd->tmk", x, theta) + beta * width
        arm = np.argmax(ucb, axis=-1)  # (n_trials, M), first index on ties
        chosen = x[rows_m, arm]  # (n_trials, M, d)
        mean = means[rows_m, arm]
        y = np.clip(mean + env.reward_noise(t, trial_rngs), -ybound, ybound)
        g_loc += chosen[..., :, None] * chosen[..., None, :]
        u_loc += y[..., None] * chosen
        if shuffler is not None:  # each user's own vector, for the shuffled protocol
            slot = t % batch_size
            batch_x[:, slot] = chosen
            batch_y[:, slot] = y
            batch_gram[:, slot] = (chosen[..., :, None] * chosen[..., None, :])[
                ..., upper[0], upper[1]
            ]
        regret = means.max(axis=-1)[None, :] - mean
        final += regret
        per_round[:, t] = regret.mean(axis=1)
        if actions is not None:
            actions[:, :, t] = arm
        if (t + 1) % batch_size == 0:
            batch = (t + 1) // batch_size - 1
            leaf = np.zeros((n_trials, m, d + 1, d + 1))
            leaf[..., :d, :d] = g_loc
            leaf[..., :d, d] = u_loc / _SQRT2
            leaf[..., d, :d] = u_loc / _SQRT2
            if leaves is not None:
                leaves[:, batch] = leaf[:, 0]
            if shuffler is not None:
                users = np.concatenate([batch_y[..., None] * batch_x, batch_gram], axis=-1)
                sums = shuffler.release(users.reshape(n_trials, batch_size * m, -1))
                u_hat = sums[:, None, :d]
                g_hat = np.zeros((n_trials, 1, d, d))
                g_hat[:, 0, upper[0], upper[1]] = sums[:, d:]
                g_hat[:, 0, upper[1], upper[0]] = sums[:, d:]
            elif privatizer is not None:
                g_hat, u_half = privatizer.release(leaf, np.ones((n_trials, m), dtype=bool))
                u_hat = u_half * _SQRT2
            else:
                both = raw_release(
                    leaf,
                    accountant=accountant,
                    keys={"trial": rows_t[..., None, None], "agent": rows_m[..., None, None]},
                    reason="Private-FedLinUCB without a privacy protocol (non-private FedLinUCB)",
                )
                g_hat = g_prev + both[..., :d, :d]  # the server's running sums
                u_hat = u_prev + both[..., :d, d] * _SQRT2
                g_prev, u_prev = g_hat, u_hat
            if releases is not None:
                releases[:, batch, :, :d] = g_hat[:, 0]
                releases[:, batch, :, d] = u_hat[:, 0]
            g_sync = g_hat.sum(axis=1, keepdims=True)
            u_sync = u_hat.sum(axis=1, keepdims=True)
            g_loc[:] = 0.0
            u_loc[:] = 0.0
    return PrivateFedLinUCBRun(
        algorithm="private-fedlinucb",
        calibration=cal,
        final_regret=final,
        regret_curve=np.cumsum(per_round, axis=1),
        n_syncs=n_syncs,
        accountant=accountant,
        seed_entropy=int(root.entropy),
        leaves=leaves,
        releases=releases,
        actions=actions,
    )
