"""False alarms of the Gaussian-DP reading on correct non-Gaussian mechanisms (issue 38).

    PYTHONPATH=. python benchmarks/bench_reading_false_alarms.py [--reps 50] [--samples 10000 100000]

Each mechanism is audited with ``reading="gaussian"`` at 95% confidence against its own
true (tight) claim ApproxDP(ε, 1e-5), neighbours 1 and 0: Laplace with scale 1, 3, 10,
30, 100 (ε = 1/scale), randomized response on one bit and the geometric (discrete
Laplace) mechanism at ε = 0.1 and 1. Per mechanism and sample size it prints, over
``--reps`` seeds, the false-alarm rate (``violated``), how often the reading was declined
for a rejected shape and for too little shape-test power, and the mean power against the
claim's own non-Gaussian curves. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import math
import time

import fedpriv.audit as audit
import numpy as np
from fedpriv.audit.regression.corpus_mechanisms import laplace_count
from fedpriv.privacy import ApproxDP

PAIR = audit.NeighboringPair(1.0, 0.0)


def randomized_response(
    dataset: float, n_samples: int, rng: np.random.Generator, *, epsilon: float
):
    """Randomized response on one bit: the bit kept w.p. e^ε/(1 + e^ε)."""
    keep = rng.random(n_samples) < math.exp(epsilon) / (1.0 + math.exp(epsilon))
    return np.where(keep, dataset, 1.0 - dataset)


def geometric(dataset: float, n_samples: int, rng: np.random.Generator, *, epsilon: float):
    """``x + G1 - G2``, G1, G2 geometric with success 1 - e^-ε: P(k) ∝ e^-ε|k|."""
    p = 1.0 - math.exp(-epsilon)
    return dataset + (rng.geometric(p, n_samples) - rng.geometric(p, n_samples)).astype(float)


def mechanisms() -> dict[str, tuple[object, float]]:
    """Name -> (mechanism, its true ε)."""
    out: dict[str, tuple[object, float]] = {}
    for scale in (1.0, 3.0, 10.0, 30.0, 100.0):
        out[f"Laplace({scale:g})"] = (functools.partial(laplace_count, scale=scale), 1.0 / scale)
    for eps in (0.1, 1.0):
        out[f"randomized response ε={eps:g}"] = (
            functools.partial(randomized_response, epsilon=eps),
            eps,
        )
        out[f"geometric ε={eps:g}"] = (functools.partial(geometric, epsilon=eps), eps)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--samples", type=int, nargs="+", default=[10**4, 10**5])
    args = parser.parse_args()
    for n in args.samples:
        print(f"== n = {n:,} per world, {args.reps} seeds, ApproxDP(ε, 1e-5), 95% ==")
        for name, (mechanism, eps) in mechanisms().items():
            started = time.perf_counter()
            alarms = rejected = weak = 0
            powers = []
            for seed in range(args.reps):
                r = audit.audit_mechanism(
                    mechanism, PAIR, claim=ApproxDP(eps, 1e-5), samples=n, seed=seed,
                    executor=None, reading="gaussian",
                )  # fmt: skip
                alarms += r.violated
                shape, power = r.details["shape_test"], r.details.get("shape_power")
                rejected += bool(shape.rejected)
                if power is not None:
                    powers.append(power.power)
                    weak += (not shape.rejected) and not power.sufficient
            print(
                f"{name:30s} false alarms {alarms:3d}/{args.reps}  shape rejected "
                f"{rejected:3d}  declined for power {weak:3d}  mean power "
                f"{np.mean(powers) if powers else math.nan:.3f}  "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
