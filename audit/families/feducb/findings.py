"""Findings of FedUCB (Dubey & Pentland, NeurIPS 2020): one :class:`~fedpriv.audit.claims.findings.Finding` per distinct defect.

Declared by the family's registration (``Family(findings=...)``); the report lists them in
this order, after the families registered before this one. Ids start with ``"feducb-"``.
"""

from __future__ import annotations

from fedpriv.audit.claims.findings import Finding

__all__ = ["FINDINGS"]

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="feducb-raw-sync-trigger",
        statement=(
            "FedUCB's adaptive synchronisation is decided by a log-det test on each "
            "agent's raw local Gram matrix, so the sync and request times the "
            "controller or neighbours see are un-noised functions of the data: at a "
            "threshold D where one user's data decides the first sync round, that round "
            "is a deterministic witness (ε = ∞ under Definition 1). Not shown for Fig. 1B's "
            "and 1C's regimes with D > 0: at their D the first sync round is the same for "
            "every data set, and those rows stay unresolved."
        ),
        claims=("feducb/*/adaptive", "feducb/feducb/fig1a/*"),
        where="Alg. 1 line 12, Alg. 3 line 6, Definition 1, Prop. 3 (scope: the Privatizer's releases only)",
    ),
    Finding(
        id="feducb-sensitivity",
        statement=(
            "The Privatizer is calibrated to the add/remove sensitivity L²+1 of one "
            "(x, y) pair, but Definition 1 replaces a pair, which moves the released "
            "Gram matrix by up to √2(L²+1) in Frobenius norm; the calibration's "
            "slack absorbs the factor, so no verdict changes."
        ),
        claims=("feducb/*",),
        where="§4.3 Privatizer calibration (Alg. 2 line 5), Prop. 3, Definition 1 (t-neighbours)",
        audit_claims=(),
    ),
    Finding(
        id="feducb-own-data-between-syncs",
        statement=(
            "Between syncs a FedUCB agent acts on its raw own Gram matrix, so one "
            "changed (x, y) pair changes its later actions up to the next sync and "
            "the Privatizer's leaf differs in up to every pair of the batch (B with "
            "the fixed schedule, ⌈B/γ⌉ per set decentralized), not one: the paper's "
            "per-observation charge prices the Privatizer on an oblivious stream, "
            "not the view. Charged for the pairs reached (group privacy scales each "
            "node's L2 sensitivity by B), the fixed schedule's ε at δ = 10⁻⁶ is B "
            "times the one-pair μ's (3.10 instead of 0.327 at B = 8); the claims at "
            "δ = 0.1 still hold. The adaptive schedule's rows are ∞ through the raw "
            "sync times already."
        ),
        claims=(
            "feducb/feducb/fixed",
            "feducb/feducb-decentralized/fixed",
            "feducb/feducb/user-at-all-agents",
        ),
        where=(
            "Alg. 1 line 4 ('Set V_i,t ← S_i,t + U_i,t'), lines 8 and 10, eqs. (2)-(3); "
            "Alg. 3 line 5; Remark 3 ('a single differing observation ... and not the "
            "entire message itself, ... which may potentially have O(t) sensitivity'); "
            "Prop. 3"
        ),
    ),
)
"""The family's findings, in report order."""
