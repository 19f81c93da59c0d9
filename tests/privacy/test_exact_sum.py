"""The fast exact sum of the pure route equals the Fraction sum it replaces, exactly.

Property tests (hypothesis): :func:`fedpriv.privacy.accounting.exact_sum.ratio_sum` is the same
rational as ``Σ count · Fraction(a) / Fraction(b)``; :func:`round_up` is the smallest
double at or above it (never below the exact value); :func:`at_most` decides ``x >= sum``
as the Fraction comparison does. Through the routes: the pure route and
``compose_delta``'s "δ = 0 only when proven" agree with a Fraction computation on cells
of many distinct Laplace scales.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.exact_sum import at_most, ratio_sum, round_up
from fedpriv.privacy.accounting.routes import compose_delta, compose_routes
from fedpriv.privacy.mechanisms.interval import IntervalRelease, interval_release_epsilon
from hypothesis import given, settings
from hypothesis import strategies as st

positive = st.floats(min_value=5e-324, max_value=1e6, allow_nan=False, allow_infinity=False)
nonnegative = st.one_of(st.just(0.0), positive)
terms = st.lists(st.tuples(st.integers(0, 10**6), nonnegative, positive), max_size=40)


def _fraction_sum(items) -> Fraction:
    return sum((count * Fraction(a) / Fraction(b) for count, a, b in items), Fraction(0))


def _fraction_round_up(value: Fraction) -> float:
    rounded = float(value)
    return rounded if Fraction(rounded) >= value else math.nextafter(rounded, math.inf)


@settings(max_examples=300, deadline=None)
@given(terms)
def test_ratio_sum_is_the_fraction_sum(items) -> None:
    numerator, denominator = ratio_sum(items)
    assert denominator > 0
    assert Fraction(numerator, denominator) == _fraction_sum(items)


@settings(max_examples=300, deadline=None)
@given(terms)
def test_round_up_is_the_smallest_double_above_the_sum(items) -> None:
    exact = _fraction_sum(items)
    if exact > Fraction(1.7976931348623157e308):  # above every double: both refuse
        with pytest.raises(OverflowError):
            _fraction_round_up(exact)
        with pytest.raises(OverflowError):
            round_up(*ratio_sum(items))
        return
    value = round_up(*ratio_sum(items))
    assert value == _fraction_round_up(exact)
    assert Fraction(value) >= exact  # a certified upper bound, never below
    assert Fraction(math.nextafter(value, -math.inf)) < exact or value == 0.0


@settings(max_examples=300, deadline=None)
@given(terms, st.floats(min_value=0.0, max_value=1e12, allow_nan=False))
def test_at_most_is_the_exact_comparison(items, value) -> None:
    exact = _fraction_sum(items)
    assert at_most(*ratio_sum(items), value) == (exact <= Fraction(value))
    # on the sum's own rounded-up value the comparison is always True
    if exact <= Fraction(1.7976931348623157e308):
        assert at_most(*ratio_sum(items), round_up(*ratio_sum(items)))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 400), st.integers(1, 60))
def test_calibrated_sums_land_exactly(count, n) -> None:
    """n releases of Laplace(n·Δ/ε) sum to exactly ε where the ratios do (11 × 1/11 = 1)."""
    scale = float(n)
    assert round_up(*ratio_sum([(n, 1.0, scale)])) == 1.0
    assert round_up(*ratio_sum([(count * n, 1.0, scale)])) == float(count)


def test_bad_terms_are_refused() -> None:
    with pytest.raises(ValueError, match="b > 0"):
        ratio_sum([(1, 1.0, 0.0)])
    with pytest.raises(ValueError, match="count >= 0"):
        ratio_sum([(-1, 1.0, 2.0)])
    assert ratio_sum([]) == (0, 1)


scales = st.lists(
    st.floats(min_value=0.05, max_value=50.0, allow_nan=False), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None)
@given(scales, st.floats(min_value=0.0, max_value=200.0, allow_nan=False))
def test_routes_pure_and_proven_zero_delta_match_fractions(values, target) -> None:
    cell = [(events.Laplace(scale=b), 1) for b in values]
    exact = _fraction_sum([(1, 1.0, b) for b in values])
    assert compose_routes(cell, 0.0)["pure"] == _fraction_round_up(exact)
    delta = compose_delta(cell, target)
    if Fraction(target) >= exact:
        assert delta == 0.0
    else:  # δ = 0 only when proven: never below the sum
        assert delta > 0.0


@settings(max_examples=60, deadline=None)
@given(scales)
def test_interval_release_epsilon_matches_fractions(values) -> None:
    n = len(values)
    counts = tuple(range(1, n + 1))
    event = IntervalRelease(
        scales=tuple(values), l1_sensitivities=tuple(1.0 / c for c in counts), counts=counts
    )
    exact = _fraction_sum([(1, 1.0 / c, b) for c, b in zip(counts, values)])
    assert interval_release_epsilon(event) == _fraction_round_up(exact)


def test_composed_of_many_distinct_laplace_is_exact() -> None:
    """1,000 distinct Laplace scales in one Composed event: the exact sum, rounded up."""
    parts = tuple(events.Laplace(scale=1.0 + i / 997) for i in range(1000))
    exact = _fraction_sum([(1, 1.0, p.scale) for p in parts])
    value = compose_routes([(events.Composed(events=parts), 1)], 0.0)["pure"]
    assert value == _fraction_round_up(exact)
    assert compose_delta([(events.Composed(events=parts), 1)], value) == 0.0
    # one ulp below is not proven (the routes' δ there is the PLD's, seconds per call:
    # the exact comparison itself is checked by test_at_most_is_the_exact_comparison)
    below = math.nextafter(value, 0.0)
    assert Fraction(below) < exact


@settings(max_examples=30, deadline=None)
@given(scales)
def test_interval_prefix_sums_match_fractions(values) -> None:
    """Prefixes priced in order (as the per-message accountant does) reuse the previous
    prefix's exact sum; every one still equals the Fraction sum rounded up."""
    counts = tuple(range(1, len(values) + 1))
    sensitivities = tuple(1.0 / c for c in counts)
    for n in range(1, len(values) + 1):
        event = IntervalRelease(
            scales=tuple(values[:n]), l1_sensitivities=sensitivities[:n], counts=counts[:n]
        )
        exact = _fraction_sum([(1, a, b) for a, b in zip(sensitivities[:n], values[:n])])
        assert interval_release_epsilon(event) == _fraction_round_up(exact)
