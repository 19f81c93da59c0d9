"""FedUCB's Privatizer (privacy/mechanisms/matrix_tree.py): tree releases, noise and accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.algorithms.feducb.privatizer import privatizer_calibration
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.guarantees import ApproxDP
from fedpriv.privacy.accounting.tree import prefix_nodes
from fedpriv.privacy.calibrations import feducb_privatizer
from fedpriv.privacy.errors import BudgetExceededError, CapacityExceededError
from fedpriv.privacy.mechanisms.matrix_tree import (
    MatrixTreePrivatizer,
    SymmetricMatrixGaussianTree,
    exact_noise_stddev,
    matrix_tree_gdp,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats


def _rngs(shape, seed=0):
    rngs = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        rngs[index] = np.random.default_rng([seed, *index])
    return rngs


def _accountant(**kwargs):
    return Accountant(
        neighboring_relation="replace_one_context_reward", disjoint=("trial", "agent"), **kwargs
    )


def _privatizer(*, shape=(2, 3), dim=2, capacity=8, sigma=1.5, shift=0.0, accountant=None, seed=0):
    accountant = accountant if accountant is not None else _accountant()
    keys = {"trial": np.arange(shape[0])[:, None], "agent": np.arange(shape[1])[None, :]}
    return MatrixTreePrivatizer(
        stream_shape=shape,
        dim=dim,
        capacity=capacity,
        noise_stddev=sigma,
        shift=shift,
        frobenius_sensitivity=2.0 * math.sqrt(2.0),
        accountant=accountant,
        keys=keys,
        rng=_rngs(shape, seed),
    ), accountant


def _gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su 2019, Cor. 2.13), written out with scipy.stats."""
    return stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(
        -epsilon / mu - mu / 2
    )


def test_paper_sigma_gives_gdp_mu_0083_at_epsilon_1_delta_01():
    # Issue 4 "Done when": paper's σ_N at ε = 1, δ = 0.1, L = B = 1, substitution of
    # one (x, y) pair. Derivation (feducb.md §3.6 item 5): σ_N = 4 √m (L²+1) ln(2/δ)/ε,
    # ‖Δ‖_F = √2 (L²+1), m nodes hold a record, μ_node = ‖Δ‖_F/(√2 σ_N), so
    # μ = √m μ_node = ε / (4 ln(2/δ)) = 1 / (4 ln 20) = 0.08345, independent of m.
    expected_mu = 1.0 / (4.0 * math.log(20.0))
    assert expected_mu == pytest.approx(0.0834, abs=1e-4)
    cal = privatizer_calibration(1.0, 0.1, horizon=10**4, n_agents=10, dim=10)
    accountant = _accountant()
    MatrixTreePrivatizer(
        stream_shape=(1, 10),
        dim=10,
        capacity=cal.capacity,
        noise_stddev=cal.noise_stddev,
        shift=cal.shift,
        frobenius_sensitivity=math.sqrt(2.0) * 2.0,
        accountant=accountant,
        keys={"trial": 0, "agent": np.arange(10)[None, :]},
        rng=_rngs((1, 10)),
    )
    for epsilon in (0.05, 0.2, 0.5):
        assert accountant.get_delta(epsilon) == pytest.approx(
            _gdp_delta(expected_mu, epsilon), rel=1e-6
        )
    # feducb.md §3.6 item 5: (0, 0.1)-DP already, and ε ≈ 0.33 at δ = 1e-6.
    assert accountant.get_epsilon(0.1) == pytest.approx(0.0, abs=1e-9)
    assert accountant.get_epsilon(1e-6) == pytest.approx(0.33, abs=0.005)


def test_release_matches_the_fenwick_prefix_sum_of_memoised_node_noise():
    sigma, shift, dim = 1.5, 4.0, 2
    privatizer, accountant = _privatizer(sigma=sigma, shift=shift, dim=dim)
    rng = np.random.default_rng(5)
    leaves_seen = np.zeros((2, 3, 3, 3))
    counts = np.zeros((2, 3), dtype=int)
    masks = [np.ones((2, 3), bool), np.array([[1, 0, 1], [0, 1, 1]], bool), np.ones((2, 3), bool)]
    masks += [np.ones((2, 3), bool)] * 3
    for mask in masks:
        v = rng.uniform(-0.5, 0.5, size=(2, 3, 3))
        leaves = v[..., :, None] * v[..., None, :]
        u_hat, small = privatizer.release(leaves, mask)
        leaves_seen += np.where(mask[..., None, None], leaves, 0.0)
        counts += mask
        for j, i in zip(*np.nonzero(mask)):
            replay = np.random.default_rng([0, j, i]).standard_normal((counts[j, i], 3, 3))
            noise = sum(
                (replay[s - 1] + replay[s - 1].T) * sigma / math.sqrt(2)
                for s in prefix_nodes(counts[j, i])
            )
            released = leaves_seen[j, i] + noise
            np.testing.assert_allclose(u_hat[j, i], released[:dim, :dim] + shift * np.eye(dim))
            np.testing.assert_allclose(small[j, i], released[:dim, dim])
        assert np.all(np.isnan(u_hat[~mask]))
    # one ledger row per node draw, node k at level ctz(k)
    assert accountant.ledger.n_draws == sum(int(m.sum()) for m in masks) == privatizer.n_draws
    ledger = accountant.ledger.draws
    assert (ledger["level"] == np.log2(ledger["node"] & -ledger["node"])).all()


@pytest.mark.parametrize("refill", [1, 3])
def test_releases_do_not_depend_on_the_refill_size(monkeypatch, refill):
    """Noise buffers grow 1, 2, 4, ... nodes up to _NODES_PER_REFILL; a stream's
    generator is read in order, so releases are bit-identical for any refill size
    (across several refills, full and partial masks)."""
    from fedpriv.privacy.mechanisms import matrix_tree

    def run():
        privatizer, _ = _privatizer(capacity=64, sigma=0.7, shift=0.3)
        rng = np.random.default_rng(11)
        outputs = []
        for step in range(45):
            mask = np.ones((2, 3), bool) if step % 3 else rng.random((2, 3)) < 0.5
            v = rng.uniform(-0.5, 0.5, size=(2, 3, 3))
            outputs.append(privatizer.release(v[..., :, None] * v[..., None, :], mask))
        return outputs

    default = run()
    monkeypatch.setattr(matrix_tree, "_NODES_PER_REFILL", refill)
    for (u_a, s_a), (u_b, s_b) in zip(default, run(), strict=True):
        np.testing.assert_array_equal(u_a, u_b)
        np.testing.assert_array_equal(s_a, s_b)


def test_capacity_is_enforced_without_changing_state():
    privatizer, _ = _privatizer(capacity=2)
    leaves = np.zeros((2, 3, 3, 3))
    mask = np.ones((2, 3), bool)
    privatizer.release(leaves, mask)
    privatizer.release(leaves, mask)
    assert np.all(privatizer.remaining_capacity == 0)
    with pytest.raises(CapacityExceededError, match="capacity is 2 leaves"):
        privatizer.release(leaves, mask)
    assert np.all(privatizer.n_leaves == 2)


def test_accountant_is_charged_when_the_privatizer_opens():
    privatizer, accountant = _privatizer(sigma=2.0, capacity=8)
    charges = accountant.ledger.charges
    assert len(charges) == 6 and set(charges["event"]) == {"SymmetricMatrixGaussianTree"}
    # μ = √4 · 2√2 / (√2 · 2) = 2 for a record in the 4 nodes of an 8-leaf tree
    assert matrix_tree_gdp(privatizer.event) == pytest.approx(2.0)
    tight = Accountant(
        neighboring_relation="replace_one_context_reward",
        disjoint=("trial", "agent"),
        budget=ApproxDP(0.5, 1e-6),
    )
    with pytest.raises(BudgetExceededError):
        _privatizer(accountant=tight)
    assert len(tight.ledger.charges) == 0


def test_zero_noise_is_a_named_raw_release():
    privatizer, accountant = _privatizer(sigma=0.0)
    leaves = np.broadcast_to(np.eye(3), (2, 3, 3, 3))
    u_hat, small = privatizer.release(leaves, np.ones((2, 3), bool))
    np.testing.assert_array_equal(u_hat, np.broadcast_to(np.eye(2), (2, 3, 2, 2)))
    np.testing.assert_array_equal(small, np.zeros((2, 3, 2)))
    assert math.isinf(accountant.get_epsilon(0.1))
    assert accountant.ledger.non_private_reasons()


def test_calibrations():
    paper = feducb_privatizer(1.0, 0.1, horizon=1000, n_agents=5, dim=3)
    cal = privatizer_calibration(1.0, 0.1, horizon=1000, n_agents=5, dim=3)
    assert cal.noise_stddev == paper.noise_stddev and cal.shift == 2 * paper.op_norm_bound
    assert cal.capacity == 2 ** (cal.tree_depth - 1) >= 1000
    # corrected: σ = √2 (L²+1) √(2 ln(1.25/δ₀)) / ε₀, ε₀ = ε/√(8 m ln(2/δ)), δ₀ = δ/(2m)
    m = cal.tree_depth
    eps0, delta0 = 1.0 / math.sqrt(8 * m * math.log(20.0)), 0.1 / (2 * m)
    corrected = privatizer_calibration(
        1.0, 0.1, horizon=1000, n_agents=5, dim=3, calibration="corrected"
    )
    assert corrected.noise_stddev == pytest.approx(
        2 * math.sqrt(2) * math.sqrt(2 * math.log(1.25 / delta0)) / eps0
    )
    # exact: the exact accountant spends exactly the claim
    exact = privatizer_calibration(0.5, 1e-5, horizon=1000, n_agents=5, dim=3, calibration="exact")
    accountant = _accountant()
    MatrixTreePrivatizer(
        stream_shape=(1, 1),
        dim=3,
        capacity=exact.capacity,
        noise_stddev=exact.noise_stddev,
        shift=exact.shift,
        frobenius_sensitivity=exact.frobenius_sensitivity,
        accountant=accountant,
        keys={"trial": 0, "agent": 0},
        rng=_rngs((1, 1)),
    )
    assert accountant.get_epsilon(1e-5) == pytest.approx(0.5, rel=1e-6)
    # [P] has the smaller privacy term of β (feducb.md §0)
    neurips = privatizer_calibration(1.0, 0.1, horizon=1000, n_agents=5, dim=3, version="neurips")
    assert neurips.beta_privacy_term < cal.beta_privacy_term
    with pytest.raises(ValueError, match="`calibration` must be one of"):
        privatizer_calibration(1.0, 0.1, horizon=10, n_agents=2, dim=2, calibration="bad")


def test_bad_input():
    privatizer, _ = _privatizer()
    with pytest.raises(ValueError, match="`mask` must have shape"):
        privatizer.release(np.zeros((2, 3, 3, 3)), np.ones(3, bool))
    with pytest.raises(ValueError, match="`leaves` must have shape"):
        privatizer.release(np.zeros((2, 3, 2, 2)), np.ones((2, 3), bool))
    leaves = np.zeros((2, 3, 3, 3))
    leaves[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="must be finite"):
        privatizer.release(leaves, np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="`noise_stddev` must be in"):
        _privatizer(sigma=-1.0)
    with pytest.raises(TypeError, match="`rng` must be an object array"):
        MatrixTreePrivatizer(
            stream_shape=(1, 1),
            dim=1,
            capacity=2,
            noise_stddev=1.0,
            shift=0.0,
            frobenius_sensitivity=1.0,
            accountant=_accountant(),
            keys={"trial": 0, "agent": 0},
            rng=np.random.default_rng(0),
        )
    with pytest.raises(ValueError, match="`capacity` must be >= 1"):
        SymmetricMatrixGaussianTree(noise_stddev=1.0, dim=2, frobenius_sensitivity=1.0, capacity=0)


@given(sigma=st.floats(0.1, 100.0), factor=st.floats(1.0, 10.0), capacity=st.integers(1, 2**20))
def test_mu_decreases_with_noise_and_grows_with_depth(sigma, factor, capacity):
    base = SymmetricMatrixGaussianTree(
        noise_stddev=sigma, dim=3, frobenius_sensitivity=1.0, capacity=capacity
    )
    noisier = SymmetricMatrixGaussianTree(
        noise_stddev=sigma * factor, dim=3, frobenius_sensitivity=1.0, capacity=capacity
    )
    deeper = SymmetricMatrixGaussianTree(
        noise_stddev=sigma, dim=3, frobenius_sensitivity=1.0, capacity=2 * capacity
    )
    assert matrix_tree_gdp(noisier) <= matrix_tree_gdp(base) <= matrix_tree_gdp(deeper)
    assert hash(base) == hash(
        SymmetricMatrixGaussianTree(
            noise_stddev=sigma, dim=3, frobenius_sensitivity=1.0, capacity=capacity
        )
    )


@pytest.mark.statistical
def test_symmetrised_noise_has_the_paper_variances():
    """Off-diagonal entries have variance σ², diagonal ones 2σ² (Alg. 2 line 6).

    n = 4000 streams, one node each: (n-1) s²/v ~ χ²(n-1). Each of the two checks
    fails with probability 1e-6 under the model (two-sided χ² quantiles at 5e-7 each),
    so the false-alarm rate is 2e-6.
    """
    n, sigma = 4000, 3.0
    privatizer, _ = _privatizer(shape=(n, 1), dim=2, sigma=sigma, capacity=2, seed=17)
    u_hat, _ = privatizer.release(np.zeros((n, 1, 3, 3)), np.ones((n, 1), bool))
    low, high = stats.chi2.ppf([5e-7, 1 - 5e-7], n - 1)
    for values, variance in ((u_hat[:, 0, 0, 1], sigma**2), (u_hat[:, 0, 0, 0], 2 * sigma**2)):
        statistic = (n - 1) * np.var(values, ddof=1) / variance
        assert low <= statistic <= high
    np.testing.assert_array_equal(u_hat[:, 0, 0, 1], u_hat[:, 0, 1, 0])


@given(
    epsilon=st.floats(0.1, 5.0),
    delta=st.sampled_from([1e-6, 1e-3, 0.1]),
    horizon=st.integers(2, 5000),
    dim=st.integers(1, 6),
)
@settings(max_examples=40, deadline=None)
def test_exact_calibration_with_secure_noise_spends_exactly_the_claim(epsilon, delta, horizon, dim):
    """With secure noise, "exact" solves σ for what the secure tree is charged (its grid
    twin through zCDP): the charge is the claim (within the bisection's float step),
    never above it, and σ is at least the float Gaussian's exact σ."""
    kwargs = {"horizon": horizon, "n_agents": 3, "dim": dim, "calibration": "exact"}
    secure = privatizer_calibration(epsilon, delta, secure=True, **kwargs)
    float_exact = privatizer_calibration(epsilon, delta, **kwargs)
    accountant = _accountant()
    MatrixTreePrivatizer(
        stream_shape=(1, 1),
        dim=dim,
        capacity=secure.capacity,
        noise_stddev=secure.noise_stddev,
        shift=secure.shift,
        frobenius_sensitivity=secure.frobenius_sensitivity,
        accountant=accountant,
        keys={"trial": 0, "agent": 0},
        rng=_rngs((1, 1)),
        secure=True,
    )
    spent = accountant.get_epsilon(delta)
    assert spent <= epsilon
    assert spent == pytest.approx(epsilon, rel=1e-9)
    assert secure.noise_stddev >= float_exact.noise_stddev
    for calibration in ("paper", "corrected"):  # only "exact" depends on the noise
        assert privatizer_calibration(
            epsilon, delta, secure=True, **{**kwargs, "calibration": calibration}
        ) == privatizer_calibration(epsilon, delta, **{**kwargs, "calibration": calibration})


@given(
    epsilon=st.floats(0.1, 5.0),
    delta=st.sampled_from([1e-6, 1e-3, 0.1]),
    depth=st.integers(1, 14),
    records=st.integers(1, 3),
)
@settings(max_examples=30, deadline=None)
def test_exact_noise_stddev_meets_the_claim_and_never_exceeds_it(epsilon, delta, depth, records):
    """The mechanism's own σ for a claim: the tree it charges at that σ spends the claim
    (within the float step of its closed form), never more."""
    sigma = exact_noise_stddev(
        epsilon, delta, depth=depth, frobenius_sensitivity=1.5, side=3, records_per_leaf=records
    )
    accountant = _accountant()
    accountant.spend(
        SymmetricMatrixGaussianTree(
            noise_stddev=sigma,
            dim=3,
            frobenius_sensitivity=records * 1.5,
            capacity=2 ** (depth - 1),
        ),
        key={"trial": 0, "agent": 0},
    )
    spent = accountant.get_epsilon(delta)
    assert spent <= epsilon
    assert spent == pytest.approx(epsilon, rel=1e-6)
