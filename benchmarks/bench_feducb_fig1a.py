"""Benchmark: the six FedUCB Fig. 1A rows' sync-timing audits at a given budget.

Each row (``feducb/feducb/fig1a/eps{0.1,0.5,1,2,5,10}``) is evaluated as ``fedpriv
verify`` does (:func:`fedpriv.audit.claims.verify.evaluate_claim`: accountant, the
knife-edge construction, pilot and confirmation with the row's ``sample_factor``), in
this process on one core. Prints, per row, the knife-edge round, the runs per world,
the lower bound, the CPU and wall seconds, and the runs per CPU second; then the
totals. The default budget is ``fedpriv verify``'s (pilot 500, 10 000 confirming runs
per world); ``--quick`` uses ``fedpriv verify --quick``'s (100, 1 000).

``--regime`` instead builds each row's knife-edge pair near the first sync of Fig. 1A's
n = O(M log T) regime (``D = T d ln 2 / ⌈M ln T⌉ ≈ 4.3·10⁴``, first sync near round
3 900; :func:`fedpriv.algorithms.feducb.sync.private_threshold_for_syncs`, as the
project's Fig. 1A experiment sets it) and prints τ, the pair's D and its relative
distance to the regime's D, and the seconds (one run per world confirms the pair);
rows whose ε needs at most ``--regime-runs`` runs per world (``runs_needed(ε) + 2``;
ε <= 1 at the default 20) are then audited there (pilot 2 runs per world). Prints
numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_feducb_fig1a.py [--quick | --regime [--regime-runs N]]
"""

from __future__ import annotations

import argparse
import time

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Time the six rows (see the module docstring)."""
    from fedpriv.algorithms.seeding import child_seed
    from fedpriv.audit.claims.register import claims_for
    from fedpriv.audit.claims.verify import ClaimsConfig, evaluate_claim

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fedpriv verify --quick's budget")
    parser.add_argument(
        "--regime",
        action="store_true",
        help="knife edges near the n = O(M log T) regime's first sync",
    )
    parser.add_argument(
        "--regime-runs",
        type=int,
        default=20,
        help="with --regime, audit the rows needing at most this many runs",
    )
    args = parser.parse_args(argv)
    if args.regime:
        _regime(args.regime_runs)
        return
    config = ClaimsConfig.quick_config() if args.quick else ClaimsConfig()
    rows = [e for e in claims_for("feducb") if "/fig1a/" in e.key]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for index, entry in enumerate(rows):
        cpu, wall = time.process_time(), time.perf_counter()
        result = evaluate_claim(entry.key, config.budget, child_seed(0, index))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        bound = result.audit
        runs = 2 * (bound.n_samples_d + config.budget.pilot_samples) if bound else 0
        print(
            f"{entry.key:28s} ε_lb = {bound.epsilon_lower_bound if bound else float('nan'):7.3f}"
            f"  runs/world = {bound.n_samples_d if bound else 0:7d}  cpu {cpu:6.1f} s"
            f"  wall {wall:6.1f} s  {runs / max(cpu, 1e-9):8.0f} runs/cpu-s"
            f"  verdict {result.verdict}  event: {result.audit_event}"
        )
    print(
        f"total: cpu {time.process_time() - cpu0:.1f} s, wall {time.perf_counter() - wall0:.1f} s"
    )


def _regime(max_runs: int) -> None:
    """Each row's knife edge near the O(M log T) regime's first sync; audited if affordable."""
    import math

    from fedpriv.algorithms.feducb.sync import private_threshold_for_syncs, syncs_for_order
    from fedpriv.audit.claims.register import claims_for
    from fedpriv.audit.engine.coupled import AuditBudget
    from fedpriv.audit.families.feducb.fig1a import (
        audit_fig1a_sync_timing,
        fig1a_knife_edge,
        runs_needed,
    )

    for index, entry in enumerate(e for e in claims_for("feducb") if "/fig1a/" in e.key):
        s = entry.claim.setting_dict()
        horizon, n_agents, dim = int(s["horizon"]), int(s["n_agents"]), int(s["dim"])
        threshold = private_threshold_for_syncs(
            syncs_for_order("MlogT", n_agents=n_agents, horizon=horizon), horizon=horizon, dim=dim
        )
        # before the first sync the test value grows by about d ln 3 per round
        first = max(0, math.floor(threshold / (dim * math.log(3.0))) - 3)
        wall = time.perf_counter()
        edge = fig1a_knife_edge(entry.claim, first_round=first)
        line = (
            f"{entry.key:28s} regime D = {threshold:.6g}: knife edge at round {edge.tau}, "
            f"D = {edge.threshold:.8g} ({(edge.threshold - threshold) / threshold:+.2e} "
            f"relative), margin {edge.margin:.3g}, {time.perf_counter() - wall:.1f} s"
        )
        runs = runs_needed(float(s["epsilon"]), delta=float(s["delta"])) + 2
        if runs <= max_runs:
            wall = time.perf_counter()
            budget = AuditBudget(pilot_samples=2, samples=runs, batch_size=runs)
            result = audit_fig1a_sync_timing(entry.claim, budget, index, first_round=first)
            line += (
                f"; audit with {runs} runs per world: ε_lb = "
                f"{result.bound.epsilon_lower_bound:.3f} ({result.event}), "
                f"{time.perf_counter() - wall:.1f} s"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
