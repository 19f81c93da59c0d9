"""Private LinUCB baseline for FedUCB's federated linear bandit, vectorized over trials.

``linucb-independent-private``, one of the three LinUCB references of
:mod:`fedpriv.algorithms.feducb.linucb` for Dubey & Pentland (NeurIPS 2020); none is run
in the paper (fedpriv's addition).

Every agent runs a private LinUCB with its own Privatizer (FedUCB's Alg. 2,
:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`) and no communication, as in
Shariff & Sheffet (NeurIPS 2018): each round's ``v vᵀ`` (``v = [x; y]``) is one
leaf, the tree releases the noisy prefix ``(Û, û)`` every round
(``n = T``, ``m = 1 + ⌈log2 T⌉``, Alg. 2 line 2), and the agent acts on the
released statistic only, so its actions are (ε, δ)-DP w.r.t. its own history
(joint DP). This is Remark 2's "each agent acting individually" with FedUCB's noise.
Each agent's tree is charged to the accountant under its own ``agent`` cell:
agents hold disjoint records, so the guarantees compose in **parallel**.

Radius β: ``"H"``/``"P"`` is FedUCB's Prop. 2 with ``M = 1`` (both texts coincide there)
via :func:`fedpriv.algorithms.feducb.sync.exploration_radius`; ``"tuned"`` is a constant.

Speed: the private learner's ``V`` changes by fresh noise every round, so it is
factorised by Cholesky every round (one batched factorisation and one batched triangular
solve with ``K + 1`` right-hand sides; no explicit inverse).
"""

from __future__ import annotations

import numpy as np
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.feducb.linucb import LinUCBRun, check_linucb_options, linucb_setting
from fedpriv.algorithms.feducb.oful import iterate_rounds, ucb_scores
from fedpriv.algorithms.feducb.privatizer import PRIVATIZER_CALIBRATIONS, privatizer_calibration
from fedpriv.algorithms.feducb.sync import exploration_radius
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rngs
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer
from fedpriv.privacy.relations import NeighboringRelation

__all__ = ["run_linucb_independent_private"]


def run_linucb_independent_private(
    tables: LinearBanditTables,
    *,
    epsilon: float,
    delta: float,
    mode: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    failure_probability: float = 0.1,
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
) -> LinUCBRun:
    """M private LinUCB learners, each with its own Privatizer, and no communication.

    Agent ``i`` inserts ``v vᵀ`` (``v = [x; y]``) into its tree after every round and
    acts at round ``t`` on ``V = Û_{t-1}``, ``ũ = û_{t-1}`` (the release after round
    ``t - 1``, which carries the Privatizer's ``2Λ I`` shift), and on ``V = ρ_min I``,
    ``ũ = 0`` at round 0 (FedUCB's initial ``M ρ_min I`` with ``M = 1``).

    Parameters
    ----------
    tables : LinearBanditTables
        ``n_trials`` worlds of :mod:`fedpriv.algorithms.environments.linear`.
    epsilon, delta : float
        Each agent's claim: its release stream (hence its actions) is (ε, δ)-DP w.r.t.
        one substituted ``(x, y)`` of its own history.
    mode : {"paper", "corrected", "exact"}
        The Privatizer's noise calibration (as in
        :func:`fedpriv.algorithms.feducb.centralized.run_feducb`;
        :mod:`fedpriv.privacy.mechanisms.matrix_tree`), with ``n = T`` leaves and
        ``n_agents = 1`` (each learner is a single-agent problem).
    beta : {"H", "P", "tuned"}
        FedUCB's Prop. 2 with ``M = 1`` (the texts coincide) or ``beta_value``.
    seed : int or SeedSequence
        Root of the noise streams ``(trial, 0, agent, Stream.NOISE)``.
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    failure_probability : float
        α of Prop. 2 and 4, in (0, 1).
    record : bool
        Keep the actions.

    Returns
    -------
    LinUCBRun
        ``accountant`` holds one ``SymmetricMatrixGaussianTree`` per (trial, agent),
        disjoint levels ``("trial", "agent")`` (``("trial",)`` with shared users,
        where the agents compose sequentially, footnote 4).

    Raises
    ------
    ValueError
        On a parameter out of range (named in the message).
    """
    beta_value = check_linucb_options(
        tables, beta, beta_value, failure_probability, ("H", "P", "tuned")
    )
    if mode not in PRIVATIZER_CALIBRATIONS:
        raise ValueError(f"`mode` must be one of {PRIVATIZER_CALIBRATIONS}, got {mode!r}.")
    spec = tables.spec
    n_trials, n_agents, d, horizon = tables.n_trials, tables.n_agents, tables.dim, tables.horizon
    cal = privatizer_calibration(
        epsilon,
        delta,
        horizon=horizon,
        n_agents=1,
        dim=d,
        n_syncs=None,
        calibration=mode,
        version="neurips" if beta == "P" else "full",
        bound_x=spec.bound_x,
        bound_y=spec.bound_y,
        bound_theta=spec.bound_theta,
        failure_probability=failure_probability,
    )
    root = as_seed_sequence(seed)
    if spec.shared_users:
        accountant = Accountant(
            neighboring_relation=NeighboringRelation.USER_AT_ALL_AGENTS,
            disjoint=("trial",),
            sequential=("agent",),
        )
    else:
        accountant = Accountant(
            neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
            disjoint=("trial", "agent"),
        )
    privatizer = MatrixTreePrivatizer(
        stream_shape=(n_trials, n_agents),
        dim=d,
        capacity=cal.capacity,
        noise_stddev=cal.noise_stddev,
        shift=cal.shift,
        frobenius_sensitivity=cal.frobenius_sensitivity,
        accountant=accountant,
        keys={"trial": np.arange(n_trials)[:, None], "agent": np.arange(n_agents)[None, :]},
        rng=stream_rngs(root, n_trials=n_trials, n_agents=n_agents, side=0, stream=Stream.NOISE),
    )
    gram = np.broadcast_to(cal.rho_min * np.eye(d), (n_trials, n_agents, d, d)).copy()
    target = np.zeros((n_trials, n_agents, d))
    cumulative = np.zeros((n_trials, n_agents))
    curve = np.empty((n_trials, horizon))
    actions = np.zeros((n_trials, n_agents, horizon), dtype=np.int16) if record else None
    everyone = np.ones((n_trials, n_agents), dtype=bool)
    for t, contexts, rewards, means in iterate_rounds(tables):
        mean, width, log_det = ucb_scores(gram, target, contexts)
        if beta == "tuned":
            radius = np.full(log_det.shape, beta_value)
        else:
            radius = exploration_radius(
                log_det,
                dim=d,
                n_agents=1,
                rho_min=cal.rho_min,
                privacy_term=cal.beta_privacy_term,
                sub_gaussian=spec.sub_gaussian,
                failure_probability=failure_probability,
            )
        arm = np.argmax(mean + radius[..., None] * width, axis=-1)
        x = np.take_along_axis(contexts, arm[..., None, None], axis=2)[:, :, 0]
        y = np.take_along_axis(rewards, arm[..., None], axis=2)[..., 0]
        chosen = np.take_along_axis(means, arm[..., None], axis=2)[..., 0]
        cumulative += means.max(axis=-1) - chosen
        curve[:, t] = cumulative.mean(axis=1)
        if record:
            actions[:, :, t] = arm
        v = np.concatenate([x, y[..., None]], axis=-1)
        # v vᵀ by einsum: one product per entry, as the broadcast multiply, but faster
        gram, target = privatizer.release(np.einsum("...i,...j->...ij", v, v), everyone)
    return LinUCBRun(
        algorithm="linucb-independent-private",
        setting=linucb_setting(
            tables,
            epsilon=epsilon,
            delta=delta,
            calibration=mode,
            beta=beta,
            beta_value=beta_value,
            failure_probability=failure_probability,
            tree_depth=cal.tree_depth,
        ),
        regret_curve=curve,
        final_regret=cumulative,
        actions=actions,
        accountant=accountant,
        calibration=cal,
        seed_entropy=int(root.entropy),
    )
