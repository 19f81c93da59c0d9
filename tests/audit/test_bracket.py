"""Re-reading a confirmed event at another δ, and the stronger of two audits.

``epsilon_lower_bound_at_delta`` is deterministic given the counts (no seeds);
``stronger_of`` is checked on fixed audit results.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from fedpriv.audit.engine.combine import halved, stronger_of
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit
from fedpriv.audit.estimators import epsilon_lower_bound_at_delta, estimate_epsilon_lower_bound
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []


@settings(max_examples=60, deadline=None)
@given(
    hits_d=st.integers(0, 200),
    hits_dp=st.integers(0, 200),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.1]),
)
def test_rereading_at_the_own_delta_is_the_bound_and_is_monotone(hits_d, hits_dp, delta):
    n = 200
    scores_d = np.r_[np.ones(hits_d), np.zeros(n - hits_d)]
    scores_dp = np.r_[np.ones(hits_dp), np.zeros(n - hits_dp)]
    bound = estimate_epsilon_lower_bound(scores_d, scores_dp, thresholds=[0.5], delta=delta)
    assert math.isclose(
        epsilon_lower_bound_at_delta(bound, delta),
        bound.epsilon_lower_bound,
        rel_tol=1e-12,
        abs_tol=1e-15,
    )
    values = [epsilon_lower_bound_at_delta(bound, d) for d in (0.0, 1e-6, 1e-3, 0.1, 0.5)]
    assert all(a >= b for a, b in itertools.pairwise(values))  # more δ, smaller bound
    assert all(v >= 0.0 for v in values)


def _audit(value: float, confidence: float, event: str) -> EndToEndAudit:
    n = 1000
    hits = round(n * 0.5)
    rare = max(0, round(hits * math.exp(-value)))
    bound = estimate_epsilon_lower_bound(
        np.r_[np.ones(hits), np.zeros(n - hits)],
        np.r_[np.ones(rare), np.zeros(n - rare)],
        thresholds=[0.5],
        confidence=confidence,
    )
    return EndToEndAudit(
        method="end-to-end",
        bound=bound,
        channel="c",
        event=event,
        neighbors="pair",
        pilot_epsilon=math.nan,
        seconds=1.0,
    )


def test_the_stronger_audit_is_reported_at_the_family_confidence():
    budget = halved(AuditBudget(confidence=0.95))
    assert budget.confidence == 0.975
    weak, strong = _audit(0.2, 0.975, "weak"), _audit(1.0, 0.975, "strong")
    for first, second in ((weak, strong), (strong, weak)):
        best = stronger_of(first, second, confidence=0.95, names=("a", "b"))
        assert best.bound.epsilon_lower_bound == strong.bound.epsilon_lower_bound
        assert best.bound.confidence == 0.95
        assert best.seconds == 2.0
        assert "weak" in best.event and "strong" in best.event
