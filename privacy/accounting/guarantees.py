"""Privacy guarantees as immutable, validated types, with explicit conversions.

Every guarantee answers ``get_epsilon(target_delta)`` and ``get_delta(target_epsilon)``:

* :class:`PureDP` (ε) and :class:`ApproxDP` (ε, δ);
* :class:`ZCDP` (ρ-zero-concentrated DP), :class:`GaussianDP` (μ-GDP) and
  :class:`RDP` (a Rényi-DP curve over a finite set of orders);
* :class:`PLD`, a thin wrapper of a dp-accounting privacy loss distribution.

``epsilon`` is in nats; ``inf`` means "no guarantee" (a non-private release). Types
never mix implicitly: conversions are explicit functions (:func:`pure_to_zcdp`,
:func:`gdp_to_zcdp`, :func:`zcdp_to_rdp`, ``*_to_approx_dp``), and
:func:`to_approx_dp` dispatches through a ``{type: function}`` table. Every
conversion is sound: the converted guarantee is implied by the original one, so its
ε at any δ is never lower.

The numeric conversions of parameters (:func:`zcdp_epsilon`, :func:`zcdp_delta`,
:func:`gaussian_dp_epsilon`, :func:`gaussian_dp_delta`, :func:`rdp_epsilon`,
:func:`rdp_delta`) live in :mod:`fedpriv.privacy.accounting.conversions` and are re-exported here;
that module imports SciPy, so it is imported on the first conversion, not with this one.

Length: the six guarantee types, one concept (a guarantee and how it answers ε(δ) and
δ(ε)); about half of the module is their documentation, and the conversions between them
live in :mod:`fedpriv.privacy.accounting.conversions`.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from fedpriv.privacy.checks import (
    check_delta,
    check_epsilon,
    check_nonnegative,
    check_nonnegative_parameter,
    check_rdp_curve,
    check_rdp_orders,
)
from fedpriv.privacy.errors import IncompatibleGuaranteeError

#: Relative slack allowed when comparing an ε to a budget or a claim. It covers
#: floating-point rounding of sums of ε only (a few ulp), never a modelling error.
RELATIVE_TOLERANCE = 1e-12

if TYPE_CHECKING:  # dp_accounting takes ~2 s to import; only PLD needs it.
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
    from fedpriv.privacy.accounting.conversions import (  # see _REEXPORTED
        gaussian_dp_delta,
        gaussian_dp_epsilon,
        rdp_delta,
        rdp_epsilon,
        zcdp_delta,
        zcdp_epsilon,
    )

__all__ = [
    "DEFAULT_ORDERS",
    "PLD",
    "RDP",
    "RELATIVE_TOLERANCE",
    "ZCDP",
    "AnyGuarantee",
    "ApproxDP",
    "GaussianDP",
    "Guarantee",
    "PureDP",
    "format_epsilon",
    "gaussian_dp_delta",
    "gaussian_dp_epsilon",
    "gdp_to_approx_dp",
    "gdp_to_zcdp",
    "pure_to_approx_dp",
    "pure_to_zcdp",
    "rdp_delta",
    "rdp_epsilon",
    "rdp_to_approx_dp",
    "to_approx_dp",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_to_approx_dp",
    "zcdp_to_rdp",
]

#: Numeric conversions re-exported from :mod:`fedpriv.privacy.accounting.conversions`.
#: That module imports SciPy (~0.35 s), so it is imported when a conversion is first
#: used, not with the guarantee types (an audit script needs ``PureDP``, not SciPy).
_REEXPORTED = frozenset(
    {
        "gaussian_dp_delta",
        "gaussian_dp_epsilon",
        "rdp_delta",
        "rdp_epsilon",
        "zcdp_delta",
        "zcdp_epsilon",
    }
)


def _conversions() -> ModuleType:
    """:mod:`fedpriv.privacy.accounting.conversions`, imported on first use."""
    from fedpriv.privacy.accounting import conversions

    return conversions


def __getattr__(name: str) -> Any:
    """A re-exported conversion, imported on first use (PEP 562)."""
    if name not in _REEXPORTED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_conversions(), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_REEXPORTED})


#: RDP orders used when none are given: dp-accounting's grid (fine steps below 11,
#: integers to 63), starting at 1.25, plus a few large orders for tiny ρ.
DEFAULT_ORDERS: tuple[float, ...] = (
    tuple(1.0 + x / 20.0 for x in range(5, 20))  # 1.25, 1.30, ..., 1.95
    + tuple(x / 10.0 for x in range(20, 110))  # 2.0, 2.1, ..., 10.9
    + tuple(float(x) for x in range(11, 64))  # 11, ..., 63
    + (80.0, 96.0, 128.0, 160.0, 192.0, 256.0, 512.0, 1024.0, 4096.0)
)

#: ApproxDP needs ε > 0; an exact ε = 0 is reported as this (weaker, so still sound).
_SMALLEST_EPSILON = sys.float_info.min


def _delta_of_approx(epsilon: float, delta: float, target_epsilon: float) -> float:
    """Tight δ(ε') of an (ε, δ)-DP mechanism (privacy region of Kairouz et al.)."""
    if target_epsilon >= epsilon:
        return delta
    if math.isinf(epsilon):
        return 1.0
    # delta + (1 - delta) (e^eps - e^eps') / (1 + e^eps), written to avoid overflow.
    ratio = -math.expm1(target_epsilon - epsilon) / (1.0 + math.exp(-epsilon))
    return min(1.0, delta + (1.0 - delta) * ratio)


@dataclasses.dataclass(frozen=True, slots=True)
class PureDP:
    """ε-differential privacy (δ = 0).

    Parameters
    ----------
    epsilon : float
        Privacy loss bound in nats, in (0, inf]; ``inf`` means no guarantee.

    Raises
    ------
    ValueError
        If ``epsilon`` is NaN or not > 0.

    Examples
    --------
    >>> PureDP(1.25).get_epsilon(0.0)
    1.25
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon("epsilon", self.epsilon, allow_inf=True))

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest ε such that the mechanism is (ε, ``target_delta``)-DP (an upper bound).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        check_delta("target_delta", target_delta)
        return self.epsilon

    def get_delta(self, target_epsilon: float) -> float:
        """Tight δ at ``target_epsilon`` >= 0 (Kairouz, Oh & Viswanath 2015, Thm 2.1).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].

        Raises
        ------
        TypeError
            If ``target_epsilon`` is not a real number.
        ValueError
            If ``target_epsilon`` is negative or NaN.
        """
        target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
        return _delta_of_approx(self.epsilon, 0.0, target_epsilon)


@dataclasses.dataclass(frozen=True, slots=True)
class ApproxDP:
    """(ε, δ)-differential privacy.

    Parameters
    ----------
    epsilon : float
        In (0, inf].
    delta : float
        In [0, 1).

    Raises
    ------
    ValueError
        If ``epsilon`` is not > 0 or ``delta`` is outside [0, 1).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", check_delta("delta", self.delta))

    def get_epsilon(self, target_delta: float) -> float:
        """ε at ``target_delta``: ``epsilon`` if ``target_delta >= delta``, else ``inf``.

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        target_delta = check_delta("target_delta", target_delta)
        return self.epsilon if target_delta >= self.delta else math.inf

    def get_delta(self, target_epsilon: float) -> float:
        """Tight δ at ``target_epsilon`` >= 0 (Kairouz, Oh & Viswanath 2015, Thm 2.1).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].

        Raises
        ------
        TypeError
            If ``target_epsilon`` is not a real number.
        ValueError
            If ``target_epsilon`` is negative or NaN.
        """
        target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
        return _delta_of_approx(self.epsilon, self.delta, target_epsilon)

    def compose(self, other: ApproxDP) -> ApproxDP:
        """Basic sequential composition: ε and δ add.

        Parameters
        ----------
        other : ApproxDP
            The guarantee of the release composed after this one.

        Returns
        -------
        ApproxDP
            ``ApproxDP(ε₁ + ε₂, δ₁ + δ₂)``; ``ApproxDP(inf, 0)`` once δ₁ + δ₂ >= 1
            (Dwork & Roth 2014, Thm 3.16).

        Raises
        ------
        IncompatibleGuaranteeError
            If ``other`` is not an :class:`ApproxDP`.
        """
        if not isinstance(other, ApproxDP):
            raise IncompatibleGuaranteeError(
                f"cannot compose ApproxDP with {type(other).__name__}; convert explicitly."
            )
        delta = self.delta + other.delta
        if delta >= 1.0:  # no guarantee left
            return ApproxDP(math.inf, 0.0)
        return ApproxDP(self.epsilon + other.epsilon, delta)


Guarantee = PureDP | ApproxDP


def pure_to_approx_dp(guarantee: PureDP) -> ApproxDP:
    """Explicit conversion ``PureDP(ε) -> ApproxDP(ε, 0)``.

    Parameters
    ----------
    guarantee : PureDP
        The ε-DP guarantee to convert.

    Returns
    -------
    ApproxDP
        The same ε with δ = 0.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`PureDP`.
    """
    _require(guarantee, PureDP)
    return ApproxDP(guarantee.epsilon, 0.0)


def _require(guarantee: object, expected: type) -> None:
    """Raise IncompatibleGuaranteeError unless ``guarantee`` is an ``expected``."""
    if not isinstance(guarantee, expected):
        raise IncompatibleGuaranteeError(
            f"expected {expected.__name__}, got {type(guarantee).__name__}."
        )


# ---------------------------------------------------------------------------------
# Guarantee types
# ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ZCDP:
    """ρ-zero-concentrated differential privacy (Bun & Steinke 2016, Def. 1.1).

    Equivalent to (α, αρ)-RDP for every order α > 1.

    Parameters
    ----------
    rho : float
        In [0, inf]; ``0`` is perfect privacy and ``inf`` no guarantee.

    Raises
    ------
    ValueError
        If ``rho`` is NaN or negative.
    TypeError
        If ``rho`` is not a real number.

    See Also
    --------
    zcdp_epsilon, zcdp_delta : the (ε, δ) conversions ``get_epsilon``/``get_delta``
        use.

    Examples
    --------
    >>> ZCDP(0.05).get_epsilon(1e-5) < 0.05 + 2 * (0.05 * 11.512925465)**0.5
    True
    """

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_nonnegative_parameter("rho", self.rho))

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest implied ε at ``target_delta`` (see :func:`zcdp_epsilon`).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        return _conversions().zcdp_epsilon(self.rho, check_delta("target_delta", target_delta))

    def get_delta(self, target_epsilon: float) -> float:
        """Smallest implied δ at ``target_epsilon`` (see :func:`zcdp_delta`).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].
        """
        return _conversions().zcdp_delta(
            self.rho, check_nonnegative("target_epsilon", target_epsilon)
        )


@dataclasses.dataclass(frozen=True, slots=True)
class GaussianDP:
    """μ-Gaussian differential privacy (Dong, Roth & Su, arXiv:1905.02383).

    Distinguishing neighbors is at least as hard as telling N(0, 1) from N(μ, 1):
    the Gaussian mechanism with noise multiplier σ is (1/σ)-GDP, and k-fold
    composition of μᵢ-GDP is sqrt(Σ μᵢ²)-GDP.

    Parameters
    ----------
    mu : float
        In [0, inf]; ``0`` is perfect privacy and ``inf`` no guarantee.

    Raises
    ------
    ValueError
        If ``mu`` is NaN or negative.
    TypeError
        If ``mu`` is not a real number.

    See Also
    --------
    gaussian_dp_delta, gaussian_dp_epsilon : the exact conversions used.

    Examples
    --------
    >>> round(GaussianDP(10**0.5 / 10).get_epsilon(1e-5), 6)  # tree σ=10, depth 10
    1.19937
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_nonnegative_parameter("mu", self.mu))

    def get_epsilon(self, target_delta: float) -> float:
        """Exact ε at ``target_delta`` (see :func:`gaussian_dp_epsilon`).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        return _conversions().gaussian_dp_epsilon(
            self.mu, check_delta("target_delta", target_delta)
        )

    def get_delta(self, target_epsilon: float) -> float:
        """Exact δ at ``target_epsilon`` (see :func:`gaussian_dp_delta`).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].
        """
        return _conversions().gaussian_dp_delta(
            self.mu, check_nonnegative("target_epsilon", target_epsilon)
        )


@dataclasses.dataclass(frozen=True, slots=True)
class RDP:
    """A Rényi-DP curve: (α, ``rdp[i]``)-RDP at each order α = ``orders[i]``.

    Parameters
    ----------
    orders : sequence of float
        Finite orders > 1, strictly increasing; stored as a tuple of floats.
    rdp : sequence of float
        Rényi divergence bound (nats) at each order, in [0, inf]; same length.

    Raises
    ------
    ValueError
        If a value is NaN or out of range, ``orders`` is empty or not strictly
        increasing, or the lengths differ.
    TypeError
        If either argument is not a sequence of real numbers.

    References
    ----------
    .. [1] Mironov, "Rényi Differential Privacy", arXiv:1702.07476, Def. 4.

    See Also
    --------
    rdp_epsilon, rdp_delta : the conversions ``get_epsilon``/``get_delta`` use.

    Examples
    --------
    >>> curve = RDP([2, 4], [0.1, 0.2])
    >>> curve.orders
    (2.0, 4.0)
    >>> round(curve.get_epsilon(1e-5), 6)
    3.287862
    """

    orders: tuple[float, ...]
    rdp: tuple[float, ...]

    def __post_init__(self) -> None:
        orders, rdp = check_rdp_curve(self.orders, self.rdp)
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "rdp", rdp)

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest implied ε at ``target_delta`` (see :func:`rdp_epsilon`).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        target_delta = check_delta("target_delta", target_delta)
        return _conversions().rdp_epsilon(self.orders, self.rdp, target_delta)

    def get_delta(self, target_epsilon: float) -> float:
        """Smallest implied δ at ``target_epsilon`` (see :func:`rdp_delta`).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].
        """
        target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
        return _conversions().rdp_delta(self.orders, self.rdp, target_epsilon)


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class PLD:
    """A dp-accounting privacy loss distribution, as a guarantee.

    The wrapped object is treated as immutable: never compose into it or change it
    after wrapping (dp-accounting's ``compose`` returns a new object). Two wrappers
    are equal when they hold the *same* object (identity) with the same flag.

    Parameters
    ----------
    distribution : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The distribution; ``get_epsilon``/``get_delta`` delegate to its
        ``get_epsilon_for_delta``/``get_delta_for_epsilon``.
    pessimistic : bool, default True
        Whether ``distribution`` was built with pessimistic rounding (the
        dp-accounting default), so that its δ(ε) is an upper bound. An optimistic
        PLD is an estimate, not a guarantee: :func:`to_approx_dp` rejects it.

    Raises
    ------
    TypeError
        If ``distribution`` is not a ``PrivacyLossDistribution`` or ``pessimistic``
        is not a bool.
    """

    distribution: PrivacyLossDistribution
    pessimistic: bool = True

    def __post_init__(self) -> None:
        from dp_accounting.pld import privacy_loss_distribution

        if not isinstance(self.distribution, privacy_loss_distribution.PrivacyLossDistribution):
            raise TypeError(
                "`distribution` must be a dp_accounting PrivacyLossDistribution, "
                f"got {type(self.distribution).__name__}."
            )
        if not isinstance(self.pessimistic, bool):
            raise TypeError(f"`pessimistic` must be a bool, got {type(self.pessimistic).__name__}.")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PLD):
            return NotImplemented
        return self.distribution is other.distribution and self.pessimistic == other.pessimistic

    def __hash__(self) -> int:
        return hash((id(self.distribution), self.pessimistic))

    def get_epsilon(self, target_delta: float) -> float:
        """ε at ``target_delta`` from the distribution (a bound if pessimistic).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε in nats, >= 0 (``inf`` if no finite ε holds at ``target_delta``).

        Raises
        ------
        ValueError
            If ``target_delta`` is outside [0, 1).
        """
        target_delta = check_delta("target_delta", target_delta)
        return float(self.distribution.get_epsilon_for_delta(target_delta))

    def get_delta(self, target_epsilon: float) -> float:
        """δ at ``target_epsilon`` from the distribution (hockey-stick divergence).

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].
        """
        target_epsilon = check_nonnegative("target_epsilon", target_epsilon)
        return float(self.distribution.get_delta_for_epsilon(target_epsilon))


#: Every guarantee type (:data:`Guarantee` stays ``PureDP | ApproxDP``).
AnyGuarantee = PureDP | ApproxDP | ZCDP | GaussianDP | RDP | PLD


# ---------------------------------------------------------------------------------
# Explicit conversions between guarantee types
# ---------------------------------------------------------------------------------


def pure_to_zcdp(guarantee: PureDP) -> ZCDP:
    """ε-DP implies (ε²/2)-zCDP (Prop. 1.4 of Bun & Steinke, arXiv:1605.02065).

    Parameters
    ----------
    guarantee : PureDP
        The ε-DP guarantee to convert (ε in nats).

    Returns
    -------
    ZCDP
        ``ZCDP(rho=epsilon**2 / 2)``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`PureDP`.

    Examples
    --------
    >>> pure_to_zcdp(PureDP(0.5))
    ZCDP(rho=0.125)
    """
    _require(guarantee, PureDP)
    return ZCDP(0.5 * guarantee.epsilon**2)


def gdp_to_zcdp(guarantee: GaussianDP) -> ZCDP:
    """μ-GDP implies (μ²/2)-zCDP.

    By Blackwell's theorem a μ-GDP pair of output distributions is a
    post-processing of N(0, 1) vs N(μ, 1) (Dong, Roth & Su, arXiv:1905.02383,
    Sec. 2), so by data processing its Rényi divergences are at most ``α μ² / 2``.

    Parameters
    ----------
    guarantee : GaussianDP
        The μ-GDP guarantee to convert.

    Returns
    -------
    ZCDP
        ``ZCDP(rho=mu**2 / 2)``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`GaussianDP`.

    Examples
    --------
    >>> gdp_to_zcdp(GaussianDP(1.0))
    ZCDP(rho=0.5)
    """
    _require(guarantee, GaussianDP)
    return ZCDP(0.5 * guarantee.mu**2)


def zcdp_to_rdp(guarantee: ZCDP, orders: Iterable[float] = DEFAULT_ORDERS) -> RDP:
    """ρ-zCDP as the RDP curve ``rdp = α ρ`` at the given orders (exact by definition).

    Parameters
    ----------
    guarantee : ZCDP
    orders : sequence of float, default DEFAULT_ORDERS
        Finite orders > 1, strictly increasing.

    Returns
    -------
    RDP
        The curve ``rdp[i] = orders[i] * rho``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`ZCDP`.
    ValueError
        If ``orders`` is malformed.

    Examples
    --------
    >>> zcdp_to_rdp(ZCDP(0.5), [2, 3]).rdp
    (1.0, 1.5)
    """
    _require(guarantee, ZCDP)
    orders = check_rdp_orders(orders)
    return RDP(orders, tuple(order * guarantee.rho for order in orders))


def _approx_at(epsilon: float, delta: float) -> ApproxDP:
    """ApproxDP(ε, δ), reporting an exact ε = 0 as the smallest positive float."""
    return ApproxDP(max(epsilon, _SMALLEST_EPSILON), delta)


def zcdp_to_approx_dp(guarantee: ZCDP, delta: float) -> ApproxDP:
    """``ApproxDP(zcdp_epsilon(rho, delta), delta)``.

    ApproxDP needs ε > 0, so an exact ε = 0 is reported as the smallest positive
    normal float (a weaker, hence still valid, guarantee).

    Parameters
    ----------
    guarantee : ZCDP
        The ρ-zCDP guarantee to convert.
    delta : float
        Target δ, in [0, 1).

    Returns
    -------
    ApproxDP
        ε (nats) from :func:`zcdp_epsilon` at ``delta``, and ``delta``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`ZCDP`.
    ValueError
        If ``delta`` is outside [0, 1).

    Examples
    --------
    >>> round(zcdp_to_approx_dp(ZCDP(0.05), 1e-5).epsilon, 6)
    1.308118
    """
    _require(guarantee, ZCDP)
    delta = check_delta("delta", delta)
    return _approx_at(_conversions().zcdp_epsilon(guarantee.rho, delta), delta)


def gdp_to_approx_dp(guarantee: GaussianDP, delta: float) -> ApproxDP:
    """``ApproxDP(gaussian_dp_epsilon(mu, delta), delta)`` (ε = 0 as in
    :func:`zcdp_to_approx_dp`).

    Parameters
    ----------
    guarantee : GaussianDP
        The μ-GDP guarantee to convert.
    delta : float
        Target δ, in [0, 1).

    Returns
    -------
    ApproxDP
        The exact ε (nats) of μ-GDP at ``delta`` (Dong, Roth & Su, arXiv:1905.02383,
        Cor. 2.13), and ``delta``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`GaussianDP`.
    ValueError
        If ``delta`` is outside [0, 1).
    """
    _require(guarantee, GaussianDP)
    delta = check_delta("delta", delta)
    return _approx_at(_conversions().gaussian_dp_epsilon(guarantee.mu, delta), delta)


def rdp_to_approx_dp(guarantee: RDP, delta: float) -> ApproxDP:
    """``ApproxDP(guarantee.get_epsilon(delta), delta)`` (ε = 0 as in
    :func:`zcdp_to_approx_dp`).

    Parameters
    ----------
    guarantee : RDP
        The RDP curve to convert.
    delta : float
        Target δ, in [0, 1).

    Returns
    -------
    ApproxDP
        ε (nats) from :meth:`RDP.get_epsilon` at ``delta``, and ``delta``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not an :class:`RDP`.
    ValueError
        If ``delta`` is outside [0, 1).
    """
    _require(guarantee, RDP)
    delta = check_delta("delta", delta)
    return _approx_at(guarantee.get_epsilon(delta), delta)


def _pure_at(guarantee: PureDP, delta: float) -> ApproxDP:
    """PureDP(ε) -> ApproxDP(ε, δ)."""
    return ApproxDP(guarantee.epsilon, check_delta("delta", delta))


def _approx_at_delta(guarantee: ApproxDP, delta: float) -> ApproxDP:
    """ApproxDP(ε, δ0) -> ApproxDP(ε if δ >= δ0 else inf, δ)."""
    delta = check_delta("delta", delta)
    return ApproxDP(guarantee.get_epsilon(delta), delta)


def _pld_at(guarantee: PLD, delta: float) -> ApproxDP:
    """PLD -> ApproxDP(pld ε(δ), δ); optimistic PLDs are not guarantees."""
    delta = check_delta("delta", delta)
    if not guarantee.pessimistic:
        raise ValueError(
            "`guarantee.pessimistic` must be True to convert a PLD to ApproxDP, got "
            "False: an optimistic PLD is an estimate, not a guarantee."
        )
    return _approx_at(guarantee.get_epsilon(delta), delta)


_TO_APPROX_DP: dict[type, Callable[[Any, float], ApproxDP]] = {
    PureDP: _pure_at,
    ApproxDP: _approx_at_delta,
    ZCDP: zcdp_to_approx_dp,
    GaussianDP: gdp_to_approx_dp,
    RDP: rdp_to_approx_dp,
    PLD: _pld_at,
}


def to_approx_dp(guarantee: AnyGuarantee, delta: float) -> ApproxDP:
    """Any guarantee as ``ApproxDP(guarantee.get_epsilon(delta), delta)``.

    Dispatches on the type through a ``{type: function}`` table. The result is
    implied by ``guarantee``, so its ε is never lower than ``guarantee``'s at any δ.
    An exact ε = 0 is reported as the smallest positive float (see
    :func:`zcdp_to_approx_dp`).

    Parameters
    ----------
    guarantee : PureDP, ApproxDP, ZCDP, GaussianDP, RDP or PLD
    delta : float
        In [0, 1).

    Returns
    -------
    ApproxDP
        With ``.delta == delta``; ``epsilon`` is ``inf`` when no finite ε holds
        (e.g. ``ApproxDP(1, 1e-5)`` at ``delta = 1e-6``).

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not one of the types above.
    ValueError
        If ``delta`` is outside [0, 1), or ``guarantee`` is a non-pessimistic PLD.

    Examples
    --------
    >>> to_approx_dp(PureDP(1.0), 1e-6)
    ApproxDP(epsilon=1.0, delta=1e-06)
    >>> round(to_approx_dp(GaussianDP(10.0), 1e-5).epsilon, 6)
    91.81729
    """
    for cls in type(guarantee).__mro__:
        convert = _TO_APPROX_DP.get(cls)
        if convert is not None:
            return convert(guarantee, delta)
    supported = ", ".join(cls.__name__ for cls in _TO_APPROX_DP)
    raise IncompatibleGuaranteeError(
        f"cannot convert {type(guarantee).__name__} to ApproxDP; expected one of {supported}."
    )


def format_epsilon(epsilon: float) -> str:
    """Render ε for reports: ``"inf"`` for no guarantee, else 6 significant digits.

    Parameters
    ----------
    epsilon : float
        ε in nats, >= 0 or ``inf``.

    Returns
    -------
    str
        ``"inf"`` or ``f"{epsilon:.6g}"``.
    """
    return "inf" if math.isinf(epsilon) else f"{epsilon:.6g}"
