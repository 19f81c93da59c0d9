"""``fedpriv run feducb-decentralized|linucb|linucb-independent-private|linucb-pooled``
and ``fedpriv experiment feducb-fig1a|feducb-fig1b|feducb-fig1c|feducb-fig2|
feducb-decentralized-schedules``.

``run`` prints the average per-agent regret (mean, min, max over trials) and, for the
private algorithms, the accountant's ε at the claimed δ for the Privatizer releases
next to the claim; the decentralized run also prints its communication (requests,
releases, deliveries, link transmissions), the clique cover and the tree depth.
``experiment`` reproduces the paper's figures at a documented smaller scale
(:mod:`fedpriv.audit.families.feducb.experiments`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedpriv.cli.choices import GRAPH_KINDS
from fedpriv.cli.commands import run_status
from fedpriv.cli.feducb import PRIVATIZER_CALIBRATIONS, REWARD_MODELS

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
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
    import numpy as np

__all__ = ["ALGORITHMS", "EXPERIMENTS", "register", "run_record"]

ALGORITHMS = ("feducb-decentralized", "linucb", "linucb-independent-private", "linucb-pooled")
EXPERIMENTS = (
    "feducb-fig1a",
    "feducb-fig1b",
    "feducb-fig1c",
    "feducb-fig2",
    "feducb-decentralized-schedules",
)
_HELP = {
    "feducb-decentralized": "decentralized FedUCB on a graph (Dubey & Pentland 2020, Alg. 3; "
    "--schedule fixed: data-independent releases every B rounds)",
    "linucb": "non-private OFUL/LinUCB run by every agent alone (M = 1: single agent)",
    "linucb-independent-private": "M private LinUCB learners, own Privatizer each, no "
    "communication",
    "linucb-pooled": "one non-private LinUCB learner that sees every agent's data",
}
_SOURCES = {
    "feducb-decentralized": "Dubey & Pentland 2020, Remark 5-6 and Prop. 3: each agent's "
    "release streams (ε, δ)-DP per (x, y), m = 1 + ⌈log(T/γ)⌉",
    "linucb-independent-private": "each agent's Privatizer stream (FedUCB Alg. 2, n = T) "
    "(ε, δ)-DP per (x, y) (Shariff & Sheffet 2018 style)",
}
#: ``--sync-every`` of ``feducb-decentralized --schedule fixed`` when not given (as
#: ``fedpriv run feducb-fixed``).
_DEFAULT_SYNC_EVERY = 100
_FIGURE_HELP = {
    "feducb-fig1a": "FedUCB Fig. 1A: per-agent regret at T vs ε for several M",
    "feducb-fig1b": "FedUCB Fig. 1B: regret curves for three communication regimes",
    "feducb-fig1c": "FedUCB Fig. 1C: regret curves for varying d",
    "feducb-fig2": "FedUCB Fig. 2 (appendix): regret vs the minimum gap for several ε",
    "feducb-decentralized-schedules": "decentralized FedUCB (Alg. 3): regret curves of the "
    "adaptive schedule beside fixed ones",
}


def register(run: argparse._SubParsersAction, experiment: argparse._SubParsersAction) -> None:
    """Add the ``run`` algorithms and the FedUCB ``experiment`` figures (module docstring).

    Parameters
    ----------
    run : argparse._SubParsersAction
        The ``fedpriv run`` subcommands.
    experiment : argparse._SubParsersAction
        The ``fedpriv experiment`` subcommands.
    """
    for name in ALGORITHMS:
        p = run.add_parser(name, help=_HELP[name])
        p.add_argument("--agents", type=int, default=10, help="n_agents M (default 10)")
        p.add_argument("--arms", type=int, default=20, help="actions per round K (default 20)")
        p.add_argument("--dim", type=int, default=10, help="context dimension d (default 10)")
        p.add_argument("--horizon", type=int, default=2000, help="horizon T (default 2000)")
        p.add_argument(
            "--reward",
            choices=REWARD_MODELS,
            default="bernoulli",
            help="Bernoulli (NeurIPS text) or Beta (full text) rewards",
        )
        p.add_argument("--trials", type=int, default=1, help="n_trials (default 1)")
        p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        if name in ("feducb-decentralized", "linucb-independent-private"):
            p.add_argument(
                "--epsilon",
                type=float,
                default=1.0,
                help="claimed ε (decentralized: inf = no noise)",
            )
            p.add_argument("--delta", type=float, default=0.1, help="claimed δ (default 0.1)")
            p.add_argument(
                "--calibration",
                choices=PRIVATIZER_CALIBRATIONS,
                default="paper",
                help="Privatizer noise: paper (Alg. 2 line 5 as printed), "
                "corrected (its two calibration errors fixed) or exact "
                "(smallest σ the exact accountant allows); default paper",
            )
            p.add_argument(
                "--beta",
                choices=BETA_CHOICES,
                default="H",
                help="Prop. 2 [H] / [P] or a constant (--beta-value)",
            )
        else:
            p.add_argument(
                "--beta",
                choices=("oful", "tuned"),
                default="oful",
                help="radius β: OFUL's Thm. 2 (Abbasi-Yadkori et al. 2011, "
                "default) or a constant (--beta-value)",
            )
            p.add_argument("--regularizer", type=float, default=1.0, help="λ (default 1)")
        p.add_argument("--beta-value", type=float, default=None, help="β when --beta tuned")
        if name == "feducb-decentralized":
            p.add_argument(
                "--graph",
                choices=GRAPH_KINDS,
                default="ring",
                help="communication graph (default ring)",
            )
            p.add_argument("--p", type=float, default=None, help="edge probability (erdos_renyi)")
            p.add_argument("--gamma", type=int, default=2, help="message life γ (default 2)")
            p.add_argument(
                "--schedule",
                choices=SCHEDULES,
                default="adaptive",
                help="adaptive: Alg. 3 line 6's requests; fixed: every agent "
                "releases every set each B rounds (data-independent)",
            )
            p.add_argument(
                "--sync-every",
                type=int,
                default=None,
                help="B, rounds between releases with --schedule fixed (default 100)",
            )
            p.add_argument(
                "--threshold",
                type=float,
                default=None,
                help="D of line 6 (default: Thm. 1's value on T/γ rounds)",
            )
            p.add_argument(
                "--respond",
                choices=RESPOND,
                default="receipt",
                help="peers answer a request on arrival (receipt, Alg. 3, "
                "default) or at the set's next use (next_use, the proof)",
            )
            p.add_argument(
                "--on-capacity",
                choices=ON_CAPACITY,
                default="raise",
                help="a release past a tree's capacity raises (default) or "
                "that (agent, set) stops releasing (stop)",
            )
        if name == "linucb-pooled":
            p.add_argument(
                "--order",
                choices=UPDATE_ORDERS,
                default="round",
                help="updates within a round: after all act, or one by one",
            )
        p.set_defaults(handler=_run)
    for name in EXPERIMENTS:
        e = experiment.add_parser(name, help=_FIGURE_HELP[name])
        e.add_argument(
            "--out",
            type=Path,
            default=Path("reports"),
            help="report root; files go to OUT/feducb/ (default reports)",
        )
        e.add_argument("--horizon", type=int, default=None, help="horizon T")
        e.add_argument("--trials", type=int, default=None, help="trials per setting")
        e.add_argument("--agents", type=int, default=None, help="n_agents M")
        e.add_argument(
            "--reward",
            choices=REWARD_MODELS,
            default="bernoulli",
            help="Bernoulli (NeurIPS text, default) or Beta (full text) rewards",
        )
        e.add_argument(
            "--beta",
            choices=("tuned", "H", "P"),
            default="tuned",
            help="radius β: a constant (tuned, default; --beta-value) or "
            "Prop. 2 of the full text [H] / the NeurIPS text [P]",
        )
        e.add_argument("--beta-value", type=float, default=1.0, help="β when tuned (default 1)")
        e.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
        e.set_defaults(handler=_experiment, figure=name)


def _stats(values: np.ndarray) -> dict[str, float]:
    import numpy as np

    return {
        "mean": float(np.mean(values)),
        "min": float(np.min(values)),
        "max": float(np.max(values)),
    }


def _run(args: argparse.Namespace) -> int:
    from fedpriv.algorithms.environments.linear import LinearBandit
    from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
    from fedpriv.algorithms.feducb.linucb import run_linucb, run_linucb_pooled
    from fedpriv.algorithms.feducb.linucb_private import run_linucb_independent_private
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
    from fedpriv.privacy import format_epsilon

    root = as_seed_sequence(args.seed)
    spec = LinearBandit(n_agents=args.agents, n_arms=args.arms, dim=args.dim, reward=args.reward)
    tables = spec.sample(root, n_trials=args.trials, horizon=args.horizon)
    started = time.perf_counter()
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
    record = run_record(run, seconds=time.perf_counter() - started, seed=args.seed)
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
        return run_status(record)
    r = record["regret"]
    print(
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
        print(
            f"schedule {schedule}; γ = {run.gamma}, {len(run.cover)} cliques "
            f"{list(run.cover)}; tree depth "
            f"m = {run.tree_depth}; requests {c['requests']['mean']:.1f}, releases "
            f"{c['releases']['mean']:.1f}, deliveries {c['deliveries']['mean']:.1f}, "
            f"link transmissions {c['transmissions']['mean']:.1f} per trial"
        )
    if "guarantee" in record:
        g = record["guarantee"]
        print(
            f"claimed (ε, δ) = ({format_epsilon(g['claimed']['epsilon'])}, "
            f"{g['claimed']['delta']:g}); accountant ε at δ: "
            f"{format_epsilon(float(g['accountant']['epsilon']))} "
            f"({g['accountant']['route']})"
        )
        print(f"verdict: {g['verdict']} ({g['evidence']})")
        for reason in g["non_private_releases"]:
            print(f"unaccounted channel (charged as non-private): {reason}")
    return run_status(record)


def run_record(run: Any, *, seconds: float, seed: int) -> dict[str, Any]:
    """The ``run --json`` record of a LinUCB baseline or decentralized FedUCB run.

    Parameters
    ----------
    run : LinUCBRun or DecentralizedFedUCBRun
        A finished run.
    seconds : float
        Its wall time.
    seed : int
        Its root seed.

    Returns
    -------
    dict of str to Any
        JSON-ready: algorithm, setting, regret statistics, wall time and, for private
        runs, the accountant's verdict.
    """
    from fedpriv.audit.claims.claim import json_number, run_verdict

    setting = {k: json_number(v) for k, v in run.setting.items()}
    setting["seed"] = seed
    per_trial = run.final_regret.mean(axis=1)
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": _stats(per_trial),
        "seconds": seconds,
    }
    if run.algorithm == "feducb-decentralized":
        record["communication"] = {
            "requests": _stats(run.n_requests),
            "releases": _stats(run.n_releases),
            "deliveries": _stats(run.n_deliveries),
            "transmissions": _stats(run.n_transmissions),
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


def _experiment(args: argparse.Namespace) -> int:
    from fedpriv.audit.families.feducb.experiments import run_figure

    started = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

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
        progress=progress,
    )
    print(f"wrote {folder}/{args.figure}.png, .csv, _curves.csv, .md")
    return 0
