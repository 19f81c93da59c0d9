"""FedUCB's fixed-schedule rows at the full ``verify`` budget (only those rows).

Runs the two rows exactly as ``fedpriv verify --paper feducb`` does (same budget, same
SeedSequence addresses, seed 0) and prints, per row, the verdict, at the claimed δ and at
δ = 1e-6 the view's end-to-end ε (adaptivity charged), the mechanism-only ε (one pair,
oblivious stream) and the audit's bound with its tightness, and the wall time of the
row's audits (end-to-end event and the view audits on the adaptive stream). ``--quick``
uses the ``--quick`` budget.

    .venv/bin/python benchmarks/bench_feducb_bracket.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.claims.verify import ClaimsConfig, evaluate_claim

KEYS = ("feducb/feducb/fixed", "feducb/feducb-decentralized/fixed")


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    config = ClaimsConfig.quick_config(workers=1) if quick else ClaimsConfig(workers=1)
    root = np.random.SeedSequence(config.seed)
    index = {e.key: i for i, e in enumerate(claims_for(None))}
    for key in KEYS:
        started = time.perf_counter()
        result = evaluate_claim(key, config.budget, child_seed(root, 7, index[key]))
        bound, claim = result.audit_at_1e6, result.audit
        tight = "—" if result.tightness is None else f"{result.tightness:.2f}"
        print(
            f"{key}: {result.verdict}; at the claimed δ={result.claim.claimed_delta:g}: "
            f"end-to-end {result.accountant_epsilon:.4f}, mechanism "
            f"{result.mechanism_epsilon:.4f}, audit ≥ {claim.epsilon_lower_bound:.4f} "
            f"({claim.confidence:.0%}, {claim.n_samples:,}/world), tightness {tight}; "
            f"at δ=1e-6: end-to-end {result.epsilon_at_1e6:.4f}, mechanism "
            f"{result.mechanism_epsilon_at_1e6:.4f}, audit ≥ "
            f"{result.audit_epsilon_at_1e6:.4f} ({bound.confidence:.0%}, "
            f"{bound.n_samples:,}/world), tightness {result.tightness_at_1e6:.2f}; "
            f"audits {result.audit_seconds:.1f} s, row {time.perf_counter() - started:.1f} s"
        )


if __name__ == "__main__":
    main()
