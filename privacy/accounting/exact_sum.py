"""Exact sums of ratios of floats, fast: ``Σ count_i · a_i / b_i`` as one rational.

The pure-DP route is exact: Σ count·Δ_i/b_i over the releases of a cell, compared with
a claimed ε and rounded up to the smallest double above it (issue 19: never the half
ulp below the truth of a float division). Summed term by term with
:class:`fractions.Fraction`, every addition reduces by a gcd of numbers that grow with
each distinct denominator: a cell of 2,000 distinct Laplace scales (Dubey & Pentland's
interval mechanism at ε = 1, one release per pull) took seconds per sum, and minutes
over the prefixes a per-message accountant prices.

Here the sum is the same rational, never reduced:

1. each term ``count · a / b`` becomes ``n / (o · 2^k)`` with ``o`` odd, from the
   floats' exact ``as_integer_ratio`` (no rounding anywhere);
2. terms of equal odd part ``o`` are added on their largest power of two (a count and
   a numerator: equal scales are grouped, not repeated);
3. the groups are added pairwise in a balanced tree (``n₁ o₂ + n₂ o₁`` over
   ``o₁ o₂``), so that the big multiplications are few and balanced (Karatsuba in
   CPython) and no gcd is ever taken.

The result ``(numerator, denominator)`` is exactly ``Σ count_i · a_i / b_i``;
:func:`round_up` returns the smallest double at or above it and :func:`at_most` decides
``x >= sum`` exactly, by integer cross-multiplication. Both equal what
``Fraction``'s sum gives (the same rational), so every reported number is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["UNIT_ROUNDOFF", "at_most", "ratio_sum", "round_up"]

#: Unit round-off of float64, ``2**-53``: the relative error of one rounded operation.
UNIT_ROUNDOFF = 2.0**-53


def _odd_split(value: int) -> tuple[int, int]:
    """``(o, k)`` with ``value = o · 2^k`` and ``o`` odd (``value > 0``)."""
    k = (value & -value).bit_length() - 1
    return value >> k, k


def ratio_sum(terms: Iterable[tuple[int, float, float]]) -> tuple[int, int]:
    """``Σ count · a / b`` over ``terms`` as an exact, unreduced ``(numerator, denominator)``.

    Parameters
    ----------
    terms : iterable of (int, float, float)
        ``(count, a, b)`` with ``count >= 0`` an int, ``a >= 0`` and ``b > 0`` finite
        floats (or ints).

    Returns
    -------
    (int, int)
        ``numerator >= 0`` and ``denominator > 0`` with ``numerator / denominator``
        equal to the sum exactly (``(0, 1)`` for no terms).

    Raises
    ------
    ValueError
        If a value is negative, ``b`` is 0, or a value is not finite (from
        ``as_integer_ratio``: ``OverflowError``/``ValueError`` for inf/NaN).

    Examples
    --------
    >>> ratio_sum([(11, 1.0, 11.0)])
    (11, 11)
    >>> round_up(*ratio_sum([(11, 1.0, 11.0)]))
    1.0
    """
    # odd part of the denominator -> [numerator, power of two of the denominator]
    groups: dict[int, list[int]] = {}
    for count, a, b in terms:
        a_num, a_den = a.as_integer_ratio()
        b_num, b_den = b.as_integer_ratio()
        if count < 0 or a_num < 0 or b_num <= 0:
            raise ValueError(
                f"ratio_sum needs count >= 0, a >= 0 and b > 0, got ({count!r}, {a!r}, {b!r})."
            )
        if count == 0 or a_num == 0:
            continue
        # count·a/b = count·a_num·b_den / (a_den·b_num); a_den and b_den are powers of 2
        odd, k = _odd_split(b_num)
        k += a_den.bit_length() - 1
        numerator = count * a_num * b_den
        group = groups.get(odd)
        if group is None:
            groups[odd] = [numerator, k]
        elif k > group[1]:
            group[0] = (group[0] << (k - group[1])) + numerator
            group[1] = k
        else:
            group[0] += numerator << (group[1] - k)
    if not groups:
        return 0, 1
    shift = max(k for _, k in groups.values())
    parts = [(numerator << (shift - k), odd) for odd, (numerator, k) in groups.items()]
    while len(parts) > 1:  # balanced pairwise sums: n1/o1 + n2/o2 = (n1 o2 + n2 o1)/(o1 o2)
        paired = [
            (n1 * o2 + n2 * o1, o1 * o2) for (n1, o1), (n2, o2) in zip(parts[0::2], parts[1::2])
        ]
        if len(parts) % 2:
            paired.append(parts[-1])
        parts = paired
    numerator, odd = parts[0]
    return numerator, odd << shift


def round_up(numerator: int, denominator: int) -> float:
    """The smallest double >= ``numerator / denominator`` (``denominator > 0``).

    ``int / int`` is correctly rounded in CPython (as ``float(Fraction)``); one exact
    cross-multiplication decides whether the nearest double is below the value.

    Parameters
    ----------
    numerator : int
        Any integer.
    denominator : int
        > 0.

    Returns
    -------
    float
        The value rounded towards +inf.

    Raises
    ------
    OverflowError
        If the value exceeds the largest double.
    """
    rounded = numerator / denominator
    top, bottom = rounded.as_integer_ratio()
    if top * denominator >= numerator * bottom:
        return rounded
    return math.nextafter(rounded, math.inf)


def at_most(numerator: int, denominator: int, value: float) -> bool:
    """Whether ``numerator / denominator <= value`` exactly (``value`` finite).

    Parameters
    ----------
    numerator : int
        Any integer.
    denominator : int
        > 0.
    value : float
        A finite double.

    Returns
    -------
    bool
    """
    top, bottom = value.as_integer_ratio()
    return numerator * bottom <= top * denominator
