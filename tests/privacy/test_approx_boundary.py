"""An exact (ε, δ) answer at the δ where it is exact (issue 38, item 5).

(ε=1, δ=0.1) + (ε=2, δ=0.2) is exactly (3, 1 - 0.9·0.8)-DP, and 1 - 0.9·0.8 computed
from the doubles 0.1 and 0.2 is 0.28000000000000001443... in exact arithmetic, below
fl(0.28) = 0.28000000000000002665...; the float evaluation rounded it above, and every
route answered ∞ at δ = 0.28. The reference is independent of the routes: the
composition of the mechanisms that dominate every (ε_i, δ_i)-DP one (leak with
probability δ_i, else ε_i randomized response; Kairouz, Oh & Viswanath 2015, proof of
Thm. 3.3), its δ(ε) summed over the product outcomes in mpmath at 80 digits, and the
leak probability 1 - Π(1 - δ_i) in exact rationals.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.routes import compose_routes
from hypothesis import example, given, settings
from hypothesis import strategies as st


def dominating_delta(pairs, epsilon: float) -> mpmath.mpf:
    """Exact δ(ε) of the composition of the dominating (ε_i, δ_i) mechanisms, 80 digits.

    Mechanism i outputs, under P: leak w.p. δ_i, ``a`` w.p. (1-δ_i) e^ε_i/(1+e^ε_i),
    ``b`` w.p. (1-δ_i)/(1+e^ε_i); under Q the mirror image. δ(ε) = Σ_o (P(o) -
    e^ε Q(o))_+ over the product outcomes.
    """
    with mpmath.workdps(80):
        per = []
        for eps_i, delta_i in pairs:
            e, d = mpmath.exp(mpmath.mpf(eps_i)), mpmath.mpf(delta_i)
            per.append(
                [
                    (d, mpmath.mpf(0)),
                    ((1 - d) * e / (1 + e), (1 - d) / (1 + e)),
                    ((1 - d) / (1 + e), (1 - d) * e / (1 + e)),
                    (mpmath.mpf(0), d),
                ]
            )
        scale = mpmath.exp(mpmath.mpf(epsilon))
        total = mpmath.mpf(0)
        for outcome in itertools.product(*per):
            p = mpmath.fprod(o[0] for o in outcome)
            q = mpmath.fprod(o[1] for o in outcome)
            total += max(p - scale * q, 0)
        return total


def leak(pairs) -> Fraction:
    keep = Fraction(1)
    for _, delta in pairs:
        keep *= 1 - Fraction(delta)
    return 1 - keep


def _accountant(pairs) -> Accountant:
    accountant = Accountant()
    for eps_i, delta_i in pairs:
        accountant.spend(events.OpaqueApproxDP(epsilon=eps_i, delta=delta_i))
    return accountant


def test_the_dp_accounting_case_answers_exactly_three() -> None:
    accountant = _accountant([(1.0, 0.1), (2.0, 0.2)])
    assert accountant.routes.tightest(0.28) == ("optimal", 3.0)  # was ∞ by every route
    assert leak([(1.0, 0.1), (2.0, 0.2)]) <= Fraction(0.28)
    assert dominating_delta([(1.0, 0.1), (2.0, 0.2)], 3.0) <= mpmath.mpf(0.28)
    # just below the exact leak probability no ε is enough: ∞ stays
    below = math.nextafter(float(leak([(1.0, 0.1), (2.0, 0.2)])), 0.0)
    assert accountant.get_epsilon(below) == math.inf


_eps = st.sampled_from([0.1, 0.5, 1.0, 2.0, 3.0, 1 / 3])
_delta = st.sampled_from([1e-6, 0.01, 0.1, 0.2, 0.25, 0.3, 0.5, 1 / 3])


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(_eps, _delta), min_size=1, max_size=3),
    ulps=st.integers(min_value=-3, max_value=3),
    relative=st.sampled_from([0.0, -1e-12, 1e-12, -1e-6, 1e-6]),
)
@example(pairs=[(1.0, 0.1), (2.0, 0.2)], ulps=0, relative=0.0)
@example(pairs=[(1.0, 0.1), (2.0, 0.2)], ulps=-1, relative=0.0)
@example(pairs=[(1.0, 0.5), (1.0, 0.5)], ulps=0, relative=0.0)  # 0.75, representable
@example(pairs=[(0.1, 1e-6)], ulps=0, relative=-1e-12)  # basic's 1e-12 δ slack said 0.1
def test_at_and_around_the_leak_probability(pairs, ulps, relative) -> None:
    """Sound at every δ near 1 - Π(1 - δ_i) (mpmath reference), and the exact top
    Σ ε_i (or less) wherever δ >= 1 - Π(1 - δ_i) holds in exact rationals."""
    exact_leak = leak(pairs)
    target = float(exact_leak) * (1.0 + relative)
    for _ in range(abs(ulps)):
        target = math.nextafter(target, math.inf if ulps > 0 else 0.0)
    if not 0.0 < target < 1.0:
        return
    cell = [(events.OpaqueApproxDP(epsilon=e, delta=d), 1) for e, d in pairs]
    routes = compose_routes(cell, target)
    with mpmath.workdps(80):
        for name, value in routes.items():
            if math.isfinite(value):  # an upper bound: the truth at it is within δ
                # (test_soundness.py's convention: ε grown by 1e-12 relative; the leak
                # atom is at ε = ∞, so no growth of ε hides a δ below it)
                truth = dominating_delta(pairs, value * (1 + 1e-12))
                assert truth <= mpmath.mpf(target) * (1 + mpmath.mpf(10) ** -40), (name, value)
    top = math.fsum(e for e, _ in pairs)
    if exact_leak <= Fraction(target):
        assert min(routes.values()) <= top * (1 + 1e-15)  # never pushed to ∞
    else:  # below the leak probability no finite ε holds (the leak is an atom at ∞)
        assert min(routes.values()) == math.inf
        assert dominating_delta(pairs, 1e6) > mpmath.mpf(target)
