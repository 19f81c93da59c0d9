"""The option choices and defaults of the ``run`` and ``experiment`` commands, as literals.

The family modules of :mod:`fedpriv.cli` build their parsers from these, so that
``fedpriv run ALGORITHM --help`` does not import NumPy, pandas or the algorithms; the
algorithms themselves are imported by the handlers. ``tests/test_cli_startup.py``
checks every constant here against its source (named beside it), so they cannot drift.
"""

from __future__ import annotations

__all__ = [
    "BETA_CHOICES",
    "BETA_VERSIONS",
    "ON_CAPACITY",
    "PRIVATIZER_CALIBRATIONS",
    "RESPOND",
    "REWARD_MODELS",
    "SCHEDULES",
    "SYNC_ORDERS",
    "UPDATE_ORDERS",
    "CONTAMINATION_KINDS",
    "COST_MODELS",
    "COUNT_FIELDS",
    "DELAY_CONVENTIONS",
    "DUBEY_AAMAS_EXPERIMENTS",
    "GRAPH_KINDS",
    "INDEX_UPDATES",
    "INTERVAL_RULES",
    "LOG_BASES",
    "LOG_TIMES",
    "MODES",
    "NORMALIZATIONS",
    "OWN_TERMS",
]

#: fedpriv.algorithms.networks.graphs.GRAPH_KINDS
GRAPH_KINDS = ("complete", "ring", "path", "star", "erdos_renyi")
#: fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.MODES
MODES = ("paper", "corrected")
#: sorted(fedpriv.privacy.PAPER_LOG_BASES)
LOG_BASES = ("10", "2", "e")
#: fedpriv.algorithms.li_song.network.COST_MODELS
COST_MODELS = ("paths", "edges")
#: fedpriv.algorithms.li_song.network.DELAY_CONVENTIONS
DELAY_CONVENTIONS = ("counter", "slots")
#: fedpriv.algorithms.dubey_aamas.robust.CONTAMINATION_KINDS
CONTAMINATION_KINDS = ("point", "uniform", "shift", "complement", "adversarial")
#: fedpriv.algorithms.dubey_aamas.robust.NORMALIZATIONS
NORMALIZATIONS = ("n", "inside")
#: fedpriv.privacy.calibrations.INTERVAL_RULES
INTERVAL_RULES = ("decaying", "fixed")
#: fedpriv.algorithms.dubey_aamas.cooperative.OWN_TERMS
OWN_TERMS = ("noisy", "raw")
#: fedpriv.algorithms.dubey_aamas.cooperative.COUNT_FIELDS
COUNT_FIELDS = ("release", "current")
#: fedpriv.algorithms.dubey_aamas.baselines.INDEX_UPDATES
INDEX_UPDATES = ("release", "every_round")
#: fedpriv.algorithms.dubey_aamas.baselines.LOG_TIMES
LOG_TIMES = ("round", "pulls")
#: fedpriv.audit.families.dubey_aamas.experiments: name -> default (horizon, n_trials, n_agents,
#: n_arms, seed) of default_config(name)
DUBEY_AAMAS_EXPERIMENTS = {
    "dubey-aamas-fig1a": (2000, 8, 20, 5, 0),
    "dubey-aamas-fig1b": (2000, 8, 20, 5, 0),
    "dubey-aamas-fig1c": (1000, 5, 20, 5, 0),
}
#: fedpriv.algorithms.feducb.centralized.BETA_VERSIONS
BETA_VERSIONS = ("H", "P", "tuned")
#: fedpriv.algorithms.feducb.decentralized.BETA_CHOICES
BETA_CHOICES = ("H", "P", "tuned")
#: fedpriv.algorithms.environments.linear.REWARD_MODELS
REWARD_MODELS = ("bernoulli", "beta")
#: fedpriv.privacy.mechanisms.matrix_tree.PRIVATIZER_CALIBRATIONS
PRIVATIZER_CALIBRATIONS = ("paper", "corrected", "exact")
#: fedpriv.algorithms.feducb.sync.SYNC_ORDERS
SYNC_ORDERS = ("MlogT", "M1.5", "MT")
#: fedpriv.algorithms.feducb.decentralized.ON_CAPACITY
ON_CAPACITY = ("raise", "stop")
#: fedpriv.algorithms.feducb.decentralized.RESPOND
RESPOND = ("receipt", "next_use")
#: fedpriv.algorithms.feducb.decentralized.SCHEDULES
SCHEDULES = ("adaptive", "fixed")
#: fedpriv.algorithms.feducb.linucb.UPDATE_ORDERS
UPDATE_ORDERS = ("round", "sequential")
