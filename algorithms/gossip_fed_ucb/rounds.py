"""The steps of a batch of Gossip_UCB / Fed_UCB runs (Zhu et al. 2021, Alg. 1 and 4).

:func:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.run_fed_ucb` and ``run_gossip_ucb`` open a
batch (:func:`open_batch`: reward tables, active edges and policy uniforms drawn for the
whole horizon, releases opened) and then, round by round, choose the arms
(:func:`choose_arms`), pull and release (:func:`updated_means`) and gossip
(:func:`gossip_step`). Every resolved ambiguity is documented in that module.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment
from fedpriv.algorithms.gossip_fed_ucb.releases import open_fed_ucb_releases
from fedpriv.algorithms.networks.graphs import edge_array
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rngs
from fedpriv.privacy import Accountant, LaplaceTreeCounter
from fedpriv.privacy.calibrations import fed_ucb_scale
from fedpriv.privacy.checks import check_int_at_least

__all__ = [
    "OpenedBatch",
    "choose_arms",
    "confidence_radius",
    "draw_active_edges",
    "gossip_step",
    "open_batch",
    "updated_means",
]


def confidence_radius(
    n: np.ndarray, t: int, *, n_agents: int, horizon: int, epsilon: float
) -> np.ndarray:
    """UCB radius of Gossip_UCB (eq. 11, ``epsilon = inf``) or Fed_UCB (eq. 12).

    ``C = sqrt(2N log(t) / n) + α1`` and
    ``C̃ = α1 + sqrt(2N (128 N log²T log t log n / (n² ε²) + 1/n) log t)``, with
    ``α1 = 64 / N**17`` and natural logs.

    Parameters
    ----------
    n : ndarray of int64, any shape
        Pre-pull counts ``n_{i,k}(t)`` (>= 1).
    t : int
        Round, >= 1.
    n_agents, horizon : int
        ``N`` and ``T``.
    epsilon : float
        Fed_UCB's total ε; ``inf`` gives eq. 11 exactly.

    Returns
    -------
    ndarray of float64, shape of ``n``
    """
    alpha1 = 64.0 / float(n_agents) ** 17
    log_t = math.log(t)
    n = n.astype(np.float64)
    if math.isinf(epsilon):
        return np.sqrt(2.0 * n_agents / n * log_t) + alpha1
    private = 128.0 * n_agents * math.log(horizon) ** 2 * log_t * np.log(n) / (n**2 * epsilon**2)
    return alpha1 + np.sqrt(2.0 * n_agents * (private + 1.0 / n) * log_t)


def _reward_tables(
    env: BanditEnvironment, horizon: int, n_trials: int, root, *, rounds: int
) -> np.ndarray:
    """Each trial's table (drawn for the whole horizon, checked), rows ``0..rounds`` kept."""
    expected = (env.n_agents, horizon + 1, env.n_arms)
    tables = []
    rngs = stream_rngs(root, n_trials=n_trials, n_agents=1, stream=Stream.ENVIRONMENT)[:, 0]
    for rng in rngs:
        table = np.asarray(env.sample_rewards(horizon, rng=rng))
        if table.shape != expected:
            raise ValueError(
                f"`env.sample_rewards` must return shape {expected} per trial, got {table.shape}."
            )
        if not np.all(np.isfinite(table)):
            raise ValueError("`env` rewards must be finite; the environment produced NaN or inf.")
        tables.append(table[:, : rounds + 1])
    return np.stack(tables)


def _pick(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the ``floor(u * count)``-th True entry along the last axis."""
    count = mask.sum(axis=-1)
    rank = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
    return np.argmax(np.cumsum(mask, axis=-1) > rank[..., None], axis=-1)


def draw_active_edges(graph: nx.Graph, horizon: int, *, n_trials: int, seed) -> np.ndarray:
    """The active gossip edges of the runs at ``seed``: ``run.edges`` before running.

    Trial ``j`` draws from ``stream_rng(root, trial=j, stream=Stream.NETWORK)`` what
    :func:`~fedpriv.algorithms.networks.graphs.sample_active_edges` draws (one
    ``integers`` call of size ``horizon`` indexing :func:`edge_array`), exactly as
    :func:`run_fed_ucb` / :func:`run_gossip_ucb` do, so callers can find the last round
    their observable depends on before they choose ``rounds``.

    Parameters
    ----------
    graph : networkx.Graph
        Connected, nodes ``0..n_agents-1``.
    horizon : int
        ``T`` of the runs (not their ``rounds``).
    n_trials : int
        Batch size.
    seed : int or SeedSequence
        The runs' seed.

    Returns
    -------
    ndarray of int64, shape (n_trials, horizon, 2)
    """
    root = as_seed_sequence(seed)
    horizon = check_int_at_least("horizon", horizon, 1)
    edges = edge_array(graph)  # checks the graph once; row e is edge number e
    n_trials = check_int_at_least("n_trials", n_trials, 1)
    rngs = stream_rngs(root, n_trials=n_trials, n_agents=1, stream=Stream.NETWORK)[:, 0]
    draws = [rng.integers(0, edges.shape[0], size=horizon) for rng in rngs]
    return edges[np.stack(draws)]


@dataclasses.dataclass(slots=True, kw_only=True)
class OpenedBatch:
    """What a batch holds before round 1: its draws and its opened releases."""

    rewards: np.ndarray  # (B, N, rounds + 1, M)
    edges: np.ndarray  # (B, T, 2)
    uniforms: np.ndarray  # (B, N, rounds), one POLICY draw per (agent, round)
    init: np.ndarray  # X̃(0) as released, (B, N, M)
    accountant: Accountant | None
    counter: LaplaceTreeCounter | None
    running: np.ndarray | None  # Gossip_UCB's raw running sums
    scale: float
    n_out_of_bounds: int


def open_batch(
    env: BanditEnvironment,
    graph: nx.Graph,
    root,
    *,
    horizon: int,
    n_trials: int,
    epsilon: float,
    private: bool,
    mode: str,
    log_base: str,
    noise_on_empty_nodes: bool,
    rounds: int,
    secure_noise: bool = False,
    publish_final: bool = False,
) -> OpenedBatch:
    """Draw the batch's tables, edges and policy uniforms; open the releases.

    Every stream is drawn as for the whole horizon and cut after round ``rounds``
    (``Generator.random`` fills one double per draw, so ``random(rounds)`` is the
    prefix of ``random(T)``).

    Parameters
    ----------
    env : BanditEnvironment
        ``n_agents`` N, ``n_arms`` M.
    graph : networkx.Graph
        Connected, nodes ``0..N-1``.
    root : numpy.random.SeedSequence
        The batch's root.
    horizon : int
        T >= 1 (sets the calibration and the draws).
    n_trials : int
        Batch size B >= 1.
    epsilon : float
        Target ε per reward stream, in (0, inf].
    private : bool
        Fed_UCB (True) or Gossip_UCB (False).
    mode : {"paper", "corrected"}
        Calibration mode (:func:`fedpriv.privacy.calibrations.fed_ucb_scale`).
    log_base : {"2", "e", "10"}
        Base of the paper's log (paper mode).
    noise_on_empty_nodes : bool
        Algorithm 3's literal noise on every node.
    rounds : int
        Rounds played, in [0, T].
    secure_noise : bool
        Exact discrete Laplace noise on a grid.
    publish_final : bool
        Whether ϑ̃(T) is an output (charged prefixes).

    Returns
    -------
    OpenedBatch
        Rewards ``(B, N, rounds + 1, M)``, edges ``(B, T, 2)``, policy uniforms
        ``(B, N, rounds)``, the released initial means ``(B, N, M)`` and the opened
        accountant and tree counter.
    """
    B, N, M, T = n_trials, env.n_agents, env.n_arms, horizon
    rewards = _reward_tables(env, T, B, root, rounds=rounds)
    edges = draw_active_edges(graph, T, n_trials=B, seed=root)
    policy = stream_rngs(root, n_trials=B, n_agents=N, stream=Stream.POLICY)
    uniforms = np.stack([[g.random(rounds) for g in row] for row in policy])  # (B, N, rounds)
    x0 = rewards[:, :, 0, :]
    if not private:
        return OpenedBatch(
            rewards=rewards,
            edges=edges,
            uniforms=uniforms,
            init=x0.copy(),
            accountant=None,
            counter=None,
            running=np.zeros((B, N, M)),
            scale=0.0,
            n_out_of_bounds=0,
        )
    noise_rngs = stream_rngs(root, n_trials=B, n_agents=N, stream=Stream.NOISE)
    accountant, init, counter, n_out_of_bounds = open_fed_ucb_releases(
        x0,
        horizon=T,
        epsilon=epsilon,
        mode=mode,
        log_base=log_base,
        rng=noise_rngs,
        noise_on_empty_nodes=noise_on_empty_nodes,
        reward_bounds=env.reward_bounds,
        secure_noise=secure_noise,
        publish_final=publish_final,
    )
    return OpenedBatch(
        rewards=rewards,
        edges=edges,
        uniforms=uniforms,
        init=init,
        accountant=accountant,
        counter=counter,
        running=None,
        scale=fed_ucb_scale(epsilon, T, mode=mode, log_base=log_base, publish_final=publish_final),
        n_out_of_bounds=n_out_of_bounds,
    )


def choose_arms(
    counts: np.ndarray,
    n_tilde: np.ndarray,
    theta: np.ndarray,
    u: np.ndarray,
    t: int,
    *,
    neighbor_mask: np.ndarray,
    horizon: int,
    radius_epsilon: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Alg. 1 lines 5–13 at round ``t``: the pulled arms and ñ(t+1).

    Parameters
    ----------
    counts : ndarray of int64, shape (B, N, M)
        Pull counts.
    n_tilde : ndarray of int64, shape (B, N, M)
        ñ(t).
    theta : ndarray of float64, shape (B, N, M)
        ϑ(t), the gossiped estimates.
    u : ndarray of float64, shape (B, N)
        Uniform tie-breaking draws.
    t : int
        Round, 1-based.
    neighbor_mask : ndarray of bool, shape (N, N)
        Adjacency of the graph (with self-loops as the algorithm reads them).
    horizon : int
        T.
    radius_epsilon : float
        ε in the confidence radius (``inf`` for Gossip_UCB).

    Returns
    -------
    tuple of (ndarray, ndarray)
        The pulled arms ``(B, N)`` and ñ(t+1) ``(B, N, M)``.
    """
    N = counts.shape[1]
    # Lines 5-6: consistency set with ñ(t), then ñ(t+1) from neighbors' ñ(t).
    behind = counts < n_tilde - N
    neighbors_max = np.where(neighbor_mask, n_tilde[:, None, :, :], 0).max(axis=2)
    n_tilde = np.maximum(counts, neighbors_max)
    forced = behind.any(axis=-1)
    # Lines 7-13: UCB argmax (uniform tie-break) or a uniform pick from 𝒜_i.
    q = theta + confidence_radius(counts, t, n_agents=N, horizon=horizon, epsilon=radius_epsilon)
    arm = q.argmax(axis=-1)
    best = q == q.max(axis=-1, keepdims=True)  # the value at ``arm``: same ties
    if best.sum(axis=-1).max() > 1:  # a tie somewhere: break it uniformly
        arm = _pick(best, u)
    if forced.any():
        arm = np.where(forced, _pick(behind, u), arm)
    return arm, n_tilde


def updated_means(
    opened: OpenedBatch, arm: np.ndarray, t: int, counts: np.ndarray, means: np.ndarray
) -> np.ndarray:
    """Lines 14/16: pull, count and release the pulled arm's (noisy) mean (in place on counts).

    Other arms keep their mean (Alg. 4 line 17).

    Parameters
    ----------
    opened : OpenedBatch
        The batch's draws and releases.
    arm : ndarray of int64, shape (B, N)
        The pulled arms.
    t : int
        Round, 1-based.
    counts : ndarray of int64, shape (B, N, M)
        Pull counts, updated in place.
    means : ndarray of float64, shape (B, N, M)
        The released means before this round.

    Returns
    -------
    ndarray of float64, shape (B, N, M)
        The released means after this round.
    """
    B, N, M = counts.shape
    pulled = arm[..., None] == np.arange(M)
    reward = opened.rewards[np.arange(B)[:, None], np.arange(N)[None, :], t, arm]
    counts += pulled
    if opened.counter is not None:
        opened.counter.step(np.where(pulled, reward[..., None], 0.0), pulled)
        total = opened.counter.release(pulled)
    else:
        opened.running += np.where(pulled, reward[..., None], 0.0)
        total = opened.running
    return np.where(pulled, (opened.init + np.where(pulled, total, 0.0)) / counts, means)


def gossip_step(
    theta: np.ndarray, means: np.ndarray, new_means: np.ndarray, edge: np.ndarray
) -> np.ndarray:
    """Lines 17–22: average ϑ over each trial's active edge ``edge`` (B, 2), track the means.

    Parameters
    ----------
    theta : ndarray of float64, shape (B, N, M)
        ϑ(t).
    means : ndarray of float64, shape (B, N, M)
        Released means before the round.
    new_means : ndarray of float64, shape (B, N, M)
        Released means after the round.
    edge : ndarray of int64, shape (B, 2)
        Each trial's active edge.

    Returns
    -------
    ndarray of float64, shape (B, N, M)
        ϑ(t+1).
    """
    step = new_means - means
    new_theta = theta + step
    u_e, v_e = edge[:, 0], edge[:, 1]
    rows = np.arange(theta.shape[0])
    average = 0.5 * (theta[rows, u_e] + theta[rows, v_e])
    new_theta[rows, u_e] = average + step[rows, u_e]
    new_theta[rows, v_e] = average + step[rows, v_e]
    return new_theta
