"""Corpus entries about floating-point noise: Mironov's attack and its secure twin.

C1 (Mironov, "On Significance of the Least Significant Bits for Differential
Privacy", CCS 2012): the textbook Laplace mechanism ``x + Lap(b)`` computed in
binary floating point is not differentially private, whatever ``b``: the set of
doubles it can output depends on ``x``. On the pair ``x = 0`` vs ``x' = 1``:

* under ``x = 0`` the output is the noise double itself, and small noise values
  have ulps far below ``2**-53`` (``P(|y| < 1/2) = 1 - e**(-1/(2b))``, nearly all of
  it off the ``2**-53`` grid);
* under ``x' = 1`` an output ``y`` in ``(-1/2, 1/2)`` needs a noise double ``n`` in
  ``(-3/2, -1/2)``; there ``1 + n`` is exact (Sterbenz's lemma), so ``y = 1 + n`` is
  a multiple of ``ulp(n) >= 2**-53``.

So the event ``S = {|y| < 1/2 and y · 2**53 not an integer}``
(:func:`off_grid_event`) has positive probability under ``D`` and probability
exactly 0 under ``D'``: ε = ∞. :func:`has_float_preimage` confirms it by exact
inversion of the floating-point addition for each observed output, and
:func:`mironov_witness` returns an output seen under ``D`` that no noise double can
produce under ``D'``. The twin releases ``x`` on the grid ``2**-20`` with exact
discrete Laplace noise (:mod:`fedpriv.privacy.mechanisms.secure_noise`): every output is a grid
point that both worlds reach, so the same attack finds nothing.

Like :mod:`fedpriv.audit.regression.corpus`, these fixtures draw their noise from
``rng`` directly: the way the noise is computed is what is under test.
"""

from __future__ import annotations

import functools

import numpy as np
from fedpriv.audit.regression.api import NeighboringPair
from fedpriv.audit.regression.corpus_entry import CorpusEntry
from fedpriv.privacy.accounting.guarantees import PureDP
from fedpriv.privacy.mechanisms.secure_noise import (
    from_grid,
    grid_noise_scale,
    grid_sensitivity,
    round_to_grid,
    sample_discrete_laplace,
)
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "float_entries",
    "float_laplace",
    "has_float_preimage",
    "mironov_witness",
    "off_grid_event",
    "secure_laplace",
]

#: Grid of the secure twin (``2**-20``: Δ = 1 spans 2**20 steps).
TWIN_GRANULARITY = 2.0**-20


def float_laplace(
    dataset: float, n_samples: int, rng: np.random.Generator, *, scale: float
) -> np.ndarray:
    """The textbook release ``x + Lap(scale)`` in float64 (``numpy``'s inverse CDF
    of a uniform double: ``±scale · log(2U)``).

    Parameters
    ----------
    dataset : float
        The count x.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    return dataset + rng.laplace(0.0, scale, n_samples)


def secure_laplace(
    dataset: float,
    n_samples: int,
    rng: np.random.Generator,
    *,
    scale: float,
    granularity: float = TWIN_GRANULARITY,
) -> np.ndarray:
    """``g · (round(x/g) + Z)`` with ``Z`` exact discrete Laplace (``Δ = 1``, same ε).

    Parameters
    ----------
    dataset : float
        The count x.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    granularity : float
        Grid step g, a power of two.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
        Multiples of ``granularity``.
    """
    steps = grid_sensitivity(1.0, granularity)
    noise = sample_discrete_laplace(grid_noise_scale(scale, 1.0, steps), size=n_samples, rng=rng)
    return from_grid(round_to_grid(np.full(n_samples, dataset), granularity) + noise, granularity)


def off_grid_event(outputs: np.ndarray) -> np.ndarray:
    """Indicator of ``|y| < 1/2`` and ``y`` not a multiple of ``2**-53`` (float64 0/1).

    Exact: ``y · 2**53`` is a power-of-two scaling and ``mod 1`` of a double is exact.
    Unreachable from ``x' = 1`` by ``1 + n`` for any double ``n`` (module docstring).

    Parameters
    ----------
    outputs : ndarray of float64, shape (n,) or (n, 1)
        Outputs of a Laplace release.

    Returns
    -------
    ndarray of float64, shape (n,)
        1.0 where the event holds, else 0.0.
    """
    y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)[:, 0]
    return ((np.abs(y) < 0.5) & (np.mod(y * 2.0**53, 1.0) != 0.0)).astype(np.float64)


def has_float_preimage(outputs: np.ndarray, shift: float) -> np.ndarray:
    """Whether some double ``n`` gives ``fl(shift + n) == y``, per output ``y``.

    ``n ↦ fl(shift + n)`` is non-decreasing, so the doubles that reach ``y`` form one
    run around ``y - shift``; when ``|y| <= |y - shift|`` its rounding interval is at
    most one ulp of ``y - shift`` wide, so the run, if not empty, contains a double
    within two ulps of ``fl(y - shift)``, and those five candidates are checked
    exactly. Outputs with ``|y| > |y - shift|`` are reported ``True`` (not decided).

    Parameters
    ----------
    outputs : array_like of float64
        Outputs ``y``, flattened.
    shift : float
        The dataset value added to the noise.

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    y = np.asarray(outputs, dtype=np.float64).ravel()
    centre = y - shift
    found = np.abs(y) > np.abs(centre)  # outside the decided region: no claim
    candidates = [centre]
    for direction in (np.inf, -np.inf):
        step = centre
        for _ in range(2):
            step = np.nextafter(step, direction)
            candidates.append(step)
    for n in candidates:
        found |= (shift + n) == y
    return found


def mironov_witness(outputs_d: np.ndarray, shift_prime: float) -> float | None:
    """An output seen under ``D`` that no double noise can produce under ``D'``.

    Such an output has positive probability under ``D`` (it was drawn) and
    probability 0 under ``D'`` (``x' + n`` never rounds to it), so ε = ∞ on the pair.

    Parameters
    ----------
    outputs_d : ndarray of float64, shape (n,)
        Releases of the mechanism on ``D``.
    shift_prime : float
        The statistic ``x'`` of ``D'`` (the mechanism outputs ``fl(x' + n)``).

    Returns
    -------
    float or None
        The first such output, or None if every output has a preimage.
    """
    y = np.asarray(outputs_d, dtype=np.float64).ravel()
    unreachable = np.flatnonzero(~has_float_preimage(y, shift_prime))
    return float(y[unreachable[0]]) if unreachable.size else None


def float_entries() -> tuple:
    """C1 and its twin as :class:`~fedpriv.audit.regression.corpus_entry.CorpusEntry`."""
    pair = NeighboringPair(
        0.0, 1.0, NeighboringRelation.REPLACE_ONE, "count 0 vs 1 (Δ = 1), float64 outputs"
    )
    common = {"pair": pair, "claim": PureDP(1.0), "score": off_grid_event, "samples": 20_000}
    return (
        CorpusEntry(
            name="float_laplace_mironov",
            mechanism=functools.partial(float_laplace, scale=1.0),
            expected_violated=True,
            twin="secure_discrete_laplace",
            source="C1 (Mironov, CCS 2012: floating-point Laplace)",
            true_epsilon=float("inf"),
            **common,
        ),
        CorpusEntry(
            name="secure_discrete_laplace",
            mechanism=functools.partial(secure_laplace, scale=1.0),
            expected_violated=False,
            twin="",
            source="C1 twin (exact discrete Laplace on a 2**-20 grid)",
            true_epsilon=1.0,
            **common,
        ),
    )
