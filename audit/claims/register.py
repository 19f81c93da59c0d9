"""The claims register: every privacy claim of the four seed papers, as data.

Each :class:`RegisteredClaim` names the paper, algorithm, mode, setting, neighboring
relation and claimed guarantee (a :class:`fedpriv.audit.claims.claim.Claim`, with where the paper
states it), and how to evaluate it:

* ``accountant``: a recipe that builds the accountant (or the algorithm's own release
  ledger) for that setting and returns ``(route, ε at the claimed δ, findings)``;
* ``audit`` (optional): an end-to-end audit recipe ``(claim, budget, seed) ->
  EndToEndAudit`` on the observable named by ``channel``.

A claim without an audit recipe rests on the accountant alone, and the report says so.
Recipes live in the family modules (:mod:`fedpriv.audit.endtoend.feducb`,
:mod:`fedpriv.audit.endtoend.mab`, :mod:`fedpriv.audit.endtoend.gossip`); they import the algorithm
modules lazily, so the register is importable whatever is installed.

Papers (``--paper`` names): ``feducb`` (Dubey & Pentland, NeurIPS 2020),
``li_song`` (Li & Song), ``gossip_fed_ucb`` (Zhu et al. 2021), ``dubey_aamas`` (Dubey &
Pentland, AAMAS 2020).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from fedpriv.audit.endtoend import coop as ce
from fedpriv.audit.endtoend import feducb as fe
from fedpriv.audit.endtoend import gossip as ge
from fedpriv.audit.endtoend import mab as me
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.fed_ucb import VARIANTS as FED_UCB_VARIANTS
from fedpriv.privacy import ApproxDP, NeighboringRelation, PureDP
from fedpriv.privacy.calibration import (
    fed_ucb_scale,
    interval_claimed_guarantee,
    li_song_claimed_epsilon,
)

__all__ = [
    "PAPERS",
    "PAPER_ALIASES",
    "REGISTER",
    "AccountantRecipe",
    "AuditRecipe",
    "RegisteredClaim",
    "claims_for",
    "paper_of",
]

AccountantRecipe = Callable[[Claim], tuple[str, float, tuple[str, ...]]]
AuditRecipe = Callable  # (claim, AuditBudget, SeedSequence) -> EndToEndAudit

#: ``--paper`` name -> citation used in ``Claim.paper``.
PAPERS: dict[str, str] = {
    "feducb": "Dubey & Pentland 2020 (NeurIPS, FedUCB)",
    "li_song": "Li & Song (CDP/DDP/HDP-MAB)",
    "gossip_fed_ucb": "Zhu et al. 2021",
    "dubey_aamas": "Dubey & Pentland 2020 (AAMAS, cooperative UCB)",
}

#: Other accepted spellings of the ``--paper`` names.
PAPER_ALIASES: dict[str, str] = {
    "fed_ucb": "gossip_fed_ucb", "gossip": "gossip_fed_ucb", "zhu": "gossip_fed_ucb",
    "lisong": "li_song", "li-song": "li_song", "byzantine": "dubey_aamas",
    "coop_ucb": "dubey_aamas", "coop-ucb": "dubey_aamas", "fed-ucb": "gossip_fed_ucb",
    "dubey_pentland": "feducb",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredClaim:
    """One claim of the register and how to evaluate it.

    Attributes
    ----------
    key : str
        Unique, stable identifier, ``"<paper>/<algorithm>/<mode>/..."``.
    claim : Claim
    accountant : AccountantRecipe
        ``claim -> (route, epsilon, findings)`` at the claimed δ.
    audit : AuditRecipe or None
        ``(claim, budget, seed) -> EndToEndAudit``; ``None`` if the claim rests on the
        accountant alone.
    channel : str
        The audit's observable ("accountant only" without an audit).
    sample_factor : float
        Multiplies the verify run's confirming sample count for this audit (cheap
        scalar audits take more samples, whole-algorithm audits fewer).
    """

    key: str
    claim: Claim
    accountant: AccountantRecipe
    audit: AuditRecipe | None
    channel: str
    sample_factor: float = 1.0

    @property
    def paper(self) -> str:
        """The ``--paper`` name."""
        return self.key.split("/", 1)[0]


def _claim(paper: str, algorithm: str, mode: str, setting: dict, relation, claimed, source):
    return Claim(
        paper=PAPERS[paper], algorithm=algorithm, mode=mode, setting=tuple(setting.items()),
        relation=relation, claimed=claimed, source=source,
    )


# --------------------------------------------------------------------------- FedUCB
_FEDUCB_SOURCE = (
    "Definition 1 (federated DP), Prop. 3, Remark 3 and §4.3 (per-node budget "
    "(ε/√(8m ln(2/δ)), δ/2m)): each agent's outgoing stream is (ε, δ)-DP per (x, y) pair"
)
_FEDUCB_BASE = {"n_agents": 3, "dim": 2, "n_arms": 4, "horizon": 64, "epsilon": 1.0,
                "delta": 0.1, "gamma": 1}


def _feducb_claims() -> list[RegisteredClaim]:
    out = []
    combos = (("centralized", "feducb", "adaptive", "paper"),
              ("centralized", "feducb", "fixed", "corrected"),
              ("decentralized", "feducb-decentralized", "adaptive", "paper"),
              ("decentralized", "feducb-decentralized", "fixed",
               "corrected (hypothetical: no fixed-schedule Alg. 3 is implemented)"))
    for structure, algorithm, schedule, mode in combos:
        setting = {**_FEDUCB_BASE, "structure": structure, "schedule": schedule}
        if structure == "decentralized":
            setting.update(gamma=2, graph="path")
        if schedule == "fixed":
            setting.update(sync_every=8, n_syncs=8)
        audited = not (structure == "decentralized" and schedule == "fixed")
        channel = ("controller: sync times and broadcasts" if structure == "centralized"
                   else "neighbour: Synchronize requests (first request time)")
        if not audited:
            channel = ("accountant only: no fixed-schedule Alg. 3 is implemented (the row "
                       "is hypothetical), so there is no mechanism to run at any budget")
        source = _FEDUCB_SOURCE + ("; decentralized: Remarks 5-6, m = 1 + ⌈log(T/γ)⌉"
                                   if structure == "decentralized" else "")
        if schedule == "fixed":
            source += "; fixed schedule: Alg. 2 line 2 'if n is fixed a priori'"
        out.append(RegisteredClaim(
            key=f"feducb/{algorithm}/{schedule}",
            claim=_claim("feducb", algorithm, mode, setting,
                         NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
                         ApproxDP(1.0, 0.1), source),
            accountant=fe.feducb_accountant,
            audit=fe.audit_sync_timing if audited else None,
            channel=channel,
        ))
    user = {**_FEDUCB_BASE, "structure": "centralized", "schedule": "fixed", "sync_every": 8,
            "n_syncs": 8, "delta_prime": 0.01}
    eps_user, delta_user = fe.footnote4_claim(1.0, 0.1, n_agents=3, delta_prime=0.01)
    out.append(RegisteredClaim(
        key="feducb/feducb/user-at-all-agents",
        claim=_claim("feducb", "feducb", "paper", user,
                     NeighboringRelation.USER_AT_ALL_AGENTS,
                     ApproxDP(eps_user, delta_user),
                     "§3 composition over agents and footnote 4: "
                     "(√(2M ln(1/δ'))ε + Mε(e^ε−1), Mδ+δ')"),
        accountant=fe.feducb_accountant, audit=None,
        channel=("accountant only: the claimed δ (Mδ + δ' = 0.31) exceeds what the "
                 "mechanism spends, so the accountant's ε at that δ is 0 and every sound "
                 "lower bound is 0: there is nothing for more samples to bracket"),
    ))
    return out


# --------------------------------------------------------------------------- Li & Song
def _li_song_claims() -> list[RegisteredClaim]:
    out = []
    base = {"n_agents": 2, "n_arms": 3, "horizon": 4000, "epsilon": 0.5}
    variants = [
        ("cdp-mab", "cdp", {}, "Theorem 1 and App. B: CDP-MAB is Mε-DP (Def. 1, per message)",
         "server: agent 0's uploads ȳ", me.audit_li_song_messages),
        ("ce-cdp-mab", "cdp-partial", {"n_agents": 4, "participation_rate": 0.5,
                                       "rounds": 3, "gap": 0.25},
         "Theorem 2 and §IV-B: CE-CDP-MAB (p, R) is Mε-DP although noise is N-scaled",
         "server: agent 0's uploads ȳ (when selected)", me.audit_li_song_messages),
        ("ddp-mab", "ddp", {"n_agents": 3, "graph": "path"},
         "Theorem 3: DDP-MAB is (Mε)-DP (Def. 1, messages)",
         "neighbour: agent 0's GIS messages ȳ", me.audit_li_song_messages),
        ("hdp-mab", "hdp", {"n_agents": 6, "components": 2, "epsilon": 0.25,
                            "delay_convention": "slots"},
         "Theorem 4: HDP-MAB is (Mε)-DP (Def. 1, messages)",
         "sink agent: agent 0's SAC messages ȳ", me.audit_li_song_messages),
    ]
    for algorithm, structure, extra, source, channel, recipe in variants:
        setting = {**base, "structure": structure, **extra}
        claimed = PureDP(li_song_claimed_epsilon(setting["epsilon"],
                                                 n_agents=setting["n_agents"]))
        out.append(RegisteredClaim(
            key=f"li_song/{algorithm}/messages",
            claim=_claim("li_song", algorithm, "paper", setting,
                         NeighboringRelation.REPLACE_ONE_REWARD, claimed, source),
            accountant=me.li_song_accountant, audit=recipe, channel=channel,
        ))
        if structure in ("ddp", "hdp"):
            out.append(RegisteredClaim(
                key=f"li_song/{algorithm}/actions",
                claim=_claim("li_song", algorithm, "paper (actions, outside Def. 1)",
                             setting, NeighboringRelation.REPLACE_ONE_REWARD, claimed,
                             source.replace("(Def. 1, messages)", "")
                             + " read as the algorithm's outputs: actions during t_delay "
                             "(li_song.md §3.5 P7)"),
                accountant=me.li_song_accountant, audit=me.audit_li_song_actions,
                channel="observer of agent 0's actions during t_delay",
            ))
            rounds = {**setting, "rounds": 3, "gap": 0.25}
            out.append(RegisteredClaim(
                key=f"li_song/{algorithm}/round-limited",
                claim=_claim("li_song", algorithm, "paper (R rounds)", rounds,
                             NeighboringRelation.REPLACE_ONE_REWARD, claimed,
                             "Corollaries 1-2: round-limited DDP/HDP-MAB keep Mε-DP"),
                accountant=me.li_song_accountant, audit=me.audit_li_song_messages,
                channel=channel + " (R-round schedule)",
            ))
    return out


# --------------------------------------------------------------------------- coop UCB
_COOP_MESSAGE_SOURCE = (
    "Lemma 'Privacy of Outgoing Messages' (byzantine.md §3.4, R-m): each message is "
    "ε_n = n^(-ϑ/2)-DP, worst at the first release n = f"
)
_COOP_SOURCE = (
    "Lemma 'Privacy Guarantee' (statement lost; byzantine.md §3.6, ⌊T/f⌋-fold "
    "advanced composition, reconstructed R-m/R-l) and Remark 'Robustness to Strategy'"
)


def _coop_claims() -> list[RegisteredClaim]:
    out = []
    setting = {"n_agents": 3, "n_arms": 2, "horizon": 60, "epsilon": 0.5, "theta": 1.1,
               "rule": "decaying", "gamma": 1, "graph": "complete", "target_delta": 1e-5,
               "count_field": "current"}
    composed = interval_claimed_guarantee(0.5, 60, target_delta=1e-5, theta=1.1)
    per_message = PureDP(composed.per_release_epsilon)
    for own in ("noisy", "raw"):
        mode = "corrected (own term noisy)" if own == "noisy" else "paper (own term raw, §3.3)"
        for scope, claimed, source in (
            ("per-message", per_message, _COOP_MESSAGE_SOURCE),
            ("composed", ApproxDP(composed.homogeneous_epsilon, 1e-5), _COOP_SOURCE),
        ):
            out.append(RegisteredClaim(
                key=f"dubey_aamas/private-coop-ucb/own-{own}/{scope}",
                claim=_claim("dubey_aamas", "private-coop-ucb", mode,
                             {**setting, "own_term": own, "scope": scope},
                             NeighboringRelation.REPLACE_ONE_REWARD, claimed, source),
                accountant=ce.coop_accountant, audit=ce.audit_coop_messages,
                channel="neighbour: agent 0's messages (means and counts)",
            ))
    out.append(RegisteredClaim(
        key="dubey_aamas/byzantine-coop-ucb/title",
        claim=_claim("dubey_aamas", "byzantine-coop-ucb",
                     "title reading (no DP claim in the body)",
                     {"n_agents": 3, "n_arms": 2, "horizon": 60, "gamma": 1,
                      "graph": "complete", "contamination": 0.05, "q_value": 0.5,
                      "scope": "per-message",
                      "epsilon": 0.5, "theta": 1.1, "rule": "decaying"},
                     NeighboringRelation.REPLACE_ONE_REWARD, per_message,
                     "Title and abstract ('private and Byzantine-proof cooperative "
                     "decision-making'); the body makes no DP claim for Alg. 3, which "
                     "sends individual rewards (§4.1)"),
        accountant=ce.coop_accountant, audit=ce.audit_coop_messages,
        channel="neighbour: agent 0's messages (arm, reward)",
    ))
    return out


# --------------------------------------------------------------------------- Fed_UCB
_FED_UCB_SOURCE = "Definition 1, §4.1 and abstract: ε-DP for each agent's stream {X_i,k(t)}"


def _fed_ucb_claims() -> list[RegisteredClaim]:
    out = []
    for mode, base in FED_UCB_VARIANTS:
        for horizon in (16, 1024, 600_000):
            for eps in (1.0, 2.0, 5.0):
                setting = {"n_agents": 3, "n_arms": 5, "horizon": horizon, "epsilon": eps,
                           "log_base": base, "graph": "complete",
                           "node_scale": fed_ucb_scale(eps, horizon, mode=mode, log_base=base)}
                out.append(RegisteredClaim(
                    key=f"gossip_fed_ucb/gossip-fed-ucb/{mode}-log{base}/T{horizon}/eps{eps:g}",
                    claim=_claim("gossip_fed_ucb", "gossip-fed-ucb", mode, setting,
                                 NeighboringRelation.REPLACE_ONE_REWARD, PureDP(eps),
                                 _FED_UCB_SOURCE),
                    accountant=ge.fed_ucb_accountant,
                    audit=ge.audit_fed_ucb_tree,
                    channel=("released noisy prefix sums of one stream (tree counter; "
                             "white-box LLR over the nodes covering round 1)"),
                    sample_factor=1000.0,
                ))
    for mode in ("paper", "corrected"):
        setting = {"n_agents": 3, "n_arms": 3, "horizon": 6, "epsilon": 1.0, "log_base": "2",
                   "graph": "complete", "scope": "initial pulls X(0)"}
        out.append(RegisteredClaim(
            key=f"gossip_fed_ucb/gossip-fed-ucb/{mode}/initial-pulls",
            claim=_claim("gossip_fed_ucb", "gossip-fed-ucb", mode, setting,
                         NeighboringRelation.REPLACE_ONE_REWARD, PureDP(1.0),
                         "Abstract: 'agents preserve ε-DP of their local data' (X(0) is "
                         "local data; gossip.md §3.4 item 3)"),
            accountant=ge.fed_ucb_initial_accountant, audit=ge.audit_fed_ucb_initial,
            channel="gossip partner: agent 0's first gossip message ϑ",
        ))
    setting = {"n_agents": 3, "n_arms": 5, "horizon": 16, "epsilon": 1.0, "log_base": "2",
               "graph": "complete", "rewards": "mu + N(0,1) (unclipped)", "canary": 20.0}
    out.append(RegisteredClaim(
        key="gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",
        claim=_claim("gossip_fed_ucb", "gossip-fed-ucb", "paper (synthetic rewards)", setting,
                     NeighboringRelation.REPLACE_ONE_REWARD, PureDP(1.0),
                     "§5 synthetic experiment (rewards μ + N(0,1)) under Definition 1's "
                     "claim (gossip.md §3.4 item 4)"),
        accountant=ge.fed_ucb_unbounded_accountant, audit=ge.audit_fed_ucb_unbounded,
        channel="released noisy prefix sums of one stream (tree counter)",
        sample_factor=10.0,
    ))
    return out


REGISTER: tuple[RegisteredClaim, ...] = tuple(
    _feducb_claims() + _li_song_claims() + _fed_ucb_claims() + _coop_claims()
)
"""Every registered claim, in report order."""


def paper_of(name: str) -> str:
    """The ``--paper`` name for ``name`` (an alias or the name itself).

    Raises
    ------
    ValueError
        If ``name`` is not a paper of the register; the message lists them.
    """
    key = str(name).strip().lower()
    key = PAPER_ALIASES.get(key, key)
    if key not in PAPERS:
        raise ValueError(f"`paper` must be one of {', '.join(PAPERS)}; got {name!r}.")
    return key


def claims_for(paper: str | None = None) -> tuple[RegisteredClaim, ...]:
    """The registered claims of one paper (all papers when ``paper`` is None).

    Raises
    ------
    ValueError
        If ``paper`` names no paper of the register.
    """
    if paper is None:
        return REGISTER
    name = paper_of(paper)
    return tuple(entry for entry in REGISTER if entry.paper == name)
