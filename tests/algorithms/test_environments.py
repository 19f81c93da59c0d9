"""Tests of fedpriv.algorithms.environments.heterogeneous: heterogeneous bandits and the paper's generator."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.heterogeneous import (
    NOISE_MODELS,
    BanditEnvironment,
    HeterogeneousBandit,
    paper_synthetic_bandit,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__: list[str] = []

PROPERTY = settings(database=None, deadline=None, max_examples=40)

FALSE_FAILURE_PROBABILITY = 1e-6

MEANS = np.array([[0.9, 0.1, 0.5], [0.1, 0.5, 0.6]])


@st.composite
def bernoulli_means(draw: st.DrawFn) -> np.ndarray:
    """Local-mean matrices with 1..4 agents and 2..5 arms, entries in [0, 1]."""
    shape = (draw(st.integers(1, 4)), draw(st.integers(2, 5)))
    elements = st.floats(0.0, 1.0, allow_nan=False)
    return draw(hnp.arrays(np.float64, shape, elements=elements))


# ------------------------------------------------------------- HeterogeneousBandit
def test_known_values() -> None:
    env = HeterogeneousBandit(arm_means=MEANS)
    assert (env.n_agents, env.n_arms) == (2, 3)
    np.testing.assert_allclose(env.global_means, [0.5, 0.3, 0.55], atol=1e-15)
    assert env.best_arm == 2
    assert type(env.best_arm) is int
    np.testing.assert_allclose(env.gaps, [0.05, 0.25, 0.0], atol=1e-15)
    assert env.reward_bounds == (0.0, 1.0)
    assert env.noise == "bernoulli"


def test_gaussian_is_unbounded_and_accepts_any_finite_mean() -> None:
    env = HeterogeneousBandit(arm_means=[[-3.0, 2.5]], noise="gaussian")
    assert env.reward_bounds is None
    assert env.best_arm == 1
    np.testing.assert_array_equal(env.gaps, [5.5, 0.0])


def test_best_arm_takes_the_first_on_ties() -> None:
    assert HeterogeneousBandit(arm_means=[[0.2, 0.7, 0.7]]).best_arm == 1


def test_implements_the_protocol() -> None:
    assert isinstance(HeterogeneousBandit(arm_means=MEANS), BanditEnvironment)


def test_means_are_a_read_only_float64_copy() -> None:
    source = MEANS.copy()
    env = HeterogeneousBandit(arm_means=source)
    source[0, 0] = 0.0
    assert env.arm_means[0, 0] == 0.9
    assert env.arm_means.dtype == np.float64
    with pytest.raises(ValueError, match="read-only"):
        env.arm_means[0, 0] = 0.3


def test_is_frozen_hashable_and_compared_by_value() -> None:
    env = HeterogeneousBandit(arm_means=MEANS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.noise = "gaussian"  # type: ignore[misc]
    same = HeterogeneousBandit(arm_means=MEANS.tolist())
    assert env == same
    assert hash(env) == hash(same)
    assert env != HeterogeneousBandit(arm_means=MEANS, noise="gaussian")
    assert env != HeterogeneousBandit(arm_means=MEANS[::-1])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"arm_means": [0.2, 0.4]}, ValueError, r"`arm_means` must have shape"),
        ({"arm_means": [[0.2]]}, ValueError, r"n_arms >= 2\), got shape \(1, 1\)"),
        ({"arm_means": np.zeros((0, 3))}, ValueError, r"got shape \(0, 3\)"),
        (
            {"arm_means": [[0.2, np.nan]], "noise": "gaussian"},
            ValueError,
            r"`arm_means` must be finite; found 1 NaN",
        ),
        ({"arm_means": [[0.2, 1.2]]}, ValueError, r"`arm_means` must lie in \[0\.0, 1\.0\]"),
        (
            {"arm_means": [[0.2, 0.3]], "noise": "poisson"},
            ValueError,
            r"`noise` must be one of \['bernoulli', 'gaussian'\], got 'poisson'",
        ),
        (
            {"arm_means": [[0.2, 0.3]], "noise": "gaussian", "noise_stddev": 0.0},
            ValueError,
            r"`noise_stddev` must be in \(0, inf\), got 0\.0",
        ),
        (
            {"arm_means": [[0.2, 0.3]], "noise_stddev": "1"},
            TypeError,
            r"`noise_stddev` must be a real number",
        ),
    ],
)
def test_rejects_bad_parameters(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        HeterogeneousBandit(**kwargs)


@pytest.mark.parametrize(
    ("horizon", "rng", "error", "match"),
    [
        (0, np.random.default_rng(0), ValueError, r"`horizon` must be >= 1, got 0"),
        (1.5, np.random.default_rng(0), TypeError, r"`horizon` must be an integer"),
        (3, None, TypeError, r"`rng` must be a numpy\.random\.Generator"),
        (
            3,
            np.random.RandomState(0),
            TypeError,
            r"`rng` must be a numpy\.random\.Generator, got RandomState",
        ),
    ],
)
def test_sample_rewards_rejects(horizon, rng, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        HeterogeneousBandit(arm_means=MEANS).sample_rewards(horizon, rng=rng)


@PROPERTY
@given(
    means=bernoulli_means(),
    horizon=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    noise=st.sampled_from(NOISE_MODELS),
)
def test_reward_table_shape_dtype_and_reproducibility(
    means: np.ndarray, horizon: int, seed: int, noise: str
) -> None:
    env = HeterogeneousBandit(arm_means=means, noise=noise)
    table = env.sample_rewards(horizon, rng=np.random.default_rng(seed))
    assert table.shape == (env.n_agents, horizon + 1, env.n_arms)
    assert table.dtype == np.float64
    assert np.all(np.isfinite(table))
    if noise == "bernoulli":
        assert np.all((table == 0.0) | (table == 1.0))
    again = env.sample_rewards(horizon, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(table, again)


def test_degenerate_bernoulli_means_give_constant_rewards() -> None:
    env = HeterogeneousBandit(arm_means=[[0.0, 1.0], [1.0, 0.0]])
    table = env.sample_rewards(500, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(table[0, :, 0], 0.0)
    np.testing.assert_array_equal(table[0, :, 1], 1.0)
    np.testing.assert_array_equal(table[1, :, 0], 1.0)
    np.testing.assert_array_equal(table[1, :, 1], 0.0)


def test_different_generators_give_different_tables() -> None:
    env = HeterogeneousBandit(arm_means=MEANS, noise="gaussian")
    first = env.sample_rewards(20, rng=np.random.default_rng(1))
    second = env.sample_rewards(20, rng=np.random.default_rng(2))
    assert not np.array_equal(first, second)


def test_gaussian_rewards_are_mean_plus_scaled_standard_normal() -> None:
    env = HeterogeneousBandit(arm_means=MEANS, noise="gaussian", noise_stddev=2.0)
    table = env.sample_rewards(10, rng=np.random.default_rng(8))
    normal = np.random.default_rng(8).standard_normal((2, 11, 3))
    np.testing.assert_allclose(table, MEANS[:, None, :] + 2.0 * normal, atol=1e-15)


@pytest.mark.statistical
def test_bernoulli_reward_means() -> None:
    # Hoeffding for [0, 1] rewards, union bound over the 6 (agent, arm) cells:
    # P(any |mean - mu| >= tol) <= 6 * 2 exp(-2 n tol^2) = FALSE_FAILURE_PROBABILITY.
    env = HeterogeneousBandit(arm_means=MEANS)
    horizon = 40_000
    n = horizon + 1
    tol = math.sqrt(math.log(2 * MEANS.size / FALSE_FAILURE_PROBABILITY) / (2 * n))
    table = env.sample_rewards(horizon, rng=np.random.default_rng(20240602))
    np.testing.assert_array_less(np.abs(table.mean(axis=1) - MEANS), tol)


@pytest.mark.statistical
def test_gaussian_reward_means() -> None:
    # Hoeffding (Chernoff) bound for sigma-sub-Gaussian rewards, union over 6 cells:
    # P(any |mean - mu| >= tol) <= 6 * 2 exp(-n tol^2 / (2 sigma^2)) = 1e-6.
    sigma = 2.0
    env = HeterogeneousBandit(arm_means=MEANS, noise="gaussian", noise_stddev=sigma)
    horizon = 40_000
    n = horizon + 1
    tol = sigma * math.sqrt(2 * math.log(2 * MEANS.size / FALSE_FAILURE_PROBABILITY) / n)
    table = env.sample_rewards(horizon, rng=np.random.default_rng(20240603))
    np.testing.assert_array_less(np.abs(table.mean(axis=1) - MEANS), tol)


# ------------------------------------------------------------ paper_synthetic_bandit
def _check_paper_rule(env: HeterogeneousBandit) -> None:
    rankings = np.argsort(-env.arm_means, axis=1)
    assert len({tuple(row) for row in rankings.tolist()}) == env.n_agents
    assert np.any(rankings[:, 0] != env.best_arm)
    assert np.all((env.arm_means >= 0.0) & (env.arm_means < 1.0))


@pytest.mark.parametrize(("n_agents", "n_arms"), [(3, 5), (10, 10)])
def test_paper_synthetic_bandit_settings_of_fig2(n_agents: int, n_arms: int) -> None:
    env = paper_synthetic_bandit(n_agents, n_arms, rng=np.random.default_rng(0))
    assert env.arm_means.shape == (n_agents, n_arms)
    assert env.noise == "gaussian"
    assert env.noise_stddev == 1.0
    assert env.reward_bounds is None
    _check_paper_rule(env)


@PROPERTY
@given(
    n_agents=st.integers(2, 6),
    n_arms=st.integers(3, 6),
    seed=st.integers(0, 2**32 - 1),
    noise=st.sampled_from(NOISE_MODELS),
)
def test_paper_synthetic_bandit_always_satisfies_its_rule(
    n_agents: int, n_arms: int, seed: int, noise: str
) -> None:
    first = paper_synthetic_bandit(n_agents, n_arms, rng=np.random.default_rng(seed), noise=noise)
    _check_paper_rule(first)
    assert first.noise == noise
    again = paper_synthetic_bandit(n_agents, n_arms, rng=np.random.default_rng(seed), noise=noise)
    assert first == again


def test_paper_synthetic_bandit_accepts_the_first_valid_uniform_draw() -> None:
    # Seed 2: the first U[0, 1) draw has rankings (1, 0) and (0, 1), so it is kept.
    env = paper_synthetic_bandit(2, 2, rng=np.random.default_rng(2), max_tries=1)
    np.testing.assert_array_equal(env.arm_means, np.random.default_rng(2).random((2, 2)))


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((1, 5), {}, ValueError, r"`n_agents` must be >= 2, got 1"),
        ((3, 1), {}, ValueError, r"`n_arms` must be >= 2, got 1"),
        ((7, 3), {}, ValueError, r"`n_agents` must be <= n_arms! = 6 .*got 7"),
        ((3, 5), {"noise": "uniform"}, ValueError, r"`noise` must be one of"),
        ((3, 5), {"max_tries": 0}, ValueError, r"`max_tries` must be >= 1, got 0"),
        ((3, 5), {"rng": None}, TypeError, r"`rng` must be a numpy\.random\.Generator"),
        ((3.0, 5), {}, TypeError, r"`n_agents` must be an integer"),
    ],
)
def test_paper_synthetic_bandit_rejects(args: tuple, kwargs: dict, error: type, match: str) -> None:
    kwargs = {"rng": np.random.default_rng(0)} | kwargs
    with pytest.raises(error, match=match):
        paper_synthetic_bandit(*args, **kwargs)


def test_paper_synthetic_bandit_gives_up_after_max_tries() -> None:
    # Seed 0: both agents of the first draw rank the arms (0, 1), so it is rejected.
    first = np.random.default_rng(0).random((2, 2))
    assert np.array_equal(np.argsort(-first[0]), np.argsort(-first[1]))
    with pytest.raises(ValueError, match=r"in `max_tries`=1 tries"):
        paper_synthetic_bandit(2, 2, rng=np.random.default_rng(0), max_tries=1)
