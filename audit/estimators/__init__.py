"""Empirical lower bounds on privacy loss from samples on neighboring datasets.

The public home of every estimator; each returns a bound with its confidence and
sample count, and none can certify privacy (a bound above the claim refutes it).

- :func:`estimate_epsilon_lower_bound`: Clopper–Pearson threshold tests over a
  predeclared grid, Bonferroni over thresholds and both directions; with ``delta``
  it bounds ε at an (ε, δ) claim's δ, ``ln((p_lo - δ) / q_hi)``
  (:mod:`fedpriv.audit.estimators.threshold`).
- White-box scores: feed the log-likelihood ratio (:mod:`fedpriv.audit.estimators.white_box`) to the
  same threshold tests; it is the optimal statistic when the density is known.
- :func:`estimate_delta_lower_bounds`, :func:`audit_privacy_curve`: the curve audit,
  empirical δ_LB(ε') against the claimed δ(ε') (:mod:`fedpriv.audit.estimators.curve`).
- :func:`estimate_gdp_mu_lower_bound`: Gaussian-DP μ lower bound
  ``Φ⁻¹(1 - FPR_up) - Φ⁻¹(FNR_up)``, and :func:`assess_gaussian_shape`, the test of
  the Gaussian trade-off shape the Gaussian-DP reading of an (ε, δ) claim assumes
  (:mod:`fedpriv.audit.estimators.gdp`, :mod:`fedpriv.audit.estimators.shape`).
- :func:`audit_one_run`, :func:`audit_one_run_mechanism`,
  :func:`estimate_one_run_epsilon`: one-run auditing with canaries (Steinke, Nasr &
  Jagielski 2023; :mod:`fedpriv.audit.estimators.one_run`).

- :func:`beta_binomial_confidence_sequence`: time-uniform bounds on an event rate for
  sequential audits that stop at the first refutation
  (:mod:`fedpriv.audit.estimators.sequential`).

Threshold, curve and μ estimators evaluated on the same scores, thresholds and
confidence share one family of simultaneous bounds (:mod:`fedpriv.audit.estimators.bounds`), so their
results hold jointly at that confidence.
"""

from __future__ import annotations

from fedpriv.algorithms.exports import lazy_exports

#: Module (relative to this package) -> its public names, imported on first use (PEP 562), so that
#: the audit entry point imports the estimators it runs (threshold, curve, GDP), not
#: the one-run, sequential and white-box ones.
_MODULES = {
    "threshold": (
        "DIRECTIONS",
        "NO_EVIDENCE",
        "EpsilonLowerBound",
        "clopper_pearson_interval",
        "epsilon_lower_bound_from_counts",
        "estimate_epsilon_lower_bound",
        "laplace_threshold_grid",
    ),
    "curve": (
        "CurveAudit",
        "audit_privacy_curve",
        "default_epsilon_grid",
        "estimate_delta_lower_bounds",
    ),
    "gdp": ("MuLowerBound", "estimate_gdp_mu_lower_bound"),
    "shape": (
        "SHAPE_BINS",
        "SHAPE_MIN_SAMPLES",
        "GaussianShapeTest",
        "assess_gaussian_shape",
        "gaussian_shape_from_counts",
        "pooled_quantile_edges",
    ),
    "one_run": (
        "OneRunBound",
        "audit_one_run",
        "audit_one_run_mechanism",
        "estimate_one_run_epsilon",
        "one_run_p_value",
    ),
    "sequential": ("beta_binomial_confidence_sequence",),
    "bounds": ("epsilon_lower_bound_at_delta",),
    "white_box": ("gaussian_log_density_ratio", "laplace_log_density_ratio"),
}


# Import a public name from its module on first use (PEP 562).
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES)
