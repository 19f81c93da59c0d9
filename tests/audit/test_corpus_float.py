"""C1: Mironov's attack on floating-point Laplace noise, and the secure twin.

The witness and event checks are exact (floating-point inversion, no statistics); the
audit verdicts use pinned seed 0 like tests/audit/test_corpus.py (the broken entry's
true ε is infinite, so its detection fails only if no draw in 20,000 lands in an
event of probability 0.27; the twin cannot produce an output in the event at all).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.audit.regression.corpus import CORPUS, get_entry
from fedpriv.audit.regression.corpus_float import (
    float_laplace,
    has_float_preimage,
    mironov_witness,
    off_grid_event,
    secure_laplace,
)

__all__: list[str] = []


def test_entries_are_registered_as_a_broken_and_twin_pair() -> None:
    broken, twin = get_entry("float_laplace_mironov"), get_entry("secure_discrete_laplace")
    assert broken in CORPUS and twin in CORPUS
    assert broken.expected_violated and not twin.expected_violated
    assert broken.twin == twin.name and math.isinf(broken.true_epsilon)


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0])
def test_float_laplace_reaches_outputs_that_the_neighbor_cannot(scale) -> None:
    """ε = ∞: outputs under x = 0 in the event, none under x' = 1, by exact inversion."""
    rng = np.random.default_rng(21)
    y = float_laplace(0.0, 50_000, rng, scale=scale)
    y_prime = float_laplace(1.0, 50_000, rng, scale=scale)
    hits = off_grid_event(y) == 1.0
    assert hits.sum() > 0
    assert not np.any(off_grid_event(y_prime))  # probability exactly 0 (Sterbenz)
    assert not np.any(has_float_preimage(y[hits], 1.0))  # no double n: fl(1 + n) = y
    witness = mironov_witness(y, 1.0)
    assert witness is not None and witness in set(y.tolist())
    assert not has_float_preimage(np.array([witness]), 1.0)[0]
    assert mironov_witness(y_prime, 0.0) is None  # every D' output has a D preimage


def test_preimage_check_finds_the_preimages_that_exist() -> None:
    rng = np.random.default_rng(22)
    n = rng.laplace(0.0, 1.0, 10_000)
    y = 1.0 + n
    assert np.all(has_float_preimage(y, 1.0))


def test_secure_twin_outputs_are_grid_points_reachable_from_both_worlds() -> None:
    rng = np.random.default_rng(23)
    for x, other in ((0.0, 1.0), (1.0, 0.0)):
        y = secure_laplace(x, 50_000, rng, scale=1.0)
        assert not np.any(off_grid_event(y))
        assert np.all(y * 2.0**20 == np.round(y * 2.0**20))
        assert mironov_witness(y, other) is None


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["float_laplace_mironov", "secure_discrete_laplace"])
def test_audit_flags_the_float_mechanism_and_passes_the_twin(name) -> None:
    entry = get_entry(name)
    result = entry.audit(seed=0, executor=None)
    assert result.violated is entry.expected_violated, result.evidence
    if not entry.expected_violated:
        assert result.epsilon_lower_bound <= entry.true_epsilon
