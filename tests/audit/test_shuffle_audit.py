"""Tests for `fedpriv.audit.engine.shuffle_audit`: the end-to-end audit of a shuffled view.

Statistical tests pin their seed; the lower bound is a Clopper–Pearson bound at
confidence 1 - 10⁻⁶, so a sound mechanism shows ``lower > exact`` with probability at
most 10⁻⁶ per test (the false-alarm rate); ``exact <= upper`` is deterministic (the
route's soundness, tests/privacy/test_shuffling.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.audit.engine.shuffle_audit import (
    audit_shuffled_randomized_response,
    exact_pair_epsilon,
)
from fedpriv.privacy.accounting.shuffling import shuffled_epsilon

CONFIDENCE = 1 - 1e-6
SEED = 20261129


@pytest.mark.statistical
@pytest.mark.parametrize(
    ("local_epsilon", "n_reports", "num_buckets"),
    [(1.0, 4, 2), (2.0, 8, 2), (1.5, 6, 3), (3.0, 5, 4)],
)
def test_lower_bound_is_below_the_route_for_a_sound_mechanism(
    local_epsilon: float, n_reports: int, num_buckets: int
) -> None:
    """False-alarm rate <= 1e-6 (module docstring)."""
    result = audit_shuffled_randomized_response(
        local_epsilon=local_epsilon,
        n_reports=n_reports,
        num_buckets=num_buckets,
        delta=1e-3,
        n_samples=100_000,
        confidence=CONFIDENCE,
        seed=SEED,
    )
    assert result.lower_bound.epsilon_lower_bound <= result.exact_epsilon <= result.upper_bound
    assert not result.violated
    assert result.lower_bound.confidence == CONFIDENCE
    # the audit has power: it finds most of the pair's exact ε at 10⁵ samples
    assert result.lower_bound.epsilon_lower_bound > 0.5 * result.exact_epsilon


@pytest.mark.statistical
@pytest.mark.parametrize(
    ("actual", "claimed", "n_reports", "num_buckets"), [(3.0, 0.5, 5, 2), (2.0, 1.0, 10, 3)]
)
def test_an_under_noised_randomizer_is_detected(
    actual: float, claimed: float, n_reports: int, num_buckets: int
) -> None:
    """The mechanism runs ε₀ = ``actual`` but declares ``claimed``: the audit's lower
    bound exceeds the declared route's upper bound. The exact ε of the pair under the
    mechanism run is far above the declared bound (asserted), so at 10⁵ samples a
    miss needs the Clopper–Pearson bound to lose most of that gap."""
    result = audit_shuffled_randomized_response(
        local_epsilon=actual,
        claimed_local_epsilon=claimed,
        n_reports=n_reports,
        num_buckets=num_buckets,
        delta=1e-3,
        n_samples=100_000,
        confidence=CONFIDENCE,
        seed=SEED,
    )
    assert result.exact_epsilon > 1.5 * result.upper_bound
    assert result.upper_bound == shuffled_epsilon(claimed, n_reports, 1e-3)
    assert result.violated
    assert result.lower_bound.epsilon_lower_bound > result.upper_bound


def test_one_seed_tree_reproduces_the_audit() -> None:
    kwargs = {"local_epsilon": 1.0, "n_reports": 3, "n_samples": 5_000}
    first = audit_shuffled_randomized_response(seed=7, **kwargs)
    second = audit_shuffled_randomized_response(seed=np.random.SeedSequence(7), **kwargs)
    assert first == second
    assert first.seed_entropy == 7


def test_exact_pair_epsilon_of_one_report_is_the_randomizer() -> None:
    """One report: randomized response, ε(δ = 0) = ε₀ (from below)."""
    value = exact_pair_epsilon([0], [1], 0.0, local_epsilon=1.3)
    assert 1.3 * (1 - 1e-6) <= value <= 1.3


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_samples": 0}, ValueError, "n_samples"),
        ({"confidence": 1.0}, ValueError, "confidence"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"num_buckets": 1}, ValueError, "num_buckets"),
        ({"local_epsilon": 0.0}, ValueError, "local_epsilon"),
        ({"claimed_local_epsilon": -1.0}, ValueError, "local_epsilon"),
        ({"pair": ([0, 0], [1, 0])}, ValueError, "n_reports"),
    ],
)
def test_bad_input_is_refused(kwargs, error, match) -> None:
    arguments = {"local_epsilon": 1.0, "n_reports": 3, "n_samples": 10}
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        audit_shuffled_randomized_response(**arguments)
