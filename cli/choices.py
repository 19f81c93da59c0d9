"""Option choices shared by every family's ``run`` commands, as literals.

The family modules of :mod:`fedpriv.cli` build their parsers from literals, so that
``fedpriv run ALGORITHM --help`` does not import NumPy, pandas or the algorithms; each
family's own choices sit in its module, these two are shared.
``tests/test_cli_startup.py`` checks every constant against its source (named beside it).
"""

from __future__ import annotations

__all__ = ["GRAPH_KINDS", "MODES"]

#: fedpriv.algorithms.networks.graphs.GRAPH_KINDS
GRAPH_KINDS = ("complete", "ring", "path", "star", "erdos_renyi")
#: the paper/corrected switch ``mode`` of the algorithms' one signature (fedpriv.algorithms)
MODES = ("paper", "corrected")
