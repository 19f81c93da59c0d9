"""The one result type of every audit: :class:`AuditResult`.

Every audit route of :func:`fedpriv.audit.audit_mechanism` (a black-box mechanism, a
tree counter, an end-to-end algorithm, a one-run canary audit) ends in one estimator
bound (:class:`~fedpriv.audit.estimators.EpsilonLowerBound`, or
:class:`~fedpriv.audit.estimators.OneRunBound` for one run). :class:`AuditResult`
holds that bound, says which audit gave it (``method``), compares it with the claim
and keeps the route's own numbers in ``details``. The ε lower bound, its confidence,
δ and the sample count are read from the bound, so they can never disagree with it.

Estimators (``estimate_epsilon_lower_bound``, ``audit_one_run``, ...) return their
bound records; audits return :class:`AuditResult`.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Mapping
from typing import Any

from fedpriv.audit.interfaces import Bound
from fedpriv.privacy.relations import NeighboringRelation

__all__ = ["AuditResult"]

_FIELDS = ("method", "bound", "claimed_epsilon", "violated", "seconds", "details")


@dataclasses.dataclass(frozen=True, slots=True, init=False, eq=False)
class AuditResult:
    """Outcome of one audit, whatever was audited.

    Attributes
    ----------
    method : str
        The audit that gave ``bound``: ``"mechanism"`` (black-box pilot/confirm,
        :func:`~fedpriv.audit.regression.api.audit_mechanism`), ``"tree counter"``
        (the Laplace tree counter run round by round), ``"tree nodes: joint"`` or
        ``"tree nodes: product"`` (white-box node audits,
        :mod:`fedpriv.audit.engine.tree_nodes`), ``"end-to-end"`` (coupled runs of a
        whole algorithm, :func:`~fedpriv.audit.engine.coupled.search_and_confirm`) or
        ``"one-run"`` (:func:`~fedpriv.audit.estimators.audit_one_run_mechanism`).
    bound : Bound
        The estimator's bound (:class:`~fedpriv.audit.estimators.EpsilonLowerBound`,
        or :class:`~fedpriv.audit.estimators.OneRunBound` for one run), with its
        confidence, δ and samples.
    claimed_epsilon : float
        The claim's ε at ``delta`` (nats); NaN when the audit was run without a claim.
    violated : bool
        Whether the evidence refutes the claim (computed at construction; by default
        ``epsilon_lower_bound > claimed_epsilon``). False never certifies the claim.
    seconds : float
        Wall time.
    details : Mapping of str to Any
        The route's own numbers (read-only). Each key is also readable as an
        attribute: ``result.channel`` is ``result.details["channel"]``.

    Notes
    -----
    Construct with keywords: ``AuditResult(method=..., bound=..., **details)``; a
    keyword that is not a field above goes into ``details``, so
    ``dataclasses.replace(result, event=...)`` replaces a detail. Compared by
    identity: details hold arrays and nested results.

    Examples
    --------
    >>> from fedpriv.audit.estimators import estimate_epsilon_lower_bound
    >>> import numpy as np
    >>> bound = estimate_epsilon_lower_bound(np.ones(100), np.zeros(100),
    ...                                      thresholds=np.array([0.5]))
    >>> r = AuditResult(method="example", bound=bound, claimed_epsilon=1.0, channel="c")
    >>> r.violated, r.channel, r.n_samples
    (True, 'c', 100)
    """

    method: str
    bound: Bound
    claimed_epsilon: float
    violated: bool
    seconds: float
    details: Mapping[str, Any]

    def __init__(
        self,
        *,
        method: str,
        bound: Bound,
        claimed_epsilon: float = math.nan,
        violated: bool | None = None,
        seconds: float = 0.0,
        details: Mapping[str, Any] | None = None,
        **more: Any,
    ) -> None:
        """Build a result; keywords beyond the fields are details (class docstring).

        Parameters
        ----------
        method : str
            The audit that gave ``bound``.
        bound : Bound
            The estimator's bound.
        claimed_epsilon : float, default NaN
            The claim's ε at the bound's δ; NaN without a claim.
        violated : bool, optional
            The verdict; default ``epsilon_lower_bound > claimed_epsilon``.
        seconds : float, default 0
            Wall time.
        details : Mapping, optional
            Route-specific numbers; ``**more`` is merged over it.
        **more
            Further details.

        Raises
        ------
        TypeError
            If ``method`` is not a string or ``bound`` not an estimator bound
            (:class:`~fedpriv.audit.interfaces.Bound`).
        """
        if not isinstance(method, str):
            raise TypeError(f"`method` must be a string, got {type(method).__name__}.")
        if not isinstance(bound, Bound):
            raise TypeError(
                "`bound` must be an estimator bound (epsilon_lower_bound, "
                "confidence, delta, n_samples), got "
                f"{type(bound).__name__}."
            )
        claimed_epsilon = float(claimed_epsilon)
        if violated is None:
            violated = bound.epsilon_lower_bound > claimed_epsilon  # False when NaN
        merged = {**(details or {}), **more}
        for name, value in (
            ("method", method),
            ("bound", bound),
            ("claimed_epsilon", claimed_epsilon),
            ("violated", bool(violated)),
            ("seconds", float(seconds)),
            ("details", types.MappingProxyType(merged)),
        ):
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        """A detail read as an attribute (only called when no field matches)."""
        if name.startswith("__") or name in _FIELDS:
            raise AttributeError(name)  # unpickling: the slots are not yet filled
        try:
            return self.details[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} of method {self.method!r} has no attribute or "
                f"detail {name!r}."
            ) from None

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the fields (details as a plain dict)."""
        return {
            **{name: getattr(self, name) for name in _FIELDS[:-1]},
            "details": dict(self.details),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled result."""
        for name in _FIELDS[:-1]:
            object.__setattr__(self, name, state[name])
        object.__setattr__(self, "details", types.MappingProxyType(state["details"]))

    @property
    def epsilon_lower_bound(self) -> float:
        """ε lower bound at ``delta`` (nats, >= 0), from ``bound``."""
        return float(self.bound.epsilon_lower_bound)

    @property
    def confidence(self) -> float:
        """Confidence of the bound (family-wise over its tests), from ``bound``."""
        return float(self.bound.confidence)

    @property
    def delta(self) -> float:
        """δ at which ``epsilon_lower_bound`` is stated, from ``bound``."""
        return float(self.bound.delta)

    @property
    def n_samples(self) -> int:
        """Samples per world behind ``bound`` (one-run: the canaries of the one run)."""
        return int(self.bound.n_samples)

    @property
    def tightness(self) -> float:
        """``epsilon_lower_bound / claimed_epsilon`` (NaN unless the claim's ε is in (0, inf))."""
        if not 0.0 < self.claimed_epsilon < math.inf:
            return math.nan
        return self.epsilon_lower_bound / self.claimed_epsilon

    @property
    def evidence(self) -> str:
        """One human-readable sentence with the numbers behind the verdict."""
        get = self.details.get
        verdict = "VIOLATED" if self.violated else "no evidence of a violation"
        claim = f"claim {get('claim')!r}; " if "claim" in self.details else ""
        text = (
            f"{verdict}: {claim}ε lower bound {self.epsilon_lower_bound:.4g}"
            f" at δ={self.delta:.3g} vs claimed ε {self.claimed_epsilon:.4g}"
            f" ({self.confidence:.0%} confidence, {self.n_samples} samples per world,"
        )
        if self.method == "mechanism":
            text += f" {get('score')} score, route {get('route')}"
        else:
            text += f" method {self.method}"
        bound = self.bound
        if "orientation" in self.details and getattr(bound, "direction", "none") != "none":
            sign = ">=" if get("orientation") > 0 else "<="
            threshold = get("orientation") * bound.threshold
            text += (
                f"; best event {{score {sign} {threshold:.4g}}} {bound.direction},"
                f" counts {bound.count_d}/{bound.count_d_prime}"
            )
        elif "event" in self.details:
            text += f"; event {get('event')}"
        mu = get("mu")
        if mu is not None:
            claimed_mu = getattr(get("claim"), "mu", math.nan)
            text += f"; μ lower bound {mu.mu_lower_bound:.4g} vs claimed μ {claimed_mu:.4g}"
        if get("reading") == "gaussian" and mu is not None:
            from fedpriv.audit.estimators.gdp import claim_mu

            text += (
                f"; Gaussian-DP reading: claim read as μ <= "
                f"{claim_mu(get('claim'), self.delta):.4g},"
                f" ε {get('reading_epsilon_lower_bound'):.4g} at δ={self.delta:.3g} if"
                " the trade-off curve is Gaussian"
            )
            shape = get("shape_test")
            if shape is not None:
                for test in get("shape_tests") or (shape,):
                    text += f"; {test.description}"
                power = get("shape_power")
                if power is not None:
                    text += f"; {power.description}"
                if get("reading_verdict") == "unresolved":
                    text += (
                        "; the reading is declined: UNRESOLVED under the Gaussian-DP"
                        " reading, which refutes nothing here (the verdict rests on the"
                        " any-mechanism bounds)"
                    )
        if get("looks", 1) > 1 or get("samples_budget", self.n_samples) != self.n_samples:
            text += (
                f"; sequential: {get('looks')} look(s), {get('samples_saved')} samples"
                " per world saved"
            )
        curve = get("curve")
        if curve is not None and curve.violated:
            e = curve.worst_epsilon
            i = curve.epsilons.index(e)
            text += (
                f"; curve: δ_LB({e:.3g}) = {curve.delta_lower_bounds[i]:.4g}"
                f" > claimed {curve.claimed_deltas[i]:.4g}"
            )
        if get("neighboring_relation") is not None:
            text += f"; relation {get('neighboring_relation').value}"
        return text + ")"

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-friendly summary: the bound's numbers, the verdict and the details.

        Returns
        -------
        dict of str to Any
            Nested results as dicts, enums as their values, a claim as its repr.
        """
        out: dict[str, Any] = {
            "method": self.method,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "confidence": self.confidence,
            "delta": self.delta,
            "n_samples": self.n_samples,
            "claimed_epsilon": self.claimed_epsilon,
            "violated": self.violated,
            "seconds": self.seconds,
        }
        for name, value in {"bound": self.bound, **self.details}.items():
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif isinstance(value, tuple) and value and all(hasattr(v, "to_dict") for v in value):
                value = [v.to_dict() for v in value]
            elif name == "claim":
                value = repr(value)
            elif isinstance(value, NeighboringRelation):
                value = value.value
            out[name] = value
        out.update(tightness=self.tightness, evidence=self.evidence)
        return out
