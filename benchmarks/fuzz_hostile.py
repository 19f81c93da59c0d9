"""Hostile-input sweep of issue 20: every event field, the accountant and its queries.

Each event class is built with one field replaced by each hostile value; what is
built is charged (to a budgeted accountant and an unbudgeted one) and queried by
every route, the lower bound and get_delta. Outcomes are counted: answered, typed
refusal (ValueError, TypeError or a ToolkitError, with the accountant unchanged),
crash (any other exception, or a refused charge that changed the accountant) and
hang (a call over ``HANG_SECONDS``). The README's reliability section quotes a run:

    python benchmarks/fuzz_hostile.py
"""

from __future__ import annotations

import argparse
import math
import operator
import signal
import time
import warnings

import pandas as pd
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.guarantees import ApproxDP, PureDP
from fedpriv.privacy.errors import ToolkitError

HANG_SECONDS = 60
VALUES = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -1.0,
    1e308,
    5e-324,
    1e-300,
    2**70,
    10**400,
    1e6,
    1e15,
    700.0,
    701.0,
    1e-6,
    3,
    None,
    "1",
    True,
    [1.0],
    {},
    {0, 1},
]
FIELDS = {
    events.Laplace: ({"scale": 1.0}, ["scale", "l1_sensitivity"]),
    events.LaplaceTree: ({"scale": 1.0, "horizon": 4}, ["scale", "horizon", "l1_sensitivity"]),
    events.Gaussian: ({"noise_stddev": 1.0}, ["noise_stddev", "l2_sensitivity"]),
    events.GaussianTree: ({"noise_stddev": 1.0, "horizon": 4}, ["noise_stddev", "horizon"]),
    events.DiscreteLaplace: ({"scale": 1.0, "l1_sensitivity": 1}, ["scale", "l1_sensitivity"]),
    events.DiscreteGaussian: ({"sigma": 1.0, "l2_sensitivity": 1.0}, ["sigma", "l2_sensitivity"]),
    events.RandomizedResponse: ({"epsilon": 1.0}, ["epsilon", "num_buckets"]),
    events.OpaqueApproxDP: ({"epsilon": 1.0, "delta": 1e-6}, ["epsilon", "delta"]),
    events.SelfComposed: ({"event": events.Laplace(scale=1.0), "count": 2}, ["count", "event"]),
}
KEYS = [
    {"agent": 0},
    {"agent": {"x": 1}},
    {"agent": {0, 1}},
    {"agent": [[0], [1]]},
    {"agent": math.nan},
    {},
    {"arm": 0},
]


class Hang(Exception):
    pass


def _alarm(*_):
    raise Hang


def main(only: list[str] | None = None, hang_seconds: int = HANG_SECONDS) -> dict:
    """Run the sweep (on the event classes named in ``only``, default all); return
    the counts."""
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    counts = {"calls": 0, "answered": 0, "typed": 0, "crashes": 0, "hangs": 0}
    crashes = []

    def call(label, function):
        counts["calls"] += 1
        signal.alarm(hang_seconds)
        try:
            result = function()
            counts["answered"] += 1
            return True, result
        except (ValueError, TypeError, ToolkitError):
            counts["typed"] += 1
            return False, None
        except Hang:
            counts["hangs"] += 1
            crashes.append((label, "hang"))
            print("HANG", label, flush=True)
            return False, None
        except Exception as error:
            counts["crashes"] += 1
            crashes.append((label, repr(error)[:120]))
            print("CRASH", label, repr(error)[:120], flush=True)
            return False, None
        finally:
            signal.alarm(0)

    built = []
    for cls, (valid, fields) in FIELDS.items():
        if only and cls.__name__ not in only:
            continue
        for field in fields:
            for value in VALUES + ([PureDP(1.0)] if field == "event" else []):
                ok, event = call(
                    f"{cls.__name__}({field}={value!r})", lambda: cls(**{**valid, field: value})
                )
                if ok:
                    built.append(event)
    for event in dict.fromkeys(built):
        for budget in (None, ApproxDP(1.0, 1e-5)):
            accountant = Accountant(disjoint=("agent",), budget=budget)
            accountant.spend(events.Laplace(scale=4.0), key={"agent": 0})
            for key in KEYS:
                before = (accountant.ledger.charges.copy(), accountant.routes.epsilons(0.0))
                ok, _ = call(f"spend({event}, {key})", lambda: accountant.spend(event, key=key))
                if not ok:
                    same = (
                        accountant.ledger.charges.equals(before[0])
                        and accountant.routes.epsilons(0.0) == before[1]
                    )
                    if not same:
                        counts["crashes"] += 1
                        crashes.append((f"spend({event}, {key})", "changed the accountant"))
                        print("CRASH", crashes[-1], flush=True)
            for query in ("routes.epsilons", "brackets.lower_bound", "get_epsilon"):
                call(f"{query}({event})", lambda: operator.attrgetter(query)(accountant)(1e-5))
            call(f"get_delta({event})", lambda: accountant.get_delta(1.0))
        print(counts, f"after {event}", flush=True)  # partial counts of a long run
    for _label, option in (("pld_discretization", "pld_discretization"),):
        for value in VALUES:
            call(f"Accountant({option}={value!r})", lambda: Accountant(**{option: value}))
    print(pd.Series(counts).to_string())
    for label, what in crashes:
        print("CRASH", label, what)
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="event class names to sweep (default: all)")
    parser.add_argument(
        "--hang-seconds",
        type=int,
        default=HANG_SECONDS,
        help=f"a call over this many seconds is a hang (default {HANG_SECONDS})",
    )
    arguments = parser.parse_args()
    start = time.time()
    main(arguments.only, arguments.hang_seconds)
    print(f"{time.time() - start:.0f} s")
