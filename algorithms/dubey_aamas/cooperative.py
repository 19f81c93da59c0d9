"""Dubey & Pentland's cooperative UCB (AAMAS 2020): private, Byzantine-proof, non-private.

M agents on a connected graph G face the same K-armed bandit; each round every agent
pulls one arm, then creates a message that floods ``γ`` hops (:mod:`fedpriv.algorithms.networks.flooding`)
and reaches ``v`` after ``d(u, v)`` rounds. Every formula of the paper was lost in the
available text; this module implements fedpriv's reconstruction
from the surviving prose and names the slot and confidence of each choice.

Private Multi-Agent UCB (Alg. 1 + 2, AAMAS 2020 §3.2–3.3)
-----------------------------------------------------------
* Message ``q_t^v = ⟨v, t, μ̃^v, count^v⟩`` (eq. 6, reconstructed with high confidence). ``μ̃_k^v`` is the agent's last
  noisy mean of arm k, released when its own count reaches a multiple of
  ``f = ⌈1/ε⌉`` (reconstructed with medium confidence) with ``Lap(b(n))``: ``b(n) = n^-(1-ϑ/2)`` (``rule="decaying"``,
  reconstructed with medium confidence) or ``1/(n ε)`` (``"fixed"``, reconstructed with low confidence); one fresh draw per release, re-sent unchanged
  until the next (re-sending is post-processing).
* ``count_field`` (ambiguity A2): ``"release"`` sends ``ñ`` (count at the last release,
  default), ``"current"`` the current raw count.
* Group estimate (eq. 13, reconstructed with medium confidence): ``μ̂_k = Σ_u w_k^u μ̃_k^u / N_k`` over the latest
  message of each ``u`` within γ hops, ``N_k = Σ_u w_k^u``. ``own_term`` (A1): ``"noisy"``
  (default) uses the agent's own released message; ``"raw"`` (the paper's §3.3 prose)
  uses its raw sum and count. Raw makes its actions, hence the counts it broadcasts,
  depend on un-noised rewards: the accountant is charged ``events.NonPrivate``
  for every stream and reports ε = ∞.
* Policy (reconstructed with medium confidence): round-robin for the first ``K f`` rounds, then
  ``argmax μ̂_k + sqrt(2 ln t / N_k)`` (``+inf`` where ``N_k = 0``), ties uniform.

Non-private cooperative UCB ("the non-private version", §5, never defined there): the same protocol
with raw means and raw counts sent every round (``f = 1``, no noise; charged as
``NonPrivate``). Byzantine-Proof Multi-Agent UCB lives in :mod:`fedpriv.algorithms.dubey_aamas.byzantine`.

Privacy accounting: one :class:`~privacy.Accountant` with disjoint levels ``(trial,
agent, arm)`` — one reward belongs to one agent-arm stream, so agents and arms compose
in parallel (fedpriv's derivation) and per-agent guarantees are ``where={"agent": v}``
queries; the releases of one stream compose sequentially inside the
:class:`privacy.IntervalRelease` event charged for it (ledger: one row per draw).
Forwarding, re-sending a cached mean and the receivers' decisions are post-processing
(items 4–5).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from fedpriv.algorithms.dubey_aamas.baselines import reward_table_for
from fedpriv.algorithms.dubey_aamas.loop import CoopLoop
from fedpriv.algorithms.dubey_aamas.runs import CoopRun, Transcript
from fedpriv.algorithms.dubey_aamas.uniforms import LazyUniforms
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, RewardTable
from fedpriv.algorithms.networks.flooding import FloodingSchedule, make_schedule
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng, stream_rngs
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.calibrations import interval_length, interval_noise_scales
from fedpriv.privacy.checks import check_epsilon, check_int_at_least
from fedpriv.privacy.mechanisms.interval_mechanism import IntervalMeanRelease, every_stream

__all__ = [
    "COUNT_FIELDS",
    "OWN_TERMS",
    "check_setup",
    "communication_cost",
    "run_coop_ucb_nonprivate",
    "run_private_coop_ucb",
]

OWN_TERMS = ("noisy", "raw")
COUNT_FIELDS = ("release", "current")
_KEYS = ("trial", "agent", "arm")


def communication_cost(schedule: FloodingSchedule, horizon: int) -> tuple[int, int]:
    """``(transmissions, deliveries)`` per trial when every agent sends every round.

    Parameters
    ----------
    schedule : FloodingSchedule
        The graph's flooding schedule.
    horizon : int
        T >= 1.

    Returns
    -------
    tuple of (int, int)
    """
    transmissions = int(horizon * schedule.transmissions.sum())
    # the message of round t0 reaches v within the horizon iff t0 + d(u, v) <= T
    deliveries = int(np.maximum(0, horizon - schedule.delays).sum())
    return transmissions, deliveries


def check_setup(env: BernoulliMAB, graph: nx.Graph, horizon: int, n_trials: int, gamma: int):
    """Validate the common arguments; return ``(horizon, n_trials, schedule)``.

    Parameters
    ----------
    env : BernoulliMAB
        The environment.
    graph : networkx.Graph
        Connected, one node per agent.
    horizon : int
        T >= 1.
    n_trials : int
        >= 1.
    gamma : int
        Message life γ >= 1.

    Returns
    -------
    tuple of (int, int, FloodingSchedule)

    Raises
    ------
    TypeError
        If ``env`` is not a ``BernoulliMAB``.
    ValueError
        If ``horizon``, ``n_trials`` or ``gamma`` is < 1, the graph is disconnected
        or badly labelled, or its size is not the number of agents.
    """
    if not isinstance(env, BernoulliMAB):
        raise TypeError(f"`env` must be a BernoulliMAB, got {type(env).__name__}.")
    horizon = check_int_at_least("horizon", horizon, 1)
    n_trials = check_int_at_least("n_trials", n_trials, 1)
    schedule = make_schedule(graph, gamma)
    if schedule.n_agents != env.n_agents:
        raise ValueError(
            f"`graph` has {schedule.n_agents} nodes but the environment has {env.n_agents} agents."
        )
    return horizon, n_trials, schedule


def _simulate(
    env: BernoulliMAB,
    graph: nx.Graph,
    *,
    horizon: int,
    gamma: int,
    n_trials: int,
    seed,
    table: RewardTable | None,
    record: bool,
    private: bool,
    epsilon: float,
    theta: float | None,
    rule: str,
    own_term: str,
    count_field: str,
    interval: int = 1,
    secure_noise: bool = False,
    stop: int | None = None,
) -> CoopRun:
    horizon, n_trials, schedule = check_setup(env, graph, horizon, n_trials, gamma)
    if stop is not None:
        stop = check_int_at_least("stop", stop, 1)
        if stop > horizon:
            raise ValueError(f"`stop` must be <= horizon = {horizon}, got {stop}.")
    root = as_seed_sequence(seed)
    table = reward_table_for(env, root) if table is None else table
    if not isinstance(table, RewardTable):
        raise TypeError(f"`table` must be a RewardTable, got {type(table).__name__}.")
    B, M, K, T = n_trials, env.n_agents, env.n_arms, horizon
    f = interval_length(epsilon) if private else interval
    policy = LazyUniforms(  # tie-breaks: generators only for the rows that ever tie
        B * M,
        T,
        build_one=lambda row: stream_rng(root, trial=row // M, agent=row % M, stream=Stream.POLICY),
        build_all=lambda: stream_rngs(root, n_trials=B, n_agents=M, stream=Stream.POLICY),
    )
    accountant = Accountant(disjoint=_KEYS)
    every = every_stream(B, M, K)
    mechanism = None
    if private:
        mechanism = IntervalMeanRelease(
            (B, M, K),
            epsilon=epsilon,
            horizon=T,
            theta=theta,
            rule=rule,
            accountant=accountant,
            rngs=stream_rngs(root, n_trials=B, n_agents=M, stream=Stream.NOISE),
            secure=secure_noise,
        )
    if not private:
        accountant.spend(
            events.NonPrivate(
                reason="raw empirical means and counts broadcast (non-private cooperative UCB)"
            ),
            key=every,
        )
    elif own_term == "raw":
        accountant.spend(
            events.NonPrivate(
                reason="own raw mean drives the agent's actions and its un-noised counts are "
                "broadcast (own term raw, as §3.3's prose reads)"
            ),
            key=every,
        )
    loop = CoopLoop(
        schedule=schedule,
        table=table,
        n_trials=B,
        n_agents=M,
        n_arms=K,
        horizon=T,
        interval=f,
        mechanism=mechanism,
        policy=policy,
        own_term=own_term,
        count_field=count_field,
        record=record,
        stop=stop,
    )
    loop.run()
    actions, rewards, content = loop.actions, loop.rewards, loop.content
    released_n = loop.released_n
    actions, rewards = actions.reshape(B, M, loop.stop), rewards.reshape(B, M, loop.stop)
    released_n = np.ascontiguousarray(released_n.reshape(K, B, M).transpose(1, 2, 0))
    transmissions, deliveries = communication_cost(schedule, loop.stop)
    settings = {
        "gamma": schedule.gamma,
        "own_term": own_term,
        "count_field": count_field,
        "interval": f,
    }
    if private:
        settings.update({"epsilon": epsilon, "theta": theta, "rule": rule})
    transcript = None
    if record:
        transcript = Transcript(
            schedule=schedule, content=content, actions=actions, rewards=rewards
        )
    return CoopRun(
        algorithm="private-coop-ucb" if private else "coop-ucb-nonprivate",
        actions=actions,
        rewards=rewards,
        gaps=env.gaps,
        accountant=accountant,
        release_counts=released_n // f if private else np.zeros((B, M, K), dtype=np.int64),
        schedule=schedule,
        transmissions=transmissions,
        deliveries=deliveries,
        setting=settings,
        transcript=transcript,
        seed_entropy=int(root.entropy),
    )


def run_private_coop_ucb(
    env: BernoulliMAB,
    graph: nx.Graph,
    *,
    horizon: int,
    epsilon: float,
    gamma: int,
    theta: float | None = 1.1,
    rule: str = "decaying",
    own_term: str = "noisy",
    count_field: str = "release",
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    table: RewardTable | None = None,
    record: bool = False,
    secure_noise: bool = False,
    stop: int | None = None,
) -> CoopRun:
    """Private Multi-Agent UCB (Alg. 2 with Alg. 1's interval releases), batched.

    Parameters
    ----------
    env : BernoulliMAB
        ``n_agents`` agents, ``n_arms`` arms (homogeneous means in the paper).
    graph : networkx.Graph
        Connected, nodes ``0..n_agents-1``.
    horizon : int
        Rounds T >= 1.
    epsilon : float
        The paper's input ε (sets ``f = ⌈1/ε⌉``; the per-release ε under "fixed"), > 0.
    gamma : int
        Message life γ >= 1.
    theta : float or None
        ϑ in (1, 2) (Tossou & Dimitrakakis' ``v``), required for ``rule="decaying"``.
    rule : {"decaying", "fixed"}
        Noise rule (module docstring).
    own_term : {"noisy", "raw"}
        The agent's own term in its group mean (A1).
    count_field : {"release", "current"}
        The count sent with the mean (A2).
    n_trials : int
        Batch size, >= 1.
    seed : int or SeedSequence
        Root of the streams (ENVIRONMENT: reward table; POLICY: ties; NOISE: Laplace
        draws, one generator per (trial, agent)).
    table : RewardTable, optional
        Reward table to use instead of the seed's (neighboring runs in audits).
    record : bool
        Keep a :class:`~fedpriv.algorithms.dubey_aamas.runs.Transcript`.
    secure_noise : bool
        Exact discrete Laplace noise on a grid instead of floating-point Laplace
        noise (:class:`fedpriv.privacy.mechanisms.interval_mechanism.IntervalMeanRelease` with
        ``secure=True``: one ``DiscreteLaplace`` per release point instead of the
        ``IntervalRelease``).
    stop : int, optional
        Simulate rounds ``1..stop`` only (``1 <= stop <= horizon``; default
        ``horizon``): the run is the first ``stop`` rounds of the horizon-``T`` run
        (same streams, draws and messages; arrays of ``stop`` rounds), and the
        accountant is charged for the horizon's schedule as in the full run.

    Returns
    -------
    CoopRun
        ``accountant``: one :class:`privacy.IntervalRelease` per ``(trial, agent,
        arm)`` stream, charged when the mechanism opens and covering every release
        point up to ``horizon`` (:class:`fedpriv.privacy.mechanisms.interval_mechanism.IntervalMeanRelease`), and one
        ledger row per actual noise draw; with ``own_term="raw"`` also ``NonPrivate``
        on every stream. :func:`fedpriv.algorithms.dubey_aamas.baselines.interval_guarantee` puts it next to
        the claim.

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``theta`` not in (1, 2) (or missing for "decaying"), an
        unknown option, ``gamma < 1``, the graph is disconnected or does not match
        the agents, ``horizon`` or ``n_trials`` < 1, ``stop`` outside [1, horizon],
        or a reward is outside [0, 1].
    """
    epsilon = check_epsilon("epsilon", epsilon)
    interval_noise_scales(epsilon, [1], theta=theta, rule=rule)  # validates theta, rule
    if own_term not in OWN_TERMS:
        raise ValueError(f"`own_term` must be one of {OWN_TERMS}, got {own_term!r}.")
    if count_field not in COUNT_FIELDS:
        raise ValueError(f"`count_field` must be one of {COUNT_FIELDS}, got {count_field!r}.")
    return _simulate(
        env,
        graph,
        horizon=horizon,
        gamma=gamma,
        n_trials=n_trials,
        seed=seed,
        table=table,
        record=record,
        private=True,
        epsilon=epsilon,
        theta=theta,
        rule=rule,
        own_term=own_term,
        count_field=count_field,
        secure_noise=bool(secure_noise),
        stop=stop,
    )


def run_coop_ucb_nonprivate(
    env: BernoulliMAB,
    graph: nx.Graph,
    *,
    horizon: int,
    gamma: int,
    interval: int = 1,
    own_term: str = "raw",
    count_field: str = "current",
    n_trials: int = 1,
    seed: int | np.random.SeedSequence = 0,
    table: RewardTable | None = None,
    record: bool = False,
) -> CoopRun:
    """Non-private cooperative UCB: raw means and counts flooded every round.

    The paper never defines "the non-private version" (§5). Default (``interval=1``,
    raw own term, current count): every message carries the agent's current raw
    means and counts, i.e. the authors' MP-UCB with the empirical mean (public
    code, abhimanyudubey/bandits). ``interval=f`` with ``own_term="noisy"`` and ``count_field="release"`` is
    the literal "Alg. 1 + 2 with the noise removed" (means refreshed every ``f`` own
    pulls, round-robin for ``K f`` rounds). The accountant holds one ``NonPrivate``
    per stream (ε = ∞). Other parameters, returns and errors as
    :func:`run_private_coop_ucb`; ``interval`` must be >= 1.

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
    interval : int
        Own pulls between refreshes of the sent means, >= 1 (1: every round).
    own_term : {"raw", "noisy"}
        The agent's own term in its group mean (A1 of :func:`run_private_coop_ucb`).
    count_field : {"current", "release"}
        The count sent with the mean (A2).
    n_trials : int
        Batch size, >= 1.
    seed : int or SeedSequence
        Root of the streams (ENVIRONMENT: reward table; POLICY: ties).
    table : RewardTable, optional
        Reward table to use instead of the seed's (neighboring runs in audits).
    record : bool
        Keep a :class:`~fedpriv.algorithms.dubey_aamas.runs.Transcript`.

    Returns
    -------
    CoopRun
        Regret and messages; the accountant holds one ``NonPrivate`` per
        ``(trial, agent, arm)`` stream.

    Raises
    ------
    ValueError
        If ``interval < 1``, ``gamma < 1``, an unknown option, the graph is
        disconnected or does not match the agents, ``horizon`` or ``n_trials`` < 1,
        or a reward is outside [0, 1].
    """
    interval = check_int_at_least("interval", interval, 1)
    if own_term not in OWN_TERMS:
        raise ValueError(f"`own_term` must be one of {OWN_TERMS}, got {own_term!r}.")
    if count_field not in COUNT_FIELDS:
        raise ValueError(f"`count_field` must be one of {COUNT_FIELDS}, got {count_field!r}.")
    return _simulate(
        env,
        graph,
        horizon=horizon,
        gamma=gamma,
        n_trials=n_trials,
        seed=seed,
        table=table,
        record=record,
        private=False,
        epsilon=math.inf,
        theta=None,
        rule="decaying",
        own_term=own_term,
        count_field=count_field,
        interval=interval,
    )
