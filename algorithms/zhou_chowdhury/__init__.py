"""Zhou & Chowdhury (ICLR 2024): Private-FedLinUCB and its environments.

The public names below are also importable flat, ``from fedpriv.algorithms import
run_private_fedlinucb``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "fedlinucb": (
            "PrivateFedLinUCBRun",
            "ZCCalibration",
            "run_private_fedlinucb",
            "zc_calibration",
        ),
        "environment": ("SyntheticEnvironment", "TableEnvironment"),
    },
)
