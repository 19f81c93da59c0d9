"""Decentralized FedUCB (Dubey & Pentland, NeurIPS 2020, Alg. 3), vectorized over trials.

M agents on a connected graph G play the federated linear bandit of
:mod:`fedpriv.algorithms.environments.linear` without a controller. A message lives γ hops and moves
one hop per round (the LOCAL protocol, feducb.md §1.4), so a message of ``u`` created
at round ``t0`` reaches ``v`` at ``t0 + d(u, v)`` iff ``1 <= d(u, v) <= γ``. Agents
exchange synchronisation data only inside the cliques of a clique cover of the power
graph G_γ (edge iff ``d <= γ``), and keep γ parameter sets used round-robin.

Round ``t`` (0-based; the paper's ``t + 1``) for every agent ``i``, with set
``g = t mod γ`` (the paper's ``g = ((t'-1) mod γ) + 1``, feducb.md §2.5 item 1):

1. messages in flight move one hop; those arriving are "received at time t";
2. act optimistically on ``V = S_g + U_g``, ``ũ = s_g + ū_g`` (Alg. 1 lines 4–10);
3. the test of line 6, ``log det(V + x xᵀ + M(ρ_max − ρ_min) I) − log det S_g >=
   D / ((Δt_{i,g} + 1)(1 + L²))``, makes a **request**: the agent privatizes its own
   set g and broadcasts ``Synchronize(i, g, t)`` (lines 7–11);
4. received messages from the same clique with ``t' >= t − γ`` (lines 12–24): a
   request for set ``g'`` makes the agent privatize ``Q_{g'}`` and broadcast its
   release; a release ``(Û, û)`` of peer ``j`` replaces the stored latest release of
   ``j`` for set ``g'``.

Readings of Alg. 3 (feducb.md §2.5 "Ambiguities"; numbers are that list's items)
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
**One Privatizer per (agent, set)** (feducb.md §2.5: "maintain γ partial sums"), each
of depth ``m = 1 + ⌈log2 ⌈T/γ⌉⌉`` and calibrated by
:func:`fedpriv.privacy.matrix_tree.privatizer_calibration` with ``n = ⌈T/γ⌉`` (the extra,
unexplained ``log γ`` of Remark 6 in Λ and κ is a utility term and is not modelled).
A record ``(x_{i,t}, y_{i,t})`` enters only tree ``(i, t mod γ)``, so the accountant
declares ``subset`` a disjoint level and composes the γ trees of an agent in
**parallel** (feducb.md §2.5 [my analysis]; the paper's ``log γ`` surcharge is then
conservative). With ``respond="receipt"`` a tree can receive more leaves than
``⌈T/γ⌉``; its capacity is enforced (``on_capacity``). As in centralized FedUCB, the
request decisions depend on raw data and are charged as ``events.NonPrivate``
(channel ``"sync-timing"``). ``epsilon = inf`` runs the same protocol without noise
(``S = λ I + Σ_j U_j``, raw releases charged as NonPrivate).

Speed: a refreshed (agent, set) is Cholesky-factorised at once (log-determinants for
the test), and its ``V^{-1}``, ``W^{-1}`` are formed when the set is next used, so a
set refreshed several times between two uses is inverted once (same values).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import networkx as nx
import numpy as np

from fedpriv.algorithms.feducb.network import (
    DecentralizedTranscript,
    ReleaseStore,
    build_transcript,
    check_clique_cover,
    clique_cover,
    power_graph,
)
from fedpriv.algorithms.feducb.sync import recommended_threshold
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.networks.graphs import check_connected, neighbor_matrix
from fedpriv.algorithms.feducb.oful import (
    cholesky_and_logdet,
    inverse_and_logdet,
    inverse_from_cholesky,
    iterate_rounds,
    sherman_morrison_update,
)
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
from fedpriv.privacy._checks import (
    check_epsilon,
    check_int_at_least,
    check_positive,
    check_real,
)
from fedpriv.privacy.accountant import Accountant
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.events import NonPrivate
from fedpriv.privacy.matrix_tree import (
    PRIVATIZER_CALIBRATIONS,
    MatrixTreePrivatizer,
    PrivatizerCalibration,
    privatizer_calibration,
)
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "BETA_CHOICES",
    "ON_CAPACITY",
    "RESPOND",
    "SYNC_TIMING_REASON",
    "DecentralizedFedUCBRun",
    "run_feducb_decentralized",
]

#: When peers answer a request: on arrival (Alg. 3) or at the next use of the set (proof).
RESPOND = ("receipt", "next_use")
#: β: Prop. 2 of the full text [H], of the NeurIPS text [P], or a constant.
BETA_CHOICES = ("H", "P", "tuned")
#: A release past a tree's capacity raises, or that (agent, set) stops releasing.
ON_CAPACITY = ("raise", "stop")
_REQUEST, _RELEASE = 0, 1
#: Reason of the NonPrivate charge of the raw-data request decisions.
SYNC_TIMING_REASON = (
    "sync requests: Alg. 3 line 6's log-det test on each agent's raw local Gram "
    "matrix decides when Synchronize(i, g, t) is broadcast (feducb.md §3.6 item 11)"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DecentralizedFedUCBRun:
    """Result of a batch of decentralized FedUCB runs.

    Attributes
    ----------
    algorithm : str
        ``"feducb-decentralized"``.
    setting : dict
    regret_curve : ndarray of float64, shape (n_trials, horizon)
        Average per-agent cumulative pseudo-regret after round ``t``.
    final_regret : ndarray of float64, shape (n_trials, n_agents)
    n_requests, n_releases, n_deliveries, n_transmissions : ndarray of int64, (n_trials,)
        Sync requests, Privatizer releases, message deliveries and link transmissions
        (every forward of a message to every neighbour, duplicates included).
    threshold : float
        ``D``.
    gamma, tree_depth, capacity : int
    cover : tuple of tuple of int
        The clique cover of G_γ used; ``len(cover)`` bounds χ̄(G_γ) from above.
    calibration : PrivatizerCalibration or None
    accountant : Accountant
    transcript : DecentralizedTranscript or None
    seed_entropy : int
    """

    algorithm: str
    setting: dict
    regret_curve: np.ndarray
    final_regret: np.ndarray
    n_requests: np.ndarray
    n_releases: np.ndarray
    n_deliveries: np.ndarray
    n_transmissions: np.ndarray
    threshold: float
    gamma: int
    tree_depth: int
    capacity: int
    cover: tuple[tuple[int, ...], ...]
    calibration: PrivatizerCalibration | None
    accountant: Accountant
    transcript: DecentralizedTranscript | None
    seed_entropy: int

    def accountant_epsilon(self, target_delta: float) -> tuple[str, float]:
        """``(route, ε)`` of the Privatizer releases (Prop. 3's scope) at ``target_delta``."""
        return self.accountant.tightest(target_delta, where={"channel": "privatizer"})


def run_feducb_decentralized(
    tables: LinearBanditTables,
    graph: nx.Graph,
    *,
    gamma: int,
    epsilon: float,
    delta: float,
    threshold: float | None = None,
    calibration: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    respond: str = "receipt",
    cover: Any = None,
    regularizer: float = 1.0,
    failure_probability: float = 0.1,
    on_capacity: str = "raise",
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
    side: int = 0,
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
    threshold : float, optional
        ``D >= 0`` of line 6 (module docstring for the default); 0 requests every use.
    calibration : {"paper", "corrected", "exact"}
        Privatizer noise calibration (:mod:`fedpriv.privacy.matrix_tree`).
    beta : {"H", "P", "tuned"}
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    respond : {"receipt", "next_use"}
        When peers answer a request (module docstring).
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
        Keep the :class:`DecentralizedTranscript`.
    seed : int or SeedSequence
        Root of the noise streams ``(trial, side, agent, Stream.NOISE)`` (one
        generator per (trial, agent, set) below it).
    side : int
        0 for the world D, 1 for D' in an audit.

    Returns
    -------
    DecentralizedFedUCBRun

    Raises
    ------
    ValueError
        If ``gamma < 1``, the graph is disconnected or has the wrong number of nodes,
        a cover is not a clique partition of G_γ, or a parameter is out of range.
    CapacityExceededError
        With ``on_capacity="raise"``, a tree asked for a leaf past its capacity.
    """
    if not isinstance(tables, LinearBanditTables):
        raise TypeError(f"`tables` must be LinearBanditTables, got {type(tables).__name__}.")
    gamma = check_int_at_least("gamma", gamma, 1)
    check_connected(graph)
    n_trials, n_agents, d, horizon = tables.n_trials, tables.n_agents, tables.dim, tables.horizon
    if graph.number_of_nodes() != n_agents:
        raise ValueError(
            f"`graph` has {graph.number_of_nodes()} nodes but the tables have "
            f"{n_agents} agents."
        )
    for name, value, allowed in (("respond", respond, RESPOND), ("beta", beta, BETA_CHOICES),
                                 ("on_capacity", on_capacity, ON_CAPACITY),
                                 ("calibration", calibration, PRIVATIZER_CALIBRATIONS)):
        if value not in allowed:
            raise ValueError(f"`{name}` must be one of {allowed}, got {value!r}.")
    if beta == "tuned":
        beta_value = check_positive("beta_value", beta_value if beta_value is not None else -1.0)
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    private = not math.isinf(epsilon)
    g_gamma = power_graph(graph, gamma)
    cover = clique_cover(g_gamma) if cover is None else tuple(tuple(c) for c in cover)
    label = check_clique_cover(g_gamma, cover)
    member = label[:, None] == label[None, :]  # (M, M) same clique
    clique_size = member.sum(axis=1)
    adjacency = neighbor_matrix(graph).astype(np.int64)
    degree = adjacency.sum(axis=1)
    spec = tables.spec
    n_uses = -(-horizon // gamma)
    root = as_seed_sequence(seed)
    side = check_int_at_least("side", side, 0)

    if private:
        cal = privatizer_calibration(
            epsilon, delta, horizon=horizon, n_agents=n_agents, dim=d, n_syncs=n_uses,
            calibration=calibration, version="neurips" if beta == "P" else "full",
            bound_x=spec.bound_x, bound_y=spec.bound_y, bound_theta=spec.bound_theta,
            failure_probability=failure_probability,
        )
        rho_min, rho_max, privacy_term = cal.rho_min, cal.rho_max, cal.beta_privacy_term
        noise, shift, capacity = cal.noise_stddev, cal.shift, cal.capacity
        base, placeholder = 0.0, rho_min
        reg = clique_size * rho_min  # (M,)
    else:
        cal = None
        regularizer = check_positive("regularizer", regularizer)
        rho_min = rho_max = regularizer / n_agents
        privacy_term = spec.bound_theta * math.sqrt(regularizer)
        # at most one release per (agent, set) and round: T leaves never overflow
        noise, shift, capacity, base, placeholder = 0.0, 0.0, horizon, regularizer, 0.0
        reg = np.full(n_agents, regularizer)
    if threshold is None:
        threshold = recommended_threshold(horizon=n_uses, dim=d, rho_min=rho_min,
                                          rho_max=rho_max, bound_x=spec.bound_x)
    threshold = check_real("threshold", threshold)
    if threshold < 0:
        raise ValueError(f"`threshold` must be >= 0, got {threshold!r}.")

    # ------------------------------------------------------------ accountant, trees
    if spec.shared_users:
        accountant = Accountant(relation=NeighboringRelation.USER_AT_ALL_AGENTS,
                                disjoint=("trial", "subset"), sequential=("agent", "channel"))
    else:
        accountant = Accountant(relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
                                disjoint=("trial", "agent", "subset"), sequential=("channel",))
    shape = (n_trials, n_agents, gamma)
    keys = {"trial": np.arange(n_trials)[:, None, None], "agent": np.arange(n_agents)[None, :, None],
            "subset": np.arange(gamma)[None, None, :]}
    rngs = np.empty(shape, dtype=object)
    for j in range(n_trials):
        for i in range(n_agents):
            children = stream_rng(root, trial=j, side=side, agent=i, stream=Stream.NOISE)
            rngs[j, i] = list(children.spawn(gamma))
    privatizer = MatrixTreePrivatizer(
        stream_shape=shape, dim=d, capacity=capacity, noise_stddev=noise, shift=shift,
        frobenius_sensitivity=math.sqrt(2.0) * (spec.bound_x**2 + spec.bound_y**2),
        accountant=accountant, keys={**keys, "channel": "privatizer"}, rng=rngs,
    )
    flat = {k: np.broadcast_to(v, shape).ravel() for k, v in keys.items()}
    accountant.spend_many(NonPrivate(reason=SYNC_TIMING_REASON),
                          keys={**flat, "channel": "sync-timing"})

    # ------------------------------------------------------------ state
    eye = np.eye(d)
    store = ReleaseStore(d, placeholder)
    latest = np.zeros((n_trials, n_agents, n_agents, gamma), dtype=np.int64)  # ids
    latest_t = np.full((n_trials, n_agents, n_agents, gamma), -1, dtype=np.int64)
    s_gram = np.broadcast_to(
        (base + clique_size * placeholder)[None, :, None, None, None] * eye, shape + (d, d)
    ).copy()
    s_vec = np.zeros(shape + (d,))
    shift_w = n_agents * (rho_max - rho_min) * eye
    a_inv, logdet_v = inverse_and_logdet(s_gram)  # V = S + U, kept by rank-one updates
    w_inv, logdet_w = inverse_and_logdet(s_gram + shift_w)  # line 6's W
    logdet_s = logdet_v.copy()
    # refreshed (b, i, g) whose inverse is not formed yet, and their Cholesky factors
    chol_v, chol_w = np.zeros(shape + (d, d)), np.zeros(shape + (d, d))
    stale_v, stale_w = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    gram = np.zeros(shape + (d, d))
    u_bar = np.zeros(shape + (d,))
    leaf = np.zeros(shape + (d + 1, d + 1))
    dt = np.zeros(shape, dtype=np.int64)
    pending = np.zeros(shape, dtype=bool)
    stopped = np.zeros(shape, dtype=bool)
    cumulative = np.zeros((n_trials, n_agents))
    curve = np.empty((n_trials, horizon))
    counts = {k: np.zeros(n_trials, dtype=np.int64)
              for k in ("requests", "releases", "deliveries", "transmissions")}
    # messages in flight: columns trial, kind, sender, subset, t_sent, release_id, hops
    flight = np.zeros((0, 7), dtype=np.int64)
    frontier = np.zeros((0, n_agents), dtype=bool)
    visited = np.zeros((0, n_agents), dtype=bool)
    logs: dict[str, list] = {"messages": [], "releases": [], "requests": []}
    actions = np.zeros((n_trials, n_agents, horizon), dtype=np.int16) if record else None
    rows_b = np.arange(n_trials)[:, None]
    rows_i = np.arange(n_agents)[None, :]

    def radius(log_det: np.ndarray) -> np.ndarray:
        if beta == "tuned":
            return np.full(log_det.shape, beta_value)
        radicand = 2.0 * math.log(2.0 / failure_probability) + log_det - d * np.log(reg)
        return spec.sub_gaussian * np.sqrt(np.maximum(radicand, 0.0)) + privacy_term

    def refresh(b: np.ndarray, i: np.ndarray, g: np.ndarray) -> None:
        b, i, g = np.unravel_index(np.unique(np.ravel_multi_index((b, i, g), shape)), shape)
        ids = latest[b, i, :, g]  # (n, M)
        weight = member[i][..., None, None]
        s_gram[b, i, g] = base * eye + (store.gram[ids] * weight).sum(axis=1)
        s_vec[b, i, g] = (store.vec[ids] * member[i][..., None]).sum(axis=1)
        v_gram = s_gram[b, i, g] + gram[b, i, g]
        for matrix, inverse, logdet, factor, stale in (
            (v_gram, a_inv, logdet_v, chol_v, stale_v),
            (v_gram + shift_w, w_inv, logdet_w, chol_w, stale_w),
        ):
            found = cholesky_and_logdet(matrix)
            if found is None:  # not PD: inverse_and_logdet floors this batch, as before
                inverse[b, i, g], logdet[b, i, g] = inverse_and_logdet(matrix)
                stale[b, i, g] = False
            else:  # the inverse is formed when the set is next used (see `catch_up`)
                factor[b, i, g], logdet[b, i, g] = found
                stale[b, i, g] = True
        logdet_s[b, i, g] = np.linalg.slogdet(s_gram[b, i, g])[1]

    def catch_up(g: int) -> None:
        """Form the inverses of set ``g`` refreshed since its last use, from their
        last Cholesky factor: a (b, i, g) refreshed several times between two uses
        is inverted once, with the values an inversion at each refresh would leave."""
        for inverse, factor, stale in ((a_inv, chol_v, stale_v), (w_inv, chol_w, stale_w)):
            b, i = np.nonzero(stale[:, :, g])
            if b.size:
                inverse[b, i, g] = inverse_from_cholesky(factor[b, i, g])
                stale[b, i, g] = False

    for t, contexts, rewards, means in iterate_rounds(tables):
        g_now = t % gamma
        # 1. one hop for every message in flight (sent at rounds < t)
        delivered = np.zeros((0, n_agents), dtype=bool)
        if flight.shape[0]:
            np.add.at(counts["transmissions"], flight[:, 0], frontier @ degree)
            reach = (frontier.astype(np.int64) @ adjacency > 0) & ~visited
            visited |= reach
            flight[:, 6] += 1
            delivered, arrived = reach, flight.copy()
            keep = (flight[:, 6] < gamma) & reach.any(axis=1)
            flight, frontier, visited = flight[keep], reach[keep], visited[keep]
        # 2. act on set g
        catch_up(g_now)
        inv = a_inv[:, :, g_now]  # a view: updated in place below
        theta = np.matmul(inv, (s_vec[:, :, g_now] + u_bar[:, :, g_now])[..., None])[..., 0]
        ax = np.matmul(contexts, inv)
        width = np.sqrt(np.maximum(np.einsum("jikd,jikd->jik", ax, contexts), 0.0))
        mean = np.einsum("jikd,jid->jik", contexts, theta)
        arm = np.argmax(mean + radius(logdet_v[:, :, g_now])[..., None] * width, axis=-1)
        x = contexts[rows_b, rows_i, arm]
        y = rewards[rows_b, rows_i, arm]
        cumulative += means.max(axis=-1) - means[rows_b, rows_i, arm]
        curve[:, t] = cumulative.mean(axis=1)
        if record:
            actions[:, :, t] = arm
        gram[:, :, g_now] += np.einsum("...i,...j->...ij", x, x)  # outer products
        u_bar[:, :, g_now] += y[..., None] * x
        vv = np.concatenate([x, y[..., None]], axis=-1)
        leaf[:, :, g_now] += np.einsum("...i,...j->...ij", vv, vv)
        logdet_v[:, :, g_now] += np.log1p(sherman_morrison_update(inv, x))
        logdet_w[:, :, g_now] += np.log1p(sherman_morrison_update(w_inv[:, :, g_now], x))
        # 3. line 6: the request test on raw data, W = V + x xᵀ + M (ρ_max − ρ_min) I
        limit = threshold / ((dt[:, :, g_now] + 1) * (1.0 + spec.bound_x**2))
        gap = logdet_w[:, :, g_now] - logdet_s[:, :, g_now]
        request = (gap >= limit) & ~stopped[:, :, g_now]
        release = np.zeros(shape, dtype=bool)
        release[:, :, g_now] = request
        cause_request = release.copy()
        # 4. received messages (lines 12-24)
        if delivered.shape[0]:
            m_idx, r_idx = np.nonzero(delivered)
            msg = arrived[m_idx]
            ok = member[msg[:, 2], r_idx] & (msg[:, 4] >= t - gamma)
            np.add.at(counts["deliveries"], msg[:, 0], 1)
            if record:
                logs["messages"].append(np.column_stack([msg[:, :5], r_idx, np.full(r_idx.size, t),
                                                         msg[:, 6], msg[:, 5], ok]))
            req = ok & (msg[:, 1] == _REQUEST)
            if respond == "receipt":
                release[msg[req, 0], r_idx[req], msg[req, 3]] = True
            else:
                pending[msg[req, 0], r_idx[req], msg[req, 3]] = True
            rel = ok & (msg[:, 1] == _RELEASE)
            if rel.any():
                b, i, j, g = msg[rel, 0], r_idx[rel], msg[rel, 2], msg[rel, 3]
                newer = msg[rel, 4] > latest_t[b, i, j, g]
                b, i, j, g = b[newer], i[newer], j[newer], g[newer]
                latest[b, i, j, g] = msg[rel, 5][newer]
                latest_t[b, i, j, g] = msg[rel, 4][newer]
                refresh(b, i, g)
        if respond == "next_use":
            release[:, :, g_now] |= pending[:, :, g_now]
            pending[:, :, g_now] = False
        # 5. Privatizer releases, own storage, resets, broadcasts
        release &= ~stopped
        full = release & (privatizer.remaining_capacity <= 0)
        if full.any():
            if on_capacity == "raise":
                raise CapacityExceededError(
                    f"round {t}: an (agent, set) tree asked for leaf {capacity + 1} past "
                    f"its capacity {capacity} (m = {privatizer.depth}); use respond="
                    "'next_use', a larger threshold, or on_capacity='stop'."
                )
            stopped |= full
            release &= ~full
        dt[:, :, g_now] += 1
        if release.any():
            u_hat, small = privatizer.release(leaf, release)
            b, i, g = np.nonzero(release)
            ids = store.add(u_hat[b, i, g], small[b, i, g])
            latest[b, i, i, g], latest_t[b, i, i, g] = ids, t
            gram[b, i, g], u_bar[b, i, g], leaf[b, i, g], dt[b, i, g] = 0.0, 0.0, 0.0, 0
            refresh(b, i, g)
            np.add.at(counts["releases"], b, 1)
            new = np.column_stack([b, np.full(b.size, _RELEASE), i, g, np.full(b.size, t), ids,
                                   np.zeros(b.size, dtype=np.int64)])
            rb, ri = np.nonzero(request)
            np.add.at(counts["requests"], rb, 1)
            req_msgs = np.column_stack([rb, np.full(rb.size, _REQUEST), ri, np.full(rb.size, g_now),
                                        np.full(rb.size, t), np.full(rb.size, -1),
                                        np.zeros(rb.size, dtype=np.int64)])
            new = np.concatenate([req_msgs, new]).astype(np.int64)
            start = np.zeros((new.shape[0], n_agents), dtype=bool)
            start[np.arange(new.shape[0]), new[:, 2]] = True
            flight = np.concatenate([flight, new])
            frontier = np.concatenate([frontier, start])
            visited = np.concatenate([visited, start])
            if record:
                logs["releases"].append(np.column_stack([ids, b, i, g, np.full(b.size, t),
                                                         cause_request[b, i, g]]))
                logs["requests"].append(np.column_stack([rb, ri, np.full(rb.size, g_now),
                                                         np.full(rb.size, t)]))

    transcript = None
    if record:
        transcript = build_transcript(logs, store, actions)
    setting = {"n_agents": n_agents, "n_arms": tables.n_arms, "dim": d, "horizon": horizon,
               "n_trials": n_trials, "reward": spec.reward, "shared_users": spec.shared_users,
               "gamma": gamma, "respond": respond, "beta": beta, "beta_value": beta_value,
               "failure_probability": failure_probability, "n_cliques": len(cover),
               "epsilon": epsilon, "delta": delta if private else 0.0,
               "calibration": calibration if private else "none"}
    return DecentralizedFedUCBRun(
        algorithm="feducb-decentralized", setting=setting, regret_curve=curve,
        final_regret=cumulative, n_requests=counts["requests"], n_releases=counts["releases"],
        n_deliveries=counts["deliveries"], n_transmissions=counts["transmissions"],
        threshold=float(threshold), gamma=gamma, tree_depth=privatizer.depth,
        capacity=capacity, cover=cover, calibration=cal, accountant=accountant,
        transcript=transcript, seed_entropy=int(root.entropy),
    )
