"""The interval mechanism over a batch of agent-arm streams (Dubey & Pentland, AAMAS 2020).

Each (trial, agent, arm) stream releases its running mean at pull counts ``f, 2f, ...``
with fresh Laplace noise of scale ``b(n)`` (AAMAS 2020, §3.2, Alg. 1). Like
:class:`privacy.LaplaceTreeCounter`, :class:`IntervalMeanRelease` charges the whole
schedule when it opens (one :class:`privacy.IntervalRelease` per stream) and writes one
ledger row per draw; ``laplace_release`` takes one scale per call, and the decaying rule
has a different scale at every release count, so per-release calls would cost one
accountant call per distinct count per round.

Secure noise
------------
With ``secure=True`` release ``j`` (count ``n_j``, public) is on a grid of spacing
``g_j`` (a power of two: ``granularity`` if given, else
:func:`~fedpriv.privacy.mechanisms.secure_noise.default_granularity` of its sensitivity
``1/n_j``) with exact discrete Laplace noise (:mod:`fedpriv.privacy.mechanisms.secure_noise`).
The released mean is computed exactly on the grid from the stream's sum:
``u = round(S/g_j)`` (one reward in [0, 1] moves ``u`` by at most ``s_j = ⌈1/g_j⌉``
steps), then ``round(u/n_j) = ⌊(2u + n_j)/(2n_j)⌋`` in integers, which one reward
moves by at most ``d_j = ⌈s_j/n_j⌉`` steps. The noise scale is ``t_j = d_j b(n_j)
n_j`` steps (:func:`~fedpriv.privacy.mechanisms.secure_noise.grid_noise_scale`: the float
release's ε ``1/(n_j b(n_j))``, with noise wider by the rounding factor), and each
release point is charged ``events.DiscreteLaplace(t_j, d_j)`` to every stream when
the mechanism opens (one accountant call per release point), so every route of the
accountant is exact for what is released. Those ``J`` calls are not one
transaction, so a budgeted accountant is refused in secure mode.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy.accounting.events import DiscreteLaplace
from fedpriv.privacy.calibrations import interval_length
from fedpriv.privacy.checks import check_int_at_least
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.interval import make_interval_release
from fedpriv.privacy.mechanisms.secure_noise import (
    from_grid,
    grid_noise_scale,
    grid_sensitivity,
    round_to_grid,
    sample_discrete_laplace,
)
from fedpriv.privacy.mechanisms.secure_noise import release_grid as _grid

__all__ = ["IntervalMeanRelease", "every_stream"]


class IntervalMeanRelease:
    """The interval mechanism over a batch of agent-arm streams (Alg. 1, AAMAS 2020 §3.2).

    Mirrors :class:`privacy.LaplaceTreeCounter`: when it opens it charges the
    accountant one :class:`privacy.IntervalRelease` per (trial, agent, arm) stream,
    covering every release point ``f, 2f, ..., ⌊T/f⌋ f`` the stream can reach (scale
    ``b(n)``, sensitivity ``1/n`` of a mean of rewards in [0, 1]; the composition over
    ⌊T/f⌋ releases the paper names, §3.3). :meth:`release` then draws one fresh
    ``Lap(b(n))`` per release from the stream's (trial, agent) NOISE generator (unit
    Laplace draws pre-drawn in chunks after the charge, as the tree counter does) and
    logs one ledger row per draw (:meth:`flush`, grouped by ``n``).

    Parameters
    ----------
    stream_shape : (int, int, int)
        ``(n_trials, n_agents, n_arms)``.
    epsilon, horizon, theta, rule
        As :func:`fedpriv.privacy.mechanisms.interval.make_interval_release`.
    accountant : Accountant
        With disjoint levels ``trial, agent, arm``.
    rngs : object ndarray of Generator, shape (n_trials, n_agents)
    secure : bool, default False
        Exact discrete noise on a grid (module docstring).
    granularity : float, optional
        Grid spacing (a power of two) when ``secure``.

    Raises
    ------
    ValueError
        If ``granularity`` is not a power of two or is given without ``secure``, or
        ``secure`` with an accountant that has a budget.
    CapacityExceededError
        If a release is asked at a count that is not a release point within ``horizon``.
    """

    def __init__(
        self,
        stream_shape: tuple[int, int, int],
        *,
        epsilon: float,
        horizon: int,
        theta: float | None,
        rule: str,
        accountant: Accountant,
        rngs: np.ndarray,
        chunk: int = 64,
        secure: bool = False,
        granularity: float | None = None,
    ) -> None:
        self.f = interval_length(epsilon)
        self.horizon = check_int_at_least("horizon", horizon, 1)
        n_trials, n_agents, n_arms = stream_shape
        self.event = None
        self.scales = np.zeros(0)
        self.secure = _grid(secure, granularity, 1.0) is not None  # validates granularity
        self.granularity = granularity
        self.grids = ()
        if self.secure and accountant.odometer.budget is not None:
            raise ValueError(
                "`secure=True` charges one DiscreteLaplace per release point, which is not "
                "atomic under a budget; use an accountant without `budget`."
            )
        if self.horizon >= self.f:
            self.event = make_interval_release(epsilon, self.horizon, theta=theta, rule=rule)
            self.scales = np.asarray(self.event.scales)
            self._row_scales = self.scales
            self._row_sensitivities = 1.0 / (np.arange(1, self.scales.size + 1) * self.f)
            streams = every_stream(n_trials, n_agents, n_arms)
            if not self.secure:
                accountant.spend(self.event, key=streams)
            else:
                self._open_secure(accountant, streams)
        self.accountant = accountant
        self.rngs = rngs
        self.chunk = int(chunk)
        self._buffer = np.zeros((n_trials, n_agents, self.chunk))
        self._used = np.full((n_trials, n_agents), self.chunk, dtype=np.int64)
        self._log: list[tuple[np.ndarray, ...]] = []
        self.n_draws = 0

    def _open_secure(self, accountant: Accountant, streams: dict[str, np.ndarray]) -> None:
        """Charge ``DiscreteLaplace(t_j, d_j)`` per release point ``n_j``."""
        counts = np.asarray(self.event.counts, dtype=np.int64)
        self.grids = tuple(_grid(True, self.granularity, 1.0 / int(n)) for n in counts)
        step = np.array([grid_sensitivity(1.0, g) for g in self.grids])  # s_j
        self._row_sensitivities = (-(-step // counts)).astype(np.float64)  # ⌈s_j/n_j⌉
        self._row_scales = np.array(
            [
                grid_noise_scale(float(b), 1.0 / int(n), int(d))
                for b, n, d in zip(self.scales, counts, self._row_sensitivities, strict=True)
            ]
        )
        self.secure_events = tuple(
            DiscreteLaplace(scale=float(b), l1_sensitivity=float(d))
            for b, d in zip(self._row_scales, self._row_sensitivities, strict=True)
        )
        for event in self.secure_events:
            accountant.spend(event, key=streams)

    def _secure_release(
        self, row: np.ndarray, j: np.ndarray, sums: np.ndarray, n: np.ndarray
    ) -> np.ndarray:
        """Grid mean ``round(round(S/g_j)/n)`` plus exact discrete Laplace steps."""
        out = np.empty(row.size)
        n_agents = self._used.shape[1]
        for jj in np.unique(j).tolist():
            sel = np.flatnonzero(j == jj)
            grid = self.grids[jj - 1]
            u = round_to_grid(sums[sel], grid)
            steps = (2 * u + n[sel]) // (2 * n[sel])  # ⌊u/n + 1/2⌋ exactly
            noise = np.array(
                [
                    sample_discrete_laplace(
                        self._row_scales[jj - 1], size=1, rng=self.rngs[r // n_agents, r % n_agents]
                    )[0]
                    for r in row[sel].tolist()
                ],
                dtype=np.int64,
            )
            out[sel] = from_grid(steps + noise, grid)
        return out

    def release(
        self,
        trial: np.ndarray,
        agent: np.ndarray,
        arm: np.ndarray,
        sums: np.ndarray,
        counts: np.ndarray,
    ) -> np.ndarray:
        """Noisy means ``S/n + Lap(b(n))`` of the given cells (at most one per agent).

        Parameters
        ----------
        trial, agent, arm : ndarray of int64, shape (n,)
            The releasing streams; each ``(trial, agent)`` at most once.
        sums : ndarray of float64, shape (n,)
            Raw reward sums ``S`` of the streams.
        counts : ndarray of int64, shape (n,)
            Their pull counts ``n`` (release points ``j f``).

        Returns
        -------
        ndarray of float64, shape (n,)

        Raises
        ------
        CapacityExceededError
            If a count is not a release point ``j f`` of the schedule, ``1 <= j <=``
            the number of releases up to ``horizon``.
        """
        n = counts
        j = n // self.f
        if np.any(n % self.f != 0) or np.any(j < 1) or np.any(j > self.scales.size):
            raise CapacityExceededError(
                f"release asked at counts outside the schedule f={self.f}, ..., "
                f"{self.scales.size * self.f} (horizon {self.horizon})."
            )
        b, v = trial, agent
        row = b * self._used.shape[1] + v  # each (trial, agent) at most once
        if self.secure:
            self._log.append((b, v, arm, j))
            self.n_draws += b.size
            return self._secure_release(row, j, sums, np.asarray(n, dtype=np.int64))
        used = self._used.reshape(-1)
        position = used[row]
        empty = np.flatnonzero(position >= self.chunk)
        if empty.size:
            chunk = self.chunk
            buffer = self._buffer.reshape(-1, chunk)
            rows = row[empty]
            for r, generator in zip(rows.tolist(), self.rngs.reshape(-1)[rows].tolist()):
                buffer[r] = generator.laplace(0.0, 1.0, size=chunk)
            position[empty] = 0
        unit = self._buffer.reshape(-1)[row * self.chunk + position]
        used[row] = position + 1
        self._log.append((b, v, arm, j))
        self.n_draws += b.size
        return sums / n + self.scales[j - 1] * unit

    def flush(self) -> None:
        """Append the logged draws to the accountant's ledger (one row per draw)."""
        if not self._log:
            return
        b, v, k, j = (np.concatenate(parts) for parts in zip(*self._log))
        self._log.clear()
        if j.size == 0:
            return
        order = np.argsort(j, kind="stable")  # by release index, draw order within
        bounds = np.flatnonzero(np.diff(j[order])) + 1
        for sel in np.split(order, bounds):
            value = int(j[sel[0]])
            self.accountant.ledger.record_draws(
                keys={"trial": b[sel], "agent": v[sel], "arm": k[sel]},
                node=value,
                level=-1,
                scale=float(self._row_scales[value - 1]),
                l1_sensitivity=float(self._row_sensitivities[value - 1]),
            )


def every_stream(n_trials: int, n_agents: int, n_arms: int) -> dict[str, np.ndarray]:
    """Keys ``trial, agent, arm`` of every stream, flattened in C order.

    Parameters
    ----------
    n_trials, n_agents, n_arms : int
        The stream grid's shape, each >= 0.

    Returns
    -------
    dict of str to ndarray of int64
        ``{"trial", "agent", "arm"}``, each of shape ``(n_trials * n_agents *
        n_arms,)``.
    """
    b, v, k = np.meshgrid(
        np.arange(n_trials), np.arange(n_agents), np.arange(n_arms), indexing="ij"
    )
    return {"trial": b.ravel(), "agent": v.ravel(), "arm": k.ravel()}
