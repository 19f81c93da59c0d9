"""Issue 33's four federated UCB versions: verdicts and audit lower bounds, before and after.

The versions (``tests/audit/_fed_ucb_versions.py``: every agent sends Laplace-noised
cumulative per-arm sums each epoch; claim ε = 1 per agent's rewards, seen by the server)
are audited three ways at one budget and seed:

* before: each column alone (``search_and_confirm(..., joint=False)``) on the guide's
  pair, agent 0's first reward of arm 0, 0 -> 1;
* the whole view (``joint=True``, the default) on the same pair;
* the whole view and the worst-neighbour search
  (:func:`fedpriv.audit.engine.neighbor_search.search_neighbors`: agent 0's streams of
  both arms, first, last and both sides of every epoch boundary, 4 seeded random
  positions; 40 pairs).

The verdict is the one rule ``fedpriv verify`` uses (``decide_verdict``) on the run's
own accountant and the audit's bound. Usage::

    python benchmarks/bench_joint_ucb.py [--quick] [SEED ...]

``--quick``: 100 pilot and 1,000 confirming runs per world (``verify --quick``); else
500 and 10,000 (``verify``'s default).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedpriv.audit.claims.claim import decide_verdict
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.engine.neighbor_search import reward_pairs, search_neighbors

from tests.audit._fed_ucb_versions import N_EPOCHS, PULLS, VERSIONS, fed_ucb, reward_table, view


def main(argv: list[str]) -> None:
    """Print one line per (seed, version, way)."""
    quick = "--quick" in argv
    budget = (
        AuditBudget(pilot_samples=100, samples=1_000)
        if quick
        else AuditBudget(pilot_samples=500, samples=10_000, batch_size=2_000)
    )
    table = reward_table()
    first = reward_pairs(table, domain=(0, 1), n_random=0, records=[(0, 0)])
    first = {k: v for k, v in first.items() if "(first)" in k}
    ways = {
        "before: per column, first reward": {"pairs": first, "joint": False},
        "whole view, first reward": {"pairs": first, "joint": True},
        "whole view + neighbour search": {
            "records": [(0, 0), (0, 1)],
            "boundaries": range(PULLS, N_EPOCHS * PULLS, PULLS),
        },
    }
    for seed in [int(s) for s in argv if s.isdigit()] or [0]:
        for version in VERSIONS:
            accountant = fed_ucb(version, table, 0, 1)[1].routes.tightest(0.0)[1]
            for way, options in ways.items():
                started = time.perf_counter()
                result = search_neighbors(
                    view(version),
                    table,
                    domain=(0.0, 1.0),
                    budget=budget,
                    seed=seed,
                    delta=0.0,
                    channel="agent 0's messages",
                    **options,
                )
                verdict = decide_verdict(1.0, accountant, result.bound)[0]
                print(
                    f"seed {seed} {version:20s} accountant {accountant:4g} | {way:34s} "
                    f"LB {result.epsilon_lower_bound:6.3f} {verdict:10s} "
                    f"pairs {result.n_pairs:3d} {time.perf_counter() - started:5.1f} s "
                    f"[{result.neighbors} | {result.event}]",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
