"""Dubey & Pentland (NeurIPS 2020), FedUCB: federated linear contextual bandits with user-level privacy.

The family's one registration (:class:`fedpriv.audit.claims.registration.Family`):
its claims, views, findings and commands under the key ``feducb``.
"""

from __future__ import annotations

from fedpriv.audit.claims.registration import Command, Family, lazy

__all__ = ["FAMILY"]


FAMILY = Family(
    key="feducb",
    title="Dubey & Pentland 2020 (NeurIPS, FedUCB)",
    algorithm_names={"feducb": "FedUCB", "feducb-decentralized": "decentralized FedUCB"},
    structure_names={"centralized": "through a controller", "decentralized": "peer to peer"},
    claims=lazy("fedpriv.audit.families.feducb.claims:build_claims"),
    findings=lazy("fedpriv.audit.families.feducb.findings:FINDINGS"),
    views=lazy("fedpriv.audit.families.feducb.views:VIEWS"),
    algorithms="fedpriv.algorithms.feducb",
    calibration="fedpriv.privacy.calibrations.feducb",
    setting_fields={
        "delta_prime": float,
        "n_syncs": int,
        "regime": str,
        "schedule": str,
        "structure": str,
        "sync_every": int,
        "target_syncs": int,
        "threshold": float,
    },
    aliases=(),
    order=0,
    run_commands={
        "feducb": Command(
            "fedpriv.cli.feducb",
            "centralized FedUCB (Alg. 1 + Privatizer), adaptive syncs",
            secure_noise=True,
            tables="contexts",
        ),
        "feducb-fixed": Command(
            "fedpriv.cli.feducb",
            "FedUCB with a fixed sync schedule (every B rounds)",
            secure_noise=True,
            tables="contexts",
        ),
        "feducb-nonprivate": Command(
            "fedpriv.cli.feducb", "non-private FedUCB (H = λI, no noise)", tables="contexts"
        ),
        "feducb-decentralized": Command(
            "fedpriv.cli.feducb",
            "decentralized FedUCB on a graph (Dubey & Pentland 2020, Alg. 3; --schedule fixed: data-independent releases every B rounds)",
            secure_noise=True,
            tables="contexts",
        ),
        "linucb": Command(
            "fedpriv.cli.feducb",
            "non-private OFUL/LinUCB run by every agent alone (M = 1: single agent)",
            tables="contexts",
        ),
        "linucb-independent-private": Command(
            "fedpriv.cli.feducb",
            "M private LinUCB learners, own Privatizer each, no communication",
            tables="contexts",
        ),
        "linucb-pooled": Command(
            "fedpriv.cli.feducb",
            "one non-private LinUCB learner that sees every agent's data",
            tables="contexts",
        ),
    },
    experiments={
        "feducb-fig1a": Command(
            "fedpriv.cli.feducb",
            "FedUCB Fig. 1A: per-agent regret at T vs ε for several M",
            tables="contexts",
        ),
        "feducb-fig1b": Command(
            "fedpriv.cli.feducb",
            "FedUCB Fig. 1B: regret curves for three communication regimes",
            tables="contexts",
        ),
        "feducb-fig1c": Command(
            "fedpriv.cli.feducb", "FedUCB Fig. 1C: regret curves for varying d", tables="contexts"
        ),
        "feducb-fig2": Command(
            "fedpriv.cli.feducb",
            "FedUCB Fig. 2 (appendix): regret vs the minimum gap for several ε",
            tables="contexts",
        ),
        "feducb-decentralized-schedules": Command(
            "fedpriv.cli.feducb",
            "decentralized FedUCB (Alg. 3): regret curves of the adaptive schedule beside fixed ones",
            tables="contexts",
        ),
    },
)
