"""``secure=True`` of the Laplace releases, the tree counter and the interval mechanism.

Statistical tests pin their seeds and reject at p < 1e-6 (chi-square on the exact
discrete Laplace pmf), so a correct mechanism fails with probability below 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.privacy import Accountant, LaplaceTreeCounter, PureDP, laplace_release
from fedpriv.privacy.accounting.events import DiscreteLaplace, SelfComposed
from fedpriv.privacy.mechanisms.interval_mechanism import IntervalMeanRelease
from scipy import stats

from tests.privacy._support import assert_unchanged, snapshot

__all__: list[str] = []

ALPHA = 1e-6


def _is_on_grid(values: np.ndarray, granularity: float) -> bool:
    steps = values / granularity
    return bool(np.all(steps == np.round(steps)))


def test_laplace_release_secure_charges_discrete_laplace_with_the_same_epsilon() -> None:
    float_acc, secure_acc = Accountant(disjoint=("i",)), Accountant(disjoint=("i",))
    values = np.array([0.3, 0.7, 1.1])
    keys = {"i": np.arange(3)}
    for acc, secure in ((float_acc, False), (secure_acc, True)):
        laplace_release(
            values,
            scale=0.7,
            l1_sensitivity=1 / 3,
            accountant=acc,
            keys=keys,
            rng=np.random.default_rng(0),
            secure=secure,
        )
    assert secure_acc.get_epsilon(0.0) <= float_acc.get_epsilon(0.0)
    assert secure_acc.get_epsilon(0.0) == pytest.approx(float_acc.get_epsilon(0.0), rel=1e-12)
    (event,) = {e for cell in secure_acc.ledger.cells() for e, _ in cell}
    assert isinstance(event, DiscreteLaplace)
    assert event.l1_sensitivity == 2**12 // 3 + 1  # ⌈(1/3) / 2**-12⌉ on the default grid


@pytest.mark.statistical
def test_laplace_release_secure_noise_is_discrete_laplace_on_the_grid() -> None:
    """Grid 1/2, Δ = 1, b = 2: two steps of sensitivity, noise DLap(4) steps exactly."""
    n, g = 40_000, 0.5
    acc = Accountant(disjoint=("i",))
    out = laplace_release(
        np.full(n, 0.3),
        scale=2.0,
        l1_sensitivity=1.0,
        accountant=acc,
        keys={"i": np.arange(n)},
        rng=np.random.default_rng(5),
        secure=True,
        granularity=g,
    )
    assert _is_on_grid(out, g)
    steps = (out / g).astype(np.int64) - 1  # round(0.3 / 0.5) = 1
    support = np.arange(-60, 61)
    pmf = np.exp(-np.abs(support) / 4.0)
    pmf /= pmf.sum()
    core = support[pmf * n >= 20]
    observed = [np.sum(steps < core[0])] + [np.sum(steps == k) for k in core]
    observed.append(np.sum(steps > core[-1]))
    expected = [pmf[support < core[0]].sum()] + list(pmf[np.isin(support, core)])
    expected.append(pmf[support > core[-1]].sum())
    assert stats.chisquare(observed, np.asarray(expected) * n).pvalue > ALPHA


def test_laplace_release_secure_is_reproducible_and_validates_before_charging() -> None:
    keys = {"i": np.arange(2)}
    outs = [
        laplace_release(
            [0.1, 0.2],
            scale=1.0,
            l1_sensitivity=1.0,
            accountant=Accountant(disjoint=("i",)),
            keys=keys,
            rng=np.random.default_rng(9),
            secure=True,
        )
        for _ in range(2)
    ]
    np.testing.assert_array_equal(outs[0], outs[1])
    acc = Accountant(disjoint=("i",))
    before = snapshot(acc)
    for kwargs, match in (
        ({"secure": True, "granularity": 0.3}, "power of two"),
        ({"granularity": 0.5}, "only with `secure=True`"),
        ({"secure": True, "granularity": 2.0**-60}, "2\\*\\*53"),
    ):
        with pytest.raises(ValueError, match=match):
            laplace_release(
                [1e3, 0.2],
                scale=1.0,
                l1_sensitivity=1.0,
                accountant=acc,
                keys=keys,
                rng=np.random.default_rng(0),
                **kwargs,
            )
    assert_unchanged(acc, before)


def _counter(secure: bool, scale: float, horizon: int = 16, shape=(2, 3)) -> tuple:
    acc = Accountant(disjoint=("s",))
    counter = LaplaceTreeCounter(
        stream_shape=shape,
        horizon=horizon,
        scale=scale,
        accountant=acc,
        keys={"s": np.arange(np.prod(shape)).reshape(shape)},
        rng=np.random.default_rng(4),
        secure=secure,
    )
    return acc, counter


def test_secure_tree_charges_depth_discrete_laplace_nodes_with_the_float_epsilon() -> None:
    float_acc, _ = _counter(False, 3.0)
    secure_acc, counter = _counter(True, 3.0)
    assert isinstance(counter.event, SelfComposed)
    assert isinstance(counter.event.event, DiscreteLaplace)
    assert counter.event.count == counter.depth == 5
    assert secure_acc.get_epsilon(0.0) == pytest.approx(float_acc.get_epsilon(0.0), rel=1e-12)
    assert secure_acc.get_epsilon(0.0) <= float_acc.get_epsilon(0.0)
    assert counter.guarantee_epsilon == pytest.approx(5 / 3.0, rel=1e-12)


def test_secure_tree_releases_grid_points_near_the_prefix_sums() -> None:
    """With negligible noise (scale 1e-12, about 1e-6 grid steps: a node's noise is
    nonzero with probability below e**-1e5) every release is the grid sum of the
    rounded records, within ``t · g / 2`` of the exact prefix sum."""
    _, counter = _counter(True, 1e-12)
    g = counter.granularity
    rng = np.random.default_rng(8)
    values = rng.random((16, 2, 3))
    observed = rng.random((16, 2, 3)) < 0.7
    for t in range(16):
        counter.step(values[t], observed[t])
        out = counter.release(np.ones((2, 3), dtype=bool))
        assert _is_on_grid(out, g)
        exact = np.where(observed[: t + 1], values[: t + 1], 0.0).sum(axis=0)
        assert np.all(np.abs(out - exact) <= (t + 1) * g / 2)


def test_interval_secure_charges_one_discrete_laplace_per_release_point() -> None:
    def open_(secure: bool, budget=None):
        acc = Accountant(disjoint=("trial", "agent", "arm"), budget=budget)
        rngs = np.empty((1, 2), dtype=object)
        rngs[0, 0], rngs[0, 1] = np.random.default_rng(1), np.random.default_rng(2)
        mech = IntervalMeanRelease(
            (1, 2, 2),
            epsilon=0.5,
            horizon=20,
            theta=1.1,
            rule="decaying",
            accountant=acc,
            rngs=rngs,
            secure=secure,
        )
        return acc, mech

    float_acc, _ = open_(False)
    secure_acc, mech = open_(True)
    assert len(mech.secure_events) == 10  # release points 2, 4, ..., 20
    assert secure_acc.get_epsilon(0.0) <= float_acc.get_epsilon(0.0) * (1 + 1e-12)
    assert secure_acc.get_epsilon(0.0) == pytest.approx(float_acc.get_epsilon(0.0), rel=1e-12)
    out = mech.release(
        np.array([0, 0]), np.array([0, 1]), np.array([0, 1]), np.array([1.0, 2.0]), np.array([2, 2])
    )
    assert _is_on_grid(out, mech.grids[0])  # release point n = 2
    assert mech.grids[0] == 2.0**-11 and mech.grids[-1] == 2.0**-15  # Δ = 1/2 and 1/20
    mech.flush()
    assert secure_acc.ledger.n_draws == 2
    with pytest.raises(ValueError, match="budget"):
        open_(True, budget=PureDP(100.0))
