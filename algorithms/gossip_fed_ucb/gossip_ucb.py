"""Gossip_UCB and Fed_UCB (Zhu, Zhu, Liu & Liu, "Federated Bandit: A Gossiping
Approach", SIGMETRICS 2021), vectorized over trials, agents and arms.

N agents on a connected graph pull one of M arms per round. Counts ñ are shared with
every neighbor each round (max-consensus, eq. 1); the mean estimates ϑ are gossiped
over one uniformly drawn edge per round (eq. 9, gradient tracking). Fed_UCB replaces
each agent's sample mean by a noisy mean from a per-(agent, arm) binary-tree counter
with Laplace node noise (Algorithms 2–4), released through :mod:`privacy`.

Resolved ambiguities (source in brackets)
----------------------------------------
* Eq. (1) as printed takes ``max{n_i(t), ñ_i(t)}``; Lemma 1 and Alg. 4 line 5 take
  the neighbors' ñ_j(t). We take ``max{n_i(t), ñ_j(t) : j ∈ N_i}`` (the neighbors'
  values of the previous round, double-buffered) [eq. (1), Lemma 1, Alg. 4 line 5].
* Line 6 tests ``n_{i,k}(t) < ñ_{i,k}(t) - N`` with ñ(t), the value *before* line 5's
  update, as printed [Alg. 1 lines 5–6]. ``n`` in lines 5, 6 and the radius is the
  pre-pull count [Alg. 1 line 4].
* The argmax of line 10 is taken after the loop over arms; ties and the uniform pick
  from 𝒜_i use one uniform draw per (agent, round) from the POLICY stream [Alg. 1
  lines 7–13].
* The initial pull's reward X(0) is part of the mean's numerator [eq. 2 vs init].
* ``log`` is natural in the confidence radii [eq. 11, 12: their log t and log n come
  from sub-Gaussian tails]; the tree's log base is the calibration's (see
  :mod:`fedpriv.privacy.calibrations`).
* Fed_UCB's noisy prefix sum is ``raw running sum + sum of memoised node noises``,
  equal to Alg. 3's sum of noisy partial sums (fewer float additions).

A batch is opened in :mod:`fedpriv.algorithms.gossip_fed_ucb.rounds` (its releases, opened
before round 1, in :mod:`fedpriv.algorithms.gossip_fed_ucb.releases`) and its rounds are
played in :mod:`fedpriv.algorithms.gossip_fed_ucb.fused`; ``rounds=r`` stops
a run after round ``r`` with the full run's outputs up to there (the algorithm is
causal), which is what end-to-end audits of early-round observables use.

Modes of Fed_UCB
----------------
``paper``: ε' = ε/⌈log T⌉ (log base a parameter), the initial pulls released raw
(Alg. 4 line 1; an ε = ∞ release of the round-0 records, charged as
``events.NonPrivate``), rewards fed unclipped (the synthetic experiment's Gaussian
rewards leave [0, 1]; counted in ``n_out_of_bounds``).
``corrected``: ε' = ε divided by the nodes of the view that hold one record
(⌈log2 T⌉, or ⌊log2 T⌋ + 1 with ``publish_final``), the initial pulls released with
their own ``Lap(1/ε')`` (a record of round 0 sits in that one release only), rewards
clipped to the declared [0, 1] before they enter any release.

The view
--------
Definition 1 protects "all possible outputs by Algorithm ℬ". Algorithm 4 has two
kinds: the messages, "agent i sends ϑ̃_{i,k}(t−1) to agent j" (line 19), and the
actions a_i(t), chosen on ϑ̃(t−1) + C̃(t) (line 9), with the counts ñ that follow the
actions (line 5), for t = 1..T. No line sends or acts on ϑ̃(T), so the noisy prefix
of round T reaches no output: the trees are charged for the prefixes 1..T−1 only
(``LaplaceTree.released_prefixes = T − 1``). The run still computes the round-T
estimate (``trace[..][T]``) as internal state, which reaches no output. Reading the
final estimate ϑ̃(T) as published (§4, "we also need to protect it in each τ = t,
t+1, ..., T steps"; §4.1, "⌈log t⌉ ε' ≤ ε" for every t ≤ T) is the second reading,
``publish_final=True``.
"""

from __future__ import annotations

import dataclasses
import math

import networkx as nx
import numpy as np
import pandas as pd
from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment
from fedpriv.algorithms.gossip_fed_ucb.fused import play_rounds
from fedpriv.algorithms.gossip_fed_ucb.releases import open_gossip_fed_ucb_releases
from fedpriv.algorithms.gossip_fed_ucb.rounds import (
    confidence_radius,
    draw_active_edges,
    open_batch,
)
from fedpriv.algorithms.networks.graphs import check_connected, neighbor_matrix
from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.privacy import Accountant
from fedpriv.privacy.calibrations import PAPER_LOG_BASES
from fedpriv.privacy.checks import check_epsilon, check_int_at_least

__all__ = [
    "MODES",
    "GossipRun",
    "confidence_radius",
    "draw_active_edges",
    "open_gossip_fed_ucb_releases",
    "run_gossip_fed_ucb",
    "run_gossip_ucb",
]

MODES = ("paper", "corrected")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GossipRun:
    """Result of a batch of Gossip_UCB / Fed_UCB runs.

    Attributes
    ----------
    algorithm : str
        ``"gossip-ucb"`` or ``"gossip-fed-ucb"``.
    actions : ndarray of int16, shape (n_trials, n_agents, rounds)
        ``actions[j, i, t-1]`` is ``a_i(t)`` of trial ``j``.
    horizon : int
        ``T``, which sets the noise calibration, the tree capacity and the radii.
    rounds : int
        Rounds simulated, ``1..rounds`` (``rounds <= horizon``; ``horizon`` unless the
        run was stopped early).
    gaps : ndarray of float64, shape (n_arms,)
        ``μ_1 - μ_k`` of the global means.
    counts : ndarray of int64, shape (n_trials, n_agents, n_arms)
        Pull counts after round ``rounds``, including the initial pull.
    accountant : Accountant or None
        Every release of the run (Fed_UCB only).
    epsilon, node_epsilon, scale : float
        Claimed total ε, per-node ε' and Laplace scale (Fed_UCB; ``inf``/``inf``/0 for
        Gossip_UCB).
    mode, log_base : str
    n_out_of_bounds : int
        Observations outside [0, 1] fed to the tree (paper mode) or clipped (corrected).
    edges : ndarray of int64, shape (n_trials, rounds, 2)
        The active gossip edge of each round.
    trace : dict of ndarray or None
        With ``record``: ``theta`` and ``means``, each of shape
        (rounds + 1, n_trials, n_agents, n_arms) (index 0 is the initialisation).
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
    horizon: int

    @property
    def rounds(self) -> int:
        """Rounds simulated (``horizon`` unless the run was stopped early)."""
        return int(self.actions.shape[-1])

    @property
    def regret(self) -> np.ndarray:
        """Per-round pseudo-regret ``μ_1 - μ_{a_i(t)}``, shape (n_trials, n_agents, rounds)."""
        return self.gaps[self.actions]

    @property
    def cumulative_regret(self) -> np.ndarray:
        """Cumulative pseudo-regret ``R_i(t)``, shape (n_trials, n_agents, rounds)."""
        return np.cumsum(self.regret, axis=-1)

    @property
    def final_regret(self) -> np.ndarray:
        """Each agent's cumulative pseudo-regret after the last round, (n_trials, n_agents)."""
        return self.cumulative_regret[..., -1]

    def regret_summary(self) -> pd.DataFrame:
        """Final per-agent regret averaged over agents: one row per trial."""
        final = self.cumulative_regret[..., -1]
        return pd.DataFrame({"trial": np.arange(final.shape[0]), "regret": final.mean(axis=1)})


def _validate_common(
    env: BanditEnvironment, graph: nx.Graph, horizon: int, n_trials: int
) -> np.ndarray:
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


def _simulate(
    env: BanditEnvironment,
    graph: nx.Graph,
    *,
    horizon: int,
    rounds: int | None,
    n_trials: int,
    seed,
    epsilon: float,
    private: bool,
    mode: str,
    log_base: str,
    noise_on_empty_nodes: bool,
    record: bool,
    secure_noise: bool = False,
    publish_final: bool = False,
) -> GossipRun:
    """One batch: open it (:func:`open_batch`), then rounds ``1..rounds`` of Alg. 1 / 4."""
    adjacency = _validate_common(env, graph, horizon, n_trials)
    T = horizon
    rounds = T if rounds is None else check_int_at_least("rounds", rounds, 0)
    if rounds > T:
        raise ValueError(f"`rounds` must be <= `horizon` = {T}, got {rounds}.")
    root = as_seed_sequence(seed)
    opened = open_batch(
        env,
        graph,
        root,
        horizon=T,
        n_trials=n_trials,
        epsilon=epsilon,
        private=private,
        mode=mode,
        log_base=log_base,
        noise_on_empty_nodes=noise_on_empty_nodes,
        rounds=rounds,
        secure_noise=secure_noise,
        publish_final=publish_final,
    )
    global_means = np.asarray(env.global_means, dtype=np.float64)
    actions, counts, trace = play_rounds(
        opened,
        adjacency,
        rounds=rounds,
        horizon=T,
        radius_epsilon=epsilon if private else math.inf,
        record=record,
    )
    return GossipRun(
        algorithm="gossip-fed-ucb" if private else "gossip-ucb",
        actions=actions,
        gaps=global_means.max() - global_means,
        counts=counts,
        accountant=opened.accountant,
        epsilon=epsilon if private else math.inf,
        node_epsilon=math.inf if opened.scale == 0 else 1.0 / opened.scale,
        scale=opened.scale,
        mode=mode if private else "",
        log_base=log_base if private else "",
        n_out_of_bounds=opened.n_out_of_bounds
        + (opened.counter.n_out_of_bounds if opened.counter is not None else 0),
        edges=opened.edges[:, :rounds],
        trace=trace,
        seed_entropy=int(root.entropy),
        horizon=T,
    )


def run_gossip_ucb(
    env: BanditEnvironment,
    graph: nx.Graph,
    *,
    horizon: int,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    record: bool = False,
    rounds: int | None = None,
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
    record : bool
        Keep ϑ and the means of every round (memory ``O(rounds * n_trials * N * M)``).
    rounds : int, optional
        Stop after round ``rounds`` (``0 <= rounds <= horizon``; default ``horizon``).
        Every random stream is drawn as for the whole horizon, ``horizon`` still sets
        the calibration and the radii, and the algorithm is causal (round ``t`` reads
        only rounds ``< t`` and round ``t``'s draws), so every output of rounds
        ``1..rounds`` equals the full run's at the same seed: an audit whose
        observable depends on the first rounds only stops there.

    Returns
    -------
    GossipRun

    Raises
    ------
    ValueError
        If ``horizon < 1``, ``n_trials < 1``, ``rounds`` is outside ``[0, horizon]``,
        the graph is disconnected or does not match ``env.n_agents``, or the rewards
        are not finite.
    """
    return _simulate(
        env,
        graph,
        horizon=horizon,
        rounds=rounds,
        n_trials=n_trials,
        seed=seed,
        epsilon=math.inf,
        private=False,
        mode="paper",
        log_base="2",
        noise_on_empty_nodes=False,
        record=record,
    )


def run_gossip_fed_ucb(
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
    record: bool = False,
    rounds: int | None = None,
    secure_noise: bool = False,
    publish_final: bool = False,
) -> GossipRun:
    """Run Fed_UCB (Zhu et al. 2021, Algorithm 4) inside a fresh :class:`Accountant`.

    The parameters not listed below are as in :func:`run_gossip_ucb`.

    Parameters
    ----------
    env : BanditEnvironment
        ``n_agents`` agents, ``n_arms`` arms (as in :func:`run_gossip_ucb`).
    graph : networkx.Graph
        Connected, nodes ``0..n_agents-1``.
    horizon : int
        ``T`` >= 1 rounds after the initial pull of every arm.
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
        (:mod:`fedpriv.privacy.mechanisms.secure_noise`; charged ``DiscreteLaplace`` and, per
        tree, ``SelfComposed(DiscreteLaplace, depth)``, the same ε).
    publish_final : bool
        Whether the final estimate ϑ̃(T) is an output too (module docstring, "The
        view"): the trees are then charged for the prefixes 1..T instead of 1..T−1,
        and the corrected calibration divides ε by their ``floor(log2 T) + 1`` nodes.
    n_trials : int
        Batch size (leading axis of every output), >= 1.
    seed : int or SeedSequence
        Root of the run's SeedSequence tree.
    record : bool
        Keep ϑ and the means of every round (as in :func:`run_gossip_ucb`).
    rounds : int, optional
        Stop after round ``rounds`` (``0 <= rounds <= horizon``; default ``horizon``),
        as in :func:`run_gossip_ucb`.

    Returns
    -------
    GossipRun
        ``accountant`` charges: per (trial, agent, arm) one ``LaplaceTree`` with key
        ``phase="stream"`` (its ``released_prefixes`` those of the view) and the
        initial-pull release with ``phase="init"``; the trees are opened (and charged)
        for the whole horizon even when ``rounds`` stops the run early, so the
        accountant's ε is the deployment's.

    Raises
    ------
    ValueError
        As :func:`run_gossip_ucb`, and on ε <= 0 or an unknown mode / log base.
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}.")
    if not isinstance(log_base, str):
        raise TypeError(
            f"`log_base` must be a str ('2', 'e' or '10'), got {type(log_base).__name__}."
        )
    if log_base not in PAPER_LOG_BASES:
        raise ValueError(f"`log_base` must be one of {sorted(PAPER_LOG_BASES)}, got {log_base!r}.")
    return _simulate(
        env,
        graph,
        horizon=horizon,
        rounds=rounds,
        n_trials=n_trials,
        seed=seed,
        epsilon=epsilon,
        private=True,
        mode=mode,
        log_base=log_base,
        noise_on_empty_nodes=noise_on_empty_nodes,
        record=record,
        secure_noise=bool(secure_noise),
        publish_final=bool(publish_final),
    )
