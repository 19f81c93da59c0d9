"""Coupled Monte-Carlo audits: run a mechanism in two neighboring worlds, then bound ε.

Tree audit
----------
:func:`audit_tree_counter` runs :class:`privacy.LaplaceTreeCounter` itself, vectorized
over samples, on the two streams of a reward-stream
:class:`~fedpriv.audit.engine.neighbors.NeighboringPair`
(:func:`~fedpriv.audit.engine.neighbors.stream_pair`; changed round ``t``, 0-based, is leaf
``tau = t + 1`` of the tree). Both worlds see the same stream but for the changed
round; only the privacy noise differs (each world and batch has its own NOISE stream). The adversary observes
the noisy prefix sums released at rounds ``1..R`` (``released_prefixes``, default
every round; Zhu et al.'s Fed_UCB sends and acts on ϑ̃(t−1) only, Algorithm 4 lines
18 and 8, so ``R = T − 1`` there) and post-processes them: node ``s`` is recovered
as ``P(s) - P(q(s))`` (``q(s) = s & (s-1)``, ``P(0) = 0``). Nodes that do not contain the changed round have the same
distribution in both worlds and are independent of the others, so the exact
log-likelihood ratio of the whole transcript is the Laplace LLR over the nodes
covering that round:

``LLR = sum_s (|y_s - S'_s| - |y_s - S_s|) / b``

(white-box: the scale ``b`` is the mechanism's declared one). The score is thresholded
on a predeclared grid and bounded by Clopper–Pearson with a Bonferroni correction
(:func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound`). The changed round
must lie in ``1..R``; the nodes after ``R`` reach no release and are not scored.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rng
from fedpriv.audit.engine.neighbors import NeighboringPair, stream_horizon
from fedpriv.audit.estimators import (
    EpsilonLowerBound,
    estimate_epsilon_lower_bound,
    laplace_threshold_grid,
)
from fedpriv.audit.estimators.result import AuditResult
from fedpriv.privacy import Accountant, LaplaceTreeCounter, event_epsilon
from fedpriv.privacy.accounting.events import LaplaceTree
from fedpriv.privacy.accounting.tree import nodes_covering
from fedpriv.privacy.checks import check_int_at_least, check_positive

__all__ = [
    "TreeAuditResult",
    "audit_tree_counter",
    "sample_tree_llr",
    "tree_nodes_result",
    "true_node_sums",
]

_DEFAULT_BATCH = 1 << 18


#: The result of a tree-counter audit is the audit's one result type, with
#: ``method`` ``"tree counter"`` (the full counter run round by round,
#: :func:`audit_tree_counter`), ``"tree nodes: joint"`` (one LLR event counted on whole
#: runs) or ``"tree nodes: product"`` (the LLR's top atom bounded factor by factor over
#: independent nodes, :mod:`fedpriv.audit.engine.tree_product`), and the details
#: ``accountant_epsilon`` (the accountant's ε for the counter's declared event),
#: ``horizon`` (``T``), ``t`` (the changed round, 0-based; the papers' round
#: ``t + 1``), ``n_nodes`` (released nodes covering it), ``scale`` and
#: ``released_prefixes`` (the prefixes ``1..R`` the adversary sees). This alias keeps
#: the older name readable.
TreeAuditResult = AuditResult


def true_node_sums(stream: np.ndarray, observed: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The noiseless sums of the binary-tree counter's ``nodes`` over ``stream``.

    Node ``n`` (1-based, as in the tree counter) sums the 0-based rounds
    ``n & (n - 1) .. n - 1``.

    Parameters
    ----------
    stream : ndarray of float64, shape (horizon,)
        The reward stream.
    observed : ndarray of bool, shape (horizon,)
        Which rounds enter the counter (the others count as 0).
    nodes : ndarray of int64, shape (m,)
        Node indices in ``1 .. horizon``.

    Returns
    -------
    ndarray of float64, shape (m,)
    """
    values = np.where(observed, stream, 0.0)
    prefix = np.concatenate([[0.0], np.cumsum(values)])
    return prefix[nodes] - prefix[nodes & (nodes - 1)]


def _laplace_loss_term(y: np.ndarray, s_d: float, s_dp: float) -> np.ndarray:
    """``|y - S'| - |y - S|``, computed so that it saturates at exactly ``±|S - S'|``.

    The naive difference of absolute values can round a saturated sample just below
    the maximum and so lose the optimal event {LLR = max} (threshold grids include the
    maximum exactly).
    """
    gap = abs(s_d - s_dp)
    term = np.clip(2.0 * y - s_d - s_dp, -gap, gap)
    return term if s_d > s_dp else -term


def sample_tree_llr(
    pair: NeighboringPair,
    *,
    world: int,
    scale: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    noise_on_empty_nodes: bool = False,
    batch_size: int = _DEFAULT_BATCH,
    released_prefixes: int | None = None,
) -> np.ndarray:
    """LLR scores of ``n_samples`` runs of the tree counter in world ``world`` (0 = D).

    The adversary sees the prefixes ``1..released_prefixes`` (default every round);
    the counter is opened (and charged) for those only.

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams (:func:`fedpriv.audit.engine.neighbors.stream_pair`).
    world : {0, 1}
        D or D'.
    scale : float
        Per-node Laplace scale, > 0.
    n_samples : int
        Runs, >= 1.
    seed : int or SeedSequence
        Root of the noise streams.
    noise_on_empty_nodes : bool
        Noise every node, not only those with observations.
    batch_size : int
        Runs per batch, >= 1.
    released_prefixes : int, optional
        ``R`` in ``[t + 1, horizon]``.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
        ``log p_D(y) / p_D'(y)`` of each run's released transcript.

    Raises
    ------
    ValueError
        If ``world`` is not 0 or 1, or ``scale``/``n_samples`` are out of range.
    """
    if world not in (0, 1):
        raise ValueError(f"`world` must be 0 (D) or 1 (D'), got {world!r}.")
    scale = check_positive("scale", scale)
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    root = as_seed_sequence(seed)
    horizon = stream_horizon(pair)
    tau = pair.t + 1  # the changed round's leaf in the tree's 1-based numbering
    stream_d, stream_dp, observed = pair.dataset, pair.dataset_prime, pair.observed
    released_prefixes = (
        horizon
        if released_prefixes is None
        else check_int_at_least("released_prefixes", released_prefixes, tau)
    )
    if released_prefixes > horizon:
        raise ValueError(
            f"`released_prefixes` must be <= the pair's horizon {horizon}, got {released_prefixes}."
        )
    stream = stream_d if world == 0 else stream_dp
    nodes = nodes_covering(tau, released_prefixes)
    wanted = {int(s) for s in nodes} | {int(s & (s - 1)) for s in nodes}
    wanted.discard(0)
    sums_d = true_node_sums(stream_d, observed, nodes)
    sums_d_prime = true_node_sums(stream_dp, observed, nodes)
    low = float(min(stream_d.min(), stream_dp.min()))
    high = float(max(stream_d.max(), stream_dp.max()))
    scores = np.empty(n_samples)
    accountant = Accountant(disjoint=("sample",), keep_draw_rows=False)
    for batch, start in enumerate(range(0, n_samples, batch_size)):
        size = min(batch_size, n_samples - start)
        counter = LaplaceTreeCounter(
            stream_shape=(size,),
            horizon=horizon,
            scale=scale,
            accountant=accountant,
            keys={"sample": np.arange(start, start + size)},
            rng=stream_rng(root, trial=batch, side=world, stream=Stream.NOISE),
            value_bounds=(low, high if high > low else low + 1.0),
            noise_on_empty_nodes=noise_on_empty_nodes,
            released_prefixes=released_prefixes,
        )
        released = {0: np.zeros(size)}
        ones = np.ones(size, dtype=bool)
        for t in range(horizon):  # prefix P(t + 1) is released after round t
            counter.step(np.full(size, stream[t]), ones if observed[t] else ~ones)
            if observed[t] and t + 1 <= released_prefixes:
                prefix = counter.release(ones)
                if t + 1 in wanted:
                    released[t + 1] = prefix
        total = np.zeros(size)
        for s, s_d, s_dp in zip(nodes, sums_d, sums_d_prime):
            before = int(s & (s - 1))
            if int(s) not in released or before not in released or s_d == s_dp:
                continue  # node not recoverable from the releases: skipping stays sound
            y = released[int(s)] - released[before]
            total += _laplace_loss_term(y, s_d, s_dp)
        scores[start : start + size] = total / scale
    return scores


def audit_tree_counter(
    pair: NeighboringPair,
    *,
    scale: float,
    claimed_epsilon: float,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    confidence: float = 0.95,
    noise_on_empty_nodes: bool = False,
    batch_size: int = _DEFAULT_BATCH,
    released_prefixes: int | None = None,
) -> TreeAuditResult:
    """Audit a Laplace tree counter of scale ``scale`` on a neighboring stream pair.

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams (:func:`fedpriv.audit.engine.neighbors.stream_pair`).
    scale : float
        Per-node Laplace scale, > 0.
    claimed_epsilon : float
        The ε the paper claims for this counter.
    n_samples : int
        Runs per world.
    seed : int or SeedSequence
        World D uses side 0 and D' side 1 of the NOISE streams.
    confidence : float
        Confidence level of the lower bound, in (0, 1).
    released_prefixes : int, optional
        The prefixes ``1..R`` the adversary sees (``t + 1 <= R <= T``; default
        ``T``); the accountant's ε is that of their nodes.

    Parameters
    ----------
    noise_on_empty_nodes : bool
        Noise every node, not only those with observations.
    batch_size : int
        Runs per batch, >= 1.

    Returns
    -------
    AuditResult
        ``method="tree counter"`` with the details of :data:`TreeAuditResult`.
    """
    started = time.perf_counter()
    root = as_seed_sequence(seed)
    claimed_epsilon = check_positive("claimed_epsilon", claimed_epsilon, allow_inf=True)
    scores = [
        sample_tree_llr(
            pair,
            world=world,
            scale=scale,
            n_samples=n_samples,
            seed=root,
            noise_on_empty_nodes=noise_on_empty_nodes,
            batch_size=batch_size,
            released_prefixes=released_prefixes,
        )
        for world in (0, 1)
    ]
    horizon = stream_horizon(pair)
    released = horizon if released_prefixes is None else int(released_prefixes)
    nodes = nodes_covering(pair.t + 1, released)
    gaps = np.abs(
        true_node_sums(pair.dataset, pair.observed, nodes)
        - true_node_sums(pair.dataset_prime, pair.observed, nodes)
    )
    max_llr = float(np.sum(gaps[gaps > 0])) / scale
    bound = estimate_epsilon_lower_bound(
        scores[0], scores[1], thresholds=laplace_threshold_grid(max_llr), confidence=confidence
    )
    sensitivity = float(np.max(np.abs(pair.dataset - pair.dataset_prime)))
    event = LaplaceTree(
        scale=scale, horizon=horizon, l1_sensitivity=sensitivity, released_prefixes=released
    )
    return AuditResult(
        method="tree counter",
        bound=bound,
        claimed_epsilon=claimed_epsilon,
        seconds=time.perf_counter() - started,
        accountant_epsilon=event_epsilon(event),
        horizon=horizon,
        t=pair.t,
        n_nodes=int(nodes.size),
        scale=float(scale),
        released_prefixes=released,
    )


def tree_nodes_result(
    pair: NeighboringPair,
    bounds: dict[str, EpsilonLowerBound],
    *,
    n_nodes: int,
    l1_sensitivity: float,
    scale: float,
    claimed_epsilon: float,
    confidence: float,
    released_prefixes: int,
    seconds: float,
) -> TreeAuditResult:
    """The result of :func:`~fedpriv.audit.engine.tree_nodes.audit_tree_nodes` from its
    audits' bounds: the stronger, at ``confidence``.

    Parameters
    ----------
    pair : NeighboringPair
        The audited pair.
    bounds : dict of str to EpsilonLowerBound
        ``"joint"`` and/or ``"product"``, each at its own share of the confidence.
    n_nodes : int
        Released nodes covering the changed round.
    l1_sensitivity : float
        The pair's per-node sensitivity.
    scale : float
        Per-node Laplace scale.
    claimed_epsilon : float
        The claimed ε.
    confidence : float
        The confidence the stronger bound is reported at (the union bound's).
    released_prefixes : int
        ``R``, checked.
    seconds : float
        Wall time to report.

    Returns
    -------
    TreeAuditResult
    """
    best = max(bounds, key=lambda name: bounds[name].epsilon_lower_bound)
    bound = dataclasses.replace(bounds[best], confidence=confidence)
    event = LaplaceTree(
        scale=scale,
        horizon=stream_horizon(pair),
        l1_sensitivity=l1_sensitivity,
        released_prefixes=released_prefixes,
    )
    return TreeAuditResult(
        method=f"tree nodes: {best}",
        bound=bound,
        claimed_epsilon=claimed_epsilon,
        seconds=seconds,
        accountant_epsilon=event_epsilon(event),
        horizon=stream_horizon(pair),
        t=pair.t,
        n_nodes=int(n_nodes),
        scale=float(scale),
        released_prefixes=released_prefixes,
    )
