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
"""

from __future__ import annotations

import functools
import math

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
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
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
        first = dict(zip(xs, here.tolist(), strict=True))
        second = dict(zip(xs, there.tolist(), strict=True))
        plds.append(
            [
                pld_lib.from_two_probability_mass_functions(
                    a,
                    b,
                    pessimistic_estimate=False,
                    value_discretization_interval=1e-4,
                    log_mass_truncation_bound=-math.inf,
                )
                for a, b in ((second, first), (first, second))
            ]
        )
    if not plds:
        return 0.0
    out = 0.0
    for order in (0, 1):  # both orders of the pair are neighbours: the larger ε
        total = plds[0][order]
        for extra in plds[1:]:
            total = total.compose(extra[order])
        out = max(out, float(total.get_epsilon_for_delta(delta)))
    return out


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
    """Exact ε at the claimed δ of the adaptive pair on the even levels' ``u₀`` counts.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    float
        A lower bound on the view's ε (module docstring).
    """
    return _lower(tuple(_setting(claim).items()), float(claim.claimed_delta))
