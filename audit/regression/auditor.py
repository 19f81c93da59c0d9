"""A configured auditor: :func:`audit.audit_mechanism` with pinned settings.

The ``dp_audit`` fixture of the pytest plugin (:mod:`fedpriv_pytest`) returns one.

A mechanism under test is a user's code: it may call ``os._exit(0)`` (which would end
pytest with status 0, a green CI run with tests unrun), ``sys.exit`` or loop. By
default (``isolate=True``) each audit runs in a forked worker
(:func:`fedpriv.audit.engine.isolation.run_isolated`) that returns the picklable
:class:`~fedpriv.audit.regression.api.AuditResult`; the verdict is decided here, in the
test's process. An exit, a death or a run past ``timeout`` seconds raises
:class:`~fedpriv.audit.engine.isolation.UserCodeAbortedError` naming the mechanism and
the test, so the test fails and pytest goes on. What is not contained: code the test
runs outside the audit (building the mechanism, the test body itself), and, where
``os.fork`` does not exist (Windows), anything but ``SystemExit`` (the audit then runs
in the test's process). The worker is a fork: the mechanism need not be picklable, but
what it changes in its own process (a call counter, a cache, a file handle's position)
is not seen by the test; ``isolate=False`` runs the audit in the test's process.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from fedpriv.audit.engine.isolation import DEFAULT_TIMEOUT, check_timeout, run_isolated
from fedpriv.audit.regression.api import AuditResult, NeighboringPair, audit_mechanism
from fedpriv.privacy.errors import PrivacyViolationError

__all__ = ["DEFAULT_AUDIT_TIMEOUT", "Auditor"]

_DEFAULT_SAMPLES = 100_000

#: Seconds one isolated audit may run before its worker is stopped and the test fails
#: (the ``dp_audit`` marker's ``timeout=``). The same as ``fedpriv audit --timeout``'s
#: default, so an audit the command line finishes finishes in a test: an audit of the
#: default 10^5 samples per world takes seconds, one scaled tenfold for a nightly run
#: (``--dp-audit-samples-factor 10``) minutes, and an hour is still well inside a CI
#: job's limit (GitHub Actions stops a job at 6 h), so a hanging mechanism fails its
#: test, named, instead of the job being killed with no report.
DEFAULT_AUDIT_TIMEOUT = DEFAULT_TIMEOUT


def _name(mechanism: Any) -> str:
    """The mechanism's name for messages (its qualified name, else its repr)."""
    inner = getattr(mechanism, "func", mechanism)  # functools.partial
    name = getattr(inner, "__qualname__", None) or repr(inner)
    module = getattr(inner, "__module__", None)
    return f"{module}.{name}" if module else name


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
    record : callable, optional
        Receives every :class:`AuditResult` (the pytest plugin attaches it to the
        test's report).
    isolate : bool
        Run each audit in a forked worker (default True; module docstring).
    timeout : float
        Seconds, in (0, inf], an isolated audit may take (default
        :data:`DEFAULT_AUDIT_TIMEOUT`, 3600); unused with ``isolate=False``.
    where : str
        Names the caller in messages (the pytest plugin passes the test's node id).

    Raises
    ------
    TypeError
        If ``isolate`` is not a bool or ``timeout`` not a number.
    ValueError
        If ``timeout`` is NaN or not > 0.
    """

    samples: int = _DEFAULT_SAMPLES
    seed: int = 0
    confidence: float = 0.95
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    record: Callable[[AuditResult], None] | None = None
    isolate: bool = True
    timeout: float = DEFAULT_AUDIT_TIMEOUT
    where: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.isolate, bool):
            raise TypeError(f"`isolate` must be True or False, got {self.isolate!r}.")
        object.__setattr__(self, "timeout", check_timeout(self.timeout))

    def _settings(self, overrides: dict[str, Any]) -> dict[str, Any]:
        settings = {"samples": self.samples, "seed": self.seed, "confidence": self.confidence}
        settings.update(self.options)
        settings.update(overrides)
        return settings

    def _log(self, result: AuditResult) -> AuditResult:
        if self.record is not None:
            self.record(result)
        return result

    def _run(
        self, mechanism: Callable[..., np.ndarray], pair: NeighboringPair, claim: Any, overrides
    ) -> AuditResult:
        """``audit_mechanism`` with these settings, in a forked worker when ``isolate``."""
        __tracebackhide__ = True
        call = functools.partial(
            audit_mechanism, mechanism, pair, claim=claim, **self._settings(overrides)
        )
        if not self.isolate:
            return call()
        where = f" in {self.where}" if self.where else ""
        return run_isolated(
            call,
            timeout=self.timeout,
            what=f"the audited mechanism {_name(mechanism)}{where}",
            hint="raise the dp_audit marker's timeout= if it needs longer",
        )

    def audit(
        self,
        mechanism: Callable[..., np.ndarray],
        pair: NeighboringPair,
        *,
        claim: Any,
        **overrides: Any,
    ) -> AuditResult:
        """Run :func:`audit.audit_mechanism` with this auditor's settings.

        In a forked worker unless ``isolate`` is False (module docstring).

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

        Raises
        ------
        UserCodeAbortedError
            If ``isolate`` and the mechanism called ``sys.exit`` or ``os._exit``, its
            worker died, or the audit ran past ``timeout`` (the message names the
            mechanism and ``where``).
        """
        __tracebackhide__ = True
        return self._log(self._run(mechanism, pair, claim, overrides))

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
            If the audit refutes the claim (decided in this process, as
            :func:`~fedpriv.audit.regression.api.assert_private` does; its ``result``
            is the :class:`AuditResult`).
        UserCodeAbortedError
            As for :meth:`audit`.
        """
        __tracebackhide__ = True
        result = self._log(self._run(mechanism, pair, claim, overrides))
        if result.violated:
            error = PrivacyViolationError(result.evidence)
            error.result = result  # type: ignore[attr-defined]
            raise error
        return result

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
        UserCodeAbortedError
            As for :meth:`audit`.
        """
        __tracebackhide__ = True
        result = self.audit(mechanism, pair, claim=claim, **overrides)
        if not result.violated:
            raise AssertionError(f"expected a privacy violation, found none: {result.evidence}")
        return result
