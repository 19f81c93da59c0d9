"""Private-FedLinUCB (Zhou & Chowdhury, ICLR 2024): calibration, noise law, adaptivity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.zhou_chowdhury import (
    SyntheticEnvironment,
    TableEnvironment,
    run_private_fedlinucb,
)
from fedpriv.privacy.calibrations.zhou_chowdhury import (
    zc_exact_noise_stddev,
    zc_ldp_noise_stddev,
    zc_tree_depth,
    zc_user_sensitivity,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats


def test_fig2_calibration_matches_the_formula():
    # κ = ⌊log2(T/B)⌋ + 1 and σ = L √(κ (ln(1/δ) + ε)) / ε, recomputed here from the text
    kappa = math.floor(math.log2(10_000 / 25)) + 1
    assert zc_tree_depth(10_000, 25) == kappa == 9
    expected = math.sqrt(kappa * (math.log(1 / 0.1) + 0.2)) / 0.2
    assert zc_ldp_noise_stddev(0.2, 0.1, depth=kappa) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1, 1), min_size=3, max_size=3),
    st.lists(st.floats(-1, 1), min_size=3, max_size=3),
    st.floats(-1, 1),
    st.floats(-1, 1),
)
def test_user_sensitivity_bounds_every_replacement(x, xp, y, yp):
    x, xp = np.array(x), np.array(xp)
    x = x / max(1.0, np.linalg.norm(x))
    xp = xp / max(1.0, np.linalg.norm(xp))
    shift = math.sqrt(
        np.sum((np.outer(x, x) - np.outer(xp, xp)) ** 2) + np.sum((y * x - yp * xp) ** 2)
    )
    assert shift <= zc_user_sensitivity(1.0, 1.0) * (1 + 1e-12)


def test_exact_noise_spends_exactly_the_claim():
    from fedpriv.privacy.accounting.conversions import gaussian_dp_delta

    sigma = zc_exact_noise_stddev(0.5, 1e-3, depth=7, sensitivity=2.0)
    mu = math.sqrt(7) * 2.0 / sigma
    assert gaussian_dp_delta(mu, 0.5) <= 1e-3
    assert gaussian_dp_delta(mu, 0.5) == pytest.approx(1e-3, rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"protocol": "central"}, "protocol"),
        ({"batch_size": 0}, "batch_size"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 1.5}, "delta"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    env = SyntheticEnvironment(n_agents=2, n_arms=4, dim=3)
    args = {"horizon": 50, "batch_size": 5, "protocol": "ldp", "epsilon": 1.0, "delta": 0.1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        run_private_fedlinucb(env, **args)


def test_runs_are_vectorised_and_reproducible():
    env = SyntheticEnvironment(n_agents=3, n_arms=6, dim=4)
    a = run_private_fedlinucb(env, horizon=60, batch_size=10, epsilon=1.0, delta=0.1, n_trials=3)
    b = run_private_fedlinucb(env, horizon=60, batch_size=10, epsilon=1.0, delta=0.1, n_trials=3)
    assert a.final_regret.shape == (3, 3) and a.regret_curve.shape == (3, 60)
    assert a.n_syncs == 6
    np.testing.assert_array_equal(a.final_regret, b.final_regret)
    # the trials differ (their noise streams do)
    assert not np.allclose(a.final_regret[0], a.final_regret[1])


def test_ledger_charges_every_silo_its_tree():
    env = SyntheticEnvironment(n_agents=3, n_arms=6, dim=4)
    run = run_private_fedlinucb(env, horizon=40, batch_size=10, epsilon=1.0, delta=0.1)
    cal = run.calibration
    # each silo's tree: 4 batches (κ = 3), B = 10 pairs per leaf, μ = √κ · B · √6 / σ
    mu = math.sqrt(3) * 10 * zc_user_sensitivity() / cal.noise_stddev
    from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon

    _, eps = run.accountant.routes.tightest(0.1)
    assert eps == pytest.approx(gaussian_dp_epsilon(mu, 0.1), rel=1e-6)


def test_non_private_publishes_through_the_accountant():
    env = SyntheticEnvironment(n_agents=2, n_arms=4, dim=3)
    run = run_private_fedlinucb(env, horizon=20, batch_size=10, protocol="non-private")
    assert math.isinf(run.accountant.routes.tightest(0.1)[1])


def _pair_tables(world: int, b: int = 6) -> TableEnvironment:
    features = np.zeros((b, 2, 4, 3))
    features[:, 1, :, 1] = 1.0
    features[:, 0, :, 0] = [1.0, -1.0, 1.0, -1.0]
    features[0, 0, :, 0] = 1.0
    rewards = np.zeros((b, 2, 4))
    rewards[:, 0] = 1.0
    rewards[0, 0] = 1.0 if world == 0 else -1.0
    return TableEnvironment(features=features, rewards=rewards)


@pytest.mark.parametrize("own", [True, False])
def test_one_user_moves_the_rest_of_its_batch_only_with_own_data(own):
    runs = [
        run_private_fedlinucb(
            _pair_tables(w),
            horizon=6,
            batch_size=6,
            planned_horizon=24,
            epsilon=1.0,
            delta=0.1,
            own_data_between_syncs=own,
            keep_leaves=True,
            keep_actions=True,
        )
        for w in (0, 1)
    ]
    moved = int(np.sum(runs[0].actions[0, 0] != runs[1].actions[0, 0]))
    diff = np.linalg.norm(runs[0].leaves[0, 0] - runs[1].leaves[0, 0])
    if own:
        assert moved == 5  # every later user of the batch follows the first reward
        assert diff == pytest.approx(2 * 6)  # Δu = 2B e₀ (whitened norm 2B)
        assert diff <= runs[0].calibration.records_per_leaf * zc_user_sensitivity()
    else:
        assert moved == 0
        assert diff == pytest.approx(2.0)
        assert runs[0].calibration.records_per_leaf == 1


def test_release_noise_has_the_papers_law():
    """Gram (Z+Zᵀ)/2 with Z_ij ~ N(0, σ²), reward vector N(0, σ² I): a KS test per entry
    kind on 4,000 releases of a zero stream (seed fixed; false-alarm rate <= 3 × 0.001)."""
    n = 4000
    features = np.zeros((1, 1, 3, 3))
    features[0, 0, :, 0] = 1.0
    env = TableEnvironment(features=features, rewards=np.zeros((1, 1, 3)))
    run = run_private_fedlinucb(
        env,
        horizon=1,
        batch_size=1,
        epsilon=1.0,
        delta=0.1,
        n_trials=n,
        seed=11,
        keep_releases=True,
    )
    sigma = run.calibration.noise_stddev
    rel = run.releases[:, 0]  # (n, d, d+1): [Ĝ | û], one leaf G = e₀e₀ᵀ, u = 0
    diag = (rel[:, 1, 1] - 0.0) / sigma
    off = rel[:, 0, 1] / (sigma / math.sqrt(2.0))
    vec = rel[:, 2, 3] / sigma
    for sample in (diag, off, vec):
        assert stats.kstest(sample, "norm").pvalue > 0.001


@pytest.mark.parametrize("own", [True, False])
def test_vecsum_protocol_is_charged_its_tree_and_reproducible(own):
    """sdp-vecsum: one shuffled binomial tree per trial, B users per leaf with own data."""

    env = SyntheticEnvironment(n_agents=3, n_arms=6, dim=3)
    kwargs = dict(
        horizon=40,
        batch_size=10,
        protocol="sdp-vecsum",
        epsilon=1.0,
        delta=0.1,
        n_trials=2,
        own_data_between_syncs=own,
    )
    a = run_private_fedlinucb(env, **kwargs)
    b = run_private_fedlinucb(env, **kwargs)
    np.testing.assert_array_equal(a.final_regret, b.final_regret)
    assert a.calibration.records_per_leaf == (10 if own else 1)
    eps = a.accountant.routes.tightest(0.1)[1]
    assert eps > 0.0
    if own:  # B users moved: priced higher (here beyond the certificate: inf)
        c = run_private_fedlinucb(env, **{**kwargs, "own_data_between_syncs": False})
        assert c.accountant.routes.tightest(0.1)[1] < eps
    else:
        assert eps < math.inf


def test_vecsum_sums_track_the_raw_sums():
    """The analyzer's broadcast sums are unbiased: with many users the regret stays finite
    and the run matches the non-private one's shape."""
    env = SyntheticEnvironment(n_agents=2, n_arms=4, dim=3)
    run = run_private_fedlinucb(
        env,
        horizon=30,
        batch_size=10,
        protocol="sdp-vecsum",
        epsilon=5.0,
        delta=0.1,
        keep_releases=True,
    )
    assert run.releases is None or np.all(np.isfinite(run.releases))
    assert np.all(np.isfinite(run.final_regret))


@pytest.mark.parametrize("protocol", ["sdp-vecsum", "ldp"])
def test_trial_zero_does_not_depend_on_n_trials(protocol):
    """Every stream has a fixed address (trial, silo): trial 0 of a run of one trial and
    of three trials releases the same sums and has the same regret, bit for bit."""
    env = SyntheticEnvironment(n_agents=3, n_arms=6, dim=3)
    kwargs = dict(
        horizon=100,
        batch_size=10,
        protocol=protocol,
        epsilon=1.0,
        delta=0.1,
        seed=5,
        keep_releases=True,
        keep_actions=True,
    )
    one = run_private_fedlinucb(env, n_trials=1, **kwargs)
    three = run_private_fedlinucb(env, n_trials=3, **kwargs)
    np.testing.assert_array_equal(one.releases[0], three.releases[0])
    np.testing.assert_array_equal(one.actions[0], three.actions[0])
    np.testing.assert_array_equal(one.regret_curve[0], three.regret_curve[0])
    np.testing.assert_array_equal(one.final_regret[0], three.final_regret[0])
    assert not np.array_equal(three.releases[0], three.releases[1])  # trials differ
