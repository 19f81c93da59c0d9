"""Ledger-store benchmark: a persistent charge against an in-memory one (a script, not a test).

    python benchmarks/bench_store.py            # 300 charges per setting (a few seconds)
    python benchmarks/bench_store.py --n 1000 --folder /some/disk

Each setting charges ``n`` Laplace releases one at a time to 10 agents (an algorithm's
pattern) and reports the median and mean µs per charge; the ratio is persistent /
in-memory. Two ledgers: without a budget (the charge only records) and with a
``PureDP`` budget (every charge is also checked against it, in memory as in the store:
on the running cells, by every route only near the budget). Settings: in memory; a store with ``store_synchronous="full"`` (the
default: fsync at every commit) and ``"normal"``; one ``spend`` of 100 cells per
transaction; and reopening the store (restoring every charge). The store lives in ``--folder`` (default: a temporary folder), whose
disk decides the fsync cost.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fedpriv.privacy import Accountant, PureDP
from fedpriv.privacy.accounting import events

N_AGENTS = 10


def _charge_times(accountant: Accountant, n: int) -> list[float]:
    times = []
    for i in range(n):
        event = events.Laplace(scale=100.0 + i % 7)
        started = time.perf_counter()
        accountant.spend(event, key={"agent": i % N_AGENTS})
        times.append(time.perf_counter() - started)
    return times


def _accountant(
    store: Path | None, synchronous: str = "full", *, budget: bool = False
) -> Accountant:
    return Accountant(
        disjoint=("agent",),
        budget=PureDP(1e6) if budget else None,
        store=store,
        store_synchronous=synchronous,
    )


def _report(name: str, times: list[float], reference: float | None) -> float:
    median = statistics.median(times)
    ratio = f"  ratio {median / reference:8.1f}x" if reference else ""
    print(
        f"{name:<34} median {median * 1e6:9.1f} µs  mean "
        f"{statistics.fmean(times) * 1e6:9.1f} µs{ratio}"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="charges per setting")
    parser.add_argument("--folder", type=Path, default=None, help="where the stores go")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        folder = Path(folder)
        _charge_times(_accountant(None, budget=True), args.n)  # warm the route caches
        for budget in (False, True):
            print("with a budget (checked at every charge)" if budget else "without a budget")
            memory = _report(
                "  in memory", _charge_times(_accountant(None, budget=budget), args.n), None
            )
            for synchronous in ("full", "normal"):
                store = folder / f"{synchronous}-{budget}.sqlite"
                accountant = _accountant(store, synchronous, budget=budget)
                _report(
                    f"  store, synchronous={synchronous}", _charge_times(accountant, args.n), memory
                )
                accountant.store.close()
        batch = _accountant(folder / "batch.sqlite")
        started = time.perf_counter()
        for _ in range(args.n // 10):
            batch.spend(events.Laplace(scale=100.0), key={"agent": list(range(100))})
        per_cell = (time.perf_counter() - started) / (args.n // 10 * 100)
        print(f"{'store, spend of 100 cells':<34} {per_cell * 1e6:9.1f} µs per cell")
        started = time.perf_counter()
        reopened = _accountant(folder / "batch.sqlite")
        elapsed = time.perf_counter() - started
        n_cells = len(reopened.ledger.charges)
        print(f"{f'reopen ({args.n // 10} charges, {n_cells} cells)':<34} {elapsed * 1e3:9.1f} ms")
        reopened.store.close()
        batch.store.close()


if __name__ == "__main__":
    main()
