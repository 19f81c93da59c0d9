"""Identical disjoint cells priced once, against pricing them one by one (a script).

    python benchmarks/bench_identical_cells.py [--agents 100] [--releases 200] [--repeats 1]

Issue 36, item 4. Every one of ``--agents`` agents (a disjoint key level) runs the same
schedule: ``--releases`` charges cycling over three Laplace and two Gaussian scales.
``Accountant.routes.epsilons(1e-6)`` (every route's worst-cell ε; ``get_epsilon`` is their
minimum) composes each distinct cell content (the multiset of
``(event, count)``) once: ``_compose_cells`` keeps the unique count rows, and the
routes are cached per normalized cell. The anchor, measured in the same run, prices the
same cells one by one: ``compose_routes`` on each agent's cell with every route cache
cleared before it (what pricing without grouping costs), each route's worst cell taken.
Prints both CPU times (``time.process_time``, best of ``--repeats``, each on a fresh
accountant with cleared caches), their ratio (ours / anchor; the target is about
``1 / agents``) and both ε (the smallest route), and whether every route's value is
equal. Asserts nothing (benchmarks are
scripts).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.handlers import _CACHES
from fedpriv.privacy.accounting.routes import compose_routes

_SCHEDULE = [
    events.Laplace(scale=10.0),
    events.Gaussian(noise_multiplier=20.0),
    events.Laplace(scale=12.0),
    events.Gaussian(noise_multiplier=25.0),
    events.Laplace(scale=15.0),
]


def _clear() -> None:
    for cache in _CACHES:
        cache.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    delta = 1e-6
    agents = np.arange(args.agents)
    acc = Accountant(disjoint=["agent"])
    for i in range(args.releases):
        acc.spend(_SCHEDULE[i % len(_SCHEDULE)], key={"agent": agents})
    per_agent = acc.ledger.cells()[0]  # every agent's cell (they are equal)
    compose_routes(per_agent, delta)  # imports and dp-accounting warm-up
    best_ours = best_anchor = np.inf
    ours: dict[str, float] = {}
    anchor: dict[str, float] = {}
    for _ in range(args.repeats):
        _clear()
        fresh = Accountant(disjoint=["agent"])
        for i in range(args.releases):
            fresh.spend(_SCHEDULE[i % len(_SCHEDULE)], key={"agent": agents})
        started = time.process_time()
        ours = fresh.routes.epsilons(delta)
        best_ours = min(best_ours, time.process_time() - started)
        started = time.process_time()
        worst: dict[str, float] = {}
        for _agent in agents:
            _clear()
            for name, value in compose_routes(per_agent, delta).items():
                worst[name] = max(worst.get(name, 0.0), value)
        anchor = worst
        best_anchor = min(best_anchor, time.process_time() - started)
    print(
        f"{args.agents} disjoint cells of {args.releases} identical releases each, "
        f"ε({delta:g}), CPU, best of {args.repeats}: accountant {best_ours:.3f} s, one by "
        f"one (anchor) {best_anchor:.3f} s, ratio {best_ours / best_anchor:.4f} "
        f"(1/agents = {1 / args.agents:.4f}); ε {min(ours.values())!r} vs "
        f"{min(anchor.values())!r}; every route equal: {ours == anchor}"
    )


if __name__ == "__main__":
    main()
