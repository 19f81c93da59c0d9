"""Dubey & Pentland's cooperative UCB (AAMAS 2020) and its baselines.

The public names below are also importable flat, ``from fedpriv.algorithms import
run_private_coop_ucb``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "cooperative": ("run_private_coop_ucb", "run_coop_ucb_nonprivate"),
        "byzantine": ("run_byzantine_coop_ucb",),
        "baselines": ("run_ucb1", "run_dp_ucb_int"),
        "runs": ("CoopRun", "UCBRun"),
        "robust": ("Contamination",),
    },
)
