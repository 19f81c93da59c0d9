"""Tests of the trimmed mean, Huber contamination and Byzantine-Proof Multi-Agent UCB."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from fedpriv.algorithms.dubey_aamas.byzantine import _SampleSets, run_byzantine_coop_ucb
from fedpriv.algorithms.dubey_aamas.robust import (
    Contamination,
    check_contamination,
    histogram_trimmed_mean,
    trim_fraction,
    trimmed_mean,
    trimmed_mean_width,
)
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
from fedpriv.algorithms.networks.graphs import make_graph
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats


@given(
    st.integers(1, 150),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["n", "inside"]),
    st.sampled_from([0.0, 0.05, 0.2]),
)
def test_histogram_estimator_equals_the_sorting_reference(n, seed, normalization, contamination):
    rng = np.random.default_rng(seed)
    alphabet = np.array([-3.0, 0.0, 0.25, 1.0, 7.0])
    idx = rng.choice(alphabet.size, size=(5, 2 * n), p=rng.dirichlet(np.ones(alphabet.size)))
    reference = trimmed_mean(alphabet[idx], contamination, 0.2, normalization=normalization)
    z1 = np.stack([np.bincount(r, minlength=5) for r in idx[:, 0::2]])
    z2 = np.stack([np.bincount(r, minlength=5) for r in idx[:, 1::2]])
    fast, halves = histogram_trimmed_mean(
        z1, z2, alphabet, contamination, 0.2, normalization=normalization
    )
    np.testing.assert_allclose(fast, reference, equal_nan=True, rtol=1e-12)
    assert (halves == n).all()


@given(st.lists(st.integers(0, 3), min_size=1, max_size=60), st.integers(1, 7))
def test_incremental_sample_sets_follow_the_alternate_split(values, batch):
    """Appending in batches gives Z1 = samples 0, 2, 4, ... and Z2 = 1, 3, 5, ..."""
    sets = _SampleSets((1, 1, 1), 4)
    for start in range(0, len(values), batch):
        chunk = np.array(values[start : start + batch])
        sets.add(np.zeros(chunk.size, dtype=np.int64), chunk)
    z1, z2 = sets.halves()
    n = len(values) // 2
    np.testing.assert_array_equal(z1[0, 0, 0], np.bincount(values[0 : 2 * n : 2], minlength=4))
    np.testing.assert_array_equal(z2[0, 0, 0], np.bincount(values[1 : 2 * n : 2], minlength=4))


def test_trimmed_mean_removes_far_contamination_and_keeps_clean_data():
    rng = np.random.default_rng(0)
    clean = (rng.random(2000) < 0.3).astype(float)
    dirty = np.where(rng.random(2000) < 0.1, 50.0, clean)
    assert abs(trimmed_mean(dirty, 0.1, 0.01, normalization="inside") - 0.3) < 0.05
    assert abs(dirty.mean() - 0.3) > 4.0
    # too few samples for δ: undefined (τ >= 1/2)
    assert math.isnan(float(trimmed_mean(dirty[:20], 0.1, 0.01)))
    assert float(trim_fraction(0, 0.1, 0.01)) == math.inf


def test_contamination_outside_zero_quarter_is_rejected_everywhere():
    for bad in (0.25, 0.3, -0.01):
        with pytest.raises(ValueError, match=r"must be in \[0, 0.25\)"):
            check_contamination(bad)
        with pytest.raises(ValueError, match=r"`contamination` must be in \[0, 0.25\)"):
            trimmed_mean(np.zeros(10), bad, 0.1)
        with pytest.raises(ValueError, match=r"`contamination` must be in \[0, 0.25\)"):
            trimmed_mean_width(10, bad, 0.1)
    env = BernoulliMAB(np.tile([0.6, 0.4], (3, 1)))
    with pytest.raises(ValueError, match=r"`assumed_contamination` must be in \[0, 0.25\)"):
        run_byzantine_coop_ucb(
            env, nx.path_graph(3), horizon=5, gamma=1, contamination=Contamination(rate=0.3)
        )
    with pytest.raises(ValueError, match=r"`rate` must be in \[0, 1\)"):
        Contamination(rate=1.0)
    with pytest.raises(ValueError, match="`delta` must be in"):
        trimmed_mean(np.zeros(10), 0.1, 1.0)


_Q = {
    "point mass at 10 (far outside)": Contamination(rate=0.1, kind="point", value=10.0),
    "point mass at 1 (inside)": Contamination(rate=0.1, kind="point", value=1.0),
    "uniform on [0, 1]": Contamination(rate=0.1, kind="uniform"),
    "Bernoulli(1 - μ)": Contamination(rate=0.1, kind="complement"),
    "shift by -4": Contamination(rate=0.1, kind="shift", value=-4.0),
    "adversarial (0 for the best arm)": Contamination(rate=0.1, kind="adversarial"),
}


def _mixture(q: Contamination, mean: float, shape: tuple[int, int], rng) -> np.ndarray:
    rewards = (rng.random(shape) < mean).astype(float)
    corrupted = rng.random(shape) < q.rate
    return q.corrupt(
        rewards,
        np.zeros(shape, dtype=np.int64),
        corrupted,
        rng.random(shape),
        np.array([mean, 0.0]),
    )


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(_Q))
@pytest.mark.parametrize("normalization", ["n", "inside"])
def test_trimmed_mean_coverage_under_contamination(name, normalization):
    """Done-when: coverage P(|μ̂ - μ| <= width) >= 1 - δ under several Q.

    4000 seeded replicates of 2n = 800 samples of (1 - ε_c) Bernoulli(0.3) + ε_c Q with
    ε_c = 0.1, δ = 0.05, width ``σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ)/n))`` with the
    defaults. One-sided binomial test of H0 "miss rate <= δ": reject when the misses
    exceed the 1 - 1e-6 quantile of Binomial(4000, δ), so a valid estimator fails this
    test with probability <= 1e-6 per case (12 cases: <= 1.2e-5).
    """
    q = _Q[name]
    rng = np.random.default_rng([2024, list(_Q).index(name), int(normalization == "n")])
    n_rep, n, delta, mean = 4000, 400, 0.05, 0.3
    samples = _mixture(q, mean, (n_rep, 2 * n), rng)
    estimate = trimmed_mean(samples, q.rate, delta, normalization=normalization)
    width = float(trimmed_mean_width(n, q.rate, delta))
    misses = int(np.sum(~(np.abs(estimate - mean) <= width)))
    critical = int(stats.binom.isf(1e-6, n_rep, delta))
    assert misses <= critical, (name, misses, critical)


@pytest.mark.statistical
def test_coverage_test_has_power_against_the_untrimmed_mean():
    """Negative control: the plain mean under far contamination misses almost always."""
    rng = np.random.default_rng([2024, 99])
    q = _Q["point mass at 10 (far outside)"]
    samples = _mixture(q, 0.3, (4000, 800), rng)
    width = float(trimmed_mean_width(400, q.rate, 0.05))
    misses = int(np.sum(np.abs(samples.mean(axis=1) - 0.3) > width))
    assert misses > int(stats.binom.isf(1e-6, 4000, 0.05))


def test_byzantine_messages_carry_q_only_from_byzantine_agents():
    env = BernoulliMAB(np.tile([0.7, 0.4, 0.2], (4, 1)))
    q = Contamination(rate=0.2, kind="point", value=10.0, byzantine=(1, 3))
    run = run_byzantine_coop_ucb(
        env,
        make_graph("ring", 4),
        horizon=120,
        gamma=2,
        contamination=q,
        n_trials=2,
        seed=0,
        record=True,
    )
    content = run.transcript.content
    corrupted = content["corrupted"]
    assert not corrupted[:, [0, 2]].any()
    np.testing.assert_array_equal(content["value"][corrupted], 10.0)
    np.testing.assert_array_equal(content["value"][~corrupted], run.rewards[~corrupted])
    np.testing.assert_array_equal(content["arm"], run.actions)
    assert run.accountant.get_epsilon(0.0) == math.inf
    rate = corrupted[:, [1, 3]].mean()
    assert abs(rate - 0.2) < 6 * math.sqrt(0.2 * 0.8 / corrupted[:, [1, 3]].size)


def test_byzantine_ucb_learns_the_best_arm_under_far_contamination():
    env = BernoulliMAB(np.tile([0.8, 0.3], (5, 1)))
    q = Contamination(rate=0.1, kind="point", value=20.0)
    run = run_byzantine_coop_ucb(
        env, make_graph("complete", 5), horizon=600, gamma=1, contamination=q, n_trials=2, seed=1
    )
    late = run.actions[:, :, -100:]
    assert (late == 0).mean() > 0.9


def test_byzantine_bad_input():
    env = BernoulliMAB(np.tile([0.6, 0.4], (3, 1)))
    with pytest.raises(ValueError, match="`gamma` must be >= 1"):
        run_byzantine_coop_ucb(
            env, nx.path_graph(3), horizon=5, gamma=0, contamination=Contamination(rate=0.1)
        )
    with pytest.raises(ValueError, match="`byzantine` agents must be in"):
        run_byzantine_coop_ucb(
            env,
            nx.path_graph(3),
            horizon=5,
            gamma=1,
            contamination=Contamination(rate=0.1, byzantine=(5,)),
        )
    with pytest.raises(ValueError, match="must be connected"):
        run_byzantine_coop_ucb(
            env, nx.empty_graph(3), horizon=5, gamma=1, contamination=Contamination(rate=0.1)
        )
    with pytest.raises(TypeError, match="`contamination` must be a Contamination"):
        run_byzantine_coop_ucb(env, nx.path_graph(3), horizon=5, gamma=1, contamination=0.1)
    with pytest.raises(ValueError, match="`kind`"):
        Contamination(rate=0.1, kind="gaussian")
