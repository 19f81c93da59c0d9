"""Per-round U(0, 1) draws whose generators are built only for the rows that read them.

:class:`~fedpriv.algorithms.dubey_aamas.baselines.PolicyUniforms` builds one generator
per (trial, agent) and draws every row's uniforms every round. Cooperative UCB reads
its tie-break draws only where the index ties (Alg. 2's "ties uniform"), and with noisy
group means that almost never happens after the round robin: in the audits' runs
(3 agents, 2 arms, T = 60, 2,000 trials) no column ties at all, so building
thousands of generators per batch bought nothing. :class:`LazyUniforms` keeps the same
stream addresses and the same chunking of rounds, so the draw a row reads at round
``t`` is the one :class:`PolicyUniforms` would give it (the address, not the time of
construction, fixes a stream; ``Generator.random`` draws one double per 64-bit output,
so any split of a stream into calls gives the same values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["LazyUniforms"]

#: New generators needed in one read above which every missing row is built in one batch.
_BATCH = 32


class LazyUniforms:
    """U(0, 1) per (row, round), drawn only for the rows asked for.

    Same values as ``PolicyUniforms(build_all(), horizon, chunk).at(t).reshape(-1)[rows]``
    provided :meth:`at` is called for the same rounds (every round from the first one
    on, as :class:`~fedpriv.algorithms.dubey_aamas.baselines.PolicyUniforms` is).

    Parameters
    ----------
    n_rows : int
        Rows (``n_trials * n_agents``, row ``b M + v``).
    horizon : int
        Last round T >= 1.
    build_one : callable
        ``build_one(row) -> numpy.random.Generator``: the row's stream.
    build_all : callable
        ``build_all() -> object ndarray of Generator`` with ``n_rows`` entries (any
        shape, C order): every row's stream, in one batch.
    chunk : int, default 512
        Rounds per block, as in ``PolicyUniforms``.
    """

    def __init__(
        self,
        n_rows: int,
        horizon: int,
        build_one: Callable[[int], np.random.Generator],
        build_all: Callable[[], np.ndarray],
        chunk: int = 512,
    ) -> None:
        self.horizon, self.chunk = int(horizon), int(chunk)
        self.build_one, self.build_all = build_one, build_all
        self._generators = np.full(int(n_rows), None, dtype=object)
        self._next = np.zeros(int(n_rows), dtype=np.int64)  # draws taken from each stream
        self._value = np.zeros(int(n_rows))  # the last draw of each stream
        self._first, self._size, self._base = 1, 0, 0

    def at(self, t: int) -> Callable[[np.ndarray], np.ndarray]:
        """The reader of round ``t`` (1-based): ``reader(rows) -> draws``, shape ``rows.shape``.

        Parameters
        ----------
        t : int
            Round, 1-based, in [1, horizon].

        Returns
        -------
        callable
            Takes an int64 array of rows and returns their float64 uniforms in [0, 1).
        """
        offset = t - self._first
        if not 0 <= offset < self._size:  # PolicyUniforms' next block starts here
            self._base += self._size
            self._size = min(self.chunk, self.horizon - t + 1)
            self._first, offset = t, 0
        index = self._base + offset
        return lambda rows: self._read(index, rows)

    def _read(self, index: int, rows: np.ndarray) -> np.ndarray:
        """Draw ``index`` (0-based position in its stream) of each of ``rows``."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        out = np.empty(rows.size)
        generators = self._generators
        missing = [r for r in rows.tolist() if generators[r] is None]
        if len(missing) > _BATCH:
            every = np.asarray(self.build_all(), dtype=object).reshape(-1)
            empty = np.flatnonzero(np.equal(generators, None))
            generators[empty] = every[empty]
        for i, r in enumerate(rows.tolist()):
            taken = int(self._next[r])
            if taken == index + 1:  # already read at this position
                out[i] = self._value[r]
                continue
            if taken > index:
                raise ValueError(f"row {r}: draw {index} was passed (next is {taken}).")
            generator = generators[r]
            if generator is None:
                generator = generators[r] = self.build_one(r)
            if index > taken:
                generator.random(index - taken)  # the draws of rounds this row never read
            out[i] = self._value[r] = generator.random()
            self._next[r] = index + 1
        return out
