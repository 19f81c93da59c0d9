"""Laplace draw benchmark: ``sample_laplace`` against ``Generator.laplace`` (a script).

    python benchmarks/bench_laplace_draw.py [--n 2000000] [--repeat 7]

Both draw ``n`` values of ``Lap(0, 1)`` from a fresh PCG64 stream of the same seed
(the outputs are checked equal bit for bit); the best of ``repeat`` CPU times of each,
measured alternately in one run, and their ratio are printed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedpriv.privacy.mechanisms.laplace_draw import FAST_PATH, sample_laplace


def _cpu(draw) -> float:
    started = time.process_time()
    draw()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    n = args.n
    ours = sample_laplace(np.random.default_rng(0), 1.0, n)
    theirs = np.random.default_rng(0).laplace(0.0, 1.0, n)
    if not np.array_equal(ours.view(np.int64), theirs.view(np.int64)):
        raise SystemExit("sample_laplace differs from Generator.laplace")
    best_ours = best_theirs = np.inf
    for _ in range(args.repeat):
        best_ours = min(best_ours, _cpu(lambda: sample_laplace(np.random.default_rng(1), 1.0, n)))
        best_theirs = min(best_theirs, _cpu(lambda: np.random.default_rng(1).laplace(0.0, 1.0, n)))
    print(f"fast path: {FAST_PATH}; n = {n:,} draws of Lap(0, 1), best of {args.repeat} (CPU)")
    print(f"Generator.laplace : {best_theirs / n * 1e9:6.1f} ns/draw")
    print(f"sample_laplace    : {best_ours / n * 1e9:6.1f} ns/draw")
    print(f"ratio             : {best_theirs / best_ours:6.2f}x")


if __name__ == "__main__":
    main()
