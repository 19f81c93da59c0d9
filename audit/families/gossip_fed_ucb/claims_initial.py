"""Register rows of Zhu et al. (2021), Fed_UCB: the initial pulls X(0) and the counts.

X(0) on the first gossip message ϑ and on the shared counts ñ, outside Definition 1
(t = 1..T), and the same rows under the abstract's "local data" reading;
:func:`gossip_fed_ucb_initial_claims` builds them in report order for
:mod:`fedpriv.audit.families.gossip_fed_ucb.claims`, which places them after the tree
counter's rows. Recipes live in :mod:`fedpriv.audit.families.gossip_fed_ucb.recipes` and
:mod:`fedpriv.audit.families.gossip_fed_ucb.counts`; what each field means is in
:mod:`fedpriv.audit.claims.entry`.
"""

from __future__ import annotations

from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.entry import make_claim as _claim
from fedpriv.audit.families.gossip_fed_ucb import recipes as ge
from fedpriv.audit.families.gossip_fed_ucb.counts import audit_gossip_fed_ucb_counts
from fedpriv.audit.families.gossip_fed_ucb.initial import audit_gossip_fed_ucb_initial
from fedpriv.privacy import NeighboringRelation, PureDP

# Package-internal rows of claims.py; nothing public.
__all__ = ["gossip_fed_ucb_initial_claims"]

_X0_RAW = (
    "first gossip message ϑ carries the raw initial pulls X(0) (Alg. 4 line 1: "
    "'Set ϑ̃_i,k(0) = X̃_i,k(0) = X_i,k(0)'; line 19 sends ϑ̃(t−1))"
)
_COUNTS_RAW = (
    "counts ñ flood to every neighbour each round (eq. 1) and follow actions "
    "chosen on UCB indices built from the raw X(0) (Alg. 4 lines 1, 5, 17)"
)


def gossip_fed_ucb_initial_claims() -> list[RegisteredClaim]:
    """X(0) on ϑ and on the shared counts ñ: outside Definition 1 (t = 1..T).

    Returns
    -------
    list of RegisteredClaim
        The register rows of Fed_UCB's initial pulls, in report order.
    """
    out = []
    source = (
        "Definition 1 indexes the stream t = 1..T, so X(0) is formally outside it "
        "(Alg. 4 line 1 pulls it before the loop of line 2); the abstract's "
        "'agents preserve ε-DP of their local data' would cover it"
    )
    counts = (
        "; §4.1: 'both the gossiping information θ_i,k(t) and the selection "
        "information n_i,k(t) are functions of X_i,k(t), [so] this approach also "
        "preserves the privacy ... by data processing inequality'"
    )
    for mode in ("paper", "corrected"):
        setting = {
            "n_agents": 3,
            "n_arms": 3,
            "horizon": 6,
            "epsilon": 1.0,
            "log_base": "2",
            "graph": "complete",
            "scope": "initial pulls X(0)",
        }
        out.append(
            RegisteredClaim(
                key=f"gossip_fed_ucb/gossip-fed-ucb/{mode}/initial-pulls",
                claim=_claim(
                    "gossip_fed_ucb",
                    "gossip-fed-ucb",
                    mode,
                    setting,
                    NeighboringRelation.REPLACE_ONE_REWARD,
                    PureDP(1.0),
                    source,
                    coverage="outside-claim",
                ),
                accountant=ge.gossip_fed_ucb_initial_accountant,
                audit=audit_gossip_fed_ucb_initial,
                channel="gossip partner: agent 0's first gossip message ϑ",
                raw_channel=_X0_RAW if mode == "paper" else None,
            )
        )
        out.append(
            RegisteredClaim(
                key=f"gossip_fed_ucb/gossip-fed-ucb/{mode}/shared-counts",
                claim=_claim(
                    "gossip_fed_ucb",
                    "gossip-fed-ucb",
                    mode,
                    {**setting, "scope": "shared counts ñ (X(0) changed)"},
                    NeighboringRelation.REPLACE_ONE_REWARD,
                    PureDP(1.0),
                    source + counts,
                    coverage="outside-claim",
                ),
                accountant=ge.gossip_fed_ucb_initial_accountant,
                audit=audit_gossip_fed_ucb_counts,
                channel="neighbours: the counts ñ_{0,·} agent 0 shares at round 2",
                raw_channel=_COUNTS_RAW if mode == "paper" else None,
                note=(
                    "accountant: the counts are post-processing of everything the agent "
                    "released, so their ε is at most that of the X(0) releases; the audit "
                    "reads agent 0's first action off ñ_{0,·}(2) = 1 + [k = a_0(1)]"
                ),
            )
        )
    return out + _gossip_fed_ucb_local_data_claims()


#: The abstract's reading: the initial pulls are local data that the claim covers.
_LOCAL_DATA_READING = {
    "reading": (
        "the abstract's 'ε-differential privacy of their local data': the initial "
        "pulls X(0) are local data, covered by the claim"
    ),
    "reading_support": (
        "Abstract: 'Fed_UCB, a differentially private version of Gossip_UCB, in which the "
        "agents preserve ε-differential privacy of their local data'; §1, contribution (3): "
        "'prove agents preserve ε-differential privacy of their local data'; §6: "
        "'preserving ε-differential privacy of the agents' local data'. Alg. 4 line 1 pulls "
        "every arm once from the agent's own bandit ('Set ϑ̃_i,k(0) = X̃_i,k(0) = "
        "X_i,k(0)'), so X(0) is local data; Definition 1's stream (t = 1..T) leaves it out, "
        "which is the as-written rows' reading (outside-claim)"
    ),
}


def _gossip_fed_ucb_local_data_claims() -> list[RegisteredClaim]:
    """X(0) on ϑ and on the counts ñ under the abstract's reading (X(0) covered).

    Same algorithm, setting and audit as the outside-claim rows of
    :func:`gossip_fed_ucb_initial_claims` (``shared_audit``), now compared with the claim: in
    paper mode X(0) reaches the first message raw (Alg. 4 line 1, sent by line 19), an
    un-noised channel, so the claim is violated; the corrected mode releases X(0) with
    its own Laplace noise and its verdict follows from that release's ε.
    """
    out = []
    for mode in ("paper", "corrected"):
        setting = {
            "n_agents": 3,
            "n_arms": 3,
            "horizon": 6,
            "epsilon": 1.0,
            "log_base": "2",
            "graph": "complete",
            "scope": "initial pulls X(0)",
        }
        base = f"gossip_fed_ucb/gossip-fed-ucb/{mode}"
        out.append(
            RegisteredClaim(
                key=f"{base}/initial-pulls/local-data",
                claim=_claim(
                    "gossip_fed_ucb",
                    "gossip-fed-ucb",
                    mode,
                    setting,
                    NeighboringRelation.REPLACE_ONE_REWARD,
                    PureDP(1.0),
                    "abstract: 'the agents preserve ε-differential privacy of their "
                    "local data'; Alg. 4 line 1 (X(0)) and line 19 (ϑ̃(t−1) sent)",
                    **_LOCAL_DATA_READING,
                ),
                accountant=ge.gossip_fed_ucb_initial_accountant,
                audit=None,
                shared_audit=f"{base}/initial-pulls",
                channel=f"gossip partner: agent 0's first gossip message ϑ; audit of `{base}/initial-pulls`",
                raw_channel=_X0_RAW if mode == "paper" else None,
                note=(
                    "the first message ϑ̃(0) carries X(0) "
                    + (
                        "raw: its ε is ∞ (the audit reads it off the message)"
                        if mode == "paper"
                        else "plus its own Laplace noise (the corrected mode, scale 1/ε' with ε' the "
                        "stream's per-node budget): the view's ε for a changed X(0) record is "
                        "that one release's, the rest being post-processing"
                    )
                ),
            )
        )
        out.append(
            RegisteredClaim(
                key=f"{base}/shared-counts/local-data",
                claim=_claim(
                    "gossip_fed_ucb",
                    "gossip-fed-ucb",
                    mode,
                    {**setting, "scope": "shared counts ñ (X(0) changed)"},
                    NeighboringRelation.REPLACE_ONE_REWARD,
                    PureDP(1.0),
                    "abstract: 'the agents preserve ε-differential privacy of their "
                    "local data'; §4.1: 'both the gossiping information θ_i,k(t) and "
                    "the selection information n_i,k(t) are functions of X_i,k(t), "
                    "[so] this approach also preserves the privacy ... by data "
                    "processing inequality'",
                    **_LOCAL_DATA_READING,
                ),
                accountant=ge.gossip_fed_ucb_initial_accountant,
                audit=None,
                shared_audit=f"{base}/shared-counts",
                channel=(
                    "neighbours: the counts ñ_{0,·} agent 0 shares at round 2; audit of "
                    f"`{base}/shared-counts`"
                ),
                raw_channel=_COUNTS_RAW if mode == "paper" else None,
                note=(
                    "accountant: the counts are post-processing of everything the agent "
                    "released, so their ε is at most that of the X(0) releases"
                ),
            )
        )
    return out
