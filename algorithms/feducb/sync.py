"""FedUCB's synchronisation threshold, communication bound and exploration radius β.

Formulas of Dubey & Pentland (NeurIPS 2020), with ``X = ρ_max/ρ_min + T L²/(d ρ_min)``
(natural logs; Prop. 1, Prop. 2 and Theorem 1):

* Theorem 1's threshold ``D = 2 T d (log X + 1)^{-1}`` (:func:`recommended_threshold`);
* Prop. 1 / 5: ``n <= 2 sqrt((d T / D) log X) + 4`` sync rounds
  (:func:`communication_bound`), inverted by :func:`threshold_for_syncs`;
* Prop. 2: ``β = σ sqrt(2 log(2/α) + log det V - d log(M ρ_min)) + privacy terms``
  (:func:`exploration_radius`).

Communication regimes (Remark 1, §4.4 Experiment 2): the number of
sync *rounds* ``n`` targeted is ``⌈M ln T⌉`` ("MlogT"), ``⌈M^1.5⌉`` ("M1.5") or ``T``
("MT", sync every round, ``D = 0``), capped at ``T`` (:func:`syncs_for_order`). The
threshold that guarantees at most ``n`` syncs is Prop. 1 inverted; Prop. 1 is an upper
bound, so the realised number of syncs is at most the target (usually well below).

**Prop. 1 does not hold for the private trigger** [finding]. Alg. 1 line 12 adds
``M(ρ_max − ρ_min) I = 2MΛ I`` inside the log-det, so the test statistic grows by at
least ``d log(1 + 2MΛ/λ_max(S))`` per round *whatever the data*; after the first
sync ``S ≈ Σ_i (G_i + 2Λ I)``, so about ``d log 2`` per round while the data are
small next to ``MΛ``. The private algorithm then syncs about every ``D/(d log 2)``
rounds, far more often than Prop. 1's bound when D is small (e.g. 100 syncs where
the bound says 32, M = 10, d = 10, T = 500, ε = 1), and its sync times depend on the
data only through a term of relative size ``~ L²/(MΛ)``.
:func:`private_threshold_for_syncs` inverts this shift-dominated rate.
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.privacy.checks import check_int_at_least, check_nonnegative, check_positive

__all__ = [
    "SYNC_ORDERS",
    "communication_bound",
    "exploration_radius",
    "private_threshold_for_syncs",
    "recommended_threshold",
    "syncs_for_order",
    "threshold_for_syncs",
]

#: Communication regimes of Remark 1 / Exp. 2 (see the module docstring).
SYNC_ORDERS = ("MlogT", "M1.5", "MT")


def _log_x(horizon: int, dim: int, rho_min: float, rho_max: float, bound_x: float) -> float:
    horizon = check_int_at_least("horizon", horizon, 1)
    dim = check_int_at_least("dim", dim, 1)
    rho_min = check_positive("rho_min", rho_min)
    rho_max = check_positive("rho_max", rho_max)
    if rho_max < rho_min:
        raise ValueError(f"`rho_max` must be >= rho_min = {rho_min}, got {rho_max}.")
    bound_x = check_positive("bound_x", bound_x)
    return math.log(rho_max / rho_min + horizon * bound_x**2 / (dim * rho_min))


def recommended_threshold(
    *, horizon: int, dim: int, rho_min: float, rho_max: float, bound_x: float = 1.0
) -> float:
    """Theorem 1's ``D = 2 T d / (log X + 1)``.

    Parameters
    ----------
    horizon : int
        T >= 1.
    dim : int
        Context dimension d >= 1.
    rho_min, rho_max : float
        Bounds ``0 < ρ_min <= ρ_max`` on the eigenvalues of the Privatizer's
        regularizer (Dubey & Pentland, NeurIPS 2020), with
        ``X = ρ_max/ρ_min + T L²/(d ρ_min)``.
    bound_x : float
        ``L`` > 0, the contexts' norm bound.

    Returns
    -------
    float
        The log-det threshold D > 0.

    Raises
    ------
    ValueError
        If an argument is out of range (named in the message).

    Examples
    --------
    >>> round(recommended_threshold(horizon=100, dim=2, rho_min=1.0, rho_max=1.0), 3)
    81.106
    """
    log_x = _log_x(horizon, dim, rho_min, rho_max, bound_x)
    return 2.0 * horizon * dim / (log_x + 1.0)


def communication_bound(
    threshold: float,
    *,
    horizon: int,
    dim: int,
    rho_min: float,
    rho_max: float,
    bound_x: float = 1.0,
) -> float:
    """Prop. 1's bound ``2 sqrt((d T / D) log X) + 4`` on the number of syncs (∞ at D = 0).

    Parameters
    ----------
    threshold : float
        D >= 0.
    horizon : int
        T >= 1.
    dim : int
        Context dimension d >= 1.
    rho_min, rho_max : float
        Bounds ``0 < ρ_min <= ρ_max`` on the eigenvalues of the Privatizer's
        regularizer (Dubey & Pentland, NeurIPS 2020), with
        ``X = ρ_max/ρ_min + T L²/(d ρ_min)``.
    bound_x : float
        ``L`` > 0, the contexts' norm bound.

    Returns
    -------
    float
        The bound on the number of syncs (``inf`` at D = 0).

    Raises
    ------
    ValueError
        If ``threshold < 0`` or another argument is out of range.
    """
    threshold = check_nonnegative("threshold", threshold)
    log_x = _log_x(horizon, dim, rho_min, rho_max, bound_x)
    if threshold == 0:
        return math.inf
    return 2.0 * math.sqrt(dim * horizon / threshold * log_x) + 4.0


def threshold_for_syncs(
    n_syncs: int, *, horizon: int, dim: int, rho_min: float, rho_max: float, bound_x: float = 1.0
) -> float:
    """The smallest ``D`` whose Prop. 1 bound is ``n_syncs``: ``4 d T log X / (n - 4)²``.

    ``n_syncs >= T`` gives ``D = 0`` (sync every round).

    Parameters
    ----------
    n_syncs : int
        Target number of syncs n >= 1.
    horizon : int
        T >= 1.
    dim : int
        Context dimension d >= 1.
    rho_min, rho_max : float
        Bounds ``0 < ρ_min <= ρ_max`` on the eigenvalues of the Privatizer's
        regularizer (Dubey & Pentland, NeurIPS 2020), with
        ``X = ρ_max/ρ_min + T L²/(d ρ_min)``.
    bound_x : float
        ``L`` > 0, the contexts' norm bound.

    Returns
    -------
    float
        D >= 0.

    Raises
    ------
    ValueError
        If ``n_syncs <= 4`` (Prop. 1's bound is above 4 for every D) or < 1.

    Examples
    --------
    >>> threshold_for_syncs(100, horizon=100, dim=2, rho_min=1.0, rho_max=1.0)
    0.0
    """
    n_syncs = check_int_at_least("n_syncs", n_syncs, 1)
    log_x = _log_x(horizon, dim, rho_min, rho_max, bound_x)
    if n_syncs >= horizon:
        return 0.0
    if n_syncs <= 4:
        raise ValueError(
            f"`n_syncs` must be > 4 (Prop. 1 bounds n by 2 sqrt(dT log X / D) + 4), got {n_syncs}."
        )
    return 4.0 * dim * horizon * log_x / (n_syncs - 4) ** 2


def private_threshold_for_syncs(n_syncs: int, *, horizon: int, dim: int) -> float:
    """``D = T d log 2 / n``: about ``n`` syncs for private FedUCB (shift-dominated test).

    See the module docstring: with the paper's noise the test statistic grows by
    about ``d log 2`` per round regardless of the data, so a sync happens about every
    ``D / (d log 2)`` rounds. ``n_syncs >= T`` gives 0 (sync every round).

    Parameters
    ----------
    n_syncs : int
        Target number of syncs, >= 1.
    horizon : int
        T >= 1.
    dim : int
        Context dimension d >= 1.

    Returns
    -------
    float
        D >= 0.

    Raises
    ------
    ValueError
        If ``n_syncs``, ``horizon`` or ``dim`` < 1.

    Examples
    --------
    >>> round(private_threshold_for_syncs(10, horizon=1000, dim=10), 3)
    693.147
    """
    n_syncs = check_int_at_least("n_syncs", n_syncs, 1)
    horizon = check_int_at_least("horizon", horizon, 1)
    dim = check_int_at_least("dim", dim, 1)
    if n_syncs >= horizon:
        return 0.0
    return horizon * dim * math.log(2.0) / n_syncs


def syncs_for_order(order: str, *, n_agents: int, horizon: int) -> int:
    """Target number of sync rounds of a communication regime, capped at ``T``.

    Parameters
    ----------
    order : {"MlogT", "M1.5", "MT"}
        The communication regime: ``⌈M log T⌉``, ``⌈M^1.5⌉`` or ``T`` syncs.
    n_agents : int
        M >= 1.
    horizon : int
        T >= 1.

    Returns
    -------
    int
        In [1, T].

    Raises
    ------
    ValueError
        If ``order`` is unknown, or ``n_agents`` or ``horizon`` < 1.

    Examples
    --------
    >>> [syncs_for_order(o, n_agents=10, horizon=2000) for o in SYNC_ORDERS]
    [77, 32, 2000]
    """
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    horizon = check_int_at_least("horizon", horizon, 1)
    if order == "MlogT":
        target = math.ceil(n_agents * math.log(horizon))
    elif order == "M1.5":
        target = math.ceil(n_agents**1.5 - 1e-9)
    elif order == "MT":
        target = horizon
    else:
        raise ValueError(f"`order` must be one of {SYNC_ORDERS}, got {order!r}.")
    return max(1, min(horizon, target))


def exploration_radius(
    log_det_v: np.ndarray,
    *,
    dim: int,
    n_agents: int,
    rho_min: float,
    privacy_term: float,
    sub_gaussian: float = 0.5,
    failure_probability: float = 0.1,
    literal_d_factor: bool = False,
) -> np.ndarray:
    """Prop. 2's ``β = σ sqrt(2 log(2/α) + log det V - d log(M ρ_min)) + privacy_term``.

    Parameters
    ----------
    log_det_v : ndarray of float64, any shape
        ``log det V_{i,t}`` (natural log).
    dim, n_agents : int
    rho_min : float
        ``ρ_min`` (``λ/M`` for non-private FedUCB, whose S starts at ``λ I``).
    privacy_term : float
        ``M S sqrt(ρ_max) + M κ`` ([H]) or ``S sqrt(M ρ_max) + κ sqrt(M)`` ([P]);
        ``S sqrt(λ)`` for non-private FedUCB.
    sub_gaussian : float
        σ of the reward noise (1/2 for rewards in [0, 1]).
    failure_probability : float
        α in (0, 1).
    literal_d_factor : bool
        Both texts print ``d log det V``; the self-normalised bound they cite
        (Abbasi-Yadkori et al. 2011, Thm. 1) has ``log det V`` (fedpriv's reading
        of Prop. 2 / Prop. 6). False (default) uses the corrected term, True the printed one.

    Returns
    -------
    ndarray of float64, shape of ``log_det_v``
        The radicand is clipped at 0 (it is >= 0 whenever ``V ⪰ M ρ_min I``).
    """
    log_det_v = np.asarray(log_det_v, dtype=np.float64)
    factor = float(dim) if literal_d_factor else 1.0
    radicand = (
        2.0 * math.log(2.0 / failure_probability)
        + factor * log_det_v
        - dim * math.log(n_agents * rho_min)
    )
    return sub_gaussian * np.sqrt(np.maximum(radicand, 0.0)) + privacy_term
