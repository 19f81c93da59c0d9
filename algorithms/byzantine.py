"""Byzantine-Proof Multi-Agent UCB (Dubey & Pentland, AAMAS 2020, Alg. 3), batched.

Reconstruction of byzantine.md §2.6 [R-m]. Every agent keeps, per arm, the multiset
``S_k^v`` of its own rewards and of every reward received in messages
``⟨u, t, A_t^u, X̃_t^u⟩`` (eq. 7, R-h), flooded ``γ`` hops and delivered after
``d(u, v)`` rounds (:mod:`algorithms.flooding`). Byzantine senders replace their
reward by a draw of Q with probability ``contamination.rate`` (Huber, corruption at
the source; :class:`algorithms.robust.Contamination`). Each round, for each arm::

    n_k = ⌊|S_k|/2⌋, δ_t = t^-a (a = confidence_exponent, R-l; t >= 2)
    undefined_k : τ(n_k, ε_c, δ_t) >= 1/2        (too few samples, §2.5 [D])
    if some arm is undefined: pull the undefined arm with the fewest samples
                               (forced exploration; the paper is silent, E19 [D])
    else: pull argmax_k TrimmedMean(S_k) + σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ_t)/n_k))

``ε_c`` here is the *assumed* contamination (``assumed_contamination``, in [0, 1/4);
default the true rate) and applies to all samples, the agent's own included (the
paper's conservative assumption, §1.5). Samples are split into halves in arrival order
("alternate", :mod:`algorithms.robust`); within a round the agent's own sample of the
previous round comes first, then received samples by (creation round, sender).

Every Q has finite support, so each (trial, agent, arm, half) multiset is a count
vector over a sorted alphabet ({0, 1}, the table's override values and Q's support)
and :func:`algorithms.robust.histogram_trimmed_mean` evaluates the exact estimator
for every cell each round (no re-sorting; byzantine.md §2.6 cost note).

No privacy is claimed: raw rewards are broadcast, so the accountant holds one
``NonPrivate`` per stream (ε = ∞).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from algorithms.coop_ucb import CoopRun, Transcript, check_setup, communication_cost
from algorithms.mab import BernoulliMAB, RewardTable
from algorithms.robust import (
    NORMALIZATIONS,
    Contamination,
    check_contamination,
    histogram_trimmed_mean,
    trimmed_mean_width,
)
from algorithms.seeding import Stream, as_seed_sequence, stream_rngs
from algorithms.ucb import (
    PolicyUniforms,
    argmax_random_ties,
    read_rewards,
    reward_table_for,
)
from privacy import Accountant, events
from privacy._checks import check_positive
from privacy.interval_mechanism import every_stream

__all__ = ["run_byzantine_coop_ucb"]


def _contamination_rngs(root: np.random.SeedSequence, n_trials: int, n_agents: int, extra: int) -> np.ndarray:
    """(n_trials, n_agents) generators at ENVIRONMENT addresses + ``extra`` (shared by D, D')."""
    out = np.empty((n_trials, n_agents), dtype=object)
    for j in range(n_trials):
        for i in range(n_agents):
            key = (*root.spawn_key, j, 0, i, int(Stream.ENVIRONMENT), extra)
            out[j, i] = np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=key))
    return out


class _SampleSets:
    """Per (trial, agent, arm) sample multisets as alternate-split count vectors."""

    def __init__(self, shape: tuple[int, int, int], n_values: int) -> None:
        self.shape = shape
        self.n_cells = int(np.prod(shape))
        self.n_values = n_values
        self.counts = np.zeros((self.n_cells, 2, n_values), dtype=np.int64)
        self.totals = np.zeros(self.n_cells, dtype=np.int64)
        self.last = np.zeros(self.n_cells, dtype=np.int64)

    def add(self, cells: np.ndarray, values: np.ndarray) -> None:
        """Append samples (already in arrival order) to their cells."""
        if cells.size == 0:
            return
        order = np.argsort(cells, kind="stable")
        cells, values = cells[order], values[order]
        first = np.r_[0, np.flatnonzero(np.diff(cells)) + 1]
        sizes = np.diff(np.r_[first, cells.size])
        rank = np.arange(cells.size) - np.repeat(first, sizes)
        position = self.totals[cells] + rank
        np.add.at(self.counts, (cells, position % 2, values), 1)
        self.totals += np.bincount(cells, minlength=self.n_cells)
        is_last = position == self.totals[cells] - 1
        self.last[cells[is_last]] = values[is_last]

    def halves(self) -> tuple[np.ndarray, np.ndarray]:
        """Count vectors of Z1 and Z2 with the odd last sample left out of Z1."""
        z1 = self.counts[:, 0, :].copy()
        odd = np.flatnonzero(self.totals % 2 == 1)
        z1[odd, self.last[odd]] -= 1
        shape = (*self.shape, self.n_values)
        return z1.reshape(shape), self.counts[:, 1, :].reshape(shape)


def _value_index(alphabet: np.ndarray, values: np.ndarray) -> np.ndarray:
    index = np.minimum(np.searchsorted(alphabet, values), alphabet.size - 1)
    if not np.array_equal(alphabet[index], values):
        raise ValueError("a sample value is outside the estimator's alphabet (internal error).")
    return index


def run_byzantine_coop_ucb(
    env: BernoulliMAB,
    graph: nx.Graph,
    *,
    horizon: int,
    gamma: int,
    contamination: Contamination,
    assumed_contamination: float | None = None,
    confidence_exponent: float = 4.0,
    sigma: float = 0.5,
    c1: float = 4.0,
    c2: float = 2.0,
    normalization: str = "n",
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    table: RewardTable | None = None,
    record: bool = False,
) -> CoopRun:
    """Byzantine-Proof Multi-Agent UCB (Alg. 3, reconstructed), ``n_trials`` at once.

    Parameters
    ----------
    env : BernoulliMAB
        ``n_agents`` agents, ``n_arms`` arms.
    graph : networkx.Graph
        Connected, nodes ``0..n_agents-1``.
    horizon : int
        Rounds T >= 1.
    gamma : int
        Message life γ >= 1.
    contamination : Contamination
        The true corruption of byzantine senders (rate, Q, byzantine set).
    assumed_contamination : float, optional
        ε_c used by the estimator and the width, in [0, 1/4); default
        ``contamination.rate``.
    confidence_exponent : float
        ``a`` in ``δ_t = t^-a``, > 0 (default 4, R-l).
    sigma, c1, c2 : float
        Width constants (:func:`algorithms.robust.trimmed_mean_width`), > 0.
    normalization : {"n", "inside"}
        Trimmed-mean normalization.
    n_trials, seed, table, record
        As :func:`algorithms.coop_ucb.run_private_coop_ucb`; contamination draws use
        their own ENVIRONMENT-level addresses (shared by neighboring runs).

    Returns
    -------
    CoopRun
        ``algorithm="byzantine-coop-ucb"``; the transcript content is ``arm`` and
        ``value`` (what was sent) and ``corrupted``.

    Raises
    ------
    ValueError
        If the assumed contamination is outside [0, 1/4), ``gamma < 1``, the graph is
        disconnected or does not match, a byzantine agent is out of range, an unknown
        normalization, a non-positive constant, or a reward outside [0, 1].
    """
    if not isinstance(contamination, Contamination):
        raise TypeError(f"`contamination` must be a Contamination, got {type(contamination).__name__}.")
    assumed = contamination.rate if assumed_contamination is None else assumed_contamination
    assumed = check_contamination(assumed, "assumed_contamination")
    exponent = check_positive("confidence_exponent", confidence_exponent)
    for name, value in (("sigma", sigma), ("c1", c1), ("c2", c2)):
        check_positive(name, value)
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"`normalization` must be one of {NORMALIZATIONS}, got {normalization!r}.")
    horizon, n_trials, schedule = check_setup(env, graph, horizon, n_trials, gamma)
    root = as_seed_sequence(seed)
    table = reward_table_for(env, root) if table is None else table
    if not isinstance(table, RewardTable):
        raise TypeError(f"`table` must be a RewardTable, got {type(table).__name__}.")
    B, M, K, T = n_trials, env.n_agents, env.n_arms, horizon
    byzantine = contamination.byzantine_mask(M)
    alphabet = np.unique(np.concatenate([
        [0.0, 1.0], contamination.support(), [o.value for o in table.overrides],
    ]))
    policy = PolicyUniforms(stream_rngs(root, n_trials=B, n_agents=M, stream=Stream.POLICY), T)
    flips = PolicyUniforms(_contamination_rngs(root, B, M, 1), T)
    draws = PolicyUniforms(_contamination_rngs(root, B, M, 2), T)
    accountant = Accountant(disjoint=("trial", "agent", "arm"))
    accountant.spend_many(
        events.NonPrivate(reason="raw (possibly contaminated) rewards broadcast (Alg. 3, eq. 7)"),
        keys=every_stream(B, M, K),
    )
    sets = _SampleSets((B, M, K), alphabet.size)
    pending: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(schedule.max_delay + 1)]
    order = np.argsort(schedule.senders, kind="stable")
    targets, lags = schedule.receivers[order], schedule.delays[order]
    start = np.searchsorted(schedule.senders[order], np.arange(M + 1))
    per_sender = np.diff(start)
    trial_of = np.repeat(np.arange(B), M)
    sender_of = np.tile(np.arange(M), B)
    means = np.asarray(env.arm_means)
    actions = np.empty((B, M, T), dtype=np.int64)
    rewards = np.empty((B, M, T))
    content = None
    if record:
        content = {"arm": np.empty((B, M, T), dtype=np.int64), "value": np.empty((B, M, T)),
                   "corrupted": np.zeros((B, M, T), dtype=bool)}
    counts = np.zeros((B, M, K), dtype=np.int64)
    cell_base = (np.arange(B)[:, None] * M + np.arange(M)[None, :]) * K
    for t in range(1, T + 1):
        slot = pending[t % len(pending)]
        if slot:
            parts = [np.concatenate(p) for p in zip(*slot)]
            slot.clear()
            created, sender, cells, values = parts
            arrival = np.lexsort((sender, created))
            sets.add(cells[arrival], values[arrival])
        delta_t = float(max(t, 2)) ** -exponent
        z1, z2 = sets.halves()
        estimate, n = histogram_trimmed_mean(z1, z2, alphabet, assumed, delta_t, normalization=normalization)
        undefined = np.isnan(estimate)
        width = trimmed_mean_width(n, assumed, delta_t, sigma=sigma, c1=c1, c2=c2)
        u = policy.at(t)
        ucb = argmax_random_ties(np.where(undefined, -np.inf, estimate + width), u)
        total = sets.totals.reshape(B, M, K)
        forced = argmax_random_ties(np.where(undefined, -total, -np.inf), u)
        arm = np.where(undefined.any(axis=-1), forced, ucb)
        pulls = np.take_along_axis(counts, arm[..., None], axis=-1)[..., 0]
        reward = read_rewards(table, arm, pulls)
        counts += arm[..., None] == np.arange(K)
        corrupted = byzantine[None, :] & (flips.at(t) < contamination.rate)
        sent = contamination.corrupt(reward, arm, corrupted, draws.at(t), means[None, :, :])
        own_cells = (cell_base + arm).ravel()
        sets.add(own_cells, _value_index(alphabet, reward.ravel()))
        value_idx = _value_index(alphabet, sent.ravel())
        reps = per_sender[sender_of]
        src = np.repeat(np.arange(B * M), reps)
        offsets = np.arange(src.size) - np.repeat(np.cumsum(reps) - reps, reps)
        position = start[sender_of][src] + offsets
        receiver = targets[position]
        due = (t + lags[position]) % len(pending)
        recv_cells = (trial_of[src] * M + receiver) * K + arm.ravel()[src]
        for d in np.unique(due).tolist():
            sel = due == d
            pending[d].append((np.full(int(sel.sum()), t), sender_of[src][sel],
                               recv_cells[sel], value_idx[src][sel]))
        actions[..., t - 1], rewards[..., t - 1] = arm, reward
        if content is not None:
            content["arm"][..., t - 1] = arm
            content["value"][..., t - 1] = sent
            content["corrupted"][..., t - 1] = corrupted
    transmissions, deliveries = communication_cost(schedule, T)
    transcript = None
    if record:
        transcript = Transcript(schedule=schedule, content=content, actions=actions, rewards=rewards)
    return CoopRun(
        algorithm="byzantine-coop-ucb", actions=actions, rewards=rewards, gaps=env.gaps,
        accountant=accountant, release_counts=np.zeros((B, M, K), dtype=np.int64),
        schedule=schedule, transmissions=transmissions, deliveries=deliveries,
        settings={"gamma": schedule.gamma, "contamination": contamination.rate,
                  "assumed_contamination": assumed, "kind": contamination.kind,
                  "n_byzantine": int(byzantine.sum()), "confidence_exponent": exponent,
                  "sigma": sigma, "c1": c1, "c2": c2, "normalization": normalization,
                  "alphabet_size": int(alphabet.size)},
        transcript=transcript, seed_entropy=int(root.entropy),
    )

