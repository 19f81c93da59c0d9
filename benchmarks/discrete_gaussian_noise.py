"""Noise the discrete Gaussian needs for a target (ε, δ): zCDP route against exact PLD.

For Δ = 1, finds by Brent's method the smallest σ whose ε(δ) by each route is the
target and prints how much more noise the zCDP route asks for.
Run: ``.venv/bin/python benchmarks/discrete_gaussian_noise.py``.
"""

from __future__ import annotations

from fedpriv.privacy import compose_routes
from fedpriv.privacy.accounting import events
from scipy import optimize

__all__ = ["sigma_for"]

TARGETS = ((0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-6), (1.0, 1e-9))


def sigma_for(route: str, epsilon: float, delta: float) -> float:
    """Smallest σ (to 1e-4) whose ε at ``delta`` by ``route`` is ``epsilon``."""

    def excess(sigma: float) -> float:
        event = events.DiscreteGaussian(sigma=sigma, l2_sensitivity=1.0)
        return compose_routes([(event, 1)], delta)[route] - epsilon

    return optimize.brentq(excess, 0.3, 50.0, xtol=1e-4)


if __name__ == "__main__":
    for epsilon, delta in TARGETS:
        zcdp, pld = sigma_for("zcdp", epsilon, delta), sigma_for("pld", epsilon, delta)
        print(
            f"ε = {epsilon}, δ = {delta:g}: σ_zCDP = {zcdp:.4f}, σ_PLD = {pld:.4f}, "
            f"zCDP asks {100 * (zcdp / pld - 1):.1f}% more noise"
        )
