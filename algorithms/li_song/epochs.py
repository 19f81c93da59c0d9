"""The epoch loop of Li & Song's successive elimination, as named steps.

:func:`simulate` runs every trial (and every independent unit of agents) at once, epoch
by epoch, as documented in :mod:`fedpriv.algorithms.li_song.core`: each epoch is
:meth:`EpochLoop.truncate` (the horizon falls inside the epoch: round-robin pulls, no
release), :meth:`EpochLoop.explore` (Alg. 1 lines 5-9: pulls, and each agent's epoch
means released through ``privacy/``), :meth:`EpochLoop.communicate` (lines 10-15:
participants, aggregate, elimination) and :meth:`EpochLoop.exploit` (DDP/HDP: the
local exploitation while messages travel); :meth:`EpochLoop.commit` is line 17.
State is batched over (trial, unit) rows and updated in place.

Length: one class holds the epoch's steps over the shared row state; its releases go
through ``privacy/`` in batches of rows, beside the per-row form they must equal
(secure noise keeps it; tests/algorithms/test_li_song_batched.py compares the two).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from fedpriv.algorithms.li_song.core import (
    StructurePlan,
    confidence_width,
    epoch_gap,
    epoch_sums,
    sample_target,
)
from fedpriv.privacy import Accountant, laplace_release, raw_release
from fedpriv.privacy.accounting.events import NonPrivate
from fedpriv.privacy.calibrations import li_song_epoch_scale

__all__ = ["EpochLoop", "simulate"]

_RAW_REASON = "ε = inf: per-epoch arm means released without noise"
_EXPLOIT_REASON = (
    "DDP/HDP local exploitation: the arm with the best raw local mean "
    "(actions are outside Definition 1)"
)


#: Columns of the action transcript (one row per agent and segment).
_ACTION_COLUMNS = ("trial", "agent", "start", "stop", "kind", "arms")


def _action_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """The action transcript: ``rows`` as records of :data:`_ACTION_COLUMNS`.

    The frame pandas builds from the same rows as dicts (pandas reads both into one
    object array and infers each column's dtype from it), without a dict per row.
    """
    if not rows:
        return pd.DataFrame([])
    return pd.DataFrame(rows, columns=list(_ACTION_COLUMNS))


def _message_frame(rows: list[tuple[Any, ...]], columns: tuple[str, ...]) -> pd.DataFrame:
    """The message transcript: ``rows`` as records of ``columns`` (the plan's hook's).

    The frame pandas builds from the same rows as dicts, as :func:`_action_frame`.
    """
    if not rows:
        return pd.DataFrame([])
    return pd.DataFrame(rows, columns=list(columns))


def _arm_sets(mask: np.ndarray) -> list[tuple[int, ...]]:
    """Each row's arms (the indices set in ``mask``, shape (R, K)) as a tuple of ints."""
    if mask.shape[0] == 0:
        return []
    patterns, which = np.unique(mask, axis=0, return_inverse=True)
    sets = [tuple(np.flatnonzero(pattern).tolist()) for pattern in patterns]
    return [sets[i] for i in which.ravel().tolist()]


def _recorded(record: bool | str) -> tuple[bool, bool]:
    """``(messages, actions)`` kept for ``record``: True, False, "messages" or "actions"."""
    if isinstance(record, str):
        if record not in ("messages", "actions"):
            raise ValueError(f"`record` must be a bool, 'messages' or 'actions', got {record!r}.")
        return record == "messages", record == "actions"
    return bool(record), bool(record)


def simulate(
    plan: StructurePlan,
    *,
    env: Any,
    table: Any,
    horizon: int,
    epsilon: float,
    n_trials: int,
    noise_rngs: np.ndarray,
    policy_rngs: np.ndarray | None,
    accountant: Accountant,
    record: bool | str,
    secure_noise: bool = False,
    stop_epoch: int | None = None,
    reward_rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """Run the elimination epochs of ``plan`` for all trials at once (see module doc).

    Parameters
    ----------
    plan : StructurePlan
        The algorithm's structure (divisor, participants, delay, schedule, aggregate).
    env : BernoulliMAB
        The environment.
    table : RewardTable
        The reward table.
    horizon : int
        T >= 1.
    epsilon : float
        ε > 0 per release (``inf``: no noise).
    n_trials : int
        >= 1.
    noise_rngs : ndarray of object
        Noise generators (``numpy.random.Generator``), one per noise stream.
    policy_rngs : ndarray of object or None
        Participant-selection generators, indexed by row (None without partial
        participation).
    accountant : Accountant
        Charged with every release.
    record : bool or {"messages", "actions"}
        Keep both transcripts, or only the one named.
    secure_noise : bool
        Exact discrete Laplace noise on a grid.
    stop_epoch : int, optional
        Last epoch simulated; the run stops there without the commit phase
        (``committed`` is -1). Default: to the horizon, then commit.
    reward_rng : numpy.random.Generator, optional
        The regret-only fast path (``rewards="binomial"`` of the run functions): each
        epoch's reward sums are drawn from it as one ``Binomial(n_r, μ_{i,k})`` per
        (row, agent, arm) instead of being read from ``table``, and every release of
        the run draws its noise from ``noise_rngs[0]`` (one generator). The same
        distribution of every observable, not the same rewards: no reward has an
        identity a coupled run could share. Default: the table.

    Returns
    -------
    dict of str to Any
        The fields of :class:`LiSongRun` the loop computes.
    """
    loop = EpochLoop(
        plan,
        env=env,
        table=table,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        noise_rngs=noise_rngs,
        policy_rngs=policy_rngs,
        accountant=accountant,
        record=record,
        secure_noise=secure_noise,
        reward_rng=reward_rng,
    )
    r = 0
    while stop_epoch is None or r < stop_epoch:
        r += 1
        idx = loop.live_rows(r)
        if idx.size == 0:
            break
        full, s_new, n_r, n_i = loop.truncate(r, idx)
        if full.size == 0:
            loop.checkpoint()
            continue
        t_explore = loop.explore(r, full, s_new, n_r, n_i)
        keep, agg = loop.communicate(r, full, s_new, n_i, t_explore)
        if plan.delay > 0:
            loop.exploit(r, full)
        loop.active[full] = keep
        loop.s_prev[full] = s_new
        loop.agg_last[full] = agg
    else:  # stopped after epoch `stop_epoch`: no commit phase
        loop.committed = np.full(loop.n_b, -1, dtype=np.int64)
        return loop.result()
    loop.commit()
    return loop.result()


class EpochLoop:
    """The state of every (trial, unit) row, and one method per step of an epoch."""

    def __init__(
        self,
        plan: StructurePlan,
        *,
        env: Any,
        table: Any,
        horizon: int,
        epsilon: float,
        n_trials: int,
        noise_rngs: np.ndarray,
        policy_rngs: np.ndarray | None,
        accountant: Accountant,
        record: bool | str,
        secure_noise: bool,
        reward_rng: np.random.Generator | None = None,
    ) -> None:
        self.plan, self.env, self.table, self.horizon = plan, env, table, horizon
        self.epsilon, self.n_trials = epsilon, n_trials
        self.noise_rngs, self.policy_rngs = noise_rngs, policy_rngs
        self.reward_rng = reward_rng
        #: The one noise generator of the binomial fast path (None: one per stream).
        self.shared_noise = None if reward_rng is None else noise_rngs.flat[0]
        self.accountant, self.secure_noise = accountant, secure_noise
        self.record_messages, self.record_actions = _recorded(record)
        units = plan.agents_of_unit
        self.n_units, self.n_ag = n_units, n_ag = units.shape
        self.n_b = n_b = n_trials * n_units
        self.n_arms = n_arms = env.n_arms
        self.trial_of = np.repeat(np.arange(n_trials), n_units)
        self.agents = np.tile(units, (n_trials, 1))  # (B, A)
        self.gaps = env.gaps
        self.own = env.global_means.max() - env.arm_means[self.agents]  # (B, A, K)
        self.active = np.ones((n_b, n_arms), dtype=bool)
        self.s_prev = np.zeros(n_b, dtype=np.int64)
        self.t = np.zeros(n_b, dtype=np.int64)
        self.counts = np.zeros((n_b, n_ag, n_arms), dtype=np.int64)
        self.ybar = np.zeros((n_b, n_ag, n_arms))
        self.local = np.zeros((n_b, n_ag, n_arms))
        self.agg_last = np.full((n_b, n_arms), np.nan)
        self.rounds = np.zeros(n_b, dtype=np.int64)
        self.cost = np.zeros(n_b)
        self.exploit_regret = np.zeros(n_b)
        self.times, self.regrets = [np.zeros(n_b)], [np.zeros(n_b)]
        self.messages: list[tuple[Any, ...]] = []  # rows of plan.message_columns
        self.actions: list[tuple[Any, ...]] = []  # rows of _ACTION_COLUMNS
        self.a_range = np.arange(n_ag)

    def checkpoint(self) -> None:
        """Record the time and pseudo-regret of every row."""
        self.times.append(self.t.astype(np.float64))
        self.regrets.append(np.einsum("bak,k->b", self.counts, self.gaps))

    def segment(self, b: int, start: int, stop: int, kind: str, arms_of_agent: Any) -> None:
        """Append row ``b``'s agents' actions in ``[start, stop)`` to the transcript.

        Parameters
        ----------
        b : int
            Row.
        start, stop : int
            Slots ``[start, stop)``.
        kind : str
            ``"explore"``, ``"exploit"`` or ``"commit"``.
        arms_of_agent : array_like
            The arms pulled (per agent for ``"exploit"``).
        """
        trial, start, stop = int(self.trial_of[b]), int(start), int(stop)
        if kind == "exploit":
            arms = [(arm,) for arm in np.asarray(arms_of_agent).tolist()]
        else:
            arms = [tuple(np.atleast_1d(arms_of_agent).tolist())] * self.n_ag
        for agent, pulled in zip(self.agents[b].tolist(), arms):
            self.actions.append((trial, agent, start, stop, kind, pulled))

    def segments(self, rows: np.ndarray, starts: Any, stops: Any, kind: str, arms: Any) -> None:
        """:meth:`segment` for each of ``rows`` in order, without a call per row.

        Parameters
        ----------
        rows : ndarray of int64, shape (R,)
            Rows.
        starts, stops : array_like of int, shape (R,) or scalar
            Slots ``[start, stop)`` of each row.
        kind : str
            ``"explore"``, ``"exploit"`` or ``"commit"``.
        arms : sequence
            Per row: the tuple of arms pulled, or for ``"exploit"`` an array of one arm
            per agent (shape (R, A)).
        """
        n = rows.size
        trials = self.trial_of[rows].tolist()
        agents = self.agents[rows].tolist()
        starts = np.broadcast_to(np.asarray(starts, dtype=np.int64), (n,)).tolist()
        stops = np.broadcast_to(np.asarray(stops, dtype=np.int64), (n,)).tolist()
        append = self.actions.append
        if kind == "exploit":
            for trial, row, start, stop, pulled in zip(
                trials, agents, starts, stops, np.asarray(arms).tolist()
            ):
                for agent, arm in zip(row, pulled):
                    append((trial, agent, start, stop, kind, (arm,)))
            return
        for trial, row, start, stop, pulled in zip(trials, agents, starts, stops, arms):
            for agent in row:
                append((trial, agent, start, stop, kind, pulled))

    def live_rows(self, r: int) -> np.ndarray:
        """Rows that still explore in epoch ``r``.

        Parameters
        ----------
        r : int
            Epoch, >= 1.

        Returns
        -------
        ndarray of int64
            Row indices.
        """
        live = (self.t < self.horizon) & (self.active.sum(axis=1) > 1)
        if self.plan.n_rounds is not None and r > self.plan.n_rounds:
            live[:] = False
        return np.flatnonzero(live)

    def truncate(self, r: int, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """Epoch ``r``'s sample sizes; rows whose epoch the horizon cuts pull round-robin
        to the horizon and release nothing. Returns the full rows and their sizes.

        Parameters
        ----------
        r : int
            Epoch, >= 1.
        idx : ndarray of int64
            Live rows.

        Returns
        -------
        tuple of ndarray
            The full rows, their new cumulative sizes S(r), per-arm pulls n_r and active
            arm counts.
        """
        plan, horizon, active = self.plan, self.horizon, self.active
        n_i = active.sum(axis=1)[idx]
        target = epoch_gap(r, schedule=plan.schedule, gap=plan.gap, n_rounds=plan.n_rounds)
        s_real = sample_target(
            n_i,
            r,
            n_arms=self.n_arms,
            horizon=horizon,
            divisor=plan.divisor,
            epsilon=self.epsilon,
            target_gap=target,
        )
        s_new = np.maximum(np.ceil(s_real).astype(np.int64), self.s_prev[idx] + 1)
        n_r = s_new - self.s_prev[idx]
        room = horizon - self.t[idx]
        trunc = n_i * n_r > room
        if trunc.any():
            tb = idx[trunc]
            q, rem = np.divmod(room[trunc], n_i[trunc])
            rank = np.cumsum(active[tb], axis=1) - 1
            add = np.where(active[tb], q[:, None] + (rank < rem[:, None]), 0)
            self.counts[tb] += add[:, None, :]
            if self.record_actions:
                self.segments(tb, self.t[tb], horizon, "explore", _arm_sets(active[tb]))
            self.t[tb] = horizon
        keep = ~trunc
        return idx[keep], s_new[keep], n_r[keep], n_i[keep]

    def explore(
        self, r: int, full: np.ndarray, s_new: np.ndarray, n_r: np.ndarray, n_i: np.ndarray
    ) -> np.ndarray:
        """Pull every active arm ``n_r`` times, release the epoch means, update ȳ.

        Returns each row's time at the start of the epoch.

        Parameters
        ----------
        r : int
            Epoch, >= 1.
        full : ndarray of int64
            Rows that run the whole epoch.
        s_new : ndarray of int64
            S(r) of each row.
        n_r : ndarray of int64
            Pulls per active arm this epoch.
        n_i : ndarray of int64
            Active arms per row.

        Returns
        -------
        ndarray of int64
            Each row's slot at the start of the epoch.
        """
        a_range = self.a_range
        pb, pk = np.nonzero(self.active[full])
        bg = full[pb]
        if self.reward_rng is None:
            sums = epoch_sums(
                self.table, self.trial_of[bg], self.agents[bg], pk, self.s_prev[bg], n_r[pb]
            )
        else:  # the sum of n_r Bernoulli(μ) rewards, in distribution
            means = self.env.arm_means[self.agents[bg], pk[:, None]]  # (P, A)
            sums = self.reward_rng.binomial(n_r[pb][:, None], means).astype(np.float64)
        self.local[bg[:, None], a_range[None, :], pk[:, None]] += sums
        xhat = sums / n_r[pb][:, None]  # (P, A)
        yhat = self._release(r, full, n_r, pb, pk, xhat)
        w_old = (self.s_prev[bg] / s_new[pb])[:, None]
        w_new = (n_r[pb] / s_new[pb])[:, None]
        old = self.ybar[bg[:, None], a_range[None, :], pk[:, None]]
        self.ybar[bg[:, None], a_range[None, :], pk[:, None]] = w_old * old + w_new * yhat
        self.counts[bg[:, None], a_range[None, :], pk[:, None]] += n_r[pb][:, None]
        t_explore = self.t[full].copy()
        self.t[full] += n_i * n_r
        self.checkpoint()
        return t_explore

    def _release(
        self,
        r: int,
        full: np.ndarray,
        n_r: np.ndarray,
        pb: np.ndarray,
        pk: np.ndarray,
        xhat: np.ndarray,
    ) -> np.ndarray:
        """Each row's epoch means x̂, released (Laplace, or raw at ε = inf) as ŷ.

        Consecutive rows whose epochs have the same ``n_r`` (hence the same event) are
        released in one call, their entries in the order of :meth:`_release_by_row`
        (row, agent, arm): the accountant gets the same charges and ledger rows in the
        same order, and each agent's generator draws the same values in the same order
        (a generator's draws one at a time are its draws of a block). Secure noise
        samples blocks by rejection, so it keeps the per-row calls.
        """
        if self.secure_noise:
            return self._release_by_row(r, full, n_r, pb, pk, xhat)
        yhat = np.empty_like(xhat)
        first = np.searchsorted(pb, np.arange(full.size + 1))  # pairs of row m: first[m:m+2]
        if math.isinf(self.epsilon):
            runs = [(0, full.size)]
        else:
            cuts = np.flatnonzero(np.diff(n_r)) + 1
            bounds = np.concatenate(([0], cuts, [full.size]))
            runs = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        for m0, m1 in runs:
            pairs = np.arange(first[m0], first[m1])
            entries, agents, rng = self._release_entries(full, pb, pairs, m0, m1)
            b = full[pb[entries]]
            keys = {
                "trial": self.trial_of[b],
                "agent": self.agents[b, agents],
                "arm": pk[entries],
                "epoch": r,
                "channel": "message",
            }
            vals = xhat[entries, agents]
            if math.isinf(self.epsilon):
                yhat[entries.ravel(), agents.ravel()] = raw_release(
                    vals, accountant=self.accountant, keys=keys, reason=_RAW_REASON
                ).ravel()
                continue
            yhat[entries.ravel(), agents.ravel()] = laplace_release(
                vals,
                scale=self._epoch_scale(int(n_r[m0])),
                l1_sensitivity=1.0 / int(n_r[m0]),
                accountant=self.accountant,
                keys=keys,
                rng=rng,
            ).ravel()
        return yhat

    def _release_entries(
        self, full: np.ndarray, pb: np.ndarray, pairs: np.ndarray, m0: int, m1: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows ``m0 .. m1 - 1``'s entries in release order: (pair, agent, generators).

        Flat, one generator per entry; or, when every row has the same number ``nI`` of
        active arms, of shape ``(rows, agents, nI)`` with one generator per (row,
        agent) (each draws its ``nI`` values at once, as :meth:`_release_by_row`).
        """
        n_ag = self.n_ag
        rows = full[m0:m1]
        n_active = np.bincount(pb[pairs] - m0, minlength=m1 - m0)
        if n_active.size and np.all(n_active == n_active[0]):
            shape = (m1 - m0, n_ag, int(n_active[0]))
            entries = np.broadcast_to(pairs.reshape(shape[0], 1, shape[2]), shape)
            agents = np.broadcast_to(self.a_range[None, :, None], shape)
            if self.shared_noise is not None:
                return entries, agents, self.shared_noise
            return entries, agents, self.noise_rngs[rows]
        order = np.lexsort(
            (np.repeat(pairs, n_ag), np.tile(self.a_range, pairs.size), np.repeat(pb[pairs], n_ag))
        )
        entries = np.repeat(pairs, n_ag)[order]
        agents = np.tile(self.a_range, pairs.size)[order]
        if self.shared_noise is not None:
            return entries, agents, self.shared_noise
        return entries, agents, self.noise_rngs[full[pb[entries]], agents]

    def _epoch_scale(self, n_pulls: int) -> float:
        """The Laplace scale of an epoch of ``n_pulls`` pulls per arm (Alg. 1 line 9)."""
        plan = self.plan
        return li_song_epoch_scale(
            self.epsilon,
            n_agents=plan.n_agents_claim,
            n_pulls_in_epoch=n_pulls,
            partial=plan.n_participants is not None,
            n_participants=plan.n_participants,
        )

    def _release_by_row(
        self,
        r: int,
        full: np.ndarray,
        n_r: np.ndarray,
        pb: np.ndarray,
        pk: np.ndarray,
        xhat: np.ndarray,
    ) -> np.ndarray:
        """:meth:`_release` with one call per row (secure noise, and the reference)."""
        accountant = self.accountant
        yhat = np.empty_like(xhat)
        start = np.searchsorted(pb, np.arange(full.size))
        stop = np.append(start[1:], pb.size)
        for m, b in enumerate(full):
            arms = pk[start[m] : stop[m]]
            vals = xhat[start[m] : stop[m]].T  # (A, nI)
            keys = {
                "trial": int(self.trial_of[b]),
                "agent": self.agents[b][:, None],
                "arm": arms[None, :],
                "epoch": r,
                "channel": "message",
            }
            if math.isinf(self.epsilon):
                yhat[start[m] : stop[m]] = raw_release(
                    vals, accountant=accountant, keys=keys, reason=_RAW_REASON
                ).T
            else:
                yhat[start[m] : stop[m]] = laplace_release(
                    vals,
                    scale=self._epoch_scale(int(n_r[m])),
                    l1_sensitivity=1.0 / int(n_r[m]),
                    accountant=accountant,
                    keys=keys,
                    rng=self.noise_rngs[b] if self.shared_noise is None else self.shared_noise,
                    secure=self.secure_noise,
                ).T
        return yhat

    def communicate(
        self, r: int, full: np.ndarray, s_new: np.ndarray, n_i: np.ndarray, t_explore: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Participants, aggregate and elimination; returns (arms kept, aggregate).

        Parameters
        ----------
        r : int
            Epoch, >= 1.
        full : ndarray of int64
            Rows that ran the whole epoch.
        s_new : ndarray of int64
            S(r) of each row.
        n_i : ndarray of int64
            Active arms per row.
        t_explore : ndarray of int64
            Each row's slot at the start of the epoch.

        Returns
        -------
        tuple of (ndarray, ndarray)
            Arms kept (bool) and the aggregate means.
        """
        plan, active, n_ag = self.plan, self.active, self.n_ag
        part = np.ones((full.size, n_ag), dtype=bool)
        if plan.n_participants is not None:
            part[:] = False
            for m, b in enumerate(full):
                chosen = self.policy_rngs[b].choice(n_ag, plan.n_participants, replace=False)
                part[m, chosen] = True
        agg = plan.aggregate(self.ybar[full], part)
        width = confidence_width(
            n_i,
            r,
            n_arms=self.n_arms,
            horizon=self.horizon,
            divisor=plan.divisor,
            epsilon=self.epsilon,
            n_samples=s_new,
        )
        masked = np.where(active[full], agg, -np.inf)
        keep = active[full] & (masked.max(axis=1)[:, None] - agg < 2.0 * width[:, None])
        self.rounds[full] += 1
        self.cost[full] += plan.round_cost(int(part[0].sum()))
        if self.record_actions:
            self.segments(full, t_explore, self.t[full], "explore", _arm_sets(active[full]))
        if self.record_messages and plan.message_hook is not None:
            for m, b in enumerate(full):
                arms = np.flatnonzero(active[b])
                plan.message_hook(
                    self.messages,
                    trial=int(self.trial_of[b]),
                    epoch=r,
                    time=int(self.t[b]),
                    agents=self.agents[b],
                    arms=arms,
                    ybar=self.ybar[b][:, arms],
                    participants=part[m],
                    aggregate=agg[m, arms],
                    kept=np.flatnonzero(keep[m]),
                )
        return keep, agg

    def exploit(self, r: int, full: np.ndarray) -> None:
        """Local exploitation on the best raw local mean while the messages travel.

        Parameters
        ----------
        r : int
            Epoch, >= 1.
        full : ndarray of int64
            Rows that ran the whole epoch.
        """
        a_range, active, n_ag = self.a_range, self.active, self.n_ag
        d = np.minimum(self.plan.delay, self.horizon - self.t[full])
        best = np.argmax(np.where(active[full][:, None, :], self.local[full], -np.inf), axis=2)
        self.counts[full[:, None], a_range[None, :], best] += d[:, None]
        self.exploit_regret[full] += d * self.gaps[best].sum(axis=1)
        # One charge for every row, its cells in the per-row order (row, agent, arm).
        rows, arms = np.nonzero(active[full])
        order = np.lexsort(
            (np.tile(arms, n_ag), np.repeat(a_range, arms.size), np.tile(rows, n_ag))
        )
        rows = np.tile(rows, n_ag)[order]
        self.accountant.spend(
            NonPrivate(reason=_EXPLOIT_REASON),
            key={
                "trial": self.trial_of[full[rows]],
                "agent": self.agents[full[rows], np.repeat(a_range, arms.size)[order]],
                "arm": np.tile(arms, n_ag)[order],
                "epoch": r,
                "channel": "action",
            },
        )
        if self.record_actions:
            moved = d > 0
            rows = full[moved]
            self.segments(rows, self.t[rows], self.t[rows] + d[moved], "exploit", best[moved])
        self.t[full] += d
        self.checkpoint()

    def commit(self) -> None:
        """Alg. 1 line 17: the rest of the horizon on the surviving (or best) arm."""
        active, t = self.active, self.t
        rest = self.horizon - t
        single = active.sum(axis=1) == 1
        arm = np.where(
            single,
            np.argmax(active, axis=1),
            np.argmax(np.where(active, np.nan_to_num(self.agg_last, nan=-np.inf), -np.inf), axis=1),
        )
        self.committed = np.where(rest > 0, arm, -1)
        self.counts[np.arange(self.n_b), :, arm] += rest[:, None]
        if self.record_actions:
            rows = np.flatnonzero(rest > 0)
            self.segments(rows, t[rows], self.horizon, "commit", [(a,) for a in arm[rows].tolist()])
        t[:] = self.horizon
        self.checkpoint()

    def result(self) -> dict[str, Any]:
        """The run's arrays, reshaped to (n_trials, n_units, ...)."""
        shape = (self.n_trials, self.n_units)
        counts, gaps = self.counts, self.gaps
        return {
            "counts": counts,
            "agents": self.agents,
            "trial_of": self.trial_of,
            "shape": shape,
            "regret": np.einsum("bak,k->b", counts, gaps).reshape(shape),
            "regret_eq1": np.einsum("bak,bak->b", counts, self.own).reshape(shape),
            "exploit": self.exploit_regret.reshape(shape),
            "rounds": self.rounds.reshape(shape),
            "cost": self.cost.reshape(shape),
            "active": self.active.reshape(self.n_trials, self.n_units, self.n_arms),
            "committed": self.committed.reshape(shape),
            "times": np.stack(self.times).reshape(-1, *shape),
            "regrets": np.stack(self.regrets).reshape(-1, *shape),
            "messages": (
                _message_frame(self.messages, self.plan.message_columns)
                if self.record_messages
                else None
            ),
            "actions": _action_frame(self.actions) if self.record_actions else None,
        }
