"""``audit_laplace_release`` bounds from counts: the bound of the scores it used to sort.

Issue 23: the confirming runs' LLRs are counted against the predeclared threshold batch
by batch instead of being kept and sorted. The bound must be the one
:func:`estimate_epsilon_lower_bound` gives on the very runs (``sample_laplace_llr`` at
the confirmation's addresses). Deterministic comparison, no false alarms.
"""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.thresholds import design_threshold
from fedpriv.audit.engine.tree_nodes import audit_laplace_release, sample_laplace_llr
from fedpriv.audit.estimators import estimate_epsilon_lower_bound
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 3),
    scale=st.floats(0.05, 3.0),
    n_samples=st.integers(1, 3000),
    batch_size=st.sampled_from([7, 1000, 1 << 18]),
)
def test_counted_bound_is_the_sorted_scores_bound(seed, m, scale, n_samples, batch_size) -> None:
    rng = np.random.default_rng(seed)
    loc_d = rng.random(m)
    loc_d_prime = loc_d - rng.uniform(0.05, 1.0, m)
    root = np.random.SeedSequence(seed)
    counted = audit_laplace_release(
        loc_d,
        loc_d_prime,
        scale=scale,
        l1_sensitivity=1.0,
        n_samples=n_samples,
        seed=root,
        batch_size=batch_size,
    )
    threshold = design_threshold(
        loc_d, loc_d_prime, scale=scale, n_samples=n_samples, confidence=0.95
    )
    scores = [
        sample_laplace_llr(
            loc_d,
            loc_d_prime,
            world=world,
            scale=scale,
            l1_sensitivity=1.0,
            n_samples=n_samples,
            seed=child_seed(root, 1, world),
            batch_size=batch_size,
        )
        for world in (0, 1)
    ]
    sorted_bound = estimate_epsilon_lower_bound(
        *scores, thresholds=np.array([threshold]), confidence=0.95
    )
    assert repr(counted) == repr(sorted_bound)
