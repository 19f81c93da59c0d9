"""UCB1 and DP-UCB-INT run independently on every agent, vectorized over trials × agents.

These are the single-agent baselines of Dubey & Pentland (AAMAS 2020, §5 and
its Fig. 1(a) benchmarks), and the shared pieces of the cooperative algorithms in
:mod:`fedpriv.algorithms.dubey_aamas.cooperative`: the accountant's guarantee next to the paper's claim
(:func:`interval_guarantee`). The interval mechanism itself, which draws the noise, is
:class:`fedpriv.privacy.mechanisms.interval_mechanism.IntervalMeanRelease`; the result type,
:class:`~fedpriv.algorithms.dubey_aamas.runs.UCBRun`, is in :mod:`fedpriv.algorithms.dubey_aamas.runs`.

UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1): pull every arm once (rounds
``1..K``), then ``argmax_k x̄_k + sqrt(2 ln t / n_k)``. ``log_time="round"``
(default, decided before any run) takes ``t`` = the 1-based index of the current
round, i.e. the number of pulls *including* the current one; ``"pulls"`` takes
``t - 1``, Auer et al.'s "overall number of plays done so far". Ties are broken
uniformly at random from the POLICY stream.

DP-UCB-INT (Tossou & Dimitrakakis 2016, Alg. 3, as in its public MATLAB
reproduction): ``f = ⌈1/ε⌉`` (:func:`fedpriv.privacy.calibrations.interval_length`, reconstructed with medium confidence); round-robin for
the first ``K f`` rounds; when an arm's own count reaches a multiple of ``f`` its
noisy mean ``S/n + Lap(b(n))`` is released once (one fresh draw per release, cached;
the MATLAB reproduction redraws while ``n mod f == 0``, a redraw bug) with
``b(n) = n^-(1-θ/2)`` (reconstructed with medium confidence, ``rule="decaying"``) or ``1/(n ε)`` (reconstructed with low confidence, ``"fixed"``).
``index_update="release"`` (default, the reproduction's reading, ambiguity A3) freezes
the whole index ``μ̃ + sqrt(2 ln t / n)`` between releases; ``"every_round"``
recomputes the bonus every round from the cached noisy mean.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from fedpriv.algorithms.dubey_aamas.kernels import BufferedRewards, argmax_ties_arm_major
from fedpriv.algorithms.dubey_aamas.runs import UCBRun
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, RewardTable
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rngs
from fedpriv.privacy import Accountant, IntervalRelease
from fedpriv.privacy.calibrations import (
    INTERVAL_CONFIDENCE,
    interval_claimed_guarantee,
    interval_length,
    interval_noise_scales,
)
from fedpriv.privacy.checks import check_epsilon, check_int_at_least
from fedpriv.privacy.mechanisms.interval_mechanism import IntervalMeanRelease

__all__ = [
    "INDEX_UPDATES",
    "LOG_TIMES",
    "PolicyUniforms",
    "argmax_random_ties",
    "interval_guarantee",
    "read_rewards",
    "reward_table_for",
    "run_dp_ucb_int",
    "run_ucb1",
]

LOG_TIMES = ("round", "pulls")
INDEX_UPDATES = ("release", "every_round")
_KEYS = ("trial", "agent", "arm")


class PolicyUniforms:
    """U(0, 1) tie-break draws per (trial, agent, round), drawn in chunks of rounds.

    Each ``(trial, agent)`` has its own generator (fixed SeedSequence address), so a
    trial's draws do not depend on the batch size.
    """

    def __init__(self, rngs: np.ndarray, horizon: int, chunk: int = 512) -> None:
        self.rngs = rngs
        self.horizon = int(horizon)
        self.chunk = int(chunk)
        self._block = np.empty((*rngs.shape, 0))
        self._first = 1

    def at(self, t: int) -> np.ndarray:
        """Draws of round ``t`` (1-based), shape (n_trials, n_agents).

        Parameters
        ----------
        t : int
            Round, 1-based, in [1, horizon].

        Returns
        -------
        ndarray of float64, shape (n_trials, n_agents)
            Uniforms in [0, 1).
        """
        offset = t - self._first
        if not 0 <= offset < self._block.shape[-1]:
            size = min(self.chunk, self.horizon - t + 1)
            block = np.empty((self.rngs.size, size))
            for row, generator in zip(block, self.rngs.reshape(-1).tolist()):
                generator.random(out=row)  # the same doubles as generator.random(size)
            self._block = block.reshape(*self.rngs.shape, size)
            self._first, offset = t, 0
        return self._block[..., offset]


def argmax_random_ties(index: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Argmax over the last axis, ties broken by the uniform ``u`` (shape ``index[..., 0]``).

    Parameters
    ----------
    index : ndarray of float64, shape (..., n_arms)
        The arms' indices.
    u : ndarray of float64, shape ``index.shape[:-1]``
        Uniforms in [0, 1) that pick among the tied arms.

    Returns
    -------
    ndarray of int64, shape ``index.shape[:-1]``
    """
    best = index == index.max(axis=-1, keepdims=True)
    count = best.sum(axis=-1)
    arm = best.argmax(axis=-1)
    if count.max() > 1:
        rank = np.minimum((u * count).astype(np.int64), count - 1)
        arm = np.argmax(np.cumsum(best, axis=-1) > rank[..., None], axis=-1)
    return arm


def reward_table_for(env: BernoulliMAB, root: np.random.SeedSequence) -> RewardTable:
    """The run's reward table: the ENVIRONMENT address of ``root`` (shared by D and D').

    Parameters
    ----------
    env : BernoulliMAB
        The environment.
    root : numpy.random.SeedSequence
        The run's root.

    Returns
    -------
    RewardTable
    """
    return env.reward_table(child_seed(root, int(Stream.ENVIRONMENT)))


def read_rewards(table: RewardTable, arm: np.ndarray, pulls: np.ndarray) -> np.ndarray:
    """Rewards of ``arm`` (n_trials, n_agents) at the agents' own pull indices.

    Parameters
    ----------
    table : RewardTable
        The run's reward table.
    arm : ndarray of int64, shape (n_trials, n_agents)
        The pulled arms.
    pulls : ndarray of int64, shape (n_trials, n_agents)
        Each agent's pull count of its arm before this pull.

    Returns
    -------
    ndarray of float64, shape (n_trials, n_agents)

    Raises
    ------
    ValueError
        If a reward lies outside [0, 1] (the sensitivity 1/n of a mean assumes it).
    """
    n_trials, n_agents = arm.shape
    rewards = table.rewards(np.arange(n_trials)[:, None], np.arange(n_agents)[None, :], arm, pulls)
    if rewards.size and (rewards.min() < 0.0 or rewards.max() > 1.0 or np.isnan(rewards).any()):
        raise ValueError(
            "rewards must lie in [0, 1] (the sensitivity 1/n of a mean needs it); the "
            f"reward table returned values in [{rewards.min()!r}, {rewards.max()!r}]."
        )
    return rewards


def interval_guarantee(
    accountant: Accountant,
    *,
    epsilon: float,
    horizon: int,
    theta: float | None,
    rule: str,
    target_delta: float,
) -> dict[str, Any]:
    """The accountant's guarantee next to the paper's claim (AAMAS 2020, §3.2–3.3).

    The claim is :func:`fedpriv.privacy.calibrations.interval_claimed_guarantee` at
    ``horizon``: per message ``f^(-θ/2)`` (reconstructed with medium confidence) or ``ε`` (reconstructed with low confidence), and the composed
    (ε', δ') of the ⌊T/f⌋-fold advanced composition the paper names (``homogeneous``,
    reconstructed with medium to low confidence), with the T-independent ζ route (reconstructed with low confidence) and basic composition beside it.
    The accountant's value is the tightest valid route over every stream it was
    charged for (parallel over trials, agents and arms); ``inf`` if a ``NonPrivate``
    release was charged (e.g. the raw own term).

    Parameters
    ----------
    accountant : Accountant
    epsilon, theta, rule
        The interval mechanism's parameters.
    horizon : int
        ``T`` (the largest pull count of a stream).
    target_delta : float
        δ' in (0, 1).

    Returns
    -------
    dict
        ``claimed``: per_message_epsilon, homogeneous_epsilon, zeta_epsilon,
        basic_epsilon, delta, interval, n_releases, confidence; ``accountant``:
        epsilon at δ', route, pure_epsilon (δ = 0), routes, first_release_epsilon;
        ``non_private_releases``: reasons of raw releases.
    """
    claim = interval_claimed_guarantee(
        epsilon, horizon, target_delta=target_delta, theta=theta, rule=rule
    )
    route, value = accountant.routes.tightest(target_delta)
    first = math.nan
    for cell in accountant.ledger.cells():
        for event, _ in cell:
            if isinstance(event, IntervalRelease):
                first = event.l1_sensitivities[0] / event.scales[0]
    return {
        "claimed": {
            "per_message_epsilon": claim.per_release_epsilon,
            "homogeneous_epsilon": claim.homogeneous_epsilon,
            "zeta_epsilon": claim.zeta_epsilon,
            "basic_epsilon": claim.basic_epsilon,
            "delta": target_delta,
            "interval": claim.interval,
            "n_releases": claim.n_releases,
            "confidence": {
                "per_message": INTERVAL_CONFIDENCE["per_release_epsilon"],
                "composition": INTERVAL_CONFIDENCE["composition"],
                "noise_rule": INTERVAL_CONFIDENCE[rule],
            },
        },
        "accountant": {
            "epsilon": value,
            "delta": target_delta,
            "route": route,
            "pure_epsilon": accountant.get_epsilon(0.0),
            "routes": accountant.routes.epsilons(target_delta),
            "first_release_epsilon": first,
        },
        "non_private_releases": accountant.ledger.non_private_reasons(),
    }


def _common(env: BernoulliMAB, horizon: int, n_trials: int, seed, table):
    if not isinstance(env, BernoulliMAB):
        raise TypeError(f"`env` must be a BernoulliMAB, got {type(env).__name__}.")
    horizon = check_int_at_least("horizon", horizon, 1)
    n_trials = check_int_at_least("n_trials", n_trials, 1)
    root = as_seed_sequence(seed)
    table = reward_table_for(env, root) if table is None else table
    if not isinstance(table, RewardTable):
        raise TypeError(f"`table` must be a RewardTable, got {type(table).__name__}.")
    policy = PolicyUniforms(
        stream_rngs(root, n_trials=n_trials, n_agents=env.n_agents, stream=Stream.POLICY), horizon
    )
    return horizon, n_trials, root, table, policy


def run_ucb1(
    env: BernoulliMAB,
    *,
    horizon: int,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    log_time: str = "round",
    table: RewardTable | None = None,
) -> UCBRun:
    """UCB1 on every agent independently (no communication), ``n_trials`` at once.

    Parameters
    ----------
    env : BernoulliMAB
        ``n_agents`` agents (each runs its own UCB1 on its own rewards), ``n_arms``.
    horizon : int
        Rounds T >= 1 (the K initial pulls included).
    n_trials : int
        Batch size, >= 1.
    seed : int or SeedSequence
        Root of the run's streams (reward table: ENVIRONMENT; ties: POLICY).
    log_time : {"round", "pulls"}
        ``t`` in ``ln t``: the current round's 1-based index, or ``t - 1``.
    table : RewardTable, optional
        Use this table instead of the seed's (audits).

    Returns
    -------
    UCBRun

    Raises
    ------
    ValueError
        If ``horizon < 1``, ``n_trials < 1``, an unknown ``log_time``, or rewards
        outside [0, 1].
    """
    if log_time not in LOG_TIMES:
        raise ValueError(f"`log_time` must be one of {LOG_TIMES}, got {log_time!r}.")
    horizon, n_trials, root, table, policy = _common(env, horizon, n_trials, seed, table)
    B, M, K, T = n_trials, env.n_agents, env.n_arms, horizon
    N = B * M
    # Arm-major flat state: cell c = k N + n with n = b M + v (fast reductions over arms).
    sums = np.zeros(K * N)
    counts = np.zeros(K * N, dtype=np.int64)
    mean = np.zeros((K, N))  # x̄_k, refreshed at the pulled arm only
    spread = np.zeros((K, N))  # 1/sqrt(n_k)
    mean_flat, spread_flat = mean.reshape(-1), spread.reshape(-1)
    index = np.empty((K, N))
    actions = np.empty((N, T), dtype=np.int64)
    rewards = np.empty((N, T))
    shift = 0 if log_time == "round" else 1
    rows = np.arange(N)
    reader = BufferedRewards(table, B, M, K, T)
    for t in range(1, T + 1):
        if t <= K:
            arm = np.full(N, t - 1, dtype=np.int64)
        else:
            np.multiply(spread, math.sqrt(2.0 * math.log(t - shift)), out=index)
            np.add(mean, index, out=index)
            arm = argmax_ties_arm_major(index, policy.at(t).reshape(-1))
        cell = arm * N + rows
        pulls = counts[cell]
        reward = reader.read(cell, pulls, counts)
        total = sums[cell] + reward
        sums[cell] = total
        counts[cell] = pulls + 1
        mean_flat[cell] = total / (pulls + 1)
        spread_flat[cell] = 1.0 / np.sqrt(pulls + 1)
        actions[:, t - 1], rewards[:, t - 1] = arm, reward
    actions, rewards = actions.reshape(B, M, T), rewards.reshape(B, M, T)
    return UCBRun(
        algorithm="ucb1",
        actions=actions,
        rewards=rewards,
        gaps=env.gaps,
        accountant=None,
        release_counts=np.zeros((B, M, K), dtype=np.int64),
        setting={"log_time": log_time},
        seed_entropy=int(root.entropy),
    )


def run_dp_ucb_int(
    env: BernoulliMAB,
    *,
    horizon: int,
    epsilon: float,
    theta: float | None = 1.1,
    rule: str = "decaying",
    index_update: str = "release",
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    table: RewardTable | None = None,
) -> UCBRun:
    """DP-UCB-INT (Tossou & Dimitrakakis 2016) on every agent independently.

    Parameters
    ----------
    env, horizon, n_trials, seed, table
        As :func:`run_ucb1`.
    epsilon : float
        Input ε (sets ``f = ⌈1/ε⌉``; and the scale under ``rule="fixed"``), > 0.
    theta : float or None
        Rate constant ϑ in (1, 2) (Tossou's ``v``; 1.1 in their experiments).
    rule : {"decaying", "fixed"}
        Noise rule (:func:`fedpriv.privacy.calibrations.interval_noise_scales`).
    index_update : {"release", "every_round"}
        Freeze the whole index between releases (A3, default) or recompute the bonus.

    Returns
    -------
    UCBRun
        ``accountant`` holds one :class:`privacy.IntervalRelease` per ``(trial, agent,
        arm)`` stream (disjoint: parallel over agents and arms) and one ledger row per
        noise draw (:class:`IntervalMeanRelease`).

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``theta`` not in (1, 2), an unknown rule or index update,
        ``horizon < 1``, ``n_trials < 1``, or rewards outside [0, 1].
    """
    epsilon = check_epsilon("epsilon", epsilon)
    f = interval_length(epsilon)
    interval_noise_scales(epsilon, [f], theta=theta, rule=rule)  # validates theta, rule
    if index_update not in INDEX_UPDATES:
        raise ValueError(f"`index_update` must be one of {INDEX_UPDATES}, got {index_update!r}.")
    horizon, n_trials, root, table, policy = _common(env, horizon, n_trials, seed, table)
    B, M, K, T = n_trials, env.n_agents, env.n_arms, horizon
    accountant = Accountant(disjoint=_KEYS)
    mechanism = IntervalMeanRelease(
        (B, M, K),
        epsilon=epsilon,
        horizon=T,
        theta=theta,
        rule=rule,
        accountant=accountant,
        rngs=stream_rngs(root, n_trials=B, n_agents=M, stream=Stream.NOISE),
    )
    N = B * M
    # Arm-major flat state: cell c = k N + n with n = b M + v (as in run_ucb1).
    sums = np.zeros(K * N)
    counts = np.zeros(K * N, dtype=np.int64)
    noisy = np.zeros(K * N)
    released_n = np.zeros(K * N, dtype=np.int64)
    index = np.full((K, N), np.inf)
    index_flat = index.reshape(-1)
    actions = np.empty((N, T), dtype=np.int64)
    rewards = np.empty((N, T))
    rows = np.arange(N)
    reader = BufferedRewards(table, B, M, K, T)
    every_round = index_update == "every_round"
    for t in range(1, T + 1):
        if t <= K * f:
            arm = np.full(N, (t - 1) % K, dtype=np.int64)
        else:
            if every_round:
                index = (noisy + np.sqrt(2.0 * math.log(t) / released_n)).reshape(K, N)
            arm = argmax_ties_arm_major(index, policy.at(t).reshape(-1))
        cell = arm * N + rows
        pulls = counts[cell]
        reward = reader.read(cell, pulls, counts)
        sums[cell] += reward
        counts[cell] = pulls + 1
        due = np.flatnonzero((pulls + 1) % f == 0)
        if due.size:
            c = cell[due]
            n = counts[c]
            values = mechanism.release(due // M, due % M, arm[due], sums[c], n)
            noisy[c] = values
            released_n[c] = n
            if not every_round:
                index_flat[c] = values + np.sqrt(2.0 * math.log(t) / n)
        actions[:, t - 1], rewards[:, t - 1] = arm, reward
        if t % 256 == 0:
            mechanism.flush()
    actions, rewards = actions.reshape(B, M, T), rewards.reshape(B, M, T)
    released_n = np.ascontiguousarray(released_n.reshape(K, B, M).transpose(1, 2, 0))
    mechanism.flush()
    return UCBRun(
        algorithm="dp-ucb-int",
        actions=actions,
        rewards=rewards,
        gaps=env.gaps,
        accountant=accountant,
        release_counts=released_n // f,
        setting={
            "epsilon": epsilon,
            "theta": theta,
            "rule": rule,
            "interval": f,
            "index_update": index_update,
        },
        seed_entropy=int(root.entropy),
    )
