"""Dubey & Pentland (NeurIPS 2020), FedUCB: the Privatizer's noise calibration.

Alg. 2 (Privatizer) and Prop. 4, as the paper prescribes them for its claimed
(ε, δ) guarantee: :func:`feducb_privatizer` returns a :class:`FedUCBCalibration`.
Nothing here draws noise or charges an accountant. Re-exported by
:mod:`fedpriv.privacy.calibrations`.
"""

from __future__ import annotations

import dataclasses
import math

from fedpriv.privacy.checks import check_epsilon, check_int_at_least, check_positive
from fedpriv.privacy.checks import check_open_unit as _check_open_unit

__all__ = ["DEPLOYMENT_FUNCTIONS", "FEDUCB_VERSIONS", "FedUCBCalibration", "feducb_privatizer"]

#: The calibrations a deployment file may call (:mod:`fedpriv.privacy.deployment`).
DEPLOYMENT_FUNCTIONS = ("feducb_privatizer",)


# ---------------------------------------------------------------------------------
# Dubey & Pentland (NeurIPS 2020), FedUCB: Alg. 2 (Privatizer) and Prop. 4
# ---------------------------------------------------------------------------------

#: Text versions of FedUCB: ``"full"`` is the arXiv version with the appendix ([H],
#: seed 000), ``"neurips"`` the NeurIPS main text ([P], seed 002).
FEDUCB_VERSIONS = ("full", "neurips")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FedUCBCalibration:
    """The Privatizer's noise and Prop. 4's accuracy bounds; see `feducb_privatizer`.

    Attributes
    ----------
    version : str
        Text version used (only `beta_privacy_term` differs between versions).
    claimed_epsilon, claimed_delta : float
        The paper's claim: each agent's release stream is (ε, δ)-DP per single
        ``(x, y)`` observation, hence (ε, δ, M)-federated DP (Prop. 3, Remark 3).
    n_syncs : int
        Number ``n`` of synchronisation rounds (tree leaves) used in the formulas.
    tree_depth : int
        Depth ``m`` of the tree actually used.
    l2_sensitivity : float
        ``L**2 + B**2``, the paper's ``L² + 1`` (Frobenius bound on ``v vᵀ``).
    node_epsilon, node_delta : float
        Per-node budget ``(ε / sqrt(8 m ln(2/δ)), δ / (2m))`` (§4.3).
    noise_stddev : float
        ``σ_N``, stddev of each entry of the per-node noise ``N̂`` (Alg. 2 line 5).
    noise_multiplier : float
        ``σ_N / l2_sensitivity`` = ``4 sqrt(m) ln(2/δ) / ε`` (dimensionless).
    classical_noise_stddev : float
        Not the paper's: the classical Gaussian-mechanism stddev
        ``Δ₂ sqrt(2 ln(1.25/δ₀)) / ε₀`` for the same per-node budget (fedpriv's
        derivation from §4.3's budget), for comparison only.
    op_norm_bound : float
        ``Λ``, the bound on ``‖H‖_op`` (§4.3, display after Alg. 2).
    rho_min, rho_max, kappa : float
        Prop. 4: ``ρ_min = Λ``, ``ρ_max = 3Λ``, and ``κ``.
    beta_privacy_term : float
        The privacy terms of β in Prop. 2 (version-dependent).
    failure_probability : float
        ``α`` used in ``ln(2nM/α)``.
    """

    version: str
    claimed_epsilon: float
    claimed_delta: float
    n_syncs: int
    tree_depth: int
    l2_sensitivity: float
    node_epsilon: float
    node_delta: float
    noise_stddev: float
    noise_multiplier: float
    classical_noise_stddev: float
    op_norm_bound: float
    rho_min: float
    rho_max: float
    kappa: float
    beta_privacy_term: float
    failure_probability: float


def feducb_privatizer(
    epsilon: float,
    delta: float,
    *,
    horizon: int,
    n_agents: int,
    dim: int,
    n_syncs: int | None = None,
    tree_depth: int | None = None,
    bound_x: float = 1.0,
    bound_y: float = 1.0,
    bound_theta: float = 1.0,
    failure_probability: float = 0.1,
    version: str = "full",
) -> FedUCBCalibration:
    """FedUCB's per-node Gaussian noise and spectral bounds, as written.

    Alg. 2 line 5 draws every entry of a node's ``(d+1) × (d+1)`` noise matrix from
    ``N(0, σ_N²)`` with ``σ_N² = 16 m (L²+1)² log(2/δ)² / ε²``, then symmetrises it
    (line 6). With ``n`` synchronisation rounds (§4.3, display after Alg. 2, and
    Prop. 4)::

        Λ     = sqrt(32) m (L²+1) log(4/δ) (4 sqrt(d) + 2 ln(2nM/α)) / ε
        ρ_min = Λ,   ρ_max = 3Λ
        κ     = sqrt( m (L²+1) (sqrt(d) + 2 log(2nM/α)) / (sqrt(2) ε) )

    Parameters
    ----------
    epsilon : float
        Claimed ε, > 0 and finite.
    delta : float
        Claimed δ, in (0, 1).
    horizon : int
        Number of rounds ``T``, >= 1.
    n_agents : int
        Number of agents ``M``, >= 1.
    dim : int
        Context dimension ``d``, >= 1 (the paper's experiments use ``d = 10``).
    n_syncs : int, optional
        Number ``n`` of synchronisation rounds if fixed a priori (``1 <= n <= T``).
        ``None`` means unknown, and the worst case ``n = T`` (sync every round) is
        used, as Alg. 2 line 2 and Remark 4 prescribe.
    tree_depth : int, optional
        Depth ``m`` to use instead of Alg. 2 line 2's ``1 + ⌈log2 n⌉``, e.g. a
        decentralised tree. Must hold ``n`` leaves: ``2**(m-1) >= n``.
    bound_x : float
        ``L``, bound on ``‖x‖`` (Assumption (a)), > 0. The experiments use 1.
    bound_y : float
        ``B``, bound on ``|y|`` (Assumption (f)), > 0. See Notes.
    bound_theta : float
        ``S``, bound on ``‖θ*‖`` (Assumption (c)), > 0; only enters
        `beta_privacy_term`. The experiments use 1.
    failure_probability : float
        ``α`` of Prop. 2/4, in (0, 1). Not given by the paper; 0.1 is fedpriv's
        assumption.
    version : {"full", "neurips"}
        Text version. Alg. 2, Λ and Prop. 4 are identical in both; only the privacy
        terms of β (Prop. 2) differ: ``M S sqrt(ρ_max) + M κ`` in ``"full"`` (the
        arXiv text writes ``M γ``, a typo for ``M κ``) and
        ``S sqrt(M ρ_max) + κ sqrt(M)`` in ``"neurips"`` (Prop. 2 in each text).

    Returns
    -------
    FedUCBCalibration
        Claimed ``(ε, δ)`` are the inputs: per agent, the release stream is
        (ε, δ)-DP w.r.t. one substituted ``(x, y)`` (Remark 3), hence
        (ε, δ, M)-federated DP (Prop. 3).

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, infinite, or so small that the noise scale is not a
        finite float (``epsilon = 5e-324``), ``delta`` or ``failure_probability`` not in
        (0, 1), ``horizon``, ``n_agents``, ``dim``, ``n_syncs`` or ``tree_depth``
        < 1, ``n_syncs > horizon``, ``2**(tree_depth - 1) < n``, a bound <= 0, or an
        unknown ``version``.

    Notes
    -----
    Readings of ambiguous text (Alg. 2, §4.3, Prop. 4; fedpriv's readings):

    - **Logs.** ``log(2/δ)²`` is ``(ln(2/δ))²``; every other log in σ_N, Λ and κ is
      natural too (§4.3 writes ``ln(2/δ)`` in the per-node budget and
      ``ln(2nM/α)`` in Λ). The tree depth uses ``log2``: Alg. 2 line 2 writes
      ``1 + ⌈log n⌉`` without a base, §4.3 writes ``1 + ⌈log₂ n⌉``. It is computed
      exactly as ``1 + (n - 1).bit_length()``. A record sits in at most
      ``floor(log2 n) + 1 <= m`` nodes (:func:`fedpriv.privacy.accounting.tree.tree_depth`).
    - **B.** The paper writes ``L² + 1``, silently taking ``B = 1`` (rewards in
      [0, 1]); we use ``L² + B²``, which equals the paper's at ``bound_y = 1``.
      This is the add/remove Frobenius bound ``‖v vᵀ‖_F <= ‖v‖²`` with
      ``v = [x; y]``; under the paper's substitution relation the sensitivity is
      ``sqrt(2) (L² + B²)`` (fedpriv's derivation under Definition 1).
    - **σ_N vs the per-node budget.** σ_N equals ``Δ₂ sqrt(2 ln(2/δ)) / ε₀`` with
      ``ε₀ = ε / sqrt(8 m ln(2/δ))``, i.e. the Gaussian mechanism with
      ``ln(2/δ)`` where the classical bound needs ``ln(1.25/δ₀)``,
      ``δ₀ = δ/(2m)``. It is smaller than `classical_noise_stddev` (fedpriv's derivation).
    - **Λ and κ.** Λ writes ``log(4/δ)`` where σ_N has ``log(2/δ)``, and κ has no
      ``ln(1/δ)`` factor (fedpriv's derivation). Both are utility bounds and do not
      affect privacy; they are reproduced as printed.
    - **n.** The union bound ``ln(2nM/α)`` uses the same ``n`` as the tree.
    - Decentralised FedUCB (Remark 5: ``m = 1 + ⌈log(T/γ)⌉`` and an unspecified
      extra ``log γ`` in Λ and κ) is not modelled; pass ``tree_depth`` for its m.
    - Cross-agent users (footnote 4) need k-fold composition over the M agents,
      ``(sqrt(2M ln(1/δ')) ε + M ε (e^ε − 1), M δ + δ')``; not part of the claim.

    References
    ----------
    .. [1] Dubey & Pentland, "Differentially-Private Federated Linear Bandits",
       NeurIPS 2020, Alg. 2, §4.3, Prop. 2–4 and Remark 3–4.

    Examples
    --------
    >>> cal = feducb_privatizer(1.0, 0.1, horizon=10**7, n_agents=100, dim=10)
    >>> cal.tree_depth, round(cal.noise_stddev, 1), round(cal.kappa, 1)
    (25, 119.8, 42.3)
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = _check_open_unit("delta", delta)
    horizon = check_int_at_least("horizon", horizon, 1)
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    dim = check_int_at_least("dim", dim, 1)
    if n_syncs is None:
        n = horizon
    else:
        n = check_int_at_least("n_syncs", n_syncs, 1)
        if n > horizon:
            raise ValueError(f"`n_syncs` must be <= horizon = {horizon}, got {n}.")
    required = 1 + (n - 1).bit_length()  # 1 + ceil(log2 n), exact
    if tree_depth is None:
        depth = required
    else:
        depth = check_int_at_least("tree_depth", tree_depth, 1)
        if depth < required:
            raise ValueError(
                f"`tree_depth` must be >= 1 + ceil(log2 n) = {required} to hold "
                f"n = {n} leaves, got {depth}."
            )
    bound_x = check_positive("bound_x", bound_x)
    bound_y = check_positive("bound_y", bound_y)
    bound_theta = check_positive("bound_theta", bound_theta)
    alpha = _check_open_unit("failure_probability", failure_probability)
    if version not in FEDUCB_VERSIONS:
        raise ValueError(f"`version` must be one of {FEDUCB_VERSIONS}, got {version!r}.")

    l2 = bound_x**2 + bound_y**2
    log_2_delta = math.log(2.0 / delta)
    noise_stddev = 4.0 * math.sqrt(depth) * l2 * log_2_delta / epsilon
    node_epsilon = epsilon / math.sqrt(8.0 * depth * log_2_delta)
    node_delta = delta / (2.0 * depth)
    if not (node_epsilon > 0 and math.isfinite(noise_stddev)):  # ε below ~1e-300
        raise ValueError(
            f"`epsilon` = {epsilon!r} gives no finite noise scale (noise_stddev = "
            f"{noise_stddev!r}, per-node ε = {node_epsilon!r}): `epsilon` must be large "
            "enough that 4 sqrt(m) (L² + B²) ln(2/δ) / ε is a finite float."
        )
    classical = l2 * math.sqrt(2.0 * math.log(1.25 / node_delta)) / node_epsilon
    log_union = math.log(2.0 * n * n_agents / alpha)
    op_norm_bound = (
        math.sqrt(32.0)
        * depth
        * l2
        * math.log(4.0 / delta)
        * (4.0 * math.sqrt(dim) + 2.0 * log_union)
        / epsilon
    )
    rho_max = 3.0 * op_norm_bound
    kappa = math.sqrt(depth * l2 * (math.sqrt(dim) + 2.0 * log_union) / (math.sqrt(2.0) * epsilon))
    if version == "full":
        beta_term = n_agents * bound_theta * math.sqrt(rho_max) + n_agents * kappa
    else:
        beta_term = bound_theta * math.sqrt(n_agents * rho_max) + kappa * math.sqrt(n_agents)
    return FedUCBCalibration(
        version=version,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        n_syncs=n,
        tree_depth=depth,
        l2_sensitivity=l2,
        node_epsilon=node_epsilon,
        node_delta=node_delta,
        noise_stddev=noise_stddev,
        noise_multiplier=noise_stddev / l2,
        classical_noise_stddev=classical,
        op_norm_bound=op_norm_bound,
        rho_min=op_norm_bound,
        rho_max=rho_max,
        kappa=kappa,
        beta_privacy_term=beta_term,
        failure_probability=alpha,
    )
