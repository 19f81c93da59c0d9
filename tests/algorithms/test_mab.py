"""Tests of the shared Bernoulli MAB environment and its counter-based reward table."""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.algorithms.environments.bernoulli import (
    BernoulliMAB,
    heterogeneous_bandit,
    homogeneous_bandit,
)
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats


@pytest.fixture
def env() -> BernoulliMAB:
    return BernoulliMAB([[0.9, 0.6, 0.1], [0.2, 0.5, 0.8]])


def test_global_means_best_arm_and_gaps(env: BernoulliMAB) -> None:
    np.testing.assert_allclose(env.global_means, [0.55, 0.55, 0.45])
    assert env.best_arm == 0  # lowest index on ties
    np.testing.assert_allclose(env.gaps, [0.0, 0.0, 0.1])
    np.testing.assert_array_equal(env.local_best_arms, [0, 2])


def test_pseudo_regret_global_and_local(env: BernoulliMAB) -> None:
    arms = np.array([[1, 1], [2, 2]])
    np.testing.assert_allclose(env.pseudo_regret(arms), [[0.0, 0.0], [0.1, 0.1]])
    np.testing.assert_allclose(env.pseudo_regret(arms, "local"), [[0.3, 0.3], [0.8, 0.0]])
    with pytest.raises(ValueError, match="n_agents"):
        env.pseudo_regret(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="reference"):
        env.pseudo_regret(arms, "other")  # type: ignore[arg-type]


@given(
    seed=st.integers(0, 2**32 - 1),
    trial=st.integers(0, 10**6),
    agent=st.integers(0, 1),
    arm=st.integers(0, 2),
    pull=st.integers(0, 10**9),
)
def test_entries_do_not_depend_on_the_read_pattern(seed, trial, agent, arm, pull) -> None:
    table = BernoulliMAB([[0.9, 0.6, 0.1], [0.2, 0.5, 0.8]]).reward_table(seed)
    block = table.rewards(trial, np.arange(2)[:, None], np.arange(3)[None, :], pull)
    assert block.shape == (2, 3)
    assert table.rewards(trial, agent, arm, pull) == block[agent, arm]
    assert set(np.unique(block)) <= {0.0, 1.0}


def test_same_seed_same_table_other_seed_other_table(env: BernoulliMAB) -> None:
    pulls = np.arange(5000)
    a = env.reward_table(7).rewards(0, 0, 1, pulls)
    np.testing.assert_array_equal(
        a, env.reward_table(np.random.SeedSequence(7)).rewards(0, 0, 1, pulls)
    )
    b = env.reward_table(8).rewards(0, 0, 1, pulls)
    assert np.mean(a != b) > 0.3  # independent tables disagree on ~48% of entries


@pytest.mark.statistical
def test_rewards_have_the_declared_means_and_are_uncorrelated(env: BernoulliMAB) -> None:
    """Chi-square goodness of fit per (agent, arm) at level 1e-3 with Bonferroni over 6
    cells: a false alarm has probability below 1e-3 (seed pinned)."""
    table = env.reward_table(2024)
    pulls = np.arange(20_000)
    rows = table.rewards(
        np.arange(5)[:, None, None, None],
        np.arange(2)[None, :, None, None],
        np.arange(3)[None, None, :, None],
        pulls,
    )
    counts = rows.sum(axis=(0, 3))
    n = rows.shape[0] * rows.shape[3]
    for (agent, arm), ones in np.ndenumerate(counts):
        p = stats.binomtest(int(ones), n, env.arm_means[agent, arm]).pvalue
        assert p > 1e-3 / 6, (agent, arm, ones / n)
    # consecutive pulls are independent: lag-1 correlation of uniforms ~ N(0, 1/n)
    u = table.uniforms(0, 0, 0, np.arange(200_000))
    r = np.corrcoef(u[:-1], u[1:])[0, 1]
    assert abs(r) < 4.0 / np.sqrt(u.size)


def test_override_changes_exactly_one_entry(env: BernoulliMAB) -> None:
    table = env.reward_table(3)
    index = (
        np.arange(4)[:, None, None, None],
        np.arange(2)[None, :, None, None],
        np.arange(3)[None, None, :, None],
        np.arange(50)[None, None, None, :],
    )
    base = table.rewards(*index)
    flipped = 1.0 - base[0, 1, 2, 7]
    every_trial = table.with_override(agent=1, arm=2, pull=7, value=flipped)
    diff = every_trial.rewards(*index) != base
    assert diff.sum() == int(np.sum(base[:, 1, 2, 7] != flipped))
    assert diff[:, 1, 2, 7].sum() == diff.sum()
    one_trial = table.with_override(agent=1, arm=2, pull=7, value=flipped, trial=0)
    diff = one_trial.rewards(*index) != base
    assert diff.sum() == 1 and diff[0, 1, 2, 7]
    assert table.overrides == ()  # the original is unchanged


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"agent": 2, "arm": 0, "pull": 0, "value": 1.0}, "agent"),
        ({"agent": 0, "arm": 3, "pull": 0, "value": 1.0}, "arm"),
        ({"agent": 0, "arm": 0, "pull": -1, "value": 1.0}, "pull"),
        ({"agent": 0, "arm": 0, "pull": 0, "value": 1.5}, "value"),
        ({"agent": 0, "arm": 0, "pull": 0, "value": float("nan")}, "value"),
    ],
)
def test_override_rejects_bad_entries(env: BernoulliMAB, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        env.reward_table(0).with_override(**kwargs)


def test_bad_indices_and_means_are_rejected(env: BernoulliMAB) -> None:
    table = env.reward_table(0)
    with pytest.raises(ValueError, match="agent"):
        table.rewards(0, 2, 0, 0)
    with pytest.raises(ValueError, match="pull"):
        table.rewards(0, 0, 0, -1)
    with pytest.raises(TypeError, match="integer"):
        table.rewards(0, 0, 0, 1.5)
    for bad in ([[1.2, 0.1]], [[np.nan, 0.1]], [0.5, 0.1], np.zeros((0, 2))):
        with pytest.raises(ValueError, match="arm_means"):
            BernoulliMAB(bad)


def test_homogeneous_bandit_shares_means_within_range() -> None:
    env = homogeneous_bandit(4, 6, np.random.default_rng(0), mean_range=(0.2, 0.4))
    assert env.arm_means.shape == (4, 6)
    assert np.all(env.arm_means == env.arm_means[0])
    assert env.arm_means.min() >= 0.2 and env.arm_means.max() <= 0.4
    with pytest.raises(ValueError, match="mean_range"):
        homogeneous_bandit(4, 6, np.random.default_rng(0), mean_range=(0.5, 0.4))


def test_heterogeneous_bandit_has_local_global_mismatch() -> None:
    env = heterogeneous_bandit(10, 5, np.random.default_rng(1), min_mismatch=3)
    assert np.sum(env.local_best_arms != env.best_arm) >= 3
    with pytest.raises(ValueError, match="min_mismatch"):
        heterogeneous_bandit(2, 5, np.random.default_rng(1), min_mismatch=3)
    with pytest.raises(ValueError, match="min_mismatch"):
        heterogeneous_bandit(2, 1, np.random.default_rng(1), min_mismatch=1)
