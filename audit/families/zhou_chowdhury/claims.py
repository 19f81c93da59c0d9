"""Register rows of Zhou & Chowdhury (ICLR 2024): every privacy claim at the settings of Fig. 2.

Silo-level LDP (Thm. 5.1) at the six privacy levels Fig. 2 runs it (Fig. 2a and 2b on the
synthetic instance, Fig. 2c on MSLR-WEB10K), and fedpriv's corrected variant beside each.
The settings are those of the paper's experiment code (the text available to fedpriv stops
after the abstract; the code names the figure and theorem of each run): ``B = 25``,
``α = 0.01``; synthetic ``M = 100``, ``K = 100``, ``d = 10``, ``T = 10⁴``; MSLR ``M = 10``,
``T = 25 000``, ``d = 57`` (the anchor and URL features), ``K`` varying by query (20 in
fedpriv's neighbouring pair). Recipes: :mod:`fedpriv.audit.families.zhou_chowdhury.recipes`.
"""

from __future__ import annotations

from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.entry import make_claim as _claim
from fedpriv.audit.families.zhou_chowdhury import recipes as zr
from fedpriv.audit.families.zhou_chowdhury import vecsum as zv
from fedpriv.privacy import ApproxDP, NeighboringRelation

__all__ = ["build_claims"]

_SYNTH = {"n_agents": 100, "n_arms": 100, "dim": 10, "horizon": 10_000, "data": "synthetic"}
_MSLR = {"n_agents": 10, "n_arms": 20, "dim": 57, "horizon": 25_000, "data": "mslr-web10k"}

#: (figure, base, ε, δ) of every silo-level LDP run of Fig. 2 (experiment code).
_LDP_RUNS = (
    ("2a", _SYNTH, 0.0001, 0.0001),
    ("2a", _SYNTH, 0.001, 0.0001),
    ("2b", _SYNTH, 0.2, 0.1),
    ("2c", _MSLR, 0.2, 0.1),
    ("2c", _MSLR, 1.0, 0.1),
    ("2c", _MSLR, 5.0, 0.1),
)

_SOURCE = (
    "Thm. 5.1 (silo-level LDP; abstract: 'We first establish privacy and regret guarantees "
    "under silo-level local differential privacy'), σ = L√(κ(ln(1/δ)+ε))/ε, "
    "κ = ⌊log₂(T/B)⌋+1 as the experiment code of Fig. {figure} computes it"
)
_OWN_DATA = {
    "reading": (
        "each silo acts on its raw data of the current batch between syncs (as the paper's "
        "experiment code does), so one changed user moves the rest of its batch; users "
        "bounded by ‖x‖ <= 1, |y| <= 1 (rewards clipped), one user's (context, reward) "
        "replaced"
    ),
    "reading_support": (
        "Alg. 1 with the experiment code's LinUCB step: V = λI + G_sync + ΔG_i, θ̂ = "
        "V⁻¹(u_sync + Δu_i), ΔG_i, Δu_i the silo's raw sums since its last sync "
        "(LDPFedLinUCB.get_arm); the leaf it sends is their value at the batch end"
    ),
}
_CORRECTED = {
    "reading": (
        "fedpriv's correction: each silo acts on the broadcast sums only, so one user "
        "moves one pair of one leaf; σ solved for the view's exact (ε, δ)"
    ),
    "reading_support": "Alg. 1 with the local step reading G_sync, u_sync only",
}
_CORRECTED_SDP = {
    "reading": (
        "fedpriv's correction: each silo acts on the broadcast sums only, so one user "
        "moves one pair of one leaf; the paper's shuffle-model σ"
    ),
    "reading_support": "Alg. 1 with the local step reading G_sync, u_sync only",
}
_NOTE = (
    "End-to-end ε: each silo's tree charged for B pairs per leaf (group privacy over the "
    "batch its own data moves: exact for a Gaussian sum, the L2 sensitivity scales by B); "
    "mechanism ε: the same tree for one pair of an oblivious stream (the calibration's "
    "premise). Lower bound: the exact ε of a neighbouring pair where silo 0's first user "
    "flips the rest of its batch (the algorithm's own actions in both worlds; every other "
    "release cancels given the releases before it), and its white-box Monte Carlo audit"
)


def _tag(eps: float) -> str:
    return f"eps{eps:g}"


def _row(
    variant: str,
    figure: str,
    base: dict,
    eps: float,
    delta: float,
    *,
    protocol: str,
    corrected: bool,
    source: str,
    corrected_reading: dict,
    **entry,
) -> RegisteredClaim:
    """One register row: the run's setting, its mode and reading, and the recipes."""
    setting = {
        **base,
        "epsilon": eps,
        "delta": delta,
        "batch_size": 25,
        "figure": figure,
        "protocol": protocol,
        "acts_on": "broadcast-sums" if corrected else "own-batch-data",
    }
    return RegisteredClaim(
        key=f"zhou_chowdhury/private-fedlinucb/{variant}/fig{figure}/{_tag(eps)}",
        claim=_claim(
            "zhou_chowdhury",
            "private-fedlinucb",
            "corrected (broadcast sums only)" if corrected else "paper",
            setting,
            NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
            ApproxDP(eps, delta),
            source,
            **(corrected_reading if corrected else _OWN_DATA),
        ),
        **entry,
    )


def build_claims() -> list[RegisteredClaim]:
    """The family's register rows, in report order (register keys ``zhou_chowdhury/...``)."""
    out = [
        _row(
            "ldp-corrected" if corrected else "ldp",
            figure,
            base,
            eps,
            delta,
            protocol="ldp-exact" if corrected else "ldp",
            corrected=corrected,
            source=_SOURCE.format(figure=figure),
            corrected_reading=_CORRECTED,
            accountant=zr.ldp_accountant,
            audit=zr.audit_ldp_view,
            channel="the server: silo 0's noisy p-sums (Gram matrix, reward vector)",
            mechanism=zr.ldp_mechanism,
            analytic_lower=zr.ldp_analytic_lower,
            note=_NOTE,
        )
        for corrected in (False, True)
        for figure, base, eps, delta in _LDP_RUNS
    ]
    out += _sdp_claims()
    out += _vecsum_claims()
    return out


#: (figure, base, ε, δ) of the shuffle-model runs by amplification (Fig. 2a).
_SDP_RUNS = (("2a", _SYNTH, 0.0001, 0.0001), ("2a", _SYNTH, 0.001, 0.0001))
_SDP_SOURCE = (
    "Thm. 5.3 (shuffle model by amplification; abstract: 'a new result on privacy "
    "amplification via shuffling for DP mechanisms'), σ = L√(κ ln(1/δ) ln(1+κ/(Tδ)) "
    "ln(Mκ/δ))/(ε√M) as the experiment code of Fig. {figure} computes it"
)
_SDP_NOTE = (
    "Upper bound: the tighter of each silo's own tree and the shuffle route (each p-sum "
    "as one of M shuffled (ε₀, δ₀) reports, Shuffled events), B pairs per leaf with the "
    "silo's own data, 1 with broadcast sums only. No amplification is credited: "
    "Feldman-McMillan-Talwar's Thm. 3.2 needs ε₀-LDP randomisers over a reporter's whole "
    "input and a silo's Gaussian tree is (ε₀, δ₀)-DP in one user; the paper's own "
    "amplification result for DP mechanisms (Thm. 5.3) is not priced. Lower bound: the "
    "exact ε of the broadcast sums (a function of the shuffled multiset, so a lower bound "
    "on the shuffled view) on the adaptive pair, and its white-box Monte Carlo audit"
)


def _sdp_claims() -> list[RegisteredClaim]:
    return [
        _row(
            "sdp-amp-broadcast" if broadcast else "sdp-amp",
            figure,
            base,
            eps,
            delta,
            protocol="sdp-amp",
            corrected=broadcast,
            source=_SDP_SOURCE.format(figure=figure),
            corrected_reading=_CORRECTED_SDP,
            accountant=zr.sdp_accountant,
            audit=zr.audit_sdp_view,
            channel="the server: the sum of the shuffled p-sums",
            mechanism=zr.ldp_mechanism,
            analytic_lower=zr.sdp_analytic_lower,
            note=_SDP_NOTE,
        )
        for broadcast in (False, True)
        for figure, base, eps, delta in _SDP_RUNS
    ]


_VECSUM_SOURCE = (
    "Thm. 5.5 (shuffle model by vector sum; abstract: 'another one leverages the "
    "integration of a shuffle protocol for vector sum into the tree-based mechanism'), "
    "every user's [y x, upper(x xᵀ)] through R_1D with p = 1/4, g = max(2√n, d, 4), "
    "b = g² ln(d²/δ)²/(ε² n) per node of n users, as the experiment code of Fig. 2b runs it"
)
_VECSUM_NOTE = (
    "Upper bound: the run's own ledger, one shuffled binomial vector-sum tree per trial "
    "(B users per leaf with the silo's own data, 1 with broadcast sums only), each level "
    "priced exactly from the binomial pmfs (flagged-Gaussian domination certificate, L2 "
    "composition over the 65 coordinates). Lower bound: the exact ε (dp-accounting's "
    "optimistic PLD from the two pmfs) of the adaptive pair on the u₀ counts of the "
    "levels where rounding is deterministic (even levels, g = 100·2^{l/2}), a marginal of "
    "the shuffled view; with broadcast sums only, also of one user's message on every "
    "level's u₀ count (every other user's u₀ = −1, so no rounding noise), the larger "
    "taken. No Monte Carlo audit"
)


def _vecsum_claims() -> list[RegisteredClaim]:
    return [
        _row(
            "sdp-vecsum-broadcast" if broadcast else "sdp-vecsum",
            "2b",
            _SYNTH,
            0.2,
            0.1,
            protocol="sdp-vecsum",
            corrected=broadcast,
            source=_VECSUM_SOURCE,
            corrected_reading=_CORRECTED_VECSUM,
            accountant=zv.vecsum_accountant,
            audit=None,
            channel=(
                "accountant only, no Monte Carlo audit (the exact analytic lower bound on the "
                "server's view, the shuffled multiset of all users' messages)"
            ),
            analytic_lower=zv.vecsum_analytic_lower,
            note=_VECSUM_NOTE,
        )
        for broadcast in (False, True)
    ]


_CORRECTED_VECSUM = {
    "reading": (
        "fedpriv's correction: each silo acts on the broadcast sums only, so one user "
        "moves one user's message; the paper's vector-sum parameters"
    ),
    "reading_support": "Alg. 1 with the local step reading G_sync, u_sync only",
}
