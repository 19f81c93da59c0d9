"""One corpus fixture: :class:`CorpusEntry` (a mechanism, its pair, its claim, its verdict).

Its own module so that the entry lists (:mod:`fedpriv.audit.regression.corpus` and
:mod:`fedpriv.audit.regression.corpus_float`) both build entries without importing each
other; :mod:`fedpriv.audit.regression.corpus` re-exports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from fedpriv.audit.regression.api import AuditResult, NeighboringPair, audit_mechanism

__all__ = ["CorpusEntry"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CorpusEntry:
    """One fixture: a mechanism, its pair, its claim and the verdict it must get.

    Attributes
    ----------
    name : str
    mechanism : callable
        ``(dataset, n_samples, rng) -> ndarray`` (picklable: module-level
        functions and ``functools.partial``).
    pair : NeighboringPair
    claim : guarantee
    expected_violated : bool
        True for broken mechanisms, False for correct twins.
    twin : str
        Name of the correct twin of a broken entry ("" for twins).
    source : str
        fedpriv's corpus identifier (A1, B3, ...) and literature source.
    true_epsilon : float
        The mechanism's actual privacy loss on this pair (analytic; inf if none).
    samples : int
        Confirmation samples per world the regression test uses.
    score, log_density_ratio : callable or None
        The attacker's score (black-box) or the white-box LLR, if not the default.
    """

    name: str
    mechanism: Callable[..., np.ndarray]
    pair: NeighboringPair
    claim: Any
    expected_violated: bool
    twin: str
    source: str
    true_epsilon: float
    samples: int = 100_000
    score: Callable[[np.ndarray], np.ndarray] | None = None
    log_density_ratio: Callable[[np.ndarray], np.ndarray] | None = None

    def audit(self, *, seed: int = 0, **options: Any) -> AuditResult:
        """:func:`audit.audit_mechanism` with this entry's settings (overridable).

        Parameters
        ----------
        seed : int, default 0
            Root seed of the audit.
        **options
            Keyword arguments of :func:`~fedpriv.audit.regression.api.audit_mechanism`
            that replace the entry's (``claim``, ``samples``, ``score``, ...).

        Returns
        -------
        AuditResult
        """
        settings: dict[str, Any] = {
            "claim": self.claim,
            "samples": self.samples,
            "seed": seed,
            "score": self.score,
            "log_density_ratio": self.log_density_ratio,
        }
        settings.update(options)
        return audit_mechanism(self.mechanism, self.pair, **settings)
