"""fedpriv.privacy: guarantees, events, mechanisms and the typed accountant.

Every noise draw and every released statistic of the algorithms goes through this
package: a mechanism charges the :class:`Accountant` with a typed event before it
draws noise or returns a value.

Rooms, imported one way (each only from the ones before it): the top-level
:mod:`~fedpriv.privacy.errors`, :mod:`~fedpriv.privacy.relations` and argument checks;
:mod:`~fedpriv.privacy.accounting` (guarantees, events, handlers, composition routes,
the verdict rule); :mod:`~fedpriv.privacy.ledger` (the accountant, its running budget
checks and its SQLite store); :mod:`~fedpriv.privacy.calibrations` (each paper's noise
formulas, one module per paper family); :mod:`~fedpriv.privacy.mechanisms`;
:mod:`~fedpriv.privacy.deployment` (budget reports of a TOML deployment).

The names below are imported on first use (PEP 562), so importing one room (the
argument checks, the guarantee types) does not import SciPy or the other rooms.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it (a module itself for ``errors``/``events``).
#: Imported on first use (PEP 562), so that importing one room (``fedpriv.privacy.checks``,
#: the guarantees an audit needs) imports neither SciPy, the accountant, the
#: calibrations nor the mechanisms. Event types defined outside
#: :mod:`~fedpriv.privacy.accounting.events` (``PoissonSampled``, ``Shuffled``,
#: ``IntervalRelease``, ``SymmetricMatrixGaussianTree``) register their pricing handlers
#: in the module that defines them; the ledger codec, which resolves stored types by
#: name, imports them all (:mod:`fedpriv.privacy.accounting.builtin`).
_EXPORTS = {
    "errors": "fedpriv.privacy.errors",
    "events": "fedpriv.privacy.accounting.events",
    **dict.fromkeys(
        (
            "PLD",
            "RDP",
            "ZCDP",
            "ApproxDP",
            "GaussianDP",
            "PureDP",
            "format_epsilon",
            "gdp_to_approx_dp",
            "pure_to_approx_dp",
            "pure_to_zcdp",
            "rdp_to_approx_dp",
            "to_approx_dp",
            "zcdp_to_approx_dp",
        ),
        "fedpriv.privacy.accounting.guarantees",
    ),
    "ROUTES": "fedpriv.privacy.accounting.routes",
    "compose_routes": "fedpriv.privacy.accounting.routes",
    "PoissonSampled": "fedpriv.privacy.accounting.sampling",
    "Shuffled": "fedpriv.privacy.accounting.shuffling",
    "from_dp_event": "fedpriv.privacy.accounting.interop",
    "to_dp_event": "fedpriv.privacy.accounting.interop",
    "tree_depth": "fedpriv.privacy.accounting.tree",
    "RELATIVE_TOLERANCE": "fedpriv.privacy.accounting.guarantees",
    "Accountant": "fedpriv.privacy.ledger.accountant",
    "event_epsilon": "fedpriv.privacy.ledger.pricing",
    "LaplaceTreeCounter": "fedpriv.privacy.mechanisms",
    "laplace_release": "fedpriv.privacy.mechanisms",
    "raw_release": "fedpriv.privacy.mechanisms",
    "IntervalRelease": "fedpriv.privacy.accounting.interval",
    "MatrixTreePrivatizer": "fedpriv.privacy.mechanisms.matrix_tree",
    "SymmetricMatrixGaussianTree": "fedpriv.privacy.accounting.matrix_tree",
    "NeighboringRelation": "fedpriv.privacy.relations",
    "parse_relation": "fedpriv.privacy.relations",
}

__all__ = [
    "PLD",
    "RDP",
    "RELATIVE_TOLERANCE",
    "ROUTES",
    "ZCDP",
    "Accountant",
    "ApproxDP",
    "GaussianDP",
    "IntervalRelease",
    "LaplaceTreeCounter",
    "MatrixTreePrivatizer",
    "NeighboringRelation",
    "PoissonSampled",
    "PureDP",
    "Shuffled",
    "SymmetricMatrixGaussianTree",
    "compose_routes",
    "errors",
    "event_epsilon",
    "events",
    "format_epsilon",
    "from_dp_event",
    "gdp_to_approx_dp",
    "gossip_fed_ucb_node_epsilon",
    "gossip_fed_ucb_scale",
    "laplace_release",
    "parse_relation",
    "pure_to_approx_dp",
    "pure_to_zcdp",
    "raw_release",
    "rdp_to_approx_dp",
    "to_approx_dp",
    "to_dp_event",
    "tree_depth",
    "zcdp_to_approx_dp",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562).

    A paper family's calibration (``fedpriv.privacy.calibrations.<key>``) is reachable
    here too by its name, for code written before the calibrations had their own
    package; its home, generated from the families' modules, is
    :mod:`fedpriv.privacy.calibrations`."""
    module = _EXPORTS.get(name)
    if module is None and not name.startswith("_"):
        calibrations = importlib.import_module("fedpriv.privacy.calibrations")
        if name in calibrations.__all__:
            value = getattr(calibrations, name)
            globals()[name] = value
            return value
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in ("errors", "events"):
        value = importlib.import_module(module)
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
