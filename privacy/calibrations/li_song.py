"""Li & Song, CDP/DDP/HDP-MAB: per-epoch Laplace noise on each active arm's mean.

Per-epoch Laplace scale ``1/(M ε n_r)``: :func:`li_song_epoch_scale`,
:func:`li_song_claimed_epsilon`. Nothing here draws noise or charges an accountant.
Re-exported by :mod:`fedpriv.privacy.calibrations`.
"""

from __future__ import annotations

from fedpriv.privacy.calibrations._helpers import ceil_tolerant
from fedpriv.privacy.checks import check_epsilon, check_int_at_least, check_real

__all__ = [
    "DEPLOYMENT_FUNCTIONS",
    "li_song_claimed_epsilon",
    "li_song_epoch_scale",
    "li_song_mean_sensitivity",
    "li_song_participants",
]

#: The calibrations a deployment file may call (:mod:`fedpriv.privacy.deployment`).
DEPLOYMENT_FUNCTIONS = ("li_song_epoch_scale",)


# ---------------------------------------------------------------------------------
# Li & Song: per-epoch Laplace noise on each active arm's mean
# ---------------------------------------------------------------------------------


def li_song_participants(n_agents: int, participation_rate: float) -> int:
    """Number of uploading agents ``N = ⌈p M⌉`` under partial participation (§IV-B).

    ``p * M`` within 1e-9 (relative) of an integer is taken as that integer, so
    float noise never adds an agent (``0.7 * 10`` gives 7, not 8).

    Parameters
    ----------
    n_agents : int
        ``M`` >= 1.
    participation_rate : float
        ``p`` in (0, 1].

    Returns
    -------
    int
        ``N`` in [1, M].

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
    return ceil_tolerant(rate * n_agents)


def li_song_mean_sensitivity(n_pulls_in_epoch: int) -> float:
    """L1 sensitivity ``1 / n_r`` of one agent's per-epoch arm mean (App. B).

    The released statistic ``x̂_{i,k}(r)`` is the mean of the ``n_r`` rewards in
    [0, 1] of arm ``k`` at agent ``i`` in epoch ``r`` only; replacing one reward moves
    it by at most ``1 / n_r`` (equality for a 0 ↔ 1 flip), and no other arm's mean.
    Use the realised count: if an epoch is truncated or ``S(r)`` rounded, the
    sensitivity is ``1 / n_actual`` (fedpriv; Theorem 1's proof assumes ``n_r``).

    Parameters
    ----------
    n_pulls_in_epoch : int
        ``n_r`` >= 1, the realised number of pulls of the arm in the epoch.

    Returns
    -------
    float
        ``1 / n_r``, in reward units.

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
            raise ValueError("`n_participants` and `participation_rate` require `partial=True`.")
        return n_agents
    if (n_participants is None) == (rate is None):
        raise ValueError(
            "`partial=True` needs exactly one of `n_participants` or `participation_rate`."
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
       Multi-Armed Bandits", Alg. 1 line 9, §IV-B and App. B.

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
    guarantee (Alg. 1 line 9 divides the noise by M): report both. Under partial
    participation the noise is calibrated to ``N = ⌈p M⌉``, so the analysis gives
    ``N ε``; Theorem 2's text still says ``M ε``, which is true but loose since
    ``N <= M`` (§IV-B, Theorem 2).

    The claim is per message (Definition 1, pure DP, neighbors differ in one
    reward). Each reward enters one (agent, arm, epoch) release and the noise is
    reused, so by adaptive parallel composition the whole transcript is also
    ``M ε``-DP (fedpriv's derivation; the paper does not say so).

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
    return _li_song_divisor(n_agents, partial, n_participants, participation_rate) * (epsilon)
