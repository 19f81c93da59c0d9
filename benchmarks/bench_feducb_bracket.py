"""FedUCB's fixed-schedule rows bracketed at δ = 1e-6, at the full ``verify`` budget.

Runs the two rows exactly as ``fedpriv verify --paper feducb`` does (same budget, same
SeedSequence addresses, seed 0) and prints, per row, the audit's bound at δ = 1e-6, the
accountant's ε there, their ratio and the wall time of the row's audits (end to end and
Privatizer). ``--quick`` uses the ``--quick`` budget.

    .venv/bin/python benchmarks/bench_feducb_bracket.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.claims.verify import ClaimsConfig, evaluate_claim
from fedpriv.audit.endtoend.engine import child_seed

KEYS = ("feducb/feducb/fixed", "feducb/feducb-decentralized/fixed")


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    config = ClaimsConfig.quick_config(workers=1) if quick else ClaimsConfig(workers=1)
    root = np.random.SeedSequence(config.seed)
    index = {e.key: i for i, e in enumerate(claims_for(None))}
    for key in KEYS:
        started = time.perf_counter()
        result = evaluate_claim(key, config.budget, child_seed(root, 7, index[key]))
        bound = result.audit_at_1e6
        print(f"{key}: at δ=1e-6 audit ≥ {result.audit_epsilon_at_1e6:.4f} "
              f"({bound.confidence:.0%}, {bound.n_samples:,}/world), accountant "
              f"{result.epsilon_at_1e6:.4f}, tightness {result.tightness_at_1e6:.2f}; "
              f"audits {result.audit_seconds:.1f} s, row {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
