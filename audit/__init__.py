"""fedpriv.audit: empirical privacy audits, the claims register and the CLI.

The regression-test API (``audit_mechanism``, ``assert_private``,
``NeighboringPair``, ``AuditResult``) and the estimators are importable from here.
Imports stay light: no matplotlib, no dask, no hypothesis at import time.
"""

from __future__ import annotations

from fedpriv.audit.regression.api import AuditResult, NeighboringPair, assert_private, audit_mechanism
from fedpriv.audit.estimators import (
    DIRECTIONS,
    NO_EVIDENCE,
    CurveAudit,
    EpsilonLowerBound,
    MuLowerBound,
    OneRunBound,
    audit_one_run,
    audit_one_run_mechanism,
    audit_privacy_curve,
    clopper_pearson_interval,
    default_epsilon_grid,
    estimate_delta_lower_bounds,
    estimate_epsilon_lower_bound,
    estimate_gdp_mu_lower_bound,
    estimate_one_run_epsilon,
    gaussian_log_density_ratio,
    laplace_log_density_ratio,
    laplace_threshold_grid,
    one_run_p_value,
)

__all__ = [
    "DIRECTIONS",
    "NO_EVIDENCE",
    "AuditResult",
    "CurveAudit",
    "EpsilonLowerBound",
    "MuLowerBound",
    "NeighboringPair",
    "OneRunBound",
    "assert_private",
    "audit_mechanism",
    "audit_one_run",
    "audit_one_run_mechanism",
    "audit_privacy_curve",
    "clopper_pearson_interval",
    "default_epsilon_grid",
    "estimate_delta_lower_bounds",
    "estimate_epsilon_lower_bound",
    "estimate_gdp_mu_lower_bound",
    "estimate_one_run_epsilon",
    "gaussian_log_density_ratio",
    "laplace_log_density_ratio",
    "laplace_threshold_grid",
    "one_run_p_value",
]
