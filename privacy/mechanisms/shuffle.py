"""Shuffled k-ary randomized response: the sampler and its exact output distribution.

Every reporter applies ε₀ k-ary randomized response to its input in ``{0, ..., k-1}``
(keeps it with probability ``e^{ε₀}/(e^{ε₀} + k - 1)``, otherwise reports one of the
other ``k - 1`` values uniformly), and a trusted shuffler releases the reports in a
uniformly random order. A shuffled list of values from ``{0, ..., k-1}`` carries
exactly its count vector (how many reports took each value), so the released view is
the count vector, shape ``(k,)``, summing to ``n``.

- :func:`shuffled_randomized_response` draws the view for a batch of runs, charging
  the accountant one :class:`~fedpriv.privacy.accounting.shuffling.Shuffled` event per
  run before it draws (the only way an algorithm or an audit gets such a view).
- :func:`shuffled_randomized_response_log_pmf` is the exact log pmf of the view on
  one dataset (independent reports: a convolution of categorical distributions,
  computed reporter by reporter in log space), and
  :func:`shuffled_randomized_response_delta` the exact hockey-stick divergence
  ``δ(ε) = Σ_x (P(x) - e^ε Q(x))_+`` between two datasets: the independent reference
  the amplification bound of :mod:`fedpriv.privacy.accounting.shuffling` is tested
  against (it must be at least this for every ε₀-LDP randomizer and every pair).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.shuffling import Shuffled
from fedpriv.privacy.checks import check_int_at_least
from fedpriv.privacy.ledger.accountant import Accountant
from scipy import special

__all__ = [
    "MAX_EXACT_STATES",
    "shuffled_randomized_response",
    "shuffled_randomized_response_delta",
    "shuffled_randomized_response_log_pmf",
]

#: Largest ``(n + 1)^k`` count-vector grid of the exact pmf (about 0.5 s per dataset).
MAX_EXACT_STATES = 2_000_000


def _check_inputs(inputs: object, num_buckets: int) -> np.ndarray:
    """Integer inputs in [0, num_buckets), at least one reporter per run."""
    array = np.asarray(inputs)
    if array.dtype == np.bool_ or array.dtype.kind not in "iu":
        raise TypeError(f"`inputs` must be an integer array, got dtype {array.dtype}.")
    if array.ndim < 1 or array.shape[-1] < 1:
        raise ValueError(f"`inputs` must have a last axis of >= 1 reporters, got {array.shape}.")
    if array.size and (array.min() < 0 or array.max() >= num_buckets):
        raise ValueError(
            f"`inputs` must lie in [0, num_buckets - 1] = [0, {num_buckets - 1}], got "
            f"values in [{array.min()}, {array.max()}]."
        )
    return array.astype(np.int64)


def _run_keys(keys: Mapping[str, Any], n_runs: int) -> dict[str, np.ndarray]:
    """One label per run for every level: each value broadcast to ``(n_runs,)``."""
    if not isinstance(keys, Mapping):
        raise TypeError(f"`keys` must be a mapping of level -> labels, got {type(keys).__name__}.")
    try:
        return {
            level: np.broadcast_to(np.asarray(v), (n_runs,)).copy() for level, v in keys.items()
        }
    except ValueError:
        raise ValueError(f"every key array must broadcast to (n_runs,) = ({n_runs},).") from None


def _check_local(local_epsilon: object, num_buckets: object) -> tuple[float, int]:
    """ε₀ in the range of :class:`Shuffled` and k >= 2."""
    k = check_int_at_least("num_buckets", num_buckets, 2)
    epsilon = Shuffled(local_epsilon=local_epsilon, n_reports=1).local_epsilon
    return epsilon, k


def shuffled_randomized_response(
    inputs: object,
    *,
    local_epsilon: float,
    num_buckets: int = 2,
    accountant: Accountant,
    keys: Mapping[str, Any],
    rng: np.random.Generator,
) -> np.ndarray:
    """Release the shuffled k-ary randomized responses of a batch of runs.

    Parameters
    ----------
    inputs : array_like of int, shape (n_runs, n_reports)
        Each row one run's reporter inputs, in ``[0, num_buckets)``.
    local_epsilon : float
        ε₀ of each reporter's randomized response, nats, in (0, 700].
    num_buckets : int, default 2
        Number of values ``k``, >= 2.
    accountant : Accountant
        Charged ``Shuffled(local_epsilon, n_reports)`` once per run before anything is
        drawn.
    keys : mapping of str to label or array_like
        One label per declared level of ``accountant``, each a scalar or an array
        broadcast to ``(n_runs,)``.
    rng : numpy.random.Generator
        The runs' privacy-noise stream.

    Returns
    -------
    ndarray of int64, shape (n_runs, num_buckets)
        The count vector of each run's shuffled reports (row sums ``n_reports``).

    Raises
    ------
    TypeError
        If ``inputs`` is not an integer array or ``rng`` not a Generator.
    ValueError
        If an argument is out of range, or the keys do not fit ``(n_runs,)``.
    BudgetExceededError
        If the charge would exceed the accountant's budget (nothing is drawn).

    Examples
    --------
    >>> from fedpriv.privacy import Accountant
    >>> accountant = Accountant(neighboring_relation="replace_one", disjoint=("run",))
    >>> counts = shuffled_randomized_response(
    ...     np.zeros((3, 5), dtype=int), local_epsilon=1.0, accountant=accountant,
    ...     keys={"run": np.arange(3)}, rng=np.random.default_rng(0))
    >>> counts.shape, counts.sum(axis=1).tolist()
    ((3, 2), [5, 5, 5])
    """
    epsilon, k = _check_local(local_epsilon, num_buckets)
    values = _check_inputs(inputs, k)
    if values.ndim != 2:
        raise ValueError(f"`inputs` must have shape (n_runs, n_reports), got {values.shape}.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}.")
    n_runs, n_reports = values.shape
    event = Shuffled(local_epsilon=epsilon, n_reports=n_reports)
    accountant.spend(event, key=_run_keys(keys, n_runs))
    keep = rng.random(values.shape) < 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    other = (values + 1 + rng.integers(0, k - 1, size=values.shape)) % k
    reports = np.where(keep, values, other)
    # The multiset of a shuffled list: its count vector (the order carries nothing).
    return (reports[..., None] == np.arange(k)).sum(axis=1, dtype=np.int64)


def shuffled_randomized_response_log_pmf(
    inputs: object, *, local_epsilon: float, num_buckets: int = 2
) -> np.ndarray:
    """Exact log pmf of the count vector of shuffled k-ary randomized responses.

    Reports are independent, so the pmf is the convolution of one categorical
    distribution per reporter, accumulated reporter by reporter in log space
    (``logaddexp`` of shifted grids; no subtraction, so every entry has relative
    error of order ``n`` ulps).

    Parameters
    ----------
    inputs : array_like of int, shape (n_reports,)
        The dataset: each reporter's input in ``[0, num_buckets)``.
    local_epsilon : float
        ε₀, nats, in (0, 700].
    num_buckets : int, default 2
        ``k``, >= 2.

    Returns
    -------
    ndarray of float64, shape (n_reports + 1,) * num_buckets
        ``log P(counts = x)`` indexed by the count vector ``x``; ``-inf`` off the
        simplex ``Σ x = n_reports``.

    Raises
    ------
    TypeError
        If ``inputs`` is not an integer array.
    ValueError
        If an argument is out of range or the grid has more than
        :data:`MAX_EXACT_STATES` entries.

    Examples
    --------
    >>> log_pmf = shuffled_randomized_response_log_pmf([0, 1], local_epsilon=1.0)
    >>> round(float(np.exp(log_pmf[1, 1])), 6)  # one 0 and one 1 reported
    0.606776
    """
    epsilon, k = _check_local(local_epsilon, num_buckets)
    values = _check_inputs(inputs, k)
    if values.ndim != 1:
        raise ValueError(f"`inputs` must have shape (n_reports,), got {values.shape}.")
    n = values.size
    if (n + 1) ** k > MAX_EXACT_STATES:
        raise ValueError(
            f"(n_reports + 1) ** num_buckets must be <= MAX_EXACT_STATES = "
            f"{MAX_EXACT_STATES:,}, got ({n} + 1) ** {k}."
        )
    log_keep = -math.log1p((k - 1) * math.exp(-epsilon))  # log e^ε/(e^ε + k - 1)
    log_move = -epsilon + log_keep  # log 1/(e^ε + k - 1)
    log_pmf = np.full((n + 1,) * k, -np.inf)
    log_pmf[(0,) * k] = 0.0
    for value in values:
        terms = []
        for j in range(k):
            shifted = np.full_like(log_pmf, -np.inf)
            index = [slice(None)] * k
            source = [slice(None)] * k
            index[j], source[j] = slice(1, None), slice(0, -1)
            shifted[tuple(index)] = log_pmf[tuple(source)]
            terms.append(shifted + (log_keep if j == value else log_move))
        log_pmf = special.logsumexp(np.stack(terms), axis=0)
    return log_pmf


def shuffled_randomized_response_delta(
    inputs: object,
    neighbor_inputs: object,
    epsilon: object,
    *,
    local_epsilon: float,
    num_buckets: int = 2,
) -> np.ndarray:
    """Exact ``δ(ε) = Σ_x (P(x) - e^ε Q(x))_+`` of the shuffled view on a pair.

    ``P`` is the count vector's law on ``inputs``, ``Q`` on ``neighbor_inputs``
    (:func:`shuffled_randomized_response_log_pmf`); each term is evaluated as
    ``P(x) · (-expm1(ε - log P(x) + log Q(x)))`` where positive, without the
    cancellation of a difference.

    Parameters
    ----------
    inputs, neighbor_inputs : array_like of int, shape (n_reports,)
        The two datasets (neighbors differ in one reporter's input).
    epsilon : array_like of float
        Central ε values, nats, >= 0, any shape.
    local_epsilon : float
        ε₀, nats, in (0, 700].
    num_buckets : int, default 2
        ``k``, >= 2.

    Returns
    -------
    ndarray of float64, shape of ``epsilon``
        δ in [0, 1] at each ε (one direction: ``P`` against ``Q``; swap the datasets
        for the other).

    Raises
    ------
    TypeError
        If an input is not an integer array.
    ValueError
        If an argument is out of range, or the datasets' lengths differ.

    Examples
    --------
    One reporter is ε₀ randomized response: ``δ(ε) = (e^{ε₀} - e^ε)/(e^{ε₀} + 1)``.

    >>> float(shuffled_randomized_response_delta([0], [1], 0.0, local_epsilon=1.0)
    ...       ).__round__(6) == round((math.e - 1) / (math.e + 1), 6)
    True
    """
    log_p = shuffled_randomized_response_log_pmf(
        inputs, local_epsilon=local_epsilon, num_buckets=num_buckets
    )
    log_q = shuffled_randomized_response_log_pmf(
        neighbor_inputs, local_epsilon=local_epsilon, num_buckets=num_buckets
    )
    if log_p.shape != log_q.shape:
        raise ValueError("`inputs` and `neighbor_inputs` must have the same length.")
    grid = np.asarray(epsilon, dtype=np.float64)
    if not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError("`epsilon` must be finite and >= 0.")
    support = np.isfinite(log_p)
    lp, lq = log_p[support], log_q[support]
    with np.errstate(invalid="ignore"):
        loss = lp - lq  # +inf where Q has no mass
    flat = grid.reshape(-1, 1)
    gap = flat - loss[None, :]
    terms = np.where(gap < 0, np.exp(lp)[None, :] * -np.expm1(np.minimum(gap, 0.0)), 0.0)
    return np.minimum(terms.sum(axis=1), 1.0).reshape(grid.shape)
