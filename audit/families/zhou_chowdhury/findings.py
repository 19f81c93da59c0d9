"""Findings of Zhou & Chowdhury (ICLR 2024): one :class:`~fedpriv.audit.claims.findings.Finding` per defect.

Ids start with ``"zhou_chowdhury-"``.
"""

from __future__ import annotations

from fedpriv.audit.claims.findings import Finding

__all__ = ["FINDINGS"]

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="zhou_chowdhury-own-data-between-syncs",
        statement=(
            "Private-FedLinUCB's silos act on their raw data of the current batch "
            "between syncs (V = λI + G + ΔG_i), so one changed user moves the silo's "
            "later actions and up to B pairs of the leaf its tree receives; the "
            "calibration prices one pair. On a pair of data sets where silo 0's first "
            "user's reward flips the sign of the rest of its batch, the view's exact ε "
            "exceeds the claimed ε at all six silo-level LDP settings of Fig. 2 and at "
            "the shuffle-model run at ε = 10⁻³ (the same defect fedpriv finds in "
            "FedUCB's fixed schedule); acting on the broadcast sums only removes it."
        ),
        claims=(
            "zhou_chowdhury/private-fedlinucb/ldp/*",
            "zhou_chowdhury/private-fedlinucb/sdp-amp/*",
        ),
        where="Alg. 1 (local LinUCB step on the batch's own Gram matrix), Thm. 5.1",
    ),
)
