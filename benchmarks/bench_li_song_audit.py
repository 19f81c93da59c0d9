"""Benchmark: one batch of Li & Song's whole-algorithm audits, fast paths on and off.

Issue 23 ("verify under 5 minutes"): the end-to-end audits of Li & Song's HDP-MAB
(``li_song/hdp-mab/messages`` and ``.../actions``, register settings: M = 6 agents in
2 components, K = 3, T = 4000, ε = 0.25) run the algorithm ``--runs`` times at once
in one world of the audit's pair (a single-world table: every run reads one dataset)
and read one observable per run: agent 0's first SAC message ȳ of arm 0 (messages) or
its first exploitation arm (actions).

Anchor, timed in the same process on the same runs: the loop with this issue's fast
paths switched off, i.e. each (trial, agent, arm)'s rewards read entry by entry
(``SingleWorldTable.pull_sums`` off), one ``laplace_release`` per row
(``EpochLoop._release_by_row``), one ``stream_rng`` per noise stream, and both
transcripts recorded (``record=True``). The batched exploitation charges, the
transcript hooks' conversions and the action records stay on in both (they have no
switch); ``tests/algorithms/test_li_song_batched.py`` checks them against the
row-by-row forms. The observables of the two sides must be identical (printed).
CPU seconds of this process; prints numbers, asserts nothing.

    PYTHONPATH=. python benchmarks/bench_li_song_audit.py [--runs 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np
from fedpriv.algorithms import seeding
from fedpriv.algorithms.li_song import mab
from fedpriv.algorithms.li_song.epochs import EpochLoop
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.engine.neighbors import SingleWorldTable, table_reward_pair
from fedpriv.audit.families.li_song import recipes

__all__: list[str] = []


@contextlib.contextmanager
def _anchor():
    """The loop without the fast paths (see the module docstring)."""
    saved = (SingleWorldTable.pull_sums, EpochLoop._release, mab.stream_rngs)

    def one_by_one(root, *, n_trials, n_agents, side=0, stream):
        out = np.empty((n_trials, n_agents), dtype=object)
        for j in range(n_trials):
            for i in range(n_agents):
                out[j, i] = seeding.stream_rng(root, trial=j, side=side, agent=i, stream=stream)
        return out

    SingleWorldTable.pull_sums = lambda self, *a, **k: None
    EpochLoop._release = EpochLoop._release_by_row
    mab.stream_rngs = one_by_one
    try:
        yield
    finally:
        SingleWorldTable.pull_sums, EpochLoop._release, mab.stream_rngs = saved


def _observe(kind: str, runs: int, record) -> np.ndarray:
    setting = next(e for e in REGISTER if e.key == f"li_song/hdp-mab/{kind}").claim
    setting = setting.setting_dict()
    env = recipes.li_song_environment(setting, tied=kind == "actions")
    table = env.reward_table(np.random.SeedSequence(60222 if kind == "actions" else 60221))
    world = table_reward_pair(table, agent=0, arm=0, pull=0)[1]
    run = recipes.run_li_song(
        setting,
        env,
        n_trials=runs,
        seed=child_seed(np.random.SeedSequence(0), 1, 1, 0),
        table=world,
        record=record,
    )
    if kind == "actions":
        return recipes._first_exploit(run, n_trials=runs)
    return recipes._first_message(run, n_trials=runs, kind="SAC", arm=0)


def _time(function) -> tuple[float, np.ndarray]:
    started = time.process_time()
    out = function()
    return time.process_time() - started, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    _observe("messages", 20, True)  # imports and first calls outside the timings
    for kind in ("messages", "actions"):
        fast_times, anchor_times, same = [], [], True
        for _ in range(args.repeats):
            seconds, fast = _time(lambda kind=kind: _observe(kind, args.runs, kind))
            fast_times.append(seconds)
            with _anchor():
                seconds, slow = _time(lambda kind=kind: _observe(kind, args.runs, True))
            anchor_times.append(seconds)
            same &= bool(np.array_equal(fast, slow))
        fast_s, anchor_s = min(fast_times), min(anchor_times)
        print(
            f"hdp-mab/{kind}: {args.runs} runs  fast {fast_s:.2f} s  anchor {anchor_s:.2f} s  "
            f"ratio {fast_s / anchor_s:.3f}  (fastest of {args.repeats}; CPU)  "
            f"observables identical: {same}"
        )


if __name__ == "__main__":
    main()
