"""``LaplaceTreeCounter.step_release_rows`` is ``step`` then ``release`` read at the observed
streams, bit for bit: the same sums, node noises, ledger rows (in order), draw counts,
out-of-range counts and errors. Deterministic (no false alarms).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedpriv.privacy import Accountant, LaplaceTreeCounter
from fedpriv.privacy.errors import CapacityExceededError
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []


def _counter(shape, *, seed: int, **options) -> LaplaceTreeCounter:
    """A counter over ``shape`` with one noise stream per row (fresh generators per call)."""
    rngs = np.empty(shape[:-1], dtype=object)
    for k, index in enumerate(np.ndindex(*shape[:-1])):
        rngs[index] = np.random.default_rng([seed, k])
    keys = {
        f"level{axis}": np.arange(n).reshape((-1,) + (1,) * (len(shape) - axis - 1))
        for axis, n in enumerate(shape)
    }
    accountant = Accountant(disjoint=tuple(keys))
    return LaplaceTreeCounter(
        stream_shape=shape, accountant=accountant, keys=keys, rng=rngs, **options
    )


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(deadline=None, max_examples=60, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from([(1, 1), (3, 4), (2, 3, 5), (4, 1, 2)]),
    horizon=st.integers(1, 40),
    scale=st.sampled_from([0.0, 0.7, 3.0]),
    noise_on_empty_nodes=st.booleans(),
    out_of_bounds=st.sampled_from(["ignore", "clip"]),
    secure=st.booleans(),
    spread=st.sampled_from([0.0, 0.5, 2.0]),
)
def test_step_release_rows_is_step_then_release(
    seed, shape, horizon, scale, noise_on_empty_nodes, out_of_bounds, secure, spread
) -> None:
    options = {
        "horizon": horizon,
        "scale": scale,
        "noise_on_empty_nodes": noise_on_empty_nodes,
        "out_of_bounds": out_of_bounds,
        "secure": secure,
        "released_prefixes": max(1, horizon - 1),
    }
    dense, rows = _counter(shape, seed=seed, **options), _counter(shape, seed=seed, **options)
    rng = np.random.default_rng(seed)
    for _ in range(horizon):
        index = rng.integers(0, shape[-1], size=shape[:-1])
        values = 0.5 + spread * rng.standard_normal(shape[:-1])  # spread > 0: out of [0, 1]
        observed = index[..., None] == np.arange(shape[-1])
        dense.step(np.where(observed, values[..., None], 0.0), observed)
        expected = dense.release(observed)[observed].reshape(shape[:-1])
        assert _same(rows.step_release_rows(index, values), expected)
    pd.testing.assert_frame_equal(
        rows.accountant.ledger.draws, dense.accountant.ledger.draws, check_exact=True
    )
    assert rows.n_draws == dense.n_draws
    assert rows.n_out_of_bounds == dense.n_out_of_bounds
    assert _same(rows._raw_total, dense._raw_total)
    assert _same(rows._node_count, dense._node_count)
    # The dense release after the rows' steps still draws exactly what is missing.
    everything = np.ones(shape, dtype=bool)
    assert _same(rows.release(everything), dense.release(everything))
    pd.testing.assert_frame_equal(
        rows.accountant.ledger.draws, dense.accountant.ledger.draws, check_exact=True
    )
    with pytest.raises(CapacityExceededError, match="capacity"):
        rows.step_release_rows(np.zeros(shape[:-1], dtype=int), np.zeros(shape[:-1]))


@pytest.mark.parametrize("out_of_bounds", ["raise", "ignore", "clip"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_observation_raises_as_step(bad: float, out_of_bounds: str) -> None:
    shape, options = (2, 3), {"horizon": 4, "scale": 1.0, "out_of_bounds": out_of_bounds}
    dense, rows = _counter(shape, seed=1, **options), _counter(shape, seed=1, **options)
    values, index = np.array([0.5, bad]), np.array([2, 0])
    observed = index[:, None] == np.arange(3)
    with pytest.raises(ValueError, match="finite") as dense_error:
        dense.step(np.where(observed, values[:, None], 0.0), observed)
    with pytest.raises(ValueError, match="finite") as rows_error:
        rows.step_release_rows(index, values)
    assert str(rows_error.value) == str(dense_error.value)
    assert rows.t == 0 and rows.accountant.ledger.n_draws == 0


@pytest.mark.parametrize("out_of_bounds", ["ignore", "clip"])
def test_huge_finite_observations_are_counted_as_step(out_of_bounds: str) -> None:
    shape, options = (3, 2), {"horizon": 4, "scale": 1.0, "out_of_bounds": out_of_bounds}
    dense, rows = _counter(shape, seed=4, **options), _counter(shape, seed=4, **options)
    values, index = np.array([1.7e308, 1.7e308, 0.25]), np.array([0, 1, 1])
    observed = index[:, None] == np.arange(2)
    dense.step(np.where(observed, values[:, None], 0.0), observed)
    expected = dense.release(observed)[observed]
    assert _same(rows.step_release_rows(index, values), expected)
    assert rows.n_out_of_bounds == dense.n_out_of_bounds == 2


def test_out_of_range_observation_raises_as_step() -> None:
    shape = (3, 2)
    dense, rows = (
        _counter(shape, seed=2, horizon=4, scale=1.0),
        _counter(shape, seed=2, horizon=4, scale=1.0),
    )
    values, index = np.array([1.5, 0.2, -0.25]), np.array([1, 0, 1])
    observed = index[:, None] == np.arange(2)
    with pytest.raises(ValueError, match="declared range") as dense_error:
        dense.step(np.where(observed, values[:, None], 0.0), observed)
    with pytest.raises(ValueError, match="declared range") as rows_error:
        rows.step_release_rows(index, values)
    assert str(rows_error.value) == str(dense_error.value)
    assert rows.t == 0


@pytest.mark.parametrize(
    ("index", "values", "match"),
    [
        (np.array([0, 5]), np.zeros(2), r"`index` must lie in \[0, 3\)"),
        (np.array([-1, 0]), np.zeros(2), r"`index` must lie in \[0, 3\)"),
        (np.array([0.0, 1.0]), np.zeros(2), "integers"),
        (np.array([0, 1, 2]), np.zeros(3), "shape"),
        (np.array([0, 1]), np.zeros(3), "shape"),
    ],
)
def test_bad_rows_are_rejected(index, values, match: str) -> None:
    counter = _counter((2, 3), seed=3, horizon=4, scale=1.0)
    with pytest.raises(ValueError, match=match):
        counter.step_release_rows(index, values)
    assert counter.t == 0 and counter.accountant.ledger.n_draws == 0
