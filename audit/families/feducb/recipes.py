"""Accountant and audit recipes for FedUCB (Dubey & Pentland, NeurIPS 2020).

Accountant
----------
:func:`feducb_accountant` prices one agent's Privatizer releases as the paper's
calibration sets them (:func:`fedpriv.privacy.calibrations.feducb_privatizer`): every tree node
is a :class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian` with the paper's ``σ_N`` and the
substitution sensitivity ``√2 (L² + B²)`` of one (x, y) pair (Definition 1 substitutes a pair),
and a pair sits in ``⌊log₂ n⌋ + 1`` released nodes (``n`` leaves: the number of syncs,
``T`` when the schedule is data-driven, Alg. 2 line 2 / Remark 4). Agents are disjoint
(parallel) except under ``USER_AT_ALL_AGENTS`` (footnote 4), where the accountant
composes them. Decentralized (Remark 5): ``γ`` trees of ``⌈T/γ⌉`` leaves, one pair in
one tree. The accountant prices the releases for an *oblivious* stream; the sync
decision, taken on raw data, is a channel it cannot see (Alg. 1 line 12).

Audit: the sync-timing channel
------------------------------
:func:`audit_sync_timing` audits that channel (Alg. 1 line 12) end to end. Before
the first synchronization every agent acts on its raw local Gram matrix and the
data-independent ``S = M ρ_min I``, so the first sync time is a deterministic function
of the data under the adaptive (log-det) trigger. The neighbouring pair changes one
(context, reward) pair of agent 0 (one user changed): in D the changed action is a fresh direction
that fires the trigger earlier; candidate positions are searched on a pilot sample and
the event "first sync time = t0" is confirmed on fresh runs with
``ε_lb = ln((p_D(t0)_low − δ) / p_D'(t0)_up)``. With the fixed schedule the sync times
are the same in both worlds, so no sync-time event separates them; its broadcasts are
the remaining observable, and as the accountant's ε at the claimed δ = 0.1 is 0 the
event is chosen at δ = 10⁻⁶ instead. Every centralized audit reports the bound of its
event at δ = 10⁻⁶ too (``EndToEndAudit.epsilon_lower_bound_at_1e_6``). Both fixed-schedule
audits (centralized and decentralized) are joined, at the claimed δ and at 10⁻⁶, by a
white-box audit of the view on the adaptive stream
(:mod:`fedpriv.audit.families.feducb.adaptive`): the Privatizer nodes covering agent 0's
first leaf, whose pairs the algorithm itself re-derives in both worlds from the agent's
raw Gram matrix between syncs (Alg. 1 line 4); the three audits run at ``1 − α/3`` each.

Fixed schedule: adaptivity is charged
-------------------------------------
Between syncs an agent acts on its raw own Gram matrix (Alg. 1 line 4, eqs. 2-3;
Remark 3), so one changed pair moves up to ``B`` pairs of its leaf (``⌈B/γ⌉`` per set,
decentralized). The algorithms charge each leaf at that many pairs
(:mod:`fedpriv.algorithms.feducb.adaptivity`), which is the row's end-to-end ε;
:func:`feducb_fixed_mechanism` is the one-pair price (``mechanism_epsilon``).

Decentralized, fixed schedule
-----------------------------
:func:`feducb_decentralized_fixed_accountant` reads the accountant of one run of
decentralized FedUCB with ``schedule="fixed"`` (every channel; the clock reads no
data, so none is raw). :func:`audit_feducb_decentralized_fixed` audits what agent 0's
neighbour receives from it (its releases and their arrival times) with one user of
agent 0 changed.

Length: FedUCB's accountant and audit recipes, one per kind of registered claim
(centralized, decentralized, fixed, footnote 4), which share the knife-edge pair
construction.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.claim import VACUOUS_DELTA_PROBE, Claim
from fedpriv.audit.claims.entry import AccountantResult, MechanismResult
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.estimators import NO_EVIDENCE, EpsilonLowerBound, epsilon_lower_bound_at_delta
from fedpriv.audit.families.feducb.adaptive import split_confidence, with_adaptive_bracket
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.calibrations import feducb_privatizer
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "BRACKET_DELTA",
    "audit_feducb_decentralized_fixed",
    "audit_sync_timing",
    "calibration_accountant",
    "feducb_accountant",
    "feducb_decentralized_fixed_accountant",
    "feducb_fixed_mechanism",
    "footnote4_claim",
    "knife_edge_pairs",
    "tree_leaves",
]


#: δ at which every FedUCB audit also reports its bound (docs/reference/verdicts.md: where the claimed δ
#: makes ε vacuous, ε at δ = 10⁻⁶ is shown too).
BRACKET_DELTA = VACUOUS_DELTA_PROBE


def footnote4_claim(
    epsilon: float, delta: float, *, n_agents: int, delta_prime: float
) -> tuple[float, float]:
    """The paper's composition over agents: ``(√(2M ln(1/δ'))ε + Mε(e^ε − 1), Mδ + δ')``.

    §3 of the paper (composition over the M agents; the arXiv text's ε inside the root corrected).

    Parameters
    ----------
    epsilon, delta : float
        One agent's (ε, δ) (Prop. 3 of the paper).
    n_agents : int
        M >= 1.
    delta_prime : float
        δ' in (0, 1) of the advanced composition.

    Returns
    -------
    tuple of (float, float)
        The composed (ε in nats, δ): the advanced composition theorem (Dwork & Roth
        2014, Thm 3.20) over the M agents.

    Examples
    --------
    >>> round(footnote4_claim(1.0, 0.1, n_agents=3, delta_prime=0.01)[0], 3)
    10.411
    """
    m = int(n_agents)
    eps = math.sqrt(2.0 * m * math.log(1.0 / delta_prime)) * epsilon + m * epsilon * math.expm1(
        epsilon
    )
    return eps, m * delta + delta_prime


def tree_leaves(s: dict) -> tuple[int, int | None]:
    """The Privatizer's tree size for a claim's setting.

    Parameters
    ----------
    s : dict
        The claim's setting (``horizon``; ``structure``, ``gamma``, ``schedule`` and
        ``n_syncs`` when given).

    Returns
    -------
    capacity : int
        Leaves of one tree: ``ceil(horizon / gamma)`` (γ = 1 unless decentralized).
    n_syncs : int or None
        The fixed schedule's syncs, at most ``capacity``; None for the adaptive one.
    """
    gamma = int(s.get("gamma", 1)) if s.get("structure") == "decentralized" else 1
    horizon = math.ceil(int(s["horizon"]) / gamma)
    n_syncs = s.get("n_syncs") if s.get("schedule") == "fixed" else None
    return horizon, None if n_syncs is None else min(int(n_syncs), horizon)


def feducb_accountant(claim: Claim) -> AccountantResult:
    """ε at the claimed δ of the Privatizer releases (Prop. 3's scope).

    Centralized: the algorithm's own accountant (one run of
    :func:`fedpriv.algorithms.feducb.centralized.run_feducb` / ``run_feducb_fixed`` in the claim's setting,
    ``channel="privatizer"``; with ``USER_AT_ALL_AGENTS`` the footnote-4 world, where
    the M trees compose). Decentralized: the calibration's events (module docstring).

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float, tuple of str)
        The route, ε in nats at the claimed δ (``inf`` with a raw channel) and the
        findings (notes) that explain it.
    """
    s = claim.setting_dict()
    if s.get("structure") == "centralized":
        return _algorithm_accountant(claim)
    return calibration_accountant(claim)


def _algorithm_accountant(claim: Claim) -> AccountantResult:
    from fedpriv.algorithms.feducb.centralized import run_feducb, run_feducb_fixed

    s = claim.setting_dict()
    shared = claim.neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS
    _, tables = _base_world({**s, "shared_users": shared})
    eps, delta = float(s["epsilon"]), float(s["delta"])
    if s["schedule"] == "fixed":
        run = run_feducb_fixed(
            tables, epsilon=eps, delta=delta, sync_every=int(s["sync_every"]), seed=0
        )
    else:
        run = run_feducb(tables, epsilon=eps, delta=delta, seed=0)
    route, epsilon = run.accountant_epsilon(claim.claimed_delta)
    cal = run.calibration
    findings = [
        (
            f"σ_N = {cal.noise_stddev:.4g} per entry, tree depth m = {run.tree_depth}; "
            "substitution sensitivity √2(L²+1) (the paper calibrates to L²+1, Alg. 2 "
            "line 5)"
        )
    ]
    if run.records_per_leaf > 1:
        findings.append(
            _adaptivity_note(
                run.records_per_leaf,
                int(s["sync_every"]),
                1,
                run.mechanism_epsilon(claim.claimed_delta)[1],
            )
        )
    reasons = run.accountant.ledger.non_private_reasons()
    if reasons:
        findings.append(
            "the algorithm's ledger also names an unpriced channel: "
            + "; ".join(dict.fromkeys(reasons))
        )
    return AccountantResult(route, float(epsilon), tuple(findings))


def _adaptivity_note(reach: int, sync_every: int, gamma: int, mechanism: float) -> str:
    """The row's note on what the fixed schedule's accountant charges for adaptivity."""
    sets = (
        f"the set-g rounds of a batch of {sync_every} (γ = {gamma} sets; Alg. 3 line 5 "
        "runs Alg. 1 line 4 on V^(g) = S^(g) + U^(g))"
        if gamma > 1
        else f"the rest of a batch of {sync_every} rounds"
    )
    return (
        f"adaptivity charged: between syncs the agent acts on its raw own Gram matrix "
        f"(Alg. 1 line 4, 'Set V_i,t ← S_i,t + U_i,t'; eqs. 2-3; Remark 3), so one "
        f"changed (x, y) moves its later actions up to the sync: {sets}, at most "
        f"{reach} pairs of one leaf; each Privatizer node is charged at {reach} × "
        f"√2(L²+B²) (a node is a sum of ‖v vᵀ‖_F <= L²+B² terms, assumptions (a), (f)); "
        f"the one-pair price of the mechanism alone is {mechanism:.4g}"
    )


def calibration_accountant(claim: Claim) -> AccountantResult:
    """ε at the claimed δ of the paper's Privatizer calibration, priced by its events.

    Each of the agents' trees releases ``depth`` symmetric-matrix Gaussian nodes per
    (x, y) pair (Remark 5; Prop. 3's scope), at the paper's σ_N
    (:func:`~fedpriv.privacy.calibrations.feducb_privatizer`); under
    ``USER_AT_ALL_AGENTS`` the ``M`` trees compose.

    Parameters
    ----------
    claim : Claim
        A FedUCB claim (its setting gives ε, δ, horizon, agents, dim and schedule).

    Returns
    -------
    AccountantResult
        The tightest route, its ε and the findings (σ_N, the nodes per pair, and the
        un-noised sync trigger of the adaptive schedule).
    """
    s = claim.setting_dict()
    base_eps, base_delta = float(s["epsilon"]), float(s["delta"])
    horizon, n_syncs = tree_leaves(s)
    cal = feducb_privatizer(
        base_eps,
        base_delta,
        horizon=horizon,
        n_agents=int(s["n_agents"]),
        dim=int(s["dim"]),
        n_syncs=n_syncs,
    )
    node = events.SymmetricMatrixGaussian(
        noise_stddev=cal.noise_stddev,
        dim=int(s["dim"]) + 1,
        frobenius_sensitivity=math.sqrt(2.0) * cal.l2_sensitivity,
    )
    tree = events.SelfComposed(event=node, count=tree_depth(cal.n_syncs))
    shared = claim.neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS
    accountant = Accountant(neighboring_relation=claim.neighboring_relation, disjoint=("agent",))
    agents = range(int(s["n_agents"])) if shared else range(1)
    for agent in agents:
        accountant.spend(tree, key={"agent": agent})
    route, epsilon = accountant.routes.tightest(claim.claimed_delta)
    findings = [
        (
            f"σ_N = {cal.noise_stddev:.4g} per entry (paper calibration), one (x, y) pair "
            f"in {tree_depth(cal.n_syncs)} nodes of one of the γ trees (Remark 5)"
        )
    ]
    if s.get("schedule") == "adaptive":
        findings.append(
            "the sync trigger (Alg. 3 line 6) reads the raw local Gram matrix: request "
            "times are released un-noised and the accountant cannot price them "
            "(Prop. 3 covers only the Privatizer's releases)"
        )
    return AccountantResult(route, float(epsilon), tuple(findings))


def _base_world(s: dict):
    """One fixed world (n_trials = 1) of the claim's linear bandit."""
    from fedpriv.algorithms.environments.linear import LinearBandit

    spec = LinearBandit(
        n_agents=int(s["n_agents"]),
        n_arms=int(s["n_arms"]),
        dim=int(s["dim"]),
        shared_users=s.get("shared_users", False),
    )
    return spec, spec.sample(np.random.SeedSequence(20200), n_trials=1, horizon=int(s["horizon"]))


def _tile(tables, n: int):
    """``tables`` (one trial) repeated over ``n`` trials: one dataset for every sample."""
    from fedpriv.algorithms.environments.linear import LinearBanditTables

    block = tables.block(0, tables.horizon)
    return LinearBanditTables.from_arrays(
        tables.spec,
        np.repeat(block.contexts, n, axis=0),
        np.repeat(block.rewards, n, axis=0),
        np.repeat(tables.theta, n, axis=0),
    )


def _trigger_values(run, tables, shrink: float | None = None, agent_round=None) -> np.ndarray:
    """``f_i(t) = (t+1)(log det W_i(t) − log det S₀)`` of a run without syncs.

    Alg. 1 line 12 as :func:`fedpriv.algorithms.feducb.centralized.run_feducb` computes it before the
    first sync: ``W_i(t) = S₀ + M(ρ_max − ρ_min) I + Σ_{s<=t} x_s x_sᵀ``, ``S₀ = M ρ_min I``.
    ``shrink`` scales agent ``agent_round[0]``'s action at round ``agent_round[1]``.
    Shape (n_agents, horizon).
    """
    cal = run.calibration
    n_agents, d, horizon = tables.n_agents, tables.dim, tables.horizon
    block = tables.block(0, horizon)
    arms = run.transcript.actions[0]  # (M, T)
    x = block.contexts[0][np.arange(n_agents)[:, None], np.arange(horizon)[None, :], arms]
    if shrink is not None:
        x = x.copy()
        x[agent_round] *= shrink
    s0 = n_agents * cal.rho_min
    base = (s0 + n_agents * (cal.rho_max - cal.rho_min)) * np.eye(d)
    grams = np.cumsum(x[..., :, None] * x[..., None, :], axis=1) + base
    logdet = np.linalg.slogdet(grams)[1]
    return (np.arange(1, horizon + 1)[None, :]) * (logdet - d * math.log(s0))


def knife_edge_pairs(claim: Claim, *, shrink: float = 0.05, max_pairs: int = 3):
    """Neighbouring worlds and thresholds that put the sync trigger on a knife edge.

    For each candidate round τ, D' replaces the decision set at τ of the agent whose
    trigger leads at τ by the same actions scaled by ``shrink`` (one user's data
    changed; rewards kept), so its chosen action — the same index, since the UCB
    scales — adds less to the log-det. The threshold ``D`` is set half-way between
    that agent's trigger value in D and the largest value any agent reaches at τ in D'. Before the first sync nothing is
    noised, so the first sync is at τ in D and later in D' in every run. ``D`` is a
    public parameter the claim quantifies over (Theorem 1 recommends one value; the
    privacy claim is made for FedUCB(D, ...) for any D).

    Returns
    -------
    list of (tau, agent, threshold, tables_d, tables_d_prime)

    Parameters
    ----------
    claim : Claim
        A centralized FedUCB claim.
    shrink : float
        Scale of D''s replaced decision set, in (0, 1).
    max_pairs : int
        Candidate rounds kept, >= 1.

    Raises
    ------
    RuntimeError
        If no round of the reference run puts a trigger on a knife edge.
    """
    from fedpriv.algorithms.feducb.centralized import run_feducb

    s = claim.setting_dict()
    _, tables = _base_world(s)
    reference = run_feducb(
        tables,
        epsilon=float(s["epsilon"]),
        delta=float(s["delta"]),
        threshold=1e300,
        record=True,
        seed=0,
    )
    f_d = _trigger_values(reference, tables)
    pairs = []
    horizon = tables.horizon
    for tau in range(horizon // 4, horizon - 2):
        agent = int(np.argmax(f_d[:, tau]))  # the agent whose trigger leads at tau
        f_dp = _trigger_values(reference, tables, shrink=shrink, agent_round=(agent, tau))
        rival = max(f_dp[agent, tau], np.delete(f_d[:, tau], agent).max())
        if f_d[agent, tau] <= rival:
            continue
        threshold = 0.5 * (f_d[agent, tau] + rival)
        block = tables.block(tau, tau + 1)
        changed = tables.substitute(
            agent=agent, t=tau, contexts=block.contexts[0, agent, 0] * shrink
        )
        pairs.append((tau, agent, float(threshold), tables, changed))
        if len(pairs) >= max_pairs:
            break
    if not pairs:
        raise RuntimeError("no round puts a sync trigger on a knife edge in this world")
    return pairs


def _observe(run) -> np.ndarray:
    """Controller's view: first sync time (T if none) and the first broadcast s."""
    transcript = run.transcript
    horizon = run.sync_rounds.shape[1]
    d = run.setting["dim"]
    first = np.array(
        [row[0] if row.size else horizon for row in transcript.sync_times], dtype=np.float64
    )
    vec = np.array([b[0] if b.shape[0] else np.full(d, -1e9) for b in transcript.broadcasts_vector])
    return np.column_stack([first, vec])


def audit_sync_timing(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Audit the controller's view (sync times, broadcasts); see the module docstring.

    With the fixed schedule and noise, the row is also audited white-box on the view fed
    the adaptive stream, at the claimed δ and at δ = 10⁻⁶
    (:mod:`fedpriv.audit.families.feducb.adaptive`), each of the three audits at
    ``1 − α/3``.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed guarantee).
    budget : AuditBudget
        Pilot and confirmation samples per world, batch size and confidence.
    seed : int or SeedSequence
        Root of the audit's streams (every batch has its own address).

    Returns
    -------
    EndToEndAudit
        The ε lower bound (nats) at the claimed δ, the confirmed event and the wall
        time.
    """
    from fedpriv.algorithms.feducb.centralized import run_feducb, run_feducb_fixed
    from fedpriv.algorithms.feducb.worlds import run_in_world

    s = claim.setting_dict()
    if s.get("structure") != "centralized":
        return _audit_request_timing(claim, budget, seed)
    eps, delta = float(s["epsilon"]), float(s["delta"])
    fixed = s["schedule"] == "fixed"
    samplers = {}
    for tau, agent, threshold, tables_d, tables_dp in knife_edge_pairs(claim):
        worlds = (tables_d, tables_dp)

        def sample(world, n, root, worlds=worlds, threshold=threshold):
            out = []
            for b, start in enumerate(range(0, n, budget.batch_size)):
                size = min(budget.batch_size, n - start)
                tables = _tile(worlds[world], size)
                # the view read here ends at the first sync: runs stop there
                if fixed:
                    run = run_in_world(
                        run_feducb_fixed,
                        tables,
                        epsilon=eps,
                        delta=delta,
                        sync_every=int(s["sync_every"]),
                        record=True,
                        seed=child_seed(root, b),
                        side=world,
                        until_first_sync=True,
                    )
                else:
                    run = run_in_world(
                        run_feducb,
                        tables,
                        epsilon=eps,
                        delta=delta,
                        threshold=threshold,
                        record=True,
                        seed=child_seed(root, b),
                        side=world,
                        until_first_sync=True,
                    )
                out.append(_observe(run))
            return np.concatenate(out)

        label = (
            f"one user changed: agent {agent}'s decision set at round {tau} scaled by "
            "0.05 (D') vs original (D)"
            + (
                f"; sync every {int(s['sync_every'])} rounds"
                if fixed
                else f"; threshold D = {threshold:.6g}"
            )
        )
        samplers[label] = sample
    names = ("first sync time",) + tuple(f"first broadcast s[{k}]" for k in range(int(s["dim"])))
    # The fixed schedule spends nothing at the claimed δ = 0.1 (its accountant ε there is
    # 0), so the event is chosen for δ = 1e-6, where the accountant's ε is positive; the
    # claimed-δ bound is the same event re-read (epsilon_lower_bound_at_delta).
    search_delta = min(delta, BRACKET_DELTA) if fixed else delta
    bracket = fixed and math.isfinite(eps)  # a Privatizer to audit on the adaptive stream
    result = search_and_confirm(
        samplers,
        budget=_thirds(budget) if bracket else budget,
        seed=seed,
        delta=search_delta,
        channel="controller: sync times and broadcasts",
        names=names,
    )
    at_bracket = epsilon_lower_bound_at_delta(result.bound, BRACKET_DELTA)
    result = dataclasses.replace(
        result, bound=_reread(result.bound, delta), epsilon_lower_bound_at_1e_6=at_bracket
    )
    if not bracket:
        return result

    # The fixed schedule's view, white-box, on the adaptive stream (feducb_adaptive):
    # one tree of n = ⌊T/B⌋ leaves per agent, agent 0's first leaf moved in B pairs.
    def run_fn(tables, side):
        return run_in_world(
            run_feducb_fixed,
            tables,
            epsilon=eps,
            delta=delta,
            sync_every=int(s["sync_every"]),
            record=True,
            seed=0,
            side=side,
        )

    n_leaves = max(1, int(s["horizon"]) // int(s["sync_every"]))
    return with_adaptive_bracket(
        result,
        s,
        run_fn,
        n_leaves=n_leaves,
        budget=budget,
        seed=seed,
        claimed_delta=delta,
        bracket_delta=BRACKET_DELTA,
    )


def _thirds(budget: AuditBudget) -> AuditBudget:
    """``budget`` at ``1 − α/3``: the end-to-end search beside two view audits."""
    return dataclasses.replace(budget, confidence=split_confidence(budget.confidence, 3))


def _reread(bound: EpsilonLowerBound, delta: float) -> EpsilonLowerBound:
    """``bound``'s event re-read at ``delta`` (same counts, same confidence)."""
    if bound.delta == delta:
        return bound
    value = epsilon_lower_bound_at_delta(bound, delta)
    if value > 0.0:
        return dataclasses.replace(bound, epsilon_lower_bound=value, delta=delta)
    return dataclasses.replace(
        bound,
        epsilon_lower_bound=0.0,
        delta=delta,
        threshold=math.nan,
        direction=NO_EVIDENCE,
        count_d=0,
        count_d_prime=0,
    )


# ------------------------------------------------------------------ decentralized


def _decentralized_run(
    s: dict,
    tables,
    *,
    threshold: float,
    n_trials_seed,
    side: int = 0,
    record: bool = True,
    first_only: bool = False,
):
    """Decentralized FedUCB in the claim's setting; ``first_only``: the caller reads the
    first request times only, so each batch stops once all its trials have requested."""
    from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
    from fedpriv.algorithms.feducb.worlds import run_in_world
    from fedpriv.algorithms.networks.graphs import make_graph

    graph = make_graph(s.get("graph", "path"), int(s["n_agents"]))
    return run_in_world(
        run_feducb_decentralized,
        tables,
        graph,
        gamma=int(s["gamma"]),
        epsilon=float(s["epsilon"]),
        delta=float(s["delta"]),
        threshold=threshold,
        on_capacity="stop",
        record=record,
        seed=n_trials_seed,
        side=side,
        until_first_sync=first_only,
    )


def _first_request(run, n_trials: int, horizon: int) -> np.ndarray:
    """First ``Synchronize`` request time per trial (``horizon`` if none)."""
    out = np.full(n_trials, float(horizon))
    frame = run.transcript.requests
    if len(frame):
        first = frame.groupby("trial")["t"].min()
        out[first.index.to_numpy(dtype=np.int64)] = first.to_numpy(dtype=np.float64)
    return out


def _crossing(s: dict, tables, tau: int, *, low: float, high: float) -> float:
    """Largest D (to ~1e-12 relative) whose first request is at a round <= ``tau``.

    ``low`` must give a request by ``tau`` and ``high`` none; before the first release
    nothing is noised, so the first request time is a deterministic step function of D.
    """
    for _ in range(45):
        mid = 0.5 * (low + high)
        run = _decentralized_run(s, tables, threshold=mid, n_trials_seed=0, first_only=True)
        if _first_request(run, 1, tables.horizon)[0] <= tau:
            low = mid
        else:
            high = mid
    return low


def _audit_request_timing(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Decentralized FedUCB: a neighbour sees the time of the first Synchronize request.

    For a threshold ``D0`` the first request of world D happens at some round τ by
    some agent a; bisection on the algorithm itself finds the largest D still
    requesting by τ (requests before the first release are noise-free, so the first
    request time is a deterministic step function of D). D' scales agent a's decision
    set at τ by 0.05 (one user changed), which lowers a's trigger value at τ, so with
    that D the first request comes later in D'.
    """
    s = claim.setting_dict()
    _, tables = _base_world(s)
    horizon = tables.horizon
    samplers = {}
    for start in (100.0, 50.0, 200.0, 25.0):
        probe = _decentralized_run(s, tables, threshold=start, n_trials_seed=0, first_only=True)
        tau = int(_first_request(probe, 1, horizon)[0])
        if tau >= horizon - 1:
            continue
        threshold = _crossing(s, tables, tau, low=start, high=1e7)
        run = _decentralized_run(s, tables, threshold=threshold, n_trials_seed=0)
        requests = run.transcript.requests
        # The first request's agent; a tie in t keeps the transcript's order (stable).
        agent = int(requests.sort_values("t", kind="stable")["agent"].iloc[0])
        block = tables.block(tau, tau + 1)
        changed = tables.substitute(agent=agent, t=tau, contexts=block.contexts[0, agent, 0] * 0.05)
        other = _decentralized_run(
            s, changed, threshold=threshold, n_trials_seed=0, first_only=True
        )
        if _first_request(other, 1, horizon)[0] <= tau:
            continue
        worlds = (tables, changed)

        def sample(world, n, root, worlds=worlds, threshold=threshold):
            out = []
            for b, begin in enumerate(range(0, n, budget.batch_size)):
                size = min(budget.batch_size, n - begin)
                run = _decentralized_run(
                    s,
                    _tile(worlds[world], size),
                    threshold=threshold,
                    n_trials_seed=child_seed(root, b),
                    side=world,
                    first_only=True,
                )
                out.append(_first_request(run, size, horizon))
            return np.concatenate(out)

        samplers[
            (
                f"one user changed: agent {agent}'s decision set at round {tau} scaled "
                f"by 0.05 (D') vs original (D); D = {threshold:.9g}"
            )
        ] = sample
        break
    if not samplers:
        raise RuntimeError("no round puts a request trigger on a knife edge in this world")
    return search_and_confirm(
        samplers,
        budget=budget,
        seed=seed,
        delta=float(s["delta"]),
        channel="neighbour: Synchronize requests (first request time)",
        names=("first request time",),
    )


# ------------------------------------------------------ decentralized, fixed schedule
_FIXED_NEIGHBOUR = 1  # agent 0's neighbour on the claim's path graph


def _fixed_run(claim: Claim, tables, *, seed, side: int = 0, record: bool = False):
    """Decentralized FedUCB with the fixed schedule in the claim's setting."""
    from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
    from fedpriv.algorithms.feducb.worlds import run_in_world
    from fedpriv.algorithms.networks.graphs import make_graph

    s = claim.setting_dict()
    graph = make_graph(s.get("graph", "path"), int(s["n_agents"]))
    return run_in_world(
        run_feducb_decentralized,
        tables,
        graph,
        gamma=int(s["gamma"]),
        epsilon=float(s["epsilon"]),
        delta=float(s["delta"]),
        schedule="fixed",
        sync_every=int(s["sync_every"]),
        record=record,
        seed=seed,
        side=side,
    )


def feducb_decentralized_fixed_accountant(claim: Claim) -> AccountantResult:
    """End-to-end ε at the claimed δ of decentralized FedUCB with the fixed schedule.

    The algorithm's own accountant (one run of
    :func:`fedpriv.algorithms.feducb.decentralized.run_feducb_decentralized` with
    ``schedule="fixed"`` in the claim's setting), every channel it charged: one
    Privatizer tree per (agent, set) of ``max(1, ⌊T/B⌋)`` leaves, sets in parallel,
    agents in parallel (composed under ``USER_AT_ALL_AGENTS``). The clock reads no
    data, so no sync-timing channel is charged; a ``NonPrivate`` charge, if any, would
    make the result ∞ and be named in the findings.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float, tuple of str)
        The route, ε in nats at the claimed δ (``inf`` with a raw channel) and the
        findings (notes) that explain it.
    """
    s = claim.setting_dict()
    shared = claim.neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS
    _, tables = _base_world({**s, "shared_users": shared})
    run = _fixed_run(claim, tables, seed=0)
    route, epsilon = run.accountant.routes.tightest(claim.claimed_delta)
    leaves = max(1, int(s["horizon"]) // int(s["sync_every"]))
    sizing = (
        f"σ_N = {run.calibration.noise_stddev:.4g} per entry, {leaves} leaves per "
        f"(agent, set) tree (every {int(s['sync_every'])} rounds, known a priori), "
        f"depth m = {run.tree_depth}; substitution sensitivity √2(L²+1) (Alg. 2 "
        "line 5 calibrates to L²+1)"
    )
    timing = "release times are a function of (B, T, graph) only: no sync-timing channel"
    adaptivity = _adaptivity_note(
        run.records_per_leaf,
        int(s["sync_every"]),
        int(s["gamma"]),
        run.mechanism_epsilon(claim.claimed_delta)[1],
    )
    reasons = tuple(dict.fromkeys(run.accountant.ledger.non_private_reasons()))
    unpriced = (
        ("the algorithm's ledger names an unpriced channel: " + "; ".join(reasons),)
        if reasons
        else ()
    )
    return AccountantResult(route, float(epsilon), (sizing, timing, adaptivity) + unpriced)


def feducb_fixed_mechanism(claim: Claim) -> MechanismResult:
    """ε at the claimed δ of the fixed schedule's Privatizer for one changed pair of an
    oblivious stream: the mechanism alone (the view is charged for adaptivity).

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float)
        The route and ε in nats at the claimed δ.
    """
    s = claim.setting_dict()
    shared = claim.neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS
    _, tables = _base_world({**s, "shared_users": shared})
    if s.get("structure") == "decentralized":
        run = _fixed_run(claim, tables, seed=0)
    else:
        from fedpriv.algorithms.feducb.centralized import run_feducb_fixed

        run = run_feducb_fixed(
            tables,
            epsilon=float(s["epsilon"]),
            delta=float(s["delta"]),
            sync_every=int(s["sync_every"]),
            seed=0,
        )
    route, epsilon = run.mechanism_epsilon(claim.claimed_delta)
    return MechanismResult(route, float(epsilon))


def _neighbour_view(run, n_trials: int, gamma: int, dim: int) -> np.ndarray:
    """Agent 0's releases as its neighbour receives them, per set ``g``: arrival time
    of the first, ``û`` and ``diag Û`` of the first, ``û`` of the last (missing: -1e9).
    Shape (n_trials, γ (1 + 3 d))."""
    transcript = run.transcript
    frame = transcript.messages
    frame = frame[
        (frame["kind"] == "release")
        & (frame["sender"] == 0)
        & (frame["receiver"] == _FIXED_NEIGHBOUR)
    ].sort_values(["trial", "t_received"])
    out = np.full((n_trials, gamma, 1 + 3 * dim), -1e9)
    diag = np.diagonal(transcript.release_gram, axis1=1, axis2=2)
    for position, part in (
        ("first", frame.groupby(["trial", "subset"]).head(1)),
        ("last", frame.groupby(["trial", "subset"]).tail(1)),
    ):
        b = part["trial"].to_numpy(dtype=np.int64)
        g = part["subset"].to_numpy(dtype=np.int64)
        ids = part["release_id"].to_numpy(dtype=np.int64)
        if position == "first":
            out[b, g, 0] = part["t_received"].to_numpy(dtype=np.float64)
            out[b, g, 1 : 1 + dim] = transcript.release_vector[ids]
            out[b, g, 1 + dim : 1 + 2 * dim] = diag[ids]
        else:
            out[b, g, 1 + 2 * dim :] = transcript.release_vector[ids]
    return out.reshape(n_trials, -1)


def audit_feducb_decentralized_fixed(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Decentralized FedUCB, fixed schedule: what agent 0's neighbour receives from it.

    The pair changes one user of agent 0 (its decision set at round 0 scaled by 0.05,
    D' vs D): that round's pair enters the first leaf of agent 0's set 0, released at
    the first tick and in every later prefix sum. The neighbour (agent 1 of the path)
    observes, per set, the arrival time of agent 0's first release and the released
    ``û``, ``diag Û`` (first release) and ``û`` (last release); candidate events on
    each column are searched on a pilot and confirmed on fresh runs
    (:func:`~fedpriv.audit.engine.coupled.search_and_confirm`). With noise, the row
    is also audited white-box on the view fed the adaptive stream, at the claimed δ and at
    δ = 10⁻⁶ (:func:`~fedpriv.audit.families.feducb.adaptive.with_adaptive_bracket`), each
    of the three audits at ``1 − α/3``.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed guarantee).
    budget : AuditBudget
        Pilot and confirmation samples per world, batch size and confidence.
    seed : int or SeedSequence
        Root of the audit's streams (every batch has its own address).

    Returns
    -------
    EndToEndAudit
        The ε lower bound (nats) at the claimed δ, the confirmed event and the wall
        time.
    """
    s = claim.setting_dict()
    _, tables = _base_world(s)
    block = tables.block(0, 1)
    changed = tables.substitute(agent=0, t=0, contexts=block.contexts[0, 0, 0] * 0.05)
    worlds = (tables, changed)
    gamma, dim = int(s["gamma"]), int(s["dim"])

    def sample(world, n, root):
        out = []
        for b, begin in enumerate(range(0, n, budget.batch_size)):
            size = min(budget.batch_size, n - begin)
            run = _fixed_run(
                claim, _tile(worlds[world], size), seed=child_seed(root, b), side=world, record=True
            )
            out.append(_neighbour_view(run, size, gamma, dim))
        return np.concatenate(out)

    names = tuple(
        name
        for g in range(gamma)
        for name in (
            (f"set {g}: arrival of agent 0's first release",)
            + tuple(f"set {g}: first release û[{k}]" for k in range(dim))
            + tuple(f"set {g}: first release Û[{k},{k}]" for k in range(dim))
            + tuple(f"set {g}: last release û[{k}]" for k in range(dim))
        )
    )
    pair = (
        f"one user changed: agent 0's decision set at round 0 scaled by 0.05 (D') vs "
        f"original (D); releases every {int(s['sync_every'])} rounds"
    )
    bracket = math.isfinite(float(s["epsilon"]))  # a Privatizer to audit
    result = search_and_confirm(
        {pair: sample},
        budget=_thirds(budget) if bracket else budget,
        seed=seed,
        delta=float(s["delta"]),
        channel="neighbour: agent 0's releases (Û, û) and their arrival times",
        names=names,
    )
    if not bracket:
        return result
    # The view, white-box, on the adaptive stream (feducb_adaptive): one tree of
    # n = max(1, ⌊T/B⌋) leaves per (agent, set), agent 0's set-0 leaf moved in ⌈B/γ⌉ pairs.
    leaves = max(1, int(s["horizon"]) // int(s["sync_every"]))
    return with_adaptive_bracket(
        result,
        s,
        lambda tab, side: _fixed_run(claim, tab, seed=0, side=side, record=True),
        n_leaves=leaves,
        budget=budget,
        seed=seed,
        claimed_delta=float(s["delta"]),
        bracket_delta=BRACKET_DELTA,
    )
