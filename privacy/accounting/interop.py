"""dp-accounting interop: replay a ``dp_accounting.DpEvent`` ledger through our accountant.

:func:`from_dp_event` turns a ``DpEvent`` tree into our frozen events and
:func:`to_dp_event` goes back where dp-accounting has the same mechanism;
:meth:`fedpriv.privacy.Accountant.spend` accepts a ``DpEvent`` directly.

Sensitivity
-----------
dp-accounting's events state a noise multiplier per record contribution ``C``
(``GaussianDpEvent``: ``σ / C`` for values ``||v_i|| <= C``), and its accountants apply
the neighboring relation afterwards. Our events carry the sensitivity of the relation
(see :mod:`fedpriv.privacy.accounting.events`), so the conversion takes the relation: under
``ADD_OR_REMOVE_ONE`` the sensitivity is ``C`` (set to 1), under every replace relation
(``REPLACE_ONE``, and the bandit relations, which replace one record) it is ``2 C``, as
dp-accounting's PLD accountant uses for ``GaussianDpEvent`` under ``REPLACE_ONE``
(its RDP accountant keeps ``C``: google/differential-privacy#378). Inside a
``PoissonSampledDpEvent`` the inner event keeps the contribution ``C``
(:mod:`fedpriv.privacy.accounting.sampling`).

=====================================  ================================================
dp-accounting                          fedpriv
=====================================  ================================================
``NoOpDpEvent``                        ``Composed(events=())``
``NonPrivateDpEvent``                  ``NonPrivate``
``GaussianDpEvent(m)``                 ``Gaussian(noise_stddev=m, l2_sensitivity=f)``
``LaplaceDpEvent(m)``                  ``Laplace(scale=m, l1_sensitivity=f)``
``DiscreteLaplaceDpEvent(a, s)``       ``DiscreteLaplace(scale=1/a, l1_sensitivity=f s)``
``RandomizedResponseDpEvent(p, k)``    ``RandomizedResponse(ε = log(1 + k (1 - p) / p),
                                       num_buckets=k)`` (replace relations only, as in
                                       dp-accounting)
``SelfComposedDpEvent(e, n)``          ``SelfComposed(event, n)`` (``n = 0``: no-op)
``ComposedDpEvent([...])``             ``Composed(events=(...))``
``PoissonSampledDpEvent(q, e)``        ``PoissonSampled(event, q, relation)``
=====================================  ================================================

``f`` is 1 under add/remove and 2 under replace. A noise multiplier or parameter of 0
is a raw release (``NonPrivate``), a sampling probability of 0 or a single-bucket
randomized response, or one with ``noise_parameter = 1``, releases nothing
(``Composed(events=())``), as in dp-accounting.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dp_accounting
from fedpriv.privacy.accounting.events import (
    Composed,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    NonPrivate,
    OpaqueApproxDP,
    RandomizedResponse,
    SelfComposed,
)
from fedpriv.privacy.accounting.sampling import PoissonSampled, sampling_relation_for
from fedpriv.privacy.errors import UnsupportedEventError
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

__all__ = ["UnsupportedEventError", "from_dp_event", "sensitivity_factor", "to_dp_event"]

_NO_OP = Composed(events=())


def sensitivity_factor(neighboring_relation: NeighboringRelation | str) -> float:
    """Our sensitivity per unit of dp-accounting's record contribution ``C``.

    1 under ``ADD_OR_REMOVE_ONE``, 2 under every replace relation (one record out,
    another in).

    Parameters
    ----------
    neighboring_relation : NeighboringRelation or str
        The accountant's neighboring relation.

    Returns
    -------
    float
        1.0 or 2.0.

    Raises
    ------
    ValueError
        If ``neighboring_relation`` names no relation.

    Examples
    --------
    >>> sensitivity_factor("replace_one_reward")
    2.0
    """
    relation = parse_relation(neighboring_relation)
    return 1.0 if relation is NeighboringRelation.ADD_OR_REMOVE_ONE else 2.0


# ------------------------------------------------------------------- from dp-accounting
def from_dp_event(
    event: Any,
    *,
    neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
) -> Any:
    """Our event for a ``dp_accounting.DpEvent`` under ``neighboring_relation``.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        One of the types in the module docstring's table (nested freely).
    neighboring_relation : NeighboringRelation or str
        The relation the result is charged under (an accountant passes its own).
        Default ``"add_or_remove_one"``, dp-accounting's default.

    Returns
    -------
    Event
        A frozen event that the accountant prices exactly as the ``DpEvent``
        describes.

    Raises
    ------
    UnsupportedEventError
        If a ``DpEvent`` type in the tree has no counterpart here (its name is in the
        message), or randomized response is given under ``add_or_remove_one``.
    TypeError
        If ``event`` is not a ``dp_accounting.DpEvent``.
    ValueError
        If a parameter is out of range (negative noise, probability outside [0, 1]).

    Examples
    --------
    >>> import dp_accounting
    >>> from_dp_event(dp_accounting.GaussianDpEvent(2.0))
    Gaussian(noise_stddev=2.0, l2_sensitivity=1.0)
    """
    relation = parse_relation(neighboring_relation)
    return _from(event, sensitivity_factor(relation), relation)


def _from(event: Any, factor: float, relation: NeighboringRelation) -> Any:
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"`event` must be a dp_accounting.DpEvent, got {type(event).__name__}.")
    convert = _FROM.get(type(event))
    if convert is None:
        raise UnsupportedEventError(
            f"no fedpriv event for dp_accounting.{type(event).__name__}; supported: "
            + ", ".join(sorted(t.__name__ for t in _FROM))
            + "."
        )
    return convert(event, factor, relation)


def _check_nonnegative(name: str, value: float) -> float:
    value = float(value)
    if not value >= 0:
        raise ValueError(f"`{name}` must be >= 0, got {value!r}.")
    return value


def _from_gaussian(event, factor, relation):
    if _check_nonnegative("noise_multiplier", event.noise_multiplier) == 0:
        return NonPrivate(reason="dp_accounting.GaussianDpEvent(noise_multiplier=0)")
    return Gaussian(noise_stddev=float(event.noise_multiplier), l2_sensitivity=factor)


def _from_laplace(event, factor, relation):
    if _check_nonnegative("noise_multiplier", event.noise_multiplier) == 0:
        return NonPrivate(reason="dp_accounting.LaplaceDpEvent(noise_multiplier=0)")
    return Laplace(scale=float(event.noise_multiplier), l1_sensitivity=factor)


def _from_discrete_laplace(event, factor, relation):
    if _check_nonnegative("noise_parameter", event.noise_parameter) == 0:
        return NonPrivate(reason="dp_accounting.DiscreteLaplaceDpEvent(noise_parameter=0)")
    return DiscreteLaplace(
        scale=1.0 / event.noise_parameter, l1_sensitivity=factor * event.sensitivity
    )


def _from_randomized_response(event, factor, relation):
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise UnsupportedEventError(
            "dp_accounting.RandomizedResponseDpEvent is defined for replace relations "
            "only (as in dp-accounting); got neighboring_relation='add_or_remove_one'."
        )
    p, k = float(event.noise_parameter), int(event.num_buckets)
    if not 0.0 <= p <= 1.0 or k < 1:
        raise ValueError(
            f"randomized response needs noise_parameter in [0, 1] and num_buckets >= 1, "
            f"got {p!r} and {k!r}."
        )
    if k == 1:
        return _NO_OP
    if p == 0:
        return NonPrivate(reason="dp_accounting.RandomizedResponseDpEvent(noise_parameter=0)")
    if p == 1:
        return _NO_OP  # the output is independent of the input
    return RandomizedResponse(epsilon=math.log1p(k * (1 - p) / p), num_buckets=k)


def _from_self_composed(event, factor, relation):
    count = int(event.count)
    if count < 0:
        raise ValueError(f"`count` must be >= 0, got {count}.")
    if count == 0:
        return _NO_OP
    return SelfComposed(event=_from(event.event, factor, relation), count=count)


def _from_composed(event, factor, relation):
    return Composed(events=tuple(_from(part, factor, relation) for part in event.events))


def _from_poisson(event, factor, relation):
    rate = float(event.sampling_probability)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"`sampling_probability` must be in [0, 1], got {rate!r}.")
    if rate == 0:
        return _NO_OP
    inner = _from(event.event, 1.0, NeighboringRelation.ADD_OR_REMOVE_ONE)
    return PoissonSampled(
        event=inner, sampling_rate=rate, neighboring_relation=sampling_relation_for(relation)
    )


_FROM: dict[type, Callable[[Any, float, NeighboringRelation], Any]] = {
    dp_accounting.NoOpDpEvent: lambda event, factor, relation: _NO_OP,
    dp_accounting.NonPrivateDpEvent: lambda event, factor, relation: NonPrivate(
        reason="dp_accounting.NonPrivateDpEvent"
    ),
    dp_accounting.GaussianDpEvent: _from_gaussian,
    dp_accounting.LaplaceDpEvent: _from_laplace,
    dp_accounting.dp_event.DiscreteLaplaceDpEvent: _from_discrete_laplace,
    dp_accounting.RandomizedResponseDpEvent: _from_randomized_response,
    dp_accounting.SelfComposedDpEvent: _from_self_composed,
    dp_accounting.ComposedDpEvent: _from_composed,
    dp_accounting.PoissonSampledDpEvent: _from_poisson,
}


# --------------------------------------------------------------------- to dp-accounting
def to_dp_event(
    event: Any,
    *,
    neighboring_relation: NeighboringRelation | str = NeighboringRelation.ADD_OR_REMOVE_ONE,
) -> Any:
    """The ``dp_accounting.DpEvent`` describing ``event`` under ``neighboring_relation``.

    The inverse of :func:`from_dp_event` on the types of its table
    (``to_dp_event(from_dp_event(e, neighboring_relation=r), neighboring_relation=r)
    == e`` for them, except that ``ComposedDpEvent([])`` comes back as ``NoOpDpEvent``).

    Parameters
    ----------
    event : Event
        A frozen event of :mod:`fedpriv.privacy.accounting.events` (or
        :mod:`~fedpriv.privacy.accounting.sampling`),
        nested freely.
    neighboring_relation : NeighboringRelation or str
        The relation ``event`` is charged under. Default ``"add_or_remove_one"``,
        dp-accounting's default.

    Returns
    -------
    dp_accounting.DpEvent
        An event that dp-accounting prices as the accountant prices ``event``.

    Raises
    ------
    UnsupportedEventError
        If ``event`` (or a part of it) has no dp-accounting counterpart: trees,
        the symmetric matrix Gaussian, the discrete Gaussian, opaque (ε, δ) events,
        and events whose sensitivity is not a whole number of record contributions
        that dp-accounting can state (for example a ``DiscreteLaplace`` of odd
        sensitivity under a replace relation).
    """
    relation = parse_relation(neighboring_relation)
    return _to(event, sensitivity_factor(relation), relation)


def _unsupported(event: Any, why: str = "") -> UnsupportedEventError:
    return UnsupportedEventError(
        f"no dp_accounting.DpEvent for {type(event).__name__}" + (f": {why}" if why else "") + "."
    )


def _to(event: Any, factor: float, relation: NeighboringRelation) -> Any:
    convert = _TO.get(type(event))
    if convert is None:
        raise _unsupported(event)
    return convert(event, factor, relation)


def _to_discrete_laplace(event, factor, relation):
    contribution = event.l1_sensitivity / factor
    if not contribution.is_integer():
        raise _unsupported(
            event, f"sensitivity {event.l1_sensitivity} is not {factor:g} x an integer"
        )
    return dp_accounting.dp_event.DiscreteLaplaceDpEvent(1.0 / event.scale, int(contribution))


def _to_randomized_response(event, factor, relation):
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise _unsupported(event, "dp-accounting defines it for replace relations only")
    k = event.num_buckets
    return dp_accounting.RandomizedResponseDpEvent(k / (math.expm1(event.epsilon) + k), k)


def _to_composed(event, factor, relation):
    if not event.events:
        return dp_accounting.NoOpDpEvent()
    return dp_accounting.ComposedDpEvent([_to(part, factor, relation) for part in event.events])


def _to_poisson(event, factor, relation):
    if event.neighboring_relation is not sampling_relation_for(relation):
        raise _unsupported(
            event,
            f"its relation {event.neighboring_relation.value!r} is not that of {relation.value!r}",
        )
    return dp_accounting.PoissonSampledDpEvent(
        event.sampling_rate, _to(event.event, 1.0, NeighboringRelation.ADD_OR_REMOVE_ONE)
    )


def _to_opaque(event, factor, relation):
    if event.epsilon == 0 and event.delta == 0:
        return dp_accounting.NoOpDpEvent()  # the output is independent of the input
    raise _unsupported(event, "dp-accounting has no event for an opaque (ε, δ) claim")


_TO: dict[type, Callable[[Any, float, NeighboringRelation], Any]] = {
    NonPrivate: lambda event, factor, relation: dp_accounting.NonPrivateDpEvent(),
    Gaussian: lambda event, factor, relation: dp_accounting.GaussianDpEvent(
        event.noise_stddev * factor / event.l2_sensitivity
    ),
    Laplace: lambda event, factor, relation: dp_accounting.LaplaceDpEvent(
        event.scale * factor / event.l1_sensitivity
    ),
    DiscreteLaplace: _to_discrete_laplace,
    RandomizedResponse: _to_randomized_response,
    SelfComposed: lambda event, factor, relation: dp_accounting.SelfComposedDpEvent(
        _to(event.event, factor, relation), event.count
    ),
    Composed: _to_composed,
    PoissonSampled: _to_poisson,
    OpaqueApproxDP: _to_opaque,
}
