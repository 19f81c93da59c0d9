"""Audit power on Gaussians and the samples saved by sequential audits (issue 23, item 3).

    PYTHONPATH=. python benchmarks/bench_audit_power.py [--reps 100] [--samples 10000 100000]

A Gaussian mechanism calibrated to (ε, δ) = (1, 1e-5) (σ = 1/μ₀, μ₀ = 0.26805, neighbours
1 and 0), audited against ApproxDP(1, 1e-5) at 95% confidence. For each sample size per
world it prints, over ``--reps`` seeds:

- power against 1.5x and 2x less noise, and false alarms on the calibrated Gaussian, for
  the anchor (the default audit: every bound holds for any mechanism; measured here in
  the same run) and for ``reading="gaussian"`` (the claim read as μ₀-GDP; Nasr et al.
  2023, GDP-based auditing);
- the same with ``sequential=True`` (10 looks, confidence sequences): power, false
  alarms and the mean fraction of the sample budget saved;
- the ceiling of any single-event any-mechanism test: the power of the best single
  threshold chosen with knowledge of the true distributions, one-sided Clopper–Pearson
  at 97.5% per bound (no multiplicity at all), computed from binomial counts. It shows
  how far an estimator that makes no assumption on the shape can go at this n.

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import time

import fedpriv.audit as audit
import numpy as np
from fedpriv.audit.estimators.gdp import claim_mu
from fedpriv.audit.regression.corpus_mechanisms import gaussian_count
from fedpriv.privacy import ApproxDP
from scipy import special, stats

PAIR = audit.NeighboringPair(1.0, 0.0)
CLAIM = ApproxDP(1.0, 1e-5)


def _rate(factor: float, n: int, reps: int, **options: object) -> tuple[float, float]:
    mu0 = claim_mu(CLAIM, 1e-5)
    mechanism = functools.partial(gaussian_count, noise_stddev=1.0 / mu0 / factor)
    hits, saved = 0, 0.0
    for seed in range(reps):
        result = audit.audit_mechanism(
            mechanism, PAIR, claim=CLAIM, samples=n, seed=seed, executor=None, **options
        )
        hits += result.violated
        saved += result.samples_saved / result.samples_budget
    return hits / reps, saved / reps


def single_event_ceiling(factor: float, n: int, draws: int = 20_000, seed: int = 0) -> float:
    """Best power over thresholds c of ``ln((CP_lo(P_D) − δ)/CP_hi(P_D')) > ε``."""
    mu = claim_mu(CLAIM, 1e-5) * factor
    rng = np.random.default_rng(seed)
    best = 0.0
    for c in np.linspace(1.0, 4.5, 36):
        p1, p0 = special.ndtr(mu - c), special.ndtr(-c)
        k1, k0 = rng.binomial(n, p1, draws), rng.binomial(n, p0, draws)
        low = np.where(k1 > 0, stats.beta.ppf(0.025, np.maximum(k1, 1), n - k1 + 1), 0.0)
        high = np.where(k0 < n, stats.beta.isf(0.025, k0 + 1, np.maximum(n - k0, 1)), 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.log(np.maximum(low - CLAIM.delta, 0.0) / high)
        best = max(best, float(np.mean(eps > CLAIM.epsilon)))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--samples", type=int, nargs="+", default=[10**4, 10**5])
    args = parser.parse_args()
    modes = {
        "anchor: default (any mechanism)": {},
        "reading='gaussian'": {"reading": "gaussian"},
        "reading='gaussian', sequential": {"reading": "gaussian", "sequential": True},
        "default, sequential": {"sequential": True},
    }
    for n in args.samples:
        print(f"== n = {n:,} per world, {args.reps} seeds, ApproxDP(1, 1e-5), 95% ==")
        for name, options in modes.items():
            started = time.perf_counter()
            p15, s15 = _rate(1.5, n, args.reps, **options)
            p2, s2 = _rate(2.0, n, args.reps, **options)
            fa, sfa = _rate(1.0, n, args.reps, **options)
            line = f"{name:36s} power 1.5x {p15:5.0%}  2x {p2:5.0%}  false alarms {fa:4.0%}"
            if options.get("sequential"):
                line += f"  saved: 1.5x {s15:4.0%}, 2x {s2:4.0%}, calibrated {sfa:4.0%}"
            print(line + f"  ({time.perf_counter() - started:.1f} s)")
        print(
            f"{'ceiling: best single event, oracle':36s} power 1.5x "
            f"{single_event_ceiling(1.5, n):5.0%}  2x {single_event_ceiling(2.0, n):5.0%}"
        )


if __name__ == "__main__":
    main()
