"""LinUCB / OFUL baselines for FedUCB's federated linear bandit, vectorized over trials.

Three references for Dubey & Pentland (NeurIPS 2020); none is run in the paper
(§4.4 compares FedUCB only with its non-private version; fedpriv's additions):

``linucb``
    Every agent runs its own non-private OFUL (Abbasi-Yadkori, Pál & Szepesvári
    2011, Alg. 1 with Thm. 2's radius) on its own data only. With ``n_agents = 1``
    this is single-agent OFUL. Nothing leaves an agent, so nothing is charged.
``linucb-independent-private``
    Every agent runs a private LinUCB with its own Privatizer and no communication
    (:mod:`fedpriv.algorithms.feducb.linucb_private`).
``linucb-pooled``
    One non-private learner per trial sees every agent's data: the "non-private
    centralized pooled LinUCB over all MT samples". Order of updates within a round
    (``order``): ``"round"`` (default) — all M agents act on the statistic of rounds
    ``< t``, then the M observations are added; ``"sequential"`` — agent ``i`` acts
    after the observations of agents ``< i`` of the same round are added (the
    hypothetical learner ``W_{i,t}`` of the paper's eq. (8)). With ``M = 1`` both are
    single-agent OFUL.

Radius β: ``"oful"`` is Thm. 2 of Abbasi-Yadkori et al.,
``β_t = σ sqrt(2 ln(1/α) + log det V_t − d ln λ) + sqrt(λ) S``; the private learner's
``"H"``/``"P"`` is FedUCB's Prop. 2 with ``M = 1`` (both texts coincide there) via
:func:`fedpriv.algorithms.feducb.sync.exploration_radius`; ``"tuned"`` is a constant.

Speed: the non-private learners keep ``V^{-1}`` by Sherman–Morrison rank-one updates
and ``log det V`` by the matrix determinant lemma.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.feducb.oful import iterate_rounds, oful_radius, sherman_morrison_update
from fedpriv.algorithms.feducb.privatizer import PrivatizerCalibration
from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.privacy.checks import check_positive, check_probability
from fedpriv.privacy.ledger.accountant import Accountant

__all__ = [
    "BETA_CHOICES",
    "UPDATE_ORDERS",
    "LinUCBRun",
    "check_linucb_options",
    "linucb_setting",
    "run_linucb",
    "run_linucb_pooled",
]

#: Radius choices: OFUL's Thm. 2 (non-private), FedUCB's Prop. 2 ([H]/[P]), a constant.
BETA_CHOICES = ("oful", "H", "P", "tuned")
#: Order of the M updates within a round of the pooled learner.
UPDATE_ORDERS = ("round", "sequential")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinUCBRun:
    """Result of a batch of LinUCB baseline runs.

    Attributes
    ----------
    algorithm : str
        ``"linucb"``, ``"linucb-independent-private"`` or ``"linucb-pooled"``.
    setting : dict
        Parameters of the run (JSON-friendly scalars).
    regret_curve : ndarray of float64, shape (n_trials, horizon)
        Average per-agent cumulative pseudo-regret ``R_M(t)/M`` after round ``t``.
    final_regret : ndarray of float64, shape (n_trials, n_agents)
        Each agent's cumulative pseudo-regret at ``T``.
    actions : ndarray of int16, shape (n_trials, n_agents, horizon) or None
        Chosen action indices (with ``record=True``).
    accountant : Accountant or None
        Every release (private learner only).
    calibration : PrivatizerCalibration or None
    seed_entropy : int
    """

    algorithm: str
    setting: dict
    regret_curve: np.ndarray
    final_regret: np.ndarray
    actions: np.ndarray | None
    accountant: Accountant | None
    calibration: PrivatizerCalibration | None
    seed_entropy: int

    def accountant_epsilon(self, target_delta: float) -> tuple[str, float]:
        """``(route, ε)`` of the Privatizer releases at ``target_delta`` (private only).

        Parameters
        ----------
        target_delta : float
            In [0, 1).

        Returns
        -------
        tuple of (str, float)
            The tightest route and ε in nats at ``target_delta``.

        Raises
        ------
        ValueError
            For a non-private run (nothing was released).
        """
        if self.accountant is None:
            raise ValueError(f"{self.algorithm} releases nothing; it has no accountant.")
        return self.accountant.routes.tightest(target_delta)


def check_linucb_options(
    tables: Any,
    beta: str,
    beta_value: float | None,
    failure_probability: float,
    allowed: tuple[str, ...],
) -> float | None:
    """Check the options every LinUCB variant shares (OFUL, pooled, private).

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds of the run.
    beta : str
        The radius choice, one of ``allowed``.
    beta_value : float or None
        The constant radius when ``beta == "tuned"``, > 0.
    failure_probability : float
        The confidence bound's failure probability, in (0, 1).
    allowed : tuple of str
        The radius choices of the calling variant (a subset of ``BETA_CHOICES``).

    Returns
    -------
    float or None
        The checked ``beta_value`` for ``"tuned"``, else None.

    Raises
    ------
    TypeError
        If ``tables`` is not a :class:`LinearBanditTables`.
    ValueError
        If ``beta`` is not in ``allowed``, ``failure_probability`` is not in (0, 1) or
        ``beta_value`` is not > 0 when ``beta == "tuned"``.
    """
    if not isinstance(tables, LinearBanditTables):
        raise TypeError(f"`tables` must be LinearBanditTables, got {type(tables).__name__}.")
    if beta not in allowed:
        raise ValueError(f"`beta` must be one of {allowed}, got {beta!r}.")
    check_probability("failure_probability", failure_probability)
    if failure_probability >= 1.0:
        raise ValueError(f"`failure_probability` must be in (0, 1), got {failure_probability!r}.")
    if beta == "tuned":
        return check_positive("beta_value", beta_value if beta_value is not None else -1.0)
    return None


def linucb_setting(tables: LinearBanditTables, **extra: Any) -> dict:
    """The ``setting`` a LinUCB run records: the sizes of ``tables`` and ``extra``.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds of the run.
    **extra
        Further entries (the variant's options), added last.

    Returns
    -------
    dict
        ``n_agents``, ``n_arms``, ``dim``, ``horizon``, ``n_trials``, ``reward`` and
        ``shared_users``, then ``extra``.
    """
    spec = tables.spec
    return {
        "n_agents": tables.n_agents,
        "n_arms": tables.n_arms,
        "dim": tables.dim,
        "horizon": tables.horizon,
        "n_trials": tables.n_trials,
        "reward": spec.reward,
        "shared_users": spec.shared_users,
        **extra,
    }


def _non_private(
    tables: LinearBanditTables,
    *,
    pooled: bool,
    order: str,
    regularizer: float,
    beta: str,
    beta_value: float | None,
    failure_probability: float,
    record: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    spec = tables.spec
    n_trials, n_agents, d = tables.n_trials, tables.n_agents, tables.dim
    lead = (n_trials,) if pooled else (n_trials, n_agents)
    a_inv = np.broadcast_to(np.eye(d) / regularizer, lead + (d, d)).copy()
    target = np.zeros(lead + (d,))
    log_det = np.full(lead, d * math.log(regularizer))
    cumulative = np.zeros((n_trials, n_agents))
    curve = np.empty((n_trials, tables.horizon))
    actions = np.zeros((n_trials, n_agents, tables.horizon), dtype=np.int16) if record else None
    rows = np.arange(n_trials)

    def radius(ld: np.ndarray) -> np.ndarray:
        if beta == "tuned":
            return np.full(ld.shape, beta_value)
        return oful_radius(
            ld,
            dim=d,
            regularizer=regularizer,
            bound_theta=spec.bound_theta,
            sub_gaussian=spec.sub_gaussian,
            failure_probability=failure_probability,
        )

    def choose(inv: np.ndarray, tgt: np.ndarray, ld: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        theta = np.matmul(inv, tgt[..., None])[..., 0]
        ax = np.matmul(ctx, inv)  # rows (A x)ᵀ, A symmetric
        width = np.sqrt(np.maximum(np.einsum("...kd,...kd->...k", ax, ctx), 0.0))
        ucb = np.einsum("...kd,...d->...k", ctx, theta) + radius(ld)[..., None] * width
        return np.argmax(ucb, axis=-1)

    for t, contexts, rewards, means in iterate_rounds(tables):
        if pooled and order == "sequential":
            arm = np.empty((n_trials, n_agents), dtype=np.int64)
            for i in range(n_agents):
                arm[:, i] = choose(a_inv, target, log_det, contexts[:, i])
                x = contexts[rows, i, arm[:, i]]
                log_det += np.log1p(sherman_morrison_update(a_inv, x))
                target += rewards[rows, i, arm[:, i]][:, None] * x
        elif pooled:
            arm = choose(a_inv[:, None], target[:, None], log_det[:, None], contexts)
            for i in range(n_agents):
                x = contexts[rows, i, arm[:, i]]
                log_det += np.log1p(sherman_morrison_update(a_inv, x))
                target += rewards[rows, i, arm[:, i]][:, None] * x
        else:
            arm = choose(a_inv, target, log_det, contexts)
            x = np.take_along_axis(contexts, arm[..., None, None], axis=2)[:, :, 0]
            log_det += np.log1p(sherman_morrison_update(a_inv, x))
            target += np.take_along_axis(rewards, arm[..., None], axis=2) * x
        chosen = np.take_along_axis(means, arm[..., None], axis=2)[..., 0]
        cumulative += means.max(axis=-1) - chosen
        curve[:, t] = cumulative.mean(axis=1)
        if record:
            actions[:, :, t] = arm
    return curve, cumulative, actions


def _run_non_private(
    tables: LinearBanditTables,
    *,
    pooled: bool,
    order: str,
    regularizer: float,
    beta: str,
    beta_value: float | None,
    failure_probability: float,
    record: bool,
    seed: int | np.random.SeedSequence,
) -> LinUCBRun:
    """Check the options of :func:`run_linucb` / :func:`run_linucb_pooled` and run it."""
    beta_value = check_linucb_options(
        tables, beta, beta_value, failure_probability, ("oful", "tuned")
    )
    if order not in UPDATE_ORDERS:
        raise ValueError(f"`order` must be one of {UPDATE_ORDERS}, got {order!r}.")
    regularizer = check_positive("regularizer", regularizer)
    curve, final, actions = _non_private(
        tables,
        pooled=pooled,
        order=order,
        regularizer=regularizer,
        beta=beta,
        beta_value=beta_value,
        failure_probability=failure_probability,
        record=record,
    )
    return LinUCBRun(
        algorithm="linucb-pooled" if pooled else "linucb",
        setting=linucb_setting(
            tables,
            regularizer=regularizer,
            beta=beta,
            beta_value=beta_value,
            failure_probability=failure_probability,
            **({"order": order} if pooled else {}),
        ),
        regret_curve=curve,
        final_regret=final,
        actions=actions,
        accountant=None,
        calibration=None,
        seed_entropy=int(as_seed_sequence(seed).entropy),
    )


def run_linucb(
    tables: LinearBanditTables,
    *,
    regularizer: float = 1.0,
    beta: str = "oful",
    beta_value: float | None = None,
    failure_probability: float = 0.1,
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
) -> LinUCBRun:
    """Non-private OFUL/LinUCB run separately by every agent on its own data.

    Parameters
    ----------
    tables : LinearBanditTables
        ``n_trials`` worlds of :mod:`fedpriv.algorithms.environments.linear`; ``n_agents = 1`` is
        single-agent OFUL.
    regularizer : float
        ``λ`` > 0 (``V_0 = λ I``).
    beta : {"oful", "tuned"}
        :func:`oful_radius` or the constant ``beta_value``.
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    failure_probability : float
        α in (0, 1).
    record : bool
        Keep the actions.
    seed : int or SeedSequence
        Root seed (only recorded: the algorithm draws nothing; ties go to the lowest
        action index).

    Returns
    -------
    LinUCBRun

    Raises
    ------
    TypeError
        If ``tables`` is not :class:`~fedpriv.algorithms.environments.linear.LinearBanditTables`.
    ValueError
        On a parameter out of range (named in the message).
    """
    return _run_non_private(
        tables,
        pooled=False,
        order="round",
        regularizer=regularizer,
        beta=beta,
        beta_value=beta_value,
        failure_probability=failure_probability,
        record=record,
        seed=seed,
    )


def run_linucb_pooled(
    tables: LinearBanditTables,
    *,
    order: str = "round",
    regularizer: float = 1.0,
    beta: str = "oful",
    beta_value: float | None = None,
    failure_probability: float = 0.1,
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
) -> LinUCBRun:
    """One non-private OFUL learner per trial that sees every agent's data.

    Parameters
    ----------
    tables : LinearBanditTables
        ``n_trials`` worlds of :mod:`fedpriv.algorithms.environments.linear`.
    order : {"round", "sequential"}
        Order of the M updates within a round (module docstring).
    regularizer : float
        ``λ`` > 0 (``V_0 = λ I``).
    beta : {"oful", "tuned"}
        :func:`oful_radius` or the constant ``beta_value``.
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    failure_probability : float
        α in (0, 1).
    record : bool
        Keep the actions.
    seed : int or SeedSequence
        Root seed (only recorded: the algorithm draws nothing).

    Returns
    -------
    LinUCBRun
        ``final_regret`` is per agent (the actions taken for agent ``i``).

    Raises
    ------
    ValueError
        On an unknown ``order`` or as :func:`run_linucb`.
    """
    return _run_non_private(
        tables,
        pooled=True,
        order=order,
        regularizer=regularizer,
        beta=beta,
        beta_value=beta_value,
        failure_probability=failure_probability,
        record=record,
        seed=seed,
    )
