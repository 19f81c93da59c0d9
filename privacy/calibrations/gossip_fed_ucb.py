"""Zhu et al. (2021), Fed_UCB: the tree counter's per-node noise.

§4.1: "Set ε' := ε / ⌈log T⌉" and add ``Lap(1/ε')`` to every tree node, claiming
ε-DP. The paper never states the base of ``log``. Algorithm 4 acts on ϑ̃(t−1)
(line 9) and sends ϑ̃(t−1) (line 19) for t = 1..T, so the prefixes 1..T−1 reach
an output and a record sits in ``floor(log2 (T-1)) + 1 = ⌈log2 T⌉`` of the nodes
that reach one (:func:`fedpriv.privacy.accounting.tree.released_tree_depth`): the corrected
calibration spends exactly ε on that view, ``ε' = ε / ⌈log2 T⌉`` (equal to the
paper's under log2), or ``ε / (floor(log2 T) + 1)`` when the final estimate
ϑ̃(T) is published too (``publish_final``).
"""

from __future__ import annotations

import math

from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.checks import check_epsilon, check_int_at_least

__all__ = [
    "DEPLOYMENT_FUNCTIONS",
    "PAPER_LOG_BASES",
    "gossip_fed_ucb_node_epsilon",
    "gossip_fed_ucb_released_prefixes",
    "gossip_fed_ucb_scale",
    "paper_log_rounds",
]

#: The calibrations a deployment file may call (:mod:`fedpriv.privacy.deployment`).
DEPLOYMENT_FUNCTIONS = ("gossip_fed_ucb_scale",)

#: Log bases a user may pick for the paper's ⌈log T⌉ (the paper leaves it unstated).
PAPER_LOG_BASES = {"2": 2.0, "e": math.e, "10": 10.0}


def paper_log_rounds(horizon: int, log_base: str) -> int:
    """The paper's ``⌈log T⌉`` in base ``log_base`` ("2", "e" or "10"), at least 1.

    Computed in exact integer arithmetic for base 2 (``(T - 1).bit_length()``) so that
    powers of two are not mis-rounded.

    Parameters
    ----------
    horizon : int
        ``T`` >= 1.
    log_base : {"2", "e", "10"}
        Base of the paper's log (Zhu et al. 2021, §4.1).

    Returns
    -------
    int
        ``max(1, ⌈log_base T⌉)``.

    Raises
    ------
    ValueError
        If ``horizon < 1`` or ``log_base`` is not one of the three.

    Examples
    --------
    >>> paper_log_rounds(16, "2"), paper_log_rounds(16, "e"), paper_log_rounds(600000, "e")
    (4, 3, 14)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    if log_base not in PAPER_LOG_BASES:
        raise ValueError(f"`log_base` must be one of {sorted(PAPER_LOG_BASES)}, got {log_base!r}.")
    if log_base == "2":
        value = (horizon - 1).bit_length()
    else:
        value = math.ceil(math.log(horizon) / math.log(PAPER_LOG_BASES[log_base]) - 1e-12)
    return max(1, value)


def gossip_fed_ucb_released_prefixes(horizon: int, *, publish_final: bool = False) -> int:
    """Prefixes of Fed_UCB's tree that reach an output over ``horizon`` rounds.

    Algorithm 4 (Zhu et al. 2021) acts on ϑ̃(t−1) (line 9) and sends ϑ̃(t−1) (line 19)
    at t = 1..T; no line outputs ϑ̃(T), so the prefixes 1..T−1 reach the view.
    ``publish_final`` adds the final estimate ϑ̃(T) (prefix T). At least 1: at T = 1
    the one prefix is charged though it reaches nothing (charging more is sound).

    Parameters
    ----------
    horizon : int
        ``T`` >= 1.
    publish_final : bool, default False
        Whether ϑ̃(T) is published too.

    Returns
    -------
    int
        ``T`` with ``publish_final``, else ``max(1, T - 1)``.

    Raises
    ------
    ValueError
        If ``horizon < 1``.

    Examples
    --------
    >>> gossip_fed_ucb_released_prefixes(16), gossip_fed_ucb_released_prefixes(16, publish_final=True)
    (15, 16)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    return horizon if publish_final else max(1, horizon - 1)


def _view_depth(horizon: int, publish_final: bool) -> int:
    """Most released nodes holding one record of Fed_UCB's view (see above)."""
    return tree_depth(gossip_fed_ucb_released_prefixes(horizon, publish_final=publish_final))


def gossip_fed_ucb_node_epsilon(
    epsilon: float, horizon: int, *, mode: str, log_base: str = "2", publish_final: bool = False
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
        ε' = ε / (nodes of the view that hold one record), which makes the view
        exactly ε-DP: ``⌈log2 T⌉`` nodes (prefixes 1..T−1, Algorithm 4 lines 9 and
        19), ``floor(log2 T) + 1`` with ``publish_final``.
    log_base : {"2", "e", "10"}
        Base of the paper's log (only used in ``"paper"`` mode).
    publish_final : bool
        Whether the final estimate ϑ̃(T) is published too (only used in
        ``"corrected"`` mode; :func:`gossip_fed_ucb_released_prefixes`).

    Returns
    -------
    float
        ε' in nats per tree node, > 0 (``inf`` for ε = ∞).

    Raises
    ------
    ValueError
        On ε <= 0, horizon < 1, an unknown mode or log base.
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if mode == "paper":
        return epsilon / paper_log_rounds(horizon, log_base)
    if mode == "corrected":
        return epsilon / _view_depth(horizon, publish_final)
    raise ValueError(f"`mode` must be 'paper' or 'corrected', got {mode!r}.")


def gossip_fed_ucb_scale(
    epsilon: float, horizon: int, *, mode: str, log_base: str = "2", publish_final: bool = False
) -> float:
    """Laplace scale ``b = l1_sensitivity / ε'`` per node (sensitivity 1, rewards in [0, 1]).

    ``0.0`` for ε = ∞ (no noise). Computed as ``levels / ε`` so that the corrected
    tree's ε ``depth / b`` rounds to exactly ε. Parameters as in
    :func:`gossip_fed_ucb_node_epsilon`.

    Parameters
    ----------
    epsilon : float
        The claimed total ε, in (0, inf].
    horizon : int
        ``T`` >= 1.
    mode : {"paper", "corrected"}
        As in :func:`gossip_fed_ucb_node_epsilon`.
    log_base : {"2", "e", "10"}
        Base of the paper's log (``"paper"`` mode only).
    publish_final : bool
        Whether ϑ̃(T) is published too (``"corrected"`` mode only).

    Returns
    -------
    float
        Laplace scale b >= 0 per node, in reward units (rewards in [0, 1]).

    Raises
    ------
    ValueError
        On ε <= 0, horizon < 1, an unknown mode or log base.

    Examples
    --------
    >>> gossip_fed_ucb_scale(1.0, 16, mode="paper"), gossip_fed_ucb_scale(1.0, 16, mode="corrected")
    (4.0, 4.0)
    >>> gossip_fed_ucb_scale(1.0, 16, mode="corrected", publish_final=True)
    5.0
    """
    epsilon = check_epsilon("epsilon", epsilon, allow_inf=True)
    if math.isinf(epsilon):
        return 0.0
    if mode == "paper":
        return paper_log_rounds(horizon, log_base) / epsilon
    if mode == "corrected":
        return _view_depth(horizon, publish_final) / epsilon
    raise ValueError(f"`mode` must be 'paper' or 'corrected', got {mode!r}.")
