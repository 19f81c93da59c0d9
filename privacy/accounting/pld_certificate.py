"""Round-off certificates of dp-accounting's PLDs, and ε/δ read from them safely.

dp-accounting composes privacy-loss distributions by FFT, whose output carries
round-off in every bin (issue 19). :func:`pld_roundoff` bounds it per pmf,
:func:`roundoff_at` turns that into a bound on δ, and :func:`certified_epsilon` /
:func:`certified_delta` query a pessimistic PLD so that round-off can never lower the
answer; :func:`optimistic_epsilon` reads an optimistic one in log space where
dp-accounting's scan would underflow. The pmf helpers (:func:`pmfs`,
:func:`pmf_probs`, :func:`pmf_losses`) read dp-accounting's PLD objects.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
from fedpriv.privacy.accounting.exact_sum import UNIT_ROUNDOFF
from fedpriv.privacy.accounting.pld_scan import PldScan

__all__ = [
    "ROUNDOFF_SAFETY",
    "certified_delta",
    "certified_epsilon",
    "loss_drift",
    "optimistic_epsilon",
    "pld_roundoff",
    "pmf_losses",
    "pmf_probs",
    "pmfs",
    "roundoff_at",
    "summation_slack",
    "tail_mass",
]

#: Safety factor on the FFT round-off model of :func:`pld_roundoff`.
ROUNDOFF_SAFETY = 16.0


def pmf_probs(pmf) -> np.ndarray:
    """Probabilities of a dp-accounting PLD pmf (dense or sparse), as an array.

    Parameters
    ----------
    pmf : dp-accounting PLD pmf
        Dense or sparse.

    Returns
    -------
    ndarray of float64, shape (bins,)
    """
    probs = getattr(pmf, "_probs", None)
    if probs is None:
        probs = np.fromiter(pmf._loss_probs.values(), dtype=np.float64)
    return np.asarray(probs, dtype=np.float64)


def pmfs(pld) -> tuple:
    """The remove (and, if distinct, add) pmfs of a dp-accounting PLD.

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.

    Returns
    -------
    tuple
        One or two pmfs.
    """
    if pld._symmetric:
        return (pld._pmf_remove,)
    return pld._pmf_remove, pld._pmf_add


def pld_roundoff(pld, operations: int) -> tuple[tuple[float, float], ...]:
    """Round-off certificate of a composed dp-accounting PLD, per pmf.

    dp-accounting composes by FFT (``ifft(fft(p)**k)`` for a k-fold composition),
    whose output carries round-off in every bin, negative masses included (issue
    19, pattern 3). Returns, for each pmf, ``(l2, floor)``: ``l2`` models
    the ℓ2 norm of the pmf's error vector: Higham, *Accuracy and Stability of
    Numerical Algorithms* (2002), Thm. 24.2 (relative ℓ2 error ``O(log2 L · u)``
    per transform), amplified ``k``-fold by the power, so ``(k + 2 log2 L + 2) u
    ‖p‖₂`` times a safety factor of 16; ``floor`` is the largest negative mass
    (measured: a true mass is >= 0, so every bin's round-off reaches that size
    somewhere). (The mass defect |Σ p + p_∞ - 1| is no measure of it: dp-accounting
    drops lower-tail mass, which no δ at ε >= 0 sees.) ``L`` is the number of
    bins, ``k`` the number of compositions and ``u = 2⁻⁵³``. See
    :func:`roundoff_at` for the bound on δ.

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.
    operations : int
        Compositions that built ``pld``.

    Returns
    -------
    tuple of (float, float)
        ``(l2, floor)`` per pmf of :func:`pmfs`.
    """
    certificate = []
    for pmf in pmfs(pld):
        probs = pmf_probs(pmf)
        size = max(probs.size, 2)
        l2 = (
            ROUNDOFF_SAFETY
            * (operations + 2.0 * math.log2(size) + 2.0)
            * UNIT_ROUNDOFF
            * float(np.linalg.norm(probs))
        )
        floor = max(0.0, -float(probs.min(initial=0.0)))
        certificate.append((l2, floor))
    return tuple(certificate)


def roundoff_at(certified, epsilon: float) -> float:
    """Bound on |δ_computed(ε') - δ_exact(ε')| for every ε' >= ``epsilon``.

    δ(ε') sums the masses of the bins above ε' with weights in [0, 1], so its error
    is at most the ℓ1 error over the ``n`` bins with loss >= ``epsilon - grid``:
    ``max(√n · l2, 2 n · floor)`` (Cauchy–Schwarz on the ℓ2 model; the measured
    noise floor). Decreasing in ``epsilon``.
    On the worst case of issue 19 (18,935 discrete Laplace, true error 7.5e-13 at
    ε = 13.12) this gives 2.7e-11.

    Parameters
    ----------
    certified : tuple
        ``(pld, certificate, calls)`` as :func:`~fedpriv.privacy.accounting.pld_route.cell_pld` returns.
    epsilon : float
        Lowest ε' covered (``-inf``: every bin).

    Returns
    -------
    float
        Bound on the error of δ, >= 0.
    """
    pld, certificate, _ = certified
    worst = 0.0
    for pmf, (l2, floor) in zip(pmfs(pld), certificate):
        n = _count_at_least(pmf, epsilon - pmf._discretization)
        worst = max(worst, math.sqrt(n) * l2, 2.0 * n * floor)
    return worst


def _first_at_least(pmf, threshold: float) -> int:
    """First bin of a dense pmf whose loss (:func:`pmf_losses`) is >= ``threshold``.

    ``(i + lower) * grid`` is nondecreasing in ``i`` (rounding is monotone), so a
    bisection on the same products finds the index that ``losses >= threshold``
    would: the same count, without building the losses (issue 23)."""
    lower, grid = pmf._lower_loss, pmf._discretization
    size = len(pmf._probs)
    return bisect.bisect_left(range(size), threshold, key=lambda i: float(i + lower) * grid)


def _count_at_least(pmf, threshold: float) -> int:
    """Number of bins with loss >= ``threshold`` (dense: by bisection)."""
    if getattr(pmf, "_probs", None) is not None:
        return len(pmf._probs) - _first_at_least(pmf, threshold)
    return int(np.count_nonzero(pmf_losses(pmf) >= threshold))


def pmf_losses(pmf) -> np.ndarray:
    """Privacy losses of a pmf's bins (each one product, no accumulated drift).

    Parameters
    ----------
    pmf : dp-accounting PLD pmf
        Dense or sparse.

    Returns
    -------
    ndarray of float64, shape (bins,)
        Losses in nats.
    """
    if getattr(pmf, "_probs", None) is not None:
        index = np.arange(len(pmf._probs), dtype=np.float64) + pmf._lower_loss
    else:
        index = np.fromiter(pmf._loss_probs.keys(), dtype=np.float64)
    return index * pmf._discretization


def tail_mass(pld, epsilon: float) -> float:
    """Σ |mass| of bins with loss >= ``epsilon - discretization`` (either pmf).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.
    epsilon : float
        ε (nats).

    Returns
    -------
    float
        >= 0.
    """
    worst = 0.0
    for pmf in pmfs(pld):
        probs = pmf_probs(pmf)
        if getattr(pmf, "_probs", None) is not None:  # dense: a suffix (same sum)
            tail = probs[_first_at_least(pmf, epsilon - pmf._discretization) :]
        else:
            tail = probs[pmf_losses(pmf) >= epsilon - pmf._discretization]
        worst = max(worst, float(np.abs(tail).sum()))
    return worst


def summation_slack(pld, epsilon: float) -> float:
    """Error of dp-accounting's running sums down to ``epsilon`` (n·u·Σ|terms|).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.
    epsilon : float
        ε (nats) down to which the sums run.

    Returns
    -------
    float
        >= 0.
    """
    size = max(pmf_probs(pmf).size for pmf in pmfs(pld))
    return 2.0 * size * UNIT_ROUNDOFF * (tail_mass(pld, epsilon) + 1e-300)


#: Loss above which ``exp(−loss)`` can underflow inside dp-accounting's ε(δ) scan.
_UNDERFLOW_LOSS = 700.0


def optimistic_epsilon(pld, delta: float, scan: PldScan | None = None) -> float:
    """ε(δ) of an optimistic PLD: dp-accounting's (``scan``, :class:`PldScan`, gives it
    exactly), or the log-space scan above 700.

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.
    delta : float
        δ in [0, 1).
    scan : PldScan, optional
        A scan of ``pld`` to reuse.

    Returns
    -------
    float
        ε in nats.
    """
    epsilon = float((scan or PldScan(pld)).epsilon(delta))
    if math.isfinite(epsilon) and epsilon > _UNDERFLOW_LOSS:
        return _log_space_epsilon(pld, delta)
    return epsilon


def _log_space_epsilon(pld, delta: float) -> float:
    """dp-accounting's ε(δ) of a PLD, computed with the lower masses in log space.

    dp-accounting's ``_get_epsilon_for_delta`` sums ``p·exp(−loss)`` in floats; once a
    loss exceeds ~745 the terms underflow to 0 and it returns the loss itself, which
    is the top of the bin, not the ε at δ (1,000 × randomized response at ε = 700 read
    699999.9999994527 against the true 699999.99999). Here the same scan from the top
    loss down keeps ``log Σ p·exp(−loss)`` (``np.logaddexp.accumulate``), so the answer
    is the same where nothing underflows and stays the hockey-stick ε where it would.
    The maximum over the PLD's pmfs, as dp-accounting takes it. Used only where
    dp-accounting's own answer exceeds :data:`_UNDERFLOW_LOSS` (below it the two agree).
    """
    worst = 0.0
    for pmf in pmfs(pld):
        infinity = float(pmf._infinity_mass)
        if infinity > delta:
            return math.inf
        losses, probs = pmf_losses(pmf), pmf_probs(pmf)
        order = np.argsort(losses, kind="stable")[::-1]  # sparse pmfs are unordered
        keep = probs[order] > 0  # FFT's negative round-off: inside the δ allowance
        losses, probs = losses[order][keep], probs[order][keep]
        if losses.size == 0:
            continue
        upper = infinity + np.cumsum(probs)  # mass with loss >= losses[i]
        log_lower = np.logaddexp.accumulate(np.log(probs) - losses)
        # dp-accounting stops before bin i when the bins above it already give
        # ε = log((upper − δ)/lower) >= loss_i; the answer is that ε.
        with np.errstate(divide="ignore", invalid="ignore"):
            eps_above = np.log(np.maximum(upper - delta, 0.0)) - log_lower
        stop = np.nonzero((upper[:-1] > delta) & (eps_above[:-1] >= losses[1:]))[0]
        i = int(stop[0]) if stop.size else losses.size - 1
        if upper[i] <= delta or eps_above[i] <= 0.0:
            continue  # mass_upper <= mass_lower + δ: ε = 0 for this pmf
        worst = max(worst, float(eps_above[i]))
    return worst


def loss_drift(pld) -> float:
    """Drift of dp-accounting's losses (``itertools.count`` adds the grid L times).

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        A composed PLD.

    Returns
    -------
    float
        >= 0 (nats).
    """
    worst = 0.0
    for pmf in pmfs(pld):
        if getattr(pmf, "_probs", None) is not None:  # dense: monotone, ends are extreme
            size, lower, grid = len(pmf._probs), pmf._lower_loss, pmf._discretization
            largest = max(abs(float(lower) * grid), abs(float(size - 1 + lower) * grid))
        else:
            losses = pmf_losses(pmf)
            size = losses.size
            largest = float(np.abs(losses).max()) if size else 0.0
        if size:
            worst = max(worst, size * UNIT_ROUNDOFF * largest)
    return 2.0 * worst


def certified_epsilon(certified, target_delta: float) -> float:
    """Upper bound on ε(``target_delta``) from a pessimistic PLD and its certificate.

    With ε_a the PLD's own answer, the PLD is queried again at ``target_delta``
    minus the round-off and summation error above ε_a; the answer ε_b >= ε_a, and
    both errors decrease in ε, so round-off cannot have lowered ε_b. ``inf`` when
    the error swamps the query, so that another route answers.

    Both queries are dp-accounting's ``get_epsilon_for_delta``, answered exactly by
    one :class:`~fedpriv.privacy.accounting.pld_scan.PldScan` (one vectorized walk
    per pmf for both δ; issue 23).

    Parameters
    ----------
    certified : tuple
        ``(pld, certificate, calls)`` as :func:`~fedpriv.privacy.accounting.pld_route.cell_pld` returns.
    target_delta : float
        δ at which ε is read, in [0, 1).

    Returns
    -------
    float
        ε in nats, or ``inf``.
    """
    pld = certified[0]
    scan = PldScan(pld)
    first = float(scan.epsilon(target_delta))
    if not math.isfinite(first):
        return math.inf
    query = target_delta - roundoff_at(certified, first) - summation_slack(pld, first)
    if query <= 0.0:
        return math.inf
    epsilon = float(scan.epsilon(query))
    return epsilon + loss_drift(pld) if math.isfinite(epsilon) else math.inf


def certified_delta(certified, target_epsilon: float) -> float:
    """Upper bound on δ(``target_epsilon``) from a pessimistic PLD and its certificate.

    δ of the computed pmf is summed exactly (``math.fsum``), then the round-off
    certificate is added; never below the smallest positive double.

    Parameters
    ----------
    certified : tuple
        ``(pld, certificate, calls)`` as :func:`~fedpriv.privacy.accounting.pld_route.cell_pld` returns.
    target_epsilon : float
        ε (nats) at which δ is read, >= 0.

    Returns
    -------
    float
        δ in [5e-324, 1].
    """
    pld = certified[0]
    worst = 0.0
    for pmf in pmfs(pld):
        losses = pmf_losses(pmf)
        probs = pmf_probs(pmf)
        above = losses > target_epsilon
        terms = probs[above] * -np.expm1(target_epsilon - losses[above])
        worst = max(worst, pmf._infinity_mass + math.fsum(terms))
    error = roundoff_at(certified, target_epsilon)
    return min(1.0, max(math.ulp(0.0), worst + error * (1.0 + 1e-9)))
