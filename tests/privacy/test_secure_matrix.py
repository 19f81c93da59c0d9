"""``secure=True`` of FedUCB's matrix-tree Privatizer (:mod:`fedpriv.privacy.mechanisms.secure_matrix`).

The statistical test pins its seed and rejects at p < 1e-6 (chi-square on the exact
discrete Gaussian pmf), so a correct sampler fails with probability below 1e-6.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBandit
from fedpriv.algorithms.feducb.centralized import run_feducb, run_feducb_fixed
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.events import SelfComposed, SymmetricMatrixDiscreteGaussian
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer
from fedpriv.privacy.mechanisms.secure_matrix import (
    diagonal_sigma,
    matrix_grid_sensitivity,
    round_symmetric_to_grid,
    sample_symmetric_discrete_gaussian,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

__all__: list[str] = []

ALPHA = 1e-6
_FINITE = st.floats(-1e3, 1e3, allow_nan=False)


def _symmetric(draw, side: int) -> np.ndarray:
    values = draw(st.lists(_FINITE, min_size=side * side, max_size=side * side))
    return np.asarray(values).reshape(side, side)


def _exact_round(x: float, g: float) -> int:
    return math.floor(Fraction(x) / Fraction(g) + Fraction(1, 2))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), side=st.integers(1, 4), k=st.integers(-12, 4))
def test_rounding_is_exact_and_mirrors_the_upper_triangle(data, side: int, k: int) -> None:
    g = 2.0**k
    leaf = _symmetric(data.draw, side)
    out = round_symmetric_to_grid(leaf, g)
    for i in range(side):
        for j in range(side):
            a, b = min(i, j), max(i, j)
            assert out[i, j] == _exact_round(leaf[a, b], g)


@st.composite
def _neighbours(draw):
    """Two float leaves ``A + v vᵀ`` and ``A + w wᵀ`` and a grid (coarse grids too)."""
    side = draw(st.integers(1, 5))
    base = draw(st.sampled_from([0.0, 1.0, 1e3]))
    a = np.asarray(draw(st.lists(st.floats(-1, 1), min_size=side * side, max_size=side * side)))
    a = base * a.reshape(side, side)
    v = np.asarray(draw(st.lists(st.floats(-1, 1), min_size=side, max_size=side)))
    w = np.asarray(draw(st.lists(st.floats(-1, 1), min_size=side, max_size=side)))
    g = 2.0 ** draw(st.integers(-14, 1))
    return a + np.outer(v, v), a + np.outer(w, w), g


def _declared(first: np.ndarray, second: np.ndarray) -> float:
    """The smallest float ``>= ‖D‖_F`` (D: upper triangle of the difference, mirrored)."""
    side = first.shape[0]
    squared = sum(
        (Fraction(first[min(i, j), max(i, j)]) - Fraction(second[min(i, j), max(i, j)])) ** 2
        for i in range(side)
        for j in range(side)
    )
    floor = 2.0**-1000
    if squared <= Fraction(floor) ** 2:
        # The result is max(value, floor) = floor; walking up from an underflowed 0 one
        # subnormal ulp at a time would take ~2**52 steps (a hang with newer hypothesis
        # examples), so the answer is returned directly.
        return floor
    # sqrt on the rational scaled by 4**k into [1/4, 4] (exact), then scaled back by
    # 2**-k (exact: the result is >= the floor, a normal double): within an ulp or two,
    # so the walk below takes a few steps instead of ~2**52 from an underflowed square.
    k = -(squared.numerator.bit_length() - squared.denominator.bit_length()) // 2
    value = math.ldexp(math.sqrt(float(squared * Fraction(4) ** k)), -k)
    while Fraction(value) ** 2 < squared:
        value = math.nextafter(value, math.inf)
    while Fraction(math.nextafter(value, 0.0)) ** 2 >= squared:  # the smallest such float
        value = math.nextafter(value, 0.0)
    return max(value, 2.0**-1000)


@settings(max_examples=300, deadline=None)
@given(pair=_neighbours())
def test_rounded_neighbours_never_exceed_the_grid_sensitivity(pair) -> None:
    first, second, g = pair
    bound = matrix_grid_sensitivity(_declared(first, second), g, first.shape[0])
    diff = round_symmetric_to_grid(first, g) - round_symmetric_to_grid(second, g)
    squared = int(np.sum(diff.astype(np.int64) ** 2))
    assert squared <= Fraction(bound) ** 2


def test_the_per_entry_term_is_needed() -> None:
    """Leaves a hair apart across every half step: ‖E‖_F = side while Δ_F/g ≈ 0."""
    side, g = 3, 2.0**-4
    first = np.full((side, side), 0.5 * g)
    second = np.full((side, side), math.nextafter(0.5 * g, 0.0))
    diff = round_symmetric_to_grid(first, g) - round_symmetric_to_grid(second, g)
    assert np.sqrt(np.sum(diff**2)) == side
    declared = _declared(first, second)
    assert declared / g < 1e-10
    assert side <= matrix_grid_sensitivity(declared, g, side) < side + 1e-9


def test_grid_sensitivity_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="power of two"):
        matrix_grid_sensitivity(1.0, 0.3, 2)
    with pytest.raises(ValueError, match="side"):
        matrix_grid_sensitivity(1.0, 0.5, 0)
    with pytest.raises(ValueError, match="frobenius_sensitivity"):
        matrix_grid_sensitivity(-1.0, 0.5, 2)


@given(sigma=st.floats(1e-3, 1e6))
def test_diagonal_sigma_is_the_smallest_float_with_twice_the_variance(sigma: float) -> None:
    value = diagonal_sigma(sigma)
    assert Fraction(value) ** 2 >= 2 * Fraction(sigma) ** 2
    assert Fraction(math.nextafter(value, 0.0)) ** 2 < 2 * Fraction(sigma) ** 2


def _chi_square_pvalue(samples: np.ndarray, sigma: float) -> float:
    support = np.arange(-60, 61)
    pmf = np.exp(-(support**2) / (2 * sigma**2))
    pmf /= pmf.sum()
    n = samples.size
    core = support[pmf * n >= 20]
    observed = [np.sum(samples < core[0])] + [np.sum(samples == k) for k in core]
    observed.append(np.sum(samples > core[-1]))
    expected = [pmf[support < core[0]].sum()] + list(pmf[np.isin(support, core)])
    expected.append(pmf[support > core[-1]].sum())
    return stats.chisquare(observed, np.asarray(expected) * n).pvalue


@pytest.mark.statistical
def test_node_noise_is_a_mirrored_discrete_gaussian() -> None:
    """σ = 2 off the diagonal, 2√2 (as drawn: the rational σ_diag) on it."""
    draws = sample_symmetric_discrete_gaussian(2.0, 3, count=6000, rng=np.random.default_rng(3))
    assert np.array_equal(draws, draws.swapaxes(-1, -2))
    assert np.array_equal(draws, np.round(draws))
    off = draws[:, [0, 0, 1], [1, 2, 2]].ravel()
    diag = draws[:, [0, 1, 2], [0, 1, 2]].ravel()
    assert _chi_square_pvalue(off, 2.0) > ALPHA
    assert _chi_square_pvalue(diag, diagonal_sigma(2.0)) > ALPHA


def _privatizer(
    secure: bool,
    *,
    sigma: float = 3.0,
    dim: int = 2,
    capacity: int = 8,
    seed: int = 0,
    accountant: Accountant | None = None,
    **extra,
):
    rng = np.empty(2, dtype=object)
    rng[:] = [np.random.default_rng([seed, i]) for i in range(2)]
    accountant = accountant or Accountant(disjoint=("agent",))
    return MatrixTreePrivatizer(
        stream_shape=(2,),
        dim=dim,
        capacity=capacity,
        noise_stddev=sigma,
        shift=0.5,
        frobenius_sensitivity=2.0 * math.sqrt(2.0),
        accountant=accountant,
        keys={"agent": np.arange(2)},
        rng=rng,
        secure=secure,
        **extra,
    )


def test_secure_privatizer_charges_the_grid_event() -> None:
    privatizer = _privatizer(True, sigma=3.0, dim=2, capacity=8)
    g = privatizer.granularity
    assert g == 2.0**-9  # ⌊log2 (2√2)⌋ - 10
    node = SymmetricMatrixDiscreteGaussian(
        sigma=3.0 / g, dim=3, frobenius_sensitivity=2.0 * math.sqrt(2.0) / g + 3
    )
    assert privatizer.event == SelfComposed(event=node, count=4)
    (cell,) = {tuple(cell) for cell in privatizer.accountant.ledger.cells()}
    assert cell == ((privatizer.event, 1),)


def test_secure_privatizer_refuses_a_bad_grid() -> None:
    with pytest.raises(ValueError, match="power of two"):
        _privatizer(True, granularity=0.3)
    with pytest.raises(ValueError, match="only with `secure=True`"):
        _privatizer(False, granularity=0.25)


@pytest.mark.parametrize("sigma", [0.5, 3.0, 40.0])
@pytest.mark.parametrize("capacity", [1, 16, 2**14])
def test_secure_privatizer_is_never_charged_less_than_the_float_one(sigma, capacity) -> None:
    float_acc, secure_acc = Accountant(disjoint=("agent",)), Accountant(disjoint=("agent",))
    _privatizer(False, sigma=sigma, capacity=capacity, accountant=float_acc)
    _privatizer(True, sigma=sigma, capacity=capacity, accountant=secure_acc)
    for delta in (1e-1, 1e-3, 1e-6):
        assert secure_acc.get_epsilon(delta) >= float_acc.get_epsilon(delta)
    node = secure_acc.ledger.cells()[0][0][0].event  # per node: ρ >= the float node's μ²/2
    assert (
        node.frobenius_sensitivity**2 / (4 * node.sigma**2)
        >= (2.0 * math.sqrt(2.0) / (math.sqrt(2.0) * sigma)) ** 2 / 2
    )
    assert float_acc.routes.epsilons(1e-6)["gdp"] <= secure_acc.routes.epsilons(1e-6)["zcdp"]


def test_secure_releases_are_exact_grid_sums() -> None:
    """Same seed, two worlds: the releases differ by exactly g · Σ (rounded leaf differences)."""
    worlds = [_privatizer(True, seed=5) for _ in range(2)]
    g = worlds[0].granularity
    rng = np.random.default_rng(1)
    mask = np.ones(2, dtype=bool)
    expected = np.zeros((2, 3, 3))
    for _ in range(5):
        leaf = rng.normal(size=(2, 3, 3))
        other = leaf + rng.normal(scale=1e-3, size=(2, 3, 3))
        out = [world.release(x, mask) for world, x in zip(worlds, (leaf, other), strict=True)]
        expected += round_symmetric_to_grid(leaf, g) - round_symmetric_to_grid(other, g)
        for part in range(2):
            assert np.array_equal(
                out[0][part] - out[1][part], (expected[:, :2, :2], expected[:, :2, 2])[part] * g
            )
        gram = out[0][0] - 0.5 * np.eye(2)
        assert np.array_equal(gram / g, np.round(gram / g))
        assert np.array_equal(out[0][1] / g, np.round(out[0][1] / g))


def _tables():
    spec = LinearBandit(n_agents=2, n_arms=4, dim=2, reward="bernoulli", shared_users=False)
    return spec.sample(np.random.SeedSequence(4), n_trials=1, horizon=60)


def test_secure_feducb_run_releases_grid_values_and_pays_at_least_the_float_price() -> None:
    """Same σ (the corrected calibration does not depend on the noise): the secure
    Privatizer is charged at least the float one. With "exact", σ is solved for what
    each is charged, so both spend exactly the claim (the secure one with a larger σ)."""
    tables = _tables()
    runs = {
        secure: run_feducb_fixed(
            tables,
            epsilon=2.0,
            delta=0.1,
            sync_every=6,
            mode="corrected",
            record=True,
            seed=2,
            secure_noise=secure,
        )
        for secure in (False, True)
    }
    exact = {
        secure: run_feducb_fixed(
            tables, epsilon=2.0, delta=0.1, sync_every=6, mode="exact", seed=2, secure_noise=secure
        )
        for secure in (False, True)
    }
    for run in exact.values():
        spent = run.accountant.get_epsilon(0.1, where={"channel": "privatizer"})
        assert spent <= 2.0 and spent == pytest.approx(2.0, rel=1e-6)
    assert exact[True].calibration.noise_stddev > exact[False].calibration.noise_stddev
    secure = runs[True]
    assert secure.setting["secure_noise"] and "secure_noise" not in runs[False].setting
    g = 2.0 ** (math.frexp(secure.calibration.frobenius_sensitivity)[1] - 1 - 10)
    gram = secure.transcript.releases_gram[0] - secure.calibration.shift * np.eye(2)
    assert np.array_equal(gram / g, np.round(gram / g))
    for delta in (0.1, 1e-6):
        assert secure.accountant.get_epsilon(delta, where={"channel": "privatizer"}) >= (
            runs[False].accountant.get_epsilon(delta, where={"channel": "privatizer"})
        )
    assert np.all(np.isfinite(secure.regret_curve))


def test_feducb_secure_false_is_the_default() -> None:
    tables = _tables()
    plain = run_feducb(tables, epsilon=1.0, delta=0.1, mode="exact", seed=1, record=True)
    explicit = run_feducb(
        tables, epsilon=1.0, delta=0.1, mode="exact", seed=1, record=True, secure_noise=False
    )
    assert np.array_equal(plain.regret_curve, explicit.regret_curve)
    for a, b in zip(plain.transcript.releases_gram, explicit.transcript.releases_gram, strict=True):
        assert np.array_equal(a, b)
