"""Issue 20: what no query could answer is refused at construction, by name.

Every ceiling is a documented constant (``fedpriv.privacy.events.MAX_*``,
``Accountant``'s ``PLD_DISCRETIZATION_RANGE`` and ``MAX_CELL_RELEASES``,
``audit_mechanism``'s ``MAX_SAMPLES``); what is accepted answers every query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedpriv.privacy import Accountant, events
from fedpriv.privacy.errors import ResourceLimitError
from fedpriv.privacy.events import MAX_COUNT, MAX_DEPTH, MAX_EVENT_EPSILON, MAX_GAUSSIAN_MU
from fedpriv.privacy.guarantees import ApproxDP, PureDP
from fedpriv.privacy.sampling import PoissonSampled


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: events.Laplace(scale=1.0, l1_sensitivity=2**70), "`l1_sensitivity` / `scale`"),
        (lambda: events.Laplace(scale=5e-324), "`l1_sensitivity` / `scale`"),
        (lambda: events.LaplaceTree(scale=1e-300, horizon=4), "`l1_sensitivity` / `scale`"),
        (lambda: events.DiscreteLaplace(scale=1e-16, l1_sensitivity=1), "MAX_LAPLACE_EPSILON"),
        (lambda: events.RandomizedResponse(epsilon=1e308), "`epsilon` must be <= 700"),
        (lambda: events.OpaqueApproxDP(epsilon=1e308, delta=0.0), "`epsilon` must be <= 700"),
        (lambda: events.Gaussian(noise_stddev=5e-324), "`l2_sensitivity` / `noise_stddev`"),
        (lambda: events.Laplace(scale=1.0, l1_sensitivity=5e-324), "smallest normal float"),
        (lambda: events.GaussianTree(noise_stddev=1e-300, horizon=8), "`noise_stddev`"),
        (lambda: events.DiscreteGaussian(sigma=1e-9, l2_sensitivity=1.0), "`sigma`"),
        (lambda: events.SelfComposed(event=events.Laplace(scale=1.0), count=10**12), "MAX_COUNT"),
        (lambda: events.SelfComposed(event=events.Laplace(scale=1.0), count=2**63), "MAX_COUNT"),
        (lambda: events.SelfComposed(
            event=events.SelfComposed(event=events.Laplace(scale=1.0), count=10**4),
            count=10**4), "MAX_COUNT"),
        (lambda: Accountant(pld_discretization=math.nan), r"`pld_discretization` must be in \["),
        (lambda: Accountant(pld_discretization=0.0), r"`pld_discretization` must be in \["),
        (lambda: Accountant(pld_discretization=math.inf), r"`pld_discretization` must be in \["),
    ],
)
def test_unanswerable_values_are_refused_at_construction(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("guarantee", [PureDP(1.0), ApproxDP(1.0, 1e-5)])
def test_a_guarantee_is_not_an_event(guarantee):
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        events.SelfComposed(event=guarantee, count=2)
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        events.Composed(events=(events.Laplace(scale=1.0), guarantee))
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        PoissonSampled(event=guarantee, sampling_rate=0.1)


def test_nesting_is_capped_at_max_depth():
    event = events.Laplace(scale=1.0)
    for _ in range(MAX_DEPTH):
        event = events.Composed(events=(event,))
    with pytest.raises(ValueError, match="MAX_DEPTH = 64"):
        events.Composed(events=(event, events.Laplace(scale=1.0)))  # the 497-deep case
    accountant = Accountant()
    accountant.spend(event)  # the deepest accepted nesting answers
    assert accountant.get_epsilon(0.0) == 1.0


@pytest.mark.parametrize("event", [
    events.RandomizedResponse(epsilon=MAX_EVENT_EPSILON),
    events.SelfComposed(event=events.RandomizedResponse(epsilon=1.0), count=1000),
    events.Gaussian(noise_stddev=1.0 / MAX_GAUSSIAN_MU),
])
def test_the_ceilings_themselves_answer(event):
    accountant = Accountant()
    accountant.spend(event)
    assert math.isfinite(accountant.get_epsilon(1e-5))
    assert math.isfinite(accountant.lower_bound(1e-5))
    assert 0.0 <= accountant.get_delta(1.0) <= 1.0


def test_a_cell_beyond_max_cell_releases_is_a_typed_error_not_a_crash():
    big = events.SelfComposed(event=events.RandomizedResponse(epsilon=1.0), count=MAX_COUNT)
    accountant = Accountant()
    accountant.spend(big)
    accountant.spend(events.RandomizedResponse(epsilon=1.0))
    for query in (lambda: accountant.routes(1e-5), lambda: accountant.lower_bound(1e-5),
                  lambda: accountant.get_delta(1.0)):
        with pytest.raises(ResourceLimitError, match="MAX_CELL_RELEASES"):
            query()
    budgeted = Accountant(budget=PureDP(1e7))
    budgeted.spend(big)
    with pytest.raises(ResourceLimitError):
        budgeted.spend(events.RandomizedResponse(epsilon=1.0))
    assert len(budgeted.charges) == 1


def test_audit_mechanism_caps_samples_before_sampling():
    from fedpriv.audit.regression.api import MAX_SAMPLES, NeighboringPair, audit_mechanism

    calls = []

    def mechanism(dataset, n_samples, rng):
        calls.append(n_samples)
        return rng.laplace(size=n_samples) + dataset

    for name in ("samples", "pilot_samples"):
        with pytest.raises(ResourceLimitError, match=f"`{name}` must be in \\[1, "):
            audit_mechanism(mechanism, NeighboringPair(0.0, 1.0), claim=PureDP(1.0),
                            executor=None, **{name: 10**12})
    assert MAX_SAMPLES == 10**9 and calls == []
    assert np.isfinite(MAX_SAMPLES)
