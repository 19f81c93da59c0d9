"""Hypothesis strategies for neighboring reward tables, one per neighboring relation.

A reward table has shape ``(n_agents, horizon, n_arms)`` (CONTRIBUTING.md, Vectorize, minus the trial
axis). :func:`neighboring_reward_tables` draws a table and its neighbor under a
:class:`~fedpriv.privacy.relations.NeighboringRelation`, as the audit's one pair type
:class:`~fedpriv.audit.engine.neighbors.NeighboringPair` whose datasets are
``(rewards, present)`` (plus ``contexts`` under ``REPLACE_ONE_CONTEXT_REWARD``) and
whose ``agent``, ``t``, ``arm`` (0-based; None for "every") locate the change:

- ``REPLACE_ONE_REWARD``: one entry ``[agent, t, arm]`` changed (Zhu et al. 2021,
  Def. 1);
- ``REPLACE_ONE_CONTEXT_REWARD``: one agent's (context, reward) pair of round ``t``
  changed: ``contexts[agent, t]`` and ``rewards[agent, t, :]`` (Dubey & Pentland
  2020);
- ``USER_AT_ALL_AGENTS``: one user present at every agent, i.e. round ``t`` of every
  agent changed (FedUCB footnote 4);
- ``REPLACE_ONE``: one record ``rewards[agent, t, :]`` replaced;
- ``ADD_OR_REMOVE_ONE``: one record ``(agent, t)`` present in D and absent in D'
  (the ``present`` masks differ, the tables do not).

With ``extreme=True`` changed rewards take the extreme values ``low``/``high`` (the
worst case of a bounded-range relation). Importing this module imports hypothesis;
``audit/__init__`` does not import it.
"""

from __future__ import annotations

import numpy as np
from fedpriv.audit.engine.neighbors import NeighboringPair, stream_pair
from fedpriv.privacy.relations import NeighboringRelation
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["neighboring_pairs", "neighboring_reward_tables", "neighboring_streams", "reward_tables"]


def reward_tables(
    *, n_agents: int, horizon: int, n_arms: int, low: float = 0.0, high: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """Float64 tables of shape ``(n_agents, horizon, n_arms)`` with values in [low, high].

    Parameters
    ----------
    n_agents, horizon, n_arms : int
        The table's shape, each >= 1.
    low, high : float
        Range of the rewards, ``low < high``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of ndarray of float64
        Tables of shape ``(n_agents, horizon, n_arms)``, no NaN or infinity.
    """
    return hnp.arrays(
        np.float64,
        (n_agents, horizon, n_arms),
        elements=st.floats(low, high, allow_nan=False, allow_infinity=False),
    )


def _new_value(draw: st.DrawFn, old: float, low: float, high: float, extreme: bool) -> float:
    if extreme:
        return high if old != high else low
    value = draw(st.floats(low, high, allow_nan=False, allow_infinity=False))
    if value == old:
        value = high if old != high else low
    return value


@st.composite
def neighboring_reward_tables(
    draw: st.DrawFn,
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE_REWARD,
    *,
    max_agents: int = 3,
    max_horizon: int = 16,
    max_arms: int = 3,
    dim: int = 2,
    low: float = 0.0,
    high: float = 1.0,
    extreme: bool | None = None,
) -> NeighboringPair:
    """Draw a neighbouring pair of reward tables under ``neighboring_relation`` (module docstring).

    Parameters
    ----------
    neighboring_relation : NeighboringRelation
        The neighboring relation the two tables differ under.
    max_agents, max_horizon, max_arms : int
        Upper bounds of the drawn shape, each >= 1.
    dim : int
        Context dimension of the relations that change a context, >= 1.
    low, high : float
        Range of the rewards, ``low < high``.
    extreme : bool, optional
        Changed rewards take the range's ends ``low``/``high`` (True), any value of
        ``[low, high]`` (False), or either, drawn (None).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of NeighboringPair
        Datasets ``(rewards, present)`` or ``(rewards, present, contexts)``: rewards
        of shape ``(n_agents, horizon, n_arms)``, presence masks ``(n_agents,
        horizon)``, contexts ``(n_agents, horizon, dim)``; ``agent``/``t``/``arm``
        the changed record, 0-based, ``agent`` None under ``USER_AT_ALL_AGENTS`` and
        ``arm`` None unless ``REPLACE_ONE_REWARD``. (A ``@st.composite`` strategy:
        calling it returns the strategy.)

    Raises
    ------
    ValueError
        If ``low >= high`` or a size bound is < 1.
    """
    if not low < high:
        raise ValueError(f"`low` must be < `high`, got {low!r} and {high!r}.")
    if min(max_agents, max_horizon, max_arms, dim) < 1:
        raise ValueError("`max_agents`, `max_horizon`, `max_arms` and `dim` must be >= 1.")
    n_agents = draw(st.integers(1, max_agents))
    horizon = draw(st.integers(1, max_horizon))
    n_arms = draw(st.integers(1, max_arms))
    if extreme is None:
        extreme = draw(st.booleans())
    rewards = draw(
        reward_tables(n_agents=n_agents, horizon=horizon, n_arms=n_arms, low=low, high=high)
    )
    rewards_prime = rewards.copy()
    present = np.ones((n_agents, horizon), dtype=bool)
    present_prime = present.copy()
    contexts = contexts_prime = None
    agent: int | None = draw(st.integers(0, n_agents - 1))
    t = draw(st.integers(0, horizon - 1))
    arm: int | None = None
    if neighboring_relation is NeighboringRelation.REPLACE_ONE_REWARD:
        arm = draw(st.integers(0, n_arms - 1))
        rewards_prime[agent, t, arm] = _new_value(draw, rewards[agent, t, arm], low, high, extreme)
    elif neighboring_relation in (
        NeighboringRelation.REPLACE_ONE,
        NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
    ):
        for a in range(n_arms):
            rewards_prime[agent, t, a] = _new_value(draw, rewards[agent, t, a], low, high, extreme)
        if neighboring_relation is NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD:
            contexts = draw(
                hnp.arrays(
                    np.float64,
                    (n_agents, horizon, dim),
                    elements=st.floats(-1.0, 1.0, allow_nan=False),
                )
            )
            contexts_prime = contexts.copy()
            row = draw(
                hnp.arrays(np.float64, (dim,), elements=st.floats(-1.0, 1.0, allow_nan=False))
            )
            contexts_prime[agent, t] = row  # may coincide: the reward change suffices
    elif neighboring_relation is NeighboringRelation.USER_AT_ALL_AGENTS:
        agent = None
        for i in range(n_agents):
            for a in range(n_arms):
                rewards_prime[i, t, a] = _new_value(draw, rewards[i, t, a], low, high, extreme)
    elif neighboring_relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        present_prime[agent, t] = False
    else:  # pragma: no cover - every member is handled above
        raise ValueError(f"unsupported neighboring_relation {neighboring_relation!r}.")
    if contexts is None:
        d, dp = (rewards, present), (rewards_prime, present_prime)
    else:
        d = (rewards, present, contexts)
        dp = (rewards_prime, present_prime, contexts_prime)
    where = (
        f"{'every agent' if agent is None else f'agent {agent}'}, round t = {t}, "
        f"{'every arm' if arm is None else f'arm {arm}'}"
    )
    return NeighboringPair(
        d,
        dp,
        neighboring_relation,
        f"{neighboring_relation.value} at {where}",
        agent=agent,
        t=t,
        arm=arm,
    )


def neighboring_pairs(
    neighboring_relation: NeighboringRelation = NeighboringRelation.REPLACE_ONE_REWARD,
    **bounds: object,
) -> st.SearchStrategy[NeighboringPair]:
    """:func:`neighboring_reward_tables` (kept under its older name).

    Parameters
    ----------
    neighboring_relation : NeighboringRelation
        As :func:`neighboring_reward_tables`.
    **bounds
        The size and range bounds of :func:`neighboring_reward_tables`.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of NeighboringPair
    """
    return neighboring_reward_tables(neighboring_relation, **bounds)  # type: ignore[arg-type]


@st.composite
def neighboring_streams(
    draw: st.DrawFn, *, max_horizon: int = 64, low: float = 0.0, high: float = 1.0
) -> NeighboringPair:
    """One agent-arm stream pair (:func:`fedpriv.audit.engine.neighbors.stream_pair`) differing in one round ``t``.

    Parameters
    ----------
    max_horizon : int
        Upper bound of the stream length, >= 1.
    low, high : float
        Range of the rewards.

    Returns
    -------
    hypothesis.strategies.SearchStrategy of NeighboringPair
        Streams of shape ``(horizon,)``, ``t`` 0-based, ``observed[t]`` True. (A
        ``@st.composite`` strategy.)
    """
    horizon = draw(st.integers(1, max_horizon))
    stream = draw(
        hnp.arrays(np.float64, (horizon,), elements=st.floats(low, high, allow_nan=False))
    )
    t = draw(st.integers(0, horizon - 1))
    stream_prime = stream.copy()
    stream_prime[t] = _new_value(draw, stream[t], low, high, draw(st.booleans()))
    observed = draw(hnp.arrays(np.bool_, (horizon,)))
    observed[t] = True
    return stream_pair(stream, stream_prime, t=t, observed=observed)
