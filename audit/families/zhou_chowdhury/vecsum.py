"""Recipes of the shuffle-model rows by vector sum (Zhou & Chowdhury Thm. 5.5, Fig. 2b).

The view: the shuffled multiset of all users' messages at every batch end, which is, per
coordinate of ``[y x, upper(x xᵀ)]``, the count of ones of the node released there
(:mod:`fedpriv.privacy.mechanisms.vector_sum`). Upper bound: the algorithm's own ledger
(one :class:`~fedpriv.privacy.accounting.binomial_sum.BinomialVectorSumTree` per trial,
``B`` users per leaf when silos act on their own batch data).

Lower bound (:func:`vecsum_analytic_lower`): the exact ε of one neighbouring pair on a
marginal of the view (a post-processing, so a lower bound on the view's ε). The pair is
the family's adaptive pair (:func:`fedpriv.audit.families.zhou_chowdhury.recipes.adaptive_pair`,
run by the algorithm itself): silo 0's first user's reward is ``+1`` or ``−1`` on context
``e₀``, and with own data the rest of its batch follows the sign; every other value
is ``0`` or ``±1``, and all later users see only ``e₁`` with reward 0. Every value is then
on the grid of the levels whose ``g`` is an integer (the even levels at Fig. 2b's
``n = 2500·2^l``: ``g = 100·2^{l/2}``), so the randomized rounding is deterministic
there and the node's count in coordinate ``u₀`` is ``c + Bin(n b, 1/4)`` in D and
``c − s + Bin(n b, 1/4)`` in D', ``s = |Δu₀| g``, every other coordinate equal. The
marginal on those nodes' ``u₀`` counts is a product of binomial shift pairs, priced by
dp-accounting's *optimistic* PLD from the two pmfs (a lower bound on δ(ε), hence on ε).

When each silo acts on the broadcast sums only, that pair moves one user's message,
and a second pair gives more (:func:`_one_user_lower`): every user's decision set is
``{e₀}``, the first user's reward is ``+1`` in D and ``−1`` in D', every other user's
``−1``. Every other user's ``u₀ = −1`` is then ``z = 0`` on every level's grid (no
rounding noise), so the first user's node count in ``u₀`` is ``⌊2g⌋ + Bern(2g − ⌊2g⌋) +
Bin(n b, 1/4)`` in D and ``Bin(n b, 1/4)`` in D', exactly, on every level (odd levels
included), and the levels' nodes are independent: their product is priced as above.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import AccountantResult
from fedpriv.audit.families.zhou_chowdhury.recipes import adaptive_pair, first_batch_run

__all__ = ["vecsum_accountant", "vecsum_analytic_lower"]

#: Largest binomial sd of a node used by the lower bound (the pmf dicts stay small).
_MAX_SD = 8000.0


def _setting(claim: Claim) -> dict:
    return claim.setting_dict()


def vecsum_accountant(claim: Claim) -> AccountantResult:
    """The algorithm's own ledger (charged at opening for the row's whole horizon).

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    AccountantResult
    """
    run = first_batch_run(claim)
    route, eps = run.accountant.routes.tightest(claim.claimed_delta)
    cal = run.calibration
    note = (
        f"one shuffled binomial vector-sum tree of {cal.n_batches} batches (κ = {cal.depth}) "
        f"over all silos' users, p = 1/4, g and b per level as the experiment code; "
        f"{cal.records_per_leaf} user(s) per leaf, each ≤ 2 per coordinate and √6 in L2, "
        "rounding adds ≤ 1 per coordinate; priced by the flagged-Gaussian domination "
        "certificate of the binomial pmfs"
    )
    return AccountantResult(route, float(eps), (note,))


@functools.lru_cache(maxsize=16)
def _lower(items: tuple, delta: float) -> float:
    from fedpriv.privacy.calibrations.zhou_chowdhury import zc_tree_depth
    from fedpriv.privacy.mechanisms.vector_sum import VECSUM_PROBABILITY, vector_sum_parameters
    from scipy import stats

    s = dict(items)
    pair = _adaptive_pair_of(items)
    d, m, b = int(s["dim"]), int(s["n_agents"]), int(s["batch_size"])
    shift_value = abs(pair.leaf_d[0, d] - pair.leaf_d_prime[0, d]) * math.sqrt(2.0)
    shift_value = round(shift_value)  # an integer: sums of ±1
    depth = zc_tree_depth(int(s["horizon"]), b)
    plds = []
    for level in range(depth):
        n = b * m * 2**level
        g, trials = vector_sum_parameters(
            n, dim=d, epsilon=float(s["epsilon"]), delta=float(s["delta"])
        )
        if g != round(g):
            continue  # rounding would be random there: left out (a marginal)
        big_n = n * trials
        p = VECSUM_PROBABILITY
        sd = math.sqrt(big_n * p * (1 - p))
        if sd > _MAX_SD:
            continue
        k = round(shift_value * g)
        lo = max(int(big_n * p - 12 * sd) - k, 0)
        hi = min(int(big_n * p + 12 * sd) + k, big_n)
        xs = list(range(lo, hi + 1))
        here = stats.binom.logpmf(xs, big_n, p)  # D: count x (the shift's constant dropped)
        there = stats.binom.logpmf([x + k for x in xs], big_n, p)  # D': count x - ... + k
        plds.append(_pair_plds(xs, here.tolist(), there.tolist()))
    return _composed_epsilon(plds, delta)


def _pair_plds(xs: list, log_d: list, log_d_prime: list) -> list:
    """dp-accounting's optimistic PLDs of one release's pair (both orders) from the two
    log-pmfs on the outcomes ``xs`` (a lower bound on δ(ε) of the pair)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    first = dict(zip(xs, log_d, strict=True))
    second = dict(zip(xs, log_d_prime, strict=True))
    return [
        pld_lib.from_two_probability_mass_functions(
            a,
            b,
            pessimistic_estimate=False,
            value_discretization_interval=1e-4,
            log_mass_truncation_bound=-math.inf,
        )
        for a, b in ((second, first), (first, second))
    ]


def _composed_epsilon(plds: list, delta: float) -> float:
    """ε at ``delta`` of independent releases' pairs composed, the larger of the two
    orders (both orders of a pair are neighbours); 0 with no release."""
    if not plds:
        return 0.0
    out = 0.0
    for order in (0, 1):
        total = plds[0][order]
        for extra in plds[1:]:
            total = total.compose(extra[order])
        out = max(out, float(total.get_epsilon_for_delta(delta)))
    return out


#: Standard deviations of the binomial kept either side of a node's count (the mass left
#: out, below 1e-15, is dropped from both worlds, which can only lower the bound).
_WINDOW_SD = 8.0


@functools.lru_cache(maxsize=16)
def _one_user_lower(items: tuple, delta: float) -> float:
    """Exact ε at ``delta`` of one user's message on every level's ``u₀`` count, on an
    oblivious pair (module docstring), composed over the levels that release a node
    holding the user."""
    from fedpriv.privacy.calibrations.zhou_chowdhury import zc_n_batches, zc_tree_depth
    from fedpriv.privacy.mechanisms.vector_sum import VECSUM_PROBABILITY, vector_sum_parameters
    from scipy import stats

    s = dict(items)
    d, m, b = int(s["dim"]), int(s["n_agents"]), int(s["batch_size"])
    horizon = int(s["horizon"])
    p = VECSUM_PROBABILITY
    plds = []
    for level in range(zc_tree_depth(horizon, b)):
        if 2**level > zc_n_batches(horizon, b):
            break  # no node of this level holds the first batch
        n = b * m * 2**level
        g, trials = vector_sum_parameters(
            n, dim=d, epsilon=float(s["epsilon"]), delta=float(s["delta"])
        )
        big_n = n * trials
        sd = math.sqrt(big_n * p * (1 - p))
        z = 2.0 * g  # the user's u₀ = +1 in D; −1 (z = 0) in D' and for everyone else
        k = math.floor(z)
        f = z - k
        lo = max(int(big_n * p - _WINDOW_SD * sd), 0)
        hi = min(int(big_n * p + _WINDOW_SD * sd) + k + 1, big_n + k + 1)
        xs = np.arange(lo, hi + 1)
        there = stats.binom.logpmf(xs, big_n, p)  # D': the binomial alone
        here = np.logaddexp(  # D: shifted by ⌊z⌋ + Bern(z − ⌊z⌋)
            math.log1p(-f) + stats.binom.logpmf(xs - k, big_n, p),
            (math.log(f) if f > 0 else -math.inf) + stats.binom.logpmf(xs - k - 1, big_n, p),
        )
        plds.append(_pair_plds(xs.tolist(), here.tolist(), there.tolist()))
    return _composed_epsilon(plds, delta)


class _Setting:
    """The one method of a claim :func:`adaptive_pair` reads."""

    def __init__(self, items: tuple) -> None:
        self._items = items

    def setting_dict(self) -> dict:
        return dict(self._items)


def _adaptive_pair_of(items: tuple):
    """:func:`adaptive_pair` of a setting given as items (the cache key)."""
    return adaptive_pair(_Setting(items))


def vecsum_analytic_lower(claim: Claim) -> float:
    """Exact ε at the claimed δ of the adaptive pair on the even levels' ``u₀`` counts, and
    with the broadcast sums only the larger of that and one user's pair on every level.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    float
        A lower bound on the view's ε (module docstring).
    """
    items = tuple(_setting(claim).items())
    delta = float(claim.claimed_delta)
    adaptive = _lower(items, delta)
    if dict(items).get("acts_on") != "broadcast-sums":
        return adaptive  # B users' messages move: one user's pair is far below it
    return max(adaptive, _one_user_lower(items, delta))
