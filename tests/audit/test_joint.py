"""Audits of the whole view: linear statistics and the learned distinguisher (issue 33).

Deterministic tests pin their seeds; the statistical ones state their false-alarm rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm
from fedpriv.audit.engine.joint import JointColumns, fit_distinguisher, linear_statistics
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__: list[str] = []


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=9),
        elements=st.floats(-1e6, 1e6),
    )
)
def test_linear_statistics_are_the_sums_and_differences(x):
    columns, names = linear_statistics(x)
    n, c = x.shape
    assert len(names) == columns.shape[1]
    if c < 2:
        assert columns.shape == (n, 0)
        return
    assert columns.shape == (n, 1 + (c - 1) + 1)
    np.testing.assert_allclose(columns[:, 0], x.sum(axis=1), rtol=1e-12, atol=1e-3)
    np.testing.assert_array_equal(columns[:, 1:c], np.diff(x, axis=1))
    np.testing.assert_array_equal(columns[:, -1], x[:, -1] - x[:, 0])


def test_messages_of_several_values_add_their_sums_and_norms():
    x = np.arange(12.0).reshape(1, 2, 6)[:, :, :3].copy()  # 2 messages of 3 values
    columns, names = linear_statistics(x)
    assert names[-4:] == (
        "sum of message 0",
        "sum of message 1",
        "norm of message 0",
        "norm of message 1",
    )
    np.testing.assert_allclose(columns[0, -4:], [3.0, 21.0, np.sqrt(5.0), np.sqrt(149.0)])


def test_joint_names_use_the_views_own_names():
    columns = JointColumns(None, linear=True)
    names = columns.names(np.zeros((1, 2)), ("a", "b"))
    assert names == ("a", "b", "sum of observable", "b - a", "b - a")


def test_fit_distinguisher_checks_its_inputs():
    with pytest.raises(ValueError, match="features_d"):
        fit_distinguisher(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="at least one run"):
        fit_distinguisher(np.zeros((0, 2)), np.zeros((3, 2)))


def test_the_distinguisher_is_a_fixed_function_and_tolerates_non_finite_values():
    rng = np.random.default_rng(0)
    d, dp = rng.normal(0, 1, (200, 3)), rng.normal(1, 1, (200, 3))
    d[0, 0] = np.inf
    score = fit_distinguisher(d, dp)
    x = rng.normal(0, 1, (50, 3))
    x[1, 1] = np.nan
    first = score(x)
    assert np.all(np.isfinite(first)) and np.array_equal(first, score(x))
    assert score(np.ones((1, 3)))[0] > score(-np.ones((1, 3)))[0]  # D' lies at +1


def _shared_noise(world, n, seed):
    """Two messages carrying one Laplace draw: only their difference shows the data."""
    z = np.random.default_rng(seed).laplace(0.0, 5.0, n)
    return np.stack([z, z + float(world)], axis=1)


def test_a_leak_only_in_a_difference_is_found_by_the_joint_view():
    budget = AuditBudget(pilot_samples=200, samples=2_000)
    column = search_and_confirm(
        {"p": _shared_noise}, budget=budget, seed=0, delta=0.0, channel="x", joint=False
    )
    joint = search_and_confirm({"p": _shared_noise}, budget=budget, seed=0, delta=0.0, channel="x")
    # Each column alone is Laplace(5) shifted by at most 1: ε <= 0.2 per column.
    assert column.epsilon_lower_bound <= 0.2
    assert joint.epsilon_lower_bound > 5.0  # the difference is exact: the CP ceiling
    assert "observable[1] - observable[0]" in joint.event


def _many_small_shifts(world, n, seed):
    """20 coordinates, each shifted by ±0.25 (signs alternate): no single column, no
    sum and no consecutive difference carries most of it; a linear score does."""
    rng = np.random.default_rng(seed)
    signs = np.where(np.arange(20) % 4 < 2, 1.0, -1.0)
    return rng.normal(0.0, 1.0, (n, 20)) + 0.25 * world * signs


def test_the_learned_distinguisher_reads_a_vector_jointly():
    budget = AuditBudget(pilot_samples=1_000, samples=4_000)
    column = search_and_confirm(
        {"p": _many_small_shifts}, budget=budget, seed=1, delta=0.0, channel="x", joint=False
    )
    joint = search_and_confirm(
        {"p": _many_small_shifts}, budget=budget, seed=1, delta=0.0, channel="x"
    )
    assert joint.event.startswith("learned distinguisher score")
    assert joint.epsilon_lower_bound > 2 * column.epsilon_lower_bound > 0.0


def test_training_pilot_and_confirmation_use_disjoint_runs():
    seen = []

    def sample(world, n, seed):
        seen.append((n, tuple(seed.spawn_key)))
        return np.random.default_rng(seed).random((n, 2))

    result = search_and_confirm(
        {"a": sample, "b": sample},
        budget=AuditBudget(pilot_samples=30, samples=40),
        seed=3,
        delta=0.0,
        channel="x",
    )
    keys = [key for _, key in seen]
    assert len(keys) == len(set(keys)) == 2 * 2 + 2 * 2 + 2  # pilot, training, confirm
    assert {key[0] for key in keys} == {0, 1, 2}
    assert {key for n, key in seen if n == 40} == {(1, 0), (1, 1)}
    assert result.n_pairs == 2 and result.n_candidates > 0


def test_one_column_views_are_searched_as_before():
    def sample(world, n, seed):
        return np.random.default_rng(seed).laplace(float(world), 1.0, n)

    budget = AuditBudget(pilot_samples=100, samples=500)
    on = search_and_confirm({"p": sample}, budget=budget, seed=2, delta=0.0, channel="x")
    off = search_and_confirm(
        {"p": sample}, budget=budget, seed=2, delta=0.0, channel="x", joint=False
    )
    assert on.bound == off.bound and on.event == off.event


def test_messages_survive_batches():
    def sample(world, n, seed):
        rng = np.random.default_rng(seed)
        z = rng.laplace(0.0, 5.0, (n, 1, 2))
        return np.concatenate([z, z + [[[float(world), 0.0]]]], axis=1)  # (n, 2, 2)

    result = search_and_confirm(
        {"p": sample},
        budget=AuditBudget(pilot_samples=100, samples=600),
        seed=4,
        delta=0.0,
        channel="x",
        batch_size=250,
    )
    assert result.epsilon_lower_bound > 3.0


@pytest.mark.statistical
def test_false_alarm_rate_of_the_joint_view_on_identical_worlds():
    """Identical worlds (true ε = 0), messages of several values, two pairs searched:
    a positive bound is a confidence failure. Each audit fails with probability <= 0.05
    (95% confidence, whatever the pilot chose); over 100 pinned seeds the test fails
    only if more than 20 do: P(Bin(100, 0.05) > 20) < 1e-6."""

    def sample(world, n, seed):
        rng = np.random.default_rng(seed)
        z = rng.laplace(0.0, 1.0, (n, 1, 3))
        return np.concatenate([z, z + rng.binomial(2, 0.5, (n, 1, 3))], axis=1)

    budget = AuditBudget(pilot_samples=100, samples=300)
    alarms = sum(
        search_and_confirm(
            {"a": sample, "b": sample}, budget=budget, seed=s, delta=0.0, channel="x"
        ).epsilon_lower_bound
        > 0
        for s in range(100)
    )
    assert alarms <= 20


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 40), st.integers(1, 4)),
        elements=st.one_of(
            st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan, np.inf, -np.inf]), st.floats(-5, 5)
        ),
    )
)
def test_vectorized_hit_counts_equal_the_indicators(x):
    from fedpriv.audit.engine.coupled import _candidate_events, _hit_counts, _indicator

    with np.errstate(invalid="ignore"):  # quantiles of a column holding both infinities
        events = _candidate_events(x)
    events += [(0, "==", np.nan), (0, "<=", -0.0), (0, ">=", np.inf)]
    expected = [_indicator(x, event).sum() for event in events]
    assert _hit_counts(x, events).tolist() == expected
