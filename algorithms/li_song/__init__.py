"""Li & Song's private federated MAB (CDP/CE-CDP/DDP/HDP/Single-MAB).

The public names below are also importable flat, ``from fedpriv.algorithms import
run_cdp_mab``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "mab": ("run_cdp_mab", "run_ddp_mab", "run_hdp_mab", "run_single_mab", "minimum_gap"),
        "core": ("LiSongRun",),
        "network": ("find_sink_agents", "table_ii_components", "simulate_gis"),
    },
)
