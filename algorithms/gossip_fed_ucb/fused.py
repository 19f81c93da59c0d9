"""The rounds of a batch of Gossip_UCB / Fed_UCB runs (Zhu et al. 2021, Alg. 1 lines 5–22,
Alg. 4 lines 5–22), in few array passes per round.

A round reads and writes each (trial, agent) only at its pulled arm, so the pull, the
release and the new mean are computed on those ``B·N`` cells through flat indices, and
everything that does not depend on the round is computed once:

* the confidence radius (eq. 11, 12) reads per-count tables of its count-only factors
  (``2N/n``; ``log n``, ``n²ε²``, ``1/n``), each made by the very expression
  :func:`~fedpriv.algorithms.gossip_fed_ucb.rounds.confidence_radius` applies to the
  counts (NumPy's elementwise loop on contiguous float64, as there), then applies the
  round's factors in that function's order: the same float operations on the same
  operands, so the same radii bit for bit;
* the consistency rule (Alg. 1 lines 5–6) is one comparison giving the lagging cells; a
  forced pick from 𝒜_i (line 11; most rounds of ``verify``'s runs, a few rows each) is
  :func:`~fedpriv.algorithms.gossip_fed_ucb.rounds.pick_uniform`'s float product and truncation
  on those rows only (:func:`_forced_arms`); a tie in the UCB index (rare with continuous
  rewards) takes ``pick_uniform`` on every row, as written;
* Fed_UCB's release goes through
  :meth:`~fedpriv.privacy.mechanisms.LaplaceTreeCounter.step_release_rows`, the counter's
  step and release restricted to the pulled arms (same noises, ledger rows and sums);
* the gossip average over the active edge reads each trial's two rows through flat row
  indices of the whole run, made once.

Every value is computed by the operations of the step-by-step loop kept in the tests as
the oracle (``tests/algorithms/_gossip_reference.py``), so runs are equal bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.algorithms.gossip_fed_ucb.rounds import OpenedBatch, pick_uniform

__all__ = ["play_rounds"]


def _radius_table(rounds: int, *, n_agents: int, epsilon: float) -> np.ndarray:
    """Per-count factors of the radius for counts ``0..rounds + 1`` (row 0 is never read):
    ``2N/n`` (ε = ∞), else the columns ``log n``, ``n²ε²``, ``1/n``."""
    n = np.arange(rounds + 2, dtype=np.float64)
    n[0] = 1.0
    if math.isinf(epsilon):
        return 2.0 * n_agents / n
    return np.stack([np.log(n), n**2 * epsilon**2, 1.0 / n], axis=-1)


def _radius(table: np.ndarray, counts: np.ndarray, t: int, *, n_agents: int, horizon: int):
    """:func:`~fedpriv.algorithms.gossip_fed_ucb.rounds.confidence_radius` of ``counts`` at
    round ``t`` from :func:`_radius_table`: its float operations in its order, bit for bit."""
    log_t = math.log(t)
    if table.ndim == 1:  # eq. 11: sqrt(2N / n * log t) + α1
        radius = table.take(counts)
        radius *= log_t
    else:  # eq. 12: α1 + sqrt(2N (c log n / (n² ε²) + 1/n) log t), c = 128 N log²T log t
        factors = table.take(counts, axis=0)
        radius = factors[..., 0] * (128.0 * n_agents * math.log(horizon) ** 2 * log_t)
        radius /= factors[..., 1]
        radius += factors[..., 2]
        radius *= 2.0 * n_agents
        radius *= log_t
    np.sqrt(radius, out=radius)
    radius += 64.0 / float(n_agents) ** 17  # α1
    return radius


def _forced_arms(cells: np.ndarray, n_arms: int, uniforms: np.ndarray, t: int) -> tuple:
    """Rows and arms of Alg. 1 line 11's uniform pick from 𝒜_i, :func:`pick_uniform` on the rows
    with a lagging arm: ``cells`` are the flat (row, arm) indices of the lagging arms,
    increasing; a row with ``c`` of them takes its ``min(floor(u c), c - 1)``-th, ``u``
    its uniform of round ``t`` (the same float product and truncation as ``pick_uniform``)."""
    rows, arms = [], []
    cells = cells.tolist()
    n_rounds = uniforms.shape[-1]
    start = 0
    while start < len(cells):
        row = cells[start] // n_arms
        stop = start + 1
        while stop < len(cells) and cells[stop] // n_arms == row:
            stop += 1
        count = stop - start
        rank = min(int(uniforms.item(row * n_rounds + t - 1) * count), count - 1)
        rows.append(row)
        arms.append(cells[start + rank] - row * n_arms)
        start = stop
    return rows, arms


def _neighbor_columns(adjacency: np.ndarray) -> list[np.ndarray]:
    """Columns ``c`` with ``adjacency[i, c[d][i]]`` for every neighbour slot ``d`` of ``i``
    (short rows repeat a neighbour, which leaves a maximum unchanged)."""
    lists = [np.flatnonzero(row) for row in adjacency]
    width = max(len(row) for row in lists)
    return [np.array([row[min(d, len(row) - 1)] for row in lists]) for d in range(width)]


def play_rounds(
    opened: OpenedBatch,
    adjacency: np.ndarray,
    *,
    rounds: int,
    horizon: int,
    radius_epsilon: float,
    record: bool,
) -> tuple[np.ndarray, np.ndarray, dict | None]:
    """Rounds ``1..rounds`` of Alg. 1 (Gossip_UCB) or Alg. 4 (Fed_UCB) on an opened batch.

    Parameters
    ----------
    opened : OpenedBatch
        The batch's draws and releases (:func:`~fedpriv.algorithms.gossip_fed_ucb.rounds.
        open_batch`); its counter or running sums advance.
    adjacency : ndarray of bool, shape (N, N)
        The graph's neighbours, false diagonal; every agent has one.
    rounds : int
        Rounds to play, in ``[0, horizon]``.
    horizon : int
        T (the radius reads ``log T``).
    radius_epsilon : float
        ε of the radius (``inf`` for Gossip_UCB, eq. 11).
    record : bool
        Whether to keep ϑ and the means of every round.

    Returns
    -------
    actions : ndarray of int16, shape (B, N, rounds)
        ``a_i(t)``.
    counts : ndarray of int64, shape (B, N, M)
        Pull counts after round ``rounds``.
    trace : dict of ndarray or None
        With ``record``: ``theta`` and ``means``, shape (rounds + 1, B, N, M).
    """
    init = opened.init
    B, N, M = init.shape
    P = B * N
    counts = np.ones(init.shape, dtype=np.int64)
    n_tilde = np.ones(init.shape, dtype=np.int64)
    means = init / counts
    theta = means.copy()
    trace = None
    if record:
        trace = {name: np.empty((rounds + 1,) + init.shape) for name in ("theta", "means")}
        trace["theta"][0], trace["means"][0] = theta, means
    actions = np.empty((rounds, B, N), dtype=np.int16)
    columns = _neighbor_columns(adjacency)
    table = _radius_table(rounds, n_agents=N, epsilon=radius_epsilon)
    row_start = np.arange(0, P * M, M).reshape(B, N)  # flat index of (b, i, arm 0)
    reward_start = np.arange(0, P * (opened.rewards.shape[2] * M), opened.rewards.shape[2] * M)
    reward_start = reward_start.reshape(B, N)  # flat index of rewards[b, i, 0, 0]
    rewards = opened.rewards.reshape(-1)
    initial = init.reshape(-1)
    edge_rows = np.arange(B)[:, None, None] * N + opened.edges[:, :rounds]  # (B, rounds, 2)
    edge_ends = np.ascontiguousarray(edge_rows.transpose(1, 0, 2))  # (rounds, B, 2)
    counts_flat = counts.reshape(-1)  # a view: counts is updated in place
    counter = opened.counter
    running = None if opened.running is None else opened.running.reshape(-1)
    for t in range(1, rounds + 1):
        # Alg. 1 lines 5-6: the consistency set with ñ(t), then ñ(t+1) (max-consensus).
        lagging = np.flatnonzero(n_tilde - counts > N)  # counts < ñ - N, flat cells
        neighbors_max = n_tilde.take(columns[0], axis=1)
        for column in columns[1:]:
            np.maximum(neighbors_max, n_tilde.take(column, axis=1), out=neighbors_max)
        new_tilde = np.maximum(counts, neighbors_max, out=neighbors_max)
        # Lines 7-13: Q = ϑ + C, the UCB argmax; ties and forced pulls pick uniformly.
        q = theta + _radius(table, counts, t, n_agents=N, horizon=horizon)
        arm = q.argmax(axis=-1)
        flat = row_start + arm
        best = q == q.reshape(-1).take(flat)[..., None]
        if np.count_nonzero(best) > P:  # a tie somewhere: break it uniformly
            arm = pick_uniform(best, opened.uniforms[:, :, t - 1])
            flat = row_start + arm
        if lagging.size:  # a forced pick from 𝒜_i where an arm lags
            rows, forced = _forced_arms(lagging, M, opened.uniforms, t)
            arm.reshape(-1)[rows] = forced
            flat = row_start + arm
        n_tilde = new_tilde
        actions[t - 1] = arm
        # Lines 14/16: pull, count, release the pulled arm's (noisy) sum and mean.
        reward = rewards.take(reward_start + (t * M) + arm)
        pulled_counts = counts_flat.take(flat) + 1
        counts_flat[flat] = pulled_counts
        if counter is not None:
            total = counter.step_release_rows(arm, reward)
        else:
            total = running.take(flat) + reward
            running[flat] = total
        new_means = means.copy()
        new_means.reshape(-1)[flat] = (initial.take(flat) + total) / pulled_counts
        # Lines 17-22: gossip ϑ over the active edge (rows u, v of each trial), track the means.
        step = new_means - means
        new_theta = theta + step
        ends = edge_ends[t - 1]  # (B, 2): rows b*N + u, b*N + v
        pair = theta.reshape(P, M).take(ends, axis=0)  # (B, 2, M)
        average = pair[:, 0] + pair[:, 1]
        average *= 0.5
        new_theta.reshape(P, M)[ends] = average[:, None] + step.reshape(P, M).take(ends, axis=0)
        theta, means = new_theta, new_means
        if trace is not None:
            trace["theta"][t], trace["means"][t] = theta, means
    return np.ascontiguousarray(actions.transpose(1, 2, 0)), counts, trace
