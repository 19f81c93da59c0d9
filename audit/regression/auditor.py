"""A configured auditor: :func:`audit.audit_mechanism` with pinned settings.

The ``dp_audit`` fixture of the pytest plugin (:mod:`fedpriv_pytest`) returns one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from fedpriv.audit.regression.api import (
    AuditResult,
    NeighboringPair,
    assert_private,
    audit_mechanism,
)
from fedpriv.privacy.errors import PrivacyViolationError

__all__ = ["Auditor"]

_DEFAULT_SAMPLES = 100_000


@dataclasses.dataclass(frozen=True)
class Auditor:
    """A configured auditor: :func:`audit.audit_mechanism` with pinned settings.

    Attributes
    ----------
    samples : int
        Confirmation samples per world.
    seed : int
        Pinned root seed.
    confidence : float
    options : dict
        Further keyword arguments of :func:`audit.audit_mechanism`.
    """

    samples: int = _DEFAULT_SAMPLES
    seed: int = 0
    confidence: float = 0.95
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    record: Callable[[AuditResult], None] | None = None

    def _settings(self, overrides: dict[str, Any]) -> dict[str, Any]:
        settings = {"samples": self.samples, "seed": self.seed, "confidence": self.confidence}
        settings.update(self.options)
        settings.update(overrides)
        return settings

    def _log(self, result: AuditResult) -> AuditResult:
        if self.record is not None:
            self.record(result)
        return result

    def audit(
        self,
        mechanism: Callable[..., np.ndarray],
        pair: NeighboringPair,
        *,
        claim: Any,
        **overrides: Any,
    ) -> AuditResult:
        """Run :func:`audit.audit_mechanism` with this auditor's settings.

        Parameters
        ----------
        mechanism : callable
            ``mechanism(dataset, n_samples, rng) -> ndarray``, as for
            :func:`~fedpriv.audit.regression.api.audit_mechanism`.
        pair : NeighboringPair
            The two neighboring datasets.
        claim : guarantee
            The claimed guarantee.
        **overrides
            Keyword arguments of ``audit_mechanism`` that replace this auditor's
            settings.

        Returns
        -------
        AuditResult
            Also logged for the pytest report.
        """
        return self._log(audit_mechanism(mechanism, pair, claim=claim, **self._settings(overrides)))

    def assert_private(
        self,
        mechanism: Callable[..., np.ndarray],
        pair: NeighboringPair,
        *,
        claim: Any,
        **overrides: Any,
    ) -> AuditResult:
        """Like :func:`audit.assert_private`; fails the test with the evidence.

        Parameters
        ----------
        mechanism : callable
            ``mechanism(dataset, n_samples, rng) -> ndarray``.
        pair : NeighboringPair
            The two neighboring datasets.
        claim : guarantee
            The claimed guarantee.
        **overrides
            Keyword arguments of ``audit_mechanism`` that replace this auditor's
            settings.

        Returns
        -------
        AuditResult
            When no violation was found (which does not certify the claim).

        Raises
        ------
        PrivacyViolationError
            If the audit refutes the claim.
        """
        __tracebackhide__ = True
        try:
            result = assert_private(mechanism, pair, claim=claim, **self._settings(overrides))
        except PrivacyViolationError as error:
            self._log(error.result)  # type: ignore[attr-defined]
            raise
        return self._log(result)

    def assert_violated(
        self,
        mechanism: Callable[..., np.ndarray],
        pair: NeighboringPair,
        *,
        claim: Any,
        **overrides: Any,
    ) -> AuditResult:
        """Fail unless the audit refutes the claim (for known-broken mechanisms).

        Parameters
        ----------
        mechanism : callable
            A mechanism known to be broken, ``mechanism(dataset, n_samples, rng) ->
            ndarray``.
        pair : NeighboringPair
            The two neighboring datasets.
        claim : guarantee
            The claim it is expected to violate.
        **overrides
            Keyword arguments of ``audit_mechanism`` that replace this auditor's
            settings.

        Returns
        -------
        AuditResult
            The violating result.

        Raises
        ------
        AssertionError
            If no violation was found; the message holds the evidence.
        """
        __tracebackhide__ = True
        result = self.audit(mechanism, pair, claim=claim, **overrides)
        if not result.violated:
            raise AssertionError(f"expected a privacy violation, found none: {result.evidence}")
        return result
