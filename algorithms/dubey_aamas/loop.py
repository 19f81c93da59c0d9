"""The round loop of cooperative UCB (Dubey & Pentland, AAMAS 2020, Alg. 1-2), as steps.

:func:`fedpriv.algorithms.dubey_aamas.cooperative.run_private_coop_ucb` (and the non-private
version) build a :class:`CoopLoop` and call :meth:`CoopLoop.run`. Each round is
:meth:`CoopLoop.absorb` (messages delivered now and the agent's own last term enter the
index), :meth:`CoopLoop.choose` (round robin for the first ``K f`` rounds, then the UCB
index), :meth:`CoopLoop.pull`, and :meth:`CoopLoop.broadcast` (releases due now, through
the interval mechanism of ``privacy/``, and the message deltas sent down the γ-hop
line); the resolved readings of the paper are documented in ``cooperative.py``.

State is arm-major and flat: cell ``c = k N + n`` with ``n = b M + v`` (trial ``b``,
agent ``v``), so reductions over arms run over the leading axis. ``num`` / ``den`` hold
Σ (weight · mean) and Σ weight over the agent's own term and the latest message of
every sender within γ hops; ``mean = num/den`` (inf where ``den = 0``) and ``spread =
sqrt(1/den)`` (0 there) are refreshed where ``num``/``den`` change, so the index is
``mean + sqrt(2 ln t) * spread``. Everything is updated in place.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from fedpriv.algorithms.dubey_aamas.kernels import (
    ArmMajorDelayLine,
    BufferedRewards,
    argmax_ties_arm_major,
)

__all__ = ["CoopLoop"]


class CoopLoop:
    """State of cooperative UCB over ``B`` trials × ``M`` agents × ``K`` arms.

    ``stop`` (default ``horizon``) ends the run after that round: the first ``stop``
    rounds of the horizon-``T`` run, whose reward reader and mechanism keep ``T``.
    """

    def __init__(
        self,
        *,
        schedule: Any,
        table: Any,
        n_trials: int,
        n_agents: int,
        n_arms: int,
        horizon: int,
        interval: int,
        mechanism: Any,
        policy: Any,
        own_term: str,
        count_field: str,
        record: bool,
        stop: int | None = None,
    ) -> None:
        B, M, K, T = n_trials, n_agents, n_arms, horizon
        self.B, self.M, self.K, self.T, self.f = B, M, K, T, interval
        self.stop = S = T if stop is None else stop  # last round simulated
        self.N = N = B * M
        self.mechanism, self.policy = mechanism, policy
        self.sums = np.zeros(K * N)
        self.counts = np.zeros(K * N, dtype=np.int64)
        self.noisy = np.zeros(K * N)  # μ̃ (last release; its weight is 0 before one)
        self.released_n = np.zeros(K * N, dtype=np.int64)
        self.num = np.zeros(K * N)
        self.den = np.zeros(K * N)
        self.mean = np.full(K * N, np.inf)
        self.spread = np.zeros(K * N)
        self.index = np.empty((K, N))
        self.line = ArmMajorDelayLine(schedule, B, K)
        self.actions = np.empty((N, S), dtype=np.int64)
        self.rewards = np.empty((N, S))
        self.content = None  # (B, M, S, K) arrays after run() when recording
        self._by_round = None  # round-major while running: one contiguous row per round
        if record:
            self._by_round = {
                "mean": np.empty((S, K * N)),
                "count": np.empty((S, K * N), dtype=np.int64),
            }
        self.rows = np.arange(N)
        self.reader = BufferedRewards(table, B, M, K, T)
        self.raw_own = own_term == "raw"
        self.current = count_field == "current"
        self.dense = self.num.size // 4
        self.stale = None  # cells whose num/den changed after the last refresh

    def run(self) -> None:
        """Every round ``t = 1..stop``; flushes the mechanism's ledger rows every 256."""
        for t in range(1, self.stop + 1):
            self.absorb(t)
            arm = self.choose(t)
            cell, pulls, reward = self.pull(arm)
            self.broadcast(t, arm, cell, pulls)
            self.actions[:, t - 1], self.rewards[:, t - 1] = arm, reward
            if self._by_round is not None:
                self.record(t)
            if self.mechanism is not None and t % 256 == 0:
                self.mechanism.flush()
        if self.mechanism is not None:
            self.mechanism.flush()
        if self._by_round is not None:  # cells k N + b M + v of round t -> [b, v, t, k]
            shape = (self.stop, self.K, self.B, self.M)
            self.content = {
                name: np.ascontiguousarray(rows.reshape(shape).transpose(2, 3, 0, 1))
                for name, rows in self._by_round.items()
            }

    def _refresh(self, cells: np.ndarray) -> None:
        num, den, mean, spread = self.num, self.den, self.mean, self.spread
        d = den[cells]
        positive = d > 0
        if positive.all():
            mean[cells] = num[cells] / d
            spread[cells] = np.sqrt(1.0 / d)
            return
        safe = np.where(positive, d, 1.0)
        mean[cells] = np.where(positive, num[cells] / safe, np.inf)
        spread[cells] = np.where(positive, np.sqrt(1.0 / safe), 0.0)

    def _refresh_all(self) -> None:
        num, den, mean, spread = self.num, self.den, self.mean, self.spread
        positive = den > 0
        if positive.all():
            np.divide(num, den, out=mean)
            np.divide(1.0, den, out=spread)
            np.sqrt(spread, out=spread)
            return
        safe = np.where(positive, den, 1.0)
        np.copyto(mean, np.where(positive, num / safe, np.inf))
        np.copyto(spread, np.where(positive, np.sqrt(1.0 / safe), 0.0))

    def absorb(self, t: int) -> None:
        """Messages delivered at ``t`` and the last own term refresh mean and spread
        once, before the decision (a dense round refreshes every cell).

        Parameters
        ----------
        t : int
            Round, 1-based.
        """
        delivered = self.line.deliver(t)
        if delivered is not None and delivered[0].size > self.dense:
            cells, d_num, d_den = delivered
            self.num += np.bincount(cells, weights=d_num, minlength=self.num.size)
            self.den += np.bincount(cells, weights=d_den, minlength=self.num.size)
            self._refresh_all()
        else:
            if delivered is not None:
                cells, d_num, d_den = delivered
                np.add.at(self.num, cells, d_num)
                np.add.at(self.den, cells, d_den)
                self.stale = cells if self.stale is None else np.concatenate([self.stale, cells])
            if self.stale is not None:
                self._refresh(self.stale)
        self.stale = None

    def choose(self, t: int) -> np.ndarray:
        """Round robin over the arms for ``t <= K f``, then the UCB index.

        Parameters
        ----------
        t : int
            Round, 1-based.

        Returns
        -------
        ndarray of int64, shape (n_rows,)
            One arm per (trial, agent) row.
        """
        K, N = self.K, self.N
        if t <= K * self.f:
            return np.full(N, (t - 1) % K, dtype=np.int64)
        index = self.index
        np.multiply(self.spread.reshape(K, N), math.sqrt(2.0 * math.log(t)), out=index)
        np.add(self.mean.reshape(K, N), index, out=index)
        u = self.policy.at(t)  # every round: it fixes which draw each round reads
        return argmax_ties_arm_major(index, u if callable(u) else u.reshape(-1))

    def pull(self, arm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pull ``arm`` on every row; returns (cells, pulls before, rewards).

        Parameters
        ----------
        arm : ndarray of int64, shape (n_rows,)
            One arm per row.

        Returns
        -------
        tuple of (ndarray, ndarray, ndarray)
            Cells, pull counts before the pull and rewards, each ``(n_rows,)``.
        """
        cell = arm * self.N + self.rows
        pulls = self.counts[cell]
        reward = self.reader.read(cell, pulls, self.counts)
        self.sums[cell] += reward
        self.counts[cell] = pulls + 1
        if self.raw_own:
            self.num[cell] += reward
            self.den[cell] += 1.0
            self.stale = cell
        return cell, pulls, reward

    def broadcast(self, t: int, arm: np.ndarray, cell: np.ndarray, pulls: np.ndarray) -> None:
        """Release what is due at ``t`` and send the changed message content (A2).

        The content (weight w, mean) of the pulled streams before and after this round:
        with ``count_field="release"`` it changes only at a release (w = ñ), so only the
        releasing rows are looked at.

        Parameters
        ----------
        t : int
            Round, 1-based.
        arm : ndarray of int64, shape (n_rows,)
            The pulled arms.
        cell : ndarray of int64, shape (n_rows,)
            Their cells.
        pulls : ndarray of int64, shape (n_rows,)
            Pull counts before this round's pull.
        """
        noisy, released_n, N = self.noisy, self.released_n, self.N
        due = np.flatnonzero((pulls + 1) % self.f == 0)
        if self.current:
            old_rel, old_mean = released_n[cell], noisy[cell]
            old_w = np.where(old_rel > 0, pulls, 0)
        if due.size:
            c = cell[due]
            n = self.counts[c]
            if not self.current:
                old_w, old_mean = released_n[c], noisy[c]
            if self.mechanism is not None:
                values = self.mechanism.release(
                    due // self.M, due % self.M, arm[due], self.sums[c], n
                )
            else:
                values = self.sums[c] / n
            noisy[c] = values
            released_n[c] = n
        if self.current:
            new_rel, new_mean = (released_n[cell], noisy[cell]) if due.size else (old_rel, old_mean)
            new_w = np.where(new_rel > 0, pulls + 1, 0)
            delta_num = new_w * new_mean - old_w * old_mean
            delta_den = (new_w - old_w).astype(np.float64)
            changed = np.flatnonzero((delta_den != 0) | (delta_num != 0))
            if changed.size < N:
                c = cell[changed]
                delta_num, delta_den = delta_num[changed], delta_den[changed]
                send_arm = arm[changed]
            else:
                c, send_arm = cell, arm
        elif due.size:
            delta_num = n * values - old_w * old_mean
            delta_den = (n - old_w).astype(np.float64)
            keep = np.flatnonzero((delta_den != 0) | (delta_num != 0))
            changed, c = due[keep], c[keep]
            delta_num, delta_den = delta_num[keep], delta_den[keep]
            send_arm = arm[changed]
        else:
            changed = due
        if changed.size:
            self.line.send(t, changed, send_arm, delta_num, delta_den)
            if not self.raw_own:
                self.num[c] += delta_num
                self.den[c] += delta_den
                self.stale = c

    def record(self, t: int) -> None:
        """What every agent's message carries after round ``t`` (the transcript; row
        ``t - 1`` of the round-major buffers, arranged as ``content`` after the run).

        Parameters
        ----------
        t : int
            Round, 1-based.
        """
        released = self.released_n > 0
        np.copyto(self._by_round["mean"][t - 1], np.where(released, self.noisy, np.nan))
        self._by_round["count"][t - 1] = (
            np.where(released, self.counts, 0) if self.current else self.released_n
        )
