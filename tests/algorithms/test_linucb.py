"""LinUCB / OFUL baselines: single, independent private, pooled."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.linucb import run_linucb, run_linucb_pooled
from fedpriv.algorithms.feducb.linucb_private import run_linucb_independent_private
from fedpriv.algorithms.feducb.oful import (
    inverse_and_logdet,
    oful_radius,
    sherman_morrison_update,
    ucb_scores,
)
from fedpriv.algorithms.feducb.privatizer import privatizer_calibration
from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


def _tables(n_agents=3, horizon=30, n_trials=2, dim=3, seed=0, **kw):
    spec = LinearBandit(n_agents=n_agents, n_arms=6, dim=dim, **kw)
    return spec.sample(seed, n_trials=n_trials, horizon=horizon)


@pytest.mark.parametrize("order", ["round", "sequential"])
def test_pooled_linucb_with_one_agent_is_single_agent_linucb(order):
    tables = _tables(n_agents=1, horizon=60, n_trials=3)
    single = run_linucb(tables, record=True)
    pooled = run_linucb_pooled(tables, order=order, record=True)
    np.testing.assert_array_equal(single.actions, pooled.actions)
    np.testing.assert_allclose(single.regret_curve, pooled.regret_curve)


def test_independent_linucb_agent_is_unaffected_by_the_others():
    # linucb runs every agent on its own data: agent 0 of a 3-agent world behaves as
    # a 1-agent learner on agent 0's tables.
    tables = _tables(n_agents=3, horizon=40, n_trials=1)
    block = tables.block(0, 40)
    spec1 = LinearBandit(n_agents=1, n_arms=6, dim=3)
    from fedpriv.algorithms.environments.linear import LinearBanditTables

    alone = LinearBanditTables.from_arrays(
        spec1, block.contexts[:, :1], block.rewards[:, :1], tables.theta
    )
    together = run_linucb(tables, record=True)
    single = run_linucb(alone, record=True)
    np.testing.assert_array_equal(together.actions[:, :1], single.actions)


def test_pooled_learner_sees_every_agents_data_and_independent_ones_do_not():
    # Flip every reward of agent 1 at round 0: agent 0's later actions change under
    # pooling (it learns from agent 1) and never under independent learners.
    tables = _tables(n_agents=2, horizon=40, n_trials=2)
    rewards = tables.block(0, 1).rewards[0, 1, 0]
    flipped = tables.substitute(agent=1, t=0, rewards=1.0 - rewards, trial=0)
    pooled = [run_linucb_pooled(t, record=True).actions for t in (tables, flipped)]
    alone = [run_linucb(t, record=True).actions for t in (tables, flipped)]
    np.testing.assert_array_equal(alone[0][:, 0], alone[1][:, 0])
    assert not np.array_equal(pooled[0][0, 0], pooled[1][0, 0])
    np.testing.assert_array_equal(pooled[0][1], pooled[1][1])  # trial 1 untouched


@given(arrays(np.float64, (4, 3), elements=st.floats(-1, 1)), st.floats(0.5, 3.0))
def test_sherman_morrison_matches_a_fresh_inverse(xs, lam):
    a = lam * np.eye(3)
    inv = np.linalg.inv(a)  # reference only
    logdet = 3 * math.log(lam)
    for x in xs:
        logdet += math.log1p(sherman_morrison_update(inv, x))
        a = a + np.outer(x, x)
    np.testing.assert_allclose(inv, np.linalg.inv(a), atol=1e-9)
    ref_inv, ref_logdet = inverse_and_logdet(a)
    np.testing.assert_allclose(ref_inv, np.linalg.inv(a), atol=1e-9)
    assert logdet == pytest.approx(ref_logdet) == pytest.approx(np.linalg.slogdet(a)[1])


def test_ucb_scores_match_the_definitions():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((2, 4, 4))
    gram = b @ b.transpose(0, 2, 1) + np.eye(4)
    target = rng.standard_normal((2, 4))
    contexts = rng.standard_normal((2, 5, 4))
    mean, width, log_det = ucb_scores(gram, target, contexts)
    inv = np.linalg.inv(gram)
    theta = np.einsum("jab,jb->ja", inv, target)
    np.testing.assert_allclose(mean, np.einsum("jkd,jd->jk", contexts, theta))
    np.testing.assert_allclose(
        width, np.sqrt(np.einsum("jkd,jde,jke->jk", contexts, inv, contexts))
    )
    np.testing.assert_allclose(log_det, np.linalg.slogdet(gram)[1])


def test_oful_radius_formula():
    # σ sqrt(2 ln(1/α) + log det V − d ln λ) + sqrt(λ) S at V = λI: σ sqrt(2 ln(1/α)) + √λ S
    value = oful_radius(
        np.array(2 * math.log(4.0)),
        dim=2,
        regularizer=4.0,
        bound_theta=1.0,
        sub_gaussian=0.5,
        failure_probability=0.1,
    )
    assert value == pytest.approx(0.5 * math.sqrt(2 * math.log(10.0)) + 2.0)


def test_independent_private_learners_compose_in_parallel_over_agents():
    horizon = 16
    cal = privatizer_calibration(1.0, 0.1, horizon=horizon, n_agents=1, dim=3)
    mu = (
        math.sqrt(cal.capacity.bit_length())
        * cal.frobenius_sensitivity
        / (math.sqrt(2.0) * cal.noise_stddev)
    )
    single_tree = gaussian_dp_epsilon(mu, 1e-6)
    eps = {}
    for m in (1, 4):
        run = run_linucb_independent_private(
            _tables(n_agents=m, horizon=horizon), epsilon=1.0, delta=0.1
        )
        eps[m] = run.accountant_epsilon(1e-6)[1]
        assert run.accountant.ledger.draws["agent"].nunique() == m
    assert eps[1] == pytest.approx(single_tree, rel=1e-6)
    assert eps[4] == pytest.approx(eps[1], rel=1e-9)  # parallel: not 4-fold
    # one user at every agent: the M trees compose (k-fold), μ grows by sqrt(M)
    shared = run_linucb_independent_private(
        _tables(n_agents=4, horizon=horizon, shared_users=True), epsilon=1.0, delta=0.1
    )
    assert shared.accountant_epsilon(1e-6)[1] == pytest.approx(
        gaussian_dp_epsilon(2.0 * mu, 1e-6), rel=1e-6
    )


def test_independent_private_learner_releases_every_round():
    run = run_linucb_independent_private(
        _tables(n_agents=2, horizon=12, n_trials=1), epsilon=1.0, delta=0.1, record=True
    )
    assert run.setting["tree_depth"] == 1 + math.ceil(math.log2(12))
    # 12 leaves per tree: one node draw per leaf insertion
    assert run.accountant.ledger.n_draws == 2 * 12
    assert run.actions.shape == (1, 2, 12)
    assert run.final_regret.shape == (1, 2)


def test_bad_input_raises_clear_errors():
    tables = _tables()
    with pytest.raises(ValueError, match="`beta`"):
        run_linucb(tables, beta="H")
    with pytest.raises(ValueError, match="`beta_value`"):
        run_linucb(tables, beta="tuned")
    with pytest.raises(ValueError, match="`order`"):
        run_linucb_pooled(tables, order="random")
    with pytest.raises(ValueError, match="`regularizer`"):
        run_linucb_pooled(tables, regularizer=0.0)
    with pytest.raises(ValueError, match="`failure_probability`"):
        run_linucb(tables, failure_probability=1.0)
    with pytest.raises(ValueError, match="`mode`"):
        run_linucb_independent_private(tables, epsilon=1.0, delta=0.1, mode="x")
    with pytest.raises(ValueError, match="`epsilon`"):
        run_linucb_independent_private(tables, epsilon=-1.0, delta=0.1)
    with pytest.raises(TypeError, match="LinearBanditTables"):
        run_linucb(np.zeros(3))
    with pytest.raises(ValueError, match="releases nothing"):
        run_linucb(tables).accountant_epsilon(0.1)


def test_tuned_radius_zero_exploration_differs_from_oful():
    tables = _tables(n_agents=2, horizon=40, n_trials=1)
    greedy = run_linucb(tables, beta="tuned", beta_value=1e-9, record=True)
    oful = run_linucb(tables, record=True)
    assert greedy.regret_curve.shape == oful.regret_curve.shape == (1, 40)
    assert not np.array_equal(greedy.actions, oful.actions)
