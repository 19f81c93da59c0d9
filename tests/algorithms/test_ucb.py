"""Tests of UCB1 and DP-UCB-INT run per agent (Dubey & Pentland's baselines)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.dubey_aamas.baselines import (
    argmax_random_ties,
    interval_guarantee,
    read_rewards,
    reward_table_for,
    run_dp_ucb_int,
    run_ucb1,
)
from fedpriv.algorithms.dubey_aamas.kernels import BufferedRewards, argmax_ties_arm_major
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.statistical
def test_ucb1_reference_regret_on_two_arms():
    """Done-when: UCB1 on (0.9, 0.6), T = 1000, mean pseudo-regret 23.3 ± 0.5, 2000 trials.

    External reference number (issue 5). Our definition: one initial pull per arm, then
    ``x̄_k + sqrt(2 ln t / n_k)`` with ``t`` the 1-based index of the current round.
    The standard error of the mean over 2000 trials is about 0.13, so if the true mean
    is 23.3 the tolerance of 0.5 (3.8 standard errors) fails with probability about
    1.5e-4; the seed is pinned.
    """
    env = BernoulliMAB([[0.9, 0.6]])
    run = run_ucb1(env, horizon=1000, n_trials=2000, seed=20240605)
    final = run.cumulative_regret[:, 0, -1]
    assert abs(final.mean() - 23.3) <= 0.5


def test_ucb1_matches_a_scalar_reference_loop():
    env = BernoulliMAB([[0.55, 0.5, 0.45]])
    run = run_ucb1(env, horizon=300, n_trials=4, seed=7)
    table = reward_table_for(env, np.random.SeedSequence(7))
    for b in range(4):
        sums, counts = np.zeros(3), np.zeros(3, dtype=int)
        for t in range(1, 301):
            if t <= 3:
                arm = t - 1
            else:
                index = sums / counts + np.sqrt(2 * math.log(t) / counts)
                if np.sum(index == index.max()) > 1:
                    break  # the batch breaks ties with its own uniforms
                arm = int(np.argmax(index))
            assert run.actions[b, 0, t - 1] == arm
            reward = float(table.rewards(b, 0, arm, counts[arm]))
            assert run.rewards[b, 0, t - 1] == reward
            sums[arm] += reward
            counts[arm] += 1


def test_ucb1_log_time_variant_and_bad_input():
    env = BernoulliMAB([[0.9, 0.6]])
    run = run_ucb1(env, horizon=50, n_trials=2, seed=0, log_time="pulls")
    assert run.actions.shape == (2, 1, 50)
    with pytest.raises(ValueError, match="`log_time`"):
        run_ucb1(env, horizon=50, log_time="t")
    with pytest.raises(ValueError, match="`horizon` must be >= 1"):
        run_ucb1(env, horizon=0)


def test_dp_ucb_int_releases_once_per_interval_and_is_accounted():
    env = BernoulliMAB(np.tile([0.7, 0.4, 0.2], (3, 1)))
    run = run_dp_ucb_int(env, horizon=200, epsilon=0.2, theta=1.5, n_trials=2, seed=5)
    f = 5
    assert (run.actions[:, :, : 3 * f] == np.tile(np.arange(3), f)).all()
    counts = np.stack([(run.actions == k).sum(axis=-1) for k in range(3)], axis=-1)
    np.testing.assert_array_equal(run.release_counts, counts // f)
    draws = run.accountant.ledger.draws.groupby(["trial", "agent", "arm"]).size()
    assert int(draws.sum()) == int((counts // f).sum())
    g = interval_guarantee(
        run.accountant, epsilon=0.2, horizon=200, theta=1.5, rule="decaying", target_delta=1e-5
    )
    # ε_n = n^(-θ/2) per release, summed over n = 5, 10, ..., 200 (pure, worst record).
    expected = sum((5 * j) ** -0.75 for j in range(1, 41))
    assert g["accountant"]["pure_epsilon"] == pytest.approx(expected, rel=1e-12)
    assert g["claimed"]["per_message_epsilon"] == pytest.approx(5**-0.75, rel=1e-12)
    assert g["accountant"]["epsilon"] <= g["claimed"]["homogeneous_epsilon"]


def test_dp_ucb_int_fixed_rule_spends_epsilon_per_release():
    env = BernoulliMAB([[0.7, 0.4]])
    run = run_dp_ucb_int(
        env, horizon=40, epsilon=0.5, rule="fixed", theta=None, index_update="every_round", seed=1
    )
    # f = 2; 20 releases per stream at most, each exactly ε = 0.5.
    assert run.accountant.get_epsilon(0.0) == pytest.approx(0.5 * 20, rel=1e-12)
    ledger = run.accountant.ledger.draws
    np.testing.assert_allclose(ledger["epsilon"], 0.5, rtol=1e-12)


def test_dp_ucb_int_bad_input():
    env = BernoulliMAB([[0.7, 0.4]])
    with pytest.raises(ValueError, match="`theta` must be in"):
        run_dp_ucb_int(env, horizon=40, epsilon=0.5, theta=2.5)
    with pytest.raises(ValueError, match="`theta` is required"):
        run_dp_ucb_int(env, horizon=40, epsilon=0.5, theta=None)
    with pytest.raises(ValueError, match="`epsilon` must be in"):
        run_dp_ucb_int(env, horizon=40, epsilon=-1.0)
    with pytest.raises(ValueError, match="`index_update`"):
        run_dp_ucb_int(env, horizon=40, epsilon=0.5, index_update="never")


@given(st.integers(1, 12), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_arm_major_argmax_equals_the_reference_tie_breaking(n_arms, n, seed):
    """``argmax_ties_arm_major(index.T)`` reproduces ``argmax_random_ties`` exactly."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, 3, size=(n, n_arms)).astype(np.float64)  # many ties
    index[rng.random(index.shape) < 0.1] = np.inf
    index[rng.random(index.shape) < 0.03] = np.nan
    u = rng.random(n)
    expected = argmax_random_ties(index, u)
    got = argmax_ties_arm_major(np.ascontiguousarray(index.T), u)
    np.testing.assert_array_equal(got, expected)


def test_buffered_rewards_read_the_table_entries_of_a_per_round_read():
    env = BernoulliMAB(np.random.default_rng(3).uniform(size=(3, 4)))
    table = reward_table_for(env, np.random.SeedSequence(11)).with_override(
        agent=1, arm=2, pull=5, value=0.25
    )
    n_trials, horizon = 2, 70
    reader = BufferedRewards(table, n_trials, 3, 4, horizon, window=8)
    counts = np.zeros(4 * n_trials * 3, dtype=np.int64)
    rows = np.arange(n_trials * 3)
    rng = np.random.default_rng(0)
    for _ in range(horizon):
        arm = rng.choice(4, size=rows.size, p=[0.1, 0.1, 0.7, 0.1])
        cell = arm * rows.size + rows
        pulls = counts[cell]
        got = reader.read(cell, pulls, counts)
        expected = read_rewards(table, arm.reshape(n_trials, 3), pulls.reshape(n_trials, 3))
        np.testing.assert_array_equal(got, expected.ravel())
        counts[cell] += 1
    with pytest.raises(ValueError, match="power of two"):
        BufferedRewards(table, 1, 3, 4, 10, window=6)
