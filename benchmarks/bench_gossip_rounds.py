"""Fed_UCB / Gossip_UCB rounds: the fused loop against the step-by-step loop it replaced.

Run from the checkout (the anchor, the test oracle ``tests/algorithms/_gossip_reference``,
is imported from there)::

    python benchmarks/bench_gossip_rounds.py             # verify's regret runs: T = 20000
    python benchmarks/bench_gossip_rounds.py --quick     # T = 2000

Each line is one batch as ``fedpriv verify`` runs it (100 trials, 3 agents on K3, 5 arms,
the paper's synthetic environment), timed in CPU seconds (``time.process_time``) with the
fused loop (``run_gossip_fed_ucb`` / ``run_gossip_ucb``) and with the oracle on the same seed in
the same process, and checked equal (actions, counts and every ledger row).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from fedpriv.algorithms.environments.heterogeneous import paper_synthetic_bandit
from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb, run_gossip_ucb
from fedpriv.algorithms.networks.graphs import make_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.algorithms._gossip_reference import reference_run


def _cpu(function):
    started = time.process_time()
    result = function()
    return time.process_time() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    horizon, trials = (2_000 if args.quick else 20_000), 100
    env = paper_synthetic_bandit(3, 5, rng=np.random.default_rng(0), noise="gaussian")
    graph = make_graph("complete", 3)
    cases = [("Gossip_UCB", math.inf, "paper")] + [
        (f"Fed_UCB {mode} ε={eps:g}", eps, mode)
        for mode in ("paper", "corrected")
        for eps in (1.0,)
    ]
    for name, epsilon, mode in cases:
        common = {"horizon": horizon, "n_trials": trials, "seed": 0}
        if math.isinf(epsilon):
            fused_seconds, run = _cpu(partial(run_gossip_ucb, env, graph, **common))
            ref_seconds, ref = _cpu(partial(reference_run, env, graph, **common))
        else:
            options = {**common, "epsilon": epsilon, "mode": mode}
            fused_seconds, run = _cpu(partial(run_gossip_fed_ucb, env, graph, **options))
            ref_seconds, ref = _cpu(partial(reference_run, env, graph, private=True, **options))
        assert np.array_equal(run.actions, ref["actions"])
        assert np.array_equal(run.counts, ref["counts"])
        if run.accountant is not None:
            pd.testing.assert_frame_equal(
                run.accountant.ledger.draws, ref["accountant"].ledger.draws, check_exact=True
            )
        print(
            f"{name}, {trials} trials x 3 agents x T={horizon}: fused {fused_seconds:.2f} s, "
            f"step-by-step {ref_seconds:.2f} s, ratio {fused_seconds / ref_seconds:.2f} (equal)"
        )


if __name__ == "__main__":
    main()
