"""Zhou & Chowdhury (ICLR 2024), Private-FedLinUCB: the noise of each privacy protocol.

Zhou & Chowdhury, "On Differentially Private Federated Linear Contextual Bandits", ICLR 2024
(arXiv 2302.13945). Private-FedLinUCB (Alg. 1) runs LinUCB at every silo and, at the end of
every batch of ``B`` rounds (a fixed schedule), sends the batch's Gram matrix and reward
vector through a privacy protocol ``P = (R, S, A)``. Under silo-level LDP (Thm. 5.1) ``R``
is each silo's own binary-tree (p-sum) mechanism over its stream of batches with Gaussian
node noise; the server adds the silos' noisy p-sums. The formulas below are those of the
paper's experiment code for Fig. 2 (``LDPFedLinUCB``, ``SDPFedLinUCBAmp`` for Thm. 5.3),
which states the theorem each class implements; the constants of the theorems themselves
could not be read (the text available to fedpriv stops after the abstract), so every row
that uses them says so.

* tree depth ``κ = ⌊log₂(T/B)⌋ + 1`` (:func:`zc_tree_depth`);
* silo-level LDP node noise ``σ = L √(κ (ln(1/δ) + ε)) / ε`` (:func:`zc_ldp_noise_stddev`);
* shuffle model, amplification (Thm. 5.3)
  ``σ = L √(κ ln(1/δ) ln(1 + κ/(T δ)) ln(M κ/δ)) / (ε √M)`` (:func:`zc_amp_noise_stddev`);
* shuffle model, vector sum (Thm. 5.5): the regulariser's noise scale
  ``σ = L √(κ ln(1/δ)) ln(κ d²/δ) / ε`` (:func:`zc_vecsum_noise_stddev`; the released
  sums carry the binomial noise of :mod:`fedpriv.privacy.mechanisms.vector_sum`, this σ
  only sets ``λ = √κ σ (√(κ + ln(1/α)) + √d)``, without ``√M``);
* regulariser ``λ = √(M κ) σ (√(κ + ln(1/α)) + √d)``, ``√M`` without noise, and the
  confidence width ``β_t`` (:func:`zc_regularizer`, :func:`zc_confidence_width`).

The noise law: the Gram matrix gets ``(Z + Zᵀ)/2`` with ``Z_ij ~ N(0, σ²)`` (``N(0, σ²)``
on the diagonal, ``N(0, σ²/2)`` off it), the reward vector ``N(0, σ² I)``. So one release
of (Gram, reward vector) moved by ``(ΔG, Δu)`` is exactly ``μ``-GDP with
``μ = √(‖ΔG‖_F² + ‖Δu‖²) / σ`` (the whitened shift), and one user, in ``κ`` p-sums, gives
``√κ`` that (:func:`zc_user_sensitivity` bounds the shift).

Nothing here draws noise or charges an accountant.
"""

from __future__ import annotations

import math

from fedpriv.privacy.accounting.conversions import gaussian_dp_delta
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.checks import (
    check_epsilon,
    check_int_at_least,
    check_open_unit,
    check_positive,
)

__all__ = [
    "zc_amp_noise_stddev",
    "zc_confidence_width",
    "zc_exact_noise_stddev",
    "zc_ldp_noise_stddev",
    "zc_n_batches",
    "zc_regularizer",
    "zc_tree_depth",
    "zc_user_sensitivity",
    "zc_vecsum_noise_stddev",
]


def zc_n_batches(horizon: int, batch_size: int) -> int:
    """Number of batches that end within the horizon, ``⌊T/B⌋`` (syncs of Alg. 1).

    Parameters
    ----------
    horizon : int
        ``T`` >= 1 rounds per silo.
    batch_size : int
        ``B`` >= 1.

    Returns
    -------
    int
        ``⌊T/B⌋`` >= 0 (a last partial batch is never sent).

    Raises
    ------
    ValueError
        If an argument is < 1.

    Examples
    --------
    >>> zc_n_batches(10_000, 25), zc_n_batches(25_000, 25)
    (400, 1000)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    return horizon // batch_size


def zc_tree_depth(horizon: int, batch_size: int) -> int:
    """``κ = ⌊log₂(T/B)⌋ + 1``: p-sums that hold one batch (the code's ``N``).

    Parameters
    ----------
    horizon : int
        ``T`` >= ``batch_size``.
    batch_size : int
        ``B`` >= 1.

    Returns
    -------
    int
        ``κ`` >= 1.

    Raises
    ------
    ValueError
        If ``batch_size < 1`` or ``horizon < batch_size``.

    Examples
    --------
    >>> zc_tree_depth(10_000, 25), zc_tree_depth(25_000, 25)
    (9, 10)
    """
    n = zc_n_batches(horizon, batch_size)
    if n < 1:
        raise ValueError(f"`horizon` must be >= batch_size = {batch_size}, got {horizon}.")
    return tree_depth(n)


def zc_ldp_noise_stddev(epsilon: float, delta: float, *, depth: int, bound_x: float = 1.0) -> float:
    """Silo-level LDP node noise ``σ = L √(κ (ln(1/δ) + ε)) / ε`` (Thm. 5.1).

    As the paper's experiment code computes it (``LDPFedLinUCB``; Fig. 2).

    Parameters
    ----------
    epsilon : float
        Claimed ε > 0.
    delta : float
        Claimed δ in (0, 1).
    depth : int
        ``κ`` >= 1 (:func:`zc_tree_depth`).
    bound_x : float
        ``L``, the feature-norm bound, > 0.

    Returns
    -------
    float
        σ > 0, units of the statistics.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> round(zc_ldp_noise_stddev(0.2, 0.1, depth=9), 4)
    23.7293
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    depth = check_int_at_least("depth", depth, 1)
    bound_x = check_positive("bound_x", bound_x)
    return bound_x * math.sqrt(depth * (math.log(1.0 / delta) + epsilon)) / epsilon


def zc_amp_noise_stddev(
    epsilon: float, delta: float, *, depth: int, n_agents: int, horizon: int, bound_x: float = 1.0
) -> float:
    """Shuffle-model node noise by amplification (Thm. 5.3), as the experiment code has it.

    ``σ = L √(κ ln(1/δ) ln(1 + κ/(T δ)) ln(M κ/δ)) / (ε √M)`` (``SDPFedLinUCBAmp``).

    Parameters
    ----------
    epsilon : float
        Claimed ε > 0 of the shuffled view.
    delta : float
        Claimed δ in (0, 1).
    depth : int
        ``κ`` >= 1.
    n_agents : int
        ``M`` >= 1 silos.
    horizon : int
        ``T`` >= 1 rounds.
    bound_x : float
        ``L`` > 0.

    Returns
    -------
    float
        σ > 0.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    depth = check_int_at_least("depth", depth, 1)
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    horizon = check_int_at_least("horizon", horizon, 1)
    bound_x = check_positive("bound_x", bound_x)
    inner = (
        depth
        * math.log(1.0 / delta)
        * math.log(1.0 + depth / (horizon * delta))
        * math.log(n_agents * depth / delta)
    )
    return bound_x * math.sqrt(inner) / (epsilon * math.sqrt(n_agents))


def zc_regularizer(
    noise_stddev: float, *, n_agents: int, depth: int, dim: int, alpha: float = 0.01
) -> float:
    """``λ = √(M κ) σ (√(κ + ln(1/α)) + √d)``; ``√M`` when ``σ = 0`` (non-private).

    Parameters
    ----------
    noise_stddev : float
        σ >= 0.
    n_agents : int
        ``M`` >= 1.
    depth : int
        ``κ`` >= 1.
    dim : int
        ``d`` >= 1.
    alpha : float
        Confidence level ``α`` in (0, 1).

    Returns
    -------
    float
        λ > 0.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> zc_regularizer(0.0, n_agents=100, depth=9, dim=10)
    10.0
    """
    if not (isinstance(noise_stddev, (int, float)) and 0.0 <= noise_stddev < math.inf):
        raise ValueError(f"`noise_stddev` must be in [0, inf), got {noise_stddev!r}.")
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    depth = check_int_at_least("depth", depth, 1)
    dim = check_int_at_least("dim", dim, 1)
    alpha = check_open_unit("alpha", alpha)
    if noise_stddev == 0.0:
        return math.sqrt(n_agents)
    return (
        math.sqrt(n_agents * depth)
        * noise_stddev
        * (math.sqrt(depth + math.log(1.0 / alpha)) + math.sqrt(dim))
    )


def zc_confidence_width(
    t: int,
    *,
    regularizer: float,
    dim: int,
    n_agents: int,
    reward_stddev: float,
    alpha: float = 0.01,
    bound_x: float = 1.0,
    bound_theta: float | None = None,
) -> float:
    """``β_t = √λ S + R √(d ln(1 + t M L²/(d λ)) + ln(1/α))`` (the code's width).

    Parameters
    ----------
    t : int
        1-based round >= 1.
    regularizer : float
        λ > 0.
    dim : int
        ``d`` >= 1.
    n_agents : int
        ``M`` >= 1.
    reward_stddev : float
        ``R`` > 0, the reward noise scale.
    alpha : float
        In (0, 1).
    bound_x : float
        ``L`` > 0.
    bound_theta : float, optional
        ``S``; default ``√d`` (as the code sets it).

    Returns
    -------
    float
        β_t > 0.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    t = check_int_at_least("t", t, 1)
    lam = check_positive("regularizer", regularizer)
    dim = check_int_at_least("dim", dim, 1)
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    r = check_positive("reward_stddev", reward_stddev)
    alpha = check_open_unit("alpha", alpha)
    bound_x = check_positive("bound_x", bound_x)
    s = math.sqrt(dim) if bound_theta is None else check_positive("bound_theta", bound_theta)
    inner = dim * math.log(1.0 + t * n_agents * bound_x**2 / (dim * lam)) + math.log(1.0 / alpha)
    return math.sqrt(lam) * s + r * math.sqrt(inner)


def zc_user_sensitivity(bound_x: float = 1.0, bound_y: float = 1.0) -> float:
    """Largest ``√(‖ΔG‖_F² + ‖Δu‖²)`` when one user's ``(x, y)`` is replaced.

    ``G = Σ x xᵀ`` and ``u = Σ y x`` with ``‖x‖ <= L``, ``|y| <= Y``:
    ``‖x xᵀ − x' x'ᵀ‖_F² <= ‖x‖⁴ + ‖x'‖⁴ <= 2 L⁴`` (the cross term ``−2 (xᵀx')²`` is
    <= 0) and ``‖y x − y' x'‖ <= 2 L Y``, so the shift is at most ``√(2 L⁴ + 4 L² Y²)``
    (``√6`` at ``L = Y = 1``; a sound bound, not the exact maximum, which is
    ``√4.5`` there).

    Parameters
    ----------
    bound_x : float
        ``L`` > 0.
    bound_y : float
        ``Y`` > 0.

    Returns
    -------
    float
        The L2 sensitivity of one release, in the whitened units of
        :mod:`fedpriv.privacy.calibrations.zhou_chowdhury` (module docstring).

    Raises
    ------
    ValueError
        If a bound is not > 0.

    Examples
    --------
    >>> round(zc_user_sensitivity(), 4)
    2.4495
    """
    lx = check_positive("bound_x", bound_x)
    ly = check_positive("bound_y", bound_y)
    return math.sqrt(2.0 * lx**4 + 4.0 * lx**2 * ly**2)


def zc_exact_noise_stddev(epsilon: float, delta: float, *, depth: int, sensitivity: float) -> float:
    """fedpriv's corrected σ: the smallest σ whose ``κ`` releases give exactly (ε, δ).

    A user in ``κ`` p-sums, each moved by at most ``sensitivity`` (whitened units), is
    ``μ``-GDP with ``μ = √κ · sensitivity / σ``; σ solves ``δ_GDP(ε; μ) = δ`` (Dong, Roth &
    Su 2019, Cor. 2.13), so the view spends exactly the claim.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    depth : int
        ``κ`` >= 1.
    sensitivity : float
        Per-release L2 shift of one user, > 0.

    Returns
    -------
    float
        σ > 0.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> round(zc_exact_noise_stddev(1.0, 1e-5, depth=1, sensitivity=1.0), 2)
    3.73
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    depth = check_int_at_least("depth", depth, 1)
    sensitivity = check_positive("sensitivity", sensitivity)
    from scipy import optimize  # imported on use: heavy

    high = 1.0
    while gaussian_dp_delta(high, epsilon) < delta:
        high *= 2.0
    mu = optimize.brentq(lambda m: gaussian_dp_delta(m, epsilon) - delta, 1e-12, high, xtol=1e-14)
    return math.sqrt(depth) * sensitivity / mu * (1.0 + 1e-9)  # never below: rounding


def zc_vecsum_noise_stddev(
    epsilon: float, delta: float, *, depth: int, dim: int, bound_x: float = 1.0
) -> float:
    """The vector-sum protocol's noise scale for λ (Thm. 5.5), as the experiment code has it.

    ``σ = L √(κ ln(1/δ)) ln(κ d²/δ) / ε`` (``SDPFedLinUCBVecSum``); the regulariser is then
    ``λ = √κ σ (√(κ + ln(1/α)) + √d)`` (:func:`zc_regularizer` with ``n_agents = 1``).

    Parameters
    ----------
    epsilon : float
        Claimed ε > 0.
    delta : float
        Claimed δ in (0, 1).
    depth : int
        ``κ`` >= 1.
    dim : int
        ``d`` >= 1.
    bound_x : float
        ``L`` > 0.

    Returns
    -------
    float
        σ > 0.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> round(zc_vecsum_noise_stddev(0.2, 0.1, depth=9, dim=10), 3)
    207.242
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    depth = check_int_at_least("depth", depth, 1)
    dim = check_int_at_least("dim", dim, 1)
    bound_x = check_positive("bound_x", bound_x)
    return (
        bound_x
        * math.sqrt(depth * math.log(1.0 / delta))
        * math.log(depth * dim * dim / delta)
        / epsilon
    )
