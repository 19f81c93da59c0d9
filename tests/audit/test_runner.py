"""Tests of fedpriv.audit.engine.tree: coupled Monte-Carlo audits of the Laplace tree counter.

Setting: one stream of ``T = 16`` rounds, the arm pulled every round, rewards 1 (D)
vs 0 (D') at round 1. On a counter that releases every prefix round 1 sits in
``D = 5`` tree nodes; with per-node scale ``b`` the exact privacy loss is ``D / b``: the
paper's calibration ``b = ⌈log2 16⌉ / ε = 4`` gives 1.25 > 1 there, ``b = 5`` exactly 1.
Fed_UCB itself sends and acts on ϑ̃(t−1) only (Zhu et al. Alg. 4 lines 19 and 9): its
view holds the prefixes 1..15, ``D = 4`` released nodes, and ``b = 4`` is exactly 1
(the corrected calibration on the view); 1.25 is Fed_UCB's ε only if the final
estimate ϑ̃(16) is published too.

Statistical tests pin their seeds and state their false-failure probability
(<= 1e-6 each). For detection tests the argument is computed in the test itself
(:func:`_pessimistic_top_event_bound`): even with both top-event counts at their
1e-7 tail quantiles the lower bound would still exceed the claim.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree import TreeAuditResult, audit_tree_counter, sample_tree_llr
from fedpriv.audit.estimators import clopper_pearson_interval
from fedpriv.privacy import gossip_fed_ucb_scale
from scipy import stats

__all__: list[str] = []

FALSE_FAILURE_PROBABILITY = 1e-6

#: Points of `laplace_threshold_grid`'s default grid used by `audit_tree_counter`.
N_THRESHOLDS = 32


def _top_event_probabilities(n_nodes: int, scale: float) -> tuple[float, float]:
    """``P_D`` and ``P_D'`` of ``{LLR = max}``: every node noise >= 0 (D), >= 1 (D')."""
    return 0.5**n_nodes, (0.5 * math.exp(-1.0 / scale)) ** n_nodes


def _pessimistic_top_event_bound(
    *, n_nodes: int, scale: float, n_samples: int, confidence: float, tail: float
) -> float:
    """ε lower bound of the top-threshold test when both counts are unlucky.

    ``count_D`` is at its ``tail`` lower quantile and ``count_D'`` at its ``tail``
    upper quantile; the estimator's bound is at least this with probability
    >= ``1 - 2 * tail`` (Clopper–Pearson bounds are monotone in the count and the
    estimator returns the best of its tests).
    """
    p_d, p_d_prime = _top_event_probabilities(n_nodes, scale)
    count_d = int(stats.binom.ppf(tail, n_samples, p_d))  # P(count < this) <= tail
    count_dp = int(stats.binom.isf(tail, n_samples, p_d_prime))  # P(count > this) <= tail
    significance = (1.0 - confidence) / (2 * 2 * N_THRESHOLDS)
    p_lo, _ = clopper_pearson_interval(count_d, n_samples, significance=significance, side="lower")
    _, q_hi = clopper_pearson_interval(count_dp, n_samples, significance=significance, side="upper")
    return math.log(float(p_lo) / float(q_hi))


# ------------------------------------------------------------------ deterministic
def test_audit_result_fields() -> None:
    pair = worst_case_reward_pair(16)
    result = audit_tree_counter(pair, scale=4.0, claimed_epsilon=1.0, n_samples=2000, seed=0)
    assert isinstance(result, TreeAuditResult)
    assert (result.horizon, result.t, result.n_nodes) == (16, 0, 5)
    assert result.scale == 4.0 and result.claimed_epsilon == 1.0
    assert result.accountant_epsilon == 1.25  # 5 nodes / b = 4
    assert result.bound.n_samples == 2000 and result.bound.confidence == 0.95
    assert result.bound.n_tests == 2 * N_THRESHOLDS
    assert result.seconds > 0.0
    assert result.violated == (result.bound.epsilon_lower_bound > 1.0)


def test_accountant_epsilon_scales_with_the_reward_range() -> None:
    pair = worst_case_reward_pair(16, low=0.0, high=2.0)
    result = audit_tree_counter(pair, scale=4.0, claimed_epsilon=1.0, n_samples=500, seed=0)
    assert result.accountant_epsilon == 2.5


def test_sample_tree_llr_is_reproducible_and_worlds_differ() -> None:
    pair = worst_case_reward_pair(16)
    kw = {"scale": 4.0, "n_samples": 5000, "seed": 3}
    d = sample_tree_llr(pair, world=0, **kw)
    assert d.shape == (5000,) and d.dtype == np.float64
    np.testing.assert_array_equal(d, sample_tree_llr(pair, world=0, **kw))
    assert not np.array_equal(d, sample_tree_llr(pair, world=1, **kw))
    assert not np.array_equal(d, sample_tree_llr(pair, world=0, **{**kw, "seed": 4}))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"world": 2}, ValueError, "`world`"),
        ({"scale": 0.0}, ValueError, "`scale`"),
        ({"scale": math.nan}, ValueError, "`scale`"),
        ({"n_samples": 0}, ValueError, "`n_samples`"),
        ({"n_samples": 10.0}, TypeError, "`n_samples`"),
        ({"batch_size": 0}, ValueError, "`batch_size`"),
        ({"seed": -1}, ValueError, "`seed`"),
    ],
)
def test_sample_tree_llr_rejects_bad_input(kwargs: dict, error: type, match: str) -> None:
    arguments = {"world": 0, "scale": 4.0, "n_samples": 10, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        sample_tree_llr(worst_case_reward_pair(4), **arguments)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"claimed_epsilon": 0.0}, ValueError, "`claimed_epsilon`"),
        ({"claimed_epsilon": "1"}, TypeError, "`claimed_epsilon`"),
        ({"scale": -1.0}, ValueError, "`scale`"),
        ({"confidence": 1.0}, ValueError, "`confidence`"),
    ],
)
def test_audit_tree_counter_rejects_bad_input(kwargs: dict, error: type, match: str) -> None:
    arguments = {"scale": 4.0, "claimed_epsilon": 1.0, "n_samples": 10, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        audit_tree_counter(worst_case_reward_pair(4), **arguments)


# ---------------------------------------------------------------------- statistical
@pytest.mark.statistical
def test_paper_calibration_t16_is_detected() -> None:
    """ε' = ε/⌈log2 T⌉ at T = 16 (b = 4) on every prefix: true ε = 1.25 violates ε = 1.

    False failure (bound <= 1): < 2e-7, shown by the pessimistic-count argument below
    (the test threshold ``{LLR = 1.25}`` alone already gives a bound > 1 when both
    counts sit at their 1e-7 tail quantiles).
    """
    scale = gossip_fed_ucb_scale(1.0, 16, mode="paper", log_base="2")
    assert scale == 4.0
    assert (
        _pessimistic_top_event_bound(
            n_nodes=5, scale=4.0, n_samples=10**6, confidence=0.95, tail=1e-7
        )
        > 1.0
    )
    result = audit_tree_counter(
        worst_case_reward_pair(16), scale=scale, claimed_epsilon=1.0, n_samples=10**6, seed=0
    )
    assert result.bound.epsilon_lower_bound > 1.0
    assert result.violated
    assert result.bound.epsilon_lower_bound <= result.accountant_epsilon == 1.25
    assert result.bound.direction == "D>D'" and result.bound.threshold == 1.25


@pytest.mark.statistical
@pytest.mark.parametrize(
    ("scale", "n_samples", "true_epsilon"),
    [
        pytest.param(
            gossip_fed_ucb_scale(1.0, 16, mode="paper", log_base="e"),
            200_000,
            5 / 3,
            id="paper-natural-log-b3-every-prefix",
        ),
        pytest.param(2.0, 200_000, 2.5, id="under-noised-b2"),
    ],
)
def test_broken_calibrations_are_detected(
    scale: float, n_samples: int, true_epsilon: float
) -> None:
    """Every known-broken counter is rejected against the claim ε = 1.

    False failure < 2e-7 each, by the same pessimistic-count argument.
    """
    assert (
        _pessimistic_top_event_bound(
            n_nodes=5, scale=scale, n_samples=n_samples, confidence=0.95, tail=1e-7
        )
        > 1.0
    )
    result = audit_tree_counter(
        worst_case_reward_pair(16), scale=scale, claimed_epsilon=1.0, n_samples=n_samples, seed=1
    )
    assert result.violated
    assert result.accountant_epsilon == pytest.approx(true_epsilon, rel=1e-12)
    assert 1.0 < result.bound.epsilon_lower_bound <= result.accountant_epsilon


@pytest.mark.statistical
def test_corrected_calibration_t16_is_sound() -> None:
    """The corrected calibration is exactly 1-DP on its view: no false alarm.

    On Fed_UCB's view (prefixes 1..15, 4 nodes) the corrected b is 4; when the final
    estimate is published too (prefixes 1..16, 5 nodes) it is 5. False failure (bound >
    1): the estimator's guarantee holds at the family-wise confidence ``1 - 1e-6``
    (predeclared threshold grid, i.i.d. samples within each world, exact
    Clopper–Pearson bounds), so the probability is <= 1e-6 per audit (2e-6 in all).
    """
    for publish_final, released, scale in ((False, 15, 4.0), (True, 16, 5.0)):
        assert gossip_fed_ucb_scale(1.0, 16, mode="corrected", publish_final=publish_final) == scale
        result = audit_tree_counter(
            worst_case_reward_pair(16),
            scale=scale,
            claimed_epsilon=1.0,
            n_samples=10**6,
            seed=0,
            confidence=1.0 - FALSE_FAILURE_PROBABILITY,
            released_prefixes=released,
        )
        assert result.accountant_epsilon == 1.0
        assert result.n_nodes == released.bit_length()
        assert result.bound.epsilon_lower_bound <= 1.0
        assert result.bound.epsilon_lower_bound <= result.accountant_epsilon
        assert not result.violated


@pytest.mark.statistical
def test_llr_scores_are_bounded_and_saturate_with_the_right_probability() -> None:
    """Scores lie in [-D/b, D/b] and hit +D/b w.p. 2^-D in D (every node noise >= 0).

    Checked in both worlds and at both ends: ``P_D(+max) = P_D'(-max) = 2^-5`` and
    ``P_D'(+max) = P_D(-max) = (e^{-1/b}/2)^5``. Each of the four counts is tested
    against two-sided binomial quantiles at 1e-6 / 4, so the false-failure
    probability is <= 1e-6.
    """
    pair, scale, n_samples, n_nodes = worst_case_reward_pair(16), 4.0, 300_000, 5
    max_llr = n_nodes / scale
    p_half, p_shifted = _top_event_probabilities(n_nodes, scale)
    tail = FALSE_FAILURE_PROBABILITY / 4 / 2
    counts = {}
    for world in (0, 1):
        scores = sample_tree_llr(pair, world=world, scale=scale, n_samples=n_samples, seed=7)
        assert np.all(np.abs(scores) <= max_llr)
        counts[world, +1] = int(np.sum(scores == max_llr))
        counts[world, -1] = int(np.sum(scores == -max_llr))
    expected = {(0, +1): p_half, (1, -1): p_half, (0, -1): p_shifted, (1, +1): p_shifted}
    for key, p in expected.items():
        low = stats.binom.ppf(tail, n_samples, p)
        high = stats.binom.isf(tail, n_samples, p)
        assert low <= counts[key] <= high, (key, counts[key], low, high)
