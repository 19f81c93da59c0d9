"""dp-accounting's ε(δ) of a PLD, vectorized, bit for bit its own answer.

dp-accounting's ``PrivacyLossDistribution.get_epsilon_for_delta`` walks a pmf from
its top loss down in a Python loop (``pld_pmf._get_epsilon_for_delta``): about 25 ms
per pmf for a DP-SGD PLD of 2·10⁵ bins, and the certified ε of
:func:`fedpriv.privacy.accounting.pld_certificate.certified_epsilon` asks it twice, for two
pmfs each (issue 23: a DP-SGD schedule was 1.37× dp-accounting's time at the same
ε). :class:`PldScan` runs the same walk with NumPy, once per pmf for every δ asked:

* the losses are those of ``itertools.count(upper_loss, -discretization)``: the same
  repeated float additions (``np.add.accumulate`` is sequential), the same drift;
* ``mass_upper`` and ``mass_lower`` are the same running sums, in the same order
  (``np.add.accumulate``), of the same terms ``math.exp(-loss) * prob``: the
  exponentials are the C library's, as ``math.exp`` computes them (NumPy's ``exp``
  only where it is checked to be that same function, :func:`_numpy_exp_is_libm`);
* the loop's two exits (the ``log((mass_upper - δ) / mass_lower) >= loss`` break and
  the ``mass_lower == 0`` return) are found as the first index where each holds; the
  logarithm of the break test is ``math.log`` on every candidate NumPy's ``log``
  cannot rule out, so the exit index is the loop's;
* the answer is then the loop's own final expression on the same two floats.

Hence ``PldScan(pld).epsilon(δ) == pld.get_epsilon_for_delta(δ)`` exactly (tested
with hypothesis on composed, subsampled and mixed PLDs, dense and sparse). The sums
are kept, so a second δ costs a search, not a second walk. Sparse pmfs (< 1000
bins) are left to dp-accounting. Only bins down to the answer are summed, in chunks
that double, as dp-accounting's loop stops there too.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["PldScan"]

#: Bins summed by the first chunk of a walk (later chunks double).
_FIRST_CHUNK = 4096
#: Bins per block of the rough exit estimate that sizes the first chunk.
_BLOCK = 64


@functools.cache
def _numpy_exp_is_libm() -> bool:
    """Whether NumPy's float64 ``exp`` returns the C library's ``exp`` (Python's
    ``math.exp``) bit for bit in this process.

    NumPy has its own SIMD float64 ``exp`` only for AVX-512 targets; elsewhere its
    loop calls the C library's. Both are checked: the dispatched target of the
    float64 loop (``numpy.lib.introspect.opt_func_info``, NumPy >= 2; without it,
    no), then agreement with ``math.exp`` on 2·2048 points spanning the whole
    domain and a fine loss grid. Any doubt answers no (``math.exp`` is used).
    """
    try:
        from numpy.lib import introspect

        info = introspect.opt_func_info(func_name="^exp$", signature="float64")
        targets = [loop["current"] for loop in info.get("exp", {}).values()]
    except (ImportError, AttributeError, TypeError, ValueError):
        return False
    if not targets or any("V4" in t or "AVX512" in t for t in targets):
        return False
    sample = np.concatenate(
        (np.linspace(-745.5, 709.5, 2048), 8.6 - 1e-4 * np.arange(2048) - 1e-9 / 3.0)
    )
    expected = np.fromiter(map(math.exp, sample.tolist()), np.float64, sample.size)
    return bool(np.array_equal(np.exp(sample), expected))


def _libm_exp(values: np.ndarray) -> np.ndarray:
    """``math.exp`` of every value, as dp-accounting's loop computes it: NumPy's
    ``exp`` where :func:`_numpy_exp_is_libm`, else ``math.exp`` one by one."""
    if _numpy_exp_is_libm():
        return np.exp(values)
    return np.fromiter(map(math.exp, values.tolist()), np.float64, values.size)


class _DenseWalk:
    """dp-accounting's ε(δ) loop over one dense pmf, with its running sums kept."""

    def __init__(self, pmf) -> None:
        self._forward = np.asarray(pmf._probs, dtype=np.float64)  # ascending loss
        size = self._forward.size
        self._infinity = pmf._infinity_mass
        self._step = -pmf._discretization
        self._top = (pmf._lower_loss + size - 1) * pmf._discretization
        # losses[k] of bin k from the top; upper[k] / lower[k]: mass_upper and
        # mass_lower before bin k is added. Filled up to ``done`` (np.empty: pages
        # past it are never touched).
        self._losses = np.empty(size)
        self._upper = np.empty(size + 1)
        self._lower = np.empty(size + 1)
        self._upper[0], self._lower[0] = self._infinity, 0.0
        self._done = 0

    def _guess(self, delta: float) -> int:
        """Roughly where the loop exits at ``delta`` (no exactness needed): the walk
        on every :data:`_BLOCK`-th bin, each standing for its block, with NumPy's
        exp. The first chunk is sized from it, so that the exact sums stop near the
        exit (too short a chunk only costs another, doubled, chunk)."""
        sample = self._forward[::-1][::_BLOCK]  # from the top, every _BLOCK-th bin
        losses = self._top + self._step * _BLOCK * np.arange(sample.size)
        mass = _BLOCK * sample
        with np.errstate(all="ignore"):
            upper = self._infinity + np.cumsum(mass)
            lower = np.cumsum(np.exp(-losses) * mass)
            exits = (upper > delta) & (np.log((upper - delta) / lower) >= losses)
        block = int(np.argmax(exits)) if exits.any() else sample.size
        return (block + 2) * _BLOCK + block * _BLOCK // 64

    def _extend(self, stop: int | None = None) -> bool:
        """Sum the bins up to ``stop`` (default: a chunk twice as large as what is
        summed); False when every bin is summed."""
        size = self._forward.size
        if self._done >= size:
            return False
        start = self._done
        stop = min(size, max(_FIRST_CHUNK, 2 * start) if stop is None else max(stop, start + 1))
        losses = self._losses[start:stop]
        losses.fill(self._step)
        # itertools.count yields its start, then adds the step to the last value
        losses[0] = self._top if start == 0 else self._losses[start - 1] + self._step
        np.add.accumulate(losses, out=losses)
        probs = self._forward[size - stop : size - start][::-1]
        exps = _libm_exp(np.negative(losses))
        upper = self._upper[start : stop + 1]  # upper[0] holds the sum so far
        upper[1:] = probs
        np.add.accumulate(upper, out=upper)
        lower = self._lower[start : stop + 1]
        np.multiply(exps, probs, out=lower[1:])
        np.add.accumulate(lower, out=lower)
        self._done = stop
        return True

    def epsilon(self, delta: float) -> float:
        """``pmf.get_epsilon_for_delta(delta)``, exactly (see the module docstring)."""
        if self._infinity > delta:
            return math.inf
        searched = 0
        if self._done == 0:
            self._extend(self._guess(delta))
        while True:
            exit_ = self._first_exit(delta, searched)
            if exit_ is not None:
                kind, index = exit_
                if kind == "zero":  # mass_lower == 0 with mass_upper >= δ
                    return max(0, float(self._losses[index]))
                return self._answer(delta, index)
            searched = self._done
            if not self._extend():
                return self._answer(delta, self._done)

    def _first_exit(self, delta: float, start: int) -> tuple[str, int] | None:
        """First loop exit among bins ``start .. done - 1``: ``("break", k)`` before
        bin k is added, or ``("zero", k)`` just after it; None if none there."""
        stop = self._done
        if stop <= start:
            return None
        losses = self._losses[start:stop]
        upper, lower = self._upper[start:stop], self._lower[start:stop]
        after_upper, after_lower = (
            self._upper[start + 1 : stop + 1],
            self._lower[start + 1 : stop + 1],
        )
        zero = np.flatnonzero((after_upper >= delta) & (after_lower == 0))
        first_zero = int(zero[0]) if zero.size else stop - start
        valid = np.flatnonzero((upper > delta) & (lower > 0))
        with np.errstate(all="ignore"):
            ratios = (upper[valid] - delta) / lower[valid]
            logs = np.log(ratios)
        # NumPy's log may differ from math.log by a few ulps: keep every index it
        # cannot rule out, then decide each with math.log, in order.
        near = losses[valid]
        keep = ~(logs < near - 1e-9 * (1.0 + np.abs(near)))
        candidates = zip(valid[keep].tolist(), ratios[keep].tolist(), near[keep].tolist())
        first_break = stop - start
        for index, ratio, loss in candidates:
            if index > first_zero:
                break
            if math.log(ratio) >= loss:
                first_break = index
                break
        if first_break <= first_zero and first_break < stop - start:
            return "break", start + first_break
        if first_zero < stop - start:
            return "zero", start + first_zero
        return None

    def _answer(self, delta: float, index: int) -> float:
        """The loop's final expression with the sums before bin ``index``."""
        mass_upper, mass_lower = self._upper[index], self._lower[index]
        if index == 0:
            mass_upper, mass_lower = self._infinity, 0
        if mass_upper <= mass_lower + delta:
            return 0
        return math.log((mass_upper - delta) / mass_lower)


class _SparseWalk:
    """A sparse pmf (< 1000 bins): dp-accounting's own loop is cheap."""

    def __init__(self, pmf) -> None:
        self._pmf = pmf

    def epsilon(self, delta: float) -> float:
        return self._pmf.get_epsilon_for_delta(delta)


class PldScan:
    """ε(δ) of a dp-accounting ``PrivacyLossDistribution``, for many δ.

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Read, never modified; must not change while the scan is used.

    Examples
    --------
    >>> from dp_accounting.pld import privacy_loss_distribution as pld_lib
    >>> pld = pld_lib.from_gaussian_mechanism(1.0).self_compose(10)
    >>> PldScan(pld).epsilon(1e-5) == pld.get_epsilon_for_delta(1e-5)
    True
    """

    def __init__(self, pld) -> None:
        pmfs = (pld._pmf_remove,) if pld._symmetric else (pld._pmf_remove, pld._pmf_add)
        self._walks = tuple(
            _DenseWalk(pmf) if getattr(pmf, "_probs", None) is not None else _SparseWalk(pmf)
            for pmf in pmfs
        )

    def epsilon(self, delta: float) -> float:
        """``pld.get_epsilon_for_delta(delta)``, exactly: the max over the pmfs
        (remove first, as dp-accounting takes it).

        Parameters
        ----------
        delta : float
            In [0, 1].

        Returns
        -------
        float
            ε >= 0, ``inf`` when a pmf's infinite mass exceeds ``delta``.
        """
        values = [walk.epsilon(delta) for walk in self._walks]
        return values[0] if len(values) == 1 else max(values[0], values[1])
