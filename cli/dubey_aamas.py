"""``fedpriv run private-coop-ucb|byzantine-coop-ucb|coop-ucb-nonprivate|ucb1|dp-ucb-int``
and ``fedpriv experiment dubey-aamas-fig1a|fig1b|fig1c`` (Dubey & Pentland, AAMAS 2020).

``run`` prints the group regret (and per agent), the communication cost (link
transmissions and deliveries of the γ-hop flooding), the rounds, and for the private
algorithms the accountant's (ε, δ') next to the paper's reconstructed claim
(AAMAS 2020, §3.2–3.3; fedpriv's reconstruction): per message ``f^(-ϑ/2)`` (reconstructed with medium confidence) and the ⌊T/f⌋-fold advanced
composition (reconstructed with medium to low confidence). The verdict compares the accountant with the composed claim.

The commands are declared as data (:data:`COMMANDS`: options and run functions); the
shared machinery (:mod:`fedpriv.cli.runs`) wires, times, prints and sets the exit status.

Length: the option table of five algorithms (26 declared options, data) beside the run
function that turns each into the paper's record and verdict.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fedpriv.cli.choices import GRAPH_KINDS
from fedpriv.cli.runs import (
    JSON,
    SEED,
    TRIALS,
    ExperimentCommand,
    Option,
    RunCommand,
    RunReport,
    option,
    options_for,
    progress_printer,
    summary,
)

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.dubey_aamas.robust.CONTAMINATION_KINDS
CONTAMINATION_KINDS = ("point", "uniform", "shift", "complement", "adversarial")
#: fedpriv.algorithms.dubey_aamas.cooperative.COUNT_FIELDS
COUNT_FIELDS = ("release", "current")
#: n_arms, seed) of default_config(name)
DUBEY_AAMAS_EXPERIMENTS = {
    "dubey-aamas-fig1a": (2000, 8, 20, 5, 0),
    "dubey-aamas-fig1b": (2000, 8, 20, 5, 0),
    "dubey-aamas-fig1c": (1000, 5, 20, 5, 0),
}
#: fedpriv.algorithms.dubey_aamas.baselines.INDEX_UPDATES
INDEX_UPDATES = ("release", "every_round")
#: fedpriv.privacy.calibrations.INTERVAL_RULES
INTERVAL_RULES = ("decaying", "fixed")
#: fedpriv.algorithms.dubey_aamas.baselines.LOG_TIMES
LOG_TIMES = ("round", "pulls")
#: fedpriv.algorithms.dubey_aamas.robust.NORMALIZATIONS
NORMALIZATIONS = ("n", "inside")
#: fedpriv.algorithms.dubey_aamas.cooperative.OWN_TERMS
OWN_TERMS = ("noisy", "raw")


__all__ = [
    "ALGORITHMS",
    "COMMANDS",
    "CONTAMINATION_KINDS",
    "COUNT_FIELDS",
    "DUBEY_AAMAS_EXPERIMENTS",
    "INDEX_UPDATES",
    "INTERVAL_RULES",
    "LOG_TIMES",
    "NORMALIZATIONS",
    "OWN_TERMS",
]

ALGORITHMS = ("private-coop-ucb", "byzantine-coop-ucb", "coop-ucb-nonprivate", "ucb1", "dp-ucb-int")
_SOURCE = (
    "Dubey & Pentland AAMAS 2020, Lemmas 'Privacy of Outgoing Messages' and 'Privacy "
    "Guarantee', §3.2-3.3 (formulas lost; fedpriv reads per message f^(-theta/2) reconstructed with medium confidence, "
    "floor(T/f)-fold advanced composition reconstructed with medium to low confidence)"
)
_TD16 = "Tossou & Dimitrakakis 2016, DP-UCB-INT (interval mechanism; composed as AAMAS 2020 §3.3's 'Privacy Guarantee' proof says)"


#: Every ``run`` option of the family: (option, the commands that take it), help order.
_RUN_OPTIONS = (
    (option("--agents", type=int, default=20, help="n_agents M (default 20)"), None),
    (option("--arms", type=int, default=5, help="n_arms K (default 5)"), None),
    (option("--horizon", type=int, default=2000, help="horizon T (default 2000)"), None),
    (TRIALS, None),
    (SEED, None),
    (
        option(
            "--mean-range",
            type=float,
            nargs=2,
            default=(0.0, 1.0),
            metavar=("LOW", "HIGH"),
            help="arm means drawn U(LOW, HIGH)",
        ),
        None,
    ),
    (JSON, None),
    (
        option(
            "--graph",
            choices=GRAPH_KINDS,
            default="erdos_renyi",
            help="communication graph (default erdos_renyi)",
        ),
        ("private-coop-ucb", "byzantine-coop-ucb", "coop-ucb-nonprivate"),
    ),
    (
        option(
            "--p", type=float, default=0.2, help="edge probability (erdos_renyi only; default 0.2)"
        ),
        ("private-coop-ucb", "byzantine-coop-ucb", "coop-ucb-nonprivate"),
    ),
    (
        option("--gamma", type=int, default=2, help="message life γ >= 1 (default 2)"),
        ("private-coop-ucb", "byzantine-coop-ucb", "coop-ucb-nonprivate"),
    ),
    (
        option("--epsilon", type=float, default=0.1, help="input ε (f = ceil(1/ε))"),
        ("private-coop-ucb", "dp-ucb-int"),
    ),
    (
        option("--theta", type=float, default=1.1, help="ϑ in (1, 2) (default 1.1)"),
        ("private-coop-ucb", "dp-ucb-int"),
    ),
    (
        option(
            "--rule",
            choices=INTERVAL_RULES,
            default="decaying",
            help="interval noise: decaying b(n) = n^-(1-ϑ/2) (Tossou & "
            "Dimitrakakis 2016) or fixed b(n) = 1/(n ε) (default "
            "decaying)",
        ),
        ("private-coop-ucb", "dp-ucb-int"),
    ),
    (
        option("--target-delta", type=float, default=1e-5, help="δ' of the claim"),
        ("private-coop-ucb", "dp-ucb-int"),
    ),
    (
        option(
            "--own-term",
            choices=OWN_TERMS,
            default="noisy",
            help="agent's own term: its noisy release or its raw mean (A1)",
        ),
        ("private-coop-ucb",),
    ),
    (
        option(
            "--count-field",
            choices=COUNT_FIELDS,
            default="release",
            help="count sent with the mean (A2)",
        ),
        ("private-coop-ucb",),
    ),
    (
        option(
            "--index-update",
            choices=INDEX_UPDATES,
            default="release",
            help="freeze the whole index between releases (release, "
            "default) or recompute the bonus every round",
        ),
        ("dp-ucb-int",),
    ),
    (
        option(
            "--interval",
            type=int,
            default=1,
            help="refresh the sent means every f own pulls (default 1)",
        ),
        ("coop-ucb-nonprivate",),
    ),
    (
        option(
            "--log-time",
            choices=LOG_TIMES,
            default="round",
            help="t in ln t: the current round's 1-based index (round, "
            "default) or the plays so far, t - 1 (pulls)",
        ),
        ("ucb1",),
    ),
    (
        option(
            "--contamination",
            type=float,
            default=0.1,
            help="true contamination rate ε_c of byzantine messages",
        ),
        ("byzantine-coop-ucb",),
    ),
    (
        option(
            "--assumed-contamination",
            type=float,
            default=None,
            help="ε_c assumed by the estimator, in [0, 1/4)",
        ),
        ("byzantine-coop-ucb",),
    ),
    (
        option(
            "--q",
            choices=CONTAMINATION_KINDS,
            default="complement",
            help="contaminating distribution Q",
        ),
        ("byzantine-coop-ucb",),
    ),
    (
        option("--q-value", type=float, default=0.0, help="point mass / shift of Q (point, shift)"),
        ("byzantine-coop-ucb",),
    ),
    (
        option(
            "--byzantine-fraction",
            type=float,
            default=1.0,
            help="fraction of agents that are byzantine (the first ones)",
        ),
        ("byzantine-coop-ucb",),
    ),
    (
        option("--confidence-exponent", type=float, default=4.0, help="δ_t = t^-a (default 4)"),
        ("byzantine-coop-ucb",),
    ),
    (
        option(
            "--normalization",
            choices=NORMALIZATIONS,
            default="n",
            help="trimmed mean divided by all n samples (n, default) or "
            "the mean of the samples inside the interval (inside)",
        ),
        ("byzantine-coop-ucb",),
    ),
)


def _figure_options(name: str) -> tuple[Option, ...]:
    """The options of ``experiment NAME``, with the figure's defaults."""
    horizon, n_trials, n_agents, n_arms, seed = DUBEY_AAMAS_EXPERIMENTS[name]
    return (
        option(
            "--out",
            type=Path,
            default=Path("reports"),
            help="report folder; writes <out>/dubey_aamas/ (default reports)",
        ),
        option("--horizon", type=int, default=horizon, help=f"horizon T (default {horizon})"),
        option(
            "--trials", type=int, default=n_trials, help=f"trials per curve (default {n_trials})"
        ),
        option("--agents", type=int, default=n_agents, help=f"n_agents M (default {n_agents})"),
        option("--arms", type=int, default=n_arms, help=f"n_arms K (default {n_arms})"),
        option("--seed", type=int, default=seed, help=f"root seed (default {seed})"),
        option("--json", action="store_true", help="print the figure's summary as JSON"),
    )


def _world(args: argparse.Namespace):
    from fedpriv.algorithms.environments.bernoulli import homogeneous_bandit
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng

    root = as_seed_sequence(args.seed)
    env = homogeneous_bandit(
        args.agents,
        args.arms,
        stream_rng(root, trial=0, agent=0, stream=Stream.ENVIRONMENT),
        mean_range=tuple(args.mean_range),
    )
    graph = None
    if hasattr(args, "graph"):
        graph_rng = stream_rng(root, trial=0, agent=0, stream=Stream.NETWORK)
        p = args.p if args.graph == "erdos_renyi" else None
        graph = make_graph(
            args.graph, args.agents, p=p, rng=graph_rng if args.graph == "erdos_renyi" else None
        )
    run_seed = child_seed(root, 0, 1)
    return env, graph, run_seed


def _simulate(args: argparse.Namespace, env, graph, seed):
    from fedpriv.algorithms.dubey_aamas.baselines import run_dp_ucb_int, run_ucb1
    from fedpriv.algorithms.dubey_aamas.byzantine import run_byzantine_coop_ucb
    from fedpriv.algorithms.dubey_aamas.cooperative import (
        run_coop_ucb_nonprivate,
        run_private_coop_ucb,
    )
    from fedpriv.algorithms.dubey_aamas.robust import Contamination

    name = args.algorithm
    common = {"horizon": args.horizon, "n_trials": args.trials, "seed": seed}
    if name == "private-coop-ucb":
        return run_private_coop_ucb(
            env,
            graph,
            epsilon=args.epsilon,
            theta=args.theta,
            rule=args.rule,
            gamma=args.gamma,
            own_term=args.own_term,
            count_field=args.count_field,
            secure_noise=getattr(args, "secure_noise", False),
            **common,
        )
    if name == "coop-ucb-nonprivate":
        return run_coop_ucb_nonprivate(
            env, graph, gamma=args.gamma, interval=args.interval, **common
        )
    if name == "byzantine-coop-ucb":
        n_byz = math.ceil(args.byzantine_fraction * env.n_agents)
        if not 0.0 <= args.byzantine_fraction <= 1.0:
            raise ValueError(
                f"`byzantine_fraction` must be in [0, 1], got {args.byzantine_fraction!r}."
            )
        contamination = Contamination(
            rate=args.contamination, kind=args.q, value=args.q_value, byzantine=tuple(range(n_byz))
        )
        return run_byzantine_coop_ucb(
            env,
            graph,
            gamma=args.gamma,
            contamination=contamination,
            assumed_contamination=args.assumed_contamination,
            confidence_exponent=args.confidence_exponent,
            normalization=args.normalization,
            **common,
        )
    if name == "ucb1":
        return run_ucb1(env, log_time=args.log_time, **common)
    return run_dp_ucb_int(
        env,
        epsilon=args.epsilon,
        theta=args.theta,
        rule=args.rule,
        index_update=args.index_update,
        **common,
    )


def _run(args: argparse.Namespace) -> RunReport:
    from fedpriv.audit.claims.claim import json_number

    env, graph, seed = _world(args)
    run = _simulate(args, env, graph, seed)
    group = run.group_regret[:, -1]
    per_agent = group / env.n_agents
    setting = {
        k: json_number(v) if not isinstance(v, (list, tuple)) else list(v)
        for k, v in vars(args).items()
        if k not in ("handler", "json", "command", "algorithm")
    }
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": {**summary(group), "kind": "group regret R_G(T) (eq. 2), summed over agents"},
        "regret_per_agent": summary(per_agent),
        "rounds": args.horizon,
    }
    if hasattr(run, "transmissions"):
        record["communication"] = {
            "messages_created_per_trial": args.horizon * env.n_agents,
            "link_transmissions_per_trial": run.transmissions,
            "deliveries_per_trial": run.deliveries,
            "gamma": run.schedule.gamma,
            "max_delay": run.schedule.max_delay,
        }
    else:
        record["communication"] = {"link_transmissions_per_trial": 0, "deliveries_per_trial": 0}
    guarantee = _guarantee(args, run)
    if guarantee is not None:
        record["guarantee"] = guarantee
    return RunReport(record, lambda: _lines(args, run, record, group, per_agent))


def _guarantee(args: argparse.Namespace, run: Any) -> dict[str, Any] | None:
    """The record's ``guarantee``: the reconstructed claim, the accountant and the verdict
    (interval-mechanism runs), no claim (raw broadcasts) or None (no accountant)."""
    from fedpriv.algorithms.dubey_aamas.baselines import interval_guarantee
    from fedpriv.audit.claims.claim import decide_verdict, json_number

    if args.algorithm in ("private-coop-ucb", "dp-ucb-int"):
        g = interval_guarantee(
            run.accountant,
            epsilon=args.epsilon,
            horizon=args.horizon,
            theta=args.theta,
            rule=args.rule,
            target_delta=args.target_delta,
        )
        claimed = g["claimed"]["homogeneous_epsilon"]
        raw = "; ".join(g["non_private_releases"]) or None  # un-noised channels
        verdict, evidence = decide_verdict(
            claimed, g["accountant"]["epsilon"], None, raw_channel=raw
        )
        return {
            "claimed": {
                "epsilon": json_number(claimed),
                "delta": args.target_delta,
                "source": _SOURCE if args.algorithm == "private-coop-ucb" else _TD16,
                "per_message_epsilon": g["claimed"]["per_message_epsilon"],
                "zeta_epsilon": json_number(g["claimed"]["zeta_epsilon"]),
                "basic_epsilon": g["claimed"]["basic_epsilon"],
                "confidence": g["claimed"]["confidence"],
            },
            "accountant": {
                "epsilon": json_number(g["accountant"]["epsilon"]),
                "delta": args.target_delta,
                "route": g["accountant"]["route"],
                "pure_epsilon": json_number(g["accountant"]["pure_epsilon"]),
                "first_release_epsilon": json_number(g["accountant"]["first_release_epsilon"]),
                "routes": {k: json_number(v) for k, v in g["accountant"]["routes"].items()},
                "scope": "one reward of one agent-arm stream; parallel over agents "
                "and arms (a reward belongs to one stream)",
            },
            "verdict": verdict,
            "evidence": evidence,
            "input_epsilon": args.epsilon,
            "noise_draws": run.accountant.ledger.n_draws,
            "non_private_releases": g["non_private_releases"],
        }
    if run.accountant is not None:
        return {
            "claimed": None,
            "accountant": {
                "epsilon": json_number(run.accountant.get_epsilon(0.0)),
                "delta": 0.0,
                "route": "nonprivate",
            },
            "verdict": "no-claim",
            "evidence": "raw data broadcast; the paper claims no privacy",
            "non_private_releases": run.accountant.ledger.non_private_reasons(),
        }
    return None


def _lines(
    args: argparse.Namespace, run: Any, record: dict[str, Any], group: Any, per_agent: Any
) -> Iterator[str]:
    from fedpriv.privacy import format_epsilon

    yield (
        f"{run.algorithm}: group regret at T={args.horizon}: {group.mean():.1f} "
        f"(min {group.min():.1f}, max {group.max():.1f} over {args.trials} trials); "
        f"per agent {per_agent.mean():.2f}"
    )
    c = record["communication"]
    yield (
        f"communication per trial: {c['link_transmissions_per_trial']} link transmissions, "
        f"{c['deliveries_per_trial']} deliveries"
    )
    if "guarantee" in record and record["guarantee"]["claimed"]:
        g = record["guarantee"]
        acc = run.accountant.get_epsilon(args.target_delta)
        yield (
            f"claimed (ε', δ') = ({format_epsilon(float(g['claimed']['epsilon']))}, {args.target_delta:g}) "
            f"[per message {g['claimed']['per_message_epsilon']:.4g}]; accountant ε = "
            f"{format_epsilon(acc)} ({g['accountant']['route']}) -> {g['verdict']}"
        )
    elif "guarantee" in record:
        yield ("no privacy claim; accountant ε = inf (raw data broadcast)")


def _experiment(args: argparse.Namespace) -> int:
    import dataclasses

    from fedpriv.audit.families.dubey_aamas.experiments import default_config
    from fedpriv.audit.families.dubey_aamas.report import write_experiment

    config = dataclasses.replace(
        default_config(args.experiment_name),
        horizon=args.horizon,
        n_trials=args.trials,
        n_agents=args.agents,
        n_arms=args.arms,
        seed=args.seed,
    )
    result = write_experiment(args.experiment_name, args.out, config, progress=progress_printer())
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print(f"{args.experiment_name}: {result['final']}")
        print(f"wrote {', '.join(result['files'])} ({result['seconds']:.0f} s)")
    return 0


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = (
    *(RunCommand(name, options_for(name, _RUN_OPTIONS), _run) for name in ALGORITHMS),
    *(
        ExperimentCommand(name, _figure_options(name), _experiment, {"experiment_name": name})
        for name in DUBEY_AAMAS_EXPERIMENTS
    ),
)
