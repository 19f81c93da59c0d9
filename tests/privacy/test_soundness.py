"""Every number that calls itself a bound is one (issue 19).

Independent references, evaluated in mpmath at 80 digits:

* k-fold ε0 randomized response (and the discrete Laplace at sensitivity 1, whose
  privacy loss is exactly ±ε0): the Kairouz–Oh–Viswanath sum, KOV 2015 Thm. 3.3,
  ``δ(ε) = Σ_j C(k, j) (e^{(k-j)ε0} - e^{ε + jε0})_+ / (1 + e^{ε0})^k``.
* μ-GDP (k Gaussians of noise multiplier σ: μ = √k / σ): Balle & Wang 2018,
  arXiv:1805.06530, Thm. 8, ``δ(ε) = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ)``.
* one Laplace release of ε0 = Δ/b: ``δ(ε) = 1 - e^{(ε - ε0)/2}`` for ε < ε0 (its
  privacy-loss distribution is ε0 w.p. 1/2 and uniform-in-``e^{-L/2}`` between).

Assertions are one-sided: an upper bound ε_u is sound if ``δ_true(ε_u (1 + 1e-12))
<= δ``; a lower bound ε_l if ``δ_true(ε_l (1 - 1e-12)) >= δ``; a δ if it is at least
``δ_true (1 - 1e-12)``. Where a route is exact (``optimal`` for randomized response,
``gdp`` for Gaussians) its tightness is stated too. References are cached.
"""

from __future__ import annotations

import functools
import math

import mpmath
import pytest
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.routes import compose_delta, compose_routes, pld_lower_bound
from fedpriv.privacy.accounting.sampling import PoissonSampled
from hypothesis import example, given, settings
from hypothesis import strategies as st

REL = 1e-12
DELTAS = (0.0, 1e-300, 1e-15, 1e-10, 1e-6, 1e-3, 0.1)


# ------------------------------------------------------------------ references
@functools.cache
def kov_delta(eps0: float, k: int, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of k-fold ε0 randomized response (KOV 2015, Thm. 3.3), 80 digits.

    Summed downward from the last positive term ``J`` by the ratio of consecutive
    binomial weights; terms more than 30 sd below the mean and 1e-60 below the
    running sum are dropped (relative error < 1e-50), as are
    those more than 30 sd above it (below e^-450 of the peak).
    """
    with mpmath.workdps(80):
        e0, target = mpmath.mpf(eps0), mpmath.mpf(epsilon)
        last = int(mpmath.ceil((k - target / e0) / 2)) - 1  # (k - 2j) ε0 > ε
        if last < 0:
            return mpmath.mpf(0)
        q = 1 / (1 + mpmath.exp(e0))  # probability of loss -ε0 in one release
        mean, sd = k * q, mpmath.sqrt(k * q * (1 - q)) + 1
        j = int(min(last, k, mean + 30 * sd))
        weight = mpmath.exp(
            mpmath.loggamma(k + 1)
            - mpmath.loggamma(j + 1)
            - mpmath.loggamma(k - j + 1)
            + (k - j) * mpmath.log1p(-q)
            + j * mpmath.log(q)
        )
        ratio = mpmath.exp(-(k - 2 * j) * e0 + target)
        down, up = mpmath.exp(-2 * e0), mpmath.exp(e0)
        total, floor, tiny = mpmath.mpf(0), mean - 30 * sd, mpmath.mpf(10) ** -60
        while j >= 0:
            term = weight * (1 - ratio)
            total += term
            if j < floor and term < total * tiny:
                break
            weight *= mpmath.mpf(j) / (k - j + 1) * up
            ratio *= down
            j -= 1
        return total


@functools.cache
def gdp_delta(mu: float, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of μ-GDP (Balle & Wang 2018, Thm. 8), 80 digits."""
    with mpmath.workdps(80):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        value = mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)
        return max(value, mpmath.mpf(0))


def laplace_delta(eps0: float, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of one Laplace release of ε0 = Δ/b, 80 digits."""
    with mpmath.workdps(80):
        if epsilon >= eps0:
            return mpmath.mpf(0)
        return -mpmath.expm1((mpmath.mpf(epsilon) - mpmath.mpf(eps0)) / 2)


# ------------------------------------------------------------------ checks
def _upper_sound(truth, value: float, delta: float) -> None:
    if math.isfinite(value):
        assert truth(value * (1 + REL)) <= delta, (value, delta)


def _lower_sound(truth, value: float, delta: float) -> None:
    assert value >= 0.0
    if value > 0.0:
        assert truth(value * (1 - REL)) >= delta, (value, delta)


def _delta_sound(truth, cell, epsilon: float) -> None:
    got = compose_delta(cell, epsilon)
    expected = truth(epsilon)
    assert got >= expected * (1 - REL), (epsilon, got, expected)
    assert got > 0.0 or expected == 0.0, (epsilon, got, expected)


def _check_cell(cell, truth, delta: float, exact_route: str | None) -> dict[str, float]:
    """Every route, the lower bound, the bracket and get_delta against ``truth``."""
    routes = compose_routes(cell, delta)
    for value in routes.values():
        _upper_sound(truth, value, delta)
    lower = pld_lower_bound(cell, delta)
    _lower_sound(truth, lower, delta)
    upper = min(routes.values())
    assert lower <= upper * (1 + REL)
    for epsilon in {upper, lower, 0.5 * (lower + upper) if math.isfinite(upper) else lower}:
        if math.isfinite(epsilon):
            _delta_sound(truth, cell, epsilon)
    if exact_route is not None and delta > 0 and 0 < routes[exact_route] < math.inf:
        # tightness: an exact route is within 1e-7 (relative) of the truth (its
        # log-space rounding is taken upward, ~1e-8 relative in δ at k = 10⁶)
        value = routes[exact_route]
        assert truth(value * (1 - 1e-7)) >= delta, (exact_route, value)
    return routes


# ------------------------------------------------------------------ property tests
@settings(max_examples=5)  # plus 3 explicit examples; ~35 s (mpmath sums at k=10⁶)
@given(
    k=st.sampled_from([1, 2, 7, 100, 1500, 18_935, 100_000]),
    log_eps0=st.floats(min_value=-4.0, max_value=math.log10(50.0)),
    delta=st.sampled_from(DELTAS),
)
@example(k=1_000_000, log_eps0=-2.0, delta=0.0)
@example(k=1_000_000, log_eps0=-4.0, delta=1e-10)
@example(k=1500, log_eps0=-2.0, delta=1e-300)
def test_randomized_response_against_kov(k: int, log_eps0: float, delta: float) -> None:
    eps0 = 10.0**log_eps0
    cell = [(events.RandomizedResponse(epsilon=eps0), k)]
    routes = _check_cell(cell, lambda e: kov_delta(eps0, k, e), delta, "optimal")
    if delta == 0.0:  # exact at δ = 0: the sum of the top losses
        assert routes["pure"] == pytest.approx(k * eps0, rel=REL)
        assert routes["optimal"] >= k * eps0 * (1 - REL)


@settings(max_examples=12)
@given(
    k=st.sampled_from([1, 3, 100, 1000]),
    log_sigma=st.floats(min_value=math.log10(0.3), max_value=3.0),
    delta=st.sampled_from(DELTAS[1:]),
)
@example(k=1, log_sigma=math.log10(0.3), delta=1e-300)
def test_gaussian_against_balle_wang(k: int, log_sigma: float, delta: float) -> None:
    sigma = 10.0**log_sigma
    mu = math.sqrt(k) / sigma
    cell = [(events.Gaussian(noise_multiplier=sigma), k)]
    _check_cell(cell, lambda e: gdp_delta(mu, e), delta, "gdp")


@settings(max_examples=8)
@given(
    log_eps0=st.floats(min_value=-4.0, max_value=math.log10(50.0)), delta=st.sampled_from(DELTAS)
)
def test_single_laplace_against_closed_form(log_eps0: float, delta: float) -> None:
    scale = 10.0**-log_eps0
    eps0 = 1.0 / scale  # the accountant's ε0 = Δ / b, bit for bit
    cell = [(events.Laplace(scale=scale), 1)]
    routes = _check_cell(cell, lambda e: laplace_delta(eps0, e), delta, None)
    if delta == 0.0:
        assert routes["pure"] == pytest.approx(eps0, rel=REL)


# ------------------------------------------------------------------ issue 19 patterns
def test_pattern1_optimal_at_delta_zero_is_the_pure_sum() -> None:
    rr = Accountant(neighboring_relation="replace_one")
    rr.spend(events.SelfComposed(event=events.RandomizedResponse(epsilon=0.01), count=10**6))
    assert rr.get_epsilon(0.0) == pytest.approx(10_000.0, rel=REL)
    assert rr.routes.epsilons(0.0)["optimal"] >= 10_000.0 * (1 - REL)  # was 434.37
    laplace = Accountant(neighboring_relation="replace_one")
    laplace.spend(events.SelfComposed(event=events.Laplace(scale=100.0), count=1500))
    assert laplace.routes.epsilons(0.0)["optimal"] >= 15.0 * (1 - REL)  # was 13.50
    assert laplace.get_epsilon(0.0) == pytest.approx(15.0, rel=REL)


def test_pattern2_get_delta_never_claims_pure_dp_where_delta_is_positive() -> None:
    laplace = Accountant(neighboring_relation="replace_one")
    laplace.spend(events.SelfComposed(event=events.Laplace(scale=100.0), count=1500))
    # true δ(14) ≈ e^-830: below every double, so the smallest positive one
    assert laplace.get_delta(14.0) == math.ulp(0.0)
    # proven only at ε >= Σ top losses, summed exactly (1500 · 1/100 = 15)
    assert laplace.get_delta(15.0) == 0.0
    rr = Accountant()  # 1500 × fl(0.01) is just above 15: δ(15) > 0 there
    rr.spend(events.SelfComposed(event=events.RandomizedResponse(epsilon=0.01), count=1500))
    assert rr.get_epsilon(0.0) == math.nextafter(15.0, math.inf)
    assert 0.0 < rr.get_delta(15.0) <= 1e-13
    assert rr.get_delta(rr.get_epsilon(0.0)) == 0.0
    exact = Accountant()
    exact.spend(events.SelfComposed(event=events.Laplace(scale=8.0), count=8))
    assert exact.get_epsilon(0.0) == 1.0 and exact.get_delta(1.0) == 0.0
    # the KOV sum (an upper bound for Laplace) at ε = 14 is 2.0e-358, also positive
    assert kov_delta(0.01, 1500, 14.0) > 0


def test_pattern3_pld_round_off_is_not_signal() -> None:
    # The discrete Laplace at sensitivity 1 has privacy loss ±ε0 exactly, so the
    # KOV sum is its true δ.
    scale, k = 80.6869, 18935
    eps0 = 1.0 / scale
    accountant = Accountant(neighboring_relation="replace_one")
    accountant.spend(
        events.SelfComposed(event=events.DiscreteLaplace(scale=scale, l1_sensitivity=1), count=k)
    )
    epsilon = accountant.get_epsilon(1e-15)  # was 13.12 from pld; truth 14.62
    assert kov_delta(eps0, k, epsilon * (1 + REL)) <= 1e-15
    assert kov_delta(eps0, k, epsilon - 1e-6) >= 1e-15  # and tight (exact route)
    truth = kov_delta(eps0, k, 13.1224)  # 7.45e-13; was reported as 1e-15
    assert accountant.get_delta(13.1224) >= truth * (1 - REL)
    lower, upper = accountant.brackets.epsilon(1e-15)
    assert kov_delta(eps0, k, lower * (1 - REL)) >= 1e-15
    assert lower <= upper


def test_pattern4_lower_bound_below_upper_at_tiny_delta() -> None:
    accountant = Accountant(neighboring_relation="add_or_remove_one")
    accountant.spend(events.SelfComposed(event=events.Laplace(scale=178.915), count=17179))
    lower, upper = accountant.brackets.epsilon(1e-15)  # lower was 21.97 > upper 5.86
    assert 0.0 <= lower <= upper
    for delta in (0.0, 1e-300, 1e-12, 1e-6):
        lower, upper = accountant.brackets.epsilon(delta)
        assert 0.0 <= lower <= upper


def test_pattern5_large_randomized_response_lower_bound_does_not_overflow() -> None:
    k, eps0 = 700_000, 0.004
    accountant = Accountant(neighboring_relation="replace_one")
    accountant.spend(events.SelfComposed(event=events.RandomizedResponse(epsilon=eps0), count=k))
    lower, upper = accountant.brackets.epsilon(1e-6)  # lower raised OverflowError
    assert math.isfinite(lower) and 0.0 < lower <= upper
    assert kov_delta(eps0, k, lower * (1 - REL)) >= 1e-6
    assert kov_delta(eps0, k, upper * (1 + REL)) <= 1e-6


def test_pattern5_mixed_cells_get_a_bounded_grid() -> None:
    """Opaque + Gaussian + Laplace in one cell (only all-pure and all-Gaussian cells
    used to get a coarse grid): answered, bracket ordered; seconds, not minutes."""
    accountant = Accountant()
    accountant.spend(
        events.SelfComposed(event=events.OpaqueApproxDP(epsilon=0.1, delta=1e-12), count=61_061)
    )
    accountant.spend(events.SelfComposed(event=events.Gaussian(noise_multiplier=5.0), count=1000))
    accountant.spend(events.SelfComposed(event=events.Laplace(scale=10.0), count=500))
    _route, upper = accountant.routes.tightest(1e-6)
    assert math.isfinite(upper)
    assert 0.0 <= accountant.brackets.lower_bound(1e-6) <= upper


# ------------------------------------------------------------------ reading back
def test_noise_parameters_read_back_as_given() -> None:
    assert events.Gaussian(noise_multiplier=2.0).noise_multiplier == 2.0
    assert events.Gaussian(noise_multiplier=0.1, l2_sensitivity=3.0).noise_multiplier == 0.1
    assert events.Gaussian(noise_stddev=2.0, l2_sensitivity=4.0).noise_multiplier == 0.5
    assert events.Gaussian(noise_multiplier=2.0) == events.Gaussian(noise_stddev=2.0)
    tree = events.GaussianTree(noise_multiplier=10.0, horizon=1000)
    assert (tree.noise_multiplier, tree.horizon) == (10.0, 1000)
    # one name for σ across the continuous and discrete Gaussians; sigma is an alias
    discrete = events.DiscreteGaussian(noise_stddev=5.0, l2_sensitivity=1.0)
    assert discrete.noise_stddev == discrete.sigma == 5.0
    assert discrete == events.DiscreteGaussian(sigma=5.0, l2_sensitivity=1.0)
    with pytest.raises(ValueError, match="noise_stddev"):
        events.DiscreteGaussian(noise_stddev=1.0, sigma=1.0, l2_sensitivity=1.0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        events.Gaussian(noise_multiplier=-1.0)


# ------------------------------------------------------------------ tight where simple
def test_poisson_sampled_laplace_replace_one_is_the_exact_mixture_ratio() -> None:
    q = 0.1
    event = PoissonSampled(
        event=events.Laplace(scale=1.0), sampling_rate=q, neighboring_relation="replace_one"
    )
    routes = compose_routes([(event, 100)], 0.0)
    exact = 100 * math.log((1 - q + q * math.e) / (1 - q + q / math.e))
    assert routes["pure"] == pytest.approx(exact, rel=REL)  # 22.39, was 49.4
    assert routes["pure"] < 100 * math.log1p(q * math.expm1(2.0))


@pytest.mark.parametrize("mu", [50.0, 100.0])
def test_lower_bracket_of_a_large_gaussian_mixed_cell_is_below_the_truth(mu):
    # dp-accounting's optimistic Gaussian PLD reads ~0.94-0.98 above the exact
    # Gaussian-DP ε at μ = 50-100; a Laplace(10⁶) beside it adds at most 1e-6, so the
    # cell's true ε(δ) is at most the exact GDP value + 1e-6, and the lower bracket must
    # stay below that (it read 5475.22 against 5474.37 at μ = 100).
    from fedpriv.privacy.accounting import events
    from fedpriv.privacy.accounting.guarantees import gaussian_dp_epsilon
    from fedpriv.privacy.accounting.routes import compose_routes, pld_lower_bound

    cell = [(events.Gaussian(noise_stddev=1.0 / mu), 1), (events.Laplace(scale=1e6), 1)]
    truth_ceiling = gaussian_dp_epsilon(mu, 1e-6) + 1e-6
    lower = pld_lower_bound(cell, 1e-6)
    assert lower <= truth_ceiling
    assert lower <= min(compose_routes(cell, 1e-6).values())
    assert lower >= gaussian_dp_epsilon(mu, 1e-6) * (1 - 1e-12)  # the Gaussian part alone


def test_lower_bracket_where_exp_minus_loss_underflows_is_below_the_truth() -> None:
    """1,000 × RR(700): every composed loss is >= 700, so dp-accounting's ε(δ) scan sums
    exp(−loss) = 0 and returned the top loss, 699999.9999994527, above the truth
    700000 + log(1 − δ/p) (p = the top atom's mass) and above the KOV upper bound."""
    mpmath.mp.dps = 60
    k, eps0, delta = 1000, 700, 1e-5
    p_top = (mpmath.e**eps0 / (1 + mpmath.e**eps0)) ** k
    # At ε > (k − 1)·ε0 only the top atom (loss k·ε0) has loss above ε.
    truth = k * eps0 + mpmath.log(1 - mpmath.mpf(delta) / p_top)
    accountant = Accountant()
    accountant.spend(events.SelfComposed(event=events.RandomizedResponse(epsilon=eps0), count=k))
    lower = accountant.brackets.lower_bound(delta)
    assert mpmath.mpf(lower) <= truth
    assert mpmath.mpf(accountant.routes.epsilons(delta)["optimal"]) >= truth
    # Still tight: the gap is the loss-drift allowance (2·n·u·max|loss| ≈ 5e-7 here).
    assert truth - mpmath.mpf(lower) < 1e-6


# ------------------------------------------------------------------ stored subsampled ledgers
def sampled_laplace_delta(eps0: float, q: float, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of one Poisson-sampled Laplace release of ε0 = Δ/b under add/remove
    (the worse of both directions), 80 digits.

    With ``f`` the Laplace(0, b) density and ``Δ = 1``, the pair is ``p = (1-q) f +
    q f(· - Δ)`` and ``f``; ``δ_{p||f}(ε) = ∫ f (1 - q - e^ε + q r)_+`` and ``δ_{f||p}(ε)
    = ∫ f (1 - e^ε (1 - q) - e^ε q r)_+`` with ``r(x) = f(x - Δ)/f(x)``, increasing
    from ``e^{-ε0}`` (x <= 0) to ``e^{ε0}`` (x >= Δ) as ``exp((2x - Δ)/b)`` between;
    each integral is split where its integrand changes form.
    """
    with mpmath.workdps(80):
        b, q, e = 1 / mpmath.mpf(eps0), mpmath.mpf(q), mpmath.exp(mpmath.mpf(epsilon))

        def f(x):
            return mpmath.exp(-abs(x) / b) / (2 * b)

        def r(x):
            return mpmath.exp((abs(x) - abs(x - 1)) / b)

        def integral(integrand, threshold_ratio):
            points = [-mpmath.inf, mpmath.mpf(0), mpmath.mpf(1), mpmath.inf]
            if threshold_ratio > 0:
                switch = (b * mpmath.log(threshold_ratio) + 1) / 2
                if 0 < switch < 1:
                    points.insert(2, switch)
            return mpmath.quad(integrand, points)

        forward = integral(lambda x: f(x) * max(1 - q - e + q * r(x), 0), (e - 1 + q) / q)
        backward = integral(
            lambda x: f(x) * max(1 - e * (1 - q) - e * q * r(x), 0), (1 - e * (1 - q)) / (e * q)
        )
        return max(forward, backward, mpmath.mpf(0))


def _sampled_pure_epsilon(eps0: float, q: float, relation: str) -> mpmath.mpf:
    """Exact ε at δ = 0 of one Poisson-sampled Laplace release (its largest loss)."""
    with mpmath.workdps(80):
        e0, q = mpmath.mpf(eps0), mpmath.mpf(q)
        if relation == "replace_one":
            return mpmath.log((1 - q + q * mpmath.exp(e0)) / (1 - q + q * mpmath.exp(-e0)))
        return max(mpmath.log1p(q * mpmath.expm1(e0)), -mpmath.log1p(q * mpmath.expm1(-e0)))


def _stored_and_reopened(relation: str, event, count: int, folder) -> Accountant:
    path = folder / "ledger.sqlite"
    accountant = Accountant(neighboring_relation=relation, store=path, store_synchronous="normal")
    accountant.compose(event, count=count)
    accountant.store.close()
    return Accountant.open(path)


@settings(max_examples=10, deadline=None)
@given(
    relation=st.sampled_from(["add_or_remove_one", "replace_one"]),
    q=st.sampled_from([0.001, 0.05, 0.3, 0.9]),
    log_eps0=st.floats(min_value=-2.0, max_value=1.0),
    k=st.sampled_from([1, 10, 1000]),
)
def test_stored_subsampled_laplace_is_exact_at_delta_zero(relation, q, log_eps0, k) -> None:
    """Issue 38: a Poisson-sampled ledger persisted and reopened answers ε(0) = the
    sum of its largest losses, never below."""
    import pathlib
    import tempfile

    scale = 10.0**-log_eps0
    eps0 = 1.0 / scale
    event = PoissonSampled(
        event=events.Laplace(scale=scale), sampling_rate=q, neighboring_relation=relation
    )
    with tempfile.TemporaryDirectory() as folder:
        reopened = _stored_and_reopened(relation, event, k, pathlib.Path(folder))
        truth = k * _sampled_pure_epsilon(eps0, q, relation)
        value = reopened.get_epsilon(0.0)
        assert mpmath.mpf(value) >= truth * (1 - REL)
        assert value == pytest.approx(float(truth), rel=1e-9)
        assert reopened.brackets.lower_bound(0.0) <= value
        reopened.store.close()


@settings(max_examples=8, deadline=None)
@given(
    q=st.sampled_from([0.01, 0.2, 0.7]),
    log_eps0=st.floats(min_value=-1.0, max_value=1.0),
    delta=st.sampled_from([1e-6, 1e-3, 0.05]),
)
def test_stored_subsampled_laplace_against_the_exact_integral(q, log_eps0, delta) -> None:
    """Every route, the lower bound and get_delta of a stored, reopened Poisson-sampled
    Laplace release against its exact δ(ε) (:func:`sampled_laplace_delta`)."""
    import pathlib
    import tempfile

    scale = 10.0**-log_eps0
    eps0 = 1.0 / scale
    event = PoissonSampled(event=events.Laplace(scale=scale), sampling_rate=q)
    truth = functools.partial(sampled_laplace_delta, eps0, q)
    with tempfile.TemporaryDirectory() as folder:
        reopened = _stored_and_reopened("add_or_remove_one", event, 1, pathlib.Path(folder))
        routes = reopened.routes.epsilons(delta)
        for value in routes.values():
            _upper_sound(truth, value, delta)
        lower = reopened.brackets.lower_bound(delta)
        _lower_sound(truth, lower, delta)
        upper = min(routes.values())
        for epsilon in (lower, upper):
            if math.isfinite(epsilon):
                got, expected = reopened.get_delta(epsilon), truth(epsilon)
                assert got >= expected * (1 - REL), (epsilon, got, expected)
        reopened.store.close()
