"""End-to-end audit of a shuffler's output: shuffled k-ary randomized response.

The view is what the analyst behind a trusted shuffler receives: the multiset of the
``n`` reports, i.e. their count vector (:mod:`fedpriv.privacy.mechanisms.shuffle`).
Neighbors replace reporter 0's input (0 in D, 1 in D'); the other reporters hold a
*background* chosen before any sample from the declared law (the one whose exact
ε(δ) on the pair is largest among "every other reporter holds v", ``v < k``).

The audit draws ``n_samples`` shuffled views in each world through
:func:`~fedpriv.privacy.mechanisms.shuffle.shuffled_randomized_response` (charged to
a throwaway accountant, one cell per run; the batch axis is the run), seeded by one
:class:`numpy.random.SeedSequence` (one child per world). Each view is scored by its
white-box log-likelihood ratio under the *declared* mechanism (exact, from
:func:`~fedpriv.privacy.mechanisms.shuffle.shuffled_randomized_response_log_pmf`), and
the Clopper–Pearson threshold test of
:func:`~fedpriv.audit.estimators.estimate_epsilon_lower_bound` turns the counts into
an ε lower bound at the stated confidence. The thresholds are the distinct score
values of the declared law (at most 64, evenly spaced in rank), fixed before any
sample is drawn, so the confidence is exact.

Beside the lower bound the result holds the route's upper bound
(:func:`~fedpriv.privacy.accounting.shuffling.shuffled_epsilon` at the declared ε₀)
and the exact ε(δ) of the audited pair under the mechanism actually run (an analytic
lower bound on that mechanism's ε). For a mechanism that runs what it declares,
``lower <= exact <= upper`` (the first with probability >= the confidence); a
mechanism that draws less noise than it declares shows ``lower > upper``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fedpriv.audit.estimators import EpsilonLowerBound, estimate_epsilon_lower_bound
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.shuffling import Shuffled, shuffled_epsilon
from fedpriv.privacy.checks import check_delta, check_int_at_least, check_open_unit
from fedpriv.privacy.mechanisms.shuffle import (
    shuffled_randomized_response,
    shuffled_randomized_response_delta,
    shuffled_randomized_response_log_pmf,
)

__all__ = ["ShuffleAudit", "audit_shuffled_randomized_response", "exact_pair_epsilon"]

#: Most thresholds of the predeclared grid (each costs a share of the confidence).
_MAX_THRESHOLDS = 64
#: Grid points and refinement rounds of :func:`exact_pair_epsilon` (the bracket
#: shrinks 63-fold per round: ε₀ / 63⁴ ≈ 6·10⁻⁸ ε₀ at the end).
_GRID = 64
_ROUNDS = 4


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleAudit:
    """Result of :func:`audit_shuffled_randomized_response`.

    Attributes
    ----------
    lower_bound : EpsilonLowerBound
        The empirical Clopper–Pearson ε lower bound on the shuffled view, nats.
    upper_bound : float
        The route's ε at ``delta`` for ``n_reports`` shuffled
        ``claimed_local_epsilon``-LDP reports (an upper bound for every such
        randomizer), nats.
    exact_epsilon : float
        Exact ε at ``delta`` of the audited pair under the mechanism run (rounded
        down by at most ``ε₀ / 63⁴``), nats.
    local_epsilon, claimed_local_epsilon : float
        ε₀ of the mechanism run and ε₀ it declares, nats.
    n_reports, num_buckets : int
        Reports per view and values per report.
    inputs, neighbor_inputs : tuple of int
        The audited pair (reporter 0 differs).
    delta : float
        The δ of both bounds.
    seed_entropy : int
        ``SeedSequence.entropy`` of the run (reproduces the samples).
    """

    lower_bound: EpsilonLowerBound
    upper_bound: float
    exact_epsilon: float
    local_epsilon: float
    claimed_local_epsilon: float
    n_reports: int
    num_buckets: int
    inputs: tuple
    neighbor_inputs: tuple
    delta: float
    seed_entropy: int

    @property
    def violated(self) -> bool:
        """Whether the lower bound exceeds the declared route's upper bound."""
        return self.lower_bound.epsilon_lower_bound > self.upper_bound


def exact_pair_epsilon(
    inputs: object,
    neighbor_inputs: object,
    delta: float,
    *,
    local_epsilon: float,
    num_buckets: int = 2,
) -> float:
    """Exact ε(δ) of shuffled k-ary randomized response on one pair (both directions).

    Refines a grid bracket of the exact profile
    (:func:`~fedpriv.privacy.mechanisms.shuffle.shuffled_randomized_response_delta`,
    monotone in ε) four times and returns the largest grid ε with δ(ε) > ``delta``:
    never above the exact ε (a lower bound on the mechanism's ε), within
    ``ε₀ / 63⁴`` of it.

    Parameters
    ----------
    inputs, neighbor_inputs : array_like of int, shape (n_reports,)
        The two datasets.
    delta : float
        In [0, 1).
    local_epsilon : float
        ε₀ of the randomizer, nats, in (0, 700].
    num_buckets : int, default 2
        ``k``, >= 2.

    Returns
    -------
    float
        ε in nats, in [0, local_epsilon].

    Raises
    ------
    TypeError, ValueError
        On bad input (as :func:`shuffled_randomized_response_delta`).

    Examples
    --------
    >>> round(exact_pair_epsilon([0], [1], 0.0, local_epsilon=1.0), 6)
    1.0
    """
    delta = check_delta("delta", delta)
    low, high = 0.0, float(local_epsilon)
    for _ in range(_ROUNDS):  # each round: one grid of the bracket, both directions
        grid = np.linspace(low, high, _GRID)
        profile = np.maximum(
            *(
                shuffled_randomized_response_delta(
                    a, b, grid, local_epsilon=local_epsilon, num_buckets=num_buckets
                )
                for a, b in ((inputs, neighbor_inputs), (neighbor_inputs, inputs))
            )
        )
        above = np.flatnonzero(profile > delta)
        if above.size == 0:
            return low if low > 0.0 else 0.0
        last = int(above[-1])  # δ(grid[last]) > delta: ε is above it
        low, high = float(grid[last]), float(grid[min(last + 1, _GRID - 1)])
        if last == _GRID - 1:
            return low
    return low


def _worst_background(n: int, k: int, local_epsilon: float, delta: float) -> tuple[tuple, tuple]:
    """The pair (reporter 0: 0 vs 1; others all ``v``) with the largest exact ε(δ)."""
    best, pair = -1.0, None
    for v in range(k):
        first = (0,) + (v,) * (n - 1)
        second = (1,) + (v,) * (n - 1)
        value = exact_pair_epsilon(first, second, delta, local_epsilon=local_epsilon, num_buckets=k)
        if value > best:
            best, pair = value, (first, second)
    return pair


def _thresholds(scores: np.ndarray) -> np.ndarray:
    """At most :data:`_MAX_THRESHOLDS` distinct finite score values, evenly in rank."""
    distinct = np.unique(scores[np.isfinite(scores)])
    if distinct.size > _MAX_THRESHOLDS:
        picks = np.linspace(0, distinct.size - 1, _MAX_THRESHOLDS).round().astype(np.int64)
        distinct = distinct[np.unique(picks)]
    return distinct


def audit_shuffled_randomized_response(
    *,
    local_epsilon: float,
    n_reports: int,
    num_buckets: int = 2,
    claimed_local_epsilon: float | None = None,
    delta: float = 1e-3,
    n_samples: int = 100_000,
    confidence: float = 0.95,
    seed: int | np.random.SeedSequence = 0,
    pair: tuple[object, object] | None = None,
) -> ShuffleAudit:
    """Audit the shuffled view of ``n_reports`` k-ary randomized responses.

    Parameters
    ----------
    local_epsilon : float
        ε₀ the mechanism actually runs with, nats, in (0, 700].
    n_reports : int
        Reports per view, >= 1 (the exact law needs ``(n + 1)^k <= 2·10⁶``).
    num_buckets : int, default 2
        ``k``, >= 2.
    claimed_local_epsilon : float, optional
        ε₀ the mechanism declares (scores, background and the route's upper bound
        use it); default ``local_epsilon``.
    delta : float, default 1e-3
        δ of both bounds, in [0, 1).
    n_samples : int, default 100000
        Views drawn per world, >= 1 (one vectorized batch each).
    confidence : float, default 0.95
        Confidence of the lower bound, in (0, 1).
    seed : int or numpy.random.SeedSequence, default 0
        Root of the run's seed tree (one child per world).
    pair : tuple of two array_like of int, optional
        The neighboring datasets, each ``(n_reports,)``; default the worst background
        of the declared law (module docstring).

    Returns
    -------
    ShuffleAudit

    Raises
    ------
    TypeError, ValueError
        On a parameter out of range or of the wrong type.

    Examples
    --------
    >>> result = audit_shuffled_randomized_response(
    ...     local_epsilon=1.0, n_reports=4, n_samples=20_000, seed=1)
    >>> result.lower_bound.epsilon_lower_bound <= result.exact_epsilon <= result.upper_bound
    True
    """
    actual = Shuffled(local_epsilon=local_epsilon, n_reports=n_reports)
    declared_epsilon = (
        actual.local_epsilon if claimed_local_epsilon is None else claimed_local_epsilon
    )
    declared = Shuffled(local_epsilon=declared_epsilon, n_reports=n_reports)
    k = check_int_at_least("num_buckets", num_buckets, 2)
    delta = check_delta("delta", delta)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    confidence = check_open_unit("confidence", confidence)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    if pair is None:
        first, second = _worst_background(n_reports, k, declared.local_epsilon, delta)
    else:
        first, second = (tuple(int(v) for v in np.asarray(x).ravel()) for x in pair)
        if len(first) != n_reports or len(second) != n_reports:
            raise ValueError(f"each dataset of `pair` must have n_reports = {n_reports} entries.")
    law = {"local_epsilon": declared.local_epsilon, "num_buckets": k}
    with np.errstate(invalid="ignore"):
        score_table = shuffled_randomized_response_log_pmf(
            first, **law
        ) - shuffled_randomized_response_log_pmf(second, **law)
    thresholds = _thresholds(score_table)
    accountant = Accountant(
        neighboring_relation="replace_one", disjoint=("run",), keep_draw_rows=False
    )
    samples = []
    for world, child in zip((first, second), root.spawn(2), strict=True):
        inputs = np.broadcast_to(np.asarray(world, dtype=np.int64), (n_samples, n_reports))
        counts = shuffled_randomized_response(
            inputs,
            local_epsilon=actual.local_epsilon,
            num_buckets=k,
            accountant=accountant,
            keys={"run": np.arange(n_samples)},
            rng=np.random.default_rng(child),
        )
        samples.append(score_table[tuple(counts.T)])
    bound = estimate_epsilon_lower_bound(
        samples[0], samples[1], thresholds=thresholds, confidence=confidence, delta=delta
    )
    return ShuffleAudit(
        lower_bound=bound,
        upper_bound=shuffled_epsilon(declared.local_epsilon, n_reports, delta),
        exact_epsilon=exact_pair_epsilon(
            first, second, delta, local_epsilon=actual.local_epsilon, num_buckets=k
        ),
        local_epsilon=actual.local_epsilon,
        claimed_local_epsilon=declared.local_epsilon,
        n_reports=n_reports,
        num_buckets=k,
        inputs=tuple(first),
        neighbor_inputs=tuple(second),
        delta=delta,
        seed_entropy=int(root.entropy),
    )
