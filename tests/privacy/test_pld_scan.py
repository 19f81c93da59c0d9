"""The fast ε paths of issue 23 give exactly the numbers of the paths they replace.

* :class:`~fedpriv.privacy.accounting.pld_scan.PldScan` against dp-accounting's own
  ``PrivacyLossDistribution.get_epsilon_for_delta`` (bit for bit, any δ, any order
  of queries on one scan);
* ``pld_certificate.certified_epsilon`` and the round-off helpers against their
  pre-issue-23 code, kept here verbatim as the reference;
* ``rdp_route.rdp_route_epsilon`` (orders skipped by the monotone bound) against
  ``rdp_epsilon`` of the full ``rdp_total`` curve.

Equality is exact (``==``), so these tests also pin that every reported number is
unchanged; the soundness invariants (the certified ε is >= the PLD's own answer, the
RDP route >= the exact ε where it is known) are checked beside them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from fedpriv.privacy.accounting import (
    cells,
    events,
    exact_sum,
    pld_certificate,
    pld_route,
    rdp_route,
    routes,
)
from fedpriv.privacy.accounting.conversions import rdp_epsilon
from fedpriv.privacy.accounting.guarantees import DEFAULT_ORDERS
from fedpriv.privacy.accounting.pld_scan import PldScan
from fedpriv.privacy.accounting.sampling import PoissonSampled
from hypothesis import given, settings
from hypothesis import strategies as st

GRID = 1e-3  # coarse grids keep each PLD small (the walk is the same at any grid)

deltas = st.one_of(
    st.sampled_from([0.0, 1e-300, 1e-15, 1e-10, 1e-5, 1e-3, 0.1, 0.5, 0.999999, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    st.floats(min_value=-30.0, max_value=-1.0).map(lambda x: 10.0**x),
)


@st.composite
def plds(draw):
    """Dense and sparse, symmetric and not, pessimistic and optimistic PLDs."""
    pessimistic = draw(st.booleans())
    kind = draw(st.sampled_from(["gaussian", "sampled", "laplace", "mixed", "rr"]))
    grid = draw(st.sampled_from([GRID, 3e-3, 1e-2]))
    if kind == "gaussian":
        pld = pld_lib.from_gaussian_mechanism(
            draw(st.floats(0.5, 5.0)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
            use_connect_dots=pessimistic,
        )
    elif kind == "sampled":
        pld = pld_lib.from_gaussian_mechanism(
            draw(st.floats(0.5, 3.0)),
            sampling_prob=draw(st.floats(0.001, 0.9)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
            use_connect_dots=pessimistic,
        )
    elif kind == "laplace":
        pld = pld_lib.from_laplace_mechanism(
            draw(st.floats(0.5, 5.0)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
            use_connect_dots=pessimistic,
        )
    elif kind == "rr":
        pld = pld_lib.from_randomized_response(
            draw(st.floats(0.01, 0.5)),
            draw(st.integers(2, 5)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
        )
    else:
        pld = pld_lib.from_gaussian_mechanism(
            draw(st.floats(0.5, 3.0)),
            pessimistic_estimate=pessimistic,
            value_discretization_interval=grid,
            use_connect_dots=pessimistic,
        ).compose(
            pld_lib.from_laplace_mechanism(
                draw(st.floats(0.5, 5.0)),
                pessimistic_estimate=pessimistic,
                value_discretization_interval=grid,
                use_connect_dots=pessimistic,
            )
        )
    count = draw(st.sampled_from([1, 2, 7, 40]))
    return pld.self_compose(count) if count > 1 else pld


@settings(max_examples=60, deadline=None)
@given(pld=plds(), queries=st.lists(deltas, min_size=1, max_size=4))
def test_scan_is_dp_accountings_epsilon_bit_for_bit(pld, queries):
    scan = PldScan(pld)  # one scan, several δ in any order: the kept sums are reused
    for delta in queries:
        assert scan.epsilon(delta) == pld.get_epsilon_for_delta(delta)


def test_scan_on_a_dp_sgd_pld_and_its_chunks():
    """A large dense PLD walked in several chunks (first chunk sized by the guess,
    then doubling): every δ, from an exit near the top to one deep in the pmf."""
    pld = pld_lib.from_gaussian_mechanism(
        1.1, sampling_prob=0.01, value_discretization_interval=1e-3, use_connect_dots=True
    ).self_compose(300)
    for delta in (1e-12, 1e-8, 1e-5, 1e-3, 0.2, 0.0):
        scan = PldScan(pld)
        assert scan.epsilon(delta) == pld.get_epsilon_for_delta(delta)
        assert scan.epsilon(delta / 3.0) == pld.get_epsilon_for_delta(delta / 3.0)
    walk = PldScan(pld)._walks[0]
    while walk._extend():  # doubling chunks past the guessed one, to the last bin
        pass
    assert walk.epsilon(1e-300) == pld._pmf_remove.get_epsilon_for_delta(1e-300)


@pytest.mark.parametrize("numpy_exp", [True, False])
def test_both_exponential_paths_agree(monkeypatch, numpy_exp):
    """NumPy's exp is used only where it is the C library's (checked once); the
    ``math.exp`` fallback gives the same answers."""
    from fedpriv.privacy.accounting import pld_scan

    if numpy_exp and not pld_scan._numpy_exp_is_libm():
        pytest.skip("NumPy's float64 exp is not the C library's here: math.exp is used")
    monkeypatch.setattr(pld_scan, "_numpy_exp_is_libm", lambda: numpy_exp)
    pld = pld_lib.from_gaussian_mechanism(
        0.9, sampling_prob=0.05, value_discretization_interval=1e-3, use_connect_dots=True
    ).self_compose(100)
    for delta in (1e-9, 1e-5, 1e-2):
        assert PldScan(pld).epsilon(delta) == pld.get_epsilon_for_delta(delta)


def test_scan_exits_where_exp_underflows():
    """Losses up to 1000: ``exp(-loss)`` is 0 at the top, so dp-accounting's loop
    returns from its ``mass_lower == 0`` branch; the scan takes the same exit."""
    pld = pld_lib.from_laplace_mechanism(0.01, value_discretization_interval=0.5).self_compose(10)
    for delta in (1e-300, 1e-100, 1e-10, 1e-3):
        assert PldScan(pld).epsilon(delta) == pld.get_epsilon_for_delta(delta)
    assert PldScan(pld).epsilon(1e-10) == 1000.0


# ------------------------------------------------------------------ certified ε
def _old_roundoff_at(certified, epsilon):
    pld, certificate, _ = certified
    worst = 0.0
    for pmf, (l2, floor) in zip(pld_certificate.pmfs(pld), certificate):
        n = int(np.count_nonzero(pld_certificate.pmf_losses(pmf) >= epsilon - pmf._discretization))
        worst = max(worst, math.sqrt(n) * l2, 2.0 * n * floor)
    return worst


def _old_tail_mass(pld, epsilon):
    worst = 0.0
    for pmf in pld_certificate.pmfs(pld):
        losses = pld_certificate.pmf_losses(pmf)
        probs = pld_certificate.pmf_probs(pmf)
        worst = max(worst, float(np.abs(probs[losses >= epsilon - pmf._discretization]).sum()))
    return worst


def _old_summation_slack(pld, epsilon):
    size = max(pld_certificate.pmf_probs(pmf).size for pmf in pld_certificate.pmfs(pld))
    return 2.0 * size * exact_sum.UNIT_ROUNDOFF * (_old_tail_mass(pld, epsilon) + 1e-300)


def _old_loss_drift(pld):
    worst = 0.0
    for pmf in pld_certificate.pmfs(pld):
        losses = pld_certificate.pmf_losses(pmf)
        if losses.size:
            worst = max(worst, losses.size * exact_sum.UNIT_ROUNDOFF * float(np.abs(losses).max()))
    return 2.0 * worst


def _old_certified_epsilon(certified, target_delta):
    pld = certified[0]
    first = float(pld.get_epsilon_for_delta(target_delta))
    if not math.isfinite(first):
        return math.inf
    query = target_delta - _old_roundoff_at(certified, first) - _old_summation_slack(pld, first)
    if query <= 0.0:
        return math.inf
    epsilon = float(pld.get_epsilon_for_delta(query))
    return epsilon + _old_loss_drift(pld) if math.isfinite(epsilon) else math.inf


@settings(max_examples=40, deadline=None)
@given(
    pld=plds(),
    operations=st.integers(1, 100),
    epsilons=st.lists(st.floats(-20.0, 20.0) | st.just(-math.inf), min_size=1, max_size=3),
    delta=deltas.filter(lambda d: d < 1.0),
)
def test_certified_epsilon_and_helpers_equal_the_old_code(pld, operations, epsilons, delta):
    certified = (pld, pld_certificate.pld_roundoff(pld, operations), operations)
    for epsilon in epsilons:
        assert pld_certificate.roundoff_at(certified, epsilon) == _old_roundoff_at(
            certified, epsilon
        )
        assert pld_certificate.tail_mass(pld, epsilon) == _old_tail_mass(pld, epsilon)
        assert pld_certificate.summation_slack(pld, epsilon) == _old_summation_slack(pld, epsilon)
    assert pld_certificate.loss_drift(pld) == _old_loss_drift(pld)
    new = pld_certificate.certified_epsilon(certified, delta)
    assert new == _old_certified_epsilon(certified, delta)
    # an upper bound: never below the PLD's own answer (round-off only raises it)
    assert new >= pld.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("target_delta", [1e-5, 1e-8])
def test_dp_sgd_routes_unchanged_and_sound(target_delta):
    """The DP-SGD cell of ``benchmarks/bench_scale_accounting.py --only dpsgd`` (fewer
    steps): PLD and RDP routes equal the old paths; ε >= the optimistic lower end."""
    step = PoissonSampled(event=events.Gaussian(noise_multiplier=1.1), sampling_rate=0.01)
    cell = [(events.SelfComposed(event=step, count=200), 1)]
    items = cells.normalize_cell(cell)
    certified = pld_route.cell_pld(items, pld_route.pld_grid(items, 1e-4, True), True, False)
    values = routes.compose_routes(cell, target_delta)
    assert values["pld"] == _old_certified_epsilon(certified, target_delta)
    orders, curve = rdp_route.rdp_total(items, DEFAULT_ORDERS)
    assert values["rdp"] == rdp_epsilon(orders, curve, target_delta)
    assert routes.pld_lower_bound(cell, target_delta) <= values["pld"] <= values["rdp"]


# ------------------------------------------------------------------ RDP route
@pytest.mark.parametrize("sigma, q", [(1.1, 0.01), (0.7, 0.3), (5.0, 0.001)])
def test_one_order_is_the_curve_entry(sigma, q):
    from fedpriv.privacy.accounting.sampling import sampled_gaussian_rdp, sampled_gaussian_rdp_at

    mu = 1.0 / sigma
    curve = sampled_gaussian_rdp(mu, q, DEFAULT_ORDERS)
    assert [sampled_gaussian_rdp_at(mu, q, order) for order in DEFAULT_ORDERS] == list(curve)


sampled = st.builds(
    lambda sigma, q: PoissonSampled(event=events.Gaussian(noise_multiplier=sigma), sampling_rate=q),
    st.floats(0.5, 20.0),
    st.floats(1e-4, 0.99),
)
others = st.one_of(
    st.builds(lambda s: events.Gaussian(noise_multiplier=s), st.floats(0.5, 50.0)),
    st.builds(lambda b: events.Laplace(scale=b), st.floats(0.5, 100.0)),
    st.builds(lambda e: events.RandomizedResponse(epsilon=e), st.floats(0.01, 3.0)),
)


@settings(max_examples=40, deadline=None)
@given(
    cell=st.lists(
        st.tuples(st.one_of(sampled, sampled, others), st.integers(1, 10_000)),
        min_size=1,
        max_size=3,
    ),
    delta=st.one_of(
        st.sampled_from([1e-12, 1e-5, 0.1, 0.9]),
        st.floats(min_value=-14.0, max_value=-0.05).map(lambda x: 10.0**x),
    ),
    orders=st.sampled_from(
        [DEFAULT_ORDERS, (1.5, 2.0, 3.0, 8.0, 64.0), (2.0, 2.5, 3.5, 4.0, 10.0, 32.0, 256.0)]
    ),
)
def test_rdp_route_skips_only_orders_that_cannot_win(cell, delta, orders):
    items = cells.normalize_cell(cell)
    total = rdp_route.rdp_total(items, orders)
    old = math.inf if total is None else rdp_epsilon(total[0], total[1], delta)
    assert rdp_route.rdp_route_epsilon(items, orders, delta) == old
