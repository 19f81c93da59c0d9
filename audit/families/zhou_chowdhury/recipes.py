"""Accountant, mechanism, analytic and audit recipes of the Zhou & Chowdhury rows.

Silo-level LDP (Thm. 5.1) protects every silo's users against the server and the other
silos: the view is everything the server receives, each silo's noisy p-sums (Gram matrix
and reward vector) at every batch end (Alg. 1; the privacy protocol of §4).

The adaptive pair (:func:`adaptive_pair`)
----------------------------------------
A silo acts on its raw data of the current batch (``V = λI + G + ΔG_i``,
``θ̂ = V⁻¹(u + Δu_i)``), so one changed user moves the rest of the silo's batch. The
pair of data sets: silo 0's first user sees ``K`` copies of ``e₀`` and has reward ``+1``
in D and ``−1`` in D' (one (context, reward) pair replaced); every later user of its first
batch sees ``{e₀, −e₀, e₀, …}`` with reward 1 for every arm; the other silos see ``e₁``
with reward 0. Before the first sync nothing is noised, ``±e₀`` have the same width, so
silo 0 follows the sign of ``Δu₀``: ``+e₀`` for the whole batch in D and ``−e₀`` in D'.
Its first leaf then differs by ``Δu = 2B e₀`` (``ΔG = 0``): ``‖ΔQ‖ = 2B`` in the
whitened units, against ``B·√6`` charged (:func:`~fedpriv.privacy.calibrations.zhou_chowdhury.zc_user_sensitivity`
times ``records_per_leaf = B``). :func:`adaptive_pair` runs the algorithm itself in both
worlds (one batch, calibrated for the row's horizon) and reads the leaves off its runs.

Why the view's privacy loss is exactly Gaussian for this pair: the data set is fixed and
the first batch is deterministic, so given the releases before it, every later leaf of
every silo is the same function of them in both worlds (the raw batch sums reset at each
sync; a silo's later actions read only broadcast sums and unchanged users). Every release
then cancels from the likelihood ratio except the ``κ`` p-sums covering silo 0's first
leaf, which differ by ``ΔQ``: the view's LLR is ``N(±μ²/2, μ²)`` with
``μ = √κ ‖ΔQ‖ / σ`` (:func:`fedpriv.audit.engine.gaussian_nodes.llr_shift` on the
released entries), and this pair's ε at δ is the Gaussian-DP ε of ``μ`` (Dong, Roth & Su
2019, Cor. 2.13), an exact value of one neighbouring pair, hence a lower bound on the
view's ε (:func:`ldp_analytic_lower`). The Monte Carlo audit (:func:`audit_ldp_view`)
samples that LLR through the released entries and confirms ``{LLR >= c}`` by
Clopper–Pearson.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time

import numpy as np
from fedpriv.algorithms.zhou_chowdhury.environment import TableEnvironment
from fedpriv.algorithms.zhou_chowdhury.fedlinucb import run_private_fedlinucb
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import AccountantResult, MechanismResult
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit
from fedpriv.audit.engine.gaussian_nodes import (
    audit_symmetric_gaussian_release,
    llr_shift,
    privatizer_observed,
)
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon
from fedpriv.privacy.accounting.tree import nodes_covering
from fedpriv.privacy.mechanisms.matrix_tree import SymmetricMatrixGaussianTree

__all__ = [
    "AdaptivePair",
    "adaptive_pair",
    "adaptive_tables",
    "audit_ldp_view",
    "audit_sdp_view",
    "first_batch_run",
    "ldp_accountant",
    "ldp_analytic_lower",
    "ldp_mechanism",
    "sdp_accountant",
    "sdp_analytic_lower",
    "shuffle_route",
]

#: Confirming LLR samples per world per ``budget.samples`` (the LLR is a scalar: cheap).
VIEW_SAMPLES_PER_RUN = 10


def _setting(claim: Claim) -> dict:
    return claim.setting_dict()


def _run_options(s: dict) -> dict:
    """The protocol and what a silo acts on between syncs, from the row's setting."""
    return {
        "protocol": str(s.get("protocol", "ldp")),
        "own_data_between_syncs": s.get("acts_on", "own-batch-data") == "own-batch-data",
    }


def adaptive_tables(s: dict, world: int) -> TableEnvironment:
    """The first batch of the adaptive pair (module docstring) at the row's M, K, d, B.

    Parameters
    ----------
    s : dict
        The claim's setting (``n_agents``, ``n_arms``, ``dim``, ``batch_size``).
    world : int
        0 for D, 1 for D'.

    Returns
    -------
    TableEnvironment
        ``B`` rounds.

    Raises
    ------
    ValueError
        If ``dim`` or ``n_arms`` is below 2.
    """
    m, k, d, b = int(s["n_agents"]), int(s["n_arms"]), int(s["dim"]), int(s["batch_size"])
    if d < 2 or k < 2:
        raise ValueError(f"the adaptive pair needs `dim` >= 2 and `n_arms` >= 2, got {d}, {k}.")
    features = np.zeros((b, m, k, d))
    features[:, 1:, :, 1] = 1.0
    sign = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    features[:, 0, :, 0] = sign
    features[0, 0, :, 0] = 1.0
    rewards = np.zeros((b, m, k))
    rewards[:, 0, :] = 1.0
    rewards[0, 0, :] = 1.0 if world == 0 else -1.0
    return TableEnvironment(features=features, rewards=rewards, reward_bound=1.0)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AdaptivePair:
    """Silo 0's first leaf in D and D' and what the view's LLR is.

    Attributes
    ----------
    leaf_d, leaf_d_prime : ndarray, shape (d+1, d+1)
    moved : int
        Pairs of the leaf whose action differs between the worlds.
    noise_stddev : float
        σ of the paper's law (the tree's node noise is σ/√2 on the whitened leaf).
    sensitivity : float
        One pair's shift of one release (``√6`` at ``L = Y = 1``).
    charged : float
        The node sensitivity the accountant charges (``records_per_leaf × sensitivity``).
    n_nodes : int
        ``κ``: released p-sums covering the first leaf.
    mu : float
        The LLR's shift on the released entries.
    """

    leaf_d: np.ndarray
    leaf_d_prime: np.ndarray
    moved: int
    noise_stddev: float
    sensitivity: float
    charged: float
    n_nodes: int
    mu: float


@functools.lru_cache(maxsize=32)
def _pair(items: tuple) -> AdaptivePair:
    s = dict(items)
    runs = [
        run_private_fedlinucb(
            adaptive_tables(s, world),
            horizon=int(s["batch_size"]),
            planned_horizon=int(s["horizon"]),
            batch_size=int(s["batch_size"]),
            epsilon=float(s["epsilon"]),
            delta=float(s["delta"]),
            seed=0,
            **_run_options(s),
            keep_leaves=True,
            keep_actions=True,
        )
        for world in (0, 1)
    ]
    cal = runs[0].calibration
    side = int(s["dim"]) + 1
    nodes = nodes_covering(1, cal.n_batches)
    q_d, q_dp = runs[0].leaves[0, 0], runs[1].leaves[0, 0]
    means_d = np.broadcast_to(q_d, (nodes.size, side, side))
    means_dp = np.broadcast_to(q_dp, (nodes.size, side, side))
    mu = llr_shift(means_d, means_dp, cal.noise_stddev / math.sqrt(2.0), privatizer_observed(side))
    moved = int(np.sum(runs[0].actions[0, 0] != runs[1].actions[0, 0]))
    return AdaptivePair(
        leaf_d=q_d,
        leaf_d_prime=q_dp,
        moved=moved,
        noise_stddev=cal.noise_stddev,
        sensitivity=cal.sensitivity,
        charged=cal.records_per_leaf * cal.sensitivity,
        n_nodes=int(nodes.size),
        mu=mu,
    )


def adaptive_pair(claim: Claim) -> AdaptivePair:
    """The adaptive pair of the row (module docstring), computed once per setting.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    AdaptivePair
    """
    return _pair(tuple(claim.setting_dict().items()))


def first_batch_run(claim: Claim):
    """The algorithm run on the first batch of the adaptive pair's world D, calibrated for
    the row's whole horizon.

    The trees (and the vector-sum tree) are charged when they open, for the planned
    horizon, so this run's ledger is the full run's ledger.

    Parameters
    ----------
    claim : Claim
        A row of the family (its setting: M, K, d, B, T, ε, δ, protocol, ``acts_on``).

    Returns
    -------
    PrivateFedLinUCBRun
        The run (its ``accountant`` and ``calibration``).
    """
    s = _setting(claim)
    return run_private_fedlinucb(
        adaptive_tables(s, 0),
        horizon=int(s["batch_size"]),
        planned_horizon=int(s["horizon"]),
        batch_size=int(s["batch_size"]),
        epsilon=float(s["epsilon"]),
        delta=float(s["delta"]),
        seed=0,
        **_run_options(s),
    )


def ldp_accountant(claim: Claim) -> AccountantResult:
    """The algorithm's own ledger, end to end (adaptivity charged: ``B`` pairs per leaf).

    The trees are charged when they open, for the row's whole horizon, so the ledger
    of a run of the first batch (calibrated for ``T``) is the full run's ledger.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    AccountantResult
    """
    run = first_batch_run(claim)
    route, eps = run.accountant.routes.tightest(claim.claimed_delta)
    cal = run.calibration
    note = (
        f"each silo's tree of {cal.n_batches} batches (κ = {cal.depth}), σ = "
        f"{cal.noise_stddev:.4g}, charged {cal.records_per_leaf} pair(s) per leaf × "
        f"{cal.sensitivity:.4g}"
    )
    return AccountantResult(route, float(eps), (note,))


def ldp_mechanism(claim: Claim) -> MechanismResult:
    """The trees alone for one changed pair of an oblivious stream (the paper's premise).

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    MechanismResult
    """
    pair = adaptive_pair(claim)
    s = _setting(claim)
    accountant = Accountant()
    accountant.spend(
        SymmetricMatrixGaussianTree(
            noise_stddev=pair.noise_stddev / math.sqrt(2.0),
            dim=int(s["dim"]) + 1,
            frobenius_sensitivity=pair.sensitivity,
            capacity=int(s["horizon"]) // int(s["batch_size"]),
        )
    )
    route, eps = accountant.routes.tightest(claim.claimed_delta)
    return MechanismResult(route, float(eps))


def ldp_analytic_lower(claim: Claim) -> float:
    """The adaptive pair's exact ε at the claimed δ: Gaussian-DP ε of its ``μ``.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    float
        A lower bound on the view's ε (module docstring).
    """
    return float(gaussian_dp_epsilon(adaptive_pair(claim).mu, claim.claimed_delta))


def _audit_pair_nodes(claim: Claim, pair, budget: AuditBudget, seed, *, silos: int):
    """White-box LLR audit of the p-sums covering silo 0's first leaf on the adaptive pair.

    ``silos`` silos' node noises add up in what the observer sees (1: one silo's own
    p-sums; ``M``: the server's sum of the shuffled p-sums). Entries whose means agree in
    D and D' have the same law in both worlds and independent noise: they cancel from
    the LLR, so only the rows and columns where the leaves differ are drawn (the same
    LLR, d² times fewer draws at d = 57).
    """
    side = int(_setting(claim)["dim"]) + 1
    moved = np.flatnonzero(np.any(pair.leaf_d != pair.leaf_d_prime, axis=1))
    sub = np.ix_(moved, moved)
    shape = (pair.n_nodes, moved.size, moved.size)
    return audit_symmetric_gaussian_release(
        np.broadcast_to(pair.leaf_d[sub], shape),
        np.broadcast_to(pair.leaf_d_prime[sub], shape),
        noise_stddev=pair.noise_stddev * math.sqrt(silos) / math.sqrt(2.0),
        frobenius_sensitivity=pair.charged,
        n_samples=budget.samples * VIEW_SAMPLES_PER_RUN,
        seed=seed,
        delta=claim.claimed_delta,
        observed=privatizer_observed(side)[sub],
        confidence=budget.confidence,
    )


def audit_ldp_view(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """White-box audit of the view on the adaptive pair (module docstring).

    Parameters
    ----------
    claim : Claim
    budget : AuditBudget
    seed : int or SeedSequence

    Returns
    -------
    EndToEndAudit
    """
    started = time.perf_counter()
    s = _setting(claim)
    pair = adaptive_pair(claim)
    bound = _audit_pair_nodes(claim, pair, budget, seed, silos=1)
    diff = float(np.linalg.norm(pair.leaf_d - pair.leaf_d_prime))
    return EndToEndAudit(
        method="end-to-end",
        bound=bound,
        channel="the server: silo 0's noisy p-sums (Gram matrix, reward vector)",
        event=(
            f"white-box LLR of the {pair.n_nodes} p-sums covering silo 0's first leaf, "
            f"fed the algorithm's own actions in D and D' ({pair.moved} of its "
            f"{int(s['batch_size'])} pairs differ; ‖ΔQ‖ = {diff:.4g}, charged "
            f"{pair.charged:.4g}), μ = {pair.mu:.4g}, LLR >= {bound.threshold:.4g}, "
            f"{bound.n_samples:,} draws/world"
        ),
        neighbors=(
            "silo 0's first user: reward +1 (D) vs −1 (D') on decision set {e₀}; its later "
            "users see {e₀, −e₀} with reward 1"
        ),
        pilot_epsilon=float("nan"),
        seconds=time.perf_counter() - started,
    )


# ------------------------------------------------------------------ shuffle model (Thm. 5.3)
# The server sees the shuffled multiset of the M silos' p-sums at every batch end. Their
# sum (what the server broadcasts) is a function of that multiset, so the sum's exact ε
# on the adaptive pair is a lower bound on the shuffled view's: the sum of the silos'
# node noises has M times one silo's variance, so its LLR shift is μ/√M.


def sdp_accountant(claim: Claim) -> AccountantResult:
    """The tighter of each silo's own tree bound and the shuffle route's (both valid).

    The shuffled multiset is a function of the silos' messages, and a user's data reach
    only its own silo's messages, so the silo's local ε bounds the shuffled view's;
    :func:`shuffle_route` prices the same messages as shuffled reports.

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    AccountantResult
    """
    route, eps, notes = ldp_accountant(claim)
    shuffled_route, shuffled_eps = shuffle_route(claim)
    note = (
        f"shuffle route (Shuffled events, Feldman-McMillan-Talwar Thm. 3.2): each of the "
        f"κ p-sums as {int(claim.setting_dict()['n_agents'])} shuffled (ε₀, δ₀) reports gives "
        f"ε = {shuffled_eps:.4g}; no amplification applies: the theorem needs ε₀-LDP "
        "randomisers over a reporter's whole input, and a silo's Gaussian tree is "
        "(ε₀, δ₀)-DP in one user (the paper's own result for DP mechanisms is not priced)"
    )
    if shuffled_eps < eps:
        return AccountantResult(shuffled_route, shuffled_eps, (*notes, note))
    return AccountantResult(route, eps, (*notes, note))


def shuffle_route(claim: Claim) -> tuple[str, float]:
    """The shuffle-model accountant route on the silos' p-sums (``Shuffled`` events).

    Each silo's p-sum holding a user is one of ``M`` shuffled reports; as a Gaussian
    release of shift ``records_per_leaf × sensitivity`` it is (ε₀, δ₀)-DP with
    ``δ₀ = δ/(2κ)`` and ε₀ its Gaussian-DP ε there; the ``κ`` p-sums holding the user
    are charged ``SelfComposed(Shuffled(ε₀, M, δ₀), κ)``
    (:class:`fedpriv.privacy.accounting.shuffling.Shuffled`, which prices δ₀ > 0
    without amplification).

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    tuple of (str, float)
        The route and ε at the claimed δ; ε = ∞ when ε₀ exceeds the event's
        ``MAX_EVENT_EPSILON`` (the silo's own bound then stands alone).
    """
    from fedpriv.privacy import NeighboringRelation
    from fedpriv.privacy.accounting.events import MAX_EVENT_EPSILON, SelfComposed
    from fedpriv.privacy.accounting.shuffling import Shuffled

    pair = adaptive_pair(claim)
    delta0 = claim.claimed_delta / (2 * pair.n_nodes)
    eps0 = float(gaussian_dp_epsilon(pair.charged / pair.noise_stddev, delta0))
    if not eps0 <= MAX_EVENT_EPSILON:  # outside Shuffled's domain: this route bounds nothing
        return "shuffled", math.inf
    accountant = Accountant(neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD)
    event = Shuffled(
        local_epsilon=max(eps0, 1e-12),
        n_reports=int(claim.setting_dict()["n_agents"]),
        local_delta=delta0,
    )
    accountant.spend(SelfComposed(event=event, count=pair.n_nodes))
    route, eps = accountant.routes.tightest(claim.claimed_delta)
    return route, float(eps)


def sdp_analytic_lower(claim: Claim) -> float:
    """Exact ε at δ of the broadcast sums on the adaptive pair (a post-processing of the view).

    Parameters
    ----------
    claim : Claim

    Returns
    -------
    float
    """
    m = int(claim.setting_dict()["n_agents"])
    return float(gaussian_dp_epsilon(adaptive_pair(claim).mu / math.sqrt(m), claim.claimed_delta))


def audit_sdp_view(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """White-box audit of the broadcast sums (a function of the shuffled multiset).

    Parameters
    ----------
    claim : Claim
    budget : AuditBudget
    seed : int or SeedSequence

    Returns
    -------
    EndToEndAudit
    """
    started = time.perf_counter()
    s = _setting(claim)
    pair = adaptive_pair(claim)
    m = int(s["n_agents"])
    bound = _audit_pair_nodes(claim, pair, budget, seed, silos=m)
    return EndToEndAudit(
        method="end-to-end",
        bound=bound,
        channel="the server: the sum of the shuffled p-sums (a function of the multiset)",
        event=(
            f"white-box LLR of the {pair.n_nodes} summed p-sums covering silo 0's first "
            f"leaf ({pair.moved} of its pairs differ), noise of {m} silos, μ = "
            f"{pair.mu / math.sqrt(m):.4g}, LLR >= {bound.threshold:.4g}, "
            f"{bound.n_samples:,} draws/world"
        ),
        neighbors=(
            "silo 0's first user: reward +1 (D) vs −1 (D') on decision set {e₀}; its later "
            "users see {e₀, −e₀} with reward 1"
        ),
        pilot_epsilon=float("nan"),
        seconds=time.perf_counter() - started,
    )
