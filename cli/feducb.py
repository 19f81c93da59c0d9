"""``fedpriv run feducb | feducb-fixed | feducb-nonprivate`` (Dubey & Pentland 2020).

Registered by :func:`register` into the ``run`` sub-command of ``fedpriv`` (see
``cli/main.py``). Each handler builds the linear environment of the paper's
experiments (:mod:`fedpriv.algorithms.environments.linear`), runs the algorithm inside the accountant
(:mod:`fedpriv.algorithms.feducb.centralized`) and prints the average per-agent regret, the number of
syncs, the tree depth, and, for the private variants, the accountant's ε at the
claimed δ for the Privatizer's releases next to the claim (Prop. 3's scope), with
the channels the accountant cannot cover (the adaptive sync timing) named.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import TYPE_CHECKING, Any

from fedpriv.cli.commands import run_status

# Option choices as literals, so `fedpriv run ... --help` imports no algorithm;
# tests/test_cli_startup.py checks each against its source (named beside it).
#: fedpriv.algorithms.feducb.loop.BETA_VERSIONS
BETA_VERSIONS = ("H", "P", "tuned")
#: fedpriv.privacy.mechanisms.matrix_tree.PRIVATIZER_CALIBRATIONS
PRIVATIZER_CALIBRATIONS = ("paper", "corrected", "exact")
#: fedpriv.algorithms.environments.linear.REWARD_MODELS
REWARD_MODELS = ("bernoulli", "beta")
#: fedpriv.algorithms.feducb.sync.SYNC_ORDERS
SYNC_ORDERS = ("MlogT", "M1.5", "MT")


if TYPE_CHECKING:  # for annotations; the functions import what they run
    import numpy as np
    from fedpriv.algorithms.feducb.centralized import FedUCBRun

__all__ = ["register"]

_CLAIM_SOURCE = (
    "Dubey & Pentland 2020, Alg. 2, Prop. 3 and Remark 3: each agent's release stream "
    "is (ε, δ)-DP per substituted (x, y) pair, hence (ε, δ, M)-federated DP"
)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", type=int, default=10, help="n_agents M (default 10)")
    parser.add_argument("--horizon", type=int, default=2000, help="horizon T (default 2000)")
    parser.add_argument(
        "--dimension", type=int, default=10, help="context dimension d (default 10)"
    )
    parser.add_argument("--actions", type=int, default=20, help="actions K per round (default 20)")
    parser.add_argument(
        "--reward",
        choices=REWARD_MODELS,
        default="bernoulli",
        help="bernoulli (NeurIPS text) or beta (full text); default bernoulli",
    )
    parser.add_argument(
        "--shared-users",
        action="store_true",
        help="footnote 4: one user present at every agent at each round",
    )
    parser.add_argument(
        "--beta-version",
        choices=BETA_VERSIONS,
        default="H",
        help="β of Prop. 2 in the full text (H) or NeurIPS text (P), or tuned",
    )
    parser.add_argument(
        "--beta-value", type=float, default=None, help="the constant β of --beta-version tuned"
    )
    parser.add_argument("--failure-probability", type=float, default=0.1, help="α (default 0.1)")
    parser.add_argument("--trials", type=int, default=1, help="n_trials (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _add_privacy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--epsilon", type=float, default=1.0, help="claimed ε (default 1)")
    parser.add_argument("--delta", type=float, default=0.1, help="claimed δ (default 0.1)")
    parser.add_argument(
        "--calibration",
        choices=PRIVATIZER_CALIBRATIONS,
        default="paper",
        help="Privatizer noise: the paper's σ_N, corrected, or exact (default paper)",
    )


def _add_threshold(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="sync threshold D (default: Theorem 1's value)",
    )
    group.add_argument(
        "--syncs-order",
        choices=SYNC_ORDERS,
        default=None,
        help="pick D for about M ln T, M^1.5 or T syncs (non-private: Prop. 1 "
        "bound; private: D = T d ln 2 / n, see feducb_sync)",
    )


def register(run: argparse._SubParsersAction, experiment: argparse._SubParsersAction) -> None:
    """Add ``feducb``, ``feducb-fixed`` and ``feducb-nonprivate`` to ``fedpriv run``.

    ``experiment`` is accepted for the family-module interface; FedUCB's figure
    experiments are registered by the decentralized FedUCB module.

    Parameters
    ----------
    run : argparse._SubParsersAction
        The ``fedpriv run`` subcommands.
    experiment : argparse._SubParsersAction
        Unused.
    """
    p = run.add_parser("feducb", help="centralized FedUCB (Alg. 1 + Privatizer), adaptive syncs")
    _add_common(p)
    _add_privacy(p)
    _add_threshold(p)
    p.add_argument(
        "--n-syncs",
        type=int,
        default=None,
        help="syncs fixed a priori: tree depth 1 + ceil(log2 n) (default: from T)",
    )
    p.set_defaults(handler=_handle, feducb_variant="feducb")

    p = run.add_parser("feducb-fixed", help="FedUCB with a fixed sync schedule (every B rounds)")
    _add_common(p)
    _add_privacy(p)
    p.add_argument(
        "--sync-every", type=int, default=100, help="B, rounds between syncs (default 100)"
    )
    p.set_defaults(handler=_handle, feducb_variant="feducb-fixed")

    p = run.add_parser("feducb-nonprivate", help="non-private FedUCB (H = λI, no noise)")
    _add_common(p)
    _add_threshold(p)
    p.add_argument("--regularizer", type=float, default=1.0, help="λ (default 1)")
    p.set_defaults(handler=_handle, feducb_variant="feducb-nonprivate")


def _threshold(args: argparse.Namespace, rho_min: float, rho_max: float) -> float | None:
    from fedpriv.algorithms.feducb.sync import syncs_for_order, threshold_for_syncs

    if getattr(args, "syncs_order", None) is None:
        return args.threshold
    target = syncs_for_order(args.syncs_order, n_agents=args.agents, horizon=args.horizon)
    return threshold_for_syncs(
        target, horizon=args.horizon, dim=args.dimension, rho_min=rho_min, rho_max=rho_max
    )


def _execute(args: argparse.Namespace) -> FedUCBRun:
    import numpy as np
    from fedpriv.algorithms.environments.linear import LinearBandit
    from fedpriv.algorithms.feducb.centralized import (
        run_feducb,
        run_feducb_fixed,
        run_feducb_nonprivate,
    )
    from fedpriv.algorithms.feducb.sync import private_threshold_for_syncs, syncs_for_order
    from fedpriv.algorithms.seeding import as_seed_sequence

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
    env_seed = np.random.SeedSequence(root.entropy, spawn_key=(0,))
    noise_seed = np.random.SeedSequence(root.entropy, spawn_key=(1,))
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


def _summary(values: np.ndarray) -> dict[str, float]:
    return {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}


def _record(args: argparse.Namespace, run: FedUCBRun, seconds: float) -> dict[str, Any]:
    import numpy as np
    from fedpriv.audit.claims.claim import json_number, run_verdict
    from fedpriv.privacy.mechanisms.matrix_tree import SymmetricMatrixGaussianTree, matrix_tree_gdp

    final = run.regret_curve[:, -1]
    setting = {k: json_number(v) for k, v in run.setting.items()}
    setting["seed"] = args.seed
    record: dict[str, Any] = {
        "algorithm": run.algorithm,
        "setting": setting,
        "regret": _summary(final),
        "regret_scope": "average per-agent cumulative pseudo-regret R_M(T)/M",
        "seconds": seconds,
        "syncs": _summary(run.n_syncs.astype(np.float64)),
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


def _handle(args: argparse.Namespace) -> int:
    from fedpriv.privacy import format_epsilon

    started = time.perf_counter()
    run = _execute(args)
    record = _record(args, run, time.perf_counter() - started)
    if args.json:
        print(json.dumps(record, indent=2, allow_nan=False))
        return run_status(record)
    regret = record["regret"]
    syncs = record["syncs"]
    print(
        f"{run.algorithm}: average per-agent regret at T={args.horizon}: {regret['mean']:.2f} "
        f"(min {regret['min']:.2f}, max {regret['max']:.2f} over {args.trials} trials)"
    )
    print(
        f"syncs: {syncs['mean']:.1f} (min {syncs['min']:.0f}, max {syncs['max']:.0f}); "
        f"tree depth m = {run.tree_depth}, capacity {run.capacity} leaves"
    )
    if "guarantee" in record:
        g = record["guarantee"]
        p = record["privatizer"]
        print(
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
        print(
            f"claimed (ε, δ) = ({g['claimed']['epsilon']:g}, {g['claimed']['delta']:g}); "
            f"Privatizer ε at δ = {g['claimed']['delta']:g}: {format_epsilon(eps_value)} "
            f"({g['accountant']['route']}; at δ = 1e-6: "
            f"{format_epsilon(float(g['accountant']['curve']['1e-06']))}); end to end: "
            f"{format_epsilon(float(g['end_to_end']['epsilon']))}"
        )
        print(f"verdict: {g['verdict']} ({g['evidence']})")
        for reason in g["end_to_end"]["unaccounted_channels"]:
            print(f"not covered by the accountant (ε = ∞ end to end): {reason}")
    else:
        print("non-private: " + "; ".join(record["non_private_releases"]))
    return run_status(record)
