"""Li & Song's CDP-MAB regret-only fast path (``rewards="binomial"``, issue 36 item 1).

Each epoch's round-robin reward sum of one agent and arm is one ``Binomial(n_r, μ)``
draw instead of ``n_r`` table entries, from run-wide generators. The regret must have
the table path's distribution (a seeded two-sample Kolmogorov–Smirnov test: the seeds
are pinned, so the outcome is fixed; were the seeds drawn at random, the test would
fail 1% of the time when the distributions are equal, its level), and the releases
must be the table path's: the same charges to the same cells through ``privacy/``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB, homogeneous_bandit
from fedpriv.algorithms.li_song.mab import run_cdp_mab
from scipy import stats

_LEVEL = 0.01  # false-alarm rate of each KS test at random seeds


def _env() -> BernoulliMAB:
    return homogeneous_bandit(4, 8, np.random.default_rng(3))


@pytest.mark.parametrize("epsilon", [0.5, np.inf])
def test_binomial_path_has_the_regret_distribution_of_the_table_path(epsilon) -> None:
    env = _env()
    kwargs = {"horizon": 20_000, "epsilon": epsilon, "n_trials": 400}
    table = run_cdp_mab(env, seed=11, **kwargs)
    fast = run_cdp_mab(env, seed=12, rewards="binomial", **kwargs)
    assert stats.ks_2samp(table.total_regret, fast.total_regret).pvalue > _LEVEL
    assert stats.ks_2samp(table.rounds, fast.rounds).pvalue > _LEVEL


def test_the_ks_test_has_power_against_a_wrong_reward_mean() -> None:
    """The same test rejects a binomial path run on means shifted by 0.05 (so a wrong
    reward distribution would be caught)."""
    env = _env()
    shifted = BernoulliMAB(np.clip(env.arm_means - 0.05, 0.0, 1.0))
    kwargs = {"horizon": 20_000, "epsilon": 0.5, "n_trials": 400}
    table = run_cdp_mab(env, seed=11, **kwargs)
    wrong = run_cdp_mab(shifted, seed=12, rewards="binomial", **kwargs)
    assert stats.ks_2samp(table.total_regret, wrong.total_regret).pvalue <= _LEVEL


def test_binomial_path_charges_what_the_table_path_charges() -> None:
    """Epoch 1 has the same schedule on both paths: the same ledger rows, the same ε."""
    env = _env()
    kwargs = {"horizon": 20_000, "epsilon": 0.5, "n_trials": 3, "stop_epoch": 1}
    table = run_cdp_mab(env, seed=5, **kwargs)
    fast = run_cdp_mab(env, seed=5, rewards="binomial", **kwargs)
    assert table.accountant.ledger.draws.equals(fast.accountant.ledger.draws)
    full = run_cdp_mab(env, horizon=20_000, epsilon=0.5, seed=5, rewards="binomial")
    assert full.message_epsilon() == table.message_epsilon()
    assert full.accountant.get_epsilon(0.0) == table.accountant.get_epsilon(0.0)


def test_binomial_path_is_reproducible_and_refuses_a_table() -> None:
    env = _env()
    a = run_cdp_mab(env, horizon=5000, epsilon=0.5, n_trials=5, seed=2, rewards="binomial")
    b = run_cdp_mab(env, horizon=5000, epsilon=0.5, n_trials=5, seed=2, rewards="binomial")
    assert np.array_equal(a.total_regret, b.total_regret)
    with pytest.raises(ValueError, match="rewards"):
        run_cdp_mab(env, horizon=100, epsilon=0.5, rewards="bernoulli")
    with pytest.raises(ValueError, match="table"):
        run_cdp_mab(
            env,
            horizon=100,
            epsilon=0.5,
            rewards="binomial",
            table=env.reward_table(np.random.SeedSequence(0)),
        )
