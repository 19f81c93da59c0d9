"""BinomialVectorSum: its bound against an independent brute-force hockey-stick divergence."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from fedpriv.privacy import Accountant, NeighboringRelation
from fedpriv.privacy.accounting.binomial_sum import (
    BinomialVectorSum,
    binomial_sum_certificate,
    binomial_vector_sum_delta,
    binomial_vector_sum_epsilon,
)
from fedpriv.privacy.accounting.handlers import REGISTRY
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats


def _brute_delta(n: int, p: float, shifts: tuple[int, ...], epsilon: float) -> float:
    """Exact δ(ε) of the product pair (X, X + s), X i.i.d. Bin(n, p) per coordinate,
    summed over the whole joint support (no ordering, no truncation)."""
    lo, hi = -max(abs(s) for s in shifts), n + max(abs(s) for s in shifts)
    xs = np.arange(lo, hi + 1)
    p_log = np.zeros(())
    q_log = np.zeros(())
    for s in shifts:
        a = stats.binom.logpmf(xs, n, p)
        b = stats.binom.logpmf(xs - s, n, p)
        p_log = np.add.outer(p_log, a)
        q_log = np.add.outer(q_log, b)
    diff = np.exp(p_log) - math.exp(epsilon) * np.exp(q_log)
    return float(np.sum(np.maximum(diff, 0.0)))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(4, 60),
    p=st.sampled_from([0.1, 0.25, 0.5, 0.75]),
    max_shift=st.integers(1, 3),
    epsilon=st.floats(0.0, 3.0),
)
def test_bound_is_at_least_every_shift_vector(n, p, max_shift, epsilon):
    l2 = math.sqrt(2.0) * max_shift
    event = BinomialVectorSum(n_trials=n, probability=p, dim=2, max_shift=max_shift, l2_shift=l2)
    bound = binomial_vector_sum_delta(event, epsilon)
    for s in itertools.product(range(-max_shift, max_shift + 1), repeat=2):
        if s == (0, 0) or math.hypot(*s) > l2:
            continue
        assert _brute_delta(n, p, s, epsilon) <= bound + 1e-12


@pytest.mark.parametrize("n,p,k", [(30, 0.25, 1), (200, 0.25, 3), (1000, 0.5, 5)])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5, 2.0])
def test_one_coordinate_grid(n, p, k, epsilon):
    event = BinomialVectorSum(n_trials=n, probability=p, dim=1, max_shift=k, l2_shift=float(k))
    bound = binomial_vector_sum_delta(event, epsilon)
    for s in range(-k, k + 1):
        if s:
            assert _brute_delta(n, p, (s,), epsilon) <= bound + 1e-12


def test_l2_composition_is_not_the_linf_one():
    """A vector whose L2 shift is its L∞ shift is priced as one coordinate (plus flags)."""
    one = BinomialVectorSum(n_trials=10**6, probability=0.25, dim=1, max_shift=50, l2_shift=50.0)
    many = BinomialVectorSum(n_trials=10**6, probability=0.25, dim=65, max_shift=50, l2_shift=50.0)
    assert binomial_vector_sum_epsilon(many, 1e-6) == pytest.approx(
        binomial_vector_sum_epsilon(one, 1e-6), rel=1e-6
    )


def test_certificate_slope_and_flag_are_small_at_protocol_sizes():
    slope, delta0 = binomial_sum_certificate(2500 * 4772, 0.25, 201)
    sd = math.sqrt(2500 * 4772 * 0.25 * 0.75)
    assert slope * sd <= 1.02 * 1.02 + 1e-12 and delta0 < 1e-20


def test_registered_and_composes_in_the_ledger():
    assert BinomialVectorSum in REGISTRY
    event = BinomialVectorSum(n_trials=10**6, probability=0.25, dim=5, max_shift=40, l2_shift=60.0)
    accountant = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
    accountant.spend(event)
    one = accountant.routes.tightest(1e-6)[1]
    accountant.spend(event)
    two = accountant.routes.tightest(1e-6)[1]
    assert one <= binomial_vector_sum_epsilon(event, 1e-6) + 1e-3
    assert one < two < math.inf


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_trials": 0}, "n_trials"),
        ({"probability": 1.0}, "probability"),
        ({"dim": 0}, "dim"),
        ({"max_shift": 0}, "max_shift"),
        ({"l2_shift": 1.0}, "l2_shift"),
    ],
)
def test_bad_parameters(kwargs, match):
    base = {"n_trials": 100, "probability": 0.25, "dim": 2, "max_shift": 3, "l2_shift": 4.0}
    with pytest.raises(ValueError, match=match):
        BinomialVectorSum(**{**base, **kwargs})


def test_tree_event_is_the_exact_composition_of_its_levels():
    """The tree's single pair equals the composed levels' pairs (Gaussian μ in squares,
    flags in probability): its ε is never below the ledger's composition of the parts."""
    from fedpriv.privacy.accounting.binomial_sum import BinomialVectorSumTree

    levels = tuple(
        BinomialVectorSum(
            n_trials=10**5 * 2**i, probability=0.25, dim=4, max_shift=20, l2_shift=30.0
        )
        for i in range(3)
    )
    tree = BinomialVectorSumTree(levels=levels)
    composed = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
    for level in levels:
        composed.spend(level)
    single = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
    single.spend(tree)
    eps_tree = binomial_vector_sum_epsilon(tree, 1e-6)
    assert single.routes.tightest(1e-6)[1] <= eps_tree + 1e-9
    assert eps_tree == pytest.approx(composed.routes.tightest(1e-6)[1], rel=2e-3)
    with pytest.raises(TypeError, match="levels"):
        BinomialVectorSumTree(levels=())


def test_vector_sum_tree_is_unbiased_and_charged():
    """The analyzer's prefix sums are unbiased. Seeded; the 6-sd tolerance fails with
    probability below 1e-8 per coordinate (Gaussian tail of a sum of 4,000 draws)."""
    from fedpriv.privacy.mechanisms.vector_sum import ShuffledVectorSumTree

    accountant = Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD, disjoint=("trial",)
    )
    n_trials, users, coords = 4000, 20, 3
    tree = ShuffledVectorSumTree(
        stream_shape=(n_trials,),
        n_coords=coords,
        capacity=3,
        users_per_leaf=users,
        bound=1.0,
        dim=2,
        epsilon=1.0,
        delta=0.1,
        linf=2.0,
        l2=2.0,
        accountant=accountant,
        keys={"trial": np.arange(n_trials)},
        rng=np.array(np.random.default_rng(7).spawn(n_trials), dtype=object),
    )
    assert accountant.routes.tightest(0.1)[1] < math.inf
    values = np.random.default_rng(8).uniform(-1, 1, (n_trials, users, coords))
    for batch in range(1, 4):
        out = tree.release(values)
        truth = batch * values.sum(axis=1)
        err = out - truth
        sd = np.std(err, axis=0)
        assert np.all(np.abs(err.mean(axis=0)) <= 6 * sd / np.sqrt(n_trials))
    with pytest.raises(ValueError, match="capacity"):
        tree.release(values)
    with pytest.raises(ValueError, match="shape"):
        ShuffledVectorSumTree(
            stream_shape=(1,),
            n_coords=coords,
            capacity=3,
            users_per_leaf=users,
            bound=1.0,
            dim=2,
            epsilon=1.0,
            delta=0.1,
            linf=2.0,
            l2=2.0,
            accountant=accountant,
            keys={"trial": np.arange(1)},
            rng=np.array([np.random.default_rng(0)], dtype=object),
        ).release(np.zeros((1, users + 1, coords)))


def _vector_sum_tree(n_streams: int, rngs) -> object:
    from fedpriv.privacy.mechanisms.vector_sum import ShuffledVectorSumTree

    accountant = Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD, disjoint=("trial",)
    )
    return ShuffledVectorSumTree(
        stream_shape=(n_streams,),
        n_coords=3,
        capacity=4,
        users_per_leaf=5,
        bound=1.0,
        dim=2,
        epsilon=1.0,
        delta=0.1,
        linf=2.0,
        l2=2.0,
        accountant=accountant,
        keys={"trial": np.arange(n_streams)},
        rng=rngs,
    )


def test_vector_sum_tree_streams_do_not_depend_on_how_many_run():
    """Stream i reads only its own generator: stream 0 of one tree and of three trees,
    given the same generator, releases the same sums (bit for bit, every batch)."""
    values = np.random.default_rng(3).uniform(-1, 1, (3, 4, 5, 3))
    one = _vector_sum_tree(1, np.array(np.random.default_rng(9).spawn(1), dtype=object))
    three = _vector_sum_tree(3, np.array(np.random.default_rng(9).spawn(3), dtype=object))
    for batch in range(4):
        a = one.release(values[:1, batch])
        b = three.release(values[:, batch])
        np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.parametrize(
    "rngs",
    [
        np.random.default_rng(0),  # one generator for every stream: refused
        np.array(np.random.default_rng(0).spawn(3), dtype=object),  # wrong shape
        np.array([np.random.default_rng(0), None], dtype=object),  # not a Generator
    ],
)
def test_vector_sum_tree_needs_one_generator_per_stream(rngs):
    with pytest.raises(TypeError, match="`rng` must be an object array of numpy Generators"):
        _vector_sum_tree(2, rngs)
