"""IntervalMeanRelease draws each stream's noise from its own (trial, agent) generator."""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.seeding import Stream, stream_rngs
from fedpriv.privacy import Accountant
from fedpriv.privacy.mechanisms.interval_mechanism import IntervalMeanRelease


def test_release_draws_stream_noise_from_its_own_generator_in_order():
    """Rows released in any order, over several chunks: release ``i`` of (trial, agent)
    adds ``scale * unit_i`` with ``unit_i`` the ``i``-th Laplace(0, 1) draw of that
    pair's generator (pre-drawn in chunks, which does not change the values)."""
    n_trials, n_agents, n_arms, chunk = 5, 3, 2, 4
    root = np.random.SeedSequence(21)
    rngs = stream_rngs(root, n_trials=n_trials, n_agents=n_agents, stream=Stream.NOISE)
    reference = stream_rngs(root, n_trials=n_trials, n_agents=n_agents, stream=Stream.NOISE)
    units = {(b, v): reference[b, v].laplace(0.0, 1.0, size=3 * chunk) for b, v in np.ndindex(5, 3)}
    mechanism = IntervalMeanRelease(
        (n_trials, n_agents, n_arms),
        epsilon=0.5,
        horizon=200,
        theta=1.1,
        rule="decaying",
        accountant=Accountant(disjoint=("trial", "agent", "arm")),
        rngs=rngs,
        chunk=chunk,
    )
    order = np.random.default_rng(0)
    taken = {key: 0 for key in units}
    for step in range(1, 3 * chunk):
        rows = order.permutation(n_trials * n_agents)[: order.integers(1, 16)]
        trial, agent = rows // n_agents, rows % n_agents
        counts = np.full(rows.size, 2 * step, dtype=np.int64)  # release point j = step
        sums = order.uniform(0, 2 * step, rows.size)
        got = mechanism.release(trial, agent, rows % n_arms, sums, counts)
        scale = mechanism.scales[step - 1]
        for i, key in enumerate(zip(trial.tolist(), agent.tolist())):
            expected = sums[i] / counts[i] + scale * units[key][taken[key]]
            taken[key] += 1
            assert got[i] == expected
