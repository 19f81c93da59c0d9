"""fedpriv: verify the differential-privacy claims of federated bandit algorithms.

This folder (``api/`` in the repository) is installed as the top-level package
``fedpriv``; the repository's ``privacy/``, ``algorithms/``, ``audit/`` and ``cli/``
folders are installed beneath it as ``fedpriv.privacy``, ``fedpriv.algorithms``,
``fedpriv.audit`` and ``fedpriv.cli`` (see ``[tool.setuptools]`` in
``pyproject.toml``). Imports flow ``privacy`` <- ``algorithms`` <- ``audit`` <-
``cli``, never back.

The everyday API is importable from here. It is loaded lazily (PEP 562), so
``import fedpriv`` and ``fedpriv --help`` stay fast:

>>> import fedpriv
>>> accountant = fedpriv.Accountant(disjoint=("agent", "arm"))
>>> release = fedpriv.events.Laplace(scale=1.0, l1_sensitivity=1.0)
>>> accountant.spend(release, key={"agent": 0, "arm": 0})
>>> accountant.get_epsilon(0.0)
1.0
>>> "Accountant" in dir(fedpriv) and "importlib" not in dir(fedpriv)
True

Objects
-------
Accountant, events, errors, NeighboringRelation
    The typed accountant, its events and errors (:mod:`fedpriv.privacy`).
PureDP, ApproxDP, ZCDP, GaussianDP, RDP, PLD
    The guarantee types.
audit_mechanism, assert_private, NeighboringPair, AuditResult
    The regression-test API (:mod:`fedpriv.audit`): the one audit entry point, its
    assertion form, the one neighbouring-pair type and the one result type.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Accountant": "fedpriv.privacy",
    "events": "fedpriv.privacy",
    "errors": "fedpriv.privacy",
    "NeighboringRelation": "fedpriv.privacy",
    "PureDP": "fedpriv.privacy",
    "ApproxDP": "fedpriv.privacy",
    "ZCDP": "fedpriv.privacy",
    "GaussianDP": "fedpriv.privacy",
    "RDP": "fedpriv.privacy",
    "PLD": "fedpriv.privacy",
    "audit_mechanism": "fedpriv.audit",
    "assert_private": "fedpriv.audit",
    "NeighboringPair": "fedpriv.audit",
    "AuditResult": "fedpriv.audit",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def _version() -> str:
    """The installed distribution's version (importlib.metadata costs ~0.1 s: on use)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fedpriv")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import an everyday name on first use (PEP 562)."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'fedpriv' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names only (PEP 562): ``__all__``, not this module's own helpers and
    imports, nor the subpackages (``fedpriv.privacy`` and the others are imported by
    name)."""
    return sorted(__all__)
