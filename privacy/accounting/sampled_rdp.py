"""dp-accounting's RDP of the Poisson-subsampled Gaussian: the whole curve and one order.

:class:`~fedpriv.privacy.accounting.sampling.PoissonSampled` prices a subsampled
Gaussian on the RDP route with dp-accounting's curve (Mironov, Talwar & Zhang 2019,
§3.3); the curve at the default orders is cached per ``(μ, q)``, and the routes read it
order by order where the minimum over orders is all they need
(:func:`fedpriv.privacy.accounting.rdp_route.rdp_route_epsilon`).
"""

from __future__ import annotations

import functools
import logging

import numpy as np
from fedpriv.privacy.accounting.handlers import track_caches

__all__ = ["sampled_gaussian_rdp", "sampled_gaussian_rdp_at"]


@functools.lru_cache(maxsize=256)
def sampled_gaussian_rdp(mu: float, sampling_rate: float, orders: tuple[float, ...]) -> np.ndarray:
    """dp-accounting's RDP curve of the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019), read-only.

    Parameters
    ----------
    mu : float
        μ = Δ/σ of the inner Gaussian, > 0.
    sampling_rate : float
        Poisson sampling rate q in (0, 1).
    orders : tuple of float
        RDP orders, each > 1 (:func:`~fedpriv.privacy.accounting.cells.check_orders`).

    Returns
    -------
    ndarray of float64, shape (len(orders),)
    """
    curve = _compute_sampled_gaussian_rdp(mu, sampling_rate, orders)
    curve.flags.writeable = False
    return curve


@functools.lru_cache(maxsize=8192)
def sampled_gaussian_rdp_at(mu: float, sampling_rate: float, order: float) -> float:
    """dp-accounting's RDP of the Poisson-subsampled Gaussian at one order.

    The same value as the entry of :func:`sampled_gaussian_rdp` at ``order``, bit
    for bit: dp-accounting computes each order on its own
    (``_compute_rdp_poisson_subsampled_gaussian`` maps ``compute_one_order`` over
    the orders) and composes one event into a zero curve (``0 + 1·x = x``). It is
    Rényi divergence of order ``order`` between the mixture and the Gaussian
    (Mironov, Talwar & Zhang 2019, §3.3), hence nondecreasing in ``order`` (van
    Erven & Harremoës 2014, Thm. 3), which :func:`fedpriv.privacy.accounting.rdp_route.rdp_route_epsilon` uses to skip orders that cannot give the minimum.

    Parameters
    ----------
    mu : float
        Gaussian-DP μ of the inner release (1 / noise_multiplier), > 0.
    sampling_rate : float
        In (0, 1).
    order : float
        RDP order, > 1.

    Returns
    -------
    float
        RDP at ``order``, in [0, inf] (``inf`` where dp-accounting's series does not
        converge).
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

    # What RdpAccountant(orders=[order]).compose(PoissonSampledDpEvent(q,
    # GaussianDpEvent(1 / mu))) computes, without building the accountant and events
    # per order: zeros + 1 * _compute_rdp_poisson_subsampled_gaussian(...).
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # as in _compute_sampled_gaussian_rdp
    try:
        value = rdp_lib._compute_rdp_poisson_subsampled_gaussian(
            q=sampling_rate, noise_multiplier=1.0 / mu, orders=np.array([order])
        )
    finally:
        absl.setLevel(level)
    return float((np.zeros(1) + 1 * value)[0])


def _compute_sampled_gaussian_rdp(
    mu: float, sampling_rate: float, orders: tuple[float, ...]
) -> np.ndarray:
    import dp_accounting

    accountant = dp_accounting.rdp.RdpAccountant(orders=list(orders))
    # dp-accounting logs a warning for every order < ~2 whose series does not
    # converge and sets it to inf (a valid bound); the other orders still apply.
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        accountant.compose(
            dp_accounting.PoissonSampledDpEvent(
                sampling_rate, dp_accounting.GaussianDpEvent(1.0 / mu)
            )
        )
    finally:
        absl.setLevel(level)
    return accountant.rdp


track_caches(sampled_gaussian_rdp, sampled_gaussian_rdp_at)
