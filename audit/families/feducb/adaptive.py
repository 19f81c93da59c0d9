"""White-box audit of FedUCB's fixed-schedule view, on the adaptive stream.

The fixed schedule's Privatizer receives, at each sync, the sum ``Q`` of ``v vᵀ``
(``v = [x; y]``) of the agent's pairs since the last sync, and between syncs the agent
picks those ``x`` from its raw local Gram matrix (Alg. 1 line 4, ``V ← S + U``; line 8;
eqs. 2-3). So one changed pair moves the rest of its batch
(:mod:`fedpriv.algorithms.feducb.adaptivity`). This audit feeds the Privatizer the
stream the algorithm itself produces in both worlds, not an oblivious one.

The pair of worlds (:func:`adaptive_worlds`): every decision set is
``{L e₀, −L e₀, L e₀, …}`` with reward ``B`` for every action, except agent 0's first
user, whose decision set holds ``L e₀`` only and whose reward is ``B`` in D and ``−B`` in
D' (one (context, reward) pair replaced, ``REPLACE_ONE_CONTEXT_REWARD``). The two
candidate actions have the same width ``‖x‖_{V⁻¹}`` at every round, so the agent takes
the sign of ``⟨θ̄, e₀⟩ ∝ ũ₀``: ``+`` in D, ``−`` in D' after the first reward, and every
later reward ``B`` keeps it. Its leaf is ``k (v vᵀ)`` with ``v = [L e₀; B]`` in D and
``k (v' v'ᵀ)`` with ``v' = [−L e₀; B]`` in D' (``k`` = the positions reached), so
``‖Q − Q'‖_F = k · 2√2 L B``, which is ``k √2 (L² + B²)`` for ``L = B``: the charged
sensitivity is attained. The algorithm derives these actions itself
(:func:`adaptive_leaves` runs it in both worlds and reads the leaf off its transcript;
before the first sync nothing is noised, so they are deterministic).

The score: conditioned on the releases before it, every later leaf of every agent is
the same function of those releases and of unchanged raw data in both worlds, so the
exact log-likelihood ratio of the whole view (every release the controller, Alg. 1
line 17, or a neighbour, Alg. 3 line 16, receives) is the white-box LLR of the
released nodes covering the changed leaf with means ``Q`` and ``Q'`` (every other
term cancels), ``N(±μ²/2, μ²)`` in D / D'
(:mod:`fedpriv.audit.engine.gaussian_nodes`). Its samples therefore have the law the
LLR of full algorithm runs has, and the event ``{LLR >= c}`` (``c`` from the declared
law, confirmed on fresh samples) bounds the view's ε from below at the stated
confidence.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit
from fedpriv.audit.engine.gaussian_nodes import (
    audit_symmetric_gaussian_release,
    llr_shift,
    privatizer_observed,
)
from fedpriv.audit.estimators import EpsilonLowerBound, epsilon_lower_bound_at_delta
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting.events import SelfComposed, SymmetricMatrixGaussian
from fedpriv.privacy.accounting.tree import nodes_covering

__all__ = [
    "AdaptiveViewAudit",
    "adaptive_leaves",
    "adaptive_worlds",
    "audit_adaptive_view",
    "split_confidence",
    "with_adaptive_bracket",
]

#: Runs per world of the view audit per confirming end-to-end run (``verify``: 10⁴ →
#: 10⁷ at δ = 10⁻⁶; the claimed-δ event needs a tenth of that).
VIEW_SAMPLES_PER_RUN = 1_000
#: The view audit's neighbouring pair (:func:`adaptive_worlds`), for the report.
VIEW_PAIR = (
    "one user changed: agent 0's first user ({L e₀}, reward B in D, −B in D'); "
    "every other decision set {L e₀, −L e₀} with reward B"
)
_CLAIMED_DELTA_FRACTION = 10


def split_confidence(confidence: float, parts: int) -> float:
    """``1 − α/parts`` for a family-wise ``confidence = 1 − α`` over ``parts`` audits.

    Parameters
    ----------
    confidence : float
        Family-wise confidence ``1 − α``, in (0, 1).
    parts : int
        Number of audits, >= 1.

    Returns
    -------
    float
    """
    return 1.0 - (1.0 - confidence) / parts


def adaptive_worlds(s: dict):
    """``(tables_d, tables_d_prime)`` of the module docstring, one trial, for setting ``s``.

    ``s`` needs ``n_agents``, ``n_arms`` (>= 2), ``dim`` and ``horizon``.

    Parameters
    ----------
    s : dict
        The claim's setting.

    Returns
    -------
    tuple of (LinearBanditTables, LinearBanditTables)
        One trial each.
    """
    from fedpriv.algorithms.environments.linear import LinearBandit, LinearBanditTables

    spec = LinearBandit(n_agents=int(s["n_agents"]), n_arms=int(s["n_arms"]), dim=int(s["dim"]))
    n_agents, n_arms, dim, horizon = spec.n_agents, spec.n_arms, spec.dim, int(s["horizon"])
    big_l, big_b = spec.bound_x, spec.bound_y
    signs = np.where(np.arange(n_arms) % 2 == 0, 1.0, -1.0)  # L e₀, −L e₀, L e₀, ...
    contexts = np.zeros((1, n_agents, horizon, n_arms, dim))
    contexts[..., 0] = big_l * signs
    contexts[0, 0, 0, :, 0] = big_l  # agent 0's first user: L e₀ only
    rewards = np.full((1, n_agents, horizon, n_arms), big_b)
    theta = np.zeros((1, dim))
    theta[0, 0] = 1.0 / big_l
    tables = LinearBanditTables.from_arrays(spec, contexts, rewards, theta)
    changed = tables.substitute(agent=0, t=0, rewards=np.full(n_arms, -big_b))
    return tables, changed


def _leaf(run, tables, *, agent: int, rounds: np.ndarray) -> np.ndarray:
    """``Σ v vᵀ`` of ``agent``'s pairs at ``rounds`` in trial 0 (read off the transcript)."""
    block = tables.block(0, tables.horizon)
    arms = run.transcript.actions[0, agent, rounds].astype(np.int64)
    x = block.contexts[0, agent, rounds, arms]
    y = block.rewards[0, agent, rounds, arms]
    v = np.concatenate([x, y[:, None]], axis=1)
    return v.T @ v


def adaptive_leaves(s: dict, run_fn) -> tuple[np.ndarray, np.ndarray, int, object]:
    """Agent 0's first leaf in D and D' as the algorithm builds it (module docstring).

    ``run_fn(tables, side)`` runs the row's algorithm (``record=True``) on one trial.
    Returns ``(q_d, q_d_prime, positions, run_d)`` where ``positions`` counts the leaf
    pairs that differ (the changed pair and the actions it moved).

    Parameters
    ----------
    s : dict
        The claim's setting (with ``sync_every``).
    run_fn : callable
        ``run_fn(tables, side) -> run``.

    Returns
    -------
    tuple of (ndarray, ndarray, int, run)
        ``(q_d, q_d_prime, positions, run_d)``; the leaves are ``(dim + 1, dim + 1)``.
    """
    tables_d, tables_dp = adaptive_worlds(s)
    run_d, run_dp = run_fn(tables_d, 0), run_fn(tables_dp, 1)
    gamma = int(s.get("gamma", 1)) if s.get("structure") == "decentralized" else 1
    rounds = np.arange(0, int(s["sync_every"]), gamma)  # set 0 of the first batch
    q_d = _leaf(run_d, tables_d, agent=0, rounds=rounds)
    q_dp = _leaf(run_dp, tables_dp, agent=0, rounds=rounds)
    moved = 1 + int(
        np.sum(
            run_d.transcript.actions[0, 0, rounds[1:]]
            != run_dp.transcript.actions[0, 0, rounds[1:]]
        )
    )
    return q_d, q_dp, moved, run_d


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AdaptiveViewAudit:
    """The view audit's bound and what it measured (module docstring).

    Attributes
    ----------
    bound : EpsilonLowerBound
    accountant_epsilon : float
        ε at ``bound.delta`` of the covering nodes charged at the run's
        ``records_per_leaf`` (what the view's accountant charges).
    mu : float
        The LLR's shift: ``√(nodes) ‖Q − Q'‖_F / (√2 σ_N)`` on the released entries.
    positions : int
        Leaf pairs that differ between the worlds.
    n_nodes : int
    description : str
    seconds : float
    """

    bound: EpsilonLowerBound
    accountant_epsilon: float
    mu: float
    positions: int
    n_nodes: int
    description: str
    seconds: float


def audit_adaptive_view(
    s: dict, run_fn, *, n_leaves: int, n_samples: int, seed, delta: float, confidence: float
) -> AdaptiveViewAudit:
    """White-box bound at ``delta`` on the view of the row with setting ``s``.

    ``run_fn`` as in :func:`adaptive_leaves`; ``n_leaves`` leaves per tree (the changed
    leaf is leaf 1, covered by ``⌊log₂ n⌋ + 1`` nodes).

    Parameters
    ----------
    s : dict
        The claim's setting.
    run_fn : callable
        As in :func:`adaptive_leaves`.
    n_leaves : int
        Leaves per tree, >= 1.
    n_samples : int
        Releases per world, >= 1.
    seed : int or SeedSequence
        Root of the noise streams.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1).

    Returns
    -------
    AdaptiveViewAudit
    """
    started = time.perf_counter()
    q_d, q_dp, moved, run = adaptive_leaves(s, run_fn)
    cal = run.calibration
    side = int(s["dim"]) + 1
    nodes = nodes_covering(1, n_leaves)
    means_d = np.broadcast_to(q_d, (nodes.size, side, side))
    means_dp = np.broadcast_to(q_dp, (nodes.size, side, side))
    observed = privatizer_observed(side)
    charged = run.records_per_leaf * cal.frobenius_sensitivity
    bound = audit_symmetric_gaussian_release(
        means_d,
        means_dp,
        noise_stddev=cal.noise_stddev,
        frobenius_sensitivity=charged,
        n_samples=n_samples,
        seed=seed,
        delta=delta,
        observed=observed,
        confidence=confidence,
    )
    accountant = Accountant()
    accountant.spend(
        SelfComposed(
            event=SymmetricMatrixGaussian(
                noise_stddev=cal.noise_stddev, dim=side, frobenius_sensitivity=charged
            ),
            count=int(nodes.size),
        )
    )
    diff = float(np.linalg.norm(q_d - q_dp))
    description = (
        f"white-box LLR of the {nodes.size} Privatizer nodes {nodes.tolist()} covering agent "
        f"0's first leaf of {n_leaves}, fed the adaptive stream: the algorithm's own "
        f"actions in D and D' ({moved} of the leaf's pairs differ; ‖Q − Q'‖_F = "
        f"{diff:.4g}, charged {charged:.4g})"
    )
    return AdaptiveViewAudit(
        bound=bound,
        accountant_epsilon=float(accountant.routes.tightest(delta)[1]),
        mu=llr_shift(means_d, means_dp, cal.noise_stddev, observed),
        positions=moved,
        n_nodes=int(nodes.size),
        description=description,
        seconds=time.perf_counter() - started,
    )


def with_adaptive_bracket(
    result: EndToEndAudit,
    s: dict,
    run_fn,
    *,
    n_leaves: int,
    budget: AuditBudget,
    seed,
    claimed_delta: float,
    bracket_delta: float,
) -> EndToEndAudit:
    """``result`` (run at ``1 − α/3``) joined by the view audit at both δ.

    Two view audits run at ``1 − α/3`` each (addresses ``child_seed(seed, 2)`` and
    ``child_seed(seed, 3)``; the end-to-end search uses 0 and 1): at the claimed δ on
    ``budget.samples × VIEW_SAMPLES_PER_RUN / 10`` runs per world and at
    ``bracket_delta`` on ``budget.samples × VIEW_SAMPLES_PER_RUN``. Each reported
    bound is the stronger of the end-to-end event's and the view audit's at that δ,
    stated at ``budget.confidence`` (union bound over the three).

    Parameters
    ----------
    result : EndToEndAudit
        The end-to-end audit, at ``1 − α/3``.
    s : dict
        The claim's setting.
    run_fn : callable
        As in :func:`adaptive_leaves`.
    n_leaves : int
        Leaves per tree, >= 1.
    budget : AuditBudget
        The family-wise budget.
    seed : int or SeedSequence
        The row's audit address.
    claimed_delta : float
        The claim's δ.
    bracket_delta : float
        The second δ (10⁻⁶ in the reports).

    Returns
    -------
    EndToEndAudit
    """
    each = split_confidence(budget.confidence, 3)
    family = budget.confidence
    many = budget.samples * VIEW_SAMPLES_PER_RUN
    at_claim = audit_adaptive_view(
        s,
        run_fn,
        n_leaves=n_leaves,
        n_samples=max(1, many // _CLAIMED_DELTA_FRACTION),
        seed=child_seed(seed, 2),
        delta=claimed_delta,
        confidence=each,
    )
    at_bracket = audit_adaptive_view(
        s,
        run_fn,
        n_leaves=n_leaves,
        n_samples=many,
        seed=child_seed(seed, 3),
        delta=bracket_delta,
        confidence=each,
    )
    own_bracket = epsilon_lower_bound_at_delta(result.bound, bracket_delta)
    if math.isfinite(result.epsilon_lower_bound_at_1e_6):
        own_bracket = max(own_bracket, float(result.epsilon_lower_bound_at_1e_6))
    own_claim = result.bound.epsilon_lower_bound
    view_claim = at_claim.bound.epsilon_lower_bound
    use_view = view_claim > own_claim
    bound = at_claim.bound if use_view else result.bound
    event = (
        f"view (adaptive stream): {at_claim.description}; threshold "
        f"{at_claim.bound.threshold:.6g} from the declared N(±μ²/2, μ²) law, μ = "
        f"{at_claim.mu:.4g} (the end-to-end event gives {own_claim:.4g})"
        if use_view
        else f"{result.event} (view audit on the adaptive stream {view_claim:.4g})"
    )
    view_bracket = at_bracket.bound.epsilon_lower_bound
    use_view_bracket = view_bracket >= own_bracket
    neighbors = (
        VIEW_PAIR + f" (the end-to-end event's pair: {result.neighbors})"
        if use_view
        else result.neighbors
    )
    return dataclasses.replace(
        result,
        bound=dataclasses.replace(bound, confidence=family),
        event=event,
        neighbors=neighbors,
        epsilon_lower_bound_at_1e_6=max(own_bracket, view_bracket),
        bound_at_1e_6=dataclasses.replace(
            at_bracket.bound if use_view_bracket else result.bound, confidence=family
        ),
        event_at_1e_6=(
            f"view (adaptive stream): {at_bracket.description}; threshold "
            f"{at_bracket.bound.threshold:.6g} from the declared N(±μ²/2, μ²) law, μ = "
            f"{at_bracket.mu:.4g} (the end-to-end event gives {own_bracket:.4g})"
            if use_view_bracket
            else f"the end-to-end event (view audit {view_bracket:.4g})"
        ),
        seconds=result.seconds + at_claim.seconds + at_bracket.seconds,
    )
