"""Issue 20: what no query could answer is refused at construction, by name.

Every ceiling is a documented constant (``fedpriv.privacy.accounting.events.MAX_*``,
``Accountant``'s ``PLD_DISCRETIZATION_RANGE`` and ``MAX_CELL_RELEASES``,
``audit_mechanism``'s ``MAX_SAMPLES``); what is accepted answers every query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.events import (
    MAX_COUNT,
    MAX_DEPTH,
    MAX_EVENT_EPSILON,
    MAX_GAUSSIAN_MU,
)
from fedpriv.privacy.accounting.guarantees import ApproxDP, PureDP
from fedpriv.privacy.accounting.sampling import PoissonSampled
from fedpriv.privacy.errors import ResourceLimitError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.privacy._support import assert_unchanged, snapshot


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: events.Laplace(scale=1.0, l1_sensitivity=2**70), "`l1_sensitivity` / `scale`"),
        (lambda: events.Laplace(scale=5e-324), "`l1_sensitivity` / `scale`"),
        (lambda: events.LaplaceTree(scale=1e-300, horizon=4), "`l1_sensitivity` / `scale`"),
        (lambda: events.DiscreteLaplace(scale=1e-16, l1_sensitivity=1), "MAX_LAPLACE_EPSILON"),
        (lambda: events.RandomizedResponse(epsilon=1e308), "`epsilon` must be <= 700"),
        (lambda: events.OpaqueApproxDP(epsilon=1e308, delta=0.0), "`epsilon` must be <= 700"),
        (lambda: events.Gaussian(noise_stddev=5e-324), "`l2_sensitivity` / `noise_stddev`"),
        (lambda: events.Laplace(scale=1.0, l1_sensitivity=5e-324), "smallest normal float"),
        (lambda: events.GaussianTree(noise_stddev=1e-300, horizon=8), "`noise_stddev`"),
        (lambda: events.DiscreteGaussian(sigma=1e-9, l2_sensitivity=1.0), "`sigma`"),
        (lambda: events.SelfComposed(event=events.Laplace(scale=1.0), count=10**12), "MAX_COUNT"),
        (lambda: events.SelfComposed(event=events.Laplace(scale=1.0), count=2**63), "MAX_COUNT"),
        (
            lambda: events.SelfComposed(
                event=events.SelfComposed(event=events.Laplace(scale=1.0), count=10**4), count=10**4
            ),
            "MAX_COUNT",
        ),
        (lambda: Accountant(pld_discretization=math.nan), r"`pld_discretization` must be in \["),
        (lambda: Accountant(pld_discretization=0.0), r"`pld_discretization` must be in \["),
        (lambda: Accountant(pld_discretization=math.inf), r"`pld_discretization` must be in \["),
    ],
)
def test_unanswerable_values_are_refused_at_construction(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("guarantee", [PureDP(1.0), ApproxDP(1.0, 1e-5)])
def test_a_guarantee_is_not_an_event(guarantee):
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        events.SelfComposed(event=guarantee, count=2)
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        events.Composed(events=(events.Laplace(scale=1.0), guarantee))
    with pytest.raises(TypeError, match="a guarantee is not an event"):
        PoissonSampled(event=guarantee, sampling_rate=0.1)


def test_nesting_is_capped_at_max_depth():
    event = events.Laplace(scale=1.0)
    for _ in range(MAX_DEPTH):
        event = events.Composed(events=(event,))
    with pytest.raises(ValueError, match="MAX_DEPTH = 64"):
        events.Composed(events=(event, events.Laplace(scale=1.0)))  # the 497-deep case
    accountant = Accountant()
    accountant.spend(event)  # the deepest accepted nesting answers
    assert accountant.get_epsilon(0.0) == 1.0


@pytest.mark.parametrize(
    "event",
    [
        events.RandomizedResponse(epsilon=MAX_EVENT_EPSILON),
        events.SelfComposed(event=events.RandomizedResponse(epsilon=1.0), count=1000),
        events.Gaussian(noise_stddev=1.0 / MAX_GAUSSIAN_MU),
    ],
)
def test_the_ceilings_themselves_answer(event):
    accountant = Accountant()
    accountant.spend(event)
    assert math.isfinite(accountant.get_epsilon(1e-5))
    assert math.isfinite(accountant.brackets.lower_bound(1e-5))
    assert 0.0 <= accountant.get_delta(1.0) <= 1.0


@pytest.mark.parametrize("budget", [None, PureDP(1e7)])
def test_a_charge_beyond_max_cell_releases_is_refused_with_or_without_budget(budget):
    """Issue 20: an unbudgeted accountant used to accept a cell its queries then
    refused to price; the cell-size ceiling is now checked at charge time too."""
    big = events.SelfComposed(event=events.RandomizedResponse(epsilon=1.0), count=MAX_COUNT)
    accountant = Accountant(budget=budget)
    accountant.spend(big)
    before = snapshot(accountant)
    with pytest.raises(ResourceLimitError, match="MAX_CELL_RELEASES"):
        accountant.spend(events.RandomizedResponse(epsilon=1.0))
    with pytest.raises(ResourceLimitError, match="MAX_CELL_RELEASES"):
        accountant.spend(events.Laplace(scale=1.0), key=None)
    assert_unchanged(accountant, before)
    assert len(accountant.ledger.charges) == 1
    for query in (
        lambda: accountant.routes.epsilons(1e-5),
        lambda: accountant.brackets.lower_bound(1e-5),
        lambda: accountant.get_delta(1.0),
    ):
        query()  # every accepted ledger answers


def test_cell_ceiling_counts_per_cell_and_label_equality_as_queries_do():
    """Other cells stay open; labels equal for the queries (1, 1.0, True; every NaN
    and None) are one cell for the check too; a spend of key arrays repeating a cell counts
    each repeat."""
    half = events.SelfComposed(event=events.Laplace(scale=1.0), count=MAX_COUNT // 2)
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(half, key={"agent": [1, 2]})
    accountant.spend(half, key={"agent": 1.0})  # the same cell as 1: now full
    with pytest.raises(ResourceLimitError):
        accountant.spend(events.Laplace(scale=1.0), key={"agent": True})
    accountant.spend(events.Laplace(scale=1.0), key={"agent": 3})  # another cell
    accountant.spend(half, key={"agent": float("nan")})
    accountant.spend(half, key={"agent": [None, 4]})  # None is the NaN cell: full
    with pytest.raises(ResourceLimitError):
        accountant.spend(events.Laplace(scale=1.0), key={"agent": np.float32("nan")})
    with pytest.raises(ResourceLimitError):
        accountant.spend(half, key={"agent": [5, 5, 5]})
    assert accountant.routes.epsilons(1e-5)["pure"] == MAX_COUNT
    # Without a parallel level every charge is one cell.
    user = Accountant(neighboring_relation="user_at_all_agents", disjoint=("agent",))
    user.spend(half, key={"agent": 0})
    user.spend(half, key={"agent": 1})
    with pytest.raises(ResourceLimitError):
        user.spend(events.Laplace(scale=1.0), key={"agent": 2})


def test_cell_ceiling_holds_across_processes_sharing_a_store(tmp_path):
    store = tmp_path / "ledger.sqlite"
    half = events.SelfComposed(event=events.Laplace(scale=1.0), count=MAX_COUNT // 2)
    first = Accountant(store=store)
    second = Accountant.open(store)
    first.spend(half)
    second.spend(half)  # reads the first charge before pricing its own
    with pytest.raises(ResourceLimitError):
        first.spend(events.Laplace(scale=1.0))
    first.store.close()
    second.store.close()
    reopened = Accountant.open(store)
    assert len(reopened.ledger.charges) == 2
    with pytest.raises(ResourceLimitError):
        reopened.spend(events.Laplace(scale=1.0))
    reopened.store.close()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    ("scale", "sensitivity", "count"),
    [
        (0.001, 1, 1000),  # issue 20: "math domain error" from dp-accounting
        (0.001, 3, 1000),
        (1e-9, 1, 1),
        (1.0, 10**15, 1),  # hung in dp-accounting's walk over the 10^15 losses
    ],
)
def test_extreme_discrete_laplace_answers_soundly(scale, sensitivity, count):
    """dp-accounting's discrete Laplace overflows exp(1/scale) past ~709 (its
    pessimistic PLD then has infinity mass 1, and self-composing it raises a math
    domain error); the handler builds those PLDs from the pair's own atoms."""
    event = events.SelfComposed(
        event=events.DiscreteLaplace(scale=scale, l1_sensitivity=sensitivity), count=count
    )
    accountant = Accountant()
    accountant.spend(event)
    exact = count * sensitivity / scale  # pure ε of the composition
    routes = accountant.routes.epsilons(1e-5)
    assert all(value >= exact * (1 - 1e-9) for value in routes.values())
    assert routes["pld"] <= exact * (1 + 1e-12)  # not vacuous
    assert accountant.routes.epsilons(0.0)["pure"] == pytest.approx(exact, rel=1e-12)
    assert 0.0 <= accountant.brackets.lower_bound(1e-5) <= routes["pure"]
    assert accountant.get_delta(exact * 2) == 0.0
    assert accountant.get_delta(exact / 2) == pytest.approx(1.0)


def test_discrete_laplace_atoms_match_dp_accounting_where_both_apply():
    """The atoms the handler uses past dp-accounting's range give its δ(ε') where
    dp-accounting is still finite (parameter 2, sensitivity 3)."""
    from fedpriv.privacy.accounting import handlers

    exact = handlers._discrete_laplace_pld(
        events.DiscreteLaplace(scale=0.5, l1_sensitivity=3), 1e-4, True
    )
    atoms = handlers._atoms_pld(handlers._discrete_laplace_atoms(2.0, 3, True), 0.0, 1e-4, True)
    for epsilon in (0.0, 1.0, 2.5, 4.0, 5.9):
        assert atoms.get_delta_for_epsilon(epsilon) == pytest.approx(
            exact.get_delta_for_epsilon(epsilon), rel=1e-6, abs=1e-12
        )


def test_audit_mechanism_caps_samples_before_sampling():
    from fedpriv.audit.regression.api import MAX_SAMPLES, NeighboringPair, audit_mechanism

    calls = []

    def mechanism(dataset, n_samples, rng):
        calls.append(n_samples)
        return rng.laplace(size=n_samples) + dataset

    for name in ("samples", "pilot_samples"):
        with pytest.raises(ResourceLimitError, match=f"`{name}` must be in \\[1, "):
            audit_mechanism(
                mechanism,
                NeighboringPair(0.0, 1.0),
                claim=PureDP(1.0),
                executor=None,
                **{name: 10**12},
            )
    assert MAX_SAMPLES == 10**9 and calls == []
    assert np.isfinite(MAX_SAMPLES)


@pytest.mark.filterwarnings("error:pricing an extreme cell overflowed")
@pytest.mark.parametrize("noise_stddev", [1e200, 1e300])
def test_a_vanishing_gaussian_beside_a_laplace_is_priced_not_vacuous(noise_stddev):
    """μ = 1/noise_stddev squared underflowed to 0 in the cell's Gaussian part and the
    PLD divided by it, so the whole cell read ε = inf and a budget refused a charge
    that costs almost nothing. Its ε is now the Laplace's, within the PLD round-off."""
    accountant = Accountant(budget=ApproxDP(1.0, 1e-5))
    accountant.spend(events.Laplace(scale=4.0))
    accountant.spend(events.Gaussian(noise_stddev=noise_stddev))  # accepted
    assert 0.24 < accountant.get_epsilon(1e-5) <= 0.25 * (1 + 1e-12)
    assert 0.0 < accountant.brackets.lower_bound(1e-5) <= accountant.get_epsilon(1e-5)
    assert 0.0 < accountant.get_delta(0.2) < 1.0
    alone = Accountant()
    alone.spend(events.Gaussian(noise_stddev=noise_stddev))
    assert alone.get_epsilon(1e-5) == 0.0 and alone.brackets.lower_bound(1e-5) == 0.0


@pytest.mark.parametrize("sigma", [1e6, 1e15])
def test_a_wide_discrete_gaussian_is_priced_by_zcdp_not_walked(sigma):
    """The fuzz sweep (benchmarks/fuzz_hostile.py): a discrete Gaussian of sigma 10^6
    hung and one of 10^15 raised MemoryError in dp-accounting's pmf walk; beyond
    sigma = 10^4 it has no PLD and the zCDP route (Canonne, Kamath & Steinke 2020)
    prices it."""
    accountant = Accountant(budget=ApproxDP(1.0, 1e-5))
    accountant.spend(events.Laplace(scale=4.0))
    accountant.spend(events.DiscreteGaussian(sigma=sigma, l2_sensitivity=1.0))
    routes = accountant.routes.epsilons(1e-5)
    assert routes["pld"] == math.inf and math.isfinite(routes["zcdp"])
    assert 0.25 <= accountant.get_epsilon(1e-5) < 0.26
    assert 0.0 < accountant.brackets.lower_bound(1e-5) <= 0.25
    assert 0.0 < accountant.get_delta(0.2) <= 1.0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.integers(-3, 3), st.booleans(), st.integers(0, 2**40)), min_size=1, max_size=40
    )
)
def test_numeric_cell_counts_equal_the_per_row_count(rows) -> None:
    """The np.unique path of the charge-time cell count (integer and boolean labels)
    gives the per-row loop's cells and counts, keys comparing as the queries group."""
    from fedpriv.privacy.ledger.cells import cell_counts

    a, b, c = (np.array(column) for column in zip(*rows))
    arrays = {"agent": a, "flag": b, "arm": c.astype(np.uint64)}
    fast = cell_counts(arrays, ("agent", "flag", "arm"))
    loop: dict = {}
    for cell in zip(a.tolist(), b.tolist(), c.tolist()):
        loop[cell] = loop.get(cell, 0) + 1
    assert fast == loop


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.integers(-3, 3), st.booleans(), st.integers(0, 2**40)), min_size=1, max_size=40
    ),
    st.booleans(),
)
def test_fullest_cell_bound_is_the_fullest_cell(rows, sort) -> None:
    """The fullest-cell count that lets a large ledger skip the per-cell tally is the
    largest per-cell count (monotone, dense and sparse label columns alike)."""
    from fedpriv.privacy.ledger.cells import cell_counts, max_cell_rows

    rows = sorted(rows) if sort else rows
    a, b, c = (np.array(column) for column in zip(*rows))
    arrays = {"agent": a, "flag": b, "arm": c.astype(np.int64)}
    levels = ("agent", "flag", "arm")
    assert max_cell_rows(arrays, levels) == max(cell_counts(arrays, levels).values())
    single = {"agent": np.sort(a) if sort else a}
    assert max_cell_rows(single, ("agent",)) == max(cell_counts(single, ("agent",)).values())
