"""Frozen descriptions of privacy-relevant releases.

Events *describe* what was released; accountants *compute* what it costs (see
:mod:`privacy.accountant`). An event's meaning never changes: new semantics means a new
class. Every field is an immutable scalar, so events are hashable and can be cached.

Sensitivities are declared per event and refer to the accountant's neighboring
relation: for the bandit relation ``REPLACE_ONE_REWARD`` with rewards in ``[low, high]``
one changed reward moves a sum by at most ``high - low``.
"""

from __future__ import annotations

import dataclasses

from privacy._checks import check_int_at_least, check_positive

__all__ = ["Event", "Laplace", "LaplaceTree", "NonPrivate"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Laplace:
    """One release of ``statistic + Lap(scale)`` per coordinate.

    Parameters
    ----------
    scale : float
        Laplace scale ``b`` (units of the statistic), > 0.
    l1_sensitivity : float
        Largest L1 change of the statistic between neighbors, > 0.

    Notes
    -----
    Pure ``l1_sensitivity / scale``-DP (Dwork et al. 2006, Prop. 1).
    """

    scale: float
    l1_sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(
            self, "l1_sensitivity", check_positive("l1_sensitivity", self.l1_sensitivity)
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LaplaceTree:
    """A binary-tree continual counter over one stream with Laplace node noise.

    Every node sum is released (at most once, memoised) with ``Lap(scale)``; a record
    sits in at most ``tree_depth(horizon) = floor(log2 horizon) + 1`` nodes, so the
    tree is pure ``depth * l1_sensitivity / scale``-DP (Chan, Shi & Song 2011, Thm 3.5;
    exact at the record of round 1, which every level covers).

    Parameters
    ----------
    scale : float
        Per-node Laplace scale, > 0.
    horizon : int
        Capacity ``T`` of the tree (number of rounds), >= 1.
    l1_sensitivity : float
        Largest change of one node sum between neighbors, > 0.
    """

    scale: float
    horizon: int
    l1_sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "horizon", check_int_at_least("horizon", self.horizon, 1))
        object.__setattr__(
            self, "l1_sensitivity", check_positive("l1_sensitivity", self.l1_sensitivity)
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NonPrivate:
    """A release of raw data (ε = ∞), recorded so that reports can name the channel.

    Parameters
    ----------
    reason : str
        What was released raw and why, e.g. "initial pulls (Zhu et al. Alg. 4 line 1)".
    """

    reason: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str):
            raise TypeError(f"`reason` must be a str, got {type(self.reason).__name__}.")


Event = Laplace | LaplaceTree | NonPrivate


