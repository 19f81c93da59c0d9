"""Zhou & Chowdhury (ICLR 2024): Private-FedLinUCB under silo-level LDP and the shuffle model.

Xingyu Zhou and Sayak Ray Chowdhury, "On Differentially Private Federated Linear
Contextual Bandits", ICLR 2024 (arXiv 2302.13945). The family's one registration
(:class:`fedpriv.audit.claims.registration.Family`) under the key ``zhou_chowdhury``, built
through the same path a third party's family takes.
"""

from __future__ import annotations

from fedpriv.audit.claims.registration import Command, Family, lazy

__all__ = ["FAMILY"]


FAMILY = Family(
    key="zhou_chowdhury",
    title="Zhou & Chowdhury (ICLR 2024, Private-FedLinUCB)",
    algorithm_names={"private-fedlinucb": "Private-FedLinUCB"},
    structure_names={},
    claims=lazy("fedpriv.audit.families.zhou_chowdhury.claims:build_claims"),
    findings=lazy("fedpriv.audit.families.zhou_chowdhury.findings:FINDINGS"),
    views=lazy("fedpriv.audit.families.zhou_chowdhury.views:VIEWS"),
    algorithms="fedpriv.algorithms.zhou_chowdhury",
    calibration="fedpriv.privacy.calibrations.zhou_chowdhury",
    setting_fields={"batch_size": int, "figure": str, "data": str, "protocol": str, "acts_on": str},
    aliases=("zhou-chowdhury", "private-fedlinucb"),
    audit_cost=1,
    order=4,
    run_commands={
        "private-fedlinucb": Command(
            "fedpriv.cli.zhou_chowdhury",
            "Private-FedLinUCB, fixed batches (Zhou & Chowdhury Alg. 1)",
        )
    },
    experiments={
        "zhou-chowdhury-fig2a": Command(
            "fedpriv.cli.zhou_chowdhury",
            "Zhou & Chowdhury Fig. 2a: regret, silo-level LDP vs shuffle model by amplification",
        ),
        "zhou-chowdhury-fig2b": Command(
            "fedpriv.cli.zhou_chowdhury",
            "Zhou & Chowdhury Fig. 2b: regret, silo-level LDP vs shuffle model by vector sum",
        ),
    },
)
