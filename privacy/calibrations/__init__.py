"""Noise calibrations as each paper prescribes them, and as corrected.

Each paper family's calibration is its own module, named by the family's key
(``privacy/calibrations/<key>.py``): the noise the paper prescribes, **as written**,
for its claimed guarantee, together with that claim, so that reports can put the claim
next to what the accountant computes (and fedpriv's correction where the paper is
wrong). Each module's docstring cites the paper's section, algorithm or proposition.
Nothing here draws noise or charges an accountant.

This package re-exports every public name of every such module (each module's
``__all__``), generated when it is imported: a new family's module is found by its
file alone and adds nothing here. Two modules may not export the same name.

A module may also name, in ``DEPLOYMENT_FUNCTIONS`` (a tuple of its function names),
the calibrations a deployment file may call from a ``[calibration.NAME]`` table
(:mod:`fedpriv.privacy.deployment`); :data:`DEPLOYMENT_FUNCTIONS` here maps each such
name to its function, over all modules.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

#: A module's tuple of deployment-callable function names (merged, not re-exported).
_DEPLOYMENT = "DEPLOYMENT_FUNCTIONS"


def _generate() -> tuple[dict[str, Any], dict[str, Callable[..., Any]]]:
    """(public name -> value, deployment function name -> function) over the modules."""
    exports: dict[str, Any] = {}
    owners: dict[str, str] = {}
    deployment: dict[str, Callable[..., Any]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name in module.__all__:
            if name == _DEPLOYMENT:
                for function in getattr(module, name):
                    deployment[function] = getattr(module, function)
                continue
            if name in owners:
                raise ImportError(
                    f"calibration name {name!r} is exported by both {owners[name]} and "
                    f"{module.__name__}; rename one."
                )
            owners[name] = module.__name__
            exports[name] = getattr(module, name)
    return exports, deployment


_exports, DEPLOYMENT_FUNCTIONS = _generate()
globals().update(_exports)

__all__ = ["DEPLOYMENT_FUNCTIONS", *sorted(_exports)]
