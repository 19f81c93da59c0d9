"""Benchmark of the mechanism-level tree audit (a script, not a timed test).

Run from the checkout after ``pip install .``::

    python benchmarks/bench_tree_nodes.py            # verify's default sizes (~1 min)
    python benchmarks/bench_tree_nodes.py --quick    # 100x smaller

For the paper's calibration (log2, ε = 1) on a counter that releases every prefix
(Fed_UCB under the reading that publishes the final estimate ϑ̃(T); its default view,
prefixes 1..T−1, audits one node fewer at T = 16 and 1024) at T = 16, 1024 and
600 000, prints the wall time
of :func:`fedpriv.audit.engine.tree_nodes.audit_tree_nodes` at ``fedpriv verify``'s
sample counts, for the joint audit and the product audit alone (each at 95%) and for
both together as ``verify`` runs them (97.5% each, the stronger reported at 95%): runs
per second (both worlds), the lower bound and the accountant's ε.

``--grid`` times instead what ``verify`` runs for Fed_UCB's grid (issue 23): at each
horizon, the nine view rows (the paper's calibration under log₂ and ln and the
corrected one, ε = 1, 2, 5) audited together on common random numbers
(:func:`fedpriv.audit.engine.tree_grid.audit_tree_nodes_grid`) against the anchor, the
same nine audits one by one (:func:`audit_tree_nodes`, as ``verify`` ran them before),
in CPU seconds, at ``verify``'s sample counts divided by ``--divide`` (default 10). It
checks that every row's bound is the same on both sides and prints the ratio::

    python benchmarks/bench_tree_nodes.py --grid [--divide 10]
"""

from __future__ import annotations

import argparse
import platform
import time

from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree_grid import audit_tree_nodes_grid
from fedpriv.audit.engine.tree_nodes import audit_tree_nodes
from fedpriv.privacy.calibrations import gossip_fed_ucb_scale

#: (horizon, joint runs per world, product runs per world) of ``fedpriv verify``'s
#: default budget (``VerifyConfig.audit_samples``, ``audit_product_samples``).
SIZES = ((16, 10**7, 10**7), (1024, 3 * 10**7, 10**7), (600_000, 2 * 10**7, 10**7))


def grid(divide: int) -> None:
    """The grid's view rows per horizon: together on common draws against one by one."""
    variants = (("paper", "2"), ("paper", "e"), ("corrected", "2"))
    for horizon, n_joint, n_product in SIZES:
        n_joint, n_product = n_joint // divide, n_product // divide
        rows = [
            (gossip_fed_ucb_scale(eps, horizon, mode=mode, log_base=base), eps)
            for mode, base in variants
            for eps in (1.0, 2.0, 5.0)
        ]
        common = {
            "n_samples": n_joint,
            "product_samples": n_product,
            "seed": 0,
            "released_prefixes": horizon - 1,
        }
        pair = worst_case_reward_pair(horizon)
        started = time.process_time()
        together = audit_tree_nodes_grid(
            pair, scales=[b for b, _ in rows], claimed_epsilons=[e for _, e in rows], **common
        )
        grid_cpu = time.process_time() - started
        started = time.process_time()
        alone = [audit_tree_nodes(pair, scale=b, claimed_epsilon=e, **common) for b, e in rows]
        anchor_cpu = time.process_time() - started
        same = all(a.bound == b.bound for a, b in zip(together, alone))
        print(
            f"T={horizon:>7} 9 rows, runs/world {n_joint:,} + {n_product:,}: grid "
            f"{grid_cpu:6.1f} s CPU, one by one (anchor) {anchor_cpu:6.1f} s CPU, ratio "
            f"{grid_cpu / anchor_cpu:.2f}; bounds identical: {same}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100x fewer runs")
    parser.add_argument("--grid", action="store_true", help="the grid against one by one")
    parser.add_argument("--divide", type=int, default=10, help="--grid: divide the runs")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}")
    if args.grid:
        grid(args.divide)
        return
    for horizon, n_joint, n_product in SIZES:
        if args.quick:
            n_joint, n_product = n_joint // 100, n_product // 100
        scale = gossip_fed_ucb_scale(1.0, horizon, mode="paper", log_base="2")
        for method in ("joint", "product", "both"):
            n = {"joint": n_joint, "product": n_product}.get(method, n_joint + n_product)
            result = audit_tree_nodes(
                worst_case_reward_pair(horizon),
                scale=scale,
                claimed_epsilon=1.0,
                n_samples=n_joint,
                seed=0,
                method=method,
                product_samples=n_product,
            )
            print(
                f"T={horizon:>7} nodes={result.n_nodes:>2} {method:>7} runs/world={n:>10,} "
                f"{result.seconds:6.1f} s ({2 * n / result.seconds / 1e6:.2f} M runs/s) "
                f"lower bound {result.bound.epsilon_lower_bound:.4f} [{result.method}] "
                f"(accountant {result.accountant_epsilon:.4g}, claim 1)"
            )


if __name__ == "__main__":
    main()
