"""Tests for `privacy.guarantees`: validated, immutable PureDP / ApproxDP.

The tight δ(ε') of Kairouz, Oh & Viswanath (2015, Thm 2.1) is checked against a direct
computation: the hockey-stick divergence ``sup_O P(O) - e^ε' Q(O)`` of the mechanism
that attains the privacy region, found by enumerating every output set.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy.errors import IncompatibleGuaranteeError, ToolkitError
from privacy.guarantees import ApproxDP, PureDP, format_epsilon, pure_to_approx_dp

# ---------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------


def _hockey_stick(p: list[float], q: list[float], target_epsilon: float) -> float:
    """``max over output sets O of P(O) - e^ε' Q(O)``, by enumerating every subset."""
    weight = math.exp(target_epsilon)
    best = 0.0  # the empty set
    outputs = range(len(p))
    for size in range(1, len(p) + 1):
        for subset in itertools.combinations(outputs, size):
            best = max(
                best, sum(p[i] for i in subset) - weight * sum(q[i] for i in subset)
            )
    return best


def _randomized_response(epsilon: float) -> tuple[list[float], list[float]]:
    """Output distributions of ε-DP randomized response on the two inputs."""
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    flip = 1.0 / (1.0 + math.exp(epsilon))  # not 1 - keep: no cancellation
    return [keep, flip], [flip, keep]


def _approx_dominating(epsilon: float, delta: float) -> tuple[list[float], list[float]]:
    """The four-output mechanism whose privacy region is exactly that of (ε, δ)-DP."""
    big = (1.0 - delta) * math.exp(epsilon) / (1.0 + math.exp(epsilon))
    small = (1.0 - delta) / (1.0 + math.exp(epsilon))
    return [delta, big, small, 0.0], [0.0, small, big, delta]


epsilons = st.floats(min_value=1e-3, max_value=30.0)
deltas = st.floats(min_value=0.0, max_value=0.999)
fractions = st.floats(min_value=0.0, max_value=1.0)

# ---------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epsilon", "message"),
    [
        (0.0, r"`epsilon` must be in \(0, inf\], got 0\.0"),
        (-1.0, r"`epsilon` must be in \(0, inf\], got -1\.0"),
        (-math.inf, r"`epsilon` must be in \(0, inf\]"),
        (math.nan, r"`epsilon` must not be NaN"),
    ],
)
def test_bad_epsilon_raises_value_error(epsilon: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PureDP(epsilon)
    with pytest.raises(ValueError, match=message):
        ApproxDP(epsilon, 0.0)


@pytest.mark.parametrize(
    ("delta", "message"),
    [
        (1.0, r"`delta` must be in \[0, 1\), got 1\.0"),
        (1.5, r"`delta` must be in \[0, 1\), got 1\.5"),
        (-1e-9, r"`delta` must be in \[0, 1\)"),
        (math.nan, r"`delta` must not be NaN"),
    ],
)
def test_bad_delta_raises_value_error(delta: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ApproxDP(1.0, delta)


@pytest.mark.parametrize("bad", ["1.0", None, True, 1 + 0j])
def test_non_real_epsilon_raises_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match=r"`epsilon` must be a real number"):
        PureDP(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`delta` must be a real number"):
        ApproxDP(1.0, bad)  # type: ignore[arg-type]


def test_values_are_stored_as_floats_and_infinity_is_allowed() -> None:
    assert type(PureDP(2).epsilon) is float
    assert type(ApproxDP(2, 0).delta) is float
    assert PureDP(math.inf).get_epsilon(0.0) == math.inf
    assert PureDP(math.inf).get_delta(5.0) == 1.0
    assert ApproxDP(math.inf, 0.5).get_delta(5.0) == 1.0


@pytest.mark.parametrize("guarantee", [PureDP(1.0), ApproxDP(1.0, 1e-6)])
def test_query_arguments_are_validated(guarantee: PureDP | ApproxDP) -> None:
    with pytest.raises(
        ValueError, match=r"`target_delta` must be in \[0, 1\), got 1\.0"
    ):
        guarantee.get_epsilon(1.0)
    with pytest.raises(ValueError, match=r"`target_delta` must not be NaN"):
        guarantee.get_epsilon(math.nan)
    with pytest.raises(ValueError, match=r"`target_epsilon` must be >= 0, got -0\.5"):
        guarantee.get_delta(-0.5)
    with pytest.raises(ValueError, match=r"`target_epsilon` must not be NaN"):
        guarantee.get_delta(math.nan)


# ---------------------------------------------------------------------------------
# Immutability
# ---------------------------------------------------------------------------------


def test_guarantees_are_frozen_and_hashable() -> None:
    pure, approx = PureDP(1.0), ApproxDP(1.0, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pure.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        approx.delta = 0.0  # type: ignore[misc]
    assert pure.epsilon == 1.0 and approx.delta == 1e-5
    assert PureDP(1) == pure and hash(PureDP(1)) == hash(pure)
    assert ApproxDP(1, 1e-5) == approx and hash(ApproxDP(1, 1e-5)) == hash(approx)
    assert len({pure, PureDP(1.0), approx, ApproxDP(1.0, 1e-5)}) == 2
    # Types are not interchangeable: ε-DP is not "equal" to (ε, 0)-DP without a
    # conversion.
    assert pure != ApproxDP(1.0, 0.0)


# ---------------------------------------------------------------------------------
# get_epsilon / get_delta
# ---------------------------------------------------------------------------------


@given(epsilons, deltas)
def test_get_epsilon(epsilon: float, delta: float) -> None:
    assert PureDP(epsilon).get_epsilon(delta) == epsilon
    assert ApproxDP(epsilon, delta).get_epsilon(delta) == epsilon
    assert (
        ApproxDP(epsilon, delta).get_epsilon(min(0.999, delta + 0.1 * (1 - delta)))
        == epsilon
    )
    if delta > 0:
        assert ApproxDP(epsilon, delta).get_epsilon(delta / 2) == math.inf


@given(epsilons, deltas, st.floats(min_value=0.0, max_value=100.0))
def test_get_delta_at_or_above_epsilon_is_delta(
    epsilon: float, delta: float, extra: float
) -> None:
    assert PureDP(epsilon).get_delta(epsilon + extra) == 0.0
    assert ApproxDP(epsilon, delta).get_delta(epsilon + extra) == delta


@given(epsilons, fractions)
def test_pure_get_delta_matches_randomized_response(
    epsilon: float, fraction: float
) -> None:
    target = fraction * epsilon
    p, q = _randomized_response(epsilon)
    expected = _hockey_stick(p, q, target)
    assert PureDP(epsilon).get_delta(target) == pytest.approx(
        expected, rel=1e-9, abs=1e-12
    )
    # The RR mechanism is exactly ε-DP: its divergence vanishes at ε' = ε.
    assert _hockey_stick(p, q, epsilon) == pytest.approx(0.0, abs=1e-12)


@given(epsilons, deltas, fractions)
def test_approx_get_delta_matches_dominating_mechanism(
    epsilon: float, delta: float, fraction: float
) -> None:
    target = fraction * epsilon
    p, q = _approx_dominating(epsilon, delta)
    expected = _hockey_stick(p, q, target)
    got = ApproxDP(epsilon, delta).get_delta(target)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert delta <= got <= 1.0


@given(st.floats(min_value=1e-3, max_value=5.0), fractions)
def test_pure_get_delta_dominates_the_laplace_mechanism(
    epsilon: float, fraction: float
) -> None:
    # Lap(1/ε) with sensitivity 1 is ε-DP; its exact δ(ε') is 1 - exp((ε' - ε)/2).
    # The tight bound for *every* ε-DP mechanism must be at least that.
    target = fraction * epsilon
    laplace = -math.expm1((target - epsilon) / 2.0)
    assert PureDP(epsilon).get_delta(target) >= laplace - 1e-12


@given(epsilons, deltas, fractions, fractions)
def test_get_delta_is_non_increasing_in_target_epsilon(
    epsilon: float, delta: float, a: float, b: float
) -> None:
    low, high = sorted((a * 1.5 * epsilon, b * 1.5 * epsilon))
    guarantee = ApproxDP(epsilon, delta)
    assert guarantee.get_delta(low) >= guarantee.get_delta(high)


@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_pure_get_delta_at_zero_is_tanh(epsilon: float) -> None:
    # δ(0) = (e^ε - 1)/(e^ε + 1) = tanh(ε/2): the total-variation distance of RR.
    assert PureDP(epsilon).get_delta(0.0) == pytest.approx(
        math.tanh(epsilon / 2), rel=1e-12
    )


def test_get_delta_does_not_overflow_for_huge_epsilon() -> None:
    # (e^ε - e^ε')/(1 + e^ε) -> 1 - e^(ε' - ε) without overflowing e^1000.
    assert PureDP(1000.0).get_delta(990.0) == pytest.approx(
        -math.expm1(-10.0), rel=1e-12
    )
    assert ApproxDP(1000.0, 0.5).get_delta(0.0) == pytest.approx(1.0)


# ---------------------------------------------------------------------------------
# Composition and conversions
# ---------------------------------------------------------------------------------


def test_approx_compose_adds_epsilon_and_delta() -> None:
    composed = ApproxDP(1.0, 1e-6).compose(ApproxDP(0.5, 2e-6))
    assert isinstance(composed, ApproxDP)
    assert composed.epsilon == pytest.approx(1.5)
    assert composed.delta == pytest.approx(3e-6)


def test_mixing_guarantee_types_raises() -> None:
    with pytest.raises(
        IncompatibleGuaranteeError, match=r"cannot compose ApproxDP with PureDP"
    ):
        ApproxDP(1.0, 0.0).compose(PureDP(1.0))  # type: ignore[arg-type]
    with pytest.raises(
        IncompatibleGuaranteeError, match=r"expected PureDP, got ApproxDP"
    ):
        pure_to_approx_dp(ApproxDP(1.0, 0.0))  # type: ignore[arg-type]
    # The error is both a toolkit error and an ordinary TypeError.
    with pytest.raises(TypeError):
        ApproxDP(1.0, 0.0).compose(1.0)  # type: ignore[arg-type]
    assert issubclass(IncompatibleGuaranteeError, ToolkitError)


@given(epsilons)
def test_pure_to_approx_dp_keeps_the_curve(epsilon: float) -> None:
    converted = pure_to_approx_dp(PureDP(epsilon))
    assert converted == ApproxDP(epsilon, 0.0)
    for fraction in (0.0, 0.3, 1.0, 2.0):
        target = fraction * epsilon
        assert converted.get_delta(target) == PureDP(epsilon).get_delta(target)
    assert converted.compose(converted).epsilon == pytest.approx(2 * epsilon)


@pytest.mark.parametrize(
    ("epsilon", "text"),
    [
        (math.inf, "inf"),
        (1.25, "1.25"),
        (1.0, "1"),
        (1 / 3, "0.333333"),
        (20 / 14, "1.42857"),
    ],
)
def test_format_epsilon(epsilon: float, text: str) -> None:
    assert format_epsilon(epsilon) == text


def test_compose_with_delta_sum_at_least_one_does_not_crash():
    composed = ApproxDP(1.0, 0.6).compose(ApproxDP(1.0, 0.5))
    assert math.isinf(composed.epsilon)
    assert composed.get_delta(5.0) >= 0.999
