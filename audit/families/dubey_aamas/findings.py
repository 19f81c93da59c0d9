"""Findings of Dubey & Pentland (AAMAS 2020), cooperative UCB: one :class:`~fedpriv.audit.claims.findings.Finding` per distinct defect.

Declared by the family's registration (``Family(findings=...)``); the report lists them in
this order, after the families registered before this one. Ids start with ``"dubey_aamas-"``.
"""

from __future__ import annotations

from fedpriv.audit.claims.findings import Finding

__all__ = ["FINDINGS"]

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="dubey_aamas-raw-own-term",
        statement=(
            "Cooperative UCB as written acts on the agent's raw own mean and "
            "broadcasts its un-noised pull counts: under the adaptive relation (one "
            "reward changed, the agent's later actions re-derived from it) the counts "
            "the messages carry are a deterministic function of raw rewards (ε = ∞) "
            "whatever reconstruction of the lost formulas is used. With the actions "
            "held fixed the counts carry no reward, so the ∞ rests on that relation."
        ),
        claims=(
            "dubey_aamas/private-coop-ucb/own-raw/*",
            "dubey_aamas/private-coop-ucb/fig1a/*/own-raw/*",
        ),
        where="§3.3 (own term), Lemma 'Privacy of Outgoing Messages', Remark 'Robustness "
        "to Strategy' (§3.3; the lemma's proof omits the un-noised counts)",
    ),
    Finding(
        id="dubey_aamas-counts-compose",
        statement=(
            "Open, not shown: each message of private cooperative UCB carries pull "
            "counts that follow the agent's earlier noisy releases, so under the "
            "adaptive reading of the relation (one reward changed, later actions "
            "re-derived) message n is priced by the composition of releases 1..n, "
            "whose upper bound exceeds the per-message claim; no lower bound does "
            "(the audit's is below the claim), so the rows are unresolved. With the "
            "actions held fixed, message n costs release n alone."
        ),
        claims=(
            "dubey_aamas/private-coop-ucb/own-noisy/per-message",
            "dubey_aamas/private-coop-ucb/own-noisy/fixed-rule/per-message",
            "dubey_aamas/private-coop-ucb/fig1a/*/own-noisy/per-message",
        ),
        where="Lemma 'Privacy of Outgoing Messages' (§3.2), message contents eq. (6) "
        "(fedpriv's adaptive reading: one reward changed, actions re-derived)",
        proved=False,
        audit_claims=(),
    ),
    Finding(
        id="dubey_aamas-byzantine-not-private",
        statement=(
            "The Byzantine-proof algorithm broadcasts individual raw rewards; the "
            "paper disclaims privacy for it, so the title's 'private and "
            "Byzantine-proof' names two separate algorithms, not one."
        ),
        claims=("dubey_aamas/byzantine-coop-ucb/*",),
        where="title, abstract, Alg. 3 / eq. 7, Remark 'Simultaneous Privacy and "
        "Robustness' (§4.2)",
    ),
)
"""The family's findings, in report order."""
