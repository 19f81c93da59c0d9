"""Dubey & Pentland (NeurIPS 2020), FedUCB: federated linear contextual bandits with user-level privacy.

The family's one registration (:class:`fedpriv.audit.claims.family.Family`):
its claims, findings and commands under the key ``feducb``.
"""

from __future__ import annotations

from fedpriv.audit.claims.family import Command, Family

__all__ = ["FAMILY"]


def _claims() -> tuple:
    """The family's register rows (imported when the register is first needed)."""
    from fedpriv.audit.claims.register import _feducb_claims

    return tuple(_feducb_claims())


FAMILY = Family(
    key='feducb',
    title='Dubey & Pentland 2020 (NeurIPS, FedUCB)',
    algorithm_names={"feducb": "FedUCB", "feducb-decentralized": "decentralized FedUCB"},
    claims=_claims,
    aliases=(),
    order=0,
    run_commands={
        'feducb': Command('fedpriv.cli.feducb', 'centralized FedUCB (Alg. 1 + Privatizer), adaptive syncs'),
        'feducb-fixed': Command('fedpriv.cli.feducb', 'FedUCB with a fixed sync schedule (every B rounds)'),
        'feducb-nonprivate': Command('fedpriv.cli.feducb', 'non-private FedUCB (H = λI, no noise)'),
        'feducb-decentralized': Command('fedpriv.cli.linucb', 'decentralized FedUCB on a graph (Dubey & Pentland 2020, Alg. 3; --schedule fixed: data-independent releases every B rounds)'),
        'linucb': Command('fedpriv.cli.linucb', 'non-private OFUL/LinUCB run by every agent alone (M = 1: single agent)'),
        'linucb-independent-private': Command('fedpriv.cli.linucb', 'M private LinUCB learners, own Privatizer each, no communication'),
        'linucb-pooled': Command('fedpriv.cli.linucb', "one non-private LinUCB learner that sees every agent's data"),
    },
    experiments={
        'feducb-fig1a': Command('fedpriv.cli.linucb', 'FedUCB Fig. 1A: per-agent regret at T vs ε for several M'),
        'feducb-fig1b': Command('fedpriv.cli.linucb', 'FedUCB Fig. 1B: regret curves for three communication regimes'),
        'feducb-fig1c': Command('fedpriv.cli.linucb', 'FedUCB Fig. 1C: regret curves for varying d'),
        'feducb-fig2': Command('fedpriv.cli.linucb', 'FedUCB Fig. 2 (appendix): regret vs the minimum gap for several ε'),
        'feducb-decentralized-schedules': Command('fedpriv.cli.linucb', 'decentralized FedUCB (Alg. 3): regret curves of the adaptive schedule beside fixed ones'),
    },
)
