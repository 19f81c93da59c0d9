"""Secure (exact integer) noise against floating-point noise (a script, not a test).

    python benchmarks/bench_secure_noise.py

Prints samples/s of each sampler and the ratio secure / float, for one batch of
``N`` draws from one Generator (the vectorized path the mechanisms use):

* discrete Laplace (CKS20 Alg. 2) of scale ``t`` vs ``Generator.laplace``;
* discrete Gaussian (CKS20 Alg. 3) of ``σ`` vs ``Generator.normal`` (at ``σ = 10**7``
  the acceptance test runs on Python ints, the slow exact path);
* the whole release ``laplace_release(..., secure=True)`` vs ``secure=False`` on
  ``N`` entries (rounding to the grid, charging, drawing, ledger rows);
* a whole FedUCB run with the matrix-tree Privatizer, ``secure_noise=True`` vs
  ``False`` (``FEDUCB``: M = 10, d = 10, T = 2000, a sync every 10 rounds, so 200
  leaves per agent; seconds per run, not samples/s).

Each timing is the best of ``REPEATS`` runs (the 2-core machine is shared).
"""

from __future__ import annotations

import time

import numpy as np
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.centralized import run_feducb_fixed
from fedpriv.privacy import Accountant, laplace_release
from fedpriv.privacy.mechanisms.secure_noise import (
    sample_discrete_gaussian,
    sample_discrete_laplace,
)

N = 1_000_000
REPEATS = 3


def _rate(draw) -> float:
    best = np.inf
    for repeat in range(REPEATS):
        rng = np.random.default_rng(repeat)
        started = time.perf_counter()
        draw(rng)
        best = min(best, time.perf_counter() - started)
    return N / best


def _release(secure: bool):
    values = np.linspace(0.0, 1.0, N)
    keys = {"i": np.arange(N)}

    def run(rng: np.random.Generator) -> None:
        laplace_release(
            values,
            scale=10.0,
            l1_sensitivity=1.0,
            accountant=Accountant(disjoint=("i",)),
            keys=keys,
            rng=rng,
            secure=secure,
        )

    return run


FEDUCB = {"n_agents": 10, "dim": 10, "horizon": 2000, "sync_every": 10}


def _feducb_seconds(secure: bool) -> float:
    spec = LinearBandit(n_agents=FEDUCB["n_agents"], n_arms=20, dim=FEDUCB["dim"])
    tables = spec.sample(np.random.SeedSequence(0), n_trials=1, horizon=FEDUCB["horizon"])
    best = np.inf
    for repeat in range(REPEATS):
        started = time.perf_counter()
        run_feducb_fixed(
            tables,
            epsilon=1.0,
            delta=0.1,
            sync_every=FEDUCB["sync_every"],
            seed=repeat,
            secure_noise=secure,
        )
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    rows = []
    for t in (1.0, 10.0, 1e4):
        rows.append(
            (
                f"discrete Laplace, scale {t:g}",
                _rate(lambda r, t=t: sample_discrete_laplace(t, size=N, rng=r)),
                _rate(lambda r, t=t: r.laplace(0.0, t, N)),
            )
        )
    for sigma in (1.0, 100.0, 1e7):
        rows.append(
            (
                f"discrete Gaussian, sigma {sigma:g}",
                _rate(lambda r, s=sigma: sample_discrete_gaussian(s, size=N, rng=r)),
                _rate(lambda r, s=sigma: r.normal(0.0, s, N)),
            )
        )
    rows.append(
        ("laplace_release (scale 10, grid 2**-10)", _rate(_release(True)), _rate(_release(False)))
    )
    print(f"{N:,} draws per batch, best of {REPEATS}")
    print(f"{'sampler':<42}{'secure /s':>14}{'float /s':>14}{'float/secure':>14}")
    for name, secure, plain in rows:
        print(f"{name:<42}{secure:>14,.0f}{plain:>14,.0f}{plain / secure:>13.1f}x")
    secure, plain = _feducb_seconds(True), _feducb_seconds(False)
    print(
        f"{'FedUCB fixed run (M=10, d=10, T=2000, B=10)':<42}{secure:>13.2f}s{plain:>13.2f}s"
        f"{secure / plain:>13.2f}x"
    )


if __name__ == "__main__":
    main()
