"""Tests for `fedpriv.privacy.mechanisms`: the tree counter, Laplace and raw releases.

Expected prefix sums are computed here with ``numpy.cumsum``; node intervals from the
definition "node ``s`` covers the ``lowbit(s)`` rounds ending at ``s``". Statistical
tests pin their seeds; each fails with probability <= 1e-6 for a correct mechanism.
"""

from __future__ import annotations

import math

import fedpriv.privacy.mechanisms
import numpy as np
import pytest
from fedpriv.privacy import Accountant, LaplaceTreeCounter, PureDP, laplace_release, raw_release
from fedpriv.privacy.errors import BudgetExceededError, CapacityExceededError
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tests.privacy._support import assert_unchanged, snapshot

# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------


def _interval(s: int) -> tuple[int, int]:
    """Rounds ``(first, last)`` of node ``s``: the ``lowbit(s)`` rounds ending at s."""
    low = 1
    while s % (2 * low) == 0:
        low *= 2
    return s - low + 1, s


def _levels(horizon: int) -> int:
    return sum(1 for k in range(64) if 2**k <= horizon)


def _make(
    *,
    stream_shape: tuple[int, ...] = (3,),
    horizon: int = 16,
    scale: float = 2.0,
    rng: object = None,
    accountant: Accountant | None = None,
    **kwargs: object,
) -> tuple[LaplaceTreeCounter, Accountant]:
    """A counter whose streams are labelled ``stream = 0..n-1`` (disjoint)."""
    accountant = accountant or Accountant(disjoint=("stream",))
    n_streams = int(np.prod(stream_shape))
    counter = LaplaceTreeCounter(
        stream_shape=stream_shape,
        horizon=horizon,
        scale=scale,
        accountant=accountant,
        keys={"stream": np.arange(n_streams).reshape(stream_shape)},
        rng=np.random.default_rng(0) if rng is None else rng,
        **kwargs,
    )
    return counter, accountant


def _run(
    counter: LaplaceTreeCounter,
    values: np.ndarray,
    observed: np.ndarray,
    release_masks: np.ndarray | None = None,
) -> np.ndarray:
    """Step through ``values`` (rounds first) and release after every round."""
    out = []
    for t in range(values.shape[0]):
        counter.step(values[t], observed[t])
        mask = np.ones(counter.stream_shape, bool) if release_masks is None else release_masks[t]
        out.append(counter.release(mask))
    return np.asarray(out)


def _data(
    seed: int, horizon: int, stream_shape: tuple[int, ...], p: float = 0.6
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = rng.random((horizon,) + stream_shape)
    observed = rng.random((horizon,) + stream_shape) < p
    return values, observed


def _dkw_tolerance(n_samples: int, alpha: float) -> float:
    """Dvoretzky–Kiefer–Wolfowitz–Massart: P(sup|F_n - F| > η) <= 2 exp(-2 n η²) = α."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * n_samples))


def _assert_laplace_scale(noise: np.ndarray, scale: float) -> None:
    """KS distance to Lap(0, scale) within the DKW band, and far from Lap(0, 1.5 scale).

    Each of the two assertions fails with probability <= 5e-7 for Lap(0, scale)
    samples (the second because sup|F - G| = 0.074 > 2η for G = Lap(0, 1.5 scale)), so
    a correct mechanism fails this check with probability <= 1e-6.
    """
    noise = np.ravel(noise)
    tolerance = _dkw_tolerance(noise.size, 5e-7)
    assert 2 * tolerance < 0.07  # the power argument above needs this many samples
    statistic = stats.kstest(noise, stats.laplace(loc=0.0, scale=scale).cdf).statistic
    assert statistic <= tolerance
    wrong = stats.kstest(noise, stats.laplace(loc=0.0, scale=1.5 * scale).cdf).statistic
    assert wrong > tolerance


# ---------------------------------------------------------------------------------
# LaplaceTreeCounter: exact sums, accounting
# ---------------------------------------------------------------------------------


def test_scale_zero_releases_exact_prefix_sums() -> None:
    shape, horizon = (2, 3), 37
    values, observed = _data(1, horizon, shape)
    values[~observed] = np.nan  # unobserved values are ignored, even NaN
    counter, accountant = _make(stream_shape=shape, horizon=horizon, scale=0.0)
    released = _run(counter, values, observed)
    expected = np.cumsum(np.where(observed, values, 0.0), axis=0)
    np.testing.assert_allclose(released, expected, rtol=0, atol=1e-12)
    assert accountant.get_epsilon(0.0) == math.inf
    assert counter.guarantee_epsilon == math.inf
    assert set(accountant.ledger.charges["event"]) == {"NonPrivate"}
    assert counter.n_draws == 0 and accountant.ledger.draws.empty


def test_release_mask_selects_streams() -> None:
    shape, horizon = (4,), 8
    values, observed = _data(2, horizon, shape)
    counter, _ = _make(stream_shape=shape, horizon=horizon, scale=0.0)
    for t in range(horizon):
        counter.step(values[t], observed[t])
    mask = np.array([True, False, True, False])
    out = counter.release(mask)
    expected = np.where(observed, values, 0.0).sum(axis=0)
    assert np.isnan(out[~mask]).all()
    np.testing.assert_allclose(out[mask], expected[mask], atol=1e-12)
    with pytest.raises(ValueError, match=r"`mask` must have shape \(4,\), got \(3,\)"):
        counter.release(np.ones(3, bool))


def test_counter_charges_one_tree_per_stream() -> None:
    counter, accountant = _make(stream_shape=(2, 3), horizon=16, scale=4.0)
    charges = accountant.ledger.charges
    assert len(charges) == 6 and sorted(charges["stream"]) == list(range(6))
    assert set(charges["event"]) == {"LaplaceTree"}
    assert set(charges["horizon"]) == {16}
    assert accountant.get_epsilon(0.0) == 1.25 == counter.guarantee_epsilon
    assert counter.depth == _levels(16)


def test_counter_charges_only_the_released_prefixes() -> None:
    # Zhu et al. Algorithm 4 outputs the prefixes 1..T-1 (lines 9 and 19): 4 nodes of
    # a 16-round tree hold round 1, so b = 4 is exactly ε = 1 (not the 1.25 of a
    # counter that releases every prefix).
    counter, accountant = _make(stream_shape=(2, 3), horizon=16, scale=4.0, released_prefixes=15)
    assert accountant.get_epsilon(0.0) == 1.0 == counter.guarantee_epsilon
    assert counter.depth == 5 and counter.released_depth == 4
    secure, spent = _make(horizon=16, scale=4.0, released_prefixes=15, secure=True)
    assert spent.get_epsilon(0.0) == pytest.approx(1.0) == secure.guarantee_epsilon
    with pytest.raises(ValueError, match=r"`released_prefixes` must be <= `horizon` = 16"):
        _make(horizon=16, scale=4.0, released_prefixes=17)
    with pytest.raises(ValueError, match=r"`released_prefixes` must be >= 1"):
        _make(horizon=16, scale=4.0, released_prefixes=0)


def test_value_bounds_set_the_sensitivity() -> None:
    counter, accountant = _make(horizon=16, scale=4.0, value_bounds=(-1.0, 1.0))
    assert counter.l1_sensitivity == 2.0
    assert accountant.get_epsilon(0.0) == 2.5 == counter.guarantee_epsilon
    assert set(accountant.ledger.charges["l1_sensitivity"]) == {2.0}


def test_counter_before_any_step_releases_zero() -> None:
    counter, _ = _make(scale=3.0)
    np.testing.assert_array_equal(counter.release(np.array([True, True, False]))[:2], 0.0)


# ---------------------------------------------------------------------------------
# Memoisation
# ---------------------------------------------------------------------------------


def test_noise_of_a_node_is_reused_by_later_prefixes() -> None:
    # Observations in rounds 1..8 only: prefixes 9..15 add empty nodes (no noise), so
    # they must release exactly the memoised P(8).
    horizon = 16
    values = np.full((horizon, 1), 0.5)
    observed = np.zeros((horizon, 1), bool)
    observed[:8] = True
    counter, accountant = _make(stream_shape=(1,), horizon=horizon, scale=3.0)
    released = _run(counter, values, observed)[:, 0]
    assert released[7] != 4.0  # P(8) is noisy
    np.testing.assert_array_equal(released[8:15], released[7])
    # Releasing again draws nothing new and returns the same value.
    n_rows = len(accountant.ledger.draws)
    assert counter.release(np.ones(1, bool))[0] == released[-1]
    assert len(accountant.ledger.draws) == n_rows


def test_increments_between_releases_are_the_noise_of_the_new_nodes() -> None:
    horizon, seed, shape = 16, 11, (2,)
    values = np.random.default_rng(3).random((horizon,) + shape)

    def prefix_noise(first: int, last: int) -> np.ndarray:
        """N(t) of a counter on the same noise stream observing rounds first..last."""
        counter, _ = _make(
            stream_shape=shape, horizon=horizon, scale=2.0, rng=np.random.default_rng(seed)
        )
        observed = np.zeros((horizon,) + shape, bool)
        observed[first - 1 : last] = True
        released = _run(counter, values, observed)
        return released - np.cumsum(np.where(observed, values, 0.0), axis=0)

    noise_a = prefix_noise(1, horizon)  # every round observed, released every round
    # Observing only rounds 9..12 leaves node 8 empty, so the prefix noise at t = 9,
    # 10, 12 is that of node 9, 10, 12 alone; likewise rounds 13..14 isolate 13, 14.
    window = prefix_noise(9, 12)
    node = {9: window[8], 10: window[9], 12: window[11]}
    window = prefix_noise(13, 14)
    node |= {13: window[12], 14: window[13]}
    assert all(np.all(v != 0.0) for v in node.values())
    # P(12) - P(8) carries the noise of node 12 only: node 8's noise was reused.
    np.testing.assert_allclose(noise_a[11] - noise_a[7], node[12], atol=1e-12)
    np.testing.assert_allclose(noise_a[8] - noise_a[7], node[9], atol=1e-12)
    np.testing.assert_allclose(noise_a[9] - noise_a[7], node[10], atol=1e-12)
    # And node 12's noise is reused by the prefixes 13 and 14.
    np.testing.assert_allclose(noise_a[12] - noise_a[11], node[13], atol=1e-12)
    np.testing.assert_allclose(noise_a[13] - noise_a[11], node[14], atol=1e-12)


def test_each_node_is_drawn_once_per_stream() -> None:
    horizon, shape = 32, (3,)
    values, observed = _data(5, horizon, shape, p=1.0)
    counter, accountant = _make(stream_shape=shape, horizon=horizon, scale=1.0)
    last = _run(counter, values, observed)[-1]
    for _ in range(3):  # repeated releases reuse the memoised noise
        np.testing.assert_array_equal(counter.release(np.ones(shape, bool)), last)
    ledger = accountant.ledger.draws
    assert not ledger.duplicated(["stream", "node"]).any()
    # Every node 1..T is used by the release at t = s, and by nothing else first.
    assert sorted(ledger.loc[ledger["stream"] == 0, "node"]) == list(range(1, horizon + 1))
    assert counter.n_draws == accountant.ledger.n_draws == len(ledger) == 3 * horizon


# ---------------------------------------------------------------------------------
# Empty nodes
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("noise_on_empty_nodes", [False, True])
def test_noise_on_empty_nodes(noise_on_empty_nodes: bool) -> None:
    horizon = 8
    observed = np.zeros((horizon, 1), bool)
    observed[2] = True  # round 3 only
    values = np.full((horizon, 1), 0.25)
    counter, accountant = _make(
        stream_shape=(1,), horizon=horizon, scale=1.0, noise_on_empty_nodes=noise_on_empty_nodes
    )
    released = _run(counter, values, observed)[:, 0]
    drawn = set(accountant.ledger.draws["node"])
    if noise_on_empty_nodes:
        assert drawn == set(range(1, horizon + 1))  # Alg. 3 as printed
        assert released[0] != 0.0
    else:
        # Only nodes whose interval holds round 3 get noise (the paper's text).
        expected = {s for s in range(1, horizon + 1) if _interval(s)[0] <= 3 <= s}
        assert drawn == expected == {3, 4, 8}
        assert released[0] == released[1] == 0.0  # no observation, no noise


@settings(max_examples=30)
@given(
    horizon=st.integers(min_value=1, max_value=40),
    n_streams=st.integers(min_value=1, max_value=4),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    p_observed=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
    p_release=st.sampled_from([0.2, 0.7, 1.0]),
    noise_on_empty_nodes=st.booleans(),
)
def test_every_record_is_covered_by_at_most_depth_drawn_nodes(
    horizon: int,
    n_streams: int,
    seed: int,
    p_observed: float,
    p_release: float,
    noise_on_empty_nodes: bool,
) -> None:
    rng = np.random.default_rng(seed)
    values = rng.random((horizon, n_streams))
    observed = rng.random((horizon, n_streams)) < p_observed
    masks = rng.random((horizon, n_streams)) < p_release
    scale = 2.0
    counter, accountant = _make(
        stream_shape=(n_streams,),
        horizon=horizon,
        scale=scale,
        rng=np.random.default_rng(seed + 1),
        noise_on_empty_nodes=noise_on_empty_nodes,
        accountant=Accountant(disjoint=("stream",), pld_discretization=1e-2),
    )
    _run(counter, values, observed, masks)
    ledger = accountant.ledger.draws
    assert len(ledger) == counter.n_draws == accountant.ledger.n_draws
    assert not ledger.duplicated(["stream", "node"]).any()
    assert (ledger["epsilon"] == 1.0 / scale).all()
    # Expected draws: every (stream, node) whose noise entered a released prefix.
    expected = set()
    for t in range(1, horizon + 1):
        node = t
        while node:
            first, last = _interval(node)
            for stream in np.flatnonzero(masks[t - 1]):
                if noise_on_empty_nodes or observed[first - 1 : last, stream].any():
                    expected.add((int(stream), node))
            node = first - 1
    assert set(zip(ledger["stream"], ledger["node"], strict=True)) == expected
    levels = ledger["node"].map(lambda s: (s & -s).bit_length() - 1)
    assert (ledger["level"] == levels).all()
    # Every record sits in at most depth drawn nodes, so the draws' own privacy loss
    # never exceeds the charge made when the counter was opened.
    depth = _levels(horizon)
    for stream in range(n_streams):
        charged = accountant.get_epsilon(0.0, where={"stream": stream})
        assert charged == pytest.approx(depth / scale, rel=1e-12)
        nodes = ledger.loc[ledger["stream"] == stream, "node"].tolist()
        for tau in range(1, horizon + 1):
            covering = [s for s in nodes if _interval(s)[0] <= tau <= s]
            assert len(covering) <= depth
            assert len(covering) / scale <= charged * (1 + 1e-12)


# ---------------------------------------------------------------------------------
# Capacity, bounds and validation
# ---------------------------------------------------------------------------------


def test_capacity_exceeded_raises_and_keeps_state() -> None:
    counter, _ = _make(stream_shape=(2,), horizon=3, scale=0.0)
    for _ in range(3):
        counter.step([1.0, 0.5], [True, True])
    with pytest.raises(CapacityExceededError, match=r"`horizon` = 3 rounds; cannot add round 4"):
        counter.step([1.0, 0.5], [True, True])
    with pytest.raises(ValueError):  # also a ValueError
        counter.step([1.0, 0.5], [True, True])
    assert counter.t == 3
    np.testing.assert_array_equal(counter.release(np.ones(2, bool)), [3.0, 1.5])


def test_out_of_bounds_raise_is_atomic() -> None:
    counter, _ = _make(stream_shape=(2,), horizon=4, scale=0.0)
    with pytest.raises(
        ValueError, match=r"must lie in the declared range \[0\.0, 1\.0\]; 1 observation"
    ):
        counter.step([1.5, 0.2], [True, True])
    assert counter.t == 0 and counter.n_out_of_bounds == 0
    counter.step([7.0, 0.2], [False, True])  # unobserved values are not checked
    np.testing.assert_array_equal(counter.release(np.ones(2, bool)), [0.0, 0.2])


def test_out_of_bounds_clip() -> None:
    counter, _ = _make(stream_shape=(3,), horizon=4, scale=0.0, out_of_bounds="clip")
    counter.step([1.5, -0.5, 0.3], [True, True, True])
    counter.step([2.0, 9.0, 0.4], [True, False, True])
    assert counter.n_out_of_bounds == 3
    np.testing.assert_allclose(counter.release(np.ones(3, bool)), [2.0, 0.0, 0.7], atol=1e-12)


def test_out_of_bounds_ignore_keeps_raw_values_and_counts_them() -> None:
    counter, _ = _make(stream_shape=(2,), horizon=4, scale=0.0, out_of_bounds="ignore")
    counter.step([1.5, -0.5], [True, True])
    counter.step([0.5, -3.0], [True, False])
    assert counter.n_out_of_bounds == 2
    np.testing.assert_allclose(counter.release(np.ones(2, bool)), [2.0, -0.5], atol=1e-12)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("mode", ["raise", "clip", "ignore"])
def test_non_finite_observations_raise(bad: float, mode: str) -> None:
    counter, _ = _make(stream_shape=(2,), horizon=4, scale=0.0, out_of_bounds=mode)
    with pytest.raises(ValueError, match=r"must be finite where observed"):
        counter.step([bad, 0.5], [True, True])
    assert counter.t == 0
    counter.step([bad, 0.5], [False, True])
    np.testing.assert_array_equal(counter.release(np.ones(2, bool)), [0.0, 0.5])


def test_step_validates_shapes() -> None:
    counter, _ = _make(stream_shape=(2,), horizon=4, scale=1.0)
    with pytest.raises(ValueError, match=r"must have shape \(2,\), got \(3,\) and \(2,\)"):
        counter.step([0.1, 0.2, 0.3], [True, True])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"scale": -1.0}, ValueError, r"`scale` must be in \[0, inf\), got -1\.0"),
        ({"scale": math.inf}, ValueError, r"`scale` must be in \[0, inf\)"),
        ({"scale": math.nan}, ValueError, r"`scale` must not be NaN"),
        ({"horizon": 0}, ValueError, r"`horizon` must be >= 1, got 0"),
        ({"stream_shape": (0,)}, ValueError, r"`stream_shape` must be >= 1"),
        ({"value_bounds": (1.0, 1.0)}, ValueError, r"`value_bounds` must satisfy low < high"),
        ({"out_of_bounds": "drop"}, ValueError, r"`out_of_bounds` must be 'raise', 'clip'"),
        ({"rng": 42}, TypeError, r"`rng` must be a numpy Generator"),
        (
            {"rng": np.array([np.random.default_rng(0), 1], dtype=object)},
            TypeError,
            r"`rng` array must hold numpy Generators only",
        ),
        (
            {"rng": np.array([np.random.default_rng(i) for i in range(2)], dtype=object)},
            ValueError,
            r"`rng` shape \(2,\) must match the leading axes of \(3,\)",
        ),
    ],
)
def test_bad_counter_parameters_raise_before_charging(
    kwargs: dict, error: type, message: str
) -> None:
    accountant = Accountant(disjoint=("stream",))
    with pytest.raises(error, match=message):
        LaplaceTreeCounter(
            **{
                "stream_shape": (3,),
                "horizon": 8,
                "scale": 1.0,
                "accountant": accountant,
                "keys": {"stream": [0, 1, 2]},
                "rng": np.random.default_rng(0),
                **kwargs,
            }
        )
    assert accountant.ledger.charges.empty


def test_keys_must_broadcast_to_the_streams() -> None:
    accountant = Accountant(disjoint=("stream",))
    with pytest.raises(ValueError, match=r"every key array must broadcast"):
        LaplaceTreeCounter(
            stream_shape=(3,),
            horizon=4,
            scale=1.0,
            accountant=accountant,
            keys={"stream": [0, 1]},
            rng=np.random.default_rng(0),
        )
    assert accountant.ledger.charges.empty


def test_budget_exceeded_at_construction_leaves_the_accountant_unchanged() -> None:
    accountant = Accountant(disjoint=("stream",), budget=PureDP(1.0))
    _make(stream_shape=(2,), horizon=16, scale=5.0, accountant=accountant)  # ε = 1.0
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError, match=r"nothing was released"):
        _make(stream_shape=(2,), horizon=16, scale=4.0, accountant=accountant)  # 1.25
    with pytest.raises(BudgetExceededError):
        _make(stream_shape=(2,), horizon=16, scale=0.0, accountant=accountant)  # ∞
    assert_unchanged(accountant, before)


# ---------------------------------------------------------------------------------
# Fixed noise addresses
# ---------------------------------------------------------------------------------


def _trial_rngs(n_trials: int) -> np.ndarray:
    rngs = np.empty(n_trials, dtype=object)
    for trial in range(n_trials):
        rngs[trial] = np.random.default_rng([2024, trial])
    return rngs


def test_noise_of_a_trial_does_not_depend_on_the_batch() -> None:
    horizon, block = 20, (2, 3)
    values, observed = _data(8, horizon, (3,) + block, p=0.5)
    outputs = []
    for n_trials in (1, 3):
        counter, _ = _make(
            stream_shape=(n_trials,) + block, horizon=horizon, scale=1.5, rng=_trial_rngs(n_trials)
        )
        outputs.append(_run(counter, values[:, :n_trials], observed[:, :n_trials]))
    np.testing.assert_array_equal(outputs[0][:, 0], outputs[1][:, 0])
    assert not np.allclose(outputs[1][:, 1], outputs[1][:, 0], equal_nan=True)


@pytest.mark.parametrize("rng_form", ["generator", "array"])
@pytest.mark.parametrize("chunk_elements", [1, 6, 7, 45])
def test_results_do_not_depend_on_the_chunk_size(
    rng_form: str, chunk_elements: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    horizon, shape = 37, (2, 3)
    values, observed = _data(9, horizon, shape)

    def run() -> np.ndarray:
        rng = np.random.default_rng(77) if rng_form == "generator" else _trial_rngs(2)
        counter, _ = _make(stream_shape=shape, horizon=horizon, scale=1.0, rng=rng)
        return _run(counter, values, observed)

    reference = run()
    monkeypatch.setattr(fedpriv.privacy.mechanisms, "_CHUNK_ELEMENTS", chunk_elements)
    # With 6 streams, 45 elements is 7 nodes per chunk and 1, 6, 7 give 1 node.
    np.testing.assert_array_equal(run(), reference)


# ---------------------------------------------------------------------------------
# laplace_release and raw_release
# ---------------------------------------------------------------------------------


def test_laplace_release_charges_each_entry_in_its_cell() -> None:
    accountant = Accountant(disjoint=("agent",))
    out = laplace_release(
        np.zeros((3, 2)),
        scale=4.0,
        l1_sensitivity=2.0,
        accountant=accountant,
        keys={"agent": np.array([[0], [1], [2]])},
        rng=np.random.default_rng(0),
    )
    assert out.shape == (3, 2) and np.all(out != 0.0)
    # Two entries per agent, sequential: 2 x 2/4; agents in parallel.
    assert accountant.get_epsilon(0.0) == 1.0
    assert accountant.ledger.charges["agent"].tolist() == [0, 0, 1, 1, 2, 2]
    ledger = accountant.ledger.draws
    assert len(ledger) == accountant.ledger.n_draws == 6
    assert (ledger["node"] == -1).all() and (ledger["epsilon"] == 0.5).all()


def test_laplace_release_validates_before_charging_or_drawing() -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0))
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"`values` must be finite"):
        laplace_release(
            [0.0, math.nan],
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=accountant,
            keys={"agent": [0, 1]},
            rng=rng,
        )
    with pytest.raises(ValueError, match=r"`scale` must be in \(0, inf\)"):
        laplace_release(
            [0.0], scale=0.0, l1_sensitivity=1.0, accountant=accountant, keys={"agent": 0}, rng=rng
        )
    with pytest.raises(ValueError, match=r"every key array must broadcast"):
        laplace_release(
            [0.0, 1.0],
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=accountant,
            keys={"agent": [0, 1, 2]},
            rng=rng,
        )
    with pytest.raises(BudgetExceededError):
        laplace_release(
            [0.0], scale=0.5, l1_sensitivity=1.0, accountant=accountant, keys={"agent": 0}, rng=rng
        )
    assert accountant.ledger.charges.empty and accountant.ledger.n_draws == 0
    assert rng.bit_generator.state == state  # nothing was drawn


def test_laplace_release_with_generator_array_has_fixed_addresses() -> None:
    values = np.arange(12.0).reshape(3, 4)
    outs = []
    for n_rows in (1, 3):
        rngs = np.empty(n_rows, dtype=object)
        for row in range(n_rows):
            rngs[row] = np.random.default_rng([5, row])
        outs.append(
            laplace_release(
                values[:n_rows],
                scale=1.0,
                l1_sensitivity=1.0,
                accountant=Accountant(disjoint=("row",)),
                keys={"row": np.arange(n_rows)[:, None]},
                rng=rngs,
            )
        )
    np.testing.assert_array_equal(outs[0][0], outs[1][0])


def test_raw_release_is_a_charged_copy() -> None:
    accountant = Accountant(disjoint=("agent",))
    values = np.array([0.3, 0.7])
    out = raw_release(values, accountant=accountant, keys={"agent": [0, 1]}, reason="X(0)")
    np.testing.assert_array_equal(out, values)
    out[0] = 5.0
    assert values[0] == 0.3
    assert accountant.get_epsilon(0.0) == math.inf
    assert accountant.ledger.charges["event"].tolist() == ["NonPrivate", "NonPrivate"]


# ---------------------------------------------------------------------------------
# Statistical: noise distributions
# ---------------------------------------------------------------------------------


@pytest.mark.statistical
def test_tree_node_noise_is_laplace_of_the_declared_scale() -> None:
    # Recover every node's noise from the released prefixes:
    # N(t) = P(t) - exact(t), node t's noise = N(t) - N(t & (t - 1)).
    # 4,000 streams x 8 nodes = 32,000 i.i.d. Lap(b) samples; false-failure
    # probability <= 1e-6 (see _assert_laplace_scale).
    horizon, n_streams, scale = 8, 4_000, 2.5
    values, observed = _data(12, horizon, (n_streams,), p=1.0)
    counter, _ = _make(
        stream_shape=(n_streams,), horizon=horizon, scale=scale, rng=np.random.default_rng(2025)
    )
    released = _run(counter, values, observed)
    prefix_noise = np.vstack([np.zeros(n_streams), released - np.cumsum(values, axis=0)])
    nodes = np.array([prefix_noise[t] - prefix_noise[t & (t - 1)] for t in range(1, horizon + 1)])
    _assert_laplace_scale(nodes, scale)


@pytest.mark.statistical
@pytest.mark.parametrize("rng_form", ["generator", "array"])
def test_laplace_release_noise_has_the_declared_scale(rng_form: str) -> None:
    # 40,000 i.i.d. Lap(b) samples; false-failure probability <= 1e-6 per case.
    scale, shape = 0.8, (4, 10_000)
    if rng_form == "generator":
        rng: object = np.random.default_rng(31)
    else:
        rng = np.empty(4, dtype=object)
        for row in range(4):
            rng[row] = np.random.default_rng([31, row])
    values = np.full(shape, 3.0)
    out = laplace_release(
        values,
        scale=scale,
        l1_sensitivity=1.0,
        accountant=Accountant(disjoint=("row",)),
        keys={"row": np.arange(4)[:, None]},
        rng=rng,
    )
    _assert_laplace_scale(out - values, scale)


def test_laplace_release_with_bad_rng_charges_nothing():
    from fedpriv.privacy import Accountant, laplace_release

    acc = Accountant(disjoint=("agent",))
    rngs = np.array([np.random.default_rng(i) for i in range(3)], dtype=object)
    with pytest.raises(ValueError, match=r"`rng` shape \(3,\)"):
        laplace_release(
            np.zeros(2),
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=acc,
            keys={"agent": [0, 1]},
            rng=rngs,
        )
    assert acc.ledger.charges.empty
