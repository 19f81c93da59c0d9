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
"""

from __future__ import annotations

from fedpriv.privacy import errors
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting import (
    sampling as _sampling,  # registers PoissonSampled with the routes
)
from fedpriv.privacy.accounting.guarantees import (
    PLD,
    RDP,
    ZCDP,
    ApproxDP,
    GaussianDP,
    PureDP,
    format_epsilon,
    gdp_to_approx_dp,
    pure_to_approx_dp,
    pure_to_zcdp,
    rdp_to_approx_dp,
    to_approx_dp,
    zcdp_to_approx_dp,
)
from fedpriv.privacy.accounting.routes import ROUTES, compose_routes
from fedpriv.privacy.accounting.sampling import PoissonSampled
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.calibrations import (
    PAPER_LOG_BASES,
    FedUCBCalibration,
    fed_ucb_node_epsilon,
    fed_ucb_scale,
    feducb_privatizer,
    li_song_claimed_epsilon,
    li_song_epoch_scale,
)
from fedpriv.privacy.ledger.accountant import RELATIVE_TOLERANCE, Accountant, event_epsilon
from fedpriv.privacy.mechanisms import LaplaceTreeCounter, laplace_release, raw_release
from fedpriv.privacy.mechanisms import (
    interval as _interval,  # registers IntervalRelease with the routes
)
from fedpriv.privacy.mechanisms.interval import IntervalRelease
from fedpriv.privacy.mechanisms.matrix_tree import (  # registers SymmetricMatrixGaussianTree with the routes
    MatrixTreePrivatizer,
    SymmetricMatrixGaussianTree,
    privatizer_calibration,
)
from fedpriv.privacy.relations import NeighboringRelation, parse_relation

del _interval, _sampling

__all__ = [
    "PAPER_LOG_BASES",
    "PLD",
    "RDP",
    "RELATIVE_TOLERANCE",
    "ROUTES",
    "ZCDP",
    "Accountant",
    "ApproxDP",
    "FedUCBCalibration",
    "GaussianDP",
    "IntervalRelease",
    "LaplaceTreeCounter",
    "MatrixTreePrivatizer",
    "NeighboringRelation",
    "PoissonSampled",
    "PureDP",
    "SymmetricMatrixGaussianTree",
    "compose_routes",
    "errors",
    "event_epsilon",
    "events",
    "fed_ucb_node_epsilon",
    "fed_ucb_scale",
    "feducb_privatizer",
    "format_epsilon",
    "gdp_to_approx_dp",
    "laplace_release",
    "li_song_claimed_epsilon",
    "li_song_epoch_scale",
    "parse_relation",
    "privatizer_calibration",
    "pure_to_approx_dp",
    "pure_to_zcdp",
    "raw_release",
    "rdp_to_approx_dp",
    "to_approx_dp",
    "tree_depth",
    "zcdp_to_approx_dp",
]
