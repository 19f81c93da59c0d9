"""CPU time to build one audit batch's privacy-noise generators (a script, not a timed test).

Run from the checkout::

    PYTHONPATH=. python benchmarks/bench_stream_rngs.py [--trials 2000] [--repeats 3]

FedUCB's whole-algorithm audits run batches of 2000 short runs; each run opens one
noise generator per (trial, agent) (centralized: ``stream_rngs``) or per (trial, agent,
set) (decentralized: the children ``stream_rng(...).spawn(γ)``, ``spawn_stream_rngs``).
The anchor is the per-address construction with numpy's own objects, in the same run;
both sides give the same generators (checked here on every address, and in
``tests/algorithms/test_seeding.py``). Figures are the best of ``--repeats`` runs in
CPU seconds of this process (``time.process_time``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedpriv.algorithms.seeding import (
    Stream,
    child_seed,
    spawn_stream_rngs,
    stream_rng,
    stream_rngs,
)

__all__ = ["main"]


def _best(function, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        out = function()
        best = min(best, time.process_time() - started)
    return best, out


def main(argv: list[str] | None = None) -> None:
    """Print fedpriv's and the anchor's CPU seconds and their ratio for both shapes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    root = child_seed(2020, 7, 3)
    n, agents, gamma = args.trials, 3, 2

    def loop_children():
        out = np.empty((n, agents, gamma), dtype=object)
        for j in range(n):
            for i in range(agents):
                parent = stream_rng(root, trial=j, side=1, agent=i, stream=Stream.NOISE)
                out[j, i] = parent.spawn(gamma)
        return out

    def loop_streams():
        out = np.empty((n, agents), dtype=object)
        for j in range(n):
            for i in range(agents):
                out[j, i] = stream_rng(root, trial=j, side=1, agent=i, stream=Stream.NOISE)
        return out

    cases = (
        (
            f"children ({n}, {agents}, {gamma}): spawn_stream_rngs vs stream_rng(...).spawn",
            lambda: spawn_stream_rngs(
                root, n_trials=n, n_agents=agents, n_children=gamma, side=1, stream=Stream.NOISE
            ),
            loop_children,
        ),
        (
            f"streams ({n}, {agents}): stream_rngs vs stream_rng per address",
            lambda: stream_rngs(root, n_trials=n, n_agents=agents, side=1, stream=Stream.NOISE),
            loop_streams,
        ),
    )
    for name, fast, anchor in cases:
        fast_s, got = _best(fast, args.repeats)
        anchor_s, want = _best(anchor, args.repeats)
        same = all(
            a.bit_generator.state == b.bit_generator.state
            for a, b in zip(got.flat, want.flat, strict=True)
        )
        print(
            f"{name}: {fast_s:.3f} s, anchor {anchor_s:.3f} s, ratio "
            f"{fast_s / anchor_s:.3f}, same generators: {same}"
        )


if __name__ == "__main__":
    main()
