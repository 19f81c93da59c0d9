"""Issue 36, item 4: disjoint cells with the same releases are priced once.

The accountant composes each distinct cell content (how many times each distinct event
was charged to the cell, the multiset of ``(event, count)``) once: the count rows are
made unique (``_compose_cells``) and the routes are cached per normalized cell. The
oracle here is the per-cell computation written out: every cell of the ledger built
by hand from the charges, each priced by ``compose_routes`` / ``pld_lower_bound`` /
``compose_delta``, the worst cell taken (parallel composition). The numbers must be
exactly equal.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.routes import compose_delta, compose_routes, pld_lower_bound
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EVENTS = [
    events.Laplace(scale=2.0),
    events.Laplace(scale=5.0),
    events.Gaussian(noise_multiplier=3.0),
    events.RandomizedResponse(epsilon=0.3),
    events.SelfComposed(event=events.Laplace(scale=8.0), count=3),
]

#: A schedule: the releases one agent makes, in order.
_SCHEDULE = st.lists(st.sampled_from(range(len(_EVENTS))), min_size=1, max_size=6)


def _oracle_cells(charges: list[tuple[int, int]]) -> list[list[tuple[object, int]]]:
    """Every agent's cell, one per agent (no dedup), its pairs in the ledger's order of
    first appearance of each event (the accountant's event ids: the routes sum in the
    cell's order, so another order can move the last bits)."""
    first: dict[int, int] = {}
    per_agent: dict[int, dict[int, int]] = {}
    for agent, event_index in charges:
        first.setdefault(event_index, len(first))
        counts = per_agent.setdefault(agent, {})
        counts[event_index] = counts.get(event_index, 0) + 1
    return [
        [(_EVENTS[j], counts[j]) for j in sorted(counts, key=first.__getitem__)]
        for counts in per_agent.values()
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schedules=st.lists(_SCHEDULE, min_size=1, max_size=3),
    copies=st.integers(min_value=1, max_value=12),
    delta=st.sampled_from([0.0, 1e-6, 1e-3]),
    epsilon=st.sampled_from([0.5, 2.0]),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_identical_cells_priced_as_the_per_cell_oracle(schedules, copies, delta, epsilon, seed):
    """Many agents run each schedule (identical cells), interleaved in a random order:
    ε, the lower bound and δ equal the worst of the per-cell computations exactly."""
    rng = np.random.default_rng(seed)
    agents = [(a, schedule) for a, schedule in enumerate(schedules * copies)]
    charges = [(a, j) for a, schedule in agents for j in schedule]
    order = rng.permutation(len(charges))
    charges = [charges[i] for i in order]
    acc = Accountant(disjoint=["agent"])
    for agent, j in charges:
        acc.spend(_EVENTS[j], key={"agent": agent})
    cells = _oracle_cells(charges)
    assert len(acc.ledger.cells()) <= len(schedules)  # each distinct content once
    routes = [
        compose_routes(cell, delta, pld_discretization=acc.routes.pld_discretization)
        for cell in cells
    ]
    expected = {name: max(r[name] for r in routes) for name in routes[0]}
    assert acc.routes.epsilons(delta) == expected
    assert acc.brackets.lower_bound(delta) == max(
        pld_lower_bound(cell, delta, pld_discretization=acc.routes.pld_discretization)
        for cell in cells
    )
    assert acc.get_delta(epsilon) == max(
        compose_delta(cell, epsilon, pld_discretization=acc.routes.pld_discretization)
        for cell in cells
    )
