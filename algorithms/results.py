"""What every algorithm's result has in common: :class:`AlgorithmRun`.

The seven result classes (``FedUCBRun``, ``DecentralizedFedUCBRun``, ``LinUCBRun``,
``LiSongRun``, ``GossipRun``, ``CoopRun``, ``UCBRun``) keep what their papers measure
(sync rounds, communication cost, gossip edges, ...) and share these four members, so
that code comparing algorithms (experiments, regret tables) needs no per-family branch.
A :class:`typing.Protocol`, not a base class: the results share no code, only names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from fedpriv.privacy import Accountant

__all__ = ["AlgorithmRun"]


@runtime_checkable
class AlgorithmRun(Protocol):
    """A batch of runs of one algorithm.

    Attributes
    ----------
    algorithm : str
        The algorithm's name (``"feducb"``, ``"cdp-mab"``,
        ``"gossip-fed-ucb"``, ``"private-coop-ucb"``, ...).
    final_regret : ndarray of float64, shape (n_trials, n_agents)
        Each agent's cumulative pseudo-regret after the last round (with the global
        gaps where agents' means differ).
    accountant : Accountant or None
        Every release of the run (None for a baseline that releases nothing).
    seed_entropy : int
        ``entropy`` of the run's root SeedSequence.
    """

    @property
    def algorithm(self) -> str: ...

    @property
    def final_regret(self) -> np.ndarray: ...

    @property
    def accountant(self) -> Accountant | None: ...

    @property
    def seed_entropy(self) -> int: ...
