"""Per-event accounting handlers: the ``{event type: EventHandlers}`` table.

Every event type registers an :class:`EventHandlers` bundle of small pure functions
(CONTRIBUTING.md, Events and accounting: dispatch through a table, no ``isinstance`` chains) with
:func:`register_event`; :mod:`fedpriv.privacy.accounting.routes` composes cells of events through them.
This module also resolves each event's quantities (pure ε, μ, ρ, RDP curve, (ε, δ)
pair, PLD), deriving missing ones, and caches them on the (hashable) events.

Built-in handlers (sensitivities are the relation's, see :mod:`fedpriv.privacy.accounting.events`):

=======================  ===============================================================
Laplace                  pure Δ/b; exact Laplace RDP (Mironov 2017, Prop. 6); PLD
                         ``from_laplace_mechanism(b/Δ)`` (the loss depends on |f(x) -
                         f(x')| only, so this is right under every relation)
LaplaceTree              expanded into ``event.depth`` sequential Laplace releases
NonPrivate               no guarantee: ``inf`` on every route
Gaussian, GaussianTree,  GDP μ = Δ/σ, √depth·Δ/σ, ‖D‖_F/(√2σ); ρ = μ²/2; RDP αμ²/2;
SymmetricMatrixGaussian  all merged into one Gaussian PLD of μ = √Σ μ_i²
DiscreteLaplace          pure Δ/t; PLD ``from_discrete_laplace_mechanism(1/t, Δ)``
DiscreteGaussian         ρ = Δ²/(2σ²): zCDP, RDP and basic via zCDP; exact PLD from
                         the pmf (``from_discrete_gaussian_mechanism``) when
                         ``1 <= Δ² < 2`` (the only integer shifts are ±1 in one
                         coordinate); no GDP
SymmetricMatrix-         ρ = Δ_F²/(4σ²) (CKS 2020 Thm. 14 with σ off the diagonal and
DiscreteGaussian         >= √2σ on it): zCDP, RDP and basic via zCDP; no GDP, no PLD
RandomizedResponse       pure ε; exact PLD of its ``num_buckets`` answers
OpaqueApproxDP           (ε, δ) in basic/advanced/optimal; worst-case (ε, δ) PLD; pure,
                         RDP and zCDP only when δ = 0
SelfComposed             expanded into ``count`` releases of its event
Composed                 expanded into its parts; when nested (e.g. inside a
                         Poisson-sampled event) pure ε, ρ and RDP add (sequential
                         composition), μ's add in squares (Dong, Roth & Su 2019,
                         Cor. 3.3), PLDs compose, a δ share is split equally
=======================  ===============================================================

Missing handlers are derived where a theorem allows it: pure ε gives RDP through the
sharp pure→RDP bound (randomized response, Steinke 2024, differentialprivacy.org,
"Sharp RDP & zCDP from Pure DP", Thm. 4), zCDP ``ε²/2`` (Bun & Steinke 2016, Prop.
1.4) and the (ε, 0) randomized-response PLD; GDP μ gives ``ρ = μ²/2``, RDP ``α μ²/2``
and the Gaussian PLD; zCDP ρ gives RDP ``α ρ``.

The table's interface (:class:`EventHandlers`, :func:`register_event`, :func:`handlers_for`)
is re-exported by :mod:`fedpriv.privacy.accounting.routes`, where it used to live. The
resolved quantities (:func:`event_pure_epsilon`, :func:`event_gdp_mu`,
:func:`event_zcdp_rho`, :func:`event_rdp_curve`, :func:`event_approx_dp`,
:func:`event_pld`) are what the routes compose. Every event type of
:mod:`fedpriv.privacy.accounting.events` is priced here; an event type defined
elsewhere registers its handlers in the module that defines it
(:class:`~fedpriv.privacy.accounting.sampling.PoissonSampled`,
:class:`~fedpriv.privacy.accounting.shuffling.Shuffled`,
:class:`~fedpriv.privacy.accounting.interval.IntervalRelease`,
:class:`~fedpriv.privacy.accounting.matrix_tree.SymmetricMatrixGaussianTree`, a user's
own), so an event can never exist in a process where its type is unregistered. The one
list of fedpriv's own event modules is :mod:`fedpriv.privacy.accounting.builtin`.

Length: the handler table: one small pure function per (event type, route) pair.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    Composed,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    GaussianTree,
    Laplace,
    LaplaceTree,
    NonPrivate,
    OpaqueApproxDP,
    RandomizedResponse,
    SelfComposed,
    SymmetricMatrixDiscreteGaussian,
    SymmetricMatrixGaussian,
)
from fedpriv.privacy.accounting.guarantees import (
    DEFAULT_ORDERS,
    gaussian_dp_epsilon,
    rdp_epsilon,
    zcdp_epsilon,
)
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.errors import UnsupportedEventError

__all__ = [
    "REGISTRY",
    "EventHandlers",
    "approx_dp_pld",
    "event_approx_dp",
    "event_gdp_mu",
    "event_pld",
    "event_pure_epsilon",
    "event_rdp_curve",
    "event_zcdp_rho",
    "gaussian_pld",
    "handlers_for",
    "register_event",
    "self_compose_calls",
    "self_compose_pld",
    "track_caches",
]


@dataclasses.dataclass(frozen=True)
class EventHandlers:
    """The functions that price one event type; every field is optional.

    Parameters
    ----------
    pure : callable ``(event) -> float``, optional
        Pure ε (``inf`` if the event is not pure).
    approx : callable ``(event, delta_share) -> (epsilon_i, delta_i)``, optional
        An (ε_i, δ_i) pair the event satisfies, spending at most ``delta_share``
        unless the event has its own fixed δ (e.g. :class:`OpaqueApproxDP`). Used by
        the basic, advanced and optimal routes, which first call it with
        ``delta_share = 0``: a finite ε there means "(ε, δ_i)-DP on its own",
        ``inf`` means "needs a share of δ". Gaussian-type events take ε_i from the
        exact GDP conversion at ``δ_i = delta_share``. Derived from ``pure``,
        ``gdp``, ``zcdp`` or ``rdp`` when missing. An event that answers ``inf``
        at a zero share but has a ``pure`` handler still enters the optimal
        route with its pure ε.
    rdp : callable ``(event, orders) -> ndarray``, optional
        RDP curve at ``orders`` (float64, shape ``orders.shape``, ``inf`` allowed).
    zcdp : callable ``(event) -> float or None``, optional
        ρ of zCDP.
    gdp : callable ``(event) -> float or None``, optional
        μ of Gaussian DP; only for mechanisms that are exactly Gaussian.
    pld : callable ``(event, discretization, pessimistic) -> PrivacyLossDistribution``
        dp-accounting PLD of one release, or ``None``. ``pessimistic=True`` must give
        an upper bound, ``False`` a lower one.
    """

    pure: Callable[[Any], float] | None = None
    approx: Callable[[Any, float], tuple[float, float]] | None = None
    rdp: Callable[[Any, np.ndarray], np.ndarray] | None = None
    zcdp: Callable[[Any], float | None] | None = None
    gdp: Callable[[Any], float | None] | None = None
    pld: Callable[[Any, float, bool], Any] | None = None


_REGISTRY: dict[type, EventHandlers] = {}
#: The ``{event type: EventHandlers}`` table, read-only (a live view: :func:`register_event`
#: adds to it; the ledger codec resolves stored type names in it).
REGISTRY: Mapping[type, EventHandlers] = MappingProxyType(_REGISTRY)
#: Every lru-cached function whose results depend on the registry (cleared on
#: registration); :mod:`fedpriv.privacy.accounting.routes` adds its own with :func:`track_caches`.
_CACHES: list[Any] = []


def track_caches(*cached: Any) -> None:
    """Clear ``cached`` (``functools.lru_cache`` functions) on every registration."""
    _CACHES.extend(cached)


def register_event(event_type: type, handlers: EventHandlers) -> None:
    """Register (or replace) the handlers of ``event_type``; clears every cache.

    Dispatch is on the exact type: a subclass is a new meaning and needs its own entry.

    Parameters
    ----------
    event_type : type
        The event class (dispatch is on the exact type).
    handlers : EventHandlers
        Its pricing functions, one per route (None where a route does not apply).

    Raises
    ------
    TypeError
        If ``event_type`` is not a class, ``handlers`` is not an
        :class:`EventHandlers`, or one of its fields is neither None nor callable.
    """
    if not isinstance(event_type, type):
        raise TypeError(f"`event_type` must be a class, got {type(event_type).__name__}.")
    if not isinstance(handlers, EventHandlers):
        raise TypeError(f"`handlers` must be an EventHandlers, got {type(handlers).__name__}.")
    for field in dataclasses.fields(handlers):
        value = getattr(handlers, field.name)
        if value is not None and not callable(value):
            raise TypeError(f"handler `{field.name}` must be callable or None.")
    _REGISTRY[event_type] = handlers
    for cached in _CACHES:
        cached.cache_clear()


def handlers_for(event: Any) -> EventHandlers:
    """The :class:`EventHandlers` registered for ``type(event)``.

    Parameters
    ----------
    event : Event
        Any event instance.

    Returns
    -------
    EventHandlers

    Raises
    ------
    UnsupportedEventError
        If the type was never registered.
    """
    handlers = _REGISTRY.get(type(event))
    if handlers is None:
        raise UnsupportedEventError(f"no accountant handler for {type(event).__name__}.")
    return handlers


# ----------------------------------------------------------------- resolved quantities
def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


@functools.lru_cache(maxsize=4096)
def event_pure_epsilon(event: Any) -> float:
    """Pure ε of one release (``inf`` if not pure).

    Parameters
    ----------
    event : Event
        One release (a registered event type).

    Returns
    -------
    float
        ε in nats; ``inf`` if the event is not pure.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.
    """
    handlers = handlers_for(event)
    if handlers.pure is not None:
        return float(handlers.pure(event))
    if handlers.approx is not None:
        epsilon, delta = handlers.approx(event, 0.0)
        if delta == 0 and math.isfinite(epsilon):
            return float(epsilon)
    return math.inf


@functools.lru_cache(maxsize=4096)
def event_gdp_mu(event: Any) -> float | None:
    """μ of one release, or None.

    Parameters
    ----------
    event : Event
        One release (a registered event type).

    Returns
    -------
    float or None
        μ >= 0.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.
    """
    handlers = handlers_for(event)
    mu = handlers.gdp(event) if handlers.gdp is not None else None
    return float(mu) if _finite(mu) else None


@functools.lru_cache(maxsize=4096)
def event_zcdp_rho(event: Any) -> float | None:
    """Smallest valid ρ of one release (handler, ``μ²/2``, ``ε²/2``), or None.

    Parameters
    ----------
    event : Event
        One release (a registered event type).

    Returns
    -------
    float or None
        ρ >= 0.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.
    """
    handlers = handlers_for(event)
    rho = handlers.zcdp(event) if handlers.zcdp is not None else None
    candidates = [float(rho)] if _finite(rho) else []
    if (mu := event_gdp_mu(event)) is not None:
        candidates.append(mu**2 / 2)
    if math.isfinite(epsilon := event_pure_epsilon(event)):
        candidates.append(epsilon**2 / 2)  # Bun & Steinke 2016, Prop. 1.4
    return min(candidates) if candidates else None


def _laplace_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Exact RDP of the Laplace mechanism with ε = Δ/b (Mironov 2017, Prop. 6)."""
    a = np.log(orders / (2 * orders - 1)) + (orders - 1) * epsilon
    b = np.log((orders - 1) / (2 * orders - 1)) - orders * epsilon
    return np.clip(np.logaddexp(a, b) / (orders - 1), 0.0, epsilon)


def _pure_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Sharp RDP of any ε-DP mechanism: that of randomized response (Steinke 2024)."""
    ratio = np.log1p(np.exp(-epsilon)) - np.log1p(np.exp(-(2 * orders - 1) * epsilon))
    return np.clip(epsilon - ratio / (orders - 1), 0.0, epsilon)


@functools.lru_cache(maxsize=4096)
def event_rdp_curve(event: Any, orders: tuple[float, ...]) -> np.ndarray | None:
    """Read-only RDP curve of one release at ``orders`` (pointwise min of every valid
    bound: its handler, ``α ρ`` and the sharp pure-DP curve), or None.

    Parameters
    ----------
    event : Event
        One release (a registered event type).
    orders : tuple of float
        RDP orders, each > 1.

    Returns
    -------
    ndarray of float64, shape (len(orders),), or None
        Read-only; ``inf`` allowed at some orders.

    Raises
    ------
    ValueError
        If the event's ``rdp`` handler returns a curve of another shape.
    UnsupportedEventError
        If an event type has no handlers.
    """
    grid = np.asarray(orders, dtype=np.float64)
    handlers = handlers_for(event)
    curves = []
    if handlers.rdp is not None:
        curve = np.asarray(handlers.rdp(event, grid), dtype=np.float64)
        if curve.shape != grid.shape:
            raise ValueError(
                f"rdp handler of {type(event).__name__} returned shape {curve.shape}, "
                f"expected {grid.shape}."
            )
        curves.append(curve)
    if (rho := event_zcdp_rho(event)) is not None:
        curves.append(grid * rho)
    if math.isfinite(epsilon := event_pure_epsilon(event)):
        curves.append(_pure_rdp(epsilon, grid))
    if not curves:
        return None
    curve = np.min(curves, axis=0)
    if not np.any(np.isfinite(curve)):
        return None
    curve.flags.writeable = False
    return curve


@functools.lru_cache(maxsize=8192)
def event_approx_dp(event: Any, delta_share: float) -> tuple[float, float]:
    """(ε_i, δ_i) of one release given a δ share (derived if no handler).

    Parameters
    ----------
    event : Event
        One release (a registered event type).
    delta_share : float
        δ the release may spend, in [0, 1).

    Returns
    -------
    tuple of (float, float)
        ``(ε_i, δ_i)``; ``(inf, 0)`` if it needs a share and got none.

    Raises
    ------
    UnsupportedEventError
        If an event type has no handlers.
    """
    handlers = handlers_for(event)
    if handlers.approx is not None:
        epsilon, delta = handlers.approx(event, delta_share)
        return float(epsilon), float(delta)
    if math.isfinite(epsilon := event_pure_epsilon(event)):
        return epsilon, 0.0
    if delta_share <= 0:
        return math.inf, 0.0
    if (mu := event_gdp_mu(event)) is not None:
        return gaussian_dp_epsilon(mu, delta_share), delta_share
    if (rho := event_zcdp_rho(event)) is not None:
        return zcdp_epsilon(rho, delta_share), delta_share
    curve = event_rdp_curve(event, tuple(DEFAULT_ORDERS))
    if curve is not None:
        finite = np.isfinite(curve)
        orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)[finite]
        return rdp_epsilon(orders, curve[finite], delta_share), delta_share
    return math.inf, 0.0


def approx_dp_pld(epsilon: float, delta: float, discretization: float, pessimistic: bool):
    """PLD of the (ε, δ) randomized response, the worst (ε, δ)-DP mechanism.

    Parameters
    ----------
    epsilon : float
        ε >= 0 of the mechanism.
    delta : float
        δ in [0, 1) (an infinite loss of that mass).
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    pessimistic : bool
        True for an upper bound (pessimistic PLD), False for a lower one.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    """
    return _atoms_pld(
        (
            (epsilon, (1 - delta) / (1 + math.exp(-epsilon))),
            (-epsilon, (1 - delta) / (1 + math.exp(epsilon))),
        ),
        delta,
        discretization,
        pessimistic,
    )


def _randomized_response_pld(event: Any, discretization: float, pessimistic: bool):
    """Exact PLD of ``k``-ary randomized response (loss ±ε or 0, see the event)."""
    if event.num_buckets == 2:
        return approx_dp_pld(event.epsilon, 0.0, discretization, pessimistic)
    total = math.expm1(event.epsilon) + event.num_buckets
    atoms = (
        (event.epsilon, math.exp(event.epsilon) / total),
        (-event.epsilon, 1.0 / total),
        (0.0, (event.num_buckets - 2) / total),
    )
    return _atoms_pld(atoms, 0.0, discretization, pessimistic)


def _atoms_pld(atoms, delta: float, discretization: float, pessimistic: bool):
    """PLD of finitely many ``(loss, mass)`` atoms plus an infinite loss of mass δ.

    Pessimistic: each atom at loss ``l`` is split between the grid points ``a < l < b``
    keeping its mass and ``E[e^{-L}]`` (connect-the-dots, Doroshenko et al. 2022):
    exact for ε' outside ``(a, b)`` and the chord of a convex curve inside, so an
    upper bound whose error does not grow with composition. Optimistic: round down.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    masses: dict[int, float] = {}
    for loss, mass in atoms:
        low = math.floor(loss / discretization)
        high = math.ceil(loss / discretization)
        if not pessimistic or low == high:
            masses[low] = masses.get(low, 0.0) + mass
            continue
        a, b = low * discretization, high * discretization
        # w_b e^{-b} + (mass - w_b) e^{-a} = mass e^{-loss}
        upper = mass * -math.expm1(a - loss) / -math.expm1(a - b)
        masses[low] = masses.get(low, 0.0) + (mass - upper)
        masses[high] = masses.get(high, 0.0) + upper
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        masses, delta, discretization, pessimistic_estimate=pessimistic
    )


#: Smallest GDP ``mu`` handed to dp-accounting: a cell's ``sqrt(sum mu_i^2)`` of
#: Gaussians below ~1e-154 underflows to 0 (and ``1 / mu`` divides by it).
_GAUSSIAN_MU_FLOOR = 1e-100


@functools.lru_cache(maxsize=32)
def gaussian_pld(mu: float, discretization: float, pessimistic: bool):
    """PLD of the Gaussian mechanism with GDP parameter ``mu``.

    Below :data:`_GAUSSIAN_MU_FLOOR` (including a ``mu`` that underflowed to 0): the
    pessimistic PLD is the one at the floor (a larger ``mu`` loses more, so it is
    still an upper bound) and the optimistic one has no loss at all (δ(ε') = 0, a
    lower bound).

    Parameters
    ----------
    mu : float
        μ >= 0 of Gaussian DP.
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    pessimistic : bool
        True for an upper bound (pessimistic PLD), False for a lower one.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if mu < _GAUSSIAN_MU_FLOOR:
        if not pessimistic:
            return _atoms_pld(((0.0, 1.0),), 0.0, discretization, False)
        mu = _GAUSSIAN_MU_FLOOR
    return pld_lib.from_gaussian_mechanism(
        1.0 / mu,
        sensitivity=1.0,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization,
        use_connect_dots=pessimistic,
    )


@functools.lru_cache(maxsize=128)
def event_pld(event: Any, count: int, discretization: float, pessimistic: bool):
    """PLD of ``count`` releases of ``event`` (one self-composition), or None.

    Parameters
    ----------
    event : Event
        One release (a registered event type).
    count : int
        Releases, >= 1.
    discretization : float
        dp-accounting's ``value_discretization_interval``, > 0.
    pessimistic : bool
        True for an upper bound (pessimistic PLD), False for a lower one.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution or None
    """
    handlers = handlers_for(event)
    base = None
    if handlers.pld is not None:
        base = handlers.pld(event, discretization, pessimistic)
    elif (mu := event_gdp_mu(event)) is not None:
        base = gaussian_pld(mu, discretization, pessimistic)
    elif math.isfinite(epsilon := event_pure_epsilon(event)):
        base = approx_dp_pld(epsilon, 0.0, discretization, pessimistic)
    if base is None or count == 1:
        return base
    return self_compose_pld(base, count)


#: Largest k handed to one dp-accounting ``self_compose`` call (see below).
_SELF_COMPOSE_RADIX = 256
#: Counts up to this are self-composed in one dp-accounting call.
_SINGLE_CALL_COUNT = 1024


def self_compose_calls(count: int) -> int:
    """Upper bound on the dp-accounting compositions :func:`self_compose_pld` makes
    (at most three per base-256 digit of ``count``).

    Parameters
    ----------
    count : int
        Releases, >= 1.

    Returns
    -------
    int
    """
    digits = 0
    while count:
        count //= _SELF_COMPOSE_RADIX
        digits += 1
    return 3 * digits


#: dp-accounting's tail mass truncated per ``self_compose`` call (its default).
_TRUNCATION_MASS = 1e-15
#: Largest ratio of the support one ``self_compose`` call keeps to the tightest
#: Chernoff support (both in the Gaussian model of :func:`_truncation_is_tight`) for
#: which the count is composed in one call.
_TRUNCATION_SLACK = 2.0


def _truncation_is_tight(pld, count: int) -> bool:
    """Whether one dp-accounting ``self_compose(count)`` keeps a support within
    :data:`_TRUNCATION_SLACK` of the tightest Chernoff truncation (a speed and memory
    choice only: every call's truncated mass goes to the infinity mass, so both
    plans are upper bounds).

    dp-accounting bounds the k-fold sum of a pmf of ``L`` bins at the orders
    ``j / L``, ``1 <= |j| <= 20`` (``common.compute_self_convolve_bounds``). Modelling
    the sum as Gaussian (bin variance ``v`` per release, ``λ = log(2 / τ)``, ``τ`` =
    :data:`_TRUNCATION_MASS`), the order ``t`` keeps ``k v t + 2 λ / t`` bins, least
    ``2 √(2 k v λ)`` at ``t* = √(2 λ / (k v))``. While ``t* >= 1 / L`` an order of the
    grid lies within a factor 2 of ``t*`` (or above it, where the input's own ``L``
    bins dominate); below, the smallest order ``1 / L`` keeps ``k v / L + 2 L λ``:
    700,000 randomized responses at ε = 0.004 keep 24 times the tight support, which
    the base-256 digits avoid, while DP-SGD (q = 0.01, σ = 1.1) at 10⁵ steps stays
    tight and one call is faster and smaller than the digits (issue 36).
    """
    lam = math.log(2.0 / _TRUNCATION_MASS)
    pmfs = (pld._pmf_remove,) if pld._symmetric else (pld._pmf_remove, pld._pmf_add)
    for pmf in pmfs:
        dense = getattr(pmf, "_probs", None)
        if dense is not None:  # bins are indices from the pmf's lower loss
            probs = np.asarray(dense, dtype=np.float64)
            bins = np.arange(probs.size, dtype=np.float64)
        else:
            probs = np.fromiter(pmf._loss_probs.values(), dtype=np.float64)
            bins = np.fromiter(pmf._loss_probs.keys(), dtype=np.float64)
        probs = np.clip(probs, 0.0, None)
        total = float(probs.sum())
        if total <= 0.0:
            continue
        size = float(bins.max() - bins.min()) + 1.0
        # Elementwise sums, not ``@``: a BLAS dot spins its threads (20 ms here).
        mean = float(np.sum(probs * bins)) / total
        spread = count * float(np.sum(probs * (bins - mean) ** 2)) / total  # k v
        if spread <= 0.0 or size * math.sqrt(2.0 * lam / spread) >= 1.0:
            continue
        kept = spread / size + 2.0 * size * lam
        if kept > _TRUNCATION_SLACK * 2.0 * math.sqrt(2.0 * spread * lam):
            return False
    return True


def self_compose_pld(pld, count: int):
    """``count``-fold self-composition of a dp-accounting PLD, by base-256 digits.

    dp-accounting truncates a k-fold FFT self-composition at Chernoff bounds taken
    over orders ``j / len(pmf)``, ``|j| <= 20``; for k beyond a few hundred the best
    order lies below that grid and the kept support grows like ``k ε`` instead of
    ``√k ε`` (13 million bins for 700,000 randomized responses at ε = 0.004). Powers
    ``pld^(256^i)`` keep every call at k <= 256, where the bound is tight, and the
    digits of ``count`` in base 256 are composed (the same distribution, exactly).
    Up to :data:`_SINGLE_CALL_COUNT` releases take one call: the support at most
    doubles and one FFT replaces three (DP-SGD, q = 0.01, σ = 1.1, 10³ steps: 0.18 s
    against 0.81 s, the same ε to 10 digits; issue 23).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The PLD of one release.
    count : int
        Number of releases, >= 1.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The PLD of ``count`` sequentially composed releases.
    """
    if count <= _SINGLE_CALL_COUNT or _truncation_is_tight(pld, count):
        return pld if count == 1 else pld.self_compose(count)
    result, power = None, pld
    while True:
        count, digit = divmod(count, _SELF_COMPOSE_RADIX)
        if digit:
            part = power if digit == 1 else power.self_compose(digit)
            result = part if result is None else result.compose(part)
        if not count:
            return result
        power = power.self_compose(_SELF_COMPOSE_RADIX)


# ------------------------------------------------------------- built-in event handlers
def _laplace_pld(scale_over_sensitivity: float, discretization: float, pessimistic: bool):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    return pld_lib.from_laplace_mechanism(
        scale_over_sensitivity,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization,
        use_connect_dots=pessimistic,
    )


#: dp-accounting prices a discrete Laplace of parameter ``a = 1 / scale`` through
#: ``exp(a)`` (scipy's ``dlaplace``), which overflows past ~709, and walks the ``s + 1``
#: losses of sensitivity ``s``: beyond these limits :func:`_discrete_laplace_pld`
#: builds the PLD from its own atoms instead.
_DISCRETE_LAPLACE_PARAMETER_LIMIT = 700.0
_DISCRETE_LAPLACE_SENSITIVITY_LIMIT = 1000


def _discrete_laplace_atoms(a: float, s: int, pessimistic: bool):
    """``(loss, mass)`` atoms of the discrete Laplace pair (parameter ``a``, integer
    sensitivity ``s``), stable for every ``a`` (no ``exp`` of a positive number).

    Under ``P(Z = z) ∝ exp(-a|z|)`` against the same shifted by ``s``, an output ``z``
    has loss ``a(|z - s| - |z|)``: ``as`` for ``z <= 0`` (mass ``1 / (1 + e^{-a})``),
    ``a(s - 2z)`` for ``0 < z < s`` (mass ``tanh(a/2) e^{-az}``) and ``-as`` for
    ``z >= s`` (mass ``e^{-as} / (1 + e^{-a})``). Up to
    :data:`_DISCRETE_LAPLACE_SENSITIVITY_LIMIT` the atoms are exact. Beyond it
    two atoms bound the pair: pessimistic, the randomized response of ε = ``as``
    (every ε-DP pair is a post-processing of it, Kairouz, Oh & Viswanath 2015,
    Thm. 2.2); optimistic, loss ``as`` with its exact mass and the rest moved down to
    ``-as`` (lower losses lower δ(ε') at every ε', also after composition).
    """
    tail = math.exp(-a)
    if s <= _DISCRETE_LAPLACE_SENSITIVITY_LIMIT:
        middle = math.tanh(a / 2.0)
        atoms = [(a * s, 1.0 / (1.0 + tail)), (-a * s, math.exp(-a * s) / (1.0 + tail))]
        atoms += [(a * (s - 2 * z), middle * math.exp(-a * z)) for z in range(1, s)]
        return tuple((loss, mass) for loss, mass in atoms if mass > 0)
    if pessimistic:
        tail = math.exp(-a * s)
    return ((a * s, 1.0 / (1.0 + tail)), (-a * s, tail / (1.0 + tail)))


def _discrete_laplace_pld(event: DiscreteLaplace, discretization: float, pessimistic: bool):
    """PLD of the discrete Laplace: dp-accounting's where it is finite and fast,
    else built from :func:`_discrete_laplace_atoms`."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    a, s = 1.0 / event.scale, int(event.l1_sensitivity)
    if a > _DISCRETE_LAPLACE_PARAMETER_LIMIT or s > _DISCRETE_LAPLACE_SENSITIVITY_LIMIT:
        return _atoms_pld(
            _discrete_laplace_atoms(a, s, pessimistic), 0.0, discretization, pessimistic
        )
    return pld_lib.from_discrete_laplace_mechanism(
        1.0 / event.scale,
        sensitivity=int(event.l1_sensitivity),
        pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization,
        use_connect_dots=pessimistic,
    )


def _gaussian_approx(event: Any, delta_share: float) -> tuple[float, float]:
    if delta_share <= 0:
        return math.inf, 0.0
    return gaussian_dp_epsilon(event_gdp_mu(event), delta_share), delta_share


def _zcdp_approx(event: Any, delta_share: float) -> tuple[float, float]:
    """(ε, δ) of an event priced by its zCDP ρ (the discrete Gaussians)."""
    if delta_share <= 0:
        return math.inf, 0.0
    return zcdp_epsilon(event_zcdp_rho(event), delta_share), delta_share


def _opaque_approx(event: OpaqueApproxDP, delta_share: float) -> tuple[float, float]:
    return event.epsilon, event.delta


def _opaque_rdp(event: OpaqueApproxDP, orders: np.ndarray) -> np.ndarray:
    if event.delta > 0:  # the (ε, δ) worst case has an infinite Rényi divergence
        return np.full(orders.shape, np.inf)
    return _pure_rdp(event.epsilon, orders)


def _self_composed_approx(event: SelfComposed, delta_share: float) -> tuple[float, float]:
    epsilon, delta = event_approx_dp(event.event, delta_share / event.count)
    return event.count * epsilon, event.count * delta


def _self_composed_pld(event: SelfComposed, discretization: float, pessimistic: bool):
    return event_pld(event.event, event.count, discretization, pessimistic)


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else factor * value


#: Largest ``sigma`` whose discrete Gaussian PLD is built: dp-accounting walks its
#: pmf over ``±11.6 sigma`` (232,000 points here, seconds; 10^6 hangs and 10^15 asks
#: for 185 PB). Beyond it the event has no PLD and the zCDP route prices it.
_DISCRETE_GAUSSIAN_SIGMA_LIMIT = 1e4


def _discrete_gaussian_pld(event: DiscreteGaussian, discretization: float, pessimistic: bool):
    """Exact PLD of the discrete Gaussian from its pmf, or None.

    An integer vector of L2 norm in ``[1, √2)`` is ±1 in exactly one coordinate,
    so the release is the scalar discrete Gaussian at sensitivity 1 (the other
    coordinates are identical under both neighbors). For larger norms the worst
    integer shift is not a single one (``(2, 0)`` vs ``(1, 1, 1, 1)``), no
    dominating pair is claimed and the zCDP route is used; below 1 no integer
    shift but 0 exists and zCDP is already a bound. So it is beyond
    :data:`_DISCRETE_GAUSSIAN_SIGMA_LIMIT`.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if not 1.0 <= event.l2_sensitivity < math.sqrt(2.0):
        return None
    if event.sigma > _DISCRETE_GAUSSIAN_SIGMA_LIMIT:  # pmf too long to walk
        return None
    return pld_lib.from_discrete_gaussian_mechanism(
        event.sigma,
        sensitivity=1,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization,
        use_connect_dots=pessimistic,
    )


def _sum_or_none(values) -> float | None:
    values = list(values)
    return None if any(v is None for v in values) else math.fsum(values)


def _composed_approx(event: Composed, delta_share: float) -> tuple[float, float]:
    """A δ share split equally among the parts; ε's and δ's add (basic composition)."""
    parts = [event_approx_dp(part, delta_share / len(event.events)) for part in event.events]
    return math.fsum(e for e, _ in parts), math.fsum(d for _, d in parts)


def _composed_rdp(event: Composed, orders: np.ndarray) -> np.ndarray:
    total = np.zeros(orders.shape)
    for part in event.events:
        curve = event_rdp_curve(part, tuple(orders))
        if curve is None:
            return np.full(orders.shape, np.inf)
        total = total + curve
    return total


def _composed_gdp(event: Composed) -> float | None:
    """μ's add in squares (exact for Gaussian parts, Dong, Roth & Su 2019, Cor. 3.3)."""
    squares = _sum_or_none(
        None if (mu := event_gdp_mu(part)) is None else mu**2 for part in event.events
    )
    return None if squares is None else math.sqrt(squares)


def _composed_pld(event: Composed, discretization: float, pessimistic: bool):
    composed = None
    for part in event.events:
        pld = event_pld(part, 1, discretization, pessimistic)
        if pld is None:
            return None
        composed = pld if composed is None else composed.compose(pld)
    return composed


_BUILTIN = {
    Laplace: EventHandlers(
        pure=lambda e: e.l1_sensitivity / e.scale,
        rdp=lambda e, orders: _laplace_rdp(e.l1_sensitivity / e.scale, orders),
        pld=lambda e, d, p: _laplace_pld(e.scale / e.l1_sensitivity, d, p),
    ),
    LaplaceTree: EventHandlers(
        pure=lambda e: e.depth * e.l1_sensitivity / e.scale,
        rdp=lambda e, orders: e.depth * _laplace_rdp(e.l1_sensitivity / e.scale, orders),
        zcdp=lambda e: e.depth * (e.l1_sensitivity / e.scale) ** 2 / 2,
        pld=lambda e, d, p: self_compose_pld(
            _laplace_pld(e.scale / e.l1_sensitivity, d, p), e.depth
        ),
    ),
    NonPrivate: EventHandlers(
        pure=lambda e: math.inf,
        approx=lambda e, share: (math.inf, 0.0),
        rdp=lambda e, orders: np.full(orders.shape, np.inf),
    ),
    Gaussian: EventHandlers(
        approx=_gaussian_approx, gdp=lambda e: e.l2_sensitivity / e.noise_stddev
    ),
    SymmetricMatrixGaussian: EventHandlers(
        approx=_gaussian_approx,
        gdp=lambda e: e.frobenius_sensitivity / (math.sqrt(2.0) * e.noise_stddev),
    ),
    GaussianTree: EventHandlers(
        approx=_gaussian_approx,
        gdp=lambda e: math.sqrt(tree_depth(e.horizon)) * e.l2_sensitivity / e.noise_stddev,
    ),
    DiscreteLaplace: EventHandlers(
        pure=lambda e: e.l1_sensitivity / e.scale, pld=_discrete_laplace_pld
    ),
    DiscreteGaussian: EventHandlers(
        approx=_zcdp_approx,
        zcdp=lambda e: e.l2_sensitivity**2 / (2 * e.sigma**2),
        pld=_discrete_gaussian_pld,
    ),
    SymmetricMatrixDiscreteGaussian: EventHandlers(
        approx=_zcdp_approx, zcdp=lambda e: e.frobenius_sensitivity**2 / (4 * e.sigma**2)
    ),
    RandomizedResponse: EventHandlers(pure=lambda e: e.epsilon, pld=_randomized_response_pld),
    OpaqueApproxDP: EventHandlers(
        pure=lambda e: e.epsilon if e.delta == 0 else math.inf,
        approx=_opaque_approx,
        rdp=_opaque_rdp,
        zcdp=lambda e: e.epsilon**2 / 2 if e.delta == 0 else None,
        pld=lambda e, d, p: approx_dp_pld(e.epsilon, e.delta, d, p),
    ),
    SelfComposed: EventHandlers(
        pure=lambda e: e.count * event_pure_epsilon(e.event),
        approx=_self_composed_approx,
        rdp=lambda e, orders: (
            np.full(orders.shape, np.inf)
            if (curve := event_rdp_curve(e.event, tuple(orders))) is None
            else e.count * curve
        ),
        zcdp=lambda e: _scaled(event_zcdp_rho(e.event), e.count),
        gdp=lambda e: _scaled(event_gdp_mu(e.event), math.sqrt(e.count)),
        pld=_self_composed_pld,
    ),
    # Expanded into its parts in a ledger cell (fedpriv.privacy.accounting.cells); these
    # price it where it cannot be, e.g. inside a Poisson-sampled event.
    Composed: EventHandlers(
        pure=lambda e: math.fsum(event_pure_epsilon(part) for part in e.events),
        approx=lambda e, share: _composed_approx(e, share) if e.events else (0.0, 0.0),
        rdp=_composed_rdp,
        zcdp=lambda e: _sum_or_none(event_zcdp_rho(part) for part in e.events),
        gdp=lambda e: _composed_gdp(e) if e.events else None,
        pld=lambda e, d, p: _composed_pld(e, d, p) if e.events else None,
    ),
}


track_caches(
    event_pure_epsilon,
    event_gdp_mu,
    event_zcdp_rho,
    event_rdp_curve,
    event_approx_dp,
    gaussian_pld,
    event_pld,
)

for _type, _handlers in _BUILTIN.items():
    register_event(_type, _handlers)
