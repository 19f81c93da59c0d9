"""fedpriv.audit: empirical privacy audits, the claims register and the CLI.

The regression-test API and the estimators are importable from here:
``audit_mechanism`` is the one audit entry point (a black-box sampler, a tree counter,
an end-to-end algorithm or a one-run canary audit), ``AuditResult`` the one result
type and ``NeighboringPair`` the one neighbouring-pair type (0-based locations;
``stream_pair`` builds a reward-stream pair).
Imports stay light: no matplotlib, no dask, no hypothesis at import time.

The names are imported on first use (:func:`__getattr__`), so that importing a
subpackage (the family registrations of ``fedpriv --help``) does not import the
estimators and NumPy.
"""

from __future__ import annotations

from fedpriv.algorithms.exports import lazy_exports

#: Module (relative to this package) -> the public names it defines, imported on first use.
_MODULES = {
    "regression.api": (
        "AuditResult",
        "NeighboringPair",
        "assert_private",
        "audit_mechanism",
        "audit_black_box",
    ),
    "engine.neighbors": ("stream_pair",),
    "estimators": (
        "DIRECTIONS",
        "NO_EVIDENCE",
        "CurveAudit",
        "EpsilonLowerBound",
        "MuLowerBound",
        "OneRunBound",
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
    ),
}


# Import a public name from its module on first use (PEP 562).
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES)
