"""Tests for `privacy.calibration`: Fed_UCB's per-node ε' as printed and as corrected.

Reference values (gossip.md §3.4): with the paper's ε' = ε/⌈log T⌉ the tree is
really ``ε (⌊log2 T⌋ + 1)/⌈log T⌉``-DP: 1.25ε at T = 16 (log2), 5/3 ε at T = 16 (ln),
ε at T = 600000 (log2) and 20/14 ε at T = 600000 (ln). The corrected calibration
ε' = ε/(⌊log2 T⌋ + 1) gives exactly ε. Expected values are computed here with exact
integer arithmetic, never with the module under test.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privacy import Accountant, events
from privacy.accountant import RELATIVE_TOLERANCE, event_epsilon
from privacy.calibration import (
    PAPER_LOG_BASES,
    fed_ucb_node_epsilon,
    fed_ucb_scale,
    paper_log_rounds,
)

# ---------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------


def _levels(horizon: int) -> int:
    """``floor(log2 T) + 1``: number of powers of two ``<= T``."""
    return sum(1 for k in range(64) if 2**k <= horizon)


def _ceil_log(horizon: int, base: str) -> int:
    """Smallest ``k >= 1`` with ``base**k >= T`` (exact for 2 and 10)."""
    k = 1
    while True:
        if base == "2" and 2**k >= horizon:
            return k
        if base == "10" and 10**k >= horizon:
            return k
        # e**k is never an integer, so float rounding cannot flip the comparison for
        # the horizons used here (far from any e**k by more than 1e-9 relative).
        if base == "e" and math.exp(k) >= horizon:
            return k
        k += 1


def _tree_epsilon(scale: float, horizon: int) -> tuple[str, float]:
    """``(route, ε)`` at δ = 0 of one LaplaceTree stream, through the accountant."""
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(
        events.LaplaceTree(scale=scale, horizon=horizon), key={"agent": 0, "arm": 0}
    )
    return accountant.tightest(0.0)


# ---------------------------------------------------------------------------------
# Reference values through the accountant
# ---------------------------------------------------------------------------------


def test_paper_scale_at_sixteen_rounds_is_one_point_two_five() -> None:
    scale = fed_ucb_scale(1.0, 16, mode="paper", log_base="2")
    assert scale == 4.0  # ⌈log2 16⌉ / ε
    route, epsilon = _tree_epsilon(scale, 16)
    assert (route, epsilon) == ("pure", 1.25)  # 5 levels / 4
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(
        events.LaplaceTree(scale=scale, horizon=16), key={"agent": 0, "arm": 0}
    )
    assert accountant.get_epsilon(0.0) == 1.25
    routes = accountant.routes(0.0)
    assert routes["pure"] == 1.25
    assert routes["pld"] == math.inf  # a pessimistic PLD keeps mass at infinity
    pld = accountant.routes(1e-6)["pld"]
    assert 1.24 <= pld <= 1.25


def test_corrected_scale_at_sixteen_rounds_is_exactly_epsilon() -> None:
    scale = fed_ucb_scale(1.0, 16, mode="corrected")
    assert scale == 5.0
    assert _tree_epsilon(scale, 16) == ("pure", 1.0)


def test_paper_scale_with_natural_log_at_sixteen_rounds() -> None:
    scale = fed_ucb_scale(1.0, 16, mode="paper", log_base="e")
    assert scale == 3.0  # ⌈ln 16⌉ = ⌈2.77⌉
    assert _tree_epsilon(scale, 16) == ("pure", 5 / 3)


@pytest.mark.parametrize(("log_base", "expected"), [("2", 1.0), ("e", 20 / 14)])
def test_paper_scale_at_six_hundred_thousand_rounds(
    log_base: str, expected: float
) -> None:
    scale = fed_ucb_scale(1.0, 600_000, mode="paper", log_base=log_base)
    route, epsilon = _tree_epsilon(scale, 600_000)
    assert route == "pure"
    assert epsilon == pytest.approx(expected, rel=1e-15)
    assert _levels(600_000) == 20 and _ceil_log(600_000, log_base) == (
        20 if log_base == "2" else 14
    )


@pytest.mark.parametrize(
    ("horizon", "ratio"), [(2, 2.0), (4, 1.5), (16, 1.25), (2**20, 1.05), (17, 1.0)]
)
def test_paper_log2_overshoot_matches_gossip_report(horizon: int, ratio: float) -> None:
    # gossip.md §3.4 item 1: ε (1 + 1/log2 T) at powers of two, ε otherwise.
    for epsilon in (0.5, 1.0, 5.0):
        scale = fed_ucb_scale(epsilon, horizon, mode="paper", log_base="2")
        got = event_epsilon(events.LaplaceTree(scale=scale, horizon=horizon))
        assert got == pytest.approx(ratio * epsilon, rel=1e-12)


# ---------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------

epsilons = st.floats(min_value=1e-2, max_value=50.0)
horizons = st.integers(min_value=1, max_value=10**9)


@given(epsilons, horizons)
def test_corrected_calibration_is_exactly_epsilon(epsilon: float, horizon: int) -> None:
    scale = fed_ucb_scale(epsilon, horizon, mode="corrected")
    node_epsilon = fed_ucb_node_epsilon(epsilon, horizon, mode="corrected")
    assert node_epsilon == pytest.approx(epsilon / _levels(horizon), rel=1e-15)
    assert scale * node_epsilon == pytest.approx(1.0, rel=1e-15)  # b = 1/ε'
    # event_epsilon is the accountant's pure route for one stream (the PLD route is
    # inf at δ = 0 and would only cost time here).
    spent = event_epsilon(events.LaplaceTree(scale=scale, horizon=horizon))
    assert spent <= epsilon * (1 + RELATIVE_TOLERANCE)
    assert spent >= epsilon * (1 - RELATIVE_TOLERANCE)


@pytest.mark.parametrize("log_base", sorted(PAPER_LOG_BASES))
@given(epsilon=epsilons, horizon=st.integers(min_value=1, max_value=10**7))
def test_paper_calibration_uses_ceil_log(
    log_base: str, epsilon: float, horizon: int
) -> None:
    rounds = _ceil_log(horizon, log_base)
    assert paper_log_rounds(horizon, log_base) == rounds
    assert fed_ucb_node_epsilon(epsilon, horizon, mode="paper", log_base=log_base) == (
        pytest.approx(epsilon / rounds, rel=1e-15)
    )
    scale = fed_ucb_scale(epsilon, horizon, mode="paper", log_base=log_base)
    assert scale == pytest.approx(rounds / epsilon, rel=1e-15)
    # The true ε of the paper's tree never falls below the claim: ⌈log T⌉ never
    # exceeds the depth in any base >= 2.
    true_epsilon = _levels(horizon) / scale
    assert true_epsilon >= epsilon * (1 - 1e-12)


@pytest.mark.parametrize(
    ("horizon", "log_base", "rounds"),
    [
        (1, "2", 1),
        (2, "2", 1),
        (3, "2", 2),
        (16, "2", 4),
        (17, "2", 5),
        (16, "e", 3),
        (600_000, "e", 14),
        (1000, "10", 3),
        (1001, "10", 4),
        (600_000, "2", 20),
        (2**20, "2", 20),
        (2**20 + 1, "2", 21),
    ],
)
def test_paper_log_rounds_known_values(
    horizon: int, log_base: str, rounds: int
) -> None:
    assert paper_log_rounds(horizon, log_base) == rounds


def test_infinite_epsilon_means_no_noise() -> None:
    for mode in ("paper", "corrected"):
        assert fed_ucb_scale(math.inf, 16, mode=mode) == 0.0
        assert fed_ucb_node_epsilon(math.inf, 16, mode=mode) == math.inf


def test_calibration_validation() -> None:
    with pytest.raises(
        ValueError, match=r"`mode` must be 'paper' or 'corrected', got 'x'"
    ):
        fed_ucb_scale(1.0, 16, mode="x")
    with pytest.raises(ValueError, match=r"`mode` must be 'paper' or 'corrected'"):
        fed_ucb_node_epsilon(1.0, 16, mode="Paper")
    with pytest.raises(
        ValueError, match=r"`log_base` must be one of \['10', '2', 'e'\]"
    ):
        fed_ucb_scale(1.0, 16, mode="paper", log_base="3")
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\], got 0\.0"):
        fed_ucb_scale(0.0, 16, mode="corrected")
    with pytest.raises(ValueError, match=r"`epsilon` must not be NaN"):
        fed_ucb_node_epsilon(math.nan, 16, mode="corrected")
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        fed_ucb_scale(1.0, 0, mode="corrected")
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        paper_log_rounds(0, "2")
