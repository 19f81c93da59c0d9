"""``fedpriv run cdp-mab|ce-cdp-mab|ddp-mab|hdp-mab|single-mab`` and the Li & Song figures.

``run`` prints the regret (summed over agents, and per agent), the communication cost,
the number of rounds, and the accountant's per-message ε next to the paper's claim
(``M ε``, Theorems 1–4; ``N ε`` implied under partial participation) and next to the
input ε the abstract suggests (Alg. 1 line 9 scales the noise by M). ``experiment li-song-fig4`` …
``li-song-fig12`` reproduce §VII's figures (see :mod:`fedpriv.audit.families.li_song.experiments`).

The commands are declared as data (:data:`COMMANDS`: options and run functions); the
shared machinery (:mod:`fedpriv.cli.runs`) wires, times, prints and sets the exit status.
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
    RunCommand,
    RunReport,
    option,
    options_for,
    summary,
)

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.li_song.network.COST_MODELS
COST_MODELS = ("paths", "edges")
#: fedpriv.algorithms.li_song.network.DELAY_CONVENTIONS
DELAY_CONVENTIONS = ("counter", "slots")

if TYPE_CHECKING:  # for annotations; the functions import what they run
    import numpy as np

__all__ = [
    "ALGORITHMS",
    "COMMANDS",
    "COST_MODELS",
    "DELAY_CONVENTIONS",
    "EXPERIMENTS",
    "run_record",
]

ALGORITHMS = ("cdp-mab", "ce-cdp-mab", "ddp-mab", "hdp-mab", "single-mab")
EXPERIMENTS = tuple(f"li-song-fig{n}" for n in range(4, 13))
_SOURCES = {
    "cdp-mab": "Li & Song, Theorem 1 (Mε-DP per message, Definition 1)",
    "ce-cdp-mab": "Li & Song, Theorem 2 (states Mε; the noise gives Nε, N = ⌈pM⌉)",
    "ddp-mab": "Li & Song, Theorem 3 ((Mε)-DP)",
    "hdp-mab": "Li & Song, Theorem 4 ((Mε)-DP)",
    "single-mab": "Li & Song, Remark 2 (Alg. 1 with M = 1: ε-DP)",
}


_CDP = ("cdp-mab", "ce-cdp-mab")
_ROUNDS = ("ce-cdp-mab", "ddp-mab", "hdp-mab")
_NOT_HDP = tuple(name for name in ALGORITHMS if name != "hdp-mab")
#: Every ``run`` option of the family: (option, the commands that take it), help order.
_RUN_OPTIONS = (
    (
        option("--agents", type=int, default=50, help="n_agents M (hdp-mab: 100, Table II)"),
        _NOT_HDP,
    ),
    (
        option("--agents", type=int, default=100, help="n_agents M (hdp-mab: 100, Table II)"),
        ("hdp-mab",),
    ),
    (option("--arms", type=int, default=100, help="n_arms K (default 100)"), None),
    (option("--horizon", type=int, default=100_000, help="horizon T (default 1e5)"), None),
    (
        option(
            "--epsilon", type=float, default=0.1, help="input ε (the claim is Mε); inf = no noise"
        ),
        None,
    ),
    (TRIALS, None),
    (SEED, None),
    (
        option(
            "--heterogeneous",
            action="store_true",
            help="agent-specific means (local best != global best somewhere)",
        ),
        None,
    ),
    (
        option(
            "--min-mismatch",
            type=int,
            default=1,
            help="heterogeneous: agents whose local best arm is not global",
        ),
        None,
    ),
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
    (option("--participation", type=float, default=1.0, help="p in (0, 1]"), _CDP),
    (option("--c1", type=float, default=25.0, help="server link cost c1"), _CDP),
    (
        option("--rounds", type=int, default=4, help="R: round limit with Δ̃_r = Δ^{r/R}"),
        ("ce-cdp-mab",),
    ),
    (
        option("--rounds", type=int, default=None, help="R: round limit with Δ̃_r = Δ^{r/R}"),
        ("ddp-mab", "hdp-mab"),
    ),
    (
        option(
            "--gap",
            type=float,
            default=None,
            help="Δ for Δ^{r/R} (default: the instance's minimum gap)",
        ),
        _ROUNDS,
    ),
    (
        option(
            "--schedule",
            choices=("paper", "corrected"),
            default="paper",
            help="Δ^{r/R} (paper) or (Δ/2)^{r/R} (corrected)",
        ),
        _ROUNDS,
    ),
    (
        option(
            "--graph",
            choices=GRAPH_KINDS,
            default="complete",
            help="agent graph (default complete)",
        ),
        ("ddp-mab",),
    ),
    (
        option("--edge-p", type=float, default=0.1, help="edge probability (erdos_renyi)"),
        ("ddp-mab",),
    ),
    (option("--case", type=int, default=1, help="Table II case 1-6"), ("hdp-mab",)),
    (option("--c1", type=float, default=50.0, help="sink-server cost c1"), ("hdp-mab",)),
    (
        option(
            "--aggregation",
            choices=("unweighted", "weighted"),
            default="unweighted",
            help="server mean of the sinks' means: (1/Q) Σ ȳ_q (Alg. 5 "
            "line 14, default) or Σ (M_q/M) ȳ_q (weighted)",
        ),
        ("hdp-mab",),
    ),
    (option("--c2", type=float, default=1.0, help="agent link cost c2"), ("ddp-mab", "hdp-mab")),
    (
        option(
            "--cost-model",
            choices=COST_MODELS,
            default="edges",
            help="cost per round: edges = c2 d_G |E| (Thm. 3, "
            "default) or paths = the link-slots actually used",
        ),
        ("ddp-mab",),
    ),
    (
        option(
            "--cost-model",
            choices=COST_MODELS,
            default="paths",
            help="cost per round: paths = c2 Σ sd(i, SA_q) + c1 Q "
            "(Thm. 4, default) or edges = c2 Σ |E_q| + c1 Q",
        ),
        ("hdp-mab",),
    ),
    (
        option(
            "--delay-convention",
            choices=DELAY_CONVENTIONS,
            default="counter",
            help="t_delay: DDP d_G - 1 (counter) or d_G; HDP radius (slots) or radius - 1",
        ),
        ("ddp-mab",),
    ),
    (
        option(
            "--delay-convention",
            choices=DELAY_CONVENTIONS,
            default="slots",
            help="t_delay: DDP d_G - 1 (counter) or d_G; HDP radius (slots) or radius - 1",
        ),
        ("hdp-mab",),
    ),
    (JSON, None),
)


_FIGURE_OPTIONS = (
    option(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report root; files go to OUT/li_song/ (default reports)",
    ),
    option("--trials", type=int, default=None, help="trials per setting"),
    option("--horizon", type=int, default=None, help="horizon T"),
    option("--seed", type=int, default=0, help="root seed (default 0)"),
)


def _environment(args: argparse.Namespace, root: np.random.SeedSequence) -> Any:
    from fedpriv.algorithms.environments.bernoulli import heterogeneous_bandit, homogeneous_bandit
    from fedpriv.algorithms.seeding import Stream, child_seed, stream_rng

    rng = stream_rng(child_seed(root, 0), trial=0, stream=Stream.ENVIRONMENT)
    if args.heterogeneous:
        return heterogeneous_bandit(
            args.agents, args.arms, rng, mean_range=args.mean_range, min_mismatch=args.min_mismatch
        )
    return homogeneous_bandit(args.agents, args.arms, rng, mean_range=args.mean_range)


def _run(args: argparse.Namespace) -> RunReport:
    from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab, run_hdp_mab, run_single_mab
    from fedpriv.algorithms.li_song.network import table_ii_components
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng

    root = as_seed_sequence(args.seed)
    env = _environment(args, root)
    common = {
        "horizon": args.horizon,
        "epsilon": args.epsilon,
        "n_trials": args.trials,
        "seed": root,
        "secure_noise": getattr(args, "secure_noise", False),
    }
    name = args.algorithm
    if name in ("cdp-mab", "ce-cdp-mab"):
        run = run_cdp_mab(
            env,
            participation_rate=args.participation,
            c1=args.c1,
            n_rounds=getattr(args, "rounds", None),
            gap=getattr(args, "gap", None),
            mode=getattr(args, "schedule", "paper"),
            **common,
        )
    elif name == "ddp-mab":
        graph = make_graph(
            args.graph,
            env.n_agents,
            p=args.edge_p if args.graph == "erdos_renyi" else None,
            rng=stream_rng(root, trial=0, stream=Stream.NETWORK),
        )
        run = run_ddp_mab(
            env,
            graph,
            c2=args.c2,
            cost_model=args.cost_model,
            delay_convention=args.delay_convention,
            n_rounds=args.rounds,
            gap=args.gap,
            mode=args.schedule,
            **common,
        )
    elif name == "hdp-mab":
        comps = table_ii_components(args.case, rng=stream_rng(root, trial=0, stream=Stream.NETWORK))
        run = run_hdp_mab(
            env,
            comps,
            c1=args.c1,
            c2=args.c2,
            cost_model=args.cost_model,
            aggregation=args.aggregation,
            delay_convention=args.delay_convention,
            n_rounds=args.rounds,
            gap=args.gap,
            mode=args.schedule,
            **common,
        )
    else:
        run = run_single_mab(env, **common)
    record = run_record(run, seed=args.seed)
    return RunReport(record, lambda: _lines(args, run, record))


def _lines(args: argparse.Namespace, run: Any, record: dict[str, Any]) -> Iterator[str]:
    from fedpriv.privacy import format_epsilon

    g = record["guarantee"]
    yield (
        f"{run.algorithm}: regret at T={args.horizon}: {record['regret']['mean']:.1f} "
        f"(min {record['regret']['min']:.1f}, max {record['regret']['max']:.1f} over "
        f"{args.trials} trials; per agent {record['regret_per_agent']['mean']:.1f})"
    )
    yield (
        f"rounds {record['rounds']['mean']:.1f}, communication cost "
        f"{record['communication_cost']['mean']:.1f}"
    )
    claimed = g["claimed"]["epsilon"]
    yield (
        f"input ε = {format_epsilon(run.epsilon)}; claimed ε = {claimed} "
        f"({g['claimed']['source']}); accountant ε per message = "
        f"{format_epsilon(run.message_epsilon()[1])} ({g['accountant']['route']}) "
        f"-> {g['verdict']}"
    )


def run_record(run: Any, *, seed: int) -> dict[str, Any]:
    """The ``run --json`` record of a :class:`~fedpriv.algorithms.li_song.mab.LiSongRun`.

    Parameters
    ----------
    run : LiSongRun
        A finished run.
    seed : int
        Its root seed.

    Returns
    -------
    dict of str to Any
        JSON-ready: algorithm, setting, regret statistics, communication and the
        guarantee with its verdict (``seconds`` is added by :mod:`fedpriv.cli.runs`).
    """
    import numpy as np
    from fedpriv.audit.claims.claim import LowerBoundEvidence, decide_verdict, json_number
    from fedpriv.privacy.calibrations import li_song_claimed_epsilon

    m = run.setting["n_agents"]
    if math.isinf(run.epsilon):
        claimed = math.inf
    elif run.algorithm == "single-mab":
        claimed = run.claimed_epsilon
    else:
        claimed = li_song_claimed_epsilon(run.epsilon, n_agents=m)  # the theorems' text
    route, eps = run.message_epsilon()
    if math.isinf(claimed):  # ε = inf: raw releases, the run claims nothing
        verdict, evidence = "no-claim", "epsilon = inf: raw releases, charged as non-private"
        naive = "no-claim"
    else:
        # The messages are pure Laplace releases at their declared sensitivity: the
        # accountant's lower bracket is their exact ε (Li & Song, Definition 1 protects
        # the messages), so it is analytic lower-bound evidence, as in fedpriv verify.
        lower = run.accountant.brackets.lower_bound(0.0, where={"channel": "message"})
        exact = LowerBoundEvidence(
            epsilon=lower,
            kind="analytic",
            description="the accountant's lower bracket of the message releases",
        )
        verdict, evidence = decide_verdict(claimed, eps, None, analytic_lower=exact)
        naive, _ = decide_verdict(run.epsilon, eps, None, analytic_lower=exact)
    setting = {k: json_number(v) for k, v in run.setting.items()}
    setting["seed"] = seed
    return {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": summary(run.total_regret),
        "regret_per_agent": summary(run.total_regret / m),
        "regret_eq1": summary(run.regret_eq1),
        "exploitation_regret": summary(run.exploitation_regret),
        "communication_cost": summary(run.communication_cost),
        "rounds": summary(run.rounds),
        "best_arm_eliminated": float(np.mean(run.best_arm_eliminated)),
        "ledger": {"noise_draws": run.accountant.ledger.n_draws},
        "guarantee": {
            "claimed": {
                "epsilon": json_number(claimed),
                "delta": 0.0,
                "source": _SOURCES[run.algorithm],
            },
            "implied_by_noise": json_number(run.claimed_epsilon),
            "accountant": {
                "epsilon": json_number(eps),
                "delta": 0.0,
                "route": route,
                "scope": "every message of the run: Laplace per (agent, arm, "
                "epoch), parallel composition (fedpriv's derivation: each reward enters one release)",
            },
            "verdict": verdict,
            "evidence": evidence,
            "input_epsilon": json_number(run.epsilon),
            "claim_read_as_input_epsilon": naive,
            "accountant_including_actions": json_number(run.accountant.get_epsilon(0.0)),
            "non_private_releases": run.accountant.ledger.non_private_reasons(),
        },
    }


def _experiment(args: argparse.Namespace) -> int:
    from fedpriv.audit.families.li_song.experiments import run_figure

    folder = run_figure(
        args.figure, out=args.out, n_trials=args.trials, horizon=args.horizon, seed=args.seed
    )
    print(f"wrote {folder}/fig{args.figure}.png, .csv, .md")
    return 0


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = (
    *(RunCommand(name, options_for(name, _RUN_OPTIONS), _run) for name in ALGORITHMS),
    *(
        ExperimentCommand(
            name, _FIGURE_OPTIONS, _experiment, {"figure": int(name.removeprefix("li-song-fig"))}
        )
        for name in EXPERIMENTS
    ),
)
