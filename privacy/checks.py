"""Argument validation shared by every package, and by users' own algorithms.

Public so that a family outside the package (``fedpriv verify --claims``) validates its
arguments with the same messages as the built-in families' algorithms.

Each check raises ``ValueError`` (``TypeError`` for a wrong type) whose message names
the argument, the allowed range and the value received, e.g.
"`horizon` must be >= 1, got 0."
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_generator",
    "check_in_range_array",
    "check_int_at_least",
    "check_nonnegative",
    "check_nonnegative_parameter",
    "check_open_unit",
    "check_positive",
    "check_probability",
    "check_rdp_curve",
    "check_rdp_orders",
    "check_real",
]


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a float; reject non-real types and NaN.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (``bool`` included).
    ValueError
        If ``value`` is NaN or an integer beyond the float range.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    try:
        value = float(value)
    except OverflowError:  # an int beyond the float range (~1.8e308)
        raise ValueError(
            f"`{name}` must be a real number within the float range (|x| < 1.8e308), "
            f"got an integer of {len(str(abs(int(value))))} digits."
        ) from None
    if math.isnan(value):
        raise ValueError(f"`{name}` must not be NaN.")
    return value


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float in (0, inf) (or (0, inf] with ``allow_inf``).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.
    allow_inf : bool, optional
        Accept ``inf`` (default False).

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN, <= 0, or ``inf`` without ``allow_inf``.
    """
    value = check_real(name, value)
    upper = "inf]" if allow_inf else "inf)"
    if value <= 0 or (math.isinf(value) and not allow_inf):
        raise ValueError(f"`{name}` must be in (0, {upper}, got {value!r}.")
    return value


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float >= 0 (``inf`` allowed), e.g. a query ε or a threshold.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or negative.
    """
    value = check_real(name, value)
    if value < 0:
        raise ValueError(f"`{name}` must be >= 0, got {value!r}.")
    return value


def check_nonnegative_parameter(name: str, value: object) -> float:
    """Return a privacy parameter in [0, inf] as a float (ρ of zCDP, μ of Gaussian DP;
    ``inf`` means no guarantee).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or negative.
    """
    value = check_real(name, value)
    if value < 0:
        raise ValueError(f"`{name}` must be in [0, inf], got {value!r}.")
    return value


def _check_float_tuple(name: str, values: object) -> tuple[float, ...]:
    """Return a non-empty sequence of real numbers as a tuple of floats."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(
            f"`{name}` must be a sequence of real numbers, got {type(values).__name__}."
        )
    result = tuple(check_real(f"{name}[{i}]", v) for i, v in enumerate(values))
    if not result:
        raise ValueError(f"`{name}` must be non-empty, got ().")
    return result


def check_rdp_orders(orders: object) -> tuple[float, ...]:
    """Return Rényi-DP orders: finite floats > 1, strictly increasing.

    Parameters
    ----------
    orders : sequence of float
        The orders α of an RDP curve.

    Returns
    -------
    tuple of float
        The checked orders.

    Raises
    ------
    TypeError
        If ``orders`` is not a sequence of real numbers.
    ValueError
        If it is empty, an order is outside (1, inf) or NaN, or the orders do not
        increase strictly.
    """
    result = _check_float_tuple("orders", orders)
    for i, order in enumerate(result):
        if not 1.0 < order < math.inf:
            raise ValueError(f"`orders[{i}]` must be in (1, inf), got {order!r}.")
        if i and order <= result[i - 1]:
            raise ValueError(
                f"`orders` must be strictly increasing, got orders[{i}] = {order!r} "
                f"after orders[{i - 1}] = {result[i - 1]!r}."
            )
    return result


def check_rdp_curve(orders: object, rdp: object) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Return a Rényi-DP curve: orders as :func:`check_rdp_orders`, values in [0, inf].

    Parameters
    ----------
    orders : sequence of float
        The orders α.
    rdp : sequence of float
        The RDP value at each order, same length.

    Returns
    -------
    tuple of (tuple of float, tuple of float)
        The checked orders and values.

    Raises
    ------
    TypeError
        If either is not a sequence of real numbers.
    ValueError
        If the orders are malformed, the lengths differ, or a value is NaN or negative.
    """
    orders = check_rdp_orders(orders)
    rdp = _check_float_tuple("rdp", rdp)
    if len(rdp) != len(orders):
        raise ValueError(
            f"`rdp` must have the same length as `orders` ({len(orders)}), got {len(rdp)}."
        )
    for i, value in enumerate(rdp):
        if value < 0:
            raise ValueError(f"`rdp[{i}]` must be in [0, inf], got {value!r}.")
    return orders, rdp


def check_epsilon(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return a privacy ε: a float > 0 (``inf`` only with ``allow_inf``).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The ε to check.
    allow_inf : bool, optional
        Accept ``inf`` (default False).

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN, <= 0, or ``inf`` without ``allow_inf``.
    """
    return check_positive(name, value, allow_inf=allow_inf)


def check_delta(name: str, value: object) -> float:
    """Return a privacy δ: a float in [0, 1).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The δ to check.

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or outside [0, 1).
    """
    value = check_real(name, value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"`{name}` must be in [0, 1), got {value!r}.")
    return value


def check_int_at_least(name: str, value: object, lower: int) -> int:
    """Return ``value`` as an int >= ``lower``.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check (an integer; ``bool`` is refused).
    lower : int
        The smallest allowed value.

    Returns
    -------
    int
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value`` < ``lower``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}.")
    value = int(value)
    if value < lower:
        raise ValueError(f"`{name}` must be >= {lower}, got {value}.")
    return value


def check_open_unit(name: str, value: object) -> float:
    """Return ``value`` as a float in the open interval (0, 1) (e.g. a confidence).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or outside (0, 1).
    """
    value = check_real(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1), got {value!r}.")
    return value


def check_probability(name: str, value: object, *, open_low: bool = True) -> float:
    """Return a probability in (0, 1] (or [0, 1] when ``open_low`` is False).

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    value : object
        The value to check.
    open_low : bool, optional
        Refuse 0 (default True).

    Returns
    -------
    float
        The checked value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or outside the interval.
    """
    value = check_real(name, value)
    ok = (0.0 < value <= 1.0) if open_low else (0.0 <= value <= 1.0)
    if not ok:
        lo = "(0" if open_low else "[0"
        raise ValueError(f"`{name}` must be in {lo}, 1], got {value!r}.")
    return value


def check_finite_array(name: str, values: object) -> np.ndarray:
    """Return ``values`` as a float64 array; reject NaN and infinities.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    values : array_like
        The values to check, any shape.

    Returns
    -------
    numpy.ndarray
        float64, the shape of ``values``.

    Raises
    ------
    TypeError
        If ``values`` is not an array of real numbers.
    ValueError
        If an entry is NaN or infinite (the message counts them).
    """
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(
            f"`{name}` must be an array of real numbers, got {type(values).__name__}."
        ) from None
    if not np.all(np.isfinite(array)):
        bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise ValueError(f"`{name}` must be finite; found {bad} NaN or infinite value(s).")
    return array


def check_in_range_array(name: str, values: object, low: float, high: float) -> np.ndarray:
    """Return a finite float64 array whose entries all lie in [low, high].

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    values : array_like
        The values to check, any shape.
    low, high : float
        The declared bounds (for rewards: the range the claim's sensitivity assumes).

    Returns
    -------
    numpy.ndarray
        float64, the shape of ``values``.

    Raises
    ------
    TypeError
        If ``values`` is not an array of real numbers.
    ValueError
        If an entry is NaN, infinite or outside [low, high].
    """
    array = check_finite_array(name, values)
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(
            f"`{name}` must lie in [{low}, {high}]; found values in "
            f"[{array.min()!r}, {array.max()!r}]."
        )
    return array


def check_generator(name: str, rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a :class:`numpy.random.Generator`; else raise TypeError.

    Parameters
    ----------
    name : str
        The argument's name, used in the error message.
    rng : object
        The generator to check.

    Returns
    -------
    numpy.random.Generator
        ``rng`` itself.

    Raises
    ------
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`{name}` must be a numpy.random.Generator, got {type(rng).__name__}.")
    return rng
