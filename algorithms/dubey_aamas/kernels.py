"""Arm-major kernels shared by the cooperative UCB family (Dubey & Pentland, AAMAS 2020).

The per-round state of :mod:`fedpriv.algorithms.dubey_aamas.baselines`, :mod:`fedpriv.algorithms.dubey_aamas.cooperative` and
:mod:`fedpriv.algorithms.dubey_aamas.byzantine` is held arm-major, cell ``c = k N + n`` with ``n = b M + v``
(trial ``b``, agent ``v``, ``N = n_trials × n_agents``), so that reductions over the
arms run over a leading axis that is contiguous per arm. Everything here reproduces the
row-major reference exactly (same values, same order of floating-point additions):

* :func:`argmax_ties_arm_major` is :func:`fedpriv.algorithms.dubey_aamas.baselines.argmax_random_ties` of
  ``index.T``;
* :class:`BufferedRewards` reads the counter-based reward table in batches of rounds
  (same entries as a per-round :func:`fedpriv.algorithms.dubey_aamas.baselines.read_rewards`);
* :class:`ArmMajorDelayLine` is :class:`fedpriv.algorithms.networks.flooding.DelayLine` for arm-major
  cells, delivering the same updates in the same order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from fedpriv.algorithms.environments.bernoulli import RewardTable
from fedpriv.algorithms.networks.flooding import FloodingSchedule

__all__ = ["ArmMajorDelayLine", "BufferedRewards", "argmax_ties_arm_major"]

_MAX_BUFFERED = 1 << 22  # ring entries of BufferedRewards (32 MiB of float64)


def argmax_ties_arm_major(
    index: np.ndarray, u: np.ndarray | Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Argmax over arms with uniform tie-breaking, arm-major.

    Same result as :func:`fedpriv.algorithms.dubey_aamas.baselines.argmax_random_ties` ``(index.T, u)`` for
    every input (NaN columns included), but the reductions run over the leading axis,
    which is contiguous per arm: about ten times faster for a few arms and thousands of
    agents. Columns with a tie (or no maximum) take the reference's cumulative-rank
    path on that subset only.

    Parameters
    ----------
    index : ndarray of float64, shape (n_arms, n)
        Index of every arm (rows) of every agent-trial (columns).
    u : ndarray of float64, shape (n,), or callable
        U(0, 1) tie-break draws, or ``u(columns) -> draws`` of the tied columns only
        (:class:`fedpriv.algorithms.dubey_aamas.uniforms.LazyUniforms`; called only
        when a column ties).

    Returns
    -------
    ndarray of int64, shape (n,)
        The ``r``-th maximal arm, ``r = min(⌊u × #ties⌋, #ties - 1)`` (0-based).
    """
    n_arms = index.shape[0]
    small = np.uint8 if n_arms < 255 else np.int64
    best = index == np.maximum.reduce(index, axis=0)
    flags = best.view(np.uint8)
    count = np.add.reduce(flags, axis=0, dtype=small)
    # first maximum: K - max_k (K - k) [best_k]
    weights = np.arange(n_arms, 0, -1, dtype=small)[:, None]
    arm = n_arms - np.maximum.reduce(flags * weights, axis=0).astype(np.int64)
    tied = np.flatnonzero(count != 1)
    if tied.size:
        c = count[tied].astype(np.int64)
        draws = u(tied) if callable(u) else u[tied]
        rank = np.minimum((draws * c).astype(np.int64), c - 1)
        arm[tied] = np.argmax(np.cumsum(best[:, tied], axis=0) > rank, axis=0)
    return arm


class BufferedRewards:
    """Rewards of the pulled cells, read from a :class:`RewardTable` in batches.

    Cells are arm-major (``c = k n_rows + n``, ``n = trial n_agents + agent``). Each
    cell keeps the rewards of its next pulls in a ring of ``window`` entries; every
    ``window`` calls of :meth:`read` (one per round), one ``table.rewards`` call tops
    every cell up to its next ``window`` pulls (or the horizon). An agent pulls one arm
    per round, so no cell can run out in between, and at most ``n_cells × window``
    entries are read but never used. The values are the table's entries at the same
    indices as a per-round :func:`fedpriv.algorithms.dubey_aamas.baselines.read_rewards`, hence identical; only
    what is read is validated, with the same error.

    Parameters
    ----------
    table : RewardTable
        The run's table (overrides and subclasses included: only ``table.rewards``
        is called).
    n_trials, n_agents, n_arms, horizon : int
        Shape of the run; pull indices stay below ``horizon``.
    window : int
        Rounds between reads of the table, a power of two (default 16); halved while
        the ring would exceed 2^22 entries (32 MiB).

    Raises
    ------
    ValueError
        From :meth:`read`, if a reward it returns lies outside [0, 1].
    """

    def __init__(
        self,
        table: RewardTable,
        n_trials: int,
        n_agents: int,
        n_arms: int,
        horizon: int,
        window: int = 16,
    ) -> None:
        if window < 1 or window & (window - 1):
            raise ValueError(f"`window` must be a power of two, got {window!r}.")
        while window > 1 and n_arms * n_trials * n_agents * window > _MAX_BUFFERED:
            window //= 2  # bounded memory; window 1 reads the pulled cells every round
        self.table = table
        self.n_agents = n_agents
        self.n_rows = n_trials * n_agents
        self.horizon = horizon
        self.window = window
        self.size = window  # a power of two
        self.buffer = np.zeros(n_arms * self.n_rows * self.size)
        self.end = np.zeros(n_arms * self.n_rows, dtype=np.int64)  # first pull not cached
        self.left = 0
        self.suspect = False
        cell = np.arange(self.end.size)
        row = cell % self.n_rows
        self.trial_of, self.agent_of = np.divmod(row, n_agents)
        self.arm_of = cell // self.n_rows

    def _refill(self, counts: np.ndarray) -> None:
        cells = np.flatnonzero((self.end - counts < self.window) & (self.end < self.horizon))
        if cells.size == 0:
            return
        first = self.end[cells]
        last = np.minimum(counts[cells] + self.size, self.horizon)
        need = last - first
        rep = np.repeat(cells, need)
        pull = np.arange(rep.size) + np.repeat(first - (np.cumsum(need) - need), need)
        values = np.asarray(
            self.table.rewards(self.trial_of[rep], self.agent_of[rep], self.arm_of[rep], pull)
        )
        if values.size and not (values.min() >= 0.0 and values.max() <= 1.0):
            self.suspect = True
        self.buffer[rep * self.size + (pull & (self.size - 1))] = values
        self.end[cells] = last

    def read(self, cells: np.ndarray, pulls: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Rewards of ``cells`` at pull indices ``pulls`` (call once per round).

        Parameters
        ----------
        cells, pulls : ndarray of int64, shape (n,)
            Pulled cells and their pull counts before this pull.
        counts : ndarray of int64, shape (n_arms × n_rows,)
            Pull counts of every cell before this round.

        Returns
        -------
        ndarray of float64, shape (n,)

        Raises
        ------
        ValueError
            If a reward lies outside [0, 1].
        """
        if self.left == 0:
            self._refill(counts)
            self.left = self.window
        self.left -= 1
        rewards = self.buffer[cells * self.size + (pulls & (self.size - 1))]
        if self.suspect and (rewards.min() < 0.0 or rewards.max() > 1.0 or np.isnan(rewards).any()):
            raise ValueError(
                "rewards must lie in [0, 1] (the sensitivity 1/n of a mean needs it); the "
                f"reward table returned values in [{rewards.min()!r}, {rewards.max()!r}]."
            )
        return rewards


class ArmMajorDelayLine:
    """:class:`fedpriv.algorithms.networks.flooding.DelayLine` for arm-major cells ``k N + b M + v``.

    Same deliveries in the same order (creation round ascending, i.e. lag descending;
    then senders ascending and receivers in the schedule's order), so the additions of
    each cell happen in the same sequence. A round where every sender changed is kept
    as its (arm, Δnum, Δden) rows and expanded at delivery with precomputed indices.
    Call :meth:`deliver` once every round, before that round's :meth:`send`.

    Parameters
    ----------
    schedule : FloodingSchedule
    n_trials, n_arms : int
        The cells are ``n_arms × n_trials × n_agents``; two additive fields per cell
        (weighted mean sum ``num`` and weight ``den``).
    """

    def __init__(self, schedule: FloodingSchedule, n_trials: int, n_arms: int) -> None:
        self.n_agents = m = schedule.n_agents
        self.n_rows = n = n_trials * m
        self.n_slots = slots = schedule.max_delay + 1
        self._sent: list = [None] * slots  # per t0 % slots: None, "full" or {lag: part}
        self._arm = np.zeros(slots * n, dtype=np.int64)
        self._num = np.zeros(slots * n)
        self._den = np.zeros(slots * n)
        self._by_lag = []
        rows = np.arange(n)
        for d in range(1, slots):
            mask = schedule.delays == d
            senders, receivers = schedule.senders[mask], schedule.receivers[mask]
            order = np.argsort(senders, kind="stable")
            targets = receivers[order]
            start = np.searchsorted(senders[order], np.arange(m + 1))
            rep, receiver_row = self._expand(rows, targets, start)
            if rep.size:
                self._by_lag.append((d, targets, start, rep, receiver_row))
        self._by_lag.reverse()  # lag descending = creation round ascending
        # all-full rounds: one gather per field, per phase t % slots
        self._full_index = (
            [
                np.concatenate([((p - d) % slots) * n + rep for d, _, _, rep, _ in self._by_lag])
                for p in range(slots)
            ]
            if self._by_lag
            else None
        )
        self._full_receiver = (
            np.concatenate([r for *_, r in self._by_lag]) if self._by_lag else None
        )

    def _expand(self, rows: np.ndarray, targets: np.ndarray, start: np.ndarray):
        sender = rows % self.n_agents
        first = start[sender]
        counts = start[sender + 1] - first
        total = int(counts.sum())
        rep = np.repeat(np.arange(rows.size), counts)
        position = np.arange(total) + np.repeat(first - (np.cumsum(counts) - counts), counts)
        return rep, rows[rep] - sender[rep] + targets[position]

    def send(
        self, t0: int, rows: np.ndarray, arm: np.ndarray, d_num: np.ndarray, d_den: np.ndarray
    ) -> None:
        """Schedule the content changes of senders ``rows`` (ascending ``b M + u``) at ``t0``.

        Parameters
        ----------
        t0 : int
            Creation round.
        rows : ndarray of int64, shape (n,)
            Sending rows ``b M + u``, ascending.
        arm : ndarray of int64, shape (n,)
            The arm whose content changed.
        d_num, d_den : ndarray of float64, shape (n,)
            Changes of the numerator and denominator of the receivers' group mean.
        """
        phase = t0 % self.n_slots
        if rows.size == self.n_rows:
            where = slice(phase * self.n_rows, (phase + 1) * self.n_rows)
            self._arm[where], self._num[where], self._den[where] = arm, d_num, d_den
            self._sent[phase] = "full"
            return
        parts = {}
        for d, targets, start, _, _ in self._by_lag:
            rep, receiver_row = self._expand(rows, targets, start)
            if rep.size:
                parts[d] = (arm[rep] * self.n_rows + receiver_row, d_num[rep], d_den[rep])
        self._sent[phase] = parts

    def deliver(self, t: int):
        """``(cells, d_num, d_den)`` due at round ``t``, or None; call once per round.

        Parameters
        ----------
        t : int
            Round, called in increasing order.

        Returns
        -------
        tuple of (ndarray, ndarray, ndarray) or None
            Receiver cells and the changes to add.
        """
        slots, n = self.n_slots, self.n_rows
        self._sent[t % slots] = None  # created at t - slots: delivered by now
        sent = [self._sent[(t - d) % slots] if t - d >= 1 else None for d, *_ in self._by_lag]
        if self._by_lag and all(kind == "full" for kind in sent):
            index = self._full_index[t % slots]
            arm = self._arm[index]
            arm *= n
            arm += self._full_receiver
            return arm, self._num[index], self._den[index]
        parts = []
        for (d, _, _, rep, receiver_row), kind in zip(self._by_lag, sent, strict=True):
            if kind == "full":
                index = ((t - d) % slots) * n + rep
                parts.append(
                    (self._arm[index] * n + receiver_row, self._num[index], self._den[index])
                )
            elif kind is not None and d in kind:
                parts.append(kind[d])
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return tuple(np.concatenate(fields) for fields in zip(*parts))
