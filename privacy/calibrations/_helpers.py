"""Input helpers shared by the paper calibrations (:mod:`fedpriv.privacy.calibrations` and its
per-paper modules)."""

from __future__ import annotations

import math

__all__ = ["ceil_tolerant"]


def ceil_tolerant(value: float) -> int:
    """``ceil(value)``, except that a value within 1e-9 (relative) of an integer is it.

    Guards against float noise adding one, e.g. ``0.7 * 10 = 7.000000000000001``.

    Parameters
    ----------
    value : float
        A finite number.

    Returns
    -------
    int
    """
    nearest = round(value)
    if abs(value - nearest) <= 1e-9 * max(1.0, abs(value)):
        return int(nearest)
    return math.ceil(value)
