"""The settings and the result of Fed_UCB's verify job (Zhu et al. 2021).

:class:`VerifyConfig` and :class:`VerifyReport` sit below both the job
(:mod:`fedpriv.audit.families.gossip_fed_ucb.regret`, which re-exports them) and its
files (:mod:`fedpriv.audit.families.gossip_fed_ucb.report`), so that neither imports the
other back.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pandas as pd
from fedpriv.audit.claims.claim import ClaimResult
from fedpriv.privacy.checks import check_epsilon, check_int_at_least

__all__ = ["VerifyConfig", "VerifyReport"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VerifyConfig:
    """Settings of one ``fedpriv verify`` run.

    Attributes
    ----------
    quick : bool
        Smaller audits and regret runs (the whole job in under a minute).
    seed : int
        Root of the run's SeedSequence tree.
    data_path : Path or None
        UCI Diabetes-130 CSV (or zip): the hospital environment; ``None`` for the
        paper's synthetic generator.
    epsilons, horizons, audit_horizons : tuple
        Claimed ε values; horizons for the accountant; those also audited.
    audit_samples : tuple of (int, int)
        Confirming samples per world of the joint node audit, for each audited horizon
        (its threshold is chosen from the declared Laplace law before any sample is
        drawn, :func:`fedpriv.audit.engine.tree_nodes.audit_laplace_release`).
    audit_product_samples : tuple of (int, int)
        Samples per world of the product audit of the same nodes
        (:mod:`fedpriv.audit.engine.tree_product`), per audited horizon. Both audits
        run at 97.5% and the stronger is reported at 95%. The defaults reach, at 95%
        confidence, a lower bound above 1 for the paper's log2 calibration at T = 1024,
        ε = 1 when the final estimate is published (accountant 1.1) and tightness >= 0.9
        at every horizon (see the README's audit table).
    workers : int
        Processes for the audits and regret runs (default: every core); 1 runs them
        in this process.
    regret_horizon, n_trials : int
        Horizon and trials of the regret runs.
    """

    quick: bool = False
    seed: int = 0
    data_path: Path | None = None
    n_agents: int = 3
    n_arms: int = 5
    epsilons: tuple[float, ...] = (1.0, 2.0, 5.0)
    horizons: tuple[int, ...] = (16, 1024, 600_000)
    audit_horizons: tuple[int, ...] = (16, 1024, 600_000)
    audit_samples: tuple[tuple[int, int], ...] = (
        (16, 10**7),
        (1024, 3 * 10**7),
        (600_000, 2 * 10**7),
    )
    audit_product_samples: tuple[tuple[int, int], ...] = (
        (16, 10**7),
        (1024, 10**7),
        (600_000, 10**7),
    )
    confidence: float = 0.95
    regret_horizon: int = 20_000
    n_trials: int = 100
    ledger_horizon: int = 1024
    workers: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)

    def __post_init__(self) -> None:
        for eps in self.epsilons:
            check_epsilon("epsilon", eps)
        for horizon in self.horizons + (self.regret_horizon, self.ledger_horizon):
            check_int_at_least("horizon", horizon, 1)
        check_int_at_least("n_trials", self.n_trials, 1)
        check_int_at_least("seed", self.seed, 0)
        check_int_at_least("workers", self.workers, 1)
        if self.data_path is not None and not Path(self.data_path).is_file():
            raise ValueError(f"`data_path` must be an existing file, got {str(self.data_path)!r}.")

    @classmethod
    def quick_config(cls, **overrides) -> VerifyConfig:
        """The ``--quick`` settings (audits of 2·10⁵ samples per world at every horizon).

        Parameters
        ----------
        **overrides
            Fields of :class:`VerifyConfig` that replace the quick settings.

        Returns
        -------
        VerifyConfig
        """
        base = {
            "quick": True,
            "audit_samples": ((16, 2 * 10**5), (1024, 2 * 10**5), (600_000, 2 * 10**5)),
            "audit_product_samples": ((16, 2 * 10**5), (1024, 2 * 10**5), (600_000, 2 * 10**5)),
            "regret_horizon": 2_000,
            "n_trials": 20,
        }
        base.update(overrides)
        return cls(**base)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VerifyReport:
    """Everything ``fedpriv verify`` found (written by :mod:`fedpriv.audit.claims.report`)."""

    config: VerifyConfig
    seed_entropy: int
    environment: str
    lambda2: float
    claims: tuple[ClaimResult, ...]
    regret: pd.DataFrame
    curves: dict[str, np.ndarray]
    ledger: pd.DataFrame
    seconds: float
