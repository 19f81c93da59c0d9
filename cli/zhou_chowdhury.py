"""``fedpriv run private-fedlinucb`` (Zhou & Chowdhury, ICLR 2024, Alg. 1).

Runs Private-FedLinUCB on the synthetic instance of Fig. 2a-b, prints the average
per-silo regret, the number of syncs and the noise, and decides the run's claim by the
rule ``fedpriv verify`` applies to the family's rows
(:func:`fedpriv.audit.claims.claim.decide_verdict`): the claim is ``(--epsilon,
--delta)`` for the protocol's view (silo-level LDP, Thm. 5.1: every silo's p-sums;
shuffle model, Thm. 5.3: the shuffled multiset of them), the upper bound is the run's
own ledger end to end at that δ (each silo's tree charged for the pairs one user moves:
``B`` when a silo acts on its raw batch data, 1 with ``--broadcast-only``), and the lower
bound is the exact ε of the family's adaptive pair at the run's setting
(:func:`fedpriv.audit.families.zhou_chowdhury.recipes.adaptive_pair`). ``--epsilon inf``
and ``--protocol non-private`` publish the raw sums and claim nothing (``no-claim``).
The exit status is 1 when the verdict is ``violated`` (:mod:`fedpriv.cli.runs`).
``experiment zhou-chowdhury-fig2a`` and ``zhou-chowdhury-fig2b`` reproduce Fig. 2a and 2b
(:mod:`fedpriv.audit.families.zhou_chowdhury.experiments`).

The commands are declared as data (:data:`COMMANDS`: options and run functions); the
shared machinery (:mod:`fedpriv.cli.runs`) wires, times, prints and sets the exit status.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from fedpriv.cli.runs import (
    JSON,
    SEED,
    TRIALS,
    ExperimentCommand,
    RunCommand,
    RunReport,
    option,
    progress_printer,
    summary,
)

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.zhou_chowdhury.fedlinucb.PROTOCOLS
PROTOCOLS = ("ldp", "ldp-exact", "sdp-amp", "sdp-vecsum", "non-private")

__all__ = ["COMMANDS", "EXPERIMENTS", "PROTOCOLS"]

#: The claim each protocol's run is judged against (``--epsilon``, ``--delta``).
_SOURCES = {
    "ldp": (
        "Zhou & Chowdhury, ICLR 2024, Thm. 5.1 (silo-level LDP): every silo's messages "
        "(ε, δ)-DP in its users' data, σ = L√(κ(ln(1/δ)+ε))/ε, κ = ⌊log₂(T/B)⌋+1"
    ),
    "ldp-exact": (
        "the claim of Zhou & Chowdhury's Thm. 5.1 (silo-level LDP) at fedpriv's corrected "
        "σ, solved for the view's exact (ε, δ) at the charged sensitivity"
    ),
    "sdp-amp": (
        "Zhou & Chowdhury, ICLR 2024, Thm. 5.3 (shuffle model by amplification): the "
        "shuffled messages of all silos (ε, δ)-DP in all users' data"
    ),
    "non-private": "none: the raw sums (non-private FedLinUCB)",
}
#: What each model's view is (:mod:`fedpriv.audit.families.zhou_chowdhury.views`).
_VIEWS = {
    "ldp": "every silo's noisy p-sums (the server and any colluding silos)",
    "sdp": (
        "the shuffled multiset of every silo's p-sums, bounded by each silo's own ledger "
        "(the multiset is a function of the silos' messages)"
    ),
}


_RUN_OPTIONS = (
    option("--agents", type=int, default=10, help="silos M (default 10; Fig. 2: 100)"),
    option("--arms", type=int, default=20, help="arms K (default 20; Fig. 2: 100)"),
    option("--dim", type=int, default=5, help="dimension d >= 3 (default 5; Fig. 2: 10)"),
    option("--horizon", type=int, default=1000, help="rounds T (default 1000)"),
    option("--batch-size", type=int, default=25, help="batch B (default 25)"),
    option("--protocol", choices=PROTOCOLS, default="ldp", help="privacy protocol"),
    option("--epsilon", type=float, default=1.0, help="claimed ε (default 1; inf: no noise)"),
    option("--delta", type=float, default=0.1, help="claimed δ in (0, 1) (default 0.1)"),
    option(
        "--broadcast-only",
        action="store_true",
        help="silos act on the broadcast sums only (fedpriv's correction)",
    ),
    TRIALS,
    SEED,
    JSON,
)

#: fedpriv.audit.families.zhou_chowdhury.experiments.EXPERIMENTS
EXPERIMENTS = ("zhou-chowdhury-fig2a", "zhou-chowdhury-fig2b")

_FIGURE_OPTIONS = (
    option(
        "--out",
        type=Path,
        default=Path("reports"),
        help="report root; files go to OUT/zhou_chowdhury/ (default reports)",
    ),
    option("--horizon", type=int, default=None, help="rounds T >= 25 (default 2000; paper 10^4)"),
    option("--trials", type=int, default=None, help="trials per run (default 3; paper 25)"),
    option("--agents", type=int, default=None, help="silos M (default 100, the paper's)"),
    SEED,
)


def _run(args: argparse.Namespace) -> RunReport:
    """Run Private-FedLinUCB and decide its claim (module docstring)."""
    from fedpriv.algorithms.zhou_chowdhury import SyntheticEnvironment, run_private_fedlinucb
    from fedpriv.audit.claims.claim import decide_verdict, json_number
    from fedpriv.privacy.checks import check_epsilon, check_open_unit

    epsilon = check_epsilon("epsilon", args.epsilon, allow_inf=True)
    delta = check_open_unit("delta", args.delta)
    # ε = ∞ asks for no noise (σ → 0 in every calibration): the raw sums, no claim.
    protocol = "non-private" if math.isinf(epsilon) else args.protocol
    acts_on = "broadcast-sums" if args.broadcast_only else "own-batch-data"
    env = SyntheticEnvironment(n_agents=args.agents, n_arms=args.arms, dim=args.dim)
    run = run_private_fedlinucb(
        env,
        horizon=args.horizon,
        batch_size=args.batch_size,
        protocol=protocol,
        epsilon=None if protocol == "non-private" else epsilon,
        delta=delta,
        n_trials=args.trials,
        seed=args.seed,
        own_data_between_syncs=not args.broadcast_only,
    )
    setting = {
        "n_agents": args.agents,
        "n_arms": args.arms,
        "dim": args.dim,
        "horizon": args.horizon,
        "batch_size": args.batch_size,
        "protocol": protocol,
        "acts_on": acts_on,
        "epsilon": json_number(epsilon),
        "delta": delta,
        "trials": args.trials,
        "seed": args.seed,
    }
    accountant = run.accountant
    route, upper = accountant.routes.tightest(delta)
    reasons = accountant.ledger.non_private_reasons()
    raw = "; ".join(sorted(reasons)) or None
    lower = None
    if protocol == "non-private":
        verdict = "no-claim"
        evidence = (
            "epsilon = inf: " if math.isinf(epsilon) else "protocol non-private: "
        ) + "the raw sums, charged as non-private"
    else:
        lower = _exact_lower(setting, epsilon, delta)
        verdict, evidence = decide_verdict(
            epsilon, float(upper), None, analytic_lower=lower, raw_channel=raw
        )
    claimed = math.inf if protocol == "non-private" else epsilon  # raw sums claim nothing
    cal = run.calibration
    record: dict[str, Any] = {
        "algorithm": "private-fedlinucb",
        "protocol": protocol,
        "setting": setting,
        "regret_per_silo": float(run.final_regret.mean()),
        "regret": summary(run.final_regret.mean(axis=1)),
        "regret_scope": "average per-silo cumulative pseudo-regret",
        "n_syncs": run.n_syncs,
        "noise_stddev": cal.noise_stddev,
        "records_per_leaf": cal.records_per_leaf,
        "guarantee": {
            "claimed": {
                "epsilon": json_number(claimed),
                "delta": delta,
                "source": _SOURCES.get(protocol, f"the {protocol} protocol's target"),
            },
            "accountant": {
                "epsilon": json_number(float(upper)),
                "delta": delta,
                "route": route,
                "neighboring_relation": accountant.neighboring_relation.value,
                "scope": _scope(protocol, cal),
            },
            "lower_bound": None
            if lower is None
            else {
                "epsilon": json_number(lower.epsilon),
                "delta": delta,
                "kind": lower.kind,
                "description": lower.description,
            },
            "verdict": verdict,
            "evidence": evidence,
            "non_private_releases": list(reasons),
        },
    }
    return RunReport(record, lambda: _lines(record))


def _scope(protocol: str, cal: Any) -> str:
    """What the run's ledger covers, in words (``guarantee.accountant.scope``)."""
    if protocol == "non-private":
        return f"every silo's raw batch sums at each of its {cal.n_batches} syncs, no noise"
    moves = (
        "its own raw batch data between syncs"
        if cal.records_per_leaf > 1
        else "the releases only: it acts on the broadcast sums"
    )
    return (
        f"{_VIEWS['sdp' if protocol.startswith('sdp') else 'ldp']}: each silo's tree of "
        f"{cal.n_batches} batches (κ = {cal.depth}), charged {cal.records_per_leaf} pair(s) "
        f"per leaf (the pairs one user moves through {moves})"
    )


def _exact_lower(setting: dict[str, Any], epsilon: float, delta: float) -> Any:
    """The exact ε at δ of the family's adaptive pair on the run's view, or None.

    The same recipe as the register rows
    (:func:`fedpriv.audit.families.zhou_chowdhury.recipes.ldp_analytic_lower` for
    silo-level LDP, :func:`~fedpriv.audit.families.zhou_chowdhury.recipes.sdp_analytic_lower`
    for the shuffle model), on a claim built at the run's setting: one neighbouring pair's
    exact ε, hence a lower bound on the run's. None for a protocol without such a pair.
    """
    from fedpriv.audit.claims.claim import LowerBoundEvidence
    from fedpriv.audit.claims.entry import make_claim
    from fedpriv.audit.families.zhou_chowdhury import recipes
    from fedpriv.privacy import ApproxDP, NeighboringRelation

    exact = {
        "ldp": recipes.ldp_analytic_lower,
        "ldp-exact": recipes.ldp_analytic_lower,
        "sdp-amp": recipes.sdp_analytic_lower,
    }.get(setting["protocol"])
    if exact is None:
        return None
    keys = ("n_agents", "n_arms", "dim", "horizon", "epsilon", "delta", "batch_size")
    claim = make_claim(
        "zhou_chowdhury",
        "private-fedlinucb",
        _mode(setting),
        {
            **{k: setting[k] for k in keys},
            "protocol": setting["protocol"],
            "acts_on": setting["acts_on"],
        },
        NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
        ApproxDP(epsilon, delta),
        _SOURCES[setting["protocol"]],
    )
    pair = recipes.adaptive_pair(claim)
    return LowerBoundEvidence(
        epsilon=float(exact(claim)),
        kind="analytic",
        description=(
            "exact ε of the adaptive pair on "
            + (
                "the broadcast sums, a function of the shuffled multiset"
                if setting["protocol"].startswith("sdp")
                else "every silo's p-sums"
            )
            + f": silo 0's first user's change moves {pair.moved} more of its "
            f"{setting['batch_size']} pairs"
        ),
    )


def _mode(setting: dict[str, Any]) -> str:
    """The claim's mode: the paper's algorithm, or which of fedpriv's corrections runs."""
    fixes = []
    if setting["protocol"] == "ldp-exact":
        fixes.append("exact σ")
    if setting["acts_on"] == "broadcast-sums":
        fixes.append("broadcast sums only")
    return f"corrected ({', '.join(fixes)})" if fixes else "paper"


def _lines(record: dict[str, Any]) -> list[str]:
    """The text of ``run private-fedlinucb``: regret, syncs, σ, then ε and the verdict."""
    from fedpriv.privacy import format_epsilon

    g = record["guarantee"]
    acc, lower = g["accountant"], g["lower_bound"]
    claimed = float(g["claimed"]["epsilon"])
    claim = (
        f"claimed (ε, δ) = ({format_epsilon(claimed)}, {g['claimed']['delta']:g})"
        if math.isfinite(claimed)
        else "no claim (the raw sums)"
    )
    lines = [
        f"Private-FedLinUCB ({record['protocol']}): regret per silo "
        f"{record['regret_per_silo']:.4g}, {record['n_syncs']} syncs, σ = "
        f"{record['noise_stddev']:.4g}",
        f"{claim}; accountant ε at δ = {acc['delta']:g}: "
        f"{format_epsilon(float(acc['epsilon']))} ({acc['route']})"
        + (
            ""
            if lower is None
            else f"; exact lower bound {format_epsilon(float(lower['epsilon']))}"
        ),
        f"verdict: {g['verdict']} ({g['evidence']})",
    ]
    lines += [
        f"unaccounted channel (charged as non-private): {r}" for r in g["non_private_releases"]
    ]
    return lines


def _experiment(args: argparse.Namespace) -> int:
    from fedpriv.audit.families.zhou_chowdhury.experiments import run_figure
    from fedpriv.audit.reporting.figures import figure_stem

    folder = run_figure(
        args.figure,
        out=args.out,
        horizon=args.horizon,
        n_trials=args.trials,
        n_agents=args.agents,
        seed=args.seed,
        progress=progress_printer(),
    )
    stem = figure_stem(args.figure, "zhou_chowdhury")
    print(f"{args.figure}: wrote {folder}/{stem}.png, .csv, _curves.csv, .md")
    return 0


#: Every command of the family, in ``--help`` order (:mod:`fedpriv.cli.runs`).
COMMANDS = (
    RunCommand("private-fedlinucb", _RUN_OPTIONS, _run),
    *(
        ExperimentCommand(name, _FIGURE_OPTIONS, _experiment, {"figure": name})
        for name in EXPERIMENTS
    ),
)
