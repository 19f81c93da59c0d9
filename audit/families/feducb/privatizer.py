"""FedUCB's Privatizer bracketed at δ = 10⁻⁶: a mechanism-level audit (one pair, oblivious).

The fixed-schedule rows of the register no longer use this bracket: their view is
charged and audited for adaptivity (the agent's own actions between syncs move up to
``B`` pairs of a leaf), white-box on the adaptive stream
(:mod:`fedpriv.audit.families.feducb.adaptive`). What follows bounds the mechanism alone,
the rows' ``mechanism_epsilon``.

With the fixed sync schedule the claimed δ = 0.1 is vacuous (the accountant's ε there
is 0), so the row is bracketed at δ = 10⁻⁶, where the accountant's ε is positive. The
end-to-end audit (:func:`fedpriv.audit.families.feducb.recipes.audit_sync_timing`,
:func:`~fedpriv.audit.families.feducb.recipes.audit_feducb_decentralized_fixed`: 10⁴ runs per
world, an event searched on the whole transcript) cannot reach the 10⁻⁵-scale tails
an ε at δ = 10⁻⁶ lives in. :func:`with_privatizer_bracket` adds the white-box audit of
the Privatizer nodes covering a substituted pair
(:func:`fedpriv.audit.engine.gaussian_nodes.audit_privatizer_nodes`) with the
parameters the algorithm's own run uses in the claim's setting (``σ_N``, the
Frobenius sensitivity ``√2 (L² + B²)``, the ``n = ⌊T/B⌋`` leaves of one tree; centralized:
one tree per agent; decentralized: one per (agent, set), Remark 5), and reports the
stronger of the two bounds at δ = 10⁻⁶.

What the new bound bounds: the Privatizer's releases for an *oblivious* leaf stream
that differs in one ``(x, y)`` pair, the object the accountant prices
(``mechanism_epsilon``), not the adaptive algorithm (whose later leaves can also move
with the pair: Alg. 1 line 4, cf. Remark 3). Both bounds hold at once at the family-wise
confidence: each audit runs at ``1 − α/2`` (:func:`fedpriv.audit.engine.combine.halved`),
and the end-to-end bound at the claimed δ is the same event's, so the row's three numbers
(end-to-end at the claimed δ, end-to-end and Privatizer at 10⁻⁶) hold together at ``1 − α``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.claim import VACUOUS_DELTA_PROBE
from fedpriv.audit.engine.combine import half_confidence
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit
from fedpriv.audit.engine.gaussian_nodes import PrivatizerAuditResult, audit_privatizer_nodes
from fedpriv.audit.estimators import epsilon_lower_bound_at_delta
from fedpriv.privacy.checks import check_int_at_least

__all__ = ["MECHANISM_SAMPLES_PER_RUN", "audit_privatizer_of_run", "with_privatizer_bracket"]

#: The Privatizer audit draws this many runs per world per end-to-end confirming run
#: (``verify``: 10⁴ → 10⁷, about 17 s per world on one core; ``--quick``: 10³ → 10⁶).
MECHANISM_SAMPLES_PER_RUN = 1_000

#: δ of the bracket (docs/reference/verdicts.md: where the claimed δ makes ε vacuous, ε at 10⁻⁶ is shown).
_BRACKET_DELTA = VACUOUS_DELTA_PROBE


def audit_privatizer_of_run(
    run,
    spec,
    *,
    n_leaves: int,
    n_samples: int,
    seed: int | np.random.SeedSequence,
    confidence: float,
    delta: float = _BRACKET_DELTA,
) -> PrivatizerAuditResult:
    """The Privatizer audit with the calibration of ``run`` (a FedUCB run's result).

    Parameters
    ----------
    run : FedUCBRun or DecentralizedFedUCBRun
        Read for ``calibration.noise_stddev`` and ``calibration.frobenius_sensitivity``.
    spec : LinearBandit
        Read for ``dim``, ``bound_x`` (``L``) and ``bound_y`` (``B``).
    n_leaves : int
        Leaves one Privatizer tree releases, >= 1.
    n_samples, seed, confidence, delta
        As in :func:`~fedpriv.audit.engine.gaussian_nodes.audit_privatizer_nodes`.

    Returns
    -------
    PrivatizerAuditResult

    Raises
    ------
    ValueError
        If ``run`` has no Privatizer (non-private) or an argument is out of range.
    """
    cal = run.calibration
    if cal is None:
        raise ValueError("`run` has no Privatizer (non-private run): nothing to audit.")
    return audit_privatizer_nodes(
        noise_stddev=cal.noise_stddev,
        frobenius_sensitivity=cal.frobenius_sensitivity,
        dim=int(spec.dim),
        n_leaves=check_int_at_least("n_leaves", n_leaves, 1),
        bound_x=spec.bound_x,
        bound_y=spec.bound_y,
        n_samples=n_samples,
        seed=seed,
        delta=delta,
        confidence=confidence,
    )


def with_privatizer_bracket(
    result: EndToEndAudit, run, spec, *, n_leaves: int, budget: AuditBudget, seed
) -> EndToEndAudit:
    """``result`` (run at ``1 − α/2``) with the Privatizer audit's bound at δ = 10⁻⁶.

    The Privatizer audit runs at ``1 − α/2`` on ``budget.samples ×
    MECHANISM_SAMPLES_PER_RUN`` runs per world, at ``child_seed(seed, 2)`` (the
    end-to-end audit uses addresses 0 and 1 below ``seed``). The returned audit's
    ``epsilon_lower_bound_at_1e_6`` is the larger of the end-to-end event's bound at
    10⁻⁶ and the Privatizer's; every bound is stated at ``budget.confidence``
    (module docstring); ``seconds`` is the sum.

    Parameters
    ----------
    result : EndToEndAudit
        The end-to-end audit, at ``1 − α/2``.
    run : FedUCBRun or DecentralizedFedUCBRun
        A run with the row's calibration.
    spec : LinearBandit
        The environment.
    n_leaves : int
        Leaves one Privatizer tree releases, >= 1.
    budget : AuditBudget
        The family-wise budget.
    seed : int or SeedSequence
        The row's audit address.

    Returns
    -------
    EndToEndAudit
    """
    half = half_confidence(budget.confidence)
    mechanism = audit_privatizer_of_run(
        run,
        spec,
        n_leaves=n_leaves,
        n_samples=budget.samples * MECHANISM_SAMPLES_PER_RUN,
        seed=child_seed(seed, 2),
        confidence=half,
    )
    own = epsilon_lower_bound_at_delta(result.bound, _BRACKET_DELTA)
    if np.isfinite(result.epsilon_lower_bound_at_1e_6):
        own = max(own, float(result.epsilon_lower_bound_at_1e_6))
    at_bracket = max(own, mechanism.bound.epsilon_lower_bound)
    use_mechanism = mechanism.bound.epsilon_lower_bound >= own
    family = budget.confidence
    return dataclasses.replace(
        result,
        bound=dataclasses.replace(result.bound, confidence=family),
        epsilon_lower_bound_at_1e_6=at_bracket,
        bound_at_1e_6=dataclasses.replace(
            mechanism.bound if use_mechanism else result.bound, confidence=family
        ),
        event_at_1e_6=(
            f"Privatizer, mechanism level: {mechanism.description}; threshold "
            f"{mechanism.bound.threshold:.6g} chosen from the declared N(±μ²/2, μ²) law, "
            f"μ = {mechanism.mu:.4g} (the end-to-end event gives {own:.4g} at δ = 1e-6)"
            if use_mechanism
            else f"the end-to-end event (Privatizer audit {mechanism.bound.epsilon_lower_bound:.4g})"
        ),
        seconds=result.seconds + mechanism.seconds,
    )
