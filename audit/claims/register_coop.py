"""Register entries of Dubey & Pentland's cooperative UCB (AAMAS 2020).

The private algorithm's claims under every reconstruction of the lost formulas (noise
rule, and the candidate closed forms of the composed claim: the lemmas of §3.2-3.3), each
a ``reading``, with the agent's own term noisy (corrected) and raw (as written, §3.3);
and the Byzantine-proof algorithm, for which the paper makes no privacy claim.
"""

from __future__ import annotations

import dataclasses

from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.entry import make_claim as _claim
from fedpriv.audit.endtoend import coop as ce
from fedpriv.privacy import ApproxDP, NeighboringRelation, PureDP
from fedpriv.privacy.calibration import interval_claimed_guarantee

__all__ = ["coop_claims"]

_COOP_MESSAGE_SOURCE = (
    "Lemma 'Privacy of Outgoing Messages' (§3.2; fedpriv's reconstruction, R-m): each message is "
    "ε_n = n^(-ϑ/2)-DP, worst at the first release n = f"
)
_COOP_SOURCE = (
    "Lemma 'Privacy Guarantee' (§3.3, statement lost; fedpriv reads a ⌊T/f⌋-fold "
    "advanced composition, reconstructed R-m/R-l) and Remark 'Robustness to Strategy'"
)


#: fedpriv's reconstructions of the lost formulas (lemmas of §3.2-3.3): noise rule, and the
#: candidate closed form of the composed claim under that rule.
_COOP_READINGS = (
    ("decaying", "homogeneous", "", "homogeneous_epsilon",
     ("noise b(n) = n^-(1-ϑ/2) (Tossou & Dimitrakakis 2016, R-m); composed: ⌊T/f⌋-fold advanced composition "
      "with ε₀ = f^-ϑ/2 (R-m/R-l)")),
    ("decaying", "zeta", "-zeta", "zeta_epsilon",
     ("noise b(n) = n^-(1-ϑ/2) (Tossou & Dimitrakakis 2016, R-m); composed: heterogeneous advanced composition "
      "bounded with ζ(ϑ) (R-l, Tossou & Dimitrakakis Cor. 3.1)")),
    ("fixed", "homogeneous", "", "homogeneous_epsilon",
     ("noise b(n) = 1/(n ε) (fixed ε per release, R-l); composed: ⌊T/f⌋-fold advanced "
      "composition with ε₀ = ε (R-l)")),
)
_COOP_SUPPORT = (
    "the statements are lost from the seed text; the surviving proof of 'Privacy "
    "Guarantee' names a ⌊T/f⌋-fold composition 'identical to (Tossou and Dimitrakakis, "
    "2016)' (§3.3), whose DP-UCB-INT uses the decaying rule, and the regret "
    "theorem's ζ fits the ζ-bounded route"
)
#: The neighbouring relation the per-message rows are priced under is a reading.
_ADAPTIVE_READING = (
    "relation read as adaptive: the histories that 'differ in at most one reward sample' "
    "(Definition 'ε-differentially private message protocol') carry the actions re-derived "
    "from the changed reward, so the counts in message n follow releases 1..n; with the "
    "actions held fixed, message n costs release n alone"
)
_COOP_RAW = ("un-noised counts n_k^v broadcast with every message, while the agent's "
             "actions follow its raw own mean (§3.3: 'reward samples from its own pulls')")


def coop_claims() -> list[RegisteredClaim]:
    """The cooperative-UCB entries, in report order."""
    out = []
    base = {"n_agents": 3, "n_arms": 2, "horizon": 60, "epsilon": 0.5, "theta": 1.1,
            "gamma": 1, "graph": "complete", "target_delta": 1e-5, "count_field": "current"}
    for own in ("noisy", "raw"):
        mode = "corrected (own term noisy)" if own == "noisy" else "paper (own term raw, §3.3)"
        for rule, route, suffix, field, reading in _COOP_READINGS:
            setting = {**base, "rule": rule}
            composed = interval_claimed_guarantee(
                0.5, 60, target_delta=1e-5, theta=1.1 if rule == "decaying" else None,
                rule=rule)
            prefix = f"dubey_aamas/private-coop-ucb/own-{own}/" + (
                "fixed-rule/" if rule == "fixed" else "")
            scopes = [("composed", ApproxDP(getattr(composed, field), 1e-5), _COOP_SOURCE)]
            if route == "homogeneous":  # the per-message claim does not depend on the route
                scopes.insert(0, ("per-message", PureDP(composed.per_release_epsilon),
                                  _COOP_MESSAGE_SOURCE))
            for scope, claimed, source in scopes:
                label = reading if scope == "composed" else (
                    reading.split(";")[0] + "; " + _ADAPTIVE_READING)
                shared = prefix + scope if suffix else None
                out.append(RegisteredClaim(
                    key=prefix + scope + suffix,
                    claim=_claim("dubey_aamas", "private-coop-ucb", mode,
                                 {**setting, "own_term": own, "scope": scope}
                                 | ({"composition": route} if scope == "composed" else {}),
                                 NeighboringRelation.REPLACE_ONE_REWARD, claimed, source,
                                 reading=label, reading_support=_COOP_SUPPORT),
                    accountant=ce.coop_accountant,
                    audit=None if shared else ce.audit_coop_messages,
                    channel="neighbour: agent 0's messages (means and counts)",
                    raw_channel=_COOP_RAW if own == "raw" else None, shared_audit=shared,
                    mechanism=_coop_noise_mechanism if own == "raw" else None,
                ))
    out.append(_byzantine_claim(base))
    return out


def _coop_noise_mechanism(claim: Claim) -> tuple[str, float]:
    """ε of the Laplace means alone: the own-noisy algorithm's releases (same noise)."""
    setting = dict(claim.setting, own_term="noisy")
    route, epsilon, _ = ce.coop_accountant(
        dataclasses.replace(claim, setting=tuple(setting.items())))
    return route, epsilon


def _byzantine_claim(base: dict) -> RegisteredClaim:
    """Alg. 3 sends raw rewards; the paper disclaims privacy for it (no-claim)."""
    per_message = interval_claimed_guarantee(0.5, 60, target_delta=1e-5, theta=1.1)
    return RegisteredClaim(
        key="dubey_aamas/byzantine-coop-ucb/title",
        claim=_claim("dubey_aamas", "byzantine-coop-ucb", "paper (no DP claim)",
                     {"n_agents": 3, "n_arms": 2, "horizon": 60, "gamma": 1,
                      "graph": "complete", "contamination": 0.05, "q_value": 0.5,
                      "scope": "per-message", "epsilon": 0.5, "theta": 1.1,
                      "rule": "decaying"},
                     NeighboringRelation.REPLACE_ONE_REWARD,
                     PureDP(per_message.per_release_epsilon),
                     "no claim: Remark 'Simultaneous Privacy and Robustness' (privacy "
                     "needs noisy summaries, robustness individual samples; the two 'seem "
                     "contradictory' and combining them is left open, §4.2); "
                     "Alg. 3 sends individual rewards (§4, eq. 7). Only the title and abstract "
                     "('private and Byzantine-proof cooperative decision-making') suggest "
                     "otherwise; no claimed ε is shown or compared",
                     coverage="no-claim"),
        accountant=ce.coop_accountant, audit=ce.audit_coop_messages,
        channel="neighbour: agent 0's messages (arm, reward)",
        raw_channel="individual raw (possibly contaminated) rewards broadcast (Alg. 3, eq. 7)",
    )
