"""Audit recipe for Fed_UCB's shared counts ñ (Zhu et al. 2021).

§4.1 of the paper argues that the counts agents share are private "by data processing
inequality", being functions of the (private) observations. They are functions of the
actions, and in the paper's Fed_UCB the first action after initialisation is an argmax of
UCB indices built on the raw initial pulls X(0) (Alg. 4 line 1).

What the neighbours see: ñ_{0,k} as agent 0 computes it at round 2 is
``max(n_{0,k}, ñ_{j,k}(1))`` with ``ñ(1) = 1`` (Alg. 4 line 5, Lemma 1's base case), so it
is 2 exactly for the arm ``a_0(1)`` agent 0 pulled at round 1 and 1 elsewhere: reading
ñ_{0,·} is reading ``a_0(1)``. The recipe therefore observes ``a_0(1)``, the decoded
content of the counts agent 0 shares at round 2.

Neighbouring pair: agent 0's initial pull of arm 0 is 1 (D) or 0 (D'); every other
initial pull is 1/2 (rewards in [0, 1]), so with raw X(0) the round-1 argmax is arm 0 in
D and another arm in D' (all confidence widths are equal at n = 1). With the corrected
(noised) initialisation the same pair gives a bounded leak.
"""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.families.gossip_fed_ucb.recipes import FixedTableBandit

__all__ = ["audit_gossip_fed_ucb_counts", "counts_pair_tables"]

#: The initial pulls of every arm but agent 0's arm 0.
_NEUTRAL = 0.5


def counts_pair_tables(n_agents: int, n_arms: int, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Reward tables of the pair, shape (n_agents, horizon + 1, n_arms) each (D, D').

    Parameters
    ----------
    n_agents, n_arms : int
        Sizes, each >= 1.
    horizon : int
        T >= 1.

    Returns
    -------
    tuple of (ndarray, ndarray)
        The reward tables of D and D', each ``(n_agents, horizon + 1, n_arms)``.

    Examples
    --------
    >>> d, d_prime = counts_pair_tables(2, 3, 4)
    >>> float(d[0, 0, 0]), float(d_prime[0, 0, 0]), float(d[1, 2, 1])
    (1.0, 0.0, 0.5)
    """
    tables = []
    for canary in (1.0, 0.0):
        table = np.full((n_agents, horizon + 1, n_arms), _NEUTRAL)
        table[0, 0, 0] = canary
        tables.append(table)
    return tables[0], tables[1]


def audit_gossip_fed_ucb_counts(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Agent 0's round-1 action as its shared counts ñ reveal it (module docstring).

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed guarantee).
    budget : AuditBudget
        Pilot and confirmation samples per world, batch size and confidence.
    seed : int or SeedSequence
        Root of the audit's streams (every batch has its own address).

    Returns
    -------
    EndToEndAudit
        The ε lower bound (nats) at the claimed δ, the confirmed event and the wall
        time.
    """
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb
    from fedpriv.algorithms.networks.graphs import make_graph

    s = claim.setting_dict()
    n_agents, n_arms, horizon = int(s["n_agents"]), int(s["n_arms"]), int(s["horizon"])
    graph = make_graph("complete", n_agents)
    means = np.full((n_agents, n_arms), _NEUTRAL)
    envs = [
        FixedTableBandit(table=table, arm_means=means)
        for table in counts_pair_tables(n_agents, n_arms, horizon)
    ]

    def sample(world: int, n: int, root: np.random.SeedSequence) -> np.ndarray:
        out = []
        for b, start in enumerate(range(0, n, budget.batch_size)):
            size = min(budget.batch_size, n - start)
            run = run_gossip_fed_ucb(
                envs[world],
                graph,
                horizon=horizon,
                epsilon=s["epsilon"],
                mode=claim.mode,
                log_base=s["log_base"],
                n_trials=size,
                seed=child_seed(root, b),
            )
            out.append(run.actions[:, 0, 0].astype(np.float64))
        return np.concatenate(out)

    pair = "one reward changed: agent 0's initial pull of arm 0, 1 (D) vs 0 (D'); others 1/2"
    return search_and_confirm(
        {pair: sample},
        budget=budget,
        seed=seed,
        delta=claim.claimed_delta,
        channel="neighbours: the counts ñ_{0,·} agent 0 shares at round 2",
        names=("arm k with ñ_{0,k} = 2 at round 2 (agent 0's first action)",),
        events={pair: [(0, "==", 0.0)]},
    )
