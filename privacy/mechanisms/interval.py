"""Dubey & Pentland's interval release mechanism: the event of the paper's calibration.

:func:`make_interval_release` builds the :class:`IntervalRelease` of one agent-arm
stream as the AAMAS 2020 paper prescribes (release points of
:func:`fedpriv.privacy.calibrations.interval_release_schedule`, scales of
:func:`fedpriv.privacy.calibrations.interval_noise_scales`). The event and its cost
(:func:`interval_release_epsilon` and the other routes) are the accountant's and live
in :mod:`fedpriv.privacy.accounting.interval`, which registers them; they are
re-exported here, where they have always been importable.
"""

from __future__ import annotations

from fedpriv.privacy.accounting.interval import (
    IntervalRelease,
    interval_record_epsilons,
    interval_release_advanced_epsilon,
    interval_release_epsilon,
    interval_release_pld,
    interval_release_rdp,
    interval_release_zcdp,
)
from fedpriv.privacy.calibrations import interval_noise_scales, interval_release_schedule

__all__ = [
    "IntervalRelease",
    "interval_record_epsilons",
    "interval_release_advanced_epsilon",
    "interval_release_epsilon",
    "interval_release_pld",
    "interval_release_rdp",
    "interval_release_zcdp",
    "make_interval_release",
]


def make_interval_release(
    epsilon: float, horizon: int, *, theta: float | None = None, rule: str = "decaying"
) -> IntervalRelease:
    """The event of one stream calibrated as the AAMAS paper prescribes (reconstructed).

    Releases at :func:`~fedpriv.privacy.calibrations.interval_release_schedule` counts
    ``n_j`` (reconstructed with medium confidence), with :func:`~fedpriv.privacy.calibrations.interval_noise_scales` scales
    (reconstructed with medium confidence decaying, reconstructed with low confidence fixed) and sensitivity ``1/n_j`` (mean of rewards in [0, 1]).

    Parameters
    ----------
    epsilon : float
        Input ε (``ε_dp``), > 0 and finite.
    horizon : int
        Largest pull count of the stream, >= ``ceil(1/ε)`` so that at least one
        release happens.
    theta, rule
        As in :func:`fedpriv.privacy.calibrations.interval_noise_scales`.

    Returns
    -------
    IntervalRelease
        Scales, sensitivities ``1/n_j`` and counts ``n_j`` of every release.

    Raises
    ------
    ValueError
        On invalid arguments, or if ``horizon`` is below the first release point.

    Examples
    --------
    >>> make_interval_release(0.5, 5, rule="fixed").counts
    (2, 4)
    >>> interval_release_epsilon(make_interval_release(0.5, 5, rule="fixed"))
    1.0
    """
    counts = interval_release_schedule(epsilon, horizon)
    if counts.size == 0:
        raise ValueError(
            f"`horizon` must reach the first release point ceil(1/epsilon), got {horizon}."
        )
    scales = interval_noise_scales(epsilon, counts, theta=theta, rule=rule)
    return IntervalRelease(
        scales=tuple(scales.tolist()),
        l1_sensitivities=tuple((1.0 / counts).tolist()),
        counts=tuple(counts.tolist()),
    )
