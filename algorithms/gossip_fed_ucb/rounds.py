"""The opening of a batch of Gossip_UCB / Fed_UCB runs (Zhu et al. 2021, Alg. 1 and 4).

:func:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.run_gossip_fed_ucb` and ``run_gossip_ucb`` open a
batch (:func:`open_batch`: reward tables, active edges and policy uniforms drawn for the
whole horizon, releases opened) and then play its rounds
(:func:`fedpriv.algorithms.gossip_fed_ucb.fused.play_rounds`: choose the arms with the
confidence radius of :func:`confidence_radius`, pull and release, gossip). Every resolved
ambiguity is documented in that module.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment
from fedpriv.algorithms.gossip_fed_ucb.releases import open_gossip_fed_ucb_releases
from fedpriv.algorithms.networks.graphs import edge_array
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rngs
from fedpriv.privacy import Accountant, LaplaceTreeCounter
from fedpriv.privacy.calibrations import gossip_fed_ucb_scale
from fedpriv.privacy.checks import check_int_at_least

__all__ = ["OpenedBatch", "confidence_radius", "draw_active_edges", "open_batch", "pick_uniform"]


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


def pick_uniform(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the ``floor(u * count)``-th True entry along the last axis.

    Alg. 1 line 11's uniform pick from a set of arms, from one pre-drawn uniform per row.

    Parameters
    ----------
    mask : ndarray of bool, shape (..., n_arms)
        The arms to pick from (at least one True per row for a meaningful pick).
    u : ndarray of float64, shape ``mask.shape[:-1]``
        Uniforms in [0, 1).

    Returns
    -------
    ndarray of int64, shape ``mask.shape[:-1]``
        The picked arm of each row (0 where a row has no True entry).
    """
    count = mask.sum(axis=-1)
    rank = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
    return np.argmax(np.cumsum(mask, axis=-1) > rank[..., None], axis=-1)


def draw_active_edges(graph: nx.Graph, horizon: int, *, n_trials: int, seed) -> np.ndarray:
    """The active gossip edges of the runs at ``seed``: ``run.edges`` before running.

    Trial ``j`` draws from ``stream_rng(root, trial=j, stream=Stream.NETWORK)`` what
    :func:`~fedpriv.algorithms.networks.graphs.sample_active_edges` draws (one
    ``integers`` call of size ``horizon`` indexing :func:`edge_array`), exactly as
    :func:`run_gossip_fed_ucb` / :func:`run_gossip_ucb` do, so callers can find the last round
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
        Calibration mode (:func:`fedpriv.privacy.calibrations.gossip_fed_ucb_scale`).
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
    accountant, init, counter, n_out_of_bounds = open_gossip_fed_ucb_releases(
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
        scale=gossip_fed_ucb_scale(
            epsilon, T, mode=mode, log_base=log_base, publish_final=publish_final
        ),
        n_out_of_bounds=n_out_of_bounds,
    )
