"""Tree-node audits of one pair at several noise scales, on common random numbers.

A grid of claims about one Laplace tree counter (several ε, log bases or calibrations
at one horizon) audits the *same* released nodes at different per-node scales ``b``.
:func:`fedpriv.audit.engine.tree_nodes.audit_tree_nodes` run once per scale draws its
own Laplace noise each time, and those draws are most of its cost. This module runs
the whole grid on one set of draws.

Why the results are those of ``audit_tree_nodes``
-------------------------------------------------
NumPy draws ``Lap(0, b)`` as ``0 ± b·ln(2U)`` (or ``ln(2 − 2U)``) from one uniform
``U``, so ``b`` times the ``Lap(0, 1)`` draw from the same generator state is the
``Lap(0, b)`` draw, bit for bit. The noise is therefore drawn once, at scale 1,
through :func:`fedpriv.privacy.mechanisms.laplace_noise` (``laplace_release`` of a zero
statistic, bit for bit, without adding the zeros; charged to each run's own
``"sample"`` cell, as the single audit does) at exactly the stream addresses
``audit_tree_nodes(..., seed=seed)`` uses, and each scale's release is ``S + b·N``.
Every scale's joint and product counts, and so its bounds, are exactly those of
``audit_tree_nodes(pair, scale=b, seed=seed, ...)`` (a test checks it bit for bit);
only the draws are shared. Each scale's bound therefore keeps its own guarantee at its
confidence. Scoring takes fewer passes than the single audit and decides identically:
the joint LLR folds the doubling and the node's sign into per-node constants (exact
operations; :func:`_joint_terms`), the same values up to the sign of a zero, and the
product audit compares each draw with a per-node cut found by bisection over the
doubles (:func:`_product_cuts`), since its release ``S + b·N`` rounds monotonically in
``N``. Tests check both against the direct computation, and every scale's result
against the single audit, bit for bit. The bounds of different scales are computed from the same draws, so they
are dependent: each holds marginally, not jointly with the others.

Work
----
:func:`grid_parts` splits the grid into independent parts (one per audit, joint or
product, and world), each a picklable dict for an executor; :func:`part_counts` runs
one; :func:`grid_results` turns the parts' counts into one
:class:`~fedpriv.audit.engine.tree.TreeAuditResult` per scale. Counts add, and each
part draws at fixed addresses, so the results do not depend on how many workers ran
the parts. :func:`audit_tree_nodes_grid` does the three steps in this process.

Length: the grid's parts and results with their exact scoring helpers (the pairwise
row sum, the folded LLR terms and the product cuts with their bisection) are one
argument about one set of draws and stay together.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng
from fedpriv.audit.engine.combine import half_confidence
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.audit.engine.thresholds import design_threshold
from fedpriv.audit.engine.tree import TreeAuditResult, tree_nodes_result
from fedpriv.audit.engine.tree_nodes import audited_nodes, check_released_prefixes
from fedpriv.audit.engine.tree_product import product_bound
from fedpriv.audit.estimators import epsilon_lower_bound_from_counts
from fedpriv.privacy import Accountant
from fedpriv.privacy.checks import check_int_at_least, check_open_unit, check_positive
from fedpriv.privacy.mechanisms import laplace_noise

__all__ = ["audit_tree_nodes_grid", "grid_parts", "grid_results", "part_counts"]

_DEFAULT_BATCH = 1 << 18
#: Runs per block when a batch is scored scale by scale (cache-sized blocks; the
#: LLR of a run does not depend on the block it is computed in).
_BLOCK = 1 << 13


def grid_parts(
    pair: NeighboringPair,
    *,
    scales: Sequence[float],
    n_samples: int,
    seed: int | np.random.SeedSequence,
    confidence: float = 0.95,
    product_samples: int | None = None,
    released_prefixes: int | None = None,
    batch_size: int = _DEFAULT_BATCH,
) -> list[dict]:
    """The independent parts of the grid's audits (module docstring), in a fixed order.

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams.
    scales : sequence of float
        Per-node Laplace scales, each > 0; repeats are audited once.
    n_samples : int
        Runs per world of the joint audit, >= 1.
    seed : int or SeedSequence
        The seed ``audit_tree_nodes`` would be given for every scale.
    confidence : float
        Confidence of each scale's reported bound, in (0, 1) (each audit at half the
        miss probability, as ``method="both"``).
    product_samples : int, optional
        Runs per world of the product audit; ``n_samples`` when None.
    released_prefixes : int, optional
        ``R`` (default the horizon).
    batch_size : int
        Runs per draw (the stream addresses depend on it, as in ``audit_tree_nodes``).

    Returns
    -------
    list of dict
        Four parts: joint D, joint D', product D, product D'.

    Raises
    ------
    ValueError
        If a scale, count or ``confidence`` is out of range, or no released node covers
        the changed round.
    """
    released = check_released_prefixes(pair, released_prefixes)
    unique = _unique_scales(scales)
    n_joint = check_int_at_least("n_samples", n_samples, 1)
    n_product = check_int_at_least(
        "product_samples", n_samples if product_samples is None else product_samples, 1
    )
    confidence = check_open_unit("confidence", confidence)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    _, sums_d, sums_dp, sensitivity = audited_nodes(pair, released)
    each = half_confidence(confidence)
    thresholds = [
        design_threshold(sums_d, sums_dp, scale=b, n_samples=n_joint, confidence=each)
        for b in unique
    ]
    root = as_seed_sequence(seed)
    common = {
        "loc_d": sums_d,
        "loc_d_prime": sums_dp,
        "scales": unique,
        "l1_sensitivity": sensitivity,
        "batch_size": batch_size,
    }
    parts = []
    for stage, n, thresholds_or_none in (
        ("joint", n_joint, thresholds),
        ("product", n_product, None),
    ):
        for world in (0, 1):
            # The addresses of audit_laplace_release (child_seed(seed, 1, w)) and of
            # audit_laplace_product (child_seed(seed, 2)), both with side = world.
            stream_root = child_seed(root, 1, world) if stage == "joint" else child_seed(root, 2)
            parts.append(
                {
                    **common,
                    "stage": stage,
                    "world": world,
                    "n_samples": n,
                    "thresholds": thresholds_or_none,
                    "seed": stream_root,
                }
            )
    return parts


def _unique_scales(scales: Sequence[float]) -> list[float]:
    checked = [check_positive("scale", b) for b in scales]
    if not checked:
        raise ValueError("`scales` must name at least one scale.")
    return sorted(set(checked))


def part_counts(part: dict) -> dict:
    """Run one part of :func:`grid_parts`: its draws and every scale's counts.

    Parameters
    ----------
    part : dict
        One element of :func:`grid_parts`.

    Returns
    -------
    dict
        ``{"counts": ndarray (n_scales,)}`` for a joint part (runs with the LLR at
        least the scale's threshold); ``{"counts": ndarray (n_scales, m), "joints":
        ndarray (n_scales,)}`` for a product part (runs with each node, and with every
        node, on D's side); plus ``"seconds"``.
    """
    started = time.perf_counter()
    loc_d, loc_d_prime = part["loc_d"], part["loc_d_prime"]
    released = loc_d if part["world"] == 0 else loc_d_prime
    scales = part["scales"]
    n_samples, batch_size, m = part["n_samples"], part["batch_size"], loc_d.size
    below = loc_d < loc_d_prime
    if part["stage"] == "joint":
        counts = np.zeros(len(scales), dtype=np.int64)
        joint_terms = [_joint_terms(released, loc_d, loc_d_prime, b) for b in scales]
    else:
        counts = np.zeros((len(scales), m), dtype=np.int64)
        joints = np.zeros(len(scales), dtype=np.int64)
        flip = np.where(below, 1.0, -1.0)
        cuts = [_product_cuts(released, loc_d, below, b) for b in scales]
    for batch, start in enumerate(range(0, n_samples, batch_size)):
        size = min(batch_size, n_samples - start)
        # Lap(1) through the library's mechanism at the single audit's address: times
        # b it is that audit's Lap(b) draw bit for bit (module docstring). laplace_noise
        # is laplace_release of zeros bit for bit, charged alike, without the zeros.
        noise = laplace_noise(
            (size, m),
            scale=1.0,
            l1_sensitivity=part["l1_sensitivity"],
            accountant=Accountant(disjoint=("sample",), keep_draw_rows=False),
            keys={"sample": np.arange(start, start + size)[:, None]},
            rng=stream_rng(part["seed"], trial=batch, side=part["world"], stream=Stream.NOISE),
        )
        for lo in range(0, size, _BLOCK):
            # Node-major copy of the block: every operation below is the single audit's
            # (or, for the product audit, decides as it does), element by element, on
            # long contiguous rows.
            block = np.ascontiguousarray(noise[lo : lo + _BLOCK].T)
            if part["stage"] == "joint":
                y = np.empty_like(block)
                for i, terms in enumerate(joint_terms):
                    llr = _laplace_llr(block, terms, y)
                    counts[i] += np.count_nonzero(llr >= part["thresholds"][i])
            else:
                block *= flip[:, None]  # exact: N >= c  <=>  -N <= -c
                for i, cut in enumerate(cuts):
                    inside = block <= cut[:, None]
                    counts[i] += inside.sum(axis=1)
                    joints[i] += np.count_nonzero(inside.all(axis=0))
    out = {"counts": counts, "seconds": time.perf_counter() - started}
    if part["stage"] == "product":
        out["joints"] = joints
    return out


def _joint_terms(
    released: np.ndarray, a: np.ndarray, b: np.ndarray, scale: float
) -> tuple[np.ndarray, ...]:
    """Per-node constants of :func:`_laplace_llr` at node scale ``scale``, each (m, 1).

    The single audit scores a release ``y = S + b·N`` with the Laplace LLR of
    :func:`fedpriv.audit.estimators.laplace_log_density_ratio`: per node
    ``sign(g)·clip(2y − a − b, −|g|, |g|)`` with ``g = a − b``, the terms added in
    ``ndarray.sum`` order and divided by ``scale``. Doubling and negating a double are
    exact and commute with round-to-nearest (no value here is subnormal: ``|N|`` is 0
    or above 10⁻¹⁶, ``S``, ``a``, ``b`` are sums of rewards), and the clip is symmetric,
    so the term equals ``clip(((N·(2 scale s) + 2 s S) − s a) − s b, −|g|, |g|)`` with
    ``s = sign(g)``, except that a term of 0 may carry the other sign of zero, which no
    sum's comparison with a threshold sees. These are the constants
    ``(2 scale s, 2 s S, s a, s b, |g|, scale)``.
    """
    gap = a - b
    sign = np.sign(gap)
    col = [
        ((2.0 * scale) * sign)[:, None],
        (2.0 * released * sign)[:, None],
        (sign * a)[:, None],
        (sign * b)[:, None],
        np.abs(gap)[:, None],
    ]
    return (*col, scale)


def _laplace_llr(noise: np.ndarray, terms: tuple, y: np.ndarray) -> np.ndarray:
    """The single audit's Laplace LLR of the releases ``S + scale·N`` of the runs in the
    columns of ``noise`` (``N``, shape (m, n)), up to the sign of a zero; ``y`` (same
    shape) is overwritten. ``terms`` is :func:`_joint_terms`; the terms of a run are
    added in the order in which ``ndarray.sum(axis=1)`` adds a contiguous row
    (:func:`_row_sums`), and the sum is divided by ``scale``."""
    mult, add, sa, sb, bound, scale = terms
    np.multiply(noise, mult, out=y)
    y += add
    y -= sa
    y -= sb
    np.maximum(y, -bound, out=y)
    np.minimum(y, bound, out=y)
    llr = _row_sums(y)
    llr /= scale
    return llr


def _product_cuts(
    released: np.ndarray, loc_d: np.ndarray, below: np.ndarray, scale: float
) -> np.ndarray:
    """Per-node cuts of the product audit at node scale ``scale``, shape (m,).

    The single audit counts a node on D's side when its release ``y = S + scale·N``
    (NumPy's multiply, then add) is ``<= loc_d`` (``below``) or ``>= loc_d`` (else).
    Both roundings are non-decreasing in ``N``, so the first is ``N <= c`` for ``c``
    the largest double it holds at (bisection over the doubles in order) and the
    second ``N >= c'`` for the smallest, i.e. ``−N <= −c'``: the same decision for every
    finite draw, with one comparison instead of a multiply, an add and a comparison
    per scale. ``±inf`` stands for "every draw" / "none".
    """
    out = np.empty(loc_d.size)
    for i, (s, limit, le) in enumerate(zip(released.tolist(), loc_d.tolist(), below.tolist())):
        if le:
            out[i] = _last_at_most(scale, s, limit)
        else:
            out[i] = -_first_at_least(scale, s, limit)
    return out


_LARGEST = float(np.finfo(np.float64).max)


def _key(x: float) -> int:
    """An integer order of the finite doubles (``-0.0`` and ``0.0`` share 0)."""
    bits = int(np.float64(x).view(np.int64))
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def _double(key: int) -> float:
    bits = key if key >= 0 else (-key) | -0x8000_0000_0000_0000
    return float(np.int64(bits).view(np.float64))


def _last_true(holds) -> float:
    """Largest finite double at which the non-increasing predicate ``holds`` (true, then
    false, in the doubles' order) is true; ``-inf`` if none, ``inf`` if every one."""
    low, high = _key(-_LARGEST), _key(_LARGEST)
    if not holds(-_LARGEST):
        return -np.inf
    if holds(_LARGEST):
        return np.inf
    while high - low > 1:  # holds at low, not at high
        mid = (low + high) // 2
        if holds(_double(mid)):
            low = mid
        else:
            high = mid
    return _double(low)


def _last_at_most(scale: float, shift: float, limit: float) -> float:
    """Largest finite ``N`` with ``scale·N + shift <= limit`` in double arithmetic
    (Python floats round as NumPy's elementwise multiply and add); ``-inf`` if none,
    ``inf`` if every ``N``."""
    return _last_true(lambda n: scale * n + shift <= limit)


def _first_at_least(scale: float, shift: float, limit: float) -> float:
    """Smallest finite ``N`` with ``scale·N + shift >= limit`` (as
    :func:`_last_at_most`): the double after the last ``N`` below it; ``inf`` if none,
    ``-inf`` if every ``N``."""
    below = _last_true(lambda n: not scale * n + shift >= limit)
    return below if np.isinf(below) else _double(_key(below) + 1)


def _row_sums(rows: np.ndarray) -> np.ndarray:
    """Column sums of ``rows`` (shape (m, n)), each bit for bit ``ndarray.sum`` of that
    column as a contiguous row: the reduction's identity ``+0.0`` plus the run's
    pairwise sum (:func:`_pairwise_sum`)."""
    total = _pairwise_sum(rows, 0, rows.shape[0])
    total += 0.0  # -0.0 + 0.0 = +0.0, as the reduction that starts from its identity
    return total


def _pairwise_sum(rows: np.ndarray, start: int, n: int) -> np.ndarray:
    """Column sums of ``rows[start:start + n]`` in NumPy's pairwise order for one row.

    NumPy adds a contiguous run of ``n`` doubles from ``-0.0`` one by one when ``n < 8``,
    in eight interleaved accumulators combined as ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``
    then the remainder when ``n <= 128``, and by halves (a multiple of 8 first) above.
    This reproduces it column-wise, so each column's sum is bit for bit
    ``ndarray.sum`` of that run; a test checks it against ``ndarray.sum(axis=1)``.
    """
    if n < 8:
        total = np.full(rows.shape[1], -0.0)
        for i in range(start, start + n):
            total += rows[i]
        return total
    if n <= 128:
        acc = rows[start : start + 8].copy()
        i = 8
        while i < n - n % 8:
            acc += rows[start + i : start + i + 8]
            i += 8
        total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for k in range(start + i, start + n):
            total += rows[k]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(rows, start, half) + _pairwise_sum(rows, start + half, n - half)


def grid_results(
    pair: NeighboringPair,
    parts: list[dict],
    counts: list[dict],
    *,
    scales: Sequence[float],
    claimed_epsilons: Sequence[float],
    confidence: float = 0.95,
    released_prefixes: int | None = None,
) -> list[TreeAuditResult]:
    """One result per scale from the parts' counts, as ``audit_tree_nodes`` reports it.

    Parameters
    ----------
    pair : NeighboringPair
        The pair the parts were made for.
    parts, counts : list of dict
        :func:`grid_parts` and :func:`part_counts` of each, in the same order.
    scales, claimed_epsilons : sequence of float
        The grid's scales (as given to :func:`grid_parts`) and the ε each row claims.
    confidence : float
        As given to :func:`grid_parts`.
    released_prefixes : int, optional
        As given to :func:`grid_parts`.

    Returns
    -------
    list of TreeAuditResult
        In the order of ``scales``; ``seconds`` is the parts' total time shared
        equally among the distinct scales.

    Raises
    ------
    ValueError
        If ``scales`` and ``claimed_epsilons`` differ in length.
    """
    if len(scales) != len(claimed_epsilons):
        raise ValueError(
            f"`scales` and `claimed_epsilons` must have one entry per row, got "
            f"{len(scales)} and {len(claimed_epsilons)}."
        )
    released = check_released_prefixes(pair, released_prefixes)
    unique = parts[0]["scales"]
    each = half_confidence(check_open_unit("confidence", confidence))
    by = {(p["stage"], p["world"]): c for p, c in zip(parts, counts)}
    joint_part = next(p for p in parts if p["stage"] == "joint")
    n_joint = joint_part["n_samples"]
    n_product = next(p for p in parts if p["stage"] == "product")["n_samples"]
    loc_d, loc_d_prime = joint_part["loc_d"], joint_part["loc_d_prime"]
    seconds = sum(c["seconds"] for c in counts) / len(unique)
    per_scale = {}
    for i, b in enumerate(unique):
        joint = epsilon_lower_bound_from_counts(
            by[("joint", 0)]["counts"][i : i + 1],
            n_joint,
            by[("joint", 1)]["counts"][i : i + 1],
            n_joint,
            thresholds=np.array([joint_part["thresholds"][i]]),
            confidence=each,
        )
        product = product_bound(
            [by[("product", 0)]["counts"][i], by[("product", 1)]["counts"][i]],
            [int(by[("product", 0)]["joints"][i]), int(by[("product", 1)]["joints"][i])],
            loc_d,
            loc_d_prime,
            scale=b,
            n_samples=n_product,
            confidence=each,
        )
        per_scale[b] = {"joint": joint, "product": product}
    return [
        tree_nodes_result(
            pair,
            per_scale[float(b)],
            n_nodes=loc_d.size,
            l1_sensitivity=joint_part["l1_sensitivity"],
            scale=float(b),
            claimed_epsilon=check_positive("claimed_epsilon", eps, allow_inf=True),
            confidence=confidence,
            released_prefixes=released,
            seconds=seconds,
        )
        for b, eps in zip(scales, claimed_epsilons)
    ]


def audit_tree_nodes_grid(
    pair: NeighboringPair,
    *,
    scales: Sequence[float],
    claimed_epsilons: Sequence[float],
    n_samples: int,
    seed: int | np.random.SeedSequence,
    confidence: float = 0.95,
    product_samples: int | None = None,
    released_prefixes: int | None = None,
    batch_size: int = _DEFAULT_BATCH,
) -> list[TreeAuditResult]:
    """``[audit_tree_nodes(pair, scale=b, seed=seed, ...) for b in scales]`` on one set of draws.

    See the module docstring: each result equals the single audit's bit for bit, at the
    cost of one scale's draws plus the scoring of each.

    Parameters
    ----------
    pair : NeighboringPair
        The two reward streams (:func:`fedpriv.audit.engine.neighbors.stream_pair`).
    scales : sequence of float
        Per-node Laplace scales, > 0.
    claimed_epsilons : sequence of float
        The ε each row claims (> 0, may be inf), one per scale.
    n_samples, seed, confidence, product_samples, released_prefixes, batch_size
        As in :func:`fedpriv.audit.engine.tree_nodes.audit_tree_nodes` with
        ``method="both"`` and no pilot.

    Returns
    -------
    list of TreeAuditResult
        One per scale, in order.

    Raises
    ------
    ValueError
        As :func:`grid_parts` and :func:`grid_results`.

    Examples
    --------
    >>> from fedpriv.audit.engine.neighbors import worst_case_reward_pair
    >>> results = audit_tree_nodes_grid(worst_case_reward_pair(16), scales=[5.0, 2.0],
    ...                                 claimed_epsilons=[1.0, 2.5], n_samples=2000, seed=0)
    >>> [r.n_nodes for r in results]
    [5, 5]
    """
    parts = grid_parts(
        pair,
        scales=scales,
        n_samples=n_samples,
        seed=seed,
        confidence=confidence,
        product_samples=product_samples,
        released_prefixes=released_prefixes,
        batch_size=batch_size,
    )
    return grid_results(
        pair,
        parts,
        [part_counts(part) for part in parts],
        scales=scales,
        claimed_epsilons=claimed_epsilons,
        confidence=confidence,
        released_prefixes=released_prefixes,
    )
