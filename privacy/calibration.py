"""Noise calibrations as the seed papers prescribe them, and as corrected.

Each function returns the noise one seed paper prescribes, **as written**, for its
claimed guarantee, together with that claim, so that reports can put the claim next
to what the accountant computes. Nothing here draws noise or charges an accountant.

Zhu et al. (2021), Fed_UCB
    §4.1: "Set ε' := ε / ⌈log T⌉" and add ``Lap(1/ε')`` to every tree node, claiming
    ε-DP. The paper never states the base of ``log``. A record sits in
    ``floor(log2 T) + 1`` nodes (:func:`privacy.tree.tree_depth`), so the corrected
    calibration is ``ε' = ε / (floor(log2 T) + 1)`` (gossip.md §3.4 items 1–2).
Dubey & Pentland (NeurIPS 2020), FedUCB
    Alg. 2 (Privatizer) and Prop. 4: :func:`feducb_privatizer`.
Li & Song, CDP/DDP/HDP-MAB
    Per-epoch Laplace scale ``1/(M ε n_r)``: :func:`li_song_epoch_scale`,
    :func:`li_song_claimed_epsilon`.
Dubey & Pentland (AAMAS 2020), private message passing
    The interval mechanism, whose formulas were lost from the available text and are
    reconstructed in byzantine.md: :func:`interval_release_schedule`,
    :func:`interval_noise_scales`, :func:`interval_claimed_guarantee`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from privacy._checks import (
    check_epsilon,
    check_int_at_least,
    check_positive,
    check_real,
)
from privacy.tree import tree_depth

__all__ = [
    "FEDUCB_VERSIONS",
    "INTERVAL_CONFIDENCE",
    "INTERVAL_RULES",
    "PAPER_LOG_BASES",
    "FedUCBCalibration",
    "IntervalClaim",
    "fed_ucb_node_epsilon",
    "fed_ucb_scale",
    "feducb_privatizer",
    "interval_claimed_guarantee",
    "interval_length",
    "interval_noise_scales",
    "interval_release_epsilons",
    "interval_release_schedule",
    "li_song_claimed_epsilon",
    "li_song_epoch_scale",
    "li_song_mean_sensitivity",
    "li_song_participants",
    "paper_log_rounds",
]
#: Log bases a user may pick for the paper's ⌈log T⌉ (the paper leaves it unstated).
PAPER_LOG_BASES = {"2": 2.0, "e": math.e, "10": 10.0}


def paper_log_rounds(horizon: int, log_base: str) -> int:
    """The paper's ``⌈log T⌉`` in base ``log_base`` ("2", "e" or "10"), at least 1.

    Computed in exact integer arithmetic for base 2 (``(T - 1).bit_length()``) so that
    powers of two are not mis-rounded.

    Examples
    --------
    >>> paper_log_rounds(16, "2"), paper_log_rounds(16, "e"), paper_log_rounds(600000, "e")
    (4, 3, 14)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    if log_base not in PAPER_LOG_BASES:
        raise ValueError(
            f"`log_base` must be one of {sorted(PAPER_LOG_BASES)}, got {log_base!r}."
        )
    if log_base == "2":
        value = (horizon - 1).bit_length()
    else:
        value = math.ceil(
            math.log(horizon) / math.log(PAPER_LOG_BASES[log_base]) - 1e-12
        )
    return max(1, value)


def fed_ucb_node_epsilon(
    epsilon: float, horizon: int, *, mode: str, log_base: str = "2"
) -> float:
    """Per-node ε' of Fed_UCB's tree.

    Parameters
    ----------
    epsilon : float
        The claimed total ε, in (0, inf].
    horizon : int
        ``T`` >= 1.
    mode : {"paper", "corrected"}
        ``"paper"``: ε' = ε / ⌈log_base T⌉ (Zhu et al. §4.1). ``"corrected"``:
        ε' = ε / (floor(log2 T) + 1), which makes the tree exactly ε-DP.
    log_base : {"2", "e", "10"}
        Base of the paper's log (only used in ``"paper"`` mode).

    Raises
    ------
    ValueError
        On ε <= 0, horizon < 1, an unknown mode or log base.
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if mode == "paper":
        return epsilon / paper_log_rounds(horizon, log_base)
    if mode == "corrected":
        return epsilon / tree_depth(horizon)
    raise ValueError(f"`mode` must be 'paper' or 'corrected', got {mode!r}.")


def fed_ucb_scale(
    epsilon: float, horizon: int, *, mode: str, log_base: str = "2"
) -> float:
    """Laplace scale ``b = l1_sensitivity / ε'`` per node (sensitivity 1, rewards in [0, 1]).

    ``0.0`` for ε = ∞ (no noise). Computed as ``levels / ε`` so that the corrected
    tree's ε ``depth / b`` rounds to exactly ε.

    Examples
    --------
    >>> fed_ucb_scale(1.0, 16, mode="paper"), fed_ucb_scale(1.0, 16, mode="corrected")
    (4.0, 5.0)
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if math.isinf(epsilon):
        return 0.0
    if mode == "paper":
        return paper_log_rounds(horizon, log_base) / epsilon
    if mode == "corrected":
        return tree_depth(horizon) / epsilon
    raise ValueError(f"`mode` must be 'paper' or 'corrected', got {mode!r}.")


# ---------------------------------------------------------------------------------
# Shared private helpers
# ---------------------------------------------------------------------------------


def _check_open_unit(name: str, value: object) -> float:
    """Return ``value`` as a float in the open interval (0, 1)."""
    value = check_real(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1), got {value!r}.")
    return value


def _ceil_tolerant(value: float) -> int:
    """``ceil(value)``, except that a value within 1e-9 (relative) of an integer is it.

    Guards against float noise adding one, e.g. ``0.7 * 10 = 7.000000000000001``.
    """
    nearest = round(value)
    if abs(value - nearest) <= 1e-9 * max(1.0, abs(value)):
        return int(nearest)
    return math.ceil(value)


# ---------------------------------------------------------------------------------
# Dubey & Pentland (NeurIPS 2020), FedUCB: Alg. 2 (Privatizer) and Prop. 4
# ---------------------------------------------------------------------------------

#: Text versions of FedUCB: ``"full"`` is the arXiv version with the appendix (seed
#: 000, [H] in feducb.md), ``"neurips"`` the NeurIPS main text (seed 002, [P]).
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
        ``Δ₂ sqrt(2 ln(1.25/δ₀)) / ε₀`` for the same per-node budget (feducb.md §3.6
        item 1), for comparison only.
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
        ``α`` of Prop. 2/4, in (0, 1). Not given by the paper; 0.1 is feducb.md
        §6.4's assumption.
    version : {"full", "neurips"}
        Text version. Alg. 2, Λ and Prop. 4 are identical in both; only the privacy
        terms of β (Prop. 2) differ: ``M S sqrt(ρ_max) + M κ`` in ``"full"`` (the
        arXiv text writes ``M γ``, a typo for ``M κ``) and
        ``S sqrt(M ρ_max) + κ sqrt(M)`` in ``"neurips"`` (feducb.md §0).

    Returns
    -------
    FedUCBCalibration
        Claimed ``(ε, δ)`` are the inputs: per agent, the release stream is
        (ε, δ)-DP w.r.t. one substituted ``(x, y)`` (Remark 3), hence
        (ε, δ, M)-federated DP (Prop. 3).

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or infinite, ``delta`` or ``failure_probability`` not in
        (0, 1), ``horizon``, ``n_agents``, ``dim``, ``n_syncs`` or ``tree_depth``
        < 1, ``n_syncs > horizon``, ``2**(tree_depth - 1) < n``, a bound <= 0, or an
        unknown ``version``.

    Notes
    -----
    Readings of ambiguous text (feducb.md §2.4, §3.5–3.6):

    - **Logs.** ``log(2/δ)²`` is ``(ln(2/δ))²``; every other log in σ_N, Λ and κ is
      natural too (§4.3 writes ``ln(2/δ)`` in the per-node budget and
      ``ln(2nM/α)`` in Λ). The tree depth uses ``log2``: Alg. 2 line 2 writes
      ``1 + ⌈log n⌉`` without a base, §4.3 writes ``1 + ⌈log₂ n⌉``. It is computed
      exactly as ``1 + (n - 1).bit_length()``. A record sits in at most
      ``floor(log2 n) + 1 <= m`` nodes (:func:`privacy.tree.tree_depth`).
    - **B.** The paper writes ``L² + 1``, silently taking ``B = 1`` (rewards in
      [0, 1]); we use ``L² + B²``, which equals the paper's at ``bound_y = 1``.
      This is the add/remove Frobenius bound ``‖v vᵀ‖_F <= ‖v‖²`` with
      ``v = [x; y]``; under the paper's substitution relation the sensitivity is
      ``sqrt(2) (L² + B²)`` (§3.6 item 4).
    - **σ_N vs the per-node budget.** σ_N equals ``Δ₂ sqrt(2 ln(2/δ)) / ε₀`` with
      ``ε₀ = ε / sqrt(8 m ln(2/δ))``, i.e. the Gaussian mechanism with
      ``ln(2/δ)`` where the classical bound needs ``ln(1.25/δ₀)``,
      ``δ₀ = δ/(2m)``. It is smaller than `classical_noise_stddev` (§3.6 item 1).
    - **Λ and κ.** Λ writes ``log(4/δ)`` where σ_N has ``log(2/δ)``, and κ has no
      ``ln(1/δ)`` factor (§3.6 items 2–3). Both are utility bounds and do not
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
        raise ValueError(
            f"`version` must be one of {FEDUCB_VERSIONS}, got {version!r}."
        )

    l2 = bound_x**2 + bound_y**2
    log_2_delta = math.log(2.0 / delta)
    noise_stddev = 4.0 * math.sqrt(depth) * l2 * log_2_delta / epsilon
    node_epsilon = epsilon / math.sqrt(8.0 * depth * log_2_delta)
    node_delta = delta / (2.0 * depth)
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
    kappa = math.sqrt(
        depth * l2 * (math.sqrt(dim) + 2.0 * log_union) / (math.sqrt(2.0) * epsilon)
    )
    if version == "full":
        beta_term = n_agents * bound_theta * math.sqrt(rho_max) + n_agents * kappa
    else:
        beta_term = bound_theta * math.sqrt(n_agents * rho_max) + kappa * math.sqrt(
            n_agents
        )
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


# ---------------------------------------------------------------------------------
# Li & Song: per-epoch Laplace noise on each active arm's mean
# ---------------------------------------------------------------------------------


def li_song_participants(n_agents: int, participation_rate: float) -> int:
    """Number of uploading agents ``N = ⌈p M⌉`` under partial participation (§IV-B).

    ``p * M`` within 1e-9 (relative) of an integer is taken as that integer, so
    float noise never adds an agent (``0.7 * 10`` gives 7, not 8).

    Raises
    ------
    ValueError
        If ``n_agents < 1`` or ``participation_rate`` not in (0, 1].

    Examples
    --------
    >>> li_song_participants(50, 0.2), li_song_participants(10, 0.7)
    (10, 7)
    """
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    rate = check_real("participation_rate", participation_rate)
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"`participation_rate` must be in (0, 1], got {rate!r}.")
    return _ceil_tolerant(rate * n_agents)


def li_song_mean_sensitivity(n_pulls_in_epoch: int) -> float:
    """L1 sensitivity ``1 / n_r`` of one agent's per-epoch arm mean (App. B).

    The released statistic ``x̂_{i,k}(r)`` is the mean of the ``n_r`` rewards in
    [0, 1] of arm ``k`` at agent ``i`` in epoch ``r`` only; replacing one reward moves
    it by at most ``1 / n_r`` (equality for a 0 ↔ 1 flip), and no other arm's mean.
    Use the realised count: if an epoch is truncated or ``S(r)`` rounded, the
    sensitivity is ``1 / n_actual`` (li_song.md §3.5 P5).

    Raises
    ------
    ValueError
        If ``n_pulls_in_epoch < 1``.

    Examples
    --------
    >>> li_song_mean_sensitivity(4)
    0.25
    """
    return 1.0 / check_int_at_least("n_pulls_in_epoch", n_pulls_in_epoch, 1)


def _li_song_divisor(
    n_agents: int, partial: bool, n_participants: int | None, rate: float | None
) -> int:
    """``M`` (full participation) or ``N`` (partial), validated."""
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    if not isinstance(partial, bool):
        raise TypeError(f"`partial` must be a bool, got {type(partial).__name__}.")
    if not partial:
        if n_participants is not None or rate is not None:
            raise ValueError(
                "`n_participants` and `participation_rate` require `partial=True`."
            )
        return n_agents
    if (n_participants is None) == (rate is None):
        raise ValueError(
            "`partial=True` needs exactly one of `n_participants` or "
            "`participation_rate`."
        )
    if rate is not None:
        return li_song_participants(n_agents, rate)
    n = check_int_at_least("n_participants", n_participants, 1)
    if n > n_agents:
        raise ValueError(f"`n_participants` must be <= n_agents = {n_agents}, got {n}.")
    return n


def li_song_epoch_scale(
    epsilon: float,
    *,
    n_agents: int,
    n_pulls_in_epoch: int,
    partial: bool = False,
    n_participants: int | None = None,
    participation_rate: float | None = None,
) -> float:
    """Laplace scale each agent adds to each active arm's per-epoch mean.

    Alg. 1 (CDP-MAB; also DDP/HDP-MAB): ``ŷ_{i,k}(r) = x̂_{i,k}(r) + Lap(b_r)`` with
    ``b_r = 1 / (M ε n_r)``, ``n_r = S(r) − S(r−1)``. Under partial participation
    (§IV-B, CE-CDP-MAB) ``b_r = 1 / (N ε n_r)`` with ``N = ⌈p M⌉``. The noise is
    drawn once per (agent, arm, epoch) and reused in the running average ȳ (Eq. 6).

    Parameters
    ----------
    epsilon : float
        The paper's input "privacy parameter" ε, > 0 and finite. Not the guarantee:
        see `li_song_claimed_epsilon`.
    n_agents : int
        ``M``, >= 1.
    n_pulls_in_epoch : int
        Realised number ``n_r`` of pulls of the arm by the agent in the epoch, >= 1.
        The paper's ``S(r)`` is real-valued; pass the count actually averaged.
    partial : bool
        Partial participation; then give exactly one of ``n_participants`` (N) or
        ``participation_rate`` (p, giving ``N = ⌈p M⌉``).
    n_participants : int, optional
        ``N``, with ``1 <= N <= M``.
    participation_rate : float, optional
        ``p`` in (0, 1].

    Returns
    -------
    float
        Laplace scale ``b_r``. Its pure ε is
        ``li_song_mean_sensitivity(n_r) / b_r = M ε`` (``N ε`` under partial
        participation), δ = 0.

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or infinite, a count < 1, ``N > M``, ``p`` not in
        (0, 1], or the participation arguments are inconsistent with ``partial``.

    References
    ----------
    .. [1] Li & Song, "Privacy-Preserving Communication-Efficient Federated
       Multi-Armed Bandits", Alg. 1 line 9, §IV-B and App. B (li_song.md §3.2).

    Examples
    --------
    >>> li_song_epoch_scale(0.1, n_agents=50, n_pulls_in_epoch=100)
    0.002
    """
    epsilon = check_epsilon("epsilon", epsilon)
    n_r = check_int_at_least("n_pulls_in_epoch", n_pulls_in_epoch, 1)
    divisor = _li_song_divisor(n_agents, partial, n_participants, participation_rate)
    return 1.0 / (divisor * epsilon * n_r)


def li_song_claimed_epsilon(
    epsilon: float,
    *,
    n_agents: int,
    partial: bool = False,
    n_participants: int | None = None,
    participation_rate: float | None = None,
) -> float:
    """Pure ε per message that the paper's own analysis implies: ``M ε`` (or ``N ε``).

    Theorems 1, 3 and 4 state "Mε-differentially private"; App. B derives it as
    sensitivity / scale ``= (1/n_r) / (1/(M ε n_r))``. The input ε is *not* the
    guarantee (li_song.md §3.2 "Important reading note"): report both. Under partial
    participation the noise is calibrated to ``N = ⌈p M⌉``, so the analysis gives
    ``N ε``; Theorem 2's text still says ``M ε``, which is true but loose since
    ``N <= M`` (li_song.md §3.5 P4).

    The claim is per message (Definition 1, pure DP, neighbors differ in one
    reward). Each reward enters one (agent, arm, epoch) release and the noise is
    reused, so by adaptive parallel composition the whole transcript is also
    ``M ε``-DP (li_song.md §3.3; the paper does not say so).

    Parameters
    ----------
    epsilon : float
        Input ε, > 0 and finite.
    n_agents, partial, n_participants, participation_rate
        As in `li_song_epoch_scale`.

    Returns
    -------
    float
        Claimed ε (δ = 0).

    Raises
    ------
    ValueError
        As in `li_song_epoch_scale`.

    Examples
    --------
    >>> li_song_claimed_epsilon(0.1, n_agents=50)
    5.0
    >>> li_song_claimed_epsilon(0.1, n_agents=50, partial=True, participation_rate=0.2)
    1.0
    """
    epsilon = check_epsilon("epsilon", epsilon)
    return _li_song_divisor(n_agents, partial, n_participants, participation_rate) * (
        epsilon
    )


# ---------------------------------------------------------------------------------
# Dubey & Pentland (AAMAS 2020): the interval release mechanism (reconstructed)
# ---------------------------------------------------------------------------------

#: Noise rules of the interval mechanism: ``"decaying"`` is Tossou & Dimitrakakis'
#: ``b(n) = n**-(1 - θ/2)`` (byzantine.md "TD16"), ``"fixed"`` is ``b(n) = 1/(n ε)``.
INTERVAL_RULES = ("decaying", "fixed")

#: Every formula of the AAMAS privacy section was lost from the available text
#: (byzantine.md §0). Confidence of each reconstruction, as byzantine.md gives it:
#: R-h/R-m/R-l = reconstructed with high/medium/low confidence, D = derived there.
INTERVAL_CONFIDENCE = {
    "sensitivity": "R-h: empirical mean of n rewards in [0, 1] has sensitivity 1/n "
    "(§3.3)",
    "interval": "R-m: update interval f = ceil(1/epsilon) (§2.3, from DP-UCB-INT "
    "reproductions)",
    "schedule": "R-m: release when the own pull count is a multiple of f (§2.3)",
    "decaying": "R-m: Laplace scale b(n) = n**-(1 - theta/2) (§2.3)",
    "fixed": "R-l: Laplace scale b(n) = 1/(n epsilon) (§2.3, §3.4)",
    "per_release_epsilon": "R-m: (1/n)/b(n) = n**(-theta/2) (decaying); R-l: "
    "epsilon (fixed) (§3.4)",
    "composition": "R-m/R-l: (epsilon', delta') by advanced composition over the "
    "releases (§0.1, §3.6)",
    "homogeneous": "D (R-m/R-l route): floor(T/f)-fold advanced composition "
    "(Dwork et al. 2010) with epsilon_0 = max_j epsilon_j (§3.6)",
    "zeta": "D (R-l route): T-independent bound via zeta(theta), the report's "
    "reading of Tossou & Dimitrakakis Thm 3.4 / Cor. 3.1 (§3.6)",
    "basic": "D: sum of per-release epsilons (exact pure epsilon of the worst "
    "record; not claimed by the paper)",
}


def _check_interval_rule(rule: str, theta: float | None) -> float | None:
    """Validate ``rule`` and ``theta`` (required, in (1, 2), for "decaying")."""
    if rule not in INTERVAL_RULES:
        raise ValueError(f"`rule` must be one of {INTERVAL_RULES}, got {rule!r}.")
    if theta is None:
        if rule == "decaying":
            raise ValueError("`theta` is required for rule='decaying'.")
        return None
    theta = check_real("theta", theta)
    if not 1.0 < theta < 2.0:
        raise ValueError(f"`theta` must be in (1, 2), got {theta!r}.")
    return theta


def _check_counts(counts: object) -> np.ndarray:
    """Return ``counts`` as a one-dimensional int64 array of values >= 1."""
    array = np.asarray(counts)
    if array.ndim != 1:
        raise ValueError(f"`counts` must be one-dimensional, got shape {array.shape}.")
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"`counts` must hold integers, got dtype {array.dtype}.")
    if array.min() < 1:
        raise ValueError(f"`counts` must be >= 1, got {int(array.min())}.")
    return array.astype(np.int64)


def interval_length(epsilon: float) -> int:
    """Update interval ``f = ⌈1/ε⌉`` of the interval mechanism [R-m].

    Tossou & Dimitrakakis' DP-UCB-INT as reproduced in byzantine.md §2.3 (a MATLAB
    reproduction uses ``ceil``; a Python one uses ``int``, i.e. floor). ``1/ε``
    within 1e-9 (relative) of an integer is taken as that integer.

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or infinite.

    Examples
    --------
    >>> interval_length(0.1), interval_length(0.3), interval_length(1.0)
    (10, 4, 1)
    """
    return _ceil_tolerant(1.0 / check_epsilon("epsilon", epsilon))


def interval_release_schedule(epsilon: float, horizon: int) -> np.ndarray:
    """Pull counts at which one agent-arm stream releases a new noisy mean [R-m].

    A release happens when the agent's own pull count of the arm reaches a multiple
    of ``f = interval_length(epsilon)``: ``f, 2f, ..., ⌊horizon/f⌋ f``. These are
    counts, not rounds; they are rounds only if the arm is pulled every round.

    Parameters
    ----------
    epsilon : float
        The paper's input ε (``ε_dp``), > 0 and finite.
    horizon : int
        Largest pull count of the stream (at most ``T``), >= 1.

    Returns
    -------
    ndarray of int64, shape (⌊horizon/f⌋,)
        Counts ``n_j`` at the releases; release ``j`` is the mean of the first
        ``n_j`` rewards. Empty if ``horizon < f``.

    Raises
    ------
    ValueError
        If ``epsilon <= 0`` or infinite, or ``horizon < 1``.

    Examples
    --------
    >>> interval_release_schedule(0.3, 13)
    array([ 4,  8, 12])
    """
    f = interval_length(epsilon)
    horizon = check_int_at_least("horizon", horizon, 1)
    return np.arange(f, horizon + 1, f, dtype=np.int64)


def interval_noise_scales(
    epsilon: float,
    counts: object,
    *,
    theta: float | None = None,
    rule: str = "decaying",
) -> np.ndarray:
    """Laplace scale of each release of the interval mechanism.

    ``"decaying"`` [R-m]: ``b(n) = n**-(1 - θ/2)`` (Tossou & Dimitrakakis' "privacy
    rate" ``v``, written θ here; 1.1 in their experiments); ε only sets the
    schedule. ``"fixed"`` [R-l]: ``b(n) = 1/(n ε)``, i.e. ε per release.

    Parameters
    ----------
    epsilon : float
        Input ε, > 0 and finite.
    counts : array_like of int, shape (n_releases,)
        Pull counts ``n_j >= 1`` at the releases (`interval_release_schedule`).
    theta : float, optional
        Rate constant in (1, 2); required for ``rule="decaying"``, unused (but
        validated) for ``"fixed"``.
    rule : {"decaying", "fixed"}
        Noise rule.

    Returns
    -------
    ndarray of float64, shape (n_releases,)
        Scales ``b(n_j)``; with sensitivity ``1/n_j`` each release is pure
        ``(1/n_j)/b(n_j)``-DP (`interval_release_epsilons`).

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, a count < 1, ``theta`` not in (1, 2) or missing for
        ``"decaying"``, or an unknown ``rule``.
    TypeError
        If ``counts`` are not integers.

    Examples
    --------
    >>> interval_noise_scales(0.5, [2, 4], rule="fixed")
    array([1. , 0.5])
    >>> interval_noise_scales(0.5, [4], theta=1.0 + 1e-12).round(6)
    array([0.5])
    """
    epsilon = check_epsilon("epsilon", epsilon)
    theta = _check_interval_rule(rule, theta)
    n = _check_counts(counts).astype(np.float64)
    if rule == "fixed":
        return 1.0 / (n * epsilon)
    return n ** -(1.0 - theta / 2.0)


def interval_release_epsilons(
    epsilon: float,
    counts: object,
    *,
    theta: float | None = None,
    rule: str = "decaying",
) -> np.ndarray:
    """Per-release pure ε the paper claims for each message [R-m / R-l].

    Lemma "Privacy of Outgoing Messages": each message is ε_n-DP because the noisy
    mean with sensitivity ``1/n`` gets Laplace noise of scale ``b(n)``, so
    ``ε_n = (1/n)/b(n)``: ``n**(-θ/2)`` (decaying) or ``ε`` (fixed).

    Parameters and exceptions are those of `interval_noise_scales`.

    Returns
    -------
    ndarray of float64, shape (n_releases,)

    Examples
    --------
    >>> interval_release_epsilons(0.1, [100], theta=1.5).round(6)
    array([0.031623])
    """
    epsilon = check_epsilon("epsilon", epsilon)
    theta = _check_interval_rule(rule, theta)
    n = _check_counts(counts).astype(np.float64)
    if rule == "fixed":
        return np.full(n.shape, epsilon)
    return n ** (-theta / 2.0)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IntervalClaim:
    """The AAMAS privacy claim for one agent-arm stream; see `interval_claimed_guarantee`.

    Attributes
    ----------
    rule : str
        Noise rule.
    theta : float or None
        Rate constant (None under ``"fixed"`` if not given).
    interval : int
        ``f = ⌈1/ε⌉``.
    n_releases : int
        ``⌊horizon/f⌋``.
    per_release_epsilon : float
        Largest per-message ε (at the first release ``n = f``); 0 without releases.
    target_delta : float
        ``δ'`` of the composed claim.
    homogeneous_epsilon : float
        ``ε₀ sqrt(2k ln(1/δ')) + k ε₀ (e^ε₀ − 1)``, ``k = n_releases``,
        ``ε₀ = per_release_epsilon``.
    zeta_epsilon : float
        ``sqrt(2 ln(1/δ') ζ(θ) f^-θ) + ζ(θ) f^-θ (e^ε₁ − 1)/ε₁``, ``ε₁ = f^(-θ/2)``,
        valid for every horizon; ``inf`` under ``"fixed"`` (Σ ε_j² diverges).
    basic_epsilon : float
        ``Σ_j ε_j``, the exact pure ε of the worst record (δ = 0).
    """

    rule: str
    theta: float | None
    interval: int
    n_releases: int
    per_release_epsilon: float
    target_delta: float
    homogeneous_epsilon: float
    zeta_epsilon: float
    basic_epsilon: float


def interval_claimed_guarantee(
    epsilon: float,
    horizon: int,
    *,
    target_delta: float,
    theta: float | None = None,
    rule: str = "decaying",
) -> IntervalClaim:
    """The (ε', δ') the AAMAS paper claims for one agent-arm release stream.

    Lemma "Privacy Guarantee" (statement lost): "for each arm, a new mean is
    released only ⟦T/f⟧ times ..., a ⟦T/f⟧-fold composition theorem (Dwork et al.,
    2010) identical to (Tossou and Dimitrakakis, 2016) can be applied with ⟦δ'⟧.
    Using Theorem 3.4 and then Corollary 3.1 of (Tossou and Dimitrakakis, 2016)
    subsequently provides us the result." The closed form is lost; this returns the
    candidates of byzantine.md §3.6 with their confidence (`INTERVAL_CONFIDENCE`):

    - ``homogeneous_epsilon`` (R-m/R-l route, closed form D): the ⌊T/f⌋-fold
      advanced composition the surviving sentence names, with
      ``ε₀ = max_j ε_j``. Grows like ``sqrt(T)``.
    - ``zeta_epsilon`` (R-l): heterogeneous advanced composition bounded with
      ``Σ_j (jf)^-θ <= f^-θ ζ(θ)``; T-independent. The report's guess for
      Tossou & Dimitrakakis' Cor. 3.1 (it also fits the ζ in the regret theorem).
    - ``basic_epsilon`` (D, not a claim): ``Σ_j ε_j``, pure.

    Per message the claim is ``per_release_epsilon``-DP, pure (the per-message
    Lemma; the definition's "+δ", if any, is lost). Neighbors differ in one reward
    of one agent; composition is over the releases of one (agent, arm) stream,
    parallel over arms and agents (byzantine.md §3.5).

    Parameters
    ----------
    epsilon : float
        Input ε (``ε_dp``), > 0 and finite.
    horizon : int
        Largest pull count of the stream (``T`` in the worst case), >= 1.
    target_delta : float
        ``δ'`` in (0, 1).
    theta, rule
        As in `interval_noise_scales`.

    Returns
    -------
    IntervalClaim

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``horizon < 1``, ``target_delta`` not in (0, 1),
        ``theta`` not in (1, 2) or missing for ``"decaying"``, or an unknown rule.

    References
    ----------
    .. [1] Dubey & Pentland, "Private and Byzantine-Proof Cooperative
       Decision-Making", AAMAS 2020 (arXiv:2205.14174), §3 Lemmas "Private release
       of means", "Privacy of Outgoing Messages", "Privacy Guarantee".
    .. [2] Dwork, Rothblum & Vadhan, "Boosting and Differential Privacy", FOCS 2010,
       Thm III.3.

    Examples
    --------
    >>> claim = interval_claimed_guarantee(0.1, 1000, target_delta=1e-5, theta=1.1)
    >>> claim.interval, claim.n_releases, round(claim.homogeneous_epsilon, 1)
    (10, 100, 22.7)
    """
    epsilon = check_epsilon("epsilon", epsilon)
    f = interval_length(epsilon)
    horizon = check_int_at_least("horizon", horizon, 1)
    target_delta = _check_open_unit("target_delta", target_delta)
    theta = _check_interval_rule(rule, theta)
    counts = interval_release_schedule(epsilon, horizon)
    per_release = interval_release_epsilons(epsilon, counts, theta=theta, rule=rule)
    k = int(counts.size)
    log_term = math.log(1.0 / target_delta)
    eps0 = float(per_release[0]) if k else 0.0
    homogeneous = eps0 * math.sqrt(2.0 * k * log_term) + k * eps0 * math.expm1(eps0)
    if rule == "fixed":
        zeta_epsilon = math.inf
    else:
        eps1 = f ** (-theta / 2.0)
        squares = float(special.zeta(theta, 1)) * f ** (-theta)
        zeta_epsilon = (
            math.sqrt(2.0 * log_term * squares) + squares * math.expm1(eps1) / eps1
        )
    return IntervalClaim(
        rule=rule,
        theta=theta,
        interval=f,
        n_releases=k,
        per_release_epsilon=eps0,
        target_delta=target_delta,
        homogeneous_epsilon=homogeneous,
        zeta_epsilon=zeta_epsilon,
        basic_epsilon=float(per_release.sum()),
    )
