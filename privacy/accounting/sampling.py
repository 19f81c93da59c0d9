"""Poisson-sampled participation: privacy amplification by subsampling.

:class:`PoissonSampled` describes a mechanism run on a Poisson sample of the data: every
record (a user, an agent, a client) enters the sample independently with probability
``sampling_rate`` and the sample is *secret* (only the mechanism's output is released).
Importing this module registers its handlers with :mod:`fedpriv.privacy.accounting.routes`.

Where it does not apply: Li & Song's partial participation (CE-CDP-MAB, participation
rate ``p``) draws ``N = ceil(p M)`` agents *without replacement* at the server, which
sees who uploads, and a non-selected agent's noisy mean is still released, folded into
its ȳ, the next time it is selected (Li & Song §IV-B,
Theorem 2). The selection is not secret and every reward is eventually released, so no
amplification is claimed there and its accountant recipe is unchanged.

Meaning of the inner event's sensitivity
----------------------------------------
Unlike the other events (see :mod:`fedpriv.privacy.accounting.events`), the inner event's
``*_sensitivity`` is the **contribution of one record**: the largest change of the
statistic when one record is added to or removed from the sample (``C`` for a sum of
vectors with ``||v|| <= C``). This is dp-accounting's convention for
``PoissonSampledDpEvent(q, GaussianDpEvent(σ / C))`` and the only one the mixtures below
need. The guarantee is stated for the event's own ``neighboring_relation``:

``ADD_OR_REMOVE_ONE``
    ``P = (1 - q) M(S) + q M(S ∪ {x})`` against ``Q = M(S)`` (and the reverse).
``REPLACE_ONE``
    ``P = (1 - q) M(S) + q M(S ∪ {x})`` against ``Q = (1 - q) M(S) + q M(S ∪ {x'})``:
    ``x`` and ``x'`` sit at the same place and are sampled together. At ``q = 1`` this
    is the unsampled mechanism at twice the contribution (the ``2 C`` of
    :mod:`fedpriv.privacy.accounting.events`).

Routes
------
``pld``   Exact dominating pairs where dp-accounting has them: the subsampled Gaussian
          (any inner event with an exact GDP μ, so also Gaussian trees and symmetric
          matrix Gaussians: rotation invariance makes the shift a scalar of size μ)
          under both relations (``from_gaussian_mechanism(..., sampling_prob=q,
          neighboring_relation=...)``); the subsampled Laplace, discrete Laplace and
          discrete Gaussian under add/remove. Any other inner event with an
          (ε, δ) description: the (ε', δ') randomized response of the amplified pair.
``rdp``   Subsampled Gaussian under add/remove: dp-accounting's ``RdpAccountant``
          (Mironov, Talwar & Zhang 2019, arXiv:1908.10530). Otherwise derived from the
          amplified pure ε' (sharp pure→RDP bound) where the inner event is pure.
``pure``, ``basic``, ``advanced``, ``optimal``
          Amplification by subsampling of the inner (ε, δ) (below).

The optimistic PLD (the lower end of the accountant's bracket) exists only for the
exact pairs; an amplified (ε', δ') is an upper bound and is left out of the lower end.

Amplification bounds
--------------------
Add/remove: an (ε, δ)-DP inner mechanism gives ``(log(1 + q (e^ε - 1)), q δ)``
(Li, Qardaji & Su 2012, Thm. 1; Balle, Barthe & Gaboardi 2018, arXiv:1807.01647,
Thm. 8, tight).

Replace-one: by Balle, Barthe & Gaboardi 2018, Thm. 2 (advanced joint convexity) with
``μ0 = M(S)``, ``μ1 = M(S ∪ {x})``, ``μ1' = M(S ∪ {x'})`` and ``ε_r = 2 ε``:
``D_{e^{ε'}}(P || Q) = q D_{e^{ε_r}}(μ1 || (1 - β) μ0 + β μ1')`` with
``ε' = log(1 + q (e^{ε_r} - 1))``; ``μ1`` against ``μ0`` is (ε, δ) (one addition) and
against ``μ1'`` is ``(2 ε, (1 + e^ε) δ)`` (a removal then an addition, group privacy), so
by joint convexity the pair is ``(log(1 + q (e^{2ε} - 1)), q (1 + e^ε) δ)``-DP. This is
the replace-one amplification bound; at ``q = 1`` it is group privacy, and it is tight
for randomized-response-like inner mechanisms whose replace-one ε is ``2 ε`` (as
Laplace sums are).

Replace-one, pure inner mechanism (δ = 0): the two mixtures share ``(1 - q) μ0``, and
``r = dμ1/dμ0`` and ``r' = dμ1'/dμ0`` both lie in ``[e^-ε, e^ε]`` (one addition each),
so the likelihood ratio ``P/Q = (1 - q + q r) / (1 - q + q r')`` is at most
``(1 - q + q e^ε) / (1 - q + q e^-ε)``: ``ε' = log1p(q (e^ε - 1)) - log1p(q (e^-ε - 1))``,
attained by the Laplace mechanism (every output beyond both shifts has ``r = e^ε``,
``r' = e^-ε``), so exact there. It is the pure-DP case of the ratio-of-mixtures
argument of Balle, Barthe & Gaboardi 2018, Thm. 2, and never above the bound above
(22.4 instead of 49.4 for 100 Laplace(1) releases at q = 0.1).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    Composed,
    DiscreteGaussian,
    DiscreteLaplace,
    Laplace,
    RandomizedResponse,
    SelfComposed,
    _check_frozen_event,
    _check_tree,
)
from fedpriv.privacy.accounting.handlers import (
    EventHandlers,
    _approx,
    _gdp,
    _pure,
    _zcdp,
    handlers_for,
    register_event,
)
from fedpriv.privacy.accounting.sampled_rdp import _sampled_gaussian_rdp, _sampled_gaussian_rdp_at
from fedpriv.privacy.checks import check_real
from fedpriv.privacy.errors import UnsupportedEventError
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

__all__ = [
    "MIN_SAMPLING_RATE",
    "SAMPLING_RELATIONS",
    "PoissonSampled",
    "amplified_epsilon_delta",
    "check_sampling_relation",
    "sampling_relation_for",
]

#: The relations a Poisson-sampled guarantee can be stated for.
SAMPLING_RELATIONS = (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE)

#: Bisection steps that fit the inner δ share to the outer one under replace-one.
_SHARE_STEPS = 60
#: Smallest positive ``sampling_rate`` of :class:`PoissonSampled`. Below it the
#: amplified RDP of a sampled Gaussian (dp-accounting's series) cancels to rounding
#: error and turns negative (``q = 1e-10`` at noise multiplier 100 already does), so
#: every query would raise; the event is refused at construction instead.
MIN_SAMPLING_RATE = 1e-6
#: Largest δ share handed to the inner event (``δ / q`` can exceed 1 for tiny ``q``;
#: any share in [0, 1) gives a valid pair, and at 1/2 most mechanisms are at ε ≈ 0).
_MAX_INNER_SHARE = 0.5


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PoissonSampled:
    """``event`` run on a secret Poisson sample of the records (rate ``sampling_rate``).

    Parameters
    ----------
    event : Event
        The mechanism run on the sample; its sensitivity is one record's contribution
        (see the module docstring).
    sampling_rate : float
        Probability ``q`` that a record is in the sample: 0 or in
        [:data:`MIN_SAMPLING_RATE`, 1]. ``q = 0`` releases nothing about any record.
    neighboring_relation : NeighboringRelation or str
        ``"add_or_remove_one"`` (default, dp-accounting's and Opacus's DP-SGD setting)
        or ``"replace_one"``. An accountant whose relation is of the other family
        refuses the event.

    Raises
    ------
    TypeError
        If ``event`` is not a frozen event instance.
    ValueError
        If ``sampling_rate`` is not 0 and outside [MIN_SAMPLING_RATE, 1] (e.g.
        ``5e-324``, which every query would then fail on), or the relation is not one of
        :data:`SAMPLING_RELATIONS`.

    Examples
    --------
    >>> from fedpriv.privacy import compose_routes, events
    >>> step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.0),
    ...                       sampling_rate=0.01)
    >>> round(compose_routes([(step, 1000)], 1e-5)["pld"], 2)
    1.83
    """

    event: object
    sampling_rate: float
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE

    def __post_init__(self) -> None:
        _check_frozen_event("event", self.event)
        rate = check_real("sampling_rate", self.sampling_rate)
        if not (rate == 0.0 or MIN_SAMPLING_RATE <= rate <= 1.0):
            raise ValueError(
                f"`sampling_rate` must be 0 or in [{MIN_SAMPLING_RATE:g}, 1] "
                f"(MIN_SAMPLING_RATE), got {rate!r}: below it the amplified RDP and PLD "
                "terms cancel to rounding error and no route can price the event."
            )
        object.__setattr__(self, "sampling_rate", rate)
        relation = parse_relation(self.neighboring_relation)
        if relation not in SAMPLING_RELATIONS:
            allowed = ", ".join(r.value for r in SAMPLING_RELATIONS)
            raise ValueError(
                f"`neighboring_relation` must be one of {allowed} for a Poisson-sampled "
                f"event, got {relation.value!r}."
            )
        object.__setattr__(self, "neighboring_relation", relation)
        _check_tree("event", self)

    @property
    def replace(self) -> bool:
        """Whether the guarantee is for the replace-one relation."""
        return self.neighboring_relation is NeighboringRelation.REPLACE_ONE


def amplified_epsilon_delta(
    epsilon: float, delta: float, sampling_rate: float, *, replace: bool = False
) -> tuple[float, float]:
    """(ε', δ') of a Poisson-sampled (ε, δ)-DP mechanism (see the module docstring).

    Parameters
    ----------
    epsilon, delta : float
        The inner mechanism's add/remove guarantee (one record's contribution).
    sampling_rate : float
        ``q`` in [0, 1].
    replace : bool
        Replace-one instead of add/remove.

    Returns
    -------
    tuple of (float, float)
        ``(ε', δ')`` of the sampled mechanism under the same relation, ε' in nats
        (``(inf, 0)`` for an infinite inner ε with ``q > 0``).

    Examples
    --------
    >>> round(amplified_epsilon_delta(1.0, 0.0, 0.1)[0], 6)
    0.158565
    """
    if not math.isfinite(epsilon):
        return (math.inf, 0.0) if sampling_rate > 0 else (0.0, 0.0)
    if replace and delta == 0:
        # Pure inner mechanism: the likelihood ratios r = dμ1/dμ0 and r' = dμ1'/dμ0
        # both lie in [e^-ε, e^ε], so P/Q = (1 - q + q r) / (1 - q + q r') is at most
        # (1 - q + q e^ε) / (1 - q + q e^-ε): tight for Laplace (attained for outputs
        # beyond both shifts), and below the general log1p(q expm1(2ε)) for q < 1.
        q = sampling_rate
        exact = math.log1p(q * math.expm1(epsilon)) - math.log1p(q * math.expm1(-epsilon))
        return min(exact, math.log1p(q * math.expm1(2 * epsilon))), 0.0
    if replace:
        return (
            math.log1p(sampling_rate * math.expm1(2 * epsilon)),
            sampling_rate * (1 + math.exp(epsilon)) * delta,
        )
    return math.log1p(sampling_rate * math.expm1(epsilon)), sampling_rate * delta


def sampling_relation_for(neighboring_relation: NeighboringRelation | str) -> NeighboringRelation:
    """The sampling relation of an accountant's relation: ``ADD_OR_REMOVE_ONE`` for
    itself, ``REPLACE_ONE`` for every replace relation (the bandit relations replace
    one record: a reward, a (context, reward) pair, a user).

    Parameters
    ----------
    neighboring_relation : NeighboringRelation or str
        An accountant's relation.

    Returns
    -------
    NeighboringRelation
        ``ADD_OR_REMOVE_ONE`` or ``REPLACE_ONE``.

    Raises
    ------
    ValueError
        If ``neighboring_relation`` names no relation.

    Examples
    --------
    >>> sampling_relation_for("replace_one_reward").value
    'replace_one'
    """
    relation = parse_relation(neighboring_relation)
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        return relation
    return NeighboringRelation.REPLACE_ONE


def check_sampling_relation(event: object, neighboring_relation: NeighboringRelation | str) -> None:
    """Raise unless every relation-bound part of ``event`` fits the family of
    ``neighboring_relation``.

    Two events describe a neighboring pair of their own: :class:`PoissonSampled`
    (its ``neighboring_relation``) and k-ary ``RandomizedResponse`` (``num_buckets >
    2``: one record's answer changed, a replace relation).

    Parameters
    ----------
    event : object
        The event about to be charged; anything that is not an event passes.
    neighboring_relation : NeighboringRelation or str
        The accountant's relation.

    Raises
    ------
    UnsupportedEventError
        If a :class:`PoissonSampled` inside ``event`` (nested in ``SelfComposed``,
        ``Composed`` or another ``PoissonSampled``) states the other relation, or a
        k-ary randomized response or an event declaring ``REPLACE_ONLY`` (e.g.
        ``Shuffled``) is charged under ``add_or_remove_one``.
    """
    if type(event) not in _WRAPPERS and not _replace_only(event):  # the common case
        return
    expected = sampling_relation_for(neighboring_relation)
    stack = [event]
    while stack:
        item = stack.pop()
        if type(item) is SelfComposed:
            stack.append(item.event)
        elif type(item) is Composed:
            stack.extend(item.events)
        elif (
            type(item) is RandomizedResponse
            and item.num_buckets > 2
            and expected is NeighboringRelation.ADD_OR_REMOVE_ONE
        ):
            raise UnsupportedEventError(
                "k-ary randomized response (num_buckets > 2) describes a changed "
                "answer, a replace relation; it cannot be charged under "
                "'add_or_remove_one' (binary RandomizedResponse can)."
            )
        elif _replace_only(item) and expected is NeighboringRelation.ADD_OR_REMOVE_ONE:
            raise UnsupportedEventError(
                f"{type(item).__name__} states its guarantee for one record replaced "
                "(a replace relation); it cannot be charged under 'add_or_remove_one'."
            )
        elif type(item) is PoissonSampled and item.neighboring_relation is not expected:
            raise UnsupportedEventError(
                f"a PoissonSampled event for {item.neighboring_relation.value!r} "
                f"cannot be charged under {parse_relation(neighboring_relation).value!r} "
                f"(expected neighboring_relation={expected.value!r})."
            )


#: Event types that can hold a :class:`PoissonSampled` (checked by the walk above).
_WRAPPERS = frozenset({SelfComposed, Composed, PoissonSampled, RandomizedResponse})


def _replace_only(event: object) -> bool:
    """Whether an event type declares ``REPLACE_ONLY = True`` (its guarantee is for a
    replace relation only, e.g. :class:`~fedpriv.privacy.accounting.shuffling.Shuffled`)."""
    return getattr(type(event), "REPLACE_ONLY", False) is True


# ---------------------------------------------------------------------------- handlers
def _sampled_approx(event: PoissonSampled, delta_share: float) -> tuple[float, float]:
    """(ε', δ') spending at most ``delta_share`` (or the inner event's own fixed δ)."""
    q = event.sampling_rate
    if q == 0:
        return 0.0, 0.0
    inner_share = min(delta_share / q, _MAX_INNER_SHARE)
    epsilon, delta = _approx(event.event, inner_share)
    amplified = amplified_epsilon_delta(epsilon, delta, q, replace=event.replace)
    if not event.replace or delta == 0 or amplified[1] <= delta_share:
        return amplified
    # Replace-one spends q (1 + e^ε) δ: shrink the inner share until it fits.
    low, high = 0.0, inner_share
    best = (math.inf, 0.0)
    for _ in range(_SHARE_STEPS):
        middle = 0.5 * (low + high)
        epsilon, delta = _approx(event.event, middle)
        candidate = amplified_epsilon_delta(epsilon, delta, q, replace=True)
        if candidate[1] <= delta_share:
            best, low = candidate, middle
        else:
            high = middle
    return best


def _sampled_pure(event: PoissonSampled) -> float:
    if event.sampling_rate == 0:
        return 0.0
    return amplified_epsilon_delta(
        _pure(event.event), 0.0, event.sampling_rate, replace=event.replace
    )[0]


def _lazy_sampled_rdp(event: Any):
    """``order -> RDP`` of ``event`` if its curve (:func:`~fedpriv.privacy.accounting.
    handlers._rdp`) is exactly dp-accounting's subsampled-Gaussian RDP, order by order
    (:func:`_sampled_gaussian_rdp_at`), else None.

    That is a :class:`PoissonSampled` Gaussian-family event, ``0 < q < 1``, add/remove
    (no ``replace``), whose handler is this module's and which has no zCDP and no
    finite pure ε (so ``_rdp``'s pointwise minimum is the handler's curve alone).
    """
    if type(event) is not PoissonSampled or event.replace:
        return None
    if not 0.0 < event.sampling_rate < 1.0 or handlers_for(event).rdp is not _sampled_rdp:
        return None
    mu = _gdp(event.event)
    if mu is None or _zcdp(event) is not None or math.isfinite(_pure(event)):
        return None
    return functools.partial(_sampled_gaussian_rdp_at, mu, event.sampling_rate)


def _sampled_rdp(event: PoissonSampled, orders: np.ndarray) -> np.ndarray:
    """dp-accounting's RDP of the subsampled Gaussian under add/remove, else ``inf``
    (the amplified pure ε then gives the sharp pure→RDP curve)."""
    if event.sampling_rate == 0:
        return np.zeros(orders.shape)
    mu = _gdp(event.event)
    if mu is None or event.replace:
        return np.full(orders.shape, np.inf)
    return np.asarray(_sampled_gaussian_rdp(mu, event.sampling_rate, tuple(orders)))


def _exact_sampled_pld(event: PoissonSampled, discretization: float, pessimistic: bool):
    """dp-accounting's exact subsampled PLD of the inner event, or None."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    inner, q = event.event, event.sampling_rate
    common = {
        "pessimistic_estimate": pessimistic,
        "value_discretization_interval": discretization,
        "sampling_prob": q,
    }
    if (mu := _gdp(inner)) is not None:
        relation = pld_lib.NeighborRel[event.neighboring_relation.name]
        return pld_lib.from_gaussian_mechanism(
            1.0 / mu, use_connect_dots=pessimistic, neighboring_relation=relation, **common
        )
    if event.replace:
        return None
    if type(inner) is Laplace:
        return pld_lib.from_laplace_mechanism(
            inner.scale, sensitivity=inner.l1_sensitivity, use_connect_dots=pessimistic, **common
        )
    if type(inner) is DiscreteLaplace:
        return pld_lib.from_discrete_laplace_mechanism(
            1.0 / inner.scale, sensitivity=int(inner.l1_sensitivity), **common
        )
    if type(inner) is DiscreteGaussian and 1.0 <= inner.l2_sensitivity < math.sqrt(2.0):
        return pld_lib.from_discrete_gaussian_mechanism(inner.sigma, sensitivity=1, **common)
    return None


def _sampled_pld(event: PoissonSampled, discretization: float, pessimistic: bool):
    from fedpriv.privacy.accounting.handlers import _two_point_pld

    if event.sampling_rate == 0:
        return None  # nothing to compose: the pure route gives 0
    exact = _exact_sampled_pld(event, discretization, pessimistic)
    if exact is not None or not pessimistic:
        # The amplified (ε', δ') pair is an upper bound, not the mechanism's own
        # loss: it has no optimistic (lower-bound) PLD, so the lower end drops it.
        return exact
    epsilon, delta = _approx(event.event, 0.0)  # inner events with a fixed δ (or pure)
    if not math.isfinite(epsilon):
        return None
    epsilon, delta = amplified_epsilon_delta(
        epsilon, delta, event.sampling_rate, replace=event.replace
    )
    if delta >= 1:
        return None
    return _two_point_pld(epsilon, delta, discretization, pessimistic)


register_event(
    PoissonSampled,
    EventHandlers(pure=_sampled_pure, approx=_sampled_approx, rdp=_sampled_rdp, pld=_sampled_pld),
)
