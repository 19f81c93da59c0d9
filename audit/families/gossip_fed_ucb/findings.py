"""Findings of Zhu et al. (2021), Fed_UCB: one :class:`~fedpriv.audit.claims.findings.Finding` per distinct defect.

Declared by the family's registration (``Family(findings=...)``); the report lists them in
this order, after the families registered before this one. Ids start with ``"gossip_fed_ucb-"``.
"""

from __future__ import annotations

from fedpriv.audit.claims.findings import Finding

__all__ = ["FINDINGS"]

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="gossip_fed_ucb-tree-budget",
        statement=(
            "Fed_UCB's per-node budget ε' = ε/⌈log T⌉ counts the p-sums of one prefix, "
            "not the released nodes that hold a record. On the view (messages "
            "ϑ̃(t−1) and actions, t = 1..T: tree prefixes 1..T−1) a record sits in "
            "⌈log₂T⌉ nodes, so under ⌈log T⌉ read as ⌈ln T⌉ the true ε is "
            "ε⌈log₂T⌉/⌈ln T⌉: 4/3·ε at T = 16, 10/7·ε at T = 1024 and 600 000 "
            "(≈1.44ε = ε/ln 2 is only the large-T limit, not a bound: 5/3·ε at "
            "T = 17-20); under log₂ the view spends "
            "exactly ε at every T. Under the second reading, where the final "
            "estimate ϑ̃(T) is published too (prefixes 1..T, ⌊log₂T⌋+1 nodes), "
            "log₂ gives 5/4·ε at T = 16 and 11/10·ε at T = 1024 (ε at 600 000) and "
            "ln gives 5/3·ε, 11/7·ε and 10/7·ε."
        ),
        claims=(
            "gossip_fed_ucb/gossip-fed-ucb/paper-loge/*",
            "gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T16/*",
            "gossip_fed_ucb/gossip-fed-ucb/paper-log2-final/T1024/*",
            "gossip_fed_ucb/gossip-fed-ucb/paper-loge-final/*",
        ),
        where="§4.1 ('no more than ⌈log t⌉ partial sums', 'Set ε' := ε/⌈log T⌉'), Alg. 2-3, "
        "Alg. 4 lines 9 and 19 (outputs ϑ̃(t−1)), Definition 1",
    ),
    Finding(
        id="gossip_fed_ucb-raw-initial-pulls",
        statement=(
            "Fed_UCB releases the initial pulls X(0) raw: the first gossip message "
            "carries them and the shared counts follow actions chosen on them, a "
            "leak of private data that Definition 1's stream (t = 1..T) leaves "
            "outside the claim, and a violation of it under the abstract's reading "
            "('ε-differential privacy of their local data'), which covers X(0)."
        ),
        claims=(
            "gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls",
            "gossip_fed_ucb/gossip-fed-ucb/paper/shared-counts",
            "gossip_fed_ucb/gossip-fed-ucb/paper/initial-pulls/local-data",
            "gossip_fed_ucb/gossip-fed-ucb/paper/shared-counts/local-data",
        ),
        where="Alg. 4 line 1 ('Set ϑ̃_i,k(0) = X̃_i,k(0) = X_i,k(0)') and line 19, §4.1, "
        "Definition 1, abstract",
    ),
    Finding(
        id="gossip_fed_ucb-unbounded-rewards",
        statement=(
            "The synthetic experiment feeds rewards μ + N(0, 1) to a tree calibrated "
            "for rewards in [0, 1], so the sensitivity is unbounded and no finite ε "
            "holds for the runs behind Fig. 2(a)-(b); Fig. 2(c)'s hospital data has "
            "rewards in {0, 1}, within the calibration."
        ),
        claims=(
            "gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",
            "gossip_fed_ucb/gossip-fed-ucb/paper/fig2b/unbounded-rewards/*",
        ),
        where="§5.1 synthetic data (rewards μ + N(0, 1)), Fig. 2(a)-(b) captions, §4.1 "
        "(rewards in [0, 1], sensitivity 1); §5.2 (Fig. 2(c): rewards in {0, 1})",
    ),
)
"""The family's findings, in report order."""
