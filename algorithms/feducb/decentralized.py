"""Decentralized FedUCB (Dubey & Pentland, NeurIPS 2020, Alg. 3), vectorized over trials.

M agents on a connected graph G play the federated linear bandit of
:mod:`fedpriv.algorithms.environments.linear` without a controller. A message lives γ hops and moves
one hop per round (the LOCAL protocol, §4.2), so a message of ``u`` created
at round ``t0`` reaches ``v`` at ``t0 + d(u, v)`` iff ``1 <= d(u, v) <= γ``. Agents
exchange synchronisation data only inside the cliques of a clique cover of the power
graph G_γ (edge iff ``d <= γ``), and keep γ parameter sets used round-robin.

Round ``t`` (0-based; the paper's ``t + 1``) for every agent ``i``, with set
``g = t mod γ`` (Alg. 3 line 4's ``t' mod γ``, read as ``((t'-1) mod γ) + 1 ∈ [γ]``):

1. messages in flight move one hop; those arriving are "received at time t";
2. act optimistically on ``V = S_g + U_g``, ``ũ = s_g + ū_g`` (Alg. 1 lines 4–10);
3. the test of line 6, ``log det(V + x xᵀ + M(ρ_max − ρ_min) I) − log det S_g >=
   D / ((Δt_{i,g} + 1)(1 + L²))``, makes a **request**: the agent privatizes its own
   set g and broadcasts ``Synchronize(i, g, t)`` (lines 7–11);
4. received messages from the same clique with ``t' >= t − γ`` (lines 12–24): a
   request for set ``g'`` makes the agent privatize ``Q_{g'}`` and broadcast its
   release; a release ``(Û, û)`` of peer ``j`` replaces the stored latest release of
   ``j`` for set ``g'``.

Readings of Alg. 3 (fedpriv's; the numbers are stable labels of the readings)
----------------------------------------------------------------------------------
* (2, 3) **Per-peer latest-release storage.** Each release is a peer's noisy
  *cumulative* statistic, so agent ``i`` stores the latest accepted release of each
  clique peer ``j`` (its own included) and ``S_g = Σ_{j ∈ C(i)} latest_j``; a peer
  not yet heard from counts as ``ρ_min I`` (so ``S_g`` starts at ``|C(i)| ρ_min I``,
  the regulariser of the proof of Thm. 4). Storage is by reference: every release is
  one immutable row of :attr:`fedpriv.algorithms.feducb.network.DecentralizedTranscript.release_gram`, and
  ``latest[b, i, j, g]`` is its id.
* (4) The requester privatizes and stores its own set g too (else its data would
  never reach S).
* (5) ``respond="receipt"`` (default): peers respond when the request arrives (the
  pseudocode). ``respond="next_use"``: at the end of the first round >= the arrival
  whose set is ``g'`` (the proof: "at time t + γ each agent in C broadcasts"); then
  a tree receives at most one leaf per use of its set, ``<= ⌈T/γ⌉`` leaves.
  Several requests for one set in one round make one release.
* (6) A release of set g resets ``U_g, ū_g, Q_g`` and ``Δt_{i,g}`` (Alg. 1's
  sync-branch resets). ``Δt_{i,g}`` counts the uses of set g since the last release.
* (7) The clique cover is precomputed (:func:`fedpriv.algorithms.feducb.network.clique_cover`,
  greedy colouring of the complement of G_γ), or given by the caller.
* (8) Messages carry (sender, set, time, hops); acceptance needs ``t' >= t − γ``.
* (10) Only line 6's test is used (not Alg. 1's line 12 as well).
* **β**: Prop. 2 with the regulariser of the agent's clique,
  ``σ sqrt(2 ln(2/α) + log det V − d ln(|C(i)| ρ_min)) + privacy terms`` (privacy
  terms with M, Remark 6 "Discussion"), or a constant (``beta="tuned"``).
* **D**: Thm. 1's value on one subsequence, ``recommended_threshold`` with horizon
  ``⌈T/γ⌉`` (the proof of Thm. 4 runs each (clique, subsequence) as a centralized
  instance of ``T/γ`` rounds); line 6 divides it by ``1 + L²``.

Privacy (Remark 5, 6 and "Discussion")
--------------------------------------
**One Privatizer per (agent, set)** (Remark 5: "maintain γ partial sums"), each
of depth ``m = 1 + ⌈log2 ⌈T/γ⌉⌉`` and calibrated by
:func:`fedpriv.algorithms.feducb.privatizer.privatizer_calibration` with ``n = ⌈T/γ⌉`` (the extra,
unexplained ``log γ`` of Remark 6 in Λ and κ is a utility term and is not modelled).
A record ``(x_{i,t}, y_{i,t})`` enters only tree ``(i, t mod γ)``, so the accountant
declares ``subset`` a disjoint level and composes the γ trees of an agent in
**parallel** (fedpriv's derivation: the γ sets' rounds are disjoint; the paper's ``log γ`` surcharge is then
conservative). With ``respond="receipt"`` a tree can receive more leaves than
``⌈T/γ⌉``; its capacity is enforced (``on_capacity``). As in centralized FedUCB, the
request decisions depend on raw data and are charged as ``events.NonPrivate``
(channel ``"sync-timing"``). ``epsilon = inf`` runs the same protocol without noise
(``S = λ I + Σ_j U_j``, raw releases charged as NonPrivate).

Fixed schedule (``schedule="fixed"``, ``sync_every = B``)
--------------------------------------------------------
Alg. 2 line 2 ("if communication rounds n are fixed a priori") applied to Alg. 3, as
:func:`fedpriv.algorithms.feducb.centralized.run_feducb_fixed` does for Alg. 1 (Zhou &
Chowdhury's data-independent schedule): line 6's test is replaced by a clock. At the
end of rounds ``B-1, 2B-1, ...`` every agent privatizes **every** parameter set
(its ``Q_g`` since the set's last release) and broadcasts the releases; peers store
them as above. Readings: (i) every set, not only the set in use, so that no set is
starved when ``B`` is a multiple of γ (each set's statistic then lags its own data
by at most ``B`` rounds); (ii) no ``Synchronize`` request is sent and none is
answered: every clique member follows the same clock, so a request would only ask
peers for what they release anyway (a response would be a second leaf with no new
data). Each tree receives exactly ``n = max(1, ⌊T/B⌋)`` leaves, known a priori, so
``m = 1 + ⌈log2 n⌉`` and capacity is never exceeded. Every release time is a
function of ``(B, T)`` and the graph only, so no sync-timing channel is charged; the
Privatizer's releases are the only data-dependent messages. As in the centralized
fixed schedule, an agent's use of its own raw data between releases (Alg. 3 line 5 runs
Alg. 1 line 4, ``V^(g) ← S^(g) + U^(g)``) lets one changed pair move every later
set-g pair of its batch, so each (agent, set) leaf is charged for ``⌈B/γ⌉`` pairs
(:mod:`fedpriv.algorithms.feducb.adaptivity`); ``mechanism_epsilon`` keeps the
one-pair price.

Code: :func:`run_feducb_decentralized` validates (``_check_setup``), calibrates
(``_calibrate``) and plays the rounds with
:class:`fedpriv.algorithms.feducb.decentralized_protocol.DecentralizedProtocol`, one
method per step above.

Speed: a refreshed (agent, set) is Cholesky-factorised at once (log-determinants for
the test), and its ``V^{-1}``, ``W^{-1}`` are formed when the set is next used, so a
set refreshed several times between two uses is inverted once (same values).

Length: one algorithm (Alg. 3): its two entry points, their argument checks and the
calibration; the rounds themselves are in ``decentralized_protocol``.
"""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.feducb.adaptivity import leaf_reach
from fedpriv.algorithms.feducb.decentralized_protocol import (
    SCHEDULES,
    SYNC_TIMING_REASON,
    DecentralizedProtocol,
)
from fedpriv.algorithms.feducb.network import check_clique_cover, clique_cover, power_graph
from fedpriv.algorithms.feducb.oful import iterate_rounds
from fedpriv.algorithms.feducb.privatizer import PRIVATIZER_CALIBRATIONS, privatizer_calibration
from fedpriv.algorithms.feducb.run import DecentralizedFedUCBRun
from fedpriv.algorithms.feducb.sync import recommended_threshold
from fedpriv.algorithms.networks.graphs import check_connected, neighbor_matrix
from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.privacy.checks import (
    check_epsilon,
    check_int_at_least,
    check_nonnegative,
    check_positive,
)

__all__ = [
    "BETA_CHOICES",
    "ON_CAPACITY",
    "RESPOND",
    "SCHEDULES",
    "SYNC_TIMING_REASON",
    "decentralized_run_in_world",
    "run_feducb_decentralized",
]

#: When peers answer a request: on arrival (Alg. 3) or at the next use of the set (proof).
RESPOND = ("receipt", "next_use")
#: β: Prop. 2 of the full text [H], of the NeurIPS text [P], or a constant.
BETA_CHOICES = ("H", "P", "tuned")
#: A release past a tree's capacity raises, or that (agent, set) stops releasing.
ON_CAPACITY = ("raise", "stop")


def run_feducb_decentralized(
    tables: LinearBanditTables,
    graph: nx.Graph,
    *,
    gamma: int,
    epsilon: float,
    delta: float,
    schedule: str = "adaptive",
    sync_every: int | None = None,
    threshold: float | None = None,
    mode: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    respond: str = "receipt",
    cover: Any = None,
    regularizer: float = 1.0,
    failure_probability: float = 0.1,
    on_capacity: str = "raise",
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
    secure_noise: bool = False,
) -> DecentralizedFedUCBRun:
    """Decentralized FedUCB (Alg. 3 + one Alg. 2 Privatizer per agent and set).

    Parameters
    ----------
    tables : LinearBanditTables
        ``n_trials`` worlds with ``n_agents`` agents.
    graph : networkx.Graph
        Connected communication graph on nodes ``0..n_agents-1``.
    gamma : int
        Message life / delay γ >= 1 (also the number of parameter sets).
    epsilon, delta : float
        The claim ((ε, δ) per agent's release streams); ``epsilon = inf`` runs
        without noise (``delta`` ignored).
    schedule : {"adaptive", "fixed"}
        ``"adaptive"``: Alg. 3's line-6 requests; ``"fixed"``: every agent releases
        every set at the end of rounds ``B-1, 2B-1, ...`` (module docstring).
    sync_every : int, optional
        ``B >= 1``, required with ``schedule="fixed"`` (and only then).
    threshold : float, optional
        ``D >= 0`` of line 6 (module docstring for the default); 0 requests every use.
        Adaptive schedule only.
    mode : {"paper", "corrected", "exact"}
        The Privatizers' noise calibration: Alg. 2 line 5 as written, corrected, or
        exact (as in :func:`fedpriv.algorithms.feducb.centralized.run_feducb`;
        :mod:`fedpriv.privacy.mechanisms.matrix_tree`).
    beta : {"H", "P", "tuned"}
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    respond : {"receipt", "next_use"}
        When peers answer a request (module docstring); adaptive schedule only.
    cover : sequence of sequence of int, optional
        Clique cover of G_γ to use; default :func:`clique_cover`.
    regularizer : float
        ``λ`` > 0 of the non-private run (``S = λ I + Σ_j U_j``).
    failure_probability : float
        α of Prop. 2 and 4, in (0, 1).
    on_capacity : {"raise", "stop"}
        A release past a tree's capacity raises CapacityExceededError, or that
        (agent, set) stops releasing (its peers keep its last release).
    record : bool
        Keep the :class:`~fedpriv.algorithms.feducb.network.DecentralizedTranscript`.
    seed : int or SeedSequence
        Root of the noise streams ``(trial, 0, agent, Stream.NOISE)`` (one generator per
        (trial, agent, set) below it; an audit's second world:
        :func:`fedpriv.algorithms.feducb.worlds.run_in_world`).
    secure_noise : bool
        Exact integer noise on a grid for every Privatizer tree (as in
        :func:`fedpriv.algorithms.feducb.centralized.run_feducb`); ignored without noise.

    Returns
    -------
    DecentralizedFedUCBRun
        :class:`fedpriv.algorithms.feducb.run.DecentralizedFedUCBRun`.

    Raises
    ------
    ValueError
        If ``gamma < 1``, the graph is disconnected or has the wrong number of nodes,
        a cover is not a clique partition of G_γ, ``schedule`` is unknown, ``sync_every``
        is missing, < 1 or given with the adaptive schedule, ``threshold`` is given
        with the fixed one, or a parameter is out of range.
    CapacityExceededError
        With ``on_capacity="raise"``, a tree asked for a leaf past its capacity.
    """
    return decentralized_run_in_world(
        tables,
        graph,
        side=0,
        gamma=gamma,
        epsilon=epsilon,
        delta=delta,
        schedule=schedule,
        sync_every=sync_every,
        threshold=threshold,
        mode=mode,
        beta=beta,
        beta_value=beta_value,
        respond=respond,
        cover=cover,
        regularizer=regularizer,
        failure_probability=failure_probability,
        on_capacity=on_capacity,
        record=record,
        seed=seed,
        secure_noise=secure_noise,
    )


def decentralized_run_in_world(
    tables: LinearBanditTables,
    graph: nx.Graph,
    *,
    side: int,
    gamma: int,
    epsilon: float,
    delta: float,
    schedule: str,
    sync_every: int | None,
    threshold: float | None,
    mode: str,
    beta: str,
    beta_value: float | None,
    respond: str,
    cover: Any,
    regularizer: float,
    failure_probability: float,
    on_capacity: str,
    record: bool,
    seed: int | np.random.SeedSequence,
    secure_noise: bool,
    until_first_sync: bool = False,
) -> DecentralizedFedUCBRun:
    """:func:`run_feducb_decentralized` with its noise streams at ``side``.

    Behind :func:`fedpriv.algorithms.feducb.worlds.run_in_world`; at ``side = 0`` it is
    exactly :func:`run_feducb_decentralized`, whose arguments it takes.

    Parameters
    ----------
    tables, graph, gamma, epsilon, delta, schedule, sync_every, threshold : object
    mode, beta, beta_value, respond, cover, regularizer, failure_probability : object
    on_capacity, record, seed, secure_noise : object
    side : int
        The world whose privacy-noise streams are drawn (0 = D, 1 = D'), >= 0.
    until_first_sync : bool
        Stop once every trial has sent its first Synchronize request (adaptive only).

    Returns
    -------
    DecentralizedFedUCBRun

    Raises
    ------
    ValueError
        If ``until_first_sync`` is set with a schedule other than ``"adaptive"``, or
        for any argument :func:`run_feducb_decentralized` refuses.
    """
    calibration = mode
    if until_first_sync and schedule != "adaptive":
        raise ValueError("`until_first_sync` stops at requests: schedule='adaptive' only.")
    setup = _check_setup(
        tables,
        graph,
        gamma=gamma,
        epsilon=epsilon,
        schedule=schedule,
        sync_every=sync_every,
        threshold=threshold,
        respond=respond,
        beta=beta,
        beta_value=beta_value,
        on_capacity=on_capacity,
        calibration=calibration,
        cover=cover,
        side=side,
    )
    setup["secure_noise"] = bool(secure_noise)
    noise = _calibrate(
        setup,
        epsilon=setup["epsilon"],
        delta=delta,
        threshold=threshold,
        calibration=calibration,
        regularizer=regularizer,
        failure_probability=failure_probability,
    )
    root = as_seed_sequence(seed)
    protocol = DecentralizedProtocol(
        setup, noise, root=root, record=record, failure_probability=failure_probability
    )
    played = tables.horizon
    for t, contexts, rewards, means in iterate_rounds(tables):
        protocol.play_round(t, contexts, rewards, means)
        if until_first_sync and protocol.counts["requests"].all():
            played = t + 1
            break
    fields = protocol.outcome(
        delta=delta, failure_probability=failure_probability, calibration=calibration
    )
    if played < tables.horizon:  # the rounds after are not played (worlds.py)
        fields["setting"]["rounds_played"] = played
        fields["regret_curve"][:, played:] = np.nan
    return DecentralizedFedUCBRun(
        algorithm="feducb-decentralized", **fields, seed_entropy=int(root.entropy)
    )


def _check_setup(
    tables,
    graph,
    *,
    gamma,
    epsilon,
    schedule,
    sync_every,
    threshold,
    respond,
    beta,
    beta_value,
    on_capacity,
    calibration,
    cover,
    side,
) -> dict:
    """Validate the arguments; return the setup (graph structure, schedule, options)."""
    if not isinstance(tables, LinearBanditTables):
        raise TypeError(f"`tables` must be LinearBanditTables, got {type(tables).__name__}.")
    gamma = check_int_at_least("gamma", gamma, 1)
    check_connected(graph)
    n_agents = tables.n_agents
    if graph.number_of_nodes() != n_agents:
        raise ValueError(
            f"`graph` has {graph.number_of_nodes()} nodes but the tables have {n_agents} agents."
        )
    for name, value, allowed in (
        ("respond", respond, RESPOND),
        ("beta", beta, BETA_CHOICES),
        ("on_capacity", on_capacity, ON_CAPACITY),
        ("mode", calibration, PRIVATIZER_CALIBRATIONS),
        ("schedule", schedule, SCHEDULES),
    ):
        if value not in allowed:
            raise ValueError(f"`{name}` must be one of {allowed}, got {value!r}.")
    if schedule == "fixed":
        if sync_every is None:
            raise ValueError("`sync_every` (B >= 1) is required with schedule='fixed'.")
        sync_every = check_int_at_least("sync_every", sync_every, 1)
        if threshold is not None:
            raise ValueError(
                "`threshold` applies to schedule='adaptive' only; got "
                f"threshold={threshold!r} with schedule='fixed'."
            )
    elif sync_every is not None:
        raise ValueError(
            "`sync_every` applies to schedule='fixed' only; got "
            f"sync_every={sync_every!r} with schedule='adaptive'."
        )
    if beta == "tuned":
        beta_value = check_positive("beta_value", beta_value if beta_value is not None else -1.0)
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    g_gamma = power_graph(graph, gamma)
    cover = clique_cover(g_gamma) if cover is None else tuple(tuple(c) for c in cover)
    label = check_clique_cover(g_gamma, cover)
    member = label[:, None] == label[None, :]  # (M, M) same clique
    adjacency = neighbor_matrix(graph).astype(np.int64)
    return {
        "tables": tables,
        "gamma": gamma,
        "epsilon": epsilon,
        "schedule": schedule,
        "sync_every": sync_every,
        "respond": respond,
        "beta": beta,
        "beta_value": beta_value,
        "on_capacity": on_capacity,
        "cover": cover,
        "member": member,
        "clique_size": member.sum(axis=1),
        "adjacency": adjacency,
        "degree": adjacency.sum(axis=1),
        "side": check_int_at_least("side", side, 0),
    }


def _calibrate(
    setup: dict, *, epsilon, delta, threshold, calibration, regularizer, failure_probability
) -> dict:
    """The Privatizer's calibration (or the non-private regulariser) and ``D``."""
    tables = setup["tables"]
    spec, n_agents, d, horizon = tables.spec, tables.n_agents, tables.dim, tables.horizon
    n_uses = -(-horizon // setup["gamma"])
    fixed = setup["schedule"] == "fixed"
    # leaves per (agent, set) tree: one per use of the set, or one per clock tick
    n_leaves = max(1, horizon // setup["sync_every"]) if fixed else n_uses
    out: dict[str, Any] = {"n_uses": n_uses}
    if not math.isinf(epsilon):
        cal = privatizer_calibration(
            epsilon,
            delta,
            horizon=horizon,
            n_agents=n_agents,
            dim=d,
            n_syncs=n_leaves,
            calibration=calibration,
            version="neurips" if setup["beta"] == "P" else "full",
            bound_x=spec.bound_x,
            bound_y=spec.bound_y,
            bound_theta=spec.bound_theta,
            failure_probability=failure_probability,
            secure=setup["secure_noise"],
            records_per_leaf=(
                leaf_reach(sync_every=setup["sync_every"], horizon=horizon, gamma=setup["gamma"])
                if fixed
                else 1
            ),
        )
        out.update(
            cal=cal,
            rho_min=cal.rho_min,
            rho_max=cal.rho_max,
            privacy_term=cal.beta_privacy_term,
            noise=cal.noise_stddev,
            shift=cal.shift,
            capacity=cal.capacity,
            base=0.0,
            placeholder=cal.rho_min,
            reg=setup["clique_size"] * cal.rho_min,
        )  # (M,)
    else:
        regularizer = check_positive("regularizer", regularizer)
        # at most one release per (agent, set) and round: T leaves never overflow
        out.update(
            cal=None,
            rho_min=regularizer / n_agents,
            rho_max=regularizer / n_agents,
            privacy_term=spec.bound_theta * math.sqrt(regularizer),
            noise=0.0,
            shift=0.0,
            capacity=horizon,
            base=regularizer,
            placeholder=0.0,
            reg=np.full(n_agents, regularizer),
        )
    if fixed:
        out["threshold"] = math.nan
        return out
    if threshold is None:
        threshold = recommended_threshold(
            horizon=n_uses,
            dim=d,
            rho_min=out["rho_min"],
            rho_max=out["rho_max"],
            bound_x=spec.bound_x,
        )
    out["threshold"] = check_nonnegative("threshold", threshold)
    return out
