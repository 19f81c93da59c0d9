"""The round loop of centralized FedUCB (Dubey & Pentland 2020, Alg. 1), as named steps.

:func:`fedpriv.algorithms.feducb.centralized.run_feducb` (and its fixed-schedule and
non-private variants) validate their options into a :class:`LoopSetup` (``configure_loop``:
the option checks and the Privatizer's calibration) and hand the rounds to
:class:`CentralizedLoop`. Each round is :meth:`CentralizedLoop.play` (line 6:
every agent picks its UCB action; lines 8-10: local updates and the sync test) and, when
some agent requests it, :meth:`CentralizedLoop.synchronize` (lines 12-16: the Privatizer
releases each agent's tree prefix and the controller broadcasts the sums). The
resolved readings of the paper are documented in ``centralized.py``'s module docstring.

All state is batched over trials (axis 0) and agents (axis 1); arrays are updated in
place, so a run's values are those of one uninterrupted loop.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.algorithms.environments.linear import CHUNK_ROUNDS, LinearBanditTables
from fedpriv.algorithms.feducb.adaptivity import leaf_reach
from fedpriv.algorithms.feducb.privatizer import (
    PRIVATIZER_CALIBRATIONS,
    PrivatizerCalibration,
    privatizer_calibration,
)
from fedpriv.algorithms.feducb.run import (
    FedUCBTranscript,
    inverse_and_logdet,
    rank_one_update,
    subtract_outer,
)
from fedpriv.algorithms.feducb.sync import exploration_radius, recommended_threshold
from fedpriv.privacy.checks import check_int_at_least, check_nonnegative, check_positive
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer

__all__ = ["BETA_VERSIONS", "ON_CAPACITY", "CentralizedLoop", "LoopSetup", "configure_loop"]

#: β choices: Prop. 2 of the full text "H", of the NeurIPS text "P", or a constant.
BETA_VERSIONS = ("H", "P", "tuned")
#: What a sync past the tree's capacity does: raise, or stop syncing that trial.
ON_CAPACITY = ("raise", "stop")
_VERSION_OF_BETA = {"H": "full", "P": "neurips", "tuned": "full"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LoopSetup:
    """Validated options and the derived calibration of one centralized FedUCB run."""

    algorithm: str
    private: bool
    fixed: bool
    beta: str
    beta_value: float | None
    sync_every: int | None
    n_syncs: int | None
    on_capacity: str
    side: int
    calibration: PrivatizerCalibration | None
    rho_min: float
    rho_max: float
    privacy_term: float
    noise_stddev: float
    shift: float
    capacity: int
    initial: float
    regularizer: float
    threshold: float
    shift_w: float
    failure_probability: float


def configure_loop(
    tables: LinearBanditTables,
    *,
    private: bool,
    fixed: bool,
    epsilon: float,
    delta: float,
    threshold: float | None,
    sync_every: int | None,
    calibration: str,
    beta: str,
    beta_value: float | None,
    n_syncs: int | None,
    regularizer: float,
    failure_probability: float,
    on_capacity: str,
    side: int,
    horizon: int | None = None,
    secure: bool = False,
) -> LoopSetup:
    """Validate the options and derive the Privatizer's calibration (Alg. 1-2).

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds of the run.
    private, fixed : bool
        A private run (else non-private), on the fixed schedule (else adaptive).
    epsilon, delta, threshold, sync_every, beta, beta_value, n_syncs : object
        As in :func:`fedpriv.algorithms.feducb.centralized.run_feducb` and
        :func:`~fedpriv.algorithms.feducb.centralized.run_feducb_fixed`.
    calibration : str
        The Privatizer's calibration (their ``mode``), one of
        ``PRIVATIZER_CALIBRATIONS``.
    regularizer, failure_probability, on_capacity : object
        As in :func:`~fedpriv.algorithms.feducb.centralized.run_feducb`.
    side : int
        The world whose privacy-noise streams are drawn, >= 0.
    horizon : int, optional
        The run's ``T`` for the calibration and Theorem 1's ``D`` when fewer rounds
        are simulated (:mod:`fedpriv.algorithms.feducb.first_sync`); default
        ``tables.horizon``.
    secure : bool
        The Privatizer draws secure noise (``privatizer_calibration(secure=...)``).

    Returns
    -------
    LoopSetup
        The checked options and the calibration.

    Raises
    ------
    ValueError
        If an option is outside its allowed set or range (the message names it).
    """
    spec = tables.spec
    n_agents, d = tables.n_agents, tables.dim
    horizon = tables.horizon if horizon is None else horizon
    algorithm = "feducb-nonprivate" if not private else ("feducb-fixed" if fixed else "feducb")
    if beta not in BETA_VERSIONS:
        raise ValueError(f"`beta` must be one of {BETA_VERSIONS}, got {beta!r}.")
    if beta == "tuned":
        beta_value = check_positive("beta_value", beta_value if beta_value is not None else -1.0)
    if on_capacity not in ON_CAPACITY:
        raise ValueError(f"`on_capacity` must be one of {ON_CAPACITY}, got {on_capacity!r}.")
    if calibration not in PRIVATIZER_CALIBRATIONS:
        raise ValueError(f"`mode` must be one of {PRIVATIZER_CALIBRATIONS}, got {calibration!r}.")
    side = check_int_at_least("side", side, 0)
    if fixed:
        sync_every = check_int_at_least("sync_every", sync_every, 1)
        n_syncs = max(1, horizon // sync_every)
    elif n_syncs is not None:
        n_syncs = check_int_at_least("n_syncs", n_syncs, 1)
    if private:
        cal = privatizer_calibration(
            epsilon,
            delta,
            horizon=horizon,
            n_agents=n_agents,
            dim=d,
            n_syncs=n_syncs,
            calibration=calibration,
            version=_VERSION_OF_BETA[beta],
            bound_x=spec.bound_x,
            bound_y=spec.bound_y,
            bound_theta=spec.bound_theta,
            failure_probability=failure_probability,
            secure=secure,
            records_per_leaf=(leaf_reach(sync_every=sync_every, horizon=horizon) if fixed else 1),
        )
        rho_min, rho_max, privacy_term = cal.rho_min, cal.rho_max, cal.beta_privacy_term
        noise_stddev, shift, capacity = cal.noise_stddev, cal.shift, cal.capacity
        initial = n_agents * rho_min
    else:
        cal = None
        regularizer = check_positive("regularizer", regularizer)
        rho_min = rho_max = regularizer / n_agents  # S starts at λ I = M ρ_min I
        privacy_term = (
            n_agents * spec.bound_theta * math.sqrt(rho_max)
            if beta == "H"
            else spec.bound_theta * math.sqrt(regularizer)
        )
        noise_stddev, shift, initial = 0.0, 0.0, regularizer
        capacity = horizon if n_syncs is None else 2 ** (n_syncs - 1).bit_length()
    if fixed:
        threshold = math.nan
    elif threshold is None:
        threshold = recommended_threshold(
            horizon=horizon, dim=d, rho_min=rho_min, rho_max=rho_max, bound_x=spec.bound_x
        )
    else:
        threshold = check_nonnegative("threshold", threshold)
    return LoopSetup(
        algorithm=algorithm,
        private=private,
        fixed=fixed,
        beta=beta,
        beta_value=beta_value,
        sync_every=sync_every,
        n_syncs=n_syncs,
        on_capacity=on_capacity,
        side=side,
        calibration=cal,
        rho_min=rho_min,
        rho_max=rho_max,
        privacy_term=privacy_term,
        noise_stddev=noise_stddev,
        shift=shift,
        capacity=capacity,
        initial=initial,
        regularizer=regularizer,
        threshold=threshold,
        shift_w=n_agents * (rho_max - rho_min),
        failure_probability=failure_probability,
    )


class CentralizedLoop:
    """The state of centralized FedUCB across a batch of trials, and its round steps."""

    def __init__(
        self,
        setup: LoopSetup,
        *,
        n_trials: int,
        n_agents: int,
        dim: int,
        horizon: int,
        sub_gaussian: float,
        literal_d_factor: bool,
        record: bool,
    ) -> None:
        self.setup, self.record = setup, record
        self.n_trials, self.n_agents, self.dim, self.horizon = n_trials, n_agents, dim, horizon
        self.sub_gaussian, self.literal_d_factor = sub_gaussian, literal_d_factor
        d = dim
        self.eye = eye = np.eye(d)
        self.s_gram = np.broadcast_to(setup.initial * eye, (n_trials, d, d)).copy()
        self.s_vec = np.zeros((n_trials, d))
        inv_s, self.logdet_s = inverse_and_logdet(self.s_gram)
        self.a_inv = np.broadcast_to(inv_s[:, None], (n_trials, n_agents, d, d)).copy()
        self.logdet_v = np.repeat(self.logdet_s[:, None], n_agents, axis=1)
        w_inv, logdet_w0 = inverse_and_logdet(self.s_gram + setup.shift_w * eye)
        self.w_inv = np.broadcast_to(w_inv[:, None], (n_trials, n_agents, d, d)).copy()
        self.logdet_w = np.repeat(logdet_w0[:, None], n_agents, axis=1)
        self.work = np.empty_like(self.a_inv)  # scratch of the rank-one updates
        self.u_bar = np.zeros((n_trials, n_agents, d))
        self.leaf = np.zeros((n_trials, n_agents, d + 1, d + 1))  # Q since the last sync
        self.dt = np.zeros(n_trials, dtype=np.int64)
        self.syncing = np.ones(n_trials, dtype=bool)  # False once a trial stops at capacity
        self.cumulative = np.zeros((n_trials, n_agents))
        self.regret_curve = np.empty((n_trials, horizon))
        self.sync_rounds = np.zeros((n_trials, horizon), dtype=bool)
        if record:
            self.requests_log = np.zeros((n_trials, n_agents, horizon), dtype=bool)
            self.actions_log = np.zeros((n_trials, n_agents, horizon), dtype=np.int16)
            self.rewards_log = np.zeros((n_trials, n_agents, horizon))
            # one block per sync round: (trials, Û, û, S, s) of the trials that synced
            self.release_log: list[tuple[np.ndarray, ...]] = []
        self.trial_index = np.arange(n_trials)[:, None]
        self.agent_index = np.arange(n_agents)[None, :]
        self.v_buffer = np.zeros((n_trials, n_agents, CHUNK_ROUNDS, d + 1))  # v = [x; y]
        self.flushed = np.zeros(n_trials, dtype=np.int64)  # chunk rows already in Q
        self.rounds_played = horizon  # fewer when `run` stops at the first syncs

    def run(
        self,
        tables: LinearBanditTables,
        privatizer: MatrixTreePrivatizer,
        *,
        until_first_sync: bool = False,
    ) -> None:
        """Play every round of ``tables``, chunk by chunk of pre-drawn values.

        Parameters
        ----------
        tables : LinearBanditTables
            The worlds.
        privatizer : MatrixTreePrivatizer
            The (trial, agent) Privatizers, charged by their accountant.
        until_first_sync : bool
            Stop after the round at whose end the last trial has its first sync
            (``rounds_played``): the rounds played are exactly those of the full run,
            the later ones are not played.
        """
        all_trials = np.arange(self.n_trials)
        synced = np.zeros(self.n_trials, dtype=bool)
        for start in range(0, self.horizon, CHUNK_ROUNDS):
            stop = min(self.horizon, start + CHUNK_ROUNDS)
            block = tables.block(start, stop)
            # round-major contiguous copies: one per chunk, not strided views per round
            contexts = np.ascontiguousarray(np.moveaxis(block.contexts, 2, 0))
            rewards = np.ascontiguousarray(np.moveaxis(block.rewards, 2, 0))
            means = np.ascontiguousarray(np.moveaxis(block.means, 2, 0))
            for t in range(start, stop):
                row = t - start
                sync = self.play(t, row, contexts[row], rewards[row], means[row])
                if sync.any():
                    self.synchronize(t, row, sync, privatizer)  # drops full trees from sync
                    synced |= sync
                    if until_first_sync and synced.all():
                        self.rounds_played = t + 1
                        return
            self.flush(stop - start, all_trials)
            self.flushed[:] = 0

    def play(
        self, t: int, row: int, contexts: np.ndarray, rewards: np.ndarray, means: np.ndarray
    ) -> np.ndarray:
        """Round ``t``: actions, regret, local updates; returns the trials that sync.

        Parameters
        ----------
        t : int
            Round, 0-based.
        row : int
            Position of the round in its chunk.
        contexts : ndarray of float64, shape (n_trials, n_agents, n_arms, dim)
            This round's decision sets.
        rewards, means : ndarray of float64, shape (n_trials, n_agents, n_arms)
            This round's rewards and expected rewards.

        Returns
        -------
        ndarray of bool, shape (n_trials,)
        """
        setup, d = self.setup, self.dim
        ti, ai = self.trial_index, self.agent_index
        ax_all = np.matmul(contexts, self.a_inv)  # A symmetric: rows are (A x)ᵀ
        width = np.sqrt(np.maximum(np.einsum("jikd,jikd->jik", ax_all, contexts), 0.0))
        if setup.beta == "tuned":
            radius = setup.beta_value
        else:
            radius = exploration_radius(
                self.logdet_v,
                dim=d,
                n_agents=self.n_agents,
                rho_min=setup.rho_min,
                privacy_term=setup.privacy_term,
                sub_gaussian=self.sub_gaussian,
                failure_probability=setup.failure_probability,
                literal_d_factor=self.literal_d_factor,
            )[..., None]
        # ⟨x, θ̄⟩ = xᵀ A ũ with θ̄ = V^{-1} ũ (line 6)
        ucb = np.einsum("jikd,jid->jik", ax_all, self.s_vec[:, None] + self.u_bar)
        ucb = ucb + radius * width
        arm = np.argmax(ucb, axis=-1)  # (J, I)
        x = contexts[ti, ai, arm]
        y = rewards[ti, ai, arm]
        self.cumulative += means.max(axis=-1) - means[ti, ai, arm]
        self.regret_curve[:, t] = self.cumulative.mean(axis=1)
        # Sherman–Morrison on V^{-1} and the matrix determinant lemma on log det V
        ax = ax_all[ti, ai, arm]
        quad = np.einsum("jid,jid->ji", ax, x)
        subtract_outer(self.a_inv, ax, quad, work=self.work)
        self.logdet_v += np.log1p(quad)
        self.u_bar += y[..., None] * x
        self.v_buffer[:, :, row, :d] = x
        self.v_buffer[:, :, row, d] = y
        self.dt += 1
        if self.record:
            self.actions_log[:, :, t] = arm
            self.rewards_log[:, :, t] = y
        if setup.fixed:
            return np.full(self.n_trials, (t + 1) % setup.sync_every == 0)
        quad_w = rank_one_update(self.w_inv, x, work=self.work)
        self.logdet_w += np.log1p(quad_w)
        requests = self.dt[:, None] * (self.logdet_w - self.logdet_s[:, None]) >= setup.threshold
        if self.record:
            self.requests_log[:, :, t] = requests
        return requests.any(axis=1) & self.syncing

    def synchronize(
        self, t: int, row: int, sync: np.ndarray, privatizer: MatrixTreePrivatizer
    ) -> None:
        """Lines 12-16 for the trials in ``sync``: release, broadcast, reset.

        Parameters
        ----------
        t : int
            Round, 0-based.
        row : int
            Position of the round in its chunk.
        sync : ndarray of bool, shape (n_trials,)
            The trials that sync (updated in place when a tree is full and
            ``on_capacity="stop"``).
        privatizer : MatrixTreePrivatizer
            The Privatizers.

        Raises
        ------
        CapacityExceededError
            If a sync is past the tree's capacity and ``on_capacity="raise"``.
        """
        setup, n_trials = self.setup, self.n_trials
        full = sync & (privatizer.remaining_capacity[:, 0] <= 0)
        if full.any():
            if setup.on_capacity == "raise":
                raise CapacityExceededError(
                    f"sync {privatizer.capacity + 1} requested at round {t} but the "
                    f"Privatizer's tree holds {privatizer.capacity} leaves (m = "
                    f"{privatizer.depth}); pass a larger n_syncs or on_capacity='stop'."
                )
            self.syncing &= ~full
            sync &= ~full
            if not sync.any():
                return
        idx = np.flatnonzero(sync)
        self.flush(row + 1, idx)
        # every trial syncs (e.g. D = 0 or the fixed schedule): slices, not gathers
        at: Any = slice(None) if idx.size == n_trials else idx
        mask = np.broadcast_to(sync[:, None], (n_trials, self.n_agents))
        u_hat, small_u_hat = privatizer.release(self.leaf, mask)
        self.s_gram[at] = u_hat[at].sum(axis=1) + (
            0.0 if setup.private else setup.initial * self.eye
        )
        self.s_vec[at] = small_u_hat[at].sum(axis=1)
        inv_s, self.logdet_s[at] = inverse_and_logdet(self.s_gram[at])
        self.a_inv[at] = inv_s[:, None]
        self.logdet_v[at] = self.logdet_s[at][:, None]
        if not setup.fixed:
            inv_w, logdet_w_new = inverse_and_logdet(self.s_gram[at] + setup.shift_w * self.eye)
            self.w_inv[at] = inv_w[:, None]
            self.logdet_w[at] = logdet_w_new[:, None]
        self.u_bar[at] = 0.0
        self.leaf[at] = 0.0
        self.dt[at] = 0
        self.sync_rounds[idx, t] = True
        if self.record:
            self.release_log.append(
                (idx, u_hat[idx], small_u_hat[idx], self.s_gram[idx], self.s_vec[idx])
            )

    def flush(self, rows: int, idx: np.ndarray) -> None:
        """Add ``v vᵀ`` of the chunk rows ``flushed[j] .. rows-1`` to ``Q`` of trials ``idx``.

        Parameters
        ----------
        rows : int
            One past the last chunk row to add.
        idx : ndarray of int64
            Trials.
        """
        flushed, n_trials = self.flushed, self.n_trials
        first = int(flushed[idx].min())
        if first >= rows:
            return
        v_buffer = self.v_buffer
        part = v_buffer[idx, :, first:rows] if idx.size < n_trials else v_buffer[:, :, first:rows]
        if np.any(flushed[idx] > first):  # some trials flushed later rows already
            keep = np.arange(first, rows) >= flushed[idx][:, None]
            part = part * keep[:, None, :, None]
        target = slice(None) if idx.size == n_trials else idx  # every trial: no gather
        if rows - first == 1:  # one row (a sync every round): its outer product, one
            # product per entry as in the k = 1 matmul, without a BLAS call per agent
            self.leaf[target] += np.einsum("...i,...j->...ij", part[:, :, 0], part[:, :, 0])
        else:
            self.leaf[target] += np.matmul(part.swapaxes(-1, -2), part)
        flushed[idx] = rows

    def transcript(self) -> FedUCBTranscript:
        """What each observer saw (requires ``record=True``)."""
        n_trials, n_agents, d = self.n_trials, self.n_agents, self.dim
        log = self.release_log
        # rows of every sync block, grouped by trial (stable: each trial's syncs in order)
        trials = np.concatenate([block[0] for block in log]) if log else np.zeros(0, np.int64)
        order = np.argsort(trials, kind="stable")
        bounds = [0, *np.cumsum(np.bincount(trials, minlength=n_trials)).tolist()]

        def per_trial(field: int, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
            rows = (
                np.concatenate([block[field] for block in log])[order]
                if log
                else np.zeros((0, *shape))
            )
            return tuple(rows[bounds[j] : bounds[j + 1]] for j in range(n_trials))

        return FedUCBTranscript(
            requests=self.requests_log,
            actions=self.actions_log,
            rewards=self.rewards_log,
            sync_times=tuple(np.flatnonzero(row) for row in self.sync_rounds),
            releases_gram=per_trial(1, (n_agents, d, d)),
            releases_vector=per_trial(2, (n_agents, d)),
            broadcasts_gram=per_trial(3, (d, d)),
            broadcasts_vector=per_trial(4, (d,)),
        )
