"""Protocols of the audit module (modelled on DP-Auditorium's ``interfaces.py``).

They type the audit's entry point,
:func:`fedpriv.audit.regression.api.audit_mechanism` (and its black-box route): a
claim must be a :class:`Guarantee` (checked with ``isinstance``, which tests for the
two methods), the audited sampler is a :class:`Mechanism`, a caller's score or
log-density ratio a :class:`ScoreFunction`, and the result holds a :class:`Bound`.

A *mechanism* is a vectorized sampler: ``mechanism(dataset, n_samples, rng)`` returns
``n_samples`` independent outputs, first axis the sample axis (CONTRIBUTING.md, Vectorize). A *score
function* reduces a batch of outputs to one real number per sample. A *guarantee*
is anything with the dp-accounting query pair ``get_epsilon``/``get_delta`` (every
type in :mod:`fedpriv.privacy.accounting.guarantees`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Bound", "Guarantee", "Mechanism", "ScoreFunction"]


@runtime_checkable
class Mechanism(Protocol):
    """``(dataset, n_samples, rng) -> ndarray`` of shape ``(n_samples, ...)``."""

    def __call__(self, dataset: Any, n_samples: int, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class ScoreFunction(Protocol):
    """``outputs (n, ...) -> scores (n,)`` of float64; larger should mean "more like D"."""

    def __call__(self, outputs: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Bound(Protocol):
    """An estimator's ε lower bound: what an :class:`~fedpriv.audit.AuditResult` holds.

    :class:`~fedpriv.audit.estimators.EpsilonLowerBound` and
    :class:`~fedpriv.audit.estimators.OneRunBound` are bounds.
    """

    epsilon_lower_bound: float  #: ε lower bound in nats, >= 0
    confidence: float  #: confidence of the bound, in (0, 1)
    delta: float  #: δ at which the bound is stated
    n_samples: int  #: samples per world behind the bound (one run: the canaries)


@runtime_checkable
class Guarantee(Protocol):
    """A privacy claim that can be queried at a δ or an ε."""

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest ε (nats) such that the claim is (ε, ``target_delta``)-DP.

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        float
            ε >= 0, ``inf`` if none.
        """
        ...

    def get_delta(self, target_epsilon: float) -> float:
        """Smallest δ such that the claim is (``target_epsilon``, δ)-DP.

        Parameters
        ----------
        target_epsilon : float
            ε in nats, >= 0.

        Returns
        -------
        float
            δ in [0, 1].
        """
        ...
