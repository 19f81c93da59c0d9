"""Tests for `fedpriv.privacy.mechanisms.interval_messages`: a message is charged with all it depends on.

Issue 10 §4: message ``n`` of the cooperative UCB carries release ``n`` and counts that
follow releases ``1 .. n-1``; its ε must be at least the pure ε of release ``n`` and at
least the composition of what the counts depend on, for every ``n``.
"""

from __future__ import annotations

import math

import pytest
from fedpriv.privacy import Accountant, event_epsilon
from fedpriv.privacy.accounting import events
from fedpriv.privacy.mechanisms.interval import (
    IntervalRelease,
    interval_release_epsilon,
    make_interval_release,
)
from fedpriv.privacy.mechanisms.interval_messages import (
    interval_count_dependencies,
    interval_message_accountant,
    interval_message_costs,
    interval_message_event,
    worst_interval_message,
)
from hypothesis import given, settings
from hypothesis import strategies as st


@st.composite
def paper_streams(draw: st.DrawFn, max_horizon: int = 80) -> IntervalRelease:
    """The paper's calibration (reconstructed with medium confidence decaying / reconstructed with low confidence fixed) at random ε, ϑ and horizon."""
    epsilon = draw(st.floats(min_value=0.05, max_value=2.0))
    rule = draw(st.sampled_from(["decaying", "fixed"]))
    theta = draw(st.floats(min_value=1.01, max_value=1.99)) if rule == "decaying" else None
    first = math.ceil(1.0 / epsilon)
    horizon = draw(st.integers(min_value=first, max_value=max(first, max_horizon)))
    return make_interval_release(epsilon, horizon, theta=theta, rule=rule)


def _release_alone(event: IntervalRelease, n: int) -> events.Laplace:
    return events.Laplace(scale=event.scales[n - 1], l1_sensitivity=event.l1_sensitivities[n - 1])


def _accountant_epsilon(event, target_delta: float) -> float:
    accountant = Accountant(disjoint=("stream",))
    accountant.spend(event, key={"stream": 0})
    return accountant.get_epsilon(target_delta)


@given(event=paper_streams())
def test_every_message_costs_at_least_its_release_and_its_count_dependencies(event):
    """Pure (the per-message claim's δ = 0): for every n, ε(message n) >= ε(release n)
    and >= ε(releases 1..n-1), and the last message costs the whole stream."""
    costs = interval_message_costs(event, 0.0)
    assert [c.message for c in costs] == list(range(1, len(event.counts) + 1))
    for cost in costs:
        n = cost.message
        assert cost.releases == n and cost.route == "pure"
        assert cost.epsilon >= event_epsilon(_release_alone(event, n))
        counts = interval_count_dependencies(event, n)
        if counts is None:
            assert n == 1
            assert cost.epsilon == pytest.approx(event_epsilon(_release_alone(event, 1)), rel=1e-12)
        else:
            assert cost.epsilon >= _accountant_epsilon(counts, 0.0)
    worst = worst_interval_message(event, 0.0)
    assert worst.message == len(event.counts)
    assert worst.epsilon == pytest.approx(interval_release_epsilon(event), rel=1e-12)


@settings(max_examples=6)
@given(event=paper_streams(max_horizon=10), target_delta=st.sampled_from([1e-6, 1e-3]))
def test_approximate_message_costs_dominate_what_they_depend_on(event, target_delta):
    """At δ > 0 (tightest route, PLD included) the same two inequalities hold."""
    for cost in interval_message_costs(event, target_delta):
        n = cost.message
        alone = Accountant(disjoint=("stream",))
        alone.spend(_release_alone(event, n), key={"stream": 0})
        assert cost.epsilon >= alone.get_epsilon(target_delta)
        counts = interval_count_dependencies(event, n)
        if counts is not None:
            assert cost.epsilon >= _accountant_epsilon(counts, target_delta)


def test_message_event_is_the_prefix_and_the_accountant_charges_it():
    event = make_interval_release(0.5, 9, theta=1.1)
    assert interval_message_event(event, 2).counts == (2, 4)
    assert interval_message_event(event, 4) == event
    acc = interval_message_accountant(event, 2)
    assert acc.ledger.cells() == [[(interval_message_event(event, 2), 1)]]
    expected = 2**-0.55 + 4**-0.55  # ε_n = n^(-ϑ/2) at counts 2 and 4
    assert acc.get_epsilon(0.0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("message", "error", "match"),
    [
        (0, ValueError, r"`message` must be >= 1, got 0"),
        (5, ValueError, r"`message` must be in \[1, 4\]"),
        (1.5, TypeError, "message"),
    ],
)
def test_bad_message_index_raises(message, error, match):
    event = make_interval_release(0.5, 9, theta=1.1)
    with pytest.raises(error, match=match):
        interval_message_event(event, message)


def test_non_interval_events_and_bad_delta_are_rejected():
    with pytest.raises(TypeError, match="`event` must be an IntervalRelease"):
        interval_message_costs(events.Laplace(scale=1.0, l1_sensitivity=1.0), 0.0)
    with pytest.raises(ValueError, match="target_delta"):
        interval_message_costs(make_interval_release(0.5, 9, theta=1.1), 1.5)


def test_target_delta_is_required():
    # No silent delta = 0 (issue 21): the per-message costs name their delta.
    event = make_interval_release(0.5, 9, rule="fixed")
    with pytest.raises(TypeError, match="target_delta"):
        interval_message_costs(event)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="target_delta"):
        worst_interval_message(event)  # type: ignore[call-arg]
    assert worst_interval_message(event, 0.0).epsilon == 2.0
