"""fedpriv.privacy: guarantees, events, mechanisms and the typed accountant.

Every noise draw and every released statistic of the algorithms goes through this
package: a mechanism charges the :class:`Accountant` with a typed event before it
draws noise or returns a value.
"""

from __future__ import annotations

from privacy import errors, events
from privacy.accountant import RELATIVE_TOLERANCE, Accountant, event_epsilon
from privacy.calibration import (
    PAPER_LOG_BASES,
    fed_ucb_node_epsilon,
    fed_ucb_scale,
)
from privacy.guarantees import ApproxDP, PureDP, format_epsilon, pure_to_approx_dp
from privacy.mechanisms import LaplaceTreeCounter, laplace_release, raw_release
from privacy.relations import NeighboringRelation, parse_relation
from privacy.tree import tree_depth

__all__ = [
    "PAPER_LOG_BASES",
    "RELATIVE_TOLERANCE",
    "Accountant",
    "ApproxDP",
    "LaplaceTreeCounter",
    "NeighboringRelation",
    "PureDP",
    "errors",
    "event_epsilon",
    "events",
    "fed_ucb_node_epsilon",
    "fed_ucb_scale",
    "format_epsilon",
    "laplace_release",
    "parse_relation",
    "pure_to_approx_dp",
    "raw_release",
    "tree_depth",
]
