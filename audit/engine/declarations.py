"""Declarations checked by coupled runs: before an accountant's bound may support ``holds``.

An accountant certifies what it is told: each release's declared ``l1_sensitivity`` and
which key levels are ``disjoint``. :func:`check_declarations` runs the algorithm on
neighbouring pairs with every random stream coupled (the same seed in both worlds), in
the check mode of :mod:`fedpriv.privacy.mechanisms.recording`: the run on D' replays
the outputs of the run on D, so both take the same decisions, and the pre-noise
statistics of every release are compared by
:func:`~fedpriv.privacy.mechanisms.recording.compare_releases`. A statistic that moves
by more than its declared sensitivity, a changed record that reaches two cells of a
``disjoint`` level, or a release schedule that raw data decides contradicts the
declaration: ``fedpriv verify`` then never gives ``holds`` on the accountant's bound
(:func:`fedpriv.privacy.accounting.verdicts.judge`, ``contradicted``).

One pair may not exercise a wrong declaration (a re-used or mis-sized release at the
last epoch is invisible to a change of the first reward), so the check tries the
candidates of the worst-neighbour search, with the search's own arguments
(:func:`fedpriv.audit.engine.neighbor_search.searched_pairs`: the first and the last
reward of each stream, both sides of every message boundary and seeded random
positions, each from one end of the reward domain to the other). A check that finds
nothing proves nothing about pairs it did not try; one that finds something is a
witness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.neighbor_search import RunFn, pair_samplers, searched_pairs
from fedpriv.audit.engine.neighbors import NeighboringPair
from fedpriv.privacy.mechanisms.recording import (
    DeclarationContradiction,
    compare_releases,
    record_releases,
)

__all__ = ["RUNS_BRANCH", "DeclarationCheck", "check_declarations"]

#: SeedSequence branch, below the check's seed, of the coupled runs (the search's
#: branches 0-3 are its pilot, confirming and training runs and its random positions).
RUNS_BRANCH = 4


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeclarationCheck:
    """What the coupled runs showed about a row's declarations.

    Attributes
    ----------
    pairs : tuple of str
        The neighbouring pairs run.
    releases : int
        Releases compared (summed over the pairs).
    contradictions : tuple of DeclarationContradiction
        Every contradicted declaration, with its witness; empty if none.
    """

    pairs: tuple[str, ...]
    releases: int
    contradictions: tuple[DeclarationContradiction, ...] = ()

    @property
    def contradicted(self) -> bool:
        """True if some declaration is contradicted."""
        return bool(self.contradictions)

    def describe(self) -> str:
        """One paragraph: what was checked and what is contradicted."""
        head = (
            f"coupled runs on {len(self.pairs)} neighbouring pair(s), "
            f"{self.releases} releases compared"
        )
        if not self.contradictions:
            return head + ": no declaration contradicted"
        return head + ": " + "; ".join(c.describe() for c in self.contradictions)

    def to_dict(self) -> dict[str, Any]:
        """The ``declarations`` record of ``claims.json``."""
        return {
            "pairs": list(self.pairs),
            "releases": self.releases,
            "contradicted": [c.to_dict() for c in self.contradictions],
        }


def check_declarations(
    run: RunFn,
    table: Any,
    *,
    domain: tuple[float, float],
    seed: int | np.random.SeedSequence,
    records: Sequence[tuple[int, ...]] | None = None,
    boundaries: Sequence[int] = (),
    n_random: int = 4,
    pairs: Mapping[str, NeighboringPair] | None = None,
) -> DeclarationCheck:
    """Run ``run`` once per world of each candidate pair, coupled, in check mode, and compare.

    Takes the arguments of :func:`~fedpriv.audit.engine.neighbor_search.search_neighbors`
    (without the audit's budget): at the same ``seed`` it tries the same candidate
    pairs as that search (:func:`~fedpriv.audit.engine.neighbor_search.searched_pairs`),
    so one run function and one table give both the audit and the check.

    Parameters
    ----------
    run : callable
        ``run(table, n_samples, seed) -> ndarray (n_samples, ...)``
        (:data:`~fedpriv.audit.engine.neighbor_search.RunFn`): must draw every random
        stream from ``seed``, so that the same seed couples the two worlds. Called with
        ``n_samples = 1``; what it returns is not read, only its releases.
    table : array_like of float, shape (..., length)
        The background reward table.
    domain : (float, float)
        The rewards' range.
    seed : int or SeedSequence
        The candidates' random positions are drawn at ``child_seed(seed, 3)`` (as the
        search's); pair ``i`` runs both worlds at ``child_seed(seed, 4, i)``.
    records, boundaries, n_random
        As :func:`~fedpriv.audit.engine.neighbor_search.reward_pairs`.
    pairs : mapping of str to NeighboringPair, optional
        Pin the pairs instead (``run`` receives each pair's ``dataset`` and
        ``dataset_prime``; ``table`` and ``domain`` are then not read).

    Returns
    -------
    DeclarationCheck

    Raises
    ------
    ValueError, TypeError
        As :func:`~fedpriv.audit.engine.neighbor_search.reward_pairs`; ``ValueError``
        if ``pairs`` is empty.
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
    if not pairs:
        raise ValueError("`pairs` must offer at least one neighbouring pair.")
    found: list[DeclarationContradiction] = []
    compared = 0
    for index, (pair, sample) in enumerate(pair_samplers(run, pairs).items()):
        address = child_seed(seed, RUNS_BRANCH, index)
        with record_releases() as run_d:
            sample(0, 1, address)
        with record_releases(replay=run_d.releases) as run_d_prime:
            sample(1, 1, address)
        compared += min(len(run_d.releases), len(run_d_prime.releases))
        for contradiction in compare_releases(
            run_d.releases, run_d_prime.releases, pair=pair, divergence=run_d_prime.divergence
        ):
            kind = contradiction.declaration.split()[0]
            if all(c.declaration.split()[0] != kind for c in found):
                found.append(contradiction)  # the first pair's witness of each kind
    return DeclarationCheck(pairs=tuple(pairs), releases=compared, contradictions=tuple(found))
