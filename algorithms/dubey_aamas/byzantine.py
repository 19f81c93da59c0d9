"""Byzantine-Proof Multi-Agent UCB (Dubey & Pentland, AAMAS 2020, Alg. 3), batched.

fedpriv's reconstruction of §4.2's "Algorithm Description" [reconstructed with medium confidence]. Every agent keeps, per arm, the multiset
``S_k^v`` of its own rewards and of every reward received in messages
``⟨u, t, A_t^u, X̃_t^u⟩`` (eq. 7, reconstructed with high confidence), flooded ``γ`` hops and delivered after
``d(u, v)`` rounds (:mod:`fedpriv.algorithms.networks.flooding`). Byzantine senders replace their
reward by a draw of Q with probability ``contamination.rate`` (Huber, corruption at
the source; :class:`fedpriv.algorithms.dubey_aamas.robust.Contamination`). Each round, for each arm::

    n_k = ⌊|S_k|/2⌋, δ_t = t^-a (a = confidence_exponent, reconstructed with low confidence; t >= 2)
    undefined_k : τ(n_k, ε_c, δ_t) >= 1/2        (too few samples; fedpriv's derivation)
    if some arm is undefined: pull the undefined arm with the fewest samples
                               (forced exploration; the paper is silent)
    else: pull argmax_k TrimmedMean(S_k) + σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ_t)/n_k))

``ε_c`` here is the *assumed* contamination (``assumed_contamination``, in [0, 1/4);
default the true rate) and applies to all samples, the agent's own included (the
paper's conservative assumption, §4). Samples are split into halves in arrival order
("alternate", :mod:`fedpriv.algorithms.dubey_aamas.robust`); within a round the agent's own sample of the
previous round comes first, then received samples by (creation round, sender).

Every Q has finite support, so each (trial, agent, arm, half) multiset is a count
vector over a sorted alphabet ({0, 1}, the table's override values and Q's support)
and :func:`fedpriv.algorithms.dubey_aamas.robust.histogram_trimmed_mean` evaluates the exact estimator
for every cell each round (no re-sorting; fedpriv's implementation choice).

No privacy is claimed: raw rewards are broadcast, so the accountant holds one
``NonPrivate`` per stream (ε = ∞).
"""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np
from fedpriv.algorithms.dubey_aamas.baselines import (
    PolicyUniforms,
    argmax_random_ties,
    reward_table_for,
)
from fedpriv.algorithms.dubey_aamas.cooperative import check_setup, communication_cost
from fedpriv.algorithms.dubey_aamas.kernels import BufferedRewards
from fedpriv.algorithms.dubey_aamas.robust import (
    NORMALIZATIONS,
    Contamination,
    check_contamination,
    cumsum_last,
    histogram_trimmed_mean_unchecked,
    trimmed_mean_width_unchecked,
)
from fedpriv.algorithms.dubey_aamas.runs import CoopRun, Transcript
from fedpriv.algorithms.dubey_aamas.uniforms import LazyUniforms
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, RewardTable
from fedpriv.algorithms.seeding import (
    Stream,
    as_seed_sequence,
    spawn_stream_rngs,
    stream_rng,
    stream_rngs,
)
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.checks import check_positive
from fedpriv.privacy.mechanisms.interval_mechanism import every_stream

__all__ = ["run_byzantine_coop_ucb"]


def _contamination_streams(
    root: np.random.SeedSequence, n_trials: int, n_agents: int, horizon: int
) -> tuple[PolicyUniforms, LazyUniforms]:
    """The flips' and the draws' uniforms: children 1 and 2 of every (trial, agent)
    ENVIRONMENT address (shared by D, D'; child 0 is unused).

    The flips are read every round by every row, so their generators are built in one
    batch (:func:`~fedpriv.algorithms.seeding.spawn_stream_rngs` with two children: the
    batch builder has no way to skip child 0). The draws are read only where a message
    is corrupted and ``Q`` is random (:attr:`Contamination.uses_uniforms`), so they are
    built lazily, at the same addresses (:class:`LazyUniforms`).
    """
    flip_rngs = spawn_stream_rngs(
        root, n_trials=n_trials, n_agents=n_agents, n_children=2, stream=Stream.ENVIRONMENT
    )[:, :, 1]
    draws = LazyUniforms(
        n_trials * n_agents,
        horizon,
        build_one=lambda row: stream_rng(
            root, trial=row // n_agents, agent=row % n_agents, stream=Stream.ENVIRONMENT
        ).spawn(3)[2],
        build_all=lambda: spawn_stream_rngs(
            root, n_trials=n_trials, n_agents=n_agents, n_children=3, stream=Stream.ENVIRONMENT
        )[:, :, 2],
    )
    return PolicyUniforms(flip_rngs, horizon), draws


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
        key = cells.astype(np.uint16) if self.n_cells <= 1 << 16 else cells  # radix sort
        order = np.argsort(key, kind="stable")
        cells, values = cells[order], values[order]
        step = np.arange(cells.size)
        new_group = np.empty(cells.size, dtype=bool)
        new_group[0] = True
        np.not_equal(cells[1:], cells[:-1], out=new_group[1:])
        rank = step - np.maximum.accumulate(np.where(new_group, step, 0))
        position = self.totals[cells] + rank
        n_values = self.n_values
        np.add.at(self.counts.reshape(-1), (cells * 2 + position % 2) * n_values + values, 1)
        np.add.at(self.totals, cells, 1)
        # the last sample of each cell (runs of equal cells end where the next begins)
        is_last = np.empty(cells.size, dtype=bool)
        is_last[-1] = True
        is_last[:-1] = new_group[1:]
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
        ``a`` in ``δ_t = t^-a``, > 0 (default 4, reconstructed with low confidence).
    sigma, c1, c2 : float
        Width constants (:func:`fedpriv.algorithms.dubey_aamas.robust.trimmed_mean_width`), > 0.
    normalization : {"n", "inside"}
        Trimmed-mean normalization.
    n_trials, seed, table, record
        As :func:`fedpriv.algorithms.dubey_aamas.cooperative.run_private_coop_ucb`; contamination draws use
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
    assumed, exponent = _check_options(
        contamination, assumed_contamination, confidence_exponent, sigma, c1, c2, normalization
    )
    horizon, n_trials, schedule = check_setup(env, graph, horizon, n_trials, gamma)
    root = as_seed_sequence(seed)
    table = reward_table_for(env, root) if table is None else table
    if not isinstance(table, RewardTable):
        raise TypeError(f"`table` must be a RewardTable, got {type(table).__name__}.")
    B, M, K, T = n_trials, env.n_agents, env.n_arms, horizon
    byzantine = contamination.byzantine_mask(M)
    alphabet = np.unique(
        np.concatenate([[0.0, 1.0], contamination.support(), [o.value for o in table.overrides]])
    )
    policy = PolicyUniforms(stream_rngs(root, n_trials=B, n_agents=M, stream=Stream.POLICY), T)
    N = B * M
    flips, draws = _contamination_streams(root, B, M, T)
    uniforms = np.zeros(N)  # Q's draws where a message is corrupted (else never read)
    accountant = Accountant(disjoint=("trial", "agent", "arm"))
    accountant.spend(
        events.NonPrivate(reason="raw (possibly contaminated) rewards broadcast (Alg. 3, eq. 7)"),
        key=every_stream(B, M, K),
    )
    sets = _SampleSets((B, M, K), alphabet.size)
    n_slots, recv_base, first_valid, gather = _receipt_routing(schedule, B, M, K)
    sent_arm = np.zeros(n_slots * N, dtype=np.int64)
    sent_value = np.zeros(n_slots * N, dtype=np.int64)
    means = np.asarray(env.arm_means)
    actions = np.empty((N, T), dtype=np.int64)
    rewards = np.empty((N, T))
    content = None
    if record:
        content = {
            "arm": np.empty((B, M, T), dtype=np.int64),
            "value": np.empty((B, M, T)),
            "corrupted": np.zeros((B, M, T), dtype=bool),
        }
    counts = np.zeros(K * N, dtype=np.int64)  # arm-major: k N + n
    rows = np.arange(N)
    cell_base = rows * K
    reader = BufferedRewards(table, B, M, K, T)
    own_cells = own_values = np.zeros(0, dtype=np.int64)
    any_undefined = np.zeros((B, M, 1), dtype=bool)
    for t in range(1, T + 1):
        # own sample of round t - 1 first, then the receipts of round t (arrival order)
        if t > 1:
            begin = first_valid[min(t, n_slots)]
            g = gather[t % n_slots][begin:]
            cells = np.concatenate([own_cells, recv_base[begin:] + sent_arm[g]])
            sets.add(cells, np.concatenate([own_values, sent_value[g]]))
        delta_t = float(max(t, 2)) ** -exponent
        log_term = math.log(1.0 / delta_t)
        z1, z2 = sets.halves()
        estimate, n = histogram_trimmed_mean_unchecked(
            cumsum_last(z1), z2, cumsum_last(z2), alphabet, assumed, log_term, normalization
        )
        undefined = np.isnan(estimate)
        width = trimmed_mean_width_unchecked(n.astype(np.float64), assumed, log_term, sigma, c1, c2)
        # rows with an undefined arm: forced exploration of the least-sampled undefined
        # arm; otherwise the robust UCB index (one tie-broken argmax for both)
        np.any(undefined, axis=-1, keepdims=True, out=any_undefined)
        total = sets.totals.reshape(B, M, K)
        score = np.where(any_undefined, np.where(undefined, -total, -np.inf), estimate + width)
        arm = argmax_random_ties(score, policy.at(t))
        flat_arm = arm.reshape(-1)
        cell = flat_arm * N + rows
        pulls = counts[cell]
        reward = reader.read(cell, pulls, counts).reshape(B, M)
        counts[cell] = pulls + 1
        corrupted = byzantine[None, :] & (flips.at(t) < contamination.rate)
        read = draws.at(t)  # every round: it fixes which draw each round reads
        if contamination.uses_uniforms:
            hit = np.flatnonzero(corrupted)
            uniforms[hit] = read(hit)
        u = uniforms.reshape(B, M)
        sent = contamination.corrupt(reward, arm, corrupted, u, means[None, :, :])
        values = _value_index(alphabet, np.concatenate([reward.reshape(-1), sent.reshape(-1)]))
        own_cells, own_values = cell_base + flat_arm, values[:N]
        slot = (t % n_slots) * N
        sent_arm[slot : slot + N] = flat_arm
        sent_value[slot : slot + N] = values[N:]
        actions[:, t - 1], rewards[:, t - 1] = flat_arm, reward.reshape(-1)
        if content is not None:
            content["arm"][..., t - 1] = arm
            content["value"][..., t - 1] = sent
            content["corrupted"][..., t - 1] = corrupted
    actions, rewards = actions.reshape(B, M, T), rewards.reshape(B, M, T)
    transmissions, deliveries = communication_cost(schedule, T)
    transcript = None
    if record:
        transcript = Transcript(
            schedule=schedule, content=content, actions=actions, rewards=rewards
        )
    return CoopRun(
        algorithm="byzantine-coop-ucb",
        actions=actions,
        rewards=rewards,
        gaps=env.gaps,
        accountant=accountant,
        release_counts=np.zeros((B, M, K), dtype=np.int64),
        schedule=schedule,
        transmissions=transmissions,
        deliveries=deliveries,
        setting={
            "gamma": schedule.gamma,
            "contamination": contamination.rate,
            "assumed_contamination": assumed,
            "kind": contamination.kind,
            "n_byzantine": int(byzantine.sum()),
            "confidence_exponent": exponent,
            "sigma": sigma,
            "c1": c1,
            "c2": c2,
            "normalization": normalization,
            "alphabet_size": int(alphabet.size),
        },
        transcript=transcript,
        seed_entropy=int(root.entropy),
    )


def _check_options(
    contamination: Any,
    assumed_contamination: float | None,
    confidence_exponent: float,
    sigma: float,
    c1: float,
    c2: float,
    normalization: str,
) -> tuple[float, float]:
    """Validate the estimator's options; returns ``(assumed rate, exponent a)``."""
    if not isinstance(contamination, Contamination):
        raise TypeError(
            f"`contamination` must be a Contamination, got {type(contamination).__name__}."
        )
    assumed = contamination.rate if assumed_contamination is None else assumed_contamination
    assumed = check_contamination(assumed, "assumed_contamination")
    exponent = check_positive("confidence_exponent", confidence_exponent)
    for name, value in (("sigma", sigma), ("c1", c1), ("c2", c2)):
        check_positive(name, value)
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"`normalization` must be one of {NORMALIZATIONS}, got {normalization!r}.")
    return assumed, exponent


def _receipt_routing(
    schedule: Any, B: int, M: int, K: int
) -> tuple[int, np.ndarray, dict[int, int], list[np.ndarray]]:
    """Who hears what, flattened over trials: ``(n_slots, recv_base, first_valid, gather)``.

    Every agent sends every round, so the routing is static: the receipts of round t
    are the messages created at t - d(u, v) for every pair within γ hops. Entries are
    ordered by creation round, then sender (fedpriv's arrival order); the latest
    ``max_delay`` rounds of (arm, value) sent live in a ring of ``n_slots`` slots.
    """
    N = B * M
    n_slots = schedule.max_delay + 1
    order = np.lexsort((schedule.senders, -schedule.delays))
    lag = np.tile(schedule.delays[order], B)
    trial_rows = np.repeat(np.arange(B) * M, order.size)
    src_row = trial_rows + np.tile(schedule.senders[order], B)
    recv_base = (trial_rows + np.tile(schedule.receivers[order], B)) * K
    entry_order = np.argsort(-lag, kind="stable")  # creation order across trials
    lag, src_row, recv_base = lag[entry_order], src_row[entry_order], recv_base[entry_order]
    first_valid = {
        d: int(np.searchsorted(-lag, -(d - 1), side="left")) for d in range(1, n_slots + 1)
    }
    gather = [((p - lag) % n_slots) * N + src_row for p in range(n_slots)]
    return n_slots, recv_base, first_valid, gather
