"""Tests for `fedpriv.privacy.ledger.accountant`: the typed, structured accountant.

Expected ε values are computed here from the composition rules (parallel over disjoint
cells = max, sequential inside a cell = sum, pure ε of Laplace = Δ/b), not read back
from the accountant. The PLD route is checked against the exact hockey-stick
divergence of the Laplace mechanism, ``δ(ε') = 1 - exp((ε' - 1/b)/2)``.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import defaultdict
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from fedpriv.privacy import (
    RELATIVE_TOLERANCE,
    Accountant,
    ApproxDP,
    IntervalRelease,
    NeighboringRelation,
    PoissonSampled,
    PureDP,
    SymmetricMatrixGaussianTree,
)
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import BudgetExceededError, UnsupportedEventError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.privacy._support import assert_unchanged, snapshot

# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------


def _laplace_delta(scale: float, target_epsilon: float) -> float:
    """Exact δ(ε') of one Lap(scale) release of a sensitivity-1 statistic."""
    epsilon = 1.0 / scale
    return 0.0 if target_epsilon >= epsilon else -math.expm1((target_epsilon - epsilon) / 2)


SCALES = [2.0, 4.0, 5.0, 10.0]  # few distinct scales keep the PLD cache warm
#: Every query also builds the PLD route. Property tests about the pure route use a
#: coarse (still pessimistic, still valid) PLD grid so that they stay fast.
COARSE = 1e-2

# ---------------------------------------------------------------------------------
# Construction
# ---------------------------------------------------------------------------------


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match=r"key levels must be distinct"):
        Accountant(disjoint=("agent", "arm"), sequential=("agent",))
    with pytest.raises(
        TypeError, match=r"`budget` must be one of PureDP, ApproxDP, ZCDP, GaussianDP .*got float"
    ):
        Accountant(budget=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`neighboring_relation` must be one of"):
        Accountant(neighboring_relation="nonsense")


def test_empty_accountant() -> None:
    accountant = Accountant(disjoint=("agent",), sequential=("phase",))
    assert set(accountant.routes.epsilons(0.0).values()) == {0.0}
    assert accountant.get_epsilon(1e-6) == 0.0
    assert accountant.get_delta(0.0) == 0.0
    assert list(accountant.ledger.draws.columns) == [
        "agent",
        "phase",
        "node",
        "level",
        "scale",
        "l1_sensitivity",
        "epsilon",
    ]
    assert accountant.ledger.draws.empty and accountant.ledger.charges.empty
    assert accountant.ledger.n_draws == 0


# ---------------------------------------------------------------------------------
# Reference values
# ---------------------------------------------------------------------------------


def test_tree_reference_value_and_routes() -> None:
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(events.LaplaceTree(scale=4.0, horizon=16), key={"agent": 0, "arm": 1})
    assert accountant.get_epsilon(0.0) == 1.25  # 5 levels x 1/4
    assert accountant.routes.tightest(0.0) == ("pure", 1.25)
    assert accountant.routes.epsilons(0.0)["pld"] == math.inf
    assert 1.24 <= accountant.routes.epsilons(1e-6)["pld"] <= 1.25
    # At a larger δ the PLD is the tighter route and get_epsilon picks it.
    route, epsilon = accountant.routes.tightest(1e-2)
    assert route == "pld" and epsilon < 1.25
    assert accountant.get_epsilon(1e-2) == accountant.routes.epsilons(1e-2)["pld"]


def test_query_validation() -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 0})
    with pytest.raises(ValueError, match=r"`target_delta` must be in \[0, 1\), got 1\.0"):
        accountant.routes.epsilons(1.0)
    with pytest.raises(ValueError, match=r"`target_delta` must be in \[0, 1\)"):
        accountant.get_epsilon(-0.1)
    with pytest.raises(ValueError, match=r"`target_epsilon` must be >= 0, got -1\.0"):
        accountant.get_delta(-1.0)
    with pytest.raises(ValueError, match=r"`where` level 'bogus' not declared"):
        accountant.routes.epsilons(0.0, where={"bogus": 1})


# ---------------------------------------------------------------------------------
# Composition structure
# ---------------------------------------------------------------------------------


def test_parallel_composition_over_disjoint_agents_is_the_max() -> None:
    accountant = Accountant(disjoint=("agent",))
    for agent in range(10):
        accountant.spend(events.Laplace(scale=10.0), key={"agent": agent})
    assert accountant.get_epsilon(0.0) == pytest.approx(0.1, rel=1e-15)  # not 1.0
    # The same ten releases charged in one vectorised call.
    batched = Accountant(disjoint=("agent",))
    batched.spend(events.Laplace(scale=10.0), key={"agent": np.arange(10)})
    assert batched.routes.epsilons(0.0) == accountant.routes.epsilons(0.0)
    assert len(batched.ledger.charges) == 10


def test_sequential_composition_within_a_cell_sums() -> None:
    accountant = Accountant(disjoint=("agent",), sequential=("phase",))
    accountant.spend(events.Laplace(scale=10.0), key={"agent": 0, "phase": "a"})
    accountant.spend(events.Laplace(scale=5.0), key={"agent": 0, "phase": "b"})
    accountant.spend(events.LaplaceTree(scale=10.0, horizon=4), key={"agent": 0})
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 1})
    expected = 0.1 + 0.2 + 3 * 0.1  # sequential levels do not split a cell
    assert accountant.get_epsilon(0.0) == pytest.approx(1.0, rel=1e-12)  # agent 1
    assert accountant.get_epsilon(0.0, where={"agent": 0}) == pytest.approx(expected, rel=1e-12)


def test_cells_are_the_joint_labels_of_all_disjoint_levels() -> None:
    accountant = Accountant(disjoint=("agent", "arm"))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 0})
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 1})
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 1, "arm": 0})
    assert accountant.get_epsilon(0.0) == 0.5  # three different cells
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 1, "arm": 0})
    assert accountant.get_epsilon(0.0) == 1.0  # cell (1, 0) holds two releases


def test_where_restricts_to_matching_charges() -> None:
    accountant = Accountant(disjoint=("agent",), sequential=("phase",))
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 0, "phase": "init"})
    accountant.spend(events.LaplaceTree(scale=4.0, horizon=16), key={"agent": 0, "phase": "stream"})
    accountant.spend(events.LaplaceTree(scale=4.0, horizon=16), key={"agent": 1, "phase": "stream"})
    accountant.spend(events.NonPrivate(reason="raw"), key={"agent": 2})  # no phase
    assert accountant.get_epsilon(0.0) == math.inf
    assert accountant.get_epsilon(0.0, where={"phase": "stream"}) == 1.25
    assert accountant.get_epsilon(0.0, where={"phase": "init"}) == 1.0
    assert accountant.get_epsilon(0.0, where={"agent": 0}) == 2.25
    assert accountant.get_epsilon(0.0, where={"agent": 0, "phase": "stream"}) == 1.25
    assert accountant.get_epsilon(0.0, where={"phase": "absent"}) == 0.0
    assert accountant.get_epsilon(0.0, where={"agent": 2}) == math.inf


def test_non_private_release_is_infinite() -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 0})
    accountant.spend(events.NonPrivate(reason="raw X(0)"), key={"agent": 1})
    assert set(accountant.routes.epsilons(0.0).values()) == {math.inf}
    assert set(accountant.routes.epsilons(0.5).values()) == {math.inf}
    assert accountant.get_delta(100.0) == 1.0
    assert accountant.get_epsilon(0.0, where={"agent": 0}) == 1.0
    charges = accountant.ledger.charges
    assert charges.loc[charges["agent"] == 1, "event"].tolist() == ["NonPrivate"]
    assert charges.loc[charges["agent"] == 1, "epsilon"].tolist() == [math.inf]
    accountant.spend(events.NonPrivate(reason="counts"), key={"agent": 2})
    assert accountant.ledger.non_private_reasons() == ["counts", "raw X(0)"]
    assert accountant.ledger.non_private_reasons(where={"agent": 1}) == ["raw X(0)"]
    assert accountant.ledger.non_private_reasons(where={"agent": 0}) == []


# ---------------------------------------------------------------------------------
# Key validation and unsupported events
# ---------------------------------------------------------------------------------


def test_bad_keys_raise_and_change_nothing() -> None:
    accountant = Accountant(disjoint=("agent", "arm"), sequential=("phase",))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0, "arm": 0})
    before = snapshot(accountant)
    event = events.Laplace(scale=1.0)
    with pytest.raises(ValueError, match=r"key level\(s\) \['trial'\] not declared"):
        accountant.spend(event, key={"agent": 0, "arm": 0, "trial": 1})
    with pytest.raises(ValueError, match=r"missing the disjoint level\(s\) \['arm'\]"):
        accountant.spend(event, key={"agent": 0, "phase": "x"})
    with pytest.raises(ValueError, match=r"same length"):
        accountant.spend(event, key={"agent": [0, 1, 2], "arm": [0, 1]})
    with pytest.raises(TypeError, match=r"`key` must be a mapping"):
        bad_key = [("agent", 0), ("arm", 0)]
        accountant.spend(event, key=bad_key)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"missing the disjoint level"):
        accountant.ledger.record_draws(
            keys={"agent": 0}, node=1, level=0, scale=1.0, l1_sensitivity=1.0
        )
    assert_unchanged(accountant, before)


def test_unsupported_event_raises_and_changes_nothing() -> None:
    class Gaussian:  # a foreign event type with no handler
        sigma = 1.0

    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0})
    before = snapshot(accountant)
    with pytest.raises(UnsupportedEventError, match=r"no accountant handler for Gaussian"):
        accountant.spend(Gaussian(), key={"agent": 0})  # type: ignore[arg-type]
    with pytest.raises(ValueError):  # UnsupportedEventError is a ValueError
        foreign = Gaussian()
        accountant.spend(foreign, key={"agent": [0, 1]})  # type: ignore[arg-type]
    assert_unchanged(accountant, before)


# ---------------------------------------------------------------------------------
# Budget
# ---------------------------------------------------------------------------------


def test_budget_exceeded_raises_and_leaves_the_ledger_unchanged() -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    accountant.spend(events.Laplace(scale=1 / 0.6), key={"agent": 0})
    accountant.ledger.record_draws(
        keys={"agent": 0}, node=-1, level=-1, scale=1 / 0.6, l1_sensitivity=1.0
    )
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError, match=r"nothing was released"):
        accountant.spend(events.Laplace(scale=1 / 0.6), key={"agent": 0})
    assert_unchanged(accountant, before)
    # A never-seen event type that exceeds is rolled back too.
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.LaplaceTree(scale=1.0, horizon=4), key={"agent": 5})
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.NonPrivate(reason="raw"), key={"agent": 6})
    assert_unchanged(accountant, before)
    # A batched charge is atomic: agent 1 alone would fit, agent 0 would not.
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=1 / 0.6), key={"agent": [1, 0]})
    assert_unchanged(accountant, before)
    # Other cells compose in parallel, so they still fit.
    accountant.spend(events.Laplace(scale=1 / 0.6), key={"agent": 1})
    assert accountant.get_epsilon(0.0) == pytest.approx(0.6, rel=1e-12)
    assert len(accountant.ledger.charges) == 2


def test_budget_allows_spending_exactly_the_budget() -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    for _ in range(10):
        accountant.spend(events.Laplace(scale=10.0), key={"agent": 0})
    assert accountant.get_epsilon(0.0) == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=1e6), key={"agent": 0})


def test_approx_budget_uses_the_tightest_route_at_its_delta() -> None:
    # Pure ε = 1.25 exceeds 1.24, but the PLD at δ = 1e-2 is below it.
    tree = events.LaplaceTree(scale=4.0, horizon=16)
    pld_at_delta = Accountant(disjoint=("agent",))
    pld_at_delta.spend(tree, key={"agent": 0})
    assert pld_at_delta.routes.epsilons(1e-2)["pld"] < 1.24
    accountant = Accountant(disjoint=("agent",), budget=ApproxDP(1.24, 1e-2))
    accountant.spend(tree, key={"agent": 0})
    strict = Accountant(disjoint=("agent",), budget=PureDP(1.24))
    with pytest.raises(BudgetExceededError):
        strict.spend(tree, key={"agent": 0})


def test_would_exceed_does_not_change_state() -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0})
    before = snapshot(accountant)
    assert accountant.odometer.would_exceed(events.Laplace(scale=1.0), key={"agent": 0}) is True
    assert accountant.odometer.would_exceed(events.Laplace(scale=2.0), key={"agent": 0}) is False
    assert accountant.odometer.would_exceed(
        events.LaplaceTree(scale=1.0, horizon=2), key={"agent": 3}
    )
    assert not accountant.odometer.would_exceed(
        events.LaplaceTree(scale=4.0, horizon=2), key={"agent": 3}
    )
    assert_unchanged(accountant, before)
    # After the dry runs, real charges behave as if they never happened.
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0})
    assert accountant.get_epsilon(0.0) == 1.0
    unlimited = Accountant(disjoint=("agent",))
    assert unlimited.odometer.would_exceed(events.NonPrivate(), key={"agent": 0}) is False
    assert unlimited.ledger.charges.empty


# ---------------------------------------------------------------------------------
# Ledger and charges exports
# ---------------------------------------------------------------------------------


def test_ledger_has_one_row_per_draw() -> None:
    accountant = Accountant(disjoint=("agent", "arm"), sequential=("phase",))
    accountant.spend(events.LaplaceTree(scale=4.0, horizon=8), key={"agent": [0, 1, 2], "arm": 1})
    accountant.ledger.record_draws(
        keys={"agent": [0, 1, 2], "arm": 1}, node=[4, 4, 4], level=2, scale=4.0, l1_sensitivity=1.0
    )
    accountant.ledger.record_draws(
        keys={"agent": 2, "arm": 0, "phase": "x"}, node=5, level=0, scale=2.0, l1_sensitivity=3.0
    )
    ledger = accountant.ledger.draws
    assert list(ledger.columns) == [
        "agent",
        "arm",
        "phase",
        "node",
        "level",
        "scale",
        "l1_sensitivity",
        "epsilon",
    ]
    assert len(ledger) == accountant.ledger.n_draws == 4
    assert ledger["agent"].tolist() == [0, 1, 2, 2]
    assert ledger["arm"].tolist() == [1, 1, 1, 0]
    assert ledger["node"].tolist() == [4, 4, 4, 5]
    assert ledger["level"].tolist() == [2, 2, 2, 0]
    assert ledger["epsilon"].tolist() == [0.25, 0.25, 0.25, 1.5]
    assert ledger["phase"].isna().tolist() == [True, True, True, False]
    # Ledger rows are bookkeeping: they never change the charged ε.
    assert accountant.get_epsilon(0.0) == 1.0  # 4 levels x 1/4


def test_keep_draw_rows_false_only_counts() -> None:
    accountant = Accountant(disjoint=("agent",), keep_draw_rows=False)
    accountant.ledger.record_draws(
        keys={"agent": [0, 1, 2]}, node=1, level=0, scale=1.0, l1_sensitivity=1.0
    )
    accountant.ledger.record_draws(
        keys={"agent": 0}, node=[2, 3], level=0, scale=1.0, l1_sensitivity=1.0
    )
    assert accountant.ledger.n_draws == 5
    assert accountant.ledger.draws.empty
    assert list(accountant.ledger.draws.columns)[:1] == ["agent"]


def test_charges_frame_describes_each_release() -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=2.0, l1_sensitivity=3.0), key={"agent": [7, 8]})
    accountant.spend(events.LaplaceTree(scale=4.0, horizon=16), key={"agent": 7})
    charges = accountant.ledger.charges
    assert charges["agent"].tolist() == [7, 8, 7]
    assert charges["event"].tolist() == ["Laplace", "Laplace", "LaplaceTree"]
    assert charges["horizon"].tolist() == [0, 0, 16]
    assert charges["epsilon"].tolist() == [1.5, 1.5, 1.25]


# ---------------------------------------------------------------------------------
# get_delta
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 2.0, 3.0])
def test_get_delta_of_one_laplace_is_its_exact_divergence(scale: float) -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(events.Laplace(scale=scale), key={"agent": 0})
    for fraction in (0.0, 0.1, 0.5, 0.9, 1.0, 2.0):
        target = fraction / scale
        exact = _laplace_delta(scale, target)
        got = accountant.get_delta(target)
        # Never below the truth (soundness); within 1e-6 of it (pessimistic PLD).
        assert exact - 1e-12 <= got <= exact + 1e-6
        # ... and at most the pure bound of ε = 1/scale, rounded up where the float
        # is below it (fl(1/3) < 1/3: δ(fl(1/3)) is 9e-18 > 0, never 0, issue 19)
        epsilon = 1.0 / scale
        if Fraction(epsilon) < 1 / Fraction(scale):
            epsilon = math.nextafter(epsilon, math.inf)
        assert got <= PureDP(epsilon).get_delta(target)


@settings(max_examples=15)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from(SCALES), st.sampled_from([1, 4])),
        min_size=1,
        max_size=3,
    )
)
def test_get_delta_is_below_pure_conversion_and_non_increasing(
    charges: list[tuple[int, float, int]],
) -> None:
    accountant = Accountant(disjoint=("agent",), pld_discretization=1e-3)
    for agent, scale, horizon in charges:
        accountant.spend(events.LaplaceTree(scale=scale, horizon=horizon), key={"agent": agent})
    pure = accountant.get_epsilon(0.0)
    grid = np.linspace(0.0, 1.2 * pure, 5)
    deltas = [accountant.get_delta(float(e)) for e in grid]
    for target, delta in zip(grid, deltas, strict=True):
        assert 0.0 <= delta <= PureDP(pure).get_delta(float(target)) + 1e-15
    assert all(a >= b for a, b in itertools.pairwise(deltas))
    assert deltas[-1] <= 1e-12  # beyond the pure ε nothing is left


# ---------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------


@given(st.sampled_from(SCALES), st.integers(min_value=1, max_value=8))
def test_epsilon_is_non_decreasing_in_releases(scale: float, releases: int) -> None:
    accountant = Accountant(disjoint=("agent",), pld_discretization=COARSE)
    previous = 0.0
    for k in range(1, releases + 1):
        accountant.spend(events.Laplace(scale=scale), key={"agent": 0})
        current = accountant.get_epsilon(0.0)
        assert current >= previous
        assert current == pytest.approx(k / scale, rel=1e-12)
        previous = current


@given(
    st.sampled_from(SCALES + [0.5, 3.0, 7.5]),
    st.sampled_from(SCALES + [0.5, 3.0, 7.5]),
    st.sampled_from([1, 3, 16, 1000]),
)
def test_epsilon_is_non_increasing_in_scale(a: float, b: float, horizon: int) -> None:
    small, large = sorted((a, b))
    results = []
    for scale in (small, large):
        accountant = Accountant(disjoint=("agent",), pld_discretization=COARSE)
        accountant.spend(events.LaplaceTree(scale=scale, horizon=horizon), key={"agent": 0})
        results.append(accountant.routes.epsilons(0.0)["pure"])
    assert results[0] >= results[1]


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(SCALES), st.sampled_from([1, 2, 16])),
        min_size=1,
        max_size=12,
    )
)
def test_parallel_composition_is_max_of_cell_sums(charges: list[tuple[int, float, int]]) -> None:
    accountant = Accountant(disjoint=("agent",), pld_discretization=COARSE)
    cell_sums: dict[int, float] = defaultdict(float)
    for agent, scale, horizon in charges:
        accountant.spend(events.LaplaceTree(scale=scale, horizon=horizon), key={"agent": agent})
        cell_sums[agent] += horizon.bit_length() / scale
    pure = accountant.routes.epsilons(0.0)["pure"]
    assert pure == pytest.approx(max(cell_sums.values()), rel=1e-12)
    for agent, total in cell_sums.items():
        assert accountant.get_epsilon(0.0, where={"agent": agent}) == pytest.approx(
            total, rel=1e-12
        )


@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.booleans(),
            st.sampled_from(SCALES + [0.5, 3.0]),
            st.sampled_from([1, 5, 16, 1000]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_pure_ledgers_stay_pure(charges: list[tuple[int, bool, float, int]]) -> None:
    accountant = Accountant(disjoint=("agent",), keep_draw_rows=False, pld_discretization=COARSE)
    for agent, is_tree, scale, horizon in charges:
        event = (
            events.LaplaceTree(scale=scale, horizon=horizon)
            if is_tree
            else events.Laplace(scale=scale)
        )
        accountant.spend(event, key={"agent": agent})
    routes = accountant.routes.epsilons(0.0)
    epsilon = accountant.get_epsilon(0.0)
    assert math.isfinite(routes["pure"]) and math.isfinite(epsilon) and epsilon > 0
    # Laplace is tight at δ = 0, so no route may report less than the exact pure
    # sum beyond floating-point rounding (the PLD route can be finite at δ = 0 for a
    # single Laplace release, a few ulp below it).
    assert routes["pure"] * (1 - RELATIVE_TOLERANCE) <= epsilon <= routes["pure"]


@given(
    st.lists(
        st.tuples(st.sampled_from(SCALES + [3.0]), st.sampled_from([1, 4, 16])),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([1e-8, 1e-6, 1e-3, 0.1]),
)
def test_pld_route_is_at_most_pure_plus_discretisation(
    charges: list[tuple[float, int]], delta: float
) -> None:
    # dp-accounting's pessimistic PLD rounds every privacy loss *up* to the grid of
    # `pld_discretization` (d), so k composed Laplace releases have a largest loss
    # <= k (1/b + d): the PLD route may exceed the exact pure ε by up to k d (e.g.
    # scale 3, where 1/3 is not on the grid), never more. One more d covers the
    # grid search of get_epsilon_for_delta.
    accountant = Accountant(disjoint=("agent",), pld_discretization=1e-3)
    n_laplace = 0
    for scale, horizon in charges:
        accountant.spend(events.LaplaceTree(scale=scale, horizon=horizon), key={"agent": 0})
        n_laplace += horizon.bit_length()
    routes = accountant.routes.epsilons(delta)
    slack = (n_laplace + 1) * accountant.routes.pld_discretization
    assert routes["pld"] <= routes["pure"] + slack
    # Routes within float rounding of the minimum are ties won by the simplest route.
    smallest = min(routes.values())
    assert smallest <= accountant.get_epsilon(delta) <= smallest * (1 + RELATIVE_TOLERANCE)
    assert accountant.get_epsilon(delta) <= routes["pure"]


def test_pld_route_on_grid_aligned_losses_is_at_most_pure() -> None:
    # With 1/b a multiple of the 1e-4 grid the rounding is exact, so the pessimistic
    # PLD is below the pure route at every δ > 0.
    for scale in (2.0, 4.0, 5.0, 10.0):
        accountant = Accountant(disjoint=("agent",))
        accountant.spend(events.LaplaceTree(scale=scale, horizon=16), key={"agent": 0})
        for delta in (1e-9, 1e-6, 1e-3):
            routes = accountant.routes.epsilons(delta)
            assert routes["pld"] <= routes["pure"] + 1e-9


def test_where_with_undeclared_level_raises():
    acc = Accountant(disjoint=("agent",), sequential=("phase",))
    with pytest.raises(ValueError, match="`where` level 'bogus' not declared"):
        acc.routes.epsilons(0.0, where={"bogus": 1})
    acc.spend(events.Laplace(scale=1.0), key={"agent": 0, "phase": "stream"})
    with pytest.raises(ValueError, match="`where` level 'bogus' not declared"):
        acc.routes.epsilons(0.0, where={"phase": "stream", "bogus": 1})


def test_empty_disjoint_levels_make_one_sequential_cell():
    # issue 14: Accountant() without structure accounts for a single mechanism
    acc = Accountant(disjoint=())
    acc.spend(events.Laplace(scale=1.0))
    acc.spend(events.Laplace(scale=1.0))
    assert acc.get_epsilon(0.0) == 2.0


def test_pure_route_answers_at_delta_zero():
    acc = Accountant(disjoint=("agent",))
    acc.spend(events.Laplace(scale=4.0), key={"agent": 0})
    assert acc.routes.tightest(0.0) == ("pure", 0.25)


def test_odometer_tracks_spend_and_refuses_past_the_budget():
    acc = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    assert acc.odometer.spent() == 0.0 and acc.odometer.remaining() == 1.0
    acc.spend(events.Laplace(scale=2.0), key={"agent": 0})
    assert acc.odometer.spent() == pytest.approx(0.5) and acc.odometer.remaining() == pytest.approx(
        0.5
    )
    assert not acc.odometer.would_exceed(events.Laplace(scale=2.0), key={"agent": 0})
    assert acc.odometer.would_exceed(events.Laplace(scale=1.0), key={"agent": 0})
    assert acc.odometer.spent() == pytest.approx(0.5)  # would_exceed changed nothing
    # Parallel composition: another agent's records are disjoint, so it fits.
    acc.spend(events.Laplace(scale=1.0), key={"agent": 1})
    with pytest.raises(BudgetExceededError):
        acc.spend(events.Laplace(scale=1.0), key={"agent": 0})
    assert acc.odometer.spent() == pytest.approx(1.0) and acc.odometer.remaining() == pytest.approx(
        0.0
    )
    assert math.isinf(Accountant(disjoint=("agent",)).odometer.remaining())


# ---------------------------------------------------------------------------------
# dp-accounting's shape: supports, compose, a required target_delta (issue 21)
# ---------------------------------------------------------------------------------


class _Unregistered:  # a foreign event type with no handler
    pass


def _frozen_unregistered():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Unregistered:
        x: float = 1.0

    return Unregistered()


def _sampled(relation: str, inner=None):
    inner = events.Laplace(scale=2.0) if inner is None else inner
    return PoissonSampled(event=inner, sampling_rate=0.1, neighboring_relation=relation)


#: (name, event): every event type, the relation-bound ones in both relation
#: families, nested inside the structural events, dp-accounting events, and objects
#: that are no event (or hide one without a handler).
SUPPORT_CASES = [
    ("laplace", events.Laplace(scale=2.0)),
    ("gaussian", events.Gaussian(noise_multiplier=2.0)),
    ("laplace_tree", events.LaplaceTree(scale=4.0, horizon=16)),
    ("gaussian_tree", events.GaussianTree(noise_multiplier=10.0, horizon=100)),
    ("discrete_laplace", events.DiscreteLaplace(scale=3.0, l1_sensitivity=2)),
    ("discrete_gaussian", events.DiscreteGaussian(sigma=5.0, l2_sensitivity=1.0)),
    ("binary_rr", events.RandomizedResponse(epsilon=0.3)),
    ("k_ary_rr", events.RandomizedResponse(epsilon=0.3, num_buckets=4)),
    ("opaque", events.OpaqueApproxDP(epsilon=0.2, delta=1e-9)),
    ("non_private", events.NonPrivate(reason="raw")),
    ("matrix", events.SymmetricMatrixGaussian(noise_stddev=2.0, dim=3, frobenius_sensitivity=1.5)),
    (
        "matrix_tree",
        SymmetricMatrixGaussianTree(noise_stddev=2.0, dim=3, frobenius_sensitivity=1.5, capacity=8),
    ),
    ("interval", IntervalRelease(scales=(1.0, 0.5), l1_sensitivities=(0.5, 0.25), counts=(2, 4))),
    ("sampled_add_remove", _sampled("add_or_remove_one")),
    ("sampled_replace", _sampled("replace_one")),
    ("self_composed_sampled_replace", events.SelfComposed(event=_sampled("replace_one"), count=3)),
    (
        "composed_sampled_add_remove",
        events.Composed(events=(events.Laplace(scale=1.0), _sampled("add_or_remove_one"))),
    ),
    (
        "self_composed_k_ary_rr",
        events.SelfComposed(event=events.RandomizedResponse(epsilon=0.3, num_buckets=3), count=2),
    ),
    ("dp_gaussian", dp_accounting.GaussianDpEvent(2.0)),
    ("dp_sampled", dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))),
    ("dp_unsupported", dp_accounting.UnsupportedDpEvent()),
    ("not_an_event", _Unregistered()),
    ("an_int", 5),
    ("self_composed_unregistered", events.SelfComposed(event=_frozen_unregistered(), count=2)),
    (
        "composed_unregistered",
        events.Composed(events=(events.Laplace(scale=1.0), _frozen_unregistered())),
    ),
]

#: Which cases no accountant supports, and which only one relation family does.
_NEVER = {
    "dp_unsupported",
    "not_an_event",
    "an_int",
    "self_composed_unregistered",
    "composed_unregistered",
}
_ADD_REMOVE_ONLY = {"sampled_add_remove", "composed_sampled_add_remove"}
_REPLACE_ONLY = {
    "k_ary_rr",
    "sampled_replace",
    "self_composed_sampled_replace",
    "self_composed_k_ary_rr",
}


def _spend_accepts(relation: NeighboringRelation, event) -> bool:
    try:
        Accountant(neighboring_relation=relation).spend(event)
    except (UnsupportedEventError, TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("relation", list(NeighboringRelation), ids=lambda r: r.value)
@pytest.mark.parametrize("name, event", SUPPORT_CASES, ids=[n for n, _ in SUPPORT_CASES])
def test_supports_is_exactly_what_spend_accepts_and_charges_nothing(
    relation: NeighboringRelation, name: str, event
) -> None:
    accountant = Accountant(neighboring_relation=relation)
    accountant.spend(events.Laplace(scale=2.0))
    before = snapshot(accountant)
    supported = accountant.supports(event)
    assert_unchanged(accountant, before)
    assert accountant.get_epsilon(0.0) == 0.5
    assert supported is _spend_accepts(relation, event)
    add_remove = relation is NeighboringRelation.ADD_OR_REMOVE_ONE
    expected = not (
        name in _NEVER
        or (name in _ADD_REMOVE_ONLY and not add_remove)
        or (name in _REPLACE_ONLY and add_remove)
    )
    assert supported is expected


def test_a_nested_event_without_a_handler_is_refused_when_charged() -> None:
    # Before supports existed, spend checked the outer type only: a SelfComposed of an
    # unregistered event was accepted and every later query raised.
    accountant = Accountant()
    before = snapshot(accountant)
    for event in (
        events.SelfComposed(event=_frozen_unregistered(), count=2),
        events.Composed(events=(_frozen_unregistered(),)),
    ):
        with pytest.raises(UnsupportedEventError, match="no accountant handler for Unregistered"):
            accountant.spend(event)
    assert_unchanged(accountant, before)
    assert accountant.get_epsilon(0.0) == 0.0


@settings(max_examples=15, deadline=None)
@given(
    st.sampled_from(
        [events.Laplace(scale=2.0), events.Gaussian(noise_multiplier=3.0), _sampled("replace_one")]
    ),
    st.integers(min_value=1, max_value=40),
)
def test_compose_count_is_count_spends(event, count: int) -> None:
    composed = Accountant(neighboring_relation="replace_one", pld_discretization=COARSE)
    assert composed.compose(event, count) is composed  # chains, as in dp-accounting
    spent = Accountant(neighboring_relation="replace_one", pld_discretization=COARSE)
    for _ in range(count):
        spent.spend(event)
    for delta in (0.0, 1e-6):
        assert composed.routes.epsilons(delta) == pytest.approx(
            spent.routes.epsilons(delta), rel=1e-9
        )
    assert len(composed.ledger.charges) == 1  # one charge, whatever the count


def test_compose_defaults_to_one_release_and_accepts_dp_accounting_events() -> None:
    acc = Accountant(neighboring_relation="add_or_remove_one")
    acc.compose(events.Laplace(scale=2.0)).compose(events.Laplace(scale=2.0))
    assert acc.get_epsilon(0.0) == 1.0
    step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1))
    ours = Accountant(neighboring_relation="add_or_remove_one").compose(step, 100)
    theirs = Accountant(neighboring_relation="add_or_remove_one")
    theirs.spend(dp_accounting.SelfComposedDpEvent(step, 100))
    assert ours.get_epsilon(1e-5) == theirs.get_epsilon(1e-5)


@pytest.mark.parametrize(
    "count, error, match",
    [
        (0, ValueError, r"`count` must be >= 1, got 0"),
        (-3, ValueError, r"`count` must be >= 1, got -3"),
        (1.0, TypeError, r"`count` must be an integer, got float"),
        (True, TypeError, r"`count` must be an integer, got bool"),
        ("2", TypeError, r"`count` must be an integer, got str"),
        (10**6 + 1, ValueError, r"`count` must be <= MAX_COUNT"),
    ],
)
def test_compose_validates_count_and_changes_nothing(count, error, match) -> None:
    acc = Accountant()
    acc.compose(events.Laplace(scale=4.0))
    before = snapshot(acc)
    with pytest.raises(error, match=match):
        acc.compose(events.Laplace(scale=4.0), count)
    assert_unchanged(acc, before)


def test_compose_refuses_what_spend_refuses_and_changes_nothing() -> None:
    keyed = Accountant(disjoint=("agent",))
    with pytest.raises(ValueError, match=r"`compose` charges without a key.*spend"):
        keyed.compose(events.Laplace(scale=1.0))
    assert keyed.get_epsilon(0.0) == 0.0
    acc = Accountant(budget=PureDP(1.0))
    acc.compose(events.Laplace(scale=2.0))
    before = snapshot(acc)
    with pytest.raises(BudgetExceededError):
        acc.compose(events.Laplace(scale=2.0), 2)
    with pytest.raises(UnsupportedEventError):
        acc.compose(_sampled("add_or_remove_one"), 2)  # replace_one_reward accountant
    assert_unchanged(acc, before)
    assert acc.compose(events.Laplace(scale=2.0)).get_epsilon(0.0) == 1.0  # exactly the budget


@pytest.mark.parametrize(
    "query",
    [
        "get_epsilon",
        "routes.epsilons",
        "routes.tightest",
        "brackets.lower_bound",
        "brackets.epsilon",
    ],
)
def test_target_delta_is_required(query: str) -> None:
    # A default of delta = 0 silently answered inf on any Gaussian ledger.
    acc = Accountant().compose(events.Gaussian(noise_multiplier=2.0))
    with pytest.raises(TypeError, match="target_delta"):
        operator.attrgetter(query)(acc)()
    with pytest.raises(TypeError, match="target_delta"):
        operator.attrgetter(query)(acc)(where=None)
    assert math.isfinite(acc.get_epsilon(1e-6))
    with pytest.raises(TypeError, match="target_epsilon"):
        acc.get_delta()  # type: ignore[call-arg]
