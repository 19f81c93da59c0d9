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

import importlib
from typing import Any

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
    "audit_black_box",
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
    "stream_pair",
]

#: Public name -> the module that defines it.
_LAZY = {
    "AuditResult": "fedpriv.audit.regression.api",
    "NeighboringPair": "fedpriv.audit.regression.api",
    "assert_private": "fedpriv.audit.regression.api",
    "audit_mechanism": "fedpriv.audit.regression.api",
    "audit_black_box": "fedpriv.audit.regression.api",
    "stream_pair": "fedpriv.audit.engine.neighbors",
    "DIRECTIONS": "fedpriv.audit.estimators",
    "NO_EVIDENCE": "fedpriv.audit.estimators",
    "CurveAudit": "fedpriv.audit.estimators",
    "EpsilonLowerBound": "fedpriv.audit.estimators",
    "MuLowerBound": "fedpriv.audit.estimators",
    "OneRunBound": "fedpriv.audit.estimators",
    "audit_one_run": "fedpriv.audit.estimators",
    "audit_one_run_mechanism": "fedpriv.audit.estimators",
    "audit_privacy_curve": "fedpriv.audit.estimators",
    "clopper_pearson_interval": "fedpriv.audit.estimators",
    "default_epsilon_grid": "fedpriv.audit.estimators",
    "estimate_delta_lower_bounds": "fedpriv.audit.estimators",
    "estimate_epsilon_lower_bound": "fedpriv.audit.estimators",
    "estimate_gdp_mu_lower_bound": "fedpriv.audit.estimators",
    "estimate_one_run_epsilon": "fedpriv.audit.estimators",
    "gaussian_log_density_ratio": "fedpriv.audit.estimators",
    "laplace_log_density_ratio": "fedpriv.audit.estimators",
    "laplace_threshold_grid": "fedpriv.audit.estimators",
    "one_run_p_value": "fedpriv.audit.estimators",
}


def __getattr__(name: str) -> Any:
    """Import ``name`` from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
