"""Accountant and audit recipes for the Bernoulli-MAB papers.

Li & Song (CDP/CE-CDP/DDP/HDP-MAB; algorithms/li_song/mab.py)
--------------------------------------------------------
* :func:`li_song_accountant` runs the algorithm once in the claim's setting and reads
  its own accountant: the messages (``channel="message"``) for message claims, every
  release including the raw action channel (``NonPrivate``) for action claims.
* :func:`audit_li_song_messages`: one reward of agent 0 flipped (0 ↔ 1) in epoch 1
  (the cell of Alg. 1 line 9's first release); the adversary (server, GIS neighbour or sink) sees
  agent 0's message ȳ_{0,k}(1); threshold events on it, chosen on a pilot sample. The
  same message is also audited at the mechanism level (one Laplace release at the
  charged scale, white-box LLR, 1000× the samples) and the stronger bound is
  reported, each audit at half the error rate.
* :func:`audit_li_song_actions`: the action channel during ``t_delay`` (Alg. 2 line 3,
  Alg. 5 line 11; outside Definition 1): a pilot search over single-reward flips of agent 0's epoch-1 pulls finds one
  that moves its raw local argmax; the observer sees agent 0's first exploitation arm.

Dubey & Pentland (AAMAS; algorithms/dubey_aamas/cooperative.py)
-----------------------------------------------
See :mod:`fedpriv.audit.families.dubey_aamas.recipes`.

The worlds share the dataset through :class:`fedpriv.audit.engine.neighbors.SingleWorldTable` (every
sample reads one world of the counter-based table); each world uses its own root for the
algorithm's other streams (the algorithms take one root for every stream), which keeps
the samples of each world i.i.d. (:mod:`fedpriv.audit.engine.coupled`).

Length: Li & Song's coupled runs and audits (messages, actions, releases) share one pair
construction and one seed tree.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import AccountantResult
from fedpriv.audit.engine.combine import halved, stronger_of
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.engine.neighbors import SingleWorldTable, table_reward_pair
from fedpriv.audit.estimators import EpsilonLowerBound

__all__ = [
    "audit_li_song_actions",
    "audit_li_song_messages",
    "audit_li_song_release",
    "li_song_accountant",
    "li_song_action_changed_accountant",
    "li_song_action_changed_lower",
    "li_song_environment",
    "li_song_exact_message_epsilon",
    "run_li_song",
]

#: Sentinel of an observable that did not occur in a run (e.g. agent 0 not selected).
MISSING = -10.0

#: Runs of the mechanism-level message audit per end-to-end run (a Laplace draw costs
#: ~0.1 µs, a whole Li & Song run ~3 ms).
RELEASE_FACTOR = 1000


def li_song_environment(setting: dict, *, tied: bool = False):
    """The claim's Bernoulli bandit: means 0.5, 0.45, 0.40, ... (or all 0.5 when tied).

    ``setting["rewards"] == "heterogeneous"`` (§VI-C2): the odd-numbered agents have
    arms 0 and 1 swapped, so their local best arm (1) is not the global one (0, the
    mean of the local means, while fewer than half of the agents are odd).

    Parameters
    ----------
    setting : dict
        The claim's setting (``n_agents``, ``n_arms``, optionally ``rewards``).
    tied : bool
        All means 0.5.

    Returns
    -------
    BernoulliMAB
    """
    from fedpriv.algorithms.environments.bernoulli import BernoulliMAB

    m, k = int(setting["n_agents"]), int(setting["n_arms"])
    row = np.full(k, 0.5) if tied else 0.5 - 0.05 * np.arange(k)
    means = np.tile(row, (m, 1))
    if setting.get("rewards", "homogeneous") == "heterogeneous":
        means[1::2, [0, 1]] = means[1::2, [1, 0]]
    return BernoulliMAB(means)


def _graph(setting: dict):
    from fedpriv.algorithms.networks.graphs import make_graph

    kind = setting.get("graph", "path")
    if kind == "erdos_renyi":  # one fixed draw of G(M, p) conditioned on connectivity
        rng = np.random.default_rng(int(setting.get("graph_seed", 0)))
        return make_graph(kind, int(setting["n_agents"]), p=float(setting["graph_p"]), rng=rng)
    return make_graph(kind, int(setting["n_agents"]))


def _components(setting: dict):
    from fedpriv.algorithms.networks.graphs import make_graph

    if "table_ii_case" in setting:  # Table II's component structures (100 agents)
        from fedpriv.algorithms.li_song.network import table_ii_components

        rng = np.random.default_rng(int(setting.get("graph_seed", 0)))
        return table_ii_components(int(setting["table_ii_case"]), rng=rng)
    q = int(setting["components"])
    sizes = np.full(q, int(setting["n_agents"]) // q)
    sizes[: int(setting["n_agents"]) - sizes.sum()] += 1
    return [make_graph("path", int(s)) if s > 1 else make_graph("complete", 1) for s in sizes]


def run_li_song(
    setting: dict,
    env,
    *,
    n_trials: int,
    seed,
    table=None,
    record: bool | str = False,
    stop_epoch: int | None = None,
):
    """Run the algorithm named by ``setting["structure"]`` (cdp, cdp-partial, ddp, hdp).

    Parameters
    ----------
    setting : dict
        The claim's setting.
    env : BernoulliMAB
        From :func:`li_song_environment`.
    n_trials : int
        Runs, >= 1.
    seed : int or SeedSequence
        Root of the runs' streams.
    table : RewardTable, optional
        Reward table to use instead of the seed's.
    record : bool or {"messages", "actions"}
        Keep the transcripts, or only the one named.
    stop_epoch : int, optional
        Simulate epochs ``1..stop_epoch`` only (the run's prefix; see
        :func:`fedpriv.algorithms.li_song.mab.run_cdp_mab`).

    Returns
    -------
    LiSongRun

    Raises
    ------
    ValueError
        If ``setting["structure"]`` is not cdp, cdp-partial, ddp or hdp.
    """
    from fedpriv.algorithms.li_song import mab as li_song

    common = {
        "horizon": int(setting["horizon"]),
        "epsilon": float(setting["epsilon"]),
        "n_trials": n_trials,
        "seed": seed,
        "table": table,
        "record": record,
        "stop_epoch": stop_epoch,
    }
    if "rounds" in setting:
        common.update(n_rounds=int(setting["rounds"]), gap=float(setting["gap"]))
    structure = setting["structure"]
    if structure == "cdp":
        return li_song.run_cdp_mab(env, **common)
    if structure == "cdp-partial":
        return li_song.run_cdp_mab(
            env, participation_rate=float(setting["participation_rate"]), **common
        )
    delay = setting.get("delay_convention", "counter")
    if structure == "ddp":
        return li_song.run_ddp_mab(env, _graph(setting), delay_convention=delay, **common)
    if structure == "hdp":
        return li_song.run_hdp_mab(env, _components(setting), delay_convention=delay, **common)
    raise ValueError(f"unknown Li & Song structure {structure!r}.")


def li_song_accountant(claim: Claim) -> AccountantResult:
    """The algorithm's own accountant in the claim's setting (one run, δ = 0).

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
    run = run_li_song(s, li_song_environment(s), n_trials=1, seed=0)
    if claim.mode.startswith("paper (actions"):
        route, epsilon = run.accountant.routes.tightest(0.0)
        reasons = tuple(run.accountant.ledger.non_private_reasons())
        return AccountantResult(route, float(epsilon), reasons)
    route, epsilon = run.message_epsilon()
    findings = ()
    if s["structure"] in ("ddp", "hdp"):
        findings = (
            (
                "exploitation actions during t_delay use the raw local mean "
                "(charged NonPrivate, outside Definition 1; Alg. 2 line 3, Alg. 5 line 11)"
            ),
        )
    return AccountantResult(route, float(epsilon), findings)


def li_song_exact_message_epsilon(claim: Claim) -> float:
    """The exact ε of every message of the run (one run in the claim's setting).

    The messages are pure Laplace releases at their declared sensitivity, one per
    (agent, arm, epoch) cell, composed in parallel: a Laplace release's ε is exactly
    sensitivity / scale (the privacy loss reaches it on the tails), so the maximum over
    cells is the exact ε of the messages, an analytic value, not an estimate. It is the
    accountant's lower bracket (optimistic PLD at δ = 0) without the discretisation,
    which costs seconds per scale at ε = 50; a cell holding more than one release falls
    back to that bracket.

    Parameters
    ----------
    claim : Claim
        The registered claim.

    Returns
    -------
    float
        ε in nats.
    """
    s = claim.setting_dict()
    run = run_li_song(s, li_song_environment(s), n_trials=1, seed=0)
    ledger = run.accountant.ledger.draws
    ledger = ledger[ledger["channel"] == "message"]
    if ledger.duplicated(["trial", "agent", "arm", "epoch"]).any():
        return float(run.accountant.brackets.lower_bound(0.0, where={"channel": "message"}))
    return float((ledger["l1_sensitivity"] / ledger["scale"]).max())


def _epoch_message_cells(claim: Claim):
    """Per (agent, epoch) message of one run: its cells' ε and the epoch length n_r."""
    s = claim.setting_dict()
    run = run_li_song(s, li_song_environment(s), n_trials=1, seed=0)
    ledger = run.accountant.ledger.draws
    ledger = ledger[ledger["channel"] == "message"]
    return ledger.assign(
        cell_epsilon=ledger["l1_sensitivity"] / ledger["scale"],
        n_r=np.rint(1.0 / ledger["l1_sensitivity"]),
    )


def li_song_action_changed_accountant(claim: Claim) -> AccountantResult:
    """ε of the messages when neighbouring histories may differ in one *action*.

    Definition 1's "differ in at most one position", a position being an (action,
    reward) pair: moving one epoch-r sample from arm a to arm a' changes two
    coordinates of that epoch's message, each by at most 1/n_r (App. B's per-arm
    bound), so the message's l1 shift is 2/n_r against per-coordinate Laplace noise of
    scale 1/(Mε n_r). Upper bound: the two largest cell ε of one (agent, epoch) summed
    (sequential over the two arms, parallel over epochs and agents), i.e. 2Mε.

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
    frame = _epoch_message_cells(claim)
    groups = frame.groupby(["trial", "agent", "epoch"])["cell_epsilon"]
    epsilon = float(groups.apply(lambda cells: np.sort(cells.to_numpy())[-2:].sum()).max())
    return AccountantResult(
        "pure (two arm cells of one epoch message, sequential)",
        epsilon,
        (
            "one action changed moves a sample between two arms' epoch means: two "
            "Laplace coordinates of one message shift, not one",
        ),
    )


def li_song_action_changed_lower(claim: Claim) -> float:
    """Exact lower bound under the action-changed relation: epoch 1's message.

    With the epoch means divided by the realised counts, the arm losing the sample
    moves by at most 1/n_1 and the arm gaining it by at most 1/(n_1 + 1), attained by
    rewards at the ends of [0, 1]; with the divisor n_1 both move by 1/n_1. The
    smaller of the two, Mε n_1 (1/n_1 + 1/(n_1 + 1)) = Mε (2 n_1 + 1)/(n_1 + 1), is the
    exact ε of that one pure Laplace release under either divisor's lower case, hence a
    lower bound on the ε of the whole view (its marginal).

    Parameters
    ----------
    claim : Claim
        The registered claim.

    Returns
    -------
    float
        ε in nats.
    """
    frame = _epoch_message_cells(claim)
    first = frame[frame["epoch"] == frame["epoch"].min()]
    n_1 = float(first["n_r"].min())
    per_cell = float(first["cell_epsilon"].max())
    return per_cell * (2.0 * n_1 + 1.0) / (n_1 + 1.0)


_MESSAGE_KINDS = {"cdp": "upload", "cdp-partial": "upload", "ddp": "DATA", "hdp": "SAC"}


def _first_message(run, *, n_trials: int, kind: str, arm: int) -> np.ndarray:
    """Agent 0's first epoch-1 message content for ``arm`` per trial (MISSING if none)."""
    frame = run.messages
    out = np.full(n_trials, MISSING)
    rows = frame[(frame["kind"] == kind) & (frame["origin"] == 0) & (frame["epoch"] == 1)]
    rows = rows.drop_duplicates("trial", keep="first")
    for trial, arms, content in zip(rows["trial"], rows["arms"], rows["content"], strict=True):
        if arm in arms:
            out[int(trial)] = float(content[list(arms).index(arm)])
    return out


def audit_li_song_messages(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """One reward of agent 0 flipped in epoch 1; the adversary sees agent 0's ȳ.

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
    env = li_song_environment(s)
    table = env.reward_table(np.random.SeedSequence(60221))
    tables = table_reward_pair(table, agent=0, arm=0, pull=0)
    kind = _MESSAGE_KINDS[s["structure"]]

    def sample(world: int, n: int, root: np.random.SeedSequence) -> np.ndarray:
        out = []
        for b, start in enumerate(range(0, n, budget.batch_size)):
            size = min(budget.batch_size, n - start)
            run = run_li_song(
                s,
                env,
                n_trials=size,
                seed=child_seed(root, b),
                table=tables[world],
                record="messages",
                stop_epoch=1,  # the message observed is sent in epoch 1
            )
            out.append(_first_message(run, n_trials=size, kind=kind, arm=0))
        return np.concatenate(out)

    value = float(np.asarray(tables[0].rewards(0, 0, 0, 0)))
    pair = f"one reward changed: agent 0, arm 0, first pull, {value:g} (D) vs {1 - value:g} (D')"
    # White-box events from the pair: ȳ_{0,0}(1) = x̂ + Lap(b) with x̂ the mean of the
    # epoch's n_1 rewards, so {ȳ >= max x̂} and {ȳ <= min x̂} have likelihood ratio
    # exp(M ε) (the optimal tests for one Laplace release, Neyman–Pearson).
    probe, means = _first_epoch_means(s, env, tables)
    events = {pair: [(0, ">=", max(means)), (0, "<=", min(means))]}
    half = halved(budget)
    whole = search_and_confirm(
        {pair: sample},
        budget=half,
        seed=child_seed(seed, 0),
        delta=claim.claimed_delta,
        channel=f"{kind} messages of agent 0 (epoch 1, ȳ of arm 0)",
        names=("ȳ_{0,0}(1) as sent",),
        events=events,
    )
    release = _release_audit(probe, means, half, child_seed(seed, 1), whole)
    return stronger_of(
        whole, release, confidence=budget.confidence, names=("end to end", "mechanism level")
    )


def _first_epoch_means(setting: dict, env, tables) -> tuple[object, list[float]]:
    """A recorded probe run in D, and agent 0's epoch-1 mean of arm 0 in D and in D'."""
    probe = run_li_song(setting, env, n_trials=1, seed=0, table=tables[0], record=True)
    explore = probe.actions.query("kind == 'explore'")
    n_first = int(explore["stop"].min()) // int(setting["n_arms"])
    return probe, [float(t.rewards(0, 0, 0, np.arange(n_first)).mean()) for t in tables]


def _message_release_bound(
    probe, means: list[float], *, n_samples: int, confidence: float, seed
) -> tuple[EpsilonLowerBound, float]:
    """Agent 0's epoch-1 message of arm 0 as one Laplace release: (bound, scale).

    Its true means (``means[0]`` in D, ``means[1]`` in D') released with the scale and
    sensitivity the algorithm charged for that message (its ledger row) through the
    library's Laplace mechanism, white-box LLR
    (:func:`fedpriv.audit.engine.tree_nodes.audit_laplace_release`).
    """
    from fedpriv.audit.engine.tree_nodes import audit_laplace_release

    ledger = probe.accountant.ledger.draws
    row = ledger[
        (ledger["agent"] == 0)
        & (ledger["arm"] == 0)
        & (ledger["epoch"] == 1)
        & (ledger["channel"] == "message")
    ].iloc[0]
    scale = float(row["scale"])
    bound = audit_laplace_release(
        means[0],
        means[1],
        scale=scale,
        l1_sensitivity=float(row["l1_sensitivity"]),
        n_samples=n_samples,
        seed=seed,
        confidence=confidence,
    )
    return bound, scale


def _release_audit(
    probe, means: list[float], half: AuditBudget, seed, whole: EndToEndAudit
) -> EndToEndAudit:
    """The message at the mechanism level, ``RELEASE_FACTOR`` × the end-to-end samples."""
    started = time.perf_counter()
    bound, scale = _message_release_bound(
        probe, means, n_samples=half.samples * RELEASE_FACTOR, confidence=half.confidence, seed=seed
    )
    return dataclasses.replace(
        whole,
        bound=bound,
        pilot_epsilon=float("nan"),
        event=(
            f"agent 0's epoch-1 message of arm 0 as one Laplace release (scale "
            f"{scale:.4g}), LLR >= {bound.threshold:.4g}, {bound.n_samples:,} runs/world"
        ),
        seconds=time.perf_counter() - started,
    )


def audit_li_song_release(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Agent 0's first message at the mechanism level only (one Laplace release).

    For settings whose whole runs are too costly to sample at the size the bound needs
    (Fig. 4: M = 50 agents, per-message ε = Mε up to 50): the pair and the message's
    charged scale come from one recorded run, as in :func:`audit_li_song_messages`,
    and ``budget.samples`` runs per world confirm one predeclared LLR event.

    What sampling can reach: with ``n`` runs per world, Clopper–Pearson bounds ``P_D'``
    of any event above by at least ``≈ ln(4/α)/n`` (no run of D' in it; one threshold,
    two directions) and ``P_D <= 1``, so no sampled bound exceeds ``ln(n / ln(4/α))``,
    16.9 at ``n = 10⁸`` and 95%, whatever the estimator. ``0.9 ε`` needs
    ``n >= ln(4/α) e^{0.9 ε}``: 3·10¹⁰ runs per world at ``ε = 25``, 2·10²⁰ at
    ``ε = 50``.

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
    started = time.perf_counter()
    s = claim.setting_dict()
    env = li_song_environment(s)
    tables = table_reward_pair(
        env.reward_table(np.random.SeedSequence(60221)), agent=0, arm=0, pull=0
    )
    probe, means = _first_epoch_means(s, env, tables)
    bound, scale = _message_release_bound(
        probe, means, n_samples=budget.samples, confidence=budget.confidence, seed=seed
    )
    value = float(np.asarray(tables[0].rewards(0, 0, 0, 0)))
    kind = _MESSAGE_KINDS[s["structure"]]
    return EndToEndAudit(
        method="end-to-end",
        bound=bound,
        channel=f"{kind} messages of agent 0 (epoch 1, ȳ of arm 0)",
        event=(
            f"agent 0's epoch-1 message of arm 0 as one Laplace release (scale "
            f"{scale:.4g}), LLR >= {bound.threshold:.4g}, {bound.n_samples:,} runs/world"
        ),
        neighbors=(
            f"one reward changed: agent 0, arm 0, first pull, {value:g} (D) vs {1 - value:g} (D')"
        ),
        pilot_epsilon=float("nan"),
        seconds=time.perf_counter() - started,
    )


def _first_exploit(run, *, n_trials: int) -> np.ndarray:
    """Agent 0's first exploitation arm per trial (MISSING if it never exploits).

    Epoch 1's runs suffice (``stop_epoch=1``): a full exploration epoch is followed by
    ``min(t_delay, T - t)`` exploitation slots, and when that is 0, or the horizon cuts
    epoch 1, the horizon is reached and no later epoch runs.
    """
    frame = run.actions
    out = np.full(n_trials, MISSING)
    rows = frame[(frame["kind"] == "exploit") & (frame["agent"] == 0)]
    rows = rows.sort_values(["trial", "start"]).drop_duplicates("trial", keep="first")
    for trial, arms in zip(rows["trial"], rows["arms"], strict=True):
        out[int(trial)] = float(arms[0])
    return out


def _local_sums(table: SingleWorldTable, n_arms: int, n_pulls: int) -> np.ndarray:
    pulls = np.arange(n_pulls)
    return np.array([table.rewards(0, 0, k, pulls).sum() for k in range(n_arms)])


def audit_li_song_actions(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Agent 0's exploitation arm during t_delay, one epoch-1 reward flipped.

    Candidate pairs: for every arm, flip the first epoch-1 pull whose value moves that
    arm's raw sum towards (or past) the local leader's; the pilot picks the pair and
    the event (first exploitation arm = a).

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
    env = li_song_environment(s, tied=True)
    table = env.reward_table(np.random.SeedSequence(60222))
    probe = run_li_song(s, env, n_trials=1, seed=0, table=SingleWorldTable(table), record=True)
    first_epoch = int(probe.actions.query("kind == 'explore'")["stop"].min())
    n_pulls = max(1, first_epoch // int(s["n_arms"]))
    # Worlds and single flips of agent 0's epoch-1 pulls that move its raw local
    # argmax (lowest index on ties, as the algorithm breaks them): the worst case the
    # relation allows. The first few found are the pilot's candidates.
    n_arms = int(s["n_arms"])
    candidates = []
    for world in range(2000):
        base = SingleWorldTable(table, world)
        sums = _local_sums(base, n_arms, n_pulls)
        leader = int(np.argmax(sums))
        for arm in range(n_arms):
            target = 0.0 if arm == leader else 1.0  # lower the leader, raise a follower
            moved = sums.copy()
            moved[arm] += -1.0 if arm == leader else 1.0
            if int(np.argmax(moved)) == leader:
                continue
            values = base.rewards(0, 0, arm, np.arange(n_pulls))
            hits = np.flatnonzero(values != target)
            if hits.size:
                candidates.append((world, arm, int(hits[0]), target))
        if len(candidates) >= 2:
            break
    samplers = {}
    for world, arm, pull, target in candidates:
        tables = table_reward_pair(
            table,
            agent=0,
            arm=arm,
            pull=pull,
            world_trial=world,
            value_d=1.0 - target,
            value_d_prime=target,
        )

        def sample(world_index, n, root, tables=tables):
            out = []
            for b, start in enumerate(range(0, n, budget.batch_size)):
                size = min(budget.batch_size, n - start)
                run = run_li_song(
                    s,
                    env,
                    n_trials=size,
                    seed=child_seed(root, b),
                    table=tables[world_index],
                    record="actions",
                    stop_epoch=1,  # a run's first exploitation, if any, is in epoch 1
                )
                out.append(_first_exploit(run, n_trials=size))
            return np.concatenate(out)

        samplers[
            (
                f"one reward changed: world {world}, agent 0, arm {arm}, epoch-1 pull "
                f"{pull}, {1 - target:g} (D) vs {target:g} (D')"
            )
        ] = sample
    return search_and_confirm(
        samplers,
        budget=budget,
        seed=seed,
        delta=claim.claimed_delta,
        channel="observer of agent 0's actions during t_delay",
        names=("agent 0's first exploitation arm",),
    )
