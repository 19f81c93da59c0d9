"""Wall time of the heaviest ledgers of ``tests/privacy/test_soundness.py``.

For each ledger, times ``brackets.epsilon``, ``routes.tightest`` and ``get_delta`` together (the
accountant only; the mpmath references are not timed) and prints the bracket and the
route that answered. Run: ``python benchmarks/ledger_cost.py`` (``/usr/bin/time -v``
in front gives the peak memory).
"""

from __future__ import annotations

import time

from fedpriv.privacy import Accountant, compose_routes
from fedpriv.privacy.accounting import events

__all__ = ["time_ledger"]


def time_ledger(name, spends, delta, neighboring_relation="replace_one") -> float:
    """Seconds for bracket + tightest + get_delta of ``spends`` at ``delta``; prints them."""
    acc = Accountant(neighboring_relation=neighboring_relation)
    for event, count in spends:
        acc.spend(events.SelfComposed(event=event, count=count))
    start = time.perf_counter()
    lower, upper = acc.brackets.epsilon(delta)
    route = acc.routes.tightest(delta)[0]
    acc.get_delta(upper)
    seconds = time.perf_counter() - start
    print(f"{name:46s} δ={delta:g}: [{lower:.6g}, {upper:.6g}] ({route}) {seconds:.1f} s")
    return seconds


def main() -> None:
    compose_routes([(events.Laplace(scale=3.0), 1)], 1e-6)  # import dp-accounting first
    rr = events.RandomizedResponse
    time_ledger("RR(0.01) x 10^6", [(rr(epsilon=0.01), 10**6)], 0.0)
    time_ledger("RR(1e-4) x 10^6", [(rr(epsilon=1e-4), 10**6)], 1e-10)
    time_ledger("RR(0.004) x 700,000", [(rr(epsilon=0.004), 700_000)], 1e-6)
    time_ledger(
        "DiscreteLaplace(80.6869) x 18,935",
        [(events.DiscreteLaplace(scale=80.6869, l1_sensitivity=1), 18_935)],
        1e-15,
    )
    time_ledger(
        "Laplace(178.915) x 17,179, add/remove",
        [(events.Laplace(scale=178.915), 17_179)],
        1e-15,
        "add_or_remove_one",
    )
    time_ledger(
        "Opaque(0.1, 1e-12) x 61,061 + Gaussian + Laplace",
        [
            (events.OpaqueApproxDP(epsilon=0.1, delta=1e-12), 61_061),
            (events.Gaussian(noise_multiplier=5.0), 1000),
            (events.Laplace(scale=10.0), 500),
        ],
        1e-6,
    )


if __name__ == "__main__":
    main()
