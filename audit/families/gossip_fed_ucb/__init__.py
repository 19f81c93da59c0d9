"""Zhu et al. (2021): Gossip_UCB and the private Fed_UCB.

The family's one registration (:class:`fedpriv.audit.claims.registration.Family`):
its claims, views, findings and commands under the key ``gossip_fed_ucb``.
"""

from __future__ import annotations

from fedpriv.audit.claims.attachment import Attachment, Option
from fedpriv.audit.claims.registration import Command, Family, lazy

__all__ = ["FAMILY"]


FAMILY = Family(
    key="gossip_fed_ucb",
    title="Zhu et al. 2021",
    algorithm_names={"gossip-fed-ucb": "Fed_UCB"},
    claims=lazy("fedpriv.audit.families.gossip_fed_ucb.claims:build_claims"),
    findings=lazy("fedpriv.audit.families.gossip_fed_ucb.findings:FINDINGS"),
    views=lazy("fedpriv.audit.families.gossip_fed_ucb.views:VIEWS"),
    algorithms="fedpriv.algorithms.gossip_fed_ucb",
    calibration="fedpriv.privacy.calibrations.gossip_fed_ucb",
    setting_fields={
        "canary": float,
        "data": str,
        "lambda_2": float,
        "log_base": str,
        "node_scale": float,
        "released_prefixes": int,
        "rewards": str,
        "scope": str,
    },
    aliases=("fed_ucb", "gossip", "zhu", "fed-ucb"),
    order=2,
    # Its per-row audits are short (tree nodes, one round of the algorithm); the grid's
    # tree audits run in the attachment.
    audit_cost=1,
    attachments=(
        Attachment(
            name="regret",
            module="fedpriv.audit.families.gossip_fed_ucb.regret",
            title="Fed_UCB's regret runs, tree audits of the grid and ledger",
            options=(
                Option(
                    flag="--data",
                    field="data_path",
                    kind="path",
                    metavar="CSV",
                    help="UCI Diabetes-130 CSV or zip for the regret runs "
                    "(default: the paper's synthetic bandit)",
                ),
                Option(
                    flag="--trials",
                    field="n_trials",
                    kind="int",
                    metavar="N",
                    help="regret-run trials",
                ),
                Option(
                    flag="--regret-horizon",
                    field="regret_horizon",
                    kind="int",
                    metavar="T",
                    help="regret-run horizon",
                ),
            ),
            index="report.md",
            index_text="Full Fed_UCB report",
        ),
    ),
    run_commands={
        "gossip-ucb": Command(
            "fedpriv.cli.gossip_fed_ucb",
            "non-private Gossip_UCB (Zhu et al. 2021)",
            tables="rewards",
        ),
        "gossip-fed-ucb": Command(
            "fedpriv.cli.gossip_fed_ucb",
            "private Fed_UCB (Zhu et al. 2021, Alg. 3-4)",
            secure_noise=True,
            tables="rewards",
        ),
    },
    experiments={},
)
