"""Environments: pre-drawn reward tables and contexts.

The public names below are also importable flat, ``from fedpriv.algorithms import
homogeneous_bandit``; each is imported on first use (:mod:`fedpriv.algorithms.exports`).
"""

from fedpriv.algorithms.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "bernoulli": ("BernoulliMAB", "RewardTable", "homogeneous_bandit", "heterogeneous_bandit"),
        "heterogeneous": ("BanditEnvironment", "HeterogeneousBandit", "paper_synthetic_bandit"),
        "hospital": ("HospitalBandit", "hospital_bandit", "load_diabetes", "download_diabetes"),
        "linear": ("LinearBandit", "LinearBanditTables", "Substitution"),
    },
)
