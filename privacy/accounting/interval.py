"""Dubey & Pentland's interval release as a frozen event, and its cost.

One agent-arm stream of the AAMAS 2020 private message-passing protocol releases a
noisy running mean of its own rewards each time its pull count reaches a release
point; the noisy value is cached and re-sent until the next release.
:class:`IntervalRelease` describes the distinct noise draws of one such stream;
re-sending a cached value is post-processing and is not an extra release. The event
of the paper's own calibration is built by
:func:`fedpriv.privacy.mechanisms.interval.make_interval_release`.

Coverage
--------
Release ``j`` is the mean of the first ``counts[j]`` rewards, so the ``i``-th reward
(record ``i``, 1-based) enters release ``j`` iff ``i <= counts[j]``. With
non-decreasing counts, a record enters its own release and **every later release**.
Its pure ε under ``NeighboringRelation.REPLACE_ONE_REWARD`` is therefore

    ε_i = Σ_{j : counts[j] >= i} l1_sensitivities[j] / scales[j],

and the worst record is record 1, which every release covers: ``Σ_j Δ_j / b_j``. The
bound is exact for a 0 ↔ 1 flip of record 1, since every release's mean then moves
by its full sensitivity in the same direction.

Importing this module registers the event's handlers
(:func:`fedpriv.privacy.accounting.handlers.register_event`), so an
:class:`IntervalRelease` can never exist in a process where it cannot be priced.

Length: the interval mechanism's event, its exact ε per message and its prefix sums must
stay in one module so that the accountant and the per-message audit price the same
rational.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.exact_sum import ratio_sum, round_up
from fedpriv.privacy.accounting.handlers import EventHandlers, register_event
from fedpriv.privacy.checks import check_real

__all__ = [
    "IntervalRelease",
    "interval_record_epsilons",
    "interval_release_advanced_epsilon",
    "interval_release_epsilon",
    "interval_release_pld",
    "interval_release_rdp",
    "interval_release_zcdp",
]


def _positive_tuple(name: str, values: object) -> tuple[float, ...]:
    """Return ``values`` as a non-empty tuple of finite floats > 0."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"`{name}` must be a sequence of numbers, got {values!r}.")
    # the common case (a tuple of floats, e.g. a prefix of a valid event: the
    # per-message accountant builds one per message) checked in one pass
    if (
        type(values) is tuple
        and values
        and all(type(v) is float for v in values)
        and all(0.0 < v < math.inf for v in values)
    ):
        return values
    result = tuple(check_real(name, value) for value in values)  # type: ignore[union-attr]
    if not result:
        raise ValueError(f"`{name}` must hold at least one release, got none.")
    bad = [value for value in result if not 0.0 < value < math.inf]
    if bad:
        raise ValueError(f"`{name}` must be in (0, inf), got {bad[0]!r}.")
    return result


def _count_tuple(name: str, values: object) -> tuple[int, ...]:
    """Return ``values`` as a tuple of non-decreasing ints >= 1."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {array.shape}.")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"`{name}` must hold integers, got dtype {array.dtype}.")
    result = tuple(int(value) for value in array)
    if result and min(result) < 1:
        raise ValueError(f"`{name}` must be >= 1, got {min(result)}.")
    if any(later < earlier for earlier, later in itertools.pairwise(result)):
        raise ValueError(f"`{name}` must be non-decreasing (releases in time order).")
    return result


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IntervalRelease:
    """The distinct noisy releases of one agent-arm stream (interval mechanism).

    Parameters
    ----------
    scales : tuple of float
        Laplace scale ``b_j`` of each release, > 0, in time order.
    l1_sensitivities : tuple of float
        Largest change ``Δ_j`` of release ``j``'s statistic when one reward of the
        stream changes, > 0. For the mean of ``n_j`` rewards in [0, 1] (the paper's
        release) ``Δ_j = 1/n_j``; for a sum of rewards in [0, 1], ``Δ_j = 1``.
    counts : tuple of int
        Number ``n_j >= 1`` of rewards release ``j`` covers (the first ``n_j``
        records), non-decreasing. Equal counts describe a stream that redraws noise
        without new data (a known implementation bug the ledger must price).

    Raises
    ------
    ValueError
        If the tuples are empty or of different lengths, a scale or sensitivity is
        not in (0, inf), a count is < 1, or the counts decrease.
    TypeError
        If a value is not a real number or a count not an integer.

    See Also
    --------
    fedpriv.privacy.mechanisms.interval.make_interval_release : the event of the
        paper's (reconstructed) calibration.
    interval_release_epsilon : pure ε of the worst record.

    Notes
    -----
    Neighboring relation ``REPLACE_ONE_REWARD`` within this stream, with the
    realised release schedule fixed (AAMAS 2020, §3.1 Definition: histories differing in one
    reward). Arms and agents are disjoint streams and compose in parallel.

    Examples
    --------
    >>> event = IntervalRelease(scales=(1.0, 0.5), l1_sensitivities=(0.5, 0.25),
    ...                         counts=(2, 4))
    >>> interval_release_epsilon(event)
    1.0
    """

    scales: tuple[float, ...]
    l1_sensitivities: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        scales = _positive_tuple("scales", self.scales)
        sensitivities = _positive_tuple("l1_sensitivities", self.l1_sensitivities)
        counts = _count_tuple("counts", self.counts)
        if not len(scales) == len(sensitivities) == len(counts):
            raise ValueError(
                "`scales`, `l1_sensitivities` and `counts` must have one entry per "
                f"release, got lengths {len(scales)}, {len(sensitivities)}, "
                f"{len(counts)}."
            )
        object.__setattr__(self, "scales", scales)
        object.__setattr__(self, "l1_sensitivities", sensitivities)
        object.__setattr__(self, "counts", counts)


def _per_release_epsilons(event: IntervalRelease) -> np.ndarray:
    """``Δ_j / b_j`` of every release, float64."""
    return np.asarray(event.l1_sensitivities) / np.asarray(event.scales)


def interval_release_epsilon(event: IntervalRelease) -> float:
    """Pure ε of the worst record: ``Σ_j Δ_j / b_j`` over every release.

    Record 1 is covered by every release (module docstring), so this is the maximum
    of :func:`interval_record_epsilons`. Summed with ``math.fsum``.

    Parameters
    ----------
    event : IntervalRelease
        The releases of one stream.

    Returns
    -------
    float
        ε in nats, >= 0.

    Examples
    --------
    >>> interval_release_epsilon(IntervalRelease(scales=(1.0, 0.5),
    ...                          l1_sensitivities=(0.5, 0.25), counts=(2, 4)))
    1.0
    """
    return _release_epsilon(event)


@functools.lru_cache(maxsize=64)
def _release_epsilon(event: IntervalRelease) -> float:
    """:func:`interval_release_epsilon`, cached: every route of a cell asks for it."""
    # Summed exactly over the exact ratios Δ_j / b_j of the float parameters and
    # rounded up (issue 19): never the half ulp below the truth of a float division.
    # fedpriv.privacy.accounting.exact_sum gives the same rational as a Fraction sum, without the
    # gcd per addition (seconds for the 2,000 distinct scales of a stream at ε = 1).
    return round_up(*_exact_release_sum(event.l1_sensitivities, event.scales))


#: Exact sums Σ Δ_j / b_j by (sensitivities, scales), oldest first (at most
#: :data:`_SUMS_KEPT`): the per-message accountant prices releases 1..n for n = 1, 2, ...
#: (:mod:`fedpriv.privacy.mechanisms.interval_messages`), and each sum is the previous one plus one term.
_SUMS: dict[tuple, tuple[int, int]] = {}
_SUMS_KEPT = 64


def _exact_release_sum(sensitivities: tuple, scales: tuple) -> tuple[int, int]:
    """``Σ_j Δ_j / b_j`` exactly, as an unreduced ``(numerator, denominator)``.

    When the sum of the same releases without the last one is known, one term is added
    to it exactly (``n₁/d₁ + n₂/d₂ = (n₁ d₂ + n₂ d₁)/(d₁ d₂)``): the same rational as
    :func:`fedpriv.privacy.accounting.exact_sum.ratio_sum` over every term, in one multiplication.
    """
    key = (sensitivities, scales)
    total = _SUMS.get(key)
    if total is not None:
        return total
    previous = _SUMS.get((sensitivities[:-1], scales[:-1])) if len(scales) > 1 else None
    if previous is None:
        total = ratio_sum(zip(itertools.repeat(1), sensitivities, scales))
    else:
        top, bottom = ratio_sum([(1, sensitivities[-1], scales[-1])])
        total = (previous[0] * bottom + top * previous[1], previous[1] * bottom)
    if len(_SUMS) >= _SUMS_KEPT:
        del _SUMS[next(iter(_SUMS))]
    _SUMS[key] = total
    return total


def interval_record_epsilons(event: IntervalRelease) -> np.ndarray:
    """Pure ε of every record ``i = 1 .. counts[-1]`` (rewards after it cost 0).

    Parameters
    ----------
    event : IntervalRelease
        The releases of one stream.

    Returns
    -------
    ndarray of float64, shape (counts[-1],)
        Entry ``i - 1`` is ``Σ_{j : counts[j] >= i} Δ_j / b_j``.

    Examples
    --------
    >>> event = IntervalRelease(scales=(1.0, 1.0), l1_sensitivities=(1.0, 2.0),
    ...                         counts=(1, 3))
    >>> interval_record_epsilons(event)
    array([3., 2., 2.])
    """
    per_release = _per_release_epsilons(event)
    suffix = np.cumsum(per_release[::-1])[::-1]  # suffix[j] = Σ_{j' >= j}
    records = np.arange(1, event.counts[-1] + 1)
    first = np.searchsorted(np.asarray(event.counts), records, side="left")
    return suffix[first]


def interval_release_advanced_epsilon(event: IntervalRelease, delta: float) -> float:
    """ε of the worst record at ``delta`` by heterogeneous advanced composition.

    Release ``j`` is pure ``ε_j = Δ_j / b_j``-DP and record 1 enters every release,
    so Kairouz, Oh & Viswanath 2015 (ICML), Thm. 3.5, with every ``δ_j = 0``, gives
    (ε̃, δ)-DP for the smallest of

    * ``Σ ε_j`` (basic composition),
    * ``Σ ε_j tanh(ε_j/2) + √(2 Σ ε_j² · ln(e + √(Σ ε_j²)/δ))``,
    * ``Σ ε_j tanh(ε_j/2) + √(2 Σ ε_j² · ln(1/δ))``,

    where ``ε tanh(ε/2) = ε (e^ε - 1)/(e^ε + 1)`` bounds the mean privacy loss of an
    ε-DP release; it is at most Dwork, Rothblum & Vadhan 2010's ``ε (e^ε - 1)``
    (their Thm. III.3), so the value never exceeds the DRV heterogeneous form either.

    Parameters
    ----------
    event : IntervalRelease
    delta : float
        Target δ, in [0, 1). At ``delta = 0`` only the basic sum applies.

    Returns
    -------
    float
        ε̃ >= 0, at most :func:`interval_release_epsilon`.

    Raises
    ------
    ValueError
        If ``delta`` is not in [0, 1).

    Examples
    --------
    >>> event = IntervalRelease(scales=(10.0,) * 100, l1_sensitivities=(1.0,) * 100,
    ...                         counts=tuple(range(1, 101)))
    >>> round(interval_release_advanced_epsilon(event, 1e-5), 4)
    5.2981
    """
    delta = check_real("delta", delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"`delta` must be in [0, 1), got {delta!r}.")
    per_release = _per_release_epsilons(event)
    basic = interval_release_epsilon(event)
    if delta == 0.0:
        return basic
    drift = math.fsum((per_release * np.tanh(per_release / 2.0)).tolist())
    squares = math.fsum((per_release**2).tolist())
    log_terms = (-math.log(delta), math.log(math.e + math.sqrt(squares) / delta))
    return min(basic, drift + math.sqrt(2.0 * squares * min(log_terms)))


def interval_release_zcdp(event: IntervalRelease) -> float:
    """zCDP ``ρ = Σ_j (Δ_j / b_j)² / 2`` of the worst record.

    Each release is pure ``ε_j``-DP, hence ``ε_j²/2``-zCDP (Bun & Steinke 2016,
    Prop. 1.4), and zCDP adds under composition (their Lemma 2.3).

    Parameters
    ----------
    event : IntervalRelease
        The releases of one stream.

    Returns
    -------
    float
        ρ >= 0.

    Examples
    --------
    >>> interval_release_zcdp(IntervalRelease(scales=(1.0, 2.0),
    ...                       l1_sensitivities=(1.0, 1.0), counts=(1, 2)))
    0.625
    """
    return 0.5 * math.fsum((_per_release_epsilons(event) ** 2).tolist())


def interval_release_rdp(event: IntervalRelease, orders: object) -> np.ndarray:
    """RDP of the worst record at each order: the sum of the releases' Laplace RDP.

    For a Laplace release with ``λ = b/Δ`` (Mironov 2017, Prop. 6)::

        ε(α) = 1/(α-1) log( α/(2α-1) e^{(α-1)/λ} + (α-1)/(2α-1) e^{-α/λ} ),  α > 1
        ε(1) = 1/λ + e^{-1/λ} - 1,       ε(∞) = 1/λ

    computed with ``logaddexp`` and capped at the pure ``1/λ``.

    Parameters
    ----------
    event : IntervalRelease
    orders : array_like of float, shape (n_orders,)
        RDP orders, each >= 1 (``inf`` allowed).

    Returns
    -------
    ndarray of float64, shape (n_orders,)

    Raises
    ------
    ValueError
        If an order is < 1 or NaN.

    Examples
    --------
    >>> event = IntervalRelease(scales=(1.0,), l1_sensitivities=(1.0,), counts=(1,))
    >>> interval_release_rdp(event, [1.0, np.inf]).round(6)
    array([0.367879, 1.      ])
    """
    orders = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if orders.ndim != 1 or np.isnan(orders).any() or (orders < 1.0).any():
        raise ValueError("`orders` must be a one-dimensional array of values >= 1.")
    inverse = _per_release_epsilons(event)[None, :]  # 1/λ_j
    order = orders[:, None]
    result = np.empty((orders.size, inverse.shape[1]))
    is_one = np.broadcast_to(order == 1.0, result.shape)
    is_inf = np.broadcast_to(np.isinf(order), result.shape)
    mid = ~(is_one | is_inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite = np.logaddexp(
            np.log(order / (2.0 * order - 1.0)) + (order - 1.0) * inverse,
            np.log((order - 1.0) / (2.0 * order - 1.0)) - order * inverse,
        ) / (order - 1.0)
    full_inverse = np.broadcast_to(inverse, result.shape)
    result[mid] = finite[mid]
    result[is_one] = (full_inverse + np.expm1(-full_inverse))[is_one]
    result[is_inf] = full_inverse[is_inf]
    return np.minimum(result, full_inverse).sum(axis=1)


def interval_release_pld(
    event: IntervalRelease, *, discretization: float = 1e-4, pessimistic: bool = True
) -> Any:
    """dp-accounting privacy-loss distribution of the worst record.

    Composes ``from_laplace_mechanism(b_j / Δ_j)`` over every release (all cover
    record 1). Releases with equal ``b_j / Δ_j`` are grouped with ``self_compose``;
    distinct ones are composed one by one. dp-accounting's Laplace PLD is stated for
    add/remove, but the Laplace privacy loss depends only on the shift
    ``|x - x'| <= Δ``, so it is also the PLD of a replace-one release of
    sensitivity ``Δ`` (as in :mod:`fedpriv.privacy.ledger.accountant`).

    Parameters
    ----------
    event : IntervalRelease
    discretization : float
        ``value_discretization_interval`` of dp-accounting, > 0.
    pessimistic : bool
        True: pessimistic estimate with connect-the-dots (an upper bound on δ(ε));
        False: optimistic estimate (a lower bound).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution

    Raises
    ------
    ValueError
        If ``discretization <= 0``.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    discretization = check_real("discretization", discretization)
    if not discretization > 0.0:
        raise ValueError(f"`discretization` must be > 0, got {discretization!r}.")
    parameters = np.asarray(event.scales) / np.asarray(event.l1_sensitivities)
    values, repeats = np.unique(parameters, return_counts=True)
    composed = None
    for value, repeat in zip(values.tolist(), repeats.tolist()):
        part = pld_lib.from_laplace_mechanism(
            value,
            pessimistic_estimate=bool(pessimistic),
            value_discretization_interval=discretization,
            use_connect_dots=bool(pessimistic),  # connect-the-dots is pessimistic only
        )
        if repeat > 1:
            part = part.self_compose(repeat)
        composed = part if composed is None else composed.compose(part)
    return composed


def _approx_handler(event: IntervalRelease, delta_share: float) -> tuple[float, float]:
    """(ε, δ) pair for :mod:`fedpriv.privacy.accounting.routes` (basic, advanced and optimal routes).

    At ``delta_share = 0`` it answers ``inf`` ("needs a share of δ", the routes'
    convention) so that the routes hand it a δ share and price the releases by
    :func:`interval_release_advanced_epsilon`; the routes fall back to the pure ε
    where no share is available. The δ is charged only when it lowers ε.
    """
    if delta_share <= 0.0:
        return math.inf, 0.0
    epsilon = interval_release_advanced_epsilon(event, delta_share)
    pure = interval_release_epsilon(event)
    return (epsilon, delta_share) if epsilon < pure else (pure, 0.0)


def _pld_handler(event: IntervalRelease, discretization: float, pessimistic: bool) -> Any:
    """Positional adapter of `interval_release_pld` for :mod:`fedpriv.privacy.accounting.routes`."""
    return interval_release_pld(event, discretization=discretization, pessimistic=pessimistic)


register_event(
    IntervalRelease,
    EventHandlers(
        pure=interval_release_epsilon,
        approx=_approx_handler,
        rdp=interval_release_rdp,
        zcdp=interval_release_zcdp,
        gdp=None,
        pld=_pld_handler,
    ),
)
