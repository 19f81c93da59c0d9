"""FedUCB's Privatizer calibrations (Dubey & Pentland 2020, Alg. 2 line 5, Prop. 2, Prop. 4).

The noise σ_N of the Privatizer (:class:`fedpriv.privacy.mechanisms.matrix_tree.
MatrixTreePrivatizer`), its PSD shift ``2Λ``, ρ_min, ρ_max, κ and the privacy terms of
β, under one of three calibrations. The paper's formulas as written are
:func:`fedpriv.privacy.calibrations.feducb_privatizer`; the mechanism gives the
smallest σ_N its own charge allows
(:func:`fedpriv.privacy.mechanisms.matrix_tree.exact_noise_stddev`). This module
brings the two together, so the shared mechanism does not depend on FedUCB's
calibration.

``"paper"``
    σ_N² = 16 m (L²+1)² ln(2/δ)² / ε² and Prop. 4's Λ, ρ_min = Λ, ρ_max = 3Λ, κ, from
    :func:`fedpriv.privacy.calibrations.feducb_privatizer`.
``"corrected"``
    Fixes two calibration errors of Alg. 2 line 5 (fedpriv's derivation) while keeping the paper's
    proof structure (per-node budget ``ε₀ = ε/√(8 m ln(2/δ))``, ``δ₀ = δ/(2m)``,
    advanced composition over ``m`` nodes): (a) the classical Gaussian constant
    ``σ = Δ₂ √(2 ln(1.25/δ₀)) / ε₀`` instead of ``ln(2/δ)``; (b) the
    substitution sensitivity ``Δ₂ = √2 (L² + B²)`` of Definition 1 instead of the
    add/remove ``L² + 1``. Λ is scaled with σ (``Λ σ/σ_paper``, keeping the paper's
    ``ln(4/δ)``), and κ is re-derived from σ and Λ (fedpriv's derivation):
    ``κ = √m σ (√d + √(2 ln(2nM/α))) / √Λ``.
``"exact"``
    The smallest σ for which the exact accountant gives the claim: ``μ`` solves
    ``δ_GDP(ε; μ) = δ`` and ``σ = √m Δ₂ / (√2 μ)``; Λ and κ as in ``"corrected"``.
    With secure noise (``secure=True``) the release is charged as its grid twin through
    zCDP, not by the Gaussian-DP curve, so σ is solved for that charge instead
    (both by :func:`~fedpriv.privacy.mechanisms.matrix_tree.exact_noise_stddev`).
"""

from __future__ import annotations

import dataclasses
import math

from fedpriv.privacy.calibrations.feducb import feducb_privatizer
from fedpriv.privacy.checks import check_int_at_least
from fedpriv.privacy.mechanisms.matrix_tree import exact_noise_stddev

__all__ = ["PRIVATIZER_CALIBRATIONS", "PrivatizerCalibration", "privatizer_calibration"]

#: Noise calibrations of the Privatizer (module docstring).
PRIVATIZER_CALIBRATIONS = ("paper", "corrected", "exact")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PrivatizerCalibration:
    """Noise, shift and β terms of one Privatizer; see :func:`privatizer_calibration`.

    Attributes
    ----------
    calibration : str
        ``"paper"``, ``"corrected"`` or ``"exact"``.
    version : str
        Text version for the β terms: ``"full"`` ([H]) or ``"neurips"`` ([P]).
    claimed_epsilon, claimed_delta : float
    n_syncs : int
        ``n`` used for the depth (``horizon`` when unknown a priori).
    tree_depth : int
        ``m = 1 + ⌈log2 n⌉``.
    capacity : int
        ``2**(m-1)`` leaves.
    frobenius_sensitivity : float
        ``√2 (L² + B²)``: substitution of one ``(x, y)`` pair (what the accountant uses).
    noise_stddev : float
        σ_N of this calibration.
    op_norm_bound, rho_min, rho_max, kappa : float
        Λ, ρ_min = Λ, ρ_max = 3Λ and κ.
    shift : float
        PSD shift ``2Λ`` added to the diagonal of every released Û.
    beta_privacy_term : float
        Privacy terms of β (Prop. 2): ``M S √ρ_max + M κ`` ([H]) or
        ``S √(M ρ_max) + κ √M`` ([P]).
    """

    calibration: str
    version: str
    claimed_epsilon: float
    claimed_delta: float
    n_syncs: int
    tree_depth: int
    capacity: int
    frobenius_sensitivity: float
    noise_stddev: float
    op_norm_bound: float
    rho_min: float
    rho_max: float
    kappa: float
    shift: float
    beta_privacy_term: float


def privatizer_calibration(
    epsilon: float,
    delta: float,
    *,
    horizon: int,
    n_agents: int,
    dim: int,
    n_syncs: int | None = None,
    tree_depth: int | None = None,
    calibration: str = "paper",
    version: str = "full",
    bound_x: float = 1.0,
    bound_y: float = 1.0,
    bound_theta: float = 1.0,
    failure_probability: float = 0.1,
    secure: bool = False,
    records_per_leaf: int = 1,
) -> PrivatizerCalibration:
    """σ_N, Λ, ρ_min, ρ_max, κ and β's privacy term of one calibration.

    Parameters
    ----------
    epsilon, delta : float
        The claim (ε > 0 finite, δ in (0, 1)).
    horizon, n_agents, dim : int
        ``T``, ``M`` and ``d`` (>= 1).
    n_syncs : int, optional
        ``n`` fixed a priori (``m = 1 + ⌈log2 n⌉``); None uses ``n = T``
        (Alg. 2 line 2, Remark 4).
    tree_depth : int, optional
        Depth ``m`` instead of ``1 + ⌈log2 n⌉`` (e.g. decentralised FedUCB's
        ``1 + ⌈log2(T/γ)⌉``); must hold ``n`` leaves.
    calibration : {"paper", "corrected", "exact"}
        See the module docstring.
    version : {"full", "neurips"}
        Text version of β's privacy terms ([H] / [P]).
    bound_x, bound_y, bound_theta, failure_probability
        ``L``, ``B``, ``S`` and ``α`` as in
        :func:`fedpriv.privacy.calibrations.feducb_privatizer`.
    secure : bool, default False
        The Privatizer will draw secure noise (``MatrixTreePrivatizer(secure=True)``).
        Changes only ``"exact"``: σ is then the smallest for which what the secure
        release is *charged* (its grid twin, priced through zCDP,
        :func:`~fedpriv.privacy.mechanisms.matrix_tree.exact_noise_stddev`) gives the claim, instead of the float Gaussian's
        exact curve, which the secure event is not priced by; ``"paper"`` and
        ``"corrected"`` keep their σ whatever the noise.
    records_per_leaf : int, default 1
        Pairs of one leaf a changed pair can move (the Privatizer's
        ``records_per_leaf``; FedUCB's fixed schedule, where the agent acts on its own
        raw data between syncs). ``"corrected"`` and ``"exact"`` calibrate to the
        sensitivity the view is charged, ``records_per_leaf × √2 (L² + B²)``;
        ``"paper"`` keeps the paper's σ_N (Alg. 2 line 5, one observation).

    Returns
    -------
    PrivatizerCalibration

    Raises
    ------
    ValueError
        On any argument out of range (see :func:`~fedpriv.privacy.calibrations.feducb_privatizer`)
        or an unknown ``calibration``.

    Examples
    --------
    >>> cal = privatizer_calibration(1.0, 0.1, horizon=10**4, n_agents=10, dim=10)
    >>> cal.tree_depth, cal.capacity, round(cal.noise_stddev, 2)
    (15, 16384, 92.82)
    """
    if calibration not in PRIVATIZER_CALIBRATIONS:
        raise ValueError(
            f"`calibration` must be one of {PRIVATIZER_CALIBRATIONS}, got {calibration!r}."
        )
    paper = feducb_privatizer(
        epsilon,
        delta,
        horizon=horizon,
        n_agents=n_agents,
        dim=dim,
        n_syncs=n_syncs,
        tree_depth=tree_depth,
        bound_x=bound_x,
        bound_y=bound_y,
        bound_theta=bound_theta,
        failure_probability=failure_probability,
        version=version,
    )
    m = paper.tree_depth
    l2 = paper.l2_sensitivity
    frobenius = math.sqrt(2.0) * l2
    records = check_int_at_least("records_per_leaf", records_per_leaf, 1)
    if calibration == "paper":
        sigma, lam, kappa = paper.noise_stddev, paper.op_norm_bound, paper.kappa
    else:
        if calibration == "corrected":
            sigma = (
                records
                * frobenius
                * math.sqrt(2.0 * math.log(1.25 / paper.node_delta))
                / (paper.node_epsilon)
            )
        else:
            sigma = exact_noise_stddev(
                epsilon,
                delta,
                depth=m,
                frobenius_sensitivity=frobenius,
                side=dim + 1,
                records_per_leaf=records,
                secure=secure,
            )
        lam = paper.op_norm_bound * sigma / paper.noise_stddev
        log_union = math.log(2.0 * paper.n_syncs * n_agents / failure_probability)
        kappa = (
            math.sqrt(m) * sigma * (math.sqrt(dim) + math.sqrt(2.0 * log_union)) / math.sqrt(lam)
        )
    rho_min, rho_max = lam, 3.0 * lam
    if version == "full":
        beta_term = n_agents * bound_theta * math.sqrt(rho_max) + n_agents * kappa
    else:
        beta_term = bound_theta * math.sqrt(n_agents * rho_max) + kappa * math.sqrt(n_agents)
    return PrivatizerCalibration(
        calibration=calibration,
        version=version,
        claimed_epsilon=paper.claimed_epsilon,
        claimed_delta=paper.claimed_delta,
        n_syncs=paper.n_syncs,
        tree_depth=m,
        capacity=2 ** (m - 1),
        frobenius_sensitivity=frobenius,
        noise_stddev=sigma,
        op_norm_bound=lam,
        rho_min=rho_min,
        rho_max=rho_max,
        kappa=kappa,
        shift=2.0 * lam,
        beta_privacy_term=beta_term,
    )
