"""Tests for `fedpriv.privacy.accounting.events`: frozen, validated descriptions of releases.

The pure ε of each event (``fedpriv.privacy.ledger.pricing.event_epsilon``) is checked against the
textbook formulas: ``Δ/b`` for Laplace (Dwork et al. 2006) and
``(floor(log2 T) + 1) Δ/b`` for a binary-tree counter (Chan, Shi & Song 2011).
"""

from __future__ import annotations

import dataclasses
import math
import typing

import pytest
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import UnsupportedEventError
from fedpriv.privacy.ledger.pricing import event_epsilon
from hypothesis import given
from hypothesis import strategies as st

scales = st.floats(min_value=1e-3, max_value=1e3)
sensitivities = st.floats(min_value=1e-3, max_value=1e3)
horizons = st.integers(min_value=1, max_value=2**40)
#: ε of one release, up to the documented ceiling (exp(ε) must not overflow).
epsilons = st.floats(min_value=1e-3, max_value=events.MAX_EVENT_EPSILON)

base_event_strategy = st.one_of(
    st.builds(events.Laplace, scale=scales, l1_sensitivity=sensitivities),
    st.builds(events.LaplaceTree, scale=scales, horizon=horizons, l1_sensitivity=sensitivities),
    st.builds(events.NonPrivate, reason=st.text(max_size=20)),
    st.builds(events.Gaussian, noise_stddev=scales, l2_sensitivity=sensitivities),
    st.builds(
        events.SymmetricMatrixGaussian,
        noise_stddev=scales,
        dim=st.integers(min_value=1, max_value=64),
        frobenius_sensitivity=sensitivities,
    ),
    st.builds(
        events.DiscreteLaplace, scale=scales, l1_sensitivity=st.integers(min_value=1, max_value=100)
    ),
    st.builds(events.DiscreteGaussian, sigma=scales, l2_sensitivity=sensitivities),
    st.builds(events.RandomizedResponse, epsilon=epsilons),
    st.builds(
        events.GaussianTree, noise_stddev=scales, horizon=horizons, l2_sensitivity=sensitivities
    ),
    st.builds(
        events.OpaqueApproxDP, epsilon=epsilons, delta=st.floats(min_value=0.0, max_value=0.5)
    ),
)
event_strategy = st.one_of(
    base_event_strategy,
    st.builds(
        events.SelfComposed,
        event=base_event_strategy,
        count=st.integers(min_value=1, max_value=10**6),
    ),
)


def _levels(horizon: int) -> int:
    """Number of powers of two ``<= horizon``, i.e. ``floor(log2 T) + 1``."""
    return sum(1 for k in range(64) if 2**k <= horizon)


# ---------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: events.Laplace(scale=0.0), r"`scale` must be in \(0, inf\), got 0\.0"),
        (lambda: events.Laplace(scale=-1.0), r"`scale` must be in \(0, inf\)"),
        (lambda: events.Laplace(scale=math.inf), r"`scale` must be in \(0, inf\)"),
        (lambda: events.Laplace(scale=math.nan), r"`scale` must not be NaN"),
        (
            lambda: events.Laplace(scale=1.0, l1_sensitivity=0.0),
            r"`l1_sensitivity` must be in \(0, inf\)",
        ),
        (lambda: events.LaplaceTree(scale=1.0, horizon=0), r"`horizon` must be >= 1, got 0"),
        (lambda: events.LaplaceTree(scale=0.0, horizon=4), r"`scale` must be in \(0, inf\)"),
        (
            lambda: events.LaplaceTree(scale=1.0, horizon=4, l1_sensitivity=-2.0),
            r"`l1_sensitivity` must be in \(0, inf\)",
        ),
    ],
)
def test_bad_parameters_raise_value_error(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: events.Gaussian(noise_stddev=0.0), r"`noise_stddev` must be in \(0, inf\)"),
        (lambda: events.Gaussian(noise_stddev=-1.0), r"`noise_stddev` must be in \(0, inf\)"),
        (lambda: events.Gaussian(noise_stddev=math.nan), r"`noise_stddev` must not be NaN"),
        (
            lambda: events.Gaussian(noise_stddev=1.0, l2_sensitivity=-1.0),
            r"`l2_sensitivity` must be in \(0, inf\)",
        ),
        (
            lambda: events.SymmetricMatrixGaussian(
                noise_stddev=1.0, dim=0, frobenius_sensitivity=1.0
            ),
            r"`dim` must be >= 1, got 0",
        ),
        (
            lambda: events.SymmetricMatrixGaussian(
                noise_stddev=1.0, dim=3, frobenius_sensitivity=math.inf
            ),
            r"`frobenius_sensitivity` must be in \(0, inf\)",
        ),
        (
            lambda: events.SymmetricMatrixGaussian(
                noise_stddev=math.nan, dim=3, frobenius_sensitivity=1.0
            ),
            r"`noise_stddev` must not be NaN",
        ),
        (
            lambda: events.DiscreteLaplace(scale=-2.0, l1_sensitivity=1),
            r"`scale` must be in \(0, inf\)",
        ),
        (
            lambda: events.DiscreteLaplace(scale=2.0, l1_sensitivity=1.5),
            r"`l1_sensitivity` must be a positive integer .* got 1\.5",
        ),
        (
            lambda: events.DiscreteGaussian(sigma=math.nan, l2_sensitivity=1.0),
            r"`sigma` must not be NaN",
        ),
        (
            lambda: events.DiscreteGaussian(sigma=1.0, l2_sensitivity=0.0),
            r"`l2_sensitivity` must be in \(0, inf\)",
        ),
        (lambda: events.RandomizedResponse(epsilon=0.0), r"`epsilon` must be in \(0, inf\)"),
        (lambda: events.RandomizedResponse(epsilon=math.inf), r"`epsilon` must be in \(0, inf\)"),
        (
            lambda: events.GaussianTree(noise_stddev=1.0, horizon=0),
            r"`horizon` must be >= 1, got 0",
        ),
        (
            lambda: events.GaussianTree(noise_stddev=-3.0, horizon=8),
            r"`noise_stddev` must be in \(0, inf\)",
        ),
        (
            lambda: events.OpaqueApproxDP(epsilon=1.0, delta=1.0),
            r"`delta` must be in \[0, 1\), got 1\.0",
        ),
        (lambda: events.OpaqueApproxDP(epsilon=1.0, delta=-1e-9), r"`delta` must be in \[0, 1\)"),
        (lambda: events.OpaqueApproxDP(epsilon=math.nan, delta=0.0), r"`epsilon` must not be NaN"),
        (
            lambda: events.SelfComposed(event=events.Laplace(scale=1.0), count=0),
            r"`count` must be >= 1, got 0",
        ),
    ],
)
def test_bad_parameters_of_new_events_raise_value_error(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()


def test_new_events_reject_bad_types() -> None:
    laplace = events.Laplace(scale=1.0)
    with pytest.raises(TypeError, match=r"`dim` must be an integer, got float"):
        events.SymmetricMatrixGaussian(
            noise_stddev=1.0,
            dim=3.0,  # type: ignore[arg-type]
            frobenius_sensitivity=1.0,
        )
    with pytest.raises(TypeError, match=r"`count` must be an integer, got float"):
        events.SelfComposed(event=laplace, count=2.0)  # type: ignore[arg-type]
    frozen = r"`event` must be a frozen event instance, got"
    with pytest.raises(TypeError, match=frozen + r" list"):
        events.SelfComposed(event=[1.0], count=2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=frozen + r" type"):
        events.SelfComposed(event=events.Laplace, count=2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # keyword-only
        events.Gaussian(1.0)  # type: ignore[misc]


def test_new_event_fields_are_normalised() -> None:
    matrix = events.SymmetricMatrixGaussian(noise_stddev=2, dim=4, frobenius_sensitivity=1)
    assert type(matrix.noise_stddev) is float and type(matrix.dim) is int
    assert matrix == events.SymmetricMatrixGaussian(
        noise_stddev=2.0, dim=4, frobenius_sensitivity=1.0
    )
    discrete = events.DiscreteLaplace(scale=3, l1_sensitivity=2)
    assert discrete == events.DiscreteLaplace(scale=3.0, l1_sensitivity=2.0)
    assert events.Gaussian(noise_stddev=1.0).l2_sensitivity == 1.0
    assert events.GaussianTree(noise_stddev=1.0, horizon=8).l2_sensitivity == 1.0
    assert events.OpaqueApproxDP(epsilon=1, delta=0).delta == 0.0


def test_event_union_lists_every_event_class() -> None:
    names = {cls.__name__ for cls in typing.get_args(events.Event)}
    # Every exported class (besides the ceilings MAX_* and the checks other modules'
    # events use, e.g. check_frozen_event) is an event, and the union lists it.
    classes = {name for name in events.__all__ if isinstance(getattr(events, name), type)}
    assert names == classes


def test_bad_types_raise_type_error() -> None:
    with pytest.raises(TypeError, match=r"`horizon` must be an integer, got float"):
        events.LaplaceTree(scale=1.0, horizon=16.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`scale` must be a real number, got str"):
        events.Laplace(scale="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`reason` must be a str, got int"):
        events.NonPrivate(reason=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # keyword-only: no positional scale
        events.Laplace(1.0)  # type: ignore[misc]


def test_fields_are_normalised() -> None:
    tree = events.LaplaceTree(scale=4, horizon=16, l1_sensitivity=1)
    assert type(tree.scale) is float and type(tree.l1_sensitivity) is float
    assert type(tree.horizon) is int
    assert tree == events.LaplaceTree(scale=4.0, horizon=16)


# ---------------------------------------------------------------------------------
# Immutability
# ---------------------------------------------------------------------------------


@given(event_strategy)
def test_events_are_hashable_and_immutable(event: events.Event) -> None:
    copy = dataclasses.replace(event)
    assert copy == event and hash(copy) == hash(event)
    assert len({event, copy}) == 1
    field = dataclasses.fields(event)[0].name
    before = getattr(event, field)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, field, before)
    with pytest.raises((AttributeError, TypeError)):  # slots: no new attributes
        event.extra = 1  # type: ignore[union-attr]
    assert getattr(event, field) == before


@given(base_event_strategy, st.integers(min_value=1, max_value=events.MAX_COUNT // 2))
def test_self_composed_is_hashable_and_nests(event, count: int) -> None:
    wrapped = events.SelfComposed(event=event, count=count)
    assert wrapped == events.SelfComposed(event=dataclasses.replace(event), count=count)
    assert hash(wrapped) == hash(events.SelfComposed(event=event, count=count))
    assert wrapped != event
    nested = events.SelfComposed(event=wrapped, count=2)
    assert nested.event is wrapped and len({nested, wrapped}) == 2


def test_different_parameters_are_different_events() -> None:
    assert events.Laplace(scale=1.0) != events.Laplace(scale=2.0)
    assert events.LaplaceTree(scale=1.0, horizon=8) != events.LaplaceTree(scale=1.0, horizon=16)
    assert events.Laplace(scale=1.0) != events.LaplaceTree(scale=1.0, horizon=1)
    # same numbers, different mechanisms
    assert events.Laplace(scale=1.0) != events.DiscreteLaplace(scale=1.0, l1_sensitivity=1)
    assert events.Gaussian(noise_stddev=1.0) != events.GaussianTree(noise_stddev=1.0, horizon=1)
    assert events.RandomizedResponse(epsilon=1.0) != events.OpaqueApproxDP(epsilon=1.0, delta=0.0)


# ---------------------------------------------------------------------------------
# Pure ε of one event
# ---------------------------------------------------------------------------------


@given(scales, sensitivities)
def test_laplace_epsilon_is_sensitivity_over_scale(scale: float, sens: float) -> None:
    event = events.Laplace(scale=scale, l1_sensitivity=sens)
    assert event_epsilon(event) == pytest.approx(sens / scale, rel=1e-15)


@given(scales, horizons, sensitivities)
def test_tree_epsilon_is_depth_times_node_epsilon(scale: float, horizon: int, sens: float) -> None:
    event = events.LaplaceTree(scale=scale, horizon=horizon, l1_sensitivity=sens)
    assert event_epsilon(event) == pytest.approx(_levels(horizon) * sens / scale, rel=1e-15)


def test_tree_released_prefixes_default_validation_and_equality() -> None:
    assert events.LaplaceTree(scale=1.0, horizon=8) == events.LaplaceTree(
        scale=1.0, horizon=8, released_prefixes=8
    )
    assert events.LaplaceTree(scale=1.0, horizon=8, released_prefixes=7).depth == 3
    with pytest.raises(ValueError, match=r"`released_prefixes` must be <= `horizon` = 8"):
        events.LaplaceTree(scale=1.0, horizon=8, released_prefixes=9)
    with pytest.raises(ValueError, match=r"`released_prefixes` must be >= 1, got 0"):
        events.LaplaceTree(scale=1.0, horizon=8, released_prefixes=0)


@pytest.mark.parametrize(
    ("event", "epsilon"),
    [
        # A counter releasing all 16 prefixes (5 nodes per record).
        (events.LaplaceTree(scale=4.0, horizon=16), 1.25),
        (events.LaplaceTree(scale=5.0, horizon=16), 1.0),
        (events.LaplaceTree(scale=3.0, horizon=16), 5 / 3),
        # Fed_UCB's view, prefixes 1..15 (4 nodes): the paper's scale under log2 and ln.
        (events.LaplaceTree(scale=4.0, horizon=16, released_prefixes=15), 1.0),
        (events.LaplaceTree(scale=3.0, horizon=16, released_prefixes=15), 4 / 3),
        (events.LaplaceTree(scale=2.0, horizon=1, l1_sensitivity=3.0), 1.5),
        (events.Laplace(scale=10.0), 0.1),
        (events.NonPrivate(reason="raw X(0)"), math.inf),
    ],
)
def test_event_epsilon_reference_values(event: events.Event, epsilon: float) -> None:
    # The accountant rounds an exact pure sum up to the next double, never down (sound).
    value = event_epsilon(event)
    assert value == pytest.approx(epsilon, rel=1e-15) and value >= epsilon


def test_event_epsilon_rejects_unknown_events() -> None:
    @dataclasses.dataclass(frozen=True)
    class Gaussian:
        sigma: float

    with pytest.raises(UnsupportedEventError, match=r"no accountant handler for Gaussian"):
        event_epsilon(Gaussian(1.0))  # type: ignore[arg-type]

    # A subclass is a new meaning, so it is not silently accounted as its parent.
    class LaplaceVariant(events.Laplace):
        __slots__ = ()

    with pytest.raises(UnsupportedEventError, match=r"no accountant handler for LaplaceVariant"):
        event_epsilon(LaplaceVariant(scale=1.0))
