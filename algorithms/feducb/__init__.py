"""FedUCB (Dubey & Pentland, NeurIPS 2020) and its LinUCB/OFUL baselines.

The public names below are also importable flat, ``from fedpriv.algorithms import
run_feducb``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "centralized": ("run_feducb", "run_feducb_fixed", "run_feducb_nonprivate"),
        "run": ("FedUCBRun", "FedUCBTranscript", "DecentralizedFedUCBRun"),
        "decentralized": ("run_feducb_decentralized",),
        "network": ("DecentralizedTranscript", "clique_cover", "power_graph"),
        "linucb": ("run_linucb", "run_linucb_pooled", "LinUCBRun"),
        "linucb_private": ("run_linucb_independent_private",),
        "sync": ("recommended_threshold", "threshold_for_syncs", "private_threshold_for_syncs"),
        "first_sync": ("first_sync_rounds",),
        "privatizer": ("PrivatizerCalibration", "privatizer_calibration"),
    },
)
