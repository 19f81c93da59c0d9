"""Dubey & Pentland (AAMAS 2020): private and Byzantine-proof cooperative UCB.

The family's one registration (:class:`fedpriv.audit.claims.family.Family`):
its claims, findings and commands under the key ``dubey_aamas``.
"""

from __future__ import annotations

from fedpriv.audit.claims.family import Command, Family

__all__ = ["FAMILY"]


def _claims() -> tuple:
    """The family's register rows (imported when the register is first needed)."""
    from fedpriv.audit.families.dubey_aamas.claims import coop_claims

    return tuple(coop_claims())


FAMILY = Family(
    key='dubey_aamas',
    title='Dubey & Pentland 2020 (AAMAS, cooperative UCB)',
    algorithm_names={"private-coop-ucb": "private cooperative UCB",
                     "byzantine-coop-ucb": "Byzantine cooperative UCB"},
    claims=_claims,
    aliases=('byzantine', 'coop_ucb', 'coop-ucb'),
    order=3,
    run_commands={
        'private-coop-ucb': Command('fedpriv.cli.coop', 'Private Multi-Agent UCB (Dubey & Pentland Alg. 1-2, interval mechanism)'),
        'byzantine-coop-ucb': Command('fedpriv.cli.coop', 'Byzantine-Proof Multi-Agent UCB (Alg. 3, trimmed mean)'),
        'coop-ucb-nonprivate': Command('fedpriv.cli.coop', "cooperative UCB with raw means (the paper's non-private version)"),
        'ucb1': Command('fedpriv.cli.coop', 'UCB1 on every agent in isolation (Auer et al. 2002)'),
        'dp-ucb-int': Command('fedpriv.cli.coop', 'DP-UCB-INT on every agent in isolation (Tossou & Dimitrakakis 2016)'),
    },
    experiments={
        'dubey-aamas-fig1a': Command('fedpriv.cli.coop', 'Dubey & Pentland AAMAS 2020 Figure 1a'),
        'dubey-aamas-fig1b': Command('fedpriv.cli.coop', 'Dubey & Pentland AAMAS 2020 Figure 1b'),
        'dubey-aamas-fig1c': Command('fedpriv.cli.coop', 'Dubey & Pentland AAMAS 2020 Figure 1c'),
    },
)
