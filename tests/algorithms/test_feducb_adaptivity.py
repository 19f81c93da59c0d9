"""FedUCB's fixed schedule: the leaf pairs one change reaches, and what the view is charged.

Between syncs an agent acts on its raw own Gram matrix (Alg. 1 line 4), so one changed
(x, y) moves the rest of its batch: the Privatizer is charged for those pairs
(:mod:`fedpriv.algorithms.feducb.adaptivity`), and the one-pair price stays available
as the mechanism's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.adaptivity import leaf_reach, positions_reached
from fedpriv.algorithms.feducb.centralized import run_feducb, run_feducb_fixed
from fedpriv.algorithms.feducb.decentralized import run_feducb_decentralized
from fedpriv.algorithms.networks.graphs import make_graph
from fedpriv.privacy.mechanisms.matrix_tree import SymmetricMatrixGaussianTree, matrix_tree_gdp


def _tables(horizon: int = 64):
    spec = LinearBandit(n_agents=3, n_arms=4, dim=2)
    return spec.sample(np.random.SeedSequence(20200), n_trials=1, horizon=horizon)


def test_a_change_reaches_the_rest_of_its_batch_and_never_more_than_b():
    sync_every, horizon = 8, 64
    reached = [positions_reached(t, sync_every=sync_every, horizon=horizon) for t in range(horizon)]
    assert reached[:9] == [8, 7, 6, 5, 4, 3, 2, 1, 8]
    assert max(reached) == sync_every == leaf_reach(sync_every=sync_every, horizon=horizon)
    # a batch that ends after the horizon is never released: nothing reaches a leaf
    assert positions_reached(62, sync_every=8, horizon=63) == 0
    assert positions_reached(55, sync_every=8, horizon=63) == 1
    # fewer rounds than a batch: nothing is released, the one-pair charge stays
    assert leaf_reach(sync_every=8, horizon=5) == 1


@pytest.mark.parametrize(("sync_every", "gamma", "expected"), [(8, 2, 4), (7, 2, 4), (6, 4, 2)])
def test_decentralized_reach_is_the_sets_share_of_a_batch(sync_every, gamma, expected):
    assert leaf_reach(sync_every=sync_every, horizon=64, gamma=gamma) == expected
    assert expected == math.ceil(sync_every / gamma)


def test_bad_positions_raise():
    with pytest.raises(ValueError, match="`t` must be < horizon"):
        positions_reached(64, sync_every=8, horizon=64)
    with pytest.raises(ValueError, match="sync_every"):
        leaf_reach(sync_every=0, horizon=64)


def test_fixed_schedule_charges_b_pairs_per_leaf_and_keeps_the_one_pair_price():
    """The register's row: ε at δ = 10⁻⁶ was 0.327 for one pair (the Privatizer on an
    oblivious stream); the view, charged for the 8 pairs a change reaches, is 8× the
    μ and 3.10 at 10⁻⁶, and still within the claim (1, 0.1) at δ = 0.1."""
    run = run_feducb_fixed(_tables(), epsilon=1.0, delta=0.1, sync_every=8, seed=0)
    assert run.records_per_leaf == 8
    cal = run.calibration
    one_pair = SymmetricMatrixGaussianTree(
        noise_stddev=cal.noise_stddev,
        dim=3,
        frobenius_sensitivity=cal.frobenius_sensitivity,
        capacity=run.capacity,
    )
    mu = matrix_tree_gdp(one_pair)
    assert mu == pytest.approx(0.08345, abs=1e-4)
    assert run.mechanism_epsilon(1e-6)[1] == pytest.approx(0.327, abs=1e-3)
    assert run.mechanism_epsilon(0.1)[1] == 0.0
    view_1e6 = run.accountant_epsilon(1e-6)[1]
    view_claim = run.accountant_epsilon(0.1)[1]
    assert view_1e6 == pytest.approx(3.1025, abs=1e-3) and view_1e6 > 0.327
    assert view_claim == pytest.approx(0.5407, abs=1e-3) and view_claim <= 1.0


def test_adaptive_schedule_prices_its_privatizer_per_pair():
    run = run_feducb(_tables(), epsilon=1.0, delta=0.1, seed=0)
    assert run.records_per_leaf == 1 and run.mechanism_accountant is None
    assert run.mechanism_epsilon(1e-6) == run.accountant_epsilon(1e-6)


def test_decentralized_fixed_schedule_charges_its_sets_share():
    tables = _tables()
    run = run_feducb_decentralized(
        tables,
        make_graph("path", 3),
        gamma=2,
        epsilon=1.0,
        delta=0.1,
        schedule="fixed",
        sync_every=8,
        seed=0,
    )
    assert run.records_per_leaf == 4
    assert run.accountant_epsilon(1e-6)[1] > run.mechanism_epsilon(1e-6)[1] > 0.0


@pytest.mark.parametrize("calibration", ["exact", "corrected"])
def test_corrected_calibrations_spend_the_claim_on_the_view(calibration):
    run = run_feducb_fixed(
        _tables(), epsilon=1.0, delta=0.1, sync_every=8, seed=0, mode=calibration
    )
    spent = run.accountant_epsilon(0.1)[1]
    assert spent <= 1.0 + 1e-9
    if calibration == "exact":
        assert spent == pytest.approx(1.0, rel=1e-6)
