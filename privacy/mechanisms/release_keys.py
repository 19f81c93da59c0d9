"""Key arrays of a release: each entry's cell labels, flattened to the released shape.

Every mechanism of :mod:`fedpriv.privacy.mechanisms` charges entry ``j`` of a released
array under ``{level: keys[level][j]}``; these helpers broadcast and flatten the caller's
key arrays once per release, and cut a broadcast batch to its distinct entries before a
value check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["distinct_entries", "flatten_keys"]


def distinct_entries(values: np.ndarray) -> np.ndarray:
    """``values`` without the repeats of a broadcast: every axis of stride 0 cut to its first index.

    Each entry of ``values`` is one of the result's, so a check of the result is a check
    of ``values``; an audit's batch broadcast over its runs is checked once.

    Parameters
    ----------
    values : ndarray, any shape
        Possibly a broadcast view (axes of stride 0).

    Returns
    -------
    ndarray
        A view of ``values``, length 1 on every axis of stride 0.
    """
    return values[tuple(slice(0, 1) if stride == 0 else slice(None) for stride in values.strides)]


def flatten_keys(
    keys: Mapping[str, Any], shape: tuple[int, ...], what: str = "released shape"
) -> dict[str, np.ndarray]:
    """Each level's labels broadcast to ``shape`` and flattened (entry ``j`` of a release).

    Parameters
    ----------
    keys : mapping of str to array_like
        Level (``"agent"``, ``"arm"``, ...) to labels broadcastable to ``shape``.
    shape : tuple of int
        The released array's shape (or its leading axes).
    what : str
        How the error message names ``shape``.

    Returns
    -------
    dict of str to ndarray, each of shape (prod(shape),)
        The labels of every entry, in C order, dtypes kept.

    Raises
    ------
    TypeError
        If ``keys`` is not a mapping.
    ValueError
        If a key array does not broadcast to ``shape``.
    """
    if not isinstance(keys, Mapping):
        raise TypeError(f"`keys` must be a mapping of level -> labels, got {type(keys).__name__}.")
    try:
        return {level: _broadcast_ravel(np.asarray(v), shape) for level, v in keys.items()}
    except ValueError:
        raise ValueError(f"every key array must broadcast to the {what} {shape}.") from None


def _broadcast_ravel(labels: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``np.broadcast_to(labels, shape).ravel()``: the same values and dtype, written by
    one assignment into a new array when ``labels`` must be repeated (about twice as
    fast as ``ravel``'s strided copy of a broadcast view)."""
    if labels.shape == shape:
        return labels.ravel()
    out = np.empty(np.broadcast_shapes(labels.shape, shape), dtype=labels.dtype)
    if out.shape != shape:  # labels has more or longer axes than shape: refuse, as broadcast_to
        raise ValueError("labels do not broadcast to the shape.")
    out[...] = labels
    return out.ravel()
