"""Register rows of Zhu et al. (2021), Fed_UCB: claims, settings and readings.

The tree counter's ε per record under both readings of ⌈log T⌉ and of the released
prefixes (1..T−1 or 1..T), at three horizons and Fig. 2's settings; the initial pulls
X(0) and the shared counts, outside Definition 1 and under the abstract's reading; and
the synthetic experiment's unbounded rewards (the rows of X(0) and the counts are built
in :mod:`fedpriv.audit.families.gossip_fed_ucb.claims_initial`). Recipes live in
:mod:`fedpriv.audit.families.gossip_fed_ucb.recipes`; what each field means is in
:mod:`fedpriv.audit.claims.entry`.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import MechanismResult, RegisteredClaim
from fedpriv.audit.claims.entry import make_claim as _claim
from fedpriv.audit.families.gossip_fed_ucb import recipes as ge
from fedpriv.audit.families.gossip_fed_ucb.claims_initial import gossip_fed_ucb_initial_claims
from fedpriv.audit.families.gossip_fed_ucb.regret import (
    BOUNDED_REWARDS,
    gossip_fed_ucb_reading,
    variant_label,
)
from fedpriv.audit.families.gossip_fed_ucb.regret import VARIANTS as FED_UCB_VARIANTS
from fedpriv.privacy import NeighboringRelation, PureDP
from fedpriv.privacy.accounting.tree import released_tree_depth
from fedpriv.privacy.calibrations import (
    gossip_fed_ucb_released_prefixes,
    gossip_fed_ucb_scale,
    paper_log_rounds,
)

__all__ = ["build_claims"]


def build_claims() -> list[RegisteredClaim]:
    """The family's register rows, in report order (register keys ``gossip_fed_ucb/...``)."""
    return _gossip_fed_ucb_claims()


_FED_UCB_SOURCE = "Definition 1, §4.1 and abstract: ε-DP for each agent's stream {X_i,k(t)}"


def _gossip_fed_ucb_note(mode: str, base: str, final: bool, horizon: int) -> str:
    """The row's node count on its view against the paper's ⌈log T⌉, exactly."""
    released = gossip_fed_ucb_released_prefixes(horizon, publish_final=final)
    nodes = released.bit_length()
    where = "prefixes 1..T" if final else "prefixes 1..T−1 (Alg. 4 lines 9, 19)"
    if mode == "corrected":
        text = (
            f"{where}: a record sits in {nodes} released nodes and the corrected "
            f"calibration divides ε by {nodes}: it spends exactly the claim"
        )
    else:
        rounds = paper_log_rounds(horizon, base)
        ratio = Fraction(nodes, rounds)
        factor = "exactly the claim" if ratio == 1 else f"{ratio}·ε"
        log = "⌈log₂T⌉" if base == "2" else "⌈ln T⌉"
        text = (
            f"{where}: a record sits in {nodes} released nodes, the paper divides ε by "
            f"{log} = {rounds}: the true ε is {factor}"
        )
    if horizon == 600_000:
        text += "; Fig. 2's setting (t = 6·10⁵, ε ∈ {1, 2, 5}; §5, Fig. 2 caption)"
    return text


def _gossip_fed_ucb_claims() -> list[RegisteredClaim]:
    out = []
    for mode, base, final in FED_UCB_VARIANTS:
        released_where = "1..T" if final else "1..T−1"
        for horizon in (16, 1024, 600_000):
            for eps in (1.0, 2.0, 5.0):
                setting = {
                    "n_agents": 3,
                    "n_arms": 5,
                    "horizon": horizon,
                    "epsilon": eps,
                    "log_base": base,
                    "graph": "complete",
                    "node_scale": gossip_fed_ucb_scale(
                        eps, horizon, mode=mode, log_base=base, publish_final=final
                    ),
                    "released_prefixes": gossip_fed_ucb_released_prefixes(
                        horizon, publish_final=final
                    ),
                    "rewards": BOUNDED_REWARDS,
                }
                label = variant_label(mode, base, final)
                out.append(
                    RegisteredClaim(
                        key=f"gossip_fed_ucb/gossip-fed-ucb/{label}/T{horizon}/eps{eps:g}",
                        claim=_claim(
                            "gossip_fed_ucb",
                            "gossip-fed-ucb",
                            mode,
                            setting,
                            NeighboringRelation.REPLACE_ONE_REWARD,
                            PureDP(eps),
                            _FED_UCB_SOURCE,
                            **gossip_fed_ucb_reading(mode, base, final),
                        ),
                        accountant=ge.gossip_fed_ucb_accountant,
                        audit=ge.audit_gossip_fed_ucb_tree,
                        channel=(
                            f"released noisy prefix sums {released_where} of one stream "
                            "(tree counter; white-box audits of the released nodes "
                            "covering round 1)"
                        ),
                        sample_factor=1000.0,
                        note=_gossip_fed_ucb_note(mode, base, final, horizon),
                        analytic_lower=_gossip_fed_ucb_exact_epsilon,
                    )
                )
    out += _gossip_fed_ucb_figure_claims() + gossip_fed_ucb_initial_claims()
    setting = {
        "n_agents": 3,
        "n_arms": 5,
        "horizon": 16,
        "epsilon": 1.0,
        "log_base": "2",
        "graph": "complete",
        "rewards": "mu + N(0,1) (unclipped)",
        "canary": 20.0,
    }
    out.append(
        RegisteredClaim(
            key="gossip_fed_ucb/gossip-fed-ucb/paper/unbounded-rewards",
            claim=_claim(
                "gossip_fed_ucb",
                "gossip-fed-ucb",
                "paper (synthetic rewards)",
                setting,
                NeighboringRelation.REPLACE_ONE_REWARD,
                PureDP(1.0),
                "§5 synthetic experiment (rewards μ + N(0,1)) under Definition 1's "
                "claim; Fig. 2 caption: 'Regret of Fed_UCB over time when the "
                "algorithm preserves ε-DP'; §4.1 assumes rewards in [0, 1]",
            ),
            accountant=ge.gossip_fed_ucb_unbounded_accountant,
            audit=ge.audit_gossip_fed_ucb_unbounded,
            channel="released noisy prefix sums of one stream (tree counter)",
            sample_factor=10.0,
            raw_channel="rewards outside [0, 1] fed unclipped: unbounded sensitivity",
            mechanism=_gossip_fed_ucb_tree_mechanism,
        )
    )
    return out


#: Fig. 2's horizon: §5.1, 'When the increase of regret is stable, e.g. t = 6e5, in both
#: figures' (Fig. 2(a) and 2(b)); §5.2 names none for Fig. 2(c), so it takes the same.
_FIG2_HORIZON = 600_000
_FIG2_SOURCE = (
    "; §5: 'The total privacy levels are set as ε = 1, 2, 5'; Fig. 2 caption: "
    "'Regret of Fed_UCB over time when the algorithm preserves ε-DP'"
)
#: (key part, setting, source, why the audit of the N = 3, M = 5 row is this row's).
_FIG2_PANELS = (
    (
        "fig2b",
        {
            "n_agents": 10,
            "n_arms": 10,
            "graph": "path",
            "lambda_2": 0.9946,
            "rewards": (
                "in [0, 1] as §4.1 assumes (the runs behind the figure add N(0, 1) noise: "
                "see the fig2b/unbounded-rewards rows)"
            ),
        },
        "Fig. 2(b) caption: 'Synthetic data with N = 10, M = 10, λ₂ ≈ 0.99'; §5.1: 't = 6e5, "
        "in both figures'",
        "the graph with λ₂ ≈ 0.99 is unstated: a path of 10 agents gives λ₂ = 0.9946 (a ring "
        "0.981)",
    ),
    (
        "fig2c-hospital",
        {
            "n_agents": 3,
            "n_arms": 5,
            "graph": "complete",
            "lambda_2": 0.5,
            "rewards": (
                "{0, 1}: UCI Diabetes 130-US hospitals, readmitted > 30 days -> 1, "
                "'no record' and < 30 days -> 0 (§5.2)"
            ),
            "data": "UCI Diabetes 130-US hospitals (§5.2 [52]); not read by the privacy rows",
        },
        "Fig. 2(c) caption: 'Real hospital data with N = 3, M = 5, λ₂ = 0.5'; §5.2: 'we map no "
        "record and readmitted in less than 30 days to reward 0, and map readmitted in more "
        "than 30 days to reward 1'",
        "§5.2 names no horizon for Fig. 2(c): T = 6·10⁵ is §5.1's (fedpriv's choice; under "
        "log₂ the view spends exactly ε at every T, so only the ln reading's factor depends "
        "on it). The rewards are read only through their bound [0, 1] (Definition 1's "
        "sensitivity 1), so the data file is not needed",
    ),
)


def _gossip_fed_ucb_figure_claims() -> list[RegisteredClaim]:
    """Fig. 2(b) (N = M = 10) and Fig. 2(c) (hospital data, N = 3, M = 5) at t = 6·10⁵.

    One agent's stream of one arm is what a record sits in (Definition 1; arms and
    agents are parallel), so N, M, the graph and the reward values within [0, 1] leave
    the view's ε unchanged: each row takes the audit of the ``T600000`` row of its
    variant and ε (``shared_audit_differs``) and has its own accountant. The runs
    behind Fig. 2(b) feed unclipped μ + N(0, 1) rewards; those are the
    ``fig2b/unbounded-rewards`` rows.
    """
    out = []
    for panel, extra, source, why in _FIG2_PANELS:
        for mode, base, final in FED_UCB_VARIANTS:
            label = variant_label(mode, base, final)
            released_where = "1..T" if final else "1..T−1"
            for eps in (1.0, 2.0, 5.0):
                setting = {
                    "n_agents": extra["n_agents"],
                    "n_arms": extra["n_arms"],
                    "horizon": _FIG2_HORIZON,
                    "epsilon": eps,
                    "log_base": base,
                    "graph": extra["graph"],
                    "node_scale": gossip_fed_ucb_scale(
                        eps, _FIG2_HORIZON, mode=mode, log_base=base, publish_final=final
                    ),
                    "released_prefixes": gossip_fed_ucb_released_prefixes(
                        _FIG2_HORIZON, publish_final=final
                    ),
                    **{k: v for k, v in extra.items() if k not in ("n_agents", "n_arms", "graph")},
                }
                source_key = f"gossip_fed_ucb/gossip-fed-ucb/{label}/T{_FIG2_HORIZON}/eps{eps:g}"
                differs = (
                    "n_agents",
                    "n_arms",
                    "graph",
                    *(k for k in extra if k not in ("n_agents", "n_arms", "graph")),
                )
                if panel == "fig2c-hospital":  # N = 3, M = 5, K3 as the T600000 rows
                    differs = tuple(k for k in differs if k not in ("n_agents", "n_arms", "graph"))
                out.append(
                    RegisteredClaim(
                        key=f"gossip_fed_ucb/gossip-fed-ucb/{label}/{panel}/eps{eps:g}",
                        claim=_claim(
                            "gossip_fed_ucb",
                            "gossip-fed-ucb",
                            mode,
                            setting,
                            NeighboringRelation.REPLACE_ONE_REWARD,
                            PureDP(eps),
                            _FED_UCB_SOURCE + _FIG2_SOURCE + "; " + source,
                            **gossip_fed_ucb_reading(mode, base, final),
                        ),
                        accountant=ge.gossip_fed_ucb_accountant,
                        audit=None,
                        shared_audit=source_key,
                        shared_audit_differs=differs,
                        channel=(
                            f"released noisy prefix sums {released_where} of one stream "
                            "(tree counter; white-box audits of the released nodes covering "
                            f"round 1); audit of `{source_key}`"
                        ),
                        note=(
                            _gossip_fed_ucb_note(mode, base, final, _FIG2_HORIZON)
                            + "; "
                            + why
                            + "; the audit is that of one stream's tree at the same T, ε and "
                            "calibration, which N, M and the graph do not change"
                        ),
                        analytic_lower=_gossip_fed_ucb_exact_epsilon,
                    )
                )
    for eps in (1.0, 2.0, 5.0):
        setting = {
            "n_agents": 10,
            "n_arms": 10,
            "horizon": _FIG2_HORIZON,
            "epsilon": eps,
            "log_base": "2",
            "graph": "path",
            "lambda_2": 0.9946,
            "rewards": "mu + N(0,1) (unclipped)",
            "canary": 20.0,
        }
        out.append(
            RegisteredClaim(
                key=f"gossip_fed_ucb/gossip-fed-ucb/paper/fig2b/unbounded-rewards/eps{eps:g}",
                claim=_claim(
                    "gossip_fed_ucb",
                    "gossip-fed-ucb",
                    "paper (synthetic rewards)",
                    setting,
                    NeighboringRelation.REPLACE_ONE_REWARD,
                    PureDP(eps),
                    "Fig. 2(b) caption: 'Synthetic data with N = 10, M = 10, λ₂ ≈ 0.99'; "
                    "§5.1: 'Zero-mean Gaussian noise with variance 1 is added to each "
                    "observation', 't = 6e5'" + _FIG2_SOURCE + "; §4.1 assumes rewards "
                    "in [0, 1]; claim: " + _FED_UCB_SOURCE,
                ),
                accountant=ge.gossip_fed_ucb_unbounded_accountant,
                audit=ge.audit_gossip_fed_ucb_unbounded,
                channel="released noisy prefix sums of one stream (tree counter)",
                sample_factor=10.0,
                raw_channel="rewards outside [0, 1] fed unclipped: unbounded sensitivity",
                mechanism=_gossip_fed_ucb_tree_mechanism,
                note=(
                    "the paper's calibration (ε/⌈log₂T⌉ per node) at t = 6·10⁵; the graph "
                    "with λ₂ ≈ 0.99 is unstated (a path of 10 agents: 0.9946)"
                ),
            )
        )
    return out


def _gossip_fed_ucb_exact_epsilon(claim: Claim) -> float:
    """The exact ε of the view: n released nodes hold a round-1 record, each Laplace(b).

    A reward changed at round 1 moves each of the ``n`` released nodes covering it by up
    to 1, each noised by Laplace(b) (Zhu et al. Alg. 2-3), so the privacy loss reaches
    n/b (not only bounds it) on outputs of positive probability. The messages ϑ̃(t−1)
    and actions are functions of the noisy prefixes; on the gossip schedule of positive
    probability where agent i gossips every round (Alg. 4 lines 17-19, edges drawn
    independently of the data) the prefixes can be recovered from them by an observer
    who knows the other agents' data, so at δ = 0 the view's ε is n/b exactly.
    """
    s = claim.setting_dict()
    nodes = released_tree_depth(s["horizon"], s["released_prefixes"])
    return nodes / float(s["node_scale"])


def _gossip_fed_ucb_tree_mechanism(claim: Claim) -> MechanismResult:
    """The tree's ε at its declared sensitivity 1 (rewards in [0, 1]), paper calibration."""
    route, epsilon, _ = ge.gossip_fed_ucb_accountant(dataclasses.replace(claim, mode="paper"))
    return MechanismResult(route, epsilon)
