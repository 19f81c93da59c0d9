"""Tests of fedpriv.audit.regression.api: the regression-test API and its executors.

Statistical tests pin their seeds. Verdict tests use mechanisms whose true ε is far
from the claim (>= 2x), where the anchors measured power 1.0 at a few hundred
samples; the false-failure probability of each such test is far below 1e-6 at the
sample sizes used (10^4 and more per world).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math

import fedpriv.audit as audit
import numpy as np
import pytest
from fedpriv.audit.regression.corpus_mechanisms import gaussian_count, laplace_count
from fedpriv.privacy import ZCDP, ApproxDP, GaussianDP, PureDP
from fedpriv.privacy.accounting.guarantees import gaussian_dp_delta
from fedpriv.privacy.errors import MechanismError, PrivacyViolationError, ToolkitError
from fedpriv.privacy.relations import NeighboringRelation

__all__: list[str] = []

PAIR = audit.NeighboringPair(1.0, 0.0)
LAPLACE_1 = functools.partial(laplace_count, scale=1.0)
LAPLACE_HALF = functools.partial(laplace_count, scale=0.5)


def test_public_names_are_exported() -> None:
    for name in (
        "audit_mechanism",
        "NeighboringPair",
        "AuditResult",
        "assert_private",
        "estimate_epsilon_lower_bound",
        "estimate_gdp_mu_lower_bound",
        "audit_privacy_curve",
        "audit_one_run",
    ):
        assert name in audit.__all__
        assert hasattr(audit, name)


@pytest.mark.statistical
def test_result_fields_for_a_correct_laplace() -> None:
    result = audit.audit_mechanism(
        LAPLACE_1, PAIR, claim=PureDP(1.0), samples=20_000, seed=3, executor=None
    )
    assert isinstance(result, audit.AuditResult)
    assert not result.violated
    assert 0.5 < result.epsilon_lower_bound <= 1.0
    assert result.confidence == 0.95
    assert result.n_samples == 20_000 and result.n_pilot_samples == 2_000
    assert result.route == "threshold" and result.score == "identity"
    assert result.bound is not None and result.bound.n_tests == 32
    assert result.curve is not None and not result.curve.violated
    assert result.claimed_epsilon == 1.0 and result.delta == 0.0
    assert math.isclose(result.tightness, result.epsilon_lower_bound)
    assert "no evidence" in result.evidence
    record = result.to_dict()
    assert record["violated"] is False and record["claim"] == repr(PureDP(1.0))


@pytest.mark.statistical
def test_assert_private_raises_with_evidence() -> None:
    with pytest.raises(PrivacyViolationError, match="VIOLATED") as info:
        audit.assert_private(
            LAPLACE_HALF, PAIR, claim=PureDP(1.0), samples=10_000, seed=0, executor=None
        )
    assert isinstance(info.value, ToolkitError) and isinstance(info.value, AssertionError)
    result = info.value.result
    assert result.violated and result.epsilon_lower_bound > 1.0
    ok = audit.assert_private(
        LAPLACE_1, PAIR, claim=PureDP(1.0), samples=10_000, seed=0, executor=None
    )
    assert not ok.violated


@pytest.mark.statistical
def test_approx_dp_claim_uses_delta_and_curve() -> None:
    """(ε, δ) claims: ε is bounded at the claimed δ and the curve is audited.

    The Gaussian with σ = 1 on a shift of 1 has δ(ε=1) = 0.127 (1-GDP), so the
    claim (1, 0.01) is false by a wide margin; σ = 4 (0.25-GDP, δ(1) ≈ 1e-6) is
    within the claim.
    """
    claim = ApproxDP(1.0, 0.01)
    broken = audit.audit_mechanism(
        functools.partial(gaussian_count, noise_stddev=1.0),
        PAIR,
        claim=claim,
        samples=20_000,
        seed=1,
        executor=None,
    )
    assert broken.route == "curve" and broken.delta == 0.01
    assert broken.violated
    assert gaussian_dp_delta(1.0, 1.0) > 0.1
    fine = audit.audit_mechanism(
        functools.partial(gaussian_count, noise_stddev=4.0),
        PAIR,
        claim=claim,
        samples=20_000,
        seed=1,
        executor=None,
    )
    assert not fine.violated and fine.epsilon_lower_bound <= 1.0


@pytest.mark.statistical
def test_gdp_route_for_gaussian_and_approx_claims() -> None:
    mechanism = functools.partial(gaussian_count, noise_stddev=2.0)  # 0.5-GDP
    result = audit.audit_mechanism(
        mechanism, PAIR, claim=GaussianDP(0.5), samples=50_000, seed=2, executor=None, delta=1e-5
    )
    assert result.route == "gdp" and result.mu is not None and result.bound is not None
    assert 0.4 < result.mu.mu_lower_bound <= 0.5 and not result.violated
    # The ε printed is measured directly on the events (sound for any mechanism), never
    # μ converted through the Gaussian curve (issue 19).
    assert result.epsilon_lower_bound == result.bound.epsilon_lower_bound
    assert result.epsilon_lower_bound <= result.mu.epsilon_lower_bound(1e-5)
    flagged = audit.audit_mechanism(
        mechanism, PAIR, claim=GaussianDP(0.25), samples=50_000, seed=2, executor=None
    )
    assert flagged.violated and "μ lower bound" in flagged.evidence
    parametric = audit.audit_mechanism(
        mechanism,
        PAIR,
        claim=ApproxDP(1.0, 1e-5),
        estimator="gdp",
        samples=50_000,
        seed=2,
        executor=None,
    )
    # 0.5-GDP has ε(1e-5) ≈ 2.3 > 1, but only the Gaussian-shape assumption turns μ's
    # bound into that ε: the claim is refuted only where the direct ε bound exceeds 1.
    assert parametric.route == "gdp" and parametric.mu.epsilon_lower_bound(1e-5) > 1.0
    assert parametric.violated == (parametric.bound.epsilon_lower_bound > 1.0)
    assert parametric.epsilon_lower_bound == parametric.bound.epsilon_lower_bound


@pytest.mark.statistical
def test_zcdp_claim_goes_through_the_curve() -> None:
    result = audit.audit_mechanism(
        LAPLACE_HALF, PAIR, claim=ZCDP(0.1), samples=20_000, seed=0, executor=None
    )
    assert result.route == "curve" and result.delta == 1e-5 and result.violated


@pytest.mark.statistical
def test_vector_outputs_use_a_pilot_projection() -> None:
    def two_coordinates(x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.column_stack([x + rng.laplace(0, 0.5, n), rng.normal(0, 1, n)])

    result = audit.audit_mechanism(
        two_coordinates, PAIR, claim=PureDP(1.0), samples=20_000, seed=0, executor=None
    )
    assert result.score == "projection" and result.violated


@pytest.mark.statistical
def test_white_box_llr_beats_nothing_it_should_not() -> None:
    """The LLR of the true density bounds ε from below and reaches ≥ 0.9 at 10^5."""
    llr = audit.laplace_log_density_ratio(1.0, 0.0, 1.0)
    result = audit.audit_mechanism(
        LAPLACE_1,
        PAIR,
        claim=PureDP(1.0),
        samples=100_000,
        seed=5,
        log_density_ratio=llr,
        executor=None,
    )
    assert result.score == "llr" and not result.violated
    assert 0.9 <= result.epsilon_lower_bound <= 1.0


def test_bad_input_raises() -> None:
    with pytest.raises(TypeError, match="`pair` must be a NeighboringPair"):
        audit.audit_mechanism(LAPLACE_1, (1.0, 0.0), claim=PureDP(1.0))
    with pytest.raises(TypeError, match="`claim` must be a privacy guarantee"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=1.0)
    with pytest.raises(ValueError, match="`samples` must be >= 1"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), samples=0)
    with pytest.raises(ValueError, match="`confidence` must be in"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), confidence=1.0)
    with pytest.raises(ValueError, match="`estimator` must be one of"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), estimator="magic")
    with pytest.raises(ValueError, match="needs a GaussianDP or ApproxDP"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), estimator="gdp")
    with pytest.raises(ValueError, match="`executor` must be"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), executor="gpu", samples=10)
    with pytest.raises(ValueError, match="n_samples = 10 rows"):
        audit.audit_mechanism(
            lambda d, n, rng: np.zeros(n + 1),
            PAIR,
            claim=PureDP(1.0),
            samples=10,
            pilot_samples=10,
            executor=None,
        )
    with pytest.raises(MechanismError, match=r"returned \d+ NaN value"):
        audit.audit_mechanism(
            lambda d, n, rng: np.full(n, np.nan),
            PAIR,
            claim=PureDP(1.0),
            samples=10,
            pilot_samples=10,
            executor=None,
        )


def _fingerprint(result: audit.AuditResult) -> tuple:
    assert result.bound is not None
    return (
        result.epsilon_lower_bound,
        result.thresholds,
        result.bound.count_d,
        result.bound.count_d_prime,
    )


def test_a_sequential_audit_opens_one_pool_for_all_its_looks(monkeypatch) -> None:
    """The looks share one local pool (the pilot has its own), sized for one look's
    tasks since the looks run one after another, and the pool does not change the
    numbers."""
    opened: list[int] = []

    class CountingPool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, max_workers=None, **kwargs) -> None:
            opened.append(max_workers)
            super().__init__(*args, max_workers=max_workers, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", CountingPool)
    options = {
        "claim": PureDP(1.0),
        "samples": 8_000,
        "seed": 5,
        "batch_size": 1_000,
        "pilot_samples": 1_000,
        "sequential": True,
        "looks": 4,
    }
    pooled = audit.audit_mechanism(LAPLACE_1, PAIR, executor="processes", n_workers=5, **options)
    # the pilot: 2 tasks; each look: 2 worlds x 2 batches of 1,000
    assert opened == [2, 4]
    assert pooled.details["looks"] == 4 and not pooled.violated
    serial = audit.audit_mechanism(LAPLACE_1, PAIR, executor=None, **options)
    assert opened == [2, 4]
    assert repr(dataclasses.replace(pooled, seconds=0.0)) == repr(
        dataclasses.replace(serial, seconds=0.0)
    )


def _infinite_in_confirmation(count: float, n_samples: int, rng: np.random.Generator):
    """Laplace(1) noise, with one infinite output in any batch of exactly 2,500 rows
    (the confirmation's below; the pilot's batches are 1,000 rows)."""
    values = count + rng.laplace(0.0, 1.0, n_samples)
    if n_samples == 2_500:
        values[n_samples // 2] = np.inf
    return values


def _nan_in_confirmation(outputs: np.ndarray) -> np.ndarray:
    """A user score: the output, with one NaN in any batch of exactly 2,500 rows."""
    scores = np.asarray(outputs, dtype=np.float64).copy()
    if scores.shape[0] == 2_500:
        scores[0] = np.nan
    return scores


@pytest.mark.parametrize("sequential", [False, True])
def test_a_non_finite_confirmation_score_is_named(sequential: bool) -> None:
    options = {
        "claim": PureDP(1.0),
        "samples": 5_000,
        "pilot_samples": 1_000,
        "batch_size": 2_500,
        "executor": None,
        "sequential": sequential,
        "looks": 2,
    }
    with pytest.raises(
        MechanismError,
        match=r"the outputs of mechanism .*_infinite_in_confirmation gave 1 NaN or "
        r"infinite value\(s\) in one batch of 2500 on world D\.",
    ):
        audit.audit_mechanism(_infinite_in_confirmation, PAIR, **options)
    with pytest.raises(
        MechanismError,
        match=r"the score function .*_nan_in_confirmation on the outputs of .*laplace_count "
        r"gave 1 NaN or infinite value\(s\) in one batch of 2500 on world D\.",
    ):
        audit.audit_mechanism(LAPLACE_1, PAIR, score=_nan_in_confirmation, **options)


@pytest.mark.statistical
def test_results_do_not_depend_on_the_executor_or_worker_count() -> None:
    """Every batch has its own SeedSequence address: same numbers everywhere."""
    options = {
        "claim": PureDP(1.0),
        "samples": 30_000,
        "seed": 11,
        "batch_size": 4_096,
        "pilot_samples": 5_000,
    }
    reference = _fingerprint(audit.audit_mechanism(LAPLACE_1, PAIR, executor=None, **options))
    for workers in (1, 2):
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            got = audit.audit_mechanism(LAPLACE_1, PAIR, executor=pool, **options)
        assert _fingerprint(got) == reference
    for workers in (1, 2):
        got = audit.audit_mechanism(
            LAPLACE_1, PAIR, executor="processes", n_workers=workers, **options
        )
        assert _fingerprint(got) == reference
    # A different seed gives different numbers (the test above is not vacuous).
    other = audit.audit_mechanism(LAPLACE_1, PAIR, executor=None, **{**options, "seed": 12})
    assert _fingerprint(other) != reference


@pytest.mark.statistical
def test_dask_client_gives_the_same_numbers() -> None:
    distributed = pytest.importorskip("distributed")
    options = {"claim": PureDP(1.0), "samples": 20_000, "seed": 11, "batch_size": 4_096}
    reference = _fingerprint(audit.audit_mechanism(LAPLACE_1, PAIR, executor=None, **options))
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as client:
        got = audit.audit_mechanism(LAPLACE_1, PAIR, executor=client, **options)
    assert _fingerprint(got) == reference


def test_pair_carries_its_relation_into_the_evidence() -> None:
    pair = audit.NeighboringPair(1.0, 0.0, NeighboringRelation.REPLACE_ONE_REWARD, "r1")
    result = audit.audit_mechanism(
        LAPLACE_1, pair, claim=PureDP(1.0), samples=2_000, seed=0, executor=None
    )
    assert result.neighboring_relation is NeighboringRelation.REPLACE_ONE_REWARD
    assert "replace_one_reward" in result.evidence


# ------------------------------------------------- one entry point, one result type
def _e2e_sampler(world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    return (1.0 - world) + np.random.default_rng(seed).laplace(0.0, 1.0, n)


def _one_run(included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return included + rng.laplace(0.0, 1.0, included.size)


def _same_bound(a: audit.AuditResult, b: audit.AuditResult) -> None:
    assert a.bound == b.bound  # every field of the estimator's bound, bit for bit
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.n_samples == b.n_samples


def test_the_tree_route_is_audit_tree_counter_bit_for_bit() -> None:
    from fedpriv.audit.engine.neighbors import worst_case_reward_pair
    from fedpriv.audit.engine.tree import audit_tree_counter
    from fedpriv.audit.engine.tree_nodes import audit_tree_nodes
    from fedpriv.privacy.accounting.events import LaplaceTree

    pair = worst_case_reward_pair(16)
    event = LaplaceTree(scale=4.0, horizon=16, released_prefixes=9)
    routed = audit.audit_mechanism(event, pair, claim=PureDP(1.0), samples=5000, seed=3)
    direct = audit_tree_counter(
        pair, scale=4.0, claimed_epsilon=1.0, n_samples=5000, seed=3, released_prefixes=9
    )
    _same_bound(routed, direct)
    assert routed.method == "tree counter" and routed.t == 0 and routed.n_nodes == 4
    assert routed.violated == (routed.epsilon_lower_bound > 1.0)
    nodes = audit.audit_mechanism(
        event, pair, claim=PureDP(1.0), samples=2000, seed=1, method="product"
    )
    _same_bound(
        nodes,
        audit_tree_nodes(
            pair,
            scale=4.0,
            claimed_epsilon=1.0,
            n_samples=2000,
            seed=1,
            method="product",
            released_prefixes=9,
        ),
    )
    assert nodes.method == "tree nodes: product"
    with pytest.raises(ValueError, match="horizon 32"):
        audit.audit_mechanism(LaplaceTree(scale=4.0, horizon=32), pair, claim=PureDP(1.0))
    with pytest.raises(TypeError, match="`claim` is required"):
        audit.audit_mechanism(event, pair)


def test_the_end_to_end_route_is_search_and_confirm_bit_for_bit() -> None:
    from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm

    samplers = {"one reward changed": _e2e_sampler}
    routed = audit.audit_mechanism(
        samplers, claim=PureDP(0.5), samples=3000, pilot_samples=300, seed=7, channel="c"
    )
    direct = search_and_confirm(
        samplers,
        budget=AuditBudget(pilot_samples=300, samples=3000),
        seed=7,
        delta=0.0,
        channel="c",
    )
    _same_bound(routed, direct)
    assert routed.method == direct.method == "end-to-end"
    assert routed.event == direct.event and routed.neighbors == "one reward changed"
    assert routed.claimed_epsilon == 0.5 and routed.violated  # true ε = 1
    assert math.isnan(direct.claimed_epsilon) and not direct.violated  # no claim
    with pytest.raises(TypeError, match="`channel`"):
        audit.audit_mechanism(samplers, samples=10)
    with pytest.raises(TypeError, match="`pair` must be None"):
        audit.audit_mechanism(samplers, PAIR, channel="c")


def test_the_one_run_route_is_audit_one_run_mechanism_bit_for_bit() -> None:
    routed = audit.audit_mechanism(_one_run, n_canaries=4000, seed=2)
    direct = audit.audit_one_run_mechanism(_one_run, n_canaries=4000, seed=2)
    _same_bound(routed, direct)
    assert routed.method == "one-run" and routed.n_samples == 4000
    assert routed.n_guesses == direct.bound.n_guesses
    assert 0.5 < routed.epsilon_lower_bound <= 1.0
    with pytest.raises(TypeError, match="`pair` is required"):
        audit.audit_mechanism(_one_run)


def test_the_entry_point_refuses_what_fits_no_route() -> None:
    with pytest.raises(TypeError, match="`mechanism` must be"):
        audit.audit_mechanism(3.0, PAIR, claim=PureDP(1.0))
    with pytest.raises(TypeError, match="`claim` must be a privacy guarantee"):
        audit.audit_mechanism(LAPLACE_1, PAIR, claim=1.0)
    with pytest.raises(TypeError, match="`claim` is required"):
        audit.audit_mechanism(LAPLACE_1, PAIR)


def test_audit_result_details_replace_and_pickle() -> None:
    import dataclasses
    import pickle

    result = audit.audit_mechanism(LAPLACE_1, PAIR, claim=PureDP(1.0), samples=2000, executor=None)
    assert result.method == "mechanism" and result.route == "threshold"
    assert result.details["route"] == "threshold"
    assert result.confidence == result.bound.confidence == 0.95
    with pytest.raises(AttributeError, match="no attribute or detail 'nothing'"):
        _ = result.nothing
    with pytest.raises(TypeError):
        result.details["route"] = "curve"  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.method = "other"  # type: ignore[misc]
    moved = dataclasses.replace(result, route="curve", seconds=0.0)
    assert moved.route == "curve" and moved.bound is result.bound and result.route == "threshold"
    back = pickle.loads(pickle.dumps(result))
    assert back.bound == result.bound and back.details.keys() == result.details.keys()
    assert back.evidence == result.evidence
    assert result.to_dict()["epsilon_lower_bound"] == result.epsilon_lower_bound
    with pytest.raises(TypeError, match="`bound`"):
        audit.AuditResult(method="x", bound=0.5)
