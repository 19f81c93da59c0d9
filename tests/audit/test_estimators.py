"""Tests for `fedpriv.audit.estimators`: Clopper–Pearson bounds and the ε lower bound.

Statistical tests pin their seeds and state their false-failure probability; the
soundness suite as a whole fails with probability <= 1e-6 for a correct estimator.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.estimators import (
    DIRECTIONS,
    NO_EVIDENCE,
    EpsilonLowerBound,
    clopper_pearson_interval,
    estimate_epsilon_lower_bound,
    laplace_threshold_grid,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------


def _unit_llr(u: np.ndarray) -> np.ndarray:
    """Per-node ``|y - S'| - |y - S|`` for ``u = y - S`` and ``S - S' = 1``.

    Equal to ``clip(2u + 1, -1, 1)``, which is exactly +-1 when saturated, so the
    event ``{LLR >= max_llr}`` is not lost to rounding (see
    `laplace_threshold_grid`, Notes).
    """
    return np.clip(2.0 * u + 1.0, -1.0, 1.0)


def _laplace_tree_scores(
    *, scale: float, n_nodes: int, n_samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Exact LLR ``ln p_D(y) / p_D'(y)`` of ``n_nodes`` Laplace nodes, both worlds.

    World D releases ``y = S + Lap(scale)``, world D' releases ``y = S' + Lap(scale)``
    with ``S - S' = 1`` in every node, so ``y - S`` is ``Z`` in D and ``Z - 1`` in
    D'. The true ε is ``n_nodes / scale``.
    """
    noise_d = rng.laplace(0.0, scale, size=(n_samples, n_nodes))
    noise_d_prime = rng.laplace(0.0, scale, size=(n_samples, n_nodes))
    scores_d = _unit_llr(noise_d).sum(axis=1) / scale
    scores_d_prime = _unit_llr(noise_d_prime - 1.0).sum(axis=1) / scale
    return scores_d, scores_d_prime


def _reference_bound(
    scores_d: np.ndarray,
    scores_d_prime: np.ndarray,
    thresholds: np.ndarray,
    confidence: float,
    delta: float,
) -> float:
    """Slow reference: Python loops and `scipy.stats.binomtest` intervals."""
    level = (1.0 - confidence) / (4 * len(thresholds))
    best = 0.0
    for c in thresholds:
        k_d = sum(1 for s in scores_d if s >= c)
        k_dp = sum(1 for s in scores_d_prime if s >= c)
        tests = [
            (k_d, len(scores_d), k_dp, len(scores_d_prime)),
            (k_dp, len(scores_d_prime), k_d, len(scores_d)),
        ]
        for k_top, n_top, k_bottom, n_bottom in tests:
            low = (
                stats.binomtest(k_top, n_top, alternative="greater")
                .proportion_ci(confidence_level=1.0 - level)
                .low
            )
            high = (
                stats.binomtest(k_bottom, n_bottom, alternative="less")
                .proportion_ci(confidence_level=1.0 - level)
                .high
            )
            if low - delta > 0.0:
                best = max(best, math.log((low - delta) / high))
    return best


def _ceiling(n_top: int, n_bottom: int, level: float) -> float:
    """Largest possible test value: ``ln(a**(1/n_top) / (1 - a**(1/n_bottom)))``."""
    return math.log(level ** (1.0 / n_top)) - math.log(-math.expm1(math.log(level) / n_bottom))


scores_strategy = st.lists(st.integers(-4, 4), min_size=1, max_size=40).map(
    lambda values: np.asarray(values, dtype=np.float64)
)
thresholds_strategy = st.lists(
    st.integers(-10, 10).map(lambda v: v / 2.0), min_size=1, max_size=6
).map(lambda values: np.asarray(values, dtype=np.float64))

# ---------------------------------------------------------------------------------
# Clopper–Pearson
# ---------------------------------------------------------------------------------

CP_CASES = [
    (0, 1),
    (1, 1),
    (0, 10),
    (1, 10),
    (5, 10),
    (10, 10),
    (17, 100),
    (999, 1000),
    (12_345, 1_000_000),
]


# Below ~1e-6 scipy's binomtest intervals drift (relative error 2e-7 at 1e-7, checked
# against the closed forms); tiny levels are checked in the closed-form test below.
@pytest.mark.parametrize("significance", [0.2, 0.05, 1e-3, 1e-5])
@pytest.mark.parametrize(
    ("side", "alternative"), [("two-sided", "two-sided"), ("lower", "greater"), ("upper", "less")]
)
def test_clopper_pearson_matches_scipy_binomtest(
    significance: float, side: str, alternative: str
) -> None:
    for successes, n_trials in CP_CASES:
        expected = stats.binomtest(successes, n_trials, alternative=alternative).proportion_ci(
            confidence_level=1.0 - significance, method="exact"
        )
        low, high = clopper_pearson_interval(
            successes, n_trials, significance=significance, side=side
        )
        assert float(low) == pytest.approx(expected.low, rel=1e-9, abs=1e-300)
        assert float(high) == pytest.approx(expected.high, rel=1e-9, abs=1e-300)


def test_clopper_pearson_is_vectorized_and_broadcasts() -> None:
    successes = np.array([[0, 3], [7, 10]])
    low, high = clopper_pearson_interval(successes, 10, significance=0.05, side="two-sided")
    assert low.shape == high.shape == (2, 2)
    assert low.dtype == high.dtype == np.float64
    for index in np.ndindex(successes.shape):
        one_low, one_high = clopper_pearson_interval(
            int(successes[index]), 10, significance=0.05, side="two-sided"
        )
        assert low[index] == one_low and high[index] == one_high
    low, high = clopper_pearson_interval([1, 2, 3], [4, 5, 6], significance=0.1, side="lower")
    assert low.shape == (3,) and np.all(high == 1.0)


def test_clopper_pearson_edge_cases_are_exact() -> None:
    n_trials, significance = 25, 0.01
    low, high = clopper_pearson_interval(
        [0, n_trials], n_trials, significance=significance, side="two-sided"
    )
    assert low[0] == 0.0 and high[1] == 1.0
    # Closed forms at the edges: 1 - (a/2)^(1/n) and (a/2)^(1/n).
    assert high[0] == pytest.approx(1.0 - (significance / 2) ** (1 / n_trials))
    assert low[1] == pytest.approx((significance / 2) ** (1 / n_trials))
    low, high = clopper_pearson_interval(0, 1, significance=0.3, side="upper")
    assert float(low) == 0.0 and float(high) == pytest.approx(0.7)
    low, high = clopper_pearson_interval(1, 1, significance=0.3, side="lower")
    assert float(low) == pytest.approx(0.3) and float(high) == 1.0


@pytest.mark.parametrize("significance", [1e-3, 1e-7, 1e-12])
@pytest.mark.parametrize("n_trials", [1, 10, 1_000_000])
def test_clopper_pearson_closed_forms_at_small_levels(significance: float, n_trials: int) -> None:
    # P(X >= 1) = 1 - (1 - p)^n and P(X <= n - 1) = 1 - p^n solve in closed form.
    low, _ = clopper_pearson_interval(1, n_trials, significance=significance, side="lower")
    _, high = clopper_pearson_interval(
        n_trials - 1, n_trials, significance=significance, side="upper"
    )
    expected_low = -math.expm1(math.log1p(-significance) / n_trials)
    expected_high = math.exp(math.log1p(-significance) / n_trials)
    assert float(low) == pytest.approx(expected_low, rel=1e-10)
    assert float(high) == pytest.approx(expected_high, rel=1e-12)


def test_clopper_pearson_is_monotone_in_successes_and_significance() -> None:
    successes = np.arange(51)
    low, high = clopper_pearson_interval(successes, 50, significance=0.05, side="two-sided")
    assert np.all(np.diff(low) > 0) and np.all(np.diff(high) > 0)
    assert np.all(low < high)
    wide_low, wide_high = clopper_pearson_interval(
        successes, 50, significance=1e-4, side="two-sided"
    )
    assert np.all(wide_low[1:] < low[1:]) and np.all(wide_high[:-1] > high[:-1])


def test_clopper_pearson_two_sided_is_two_one_sided_bounds() -> None:
    successes = np.arange(0, 31, 3)
    low, high = clopper_pearson_interval(successes, 30, significance=0.02, side="two-sided")
    one_low, _ = clopper_pearson_interval(successes, 30, significance=0.01, side="lower")
    _, one_high = clopper_pearson_interval(successes, 30, significance=0.01, side="upper")
    np.testing.assert_array_equal(low, one_low)
    np.testing.assert_array_equal(high, one_high)


@settings(max_examples=200, deadline=None)
@given(
    n_trials=st.integers(1, 10**6), fraction=st.floats(0.0, 1.0), significance=st.floats(1e-9, 0.5)
)
def test_clopper_pearson_contains_point_estimate(
    n_trials: int, fraction: float, significance: float
) -> None:
    successes = round(fraction * n_trials)
    low, high = clopper_pearson_interval(
        successes, n_trials, significance=significance, side="two-sided"
    )
    assert 0.0 <= float(low) <= successes / n_trials <= float(high) <= 1.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"successes": 1.5, "n_trials": 10}, ValueError, "`successes` must contain"),
        ({"successes": True, "n_trials": 10}, TypeError, "`successes` must contain"),
        ({"successes": "3", "n_trials": 10}, TypeError, "`successes` must contain"),
        ({"successes": -1, "n_trials": 10}, ValueError, "`successes` must be >= 0"),
        ({"successes": 11, "n_trials": 10}, ValueError, "`successes` must be <="),
        ({"successes": 0, "n_trials": 0}, ValueError, "`n_trials` must be >= 1"),
        ({"successes": 0, "n_trials": 2.5}, ValueError, "`n_trials` must contain"),
        ({"significance": 0.0}, ValueError, r"`significance` must be in \(0, 1\)"),
        ({"significance": 1.0}, ValueError, r"`significance` must be in \(0, 1\)"),
        ({"significance": "0.05"}, TypeError, "`significance` must be a real"),
        ({"significance": math.nan}, ValueError, "`significance` must not be NaN"),
        ({"side": "left"}, ValueError, "`side` must be one of"),
    ],
)
def test_clopper_pearson_raises(kwargs: dict, error: type, match: str) -> None:
    arguments = {"successes": 3, "n_trials": 10, "significance": 0.05}
    arguments |= {"side": "two-sided"} | kwargs
    successes = arguments.pop("successes")
    n_trials = arguments.pop("n_trials")
    with pytest.raises(error, match=match):
        clopper_pearson_interval(successes, n_trials, **arguments)


# ---------------------------------------------------------------------------------
# laplace_threshold_grid
# ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(max_llr=st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False), n=st.integers(2, 200))
def test_grid_includes_max_llr_exactly(max_llr: float, n: int) -> None:
    grid = laplace_threshold_grid(max_llr, n)
    assert grid.shape == (n,) and grid.dtype == np.float64
    assert grid[-1] == max_llr and grid[0] == -max_llr
    assert np.all(np.diff(grid) > 0)


def test_grid_default_and_small_example() -> None:
    assert laplace_threshold_grid(5 / 3).shape == (32,)
    assert laplace_threshold_grid(5 / 3)[-1] == 5 / 3
    assert laplace_threshold_grid(1.25, 5).tolist() == [-1.25, -0.625, 0, 0.625, 1.25]


def test_grid_top_event_is_hit_by_clipped_llr() -> None:
    # The recipe in the Notes of `laplace_threshold_grid`: with b = 3 and 5 nodes,
    # summing naive ``term / b`` misses 5 / 3; the clipped form never does.
    rng = np.random.default_rng(20240607)
    scale, n_nodes = 3.0, 5
    node_sums = rng.uniform(0.0, 100.0, size=n_nodes)
    outputs = node_sums + np.abs(rng.laplace(0.0, scale, size=(10_000, n_nodes)))
    clipped = _unit_llr(outputs - node_sums).sum(axis=1) / scale
    assert np.all(clipped >= laplace_threshold_grid(n_nodes / scale)[-1])


@pytest.mark.parametrize(
    ("max_llr", "n", "error", "match"),
    [
        (0.0, 32, ValueError, r"`max_llr` must be in \(0, inf\)"),
        (-1.0, 32, ValueError, r"`max_llr` must be in \(0, inf\)"),
        (math.inf, 32, ValueError, r"`max_llr` must be in \(0, inf\)"),
        (math.nan, 32, ValueError, "`max_llr` must not be NaN"),
        ("1", 32, TypeError, "`max_llr` must be a real number"),
        (1.0, 1, ValueError, "`n` must be >= 2"),
        (1.0, 2.5, TypeError, "`n` must be an integer"),
    ],
)
def test_grid_raises(max_llr: object, n: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        laplace_threshold_grid(max_llr, n)


# ---------------------------------------------------------------------------------
# estimate_epsilon_lower_bound: deterministic behaviour
# ---------------------------------------------------------------------------------


def test_bound_on_hand_computed_example() -> None:
    scores_d = np.array([1.0] * 90 + [0.0] * 10)
    scores_d_prime = np.array([1.0] * 10 + [0.0] * 90)
    result = estimate_epsilon_lower_bound(
        scores_d, scores_d_prime, thresholds=[0.5], confidence=0.9
    )
    level = 0.1 / 4
    p_lo = stats.beta.ppf(level, 90, 11)
    q_hi = stats.beta.ppf(1.0 - level, 11, 90)
    assert result.epsilon_lower_bound == pytest.approx(math.log(p_lo / q_hi))
    assert result.threshold == 0.5 and result.direction == "D>D'"
    assert (result.count_d, result.count_d_prime) == (90, 10)
    assert result.n_tests == 2 and result.n_samples == 100
    assert result.confidence == 0.9 and result.delta == 0.0


def test_unequal_sample_counts_report_the_smaller() -> None:
    result = estimate_epsilon_lower_bound(np.ones(300), np.zeros(50), thresholds=[0.5, 2.0])
    assert result.n_samples == 50
    assert (result.n_samples_d, result.n_samples_d_prime) == (300, 50)
    assert (result.count_d, result.count_d_prime) == (300, 0)
    assert result.n_tests == 4 and result.epsilon_lower_bound > 0.0


def test_no_evidence_result() -> None:
    result = estimate_epsilon_lower_bound(np.zeros(10), np.zeros(10), thresholds=[-1.0, 0.0, 1.0])
    assert result.epsilon_lower_bound == 0.0
    assert math.isnan(result.threshold) and result.direction == NO_EVIDENCE
    assert (result.count_d, result.count_d_prime) == (0, 0)
    assert result.n_tests == 6


def test_negated_scores_probe_the_other_tail() -> None:
    rng = np.random.default_rng(11)
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=1.0, n_nodes=1, n_samples=100_000, rng=rng
    )
    grid = laplace_threshold_grid(1.0)
    upper = estimate_epsilon_lower_bound(scores_d, scores_d_prime, thresholds=grid)
    lower = estimate_epsilon_lower_bound(-scores_d, -scores_d_prime, thresholds=-grid)
    assert upper.direction == "D>D'" and lower.direction == "D'>D"
    assert lower.epsilon_lower_bound > 0.8 and upper.epsilon_lower_bound > 0.8


def test_result_to_dict_and_immutability() -> None:
    result = estimate_epsilon_lower_bound(np.ones(20), np.zeros(20), thresholds=[0.5])
    as_dict = result.to_dict()
    assert list(as_dict) == [f.name for f in dataclasses.fields(EpsilonLowerBound)]
    assert EpsilonLowerBound(**as_dict) == result
    assert isinstance(as_dict["epsilon_lower_bound"], float)
    assert isinstance(as_dict["count_d"], int)
    json.dumps(as_dict)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.epsilon_lower_bound = 10.0  # type: ignore[misc]


VALID_RESULT = {
    "epsilon_lower_bound": 0.5,
    "confidence": 0.95,
    "n_samples": 10,
    "n_samples_d": 10,
    "n_samples_d_prime": 20,
    "threshold": 1.0,
    "direction": "D>D'",
    "n_tests": 2,
    "delta": 0.0,
    "count_d": 5,
    "count_d_prime": 1,
}


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"epsilon_lower_bound": -0.1}, ValueError, r"`epsilon_lower_bound` must be"),
        ({"epsilon_lower_bound": math.inf}, ValueError, "`epsilon_lower_bound` must"),
        ({"confidence": 1.0}, ValueError, r"`confidence` must be in \(0, 1\)"),
        ({"delta": 1.0}, ValueError, r"`delta` must be in \[0, 1\)"),
        ({"n_samples_d": 0}, ValueError, "`n_samples_d` must be >= 1"),
        ({"n_samples": 20}, ValueError, "`n_samples` must equal min"),
        ({"n_tests": 0}, ValueError, "`n_tests` must be >= 1"),
        ({"count_d": -1}, ValueError, "`count_d` must be >= 0"),
        ({"count_d": 11}, ValueError, "`count_d` must be <= n_samples_d"),
        ({"count_d_prime": 21}, ValueError, "`count_d_prime` must be <="),
        ({"threshold": "1"}, TypeError, "`threshold` must be a real number"),
        ({"threshold": math.nan}, ValueError, "`threshold` must be finite when"),
        ({"direction": "D<D'"}, ValueError, "`direction` must be one of"),
        ({"direction": NO_EVIDENCE}, ValueError, "`direction` 'none' requires"),
    ],
)
def test_result_validation_raises(changes: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        EpsilonLowerBound(**(VALID_RESULT | changes))


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"scores_d": [0.0, math.nan]}, ValueError, "`scores_d` must be finite"),
        ({"scores_d_prime": [math.inf]}, ValueError, "`scores_d_prime` must be fini"),
        ({"scores_d": []}, ValueError, "`scores_d` must contain at least 1"),
        ({"scores_d_prime": []}, ValueError, "`scores_d_prime` must contain at le"),
        ({"scores_d": np.zeros((2, 2))}, ValueError, "`scores_d` must be 1-D"),
        ({"scores_d": ["a"]}, TypeError, "`scores_d` must be an array of real"),
        ({"scores_d_prime": None}, TypeError, "`scores_d_prime` must be an array"),
        ({"thresholds": []}, ValueError, "`thresholds` must contain at least 1"),
        ({"thresholds": [0.0, -math.inf]}, ValueError, "`thresholds` must be finite"),
        ({"thresholds": 0.5}, ValueError, r"`thresholds` must be 1-D, got shape \(\)"),
        ({"confidence": 0.0}, ValueError, r"`confidence` must be in \(0, 1\)"),
        ({"confidence": 1.0}, ValueError, r"`confidence` must be in \(0, 1\)"),
        ({"confidence": None}, TypeError, "`confidence` must be a real number"),
        ({"delta": 1.0}, ValueError, r"`delta` must be in \[0, 1\)"),
        ({"delta": -1e-9}, ValueError, r"`delta` must be in \[0, 1\)"),
        ({"delta": "0"}, TypeError, "`delta` must be a real number"),
    ],
)
def test_estimate_raises(changes: dict, error: type, match: str) -> None:
    arguments = {
        "scores_d": [0.0, 1.0],
        "scores_d_prime": [0.0, 1.0],
        "thresholds": [0.5],
    } | changes
    scores_d = arguments.pop("scores_d")
    scores_d_prime = arguments.pop("scores_d_prime")
    with pytest.raises(error, match=match):
        estimate_epsilon_lower_bound(scores_d, scores_d_prime, **arguments)


# ---------------------------------------------------------------------------------
# estimate_epsilon_lower_bound: properties
# ---------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    scores_d=scores_strategy,
    scores_d_prime=scores_strategy,
    thresholds=thresholds_strategy,
    confidence=st.floats(0.5, 0.999),
    delta=st.sampled_from([0.0, 0.01, 0.2]),
)
def test_bound_matches_slow_reference(
    scores_d: np.ndarray,
    scores_d_prime: np.ndarray,
    thresholds: np.ndarray,
    confidence: float,
    delta: float,
) -> None:
    result = estimate_epsilon_lower_bound(
        scores_d, scores_d_prime, thresholds=thresholds, confidence=confidence, delta=delta
    )
    expected = _reference_bound(scores_d, scores_d_prime, thresholds, confidence, delta)
    assert result.epsilon_lower_bound == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    scores_d=scores_strategy,
    scores_d_prime=scores_strategy,
    thresholds=thresholds_strategy,
    seed=st.integers(0, 2**32 - 1),
)
def test_bound_is_invariant_to_permutation(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, thresholds: np.ndarray, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    result = estimate_epsilon_lower_bound(scores_d, scores_d_prime, thresholds=thresholds)
    permuted = estimate_epsilon_lower_bound(
        rng.permutation(scores_d), rng.permutation(scores_d_prime), thresholds=thresholds
    )
    # `==` on the dataclass would fail on a NaN threshold; compare the reprs.
    assert repr(permuted) == repr(result)


@settings(max_examples=100, deadline=None)
@given(
    scores_d=scores_strategy,
    scores_d_prime=scores_strategy,
    thresholds=thresholds_strategy,
    confidence=st.floats(0.5, 0.999),
)
def test_bound_is_non_negative_and_below_statistical_ceiling(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, thresholds: np.ndarray, confidence: float
) -> None:
    result = estimate_epsilon_lower_bound(
        scores_d, scores_d_prime, thresholds=thresholds, confidence=confidence
    )
    level = (1.0 - confidence) / (2 * result.n_tests)
    n_d, n_dp = scores_d.size, scores_d_prime.size
    ceiling = max(0.0, _ceiling(n_d, n_dp, level), _ceiling(n_dp, n_d, level))
    assert 0.0 <= result.epsilon_lower_bound <= ceiling * (1 + 1e-12)
    assert result.n_samples == min(n_d, n_dp)
    if result.direction == NO_EVIDENCE:
        assert result.epsilon_lower_bound == 0.0
    else:
        assert result.direction in DIRECTIONS
        assert result.threshold in thresholds
        index = list(thresholds).index(result.threshold)
        c = thresholds[index]
        assert result.count_d == int(np.sum(scores_d >= c))
        assert result.count_d_prime == int(np.sum(scores_d_prime >= c))


@settings(max_examples=100, deadline=None)
@given(scores=scores_strategy, thresholds=thresholds_strategy)
def test_identical_worlds_give_no_evidence(scores: np.ndarray, thresholds: np.ndarray) -> None:
    # p_lo < k/n < q_hi strictly, so every test is negative: exactly 0.
    result = estimate_epsilon_lower_bound(scores, scores.copy(), thresholds=thresholds)
    assert result.epsilon_lower_bound == 0.0
    assert result.direction == NO_EVIDENCE


@settings(max_examples=100, deadline=None)
@given(scores_d=scores_strategy, scores_d_prime=scores_strategy, thresholds=thresholds_strategy)
def test_swapping_worlds_swaps_direction_and_counts(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, thresholds: np.ndarray
) -> None:
    result = estimate_epsilon_lower_bound(scores_d, scores_d_prime, thresholds=thresholds)
    swapped = estimate_epsilon_lower_bound(scores_d_prime, scores_d, thresholds=thresholds)
    assert swapped.epsilon_lower_bound == result.epsilon_lower_bound
    assert (swapped.count_d, swapped.count_d_prime) == (result.count_d_prime, result.count_d)
    flip = {"D>D'": "D'>D", "D'>D": "D>D'", NO_EVIDENCE: NO_EVIDENCE}
    assert swapped.direction == flip[result.direction]


@settings(max_examples=100, deadline=None)
@given(
    scores_d=scores_strategy,
    scores_d_prime=scores_strategy,
    thresholds=thresholds_strategy,
    confidences=st.tuples(st.floats(0.5, 0.999), st.floats(0.5, 0.999)).map(sorted),
    deltas=st.tuples(st.floats(0.0, 0.5), st.floats(0.0, 0.5)).map(sorted),
)
def test_bound_is_monotone_in_confidence_and_delta(
    scores_d: np.ndarray,
    scores_d_prime: np.ndarray,
    thresholds: np.ndarray,
    confidences: list[float],
    deltas: list[float],
) -> None:
    def bound(confidence: float, delta: float) -> float:
        return estimate_epsilon_lower_bound(
            scores_d, scores_d_prime, thresholds=thresholds, confidence=confidence, delta=delta
        ).epsilon_lower_bound

    low_confidence, high_confidence = confidences
    small_delta, large_delta = deltas
    assert bound(high_confidence, small_delta) <= bound(low_confidence, small_delta)
    assert bound(low_confidence, large_delta) <= bound(low_confidence, small_delta)


@settings(max_examples=100, deadline=None)
@given(scores_d=scores_strategy, scores_d_prime=scores_strategy, thresholds=thresholds_strategy)
def test_bound_is_invariant_to_monotone_rescaling(
    scores_d: np.ndarray, scores_d_prime: np.ndarray, thresholds: np.ndarray
) -> None:
    # Multiplying scores and thresholds by 2 is exact, so every event is unchanged.
    result = estimate_epsilon_lower_bound(scores_d, scores_d_prime, thresholds=thresholds)
    scaled = estimate_epsilon_lower_bound(
        2.0 * scores_d, 2.0 * scores_d_prime, thresholds=2.0 * thresholds
    )
    assert scaled.epsilon_lower_bound == result.epsilon_lower_bound
    assert (scaled.count_d, scaled.count_d_prime) == (result.count_d, result.count_d_prime)


# ---------------------------------------------------------------------------------
# Statistical soundness: the bound never exceeds the true ε
# ---------------------------------------------------------------------------------

# Each soundness case runs at confidence 1 - 1e-7, so a correct estimator exceeds
# the true ε with probability <= 1e-7 per case; the 10 cases below together fail
# with probability <= 1e-6.
SOUNDNESS_CONFIDENCE = 1.0 - 1e-7


@pytest.mark.statistical
@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0, 4.0])
def test_soundness_scalar_laplace(scale: float) -> None:
    rng = np.random.default_rng(child_seed(7101, int(scale * 4)))
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=scale, n_nodes=1, n_samples=1_000_000, rng=rng
    )
    result = estimate_epsilon_lower_bound(
        scores_d,
        scores_d_prime,
        thresholds=laplace_threshold_grid(1.0 / scale),
        confidence=SOUNDNESS_CONFIDENCE,
    )
    assert 0.0 < result.epsilon_lower_bound <= 1.0 / scale


@pytest.mark.statistical
@pytest.mark.parametrize(("scale", "n_nodes"), [(4.0, 5), (5.0, 5)])
def test_soundness_laplace_tree(scale: float, n_nodes: int) -> None:
    rng = np.random.default_rng(child_seed(7102, int(scale)))
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=scale, n_nodes=n_nodes, n_samples=1_000_000, rng=rng
    )
    result = estimate_epsilon_lower_bound(
        scores_d,
        scores_d_prime,
        thresholds=laplace_threshold_grid(n_nodes / scale),
        confidence=SOUNDNESS_CONFIDENCE,
    )
    assert 0.0 < result.epsilon_lower_bound <= n_nodes / scale


@pytest.mark.statistical
@pytest.mark.parametrize("delta", [0.01, 0.1, 0.3])
def test_soundness_laplace_with_delta(delta: float) -> None:
    # Lap(1) with sensitivity 1 is (1 + 2 ln(1 - delta), delta)-DP, tight: its
    # hockey-stick divergence is delta(eps') = 1 - exp((eps' - 1) / 2).
    true_epsilon = 1.0 + 2.0 * math.log1p(-delta)
    rng = np.random.default_rng(child_seed(7103, int(delta * 100)))
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=1.0, n_nodes=1, n_samples=1_000_000, rng=rng
    )
    result = estimate_epsilon_lower_bound(
        scores_d,
        scores_d_prime,
        thresholds=laplace_threshold_grid(1.0),
        confidence=SOUNDNESS_CONFIDENCE,
        delta=delta,
    )
    assert 0.0 < result.epsilon_lower_bound <= true_epsilon
    assert result.delta == delta


@pytest.mark.statistical
def test_soundness_raw_output_score() -> None:
    # Any predeclared post-processing is a valid score, not only the LLR.
    rng = np.random.default_rng(7104)
    scores_d = 1.0 + rng.laplace(0.0, 1.0, size=1_000_000)
    scores_d_prime = rng.laplace(0.0, 1.0, size=1_000_000)
    result = estimate_epsilon_lower_bound(
        scores_d,
        scores_d_prime,
        thresholds=np.linspace(-3.0, 4.0, 29),
        confidence=SOUNDNESS_CONFIDENCE,
    )
    assert 0.0 < result.epsilon_lower_bound <= 1.0


@pytest.mark.statistical
def test_coverage_at_operational_confidence() -> None:
    # 200 independent audits at 95% confidence of Lap(1) (true ε = 1) with the
    # optimal event alone. Each exceeds 1 with probability <= 0.05, so the number
    # of exceedances is dominated by Binomial(200, 0.05), and
    # P(Binomial(200, 0.05) >= 28) = 9.6e-7: false-failure probability <= 1e-6.
    rng = np.random.default_rng(7105)
    n_audits, n_samples = 200, 20_000
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=1.0, n_nodes=1, n_samples=n_audits * n_samples, rng=rng
    )
    exceedances = 0
    for audit in range(n_audits):
        rows = slice(audit * n_samples, (audit + 1) * n_samples)
        result = estimate_epsilon_lower_bound(
            scores_d[rows], scores_d_prime[rows], thresholds=[1.0], confidence=0.95
        )
        exceedances += result.epsilon_lower_bound > 1.0
    assert exceedances < 28


# ---------------------------------------------------------------------------------
# Statistical power: the bound is tight for Laplace mechanisms
# ---------------------------------------------------------------------------------


@pytest.mark.statistical
def test_power_laplace_epsilon_one() -> None:
    # 64 tests at 95%: per-bound level a = 0.05/256. At the top threshold c = 1 the
    # probabilities are p = 1/2 (D) and q = exp(-1)/2 = 0.184 (D'). If the counts
    # satisfy k_D >= 495000 and k_D' <= 188000, that test alone gives 0.958 >= 0.9.
    # P(k_D < 495000) <= 7.7e-24 and P(k_D' > 188000) <= 7.4e-26 (exact binomial
    # tails), so this test fails with probability < 1e-22. Typical value: 0.989.
    rng = np.random.default_rng(7201)
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=1.0, n_nodes=1, n_samples=1_000_000, rng=rng
    )
    result = estimate_epsilon_lower_bound(
        scores_d, scores_d_prime, thresholds=laplace_threshold_grid(1.0)
    )
    assert 0.9 <= result.epsilon_lower_bound <= 1.0
    assert result.direction == "D>D'"


@pytest.mark.statistical
def test_power_laplace_tree() -> None:
    # 5 nodes, b = 4, true ε = 1.25. Top event {LLR >= 1.25}: p = 2**-5 = 0.03125,
    # q = exp(-1.25) / 32 = 0.008953. At a = 0.05/256, counts k_D >= 29800 and
    # k_D' <= 9850 give 1.054 > 1.0 at that threshold alone; P(k_D < 29800) <=
    # 2.4e-17 and P(k_D' > 9850) <= 3.8e-21, so this fails with probability
    # < 1e-16. Typical value: 1.20.
    rng = np.random.default_rng(7202)
    scores_d, scores_d_prime = _laplace_tree_scores(
        scale=4.0, n_nodes=5, n_samples=1_000_000, rng=rng
    )
    result = estimate_epsilon_lower_bound(
        scores_d, scores_d_prime, thresholds=laplace_threshold_grid(1.25)
    )
    assert 1.0 < result.epsilon_lower_bound <= 1.25


# ---------------------------------------------------------------------------------
# Curve audit, Gaussian-DP μ, one-run audit, white-box scores
# ---------------------------------------------------------------------------------

from fedpriv.audit.estimators import (  # noqa: E402  (this section's imports, kept with it)
    audit_one_run,
    audit_privacy_curve,
    estimate_delta_lower_bounds,
    estimate_gdp_mu_lower_bound,
    estimate_one_run_epsilon,
    gaussian_log_density_ratio,
    laplace_log_density_ratio,
    one_run_p_value,
)
from fedpriv.privacy import ApproxDP, GaussianDP, PureDP  # noqa: E402


def test_delta_bounds_match_a_direct_computation() -> None:
    """δ_LB(ε') is max over tests of p_lo - e^ε' q_hi with the estimator's CP family."""
    rng = np.random.default_rng(3)
    d, dp = rng.laplace(1.0, 1.0, 5_000), rng.laplace(0.0, 1.0, 5_000)
    thresholds = np.array([0.0, 0.5, 1.0])
    curve = estimate_delta_lower_bounds(d, dp, thresholds=thresholds, epsilons=[0.0, 0.3])
    level = 0.05 / (4 * thresholds.size)
    expected = []
    for e in (0.0, 0.3):
        best = 0.0
        for c in thresholds:
            k_d, k_dp = int((d >= c).sum()), int((dp >= c).sum())
            lo_d = stats.beta.ppf(level, k_d, 5_000 - k_d + 1)
            hi_dp = stats.beta.isf(level, k_dp + 1, 5_000 - k_dp)
            lo_dp = stats.beta.ppf(level, k_dp, 5_000 - k_dp + 1)
            hi_d = stats.beta.isf(level, k_d + 1, 5_000 - k_d)
            best = max(best, lo_d - math.exp(e) * hi_dp, lo_dp - math.exp(e) * hi_d)
        expected.append(best)
    np.testing.assert_allclose(curve.delta_lower_bounds, expected, rtol=1e-10)
    assert curve.claimed_deltas is None and not curve.violated


@pytest.mark.statistical
def test_curve_audit_against_claims() -> None:
    """Laplace(1) on a shift of 1 is exactly 1-DP: its curve sits below PureDP(1)'s
    privacy region and above PureDP(0.5)'s (true δ(0) = 1 - e^{-1/2} = 0.39)."""
    rng = np.random.default_rng(4)
    d, dp = rng.laplace(1.0, 1.0, 100_000), rng.laplace(0.0, 1.0, 100_000)
    grid = np.linspace(-1.0, 2.0, 13)
    assert not audit_privacy_curve(d, dp, claim=PureDP(1.0), thresholds=grid).violated
    flagged = audit_privacy_curve(d, dp, claim=PureDP(0.5), thresholds=grid)
    assert flagged.violated and min(flagged.excess) > 0.1  # true δ(ε') - claimed > 0.13
    assert audit_privacy_curve(d, dp, claim=ApproxDP(0.5, 0.01), thresholds=grid).violated
    with pytest.raises(ValueError, match="`epsilons` must be >= 0"):
        estimate_delta_lower_bounds(d, dp, thresholds=grid, epsilons=[-0.1])


@pytest.mark.statistical
def test_gdp_mu_bound_is_sound_and_tight() -> None:
    """N(μ, 1) vs N(0, 1) is exactly μ-GDP; the bound is below μ and close at 10^5."""
    rng = np.random.default_rng(5)
    for mu in (0.5, 1.0):
        d, dp = rng.normal(mu, 1.0, 100_000), rng.normal(0.0, 1.0, 100_000)
        bound = estimate_gdp_mu_lower_bound(d, dp, thresholds=np.linspace(-0.5, 1.5, 9))
        assert 0.9 * mu < bound.mu_lower_bound <= mu
        assert bound.epsilon_lower_bound(1e-5) <= GaussianDP(mu).get_epsilon(1e-5)
    same = estimate_gdp_mu_lower_bound(dp, dp, thresholds=[0.0])
    assert same.mu_lower_bound == 0.0 and same.direction == NO_EVIDENCE


def test_one_run_p_value_matches_the_binomial_tail_and_naive_delta_term() -> None:
    m, r, v, eps, delta = 200, 50, 35, 0.4, 1e-3
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = stats.binom.sf(v - 1, r, q)
    assert math.isclose(one_run_p_value(m, r, v, eps), tail, rel_tol=1e-12)
    alpha, running = 0.0, 0.0  # the loop of jax_privacy's naive reference
    for i in range(1, v + 1):
        running += stats.binom.pmf(v - i, r, q)
        alpha = max(alpha, running / i)
    assert math.isclose(
        one_run_p_value(m, r, v, eps, delta), min(1.0, tail + alpha * delta * 2 * m), rel_tol=1e-9
    )
    with pytest.raises(ValueError, match="`n_correct` must be <= n_guesses"):
        one_run_p_value(10, 3, 4, 1.0)


def test_one_run_epsilon_is_the_root_of_the_p_value() -> None:
    eps = estimate_one_run_epsilon(1_000, 200, 160, confidence=0.95)
    assert math.isclose(one_run_p_value(1_000, 200, 160, eps), 0.05, rel_tol=1e-6)
    assert estimate_one_run_epsilon(1_000, 200, 160, confidence=0.95, delta=1e-4) < eps
    bits = np.array([True, False] * 50)
    with pytest.raises(ValueError, match="must have the shape"):
        audit_one_run(np.zeros(99), bits)
    with pytest.raises(TypeError, match="must be a bool array"):
        audit_one_run(np.zeros(100), bits.astype(int))


def test_white_box_ratios_are_exact() -> None:
    llr = laplace_log_density_ratio([1.0, 2.0], [0.0, 2.5], 2.0)
    y = np.array([[50.0, -50.0], [0.5, 2.25], [-50.0, 50.0]])
    np.testing.assert_array_equal(llr(y), [0.75, 0.0, -0.75])  # saturation exact
    gauss = gaussian_log_density_ratio([1.0], [0.0], 2.0)
    y = np.array([0.3, 1.7])
    expected = stats.norm.logpdf(y, 1.0, 2.0) - stats.norm.logpdf(y, 0.0, 2.0)
    np.testing.assert_allclose(gauss(y), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="`scale` must be in"):
        laplace_log_density_ratio(1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="1-D of equal length"):
        gaussian_log_density_ratio([1.0, 2.0], [0.0], 1.0)
