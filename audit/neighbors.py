"""Neighboring reward streams, built at the positions where a leak would be largest.

Under ``REPLACE_ONE_REWARD`` two streams differ in one round's reward. For a binary
tree counter the worst record is the one covered by the most released nodes; over a
horizon ``T`` that is round 1, which every one of the ``floor(log2 T) + 1`` levels
covers (gossip.md §3.4 item 1, §6 A1). Extreme values (``low`` in one world, ``high``
in the other) make the node sums differ by the full sensitivity.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from privacy._checks import check_int_at_least, check_real
from privacy.relations import NeighboringRelation
from privacy.tree import nodes_covering

__all__ = ["NeighboringStreams", "worst_case_reward_pair", "worst_tree_position"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NeighboringStreams:
    """One agent-arm reward stream in two neighboring worlds D and D'.

    Attributes
    ----------
    stream, stream_prime : ndarray of float64, shape (horizon,)
        Rewards of rounds ``1..horizon`` in D and D'; they differ only at ``position``.
    observed : ndarray of bool, shape (horizon,)
        Rounds in which the arm is pulled (shared by both worlds).
    position : int
        The differing round ``tau`` (1-based).
    relation : NeighboringRelation
    """

    stream: np.ndarray
    stream_prime: np.ndarray
    observed: np.ndarray
    position: int
    relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE_REWARD

    def __post_init__(self) -> None:
        if self.stream.shape != self.stream_prime.shape or self.stream.ndim != 1:
            raise ValueError("`stream` and `stream_prime` must be 1-D of equal length.")
        differ = np.flatnonzero(self.stream != self.stream_prime)
        if differ.size != 1 or differ[0] != self.position - 1:
            raise ValueError(
                f"the streams must differ exactly at round `position` = {self.position}; "
                f"they differ at rounds {(differ + 1).tolist()}."
            )

    @property
    def horizon(self) -> int:
        """Number of rounds."""
        return int(self.stream.size)


def worst_tree_position(horizon: int) -> int:
    """The round covered by the most tree nodes over ``horizon`` rounds (the smallest such).

    Examples
    --------
    >>> worst_tree_position(16), worst_tree_position(1024)
    (1, 1)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    coverage = [
        nodes_covering(tau, horizon).size for tau in range(1, min(horizon, 4096) + 1)
    ]
    return int(np.argmax(coverage)) + 1


def worst_case_reward_pair(
    horizon: int,
    *,
    low: float = 0.0,
    high: float = 1.0,
    background: float | None = None,
) -> NeighboringStreams:
    """The pair of streams with ``high`` (D) vs ``low`` (D') at the worst tree position.

    Parameters
    ----------
    horizon : int
        ``T`` >= 1.
    low, high : float
        Declared reward range; the changed reward takes both extremes.
    background : float, optional
        Value of every other round (default ``low``); the arm is pulled every round.

    Raises
    ------
    ValueError
        If ``horizon < 1`` or ``low >= high``.
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    low, high = check_real("low", low), check_real("high", high)
    if not low < high:
        raise ValueError(f"`low` must be < `high`, got {low!r} and {high!r}.")
    fill = low if background is None else check_real("background", background)
    position = worst_tree_position(horizon)
    stream = np.full(horizon, fill, dtype=np.float64)
    stream_prime = stream.copy()
    stream[position - 1], stream_prime[position - 1] = high, low
    return NeighboringStreams(
        stream=stream,
        stream_prime=stream_prime,
        observed=np.ones(horizon, dtype=bool),
        position=position,
    )
