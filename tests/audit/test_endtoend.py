"""The end-to-end audit core: event search on a pilot, confirmation on fresh samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, confirm_event, search_and_confirm
from fedpriv.audit.engine.neighbors import SingleWorldTable, table_reward_pair


def _deterministic(world: int, n: int, seed) -> np.ndarray:
    return np.full(n, 7.0 if world == 0 else 8.0)


def _expected_deterministic_bound(n: int, confidence: float, delta: float) -> float:
    """Clopper–Pearson for counts n/n vs 0/n at level (1 - confidence)/4 (2 tests)."""
    a = (1.0 - confidence) / 4.0
    p_low = a ** (1.0 / n)  # Beta(n, 1).ppf(a)
    q_up = 1.0 - a ** (1.0 / n)  # Beta(1, n).isf(a)
    return math.log((p_low - delta) / q_up)


@pytest.mark.parametrize("delta", [0.0, 0.1])
def test_a_deterministic_difference_gives_the_clopper_pearson_ceiling(delta):
    budget = AuditBudget(pilot_samples=20, samples=500)
    result = search_and_confirm(
        {"pair": _deterministic}, budget=budget, seed=0, delta=delta, channel="test"
    )
    expected = _expected_deterministic_bound(500, 0.95, delta)
    assert result.bound.epsilon_lower_bound == pytest.approx(expected, rel=1e-9)
    assert result.bound.delta == delta and result.bound.n_samples == 500
    assert result.event in (
        "observable[0] == 7",
        "observable[0] == 8",
        "observable[0] <= 7",
        "observable[0] >= 8",
    )


def test_confirmation_never_reuses_pilot_samples():
    seen = []

    def sample(world, n, seed):
        seen.append((world, n, tuple(seed.spawn_key)))
        return np.random.default_rng(seed).random(n)

    search_and_confirm(
        {"pair": sample},
        budget=AuditBudget(pilot_samples=30, samples=40),
        seed=3,
        delta=0.0,
        channel="test",
    )
    pilot = {key for world, n, key in seen if n == 30}
    confirm = {key for world, n, key in seen if n == 40}
    assert len(pilot) == 2 and len(confirm) == 2 and not pilot & confirm


@pytest.mark.statistical
def test_false_alarm_rate_on_identical_worlds():
    """Identical worlds (true ε = 0): a positive bound is a confidence failure.

    At 95% family-wise confidence each audit fails with probability <= 0.05; over 100
    pinned seeds the test fails only if more than 20 do: P(Bin(100, 0.05) > 20) < 1e-6.
    """

    def sample(world, n, seed):
        rng = np.random.default_rng(seed)
        return np.column_stack([rng.binomial(3, 0.4, n), rng.laplace(size=n)])

    budget = AuditBudget(pilot_samples=200, samples=400)
    alarms = sum(
        search_and_confirm(
            {"pair": sample}, budget=budget, seed=s, delta=0.0, channel="test"
        ).bound.epsilon_lower_bound
        > 0
        for s in range(100)
    )
    assert alarms <= 20


def test_confirm_event_is_symmetric_in_the_worlds():
    ones, zeros = np.ones(300), np.zeros(300)
    forward = confirm_event(ones, zeros, confidence=0.9, delta=0.0)
    backward = confirm_event(zeros, ones, confidence=0.9, delta=0.0)
    assert forward.epsilon_lower_bound == pytest.approx(backward.epsilon_lower_bound)
    assert {forward.direction, backward.direction} == {"D>D'", "D'>D"}


def test_budget_validation_names_the_parameter():
    with pytest.raises(ValueError, match="samples"):
        AuditBudget(samples=0)
    with pytest.raises(ValueError, match="confidence"):
        AuditBudget(confidence=1.0)
    with pytest.raises(ValueError, match="samplers"):
        search_and_confirm({}, budget=AuditBudget(), seed=0, delta=0.0, channel="x")


def test_child_seed_addresses_are_fixed():
    a = child_seed(5, 1, 2)
    b = child_seed(np.random.SeedSequence(5), 1, 2)
    assert a.entropy == b.entropy and a.spawn_key == b.spawn_key == (1, 2)


def test_table_pair_differs_in_one_entry_of_one_world():
    from fedpriv.algorithms.environments.bernoulli import BernoulliMAB

    table = BernoulliMAB([[0.5, 0.5], [0.5, 0.5]]).reward_table(11)
    d, d_prime = table_reward_pair(table, agent=1, arm=0, pull=3, world_trial=4)
    trials = np.arange(6)[:, None, None, None]
    agents = np.arange(2)[None, :, None, None]
    arms = np.arange(2)[None, None, :, None]
    pulls = np.arange(8)[None, None, None, :]
    rd = d.rewards(trials, agents, arms, pulls)
    rdp = d_prime.rewards(trials, agents, arms, pulls)
    differ = np.argwhere(rd != rdp)
    assert {tuple(x[1:]) for x in differ} == {(1, 0, 3)}
    assert len(differ) == 6  # the same entry in every trial (one dataset per sample)
    # every trial reads world 4 of the table
    assert np.array_equal(rd[0], rd[5])
    assert np.array_equal(
        SingleWorldTable(table, 4).rewards(0, 0, 1, np.arange(8)),
        table.rewards(4, 0, 1, np.arange(8)),
    )
    with pytest.raises(ValueError, match="differ"):
        table_reward_pair(table, agent=0, arm=0, pull=0, value_d=1.0, value_d_prime=1.0)
