"""Laplace draws equal to ``Generator.laplace`` bit for bit, in fewer CPU cycles.

NumPy's ``Generator.laplace(loc, scale, size)`` calls the C function
``random_laplace`` once per element (``numpy/random/src/distributions/distributions.c``)::

    U = next_double(bitgen)
    if U >= 0.5:   return loc - scale * log(2.0 - U - U)
    elif U > 0.0:  return loc + scale * log(U + U)
    else:          redraw (U == 0 is rejected and the next U is used)

with ``log`` the C library's (the same in NumPy 2.0 to 2.4.6). :func:`sample_laplace`
draws the same uniforms with ``Generator.random`` (the same ``next_double``, one per
element, in order) and evaluates the same expression array-wise, in cache-sized
blocks, in IEEE double arithmetic as C does on x86-64 (SSE2, no excess precision):

* ``f = floor(U + U)`` is 1 where ``U >= 0.5`` and 0 elsewhere (``U + U`` is exact);
  with ``s = 1 - 2f`` (-1 or +1), ``(2f + s·U) + s·U`` is ``(2.0 - U) - U`` on the
  upper branch and ``(0.0 + U) + U = U + U`` on the lower one: the C arguments,
  operation for operation (``a - b`` is ``a + (-b)`` in IEEE 754, sign of a zero
  included, and negation is exact);
* ``np.log`` of the argument is the C library's ``log`` (condition below);
* ``log·(s·scale) + loc`` is ``loc - scale·log`` (upper) or ``loc + scale·log``
  (lower): ``s·scale`` is exact, round to nearest is symmetric so
  ``log·(-scale) = -(scale·log)``, and ``x + loc = loc + x``. At ``U = 0.5`` (``log``
  is +0.0) this is ``-0.0 + loc``: ``+0.0`` for ``loc = 0.0``, as C's ``0.0 - 0.0``.

A ``U == 0`` (probability ``2**-53`` per draw) is rejected as C rejects it: the block's
nonzero uniforms give the next outputs and the rest of the array is drawn by
``Generator.laplace`` itself from the state that follows them, which is where the C
loop would draw them from. Every output and the generator's final state are
therefore those of ``generator.laplace(loc, scale, size)``; the tests check both.

When ``np.log`` is the C library's ``log``
------------------------------------------
``np.log`` on float64 runs NumPy's ``DOUBLE_log`` loop
(``numpy/_core/src/umath/loops_exponent_log.dispatch.c.src``, the same in NumPy 2.0
to 2.4.6): a SIMD kernel of its own (AVX512F, or SVML with AVX512_SKX) when the CPU
has AVX-512, otherwise the scalar loop ``npy_log(x)``, and ``npy_log`` is ``#define
npy_log log`` (``numpy/_core/include/numpy/npy_math.h``): the ``log`` of the same C
library ``random_laplace`` calls, and NumPy is not built with ``-ffast-math`` (which
would let the compiler substitute vector variants). The compiler cannot fuse
``loc - scale * log(...)`` into an FMA either while NumPy's build baseline
(``__cpu_baseline__``, X86_V2 for NumPy 2.4 wheels) has no FMA, and the random module
is compiled for the baseline only. So the fast path is used only on Linux x86-64 with
NumPy 2, a baseline without FMA3, and a CPU without AVX512F and AVX512_SKX (NumPy's
``__cpu_features__``): :data:`FAST_PATH`. Everywhere else, and for small draws,
``generator.laplace`` itself is called.
"""

from __future__ import annotations

import math
import platform
import sys

import numpy as np

__all__ = ["FAST_PATH", "laplace_from_uniforms", "sample_laplace"]

#: Uniforms per block: the block's temporaries stay in the L2 cache.
_BLOCK = 1 << 13
#: Below this many draws the per-call overhead outweighs the gain.
_MIN_FAST = 4096


def _fast_path_available() -> bool:
    """Whether ``np.log`` on float64 is the C library's ``log`` here (module docstring)."""
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    if int(np.__version__.split(".")[0]) != 2:
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_baseline__ as baseline
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return False
    if "FMA3" in baseline or "X86_V3" in baseline or "X86_V4" in baseline:
        return False  # the random module itself might then be built with FMA contraction
    return not (features.get("AVX512F", True) or features.get("AVX512_SKX", True))


#: Whether :func:`sample_laplace` evaluates the draws array-wise (module docstring).
FAST_PATH = _fast_path_available()


def laplace_from_uniforms(
    uniforms: np.ndarray, scale: float, loc: float = 0.0, *, out: np.ndarray | None = None
) -> np.ndarray:
    """``random_laplace``'s output for each of ``uniforms`` (module docstring).

    Parameters
    ----------
    uniforms : ndarray of float64, shape (n,)
        Values of ``next_double``, each in ``(0, 1)``: no zero (C rejects it).
    scale : float
        Laplace scale ``b`` >= 0 (units of the draw).
    loc : float
        Location.
    out : ndarray of float64, shape (n,), optional
        Where to write the result; may be ``uniforms`` itself.

    Returns
    -------
    ndarray of float64, shape (n,)
        Bit for bit ``loc - scale*log(2.0 - U - U)`` where ``U >= 0.5``, else
        ``loc + scale*log(U + U)``, provided ``np.log`` is the C library's ``log``.
    """
    out = np.empty_like(uniforms) if out is None else out
    arg = np.add(uniforms, uniforms)
    np.floor(arg, out=arg)  # 1.0 where U >= 0.5, else 0.0 (U + U is exact)
    sign = np.multiply(arg, -2.0)
    sign += 1.0  # -1.0 on the upper branch, +1.0 on the lower
    signed = np.multiply(uniforms, sign)
    arg += arg  # 2.0 / 0.0
    arg += signed
    arg += signed  # (2.0 - U) - U  /  (0.0 + U) + U = U + U
    np.log(arg, out=arg)
    sign *= scale
    np.multiply(arg, sign, out=out)
    out += loc
    return out


def sample_laplace(
    generator: np.random.Generator, scale: float, size: int | tuple[int, ...]
) -> np.ndarray:
    """``generator.laplace(0.0, scale, size)``, bit for bit, leaving the same state.

    Array-wise where :data:`FAST_PATH` holds (module docstring), else that call itself.

    Parameters
    ----------
    generator : numpy.random.Generator
        The privacy-noise stream; advanced exactly as ``generator.laplace`` advances it.
    scale : float
        Laplace scale ``b`` >= 0 (units of the released statistic); any other value is
        passed to ``generator.laplace``, which raises as it does.
    size : int or tuple of int
        Output shape.

    Returns
    -------
    ndarray of float64, shape ``size``
    """
    if type(size) is not tuple:  # small draws (one block per generator) are common
        size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    shape = size
    n = math.prod(shape)
    if n < _MIN_FAST or not FAST_PATH or not 0.0 <= scale < np.inf:
        return generator.laplace(0.0, scale, size=shape)  # raises on a bad scale
    out = np.empty(n)
    for start in range(0, n, _BLOCK):
        block = out[start : start + _BLOCK]
        generator.random(out=block)
        if np.count_nonzero(block) < block.size:  # C rejects U == 0: module docstring
            kept = block[block != 0.0]
            stop = start + kept.size
            laplace_from_uniforms(kept, scale, out=out[start:stop])
            out[stop:] = generator.laplace(0.0, scale, size=n - stop)
            break
        laplace_from_uniforms(block, scale, out=block)
    return out.reshape(shape)
