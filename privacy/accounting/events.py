"""Frozen descriptions of privacy-relevant releases.

Events *describe* what was released; accountants *compute* what it costs (see
:mod:`fedpriv.privacy.ledger.accountant` and :mod:`fedpriv.privacy.accounting.routes`). An event's meaning never changes:
new semantics means a new class. Every field is an immutable scalar (or a nested frozen
event), so events are hashable and can be cached.

Sensitivities are declared per event and refer to the accountant's neighboring
relation: for the bandit relation ``REPLACE_ONE_REWARD`` with rewards in ``[low, high]``
one changed reward moves a sum by at most ``high - low``.

Sensitivity is the whole relation
---------------------------------
Every ``*_sensitivity`` field is the largest change of the released statistic between
two neighbors *under the relation the accountant reports* (``sup ||f(x) - f(x')||``).
No event applies a relation-dependent factor later, so an event means the same thing
under every relation and the factor must be built into the number by whoever creates
the event. The classic trap (google/differential-privacy#378, PR #464): for a sum of
vectors with ``||v|| <= C``,

* ``ADD_OR_REMOVE_ONE`` moves the sum by at most ``C``;
* ``REPLACE_ONE`` moves it by at most ``2 C`` (``v`` out, ``v'`` in). dp-accounting
  0.6.0's RDP accountant keeps sensitivity ``C`` under ``REPLACE_ONE`` and so
  under-reports ε (2.166 instead of 4.377 for ``GaussianDpEvent(2.0)``), while its PLD
  accountant uses ``2 C``;
* ``REPLACE_ONE_REWARD`` with rewards in ``[low, high]`` moves a reward sum by
  ``high - low`` (which is ``2 C`` for ``[-C, C]`` and ``C`` for ``[0, C]``).

Because sensitivity is part of the event, every route of :mod:`fedpriv.privacy.accounting.routes` (pure,
RDP, zCDP, GDP, PLD) sees the same number and they cannot disagree by a factor of 2.

Length: thirteen small frozen event classes; more than half of the module is their
documentation (guarantee, relation, source).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from typing import Any

from fedpriv.privacy.checks import check_delta, check_int_at_least, check_positive, check_real

__all__ = [
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_EVENT_EPSILON",
    "MAX_GAUSSIAN_MU",
    "MAX_LAPLACE_EPSILON",
    "Composed",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Event",
    "Gaussian",
    "GaussianTree",
    "Laplace",
    "LaplaceTree",
    "NonPrivate",
    "OpaqueApproxDP",
    "RandomizedResponse",
    "SelfComposed",
    "SymmetricMatrixDiscreteGaussian",
    "SymmetricMatrixGaussian",
    "check_event_tree",
    "check_frozen_event",
    "check_privacy_loss",
    "event_shape",
]

#: Largest ε of a randomized-response or opaque (ε, δ) release: the routes evaluate
#: ``exp(ε)``, which overflows beyond ~709.78. A release that loose protects nothing
#: and is charged as :class:`NonPrivate` instead.
MAX_EVENT_EPSILON = 700.0
#: Largest ``l1_sensitivity / scale`` of one Laplace node (``Laplace``,
#: ``LaplaceTree``, ``DiscreteLaplace``). Claims such as Li & Song's ``m ε`` reach
#: thousands and noise-free correctness tests use 10¹²; composed over
#: :data:`MAX_COUNT` releases the pure ε stays finite. A route that overflows on such
#: a cell is answered ε = inf by the accountant (sound).
MAX_LAPLACE_EPSILON = 1e15
#: Largest ``μ = sensitivity / noise stddev`` of one Gaussian release (ε ≈ 5·10¹¹ at
#: δ = 1e-5). Beyond it μ² overflows the routes' arithmetic.
MAX_GAUSSIAN_MU = 1e6
#: Most releases one event may describe (``SelfComposed`` counts multiply through
#: nesting, ``Composed`` parts add). A query at this count takes a few seconds; at
#: 10⁷ the PLD route overflows after half a minute and at 10¹² it asks for TiB.
MAX_COUNT = 10**6
#: Deepest nesting of ``SelfComposed``/``Composed`` (the routes recurse once per level).
MAX_DEPTH = 64


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Laplace:
    """One release of ``statistic + Lap(scale)`` per coordinate.

    Parameters
    ----------
    scale : float
        Laplace scale ``b`` (units of the statistic), > 0.
    l1_sensitivity : float
        Largest L1 change of the statistic between neighbors, > 0.

    Notes
    -----
    Pure ``l1_sensitivity / scale``-DP (Dwork et al. 2006, Prop. 1).
    """

    scale: float
    l1_sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(
            self, "l1_sensitivity", check_positive("l1_sensitivity", self.l1_sensitivity)
        )
        check_privacy_loss(
            "l1_sensitivity", self.l1_sensitivity, "scale", self.scale, MAX_LAPLACE_EPSILON
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LaplaceTree:
    """A binary-tree continual counter over one stream with Laplace node noise.

    Every node sum that reaches a released prefix is released (at most once,
    memoised) with ``Lap(scale)``. The prefixes ``1..released_prefixes`` reach an
    output, so the nodes that do are ``1..released_prefixes``
    (:mod:`fedpriv.privacy.accounting.tree`, "Released prefixes") and a record sits in at most
    ``depth = released_tree_depth(horizon, released_prefixes) = floor(log2 R) + 1`` of
    them: the tree is pure ``depth * l1_sensitivity / scale``-DP (Chan, Shi & Song
    2011, Thm 3.5; exact at the record of round 1, which every level covers). With
    the default ``released_prefixes = horizon`` this is the counter that releases all
    ``T`` prefixes, root included.

    Parameters
    ----------
    scale : float
        Per-node Laplace scale, > 0.
    horizon : int
        Capacity ``T`` of the tree (number of rounds), >= 1.
    l1_sensitivity : float
        Largest change of one node sum between neighbors, > 0.
    released_prefixes : int, optional
        How many prefixes ``1..R`` reach an output, ``1 <= R <= horizon``; default
        ``horizon``. A prefix computed after ``R`` must reach no output: it is not
        charged. Zhu et al.'s Fed_UCB sends ϑ̃(t−1) (Algorithm 4 line 19) and acts on
        ϑ̃(t−1) (line 9) for ``t = 1..T``, so its view holds ``R = T − 1`` prefixes
        (``T`` when the final estimate ϑ̃(T) is published as well).

    Raises
    ------
    ValueError
        On a parameter out of range.

    Examples
    --------
    >>> LaplaceTree(scale=4.0, horizon=16).depth, LaplaceTree(
    ...     scale=4.0, horizon=16, released_prefixes=15).depth
    (5, 4)
    """

    scale: float
    horizon: int
    l1_sensitivity: float = 1.0
    released_prefixes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "horizon", check_int_at_least("horizon", self.horizon, 1))
        object.__setattr__(
            self, "l1_sensitivity", check_positive("l1_sensitivity", self.l1_sensitivity)
        )
        check_privacy_loss(
            "l1_sensitivity", self.l1_sensitivity, "scale", self.scale, MAX_LAPLACE_EPSILON
        )
        released = self.horizon if self.released_prefixes is None else self.released_prefixes
        released = check_int_at_least("released_prefixes", released, 1)
        if released > self.horizon:
            raise ValueError(
                f"`released_prefixes` must be <= `horizon` = {self.horizon}, got {released}."
            )
        object.__setattr__(self, "released_prefixes", released)

    @property
    def depth(self) -> int:
        """Most released nodes that hold one record: ``floor(log2 released_prefixes) + 1``."""
        return int(self.released_prefixes).bit_length()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NonPrivate:
    """A release of raw data (ε = ∞), recorded so that reports can name the channel.

    Parameters
    ----------
    reason : str
        What was released raw and why, e.g. "initial pulls (Zhu et al. Alg. 4 line 1)".
    """

    reason: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str):
            raise TypeError(f"`reason` must be a str, got {type(self.reason).__name__}.")


def _check_integral_positive(name: str, value: object) -> float:
    """Return a positive, integer-valued float (sensitivity of an integer statistic)."""
    value = check_positive(name, value)
    if not value.is_integer():
        raise ValueError(
            f"`{name}` must be a positive integer for an integer-valued release, got {value!r}."
        )
    return value


def _resolve_noise(event: object, noise_multiplier: float | None) -> None:
    """Set ``noise_stddev`` and ``noise_multiplier`` from whichever was given
    (CONTRIBUTING.md, Naming: ``noise_multiplier = noise_stddev / l2_sensitivity``, dimensionless);
    the one given reads back exactly as given."""
    sensitivity = check_positive("l2_sensitivity", event.l2_sensitivity)
    object.__setattr__(event, "l2_sensitivity", sensitivity)
    if (event.noise_stddev is None) == (noise_multiplier is None):
        raise ValueError("give exactly one of `noise_stddev` and `noise_multiplier`.")
    if event.noise_stddev is None:
        multiplier = check_positive("noise_multiplier", noise_multiplier)
        stddev = multiplier * sensitivity
    else:
        stddev = check_positive("noise_stddev", event.noise_stddev)
        multiplier = stddev / sensitivity
    object.__setattr__(event, "noise_stddev", stddev)
    object.__setattr__(event, "_noise_multiplier", multiplier)
    check_privacy_loss("l2_sensitivity", sensitivity, "noise_stddev", stddev, MAX_GAUSSIAN_MU)


def _multiplier_field() -> Any:
    """The stored ``noise_multiplier`` (derived: not compared, not an init field)."""
    return dataclasses.field(init=False, repr=False, compare=False, default=None)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Gaussian:
    """One release of ``statistic + N(0, noise_stddev**2 I)`` (scalar or vector).

    Parameters
    ----------
    noise_stddev : float
        Standard deviation ``σ`` of the noise on every coordinate (units of the
        statistic), > 0. Give this or ``noise_multiplier``.
    noise_multiplier : float
        ``σ / l2_sensitivity`` (dimensionless), > 0; the other way to give ``σ``.
    l2_sensitivity : float
        Largest L2 change of the *whole* released vector between neighbors, > 0
        (for a sum of vectors with ``||v||_2 <= C``: ``C`` under add/remove, ``2 C``
        under replace-one; see the module docstring).

    Notes
    -----
    Exactly ``μ``-GDP with ``μ = l2_sensitivity / noise_stddev`` (Dong, Roth & Su 2019,
    arXiv:1905.02383, Thm. 2.7), hence ``μ²/2``-zCDP (Bun & Steinke 2016,
    arXiv:1605.02065, Prop. 1.6). Not pure DP.
    """

    noise_stddev: float | None = None
    l2_sensitivity: float = 1.0
    _noise_multiplier: float | None = _multiplier_field()

    def __init__(
        self,
        *,
        noise_stddev: float | None = None,
        l2_sensitivity: float = 1.0,
        noise_multiplier: float | None = None,
    ) -> None:
        object.__setattr__(self, "noise_stddev", noise_stddev)
        object.__setattr__(self, "l2_sensitivity", l2_sensitivity)
        _resolve_noise(self, noise_multiplier)

    @property
    def noise_multiplier(self) -> float:
        """``noise_stddev / l2_sensitivity`` (exactly as given, if it was given)."""
        return self._noise_multiplier


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SymmetricMatrixGaussian:
    """A symmetric ``dim x dim`` statistic released with symmetrized Gaussian noise.

    The mechanism of FedUCB's Privatizer (Dubey & Pentland 2020, Alg. 2, lines 5–6; §4.3,
    Definition 1) at one tree node: draw
    ``N_ij ~ N(0, σ²)`` i.i.d. for all ``i, j``, set ``Z = (N + Nᵀ)/√2`` and release
    ``M + Z`` for a symmetric (Gram-type) ``M``.

    Parameters
    ----------
    noise_stddev : float
        ``σ`` of the *unsymmetrized* entries ``N_ij`` (FedUCB's ``σ_N``), > 0. It is
        also the standard deviation of every off-diagonal entry of ``Z``.
    dim : int
        Side of the matrix (``d + 1`` for FedUCB's augmented Gram matrix), >= 1.
        Descriptive only: the guarantee does not depend on it.
    frobenius_sensitivity : float
        Largest ``||M - M'||_F`` between neighbors, > 0. For the rank-one update
        ``v vᵀ`` with ``v = [x; y]`` and ``||v||² <= L² + B²``: ``L² + B²`` under
        add/remove (``||v vᵀ||_F = ||v||²``) and ``√2 (L² + B²)`` under replace-one,
        because ``||v vᵀ - v' v'ᵀ||_F² = ||v||⁴ + ||v'||⁴ - 2 (v·v')²`` (not the
        triangle-inequality ``2 (L² + B²)``; FedUCB's calibration uses the add/remove
        value although its Definition 1 is replace-one).

    Notes
    -----
    **Derivation of the equivalent scalar Gaussian.** For ``i < j``,
    ``Z_ij = Z_ji = (N_ij + N_ji)/√2 ~ N(0, σ²)``; on the diagonal
    ``Z_ii = √2 N_ii ~ N(0, 2σ²)``; and the ``dim (dim + 1)/2`` upper-triangle entries
    are independent (they use disjoint ``N``'s). The released matrix and its upper
    triangle determine each other, so the release *is* the Gaussian mechanism on the
    upper triangle with per-coordinate variances ``σ²`` (off-diagonal) and ``2σ²``
    (diagonal). Whitening each coordinate by its standard deviation turns the mean
    shift ``D = M - M'`` (symmetric) into a vector of squared norm

    ``Σ_{i<j} D_ij²/σ² + Σ_i D_ii²/(2σ²) = (2 Σ_{i<j} D_ij² + Σ_i D_ii²)/(2σ²)
    = ||D||_F² / (2σ²)``,

    so the privacy loss of ``M + Z`` vs ``M' + Z`` is *exactly* that of a scalar
    Gaussian mechanism with

    ``μ = ||D||_F / (√2 σ)``,

    i.e. this event is ``Gaussian(noise_stddev=√2 σ, l2_sensitivity=
    frobenius_sensitivity)``: μ-GDP with ``μ = frobenius_sensitivity / (√2 σ)``. The
    weight per unit of squared Frobenius norm is the same on and off the diagonal, so
    the bound is attained by every ``D`` of maximal Frobenius norm. Symmetrizing
    halves ``μ²`` compared with releasing ``M + N`` (all ``dim²`` entries, ``μ =
    ||D||_F/σ``): ``D_ij`` (``i < j``) is seen once at variance ``σ²`` instead of
    twice, ``D_ii`` once at variance ``2σ²`` instead of ``σ²``. This is fedpriv's
    ``μ_node = ||Δ||_F/(√2 σ_N)`` for FedUCB's node noise.
    Releasing only part of ``M + Z`` (FedUCB returns the top-left ``d x d`` block and
    the last column, not the corner) is post-processing, so ``μ`` stays an upper
    bound. A record in ``m`` tree nodes is ``SelfComposed(event, m)``, i.e. ``μ_tree
    = √m ||D||_F / (√2 σ)``.
    """

    noise_stddev: float
    dim: int
    frobenius_sensitivity: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_stddev", check_positive("noise_stddev", self.noise_stddev))
        object.__setattr__(self, "dim", check_int_at_least("dim", self.dim, 1))
        object.__setattr__(
            self,
            "frobenius_sensitivity",
            check_positive("frobenius_sensitivity", self.frobenius_sensitivity),
        )
        check_privacy_loss(
            "frobenius_sensitivity",
            self.frobenius_sensitivity,
            *_noise_field(self),
            MAX_GAUSSIAN_MU,
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteLaplace:
    """One release of an integer statistic plus discrete Laplace noise per coordinate.

    ``P(Z = z) ∝ exp(-|z| / scale)`` on the integers (the two-sided geometric
    mechanism of Ghosh, Roughgarden & Sundararajan 2009).

    Parameters
    ----------
    scale : float
        ``t`` in ``exp(-|z|/t)`` (dp-accounting's ``parameter`` is ``1/t``), > 0.
    l1_sensitivity : float
        Largest L1 change of the integer statistic between neighbors: a positive
        integer (given as int or integral float).

    Notes
    -----
    Pure ``l1_sensitivity / scale``-DP. Float-safe: no floating-point noise.
    """

    scale: float
    l1_sensitivity: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(
            self, "l1_sensitivity", _check_integral_positive("l1_sensitivity", self.l1_sensitivity)
        )
        check_privacy_loss(
            "l1_sensitivity", self.l1_sensitivity, "scale", self.scale, MAX_LAPLACE_EPSILON
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, init=False)
class DiscreteGaussian:
    """One release of an integer statistic plus discrete Gaussian noise per coordinate.

    ``P(Z = z) ∝ exp(-z² / (2 sigma²))`` on the integers, independently per coordinate.

    Parameters
    ----------
    noise_stddev : float
        Scale parameter ``σ`` of ``N_Z(0, σ²)`` (its variance is slightly below
        ``σ²``), > 0: the same name as :class:`Gaussian`'s σ. ``sigma`` is an alias
        (keyword and attribute), kept for ledgers stored before issue 19.
    l2_sensitivity : float
        Largest L2 change of the whole integer vector between neighbors, > 0.

    Notes
    -----
    ``ρ``-zCDP with ``ρ = l2_sensitivity² / (2 sigma²)`` (Canonne, Kamath & Steinke
    2020, arXiv:2004.00010, Thm. 4; independent coordinates in its Sec. 2); (ε, δ)
    follows through the zCDP/RDP conversions. The discrete Gaussian is not
    rotation-invariant, so the GDP route does not apply. The PLD route is exact when
    ``1 <= l2_sensitivity² < 2``: the only integer shifts of that norm are ±1 in one
    coordinate, so the release is the scalar discrete Gaussian at sensitivity 1,
    whose PLD dp-accounting builds from the pmf (``from_discrete_gaussian_mechanism``).
    For larger sensitivities several integer shifts compete (``(2, 0)`` against
    ``(1, 1, 1, 1)``) and no dominating pair is claimed.
    """

    noise_stddev: float
    l2_sensitivity: float

    def __init__(
        self,
        *,
        noise_stddev: float | None = None,
        l2_sensitivity: float,
        sigma: float | None = None,
    ) -> None:
        if (noise_stddev is None) == (sigma is None):
            raise ValueError("give exactly one of `noise_stddev` and `sigma` (its alias).")
        name = "noise_stddev" if sigma is None else "sigma"
        value = noise_stddev if sigma is None else sigma
        object.__setattr__(self, "noise_stddev", check_positive(name, value))
        object.__setattr__(self, "l2_sensitivity", check_positive("l2_sensitivity", l2_sensitivity))
        check_privacy_loss(
            "l2_sensitivity", self.l2_sensitivity, "sigma", self.sigma, MAX_GAUSSIAN_MU
        )

    @property
    def sigma(self) -> float:
        """Alias of :attr:`noise_stddev` (the scale σ of ``N_Z(0, σ²)``)."""
        return self.noise_stddev


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SymmetricMatrixDiscreteGaussian:
    """A symmetric integer ``dim x dim`` statistic plus mirrored discrete Gaussian noise.

    The secure twin of :class:`SymmetricMatrixGaussian` (FedUCB's Privatizer with
    ``secure=True``, :mod:`fedpriv.privacy.mechanisms.secure_matrix`): the statistic is a
    symmetric matrix of grid steps; ``Z_ij ~ N_Z(0, sigma²)`` for ``i < j`` and
    ``Z_ii ~ N_Z(0, sigma_diagonal²)`` with ``sigma_diagonal² >= 2 sigma²`` are drawn
    independently on the upper triangle (diagonal included), ``Z_ji = Z_ij``, and
    ``M + Z`` is released.

    Parameters
    ----------
    sigma : float
        ``σ`` of the off-diagonal entries, in grid steps, > 0 (the diagonal's
        ``σ_diag >= √2 σ`` is the release's business; only ``σ`` enters the bound).
    dim : int
        Side of the matrix (``d + 1`` for FedUCB), >= 1; descriptive only.
    frobenius_sensitivity : float
        Largest ``||E||_F`` of the integer difference ``E = M - M'`` between
        neighbors, in grid steps, > 0.

    Notes
    -----
    ``ρ``-zCDP with ``ρ = frobenius_sensitivity² / (4 sigma²)``. The release and its
    upper triangle determine each other; on the upper triangle the noise is a
    product of independent discrete Gaussians with per-coordinate ``σ_j``, which is
    ``ε²/2``-zCDP for every integer shift with ``Σ_j E_j²/σ_j² <= ε²`` (Canonne,
    Kamath & Steinke 2020, arXiv:2004.00010, Thm. 14). Here
    ``Σ_{i<j} E_ij²/σ² + Σ_i E_ii²/σ_diag² <= (2 Σ_{i<j} E_ij² + Σ_i E_ii²)/(2σ²)
    = ||E||_F²/(2σ²)`` for symmetric ``E``, so ``ρ = ||E||_F²/(4σ²)``: the float
    mechanism's ``μ²/2`` at the same ``σ`` (``μ = ||D||_F/(√2 σ)``). (ε, δ) follows
    through the zCDP/RDP conversions; no GDP or PLD route is claimed (the discrete
    Gaussian is not rotation-invariant and several integer shifts compete).
    """

    sigma: float
    dim: int
    frobenius_sensitivity: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "dim", check_int_at_least("dim", self.dim, 1))
        object.__setattr__(
            self,
            "frobenius_sensitivity",
            check_positive("frobenius_sensitivity", self.frobenius_sensitivity),
        )
        check_privacy_loss(
            "frobenius_sensitivity",
            self.frobenius_sensitivity,
            *_noise_field(self),
            MAX_GAUSSIAN_MU,
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RandomizedResponse:
    """An ``epsilon``-DP randomized response (binary, or k-ary at the same ε).

    Parameters
    ----------
    epsilon : float
        Pure privacy parameter: the true answer is kept with probability
        ``e^ε / (e^ε + k - 1)`` for ``k`` answers. > 0 and finite.
    num_buckets : int
        Number of answers ``k``, >= 2 (default 2). Only the PLD uses it. ``k > 2``
        describes neighbors that change one record's answer (a replace relation);
        an ``add_or_remove_one`` accountant refuses it.

    Notes
    -----
    Binary randomized response is the worst ε-DP mechanism: every ε-DP mechanism is
    a post-processing of it (Kairouz, Oh & Viswanath 2015, Thm. 2.1), so the pure,
    RDP and zCDP routes price every ``k`` as ``k = 2``. The PLD is the exact one of
    ``k`` answers: for two neighboring inputs the privacy loss is ``+ε`` with
    probability ``e^ε / (e^ε + k - 1)``, ``-ε`` with ``1 / (e^ε + k - 1)`` and 0
    otherwise (dp-accounting's ``from_randomized_response``, ``REPLACE_ONE``).
    """

    epsilon: float
    num_buckets: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(
            self, "num_buckets", check_int_at_least("num_buckets", self.num_buckets, 2)
        )
        _check_at_most("epsilon", self.epsilon, MAX_EVENT_EPSILON, "MAX_EVENT_EPSILON")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, init=False)
class GaussianTree:
    """A binary-tree continual counter over one stream with Gaussian node noise.

    Every node sum is released (once, memoised) with ``N(0, noise_stddev²)`` per
    coordinate; a record sits in at most ``depth = tree_depth(horizon) = floor(log2
    horizon) + 1`` nodes and moves each by at most ``l2_sensitivity``.

    Parameters
    ----------
    noise_stddev : float
        Per-node noise standard deviation ``σ``, > 0. Give this or
        ``noise_multiplier`` (``σ / l2_sensitivity``, as in issue #3's
        ``GaussianTree(noise_multiplier=10.0, horizon=1000)``).
    horizon : int
        Capacity ``T`` of the tree (number of rounds), >= 1.
    l2_sensitivity : float
        Largest L2 change of one node sum between neighbors, > 0.

    Notes
    -----
    The vector of all node releases moves by at most ``√depth · l2_sensitivity``, so
    the tree is *exactly* the Gaussian mechanism with ``μ = √depth · l2_sensitivity /
    noise_stddev`` (GDP; Dong, Roth & Su 2022). dp-accounting's
    ``SingleEpochTreeAggregationDpEvent`` has the same ``ρ = depth/(2σ²)`` (its depth
    ``ceil(log2(T + 1))`` is the same number) but converts through RDP, about 9 %
    looser: 1.3085 vs 1.1994 at ``σ = 10``, ``T = 1000``, ``δ = 1e-5``.
    """

    noise_stddev: float | None = None
    horizon: int = 1
    l2_sensitivity: float = 1.0
    _noise_multiplier: float | None = _multiplier_field()

    def __init__(
        self,
        *,
        noise_stddev: float | None = None,
        horizon: int = 1,
        l2_sensitivity: float = 1.0,
        noise_multiplier: float | None = None,
    ) -> None:
        object.__setattr__(self, "noise_stddev", noise_stddev)
        object.__setattr__(self, "horizon", check_int_at_least("horizon", horizon, 1))
        object.__setattr__(self, "l2_sensitivity", l2_sensitivity)
        _resolve_noise(self, noise_multiplier)

    @property
    def noise_multiplier(self) -> float:
        """``noise_stddev / l2_sensitivity`` (exactly as given, if it was given)."""
        return self._noise_multiplier


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueApproxDP:
    """A black-box release known only to be (``epsilon``, ``delta``)-DP.

    For mechanisms without a tighter description here, e.g. the Wishart mechanism of
    Shariff & Sheffet (2018) at its paper calibration. Every route uses only the
    claim: its worst case is the (ε, δ) randomized response (Kairouz, Oh & Viswanath
    2015, Thm. 2.1), which is what the PLD and optimal routes compose.

    Parameters
    ----------
    epsilon : float
        >= 0 and finite (a raw release is :class:`NonPrivate`). ``epsilon = 0``
        with ``delta > 0`` is the (0, δ) event: with probability δ the release may
        reveal everything, otherwise nothing.
    delta : float
        In [0, 1); ``delta = 0`` makes the event pure.
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        epsilon = check_real("epsilon", self.epsilon)
        if not 0.0 <= epsilon < math.inf:
            raise ValueError(f"`epsilon` must be in [0, inf), got {epsilon!r}.")
        _check_at_most("epsilon", epsilon, MAX_EVENT_EPSILON, "MAX_EVENT_EPSILON")
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "delta", check_delta("delta", self.delta))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SelfComposed:
    """``count`` sequential (possibly adaptive) releases of the same ``event``.

    Identical to charging ``event`` ``count`` times in one cell; accountants expand
    it, so ``SelfComposed(e, k)`` and ``(e, k)`` always give the same ε.

    Parameters
    ----------
    event : Event
        A frozen, hashable event (may itself be ``SelfComposed``).
    count : int
        Number of releases, >= 1.

    Raises
    ------
    TypeError
        If ``event`` is not a frozen dataclass instance or ``count`` is not an int.
    ValueError
        If ``count < 1``.
    """

    event: Event
    count: int

    def __post_init__(self) -> None:
        check_frozen_event("event", self.event)
        object.__setattr__(self, "count", check_int_at_least("count", self.count, 1))
        _check_at_most("count", self.count, MAX_COUNT, "MAX_COUNT")
        check_event_tree("event", self)


def check_frozen_event(name: str, event: object) -> None:
    """Raise TypeError unless ``event`` is a hashable frozen-dataclass event instance.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    event : object
        The value to check.

    Raises
    ------
    TypeError
        If ``event`` is a class, not a frozen dataclass instance, a guarantee, or unhashable.
    """
    params = getattr(type(event), "__dataclass_params__", None)
    if isinstance(event, type) or params is None or not params.frozen:
        raise TypeError(f"`{name}` must be a frozen event instance, got {type(event).__name__}.")
    from fedpriv.privacy.accounting import guarantees  # a leaf module: no import cycle

    if isinstance(event, (guarantees.PureDP, guarantees.ApproxDP, guarantees.ZCDP, guarantees.RDP)):
        raise TypeError(
            f"`{name}` must be an event (what was released), got the guarantee "
            f"{event!r}; a guarantee is not an event (use OpaqueApproxDP(epsilon, delta) "
            "for a black-box (ε, δ) release)."
        )
    hash(event)  # a frozen dataclass with unhashable fields raises TypeError here


@functools.lru_cache(maxsize=4096)
def event_shape(event: object) -> tuple[int, int]:
    """``(nesting depth, releases)`` of an event tree (a leaf is ``(0, 1)``).

    Parameters
    ----------
    event : Event
        An event, possibly nested (``SelfComposed``, ``Composed``).

    Returns
    -------
    tuple of (int, int)
        ``(nesting depth, releases)``.
    """
    if isinstance(event, SelfComposed):
        depth, releases = event_shape(event.event)
        return depth + 1, releases * event.count
    if isinstance(event, Composed):
        shapes = [event_shape(part) for part in event.events]
        return 1 + max((d for d, _ in shapes), default=0), sum(r for _, r in shapes)
    inner = getattr(event, "event", None)  # a wrapper such as PoissonSampled
    if inner is not None and hasattr(type(inner), "__dataclass_params__"):
        depth, releases = event_shape(inner)
        return depth + 1, releases
    return 0, 1


def check_event_tree(name: str, event: SelfComposed | Composed) -> None:
    """Refuse an event tree nested deeper than MAX_DEPTH or holding more than MAX_COUNT releases.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    event : SelfComposed or Composed
        The event tree to check.

    Raises
    ------
    ValueError
        If the tree is nested deeper than :data:`MAX_DEPTH` or holds more than :data:`MAX_COUNT` releases.
    """
    depth, releases = event_shape(event)
    if depth > MAX_DEPTH:
        raise ValueError(
            f"`{name}`: events may be nested at most MAX_DEPTH = {MAX_DEPTH} levels "
            f"deep (SelfComposed/Composed), got {depth}; flatten the composition."
        )
    if releases > MAX_COUNT:
        raise ValueError(
            f"`{name}`: an event may describe at most MAX_COUNT = {MAX_COUNT:,} releases "
            f"(counts multiply through nesting), got {releases:,}."
        )


def _check_at_most(name: str, value: float, maximum: float, ceiling: str) -> None:
    """Refuse ``value > maximum`` (the documented ceiling ``ceiling`` of this module)."""
    if value > maximum:
        raise ValueError(
            f"`{name}` must be <= {maximum:,} ({ceiling} of fedpriv.privacy.accounting.events), "
            f"got {value!r}."
        )


def _noise_field(event: object) -> tuple[str, float]:
    """The name and value of an event's noise scale field."""
    name = "noise_stddev" if hasattr(event, "noise_stddev") else "sigma"
    return name, getattr(event, name)


def check_privacy_loss(
    sensitivity_name: str, sensitivity: float, scale_name: str, scale: float, maximum: float
) -> None:
    """Refuse a release whose privacy-loss parameter ``sensitivity / scale`` is above
    ``maximum`` (or overflows): no route can price it, and it protects nothing.

    Parameters
    ----------
    sensitivity_name, scale_name : str
        The fields' names, for the message.
    sensitivity, scale : float
        The release's sensitivity and noise scale (> 0).
    maximum : float
        :data:`MAX_LAPLACE_EPSILON` or :data:`MAX_GAUSSIAN_MU`.

    Raises
    ------
    ValueError
        If ``sensitivity / scale`` exceeds ``maximum``, overflows or is below the smallest normal double.
    """
    ceiling = "MAX_GAUSSIAN_MU" if maximum == MAX_GAUSSIAN_MU else "MAX_LAPLACE_EPSILON"
    loss = sensitivity / scale
    if loss < sys.float_info.min:  # subnormal, or 0 by underflow: no route can price it
        raise ValueError(
            f"`{sensitivity_name}` / `{scale_name}` must be >= {sys.float_info.min:g} (the "
            f"smallest normal float), got {sensitivity!r} / {scale!r} = {loss!r}."
        )
    if not loss <= maximum:  # also catches an overflow to inf
        raise ValueError(
            f"`{sensitivity_name}` / `{scale_name}` must be <= {maximum:g} ("
            f"{ceiling} of fedpriv.privacy.accounting.events), got {sensitivity!r} / "
            f"{scale!r} = {loss:.6g}; a release without privacy is NonPrivate(reason=...)."
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Composed:
    """Sequential (possibly adaptive) releases of several events, in order.

    Identical to charging each part once in one cell (dp-accounting's
    ``ComposedDpEvent``, with a tuple instead of a mutable list). ``Composed(events=())``
    releases nothing (dp-accounting's ``NoOpDpEvent``).

    Parameters
    ----------
    events : tuple of Event
        Frozen, hashable events (a list is converted to a tuple).

    Raises
    ------
    TypeError
        If ``events`` is not a sequence of frozen event instances.
    """

    events: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.events, (list, tuple)):  # not a str, set, dict or generator
            raise TypeError(
                f"`events` must be a sequence of events (a list or tuple), got {type(self.events).__name__}."
            )
        parts = tuple(self.events)
        for i, part in enumerate(parts):
            check_frozen_event(f"events[{i}]", part)
        object.__setattr__(self, "events", parts)
        check_event_tree("events", self)


Event = (
    Laplace
    | LaplaceTree
    | NonPrivate
    | Gaussian
    | SymmetricMatrixGaussian
    | DiscreteLaplace
    | DiscreteGaussian
    | SymmetricMatrixDiscreteGaussian
    | RandomizedResponse
    | GaussianTree
    | OpaqueApproxDP
    | SelfComposed
    | Composed
)
