"""Li & Song's private federated MAB: CDP-MAB, CE-CDP-MAB, DDP-MAB, HDP-MAB, Single-MAB.

W. Li and L. Song, "Privacy-Preserving Communication-Efficient Federated Multi-Armed
Bandits", IEEE JSAC 40(3), 2022 (arXiv:2111.01570).
All algorithms share the epoch engine of :mod:`fedpriv.algorithms.li_song.core` (bulk epochs read
from the counter-based reward table; see its docstring for the resolved ambiguities)
and differ in who averages the uploaded noisy means ȳ, how long a round takes and what
it costs:

``run_cdp_mab``
    Alg. 1 (master-worker): every agent uploads ȳ_i to the server (cost ``c1`` per
    link), which averages over the ``M`` agents and broadcasts the active set. With
    ``participation_rate = p < 1`` and/or ``n_rounds = R`` it is the communication-
    constrained variant of §IV-B (``"ce-cdp-mab"``): ``N = ⌈pM⌉`` uploaders drawn
    uniformly without replacement, fresh each round [fedpriv]; ``S^p``, ``C^p`` and
    the noise use ``N``; every agent still explores and updates ȳ [fedpriv];
    ``Δ̃_r = Δ^{r/R}`` (``mode="paper"``) or ``(Δ/2)^{r/R}`` (``"corrected"``, Theorem 2's proof, Step 2).
``run_ddp_mab``
    Alg. 3: after each epoch GIS (Alg. 2, :func:`fedpriv.algorithms.li_song.network.simulate_gis`)
    gives every agent every ȳ_j (Alg. 3 line 9 writes ŷ; the text's ȳ is used);
    each agent averages them in label order (so all agents hold the same aggregate and
    active set) while exploiting its local best arm for ``t_delay`` slots.
``run_hdp_mab``
    Alg. 5: agents send ȳ_i to their component's sink (SAC, shortest paths); sinks
    average and upload to the server, which averages the ``Q`` sink means
    (``aggregation="unweighted"``, Alg. 5 line 14) or weights them by ``M_q / M``
    (``"weighted"``, fedpriv's correction) and broadcasts.
``run_single_mab``
    Each agent runs Alg. 1 alone (``M = 1``, same input ε, no communication), the
    baseline of Fig. 8 (Remark 2) [§VII-A].

Privacy accounting
------------------
Each agent's noisy epoch mean ``ŷ_{i,k}(r)`` is one ``events.Laplace(scale = 1/(D ε n_r),
l1_sensitivity = 1/n_r)`` release charged to the cell ``(trial, agent, arm, epoch)``
through :func:`privacy.laplace_release` (``D = M``, or ``N`` under partial participation).
A reward sits in one cell and the noise is drawn once and reused in ȳ (Eq. 6), so the
accountant composes the cells in parallel: the per-message guarantee, which is also the
guarantee of the whole transcript of messages (fedpriv's derivation; the paper is silent on composition), is ``M ε`` (``N ε``) —
the level of Theorems 1–4 — never the input ε. Aggregates (server, GIS, sinks), active
sets and broadcasts are post-processing and cost nothing: the master's average covers
``M`` agents' noisy means, but under ``replace_one_reward`` the agents hold disjoint
records, so it is ``M ε``-DP as well (sequential composition over agents, giving
``M · M ε``, would apply only if one record could sit at every agent). Every noise draw of every
agent is charged, including those of agents not selected in a round (their ŷ is revealed
inside ȳ later; no amplification; §IV-B). The exploitation actions of DDP/HDP are charged as
``events.NonPrivate`` under ``channel="action"``: query ``where={"channel": "message"}``
for the paper's claim. At ``epsilon = inf`` the means are released raw (``NonPrivate``).

Length: the five variants share one epoch engine and one release path, which must stay
together so that every variant charges the accountant the same way; the numpydoc
sections of its run functions add the rest (split with the paper families of issue 21).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np
from fedpriv.algorithms.li_song.core import SCHEDULES, LiSongRun, StructurePlan
from fedpriv.algorithms.li_song.epochs import simulate
from fedpriv.algorithms.li_song.network import (
    COST_MODELS,
    DELAY_CONVENTIONS,
    check_cost,
    find_sink_agents,
    simulate_gis,
)
from fedpriv.algorithms.networks.graphs import check_connected
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng, stream_rngs
from fedpriv.privacy import Accountant
from fedpriv.privacy.calibrations import li_song_claimed_epsilon, li_song_participants
from fedpriv.privacy.checks import check_epsilon, check_int_at_least

__all__ = [
    "AGGREGATIONS",
    "REWARD_SOURCES",
    "LiSongRun",
    "minimum_gap",
    "run_cdp_mab",
    "run_ddp_mab",
    "run_hdp_mab",
    "run_single_mab",
]

AGGREGATIONS = ("unweighted", "weighted")
#: Reward sources of :func:`run_cdp_mab`: the counter-based table (every reward has an
#: identity; audits couple runs through it), or the regret-only binomial fast path.
REWARD_SOURCES = ("table", "binomial")
#: The ``side`` address of the binomial path's two run-wide streams (rewards, noise):
#: neither world of an audit (0, 1), so no stream of the table path is reused.
_BINOMIAL_SIDE = 2
_LEVELS = ("trial", "agent", "arm", "epoch")


def _choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {list(allowed)}, got {value!r}.")
    return value


def minimum_gap(env: Any) -> float:
    """Smallest non-zero global gap ``Δ`` of ``env`` (needed by ``Δ^{r/R}``; §IV-B never says where Δ comes from).

    Parameters
    ----------
    env : BernoulliMAB
        The environment.

    Returns
    -------
    float
        Δ in (0, 1].

    Raises
    ------
    ValueError
        If every arm has the same global mean.
    """
    gaps = np.asarray(env.gaps)
    positive = gaps[gaps > 0]
    if positive.size == 0:
        raise ValueError("the environment has no non-zero gap; pass `gap` explicitly.")
    return float(positive.min())


def _common(
    env: Any, horizon: int, epsilon: float, n_trials: int, seed: Any, table: Any
) -> tuple[int, float, int, np.random.SeedSequence, Any]:
    if not all(hasattr(env, a) for a in ("arm_means", "gaps", "global_means", "reward_table")):
        raise TypeError("`env` must be a BernoulliMAB (fedpriv.algorithms.environments.bernoulli).")
    horizon = check_int_at_least("horizon", horizon, 1)
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    n_trials = check_int_at_least("n_trials", n_trials, 1)
    root = as_seed_sequence(seed)
    if table is None:
        table = env.reward_table(child_seed(root, 0, 0, 0, int(Stream.ENVIRONMENT)))
    return horizon, epsilon, n_trials, root, table


def _schedule(
    n_rounds: int | None, mode: str, gap: float | None, env: Any
) -> tuple[int | None, str, float | None]:
    """``(n_rounds, gap schedule, gap)``: ``mode`` picks Δ̃_r's schedule when ``R`` is set."""
    if n_rounds is None:
        return None, "halving", None
    n_rounds = check_int_at_least("n_rounds", n_rounds, 1)
    _choice("mode", mode, SCHEDULES[1:])
    gap = minimum_gap(env) if gap is None else float(gap)
    if not 0.0 < gap < 1.0:
        raise ValueError(f"`gap` must be in (0, 1), got {gap!r}.")
    return n_rounds, mode, gap


def _finish(
    algorithm: str,
    setting: dict[str, Any],
    out: dict[str, Any],
    env: Any,
    accountant: Accountant,
    epsilon: float,
    claimed: float,
    root: Any,
    horizon: int,
) -> LiSongRun:
    n_trials, n_units = out["shape"]
    counts = out["counts"].reshape(n_trials, n_units, *out["counts"].shape[1:])
    counts = counts.reshape(n_trials, -1, env.n_arms)
    order = np.argsort(out["agents"][:n_units].ravel(), kind="stable")
    counts = counts[:, order]
    committed = out["committed"]
    if n_units > 1:  # Single-MAB: units are agents
        rounds = out["rounds"].max(axis=1)
        active = out["active"].any(axis=1)
        eliminated = ~out["active"][:, :, env.best_arm].all(axis=1)
    else:
        rounds = out["rounds"][:, 0]
        active = out["active"][:, 0]
        eliminated = ~active[:, env.best_arm]
        committed = np.repeat(committed, env.n_agents, axis=1)
    setting = {**setting, "horizon": horizon, "n_agents": env.n_agents, "n_arms": env.n_arms}
    return LiSongRun(
        algorithm=algorithm,
        setting=setting,
        counts=counts,
        total_regret=out["regret"].sum(axis=1),
        final_regret=np.einsum("jak,k->ja", counts, np.asarray(env.gaps, dtype=np.float64)),
        regret_eq1=out["regret_eq1"].sum(axis=1),
        exploitation_regret=out["exploit"].sum(axis=1),
        rounds=rounds,
        communication_cost=out["cost"].sum(axis=1),
        active=active,
        best_arm_eliminated=eliminated,
        committed_arm=committed,
        accountant=accountant,
        epsilon=epsilon,
        claimed_epsilon=claimed,
        messages=out["messages"],
        actions=out["actions"],
        checkpoint_times=out["times"],
        checkpoint_regret=out["regrets"],
        seed_entropy=int(root.entropy),
    )


def _noise(root: Any, n_trials: int, n_agents: int, units: np.ndarray) -> np.ndarray:
    streams = stream_rngs(root, n_trials=n_trials, n_agents=n_agents, stream=Stream.NOISE)
    return streams[:, units].reshape(n_trials * units.shape[0], units.shape[1])


def _policy(root: Any, n_trials: int, n_units: int, plan: StructurePlan) -> np.ndarray | None:
    """Participant-selection generators per row (only partial participation draws)."""
    if plan.n_participants is None:
        return None
    return stream_rngs(root, n_trials=n_trials, n_agents=n_units, stream=Stream.POLICY).ravel()


def _run(
    plan: StructurePlan,
    env: Any,
    *,
    horizon: int,
    epsilon: float,
    n_trials: int,
    root: Any,
    table: Any,
    record: bool | str,
    setting: dict[str, Any],
    secure_noise: bool = False,
    stop_epoch: int | None = None,
    rewards: str = "table",
) -> LiSongRun:
    """Simulate ``plan`` and collect the run; the claimed ε (``M ε``, ``N ε``) is the plan's."""
    claimed = (
        math.inf
        if math.isinf(epsilon)
        else li_song_claimed_epsilon(
            epsilon,
            n_agents=plan.n_agents_claim,
            partial=plan.n_participants is not None,
            n_participants=plan.n_participants,
        )
    )
    if stop_epoch is not None:
        stop_epoch = check_int_at_least("stop_epoch", stop_epoch, 1)
    accountant = Accountant(disjoint=_LEVELS, sequential=("channel",))
    if rewards == "binomial":  # the regret-only fast path: two run-wide streams
        reward_rng = stream_rng(root, trial=0, side=_BINOMIAL_SIDE, stream=Stream.ENVIRONMENT)
        noise_rngs = np.empty((1, 1), dtype=object)
        noise_rngs[0, 0] = stream_rng(root, trial=0, side=_BINOMIAL_SIDE, stream=Stream.NOISE)
    else:
        reward_rng = None
        noise_rngs = _noise(root, n_trials, env.n_agents, plan.agents_of_unit)
    out = simulate(
        plan,
        env=env,
        table=table,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        noise_rngs=noise_rngs,
        policy_rngs=_policy(root, n_trials, plan.agents_of_unit.shape[0], plan),
        accountant=accountant,
        record=record,
        secure_noise=bool(secure_noise),
        stop_epoch=stop_epoch,
        reward_rng=reward_rng,
    )
    return _finish(plan.algorithm, setting, out, env, accountant, epsilon, claimed, root, horizon)


def _mean_over_participants(ybar: np.ndarray, part: np.ndarray) -> np.ndarray:
    weights = part / part.sum(axis=1, keepdims=True)
    return np.einsum("ba,bak->bk", weights, ybar)


def _server_hook(
    rows: list, *, trial, epoch, time, agents, arms, ybar, participants, aggregate, kept
) -> None:
    labels, arms_of, kept_of = agents.tolist(), tuple(arms.tolist()), tuple(kept.tolist())
    contents = ybar.tolist()
    for a in np.flatnonzero(participants).tolist():
        rows.append(
            (trial, epoch, time, "upload", labels[a], -1, labels[a], arms_of, tuple(contents[a]))
        )
    for a in labels:
        rows.append((trial, epoch, time, "broadcast", -1, a, -1, kept_of, kept_of))


#: Columns of the message rows of the server (:func:`_server_hook`), of GIS (DDP-MAB)
#: and of SAC (HDP-MAB), in the order each transcript has always had.
_SERVER_COLUMNS = (
    "trial", "epoch", "time", "kind", "sender", "receiver", "origin", "arms", "content"
)  # fmt: skip
_DDP_COLUMNS = (
    "trial", "epoch", "time", "kind", "sender", "receiver", "arms", "origin", "content"
)  # fmt: skip
_HDP_COLUMNS = (
    "trial", "epoch", "arms", "time", "kind", "sender", "receiver", "origin", "content"
)  # fmt: skip


def run_cdp_mab(
    env: Any,
    *,
    horizon: int,
    epsilon: float,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    participation_rate: float = 1.0,
    n_rounds: int | None = None,
    gap: float | None = None,
    mode: str = "paper",
    c1: float = 25.0,
    table: Any = None,
    record: bool | str = False,
    secure_noise: bool = False,
    stop_epoch: int | None = None,
    rewards: str = "table",
) -> LiSongRun:
    """CDP-MAB (Alg. 1) and its communication-constrained variant (§IV-B).

    Parameters
    ----------
    env : BernoulliMAB
        ``M`` agents, ``K`` arms (homogeneous or heterogeneous means).
    horizon : int
        ``T`` slots per agent, >= 1.
    epsilon : float
        Input ε > 0 (``inf``: no noise). The guarantee is ``M ε`` (``N ε``).
    n_trials : int
        Independent runs, >= 1 (vectorized).
    seed : int or SeedSequence
        Root of every stream (reward table, noise per (trial, agent), participants).
    participation_rate : float
        ``p`` in (0, 1]; ``N = ⌈pM⌉`` uploaders per round.
    n_rounds : int, optional
        ``R >= 1``: at most ``R`` rounds with ``Δ̃_r`` from ``mode``; default: none
        (``Δ̃_r = 2^{-r}``).
    gap : float, optional
        ``Δ`` in (0, 1) for ``Δ^{r/R}``; default the environment's minimum gap (fedpriv's choice).
    mode : {"paper", "corrected"}
        ``Δ^{r/R}`` or ``(Δ/2)^{r/R}`` (only with ``n_rounds``).
    c1 : float
        Server-agent link cost >= 0 (one link per upload).
    table : RewardTable, optional
        Reward table (e.g. a neighbouring one); default drawn from ``seed``.
    record : bool or {"messages", "actions"}
        Keep message and action transcripts, or only the one named (the other is
        None).
    secure_noise : bool
        Exact discrete Laplace noise on a grid for every message (``secure=True`` of
        :func:`fedpriv.privacy.laplace_release`, charged ``DiscreteLaplace``).
    stop_epoch : int, optional
        Simulate epochs ``1..stop_epoch`` only (>= 1; default: to the horizon): the
        run's prefix up to the end of that epoch (its exploitation slots included),
        with the full run's streams, releases, charges and transcripts; the commit
        phase (Alg. 1 line 17) is not simulated, so ``committed_arm`` is -1 and counts
        and regret cover the simulated slots only.
    rewards : {"table", "binomial"}
        Where the epochs' rewards come from. ``"table"`` (default): the counter-based
        reward table, so every reward has an identity that coupled runs (audits,
        neighbouring tables) share. ``"binomial"``: the regret-only fast path: each
        epoch's round-robin sum of one agent and arm is one ``Binomial(n_r, μ_{i,k})``
        draw (its distribution, Alg. 1 lines 5-8), all from one run-wide generator,
        and every release draws its noise from one run-wide generator; the releases,
        charges and ledger are those of the table path (through ``privacy/``), the
        regret has the same distribution, not the same values. Not with ``table``.

    Returns
    -------
    LiSongRun

    Raises
    ------
    ValueError
        If ``p`` not in (0, 1], ``R < 1``, ``c1 < 0``, ``epsilon <= 0``, ``horizon < 1``,
        ``stop_epoch < 1``, a reward outside [0, 1], a bad ``gap``/``mode``, ``rewards``
        not in :data:`REWARD_SOURCES`, or ``rewards="binomial"`` with a ``table``.

    Examples
    --------
    >>> from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
    >>> env = BernoulliMAB([[0.9, 0.1]] * 50)
    >>> run = run_cdp_mab(env, horizon=2000, epsilon=0.1, seed=1)
    >>> run.message_epsilon()
    ('pure', 5.0)
    """
    _choice("rewards", rewards, REWARD_SOURCES)
    if rewards == "binomial" and table is not None:
        raise ValueError(
            "`rewards='binomial'` draws the rewards itself; pass no `table` (a table's "
            "rewards need `rewards='table'`)."
        )
    horizon, epsilon, n_trials, root, table = _common(env, horizon, epsilon, n_trials, seed, table)
    m = env.n_agents
    n = li_song_participants(m, participation_rate)
    c1 = check_cost("c1", c1)
    n_rounds, schedule, gap = _schedule(n_rounds, mode, gap, env)
    partial = n < m
    constrained = partial or n_rounds is not None
    plan = StructurePlan(
        algorithm="ce-cdp-mab" if constrained else "cdp-mab",
        agents_of_unit=np.arange(m)[None, :],
        divisor=n,
        n_agents_claim=m,
        n_participants=n if partial else None,
        aggregate=_mean_over_participants,
        delay=0,
        round_cost=lambda uploaders: c1 * uploaders,
        schedule=schedule,
        gap=gap,
        n_rounds=n_rounds,
        message_hook=_server_hook,
        message_columns=_SERVER_COLUMNS,
    )
    setting = {
        "epsilon": epsilon,
        "participation_rate": participation_rate,
        "n_participants": n,
        "n_rounds": n_rounds,
        "gap": gap,
        "schedule": schedule,
        "c1": c1,
        "n_trials": n_trials,
        **({"rewards": rewards} if rewards != "table" else {}),
    }
    return _run(
        plan,
        env,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        root=root,
        table=table,
        record=record,
        setting=setting,
        secure_noise=secure_noise,
        stop_epoch=stop_epoch,
        rewards=rewards,
    )


def run_ddp_mab(
    env: Any,
    graph: nx.Graph,
    *,
    horizon: int,
    epsilon: float,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    c2: float = 1.0,
    cost_model: str = "edges",
    delay_convention: str = "counter",
    n_rounds: int | None = None,
    gap: float | None = None,
    mode: str = "paper",
    table: Any = None,
    record: bool | str = False,
    secure_noise: bool = False,
    stop_epoch: int | None = None,
) -> LiSongRun:
    """DDP-MAB (Alg. 3) with GIS on ``graph``; ``n_rounds`` gives Corollary 1's variant.

    Parameters
    ----------
    env : BernoulliMAB
        ``M`` agents, ``K`` arms (homogeneous or heterogeneous means).
    graph : networkx.Graph
        Connected, nodes ``0..M-1`` (``M = env.n_agents``).
    c2 : float
        Agent-agent link cost >= 0.
    cost_model : {"edges", "paths"}
        ``c2 d_G |E|`` per round (Theorem 3) or the DATA link-slots actually used.
    delay_convention : {"counter", "slots"}
        ``t_delay = d_G - 1`` (Alg. 2's return value) or ``d_G`` (its pulls, Alg. 2 line 3).
    horizon : int
        ``T`` slots per agent, >= 1.
    epsilon : float
        Input ε > 0 per release (``inf``: no noise), as in :func:`run_cdp_mab`.
    n_trials : int
        Independent runs, >= 1 (vectorized).
    seed : int or SeedSequence
        Root of every stream (reward table, noise per (trial, agent)).
    n_rounds : int, optional
        ``R >= 1`` rounds with ``Δ̃_r`` from ``mode`` (Corollary 1); default none
        (``Δ̃_r = 2^{-r}``).
    gap : float, optional
        ``Δ`` in (0, 1) for ``Δ^{r/R}``; default the environment's minimum gap.
    mode : {"paper", "corrected"}
        ``Δ^{r/R}`` or ``(Δ/2)^{r/R}`` (only with ``n_rounds``).
    table : RewardTable, optional
        Reward table (e.g. a neighbouring one); default drawn from ``seed``.
    record : bool or {"messages", "actions"}
        Keep message and action transcripts, or only the one named (the other is
        None).
    secure_noise : bool
        Exact discrete Laplace noise on a grid for every message (as in
        :func:`run_cdp_mab`).
    stop_epoch : int, optional
        Last epoch simulated (as in :func:`run_cdp_mab`).

    Returns
    -------
    LiSongRun
        Regret, communication cost and the accountant's ledger of every release.

    Raises
    ------
    ValueError, TypeError
        As :func:`run_cdp_mab`; a disconnected graph or one whose size is not ``M``.
    """
    horizon, epsilon, n_trials, root, table = _common(env, horizon, epsilon, n_trials, seed, table)
    check_connected(graph)
    m = env.n_agents
    if graph.number_of_nodes() != m:
        raise ValueError(f"`graph` must have n_agents = {m} nodes, got {graph.number_of_nodes()}.")
    c2 = check_cost("c2", c2)
    _choice("cost_model", cost_model, COST_MODELS)
    _choice("delay_convention", delay_convention, DELAY_CONVENTIONS)
    n_rounds, schedule, gap = _schedule(n_rounds, mode, gap, env)
    gis = simulate_gis(graph)
    per_round = gis.round_cost(c2, cost_model)

    def hook(
        rows: list, *, trial, epoch, time, agents, arms, ybar, participants, aggregate, kept
    ) -> None:
        arms_of, contents = tuple(arms.tolist()), [tuple(row) for row in ybar.tolist()]
        for slot, kind, sender, receiver, labels in gis.messages:
            base = (trial, epoch, time + slot, kind, sender, receiver, arms_of)
            if kind != "DATA":
                rows.append((*base, -1, labels))
                continue
            for f in labels:
                rows.append((*base, f, contents[f]))

    plan = StructurePlan(
        algorithm="ddp-mab",
        agents_of_unit=np.arange(m)[None, :],
        divisor=m,
        n_agents_claim=m,
        n_participants=None,
        aggregate=_mean_over_participants,
        delay=gis.delay(delay_convention),
        round_cost=lambda _: per_round,
        schedule=schedule,
        gap=gap,
        n_rounds=n_rounds,
        message_hook=hook,
        message_columns=_DDP_COLUMNS,
    )
    setting = {
        "epsilon": epsilon,
        "c2": c2,
        "cost_model": cost_model,
        "delay_convention": delay_convention,
        "diameter": gis.n_slots,
        "t_delay": plan.delay,
        "n_edges": gis.n_edges,
        "n_rounds": n_rounds,
        "gap": gap,
        "schedule": schedule,
        "n_trials": n_trials,
        "gis_messages": {k: gis.count(k) for k in ("ADV", "REQ", "DATA")},
    }
    return _run(
        plan,
        env,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        root=root,
        table=table,
        record=record,
        setting=setting,
        secure_noise=secure_noise,
        stop_epoch=stop_epoch,
    )


def run_hdp_mab(
    env: Any,
    components: Sequence[nx.Graph],
    *,
    horizon: int,
    epsilon: float,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    c1: float = 50.0,
    c2: float = 1.0,
    cost_model: str = "paths",
    aggregation: str = "unweighted",
    delay_convention: str = "slots",
    n_rounds: int | None = None,
    gap: float | None = None,
    mode: str = "paper",
    table: Any = None,
    record: bool | str = False,
    secure_noise: bool = False,
    stop_epoch: int | None = None,
) -> LiSongRun:
    """HDP-MAB (Alg. 5): components with sink agents, SAC relaying, server averaging.

    Parameters
    ----------
    env : BernoulliMAB
        ``M`` agents, ``K`` arms (homogeneous or heterogeneous means).
    components : sequence of networkx.Graph
        ``G_q`` on nodes ``0..M_q-1``; agents are numbered globally in component order
        (``sum M_q = M``). See :func:`fedpriv.algorithms.li_song.network.table_ii_components`.
    c1, c2 : float
        Sink-server and agent-agent link costs >= 0.
    cost_model : {"paths", "edges"}
        ``c2 sum sd(i, SA_q) + c1 Q`` (Theorem 4) or ``c2 sum |E_q| + c1 Q`` per round.
    aggregation : {"unweighted", "weighted"}
        ``(1/Q) sum_q ȳ_q`` (Alg. 5 line 14) or ``sum_q (M_q/M) ȳ_q`` (fedpriv's correction).
    delay_convention : {"slots", "counter"}
        ``t_delay = max_q radius(G_q)`` (Alg. 4 line 5, Theorem 4's proof; default) or
        one less (Alg. 4 line 4's ``max sd - 1``).
    horizon : int
        ``T`` slots per agent, >= 1.
    epsilon : float
        Input ε > 0 per release (``inf``: no noise), as in :func:`run_cdp_mab`.
    n_trials : int
        Independent runs, >= 1 (vectorized).
    seed : int or SeedSequence
        Root of every stream (reward table, noise per (trial, agent)).
    n_rounds : int, optional
        ``R >= 1`` rounds with ``Δ̃_r`` from ``mode`` (Corollary 1); default none
        (``Δ̃_r = 2^{-r}``).
    gap : float, optional
        ``Δ`` in (0, 1) for ``Δ^{r/R}``; default the environment's minimum gap.
    mode : {"paper", "corrected"}
        ``Δ^{r/R}`` or ``(Δ/2)^{r/R}`` (only with ``n_rounds``).
    table : RewardTable, optional
        Reward table (e.g. a neighbouring one); default drawn from ``seed``.
    record : bool or {"messages", "actions"}
        Keep message and action transcripts, or only the one named (the other is
        None).
    secure_noise : bool
        Exact discrete Laplace noise on a grid for every message (as in
        :func:`run_cdp_mab`).
    stop_epoch : int, optional
        Last epoch simulated (as in :func:`run_cdp_mab`).

    Returns
    -------
    LiSongRun
        Regret, communication cost and the accountant's ledger of every release.

    Raises
    ------
    ValueError, TypeError
        As :func:`run_ddp_mab`; component sizes not summing to ``M``.
    """
    horizon, epsilon, n_trials, root, table = _common(env, horizon, epsilon, n_trials, seed, table)
    sinks = find_sink_agents(components)
    m = env.n_agents
    if sum(sinks.sizes) != m:
        raise ValueError(f"component sizes {sinks.sizes} must sum to n_agents = {m}.")
    c1, c2 = check_cost("c1", c1), check_cost("c2", c2)
    _choice("cost_model", cost_model, COST_MODELS)
    _choice("aggregation", aggregation, AGGREGATIONS)
    _choice("delay_convention", delay_convention, DELAY_CONVENTIONS)
    n_rounds, schedule, gap = _schedule(n_rounds, mode, gap, env)
    per_round = sinks.round_cost(c1, c2, cost_model)
    q_of = sinks.component
    n_q = sinks.n_components
    member = np.zeros((n_q, m))
    member[q_of, np.arange(m)] = 1.0
    sizes = member.sum(axis=1)
    weights = np.full(n_q, 1.0 / n_q) if aggregation == "unweighted" else sizes / m
    paths: list[list[int]] = []  # SAC route of each agent to its sink (global labels)
    offset = 0
    for q, graph in enumerate(components):
        local_sink = sinks.sinks[q] - offset
        for i in range(graph.number_of_nodes()):
            path = [0] if graph.number_of_nodes() == 1 else nx.shortest_path(graph, i, local_sink)
            paths.append([offset + v for v in path])
        offset += graph.number_of_nodes()

    def aggregate(ybar: np.ndarray, part: np.ndarray) -> np.ndarray:
        sink_means = np.einsum("qa,bak->bqk", member, ybar) / sizes[None, :, None]
        return np.einsum("q,bqk->bk", weights, sink_means)

    # The transcript's fixed parts, once: each agent's SAC hops, the components' masks.
    sac_hops = [[(hop, u, v) for hop, (u, v) in enumerate(itertools.pairwise(p))] for p in paths]
    in_component = [q_of == q for q in range(len(sinks.sinks))]
    relay = max(sinks.radius)

    def hook(
        rows: list, *, trial, epoch, time, agents, arms, ybar, participants, aggregate, kept
    ) -> None:
        append, arms_of, kept_of = rows.append, tuple(arms.tolist()), tuple(kept.tolist())
        for i, row in enumerate(ybar.tolist()):
            content = tuple(row)
            for hop, u, v in sac_hops[i]:
                append((trial, epoch, arms_of, time + hop, "SAC", u, v, i, content))
        for q, sink in enumerate(sinks.sinks):
            mean = tuple(ybar[in_component[q]].mean(axis=0).tolist())
            append((trial, epoch, arms_of, time + relay, "sink_upload", sink, -1, sink, mean))
        for a in agents.tolist():
            append((trial, epoch, arms_of, time + relay, "broadcast", -1, a, -1, kept_of))

    plan = StructurePlan(
        algorithm="hdp-mab",
        agents_of_unit=np.arange(m)[None, :],
        divisor=m,
        n_agents_claim=m,
        n_participants=None,
        aggregate=aggregate,
        delay=sinks.delay(delay_convention),
        round_cost=lambda _: per_round,
        schedule=schedule,
        gap=gap,
        n_rounds=n_rounds,
        message_hook=hook,
        message_columns=_HDP_COLUMNS,
    )
    setting = {
        "epsilon": epsilon,
        "c1": c1,
        "c2": c2,
        "cost_model": cost_model,
        "aggregation": aggregation,
        "delay_convention": delay_convention,
        "component_sizes": list(sinks.sizes),
        "sinks": list(sinks.sinks),
        "t_delay": plan.delay,
        "n_rounds": n_rounds,
        "gap": gap,
        "schedule": schedule,
        "n_trials": n_trials,
    }
    return _run(
        plan,
        env,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        root=root,
        table=table,
        record=record,
        setting=setting,
        secure_noise=secure_noise,
        stop_epoch=stop_epoch,
    )


def run_single_mab(
    env: Any,
    *,
    horizon: int,
    epsilon: float,
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    table: Any = None,
    record: bool | str = False,
    secure_noise: bool = False,
    stop_epoch: int | None = None,
) -> LiSongRun:
    """Single-MAB: every agent runs Alg. 1 alone with ``M = 1`` (Remark 2, Fig. 8).

    Noise ``Lap(1/(ε n_r))`` (pure ε per release; ``epsilon = inf`` is the noise-free
    version). Regret uses the global gaps, so an agent whose local best arm is not the
    global one has linear regret (§VII-A, heterogeneous rewards). Note (fedpriv's check of
    Eq. 16 against App. A-A Fact 2): the width ``h(r)`` is too narrow for ``M = 1``.

    Parameters
    ----------
    env : BernoulliMAB
        ``M`` agents, ``K`` arms (homogeneous or heterogeneous means).
    horizon : int
        ``T`` slots per agent, >= 1.
    epsilon : float
        Input ε > 0 per release (``inf``: no noise), as in :func:`run_cdp_mab`.
    n_trials : int
        Independent runs, >= 1 (vectorized).
    seed : int or SeedSequence
        Root of every stream (reward table, noise per (trial, agent)).
    table : RewardTable, optional
        Reward table (e.g. a neighbouring one); default drawn from ``seed``.
    record : bool or {"messages", "actions"}
        Keep message and action transcripts, or only the one named (the other is
        None).
    secure_noise : bool
        Exact discrete Laplace noise on a grid for every message (as in
        :func:`run_cdp_mab`).
    stop_epoch : int, optional
        Last epoch simulated (as in :func:`run_cdp_mab`).

    Returns
    -------
    LiSongRun
        Regret, communication cost and the accountant's ledger of every release.

    Raises
    ------
    ValueError
        As :func:`run_cdp_mab`.
    """
    horizon, epsilon, n_trials, root, table = _common(env, horizon, epsilon, n_trials, seed, table)
    m = env.n_agents
    plan = StructurePlan(
        algorithm="single-mab",
        agents_of_unit=np.arange(m)[:, None],
        divisor=1,
        n_agents_claim=1,
        n_participants=None,
        aggregate=_mean_over_participants,
        delay=0,
        round_cost=lambda _: 0.0,
        schedule="halving",
        gap=None,
        n_rounds=None,
    )
    setting = {"epsilon": epsilon, "n_trials": n_trials}
    return _run(
        plan,
        env,
        horizon=horizon,
        epsilon=epsilon,
        n_trials=n_trials,
        root=root,
        table=table,
        record=record,
        setting=setting,
        secure_noise=secure_noise,
        stop_epoch=stop_epoch,
    )
