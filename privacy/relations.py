"""Neighboring relations: which pairs of datasets a privacy claim is about.

A guarantee means nothing without its relation, so every claim, event and accountant
names one. The bandit relations are the ones the seed papers use; their sensitivities
are declared by the mechanisms (see :mod:`fedpriv.privacy.accounting.events`).
"""

from __future__ import annotations

import enum

__all__ = ["NeighboringRelation", "parse_relation"]


class NeighboringRelation(enum.Enum):
    """How two neighboring datasets differ.

    Members
    -------
    ADD_OR_REMOVE_ONE
        One record added or removed.
    REPLACE_ONE
        One record replaced by another from the same domain.
    REPLACE_ONE_REWARD
        One reward of one agent's stream changed to another value in the declared
        reward range (Zhu et al. 2021, Definition 1: adjacent streams
        ``{X_{i,k}(t)}`` that "differ at a particular t").
    REPLACE_ONE_CONTEXT_REWARD
        One (context, reward) pair of one agent changed (Dubey & Pentland 2020).
    USER_AT_ALL_AGENTS
        One user whose data is present at every agent (FedUCB footnote 4).
    """

    ADD_OR_REMOVE_ONE = "add_or_remove_one"
    REPLACE_ONE = "replace_one"
    REPLACE_ONE_REWARD = "replace_one_reward"
    REPLACE_ONE_CONTEXT_REWARD = "replace_one_context_reward"
    USER_AT_ALL_AGENTS = "user_at_all_agents"


def parse_relation(neighboring_relation: NeighboringRelation | str) -> NeighboringRelation:
    """Return the :class:`NeighboringRelation` named by ``neighboring_relation``.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation or str
        A member, or its value in any case (``"replace_one_reward"``).

    Returns
    -------
    NeighboringRelation
        The member itself if ``neighboring_relation`` is one.

    Raises
    ------
    ValueError
        If ``neighboring_relation`` names no relation; the message lists the allowed names.

    Examples
    --------
    >>> parse_relation("replace_one_reward")
    <NeighboringRelation.REPLACE_ONE_REWARD: 'replace_one_reward'>
    """
    if isinstance(neighboring_relation, NeighboringRelation):
        return neighboring_relation
    try:
        return NeighboringRelation(str(neighboring_relation).lower())
    except ValueError:
        allowed = ", ".join(r.value for r in NeighboringRelation)
        raise ValueError(
            f"`neighboring_relation` must be one of {allowed}; got {neighboring_relation!r}."
        ) from None
