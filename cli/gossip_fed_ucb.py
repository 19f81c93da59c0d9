"""``fedpriv run gossip-ucb|gossip-fed-ucb``: Zhu et al. (2021) inside the accountant.

The commands are declared as data (:data:`COMMANDS`: options and a run function); the
shared machinery (:mod:`fedpriv.cli.runs`) wires, times, prints and sets the exit status.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fedpriv.cli.choices import GRAPH_KINDS, MODES
from fedpriv.cli.runs import JSON, SEED, TRIALS, RunCommand, RunReport, option, summary

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: sorted(fedpriv.privacy.PAPER_LOG_BASES)
LOG_BASES = ("10", "2", "e")


__all__ = ["ALGORITHMS", "COMMANDS", "LOG_BASES"]

ALGORITHMS = ("gossip-ucb", "gossip-fed-ucb")


_OPTIONS = (
    option("--agents", type=int, default=3, help="n_agents (default 3)"),
    option("--arms", type=int, default=5, help="n_arms (default 5)"),
    option("--horizon", type=int, default=10_000, help="horizon T (default 10000)"),
    option("--epsilon", type=float, default=1.0, help="claimed ε (inf allowed)"),
    option(
        "--mode",
        choices=MODES,
        default="corrected",
        help="paper: Alg. 3-4 as printed (ε/⌈log T⌉ per node, raw initial "
        "pulls, unclipped rewards); corrected: noise for every node "
        "holding a record, noisy initial pulls, clipped rewards "
        "(default corrected)",
    ),
    option(
        "--log-base",
        choices=LOG_BASES,
        default="2",
        help="base of the paper's ⌈log T⌉ (paper mode)",
    ),
    option(
        "--noise-on-empty-nodes",
        action="store_true",
        help="Algorithm 3 as printed: noise on nodes without observations",
    ),
    option(
        "--publish-final",
        action="store_true",
        help=(
            "second reading: the final estimate ϑ̃(T) is an output too "
            "(tree prefixes 1..T; default 1..T−1, the messages and actions "
            "of Alg. 4 lines 19 and 9)"
        ),
    ),
    option(
        "--graph",
        choices=GRAPH_KINDS,
        default="complete",
        help="communication graph (default complete)",
    ),
    option("--p", type=float, default=None, help="edge probability (erdos_renyi)"),
    TRIALS,
    SEED,
    option("--data", type=Path, default=None, help="UCI Diabetes-130 CSV or zip"),
    JSON,
)


def _run(args: argparse.Namespace) -> RunReport:
    from fedpriv.algorithms.environments.heterogeneous import paper_synthetic_bandit
    from fedpriv.algorithms.environments.hospital import hospital_bandit, load_diabetes
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb, run_gossip_ucb
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng

    root = as_seed_sequence(args.seed)
    if args.data is not None:
        env = hospital_bandit(load_diabetes(args.data), n_agents=args.agents)
    else:
        env = paper_synthetic_bandit(
            args.agents,
            args.arms,
            rng=stream_rng(child_seed(root, 0), trial=0, stream=Stream.ENVIRONMENT),
            noise="gaussian",
        )
    graph_rng = stream_rng(root, trial=0, stream=Stream.NETWORK)
    graph = make_graph(
        args.graph, env.n_agents, p=args.p, rng=graph_rng if args.graph == "erdos_renyi" else None
    )
    if args.algorithm == "gossip-ucb":
        run = run_gossip_ucb(env, graph, horizon=args.horizon, n_trials=args.trials, seed=root)
    else:
        run = run_gossip_fed_ucb(
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
        "regret": summary(final),
    }
    stream = None if run.accountant is None else _private_record(args, run, record)
    return RunReport(record, lambda: _lines(args, run, record, final, stream))


def _private_record(
    args: argparse.Namespace, run: Any, record: dict[str, Any]
) -> tuple[float, float, str]:
    """Add Fed_UCB's setting, ledger and guarantee (with its verdict) to ``record``.

    Returns the accountant's ε on rounds 1..T, its ε including the round-0 records and
    the route of the first.
    """
    from fedpriv.audit.claims.claim import decide_verdict, json_number

    acc = run.accountant
    ledger = acc.ledger.draws
    route, eps_stream = acc.routes.tightest(0.0, where={"phase": "stream"})
    eps_all = acc.get_epsilon(0.0)
    # fedpriv verify's evidence, where the stream is priced at all (unbounded rewards
    # make it a raw channel instead)
    exact = _exact_evidence(args) if math.isfinite(eps_stream) else None
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
    return eps_stream, eps_all, route


def _exact_evidence(args: argparse.Namespace) -> Any:
    """The view's exact ε as lower-bound evidence: n released Laplace(b) nodes hold a
    round-1 record, so the loss reaches n/b (fedpriv verify's row uses the same); None
    when ``--epsilon`` is infinite (nothing is priced)."""
    from fedpriv.audit.claims.claim import LowerBoundEvidence
    from fedpriv.privacy.accounting.tree import released_tree_depth
    from fedpriv.privacy.calibrations import gossip_fed_ucb_released_prefixes, gossip_fed_ucb_scale

    if not math.isfinite(args.epsilon):
        return None
    publish_final = bool(getattr(args, "publish_final", False))
    scale = gossip_fed_ucb_scale(
        args.epsilon,
        args.horizon,
        mode=args.mode,
        log_base=args.log_base,
        publish_final=publish_final,
    )
    nodes = released_tree_depth(
        args.horizon, gossip_fed_ucb_released_prefixes(args.horizon, publish_final=publish_final)
    )
    return LowerBoundEvidence(
        epsilon=nodes / scale,
        kind="analytic",
        description=f"exact: {nodes} released Laplace({scale:.6g}) nodes",
    )


def _lines(
    args: argparse.Namespace,
    run: Any,
    record: dict[str, Any],
    final: Any,
    stream: tuple[float, float, str] | None,
) -> Iterator[str]:
    """The text of ``run``: regret, rewards and, for Fed_UCB, ledger, ε and why ε = inf."""
    from fedpriv.privacy import format_epsilon

    yield (
        f"{run.algorithm}: regret at T={args.horizon}: {final.mean():.2f} "
        f"(min {final.min():.2f}, max {final.max():.2f} over {args.trials} trials)"
    )
    yield f"rewards: {record['setting']['rewards']}"
    if stream is None:
        return
    eps_stream, eps_all, route = stream
    acc = run.accountant
    yield (
        f"ledger: {record['ledger']['noise_draws']} noise draws, node scale "
        f"{run.scale:.4g}, ε per draw {format_epsilon(run.node_epsilon)}"
    )
    yield (
        f"claimed ε = {format_epsilon(args.epsilon)}; accountant ε = "
        f"{format_epsilon(eps_stream)} ({route}); including round-0 records: "
        f"{format_epsilon(eps_all)} -> {record['guarantee']['verdict']}"
    )
    yield from _why_infinite(
        args,
        eps_stream,
        eps_all,
        acc.ledger.non_private_reasons(where={"phase": "stream"}),
        acc.ledger.non_private_reasons(),
        run.n_out_of_bounds,
    )


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


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = tuple(RunCommand(name, _OPTIONS, _run) for name in ALGORITHMS)
