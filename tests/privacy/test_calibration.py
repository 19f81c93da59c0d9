"""Tests for `fedpriv.privacy.calibrations`: the noise each seed paper prescribes, as written.

Zhu et al.'s Fed_UCB: per-node ε' as printed and as corrected.

Reference values. Fed_UCB's view (Zhu et al. Algorithm 4: it sends ϑ̃(t−1), line 19,
and acts on ϑ̃(t−1), line 9) reaches the prefixes 1..T−1, so a record sits in
``⌊log2(T−1)⌋ + 1 = ⌈log2 T⌉`` released nodes: with the paper's ε' = ε/⌈log T⌉ the view
is exactly ε-DP under log2 and ``ε ⌈log2 T⌉/⌈ln T⌉``-DP under ln (4/3 ε at T = 16,
10/7 ε at T = 1024 and T = 600000). A counter that releases all T prefixes (the
component, or the second reading where the final estimate ϑ̃(T) is published) holds a
record in ``⌊log2 T⌋ + 1`` nodes: 1.25ε at T = 16 (log2), 5/3 ε at T = 16 (ln), ε at
T = 600000 (log2) and 20/14 ε at T = 600000 (ln). The corrected calibration divides ε
by the nodes of its view and spends exactly ε. Expected values are computed here with
exact integer arithmetic, never with the module under test.

Dubey & Pentland's FedUCB, Li & Song and Dubey & Pentland's AAMAS interval mechanism:
every expected value is recomputed here from the paper's formula (quoted in a comment
with its source) and, where the technical reports tabulate it, checked against the
report's rounded number.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.guarantees import RELATIVE_TOLERANCE
from fedpriv.privacy.accounting.tree import released_tree_depth
from fedpriv.privacy.calibrations import (
    INTERVAL_CONFIDENCE,
    PAPER_LOG_BASES,
    FedUCBCalibration,
    IntervalClaim,
    feducb_privatizer,
    gossip_fed_ucb_node_epsilon,
    gossip_fed_ucb_released_prefixes,
    gossip_fed_ucb_scale,
    interval_claimed_guarantee,
    interval_length,
    interval_noise_scales,
    interval_release_epsilons,
    interval_release_schedule,
    li_song_claimed_epsilon,
    li_song_epoch_scale,
    li_song_mean_sensitivity,
    li_song_participants,
    paper_log_rounds,
)
from fedpriv.privacy.ledger.pricing import event_epsilon
from hypothesis import given
from hypothesis import strategies as st

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


def _tree_epsilon(
    scale: float, horizon: int, released_prefixes: int | None = None
) -> tuple[str, float]:
    """``(route, ε)`` at δ = 0 of one LaplaceTree stream, through the accountant."""
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(
        events.LaplaceTree(scale=scale, horizon=horizon, released_prefixes=released_prefixes),
        key={"agent": 0, "arm": 0},
    )
    return accountant.routes.tightest(0.0)


# ---------------------------------------------------------------------------------
# Reference values through the accountant
# ---------------------------------------------------------------------------------


def test_paper_scale_at_sixteen_rounds_on_a_counter_releasing_every_prefix() -> None:
    # The component that releases all 16 prefixes, root included (not Fed_UCB's view).
    scale = gossip_fed_ucb_scale(1.0, 16, mode="paper", log_base="2")
    assert scale == 4.0  # ⌈log2 16⌉ / ε
    route, epsilon = _tree_epsilon(scale, 16)
    assert (route, epsilon) == ("pure", 1.25)  # 5 levels / 4
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(events.LaplaceTree(scale=scale, horizon=16), key={"agent": 0, "arm": 0})
    assert accountant.get_epsilon(0.0) == 1.25
    routes = accountant.routes.epsilons(0.0)
    assert routes["pure"] == 1.25
    assert routes["pld"] == math.inf  # a pessimistic PLD keeps mass at infinity
    pld = accountant.routes.epsilons(1e-6)["pld"]
    assert 1.24 <= pld <= 1.25


def test_corrected_scale_at_sixteen_rounds_is_exactly_epsilon() -> None:
    # The view holds 15 prefixes: 4 nodes per record, so b = 4 spends exactly ε = 1;
    # publishing ϑ̃(16) too needs 5 nodes, b = 5.
    scale = gossip_fed_ucb_scale(1.0, 16, mode="corrected")
    assert scale == 4.0
    assert _tree_epsilon(scale, 16, released_prefixes=15) == ("pure", 1.0)
    final = gossip_fed_ucb_scale(1.0, 16, mode="corrected", publish_final=True)
    assert final == 5.0
    assert _tree_epsilon(final, 16) == ("pure", 1.0)


_VIEW_CASES = [
    # (T, base, view nodes ⌈log2 T⌉, ⌈log_base T⌉, every-prefix nodes ⌊log2 T⌋ + 1)
    (16, "2", 4, 4, 5),
    (1024, "2", 10, 10, 11),
    (600_000, "2", 20, 20, 20),
    (16, "e", 4, 3, 5),
    (1024, "e", 10, 7, 11),
    (600_000, "e", 20, 14, 20),
]


@pytest.mark.parametrize(("horizon", "base", "view", "rounds", "every"), _VIEW_CASES)
def test_fed_ucb_view_node_count_and_epsilon(
    horizon: int, base: str, view: int, rounds: int, every: int
) -> None:
    # Independent references: the view's node count is the number of powers of two
    # <= T - 1 (nodes 1..T-1 reach an output), ⌈log_base T⌉ by exact search.
    assert _levels(horizon - 1) == view and _ceil_log(horizon, base) == rounds
    assert _levels(horizon) == every
    assert released_tree_depth(horizon, gossip_fed_ucb_released_prefixes(horizon)) == view
    assert paper_log_rounds(horizon, base) == rounds
    for epsilon in (1.0, 2.0, 5.0):
        scale = gossip_fed_ucb_scale(epsilon, horizon, mode="paper", log_base=base)
        route, got = _tree_epsilon(scale, horizon, released_prefixes=horizon - 1)
        assert route == "pure"
        # log2: exactly ε (the paper's budget is the view's node count); ln: the
        # exact factor ⌈log2 T⌉/⌈ln T⌉ = 4/3 (T = 16), 10/7 (T = 1024, 600 000).
        assert got == pytest.approx(epsilon * Fraction(view, rounds), rel=1e-15)
        _, final = _tree_epsilon(scale, horizon)  # second reading: ϑ̃(T) published
        assert final == pytest.approx(epsilon * Fraction(every, rounds), rel=1e-15)


def test_fed_ucb_view_factors_under_ln_are_four_thirds_and_ten_sevenths() -> None:
    factor = {t: Fraction(_levels(t - 1), _ceil_log(t, "e")) for t in (16, 1024, 600_000)}
    assert factor == {16: Fraction(4, 3), 1024: Fraction(10, 7), 600_000: Fraction(10, 7)}
    assert 1 / math.log(2) == pytest.approx(1.4427, abs=1e-4)  # the large-T limit only
    # ... and not a bound: at T = 17..20 the view's factor is 5 / ⌈ln T⌉ = 5/3.
    for horizon in (17, 20):
        scale = gossip_fed_ucb_scale(1.0, horizon, mode="paper", log_base="e")
        assert event_epsilon(
            events.LaplaceTree(scale=scale, horizon=horizon, released_prefixes=horizon - 1)
        ) == pytest.approx(5 / 3)


def test_paper_scale_with_natural_log_at_sixteen_rounds() -> None:
    scale = gossip_fed_ucb_scale(1.0, 16, mode="paper", log_base="e")
    assert scale == 3.0  # ⌈ln 16⌉ = ⌈2.77⌉
    assert _tree_epsilon(scale, 16) == ("pure", 5 / 3)  # every prefix released
    # the view: exactly 4/3, which the accountant rounds up to the next double (sound)
    route, value = _tree_epsilon(scale, 16, released_prefixes=15)
    assert route == "pure" and Fraction(value) >= Fraction(4, 3)
    assert value == pytest.approx(4 / 3, rel=1e-15)


@pytest.mark.parametrize(("log_base", "expected"), [("2", 1.0), ("e", 20 / 14)])
def test_paper_scale_at_six_hundred_thousand_rounds(log_base: str, expected: float) -> None:
    scale = gossip_fed_ucb_scale(1.0, 600_000, mode="paper", log_base=log_base)
    route, epsilon = _tree_epsilon(scale, 600_000)
    assert route == "pure"
    assert epsilon == pytest.approx(expected, rel=1e-15)
    assert _levels(600_000) == 20 and _ceil_log(600_000, log_base) == (
        20 if log_base == "2" else 14
    )


@pytest.mark.parametrize(
    ("horizon", "ratio"), [(2, 2.0), (4, 1.5), (16, 1.25), (2**20, 1.05), (17, 1.0)]
)
def test_paper_log2_overshoot_on_a_counter_releasing_every_prefix(
    horizon: int, ratio: float
) -> None:
    # A counter that releases all T prefixes: ε (1 + 1/log2 T) at powers of two, ε
    # otherwise. Fed_UCB's view (prefixes 1..T-1) spends exactly ε at every T.
    for epsilon in (0.5, 1.0, 5.0):
        scale = gossip_fed_ucb_scale(epsilon, horizon, mode="paper", log_base="2")
        got = event_epsilon(events.LaplaceTree(scale=scale, horizon=horizon))
        assert got == pytest.approx(ratio * epsilon, rel=1e-12)
        view = event_epsilon(
            events.LaplaceTree(scale=scale, horizon=horizon, released_prefixes=horizon - 1)
        )
        assert view == pytest.approx(epsilon, rel=1e-12)


# ---------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------

epsilons = st.floats(min_value=1e-2, max_value=50.0)
horizons = st.integers(min_value=1, max_value=10**9)


@given(epsilons, horizons)
def test_corrected_calibration_is_exactly_epsilon(epsilon: float, horizon: int) -> None:
    # Corrected mode charges exactly the claim on its view: prefixes 1..T-1 (at
    # least one), or 1..T when the final estimate is published.
    for publish_final, released in ((False, max(1, horizon - 1)), (True, horizon)):
        scale = gossip_fed_ucb_scale(
            epsilon, horizon, mode="corrected", publish_final=publish_final
        )
        node_epsilon = gossip_fed_ucb_node_epsilon(
            epsilon, horizon, mode="corrected", publish_final=publish_final
        )
        assert node_epsilon == pytest.approx(epsilon / _levels(released), rel=1e-15)
        assert scale * node_epsilon == pytest.approx(1.0, rel=1e-15)  # b = 1/ε'
        # event_epsilon is the accountant's pure route for one stream (the PLD route
        # is inf at δ = 0 and would only cost time here).
        spent = event_epsilon(
            events.LaplaceTree(scale=scale, horizon=horizon, released_prefixes=released)
        )
        assert spent <= epsilon * (1 + RELATIVE_TOLERANCE)
        assert spent >= epsilon * (1 - RELATIVE_TOLERANCE)


@pytest.mark.parametrize("log_base", sorted(PAPER_LOG_BASES))
@given(epsilon=epsilons, horizon=st.integers(min_value=1, max_value=10**7))
def test_paper_calibration_uses_ceil_log(log_base: str, epsilon: float, horizon: int) -> None:
    rounds = _ceil_log(horizon, log_base)
    assert paper_log_rounds(horizon, log_base) == rounds
    assert gossip_fed_ucb_node_epsilon(epsilon, horizon, mode="paper", log_base=log_base) == (
        pytest.approx(epsilon / rounds, rel=1e-15)
    )
    scale = gossip_fed_ucb_scale(epsilon, horizon, mode="paper", log_base=log_base)
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
def test_paper_log_rounds_known_values(horizon: int, log_base: str, rounds: int) -> None:
    assert paper_log_rounds(horizon, log_base) == rounds


def test_infinite_epsilon_means_no_noise() -> None:
    for mode in ("paper", "corrected"):
        assert gossip_fed_ucb_scale(math.inf, 16, mode=mode) == 0.0
        assert gossip_fed_ucb_node_epsilon(math.inf, 16, mode=mode) == math.inf


def test_calibration_validation() -> None:
    with pytest.raises(ValueError, match=r"`mode` must be 'paper' or 'corrected', got 'x'"):
        gossip_fed_ucb_scale(1.0, 16, mode="x")
    with pytest.raises(ValueError, match=r"`mode` must be 'paper' or 'corrected'"):
        gossip_fed_ucb_node_epsilon(1.0, 16, mode="Paper")
    with pytest.raises(ValueError, match=r"`log_base` must be one of \['10', '2', 'e'\]"):
        gossip_fed_ucb_scale(1.0, 16, mode="paper", log_base="3")
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\], got 0\.0"):
        gossip_fed_ucb_scale(0.0, 16, mode="corrected")
    with pytest.raises(ValueError, match=r"`epsilon` must not be NaN"):
        gossip_fed_ucb_node_epsilon(math.nan, 16, mode="corrected")
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        gossip_fed_ucb_scale(1.0, 0, mode="corrected")
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        paper_log_rounds(0, "2")


# =================================================================================
# Dubey & Pentland (NeurIPS 2020), FedUCB: Alg. 2 and Prop. 4
# =================================================================================


def _feducb_reference(
    epsilon: float,
    delta: float,
    *,
    n: int,
    n_agents: int,
    dim: int,
    bound_x: float = 1.0,
    alpha: float = 0.1,
) -> tuple[int, float, float, float]:
    """``(m, σ_N, Λ, κ)`` straight from the paper's displays (B = 1, as printed)."""
    # Alg. 2 line 2 / §4.3: m = 1 + ⌈log2 n⌉, the smallest k with 2**k >= n, plus 1.
    k = 0
    while 2**k < n:
        k += 1
    m = 1 + k
    l2 = bound_x**2 + 1  # the paper's (L² + 1)
    # Alg. 2 line 5: N̂_ij ~ N(0, 16 m (L²+1)² log(2/δ)² / ε²), natural log.
    sigma = math.sqrt(16 * m * l2**2 * math.log(2 / delta) ** 2 / epsilon**2)
    # §4.3: Λ = √32 m (L²+1) log(4/δ) (4√d + 2 ln(2nM/α)) / ε.
    union = math.log(2 * n * n_agents / alpha)
    lam = math.sqrt(32) * m * l2 * math.log(4 / delta) * (4 * dim**0.5 + 2 * union)
    lam /= epsilon
    # Prop. 4: κ ≤ sqrt(m (L²+1) (√d + 2 log(2nM/α)) / (√2 ε)).
    kappa = math.sqrt(m * l2 * (dim**0.5 + 2 * union) / (2**0.5 * epsilon))
    return m, sigma, lam, kappa


@pytest.mark.parametrize(
    ("epsilon", "sigma", "classical", "lam", "rho_max", "kappa"),
    [
        # feducb.md §6.4 table: L = 1, δ = 0.1, d = 10, M = 100, α = 0.1, T = 10⁷,
        # n = T (worst case), m = 25.
        (0.1, 1198, 1757, 6.27e5, 1.88e6, 133.8),
        (1.0, 119.8, 175.7, 6.27e4, 1.88e5, 42.3),
        (10.0, 12.0, 17.6, 6.27e3, 1.88e4, 13.4),
    ],
)
def test_feducb_reproduces_report_table(
    epsilon: float, sigma: float, classical: float, lam: float, rho_max: float, kappa: float
) -> None:
    cal = feducb_privatizer(epsilon, 0.1, horizon=10**7, n_agents=100, dim=10)
    m, ref_sigma, ref_lam, ref_kappa = _feducb_reference(
        epsilon, 0.1, n=10**7, n_agents=100, dim=10
    )
    assert cal.tree_depth == m == 25 and cal.n_syncs == 10**7
    assert cal.noise_stddev == pytest.approx(ref_sigma, rel=1e-12)
    assert cal.op_norm_bound == pytest.approx(ref_lam, rel=1e-12)
    assert cal.kappa == pytest.approx(ref_kappa, rel=1e-12)
    assert cal.rho_min == cal.op_norm_bound and cal.rho_max == 3 * cal.op_norm_bound
    # feducb.md §3.6 item 1: classical σ² = 16 m (L²+1)² ln(2/δ) ln(2.5 m/δ) / ε².
    ref_classical = math.sqrt(16 * 25 * 4 * math.log(20) * math.log(2.5 * 25 / 0.1) / epsilon**2)
    assert cal.classical_noise_stddev == pytest.approx(ref_classical, rel=1e-12)
    # The report's rounded values.
    assert cal.noise_stddev == pytest.approx(sigma, rel=2e-3)
    assert cal.classical_noise_stddev == pytest.approx(classical, rel=2e-3)
    assert cal.op_norm_bound == pytest.approx(lam, rel=2e-3)
    assert cal.rho_max == pytest.approx(rho_max, rel=2e-3)
    assert cal.kappa == pytest.approx(kappa, rel=2e-3)
    # The claim is the input (ε, δ) (Remark 3, Prop. 3).
    assert (cal.claimed_epsilon, cal.claimed_delta) == (epsilon, 0.1)


def test_feducb_with_syncs_fixed_a_priori() -> None:
    # feducb.md §6.4: n = 1612 ≈ M ln T gives m = 12, σ_N = 83.0 and Λ ≈ 2.1e4.
    cal = feducb_privatizer(1.0, 0.1, horizon=10**7, n_agents=100, dim=10, n_syncs=1612)
    m, ref_sigma, ref_lam, _ = _feducb_reference(1.0, 0.1, n=1612, n_agents=100, dim=10)
    assert cal.tree_depth == m == 12 and cal.n_syncs == 1612
    assert cal.noise_stddev == pytest.approx(ref_sigma, rel=1e-12)
    assert cal.noise_stddev == pytest.approx(83.0, rel=1e-3)
    assert cal.op_norm_bound == pytest.approx(ref_lam, rel=1e-12)
    assert cal.op_norm_bound == pytest.approx(2.1e4, rel=0.02)


def test_feducb_experiment_setting() -> None:
    # ε = 1, δ = 0.1 (Fig. 1), d = 10 (Exp. 1), M = 10 (Fig. 2), T = 10⁴, n = T:
    # m = 1 + ⌈log2 10⁴⌉ = 15 and σ_N = 4 √15 · 2 · ln 20 / 1.
    cal = feducb_privatizer(1.0, 0.1, horizon=10**4, n_agents=10, dim=10)
    assert cal.tree_depth == 15
    assert cal.noise_stddev == pytest.approx(8 * math.sqrt(15) * math.log(20), rel=1e-12)
    assert cal.noise_stddev == pytest.approx(92.819, rel=1e-5)


def test_feducb_versions_differ_only_in_beta() -> None:
    full = feducb_privatizer(1.0, 0.1, horizon=10**7, n_agents=100, dim=10)
    neurips = feducb_privatizer(1.0, 0.1, horizon=10**7, n_agents=100, dim=10, version="neurips")
    assert dataclasses.replace(neurips, version="full", beta_privacy_term=0.0) == (
        dataclasses.replace(full, beta_privacy_term=0.0)
    )
    # Prop. 2: [H] M S sqrt(ρ_max) + M κ; [P] S sqrt(M ρ_max) + κ sqrt(M); S = 1.
    rho_max, kappa = full.rho_max, full.kappa
    assert full.beta_privacy_term == pytest.approx(
        100 * math.sqrt(rho_max) + 100 * kappa, rel=1e-12
    )
    assert neurips.beta_privacy_term == pytest.approx(
        math.sqrt(100 * rho_max) + kappa * 10, rel=1e-12
    )
    # feducb.md §5.1: "about 4.8×10³ ([P] form) or 4.8×10⁴ ([H] form)".
    assert neurips.beta_privacy_term == pytest.approx(4.8e3, rel=0.01)
    assert full.beta_privacy_term == pytest.approx(4.8e4, rel=0.01)


@given(
    n=st.integers(min_value=1, max_value=10**6),
    epsilon=st.floats(min_value=0.01, max_value=20.0),
    delta=st.floats(min_value=1e-9, max_value=0.9),
)
def test_feducb_depth_and_noise_multiplier(n: int, epsilon: float, delta: float) -> None:
    cal = feducb_privatizer(epsilon, delta, horizon=10**6, n_agents=3, dim=2, n_syncs=n)
    m = cal.tree_depth
    assert 2 ** (m - 1) >= n and (n == 1 or 2 ** (m - 2) < n)  # 1 + ⌈log2 n⌉
    assert isinstance(cal, FedUCBCalibration)
    # σ_N / (L²+1) = 4 √m ln(2/δ) / ε, and σ_N = Δ₂ sqrt(2 ln(2/δ)) / ε₀ with the
    # per-node budget ε₀ = ε / sqrt(8 m ln(2/δ)) (§4.3).
    log_term = math.log(2 / delta)
    assert cal.noise_multiplier == pytest.approx(4 * m**0.5 * log_term / epsilon)
    assert cal.node_epsilon == pytest.approx(epsilon / math.sqrt(8 * m * log_term))
    assert cal.node_delta == pytest.approx(delta / (2 * m))
    assert cal.noise_stddev == pytest.approx(
        2 * math.sqrt(2 * log_term) / cal.node_epsilon, rel=1e-12
    )
    # The paper's σ_N never exceeds the classical calibration (§3.6 item 1).
    assert cal.noise_stddev < cal.classical_noise_stddev


def test_feducb_bounds_and_depth_override() -> None:
    base = feducb_privatizer(1.0, 0.1, horizon=1000, n_agents=4, dim=3)
    # bound_y = 1 is the paper's (L² + 1); B = 2 gives L² + B² = 5.
    wide = feducb_privatizer(1.0, 0.1, horizon=1000, n_agents=4, dim=3, bound_y=2.0)
    assert base.l2_sensitivity == 2.0 and wide.l2_sensitivity == 5.0
    assert wide.noise_stddev == pytest.approx(2.5 * base.noise_stddev)
    deeper = feducb_privatizer(
        1.0, 0.1, horizon=1000, n_agents=4, dim=3, tree_depth=base.tree_depth + 2
    )
    assert deeper.tree_depth == base.tree_depth + 2 == 13
    assert deeper.noise_stddev == pytest.approx(base.noise_stddev * math.sqrt(13 / 11), rel=1e-12)


def test_feducb_validation() -> None:
    kwargs = {"horizon": 100, "n_agents": 2, "dim": 2}
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got 0\.0"):
        feducb_privatizer(0.0, 0.1, **kwargs)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got inf"):
        feducb_privatizer(math.inf, 0.1, **kwargs)
    for delta in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"`delta` must be in \(0, 1\)"):
            feducb_privatizer(1.0, delta, **kwargs)
    with pytest.raises(ValueError, match=r"`failure_probability` must be in \(0, 1\)"):
        feducb_privatizer(1.0, 0.1, failure_probability=1.0, **kwargs)
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        feducb_privatizer(1.0, 0.1, horizon=0, n_agents=2, dim=2)
    with pytest.raises(ValueError, match=r"`dim` must be >= 1, got 0"):
        feducb_privatizer(1.0, 0.1, horizon=10, n_agents=2, dim=0)
    with pytest.raises(ValueError, match=r"`n_agents` must be >= 1, got 0"):
        feducb_privatizer(1.0, 0.1, horizon=10, n_agents=0, dim=2)
    with pytest.raises(ValueError, match=r"`n_syncs` must be >= 1, got 0"):
        feducb_privatizer(1.0, 0.1, n_syncs=0, **kwargs)
    with pytest.raises(ValueError, match=r"`n_syncs` must be <= horizon = 100, got 101"):
        feducb_privatizer(1.0, 0.1, n_syncs=101, **kwargs)
    with pytest.raises(ValueError, match=r"`tree_depth` must be >= 1 \+ ceil\(log2 n\) = 8"):
        feducb_privatizer(1.0, 0.1, tree_depth=7, **kwargs)
    with pytest.raises(ValueError, match=r"`bound_x` must be in \(0, inf\)"):
        feducb_privatizer(1.0, 0.1, bound_x=0.0, **kwargs)
    with pytest.raises(ValueError, match=r"`version` must be one of \('full', 'neurips'\)"):
        feducb_privatizer(1.0, 0.1, version="arxiv", **kwargs)


# =================================================================================
# Li & Song: Lap(1/(M ε n_r)) per agent, arm and epoch
# =================================================================================


@pytest.mark.parametrize(
    ("epsilon", "claimed"), [(0.1, 5.0), (0.3, 15.0), (0.5, 25.0), (1.0, 50.0)]
)
def test_li_song_experiment_claims(epsilon: float, claimed: float) -> None:
    # Li & Song §VII-A, Fig. 4: the experiments' ε ∈ {0.1, 0.3, 0.5, 1} with M = 50 are
    # per-message guarantees of 5, 15, 25 and 50 (Theorems 1, 3, 4: "Mε").
    assert li_song_claimed_epsilon(epsilon, n_agents=50) == pytest.approx(claimed)
    # App. B: Lap(1/(Mε[S(r) − S(r−1)])) on a mean of sensitivity 1/(S(r) − S(r−1)).
    scale = li_song_epoch_scale(epsilon, n_agents=50, n_pulls_in_epoch=37)
    assert scale == pytest.approx(1 / (50 * epsilon * 37), rel=1e-15)
    assert li_song_mean_sensitivity(37) / scale == pytest.approx(claimed, rel=1e-12)


@given(
    epsilon=st.floats(min_value=1e-3, max_value=10.0),
    n_agents=st.integers(min_value=1, max_value=500),
    n_pulls=st.integers(min_value=1, max_value=10**6),
)
def test_li_song_release_epsilon_is_m_epsilon(epsilon: float, n_agents: int, n_pulls: int) -> None:
    scale = li_song_epoch_scale(epsilon, n_agents=n_agents, n_pulls_in_epoch=n_pulls)
    claimed = li_song_claimed_epsilon(epsilon, n_agents=n_agents)
    assert claimed == pytest.approx(n_agents * epsilon, rel=1e-15)
    # ε_release = sensitivity / scale, through the accountant's Laplace event.
    release = events.Laplace(scale=scale, l1_sensitivity=li_song_mean_sensitivity(n_pulls))
    assert event_epsilon(release) == pytest.approx(claimed, rel=1e-12)


@given(
    tenths=st.integers(min_value=1, max_value=20),
    n_agents=st.integers(min_value=1, max_value=200),
    epsilon=st.floats(min_value=1e-3, max_value=10.0),
)
def test_li_song_partial_participation(tenths: int, n_agents: int, epsilon: float) -> None:
    rate = tenths / 20  # p ∈ {0.05, 0.1, ..., 1}
    # §IV-B: N = ⌈pM⌉, in exact decimal arithmetic.
    expected = math.ceil(Fraction(str(rate)) * n_agents)
    assert li_song_participants(n_agents, rate) == expected
    claimed = li_song_claimed_epsilon(
        epsilon, n_agents=n_agents, partial=True, participation_rate=rate
    )
    assert claimed == pytest.approx(expected * epsilon, rel=1e-15)
    scale = li_song_epoch_scale(
        epsilon, n_agents=n_agents, n_pulls_in_epoch=9, partial=True, participation_rate=rate
    )
    assert scale == pytest.approx(1 / (expected * epsilon * 9), rel=1e-15)
    assert li_song_mean_sensitivity(9) / scale == pytest.approx(claimed, rel=1e-12)
    by_count = li_song_epoch_scale(
        epsilon, n_agents=n_agents, n_pulls_in_epoch=9, partial=True, n_participants=expected
    )
    assert by_count == scale


def test_li_song_partial_known_values() -> None:
    # li_song.md §3.5 P9: N = ⌈0.2 · 50⌉ = 10; float 0.7 · 10 = 7.000000000000001.
    assert li_song_participants(50, 0.2) == 10
    assert li_song_participants(10, 0.7) == 7
    assert li_song_participants(3, 0.5) == 2
    assert li_song_claimed_epsilon(
        0.1, n_agents=50, partial=True, participation_rate=0.2
    ) == pytest.approx(1.0)


def test_li_song_validation() -> None:
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got 0\.0"):
        li_song_epoch_scale(0.0, n_agents=5, n_pulls_in_epoch=3)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got -1\.0"):
        li_song_claimed_epsilon(-1.0, n_agents=5)
    with pytest.raises(ValueError, match=r"`n_pulls_in_epoch` must be >= 1, got 0"):
        li_song_epoch_scale(1.0, n_agents=5, n_pulls_in_epoch=0)
    with pytest.raises(ValueError, match=r"`n_pulls_in_epoch` must be >= 1, got 0"):
        li_song_mean_sensitivity(0)
    with pytest.raises(ValueError, match=r"`n_agents` must be >= 1, got 0"):
        li_song_claimed_epsilon(1.0, n_agents=0)
    for rate in (0.0, -0.2, 1.5):
        with pytest.raises(ValueError, match=r"`participation_rate` must be in \(0, 1\]"):
            li_song_claimed_epsilon(1.0, n_agents=5, partial=True, participation_rate=rate)
    with pytest.raises(ValueError, match=r"`n_participants` must be <= n_agents = 5"):
        li_song_claimed_epsilon(1.0, n_agents=5, partial=True, n_participants=6)
    with pytest.raises(ValueError, match=r"`n_participants` must be >= 1, got 0"):
        li_song_claimed_epsilon(1.0, n_agents=5, partial=True, n_participants=0)
    with pytest.raises(ValueError, match=r"needs exactly one of `n_participants`"):
        li_song_claimed_epsilon(1.0, n_agents=5, partial=True)
    with pytest.raises(ValueError, match=r"needs exactly one of `n_participants`"):
        li_song_claimed_epsilon(
            1.0, n_agents=5, partial=True, n_participants=2, participation_rate=0.4
        )
    with pytest.raises(ValueError, match=r"require `partial=True`"):
        li_song_epoch_scale(1.0, n_agents=5, n_pulls_in_epoch=3, n_participants=2)
    with pytest.raises(TypeError, match=r"`partial` must be a bool"):
        li_song_claimed_epsilon(1.0, n_agents=5, partial=1)  # type: ignore[arg-type]


# =================================================================================
# Dubey & Pentland (AAMAS 2020): interval mechanism (reconstructed)
# =================================================================================


def _zeta(s: float) -> float:
    """Riemann ζ(s), s > 1: partial sum to N plus the Euler–Maclaurin tail."""
    n = 10**5
    j = np.arange(1, n, dtype=np.float64)
    return float(np.sum(j**-s)) + n ** (1 - s) / (s - 1) + 0.5 * n**-s


@pytest.mark.parametrize(
    ("epsilon", "f"), [(0.1, 10), (0.3, 4), (0.5, 2), (1.0, 1), (2.0, 1), (0.07, 15), (1 / 3, 3)]
)
def test_interval_length_known_values(epsilon: float, f: int) -> None:
    assert (
        interval_length(epsilon) == f
    )  # f = ⌈1/ε⌉ (DP-UCB-INT, reconstructed with medium confidence)


@given(
    thousandths=st.integers(min_value=1, max_value=3000),
    horizon=st.integers(min_value=1, max_value=400),
)
def test_interval_schedule_is_multiples_of_f(thousandths: int, horizon: int) -> None:
    epsilon = thousandths / 1000
    f = math.ceil(1 / Fraction(str(epsilon)))  # exact decimal arithmetic
    assert interval_length(epsilon) == f
    brute = [n for n in range(1, horizon + 1) if n % f == 0]
    schedule = interval_release_schedule(epsilon, horizon)
    assert schedule.dtype == np.int64
    assert schedule.tolist() == brute


@given(
    theta=st.floats(min_value=1.01, max_value=1.99),
    counts=st.lists(st.integers(min_value=1, max_value=10**6), min_size=1, max_size=20),
    epsilon=st.floats(min_value=1e-3, max_value=5.0),
)
def test_interval_scales_and_release_epsilons(
    theta: float, counts: list[int], epsilon: float
) -> None:
    n = np.asarray(counts, dtype=np.float64)
    # TD16 rule (reconstructed with medium confidence): b(n) = n^{-(1 - θ/2)}; per message ε_n = (1/n)/b(n) = n^{-θ/2}.
    scales = interval_noise_scales(epsilon, counts, theta=theta)
    np.testing.assert_allclose(scales, n ** -(1 - theta / 2), rtol=1e-14)
    released = interval_release_epsilons(epsilon, counts, theta=theta)
    np.testing.assert_allclose(released, (1 / n) / scales, rtol=1e-12)
    np.testing.assert_allclose(released, n ** (-theta / 2), rtol=1e-14)
    # Fixed rule (reconstructed with low confidence): b(n) = 1/(n ε), so every release is ε-DP.
    fixed = interval_noise_scales(epsilon, counts, rule="fixed")
    np.testing.assert_allclose(fixed, 1 / (n * epsilon), rtol=1e-14)
    np.testing.assert_allclose(
        (1 / n) / fixed, interval_release_epsilons(epsilon, counts, rule="fixed")
    )


@pytest.mark.parametrize(
    ("epsilon", "theta", "horizon", "releases", "first", "basic", "sqrt_term"),
    [
        # byzantine.md §3.6 table (δ' = 1e-5, TD16 rule): ε_dp, ϑ, N, #releases, ε₁,
        # basic, and the "T→∞ √-term bound" sqrt(2 ln(1/δ') f^{-ϑ} ζ(ϑ)).
        (0.1, 1.1, 10**2, 10, 0.282, 1.33, 4.40),
        (0.1, 1.1, 10**3, 100, 0.282, 4.51, 4.40),
        (0.1, 1.1, 10**4, 1000, 0.282, 13.55, 4.40),
        (0.1, 1.5, 10**4, 1000, 0.178, 3.39, 1.38),
        (0.5, 1.1, 10**3, 500, 0.683, 23.7, 10.66),
        (1.0, 1.1, 10**3, 1000, 1.000, 48.1, 15.61),
        (1.0, 1.5, 10**3, 1000, 1.000, 19.1, 7.76),
    ],
)
def test_interval_claims_match_report(
    epsilon: float,
    theta: float,
    horizon: int,
    releases: int,
    first: float,
    basic: float,
    sqrt_term: float,
) -> None:
    claim = interval_claimed_guarantee(epsilon, horizon, target_delta=1e-5, theta=theta)
    assert isinstance(claim, IntervalClaim)
    f = math.ceil(1 / epsilon)
    assert (claim.interval, claim.n_releases) == (f, releases)
    eps_j = [(j * f) ** (-theta / 2) for j in range(1, releases + 1)]
    assert claim.per_release_epsilon == pytest.approx(eps_j[0], rel=1e-14)
    assert claim.per_release_epsilon == pytest.approx(first, abs=6e-4)
    assert claim.basic_epsilon == pytest.approx(math.fsum(eps_j), rel=1e-12)
    assert claim.basic_epsilon == pytest.approx(basic, rel=3e-3)  # 3 digits
    # DRV'10 k-fold: ε₀ sqrt(2k ln(1/δ')) + k ε₀ (e^ε₀ − 1), ε₀ = ε₁, k = #releases.
    log_term = math.log(1e5)
    e0 = eps_j[0]
    homogeneous = e0 * math.sqrt(2 * releases * log_term) + releases * e0 * math.expm1(e0)
    assert claim.homogeneous_epsilon == pytest.approx(homogeneous, rel=1e-12)
    # ζ route: sqrt(2 ln(1/δ') ζ f^-ϑ) + ζ f^-ϑ (e^ε₁ − 1)/ε₁.
    squares = _zeta(theta) * f**-theta
    root = math.sqrt(2 * log_term * squares)
    assert root == pytest.approx(sqrt_term, abs=6e-3)
    assert claim.zeta_epsilon == pytest.approx(root + squares * math.expm1(e0) / e0, rel=1e-9)
    # Heterogeneous advanced composition over the actual releases never exceeds it.
    hetero = math.sqrt(2 * log_term * math.fsum(e * e for e in eps_j)) + math.fsum(
        e * math.expm1(e) for e in eps_j
    )
    assert hetero <= claim.zeta_epsilon


@pytest.mark.parametrize(("horizon", "expected"), [(10**3, 22.7), (10**4, 134.5), (10**5, 1053)])
def test_interval_homogeneous_claim_grows_like_sqrt_t(horizon: int, expected: float) -> None:
    # byzantine.md §3.6: "ε′ ≈ 22.7 / 134.5 / 1053 for ε_dp = 0.1, ϑ = 1.1 and
    # N = 10³ / 10⁴ / 10⁵".
    claim = interval_claimed_guarantee(0.1, horizon, target_delta=1e-5, theta=1.1)
    assert claim.homogeneous_epsilon == pytest.approx(expected, rel=2e-3)


def test_interval_fixed_rule_claim() -> None:
    claim = interval_claimed_guarantee(0.25, 100, target_delta=1e-6, rule="fixed")
    assert (claim.interval, claim.n_releases, claim.theta) == (4, 25, None)
    assert claim.per_release_epsilon == 0.25
    assert claim.basic_epsilon == pytest.approx(25 * 0.25)
    assert claim.zeta_epsilon == math.inf  # Σ ε_j² = k ε² is unbounded in T
    expected = 0.25 * math.sqrt(2 * 25 * math.log(1e6)) + 25 * 0.25 * math.expm1(0.25)
    assert claim.homogeneous_epsilon == pytest.approx(expected, rel=1e-12)


def test_interval_claim_without_release() -> None:
    claim = interval_claimed_guarantee(0.1, 9, target_delta=1e-5, theta=1.1)
    assert claim.n_releases == 0
    assert claim.basic_epsilon == claim.homogeneous_epsilon == claim.per_release_epsilon == 0
    assert interval_release_schedule(0.1, 9).size == 0


def test_interval_confidence_labels_every_formula() -> None:
    for key in ("interval", "schedule", "decaying", "fixed", "homogeneous", "zeta"):
        assert INTERVAL_CONFIDENCE[key].split(":")[0] in {
            "high confidence",
            "medium confidence",
            "low confidence",
            "medium to low confidence",
            "derived by fedpriv (on the medium/low-confidence reconstruction)",
            "derived by fedpriv (on the low-confidence reconstruction)",
        }
    assert INTERVAL_CONFIDENCE["fixed"].startswith("low confidence")
    assert INTERVAL_CONFIDENCE["decaying"].startswith("medium confidence")


def test_interval_validation() -> None:
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got 0\.0"):
        interval_release_schedule(0.0, 10)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, inf\), got -0\.5"):
        interval_noise_scales(-0.5, [1], theta=1.5)
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        interval_release_schedule(0.5, 0)
    for theta in (1.0, 2.0, 0.5, 2.5):
        with pytest.raises(ValueError, match=r"`theta` must be in \(1, 2\)"):
            interval_noise_scales(0.5, [1, 2], theta=theta)
    with pytest.raises(ValueError, match=r"`theta` must be in \(1, 2\)"):
        interval_claimed_guarantee(0.5, 10, target_delta=1e-5, theta=2.0)
    with pytest.raises(ValueError, match=r"`theta` is required for rule='decaying'"):
        interval_release_epsilons(0.5, [1, 2])
    with pytest.raises(ValueError, match=r"`counts` must be >= 1, got 0"):
        interval_noise_scales(0.5, [0, 2], theta=1.5)
    with pytest.raises(ValueError, match=r"`counts` must be >= 1, got -3"):
        interval_release_epsilons(0.5, [-3], rule="fixed")
    with pytest.raises(TypeError, match=r"`counts` must hold integers"):
        interval_noise_scales(0.5, [1.5], theta=1.5)
    with pytest.raises(ValueError, match=r"`rule` must be one of \('decaying', 'fixed'\)"):
        interval_noise_scales(0.5, [1], theta=1.5, rule="constant")
    for delta in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"`target_delta` must be in \(0, 1\)"):
            interval_claimed_guarantee(0.5, 10, target_delta=delta, theta=1.5)
