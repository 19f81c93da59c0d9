"""Register rows of FedUCB (Dubey & Pentland, NeurIPS 2020): claims, settings and readings.

Centralized (Alg. 1 + Privatizer) and decentralized (Alg. 3) FedUCB under the adaptive
and the fixed schedule, footnote 4's one-user-at-all-agents claim, and the settings of
Fig. 1A-C (§4.4). Each row's recipes live in :mod:`fedpriv.audit.families.feducb.recipes`
and :mod:`fedpriv.audit.families.feducb.fig1a`; what each field means is in
:mod:`fedpriv.audit.claims.entry`.

Length: one family's rows with the notes that say what each row shows; the notes are
the rows' evidence and stay beside them.
"""

from __future__ import annotations

import math

from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import AccountantResult, MechanismResult, RegisteredClaim
from fedpriv.audit.claims.entry import make_claim as _claim
from fedpriv.audit.families.feducb import fig1a as fa
from fedpriv.audit.families.feducb import recipes as fe
from fedpriv.privacy import ApproxDP, NeighboringRelation

__all__ = ["build_claims"]


def build_claims() -> list[RegisteredClaim]:
    """The family's register rows, in report order (register keys ``feducb/...``)."""
    return _feducb_claims()


_FEDUCB_SOURCE = (
    "Definition 1 (federated DP), Prop. 3, Remark 3 and §4.3 (per-node budget "
    "(ε/√(8m ln(2/δ)), δ/2m)): each agent's outgoing stream is (ε, δ)-DP per (x, y) pair"
)
_FEDUCB_BASE = {
    "n_agents": 3,
    "dim": 2,
    "n_arms": 4,
    "horizon": 64,
    "epsilon": 1.0,
    "delta": 0.1,
    "gamma": 1,
}
#: Raw channels of the adaptive (log-det) schedule: inside Definition 1, which protects
#: everything an agent's outgoing stream reveals (Definition 1; Prop. 3's reduction).
_SYNC_RAW = (
    "sync times: Alg. 1 line 12's log-det test on the agent's raw local Gram "
    "matrix decides when the controller synchronises (Alg. 1 lines 12-16)"
)
_REQUEST_RAW = (
    "Synchronize requests: Alg. 3 line 6's log-det trigger on the raw local "
    "Gram matrix decides when a neighbour is asked (Alg. 3 lines 6-10)"
)
#: Fig. 1A (FedUCB §4.4, Experiment 1): asymptotic regret for varying ε at δ = 0.1, T = 10⁷,
#: d = 10, n = O(M log T); M varies (100 in panels B and C). The ε grid is unstated.
_FIG1A_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
#: K is unstated (K <= d²); the project's Fig. 1A experiment uses 20.
_FIG1A_ARMS = 20
_FIG1A_NOTE = (
    "Shown by analysis, witnessed by coupled runs: with D at the knife edge of an early "
    "round τ <= 2 (printed with the pair), the first sync time is τ in D and later in D', "
    "at M = 100, d = 10, K = 20 and the Privatizer calibration of T = 10⁷ (runs stop after "
    "τ: the algorithm is causal and draws no noise before its first sync). The runs read "
    "no randomness, so the event has probability 1 in D and 0 in D': ε = ∞ (the raw "
    "channel); the audit's finite bound counts only the runs it executed (one batch per "
    "world for the pilot and one for the confirmation, each required to agree). That D "
    "makes a sync every few rounds: it is not Fig. 1A's n = O(M log T) regime, whose D "
    "first syncs near round 3 900 for every data set (the Fig. 1B/1C rows at that D are "
    "unresolved); the paper states no D and the claim is made for any. "
    "benchmarks/bench_feducb_fig1a.py --regime builds a knife-edge pair near that regime's "
    "D, not run by verify. The Privatizer alone is priced, not simulated. The ε grid is "
    "unstated (FedUCB §4.4, Fig. 1), this one is fedpriv's choice; M = 100 as in Fig. "
    "1B-C; K = 20"
)


#: The fixed rows' reading of what the agent acts on between syncs (Alg. 1 line 4).
_OWN_DATA_READING = {
    "reading": (
        "the agent acts on its raw own Gram matrix between syncs (as the paper's "
        "algorithm does), so one changed (x, y) moves the rest of its batch"
    ),
    "reading_support": (
        "Alg. 1 line 4: 'Set V_i,t ← S_i,t + U_i,t, ũ_i,t ← s_i,t + ū_i,t' (U, ū: the "
        "agent's raw pairs since the last sync, line 10), line 8 picks x_i,t from V_i,t "
        "(eqs. 2-3); Alg. 3 line 5 runs lines 4-13 of Alg. 1 per set g. Remark 3: the "
        "analysis takes 'the L2-sensitivity with respect to a single differing observation "
        "... and not the entire message itself ... which may potentially have O(t) "
        "sensitivity'"
    ),
}
#: What the fixed rows' three numbers are and what their audit covers.
_FIXED_NOTE = (
    "End-to-end ε: the Privatizer charged for the pairs one change moves through the agent's "
    "own actions between syncs (group privacy over them scales each node's L2 sensitivity, "
    "a sum of bounded pairs: B·√2(L²+B²) centralized, ⌈B/γ⌉·√2(L²+B²) per set "
    "decentralized); mechanism ε: the same trees for one changed pair of an oblivious "
    "stream (Prop. 3 and Remark 3's per-observation analysis). Audit: the end-to-end "
    "event on the row's channel, and a white-box audit of the view fed the adaptive "
    "stream (agent 0's actions in both worlds re-derived by the algorithm from its raw "
    "Gram matrix; every other release cancels from the view's likelihood ratio given the "
    "releases before it), at the claimed δ and at δ = 10⁻⁶, each at 1 − α/3"
)


def _feducb_privatizer_accountant(claim: Claim) -> AccountantResult:
    """The Privatizer's events at a horizon too long to run (Fig. 1A: T = 10⁷).

    Same events as the algorithm's own ledger at the adaptive schedule (one tree of T
    leaves per agent, a pair in ⌊log₂T⌋+1 nodes, agents parallel; Remark 4), priced
    from the calibration without running the rounds.
    """
    route, epsilon, _ = fe.calibration_accountant(claim)
    note = (
        "Privatizer priced from the paper's calibration (T = 10⁷ rounds are not run): "
        "one tree of T leaves per agent"
    )
    return AccountantResult(route, epsilon, (note,))


def _feducb_claims() -> list[RegisteredClaim]:
    out = []
    combos = (
        ("centralized", "feducb", "adaptive", "paper"),
        ("centralized", "feducb", "fixed", "paper (fixed schedule)"),
        ("decentralized", "feducb-decentralized", "adaptive", "paper"),
        ("decentralized", "feducb-decentralized", "fixed", "paper (fixed schedule)"),
    )
    for structure, algorithm, schedule, mode in combos:
        setting = {**_FEDUCB_BASE, "structure": structure, "schedule": schedule}
        if structure == "decentralized":
            setting.update(gamma=2, graph="path")
        if schedule == "fixed":
            setting.update(sync_every=8, n_syncs=8)
        decentralized_fixed = structure == "decentralized" and schedule == "fixed"
        channel = (
            "controller: sync times and broadcasts"
            if structure == "centralized"
            else "neighbour: agent 0's releases (Û, û) and their arrival times"
            if decentralized_fixed
            else "neighbour: Synchronize requests (first request time)"
        )
        source = _FEDUCB_SOURCE + (
            "; decentralized: Remarks 5-6, m = 1 + ⌈log(T/γ)⌉"
            if structure == "decentralized"
            else ""
        )
        if schedule == "fixed":
            source += "; fixed schedule: Alg. 2 line 2 'if n is fixed a priori'"
        raw = None
        if schedule == "adaptive":
            raw = _SYNC_RAW if structure == "centralized" else _REQUEST_RAW
        out.append(
            RegisteredClaim(
                key=f"feducb/{algorithm}/{schedule}",
                claim=_claim(
                    "feducb",
                    algorithm,
                    mode,
                    setting,
                    NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
                    ApproxDP(1.0, 0.1),
                    source,
                    **(_OWN_DATA_READING if schedule == "fixed" else {}),
                ),
                accountant=(
                    fe.feducb_decentralized_fixed_accountant
                    if decentralized_fixed
                    else fe.feducb_accountant
                ),
                audit=(
                    fe.audit_feducb_decentralized_fixed
                    if decentralized_fixed
                    else fe.audit_sync_timing
                ),
                channel=channel,
                raw_channel=raw,
                mechanism=fe.feducb_fixed_mechanism if schedule == "fixed" else None,
                note=_FIXED_NOTE if schedule == "fixed" else "",
            )
        )
    out += _feducb_user_claims() + _feducb_fig1a_claims() + _feducb_figure_claims()
    return out


def _feducb_user_claims() -> list[RegisteredClaim]:
    """Footnote 4 (one user at all M agents) under both schedules."""
    eps_user, delta_user = fe.footnote4_claim(1.0, 0.1, n_agents=3, delta_prime=0.01)
    out = []
    for schedule, mode, suffix in (
        ("fixed", "paper (fixed schedule)", ""),
        ("adaptive", "paper", "/adaptive"),
    ):
        user = {
            **_FEDUCB_BASE,
            "structure": "centralized",
            "schedule": schedule,
            "delta_prime": 0.01,
        }
        if schedule == "fixed":
            user.update(sync_every=8, n_syncs=8)
        out.append(
            RegisteredClaim(
                key=f"feducb/feducb/user-at-all-agents{suffix}",
                claim=_claim(
                    "feducb",
                    "feducb",
                    mode,
                    user,
                    NeighboringRelation.USER_AT_ALL_AGENTS,
                    ApproxDP(eps_user, delta_user),
                    "§3 composition over agents and footnote 4: "
                    "(√(2M ln(1/δ'))ε + Mε(e^ε−1), Mδ+δ')",
                    **(_OWN_DATA_READING if schedule == "fixed" else {}),
                ),
                accountant=fe.feducb_accountant,
                audit=None,
                mechanism=fe.feducb_fixed_mechanism if schedule == "fixed" else None,
                channel=(
                    "accountant only: the claimed δ (Mδ + δ' = 0.31) exceeds what the "
                    "mechanism alone spends (ε = 0 there)"
                    + (
                        "; end to end, the raw sync trigger (ε = ∞) is the one the "
                        "feducb/feducb/adaptive audit shows"
                        if schedule == "adaptive"
                        else "; the view, each agent's leaf charged for the B pairs the user's "
                        "change moves at that agent (M trees composed), spends a positive ε "
                        "far below the claim; the feducb/feducb/fixed audit shows the "
                        "adaptive leaf shift at one agent"
                    )
                ),
                raw_channel=_SYNC_RAW if schedule == "adaptive" else None,
            )
        )
    return out


def _feducb_fig1a_claims() -> list[RegisteredClaim]:
    """Fig. 1A's privacy sweep (the paper's own experiment; ε grid unstated).

    Audited end to end in the row's own setting (M = 100, d = 10, the Privatizer
    calibration of T = 10⁷) on the first sync time, with runs stopped at the
    knife-edge round (:mod:`fedpriv.audit.families.feducb.fig1a`). The event is
    deterministic (probability 1 in D, 0 in D'): ε = ∞ by analysis, the raw channel,
    with the audit's pair as a coupled-run witness; the audit's finite bound counts
    executed runs only.
    """
    out = []
    for eps in _FIG1A_EPSILONS:
        setting = {
            "n_agents": 100,
            "dim": 10,
            "n_arms": _FIG1A_ARMS,
            "horizon": 10**7,
            "epsilon": eps,
            "delta": 0.1,
            "gamma": 1,
            "structure": "centralized",
            "schedule": "adaptive",
        }
        out.append(
            RegisteredClaim(
                key=f"feducb/feducb/fig1a/eps{eps:g}",
                claim=_claim(
                    "feducb",
                    "feducb",
                    "paper (Fig. 1A setting)",
                    setting,
                    NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
                    ApproxDP(eps, 0.1),
                    "Fig. 1A (§4.4, Experiment 1): 'asymptotic per-agent regret for "
                    "varying privacy budget ε (where δ = 0.1)', T = 10⁷, d = 10; "
                    "claim: " + _FEDUCB_SOURCE,
                ),
                accountant=_feducb_privatizer_accountant,
                audit=fa.audit_fig1a_sync_timing,
                channel=(
                    "controller: first sync time (Alg. 1 line 12's log-det test on raw "
                    "local Gram matrices) at M = 100, d = 10 with T = 10⁷'s calibration; "
                    "runs stopped at the knife-edge round, all the event depends on"
                ),
                raw_channel=_SYNC_RAW,
                note=_FIG1A_NOTE,
            )
        )
    return out


#: Fig. 1B (§4.4, Experiment 2): "regret curves for M = 100 agents on n = O(M^1.5),
#: O(M log T), O(MT) communication for both private (ε = 1) and non-private settings".
#: Each regime is a target number of sync rounds n and the threshold D that gives it
#: (as the project's feducb-fig1b experiment: ⌈M^1.5⌉, ⌈M ln T⌉, T; D = T d ln 2 / n,
#: D = 0 when n >= T), at Fig. 1A's T = 10⁷ (the only horizon §4.4 states).
_FIG1B_REGIMES = ("M1.5", "MlogT", "MT")
#: Fig. 1C (§4.4, Experiment 3): "average per-agent regret curves for M = 100 by varying
#: the dimensionality d"; the d grid is unstated, this one is the feducb-fig1c experiment's.
_FIG1C_DIMS = (2, 5, 10, 20)


def _fig1_regime(order: str, *, n_agents: int, horizon: int, dim: int) -> tuple[int, float]:
    """(target sync rounds n, threshold D) of a Fig. 1 communication regime.

    The same numbers as :func:`fedpriv.algorithms.feducb.sync.syncs_for_order` and
    :func:`~fedpriv.algorithms.feducb.sync.private_threshold_for_syncs` (a test pins
    them equal), computed here so that building the register imports no algorithm.
    """
    target = {
        "MlogT": math.ceil(n_agents * math.log(horizon)),
        "M1.5": math.ceil(n_agents**1.5 - 1e-9),
        "MT": horizon,
    }[order]
    n_syncs = max(1, min(horizon, target))
    threshold = 0.0 if n_syncs >= horizon else horizon * dim * math.log(2.0) / n_syncs
    return n_syncs, threshold


def _fig1_setting(*, dim: int, order: str) -> dict:
    n_syncs, threshold = _fig1_regime(order, n_agents=100, horizon=10**7, dim=dim)
    return {
        "n_agents": 100,
        "dim": dim,
        "n_arms": min(_FIG1A_ARMS, dim * dim),
        "horizon": 10**7,
        "epsilon": 1.0,
        "delta": 0.1,
        "gamma": 1,
        "structure": "centralized",
        "schedule": "adaptive",
        "regime": order,
        "target_syncs": n_syncs,
        "threshold": threshold,
    }


#: Why D = 0 (the O(MT) regime) has no timing channel and the one-pair price is end to end.
_EVERY_ROUND_NOTE = (
    "D = 0 (n = T, Remark 1: 'O(MT) communication (i.e., synchronize every round)'): Alg. 1 "
    "line 12's test 'log det(V_i,t + x xᵀ + M(ρ_max − ρ_min)I) − log det(S_i,t) >= D/Δt_i' "
    "holds every round whatever the data (V_i,t = S_i,t + U_i,t ⪰ S_i,t and the shift "
    "M(ρ_max − ρ_min)I is positive definite, so the left side is positive): the sync times "
    "are public, no timing channel. Each Privatizer leaf holds one "
    "round's pair and, after every sync, the agent acts on S_i,t alone (line 24 resets "
    "U_i,t, ū_i,t), so later leaves depend on a changed pair only through released nodes: "
    "the one-pair price of the tree (a pair in ⌊log₂T⌋+1 released nodes, Gaussian, "
    "composed adaptively) is the view's end-to-end ε. Accountant only: no run at T = 10⁷"
)


def _fig1_regime_note(s: dict) -> str:
    return (
        f"regime n = O({s['regime']}): target {s['target_syncs']:,} syncs, D = T d ln 2 / n "
        f"= {s['threshold']:.6g} (the feducb-fig1b/1c experiments' D; the paper states no D)"
    )


def _regime_unresolved(claim: Claim) -> str:
    """Why a Fig. 1B/1C row with D > 0 has no lower bound today (its channel text)."""
    first = fa.regime_first_sync(claim)
    return (
        "accountant only: the sync trigger (Alg. 1 line 12) reads raw local Gram matrices, "
        "so no end-to-end upper bound is certified; but at this row's D the first sync "
        f"round is the same for every data set with ||x|| <= 1 (round {first.round}: the "
        "data-independent part of line 12's statistic alone crosses D there, by "
        f"{first.crossing_margin:.3g}, and one round earlier even the largest data part "
        f"stays {first.gap_below:.3g} below it; fedpriv.audit.families.feducb.fig1a."
        "regime_first_sync), so the first sync time does not witness the raw channel "
        "here, and no audit at this D has yet shown a lower bound above the claim (the "
        "own-data channel of the long raw first batch is not audited)"
    )


def _feducb_regime_accountant(claim: Claim) -> AccountantResult:
    """The Privatizer's price plus an unpriced raw trigger: ε = ∞ as an upper bound only.

    Alg. 1 line 12's test reads the raw local Gram matrix, so no finite end-to-end
    upper bound is certified; the row names no raw channel (:func:`_regime_unresolved`),
    so this ∞ is no lower bound (:func:`_regime_unresolved`).
    """
    _, _, findings = _feducb_privatizer_accountant(claim)
    reason = (
        "upper bound ∞: the sync trigger (Alg. 1 line 12) reads raw local Gram matrices and "
        "is not priced (Prop. 3 covers only the Privatizer's releases)"
    )
    return AccountantResult("unpriced", math.inf, (*findings, reason))


def _feducb_privatizer_mechanism(claim: Claim) -> MechanismResult:
    """The Privatizer's own ε (the noise alone) at the claim's calibration."""
    route, epsilon, _ = fe.calibration_accountant(claim)
    return MechanismResult(route, epsilon)


def _feducb_figure_claims() -> list[RegisteredClaim]:
    """Fig. 1B's three communication regimes and Fig. 1C's d sweep (M = 100, ε = 1).

    The O(M^1.5) and O(M log T) regimes (D > 0) read raw data in the sync trigger, but at
    their D the first sync round is data-independent, so Fig. 1A's knife-edge audit (which
    chooses its own small D, :mod:`fedpriv.audit.families.feducb.fig1a`) says nothing about
    them: they rest on the accountant alone and stay unresolved (:func:`_regime_unresolved`).
    The O(MT) regime (D = 0) syncs every round whatever the data: accountant only, the
    one-pair Privatizer price being end to end there (:data:`_EVERY_ROUND_NOTE`).
    """
    out = []
    fig1b_source = (
        "Fig. 1B (§4.4, Experiment 2): 'regret curves for M = 100 agents on "
        "n = O(M^1.5), O(M log T), O(MT) communication for both private (ε = 1) "
        "and non-private settings'; Remark 1: O(MT) communication is "
        "'synchronize every round'; claim: " + _FEDUCB_SOURCE
    )
    for order in _FIG1B_REGIMES:
        setting = _fig1_setting(dim=10, order=order)
        every_round = setting["threshold"] == 0.0
        claim = _claim(
            "feducb",
            "feducb",
            "paper (Fig. 1B setting)",
            setting,
            NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
            ApproxDP(1.0, 0.1),
            fig1b_source,
        )
        out.append(
            RegisteredClaim(
                key=f"feducb/feducb/fig1b/{order}",
                claim=claim,
                accountant=(
                    _feducb_every_round_accountant if every_round else _feducb_regime_accountant
                ),
                mechanism=None if every_round else _feducb_privatizer_mechanism,
                audit=None,
                channel=(
                    "accountant only: the Privatizer's releases at every round (sync times "
                    "public at D = 0)"
                    if every_round
                    else _regime_unresolved(claim)
                ),
                note=(
                    _EVERY_ROUND_NOTE
                    if every_round
                    else _fig1_regime_note(setting)
                    + (
                        "; benchmarks/bench_feducb_fig1a.py --regime builds a pair near this "
                        "regime's first sync (round ~3 900), not run by verify"
                        if order == "MlogT"
                        else ""
                    )
                ),
            )
        )
    fig1c_source = (
        "Fig. 1C (§4.4, Experiment 3): 'average per-agent regret curves for M = "
        "100 by varying the dimensionality d'; caption: 'n = O(M log T), ε = 1, "
        "δ = 0.1'; §4.4: 'K <= d² actions'; claim: " + _FEDUCB_SOURCE
    )
    for dim in _FIG1C_DIMS:
        setting = _fig1_setting(dim=dim, order="MlogT")
        claim = _claim(
            "feducb",
            "feducb",
            "paper (Fig. 1C setting)",
            setting,
            NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
            ApproxDP(1.0, 0.1),
            fig1c_source,
        )
        out.append(
            RegisteredClaim(
                key=f"feducb/feducb/fig1c/d{dim}",
                claim=claim,
                accountant=_feducb_regime_accountant,
                mechanism=_feducb_privatizer_mechanism,
                audit=None,
                channel=_regime_unresolved(claim),
                note=(
                    _fig1_regime_note(setting) + f" at M = 100, d = {dim}, "
                    f"K = {setting['n_arms']} with T = 10⁷'s calibration. The d grid "
                    f"is unstated (§4.4), this one is fedpriv's; K = min(20, d²) = "
                    f"{setting['n_arms']} keeps §4.4's K <= d²"
                ),
            )
        )
    return out


def _feducb_every_round_accountant(claim: Claim) -> AccountantResult:
    """The Privatizer at D = 0 (sync every round): one pair per leaf, no timing channel.

    The calibration's events (:func:`_feducb_privatizer_accountant`) without its note on
    the adaptive trigger, which at D = 0 fires every round whatever the data.

    Raises
    ------
    ValueError
        If the claim's threshold is not 0.
    """
    if float(claim.setting_dict().get("threshold", math.nan)) != 0.0:
        raise ValueError("`claim` must sit at D = 0 (sync every round).")
    route, epsilon, _ = fe.calibration_accountant(claim)
    note = (
        "Privatizer priced from the paper's calibration (T = 10⁷ rounds are not run): one "
        "tree of T leaves per agent, one round's pair per leaf (sync every round)"
    )
    return AccountantResult(route, epsilon, (note,))
