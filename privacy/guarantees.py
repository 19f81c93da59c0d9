"""Privacy guarantees as immutable, validated types, with explicit conversions.

``PureDP(epsilon)`` and ``ApproxDP(epsilon, delta)`` answer ``get_epsilon(target_delta)``
and ``get_delta(target_epsilon)``. ``epsilon`` is in nats; ``inf`` means "no guarantee"
(a non-private release). Mixing types needs an explicit conversion
(:func:`pure_to_approx_dp`).
"""

from __future__ import annotations

import dataclasses
import math

from privacy._checks import check_delta, check_epsilon, check_real
from privacy.errors import IncompatibleGuaranteeError

__all__ = ["ApproxDP", "Guarantee", "PureDP", "format_epsilon", "pure_to_approx_dp"]


def _delta_of_approx(epsilon: float, delta: float, target_epsilon: float) -> float:
    """Tight δ(ε') of an (ε, δ)-DP mechanism (privacy region of Kairouz et al.)."""
    if target_epsilon >= epsilon:
        return delta
    if math.isinf(epsilon):
        return 1.0
    # delta + (1 - delta) (e^eps - e^eps') / (1 + e^eps), written to avoid overflow.
    ratio = (1.0 - math.exp(target_epsilon - epsilon)) / (1.0 + math.exp(-epsilon))
    return min(1.0, delta + (1.0 - delta) * ratio)


@dataclasses.dataclass(frozen=True, slots=True)
class PureDP:
    """ε-differential privacy (δ = 0).

    Parameters
    ----------
    epsilon : float
        Privacy loss bound in nats, in (0, inf]; ``inf`` means no guarantee.

    Raises
    ------
    ValueError
        If ``epsilon`` is NaN or not > 0.

    Examples
    --------
    >>> PureDP(1.25).get_epsilon(0.0)
    1.25
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon("epsilon", self.epsilon, allow_inf=True))

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest ε such that the mechanism is (ε, ``target_delta``)-DP (an upper bound)."""
        check_delta("target_delta", target_delta)
        return self.epsilon

    def get_delta(self, target_epsilon: float) -> float:
        """Tight δ at ``target_epsilon`` >= 0 (Kairouz, Oh & Viswanath 2015, Thm 2.1)."""
        target_epsilon = check_real("target_epsilon", target_epsilon)
        if target_epsilon < 0:
            raise ValueError(f"`target_epsilon` must be >= 0, got {target_epsilon!r}.")
        return _delta_of_approx(self.epsilon, 0.0, target_epsilon)


@dataclasses.dataclass(frozen=True, slots=True)
class ApproxDP:
    """(ε, δ)-differential privacy.

    Parameters
    ----------
    epsilon : float
        In (0, inf].
    delta : float
        In [0, 1).

    Raises
    ------
    ValueError
        If ``epsilon`` is not > 0 or ``delta`` is outside [0, 1).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", check_delta("delta", self.delta))

    def get_epsilon(self, target_delta: float) -> float:
        """ε at ``target_delta``: ``epsilon`` if ``target_delta >= delta``, else ``inf``."""
        target_delta = check_delta("target_delta", target_delta)
        return self.epsilon if target_delta >= self.delta else math.inf

    def get_delta(self, target_epsilon: float) -> float:
        """Tight δ at ``target_epsilon`` >= 0 (Kairouz, Oh & Viswanath 2015, Thm 2.1)."""
        target_epsilon = check_real("target_epsilon", target_epsilon)
        if target_epsilon < 0:
            raise ValueError(f"`target_epsilon` must be >= 0, got {target_epsilon!r}.")
        return _delta_of_approx(self.epsilon, self.delta, target_epsilon)

    def compose(self, other: ApproxDP) -> ApproxDP:
        """Basic sequential composition: ε and δ add.

        Raises
        ------
        IncompatibleGuaranteeError
            If ``other`` is not an :class:`ApproxDP`.
        """
        if not isinstance(other, ApproxDP):
            raise IncompatibleGuaranteeError(
                f"cannot compose ApproxDP with {type(other).__name__}; convert explicitly."
            )
        delta = self.delta + other.delta
        if delta >= 1.0:  # no guarantee left
            return ApproxDP(math.inf, 0.0)
        return ApproxDP(self.epsilon + other.epsilon, delta)


Guarantee = PureDP | ApproxDP


def pure_to_approx_dp(guarantee: PureDP) -> ApproxDP:
    """Explicit conversion ``PureDP(ε) -> ApproxDP(ε, 0)``.

    Raises
    ------
    IncompatibleGuaranteeError
        If ``guarantee`` is not a :class:`PureDP`.
    """
    if not isinstance(guarantee, PureDP):
        raise IncompatibleGuaranteeError(
            f"expected PureDP, got {type(guarantee).__name__}."
        )
    return ApproxDP(guarantee.epsilon, 0.0)


def format_epsilon(epsilon: float) -> str:
    """Render ε for reports: ``"inf"`` for no guarantee, else 6 significant digits."""
    return "inf" if math.isinf(epsilon) else f"{epsilon:.6g}"
