"""Findings of Li & Song (CDP-, DDP-, HDP-MAB): one :class:`~fedpriv.audit.claims.findings.Finding` per distinct defect.

Declared by the family's registration (``Family(findings=...)``); the report lists them in
this order, after the families registered before this one. Ids start with ``"li_song-"``.
"""

from __future__ import annotations

from fedpriv.audit.claims.findings import Finding

__all__ = ["FINDINGS"]

FINDINGS: tuple[Finding, ...] = (
    Finding(
        id="li_song-raw-actions",
        statement=(
            "DDP- and HDP-MAB exploit the arm with the best raw local mean during "
            "t_delay, so their actions reveal single rewards; Definition 1 protects "
            "only the messages, so this leak is outside the claim."
        ),
        claims=("li_song/ddp-mab/actions", "li_song/hdp-mab/actions"),
        where="Alg. 2 line 3, Alg. 5 line 11 (local exploitation during t_delay), Definition 1",
    ),
    Finding(
        id="li_song-epsilon-not-guarantee",
        statement=(
            "The privacy level the paper reports, ε (Fig. 4's caption 'different "
            "privacy level ε', §VII-A1's 'ε = 1 indicates the non-private case'), "
            "is not the guarantee: the noise Lap(1/(Mε n_r)) makes every message "
            "exactly Mε-DP, 5 to 50 at Fig. 4's M = 50, as Theorem 1 states."
        ),
        claims=("li_song/cdp-mab/fig4-eps-as-guarantee/*",),
        where="abstract, §I, Fig. 4 caption, §VII-A1 against Theorem 1 and §IV-A1's noise scale",
    ),
    Finding(
        id="li_song-action-neighbours",
        statement=(
            "Definition 1's histories differ in 'one position', an action-reward "
            "pair; with the action changed, a sample moves between two arms' epoch "
            "means, two coordinates of one message shift by up to 1/n_r each, and "
            "the message is up to 2Mε-DP (at least Mε(2n_1+1)/(n_1+1)), not Mε; "
            "App. B's proof covers only a changed reward."
        ),
        claims=("li_song/cdp-mab/messages/action-changed",),
        where="§III-B (H_i(t) of action-reward pairs), Definition 1, App. B (proof of Theorem 1)",
        audit_claims=(),
    ),
)
"""The family's findings, in report order."""
