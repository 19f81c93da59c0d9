"""Neighboring reward streams, built at the positions where a leak would be largest.

Under ``REPLACE_ONE_REWARD`` two streams differ in one round's reward. For a binary
tree counter the worst record is the one covered by the most released nodes; over a
horizon ``T`` that is round 1, which every one of the ``floor(log2 T) + 1`` levels
covers (Chan, Shi & Song 2011, Sec. 3.4); with only the prefixes ``1..R`` released
it is still round 1, in ``floor(log2 R) + 1`` released nodes. Extreme values (``low``
in one world, ``high`` in the other) make the node sums differ by the full
sensitivity.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fedpriv.privacy._checks import check_int_at_least, check_real
from fedpriv.privacy.relations import NeighboringRelation
from fedpriv.privacy.accounting.tree import nodes_covering

__all__ = [
    "NeighboringStreams",
    "SingleWorldTable",
    "table_reward_pair",
    "worst_case_reward_pair",
    "worst_tree_position",
]


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
    neighboring_relation : NeighboringRelation
    """

    stream: np.ndarray
    stream_prime: np.ndarray
    observed: np.ndarray
    position: int
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE_REWARD

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

    Parameters
    ----------
    horizon : int
        ``T`` >= 1 (only the first 4096 rounds are searched; round 1 always reaches the
        maximum depth).

    Returns
    -------
    int
        1-based round.

    Raises
    ------
    ValueError
        If ``horizon < 1``.

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

    Returns
    -------
    NeighboringStreams
        The two streams of shape ``(horizon,)`` and the changed round.

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


# ---------------------------------------------------------------------------------
# End-to-end neighbours on adaptive reward tables (used by the end-to-end audits)
# ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SingleWorldTable:
    """A reward table whose every trial reads trial ``world_trial`` of ``table``.

    Audits use the algorithms' ``n_trials`` axis as the sample axis; the counter-based
    tables of :mod:`fedpriv.algorithms.environments.bernoulli` draw a different world per trial, so this view
    pins one world (the dataset) for every sample. Only ``rewards`` is remapped;
    ``with_override`` returns another single-world view.

    Attributes
    ----------
    table : RewardTable-like
        Anything with ``rewards(trial, agent, arm, pull)`` and ``with_override``.
    world_trial : int
        The trial index whose rewards every trial sees.
    """

    table: object
    world_trial: int = 0

    @property
    def n_agents(self) -> int:
        """Agents of the underlying table."""
        return int(self.table.n_agents)

    @property
    def n_arms(self) -> int:
        """Arms of the underlying table."""
        return int(self.table.n_arms)

    def rewards(self, trial: object, agent: object, arm: object, pull: object) -> np.ndarray:
        """Rewards of world ``world_trial`` at broadcast ``(agent, arm, pull)``.

        Parameters
        ----------
        trial, agent, arm, pull : array_like of int
            Indices, broadcast together; ``trial`` is ignored (every sample reads the
            one
            world).

        Returns
        -------
        ndarray of float64, the broadcast shape
        """
        trial = np.asarray(trial)
        pinned = np.full(trial.shape, self.world_trial, dtype=np.int64)
        return self.table.rewards(pinned, agent, arm, pull)

    def with_override(self, *, agent: int, arm: int, pull: int, value: float) -> SingleWorldTable:
        """The neighbouring single-world table with one entry replaced.

        Parameters
        ----------
        agent, arm, pull : int
            The entry, as in :meth:`RewardTable.with_override`.
        value : float
            The new reward, in [0, 1].

        Returns
        -------
        SingleWorldTable

        Raises
        ------
        ValueError
            As :meth:`RewardTable.with_override`.
        """
        return SingleWorldTable(
            self.table.with_override(agent=agent, arm=arm, pull=pull, value=value,
                                     trial=self.world_trial),
            self.world_trial,
        )


def table_reward_pair(
    table: object, *, agent: int, arm: int, pull: int, value_d: float | None = None,
    value_d_prime: float | None = None, world_trial: int = 0,
) -> tuple[SingleWorldTable, SingleWorldTable]:
    """One reward changed in an adaptive reward table (actions re-derived), as two single-world tables.

    The ``pull``-th pull of ``arm`` by ``agent`` returns ``value_d`` in D and
    ``value_d_prime`` in D' (defaults: the table's own value in D and its flip
    ``1 - value`` in D', the extreme change for rewards in [0, 1]). Every other
    entry, and hence every other reward an adaptive algorithm may read, is shared.
    ``world_trial`` picks the world (trial index of ``table``) every sample reads.

    Parameters
    ----------
    table : RewardTable
        The adaptive reward table, e.g. ``env.reward_table(seed)``.
    agent, arm, pull : int
        The changed entry (``pull`` 0-based).
    value_d, value_d_prime : float, optional
        The entry's value in D and in D', in [0, 1].
    world_trial : int, default 0
        Trial of ``table`` every sample reads, >= 0.

    Returns
    -------
    tuple of (SingleWorldTable, SingleWorldTable)
        D and D'.

    Raises
    ------
    ValueError
        If the two values are equal or outside [0, 1], or an index is out of range.
    """
    base = SingleWorldTable(table, check_int_at_least("world_trial", world_trial, 0))
    own = float(np.asarray(base.rewards(0, agent, arm, pull)))
    v_d = own if value_d is None else check_real("value_d", value_d)
    v_dp = 1.0 - v_d if value_d_prime is None else check_real("value_d_prime", value_d_prime)
    if v_d == v_dp:
        raise ValueError(f"the two values must differ, got {v_d!r} twice.")
    return (base.with_override(agent=agent, arm=arm, pull=pull, value=v_d),
            base.with_override(agent=agent, arm=arm, pull=pull, value=v_dp))
