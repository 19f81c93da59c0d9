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
            "the shuffle-model run by amplification at ε = 10⁻³ and by vector sum at ε = 0.2 "
            "(Fig. 2b: B = 25 users' messages move, exact ε 23.3 on the even levels' "
            "counts; the same defect fedpriv finds in "
            "FedUCB's fixed schedule); acting on the broadcast sums only removes it."
        ),
        claims=(
            "zhou_chowdhury/private-fedlinucb/ldp/*",
            "zhou_chowdhury/private-fedlinucb/sdp-amp/*",
            "zhou_chowdhury/private-fedlinucb/sdp-vecsum/*",
        ),
        where="Alg. 1 (local LinUCB step on the batch's own Gram matrix), Thm. 5.1",
    ),
    Finding(
        id="zhou_chowdhury-calibration-at-large-epsilon",
        statement=(
            "The silo-level noise σ = L√(κ(ln(1/δ)+ε))/ε, as the experiment code computes "
            "it, is too small at Fig. 2c's ε = 1 and 5 for the statistics it releases: with "
            "‖x‖ <= 1 and |y| <= 1, replacing one user's (x, y) by unit x' with "
            "⟨x, x'⟩ = 1/2 and y' = −y moves one release of (Gram matrix, reward vector) "
            "by √4.5, and the κ = 10 p-sums holding it then spend ε = 1.52 and 11.9 at "
            "δ = 0.1 (exact Gaussian-DP values), even for an oblivious stream."
        ),
        claims=(
            "zhou_chowdhury/private-fedlinucb/ldp/fig2c/eps1",
            "zhou_chowdhury/private-fedlinucb/ldp/fig2c/eps5",
        ),
        where="Thm. 5.1's noise as the experiment code of Fig. 2c computes it (LDPFedLinUCB)",
        audit_claims=(),
    ),
)
