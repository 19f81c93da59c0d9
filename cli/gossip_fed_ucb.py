"""``fedpriv run gossip-ucb|gossip-fed-ucb``: Zhu et al. (2021) inside the accountant."""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from fedpriv.cli.choices import GRAPH_KINDS, MODES
from fedpriv.cli.commands import run_status

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: sorted(fedpriv.privacy.PAPER_LOG_BASES)
LOG_BASES = ("10", "2", "e")


__all__ = ["ALGORITHMS", "register"]

ALGORITHMS = ("gossip-ucb", "gossip-fed-ucb")


def register(run: argparse._SubParsersAction, experiment: argparse._SubParsersAction) -> None:
    """Add ``run gossip-ucb`` and ``run gossip-fed-ucb`` (no experiments).

    Parameters
    ----------
    run : argparse._SubParsersAction
        The ``fedpriv run`` subcommands.
    experiment : argparse._SubParsersAction
        Unused.
    """
    del experiment
    for name, summary in zip(
        ALGORITHMS,
        ("non-private Gossip_UCB (Zhu et al. 2021)", "private Fed_UCB (Zhu et al. 2021, Alg. 3-4)"),
        strict=True,
    ):
        p = run.add_parser(name, help=summary)
        p.add_argument("--agents", type=int, default=3, help="n_agents (default 3)")
        p.add_argument("--arms", type=int, default=5, help="n_arms (default 5)")
        p.add_argument("--horizon", type=int, default=10_000, help="horizon T (default 10000)")
        p.add_argument("--epsilon", type=float, default=1.0, help="claimed ε (inf allowed)")
        p.add_argument(
            "--mode",
            choices=MODES,
            default="corrected",
            help="paper: Alg. 3-4 as printed (ε/⌈log T⌉ per node, raw initial "
            "pulls, unclipped rewards); corrected: noise for every node "
            "holding a record, noisy initial pulls, clipped rewards "
            "(default corrected)",
        )
        p.add_argument(
            "--log-base",
            choices=LOG_BASES,
            default="2",
            help="base of the paper's ⌈log T⌉ (paper mode)",
        )
        p.add_argument(
            "--noise-on-empty-nodes",
            action="store_true",
            help="Algorithm 3 as printed: noise on nodes without observations",
        )
        p.add_argument(
            "--publish-final",
            action="store_true",
            help=(
                "second reading: the final estimate ϑ̃(T) is an output too "
                "(tree prefixes 1..T; default 1..T−1, the messages and actions "
                "of Alg. 4 lines 19 and 9)"
            ),
        )
        p.add_argument(
            "--graph",
            choices=GRAPH_KINDS,
            default="complete",
            help="communication graph (default complete)",
        )
        p.add_argument("--p", type=float, default=None, help="edge probability (erdos_renyi)")
        p.add_argument("--trials", type=int, default=1, help="n_trials (default 1)")
        p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
        p.add_argument("--data", type=Path, default=None, help="UCI Diabetes-130 CSV or zip")
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    import numpy as np
    from fedpriv.algorithms.environments.heterogeneous import paper_synthetic_bandit
    from fedpriv.algorithms.environments.hospital import hospital_bandit, load_diabetes
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_fed_ucb, run_gossip_ucb
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
    from fedpriv.audit.claims.claim import LowerBoundEvidence, decide_verdict, json_number
    from fedpriv.privacy import format_epsilon
    from fedpriv.privacy.accounting.tree import released_tree_depth
    from fedpriv.privacy.calibrations import fed_ucb_released_prefixes, fed_ucb_scale

    root = as_seed_sequence(args.seed)
    if args.data is not None:
        env = hospital_bandit(load_diabetes(args.data), n_agents=args.agents)
    else:
        env = paper_synthetic_bandit(
            args.agents,
            args.arms,
            rng=stream_rng(
                np.random.SeedSequence(root.entropy, spawn_key=(0,)),
                trial=0,
                stream=Stream.ENVIRONMENT,
            ),
            noise="gaussian",
        )
    graph_rng = stream_rng(root, trial=0, stream=Stream.NETWORK)
    graph = make_graph(
        args.graph, env.n_agents, p=args.p, rng=graph_rng if args.graph == "erdos_renyi" else None
    )
    started = time.perf_counter()
    if args.algorithm == "gossip-ucb":
        run = run_gossip_ucb(env, graph, horizon=args.horizon, n_trials=args.trials, seed=root)
    else:
        run = run_fed_ucb(
            env,
            graph,
            horizon=args.horizon,
            epsilon=args.epsilon,
            mode=args.mode,
            log_base=args.log_base,
            noise_on_empty_nodes=args.noise_on_empty_nodes,
            n_trials=args.trials,
            seed=root,
            secure_noise=getattr(args, "secure_noise", False),
            publish_final=getattr(args, "publish_final", False),
        )
    seconds = time.perf_counter() - started
    final = run.cumulative_regret[..., -1].mean(axis=1)
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": {
            "n_agents": env.n_agents,
            "n_arms": env.n_arms,
            "horizon": args.horizon,
            "graph": args.graph,
            "n_trials": args.trials,
            "seed": args.seed,
            "environment": "hospital" if args.data else "synthetic",
            "rewards": _rewards_setting(args),
        },
        "regret": {
            "mean": float(final.mean()),
            "min": float(final.min()),
            "max": float(final.max()),
        },
        "seconds": seconds,
    }
    if run.accountant is not None:
        acc = run.accountant
        ledger = acc.ledger.draws
        route, eps_stream = acc.routes.tightest(0.0, where={"phase": "stream"})
        eps_all = acc.get_epsilon(0.0)
        # The same evidence as fedpriv verify's row: the view's exact ε, n released
        # Laplace(b) nodes holding a round-1 record (the loss reaches n/b), where the
        # stream is priced at all (unbounded rewards make it a raw channel instead).
        exact = None
        if math.isfinite(eps_stream) and math.isfinite(args.epsilon):
            publish_final = bool(getattr(args, "publish_final", False))
            scale = fed_ucb_scale(
                args.epsilon,
                args.horizon,
                mode=args.mode,
                log_base=args.log_base,
                publish_final=publish_final,
            )
            nodes = released_tree_depth(
                args.horizon, fed_ucb_released_prefixes(args.horizon, publish_final=publish_final)
            )
            exact = LowerBoundEvidence(
                epsilon=nodes / scale,
                kind="analytic",
                description=f"exact: {nodes} released Laplace({scale:.6g}) nodes",
            )
        raw = "; ".join(acc.ledger.non_private_reasons(where={"phase": "stream"})) or None
        if math.isinf(args.epsilon):  # ε = ∞: no privacy claimed (as `run li_song`'s)
            verdict, evidence = "no-claim", "epsilon = inf: no privacy claimed"
        else:
            verdict, evidence = decide_verdict(
                args.epsilon, eps_stream, None, analytic_lower=exact, raw_channel=raw
            )
        record["setting"].update(
            {
                "epsilon": json_number(args.epsilon),
                "mode": args.mode,
                "log_base": args.log_base,
                "publish_final": bool(getattr(args, "publish_final", False)),
            }
        )
        record["ledger"] = {
            "noise_draws": acc.ledger.n_draws,
            "draws_per_agent": {int(k): int(v) for k, v in ledger.groupby("agent").size().items()},
            "node_scale": run.scale,
            "epsilon_per_draw": json_number(run.node_epsilon),
            "rewards_outside_0_1": run.n_out_of_bounds,
        }
        record["guarantee"] = {
            "claimed": {
                "epsilon": json_number(args.epsilon),
                "delta": 0.0,
                "source": "Zhu et al. 2021, Definition 1 and §4.1",
            },
            "accountant": {
                "epsilon": json_number(eps_stream),
                "delta": 0.0,
                "route": route,
                "scope": "rounds 1..T (Definition 1), on the outputs: "
                + (
                    "messages, actions and the final estimate ϑ̃(T) (tree prefixes 1..T)"
                    if getattr(args, "publish_final", False)
                    else "messages ϑ̃(t−1) and actions (tree prefixes 1..T−1, Alg. 4 lines 19 and 9)"
                ),
            },
            "accountant_including_initial_pulls": json_number(eps_all),
            "routes": {
                k: json_number(v)
                for k, v in acc.routes.epsilons(0.0, where={"phase": "stream"}).items()
            },
            "verdict": verdict,
            "evidence": evidence,
            "non_private_releases": acc.ledger.non_private_reasons(),
        }
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
    else:
        print(
            f"{run.algorithm}: regret at T={args.horizon}: {final.mean():.2f} "
            f"(min {final.min():.2f}, max {final.max():.2f} over {args.trials} trials)"
        )
        print(f"rewards: {record['setting']['rewards']}")
        if run.accountant is not None:
            g = record["guarantee"]
            print(
                f"ledger: {record['ledger']['noise_draws']} noise draws, node scale "
                f"{run.scale:.4g}, ε per draw {format_epsilon(run.node_epsilon)}"
            )
            print(
                f"claimed ε = {format_epsilon(args.epsilon)}; accountant ε = "
                f"{format_epsilon(eps_stream)} ({route}); including round-0 records: "
                f"{format_epsilon(eps_all)} -> {g['verdict']}"
            )
            for line in _why_infinite(
                args,
                eps_stream,
                eps_all,
                acc.ledger.non_private_reasons(where={"phase": "stream"}),
                acc.ledger.non_private_reasons(),
                run.n_out_of_bounds,
            ):
                print(line)
    return run_status(record)


def _rewards_setting(args: argparse.Namespace) -> str:
    """The rewards this run feeds the tree, said against ``fedpriv verify``'s rows."""
    if args.data:
        return "{0, 1}: hospital readmission (Zhu et al. §5.2), within [0, 1]"
    clipped = args.mode == "corrected"
    return (
        "synthetic μ + N(0, 1) (Zhu et al. §5.1), unbounded; "
        + ("clipped to [0, 1] before the tree" if clipped else "fed to the tree unclipped")
        + " (fedpriv verify's rows at T = 16, 1024, 600,000 take rewards in [0, 1], §4.1)"
    )


def _why_infinite(
    args: argparse.Namespace,
    eps_stream: float,
    eps_all: float,
    stream_reasons: list[str],
    all_reasons: list[str],
    n_out_of_bounds: int,
) -> list[str]:
    """Text-mode lines saying why an accountant ε printed above is infinite.

    The accountant charges a raw release as ``events.NonPrivate`` with its reason:
    paper mode releases the initial pulls un-noised (Zhu et al. Alg. 4 line 1) and
    feeds unclipped rewards into the tree (§5's Gaussian rewards leave [0, 1]);
    ``--epsilon inf`` draws no noise at all. ``stream_reasons`` are those of rounds
    1..T (the accountant ε), ``all_reasons`` those including the round-0 records.
    """
    lines = []
    if math.isinf(args.epsilon):
        lines.append("why ε = inf: --epsilon inf draws no privacy noise")
    if not math.isfinite(eps_stream):
        lines += [f"why accountant ε = inf: {reason}" for reason in stream_reasons]
        if n_out_of_bounds and stream_reasons:
            lines.append(
                f"  ({n_out_of_bounds:,} rewards outside [0, 1] entered the "
                "releases unclipped; --mode corrected clips them)"
            )
    if not math.isfinite(eps_all):
        lines += [
            f"why ε including round-0 records = inf: {reason}"
            for reason in all_reasons
            if reason not in stream_reasons
        ]
    if not lines and not (math.isfinite(eps_stream) and math.isfinite(eps_all)):
        lines.append("why ε = inf: a release without a finite ε reached the outputs")
    return lines
