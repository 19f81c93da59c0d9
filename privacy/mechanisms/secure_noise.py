"""Exact integer noise that floating point cannot leak (Canonne, Kamath & Steinke 2020).

Textbook floating-point Laplace noise is not differentially private: the set of
doubles ``x + b·log(U)`` can reach depends on ``x`` (Mironov, CCS 2012), so some
outputs prove which neighbor produced them (ε = ∞; corpus entry
``float_laplace_mironov``). The samplers here draw integers only, from the integer
bits of a :class:`numpy.random.Generator` (``Generator.integers``, which is exact:
Lemire's bounded method with rejection), with exact rational arithmetic and no
floating-point operation anywhere on the noise path:

* :func:`sample_bernoulli_exp` — ``Bernoulli(exp(-γ))`` for rational ``γ >= 0``
  (arXiv:2004.00010, Algorithm 1, with its split ``γ = ⌊γ⌋ + frac``);
* :func:`sample_discrete_laplace` — ``P(Z = z) ∝ exp(-|z|/t)`` on the integers for
  rational ``t > 0`` (Algorithm 2);
* :func:`sample_discrete_gaussian` — ``P(Z = z) ∝ exp(-z²/(2σ²))`` for rational
  ``σ² > 0`` (Algorithm 3).

Every loop of the paper is a rejection loop; here each runs over the whole batch at
once (numpy integer arrays, one pass per round of the loop for the elements still
undecided), so the cost per sample is a few vectorized passes. Quantities that may
exceed 62 bits (large ``σ``) switch to numpy object arrays of Python ints, so the
arithmetic stays exact at every scale.

Why not OpenDP
--------------
OpenDP (``opendp`` 0.16) has exact CKS20 samplers, but they draw from its own
cryptographic generator (a thread-local ChaCha keyed from operating-system entropy,
``opendp::traits::samplers::fill_bytes``) and take no seed or bit source. They cannot
take the run's ``SeedSequence``-derived ``rng`` (CONTRIBUTING.md, Seeding), so runs and audits would
not be reproducible and the two worlds of an audit could not share every other
stream; hence these samplers, which follow the paper's algorithms line by line.

The grid
--------
A release with ``secure=True`` (see :func:`fedpriv.privacy.mechanisms.laplace_release`)
rounds the statistic to a grid of spacing ``granularity = 2**k`` (a power of two, so
``x / granularity`` is exact in binary floating point; OpenDP's float mechanisms use
the same ``2**k`` grid), adds integer noise and multiplies back, which is exact as
long as ``|x / granularity| < 2**53``. Rounding is half-up, ``⌊u + 1/2⌋``, computed
exactly. Since ``⌊a⌋ - ⌊b⌋ <= ⌈a - b⌉`` for reals, a statistic with sensitivity ``Δ``
has sensitivity ``⌈Δ / granularity⌉`` on the grid (:func:`grid_sensitivity`); the
default grid ``2**(⌊log2 Δ⌋ - 10)`` (:func:`default_granularity`) makes this at most
``Δ/granularity · (1 + 2**-10)``, and exactly ``Δ / granularity`` when ``Δ`` is a power
of two. :func:`grid_noise_scale` widens the noise by the same factor, so ε is kept.

The default keeps ``Δ`` at about a thousand grid steps, not more: rounding moves a
release by at most half a step (``Δ/2048``, far below the noise), while the PLD route
of the accountant (dp-accounting's ``from_discrete_laplace_mechanism``) costs time
linear in the sensitivity in steps (about 20 s per event at ``2**20`` steps).

Length: the exact discrete samplers (Canonne, Kamath & Steinke 2020, Algorithms 1-3)
share their integer arithmetic and are tested against their exact pmfs as one unit.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "default_granularity",
    "from_grid",
    "grid_noise_scale",
    "grid_sensitivity",
    "release_grid",
    "round_to_grid",
    "sample_bernoulli_exp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
]

#: Integers with at most this many bits stay in int64 arrays (headroom for sums).
_INT64_BITS = 62

#: Relative precision of the rational ``σ²`` used by the discrete Gaussian sampler.
_SIGMA2_BITS = 20

#: ``Δ`` spans ``[2**GRID_BITS, 2**(GRID_BITS + 1))`` steps of the default grid.
GRID_BITS = 10

#: Largest ``|x / granularity|`` for which grid values convert back to float exactly.
_GRID_LIMIT = float(2**53)


# ----------------------------------------------------------------- exact rationals
def _as_fraction(name: str, value: Any, *, allow_zero: bool = False) -> Fraction:
    """``value`` (int, float, Fraction) as an exact Fraction, finite and > 0 (or >= 0)."""
    if isinstance(value, bool) or not isinstance(
        value, (int, float, Fraction, np.integer, np.floating)
    ):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value!r}.")
    exact = Fraction(value) if not isinstance(value, np.integer) else Fraction(int(value))
    if exact < 0 or (exact == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"`{name}` must be {bound}, got {value!r}.")
    return exact


def _check_size(size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"`size` must be an int, got {type(size).__name__}.")
    if size < 0:
        raise ValueError(f"`size` must be >= 0, got {size}.")
    return int(size)


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy Generator, got {type(rng).__name__}.")
    return rng


def _exact(values: np.ndarray, bits: int) -> np.ndarray:
    """``values`` as int64 if ``bits`` fit, else as an object array of Python ints."""
    return values.astype(np.int64 if bits <= _INT64_BITS else object)


def _bits(values: np.ndarray) -> int:
    """Bit length of the largest magnitude in ``values`` (0 for empty)."""
    if values.size == 0:
        return 0
    if values.dtype == object:
        return max(abs(int(v)).bit_length() for v in values)
    return int(np.max(np.abs(values))).bit_length()


# ----------------------------------------------------------------- uniform integers
def _uniform_below(rng: np.random.Generator, high: int, size: int) -> np.ndarray:
    """Exactly uniform integers in ``[0, high)`` from the generator's integer bits.

    ``high`` up to ``2**62`` uses ``Generator.integers`` (int64). Larger ``high``
    concatenates 64-bit words into a ``high.bit_length()``-bit integer and rejects
    values ``>= high`` (expected < 2 rounds); the result is an object array.
    """
    if high <= 1 << _INT64_BITS:
        return rng.integers(0, high, size=size, dtype=np.int64)
    bits = (high - 1).bit_length()
    words = -(-bits // 64)
    out = np.empty(size, dtype=object)
    todo = np.arange(size)
    while todo.size:
        raw = rng.integers(0, 1 << 64, size=(todo.size, words), dtype=np.uint64)
        values = np.array(
            [int.from_bytes(row.tobytes(), "little") >> (64 * words - bits) for row in raw],
            dtype=object,
        )
        accept = values < high
        out[todo[accept]] = values[accept]
        todo = todo[~accept]
    return out


# ----------------------------------------------------------------- Algorithm 1
def _bernoulli_exp_fraction(rng: np.random.Generator, numer: np.ndarray, denom: int) -> np.ndarray:
    """``Bernoulli(exp(-numer/denom))`` for ``0 <= numer <= denom`` (Alg. 1, γ <= 1).

    ``K = 1``; repeat ``A ~ Bernoulli(γ/K)``, stop at the first ``A = 0``, else
    ``K += 1``; return ``K`` odd. All elements still running share the same ``K``,
    so ``Bernoulli(γ/K)`` is one draw of ``U < numer`` with ``U`` uniform on
    ``[0, denom·K)``.
    """
    size = numer.shape[0]
    stop_k = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    k = 1
    while todo.size:
        a = _uniform_below(rng, denom * k, todo.size) < numer[todo]
        a = np.asarray(a, dtype=bool)
        stop_k[todo[~a]] = k
        todo = todo[a]
        k += 1
    return stop_k % 2 == 1


def _bernoulli_exp(rng: np.random.Generator, numer: np.ndarray, denom: int) -> np.ndarray:
    """``Bernoulli(exp(-numer_i/denom))`` per element, ``numer >= 0`` integers.

    Alg. 1 for ``γ > 1``: ``⌊γ⌋`` independent ``Bernoulli(exp(-1))`` must all be 1,
    then ``Bernoulli(exp(-(γ - ⌊γ⌋)))``. The ``⌊γ⌋`` draws stop at the first 0.
    """
    size = numer.shape[0]
    whole = numer // denom
    rest = numer - whole * denom
    out = np.ones(size, dtype=bool)
    unit = np.ones(0, dtype=np.int64)
    done = 0
    while True:
        running = np.flatnonzero(out & (whole > done))
        if not running.size:
            break
        if unit.size < running.size:
            unit = np.ones(running.size, dtype=np.int64)
        out[running] = _bernoulli_exp_fraction(rng, unit[: running.size], 1)
        done += 1
    running = np.flatnonzero(out)
    rest = _exact(rest, denom.bit_length())  # 0 <= rest < denom
    out[running] = _bernoulli_exp_fraction(rng, rest[running], denom)
    return out


def sample_bernoulli_exp(gamma: Any, *, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact ``Bernoulli(exp(-gamma))`` draws (Canonne, Kamath & Steinke 2020, Alg. 1).

    Parameters
    ----------
    gamma : int, float or Fraction
        ``γ >= 0``, taken as the exact rational value of the number given.
    size, rng
        As in :func:`sample_discrete_laplace` (errors too, for ``gamma``; ``γ = 0``
        is allowed).

    Returns
    -------
    ndarray of bool, shape (size,)

    References
    ----------
    .. [1] C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
       Privacy", NeurIPS 2020, arXiv:2004.00010, Algorithm 1.
    """
    gamma = _as_fraction("gamma", gamma, allow_zero=True)
    size, rng = _check_size(size), _check_rng(rng)
    numer = np.full(size, gamma.numerator, dtype=object)
    return _bernoulli_exp(rng, _exact(numer, gamma.numerator.bit_length()), gamma.denominator)


# ----------------------------------------------------------------- Algorithm 2
def _geometric_exp_neg1(rng: np.random.Generator, size: int) -> np.ndarray:
    """Number of ``Bernoulli(exp(-1))`` successes before the first failure."""
    count = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    ones = np.ones(size, dtype=np.int64)
    while todo.size:
        a = _bernoulli_exp_fraction(rng, ones[: todo.size], 1)
        count[todo[a]] += 1
        todo = todo[a]
    return count


def _discrete_laplace(rng: np.random.Generator, t: int, s: int, size: int) -> np.ndarray:
    """Alg. 2 with scale ``t/s`` (``s, t`` positive ints); int64 or object array."""
    out = np.zeros(size, dtype=np.int64 if t.bit_length() + 8 <= _INT64_BITS else object)
    todo = np.arange(size)
    while todo.size:
        u = _uniform_below(rng, t, todo.size)
        d = _bernoulli_exp(rng, u, t)  # line 4: restart unless Bernoulli(exp(-U/t))
        todo_d, u = todo[d], u[d]
        v = _geometric_exp_neg1(rng, todo_d.size)
        if t.bit_length() + _bits(v) + 1 > _INT64_BITS or s.bit_length() > _INT64_BITS:
            u, v = u.astype(object), v.astype(object)
        y = (u + t * v) // s  # lines 5-10: X = U + t·V, Y = ⌊X/s⌋
        b = rng.integers(0, 2, size=todo_d.size, dtype=np.int64).astype(bool)
        keep = ~(b & (y == 0))  # line 12: restart on (B = 1, Y = 0)
        values = np.where(b, -y, y)[keep]
        if out.dtype != object and values.dtype == object:
            out = out.astype(object)
        out[todo_d[keep]] = values
        done = np.zeros(todo.size, dtype=bool)
        done[np.flatnonzero(d)[keep]] = True
        todo = todo[~done]
    return out


def _to_int64(values: np.ndarray) -> np.ndarray:
    """Samples as int64; raises OverflowError if one does not fit (never in practice)."""
    return (
        values.astype(np.int64)
        if values.dtype != object
        else np.array([int(v) for v in values], dtype=np.int64)
    )


def sample_discrete_laplace(scale: Any, *, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact discrete Laplace draws, ``P(Z = z) = (1 - q)/(1 + q) · q^|z|``, ``q = e^{-1/t}``.

    Parameters
    ----------
    scale : int, float or Fraction
        ``t > 0`` in ``exp(-|z|/t)`` (the ``scale`` of
        :class:`fedpriv.privacy.accounting.events.DiscreteLaplace`), taken as the exact rational
        value of the number given (a float is a dyadic rational).
    size : int
        Number of draws, >= 0.
    rng : numpy.random.Generator
        Source of integer bits (never of floats).

    Returns
    -------
    ndarray of int64, shape (size,)

    Raises
    ------
    ValueError
        If ``scale`` is not finite and > 0, or ``size < 0``.
    TypeError
        If ``scale`` is not a real number or ``rng`` not a Generator.

    Notes
    -----
    Adding it to an integer statistic of L1 sensitivity ``Δ`` (a positive integer) is
    pure ``Δ/t``-DP, exactly: the privacy loss ``(|z - Δ| - |z|)/t`` reaches ``Δ/t``.

    References
    ----------
    .. [1] Canonne, Kamath & Steinke 2020, arXiv:2004.00010, Algorithm 2.

    Examples
    --------
    >>> z = sample_discrete_laplace(2.5, size=4, rng=np.random.default_rng(0))
    >>> z.dtype, z.shape
    (dtype('int64'), (4,))
    """
    scale = _as_fraction("scale", scale)
    size, rng = _check_size(size), _check_rng(rng)
    return _to_int64(_discrete_laplace(rng, scale.numerator, scale.denominator, size))


# ----------------------------------------------------------------- Algorithm 3
def _sigma2_rational(sigma: Fraction) -> Fraction:
    """``σ²`` rounded *up* to ``_SIGMA2_BITS`` significant bits (a dyadic rational)."""
    exact = sigma * sigma
    shift = max(0, _SIGMA2_BITS - math.floor(math.log2(exact)))
    return Fraction(-((-exact.numerator << shift) // exact.denominator), 1 << shift)


def sample_discrete_gaussian(sigma: Any, *, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact discrete Gaussian draws, ``P(Z = z) ∝ exp(-z²/(2σ'²))`` on the integers.

    Parameters
    ----------
    sigma : int, float or Fraction
        ``σ > 0`` (the ``sigma`` of :class:`fedpriv.privacy.accounting.events.DiscreteGaussian`).
    size, rng
        As in :func:`sample_discrete_laplace`, which also gives the return type and
        the errors (for ``sigma`` in place of ``scale``).

    Returns
    -------
    ndarray of int64, shape (size,)

    Notes
    -----
    The sampler is exact for the rational ``σ'² = a/b``: ``σ²`` rounded *up* to 20
    significant bits, so ``σ <= σ' < σ (1 + 2**-20)``. More noise only lowers the
    privacy loss, so an event charged with ``σ`` (``ρ = Δ²/(2σ²)``) is an upper bound,
    within a relative ``2**-19`` of the exact ``ρ`` of what is drawn. Algorithm 3:
    ``t = ⌊σ'⌋ + 1``; draw ``Y ~`` discrete Laplace of scale ``t`` and keep it with
    probability ``exp(-(|Y| - σ'²/t)² / (2σ'²))``, i.e. ``γ = (|Y| b t - a)² /
    (2 a b t²)`` exactly.

    References
    ----------
    .. [1] Canonne, Kamath & Steinke 2020, arXiv:2004.00010, Algorithm 3.
    """
    sigma = _as_fraction("sigma", sigma)
    size, rng = _check_size(size), _check_rng(rng)
    sigma2 = _sigma2_rational(sigma)
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1  # ⌊σ'⌋ + 1 = isqrt(⌊σ'²⌋) + 1
    denom = 2 * a * b * t * t
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = _discrete_laplace(rng, t, 1, todo.size)
        magnitude = np.abs(y)
        root_bits = max(_bits(magnitude) + (b * t).bit_length(), a.bit_length()) + 1
        if 2 * root_bits > _INT64_BITS or denom.bit_length() > _INT64_BITS:
            magnitude = magnitude.astype(object)
        numer = (magnitude * (b * t) - a) ** 2
        accept = _bernoulli_exp(rng, numer, denom)
        out[todo[accept]] = _to_int64(y[accept])
        todo = todo[~accept]
    return out


# ----------------------------------------------------------------- the grid
def _check_granularity(granularity: Any) -> float:
    value = float(_as_fraction("granularity", granularity))
    mantissa, _ = math.frexp(value)
    if mantissa != 0.5:
        raise ValueError(
            f"`granularity` must be a power of two (2**k, k an integer), got {granularity!r}."
        )
    return value


def default_granularity(sensitivity: float) -> float:
    """The grid ``2**(⌊log2 Δ⌋ - 10)``: ``Δ`` spans ``[2**10, 2**11)`` grid steps.

    Parameters
    ----------
    sensitivity : float
        Δ > 0, in the statistic's units.

    Returns
    -------
    float
        A power of two.

    Raises
    ------
    ValueError
        If ``sensitivity`` is not finite and > 0.
    """
    value = float(_as_fraction("sensitivity", sensitivity))
    return math.ldexp(1.0, math.frexp(value)[1] - 1 - GRID_BITS)


def grid_sensitivity(sensitivity: float, granularity: float) -> int:
    """``⌈Δ / granularity⌉``: the sensitivity of the rounded statistic in grid steps.

    Rounding is ``⌊u + 1/2⌋`` and ``⌊a⌋ - ⌊b⌋ <= ⌈a - b⌉``, so two statistics at
    most ``Δ`` apart are at most this many steps apart on the grid.

    Parameters
    ----------
    sensitivity : float
        Δ > 0, in the statistic's units.
    granularity : float
        Grid step, a power of two.

    Returns
    -------
    int
        Sensitivity in grid steps, >= 1.

    Raises
    ------
    ValueError
        If ``sensitivity`` is not > 0, or ``granularity`` is not a power of two.
    """
    exact = _as_fraction("sensitivity", sensitivity) / Fraction(_check_granularity(granularity))
    return -((-exact.numerator) // exact.denominator)


def release_grid(secure: bool, granularity: float | None, l1_sensitivity: float) -> float | None:
    """The grid of a secure release (None when not secure); validates ``granularity``.

    Parameters
    ----------
    secure : bool
        Whether the release is on a grid (``secure=True`` of a mechanism).
    granularity : float or None
        The caller's grid step, a power of two; None for :func:`default_granularity`.
    l1_sensitivity : float
        Δ > 0 of the released statistic.

    Returns
    -------
    float or None
        The grid step, or None for a float release.

    Raises
    ------
    ValueError
        If ``granularity`` is given without ``secure``, or is not a power of two.
    """
    if not secure:
        if granularity is not None:
            raise ValueError("`granularity` applies only with `secure=True`.")
        return None
    if granularity is None:
        return default_granularity(l1_sensitivity)
    grid_sensitivity(l1_sensitivity, granularity)  # raises unless a power of two
    return float(granularity)


def grid_noise_scale(scale: float, sensitivity: float, grid_steps: int) -> float:
    """Discrete Laplace scale on the grid that keeps the declared ``ε = Δ / scale``.

    The grid sensitivity ``grid_steps = ⌈Δ/g⌉`` may exceed ``Δ/g``; scaling the noise
    up by the same factor, ``t = grid_steps · scale / Δ``, keeps the privacy loss of
    the grid release at ``grid_steps / t = Δ / scale`` (the noise grows by the
    factor ``⌈Δ/g⌉ / (Δ/g) < 1 + 2**-10`` on the default grid). The float ``t`` is
    rounded up until ``grid_steps / t <= Δ / scale`` holds in floating point too, so
    the accountant's ε never exceeds the float mechanism's.

    Parameters
    ----------
    scale : float
        Laplace scale ``b`` in units of the statistic, > 0.
    sensitivity : float
        ``Δ`` in units of the statistic, > 0.
    grid_steps : int
        ``⌈Δ/g⌉`` from :func:`grid_sensitivity`.

    Returns
    -------
    float
        ``t`` in grid steps.
    """
    target = sensitivity / scale
    t = grid_steps * scale / sensitivity
    while grid_steps / t > target:
        t = math.nextafter(t, math.inf)
    return t


def round_to_grid(values: Any, granularity: float) -> np.ndarray:
    """``⌊x / granularity + 1/2⌋`` per entry, exactly (a power-of-two granularity).

    Parameters
    ----------
    values : array_like of float64
        Finite, with ``|x / granularity| < 2**53``.
    granularity : float
        A power of two.

    Returns
    -------
    ndarray of int64, same shape as ``values``

    Raises
    ------
    ValueError
        If ``granularity`` is not a power of two, or a value is not finite or too
        large for the grid.
    """
    g = _check_granularity(granularity)
    scaled = np.asarray(values, dtype=np.float64) / g  # exact: division by 2**k
    if not np.all(np.abs(scaled) < _GRID_LIMIT):
        raise ValueError(
            f"`values` must be finite with |x / granularity| < 2**53 (granularity {g!r})."
        )
    whole = np.floor(scaled)
    return (whole + (scaled - whole >= 0.5)).astype(np.int64)  # both steps exact


def from_grid(steps: np.ndarray, granularity: float) -> np.ndarray:
    """``steps · granularity`` as float64, exact while ``|steps| < 2**53``.

    Parameters
    ----------
    steps : array_like of int64
        Values in grid steps, any shape.
    granularity : float
        Grid step, a power of two.

    Returns
    -------
    ndarray of float64, same shape as ``steps``

    Raises
    ------
    ValueError
        If a value is outside ``(-2**53, 2**53)``.
    """
    g = _check_granularity(granularity)
    steps = np.asarray(steps, dtype=np.int64)
    if steps.size and int(np.max(np.abs(steps))) >= 1 << 53:
        raise ValueError("a released grid value is beyond 2**53 steps (not exact in float64).")
    return steps.astype(np.float64) * g
