"""End-to-end audit of FedUCB's sync trigger in Fig. 1A's own setting (M = 100, d = 10, T = 10⁷).

Fig. 1A of Dubey & Pentland (NeurIPS 2020; §4.4, Experiment 1) sweeps ε at δ = 0.1 with
``M = 100`` agents (as in Fig. 1B-C), ``d = 10`` and ``T = 10⁷`` rounds under the
adaptive (log-det) schedule. T = 10⁷ rounds of 100 agents cannot be run 10⁵ times, but
the observable this audit reads does not need them.

Observable. The controller sees when it is asked to synchronise. Before the first sync
every agent acts on ``S₀ = M ρ_min I`` and its own raw data, and Alg. 1 line 12's test
``Δt (log det W − log det S₀) >= D`` reads the raw local Gram matrix (Alg. 1
lines 4 and 10): nothing is noised, so the first sync round is a deterministic function of
the data, and by causality of the rounds up to it only. Each run is the algorithm
itself (:func:`fedpriv.algorithms.feducb.first_sync.first_sync_rounds`: the same round
step as :func:`~fedpriv.algorithms.feducb.centralized.run_feducb`) with the
Privatizer calibration of a run of ``T = 10⁷`` rounds (``feducb_privatizer``, paper
calibration: ρ_min, ρ_max = 3 ρ_min and β's privacy terms depend on T and ε), stopped
after round τ, the knife-edge round: the observable is the first sync round censored
at τ + 1 ("no sync by τ"), which is all the event ``first sync = τ`` depends on.

Pair (one user changed: decision set and reward of one round). As
:func:`fedpriv.audit.families.feducb.recipes.knife_edge_pairs` does at d = 2: in the world D
(Fig. 1A's environment, K = 20 actions, the first rounds of seed 20200) the agent
whose test value leads at τ keeps its decision set; in D' that decision set is scaled
by 0.05 (rewards kept; the UCB scales, so the same action index is chosen and adds
less to the log-det). ``D`` is set half-way between that agent's value in D and the
largest value any agent reaches at τ in D'. τ is the first round where D is at least
1000 units in the last place from both values: before the first sync the test value
grows by about ``d ln(ρ_max/ρ_min) = d ln 3`` per round whatever the data, and the data
move it only by ``~ L²/(M ρ_max)`` (5·10⁻⁹ against 11 at ε = 0.1). The pair is kept only
if one run per world confirms first sync = τ in D and none by τ in D'. ``D`` is a
public parameter; the privacy claim is made for FedUCB(D, ...) with any D. The
earliest knife edge (τ = 0 to 2) keeps the runs short; its D (11 to 33) makes a sync
every few rounds (after a sync the test value grows by about d ln 2 per round), near
Fig. 1B's O(MT) regime rather than Fig. 1A's n = O(M log T). The same construction near the first sync of the
n = O(M log T) regime's D ≈ 4.3·10⁴ (first sync near round 3 900) is built by
``benchmarks/bench_feducb_fig1a.py --regime``; its runs cost ~3 900 rounds each.

Sharing across ε: not possible. ε enters the runs before any release, through
``S₀ = M ρ_min I``, the shift ``M(ρ_max − ρ_min) I`` of W and β, so each row has its
own runs and its own D.

Deterministic event. Every run of a world returns the same value: the event ``first
sync time == τ`` has probability 1 in D and 0 in D', so the view's ε is ∞ by analysis
(the raw channel of the row), and the audit's pair is a coupled-run witness of it. The
Clopper–Pearson bound printed beside it counts executed runs only: the pilot and the
confirmation each execute their own batch per world (at most ``budget.batch_size``
runs, fewer when their contexts would pass 40 MB: 250 at τ = 0), each batch is
required to agree (:class:`RuntimeError` otherwise), and no run is counted as a copy of
another. With ``n`` executed runs per world and zero events in one world the bound at
95 % (level 0.0125 per side) is ``ln((0.0125^{1/n} − δ)/(1 − 0.0125^{1/n}))``
(:func:`runs_needed` inverts it); it is a finite statement about the runs, below the
truth ∞, and no budget is chosen to make it clear a claim.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.estimators import epsilon_lower_bound_at_delta
from fedpriv.audit.families.feducb.recipes import BRACKET_DELTA

__all__ = [
    "FIG1A_ENVIRONMENT_SEED",
    "Fig1AKnifeEdge",
    "RegimeFirstSync",
    "audit_fig1a_sync_timing",
    "fig1a_knife_edge",
    "regime_first_sync",
    "runs_needed",
]

#: Seed of the environment of every FedUCB audit world (as ``feducb._base_world``).
FIG1A_ENVIRONMENT_SEED = 20200
#: Bytes of the (batch, M, τ+1, K, d) contexts simulated at once (250 runs at τ = 0 and
#: M = 100, K = 20, d = 10; one run at a time from τ ≈ 250 on).
_MAX_BATCH_BYTES = 40_000_000
#: Rounds after ``first_round`` searched for a knife edge.
_SCAN_ROUNDS = 32
#: Least distance of D from either world's test value at τ, in units in the last place
#: of the value: a different summation order (a few ulps) cannot move the knife edge.
_MIN_SIDE_ULPS = 1000.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Fig1AKnifeEdge:
    """One neighbouring pair of the sync-trigger audit (see the module docstring).

    Attributes
    ----------
    tau : int
        Knife-edge round (0-based): the first sync is at τ in D, after τ in D'.
    agent : int
        Agent whose decision set at τ differs.
    threshold : float
        The log-det threshold ``D``.
    margin : float
        ``f_D(agent, τ) − max(rival values at τ)``, at least 2000 units in the last
        place of ``f_D(agent, τ)`` (test-value units).
    tables_d, tables_d_prime : LinearBanditTables
        One trial of τ + 1 rounds of each world.
    """

    tau: int
    agent: int
    threshold: float
    margin: float
    tables_d: object
    tables_d_prime: object


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RegimeFirstSync:
    """Where Alg. 1 line 12's test first fires at a large ``D``, for every data set.

    Attributes
    ----------
    round : int
        0-based round at whose end every agent's test fires first, whatever the data
        (``‖x‖ <= 1``).
    crossing_margin : float
        ``(round + 1) d ln(ρ_max/ρ_min) − D`` >= 0: the data-independent part alone
        crosses ``D`` at ``round`` (test-value units).
    gap_below : float
        ``D − round (d ln(ρ_max/ρ_min) + round/(M ρ_max))`` > 0: one round earlier even
        the largest data part leaves the test below ``D``.
    """

    round: int
    crossing_margin: float
    gap_below: float


def regime_first_sync(claim: Claim) -> RegimeFirstSync:
    """The first sync round at the claim's own ``D``, shown data-independent (or not).

    Before the first sync, after round ``r`` (0-based) the test value is ``Δt (log det W
    − log det S₀)`` with ``Δt = r + 1``, ``S₀ = M ρ_min I`` and ``W = M ρ_max I + U``
    (Alg. 1 lines 4, 10 and 12; ``U`` the ``r + 1`` raw pairs ``x xᵀ``), so it is
    ``(r + 1)(d ln(ρ_max/ρ_min) + log det(I + U/(M ρ_max)))`` and the data part lies in
    ``[0, (r + 1)/(M ρ_max)]`` for ``‖x‖ <= 1`` (``log det(I + A) <= tr A``). When the
    data-independent part crosses ``D`` at round ``r*`` and ``r* (d ln(ρ_max/ρ_min) +
    r*/(M ρ_max)) < D``, every data set syncs first at ``r*``.

    Parameters
    ----------
    claim : Claim
        Centralized adaptive FedUCB with a ``threshold`` entry ``D > 0`` (Fig. 1B-C's
        regimes), priced with the Privatizer calibration of its horizon.

    Returns
    -------
    RegimeFirstSync
        The round and both margins; the first sync round is data-independent exactly
        when both margins are positive beyond rounding (the caller checks).

    Raises
    ------
    ValueError
        If the claim is not centralized adaptive FedUCB or has no threshold > 0.
    """
    from fedpriv.audit.families.feducb.recipes import tree_leaves
    from fedpriv.privacy.calibrations import feducb_privatizer

    s = _checked_setting(claim)
    threshold = float(s.get("threshold", 0.0))
    if not threshold > 0:
        raise ValueError(f"`claim` must have a threshold D > 0, got {threshold!r}.")
    horizon, n_syncs = tree_leaves(s)
    n_agents = int(s["n_agents"])
    cal = feducb_privatizer(
        float(s["epsilon"]),
        float(s["delta"]),
        horizon=horizon,
        n_agents=n_agents,
        dim=int(s["dim"]),
        n_syncs=n_syncs,
    )
    per_round = int(s["dim"]) * math.log(cal.rho_max / cal.rho_min)
    first = math.ceil(threshold / per_round) - 1
    return RegimeFirstSync(
        round=first,
        crossing_margin=(first + 1) * per_round - threshold,
        gap_below=threshold - first * (per_round + first / (n_agents * cal.rho_max)),
    )


def _mlogt_threshold(s: dict) -> float:
    """D of the n = O(M log T) regime in the setting (as the feducb-fig1b/1c experiments)."""
    from fedpriv.algorithms.feducb.sync import private_threshold_for_syncs, syncs_for_order

    horizon = int(s["horizon"])
    n = syncs_for_order("MlogT", n_agents=int(s["n_agents"]), horizon=horizon)
    return private_threshold_for_syncs(n, horizon=horizon, dim=int(s["dim"]))


def _checked_setting(claim: Claim) -> dict:
    s = claim.setting_dict()
    if s.get("structure") != "centralized" or s.get("schedule") != "adaptive":
        raise ValueError(
            "`claim` must be centralized FedUCB with the adaptive schedule, got "
            f"structure={s.get('structure')!r}, schedule={s.get('schedule')!r}."
        )
    return s


def _first_sync(s: dict, tables, threshold: float):
    from fedpriv.algorithms.feducb.first_sync import first_sync_rounds

    return first_sync_rounds(
        tables,
        epsilon=float(s["epsilon"]),
        delta=float(s["delta"]),
        horizon=int(s["horizon"]),
        threshold=threshold,
    )


def fig1a_knife_edge(claim: Claim, *, first_round: int = 0, shrink: float = 0.05) -> Fig1AKnifeEdge:
    """The first knife-edge pair at a round ``τ >= first_round`` in the claim's setting.

    Parameters
    ----------
    claim : Claim
        Centralized adaptive FedUCB (``n_agents``, ``n_arms``, ``dim``, ``horizon``,
        ``epsilon``, ``delta`` in its setting).
    first_round : int
        Earliest τ searched, >= 0 (τ up to ``first_round + 31``). Each audited run
        plays τ + 1 rounds.
    shrink : float
        Scale of the changed decision set, in (0, 1).

    Returns
    -------
    Fig1AKnifeEdge

    Raises
    ------
    ValueError
        If ``first_round < 0``, ``shrink`` is outside (0, 1), or ``claim`` is not
        centralized adaptive FedUCB.
    RuntimeError
        If no round in the searched window gives a knife edge.
    """
    from fedpriv.algorithms.environments.linear import LinearBandit

    s = _checked_setting(claim)
    if isinstance(first_round, bool) or not isinstance(first_round, int) or first_round < 0:
        raise ValueError(f"`first_round` must be an int >= 0, got {first_round!r}.")
    if not 0.0 < float(shrink) < 1.0:
        raise ValueError(f"`shrink` must be in (0, 1), got {shrink!r}.")
    spec = LinearBandit(n_agents=int(s["n_agents"]), n_arms=int(s["n_arms"]), dim=int(s["dim"]))
    world = spec.sample(
        np.random.SeedSequence(FIG1A_ENVIRONMENT_SEED),
        n_trials=1,
        horizon=first_round + _SCAN_ROUNDS,
    )
    values = _first_sync(s, world, math.inf).statistic[0]  # (M, rounds): never syncs
    for tau in range(first_round, first_round + _SCAN_ROUNDS):
        agent = int(np.argmax(values[:, tau]))
        tables_d = _tile(world, 1, tau + 1)
        block = tables_d.block(tau, tau + 1)
        tables_dp = tables_d.substitute(
            agent=agent, t=tau, contexts=block.contexts[0, agent, 0] * shrink
        )
        changed = _first_sync(s, tables_dp, math.inf).statistic[0, agent, tau]
        rival = max(changed, np.delete(values[:, tau], agent).max())
        if values[agent, tau] - rival < 2.0 * _MIN_SIDE_ULPS * np.spacing(values[agent, tau]):
            continue
        threshold = float(0.5 * (values[agent, tau] + rival))
        if (
            _first_sync(s, tables_d, threshold).rounds[0] == tau
            and _first_sync(s, tables_dp, threshold).rounds[0] == tau + 1
        ):
            return Fig1AKnifeEdge(
                tau=tau,
                agent=agent,
                threshold=threshold,
                margin=float(values[agent, tau] - rival),
                tables_d=tables_d,
                tables_d_prime=tables_dp,
            )
    raise RuntimeError(
        f"no round in [{first_round}, {first_round + _SCAN_ROUNDS}) puts the "
        "sync trigger on a knife edge in this world"
    )


def _executed_batch(s: dict, tables, threshold: float, world: int) -> np.ndarray:
    """First sync rounds of one executed batch of runs of ``world``, which must agree.

    The runs read no randomness, so every run of a world has this one outcome: the
    audit executes one batch per world and counts its ``n`` runs as ``n`` copies of it
    (the module docstring's "Budget"). A batch whose runs differ would mean the
    simulation is not the deterministic function it is taken for: the audit stops.
    """
    rounds = np.asarray(_first_sync(s, tables, threshold).rounds)
    if rounds.size == 0 or not np.all(rounds == rounds[0]):
        name = ("D", "D'")[world]
        raise RuntimeError(
            f"the {rounds.size} runs of world {name} differ "
            "(first sync rounds " + ", ".join(map(str, np.unique(rounds)[:5])) + "): "
            "the runs are not deterministic, so their copies cannot stand for new runs"
        )
    return rounds


def _tile(tables, n: int, rounds: int | None = None):
    """The first ``rounds`` (default all) rounds of ``tables`` (one trial), as ``n`` trials."""
    from fedpriv.algorithms.environments.linear import LinearBanditTables

    block = tables.block(0, tables.horizon if rounds is None else rounds)
    return LinearBanditTables.from_arrays(
        tables.spec,
        *(np.repeat(a, n, axis=0) for a in (block.contexts, block.rewards, tables.theta)),
    )


def runs_needed(epsilon: float, *, delta: float, confidence: float = 0.95) -> int:
    """Runs per world for a deterministic event to bound ε above ``epsilon``.

    With every run of D in the event and none of D' (Clopper–Pearson, level
    ``(1 − confidence)/4`` per one-sided bound, as
    :func:`~fedpriv.audit.engine.coupled.confirm_event`), the bound with ``n`` runs is
    ``ln((a^{1/n} − δ)/(1 − a^{1/n}))``; this returns the least ``n`` above ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target ε in nats, finite and >= 0.
    delta : float
        In [0, 1).
    confidence : float, default 0.95
        In (0, 1).

    Returns
    -------
    int
        Runs per world, >= 1.

    Raises
    ------
    ValueError
        If ``epsilon`` is not finite and >= 0, ``delta`` not in [0, 1) or
        ``confidence`` not in (0, 1).

    Examples
    --------
    >>> runs_needed(10.0, delta=0.1)
    107248
    """
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"`epsilon` must be finite and >= 0, got {epsilon!r}.")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"`delta` must be in [0, 1), got {delta!r}.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"`confidence` must be in (0, 1), got {confidence!r}.")
    level = (1.0 - confidence) / 4.0

    def bound(n: int) -> float:
        low = level ** (1.0 / n)
        return math.log((low - delta) / (1.0 - low)) if low > delta else -math.inf

    n = max(1, math.floor(math.log(1 / level) * math.exp(epsilon) / (1.0 - delta)) - 2)
    while bound(n) <= epsilon:
        n += 1
    return n


def audit_fig1a_sync_timing(
    claim: Claim, budget: AuditBudget, seed, *, first_round: int = 0
) -> EndToEndAudit:
    """Audit the first sync time in the claim's (Fig. 1A) setting; see the module docstring.

    The pilot (``budget.pilot_samples`` runs per world) chooses the event among the
    engine's candidates and ``first sync time == τ``; ``budget.samples`` runs per world
    confirm it (:func:`~fedpriv.audit.engine.coupled.search_and_confirm`), both capped
    at one executed batch per world. The runs draw no randomness (nothing is noised
    before the first sync), so ``seed`` is not read (the module docstring's
    "Deterministic event"). ``first_round`` is passed to :func:`fig1a_knife_edge`
    (each run plays τ + 1 rounds).

    Parameters
    ----------
    claim : Claim
        The Fig. 1A claim.
    budget : AuditBudget
        Pilot and confirmation runs per world, and confidence.
    seed : int or SeedSequence
        Root of the batches' addresses.
    first_round : int
        Passed to :func:`fig1a_knife_edge`.

    Returns
    -------
    EndToEndAudit

    Raises
    ------
    ValueError
        If ``claim`` is not centralized adaptive FedUCB, or ``first_round < 0``.
    RuntimeError
        If no knife edge is found (:func:`fig1a_knife_edge`), or the runs of one
        executed batch disagree.
    """
    s = _checked_setting(claim)
    edge = fig1a_knife_edge(claim, first_round=first_round)
    worlds = (edge.tables_d, edge.tables_d_prime)
    per_run = edge.tables_d.block(0, edge.tau + 1).contexts.nbytes
    batch = max(1, min(budget.batch_size, _MAX_BATCH_BYTES // per_run))

    # Every sample is an executed run: the pilot and the confirmation each run their own
    # batch per world (at most ``batch`` runs), none counted as copies of another.
    budget = dataclasses.replace(
        budget,
        pilot_samples=min(budget.pilot_samples, batch),
        samples=min(budget.samples, batch),
        batch_size=batch,
    )

    def sample(world, n, root):
        del root  # deterministic runs: no stream is read
        tables = worlds[world] if n == 1 else _tile(worlds[world], n)
        return _executed_batch(s, tables, edge.threshold, world).astype(np.float64)

    pair = (
        f"one user changed: agent {edge.agent}'s decision set at round {edge.tau} scaled "
        f"by 0.05 (D') vs Fig. 1A's world (D, seed {FIG1A_ENVIRONMENT_SEED}, K = "
        f"{int(s['n_arms'])}); threshold D = {edge.threshold:.15g} (knife-edge margin "
        f"{edge.margin:.3g}); Privatizer calibration of T = {int(s['horizon']):.0e}, "
        f"runs stopped after round {edge.tau}; deterministic event: every run of D syncs "
        f"first at round {edge.tau} and no run of D' does (probability 1 and 0), so ε = ∞ "
        "by analysis and this pair is its coupled-run witness; the bound counts executed "
        "runs only. This D makes a sync every few rounds, not Fig. 1A's n = O(M log T) "
        f"regime (D = {_mlogt_threshold(s):.3g})"
    )
    channel = "controller: first sync time (runs stopped at the knife-edge round)"
    result = search_and_confirm(
        {pair: sample},
        budget=budget,
        seed=seed,
        delta=float(s["delta"]),
        channel=channel,
        names=("first sync time",),
        events={pair: [(0, "==", float(edge.tau))]},
    )
    at_bracket = epsilon_lower_bound_at_delta(result.bound, BRACKET_DELTA)
    return dataclasses.replace(result, epsilon_lower_bound_at_1e_6=at_bracket)
