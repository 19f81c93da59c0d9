"""Statistical validity of audit.audit_mechanism: tightness, power, false alarms.

Targets from issue 6 ("Statistical validity") and anchors_audit.md §4.5:

- tightness: Laplace ε = 1 gives ε_LB >= 0.98 at 10^6 samples per world; the
  Gaussian calibrated to exactly (1, 1e-5) gives ε_LB >= 0.95 through the GDP route;
- power: a 2x under-noised Laplace (true ε = 2 against a claim of 1) is flagged in
  >= 99% of seeds with 10^4 samples per world;
- false alarms: on correct mechanisms at most 5% of seeds flag at the default 95%
  confidence (slow test).

Every test pins its seeds. For the single-seed tightness tests the anchors measured
the 5th percentile of the bound above the target (Laplace black-box 0.989 at 10^6;
GDP 0.972 mean), so each fails for a correct estimator with probability < 5%; the
pinned seed then makes the outcome deterministic. The multi-seed tests state their
own false-failure probability.
"""

from __future__ import annotations

import functools

import fedpriv.audit as audit
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution
from fedpriv.audit.regression.corpus_mechanisms import gaussian_count, laplace_count, tree_nodes
from fedpriv.privacy import PLD, ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
from fedpriv.privacy.accounting.tree import nodes_covering, tree_depth
from scipy import optimize

__all__: list[str] = []

PAIR = audit.NeighboringPair(1.0, 0.0)


def _gaussian_mu_for(epsilon: float, delta: float) -> float:
    """μ with gaussian_dp_epsilon(μ, δ) = ε exactly (the calibrated Gaussian)."""
    return optimize.brentq(
        lambda mu: gaussian_dp_epsilon(mu, delta) - epsilon, 1e-3, 10.0, xtol=1e-12
    )


@pytest.mark.statistical
def test_laplace_tightness_black_box() -> None:
    result = audit.audit_mechanism(
        functools.partial(laplace_count, scale=1.0), PAIR, claim=PureDP(1.0), samples=10**6, seed=0
    )
    assert not result.violated
    assert 0.98 <= result.epsilon_lower_bound <= 1.0


@pytest.mark.statistical
def test_laplace_tightness_white_box() -> None:
    llr = audit.laplace_log_density_ratio(1.0, 0.0, 1.0)
    result = audit.audit_mechanism(
        functools.partial(laplace_count, scale=1.0),
        PAIR,
        claim=PureDP(1.0),
        samples=10**6,
        seed=0,
        log_density_ratio=llr,
        executor=None,
    )
    assert 0.98 <= result.epsilon_lower_bound <= 1.0


@pytest.mark.statistical
def test_gaussian_tightness_through_gdp() -> None:
    mu = _gaussian_mu_for(1.0, 1e-5)
    assert abs(1.0 / mu - 3.7306) < 1e-3  # σ of anchors_audit.md §5 (dp_accounting)
    result = audit.audit_mechanism(
        functools.partial(gaussian_count, noise_stddev=1.0 / mu),
        PAIR,
        claim=GaussianDP(mu),
        delta=1e-5,
        samples=10**6,
        seed=0,
        executor=None,
    )
    assert result.route == "gdp" and not result.violated
    # Tightness is read on μ; the ε that μ converts to through the Gaussian curve is an
    # interpretation valid for Gaussian-shaped mechanisms (as this one is), while the ε
    # the audit reports is measured directly and is sound for any mechanism (issue 19).
    assert 0.95 * mu <= result.mu.mu_lower_bound <= mu
    assert 0.95 <= result.mu.epsilon_lower_bound(1e-5) <= 1.0
    assert 0.0 < result.epsilon_lower_bound <= 1.0
    # The same Gaussian against its (ε, δ) claim, parametric GDP route.
    approx = audit.audit_mechanism(
        functools.partial(gaussian_count, noise_stddev=1.0 / mu),
        PAIR,
        claim=ApproxDP(1.0, 1e-5),
        estimator="gdp",
        samples=10**6,
        seed=0,
        executor=None,
    )
    assert 0.95 <= approx.mu.epsilon_lower_bound(1e-5) <= 1.0 and not approx.violated
    assert approx.epsilon_lower_bound <= 1.0


@pytest.mark.statistical
def test_power_against_2x_under_noised_laplace() -> None:
    """>= 99% of 200 seeds flag Laplace(1/2) claimed 1-DP at 10^4 samples per world.

    The anchors measured power 1.0 already at 500 samples per world; if the true
    power at 10^4 were as low as 0.999, failing (>= 3 misses of 200) would have
    probability 0.001.
    """
    mechanism = functools.partial(laplace_count, scale=0.5)
    flagged = [
        audit.audit_mechanism(
            mechanism, PAIR, claim=PureDP(1.0), samples=10**4, seed=seed, executor=None
        ).violated
        for seed in range(200)
    ]
    assert np.mean(flagged) >= 0.99


@pytest.mark.statistical
def test_curve_audit_catches_a_10_percent_under_noised_tree() -> None:
    """T = 1024 (11 levels): per-node scale 10 instead of 11 (true ε = 1.1).

    The headline ε bound cannot see it at 3·10^5 samples (anchors: 0.85 at 10^6), the
    curve audit against the claimed PLD (11 composed Laplace(11)) can (anchors: 100%
    of runs at 3·10^5). The correct tree passes the same audit.
    """
    horizon = 1024
    levels = tree_depth(horizon)
    claim = PLD(
        privacy_loss_distribution.from_laplace_mechanism(
            float(levels), sensitivity=1.0, value_discretization_interval=1e-4
        ).self_compose(levels)
    )
    stream = np.zeros(horizon)
    stream[0] = 1.0
    pair = audit.NeighboringPair(stream, np.zeros(horizon))
    n_nodes = nodes_covering(1, horizon).size
    llr = audit.laplace_log_density_ratio(np.ones(n_nodes), np.zeros(n_nodes), float(levels))
    options = {
        "claim": claim,
        "samples": 300_000,
        "seed": 0,
        "log_density_ratio": llr,
        "epsilons": [0.0, 0.1, 0.2, 0.3, 0.4],
        "executor": None,
    }
    broken = audit.audit_mechanism(
        functools.partial(tree_nodes, scale=levels - 1.0), pair, **options
    )
    assert broken.curve is not None and broken.curve.violated
    assert broken.epsilon_lower_bound < claim.get_epsilon(0.0)  # headline misses it
    correct = audit.audit_mechanism(
        functools.partial(tree_nodes, scale=float(levels)), pair, **options
    )
    assert not correct.violated


def _one_run_scores(scale: float, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    included = rng.random(m) < 0.5
    return included + rng.laplace(0.0, scale, m), included


@pytest.mark.statistical
def test_one_run_audit_is_tight_and_flags_under_noising() -> None:
    """m = 10^4 canaries, one Laplace(1) release each: anchors G8 (mean 0.937, min 0.880)."""
    scores, included = _one_run_scores(1.0, 10_000, seed=0)
    bound = audit.audit_one_run(scores, included)
    assert 0.85 <= bound.epsilon_lower_bound <= 1.0
    scores, included = _one_run_scores(0.5, 10_000, seed=0)
    assert audit.audit_one_run(scores, included).epsilon_lower_bound > 1.0


@pytest.mark.slow
@pytest.mark.statistical
def test_false_alarm_rates_on_correct_mechanisms() -> None:
    """<= 5% false alarms per family over 400 seeds at the default 95% confidence.

    By construction each audit of a correct mechanism false-alarms with probability
    <= 5% (the bound is family-wise); the anchors measured 0–1%. At a true rate of
    1% the test fails (> 20 alarms of 400) with probability P[Bin(400, 0.01) > 20]
    < 1e-6.
    """
    n_seeds = 400
    mu = _gaussian_mu_for(1.0, 1e-5)
    cases = {
        "laplace pure": (functools.partial(laplace_count, scale=1.0), PureDP(1.0), {}),
        "gaussian gdp": (
            functools.partial(gaussian_count, noise_stddev=1.0 / mu),
            GaussianDP(mu),
            {},
        ),
        "gaussian (ε, δ) curve": (
            functools.partial(gaussian_count, noise_stddev=1.0 / mu),
            ApproxDP(1.0, 1e-5),
            {},
        ),
        "laplace llr": (
            functools.partial(laplace_count, scale=1.0),
            PureDP(1.0),
            {"log_density_ratio": audit.laplace_log_density_ratio(1.0, 0.0, 1.0)},
        ),
    }
    for name, (mechanism, claim, extra) in cases.items():
        alarms = sum(
            audit.audit_mechanism(
                mechanism, PAIR, claim=claim, samples=10**4, seed=seed, executor=None, **extra
            ).violated
            for seed in range(n_seeds)
        )
        assert alarms / n_seeds <= 0.05, (name, alarms)
    one_run_alarms = sum(
        audit.audit_one_run(*_one_run_scores(1.0, 2_000, seed)).epsilon_lower_bound > 1.0
        for seed in range(n_seeds)
    )
    assert one_run_alarms / n_seeds <= 0.05
    # The tree-node audit as `fedpriv verify` runs it (joint and product, the stronger
    # at 95%) on the corrected calibration at T = 600 000: 20 nodes, true ε = 1.
    from fedpriv.audit.engine.neighbors import worst_case_reward_pair
    from fedpriv.audit.engine.tree_nodes import audit_tree_nodes
    from fedpriv.privacy.calibrations import gossip_fed_ucb_scale

    pair = worst_case_reward_pair(600_000)
    scale = gossip_fed_ucb_scale(1.0, 600_000, mode="corrected", log_base="2")
    tree_alarms = sum(
        audit_tree_nodes(
            pair, scale=scale, claimed_epsilon=1.0, n_samples=2_000, seed=seed
        ).bound.epsilon_lower_bound
        > 1.0
        for seed in range(n_seeds)
    )
    assert tree_alarms / n_seeds <= 0.05


@pytest.mark.statistical
def test_one_run_mechanism_helper_draws_bits_before_the_run() -> None:
    """Same seed, same bits and bound; the 2x under-noised release is flagged."""

    def releases(scale: float):
        def run(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
            return included + rng.laplace(0.0, scale, included.size)

        return run

    first = audit.audit_one_run_mechanism(releases(1.0), n_canaries=10_000, seed=3)
    again = audit.audit_one_run_mechanism(releases(1.0), n_canaries=10_000, seed=3)
    assert first.bound == again.bound and 0.85 <= first.epsilon_lower_bound <= 1.0
    assert (
        audit.audit_one_run_mechanism(releases(0.5), n_canaries=10_000, seed=3).epsilon_lower_bound
        > 1.0
    )
    with pytest.raises(ValueError, match="must return shape"):
        audit.audit_one_run_mechanism(
            lambda bits, rng: bits[:-1].astype(float), n_canaries=10, seed=0
        )
