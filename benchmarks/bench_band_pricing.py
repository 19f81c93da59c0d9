"""Budgeted charges priced exactly (the PLD band), against dp-accounting's PLD step.

    python benchmarks/bench_band_pricing.py                     # laplace, mixed, dpsgd
    python benchmarks/bench_band_pricing.py --only laplace --scratch-steps 1000

Issue 36, item 2. When a budget lies between a ledger's PLD ε and its cheap bounds
(pure, GDP, zCDP, RDP), no cheap route accepts a charge and the exact check decides:
each charge's PLD is composed into the cell's kept PLD
(:mod:`fedpriv.privacy.accounting.pld_incremental`). One cell, charged one release at a
time; the budget's ε is the final ledger's tightest ε plus 5% of its gap to the cheapest
cheap route, so every charge past the point where the cheap routes give out is a *band
step*. Per band step, CPU time (``time.process_time``), medians over the band steps:

* ours: ``Accountant.spend`` (budgeted, kept PLDs);
* from scratch: the same check with the kept PLDs switched off (``would_exceed``: every
  route of the changed cell recomputed, today's path before this change), on at most
  ``--scratch-steps`` band steps spread evenly (each costs up to 0.5 s on DP-SGD);
* anchor: dp-accounting's PLD step used well: the event's PLD built once
  (``from_laplace_mechanism`` ...), then per step ``compose`` + ``get_epsilon_for_delta``
  (what ``PLDAccountant.compose`` + ``get_epsilon`` does, minus rebuilding the event's PLD
  at every call);
* ``PLDAccountant`` as it is: ``compose(event)`` + ``get_epsilon``, on the band steps the
  from-scratch check is timed on (the releases between them composed with ``count``: it
  rebuilds the event's PLD at every call, 0.4 s on DP-SGD).

Prints the ratio ours / anchor (the target is <= 1), whether every band step's decision
equals the from-scratch check's, and both ε at the last step. Asserts nothing
(benchmarks are scripts).

Scenarios: ``laplace`` 400 × Laplace(b = 20), δ = 1e-6; ``mixed`` 300 releases cycling
Laplace(20), Gaussian(σ = 30), Laplace(15), δ = 1e-6; ``dpsgd`` 600 × Poisson-subsampled
Gaussian (q = 0.01, σ = 1.1, add-or-remove-one), δ = 1e-5. Default grid 1e-4 on every side.
"""

from __future__ import annotations

import argparse
import statistics
import time

__all__ = ["main"]

GRID = 1e-4


def _scenario(name: str):
    """``(events, dp-accounting events, relation, δ)`` of a scenario, one per release."""
    import dp_accounting
    from fedpriv.privacy import PoissonSampled, events

    if name == "laplace":
        ours = [events.Laplace(scale=20.0)] * 400
        theirs = [dp_accounting.LaplaceDpEvent(noise_multiplier=20.0)] * 400
        return ours, theirs, "replace_one_reward", 1e-6
    if name == "mixed":
        cycle = [
            (events.Laplace(scale=20.0), dp_accounting.LaplaceDpEvent(noise_multiplier=20.0)),
            (
                events.Gaussian(noise_multiplier=30.0),
                dp_accounting.GaussianDpEvent(noise_multiplier=30.0),
            ),
            (events.Laplace(scale=15.0), dp_accounting.LaplaceDpEvent(noise_multiplier=15.0)),
        ]
        pairs = [cycle[i % 3] for i in range(300)]
        return [p[0] for p in pairs], [p[1] for p in pairs], "replace_one_reward", 1e-6
    step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.1), sampling_rate=0.01)
    theirs = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1))
    return [step] * 600, [theirs] * 600, "add_or_remove_one", 1e-5


def _event_pld(event):
    """dp-accounting's PLD of one release, as ``PLDAccountant`` builds it."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if hasattr(event, "sampling_probability"):
        return pld_lib.from_gaussian_mechanism(
            event.event.noise_multiplier,
            sampling_prob=event.sampling_probability,
            value_discretization_interval=GRID,
        )
    if type(event).__name__ == "GaussianDpEvent":
        return pld_lib.from_gaussian_mechanism(
            event.noise_multiplier, value_discretization_interval=GRID
        )
    return pld_lib.from_laplace_mechanism(
        event.noise_multiplier, value_discretization_interval=GRID
    )


def _prefix(events, stop):
    """``{event: count}`` of ``events[:stop]`` in first-seen order."""
    counts: dict = {}
    for event in events[:stop]:
        counts[event] = counts.get(event, 0) + 1
    return counts


def run(name: str, scratch_steps: int) -> dict:
    """Measure one scenario; returns the medians and checks."""
    from dp_accounting.pld import pld_privacy_accountant
    from fedpriv.privacy import Accountant, ApproxDP
    from fedpriv.privacy.accounting.routes import compose_routes
    from fedpriv.privacy.errors import BudgetExceededError

    ours_events, dp_events, relation, delta = _scenario(name)
    n = len(ours_events)
    final = compose_routes(list(_prefix(ours_events, n).items()), delta)
    cheap = min(final[route] for route in ("pure", "gdp", "zcdp", "rdp"))
    tight = min(final.values())
    budget = ApproxDP(tight + 0.05 * (cheap - tight), delta)

    accountant = Accountant(budget=budget, neighboring_relation=relation)
    kept = accountant._kept_plds
    first_band = None
    ours, scratch, agree, refused_at = [], [], 0, None
    band_steps = []
    for i, event in enumerate(ours_events):
        band = accountant._running_cells().alive == (False,) * 4
        if band and first_band is None:
            first_band = i
            spread = max(1, (n - i) // max(scratch_steps, 1))
        scratch_decision = None
        if band and (i - first_band) % spread == 0:
            kept.accepts = lambda *args: False  # the from-scratch check alone
            started = time.process_time()
            scratch_decision = accountant.odometer.would_exceed(event, key=None)
            scratch.append(time.process_time() - started)
            del kept.accepts
        started = time.process_time()
        try:
            accountant.spend(event)
            refused = False
        except BudgetExceededError:
            refused = True
        elapsed = time.process_time() - started
        if band:
            ours.append(elapsed)
            band_steps.append(i)
            agree += scratch_decision is None or scratch_decision == refused
        if refused:
            refused_at = i
            break
    stop = band_steps[-1] + 1 if band_steps else n
    ours_epsilon = accountant.get_epsilon(delta)

    # Anchor: dp-accounting's PLD objects, each event's PLD built once.
    plds = {event: _event_pld(event) for event in set(dp_events)}
    composed = None
    for event, count in _prefix(dp_events, first_band).items():
        part = plds[event].self_compose(count) if count > 1 else plds[event]
        composed = part if composed is None else composed.compose(part)
    anchor = []
    for event in dp_events[first_band:stop]:
        started = time.process_time()
        composed = composed.compose(plds[event])
        anchor_epsilon = composed.get_epsilon_for_delta(delta)
        anchor.append(time.process_time() - started)

    # PLDAccountant as it is.
    accounting = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=pld_privacy_accountant.NeighborRel.ADD_OR_REMOVE_ONE,
        value_discretization_interval=GRID,
    )
    plain, done = [], 0
    for step in [*range(first_band, stop, spread), stop]:  # the steps `scratch` timed
        for event, count in _prefix(dp_events[done:step], step - done).items():
            accounting.compose(event, count)  # the releases between two timed steps
        if step == stop:
            break
        started = time.process_time()
        accounting.compose(dp_events[step])
        accounting.get_epsilon(delta)
        plain.append(time.process_time() - started)
        done = step + 1

    return {
        "name": name,
        "releases": n,
        "budget": budget.epsilon,
        "band": len(ours),
        "refused_at": refused_at,
        "ours": statistics.median(ours),
        "scratch": statistics.median(scratch),
        "scratch_n": len(scratch),
        "anchor": statistics.median(anchor),
        "plain": statistics.median(plain),
        "plain_n": len(plain),
        "agree": agree,
        "ours_epsilon": ours_epsilon,
        "anchor_epsilon": anchor_epsilon,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("laplace", "mixed", "dpsgd"), action="append")
    parser.add_argument("--scratch-steps", type=int, default=10)
    args = parser.parse_args()
    for name in args.only or ("laplace", "mixed", "dpsgd"):
        r = run(name, args.scratch_steps)
        print(
            f"{r['name']}: {r['releases']} releases, budget ε = {r['budget']:.4f}, "
            f"{r['band']} band steps (refused at {r['refused_at']}); CPU ms per band step, "
            f"median: ours {1e3 * r['ours']:.2f}, from scratch {1e3 * r['scratch']:.2f} "
            f"({r['scratch_n']} steps), anchor (dp-accounting PLD compose + "
            f"get_epsilon_for_delta, event PLD built once) {1e3 * r['anchor']:.2f}, "
            f"PLDAccountant compose + get_epsilon {1e3 * r['plain']:.2f} ({r['plain_n']} "
            f"steps); ratio ours / "
            f"anchor {r['ours'] / r['anchor']:.3f}, ours / PLDAccountant "
            f"{r['ours'] / r['plain']:.3f}, from scratch / anchor "
            f"{r['scratch'] / r['anchor']:.2f}; decisions equal to the from-scratch "
            f"check {r['agree']}/{r['band']}; ε at the last band step: ours "
            f"{r['ours_epsilon']:.6f}, dp-accounting {r['anchor_epsilon']:.6f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
