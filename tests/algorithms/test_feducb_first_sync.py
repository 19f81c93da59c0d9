"""Centralized FedUCB stopped at its first sync (algorithms/feducb/first_sync.py).

Every test here is deterministic: no noise is drawn before a first sync, and the full
runs' noise (seeded) only acts after it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit, LinearBanditTables
from fedpriv.algorithms.feducb.centralized import run_feducb
from fedpriv.algorithms.feducb.first_sync import first_sync_rounds
from fedpriv.privacy.calibrations import feducb_privatizer
from hypothesis import given, settings
from hypothesis import strategies as st

_SPEC = LinearBandit(n_agents=3, n_arms=4, dim=2)


def _full_first(tables, **options) -> list[int]:
    run = run_feducb(tables, record=True, seed=3, **options)
    return [int(row[0]) if row.size else tables.horizon for row in run.transcript.sync_times]


def _prefix(tables, rounds: int) -> LinearBanditTables:
    block = tables.block(0, rounds)
    return LinearBanditTables.from_arrays(tables.spec, block.contexts, block.rewards, tables.theta)


@settings(max_examples=12, deadline=None)
@given(
    epsilon=st.sampled_from([0.5, 1.0, 1e3, 1e5]),
    threshold=st.floats(0.0, 120.0),
    seed=st.integers(0, 2**16),
    cut=st.integers(1, 48),
)
def test_truncated_runs_give_the_full_runs_first_sync(epsilon, threshold, seed, cut):
    tables = _SPEC.sample(seed, n_trials=3, horizon=48)
    full = _full_first(tables, epsilon=epsilon, delta=0.1, threshold=threshold)
    same = first_sync_rounds(tables, epsilon=epsilon, delta=0.1, threshold=threshold)
    assert same.rounds.tolist() == full
    # only the first `cut` rounds, with the full run's T for the calibration
    short = first_sync_rounds(
        _prefix(tables, cut), epsilon=epsilon, delta=0.1, threshold=threshold, horizon=48
    )
    assert short.rounds.tolist() == [min(f, cut) for f in full]


def test_trials_that_sync_at_different_rounds_match_the_full_run():
    # trial 1's leading agent has its decision set at round tau scaled down, with D
    # between the two values: trial 0 syncs at tau, trial 1 later, in the same batch
    tables = _SPEC.sample(11, n_trials=2, horizon=40)
    values = first_sync_rounds(tables, epsilon=50.0, delta=0.1, threshold=math.inf).statistic
    tau = 12
    agent = int(np.argmax(values[0, :, tau]))
    block = tables.block(tau, tau + 1)
    changed = tables.substitute(
        agent=agent, t=tau, trial=1, contexts=block.contexts[1, agent, 0] * 0.05
    )
    lowered = (
        first_sync_rounds(changed, epsilon=50.0, delta=0.1, threshold=math.inf)
        .statistic[1, :, tau]
        .max()
    )
    assert lowered < values[0, agent, tau]
    threshold = 0.5 * (lowered + values[0, agent, tau])
    options = {"epsilon": 50.0, "delta": 0.1, "threshold": threshold}
    full = _full_first(changed, **options)
    assert full[0] == tau and full[1] > tau
    assert first_sync_rounds(changed, **options).rounds.tolist() == full


def test_the_statistic_is_the_test_the_first_sync_answers():
    tables = _SPEC.sample(2, n_trials=2, horizon=40)
    result = first_sync_rounds(tables, epsilon=1.0, delta=0.1, threshold=30.0)
    for j, first in enumerate(result.rounds):
        assert result.statistic[j, :, first].max() >= result.threshold
        assert np.all(result.statistic[j, :, :first] < result.threshold)
        assert np.all(np.isnan(result.statistic[j, :, first + 1 :]))


def test_the_calibration_is_the_papers_at_the_given_horizon():
    tables = _SPEC.sample(0, n_trials=1, horizon=4)
    cal = first_sync_rounds(
        tables, epsilon=2.0, delta=0.1, horizon=10**7, threshold=math.inf
    ).calibration
    paper = feducb_privatizer(2.0, 0.1, horizon=10**7, n_agents=3, dim=2)
    assert cal.rho_min == pytest.approx(paper.rho_min, rel=1e-12)
    assert cal.noise_stddev == pytest.approx(paper.noise_stddev, rel=1e-12)
    short = first_sync_rounds(tables, epsilon=2.0, delta=0.1, threshold=math.inf).calibration
    assert short.rho_min < cal.rho_min  # T enters the calibration


def test_bad_input_is_rejected_naming_the_parameter():
    tables = _SPEC.sample(0, n_trials=1, horizon=8)
    with pytest.raises(ValueError, match="horizon"):
        first_sync_rounds(tables, epsilon=1.0, delta=0.1, horizon=7)
    with pytest.raises(ValueError, match="threshold"):
        first_sync_rounds(tables, epsilon=1.0, delta=0.1, threshold=-1.0)
    with pytest.raises(TypeError, match="tables"):
        first_sync_rounds(tables.block(0, 8), epsilon=1.0, delta=0.1)
