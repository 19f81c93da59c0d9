"""A search for the worst neighbouring reward table of a user's algorithm.

An end-to-end audit bounds ε for *one* neighbouring pair; the claim is about the worst
one. A leak that shows only when the changed reward comes after the first message (one
noise draw re-sent in every message), or at a message boundary, is invisible at the
first reward. :func:`reward_pairs` lists candidate pairs from the reward domain and the
stream's length alone: the changed position is the first, the last, each side of every
message boundary the user names, and a seeded random sample of the others; the values
are the domain's ends (``low`` in D, ``high`` in D'), so one changed reward moves every
statistic by the full sensitivity. :func:`search_neighbors` runs the user's algorithm
on each pair's pilot, picks the best (pair, event) there and confirms that one on fresh
runs (:func:`fedpriv.audit.engine.coupled.search_and_confirm`). The same candidates
feed the declaration check (:func:`fedpriv.audit.engine.declarations.check_declarations`
takes the same arguments); :class:`NeighborSearch` holds them once for a register row.

Multiplicity. The pilot compares every pair's candidate events; the confirmation
draws fresh runs of the chosen pair and tests the chosen event alone (two directions),
so its level does not depend on the number of pairs searched. This is StatDP's split
(Ding, Wang, Wang, Zhang and Kifer, "Detecting Violations of Differential Privacy",
CCS 2018, Sec. 4: the input pair and event are selected on one set of runs, the
hypothesis test uses fresh runs) and DP-Finder's (Bichsel, Gehr, Drachsler-Cohen,
Tsankov and Vechev, CCS 2018: search the pair by an estimate, then confirm it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.privacy.checks import check_int_at_least, check_real
from fedpriv.privacy.relations import NeighboringRelation

__all__ = [
    "NeighborSearch",
    "RunFn",
    "pair_samplers",
    "reward_pairs",
    "search_neighbors",
    "searched_pairs",
]

#: ``run(table, n_samples, seed) -> ndarray (n_samples, ...)``: what the view's observer
#: sees in ``n_samples`` runs of the algorithm on one reward table.
RunFn = Callable[[np.ndarray, int, np.random.SeedSequence], np.ndarray]


def _check_domain(domain: Any) -> tuple[float, float]:
    try:
        low, high = (check_real("domain", v) for v in domain)
    except TypeError as error:
        raise TypeError(f"`domain` must be a pair (low, high) of real numbers: {error}") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"`domain` must be finite with low < high, got ({low!r}, {high!r}).")
    return low, high


def _positions(
    length: int, boundaries: Sequence[int], n_random: int, rng: np.random.Generator
) -> list[tuple[int, str]]:
    """``(position, why)`` along the stream, in a fixed order, without repeats."""
    chosen: dict[int, str] = {0: "first", length - 1: "last"}
    for b in boundaries:
        b = int(b)
        if not 0 < b < length:
            raise ValueError(
                f"`boundaries` must lie in (0, {length}) (a message starts there), got {b}."
            )
        chosen.setdefault(b - 1, f"last before boundary {b}")
        chosen.setdefault(b, f"first after boundary {b}")
    rest = np.setdiff1d(np.arange(length), np.fromiter(chosen, dtype=np.int64))
    for p in rng.choice(rest, size=min(n_random, rest.size), replace=False).tolist():
        chosen[int(p)] = "random"
    return sorted(chosen.items())


def reward_pairs(
    table: Any,
    *,
    domain: tuple[float, float],
    records: Sequence[tuple[int, ...]] | None = None,
    boundaries: Sequence[int] = (),
    n_random: int = 4,
    seed: int | np.random.SeedSequence = 0,
) -> dict[str, NeighboringPair]:
    """Candidate neighbouring reward tables: positions and values to change.

    Parameters
    ----------
    table : array_like of float, shape (..., length)
        The reward table the algorithm reads; its last axis is the stream (the pull
        index or the round), the leading axes locate one stream (agent, arm, ...).
        Every entry in ``domain``.
    domain : (float, float)
        The rewards' range ``(low, high)``, finite, ``low < high``: D has ``low`` and
        D' has ``high`` at the changed entry.
    records : sequence of tuple of int, optional
        The streams whose entries may change, each an index of the leading axes (e.g.
        ``[(0, 0), (0, 1)]``: agent 0's streams of arms 0 and 1). Default: the first
        stream, ``(0, ..., 0)``.
    boundaries : sequence of int
        Positions where a new message's data starts (e.g. the first pull of each
        epoch), each in ``(0, length)``; the entries on both sides are tried.
    n_random : int, default 4
        Further positions drawn without replacement from the rest, >= 0.
    seed : int or SeedSequence
        Draws the random positions (fixed before any run).

    Returns
    -------
    dict of str to NeighboringPair
        ``"stream (i, j), position p (why): low -> high"`` to the pair, in a fixed
        order; ``relation`` ``REPLACE_ONE_REWARD``, ``t`` the position and ``agent``
        / ``arm`` the record's first two indices where it has them.

    Raises
    ------
    ValueError
        If ``table`` has no entries or an entry outside ``domain``, ``domain`` is
        not finite with ``low < high``, a record is not an index of the leading axes,
        a boundary is out of range or ``n_random < 0``.
    TypeError
        If ``domain`` is not a pair of real numbers.

    Examples
    --------
    >>> pairs = reward_pairs(np.zeros((2, 6)), domain=(0.0, 1.0), boundaries=[3], n_random=0)
    >>> list(pairs)  # doctest: +NORMALIZE_WHITESPACE
    ['stream (0,), position 0 (first): 0 -> 1',
     'stream (0,), position 2 (last before boundary 3): 0 -> 1',
     'stream (0,), position 3 (first after boundary 3): 0 -> 1',
     'stream (0,), position 5 (last): 0 -> 1']
    """
    low, high = _check_domain(domain)
    table = np.asarray(table, dtype=np.float64)
    if table.ndim == 0 or table.size == 0:
        raise ValueError(f"`table` must have at least one entry, got shape {table.shape}.")
    if np.any((table < low) | (table > high)) or not np.all(np.isfinite(table)):
        raise ValueError(f"every entry of `table` must lie in `domain` [{low}, {high}].")
    n_random = check_int_at_least("n_random", n_random, 0)
    lead = table.shape[:-1]
    records = [tuple(int(i) for i in r) for r in (records or [(0,) * len(lead)])]
    for r in records:
        if len(r) != len(lead) or any(not 0 <= i < s for i, s in zip(r, lead, strict=True)):
            raise ValueError(
                f"each of `records` must index the table's leading axes {lead}, got {r}."
            )
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rng = np.random.default_rng(root)
    positions = _positions(table.shape[-1], boundaries, n_random, rng)
    pairs: dict[str, NeighboringPair] = {}
    for r in records:
        for position, why in positions:
            d, d_prime = table.copy(), table.copy()
            d[r + (position,)], d_prime[r + (position,)] = low, high
            where = f"stream {r}, " if r else ""
            name = f"{where}position {position} ({why}): {low:g} -> {high:g}"
            pairs[name] = NeighboringPair(
                d,
                d_prime,
                neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
                description=name,
                agent=r[0] if r else None,
                t=position,
                arm=r[1] if len(r) > 1 else None,
            )
    return pairs


def pair_samplers(run: RunFn, pairs: Mapping[str, NeighboringPair]) -> dict[str, Callable]:
    """One end-to-end sampler per pair: ``(world, n, seed) -> run(D or D', n, seed)``.

    Parameters
    ----------
    run : callable
        ``run(table, n_samples, seed) -> ndarray (n_samples, ...)`` (:data:`RunFn`).
    pairs : mapping of str to NeighboringPair

    Returns
    -------
    dict of str to SampleFn
        Same keys, for :func:`~fedpriv.audit.engine.coupled.search_and_confirm`.
    """

    def sampler(pair: NeighboringPair) -> Callable:
        def sample(world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
            return run(pair.dataset if world == 0 else pair.dataset_prime, n, seed)

        return sample

    return {name: sampler(pair) for name, pair in pairs.items()}


def search_neighbors(
    run: RunFn,
    table: Any,
    *,
    domain: tuple[float, float],
    budget: AuditBudget,
    seed: int | np.random.SeedSequence,
    delta: float,
    channel: str,
    records: Sequence[tuple[int, ...]] | None = None,
    boundaries: Sequence[int] = (),
    n_random: int = 4,
    pairs: Mapping[str, NeighboringPair] | None = None,
    **options: Any,
) -> EndToEndAudit:
    """The end-to-end audit of ``run`` at the worst neighbouring table the pilot finds.

    The candidates of :func:`searched_pairs` (random positions drawn at
    ``child_seed(seed, 3)``), or the user's own ``pairs``, each run on its pilot; the
    best (pair, event) is confirmed on fresh runs by
    :func:`~fedpriv.audit.engine.coupled.search_and_confirm` (module docstring).

    Parameters
    ----------
    run : callable
        ``run(table, n_samples, seed) -> ndarray (n_samples, ...)``: the view's outputs
        of ``n_samples`` runs on ``table`` (:data:`RunFn`).
    table : array_like of float, shape (..., length)
        The background reward table (:func:`reward_pairs`).
    domain : (float, float)
        The rewards' range.
    budget : AuditBudget
        Pilot, training and confirming runs per world and pair.
    seed : int or SeedSequence
    delta : float
        The claim's δ, in [0, 1).
    channel : str
        What the observer sees (for the report).
    records, boundaries, n_random
        As :func:`reward_pairs`.
    pairs : mapping of str to NeighboringPair, optional
        Pin the pairs instead of searching (one pair: the audit of that pair alone).
    **options
        Further keywords of :func:`~fedpriv.audit.engine.coupled.search_and_confirm`
        (``names``, ``events``, ``batch_size``, ``executor``, ``n_workers``,
        ``joint``).

    Returns
    -------
    AuditResult
        ``method="end-to-end"``; ``neighbors`` names the confirmed pair and
        ``n_pairs`` how many were searched.

    Raises
    ------
    ValueError, TypeError
        As :func:`reward_pairs` and
        :func:`~fedpriv.audit.engine.coupled.search_and_confirm`.
    """
    if pairs is None:
        pairs = searched_pairs(
            table,
            domain=domain,
            records=records,
            boundaries=boundaries,
            n_random=n_random,
            seed=seed,
        )
    return search_and_confirm(
        pair_samplers(run, pairs), budget=budget, seed=seed, delta=delta, channel=channel, **options
    )


def searched_pairs(
    table: Any,
    *,
    domain: tuple[float, float],
    seed: int | np.random.SeedSequence,
    records: Sequence[tuple[int, ...]] | None = None,
    boundaries: Sequence[int] = (),
    n_random: int = 4,
) -> dict[str, NeighboringPair]:
    """The candidates :func:`search_neighbors` and the declaration check try at ``seed``.

    :func:`reward_pairs` with its random positions drawn at ``child_seed(seed, 3)``, so
    that the audit and :func:`fedpriv.audit.engine.declarations.check_declarations`
    given the same arguments and seed run the same pairs.

    Parameters
    ----------
    table, domain, records, boundaries, n_random
        As :func:`reward_pairs`.
    seed : int or SeedSequence
        The audit's (or check's) seed.

    Returns
    -------
    dict of str to NeighboringPair

    Raises
    ------
    ValueError, TypeError
        As :func:`reward_pairs`.
    """
    return reward_pairs(
        table,
        domain=domain,
        records=records,
        boundaries=boundaries,
        n_random=n_random,
        seed=child_seed(seed, 3),
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class NeighborSearch:
    """The search's inputs, written once: the audit and the declaration check read them.

    A register row's ``search`` recipe returns one (``claim -> NeighborSearch``):
    :meth:`audit` is :func:`search_neighbors` on these inputs, and ``fedpriv verify``
    derives the row's declaration check from them when the row has no ``declarations``
    recipe (:func:`fedpriv.audit.engine.declarations.check_declarations`, on the same
    candidates at the same seed).

    Attributes
    ----------
    run : RunFn
        ``run(table, n_samples, seed) -> ndarray (n_samples, ...)``: what the view's
        observer sees in ``n_samples`` runs on one reward table, every random stream
        drawn from ``seed`` (the check couples the two worlds by the seed).
    table : array_like of float, shape (..., length)
        The background reward table (:func:`reward_pairs`).
    domain : (float, float)
        The rewards' range, finite, ``low < high``.
    records : sequence of tuple of int, optional
        The streams whose entries may change (:func:`reward_pairs`).
    boundaries : sequence of int
        Positions where a new message's data starts.
    n_random : int, default 4
        Further seeded random positions, >= 0.

    Raises
    ------
    TypeError
        If ``run`` is not callable or ``domain`` is not a pair of real numbers.
    ValueError
        If ``domain`` is not finite with ``low < high`` or ``n_random < 0`` (the table,
        records and boundaries are checked by :func:`reward_pairs` when used).
    """

    run: RunFn
    table: Any
    domain: tuple[float, float]
    records: Sequence[tuple[int, ...]] | None = None
    boundaries: Sequence[int] = ()
    n_random: int = 4

    def __post_init__(self) -> None:
        if not callable(self.run):
            raise TypeError(f"`run` must be callable, got {type(self.run).__name__}.")
        object.__setattr__(self, "domain", _check_domain(self.domain))
        object.__setattr__(self, "n_random", check_int_at_least("n_random", self.n_random, 0))
        object.__setattr__(self, "boundaries", tuple(int(b) for b in self.boundaries))

    @property
    def arguments(self) -> dict[str, Any]:
        """``run``, ``table`` and the keywords :func:`search_neighbors` and
        :func:`~fedpriv.audit.engine.declarations.check_declarations` share."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}

    def pairs(self, seed: int | np.random.SeedSequence) -> dict[str, NeighboringPair]:
        """The candidates at ``seed`` (:func:`searched_pairs`).

        Parameters
        ----------
        seed : int or SeedSequence

        Returns
        -------
        dict of str to NeighboringPair
        """
        arguments = self.arguments
        del arguments["run"]
        return searched_pairs(arguments.pop("table"), seed=seed, **arguments)

    def audit(
        self,
        *,
        budget: AuditBudget,
        seed: int | np.random.SeedSequence,
        delta: float,
        channel: str,
        **options: Any,
    ) -> EndToEndAudit:
        """:func:`search_neighbors` on these inputs.

        Parameters
        ----------
        budget, seed, delta, channel, **options
            As :func:`search_neighbors`.

        Returns
        -------
        EndToEndAudit
        """
        return search_neighbors(
            budget=budget, seed=seed, delta=delta, channel=channel, **self.arguments, **options
        )
