"""``fedpriv verify``: check Fed_UCB's privacy claim end to end.

Zhu et al. (2021) claim that Fed_UCB is ε-DP for each agent's reward stream
``{X_{i,k}(t)}_{t=1..T}`` (Definition 1; §4.1; abstract). Definition 1 protects "all
possible outputs by Algorithm ℬ"; Algorithm 4's outputs are the messages ϑ̃(t−1)
(line 19) and the actions chosen on ϑ̃(t−1) (line 9), t = 1..T, so the tree's prefixes
1..T−1 reach the view and the prefix of round T does not (:data:`VIEW_SUPPORT`). A
second reading also publishes the final estimate ϑ̃(T) (prefixes 1..T,
:data:`FINAL_SUPPORT`); its rows are labelled as such. For each variant
(:data:`VARIANTS`: the paper's calibration with log base 2 and e on the view, the
corrected one on the view, and the paper's calibration on the final-estimate
reading), each ε in {1, 2, 5} and each horizon in {16, 1024, 600000}, the job

1. opens Fed_UCB's releases exactly as a run does (:func:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.
   open_gossip_fed_ucb_releases`) and asks the accountant for ε over Definition 1's stream on
   the variant's view;
2. at every horizon, audits the released tree nodes covering the worst-case neighboring
   pair's changed round (round 1 changed 0 ↔ 1; ⌊log2 R⌋ + 1 nodes of the released
   prefixes 1..R, so T = 600 000 costs 20 Laplace draws per run) with two white-box
   audits at 97.5% each, the stronger reported
   at 95% (:func:`fedpriv.audit.engine.tree_nodes.audit_tree_nodes`): the joint one
   (one event ``{LLR >= c}``, ``c`` chosen from the declared Laplace law, Clopper–Pearson
   on fresh samples) and the product one (the LLR's top atom bounded node by node over
   the independent nodes, :mod:`fedpriv.audit.engine.tree_product`);
3. runs Fed_UCB (and Gossip_UCB, ε = ∞) on the paper's setting — 3 agents on K3, 5 arms —
   and reports the regret at the horizon.

Within ``fedpriv verify`` the job is the family's attachment
(:mod:`fedpriv.audit.claims.attachment`; the module's ``configure``, ``planned``,
``run`` and ``write``): its accountant ε, notes, tree audit and ε of the round-0
records go to the register rows that state the same claims (matched on algorithm, mode
and setting, keyed by the rows' own keys), and its files
(:mod:`fedpriv.audit.families.gossip_fed_ucb.report`) to ``<out>/gossip_fed_ucb/``.

Length: one job (grid, tree audits on the view, regret runs, ledger) and the four
functions that make it an attachment; its files are written by
:mod:`fedpriv.audit.families.gossip_fed_ucb.report`; its settings and result types
(:class:`VerifyConfig`, :class:`VerifyReport`, re-exported here) are in
:mod:`fedpriv.audit.families.gossip_fed_ucb.job`, which both import.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment, paper_synthetic_bandit
from fedpriv.algorithms.environments.hospital import hospital_bandit, load_diabetes
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import (
    open_gossip_fed_ucb_releases,
    run_gossip_fed_ucb,
    run_gossip_ucb,
)
from fedpriv.algorithms.networks.graphs import make_graph, second_eigenvalue
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng, stream_rngs
from fedpriv.audit.claims.attachment import AttachmentOutput, Plan, RowEvidence
from fedpriv.audit.claims.claim import Claim, ClaimResult, LowerBoundEvidence, decide_verdict
from fedpriv.audit.engine.executor import parallel_map
from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree_grid import grid_parts, grid_results, part_counts
from fedpriv.audit.engine.tree_nodes import tree_audit_event
from fedpriv.audit.estimators import EpsilonLowerBound
from fedpriv.audit.families.gossip_fed_ucb.job import VerifyConfig, VerifyReport
from fedpriv.audit.families.gossip_fed_ucb.report import write_files
from fedpriv.privacy import NeighboringRelation, PureDP
from fedpriv.privacy.accounting.tree import released_tree_depth
from fedpriv.privacy.calibrations import gossip_fed_ucb_released_prefixes, gossip_fed_ucb_scale

__all__ = [
    "BOUNDED_REWARDS",
    "FINAL_SUPPORT",
    "VARIANTS",
    "VIEW_SUPPORT",
    "VerifyConfig",
    "VerifyReport",
    "gossip_fed_ucb_reading",
    "variant_label",
    "verify_gossip_fed_ucb",
]

#: The reward setting of the grid rows (T = 16, 1024, 600,000), stated in each claim.
BOUNDED_REWARDS = (
    "in [0, 1] as §4.1 assumes (sensitivity 1); `fedpriv run gossip-fed-ucb` plays §5.1's "
    "synthetic μ + N(0, 1) rewards instead, which leave [0, 1]: see the unbounded-rewards rows"
)

#: (mode, log base, publish_final) of every Fed_UCB variant whose claim is checked:
#: the view (messages and actions) under both log bases and corrected, then the
#: second reading (the final estimate ϑ̃(T) published too) under both log bases.
VARIANTS = (
    ("paper", "2", False),
    ("paper", "e", False),
    ("corrected", "2", False),
    ("paper", "2", True),
    ("paper", "e", True),
)
PAPER = "Zhu et al. 2021"
CLAIM_SOURCE = "Definition 1, §4.1 and abstract: ε-DP for each agent's stream {X_i,k(t)}"
_N_CURVE_POINTS = 400
#: Which reading of ⌈log T⌉ the paper's own algorithm supports, and why.
LOG_SUPPORT = (
    "the paper's own tree supports log₂: §4.1 writes a prefix as 'no more than ⌈log t⌉ "
    "partial sums', a dyadic decomposition of popcount(t) ≤ ⌊log₂t⌋+1 p-sums (Alg. 2-3); "
    "the base is stated nowhere and the concentration terms (eq. 11, 12) need ln"
)
#: ``reading`` of the paper's calibration per log base.
READINGS = {"2": "⌈log T⌉ read as ⌈log₂ T⌉", "e": "⌈log T⌉ read as ⌈ln T⌉"}
#: The outputs of the default reading (the view) and the paper's words for it.
VIEW_READING = "outputs: messages ϑ̃(t−1) and actions, t = 1..T (tree prefixes 1..T−1)"
VIEW_SUPPORT = (
    "Definition 1 protects 'all possible outputs by Algorithm ℬ'; Alg. 4 line 19: "
    "'agent i sends ϑ̃_i,k(t−1) to agent j', line 9: 'Q̃_i,k(t) := ϑ̃_i,k(t−1) + "
    "C̃_i,k(t)', for t = 1..T (line 2); no line sends or acts on ϑ̃(T), so the prefix of "
    "round T reaches no output and a record sits in ⌊log₂(T−1)⌋+1 = ⌈log₂T⌉ released nodes"
)
#: The outputs of the second reading and the paper's words for it.
FINAL_READING = "outputs: messages ϑ̃(t−1), actions and the final estimate ϑ̃(T) (tree prefixes 1..T)"
FINAL_SUPPORT = (
    "§4: 'in addition to preserving the privacy of X_i,k(t), we also need to protect it "
    "in each τ = t, t+1, ..., T steps'; §4.1 bounds every prefix up to T: 'a total "
    "ε/⌈log T⌉·⌈log t⌉ ≤ ε'; Alg. 4 line 16 computes X̃(t) at t = T too: read as "
    "published, the prefix of round T adds the root level, ⌊log₂T⌋+1 nodes"
)


def variant_label(mode: str, base: str, publish_final: bool) -> str:
    """Short name of a variant, as in register keys: ``paper-log2``, ``paper-log2-final``.

    Parameters
    ----------
    mode : {"paper", "corrected"}
        Calibration mode.
    base : {"2", "e", "10"}
        Base of the paper's log.
    publish_final : bool
        Whether ϑ̃(T) is an output.

    Returns
    -------
    str
    """
    return f"{mode}-log{base}" + ("-final" if publish_final else "")


def gossip_fed_ucb_reading(mode: str, base: str, publish_final: bool = False) -> dict[str, str]:
    """``reading`` / ``reading_support`` of a Fed_UCB claim: log base and output set.

    The corrected variant fixes the calibration (no log-base reading); every variant
    names its output set (the view, or the view plus the final estimate).

    Parameters
    ----------
    mode : {"paper", "corrected"}
        Calibration mode.
    base : {"2", "e", "10"}
        Base of the paper's log (paper mode).
    publish_final : bool, default False
        Whether ϑ̃(T) is an output.

    Returns
    -------
    dict of str to str
        ``{"reading": ..., "reading_support": ...}``.
    """
    outputs, support = (
        (FINAL_READING, FINAL_SUPPORT) if publish_final else (VIEW_READING, VIEW_SUPPORT)
    )
    if mode == "corrected":
        return {"reading": outputs, "reading_support": support}
    return {
        "reading": f"{READINGS[base]}; {outputs}",
        "reading_support": f"{LOG_SUPPORT}. {support}",
    }


def _environment(
    config: VerifyConfig, root: np.random.SeedSequence
) -> tuple[BanditEnvironment, str]:
    if config.data_path is not None:
        env = hospital_bandit(load_diabetes(config.data_path), n_agents=config.n_agents)
        return env, f"hospital (UCI Diabetes-130, {Path(config.data_path).name})"
    rng = stream_rng(root, trial=0, stream=Stream.ENVIRONMENT)
    env = paper_synthetic_bandit(config.n_agents, config.n_arms, rng=rng, noise="gaussian")
    return env, "synthetic (Zhu et al. §5: μ ~ U[0,1], rewards μ + N(0,1))"


def _notes(mode: str, out_of_bounds: int, synthetic: bool) -> tuple[str, ...]:
    found = []
    if mode == "paper":
        found.append(
            "initial pulls are released raw (Alg. 4 line 1): the round-0 records have "
            "ε = ∞; Definition 1's stream starts at t = 1, so they are outside the claim"
        )
        if synthetic and out_of_bounds:
            found.append(
                f"the synthetic experiment feeds rewards outside [0, 1] to the tree "
                f"({out_of_bounds} observations in the regret runs); the claim's sensitivity "
                "of 1 does not hold for them and no finite ε does (§5 synthetic rewards "
                "μ + N(0, 1) against §4.1's rewards in [0, 1])"
            )
    return tuple(found)


def _regret_job(job: dict) -> dict:
    """One regret run, summarised (a picklable unit of work for the executor)."""
    kwargs = {"horizon": job["horizon"], "n_trials": job["n_trials"], "seed": job["seed"]}
    if job["mode"] == "gossip-ucb":
        run = run_gossip_ucb(job["env"], job["graph"], **kwargs)
        label = "gossip-ucb"
    else:
        run = run_gossip_fed_ucb(
            job["env"],
            job["graph"],
            epsilon=job["epsilon"],
            mode=job["mode"],
            log_base=job["log_base"],
            **kwargs,
        )
        label = f"{job['mode']}/log{job['log_base']}"
    per_trial = run.cumulative_regret.mean(axis=1)  # (trials, T), mean over agents
    points = np.unique(np.linspace(0, job["horizon"] - 1, _N_CURVE_POINTS).astype(int))
    curve = np.stack(
        [
            points + 1,
            per_trial[:, points].mean(0),
            per_trial[:, points].min(0),
            per_trial[:, points].max(0),
        ]
    )
    return {
        "algorithm": run.algorithm,
        "mode": job["mode"],
        "label": label,
        "epsilon": job["epsilon"],
        "final": per_trial[:, -1],
        "curve": curve,
        "n_out_of_bounds": run.n_out_of_bounds,
    }


def _regret_jobs(config: VerifyConfig, env, graph, run_root) -> list[dict]:
    """Step 1's jobs: the regret runs (Gossip_UCB and Fed_UCB per mode and ε)."""
    return [
        {
            "kind": "regret",
            "env": env,
            "graph": graph,
            "mode": mode,
            "log_base": base,
            "epsilon": eps,
            "horizon": config.regret_horizon,
            "n_trials": config.n_trials,
            "seed": run_root,
        }
        for mode, base, eps in [("gossip-ucb", "", math.inf)]
        + [
            (mode, base, eps)
            for mode, base in (("paper", "2"), ("corrected", "2"))
            for eps in config.epsilons
        ]
    ]


def _describe_regret(job: dict, summary: dict) -> str:
    return (
        f"regret {job['mode']} {job['log_base']} ε={job['epsilon']:g} "
        f"T={job['horizon']} trials={job['n_trials']}: {summary['final'].mean():.1f}"
    )


def _claim_grid(config: VerifyConfig) -> list[tuple[int, str, str, bool, int, float]]:
    """``(index, mode, log base, publish_final, horizon, ε)`` of every claim, index from 1.

    The first variants keep the indices (and so the audit seeds) they had before the
    final-estimate rows were added.
    """
    combos = (
        (m, b, f, h, e) for m, b, f in VARIANTS for h in config.horizons for e in config.epsilons
    )
    return [(index, *combo) for index, combo in enumerate(combos, start=1)]


def _describe_audit(row: dict, result) -> str:
    """Progress line of one tree audit, with its tightness against the tree's pure ε."""
    lower = result.bound.epsilon_lower_bound
    # Sensitivity 1 per node, the nodes of the released prefixes only.
    epsilon = released_tree_depth(row["horizon"], row["released_prefixes"]) / row["scale"]
    return (
        f"[audit] T={row['horizon']} R={row['released_prefixes']} "
        f"scale={row['scale']:.4g} claimed "
        f"ε={row['claimed_epsilon']:g}: lower bound {lower:.4f}, accountant "
        f"{epsilon:.4g}, tightness {lower / epsilon:.2f} ({tree_audit_event(result)})"
    )


def _describe_part(job: dict, result: dict) -> str:
    """Progress line of one part of a group's tree audits."""
    part = job["part"]
    world = "D" if part["world"] == 0 else "D'"
    return (
        f"tree audits T={job['horizon']} R={job['released_prefixes']}: {part['stage']} "
        f"audit in {world}, {part['n_samples']:,} runs scored at {len(part['scales'])} "
        f"scales for {job['rows']} claims ({result['seconds']:.1f} s)"
    )


def _audit_groups(config: VerifyConfig, grid) -> dict[tuple, list[dict]]:
    """The audited grid items, grouped by the released nodes they audit.

    Items of one group share the horizon, the released prefixes and the sample counts,
    and differ only in the node scale and the claimed ε: their audits run on one set
    of draws (:mod:`fedpriv.audit.engine.tree_grid`).
    """
    samples = dict(config.audit_samples)
    product = dict(config.audit_product_samples)
    groups: dict[tuple, list[dict]] = {}
    for index, mode, base, final, horizon, eps in grid:
        if horizon not in config.audit_horizons:
            continue
        released = gossip_fed_ucb_released_prefixes(horizon, publish_final=final)
        key = (horizon, released, samples[horizon], product.get(horizon, samples[horizon]))
        groups.setdefault(key, []).append(
            {
                "index": index,
                "horizon": horizon,
                "released_prefixes": released,
                "scale": gossip_fed_ucb_scale(
                    eps, horizon, mode=mode, log_base=base, publish_final=final
                ),
                "claimed_epsilon": eps,
            }
        )
    return groups


def _tree_jobs(config: VerifyConfig, grid, audit_root) -> tuple[list[dict], list[tuple]]:
    """Step 2's jobs: the parts of every group's tree audits, and the groups' plans.

    The items auditing the same released nodes form a group whose audits share one set
    of draws: every item's result is that of ``audit_tree_nodes`` at its own scale with
    the group's seed, the seed of its first item (``child_seed(audit_root, index)``), bit
    for bit (:mod:`fedpriv.audit.engine.tree_grid`). The group's four parts (joint and
    product audit, each world) are the executor's jobs.
    """
    jobs, plans = [], []
    for (horizon, released, n_joint, n_product), rows in _audit_groups(config, grid).items():
        pair = worst_case_reward_pair(horizon)
        parts = grid_parts(
            pair,
            scales=[row["scale"] for row in rows],
            n_samples=n_joint,
            product_samples=n_product,
            seed=child_seed(audit_root, rows[0]["index"]),
            confidence=config.confidence,
            released_prefixes=released,
        )
        plans.append((pair, rows, parts, len(jobs)))
        jobs += [
            {
                "kind": "tree",
                "part": part,
                "horizon": horizon,
                "released_prefixes": released,
                "rows": len(rows),
            }
            for part in parts
        ]
    return jobs, plans


def _tree_results(
    config: VerifyConfig, plans, counts: list[dict], say
) -> dict[int, tuple[EpsilonLowerBound, str]]:
    """Step 2's results (bound, event) keyed by grid index, from the parts' counts
    (``counts[j]`` of ``_tree_jobs``' job ``j``); one progress line per item."""
    out = {}
    for pair, rows, parts, first in plans:
        results = grid_results(
            pair,
            parts,
            counts[first : first + len(parts)],
            scales=[row["scale"] for row in rows],
            claimed_epsilons=[row["claimed_epsilon"] for row in rows],
            confidence=config.confidence,
            released_prefixes=rows[0]["released_prefixes"],
        )
        for row, result in zip(rows, results):
            say(_describe_audit(row, result))
            out[row["index"]] = (result.bound, tree_audit_event(result))
    return out


def _tree_audits(
    config: VerifyConfig, grid, audit_root, say, executor=None
) -> dict[int, tuple[EpsilonLowerBound, str]]:
    """Step 2 alone: the tree audits at the audited horizons (bound, event), keyed by
    grid index (:func:`_tree_jobs`, then :func:`_tree_results`)."""
    jobs, plans = _tree_jobs(config, grid, audit_root)
    counts = parallel_map(
        _attachment_job,
        jobs,
        workers=config.workers,
        say=say,
        executor=executor,
        describe=_describe_job,
    )
    return _tree_results(config, plans, counts, say)


def _attachment_job(job: dict):
    """One unit of the job's work (picklable): a regret run, a part of a group's tree
    audits, or the ledger."""
    if job["kind"] == "regret":
        return _regret_job(job)
    if job["kind"] == "tree":
        return part_counts(job["part"])
    return _ledger(job["config"], job["env"], job["graph"], job["run_root"])


def _describe_job(job: dict, result) -> str:
    if job["kind"] == "regret":
        return _describe_regret(job, result)
    if job["kind"] == "tree":
        return _describe_part(job, result)
    return (
        f"ledger: one Fed_UCB run per variant at T={job['config'].ledger_horizon}, ε=1 "
        f"({len(result):,} rows)"
    )


def _schedule(jobs: list[dict]) -> list[int]:
    """The jobs' order for the pool, longest first so that its last jobs are short: the
    tree-audit parts of at least 2·10⁸ node draws, the regret runs, the ledger, then the
    other parts, each part class by size."""

    def draws(job: dict) -> int:
        return job["part"]["n_samples"] * job["part"]["loc_d"].size * len(job["part"]["scales"])

    def rank(j: int) -> tuple:
        job = jobs[j]
        if job["kind"] == "tree":
            big = job["part"]["n_samples"] * job["part"]["loc_d"].size >= 2 * 10**8
            return (0 if big else 3, -draws(job))
        return (1 if job["kind"] == "regret" else 2, 0)

    return sorted(range(len(jobs)), key=rank)


def _grid_claim(config: VerifyConfig, item) -> Claim:
    """The claim of one grid item (``_claim_grid``), as the register states it."""
    _, mode, base, final, horizon, eps = item
    scale = gossip_fed_ucb_scale(eps, horizon, mode=mode, log_base=base, publish_final=final)
    return Claim(
        paper=PAPER,
        algorithm="gossip-fed-ucb",
        mode=mode,
        setting=(
            ("n_agents", config.n_agents),
            ("n_arms", config.n_arms),
            ("horizon", horizon),
            ("epsilon", eps),
            ("log_base", base),
            ("graph", "complete"),
            ("node_scale", scale),
            ("released_prefixes", gossip_fed_ucb_released_prefixes(horizon, publish_final=final)),
            ("rewards", BOUNDED_REWARDS),
        ),
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        claimed=PureDP(eps),
        source=CLAIM_SOURCE,
        **gossip_fed_ucb_reading(mode, base, final),
    )


def _claim_result(config: VerifyConfig, root, item, audit, notes) -> ClaimResult:
    """Step 3: the accountant's ε of one grid claim over Definition 1's stream, and verdict.

    The accountant is charged on the variant's view (prefixes 1..T−1, or 1..T when the
    final estimate is published). ``audit`` is the tree audit's ``(bound, event)``, or
    None where not audited.
    """
    bound, event = (None, None) if audit is None else audit
    _, mode, base, final, horizon, eps = item
    scale = gossip_fed_ucb_scale(eps, horizon, mode=mode, log_base=base, publish_final=final)
    x0 = np.zeros((1, config.n_agents, config.n_arms))
    noise = stream_rngs(
        child_seed(root, 3), n_trials=1, n_agents=config.n_agents, stream=Stream.NOISE
    )
    accountant, _, _, _ = open_gossip_fed_ucb_releases(
        x0, horizon=horizon, epsilon=eps, mode=mode, log_base=base, rng=noise, publish_final=final
    )
    route, acc_eps = accountant.routes.tightest(0.0, where={"phase": "stream"})
    init_eps = accountant.get_epsilon(0.0, where={"phase": "init"})
    # The view's exact ε (n released Laplace(b) nodes hold a round-1 record: the loss
    # reaches n/b), the same analytic evidence the register row carries, so this
    # report and claims.json decide alike.
    nodes = released_tree_depth(
        horizon, gossip_fed_ucb_released_prefixes(horizon, publish_final=final)
    )
    exact = LowerBoundEvidence(
        epsilon=nodes / scale,
        kind="analytic",
        description=f"exact: {nodes} released Laplace({scale:.6g}) nodes hold a round-1 record",
    )
    verdict, evidence = decide_verdict(eps, acc_eps, bound, analytic_lower=exact)
    claim = _grid_claim(config, item)
    return ClaimResult(
        claim=claim,
        accountant_epsilon=acc_eps,
        accountant_route=route,
        audit=bound,
        verdict=verdict,
        evidence=evidence,
        notes=notes,
        mechanism_epsilon=acc_eps,
        extras=(("initial_pulls_epsilon", init_eps),),
        audit_event=event,
    )


def _regret_rows(config: VerifyConfig, summaries) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Step 4: the regret table rows and the plotted curves."""
    regret_rows, curves = [], {}
    for summary in summaries:
        final, eps = summary["final"], summary["epsilon"]
        regret_rows.append(
            {
                "algorithm": summary["algorithm"],
                "mode": summary["label"],
                "epsilon": eps,
                "horizon": config.regret_horizon,
                "n_trials": config.n_trials,
                "regret_mean": float(final.mean()),
                "regret_min": float(final.min()),
                "regret_max": float(final.max()),
                "n_out_of_bounds": summary["n_out_of_bounds"],
            }
        )
        curves[f"{summary['label']}|{eps:g}"] = summary["curve"]
    return regret_rows, curves


def _ledger(config: VerifyConfig, env, graph, run_root) -> pd.DataFrame:
    """Step 5: one Fed_UCB run per variant at the ledger horizon, ledgers stacked."""
    ledgers = []
    for mode, base, final in VARIANTS:
        run = run_gossip_fed_ucb(
            env,
            graph,
            horizon=config.ledger_horizon,
            epsilon=1.0,
            mode=mode,
            log_base=base,
            n_trials=1,
            seed=run_root,
            publish_final=final,
        )
        frame = run.accountant.ledger.draws
        frame.insert(0, "publish_final", final)
        frame.insert(0, "log_base", base)
        frame.insert(0, "mode", mode)
        ledgers.append(frame)
    return pd.concat(ledgers, ignore_index=True)


def verify_gossip_fed_ucb(
    config: VerifyConfig, *, progress: Callable[[str], None] | None = None, executor=None
) -> VerifyReport:
    """Run the whole verification of Fed_UCB's claim; see the module docstring.

    Steps: regret runs (the paper-mode notes need their out-of-range counts), tree
    audits and the ledger, as one set of jobs on one pool; then the accountant and
    verdict per claim and the regret table.

    ``executor`` (a ``concurrent.futures.Executor`` or a dask ``Client``) runs the
    regret runs, tree audits and ledger instead of the local pool of
    ``config.workers``; the numbers do not change (every job has its own SeedSequence
    address).

    Parameters
    ----------
    config : VerifyConfig
        The run's settings.
    progress : callable, optional
        Receives one line per finished job (``[i/n] ...``).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the regret runs, tree audits and ledger run.

    Returns
    -------
    VerifyReport
        Claims with their verdicts, the regret table and the ledger.

    Raises
    ------
    ValueError
        On a bad configuration or a data file that cannot be used.
    DataFormatError
        If ``data_path`` does not have the UCI schema.
    """
    started = time.perf_counter()
    say = progress or (lambda message: None)
    root = as_seed_sequence(config.seed)
    env, env_name = _environment(config, child_seed(root, 0))
    graph = make_graph("complete", config.n_agents)
    run_root = child_seed(root, 1)
    grid = _claim_grid(config)
    regret_jobs = _regret_jobs(config, env, graph, run_root)
    tree_jobs, plans = _tree_jobs(config, grid, child_seed(root, 2))
    ledger_job = {"kind": "ledger", "config": config, "env": env, "graph": graph}
    jobs = regret_jobs + tree_jobs + [{**ledger_job, "run_root": run_root}]
    # One pool for the three steps, so that no core idles while another step's last
    # job runs; every job has its own SeedSequence address, so the order changes nothing.
    order = _schedule(jobs)
    done = parallel_map(
        _attachment_job,
        [jobs[j] for j in order],
        workers=config.workers,
        say=say,
        executor=executor,
        describe=_describe_job,
    )
    results_of = dict(zip(order, done))
    summaries = [results_of[j] for j in range(len(regret_jobs))]
    counts = [results_of[len(regret_jobs) + k] for k in range(len(tree_jobs))]
    ledger = results_of[len(jobs) - 1]
    out_of_bounds = {
        mode: sum(r["n_out_of_bounds"] for r in summaries if r["mode"] == mode)
        for mode in ("paper", "corrected")
    }
    audits = _tree_results(config, plans, counts, say)
    synthetic = config.data_path is None
    results = tuple(
        _claim_result(
            config,
            root,
            item,
            audits.get(item[0]),
            _notes(item[1], out_of_bounds[item[1]], synthetic),
        )
        for item in grid
    )
    regret_rows, curves = _regret_rows(config, summaries)
    return VerifyReport(
        config=config,
        seed_entropy=int(root.entropy),
        environment=env_name,
        lambda2=second_eigenvalue(graph),
        claims=results,
        regret=pd.DataFrame(regret_rows),
        curves=curves,
        ledger=ledger,
        seconds=time.perf_counter() - started,
    )


# ------------------------------------------------------------------ the attachment
# What ``fedpriv verify`` runs with this family's claims (fedpriv.audit.claims.attachment):
# the job above, whose tree audits evaluate the register's grid rows.


def configure(
    *, quick: bool = False, seed: int = 0, workers: int | None = None, **options
) -> VerifyConfig:
    """The job's settings within ``fedpriv verify`` (``--quick``, ``--seed``, ``--workers``).

    Parameters
    ----------
    quick : bool, default False
        :meth:`VerifyConfig.quick_config` when True.
    seed : int, default 0
        Root of the job's SeedSequence tree (the run's ``--seed``).
    workers : int, optional
        Processes (default: every core).
    **options
        Fields of :class:`VerifyConfig` the command line set (``data_path``,
        ``n_trials``, ``regret_horizon``); ``None`` values are left at the default.

    Returns
    -------
    VerifyConfig

    Raises
    ------
    ValueError
        On a bad value (it names the field).
    """
    fields = {"seed": seed, **{k: v for k, v in options.items() if v is not None}}
    if workers is not None:
        fields["workers"] = workers
    return VerifyConfig.quick_config(**fields) if quick else VerifyConfig(**fields)


def _grid_rows(config: VerifyConfig, grid, entries) -> dict[int, str]:
    """Grid index -> the register key of the row stating the same claim.

    A row matches a grid item when its claim has the item's algorithm, mode and
    setting; the key is the row's own.
    """
    wanted = {}
    for item in grid:
        claim = _grid_claim(config, item)
        wanted[(claim.algorithm, claim.mode, claim.setting)] = item[0]
    out = {}
    for entry in entries:
        index = wanted.get((entry.claim.algorithm, entry.claim.mode, entry.claim.setting))
        if index is not None:
            out[index] = entry.key
    return out


def planned(config: VerifyConfig, entries) -> Plan:
    """The job's progress lines and the register rows it evaluates, counted.

    Parameters
    ----------
    config : VerifyConfig
    entries : sequence of RegisteredClaim
        The family's selected register rows.

    Returns
    -------
    Plan
        Regret runs (Gossip_UCB, then the paper and corrected calibrations per ε) plus
        the tree audits; the keys of the grid's rows.
    """
    grid = _claim_grid(config)
    jobs = 1 + 2 * len(config.epsilons)
    jobs += 4 * len(_audit_groups(config, grid))  # joint and product audit, each world
    jobs += 1  # the ledger
    return Plan(jobs, frozenset(_grid_rows(config, grid, entries).values()))


def run(
    config: VerifyConfig, entries, *, progress: Callable[[str], None] | None = None, executor=None
) -> AttachmentOutput:
    """Run the job (:func:`verify_gossip_fed_ucb`); its grid claims become register rows.

    Parameters
    ----------
    config : VerifyConfig
    entries : sequence of RegisteredClaim
        The family's selected register rows.
    progress : callable, optional
        As in :func:`verify_gossip_fed_ucb`.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        As in :func:`verify_gossip_fed_ucb`.

    Returns
    -------
    AttachmentOutput
        The accountant ε, notes, tree audit and ε of the round-0 records of every row
        of :func:`planned`'s keys; the :class:`VerifyReport` as ``result``.
    """
    report = verify_gossip_fed_ucb(config, progress=progress, executor=executor)
    keys = _grid_rows(config, _claim_grid(config), entries)
    rows = {
        keys[item[0]]: RowEvidence(
            route=result.accountant_route,
            epsilon=result.accountant_epsilon,
            notes=result.notes,
            bound=result.audit,
            event=result.audit_event,
            extras=result.extras,
        )
        for item, result in zip(_claim_grid(config), report.claims)
        if item[0] in keys
    }
    return AttachmentOutput(rows=rows, result=report)


def write(report: VerifyReport, folder: Path) -> None:
    """Write the job's files into ``folder``: report.md, claims.json, ledger.csv, regret.png.

    Parameters
    ----------
    report : VerifyReport
    folder : Path
        An existing (staging) folder.
    """
    write_files(report, Path(folder))
