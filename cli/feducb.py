"""``fedpriv run`` and ``fedpriv experiment`` commands of FedUCB (Dubey & Pentland 2020).

Declared as data (:mod:`fedpriv.cli.runs`): the options of each command and its run
function; the shared machinery wires them, times the run, prints the record or the text
lines and sets the exit status.

``run feducb | feducb-fixed | feducb-nonprivate``
    Centralized FedUCB (:mod:`fedpriv.algorithms.feducb.centralized`) on the linear
    environment of the paper's experiments (:mod:`fedpriv.algorithms.environments.linear`):
    the average per-agent regret, the number of syncs, the tree depth and, for the private
    variants, the accountant's ε at the claimed δ for the Privatizer's releases next to the
    claim (Prop. 3's scope), with the channels the accountant cannot cover (the adaptive
    sync timing) named.
``run feducb-decentralized | linucb | linucb-independent-private | linucb-pooled``
    Decentralized FedUCB on a graph (Alg. 3) and the LinUCB baselines: the regret and, for
    the private algorithms, the accountant's ε at the claimed δ next to the claim; the
    decentralized run also prints its communication (requests, releases, deliveries, link
    transmissions), the clique cover and the tree depth.
``experiment feducb-fig1a | feducb-fig1b | feducb-fig1c | feducb-fig2 | feducb-decentralized-schedules``
    The paper's figures at a documented smaller scale
    (:mod:`fedpriv.audit.families.feducb.experiments`), written to ``OUT/feducb/``.

Length: the family's eleven commands and their option declarations, one module per family
(every layer spells the family ``feducb`` once).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedpriv.cli.choices import GRAPH_KINDS
from fedpriv.cli.runs import (
    JSON,
    SEED,
    TRIALS,
    ExperimentCommand,
    OneOf,
    RunCommand,
    RunReport,
    option,
    options_for,
    progress_printer,
    summary,
)

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.feducb.loop.BETA_VERSIONS
BETA_VERSIONS = ("H", "P", "tuned")
#: fedpriv.algorithms.feducb.privatizer.PRIVATIZER_CALIBRATIONS
PRIVATIZER_CALIBRATIONS = ("paper", "corrected", "exact")
#: fedpriv.algorithms.environments.linear.REWARD_MODELS
REWARD_MODELS = ("bernoulli", "beta")
#: fedpriv.algorithms.feducb.sync.SYNC_ORDERS
SYNC_ORDERS = ("MlogT", "M1.5", "MT")
#: fedpriv.algorithms.feducb.decentralized.BETA_CHOICES
BETA_CHOICES = ("H", "P", "tuned")
#: fedpriv.algorithms.feducb.decentralized.ON_CAPACITY
ON_CAPACITY = ("raise", "stop")
#: fedpriv.algorithms.feducb.decentralized.RESPOND
RESPOND = ("receipt", "next_use")
#: fedpriv.algorithms.feducb.decentralized.SCHEDULES
SCHEDULES = ("adaptive", "fixed")
#: fedpriv.algorithms.feducb.linucb.UPDATE_ORDERS
UPDATE_ORDERS = ("round", "sequential")

if TYPE_CHECKING:  # for annotations; the functions import what they run
    from fedpriv.algorithms.feducb.centralized import FedUCBRun

__all__ = [
    "BETA_CHOICES",
    "BETA_VERSIONS",
    "COMMANDS",
    "LINEAR_ALGORITHMS",
    "ON_CAPACITY",
    "PRIVATIZER_CALIBRATIONS",
    "RESPOND",
    "REWARD_MODELS",
    "SCHEDULES",
    "SYNC_ORDERS",
    "UPDATE_ORDERS",
]

_CLAIM_SOURCE = (
    "Dubey & Pentland 2020, Alg. 2, Prop. 3 and Remark 3: each agent's release stream "
    "is (ε, δ)-DP per substituted (x, y) pair, hence (ε, δ, M)-federated DP"
)
_SOURCES = {
    "feducb-decentralized": "Dubey & Pentland 2020, Remark 5-6 and Prop. 3: each agent's "
    "release streams (ε, δ)-DP per (x, y), m = 1 + ⌈log(T/γ)⌉",
    "linucb-independent-private": "each agent's Privatizer stream (FedUCB Alg. 2, n = T) "
    "(ε, δ)-DP per (x, y) (Shariff & Sheffet 2018 style)",
}
#: ``--sync-every`` of ``feducb-decentralized --schedule fixed`` when not given (as
#: ``fedpriv run feducb-fixed``).
_DEFAULT_SYNC_EVERY = 100

# ---------------------------------------------------------------- centralized FedUCB
_CENTRALIZED_COMMON = (
    option("--agents", type=int, default=10, help="n_agents M (default 10)"),
    option("--horizon", type=int, default=2000, help="horizon T (default 2000)"),
    option("--dimension", type=int, default=10, help="context dimension d (default 10)"),
    option("--actions", type=int, default=20, help="actions K per round (default 20)"),
    option(
        "--reward",
        choices=REWARD_MODELS,
        default="bernoulli",
        help="bernoulli (NeurIPS text) or beta (full text); default bernoulli",
    ),
    option(
        "--shared-users",
        action="store_true",
        help="footnote 4: one user present at every agent at each round",
    ),
    option(
        "--beta-version",
        choices=BETA_VERSIONS,
        default="H",
        help="β of Prop. 2 in the full text (H) or NeurIPS text (P), or tuned",
    ),
    option("--beta-value", type=float, default=None, help="the constant β of --beta-version tuned"),
    option("--failure-probability", type=float, default=0.1, help="α (default 0.1)"),
    TRIALS,
    SEED,
    JSON,
)
_CENTRALIZED_PRIVACY = (
    option("--epsilon", type=float, default=1.0, help="claimed ε (default 1)"),
    option("--delta", type=float, default=0.1, help="claimed δ (default 0.1)"),
    option(
        "--calibration",
        choices=PRIVATIZER_CALIBRATIONS,
        default="paper",
        help="Privatizer noise: the paper's σ_N, corrected, or exact (default paper)",
    ),
)
_THRESHOLD = OneOf(
    (
        option(
            "--threshold",
            type=float,
            default=None,
            help="sync threshold D (default: Theorem 1's value)",
        ),
        option(
            "--syncs-order",
            choices=SYNC_ORDERS,
            default=None,
            help="pick D for about M ln T, M^1.5 or T syncs (non-private: Prop. 1 "
            "bound; private: D = T d ln 2 / n, see feducb_sync)",
        ),
    )
)


def _threshold(args: argparse.Namespace, rho_min: float, rho_max: float) -> float | None:
    from fedpriv.algorithms.feducb.sync import syncs_for_order, threshold_for_syncs

    if getattr(args, "syncs_order", None) is None:
        return args.threshold
    target = syncs_for_order(args.syncs_order, n_agents=args.agents, horizon=args.horizon)
    return threshold_for_syncs(
        target, horizon=args.horizon, dim=args.dimension, rho_min=rho_min, rho_max=rho_max
    )


def _execute(args: argparse.Namespace) -> FedUCBRun:
    from fedpriv.algorithms.environments.linear import LinearBandit
    from fedpriv.algorithms.feducb.centralized import (
        run_feducb,
        run_feducb_fixed,
        run_feducb_nonprivate,
    )
    from fedpriv.algorithms.feducb.sync import private_threshold_for_syncs, syncs_for_order
    from fedpriv.algorithms.seeding import as_seed_sequence, child_seed

    spec = LinearBandit(
        n_agents=args.agents,
        n_arms=args.actions,
        dim=args.dimension,
        reward=args.reward,
        shared_users=args.shared_users,
    )
    if args.trials < 1:
        raise ValueError(f"`--trials` must be >= 1, got {args.trials}.")
    root = as_seed_sequence(args.seed)
    env_seed, noise_seed = child_seed(root, 0), child_seed(root, 1)
    tables = spec.sample(env_seed, n_trials=args.trials, horizon=args.horizon)
    common = {
        "beta": args.beta_version,
        "beta_value": args.beta_value,
        "failure_probability": args.failure_probability,
        "seed": noise_seed,
    }
    variant = args.feducb_variant
    if variant == "feducb-nonprivate":
        lam = args.regularizer
        threshold = _threshold(args, lam / args.agents, lam / args.agents)
        return run_feducb_nonprivate(tables, threshold=threshold, regularizer=lam, **common)
    privacy = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "mode": args.calibration,
        "secure_noise": getattr(args, "secure_noise", False),
    }
    if variant == "feducb-fixed":
        return run_feducb_fixed(tables, sync_every=args.sync_every, **privacy, **common)
    threshold = args.threshold
    if args.syncs_order is not None:  # the noise shift dominates the private test
        target = syncs_for_order(args.syncs_order, n_agents=args.agents, horizon=args.horizon)
        threshold = private_threshold_for_syncs(target, horizon=args.horizon, dim=args.dimension)
    return run_feducb(tables, threshold=threshold, n_syncs=args.n_syncs, **privacy, **common)


def _run_centralized(args: argparse.Namespace) -> RunReport:
    run = _execute(args)
    record = _record(args, run)
    return RunReport(record, lambda: _centralized_lines(args, run, record))


def _record(args: argparse.Namespace, run: FedUCBRun) -> dict[str, Any]:
    import numpy as np
    from fedpriv.audit.claims.claim import json_number, run_verdict
    from fedpriv.privacy.mechanisms.matrix_tree import SymmetricMatrixGaussianTree, matrix_tree_gdp

    final = run.regret_curve[:, -1]
    setting = {k: json_number(v) for k, v in run.setting.items()}
    setting["seed"] = args.seed
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": summary(final),
        "regret_scope": "average per-agent cumulative pseudo-regret R_M(T)/M",
        "syncs": summary(run.n_syncs.astype(np.float64)),
        "threshold": json_number(run.threshold) if not math.isnan(run.threshold) else None,
        "sync_every": run.sync_every,
        "tree_depth": run.tree_depth,
        "tree_capacity": run.capacity,
    }
    cal = run.calibration
    if cal is None:
        record["non_private_releases"] = run.accountant.ledger.non_private_reasons()
        return record
    route, eps = run.accountant_epsilon(cal.claimed_delta)
    # The verdict is fedpriv verify's rule on the end-to-end ledger (raw sync requests
    # included), not on the Privatizer alone: one claim, one verdict.
    verdict, evidence, end_to_end, _ = run_verdict(
        cal.claimed_epsilon, run.accountant, cal.claimed_delta
    )
    mu = matrix_tree_gdp(
        SymmetricMatrixGaussianTree(
            noise_stddev=cal.noise_stddev,
            dim=run.setting["dim"] + 1,
            frobenius_sensitivity=cal.frobenius_sensitivity,
            capacity=cal.capacity,
        )
    )
    unaccounted = run.accountant.ledger.non_private_reasons()
    secure = {"secure_noise": True} if run.setting.get("secure_noise") else {}
    record["privatizer"] = {
        "calibration": cal.calibration,
        "noise_stddev": cal.noise_stddev,
        "op_norm_bound": cal.op_norm_bound,
        "rho_min": cal.rho_min,
        "rho_max": cal.rho_max,
        "kappa": cal.kappa,
        "psd_shift": cal.shift,
        "frobenius_sensitivity": cal.frobenius_sensitivity,
        "gdp_mu": mu,
        "records_per_leaf": run.records_per_leaf,
        "view_gdp_mu": mu * run.records_per_leaf,
        "noise_draws": run.accountant.ledger.n_draws,
        **secure,
    }
    record["guarantee"] = {
        "claimed": {
            "epsilon": cal.claimed_epsilon,
            "delta": cal.claimed_delta,
            "source": _CLAIM_SOURCE,
        },
        "accountant": {
            "epsilon": json_number(eps),
            "delta": cal.claimed_delta,
            "route": route,
            "neighboring_relation": run.accountant.neighboring_relation.value,
            "scope": (
                "each agent's Privatizer releases (Prop. 3), worst case per "
                "record"
                + (
                    f", each leaf charged for the "
                    f"{run.records_per_leaf} pairs one change moves "
                    "through the agent's own actions between syncs "
                    "(Alg. 1 line 4)"
                    if run.records_per_leaf > 1
                    else ""
                )
            ),
            "mechanism_epsilon": json_number(run.mechanism_epsilon(cal.claimed_delta)[1]),
            "curve": {
                f"{target:g}": json_number(
                    run.accountant.get_epsilon(target, where={"channel": "privatizer"})
                )
                for target in (1e-3, 1e-6)
            },
        },
        "routes": {
            k: json_number(v)
            for k, v in run.accountant.routes.epsilons(
                cal.claimed_delta, where={"channel": "privatizer"}
            ).items()
        },
        "verdict": verdict,
        "evidence": evidence,
        "end_to_end": {
            "epsilon": json_number(end_to_end),
            "unaccounted_channels": unaccounted,
            "assumption": (
                f"one changed (x, y) moves up to {run.records_per_leaf} pairs of one "
                "Privatizer leaf through the agent's own actions between syncs (Alg. 1 "
                "line 4, Remark 3), charged; later leaves follow the releases only"
                if run.records_per_leaf > 1
                else "one changed (x, y) changes one record of the Privatizer's input; an "
                "agent's own-data use between syncs (Alg. 1 line 4, Remark 3) can change "
                "its later leaves too, not covered (the adaptive schedule's sync times "
                "are raw anyway)"
            ),
        },
    }
    return record


def _centralized_lines(args: argparse.Namespace, run: FedUCBRun, record: dict) -> Iterator[str]:
    from fedpriv.privacy import format_epsilon

    regret = record["regret"]
    syncs = record["syncs"]
    yield (
        f"{run.algorithm}: average per-agent regret at T={args.horizon}: {regret['mean']:.2f} "
        f"(min {regret['min']:.2f}, max {regret['max']:.2f} over {args.trials} trials)"
    )
    yield (
        f"syncs: {syncs['mean']:.1f} (min {syncs['min']:.0f}, max {syncs['max']:.0f}); "
        f"tree depth m = {run.tree_depth}, capacity {run.capacity} leaves"
    )
    if "guarantee" in record:
        g = record["guarantee"]
        p = record["privatizer"]
        yield (
            f"Privatizer ({p['calibration']}): σ_N = {p['noise_stddev']:.4g}, Λ = "
            f"{p['op_norm_bound']:.4g}, GDP μ = {p['gdp_mu']:.4g} per record"
            + (
                " (float noise; secure noise: exact discrete Gaussian on a grid, "
                "charged through zCDP)"
                if p.get("secure_noise")
                else ""
            )
        )
        eps = g["accountant"]["epsilon"]
        eps_value = math.inf if eps == "inf" else eps
        yield (
            f"claimed (ε, δ) = ({g['claimed']['epsilon']:g}, {g['claimed']['delta']:g}); "
            f"Privatizer ε at δ = {g['claimed']['delta']:g}: {format_epsilon(eps_value)} "
            f"({g['accountant']['route']}; at δ = 1e-6: "
            f"{format_epsilon(float(g['accountant']['curve']['1e-06']))}); end to end: "
            f"{format_epsilon(float(g['end_to_end']['epsilon']))}"
        )
        yield (f"verdict: {g['verdict']} ({g['evidence']})")
        for reason in g["end_to_end"]["unaccounted_channels"]:
            yield (f"not covered by the accountant (ε = ∞ end to end): {reason}")
    else:
        yield ("non-private: " + "; ".join(record["non_private_releases"]))


# ------------------------------------------- decentralized FedUCB and LinUCB baselines
#: The ``run`` commands on the linear environment besides centralized FedUCB.
LINEAR_ALGORITHMS = (
    "feducb-decentralized",
    "linucb",
    "linucb-independent-private",
    "linucb-pooled",
)


#: Every option of the linear ``run`` commands: (option, the commands that take it), help order.
_LINEAR_OPTIONS = (
    (option("--agents", type=int, default=10, help="n_agents M (default 10)"), None),
    (option("--arms", type=int, default=20, help="actions per round K (default 20)"), None),
    (option("--dim", type=int, default=10, help="context dimension d (default 10)"), None),
    (option("--horizon", type=int, default=2000, help="horizon T (default 2000)"), None),
    (
        option(
            "--reward",
            choices=REWARD_MODELS,
            default="bernoulli",
            help="Bernoulli (NeurIPS text) or Beta (full text) rewards",
        ),
        None,
    ),
    (TRIALS, None),
    (SEED, None),
    (JSON, None),
    (
        option(
            "--epsilon", type=float, default=1.0, help="claimed ε (decentralized: inf = no noise)"
        ),
        ("feducb-decentralized", "linucb-independent-private"),
    ),
    (
        option("--delta", type=float, default=0.1, help="claimed δ (default 0.1)"),
        ("feducb-decentralized", "linucb-independent-private"),
    ),
    (
        option(
            "--calibration",
            choices=PRIVATIZER_CALIBRATIONS,
            default="paper",
            help="Privatizer noise: paper (Alg. 2 line 5 as printed), "
            "corrected (its two calibration errors fixed) or exact "
            "(smallest σ the exact accountant allows); default paper",
        ),
        ("feducb-decentralized", "linucb-independent-private"),
    ),
    (
        option(
            "--beta",
            choices=BETA_CHOICES,
            default="H",
            help="Prop. 2 [H] / [P] or a constant (--beta-value)",
        ),
        ("feducb-decentralized", "linucb-independent-private"),
    ),
    (
        option(
            "--beta",
            choices=("oful", "tuned"),
            default="oful",
            help="radius β: OFUL's Thm. 2 (Abbasi-Yadkori et al. 2011, "
            "default) or a constant (--beta-value)",
        ),
        ("linucb", "linucb-pooled"),
    ),
    (
        option("--regularizer", type=float, default=1.0, help="λ (default 1)"),
        ("linucb", "linucb-pooled"),
    ),
    (option("--beta-value", type=float, default=None, help="β when --beta tuned"), None),
    (
        option(
            "--graph",
            choices=GRAPH_KINDS,
            default="ring",
            help="communication graph (default ring)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option("--p", type=float, default=None, help="edge probability (erdos_renyi)"),
        ("feducb-decentralized",),
    ),
    (
        option("--gamma", type=int, default=2, help="message life γ (default 2)"),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--schedule",
            choices=SCHEDULES,
            default="adaptive",
            help="adaptive: Alg. 3 line 6's requests; fixed: every agent "
            "releases every set each B rounds (data-independent)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--sync-every",
            type=int,
            default=None,
            help="B, rounds between releases with --schedule fixed (default 100)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--threshold",
            type=float,
            default=None,
            help="D of line 6 (default: Thm. 1's value on T/γ rounds)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--respond",
            choices=RESPOND,
            default="receipt",
            help="peers answer a request on arrival (receipt, Alg. 3, "
            "default) or at the set's next use (next_use, the proof)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--on-capacity",
            choices=ON_CAPACITY,
            default="raise",
            help="a release past a tree's capacity raises (default) or "
            "that (agent, set) stops releasing (stop)",
        ),
        ("feducb-decentralized",),
    ),
    (
        option(
            "--order",
            choices=UPDATE_ORDERS,
            default="round",
            help="updates within a round: after all act, or one by one",
        ),
        ("linucb-pooled",),
    ),
)


def _run_linear(args: argparse.Namespace) -> RunReport:
    from fedpriv.algorithms.environments.linear import LinearBandit
    from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
    from fedpriv.algorithms.feducb.linucb import run_linucb, run_linucb_pooled
    from fedpriv.algorithms.feducb.linucb_private import run_linucb_independent_private
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng

    root = as_seed_sequence(args.seed)
    spec = LinearBandit(n_agents=args.agents, n_arms=args.arms, dim=args.dim, reward=args.reward)
    tables = spec.sample(root, n_trials=args.trials, horizon=args.horizon)
    name = args.algorithm
    if name == "feducb-decentralized":
        graph = make_graph(
            args.graph,
            args.agents,
            p=args.p,
            rng=stream_rng(root, trial=0, stream=Stream.NETWORK)
            if args.graph == "erdos_renyi"
            else None,
        )
        sync_every = args.sync_every
        if args.schedule == "fixed" and sync_every is None:
            sync_every = _DEFAULT_SYNC_EVERY
        run = run_feducb_decentralized(
            tables,
            graph,
            gamma=args.gamma,
            epsilon=args.epsilon,
            delta=args.delta,
            schedule=args.schedule,
            sync_every=sync_every,
            threshold=args.threshold,
            mode=args.calibration,
            beta=args.beta,
            beta_value=args.beta_value,
            respond=args.respond,
            on_capacity=args.on_capacity,
            seed=root,
            secure_noise=getattr(args, "secure_noise", False),
        )
    elif name == "linucb-independent-private":
        run = run_linucb_independent_private(
            tables,
            epsilon=args.epsilon,
            delta=args.delta,
            mode=args.calibration,
            beta=args.beta,
            beta_value=args.beta_value,
            seed=root,
        )
    elif name == "linucb-pooled":
        run = run_linucb_pooled(
            tables,
            order=args.order,
            regularizer=args.regularizer,
            beta=args.beta,
            beta_value=args.beta_value,
            seed=root,
        )
    else:
        run = run_linucb(
            tables,
            regularizer=args.regularizer,
            beta=args.beta,
            beta_value=args.beta_value,
            seed=root,
        )
    record = _linear_record(run, seed=args.seed)
    return RunReport(record, lambda: _linear_lines(args, run, record))


def _linear_lines(args: argparse.Namespace, run: Any, record: dict) -> Iterator[str]:
    from fedpriv.privacy import format_epsilon

    r = record["regret"]
    yield (
        f"{run.algorithm}: average per-agent regret at T={args.horizon}: {r['mean']:.2f} "
        f"(min {r['min']:.2f}, max {r['max']:.2f} over {args.trials} trials)"
    )
    if "communication" in record:
        c = record["communication"]
        schedule = (
            "adaptive (line 6)"
            if run.schedule == "adaptive"
            else f"fixed, every {run.sync_every} rounds"
        )
        yield (
            f"schedule {schedule}; γ = {run.gamma}, {len(run.cover)} cliques "
            f"{list(run.cover)}; tree depth "
            f"m = {run.tree_depth}; requests {c['requests']['mean']:.1f}, releases "
            f"{c['releases']['mean']:.1f}, deliveries {c['deliveries']['mean']:.1f}, "
            f"link transmissions {c['transmissions']['mean']:.1f} per trial"
        )
    if "guarantee" in record:
        g = record["guarantee"]
        yield (
            f"claimed (ε, δ) = ({format_epsilon(g['claimed']['epsilon'])}, "
            f"{g['claimed']['delta']:g}); accountant ε at δ: "
            f"{format_epsilon(float(g['accountant']['epsilon']))} "
            f"({g['accountant']['route']})"
        )
        yield (f"verdict: {g['verdict']} ({g['evidence']})")
        for reason in g["non_private_releases"]:
            yield (f"unaccounted channel (charged as non-private): {reason}")


def _linear_record(run: Any, *, seed: int) -> dict[str, Any]:
    """The ``--json`` record of a LinUCB baseline or decentralized FedUCB run."""
    from fedpriv.audit.claims.claim import json_number, run_verdict

    setting = {k: json_number(v) for k, v in run.setting.items()}
    setting["seed"] = seed
    per_trial = run.final_regret.mean(axis=1)
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": summary(per_trial),
    }
    if run.algorithm == "feducb-decentralized":
        record["communication"] = {
            "requests": summary(run.n_requests),
            "releases": summary(run.n_releases),
            "deliveries": summary(run.n_deliveries),
            "transmissions": summary(run.n_transmissions),
        }
        record.update(
            {
                "schedule": run.schedule,
                "sync_every": run.sync_every,
                "gamma": run.gamma,
                "clique_cover": [list(c) for c in run.cover],
                "n_cliques": len(run.cover),
                "tree_depth": run.tree_depth,
                "capacity": run.capacity,
                "threshold": json_number(run.threshold),
            }
        )
    if run.accountant is None:
        return record
    epsilon = run.setting["epsilon"]
    delta = run.setting["delta"]
    route, eps = run.accountant_epsilon(delta)
    claimed = math.inf if math.isinf(epsilon) else epsilon
    if math.isinf(claimed):
        verdict, evidence = "no-claim", "epsilon = inf: raw releases, charged as non-private"
    else:  # fedpriv verify's rule on the end-to-end ledger (raw requests included)
        verdict, evidence, _, _ = run_verdict(claimed, run.accountant, delta)
    record["guarantee"] = {
        "claimed": {
            "epsilon": json_number(claimed),
            "delta": delta,
            "source": _SOURCES[run.algorithm],
        },
        "accountant": {
            "epsilon": json_number(eps),
            "delta": delta,
            "route": route,
            "scope": "Privatizer releases (Prop. 3): trees per "
            + (
                "(agent, parameter set), parallel over sets"
                if run.algorithm == "feducb-decentralized"
                else "agent"
            ),
        },
        "verdict": verdict,
        "evidence": evidence,
        "accountant_all_channels": json_number(run.accountant.get_epsilon(delta)),
        "non_private_releases": run.accountant.ledger.non_private_reasons(),
    }
    if run.calibration is not None:
        record["guarantee"]["noise_stddev"] = run.calibration.noise_stddev
        record["tree_depth"] = run.calibration.tree_depth
    return record


# ---------------------------------------------------------------- figures
_FIGURES = (
    "feducb-fig1a",
    "feducb-fig1b",
    "feducb-fig1c",
    "feducb-fig2",
    "feducb-decentralized-schedules",
)
_FIGURE_OPTIONS = (
    option(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report root; files go to OUT/feducb/ (default reports)",
    ),
    option("--horizon", type=int, default=None, help="horizon T"),
    option("--trials", type=int, default=None, help="trials per setting"),
    option("--agents", type=int, default=None, help="n_agents M"),
    option(
        "--reward",
        choices=REWARD_MODELS,
        default="bernoulli",
        help="Bernoulli (NeurIPS text, default) or Beta (full text) rewards",
    ),
    option(
        "--beta",
        choices=("tuned", "H", "P"),
        default="tuned",
        help="radius β: a constant (tuned, default; --beta-value) or "
        "Prop. 2 of the full text [H] / the NeurIPS text [P]",
    ),
    option("--beta-value", type=float, default=1.0, help="β when tuned (default 1)"),
    option("--seed", type=int, default=0, help="root seed (default 0)"),
)


def _experiment(args: argparse.Namespace) -> int:
    from fedpriv.audit.families.feducb.experiments import run_figure
    from fedpriv.audit.reporting.figures import figure_stem

    folder = run_figure(
        args.figure,
        out=args.out,
        horizon=args.horizon,
        n_trials=args.trials,
        n_agents=args.agents,
        reward=args.reward,
        beta=args.beta,
        beta_value=args.beta_value,
        seed=args.seed,
        progress=progress_printer(),
    )
    stem = figure_stem(args.figure, "feducb")
    print(f"{args.figure}: wrote {folder}/{stem}.png, .csv, _curves.csv, .md")
    return 0


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = (
    RunCommand(
        "feducb",
        (
            *_CENTRALIZED_COMMON,
            *_CENTRALIZED_PRIVACY,
            _THRESHOLD,
            option(
                "--n-syncs",
                type=int,
                default=None,
                help="syncs fixed a priori: tree depth 1 + ceil(log2 n) (default: from T)",
            ),
        ),
        _run_centralized,
        {"feducb_variant": "feducb"},
    ),
    RunCommand(
        "feducb-fixed",
        (
            *_CENTRALIZED_COMMON,
            *_CENTRALIZED_PRIVACY,
            option(
                "--sync-every", type=int, default=100, help="B, rounds between syncs (default 100)"
            ),
        ),
        _run_centralized,
        {"feducb_variant": "feducb-fixed"},
    ),
    RunCommand(
        "feducb-nonprivate",
        (
            *_CENTRALIZED_COMMON,
            _THRESHOLD,
            option("--regularizer", type=float, default=1.0, help="λ (default 1)"),
        ),
        _run_centralized,
        {"feducb_variant": "feducb-nonprivate"},
    ),
    *(
        RunCommand(name, options_for(name, _LINEAR_OPTIONS), _run_linear)
        for name in LINEAR_ALGORITHMS
    ),
    *(ExperimentCommand(name, _FIGURE_OPTIONS, _experiment, {"figure": name}) for name in _FIGURES),
)
