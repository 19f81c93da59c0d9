"""Mechanism-level audit of a Laplace tree counter: only the nodes covering the record.

The binary-tree counter (:class:`fedpriv.privacy.LaplaceTreeCounter`) releases noisy
prefix sums ``P(t)``; node ``s`` (the sum of rounds ``q(s)+1 .. s``, ``q(s) = s & (s-1)``)
is ``P(s) - P(q(s))``, and ``P(t)`` is the sum of the nodes of ``t``'s dyadic
decomposition, so the transcript of prefix sums and the vector of noisy nodes are
functions of each other: auditing the nodes audits the transcript.

Why only the covering nodes are simulated
-----------------------------------------
A neighboring pair changes one round ``τ``. A node that does not cover ``τ`` has the
same true sum in D and D', and its noise is Laplace(b), drawn independently of every
other node's (the counter's declared event, :class:`fedpriv.privacy.accounting.events.LaplaceTree`):
its density factor is the same function in both worlds and cancels from the
likelihood ratio. The log-likelihood ratio of the whole transcript is therefore the
sum over the ``⌊log2 R⌋ + 1`` (at most) released nodes covering ``τ``, and those nodes are a
sufficient statistic for D against D': dropping the others loses no power. Dropping
them would be *sound* even if the node noises were not independent, because the
covering nodes are a post-processing of the transcript (a lower bound on an event of a
sub-transcript is a lower bound for the whole); independence is needed only for the
claim that nothing is lost. So T = 600 000 costs 20 Laplace draws per run, as T = 16
costs 5.

Released prefixes
-----------------
Only the nodes that reach a released prefix are audited: with the prefixes ``1..R``
released (``released_prefixes``; default every prefix, ``R = T``) those are the nodes
``1..R`` (:mod:`fedpriv.privacy.accounting.tree`), so the audit distinguishes the two worlds from
what the algorithm releases and never from a node it does not. Zhu et al.'s Fed_UCB
sends and acts on ϑ̃(t−1) only (Algorithm 4 lines 19 and 9): ``R = T − 1``, and round 1
sits in ``⌈log2 T⌉`` audited nodes.

What is audited
---------------
The node values are released through :func:`fedpriv.privacy.mechanisms.laplace_release`
(the library's Laplace mechanism, which charges its own accountant before drawing) at
the counter's scale and sensitivity, i.e. the mechanism the accountant prices. The
full counter, run round by round, is audited by
:func:`fedpriv.audit.engine.tree.audit_tree_counter`; this module is its fast,
mechanism-level counterpart for large horizons and sample counts (a test checks that
the two LLRs have one distribution). :func:`audit_laplace_release` is the same audit
for any vector of Laplace releases (one message of Li & Song, Fed_UCB's noised
initial pull).

Statistics
----------
The score is the white-box Laplace LLR
(:func:`fedpriv.audit.estimators.laplace_log_density_ratio`). One threshold ``c`` is
chosen from a grid fixed by the mechanism's parameters, before the confirming samples
exist (:mod:`fedpriv.audit.engine.thresholds`): by default from the declared Laplace law (the exact distribution of the LLR
under the claimed mechanism, convolved over the nodes: the event that a sample of
``n`` runs per world would bound best), or from a *pilot* sample at its own
SeedSequence addresses. *Fresh* samples then bound ``ε`` with Clopper–Pearson on the
single event ``{LLR >= c}`` (both directions, :func:`estimate_epsilon_lower_bound`).
The choice never sees the confirming samples, so the stated confidence is exact; a
wrong declared law could only cost power.

Two audits of the same nodes
----------------------------
The joint audit above must see its event happen, and with many nodes of a small
budget each every event of ratio near ``e^ε`` is rare (``2^-20`` per run for the top
atom at T = 600 000). :func:`audit_tree_nodes` therefore also runs the product audit
(:mod:`fedpriv.audit.engine.tree_product`), which bounds the same top atom node by
node, assuming the nodes' noises independent as the counter draws them, and reports
the stronger of the two at ``1 − α/2`` each (``method="both"``, the default;
``"joint"`` or ``"product"`` run one alone at ``1 − α``).

Length: the joint node audit, the Laplace release audit and the two helpers the grid
audit shares (:func:`audited_nodes`, :func:`check_released_prefixes`) read the one LLR
of the covering nodes; apart, each would restate it.
"""

from __future__ import annotations

import time

import numpy as np
from fedpriv.algorithms.seeding import as_seed_sequence, child_seed
from fedpriv.audit.engine.combine import half_confidence
from fedpriv.audit.engine.neighbors import NeighboringPair, stream_horizon
from fedpriv.audit.engine.thresholds import (
    design_threshold,
    laplace_llr_grid,
    pilot_probabilities,
    projected_bounds,
)
from fedpriv.audit.engine.tree import TreeAuditResult, tree_nodes_result, true_node_sums
from fedpriv.audit.engine.tree_product import (
    audit_laplace_product,
    laplace_release_batches,
    release_locations,
)
from fedpriv.audit.estimators import (
    EpsilonLowerBound,
    epsilon_lower_bound_from_counts,
    laplace_log_density_ratio,
)
from fedpriv.privacy.accounting.tree import nodes_covering
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive

__all__ = [
    "audit_laplace_release",
    "audit_tree_nodes",
    "audited_nodes",
    "check_released_prefixes",
    "covering_node_sums",
    "sample_laplace_llr",
    "tree_audit_event",
]

_DEFAULT_BATCH = 1 << 18
_METHODS = ("both", "joint", "product")


def covering_node_sums(
    pair: NeighboringPair, released_prefixes: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The released nodes covering round ``pair.t`` whose true sums differ, and those sums.

    Round ``t`` is leaf ``t + 1``. ``released_prefixes`` (default: the horizon): the
    prefixes ``1..R`` that reach an output; only nodes ``s <= R`` do (module docstring).

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams (:func:`fedpriv.audit.engine.neighbors.stream_pair`).
    released_prefixes : int, optional
        ``R``; default the pair's horizon.

    Returns
    -------
    nodes : ndarray of int64, shape (m,)
    sums_d, sums_d_prime : ndarray of float64, shape (m,)
        True node sums in D and D' (they differ in every column).
    """
    released = check_released_prefixes(pair, released_prefixes)
    if pair.t + 1 > released:
        empty = np.zeros(0)
        return np.zeros(0, dtype=np.int64), empty, empty
    nodes = nodes_covering(pair.t + 1, released)
    sums_d = true_node_sums(pair.dataset, pair.observed, nodes)
    sums_dp = true_node_sums(pair.dataset_prime, pair.observed, nodes)
    keep = sums_d != sums_dp
    return nodes[keep], sums_d[keep], sums_dp[keep]


def audited_nodes(
    pair: NeighboringPair, released: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """:func:`covering_node_sums` and the pair's sensitivity.

    Parameters
    ----------
    pair : NeighboringPair
    released : int
        The released prefixes ``1 .. released``, in ``1 .. horizon``.

    Returns
    -------
    tuple
        ``(nodes, sums_d, sums_dp, l1_sensitivity)``: the released nodes covering the
        changed round (int64), their sums in D and D', and the largest entry change.

    Raises
    ------
    ValueError
        When no released node covers the changed round (nothing to audit).
    """
    nodes, sums_d, sums_dp = covering_node_sums(pair, released)
    if nodes.size == 0:
        raise ValueError(
            f"no released node (prefixes 1..{released}) covers the changed "
            f"round t = {pair.t} (0-based): nothing to audit."
        )
    return nodes, sums_d, sums_dp, float(np.max(np.abs(pair.dataset - pair.dataset_prime)))


def check_released_prefixes(pair: NeighboringPair, released_prefixes: int | None) -> int:
    """``released_prefixes`` checked against the pair's horizon (default: every prefix).

    Parameters
    ----------
    pair : NeighboringPair
    released_prefixes : int or None
        In ``1 .. horizon``; None for all.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``released_prefixes`` is below 1 or above the pair's horizon.
    """
    horizon = stream_horizon(pair)
    if released_prefixes is None:
        return horizon
    released = check_int_at_least("released_prefixes", released_prefixes, 1)
    if released > horizon:
        raise ValueError(
            f"`released_prefixes` must be <= the pair's horizon {horizon}, got {released}."
        )
    return released


def sample_laplace_llr(
    loc_d: object,
    loc_d_prime: object,
    *,
    world: int,
    scale: float,
    l1_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    batch_size: int = _DEFAULT_BATCH,
) -> np.ndarray:
    """White-box LLR ``ln p_D(y)/p_D'(y)`` of ``n_samples`` Laplace releases of ``loc``.

    Each run releases every coordinate of ``loc_d`` (world 0) or ``loc_d_prime``
    (world 1) with independent ``Lap(scale)`` noise through
    :func:`fedpriv.privacy.mechanisms.laplace_release`, charged to the run's own
    ``"sample"`` cell. Batch ``b`` of world ``w`` draws from ``stream_rng(seed,
    trial=b, side=w, stream=NOISE)`` (fixed addresses).

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True released values in D and D', differing in every coordinate.
    world : {0, 1}
    scale : float
        Laplace scale ``b`` > 0.
    l1_sensitivity : float
        Declared sensitivity of one coordinate (charged to the accountant), > 0.
    n_samples, batch_size : int
        Runs, >= 1; runs drawn at once (memory ``batch_size × m`` floats).
    seed : int or SeedSequence

    Returns
    -------
    ndarray of float64, shape (n_samples,)

    Raises
    ------
    ValueError
        If ``world`` is not 0 or 1, the locations are malformed, or a count,
        ``scale`` or ``l1_sensitivity`` is out of range.
    """
    batches = laplace_release_batches(
        loc_d,
        loc_d_prime,
        world=world,
        scale=scale,
        l1_sensitivity=l1_sensitivity,
        n_samples=n_samples,
        seed=seed,
        batch_size=batch_size,
    )
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    llr = laplace_log_density_ratio(loc_d, loc_d_prime, scale)
    scores = np.empty(int(n_samples))
    for start, y in batches:
        scores[start : start + y.shape[0]] = llr(y)
    return scores


def audit_laplace_release(
    loc_d: object,
    loc_d_prime: object,
    *,
    scale: float,
    l1_sensitivity: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    pilot_samples: int | None = None,
    confidence: float = 0.95,
    batch_size: int = _DEFAULT_BATCH,
) -> EpsilonLowerBound:
    """White-box ε lower bound of one Laplace release of ``m`` values (module docstring).

    Parameters
    ----------
    loc_d, loc_d_prime : array_like of float, shape (m,)
        True released values in D and D', differing in every coordinate.
    scale, l1_sensitivity : float
        Laplace scale ``b`` and declared per-coordinate sensitivity, > 0.
    n_samples : int
        Fresh confirming runs per world, >= 1.
    seed : int or SeedSequence
        Pilot world ``w`` draws at ``child_seed(seed, 0, w)``, confirmation at
        ``child_seed(seed, 1, w)``.
    pilot_samples : int, optional
        0 or None (default): the threshold is chosen from the declared Laplace law
        before any sample is drawn (:func:`~fedpriv.audit.engine.thresholds.design_threshold`). Otherwise, runs per
        world of a pilot that chooses it (for a caller who will not use the declared
        law even to pick the event).
    confidence : float
        Confidence of the bound, in (0, 1).
    batch_size : int
        Runs drawn at once.

    Returns
    -------
    EpsilonLowerBound
        The Clopper–Pearson bound of the one chosen event ``{LLR >= c}`` (``n_tests``
        = 2, both directions).

    Raises
    ------
    ValueError
        If the locations are malformed or a count, ``scale``, ``l1_sensitivity`` or
        ``confidence`` is out of range.
    """
    loc_d, loc_d_prime = release_locations(loc_d, loc_d_prime)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    pilot = check_int_at_least("pilot_samples", pilot_samples or 0, 0)
    confidence = check_open_unit("confidence", confidence)
    scale = check_positive("scale", scale)
    root = as_seed_sequence(seed)

    def draw(stage: int, world: int, n: int) -> np.ndarray:
        return sample_laplace_llr(
            loc_d,
            loc_d_prime,
            world=world,
            scale=scale,
            l1_sensitivity=l1_sensitivity,
            n_samples=n,
            seed=child_seed(root, stage, world),
            batch_size=batch_size,
        )

    if pilot:
        grid = laplace_llr_grid(loc_d, loc_d_prime, scale)
        p_d, p_dp = pilot_probabilities(draw(0, 0, pilot), draw(0, 1, pilot), grid)
        projected = projected_bounds(p_d, p_dp, n_confirm=n_samples, confidence=confidence)
        threshold = grid[int(np.argmax(projected))]
    else:
        threshold = design_threshold(
            loc_d, loc_d_prime, scale=scale, n_samples=n_samples, confidence=confidence
        )

    def count(world: int) -> np.ndarray:
        """Confirming runs of ``world`` whose LLR is >= the threshold, batch by batch."""
        llr = laplace_log_density_ratio(loc_d, loc_d_prime, scale)
        hits = 0
        for _, y in laplace_release_batches(
            loc_d,
            loc_d_prime,
            world=world,
            scale=scale,
            l1_sensitivity=l1_sensitivity,
            n_samples=n_samples,
            seed=child_seed(root, 1, world),
            batch_size=batch_size,
        ):
            scores = llr(y)
            if not np.all(np.isfinite(scores)):
                raise ValueError("the LLR scores must be finite.")
            hits += int(np.count_nonzero(scores >= threshold))
        return np.array([hits], dtype=np.int64)

    # The counts :func:`estimate_epsilon_lower_bound` takes from the sorted scores of
    # ``draw(1, w, n_samples)`` (the same runs), without keeping or sorting them.
    return epsilon_lower_bound_from_counts(
        count(0),
        n_samples,
        count(1),
        n_samples,
        thresholds=np.array([threshold], dtype=np.float64),
        confidence=confidence,
    )


def audit_tree_nodes(
    pair: NeighboringPair,
    *,
    scale: float,
    claimed_epsilon: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    pilot_samples: int | None = None,
    confidence: float = 0.95,
    batch_size: int = _DEFAULT_BATCH,
    method: str = "both",
    product_samples: int | None = None,
    released_prefixes: int | None = None,
) -> TreeAuditResult:
    """White-box audit of the released tree nodes covering the changed round (module docstring).

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams (:func:`fedpriv.audit.engine.neighbors.stream_pair`).
    scale : float
        Per-node Laplace scale ``b`` > 0.
    claimed_epsilon : float
        The ε claimed for the counter (> 0, may be inf).
    n_samples, seed, pilot_samples, confidence, batch_size
        As in :func:`audit_laplace_release` (the joint audit).
    method : {"both", "joint", "product"}
        ``"joint"``: :func:`audit_laplace_release` at ``confidence``. ``"product"``:
        :func:`fedpriv.audit.engine.tree_product.audit_laplace_product` at
        ``confidence`` (assumes independent node noises; see that module). ``"both"``
        (default): each at ``1 − (1 − confidence)/2`` on its own samples (the joint one
        at ``seed``, the product one at ``child_seed(seed, 2)``), the stronger reported
        at ``confidence`` (union bound, :mod:`fedpriv.audit.engine.combine`).
    product_samples : int, optional
        Runs per world of the product audit, >= 1; ``n_samples`` when None.
    released_prefixes : int, optional
        How many prefixes ``1..R`` the algorithm releases (``1 <= R <= T``; default
        ``T``). Only the nodes ``1..R`` are audited and the accountant's ε is that of
        ``LaplaceTree(..., released_prefixes=R)``; Fed_UCB's view is ``R = T − 1``
        (Zhu et al. Algorithm 4 lines 9 and 19).

    Returns
    -------
    TreeAuditResult
        ``seconds`` covers the choice of the event and the confirmation; ``method``
        names the audit whose bound is reported.

    Raises
    ------
    ValueError
        If a count, ``scale``, ``claimed_epsilon``, ``confidence``, ``method`` or
        ``released_prefixes`` is out of range, or no released node covers the changed
        round.
    """
    started = time.perf_counter()
    released = check_released_prefixes(pair, released_prefixes)
    claimed_epsilon = check_positive("claimed_epsilon", claimed_epsilon, allow_inf=True)
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {_METHODS}, got {method!r}.")
    confidence = check_open_unit("confidence", confidence)
    n_product = check_int_at_least(
        "product_samples", n_samples if product_samples is None else product_samples, 1
    )
    _, sums_d, sums_dp, sensitivity = audited_nodes(pair, released)
    each = confidence if method != "both" else half_confidence(confidence)
    bounds: dict[str, EpsilonLowerBound] = {}
    if method in ("both", "joint"):
        bounds["joint"] = audit_laplace_release(
            sums_d,
            sums_dp,
            scale=scale,
            l1_sensitivity=sensitivity,
            n_samples=n_samples,
            seed=seed,
            pilot_samples=pilot_samples,
            confidence=each,
            batch_size=batch_size,
        )
    if method in ("both", "product"):
        bounds["product"] = audit_laplace_product(
            sums_d,
            sums_dp,
            scale=scale,
            l1_sensitivity=sensitivity,
            n_samples=n_product,
            seed=child_seed(seed, 2),
            confidence=each,
            batch_size=batch_size,
        )
    return tree_nodes_result(
        pair,
        bounds,
        n_nodes=int(sums_d.size),
        l1_sensitivity=sensitivity,
        scale=scale,
        claimed_epsilon=claimed_epsilon,
        confidence=confidence,
        released_prefixes=released,
        seconds=time.perf_counter() - started,
    )


def tree_audit_event(result: TreeAuditResult) -> str:
    """One line naming the event and audit behind ``result.bound`` (for reports).

    Parameters
    ----------
    result : TreeAuditResult
        A tree audit.

    Returns
    -------
    str

    Examples
    --------
    >>> from fedpriv.audit.engine.neighbors import worst_case_reward_pair
    >>> r = audit_tree_nodes(worst_case_reward_pair(16), scale=5.0, claimed_epsilon=1.0,
    ...                      n_samples=2000, seed=0, method="product")
    >>> print(tree_audit_event(r)[:58])
    product audit: the Laplace LLR's top atom over the 5 nodes
    """
    nodes = f"the {result.n_nodes} nodes covering round {result.t + 1}"  # papers' 1-based τ
    if result.released_prefixes < result.horizon:
        nodes += f" among those of the released prefixes 1..{result.released_prefixes}"
    if result.method == "tree nodes: product":
        return (
            f"product audit: the Laplace LLR's top atom over {nodes} (every node on D's "
            "side), bounded node by node over independent nodes "
            f"({result.bound.n_samples:,} runs/world)"
        )
    threshold = result.bound.threshold
    return (
        f"joint audit: Laplace LLR over {nodes} >= {threshold:.4g} "
        f"({result.bound.n_samples:,} runs/world)"
    )
