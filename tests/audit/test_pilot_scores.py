"""The pilot search's vectorized scores equal the per-event reference, float for float.

:func:`fedpriv.audit.engine.coupled._pilot_scores` ranks every candidate event of a
pilot sample with one Clopper–Pearson call per bound; ``_pilot_score`` below (one
event, four scipy calls: the search's code before issue 23) is the reference it must
reproduce exactly, since the chosen event and the reported pilot ε follow from these
scores. Deterministic.
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import (
    AuditBudget,
    _candidate_events,
    _indicator,
    _pilot_scores,
    describe_event,
)
from fedpriv.audit.engine.coupled import search_and_confirm as search
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

__all__: list[str] = []


def _pilot_score(
    hits_d: float,
    n_d: int,
    hits_dp: float,
    n_dp: int,
    delta: float,
    *,
    n_confirm: int,
    confidence: float,
) -> float:
    """One event's projected bound, four scipy calls (the reference)."""
    level = (1.0 - confidence) / 4.0
    k_d = hits_d / n_d * n_confirm
    k_dp = hits_dp / n_dp * n_confirm
    n = float(n_confirm)
    p_low = stats.beta.ppf(level, k_d, n - k_d + 1) if k_d > 0 else 0.0
    q_low = stats.beta.ppf(level, k_dp, n - k_dp + 1) if k_dp > 0 else 0.0
    p_up = stats.beta.isf(level, k_d + 1, n - k_d) if k_d < n else 1.0
    q_up = stats.beta.isf(level, k_dp + 1, n - k_dp) if k_dp < n else 1.0
    best = 0.0
    for num, den in ((p_low, q_up), (q_low, p_up)):
        if num - delta > 0:
            best = max(best, math.log((num - delta) / den))
    return best


@given(
    n_d=st.integers(1, 400),
    n_dp=st.integers(1, 400),
    fractions=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=0, max_size=12),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.05]),
    n_confirm=st.integers(1, 50_000),
    confidence=st.sampled_from([0.9, 0.95, 0.99]),
)
def test_vectorized_scores_equal_the_scalar_reference(
    n_d, n_dp, fractions, delta, n_confirm, confidence
):
    # Edge counts (0 and all hits) in every draw, then the drawn ones.
    hits_d = np.array([0.0, n_d, 0.0, n_d] + [round(a * n_d) for a, _ in fractions])
    hits_dp = np.array([0.0, n_dp, n_dp, 0.0] + [round(b * n_dp) for _, b in fractions])
    fast = _pilot_scores(
        hits_d, n_d, hits_dp, n_dp, delta, n_confirm=n_confirm, confidence=confidence
    )
    slow = [
        _pilot_score(a, n_d, b, n_dp, delta, n_confirm=n_confirm, confidence=confidence)
        for a, b in zip(hits_d, hits_dp, strict=True)
    ]
    assert fast == slow


def test_search_chooses_the_reference_event():
    """A whole search reports the event and pilot ε the scalar reference ranks first
    (per column: ``joint=False``; the joint columns are tested in test_joint.py)."""

    def sample(world, n, seed):
        rng = np.random.default_rng(seed)
        return np.stack([rng.laplace(float(world), 1.0, n), rng.integers(0, 3, n)], axis=1)

    budget = AuditBudget(pilot_samples=300, samples=2_000)
    result = search({"pair": sample}, budget=budget, seed=5, delta=0.0, channel="x", joint=False)
    pilots = [sample(w, 300, child_seed(5, 0, 0, w)) for w in (0, 1)]
    best = None
    for event in _candidate_events(np.concatenate(pilots)):
        hits = [_indicator(p, event).sum() for p in pilots]
        score = _pilot_score(
            hits[0], 300, hits[1], 300, 0.0, n_confirm=2_000, confidence=budget.confidence
        )
        if best is None or score > best[0]:
            best = (score, event)
    assert result.pilot_epsilon == best[0] > 0.0
    assert result.event == describe_event(best[1])
