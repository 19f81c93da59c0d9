"""Whole-algorithm audit of Fed_UCB's initial pulls X(0) (Zhu et al. 2021, Alg. 4 line 1).

* :func:`audit_gossip_fed_ucb_initial`: the whole algorithm, canary in the initial pull
  ``X_{0,k}(0)`` (1 in D, 0 in D'), observed by agent 0's gossip partner: the value
  agent 0 sends for arm k at its first gossip (Alg. 4 lines 1 and 19); where
  the initial pull is noised (corrected mode), also that Laplace release at the
  mechanism level, the stronger bound reported (:mod:`fedpriv.audit.engine.combine`).
* :class:`GossipFedUcbMeansSampler`: its sampler, one agent's released means after one round.

Coupling as in :mod:`fedpriv.audit.families.gossip_fed_ucb.recipes`: one root per world,
the reward table (the dataset) shared through
:class:`~fedpriv.audit.families.gossip_fed_ucb.recipes.FixedTableBandit`.
"""

from __future__ import annotations

import dataclasses
import math
import time

import networkx as nx
import numpy as np
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.engine.combine import halved, stronger_of
from fedpriv.audit.engine.coupled import AuditBudget, EndToEndAudit, search_and_confirm
from fedpriv.audit.engine.tree_nodes import audit_laplace_release
from fedpriv.audit.families.gossip_fed_ucb.recipes import (
    FixedTableBandit,
    open_gossip_fed_ucb_accountant,
)

__all__ = ["GossipFedUcbMeansSampler", "audit_gossip_fed_ucb_initial"]


def _initial_table(n_agents: int, n_arms: int, horizon: int, canary: float) -> np.ndarray:
    """A fixed Bernoulli(0.5) table with ``X_{0,0}(0) = canary``."""
    rng = np.random.default_rng(child_seed(20211, n_agents, n_arms))
    table = (rng.random((n_agents, horizon + 1, n_arms)) < 0.5).astype(np.float64)
    table[0, 0, 0] = canary
    return table


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class GossipFedUcbMeansSampler:
    """Sampler of a whole-Fed_UCB audit: one agent's released means after one round.

    ``sampler(world, n, seed)`` runs :func:`~fedpriv.algorithms.gossip_fed_ucb.gossip_ucb.run_gossip_fed_ucb`
    on ``envs[world]`` (``n`` trials at ``seed``) and returns ``trace["means"][round]``
    of ``agent``: shape (n, n_arms), the noisy means it gossips from round
    ``round + 1`` on.

    Attributes
    ----------
    envs : (FixedTableBandit, FixedTableBandit)
        The neighbouring datasets D and D'.
    graph : networkx.Graph
    horizon : int
        ``T`` of the runs (calibration, tree capacity, radii).
    epsilon : float
    mode, log_base : str
        As in ``run_gossip_fed_ucb``.
    agent : int
        Observed agent.
    round : int
        Observed round, in ``[0, horizon]``.
    fast : bool
        ``True``: stop each run after ``round`` (``run_gossip_fed_ucb(rounds=round)``; the
        algorithm is causal, so the observable is the same); ``False``: simulate the
        whole horizon (the reference path the benchmark compares against).
    """

    envs: tuple[FixedTableBandit, FixedTableBandit]
    graph: nx.Graph
    horizon: int
    epsilon: float
    mode: str = "corrected"
    log_base: str = "2"
    agent: int = 0
    round: int = 1
    fast: bool = True

    def __call__(self, world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
        from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb

        run = run_gossip_fed_ucb(
            self.envs[world],
            self.graph,
            horizon=self.horizon,
            epsilon=self.epsilon,
            mode=self.mode,
            log_base=self.log_base,
            n_trials=n,
            seed=seed,
            record=True,
            rounds=self.round if self.fast else None,
        )
        return run.trace["means"][self.round][:, self.agent, :].copy()


def audit_gossip_fed_ucb_initial(claim: Claim, budget: AuditBudget, seed) -> EndToEndAudit:
    """Canary in agent 0's initial pull of arm 0, observed in its first gossip message.

    The observable is ``ϑ_{0,0}`` as agent 0 sends it at the first round whose active
    edge contains agent 0 (the value before averaging), recorded with the run's trace.
    Runs in which agent 0 never gossips within the horizon report NaN-free sentinel -1.
    Each batch stops at the last round any of its runs needs (the batch's active edges
    are drawn first with ``draw_active_edges``; ``run_gossip_fed_ucb(rounds=...)`` is exact
    because the algorithm is causal).

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
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import draw_active_edges, run_gossip_fed_ucb
    from fedpriv.algorithms.networks.graphs import make_graph

    s = claim.setting_dict()
    n_agents, n_arms, horizon = s["n_agents"], s["n_arms"], s["horizon"]
    graph = make_graph("complete", n_agents)
    means = np.full((n_agents, n_arms), 0.5)
    envs = [
        FixedTableBandit(table=_initial_table(n_agents, n_arms, horizon, value), arm_means=means)
        for value in (1.0, 0.0)
    ]

    def sample(world: int, n: int, root: np.random.SeedSequence) -> np.ndarray:
        out = []
        for b, start in enumerate(range(0, n, budget.batch_size)):
            size = min(budget.batch_size, n - start)
            edges = draw_active_edges(graph, horizon, n_trials=size, seed=child_seed(root, b))
            involved = (edges == 0).any(axis=-1)  # (B, T)
            first = np.where(involved.any(axis=1), involved.argmax(axis=1), -1)
            run = run_gossip_fed_ucb(
                envs[world],
                graph,
                horizon=horizon,
                epsilon=s["epsilon"],
                mode=claim.mode,
                log_base=s["log_base"],
                n_trials=size,
                seed=child_seed(root, b),
                record=True,
                rounds=max(int(first.max()), 0),
            )
            theta = run.trace["theta"]  # (rounds+1, B, N, M); theta[t-1] is sent at round t
            value = theta[np.maximum(first, 0), np.arange(size), 0, 0]
            out.append(np.where(first >= 0, value, -1.0))
        return np.concatenate(out)

    pair = "one reward changed: agent 0's initial pull of arm 0, 1 (D) vs 0 (D')"
    channel = "gossip partner: agent 0's first gossip message ϑ_{0,0}"
    names = ("ϑ_{0,0} sent at agent 0's first gossip",)
    scale = _initial_scale(claim)
    if scale is None:  # the paper releases X(0) raw: nothing to audit at the mechanism
        return search_and_confirm(
            {pair: sample},
            budget=budget,
            seed=seed,
            delta=claim.claimed_delta,
            channel=channel,
            names=names,
        )
    half = halved(budget)
    whole = search_and_confirm(
        {pair: sample},
        budget=half,
        seed=child_seed(seed, 0),
        delta=claim.claimed_delta,
        channel=channel,
        names=names,
    )
    started = time.perf_counter()
    bound = audit_laplace_release(
        1.0,
        0.0,
        scale=scale,
        l1_sensitivity=1.0,
        n_samples=half.samples * 1000,
        seed=child_seed(seed, 1),
        confidence=half.confidence,
    )
    release = dataclasses.replace(
        whole,
        bound=bound,
        pilot_epsilon=math.nan,
        seconds=time.perf_counter() - started,
        event=(
            f"X_{{0,0}}(0) as one Laplace release (scale {scale:.4g}, as charged), "
            f"LLR >= {bound.threshold:.4g}, {bound.n_samples:,} runs/world"
        ),
    )
    return stronger_of(
        whole, release, confidence=budget.confidence, names=("end to end", "mechanism level")
    )


def _initial_scale(claim: Claim) -> float | None:
    """The Laplace scale Fed_UCB charges for agent 0's initial pull of arm 0 (None: raw)."""
    accountant = open_gossip_fed_ucb_accountant(claim)
    ledger = accountant.ledger.draws
    rows = ledger[(ledger["phase"] == "init") & (ledger["agent"] == 0) & (ledger["arm"] == 0)]
    if rows.empty or not np.isfinite(rows["scale"].iloc[0]):
        return None
    return float(rows["scale"].iloc[0])
