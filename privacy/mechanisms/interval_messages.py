"""What one message of the interval protocol depends on, and what it costs.

Dubey & Pentland's private cooperative UCB (AAMAS 2020, §3.2, eq. 6) sends
``q_t^v = ⟨v, t, μ̃^v, counts^v⟩`` every round. Message ``n`` of an agent-arm stream is
one sent between the stream's release ``n`` (its count reaches ``counts[n-1]``) and
release ``n + 1``: it carries ``μ̃`` of release ``n`` and the agent's pull counts.

The paper's Lemma "Privacy of Outgoing Messages" prices the message by release ``n``
alone ("the only element that is dependent on the reward sequence of arm k is its
noisy mean", §3.2). That holds with the actions fixed (the paper's
relation, §3.1 Definition). Under fedpriv's reward-table relation (the register's
``REPLACE_ONE_REWARD``: actions re-derived from the data), the counts are functions of
the agent's actions, and after the round-robin phase the actions follow the group
means, which contain the stream's earlier releases (own noisy term; the
other agents' messages are post-processing of them). So the counts sent
with message ``n`` depend on releases ``1 .. n-1``, and message ``n`` is a
post-processing of releases ``1 .. n`` of the stream together with data independent
of the protected reward: its ε is that of their composition,
:func:`interval_message_event`. (Release 1 happens during the round-robin phase, whose
counts are data-independent; message 1 depends on release 1 only, which the rule
gives.) The worst record is record 1, which every release covers
(:mod:`fedpriv.privacy.mechanisms.interval`).

Every ε here is computed by a :class:`~fedpriv.privacy.ledger.accountant.Accountant` charged
with the events; nothing is summed by hand.
"""

from __future__ import annotations

import dataclasses

from fedpriv.privacy.checks import check_delta, check_int_at_least
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.interval import IntervalRelease
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "MessageCost",
    "interval_count_dependencies",
    "interval_message_accountant",
    "interval_message_costs",
    "interval_message_event",
    "worst_interval_message",
]


def _check_event(event: IntervalRelease) -> IntervalRelease:
    """``event`` if it is an :class:`IntervalRelease` (TypeError otherwise)."""
    if not isinstance(event, IntervalRelease):
        raise TypeError(f"`event` must be an IntervalRelease, got {type(event).__name__}.")
    return event


def _check_message(event: IntervalRelease, message: int) -> int:
    """``message`` as an int in ``[1, len(event.counts)]``."""
    _check_event(event)
    message = check_int_at_least("message", message, 1)
    if message > len(event.counts):
        raise ValueError(
            f"`message` must be in [1, {len(event.counts)}] (the stream's releases), got {message}."
        )
    return message


def _prefix(event: IntervalRelease, stop: int) -> IntervalRelease:
    """Releases ``1 .. stop`` of ``event`` (``stop >= 1``)."""
    return IntervalRelease(
        scales=event.scales[:stop],
        l1_sensitivities=event.l1_sensitivities[:stop],
        counts=event.counts[:stop],
    )


def interval_message_event(event: IntervalRelease, message: int) -> IntervalRelease:
    """The releases message ``message`` depends on: ``1 .. message`` (module docstring).

    Parameters
    ----------
    event : IntervalRelease
        Every release of the stream, in time order.
    message : int
        1-based index ``n`` of the release the message carries.

    Returns
    -------
    IntervalRelease
        The first ``message`` releases of ``event``.

    Raises
    ------
    TypeError
        If ``event`` is not an :class:`IntervalRelease`.
    ValueError
        If ``message`` is not in ``[1, len(event.counts)]``.

    Examples
    --------
    >>> from fedpriv.privacy.mechanisms.interval import make_interval_release
    >>> interval_message_event(make_interval_release(0.5, 9, rule="fixed"), 3).counts
    (2, 4, 6)
    """
    return _prefix(event, _check_message(event, message))


def interval_count_dependencies(event: IntervalRelease, message: int) -> IntervalRelease | None:
    """The releases the counts of message ``message`` are functions of: ``1 .. message-1``.

    ``None`` for message 1 (its counts come from the data-independent round-robin).
    Parameters and errors as :func:`interval_message_event`.

    Parameters
    ----------
    event : IntervalRelease
        Every release of the stream, in time order.
    message : int
        1-based index ``n`` of the release the message carries.

    Returns
    -------
    IntervalRelease or None
        The first ``message - 1`` releases, or None for message 1.

    Examples
    --------
    >>> from fedpriv.privacy.mechanisms.interval import make_interval_release
    >>> event = make_interval_release(0.5, 9, rule="fixed")
    >>> interval_count_dependencies(event, 1) is None, interval_count_dependencies(event, 3).counts
    (True, (2, 4))
    """
    message = _check_message(event, message)
    return None if message == 1 else _prefix(event, message - 1)


def interval_message_accountant(
    event: IntervalRelease,
    message: int,
    *,
    neighboring_relation: NeighboringRelation | str = NeighboringRelation.REPLACE_ONE_REWARD,
) -> Accountant:
    """An accountant charged with what message ``message`` depends on (one stream).

    Releases of one stream compose sequentially (fedpriv's derivation), so the
    prefix event is charged to a single cell. Parameters and errors as
    :func:`interval_message_event`.

    Parameters
    ----------
    event : IntervalRelease
        Every release of the stream, in time order.
    message : int
        1-based index ``n`` of the release the message carries.
    neighboring_relation : NeighboringRelation or str
        The accountant's neighboring relation (default ``REPLACE_ONE_REWARD``).

    Returns
    -------
    Accountant
        Charged once, with :func:`interval_message_event`, under key ``stream=0``.

    Examples
    --------
    >>> from fedpriv.privacy.mechanisms.interval import make_interval_release
    >>> acc = interval_message_accountant(make_interval_release(0.5, 9, rule="fixed"), 2)
    >>> acc.get_epsilon(0.0)
    1.0
    """
    accountant = Accountant(neighboring_relation=neighboring_relation, disjoint=("stream",))
    accountant.spend(interval_message_event(event, message), key={"stream": 0})
    return accountant


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MessageCost:
    """ε of one message at a target δ (tightest valid route of the accountant).

    Attributes
    ----------
    message : int
        1-based index ``n`` of the release the message carries.
    route : str
    epsilon : float
    releases : int
        Number of releases the message depends on (``n``).
    """

    message: int
    route: str
    epsilon: float
    releases: int


def interval_message_costs(event: IntervalRelease, target_delta: float) -> tuple[MessageCost, ...]:
    """:class:`MessageCost` of every message ``1 .. len(event.counts)``.

    Parameters
    ----------
    event : IntervalRelease
        Every release of the stream, in time order.
    target_delta : float
        In [0, 1); required (dp-accounting's ``get_epsilon(target_delta)``).

    Returns
    -------
    tuple of MessageCost
        One per message, in order: its tightest route and ε (nats) at ``target_delta``.

    Raises
    ------
    TypeError
        If ``event`` is not an :class:`IntervalRelease`.
    ValueError
        If ``target_delta`` is not in [0, 1).
    """
    target_delta = check_delta("target_delta", target_delta)
    out = []
    for message in range(1, len(_check_event(event).counts) + 1):
        route, epsilon = interval_message_accountant(event, message).routes.tightest(target_delta)
        out.append(
            MessageCost(message=message, route=route, epsilon=float(epsilon), releases=message)
        )
    return tuple(out)


def worst_interval_message(event: IntervalRelease, target_delta: float) -> MessageCost:
    """The message of largest ε (the per-message guarantee is the worst message's).

    At ``target_delta = 0`` every route but the pure sum is ∞ and the pure ε grows
    with ``n``, so this is the last message; at ``target_delta > 0`` every message is
    evaluated (no monotonicity of the routes is assumed). Errors as
    :func:`interval_message_costs`.

    Parameters
    ----------
    event : IntervalRelease
        Every release of the stream, in time order.
    target_delta : float
        In [0, 1); required (dp-accounting's ``get_epsilon(target_delta)``).

    Returns
    -------
    MessageCost
        The message of largest ε (the first of them on a tie).

    Examples
    --------
    >>> from fedpriv.privacy.mechanisms.interval import make_interval_release
    >>> worst = worst_interval_message(make_interval_release(0.5, 9, rule="fixed"), 0.0)
    >>> worst.message, worst.epsilon
    (4, 2.0)
    """
    return max(interval_message_costs(event, target_delta), key=lambda cost: cost.epsilon)
