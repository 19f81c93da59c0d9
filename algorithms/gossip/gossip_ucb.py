"""Gossip_UCB and Fed_UCB (Zhu, Zhu, Liu & Liu, "Federated Bandit: A Gossiping
Approach", SIGMETRICS 2021), vectorized over trials, agents and arms.

N agents on a connected graph pull one of M arms per round. Counts ñ are shared with
every neighbor each round (max-consensus, eq. 1); the mean estimates ϑ are gossiped
over one uniformly drawn edge per round (eq. 9, gradient tracking). Fed_UCB replaces
each agent's sample mean by a noisy mean from a per-(agent, arm) binary-tree counter
with Laplace node noise (Algorithms 2–4), released through :mod:`privacy`.

Resolved ambiguities (source in brackets; gossip.md is the reference report)
---------------------------------------------------------------------------
* Eq. (1) as printed takes ``max{n_i(t), ñ_i(t)}``; Lemma 1 and Alg. 4 line 5 take
  the neighbors' ñ_j(t). We take ``max{n_i(t), ñ_j(t) : j ∈ N_i}`` (the neighbors'
  values of the previous round, double-buffered) [gossip.md §2.1].
* Line 6 tests ``n_{i,k}(t) < ñ_{i,k}(t) - N`` with ñ(t), the value *before* line 5's
  update, as printed [Alg. 1 lines 5–6]. ``n`` in lines 5, 6 and the radius is the
  pre-pull count [Alg. 1 line 4].
* The argmax of line 10 is taken after the loop over arms; ties and the uniform pick
  from 𝒜_i use one uniform draw per (agent, round) from the POLICY stream [§2.2 (a, d)].
* The initial pull's reward X(0) is part of the mean's numerator [eq. 2 vs init].
* ``log`` is natural in the confidence radii (eq. 11, 12) [§8 item 1]; the tree's
  log base is the calibration's (see :mod:`fedpriv.privacy.calibration`).
* Fed_UCB's noisy prefix sum is ``raw running sum + sum of memoised node noises``,
  equal to Alg. 3's sum of noisy partial sums (fewer float additions).

Modes of Fed_UCB
----------------
``paper``: ε' = ε/⌈log T⌉ (log base a parameter), the initial pulls released raw
(Alg. 4 line 1; an ε = ∞ release of the round-0 records, charged as
``events.NonPrivate``), rewards fed unclipped (the synthetic experiment's Gaussian
rewards leave [0, 1]; counted in ``n_out_of_bounds``).
``corrected``: ε' = ε/(⌊log2 T⌋ + 1), the initial pulls released with their own
``Lap(1/ε')`` (a record of round 0 sits in that one release only), rewards clipped to
the declared [0, 1] before they enter any release.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
import pandas as pd

from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment
from fedpriv.algorithms.networks.graphs import check_connected, neighbor_matrix, sample_active_edges
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng, stream_rngs
from fedpriv.privacy import Accountant, LaplaceTreeCounter, laplace_release, raw_release
from fedpriv.privacy._checks import check_epsilon, check_int_at_least
from fedpriv.privacy.calibration import PAPER_LOG_BASES, fed_ucb_scale

__all__ = [
    "MODES",
    "GossipRun",
    "confidence_radius",
    "run_fed_ucb",
    "run_gossip_ucb",
]

MODES = ("paper", "corrected")
_PHASE_INIT, _PHASE_STREAM = "init", "stream"


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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GossipRun:
    """Result of a batch of Gossip_UCB / Fed_UCB runs.

    Attributes
    ----------
    algorithm : str
        ``"gossip-ucb"`` or ``"gossip-fed-ucb"``.
    actions : ndarray of int16, shape (n_trials, n_agents, horizon)
        ``actions[j, i, t-1]`` is ``a_i(t)`` of trial ``j``.
    gaps : ndarray of float64, shape (n_arms,)
        ``μ_1 - μ_k`` of the global means.
    counts : ndarray of int64, shape (n_trials, n_agents, n_arms)
        Final pull counts, including the initial pull.
    accountant : Accountant or None
        Every release of the run (Fed_UCB only).
    epsilon, node_epsilon, scale : float
        Claimed total ε, per-node ε' and Laplace scale (Fed_UCB; ``inf``/``inf``/0 for
        Gossip_UCB).
    mode, log_base : str
    n_out_of_bounds : int
        Observations outside [0, 1] fed to the tree (paper mode) or clipped (corrected).
    edges : ndarray of int64, shape (n_trials, horizon, 2)
        The active gossip edge of each round.
    trace : dict of ndarray or None
        With ``record_trace``: ``theta`` and ``means``, each of shape
        (horizon + 1, n_trials, n_agents, n_arms) (index 0 is the initialisation).
    seed_entropy : int
        ``root.entropy`` of the run's SeedSequence.
    """

    algorithm: str
    actions: np.ndarray
    gaps: np.ndarray
    counts: np.ndarray
    accountant: Accountant | None
    epsilon: float
    node_epsilon: float
    scale: float
    mode: str
    log_base: str
    n_out_of_bounds: int
    edges: np.ndarray
    trace: dict | None
    seed_entropy: int

    @property
    def regret(self) -> np.ndarray:
        """Per-round pseudo-regret ``μ_1 - μ_{a_i(t)}``, shape (n_trials, n_agents, horizon)."""
        return self.gaps[self.actions]

    @property
    def cumulative_regret(self) -> np.ndarray:
        """Cumulative pseudo-regret ``R_i(t)``, shape (n_trials, n_agents, horizon)."""
        return np.cumsum(self.regret, axis=-1)

    def regret_summary(self) -> pd.DataFrame:
        """Final per-agent regret averaged over agents: one row per trial."""
        final = self.cumulative_regret[..., -1]
        return pd.DataFrame(
            {"trial": np.arange(final.shape[0]), "regret": final.mean(axis=1)}
        )


def _validate_common(env: BanditEnvironment, graph: nx.Graph, horizon: int, n_trials: int) -> np.ndarray:
    horizon = check_int_at_least("horizon", horizon, 1)
    check_int_at_least("n_trials", n_trials, 1)
    check_connected(graph)
    if graph.number_of_nodes() != env.n_agents:
        raise ValueError(
            f"`graph` has {graph.number_of_nodes()} nodes but the environment has "
            f"{env.n_agents} agents."
        )
    if env.n_agents < 2:
        raise ValueError(f"`n_agents` must be >= 2, got {env.n_agents}.")
    return neighbor_matrix(graph)


def _reward_tables(env: BanditEnvironment, horizon: int, n_trials: int, root) -> np.ndarray:
    tables = np.stack(
        [
            env.sample_rewards(horizon, rng=stream_rng(root, trial=j, stream=Stream.ENVIRONMENT))
            for j in range(n_trials)
        ]
    )
    expected = (n_trials, env.n_agents, horizon + 1, env.n_arms)
    if tables.shape != expected:
        raise ValueError(
            f"`env.sample_rewards` must return shape {expected[1:]} per trial, got "
            f"{tables.shape[1:]}."
        )
    if not np.all(np.isfinite(tables)):
        raise ValueError("`env` rewards must be finite; the environment produced NaN or inf.")
    return tables


def _pick(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index of the ``floor(u * count)``-th True entry along the last axis."""
    count = mask.sum(axis=-1)
    rank = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
    return np.argmax(np.cumsum(mask, axis=-1) > rank[..., None], axis=-1)


def open_fed_ucb_releases(
    initial_rewards: np.ndarray,
    *,
    horizon: int,
    epsilon: float,
    mode: str,
    log_base: str,
    rng,
    noise_on_empty_nodes: bool = False,
    reward_bounds: tuple[float, float] | None = (0.0, 1.0),
    secure_noise: bool = False,
) -> tuple[Accountant, np.ndarray, LaplaceTreeCounter, int]:
    """Open Fed_UCB's releases: a fresh accountant, the initial-pull release, the trees.

    This is everything Fed_UCB charges before round 1, so calling it alone gives the
    accountant's view of a deployment (used for horizons too long to simulate).

    Parameters
    ----------
    initial_rewards : ndarray of float64, shape (n_trials, n_agents, n_arms)
        ``X_{i,k}(0)`` of every trial.
    horizon, epsilon, mode, log_base, noise_on_empty_nodes, secure_noise
        As in :func:`run_fed_ucb`.
    rng : object ndarray of Generator, shape (n_trials, n_agents)
        Privacy-noise streams.
    reward_bounds : (float, float) or None
        The environment's declared reward support (``None``: unbounded). In paper
        mode rewards enter the tree unclipped, so if the support is not inside
        [0, 1] the tree's sensitivity of 1 does not hold and no finite ε does: the
        stream cells are then also charged ``events.NonPrivate`` (gossip.md §3.4
        item 4). The decision uses the declared support, never the realised data.

    Returns
    -------
    accountant : Accountant
        Disjoint levels ``("trial", "agent", "arm", "phase")``; phase ``"init"`` holds
        the round-0 records, ``"stream"`` the rounds ``1..T`` (Definition 1's stream).
    initial_means : ndarray, shape (n_trials, n_agents, n_arms)
        ``X̃(0)`` as released: raw (paper mode, ε = ∞) or with ``Lap(b)`` (corrected).
    counter : LaplaceTreeCounter
        One tree per (trial, agent, arm), capacity ``horizon``.
    n_clipped : int
        Initial rewards outside [0, 1] that were clipped (corrected mode).
    """
    B, N, M = initial_rewards.shape
    scale = fed_ucb_scale(epsilon, horizon, mode=mode, log_base=log_base)
    accountant = Accountant(disjoint=("trial", "agent", "arm", "phase"))
    keys = {
        "trial": np.arange(B)[:, None, None],
        "agent": np.arange(N)[None, :, None],
        "arm": np.arange(M)[None, None, :],
    }
    x0 = initial_rewards
    n_clipped = 0
    if mode == "corrected":
        n_clipped = int(((x0 < 0.0) | (x0 > 1.0)).sum())
        x0 = np.clip(x0, 0.0, 1.0)
    if mode == "corrected" and scale > 0:
        init = laplace_release(
            x0, scale=scale, l1_sensitivity=1.0, accountant=accountant,
            keys={**keys, "phase": _PHASE_INIT}, rng=rng, secure=secure_noise,
        )
    else:
        reason = (
            "initial pulls released raw (Zhu et al. Alg. 4 line 1)"
            if scale > 0 else "epsilon = inf: no noise"
        )
        init = raw_release(
            x0, accountant=accountant, keys={**keys, "phase": _PHASE_INIT}, reason=reason
        )
    if mode == "paper" and (
        reward_bounds is None or reward_bounds[0] < 0.0 or reward_bounds[1] > 1.0
    ):
        raw_release(
            np.zeros((B, N, M)), accountant=accountant, keys={**keys, "phase": _PHASE_STREAM},
            reason="rewards outside the declared [0, 1] fed unclipped (gossip.md §3.4 item 4)",
        )
    counter = LaplaceTreeCounter(
        stream_shape=(B, N, M), horizon=horizon, scale=scale, accountant=accountant,
        keys={**keys, "phase": _PHASE_STREAM}, rng=rng,
        out_of_bounds="clip" if mode == "corrected" else "ignore",
        noise_on_empty_nodes=noise_on_empty_nodes, secure=secure_noise,
    )
    return accountant, init, counter, n_clipped


def _simulate(
    env: BanditEnvironment,
    graph: nx.Graph,
    *,
    horizon: int,
    n_trials: int,
    seed,
    epsilon: float,
    private: bool,
    mode: str,
    log_base: str,
    noise_on_empty_nodes: bool,
    record_trace: bool,
    secure_noise: bool = False,
) -> GossipRun:
    adjacency = _validate_common(env, graph, horizon, n_trials)
    root = as_seed_sequence(seed)
    B, N, M, T = n_trials, env.n_agents, env.n_arms, horizon
    rewards = _reward_tables(env, T, B, root)
    edges = np.stack(
        [
            sample_active_edges(graph, T, rng=stream_rng(root, trial=j, stream=Stream.NETWORK))
            for j in range(B)
        ]
    )
    policy = stream_rngs(root, n_trials=B, n_agents=N, stream=Stream.POLICY)
    uniforms = np.stack([[g.random(T) for g in row] for row in policy])  # (B, N, T)
    global_means = np.asarray(env.global_means, dtype=np.float64)
    gaps = global_means.max() - global_means
    b_idx = np.arange(B)[:, None]
    n_idx = np.arange(N)[None, :]

    accountant = None
    counter = None
    scale = fed_ucb_scale(epsilon, T, mode=mode, log_base=log_base) if private else 0.0
    n_out_of_bounds = 0
    x0 = rewards[:, :, 0, :]
    if private:
        noise_rngs = stream_rngs(root, n_trials=B, n_agents=N, stream=Stream.NOISE)
        accountant, init, counter, n_out_of_bounds = open_fed_ucb_releases(
            x0, horizon=T, epsilon=epsilon, mode=mode, log_base=log_base, rng=noise_rngs,
            noise_on_empty_nodes=noise_on_empty_nodes, reward_bounds=env.reward_bounds,
            secure_noise=secure_noise,
        )
        running = None
    else:
        init = x0.copy()
        running = np.zeros((B, N, M))

    counts = np.ones((B, N, M), dtype=np.int64)
    n_tilde = np.ones((B, N, M), dtype=np.int64)
    means = init / counts
    theta = means.copy()
    actions = np.empty((B, N, T), dtype=np.int16)
    neighbor_mask = adjacency[None, :, :, None]
    trace = None
    if record_trace:
        trace = {"theta": np.empty((T + 1, B, N, M)), "means": np.empty((T + 1, B, N, M))}
        trace["theta"][0], trace["means"][0] = theta, means

    for t in range(1, T + 1):
        # Alg. 1 lines 5-6: consistency set with ñ(t), then ñ(t+1) from neighbors' ñ(t).
        behind = counts < n_tilde - N
        neighbors_max = np.where(neighbor_mask, n_tilde[:, None, :, :], 0).max(axis=2)
        n_tilde = np.maximum(counts, neighbors_max)
        forced = behind.any(axis=-1)
        u = uniforms[:, :, t - 1]
        # Lines 7-13: UCB argmax (uniform tie-break) or a uniform pick from 𝒜_i.
        q = theta + confidence_radius(
            counts, t, n_agents=N, horizon=T, epsilon=epsilon if private else math.inf
        )
        arm = q.argmax(axis=-1)
        best = q == np.take_along_axis(q, arm[..., None], axis=-1)
        if best.sum(axis=-1).max() > 1:  # a tie somewhere: break it uniformly
            arm = _pick(best, u)
        if forced.any():
            arm = np.where(forced, _pick(behind, u), arm)
        actions[:, :, t - 1] = arm
        pulled = arm[..., None] == np.arange(M)
        reward = rewards[b_idx, n_idx, t, arm]
        counts += pulled
        # Line 14/16: the pulled arm's (noisy) mean; other arms keep theirs (Alg. 4 l. 17).
        if private:
            counter.step(np.where(pulled, reward[..., None], 0.0), pulled)
            total = counter.release(pulled)
        else:
            running += np.where(pulled, reward[..., None], 0.0)
            total = running
        new_means = np.where(pulled, (init + np.where(pulled, total, 0.0)) / counts, means)
        # Lines 17-22: gossip over the active edge, normal update elsewhere.
        step = new_means - means
        new_theta = theta + step
        u_e, v_e = edges[:, t - 1, 0], edges[:, t - 1, 1]
        rows = np.arange(B)
        average = 0.5 * (theta[rows, u_e] + theta[rows, v_e])
        new_theta[rows, u_e] = average + step[rows, u_e]
        new_theta[rows, v_e] = average + step[rows, v_e]
        theta, means = new_theta, new_means
        if trace is not None:
            trace["theta"][t], trace["means"][t] = theta, means

    if counter is not None:
        n_out_of_bounds += counter.n_out_of_bounds
    return GossipRun(
        algorithm="gossip-fed-ucb" if private else "gossip-ucb",
        actions=actions,
        gaps=gaps,
        counts=counts,
        accountant=accountant,
        epsilon=epsilon if private else math.inf,
        node_epsilon=math.inf if scale == 0 else 1.0 / scale,
        scale=scale,
        mode=mode if private else "",
        log_base=log_base if private else "",
        n_out_of_bounds=n_out_of_bounds,
        edges=edges,
        trace=trace,
        seed_entropy=int(root.entropy),
    )


def run_gossip_ucb(
    env: BanditEnvironment,
    graph: nx.Graph,
    *,
    horizon: int,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    record_trace: bool = False,
) -> GossipRun:
    """Run Gossip_UCB (Zhu et al. 2021, Algorithm 1) for ``n_trials`` independent trials.

    Parameters
    ----------
    env : BanditEnvironment
        ``n_agents`` agents, ``n_arms`` arms; one reward table per trial is drawn from
        the trial's ENVIRONMENT stream.
    graph : networkx.Graph
        Connected, nodes ``0..n_agents-1``.
    horizon : int
        ``T`` >= 1 rounds after the initial pull of every arm.
    n_trials : int
        Batch size (leading axis of every output).
    seed : int or SeedSequence
        Root of the run's SeedSequence tree.
    record_trace : bool
        Keep ϑ and the means of every round (memory ``O(T * n_trials * N * M)``).

    Returns
    -------
    GossipRun

    Raises
    ------
    ValueError
        If ``horizon < 1``, ``n_trials < 1``, the graph is disconnected or does not
        match ``env.n_agents``, or the rewards are not finite.
    """
    return _simulate(
        env, graph, horizon=horizon, n_trials=n_trials, seed=seed, epsilon=math.inf,
        private=False, mode="paper", log_base="2", noise_on_empty_nodes=False,
        record_trace=record_trace,
    )


def run_fed_ucb(
    env: BanditEnvironment,
    graph: nx.Graph,
    *,
    horizon: int,
    epsilon: float,
    mode: str = "corrected",
    log_base: str = "2",
    noise_on_empty_nodes: bool = False,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    record_trace: bool = False,
    secure_noise: bool = False,
) -> GossipRun:
    """Run Fed_UCB (Zhu et al. 2021, Algorithm 4) inside a fresh :class:`Accountant`.

    Parameters
    ----------
    epsilon : float
        Target ε per agent's reward stream, in (0, inf]; ``inf`` runs the private code
        path without noise. In ``paper`` mode that is exactly Gossip_UCB (Zhu et al.
        §4.1: "Gossip_UCB is a special case of Fed_UCB when ε is infinity"); in
        ``corrected`` mode it is Gossip_UCB on rewards clipped to [0, 1], since clipping
        is part of the corrected algorithm whatever ε is.
    mode : {"paper", "corrected"}
        See the module docstring.
    log_base : {"2", "e", "10"}
        Base of the paper's ⌈log T⌉ (paper mode only).
    noise_on_empty_nodes : bool
        Algorithm 3's literal "always add noise" instead of the text's "only on nodes
        with observations".
    secure_noise : bool
        Exact discrete Laplace noise on a grid instead of floating-point Laplace
        noise, for the initial release and the trees
        (:mod:`fedpriv.privacy.secure_noise`; charged ``DiscreteLaplace`` and, per
        tree, ``SelfComposed(DiscreteLaplace, depth)``, the same ε).
    Other parameters as in :func:`run_gossip_ucb`.

    Returns
    -------
    GossipRun
        ``accountant`` charges: per (trial, agent, arm) one ``LaplaceTree`` with key
        ``phase="stream"`` and the initial-pull release with ``phase="init"``.

    Raises
    ------
    ValueError
        As :func:`run_gossip_ucb`, and on ε <= 0 or an unknown mode / log base.
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}.")
    if not isinstance(log_base, str):
        raise TypeError(f"`log_base` must be a str ('2', 'e' or '10'), got {type(log_base).__name__}.")
    if log_base not in PAPER_LOG_BASES:
        raise ValueError(f"`log_base` must be one of {sorted(PAPER_LOG_BASES)}, got {log_base!r}.")
    return _simulate(
        env, graph, horizon=horizon, n_trials=n_trials, seed=seed, epsilon=epsilon,
        private=True, mode=mode, log_base=log_base,
        noise_on_empty_nodes=noise_on_empty_nodes, record_trace=record_trace,
        secure_noise=bool(secure_noise),
    )

