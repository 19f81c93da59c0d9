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
last epoch is invisible to a change of the first reward), so the check takes several:
:func:`neighbouring_pairs` changes the first and the last entry of a table and any
positions the caller names (message boundaries), each from one end of the reward domain
to the other. A check that finds nothing proves nothing about pairs it did not try; one
that finds something is a witness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from fedpriv.audit.engine.coupled import SampleFn, child_seed
from fedpriv.privacy.checks import check_real
from fedpriv.privacy.mechanisms.recording import (
    DeclarationContradiction,
    compare_releases,
    record_releases,
)

__all__ = ["DeclarationCheck", "check_declarations", "neighbouring_pairs"]


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
    samplers: Mapping[str, SampleFn], *, seed: int | np.random.SeedSequence
) -> DeclarationCheck:
    """Run each pair's sampler once per world, coupled, in check mode, and compare.

    Parameters
    ----------
    samplers : mapping of str to SampleFn
        ``{pair: sample(world, n, seed)}``, the samplers an audit gives
        :func:`~fedpriv.audit.engine.coupled.search_and_confirm`: each runs the
        algorithm ``n`` times on world 0 (D) or 1 (D') of its pair and must draw every
        random stream from ``seed``, so that the same seed couples the two worlds.
        Called with ``n = 1``; what it returns is not read, only its releases.
    seed : int or SeedSequence
        Pair ``i`` runs both worlds at ``child_seed(seed, i)``.

    Returns
    -------
    DeclarationCheck

    Raises
    ------
    ValueError
        If ``samplers`` is empty.
    """
    if not samplers:
        raise ValueError("`samplers` must offer at least one neighbouring pair.")
    found: list[DeclarationContradiction] = []
    compared = 0
    for index, (pair, sample) in enumerate(samplers.items()):
        address = child_seed(seed, index)
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
    return DeclarationCheck(pairs=tuple(samplers), releases=compared, contradictions=tuple(found))


def neighbouring_pairs(
    table: Any, *, domain: tuple[float, float], positions: Sequence[tuple[int, ...]] | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Neighbouring reward tables: one entry set to each end of the domain.

    Parameters
    ----------
    table : array_like of float64, any shape
        The reward table (e.g. ``(n_agents, n_epochs, pulls)``), values in ``domain``.
    domain : (float, float)
        The reward range ``[low, high]``.
    positions : sequence of index tuples, optional
        The entries to change (message boundaries, late positions, ...); default the
        first entry ``(0, ..., 0)`` and the last entry of agent 0 (``(0, -1, ..., -1)``),
        plus the table's last entry.

    Returns
    -------
    dict of str to (ndarray, ndarray)
        ``{"entry (i, j, k): low -> high": (D, D')}``, D with the entry at ``low`` and D'
        at ``high``; every other entry as in ``table``.

    Raises
    ------
    ValueError
        If ``domain`` is not ``low < high`` (finite) or a position is outside the table.
    """
    low, high = (check_real("domain", v) for v in domain)
    if not low < high:
        raise ValueError(f"`domain` must satisfy low < high, got {domain!r}.")
    base = np.array(table, dtype=np.float64)
    if positions is None:
        last = tuple(n - 1 for n in base.shape)
        positions = [(0,) * base.ndim, (0, *last[1:]), last]
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for position in positions:
        index = tuple(int(i) for i in position)
        if len(index) != base.ndim or not all(-n <= i < n for i, n in zip(index, base.shape)):
            raise ValueError(
                f"`positions` must index the table of shape {base.shape}; got {position!r}."
            )
        where = tuple(i % n for i, n in zip(index, base.shape))
        world0, world1 = base.copy(), base.copy()
        world0[where], world1[where] = low, high
        out[f"entry {where}: {low:g} -> {high:g}"] = (world0, world1)
    return out
