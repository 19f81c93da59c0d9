"""Every public constructor and query of ``fedpriv.privacy``, fuzzed with hostile values.

For each event and guarantee class, one field at a time is replaced by a generated
value. The oracle is the documented domain of the field: inside it the object is built
(and is hashable); outside it a ``ValueError`` or ``TypeError`` names the field. No
other exception type may escape. The accountant's charging and query methods get the
same treatment, and a charge that raises must leave the accountant exactly as it was.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events, guarantees
from fedpriv.privacy.accounting.sampling import PoissonSampled
from fedpriv.privacy.errors import BudgetExceededError, ToolkitError
from fedpriv.privacy.mechanisms.interval import IntervalRelease
from fedpriv.privacy.mechanisms.matrix_tree import SymmetricMatrixGaussianTree
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz._values import HOSTILE, MAX_EXAMPLES
from tests.privacy._support import assert_unchanged, snapshot


def _real(x: Any) -> bool:
    return (
        isinstance(x, numbers.Real)
        and not isinstance(x, bool)
        and not (isinstance(x, int) and abs(x) > 1.7e308)
    )


def positive(x: Any) -> bool:
    """(0, inf): a finite real number > 0."""
    return _real(x) and math.isfinite(float(x)) and float(x) > 0


def positive_or_inf(x: Any) -> bool:
    """(0, inf]."""
    return _real(x) and float(x) > 0 and not math.isnan(float(x))


def nonnegative_or_inf(x: Any) -> bool:
    """[0, inf]."""
    return _real(x) and float(x) >= 0 and not math.isnan(float(x))


def nonnegative_finite(x: Any) -> bool:
    """[0, inf)."""
    return _real(x) and math.isfinite(float(x)) and float(x) >= 0


def unit_interval(x: Any) -> bool:
    """[0, 1]."""
    return _real(x) and 0.0 <= float(x) <= 1.0


def sampling_rate(x: Any) -> bool:
    """0 or [MIN_SAMPLING_RATE, 1] (a smaller positive rate cannot be priced)."""
    from fedpriv.privacy.accounting.sampling import MIN_SAMPLING_RATE

    return _real(x) and (float(x) == 0.0 or MIN_SAMPLING_RATE <= float(x) <= 1.0)


def event_sequence(x: Any) -> bool:
    """A sequence of event instances (a list or tuple; a string is not one)."""
    return isinstance(x, (list, tuple)) and all(
        dataclasses.is_dataclass(e) and not isinstance(e, type) for e in x
    )


def delta_range(x: Any) -> bool:
    """[0, 1)."""
    return _real(x) and 0.0 <= float(x) < 1.0


def integer_at_least(lower: int) -> Callable[[Any], bool]:
    def check(x: Any) -> bool:
        return isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= lower

    check.__doc__ = f"an integer >= {lower}"
    return check


def positive_integral(x: Any) -> bool:
    """A finite real > 0 with an integral value (discrete sensitivities)."""
    return positive(x) and float(x) == int(float(x))


def noise_scale(maximum: float) -> Callable[[Any], bool]:
    """A noise scale with sensitivity 1: positive and ``1 / x <= maximum`` (the
    documented ceiling of ``fedpriv.privacy.accounting.events``)."""

    def check(x: Any) -> bool:
        return positive(x) and sys.float_info.min <= 1.0 / float(x) <= maximum

    check.__doc__ = f"(0, inf) with 1 / x <= {maximum:g}"
    return check


def at_most(
    domain: Callable[[Any], bool], maximum: float, floor: float = -math.inf
) -> Callable[[Any], bool]:
    """``domain`` capped at a documented ceiling (``fedpriv.privacy.accounting.events.MAX_*``);
    a sensitivity (over a noise scale of 1) is also at least ``floor``."""

    def check(x: Any) -> bool:
        return domain(x) and floor <= x <= maximum

    check.__doc__ = f"{domain.__doc__} and <= {maximum:g}"
    return check


LAPLACE_SCALE = noise_scale(events.MAX_LAPLACE_EPSILON)
GAUSSIAN_SCALE = noise_scale(events.MAX_GAUSSIAN_MU)
LAPLACE_SENSITIVITY = at_most(positive, events.MAX_LAPLACE_EPSILON, sys.float_info.min)
GAUSSIAN_SENSITIVITY = at_most(positive, events.MAX_GAUSSIAN_MU, sys.float_info.min)


def any_text(x: Any) -> bool:
    return isinstance(x, str)


def event(x: Any) -> bool:
    return isinstance(x, (events.Laplace, events.Gaussian))


#: class -> (valid keyword arguments, {field: domain predicate}).
SPECS: dict[type, tuple[dict[str, Any], dict[str, Callable[[Any], bool]]]] = {
    events.Laplace: (
        {"scale": 1.0, "l1_sensitivity": 1.0},
        {"scale": LAPLACE_SCALE, "l1_sensitivity": LAPLACE_SENSITIVITY},
    ),
    events.LaplaceTree: (
        {"scale": 1.0, "horizon": 4, "l1_sensitivity": 1.0},
        {
            "scale": LAPLACE_SCALE,
            "horizon": integer_at_least(1),
            "l1_sensitivity": LAPLACE_SENSITIVITY,
        },
    ),
    events.Gaussian: (
        {"noise_stddev": 1.0, "l2_sensitivity": 1.0},
        {"noise_stddev": GAUSSIAN_SCALE, "l2_sensitivity": GAUSSIAN_SENSITIVITY},
    ),
    events.GaussianTree: (
        {"noise_stddev": 1.0, "horizon": 4, "l2_sensitivity": 1.0},
        {
            "noise_stddev": GAUSSIAN_SCALE,
            "horizon": integer_at_least(1),
            "l2_sensitivity": GAUSSIAN_SENSITIVITY,
        },
    ),
    events.DiscreteLaplace: (
        {"scale": 1.0, "l1_sensitivity": 1.0},
        {
            "scale": LAPLACE_SCALE,
            "l1_sensitivity": at_most(positive_integral, events.MAX_LAPLACE_EPSILON),
        },
    ),
    events.DiscreteGaussian: (
        {"sigma": 1.0, "l2_sensitivity": 1.0},
        {"sigma": GAUSSIAN_SCALE, "l2_sensitivity": GAUSSIAN_SENSITIVITY},
    ),
    events.SymmetricMatrixGaussian: (
        {"noise_stddev": 1.0, "dim": 2, "frobenius_sensitivity": 1.0},
        {
            "noise_stddev": GAUSSIAN_SCALE,
            "dim": integer_at_least(1),
            "frobenius_sensitivity": GAUSSIAN_SENSITIVITY,
        },
    ),
    events.SymmetricMatrixDiscreteGaussian: (
        {"sigma": 1.0, "dim": 2, "frobenius_sensitivity": 1.0},
        {
            "sigma": GAUSSIAN_SCALE,
            "dim": integer_at_least(1),
            "frobenius_sensitivity": GAUSSIAN_SENSITIVITY,
        },
    ),
    SymmetricMatrixGaussianTree: (
        {"noise_stddev": 1.0, "dim": 2, "frobenius_sensitivity": 1.0, "capacity": 4},
        {
            "noise_stddev": GAUSSIAN_SCALE,
            "dim": integer_at_least(1),
            "frobenius_sensitivity": GAUSSIAN_SENSITIVITY,
            "capacity": integer_at_least(1),
        },
    ),
    events.OpaqueApproxDP: (
        {"epsilon": 1.0, "delta": 1e-5},
        {"epsilon": at_most(nonnegative_finite, events.MAX_EVENT_EPSILON), "delta": delta_range},
    ),
    events.RandomizedResponse: (
        {"epsilon": 1.0, "num_buckets": 2},
        {
            "epsilon": at_most(positive, events.MAX_EVENT_EPSILON),
            "num_buckets": integer_at_least(2),
        },
    ),
    events.Composed: ({"events": (events.Laplace(scale=1.0),)}, {"events": event_sequence}),
    PoissonSampled: (
        {"event": events.Laplace(scale=1.0), "sampling_rate": 0.1},
        {"sampling_rate": sampling_rate},
    ),
    events.SelfComposed: (
        {"event": events.Laplace(scale=1.0), "count": 3},
        {"count": at_most(integer_at_least(1), events.MAX_COUNT)},
    ),
    events.NonPrivate: ({"reason": "raw"}, {"reason": any_text}),
    IntervalRelease: ({"scales": (1.0,), "l1_sensitivities": (1.0,), "counts": (1,)}, {}),
    guarantees.PureDP: ({"epsilon": 1.0}, {"epsilon": positive_or_inf}),
    guarantees.ApproxDP: (
        {"epsilon": 1.0, "delta": 1e-5},
        {"epsilon": positive_or_inf, "delta": delta_range},
    ),
    guarantees.ZCDP: ({"rho": 1.0}, {"rho": nonnegative_or_inf}),
    guarantees.GaussianDP: ({"mu": 1.0}, {"mu": nonnegative_or_inf}),
}

CASES = [(cls, name) for cls, (_, fields) in SPECS.items() for name in fields]


def test_every_public_event_class_has_a_fuzz_spec() -> None:
    public = {getattr(events, n) for n in events.__all__ if isinstance(getattr(events, n), type)}
    public.add(PoissonSampled)
    public = {c for c in public if dataclasses.is_dataclass(c)}
    assert public - set(SPECS) == set()


@pytest.mark.parametrize(("cls", "name"), CASES, ids=[f"{c.__name__}.{n}" for c, n in CASES])
@settings(max_examples=MAX_EXAMPLES)
@given(value=HOSTILE)
def test_constructor_accepts_its_domain_and_names_the_field_otherwise(
    cls: type, name: str, value: Any
) -> None:
    valid, fields = SPECS[cls]
    inside = fields[name](value)
    try:
        built = cls(**{**valid, name: value})
    except (ValueError, TypeError) as error:
        assert not inside, (
            f"{cls.__name__}({name}={value!r}) refused a value in its domain: {error}"
        )
        assert f"`{name}`" in str(error) or name in str(error), str(error)
        return
    assert inside, (
        f"{cls.__name__}({name}={value!r}) accepted a value outside {fields[name].__doc__}"
    )
    hash(built)


@settings(max_examples=MAX_EXAMPLES)
@given(target=HOSTILE)
def test_accountant_queries_validate_their_target(target: Any) -> None:
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 0})
    before = snapshot(accountant)
    for query, name, domain in (
        (accountant.get_epsilon, "target_delta", delta_range),
        (accountant.routes.epsilons, "target_delta", delta_range),
        (accountant.get_delta, "target_epsilon", nonnegative_or_inf),
    ):
        try:
            result = query(target)
        except (ValueError, TypeError) as error:
            assert not domain(target), f"{query.__name__}({target!r}) refused: {error}"
            assert f"`{name}`" in str(error), str(error)
        else:
            assert domain(target), f"{query.__name__}({target!r}) accepted it: {result!r}"
    assert_unchanged(accountant, before)


@settings(max_examples=MAX_EXAMPLES)
@given(
    key=st.one_of(
        HOSTILE,
        st.dictionaries(st.sampled_from(["agent", "arm", "epoch", ""]), HOSTILE, max_size=3),
    )
)
def test_a_refused_charge_leaves_the_accountant_unchanged(key: Any) -> None:
    accountant = Accountant(disjoint=("agent", "arm"), budget=guarantees.PureDP(1.0))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 0})
    before = snapshot(accountant)
    try:
        accountant.spend(events.Laplace(scale=2.0), key=key)
    except (ValueError, TypeError, ToolkitError):
        assert_unchanged(accountant, before)


@settings(max_examples=MAX_EXAMPLES)
@given(event=HOSTILE)
def test_spending_a_non_event_is_a_typed_error(event: Any) -> None:
    accountant = Accountant(disjoint=("agent", "arm"))
    before = snapshot(accountant)
    with pytest.raises((TypeError, ToolkitError)):
        accountant.spend(event, key={"agent": 0, "arm": 0})
    assert_unchanged(accountant, before)


def test_over_budget_charge_is_refused_atomically() -> None:
    accountant = Accountant(disjoint=("agent", "arm"), budget=guarantees.PureDP(1.0))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 0})
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError):
        accountant.spend(
            events.Laplace(scale=2.0),
            key={"agent": np.zeros(2, dtype=int), "arm": np.zeros(2, dtype=int)},
        )
    assert_unchanged(accountant, before)
