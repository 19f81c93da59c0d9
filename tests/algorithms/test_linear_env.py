"""The federated linear bandit of FedUCB's experiments (algorithms/environments/linear.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import CHUNK_ROUNDS, LinearBandit, LinearBanditTables
from hypothesis import given
from hypothesis import strategies as st


def _spec(**kwargs) -> LinearBandit:
    base = {"n_agents": 3, "n_arms": 5, "dim": 4}
    base.update(kwargs)
    return LinearBandit(**base)


@given(
    dim=st.integers(1, 6),
    n_arms=st.integers(2, 7),
    seed=st.integers(0, 2**32),
    reward=st.sampled_from(["bernoulli", "beta"]),
)
def test_decision_sets_follow_the_paper_bands(dim, n_arms, seed, reward):
    # §4.4: K-1 actions with <x,θ*> in [0.5, 0.6], the best in [0.7, 0.8], ‖x‖ <= L = 1.
    spec = LinearBandit(n_agents=2, n_arms=n_arms, dim=dim, reward=reward)
    tables = spec.sample(seed, n_trials=2, horizon=7)
    block = tables.block(0, 7)
    assert block.contexts.shape == (2, 2, 7, n_arms, dim)
    np.testing.assert_allclose(np.linalg.norm(tables.theta, axis=1), 1.0, rtol=1e-12)
    assert np.all(np.linalg.norm(block.contexts, axis=-1) <= 1.0 + 1e-12)
    inner = np.einsum("jitkd,jd->jitk", block.contexts, tables.theta)
    np.testing.assert_allclose(block.means, inner, atol=1e-12)
    ordered = np.sort(block.means, axis=-1)
    assert np.all((ordered[..., -1] >= 0.7 - 1e-9) & (ordered[..., -1] <= 0.8 + 1e-9))
    assert np.all((ordered[..., :-1] >= 0.5 - 1e-9) & (ordered[..., :-1] <= 0.6 + 1e-9))
    if reward == "bernoulli":
        assert set(np.unique(block.rewards)) <= {0.0, 1.0}
    else:
        assert np.all((block.rewards >= 0.0) & (block.rewards <= 1.0))


def test_values_depend_only_on_seed_and_indices():
    spec = _spec()
    horizon = 2 * CHUNK_ROUNDS + 5
    whole = spec.sample(7, n_trials=3, horizon=horizon).block(0, horizon)
    pieces = spec.sample(7, n_trials=3, horizon=horizon)
    parts = [pieces.block(a, b) for a, b in ((0, 3), (3, 40), (40, horizon))]
    np.testing.assert_array_equal(
        np.concatenate([p.contexts for p in parts], axis=2), whole.contexts
    )
    np.testing.assert_array_equal(np.concatenate([p.rewards for p in parts], axis=2), whole.rewards)
    # reading backwards replays the streams
    np.testing.assert_array_equal(pieces.block(1, 2).contexts, whole.contexts[:, :, 1:2])
    # fewer trials, a shorter horizon: the same values at the same indices
    short = spec.sample(7, n_trials=1, horizon=10).block(0, 10)
    np.testing.assert_array_equal(short.contexts, whole.contexts[:1, :, :10])
    np.testing.assert_array_equal(short.rewards, whole.rewards[:1, :, :10])
    other = spec.sample(8, n_trials=1, horizon=10).block(0, 10)
    assert not np.array_equal(other.contexts, short.contexts)


def test_shared_users_give_every_agent_the_same_user():
    # footnote 4: one user at every agent at a round.
    tables = _spec(shared_users=True).sample(0, n_trials=2, horizon=6)
    block = tables.block(0, 6)
    for i in range(1, 3):
        np.testing.assert_array_equal(block.contexts[:, i], block.contexts[:, 0])
        np.testing.assert_array_equal(block.rewards[:, i], block.rewards[:, 0])
    independent = _spec().sample(0, n_trials=2, horizon=6).block(0, 6)
    assert not np.array_equal(independent.contexts[:, 1], independent.contexts[:, 0])


def test_substitution_changes_one_entry_only():
    tables = _spec().sample(3, n_trials=2, horizon=40)
    base = tables.block(0, 40)
    new_set = np.zeros((5, 4))
    new_set[:, 0] = 1.0
    neighbor = tables.substitute(agent=1, t=33, contexts=new_set, rewards=np.ones(5), trial=0)
    changed = neighbor.block(0, 40)
    np.testing.assert_array_equal(changed.contexts[0, 1, 33], new_set)
    np.testing.assert_array_equal(changed.rewards[0, 1, 33], np.ones(5))
    diff = np.any(changed.contexts != base.contexts, axis=(-1, -2))
    assert diff.sum() == 1 and diff[0, 1, 33]
    np.testing.assert_array_equal(tables.block(0, 40).contexts, base.contexts)  # unchanged
    # one (context, reward) pair of one action
    pair = tables.substitute(agent=0, t=2, arm=3, contexts=np.full(4, 0.5), rewards=0.0)
    block = pair.block(0, 5)
    np.testing.assert_array_equal(block.contexts[:, 0, 2, 3], np.full((2, 4), 0.5))
    np.testing.assert_array_equal(block.contexts[:, 0, 2, :3], base.contexts[:, 0, 2, :3])
    # a user at every agent
    everyone = tables.substitute(agent=None, t=0, rewards=np.zeros(5)).block(0, 1)
    assert np.all(everyone.rewards == 0.0)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="`dim` must be >= 1"):
        LinearBandit(n_agents=2, n_arms=3, dim=0)
    with pytest.raises(ValueError, match="`n_arms` must be >= 2"):
        LinearBandit(n_agents=2, n_arms=1, dim=2)
    with pytest.raises(ValueError, match="`reward` must be one of"):
        _spec(reward="gaussian")
    with pytest.raises(ValueError, match="`best_band` must lie above"):
        _spec(best_band=(0.5, 0.55), suboptimal_band=(0.5, 0.6))
    with pytest.raises(ValueError, match="unreachable"):
        _spec(bound_theta=0.5)
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\) for beta"):
        _spec(reward="beta", best_band=(0.7, 1.0))
    tables = _spec().sample(0, n_trials=1, horizon=4)
    with pytest.raises(ValueError, match="must be finite"):
        tables.substitute(agent=0, t=0, contexts=np.full((5, 4), np.nan))
    with pytest.raises(ValueError, match="must have norm <= L"):
        tables.substitute(agent=0, t=0, contexts=np.full((5, 4), 1.0))
    with pytest.raises(ValueError, match=r"\|y\| <= B"):
        tables.substitute(agent=0, t=0, rewards=np.full(5, 2.0))
    with pytest.raises(ValueError, match="`t` must be < horizon"):
        tables.substitute(agent=0, t=4, rewards=np.zeros(5))
    with pytest.raises(ValueError, match="`agent` must be < n_agents"):
        tables.substitute(agent=3, t=0, rewards=np.zeros(5))
    with pytest.raises(ValueError, match="`stop` must be <= horizon"):
        tables.block(0, 5)
    with pytest.raises(ValueError, match="`horizon` must be >= 1"):
        _spec().sample(0, n_trials=1, horizon=0)


def test_clipping_when_asked():
    spec = _spec(out_of_bounds="clip")
    tables = spec.sample(0, n_trials=1, horizon=3)
    clipped = tables.substitute(
        agent=0, t=1, contexts=np.full((5, 4), 1.0), rewards=np.full(5, 3.0)
    )
    block = clipped.block(0, 3)
    np.testing.assert_allclose(np.linalg.norm(block.contexts[0, 0, 1], axis=-1), 1.0)
    np.testing.assert_array_equal(block.rewards[0, 0, 1], np.ones(5))


def test_from_arrays_validates():
    spec = _spec(n_agents=1, n_arms=2, dim=2)
    contexts = np.zeros((1, 1, 3, 2, 2))
    rewards = np.zeros((1, 1, 3, 2))
    theta = np.array([[1.0, 0.0]])
    tables = LinearBanditTables.from_arrays(spec, contexts, rewards, theta)
    assert tables.block(0, 3).contexts.shape == (1, 1, 3, 2, 2)
    bad = contexts.copy()
    bad[0, 0, 0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="must be finite"):
        LinearBanditTables.from_arrays(spec, bad, rewards, theta)
    with pytest.raises(ValueError, match="`rewards` must have shape"):
        LinearBanditTables.from_arrays(spec, contexts, rewards[..., :1], theta)


@pytest.mark.statistical
@pytest.mark.parametrize("reward", ["bernoulli", "beta"])
def test_rewards_have_mean_inner_product(reward):
    """E[y] = ⟨x, θ*⟩ for both reward models.

    n = 2 trials × 2 agents × 320 rounds × 20 actions = 25,600 independent rewards in
    [0, 1]. Hoeffding: P(|mean(y - μ)| > t) <= 2 exp(-2 n t²) = 1e-6 at
    t = sqrt(ln(2e6) / (2n)) ≈ 0.0168, the false-alarm rate of this test.
    """
    spec = LinearBandit(n_agents=2, n_arms=20, dim=5, reward=reward)
    block = spec.sample(11, n_trials=2, horizon=320).block(0, 320)
    n = block.rewards.size
    tolerance = math.sqrt(math.log(2e6) / (2 * n))
    assert abs(float(np.mean(block.rewards - block.means))) <= tolerance
