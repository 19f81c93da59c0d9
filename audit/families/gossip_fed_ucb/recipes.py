"""Accountant and audit recipes for Fed_UCB (Zhu et al. 2021; algorithms/gossip_fed_ucb/gossip_ucb.py).

* :func:`gossip_fed_ucb_accountant`: Fed_UCB's releases opened as a run opens them, ε over
  Definition 1's stream (rounds 1..T) on the claim's view: the tree prefixes 1..T−1
  that Alg. 4 sends and acts on (lines 19 and 9), or 1..T when the final estimate
  ϑ̃(T) is read as published (setting ``released_prefixes``).
* :func:`audit_gossip_fed_ucb_tree`: the tree counter on the worst-case pair (round 1
  changed 0 ↔ 1), white-box Laplace LLR over the released nodes covering round 1
  (those of the view's prefixes only), at any horizon
  (:mod:`fedpriv.audit.engine.tree_nodes`).
* :func:`gossip_fed_ucb_initial_accountant`: ε of the initial pulls X(0) (phase "init"): ∞ in
  paper mode, ε' when noised; their whole-algorithm audit is
  :func:`fedpriv.audit.families.gossip_fed_ucb.initial.audit_gossip_fed_ucb_initial`.
* :func:`audit_gossip_fed_ucb_unbounded`: the paper-mode tree fed the synthetic experiment's
  unclipped rewards (§5: μ + N(0, 1)); neighbours differ by ``canary`` (0 vs 20) at
  round 1.

Coupling: :func:`fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.run_gossip_fed_ucb` derives every stream from one root,
so the two worlds use one root each; the reward table (the dataset) is shared through
:class:`FixedTableBandit`, which ignores the environment stream. Valid because the
bound needs i.i.d. samples within each world only (:mod:`fedpriv.audit.engine.coupled`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import AccountantResult, reads_setting
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit
from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree_nodes import audit_tree_nodes, tree_audit_event
from fedpriv.privacy.calibrations import gossip_fed_ucb_released_prefixes, gossip_fed_ucb_scale

__all__ = [
    "FixedTableBandit",
    "audit_gossip_fed_ucb_tree",
    "audit_gossip_fed_ucb_unbounded",
    "gossip_fed_ucb_accountant",
    "gossip_fed_ucb_initial_accountant",
    "gossip_fed_ucb_unbounded_accountant",
    "open_gossip_fed_ucb_accountant",
]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FixedTableBandit:
    """A bandit whose every trial sees the same pre-drawn reward table (the dataset).

    Parameters
    ----------
    table : ndarray of float64, shape (n_agents, horizon + 1, n_arms)
        ``[i, t, k]``: reward of arm k for agent i at round t (row 0: initial pulls).
    arm_means : ndarray of float64, shape (n_agents, n_arms)
    reward_bounds : (float, float) or None
    """

    table: np.ndarray
    arm_means: np.ndarray
    reward_bounds: tuple[float, float] | None = (0.0, 1.0)

    @property
    def n_agents(self) -> int:
        """Number of agents."""
        return int(self.table.shape[0])

    @property
    def n_arms(self) -> int:
        """Number of arms."""
        return int(self.table.shape[2])

    @property
    def global_means(self) -> np.ndarray:
        """Mean over agents of the local means."""
        return np.asarray(self.arm_means, dtype=np.float64).mean(axis=0)

    @property
    def best_arm(self) -> int:
        """Best global arm."""
        return int(np.argmax(self.global_means))

    @property
    def gaps(self) -> np.ndarray:
        """Global gaps."""
        return self.global_means.max() - self.global_means

    def sample_rewards(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        """The fixed table's first ``horizon + 1`` rows (``rng`` is not used).

        A read-only view, not a copy: every trial of every run sees the same table, and
        copying it per trial cost a fifth of a short end-to-end audit's time.

        Parameters
        ----------
        horizon : int
            T, at most the table's rows minus one.
        rng : numpy.random.Generator
            Unused.

        Returns
        -------
        ndarray of float64, shape (n_agents, horizon + 1, n_arms)
            A read-only view.

        Raises
        ------
        ValueError
            If ``horizon`` is beyond the table.
        """
        if horizon + 1 > self.table.shape[1]:
            raise ValueError(
                f"`horizon` must be <= {self.table.shape[1] - 1} for this table, got {horizon}."
            )
        view = self.table[:, : horizon + 1]
        view.flags.writeable = False
        return view


def _setting(claim: Claim) -> dict:
    return claim.setting_dict()


def _released_prefixes(claim: Claim) -> int:
    """The tree prefixes the claim's view holds: the setting's, else Fed_UCB's view 1..T−1
    (Zhu et al. Alg. 4 sends and acts on ϑ̃(t−1) only, lines 19 and 9)."""
    s = _setting(claim)
    return int(s.get("released_prefixes", gossip_fed_ucb_released_prefixes(s["horizon"])))


def _publish_final(claim: Claim) -> bool:
    """Whether the claim's view includes the final estimate ϑ̃(T) (prefix T)."""
    horizon = _setting(claim)["horizon"]
    return horizon > 1 and _released_prefixes(claim) == horizon


def open_gossip_fed_ucb_accountant(
    claim: Claim, *, mode: str | None = None, reward_bounds: tuple[float, float] | None = (0.0, 1.0)
):
    """The accountant of Fed_UCB's releases opened for the claim's setting (no run).

    Parameters
    ----------
    claim : Claim
        A Fed_UCB claim (its setting gives the agents, arms, horizon, ε and log base).
    mode : str, optional
        The noise calibration; default the claim's ``mode``.
    reward_bounds : tuple of float or None
        The environment's declared reward support (None: unbounded).

    Returns
    -------
    Accountant
        Charged with every release of the claim's view, as the algorithm opens them
        (:mod:`fedpriv.algorithms.gossip_fed_ucb.releases`).
    """
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import open_gossip_fed_ucb_releases
    from fedpriv.algorithms.seeding import Stream, stream_rngs

    s = _setting(claim)
    x0 = np.zeros((1, s["n_agents"], s["n_arms"]))
    noise = stream_rngs(
        np.random.SeedSequence(0), n_trials=1, n_agents=s["n_agents"], stream=Stream.NOISE
    )
    accountant, _, _, _ = open_gossip_fed_ucb_releases(
        x0,
        horizon=s["horizon"],
        epsilon=s["epsilon"],
        mode=mode or claim.mode,
        log_base=s["log_base"],
        rng=noise,
        reward_bounds=reward_bounds,
        publish_final=_publish_final(claim),
    )
    return accountant


def gossip_fed_ucb_accountant(claim: Claim) -> AccountantResult:
    """ε of Fed_UCB's stream releases (phase "stream") for the claim's setting.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float, tuple of str)
        The route, ε in nats at the claimed δ (``inf`` with a raw channel) and the
        findings (notes) that explain it.
    """
    accountant = open_gossip_fed_ucb_accountant(claim)
    route, epsilon = accountant.routes.tightest(0.0, where={"phase": "stream"})
    init = accountant.get_epsilon(0.0, where={"phase": "init"})
    findings = ()
    if math.isinf(init):
        findings = (
            (
                "initial pulls are released raw (Alg. 4 line 1): the round-0 records "
                "have ε = ∞; Definition 1's stream starts at t = 1"
            ),
        )
    return AccountantResult(route, epsilon, findings)


def gossip_fed_ucb_initial_accountant(claim: Claim) -> AccountantResult:
    """ε of the round-0 records (phase "init"): ∞ in paper mode, ε' when noised.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float, tuple of str)
        The route, ε in nats at the claimed δ (``inf`` with a raw channel) and the
        findings (notes) that explain it.
    """
    accountant = open_gossip_fed_ucb_accountant(claim)
    route, epsilon = accountant.routes.tightest(0.0, where={"phase": "init"})
    return AccountantResult(
        route, epsilon, tuple(accountant.ledger.non_private_reasons(where={"phase": "init"}))
    )


def gossip_fed_ucb_unbounded_accountant(claim: Claim) -> AccountantResult:
    """Paper mode on the Gaussian-reward environment: the accountant charges ∞.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed δ).

    Returns
    -------
    tuple of (str, float, tuple of str)
        The route, ε in nats at the claimed δ (``inf`` with a raw channel) and the
        findings (notes) that explain it.
    """
    accountant = open_gossip_fed_ucb_accountant(claim, mode="paper", reward_bounds=None)
    route, epsilon = accountant.routes.tightest(0.0, where={"phase": "stream"})
    return AccountantResult(
        route, epsilon, tuple(accountant.ledger.non_private_reasons(where={"phase": "stream"}))
    )


def _tree_audit(
    pair, scale: float, claim: Claim, budget: AuditBudget, seed, neighbors: str, channel: str
) -> EndToEndAudit:
    """The released nodes' audit: only the prefixes the claim's view holds
    (``released_prefixes`` of the setting; every prefix when it has none)."""
    result = audit_tree_nodes(
        pair,
        scale=scale,
        claimed_epsilon=claim.claimed.epsilon,
        n_samples=budget.samples,
        seed=seed,
        confidence=budget.confidence,
        released_prefixes=_released_prefixes(claim),
    )
    return EndToEndAudit(
        method="end-to-end",
        bound=result.bound,
        channel=channel,
        event=tree_audit_event(result),
        neighbors=neighbors,
        pilot_epsilon=math.nan,
        seconds=result.seconds,
    )


@reads_setting("horizon", "epsilon", "log_base", "released_prefixes")
def audit_gossip_fed_ucb_tree(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """White-box audit of Fed_UCB's released tree nodes at the worst position (round 1).

    Only the nodes of the prefixes the claim's view holds are audited: 1..T−1 (Zhu et
    al. Alg. 4 lines 9 and 19), or 1..T when the final estimate is published.

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed guarantee).
    budget : AuditBudget
        Pilot and confirmation samples per world, batch size and confidence.
    seed : int or SeedSequence
        Root of the audit's streams (every batch has its own address).

    Returns
    -------
    EndToEndAudit
        The ε lower bound (nats) at the claimed δ, the confirmed event and the wall
        time.
    """
    s = _setting(claim)
    scale = gossip_fed_ucb_scale(
        s["epsilon"],
        s["horizon"],
        mode=claim.mode,
        log_base=s["log_base"],
        publish_final=_publish_final(claim),
    )
    return _tree_audit(
        worst_case_reward_pair(s["horizon"]),
        scale,
        claim,
        budget,
        seed,
        "one reward changed: round 1 (in the most nodes), 1 (D) vs 0 (D')",
        "released noisy prefix sums of one stream (tree counter)",
    )


def audit_gossip_fed_ucb_unbounded(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """The paper's tree on an unclipped reward: neighbours 0 vs ``canary`` at round 1 (§5.1).

    Parameters
    ----------
    claim : Claim
        The registered claim (its setting, relation and claimed guarantee).
    budget : AuditBudget
        Pilot and confirmation samples per world, batch size and confidence.
    seed : int or SeedSequence
        Root of the audit's streams (every batch has its own address).

    Returns
    -------
    EndToEndAudit
        The ε lower bound (nats) at the claimed δ, the confirmed event and the wall
        time.
    """
    s = _setting(claim)
    scale = gossip_fed_ucb_scale(s["epsilon"], s["horizon"], mode="paper", log_base=s["log_base"])
    canary = float(s["canary"])
    return _tree_audit(
        worst_case_reward_pair(s["horizon"], low=0.0, high=canary),
        scale,
        claim,
        budget,
        seed,
        f"one reward changed at round 1: {canary:g} (D) vs 0 (D'), as N(0,1) noise allows",
        "released noisy prefix sums of one stream (tree counter), rewards unclipped",
    )
