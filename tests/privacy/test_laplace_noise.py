"""``laplace_noise`` is ``laplace_release`` of zeros bit for bit, charged and recorded
alike; the keys' faster broadcast gives ``np.broadcast_to(...).ravel()``'s labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedpriv.privacy import Accountant, PureDP, laplace_release
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.mechanisms import laplace_noise
from fedpriv.privacy.mechanisms.release_keys import _broadcast_ravel
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.privacy._support import assert_unchanged, snapshot


def _accountant() -> Accountant:
    return Accountant(disjoint=("sample",), keep_draw_rows=True)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    size=st.integers(1, 300),
    m=st.integers(1, 40),
    scale=st.sampled_from([1.0, 0.25, 7.5, 1e-3]),
    seed=st.integers(0, 2**32 - 1),
    per_row_rngs=st.booleans(),
)
def test_noise_is_the_release_of_zeros(size, m, scale, seed, per_row_rngs) -> None:
    keys = {"sample": np.arange(10, 10 + size)[:, None]}
    if per_row_rngs:
        streams = np.random.SeedSequence(seed).spawn(size)
        rng_a = np.array([np.random.default_rng(s) for s in streams] + [None])[:-1]
        rng_b = np.array([np.random.default_rng(s) for s in streams] + [None])[:-1]
    else:
        rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    ours, theirs = _accountant(), _accountant()
    noise = laplace_noise(
        (size, m), scale=scale, l1_sensitivity=1.0, accountant=ours, keys=keys, rng=rng_a
    )
    released = laplace_release(
        np.zeros((size, m)),
        scale=scale,
        l1_sensitivity=1.0,
        accountant=theirs,
        keys=keys,
        rng=rng_b,
    )
    np.testing.assert_array_equal(_bits(noise), _bits(released))
    assert not np.any(np.signbit(noise) & (noise == 0.0))  # no -0.0 for the zeros to fix
    pd.testing.assert_frame_equal(ours.ledger.charges, theirs.ledger.charges)
    pd.testing.assert_frame_equal(ours.ledger.draws, theirs.ledger.draws)
    assert ours.ledger.n_draws == theirs.ledger.n_draws == size * m
    assert ours.get_epsilon(0.0) == theirs.get_epsilon(0.0)


def test_refused_charge_draws_nothing() -> None:
    accountant = Accountant(budget=PureDP(epsilon=0.5), disjoint=("sample",))
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError):
        laplace_noise(
            (4, 2),
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=accountant,
            keys={"sample": np.arange(4)[:, None]},
            rng=rng,
        )
    assert_unchanged(accountant, before)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize(
    ("shape", "keys", "match"),
    [
        ((4, -1), {"sample": 0}, "shape"),
        ((4, 2), {"sample": np.arange(3)[:, None]}, "broadcast"),
        ((4, 2), {"sample": np.zeros((1, 4, 2))}, "broadcast"),
    ],
)
def test_bad_shape_or_keys_raise(shape, keys, match) -> None:
    with pytest.raises(ValueError, match=match):
        laplace_noise(
            shape,
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=_accountant(),
            keys=keys,
            rng=np.random.default_rng(0),
        )


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=1, min_dims=0, max_dims=3, max_side=4),
    dtype=st.sampled_from([np.int64, np.int8, np.bool_, np.float64, "U3", object]),
)
def test_broadcast_ravel_is_broadcast_to_ravel(shapes, dtype) -> None:
    (label_shape,), shape = shapes.input_shapes, shapes.result_shape
    labels = np.arange(int(np.prod(label_shape, dtype=np.int64))).reshape(label_shape)
    labels = labels.astype(dtype)
    ours = _broadcast_ravel(labels, shape)
    expected = np.broadcast_to(labels, shape).ravel()
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    assert ours.tolist() == expected.tolist()


@pytest.mark.parametrize("lead", [0, 1])
@pytest.mark.parametrize("rest", [(), (4,), (300, 3)])
def test_each_generator_fills_its_own_block(lead, rest) -> None:
    """``_draw_laplace`` with an rng array: generator ``index`` draws block ``index``
    with ``Generator.laplace`` (node-major ``lead`` axes first), as a per-index loop."""
    from fedpriv.privacy.mechanisms import _draw_laplace

    def generators():
        streams = np.random.SeedSequence(5).spawn(6)
        rng = np.empty(6, dtype=object)
        rng[:] = [np.random.default_rng(s) for s in streams]
        return rng.reshape(3, 2)

    shape = (7,) * lead + (3, 2) + rest
    drawn = _draw_laplace(generators(), 0.5, shape, lead=lead)
    expected = np.empty(shape)
    reference = generators()
    for index in np.ndindex(3, 2):
        block = (slice(None),) * lead + index
        expected[block] = reference[index].laplace(0.0, 0.5, size=expected[block].shape)
    np.testing.assert_array_equal(_bits(drawn), _bits(expected))
