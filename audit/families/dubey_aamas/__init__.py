"""Dubey & Pentland (AAMAS 2020): private and Byzantine-proof cooperative UCB.

The family's one registration (:class:`fedpriv.audit.claims.registration.Family`):
its claims, views, findings and commands under the key ``dubey_aamas``.
"""

from __future__ import annotations

from fedpriv.audit.claims.registration import Command, Family, lazy

__all__ = ["FAMILY"]


FAMILY = Family(
    key="dubey_aamas",
    title="Dubey & Pentland 2020 (AAMAS, cooperative UCB)",
    algorithm_names={
        "private-coop-ucb": "private cooperative UCB",
        "byzantine-coop-ucb": "Byzantine cooperative UCB",
    },
    claims=lazy("fedpriv.audit.families.dubey_aamas.claims:build_claims"),
    findings=lazy("fedpriv.audit.families.dubey_aamas.findings:FINDINGS"),
    views=lazy("fedpriv.audit.families.dubey_aamas.views:VIEWS"),
    algorithms="fedpriv.algorithms.dubey_aamas",
    calibration="fedpriv.privacy.calibrations.dubey_aamas",
    setting_fields={
        "composition": str,
        "count_field": str,
        "graph_p": float,
        "graph_seed": int,
        "own_term": str,
        "q_value": float,
        "rule": str,
        "scope": str,
        "target_delta": float,
        "theta": float,
    },
    aliases=("byzantine", "coop_ucb", "coop-ucb"),
    order=3,
    run_commands={
        "private-coop-ucb": Command(
            "fedpriv.cli.dubey_aamas",
            "Private Multi-Agent UCB (Dubey & Pentland Alg. 1-2, interval mechanism)",
            secure_noise=True,
            tables="rewards",
        ),
        "byzantine-coop-ucb": Command(
            "fedpriv.cli.dubey_aamas",
            "Byzantine-Proof Multi-Agent UCB (Alg. 3, trimmed mean)",
            tables="rewards",
        ),
        "coop-ucb-nonprivate": Command(
            "fedpriv.cli.dubey_aamas",
            "cooperative UCB with raw means (the paper's non-private version)",
            tables="rewards",
        ),
        "ucb1": Command(
            "fedpriv.cli.dubey_aamas",
            "UCB1 on every agent in isolation (Auer et al. 2002)",
            tables="rewards",
        ),
        "dp-ucb-int": Command(
            "fedpriv.cli.dubey_aamas",
            "DP-UCB-INT on every agent in isolation (Tossou & Dimitrakakis 2016)",
            tables="rewards",
        ),
    },
    experiments={
        "dubey-aamas-fig1a": Command(
            "fedpriv.cli.dubey_aamas", "Dubey & Pentland AAMAS 2020 Figure 1a", tables="rewards"
        ),
        "dubey-aamas-fig1b": Command(
            "fedpriv.cli.dubey_aamas", "Dubey & Pentland AAMAS 2020 Figure 1b", tables="rewards"
        ),
        "dubey-aamas-fig1c": Command(
            "fedpriv.cli.dubey_aamas", "Dubey & Pentland AAMAS 2020 Figure 1c", tables="rewards"
        ),
    },
)
