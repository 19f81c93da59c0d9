"""The neighbouring pair of every audit, and reward-stream pairs at the worst positions.

:class:`NeighboringPair` is the audit's one neighbouring-pair type: two datasets, the
relation, and (0-based) where they differ. Under ``REPLACE_ONE_REWARD`` two streams
differ in one round's reward (:func:`stream_pair`). For a binary tree counter the
worst record is the one covered by the most released nodes; over a horizon ``T`` that
is the first round (``t = 0``, the papers' round 1), which every one of the
``floor(log2 T) + 1`` levels covers (Chan, Shi & Song 2011, Sec. 3.4); with only the
prefixes ``1..R`` released it is still the first round, in ``floor(log2 R) + 1``
released nodes. Extreme values (``low``
in one world, ``high`` in the other) make the node sums differ by the full
sensitivity.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.tree import nodes_covering
from fedpriv.privacy.checks import check_int_at_least, check_real
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

__all__ = [
    "NeighboringPair",
    "SingleWorldTable",
    "stream_horizon",
    "stream_pair",
    "table_reward_pair",
    "worst_case_reward_pair",
    "worst_tree_position",
]

#: Most table entries :meth:`SingleWorldTable.pull_sums` reads at once.
_PREFIX_ELEMENTS = 1 << 22


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class NeighboringPair:
    """Two neighboring datasets D and D' (any objects the mechanism accepts).

    The one neighbouring-pair type of the audit: a black-box mechanism's two inputs,
    a reward stream and its neighbour (:func:`stream_pair`), or two reward tables
    (:func:`fedpriv.audit.regression.strategies.neighboring_reward_tables`). Where
    the changed record is known, ``agent``, ``t`` and ``arm`` locate it, **0-based**
    like every index of fedpriv (CONTRIBUTING.md, Naming: ``t`` is the 0-based round); the papers'
    1-based round is ``tau = t + 1``.

    Attributes
    ----------
    dataset, dataset_prime : Any
        D and D'. They must be picklable to run on a process pool or dask.
    neighboring_relation : NeighboringRelation, optional
        The relation under which they are neighbors (reported, not checked); a
        relation's name is accepted.
    description : str
        Free text for reports (which record differs, and how).
    agent, t, arm : int or None
        The changed record, 0-based (keyword-only): the agent, the round and the arm;
        None when not located or when every agent/arm of round ``t`` changes.
    observed : ndarray of bool, optional
        Which entries of the datasets are observed, shared by both worlds (for a
        reward stream: the rounds in which the arm is pulled); None means all.

    Raises
    ------
    TypeError
        If ``description`` is not a string or a location is not an int.
    ValueError
        If ``neighboring_relation`` is an unknown name or a location is negative.

    Notes
    -----
    Compared by identity (``eq=False``): datasets are often arrays, whose ``==`` is
    elementwise.
    """

    dataset: Any
    dataset_prime: Any
    neighboring_relation: NeighboringRelation | None = None
    description: str = ""
    _: dataclasses.KW_ONLY
    agent: int | None = None
    t: int | None = None
    arm: int | None = None
    observed: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.neighboring_relation is not None:
            # a relation's name is accepted too; an unknown one is a ValueError
            object.__setattr__(
                self, "neighboring_relation", parse_relation(self.neighboring_relation)
            )
        if not isinstance(self.description, str):
            raise TypeError(
                f"`description` must be a string, got {type(self.description).__name__}."
            )
        for name in ("agent", "t", "arm"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_int_at_least(name, getattr(self, name), 0))


def stream_pair(
    stream: np.ndarray,
    stream_prime: np.ndarray,
    *,
    t: int,
    observed: np.ndarray | None = None,
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE_REWARD,
) -> NeighboringPair:
    """One agent-arm reward stream in two neighboring worlds, differing at round ``t``.

    Parameters
    ----------
    stream, stream_prime : ndarray of float64, shape (horizon,)
        Rewards of rounds ``0..horizon-1`` in D and D'; they differ only at ``t``.
    t : int
        The differing round, 0-based (the papers' round ``tau = t + 1``).
    observed : ndarray of bool, shape (horizon,), optional
        Rounds in which the arm is pulled (shared by both worlds); default every round.
    neighboring_relation : NeighboringRelation
        Default ``REPLACE_ONE_REWARD``.

    Returns
    -------
    NeighboringPair
        ``dataset``/``dataset_prime`` the two streams, ``t`` the changed round and
        ``observed`` the mask (always an array).

    Raises
    ------
    ValueError
        If the streams are not 1-D of equal length, ``observed`` has another shape,
        or the streams do not differ exactly at ``t``.

    Examples
    --------
    >>> pair = stream_pair(np.array([1.0, 0.0]), np.array([0.0, 0.0]), t=0)
    >>> pair.t, stream_horizon(pair)
    (0, 2)
    """
    stream = np.asarray(stream, dtype=np.float64)
    stream_prime = np.asarray(stream_prime, dtype=np.float64)
    if stream.shape != stream_prime.shape or stream.ndim != 1:
        raise ValueError("`stream` and `stream_prime` must be 1-D of equal length.")
    observed = (
        np.ones(stream.shape, dtype=bool) if observed is None else np.asarray(observed, dtype=bool)
    )
    if observed.shape != stream.shape:
        raise ValueError(f"`observed` must have shape {stream.shape}, got {observed.shape}.")
    differ = np.flatnonzero(stream != stream_prime)
    if differ.size != 1 or differ[0] != t:
        raise ValueError(
            f"the streams must differ exactly at round `t` = {t} (0-based); "
            f"they differ at rounds {differ.tolist()}."
        )
    return NeighboringPair(stream, stream_prime, neighboring_relation, t=t, observed=observed)


def stream_horizon(pair: NeighboringPair) -> int:
    """Number of rounds of a reward-stream pair (:func:`stream_pair`).

    Parameters
    ----------
    pair : NeighboringPair
        Built by :func:`stream_pair` (1-D datasets, ``t`` and ``observed`` set).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``pair`` is not a reward-stream pair.
    """
    if (
        not isinstance(pair, NeighboringPair)
        or pair.t is None
        or pair.observed is None
        or np.ndim(pair.dataset) != 1
    ):
        raise TypeError("`pair` must be a reward-stream NeighboringPair (see stream_pair).")
    return int(np.size(pair.dataset))


def worst_tree_position(horizon: int) -> int:
    """The round ``t`` covered by the most tree nodes over ``horizon`` rounds (the smallest such).

    Parameters
    ----------
    horizon : int
        ``T`` >= 1 (only the first 4096 rounds are searched; round 1 always reaches the
        maximum depth).

    Returns
    -------
    int
        0-based round ``t`` (the tree's node numbering is 1-based: round ``t`` is
        leaf ``tau = t + 1``).

    Raises
    ------
    ValueError
        If ``horizon < 1``.

    Examples
    --------
    >>> worst_tree_position(16), worst_tree_position(1024)
    (0, 0)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    coverage = [nodes_covering(tau, horizon).size for tau in range(1, min(horizon, 4096) + 1)]
    return int(np.argmax(coverage))


def worst_case_reward_pair(
    horizon: int, *, low: float = 0.0, high: float = 1.0, background: float | None = None
) -> NeighboringPair:
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
    NeighboringPair
        The two streams of shape ``(horizon,)`` (:func:`stream_pair`) and the changed
        round ``t`` (0-based).

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
    t = worst_tree_position(horizon)
    stream = np.full(horizon, fill, dtype=np.float64)
    stream_prime = stream.copy()
    stream[t], stream_prime[t] = high, low
    return stream_pair(stream, stream_prime, t=t, observed=np.ones(horizon, dtype=bool))


# ---------------------------------------------------------------------------------
# End-to-end neighbours on adaptive reward tables (added for audit.endtoend_*)
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

    def pull_sums(
        self,
        trials: np.ndarray,
        agents: np.ndarray,
        arms: np.ndarray,
        start: np.ndarray,
        length: np.ndarray,
    ) -> np.ndarray | None:
        """Sums of the one world's rewards of pulls ``start .. start + length - 1``.

        The bulk read of Li & Song's epoch loop (``epoch_sums`` of
        :mod:`fedpriv.algorithms.li_song.core`). Every sample reads the same world, so
        the rewards of each (agent, arm) asked for are read once, up to the furthest
        pull asked, and the sums are differences of their prefix sums: the entries of
        :meth:`rewards`, and bit for bit their sum in any order, because they are
        whole numbers (0 or 1: Bernoulli rewards, overrides at the extremes) whose
        sums below 2**53 are exact. Returns None, and the caller reads entry by entry
        (and checks the values), when an entry is not 0 or 1 or when the prefixes
        would hash more entries than the pairs ask for (one trial, long epochs) or more
        than ``2**22``.

        Parameters
        ----------
        trials : ndarray of int64, shape (P,)
            Ignored (every sample reads the one world).
        agents : ndarray of int64, shape (P, A)
            Agents summed for each pair.
        arms : ndarray of int64, shape (P,)
            Arm of each pair.
        start : ndarray of int64, shape (P,)
            First pull index (0-based) of each pair.
        length : ndarray of int64, shape (P,)
            Number of pulls summed, >= 0.

        Returns
        -------
        ndarray of float64, shape (P, A), or None
            The reward sums (whole numbers), or None as described above.
        """
        agents = np.asarray(agents)
        arms = np.asarray(arms)
        start = np.asarray(start, dtype=np.int64)
        stop = start + np.asarray(length, dtype=np.int64)
        if agents.ndim != 2 or agents.shape[0] == 0 or agents.size == 0:
            return None
        furthest = int(stop.max())
        agent_ids, agent_of = np.unique(agents, return_inverse=True)
        arm_ids, arm_of = np.unique(arms, return_inverse=True)
        n_read = agent_ids.size * arm_ids.size * furthest
        if n_read > min(_PREFIX_ELEMENTS, int((stop - start).sum()) * agents.shape[1]):
            return None
        x = self.rewards(
            0, agent_ids[:, None, None], arm_ids[None, :, None], np.arange(furthest)[None, None, :]
        )
        if not np.all((x == 0.0) | (x == 1.0)):
            return None
        prefix = np.zeros((agent_ids.size, arm_ids.size, furthest + 1))
        np.cumsum(x, axis=2, out=prefix[:, :, 1:])
        a = agent_of.reshape(agents.shape)
        k = arm_of.reshape(-1)[:, None]
        return prefix[a, k, stop[:, None]] - prefix[a, k, start[:, None]]

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
            self.table.with_override(
                agent=agent, arm=arm, pull=pull, value=value, trial=self.world_trial
            ),
            self.world_trial,
        )


def table_reward_pair(
    table: object,
    *,
    agent: int,
    arm: int,
    pull: int,
    value_d: float | None = None,
    value_d_prime: float | None = None,
    world_trial: int = 0,
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
    return (
        base.with_override(agent=agent, arm=arm, pull=pull, value=v_d),
        base.with_override(agent=agent, arm=arm, pull=pull, value=v_dp),
    )
