"""Centralized FedUCB (Dubey & Pentland, NeurIPS 2020, Alg. 1 + Alg. 2), vectorized.

M agents play the federated linear bandit of :mod:`fedpriv.algorithms.environments.linear`. Each
agent acts optimistically (OFUL) on ``V = S + U`` and ``ũ = s + ū``, where ``(S, s)``
is the last synchronised (noisy) statistic and ``(U, ū)`` its own raw data since the
last sync. A sync sends every agent's new Gram increment ``Q`` to its Privatizer
(:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`); the controller sums the releases
into ``S = Σ_i Û_i``, ``s = Σ_i û_i`` and broadcasts them.

Variants (the ``algorithm`` name of :class:`FedUCBRun`)
------------------------------------------------------
``feducb``            adaptive: a sync happens when some agent's log-det test fires
                      (Alg. 1 line 12, read as below).
``feducb-fixed``      sync every ``sync_every`` rounds regardless of the data (Zhou &
                      Chowdhury's Private-FedLinUCB schedule), same Privatizer with
                      ``m = 1 + ⌈log2 ⌊T/B⌋⌉``: the schedule is data-independent, so
                      the Privatizer's releases are the only data-dependent messages
                      and no raw channel is charged; each leaf is charged for the
                      ``B`` pairs one change can move through the agent's own actions
                      between syncs (:mod:`fedpriv.algorithms.feducb.adaptivity`).
``feducb-nonprivate`` H = λI and no noise (the paper's dashed curves, Fig. 1B); the
                      raw statistics are charged as ``events.NonPrivate``.

Readings of Alg. 1's defects (lines 10–24; fedpriv's reading)
---------------------------------------------------------------------------
1. The resets of line 24 (``Δt ← 0, U ← 0, ū ← 0``) belong to the **sync branch**
   and apply to every agent; ``U ← 0`` as in [P] (the regulariser lives in S).
2. ``Δt`` counts the rounds since the last sync *including* the current one (so it
   is >= 1 at the test); the test is ``Δt · (log det W − log det S) >= D``.
3. Triggers are collected over the round and **one global sync** happens at the end
   of the round (then the flag is cleared): agents never act on a mid-round S.
4. ``Q`` is the running ``Σ v vᵀ``, ``v = [x; y]``, since the last sync (one leaf).
5. The Privatizer releases each agent's noisy *all-time* statistic (prefix sum of its
   leaves) and ``S = Σ_i Û_i``; the initial ``S = M ρ_min I``.
6. ``W = V_{t+1} + M (ρ_max − ρ_min) I`` with ``V_{t+1} = V_t + x xᵀ`` (line 12).
7. β follows Prop. 2 with the current ``log det V`` ([H] or [P] privacy terms; the
   printed ``d log det V`` is corrected unless ``literal_d_factor``), or a constant.
8. The PSD shift ``2ΛI`` is applied by the Privatizer to every Û.

Accounting: the Privatizer charges one ``SymmetricMatrixGaussianTree`` per (trial,
agent) when it opens (worst case per record under
``REPLACE_ONE_CONTEXT_REWARD``, or ``USER_AT_ALL_AGENTS`` with shared users, where the
M trees compose). The adaptive trigger's sync requests are a raw-data release to the
controller and are charged as ``events.NonPrivate`` (channel ``"sync-timing"``), so
the end-to-end ε is ∞ and :meth:`FedUCBRun.accountant_epsilon` reports the
Privatizer channel (Prop. 3's scope) separately. An agent's use of its own raw data
between syncs (Alg. 1 line 4, Remark 3: one change can move every later pair of its
leaf) is charged with the fixed schedule, whose batches hold ``B`` pairs
(``records_per_leaf = B``; :meth:`FedUCBRun.mechanism_epsilon` keeps the one-pair
price); with the adaptive schedule a batch is unbounded and the sync times are raw
anyway, so its Privatizer channel stays priced per pair (mechanism only).

Finding: with the paper's calibration the ``2MΛ I`` shift inside the test dominates
the data, so the sync times depend on the data only through a term of relative
size ``~ L²/(MΛ)`` (see :mod:`fedpriv.algorithms.feducb.sync`); the channel is real but
weak at ε ≈ 1 and strong when Λ is small (large ε) or without noise.

Speed: ``V^{-1}`` and ``W^{-1}`` are kept by Sherman–Morrison rank-one updates and
their log-determinants by the matrix determinant lemma; both are rebuilt from a
Cholesky factorisation at every sync (no explicit inverse per step). The hot loop
allocates no per-round batch of matrices (one scratch array for the outer products),
and a sync of every trial uses slices rather than gathers. Issue 4's benchmark:
``benchmarks/bench_feducb.py``.

Length: the three public variants (adaptive, fixed, non-private) share one validated
run, and each states its full numpydoc.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.feducb.adaptivity import leaf_reach
from fedpriv.algorithms.feducb.loop import CentralizedLoop, configure_loop
from fedpriv.algorithms.feducb.run import FedUCBRun, FedUCBTranscript, open_accounting
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, stream_rngs

__all__ = [
    "SYNC_TIMING_REASON",
    "FedUCBRun",
    "FedUCBTranscript",
    "private_run_in_world",
    "run_feducb",
    "run_feducb_fixed",
    "run_feducb_nonprivate",
]

#: Reason of the NonPrivate charge of the adaptive algorithm's sync requests.
SYNC_TIMING_REASON = (
    "sync requests: Alg. 1 line 12's log-det test on each agent's raw local Gram "
    "matrix decides when the controller synchronises (Alg. 1 lines 12-16)"
)


def _run(
    tables: LinearBanditTables,
    *,
    private: bool,
    fixed: bool,
    epsilon: float,
    delta: float,
    threshold: float | None,
    sync_every: int | None,
    calibration: str,
    beta: str,
    beta_value: float | None,
    n_syncs: int | None,
    regularizer: float,
    failure_probability: float,
    literal_d_factor: bool,
    on_capacity: str,
    record: bool,
    seed: int | np.random.SeedSequence,
    side: int,
    secure_noise: bool = False,
    until_first_sync: bool = False,
) -> FedUCBRun:
    if not isinstance(tables, LinearBanditTables):
        raise TypeError(f"`tables` must be LinearBanditTables, got {type(tables).__name__}.")
    setup = configure_loop(
        tables,
        private=private,
        fixed=fixed,
        epsilon=epsilon,
        delta=delta,
        threshold=threshold,
        sync_every=sync_every,
        calibration=calibration,
        beta=beta,
        beta_value=beta_value,
        n_syncs=n_syncs,
        regularizer=regularizer,
        failure_probability=failure_probability,
        on_capacity=on_capacity,
        side=side,
        secure=bool(secure_noise) and private,
    )
    spec = tables.spec
    n_trials, n_agents, d = tables.n_trials, tables.n_agents, tables.dim
    root = as_seed_sequence(seed)
    # Fixed schedule: one changed pair moves up to B pairs of its leaf through the
    # agent's own actions between syncs (Alg. 1 lines 4, 8, 10; adaptivity.py)
    reach = (
        leaf_reach(sync_every=setup.sync_every, horizon=tables.horizon) if fixed and private else 1
    )
    accountant, privatizer, mechanism = open_accounting(
        shared_users=spec.shared_users,
        n_trials=n_trials,
        n_agents=n_agents,
        dim=d,
        capacity=setup.capacity,
        noise_stddev=setup.noise_stddev,
        shift=setup.shift,
        frobenius_sensitivity=math.sqrt(2.0) * (spec.bound_x**2 + spec.bound_y**2),
        sync_timing_reason=None if fixed else SYNC_TIMING_REASON,
        rng=stream_rngs(
            root, n_trials=n_trials, n_agents=n_agents, side=setup.side, stream=Stream.NOISE
        ),
        secure_noise=bool(secure_noise) and private,
        records_per_leaf=reach,
    )
    loop = CentralizedLoop(
        setup,
        n_trials=n_trials,
        n_agents=n_agents,
        dim=d,
        horizon=tables.horizon,
        sub_gaussian=spec.sub_gaussian,
        literal_d_factor=literal_d_factor,
        record=record,
    )
    loop.run(tables, privatizer, until_first_sync=until_first_sync)
    setting: dict[str, Any] = {
        "n_agents": n_agents,
        "n_arms": tables.n_arms,
        "dim": d,
        "horizon": tables.horizon,
        "n_trials": n_trials,
        "reward": spec.reward,
        "shared_users": spec.shared_users,
        "beta": beta,
        "beta_value": setup.beta_value,
        "failure_probability": failure_probability,
        "sub_gaussian": spec.sub_gaussian,
        "literal_d_factor": literal_d_factor,
    }
    if private:
        setting.update({"epsilon": epsilon, "delta": delta, "calibration": calibration})
        if secure_noise:  # only when set: default settings (and reports) unchanged
            setting["secure_noise"] = True
    else:
        setting["regularizer"] = setup.regularizer
    if loop.rounds_played < tables.horizon:  # stopped at the first syncs (worlds.py)
        setting["rounds_played"] = loop.rounds_played
        loop.regret_curve[:, loop.rounds_played :] = np.nan
    sync_rounds = loop.sync_rounds
    return FedUCBRun(
        algorithm=setup.algorithm,
        setting=setting,
        regret_curve=loop.regret_curve,
        final_regret=loop.cumulative,
        sync_rounds=sync_rounds,
        n_syncs=sync_rounds.sum(axis=1),
        threshold=float(setup.threshold),
        sync_every=setup.sync_every if fixed else None,
        tree_depth=privatizer.depth if private else 0,
        capacity=setup.capacity if private else 0,
        calibration=setup.calibration,
        accountant=accountant,
        transcript=loop.transcript() if record else None,
        seed_entropy=int(root.entropy),
        records_per_leaf=reach,
        mechanism_accountant=mechanism,
    )


def run_feducb(
    tables: LinearBanditTables,
    *,
    epsilon: float,
    delta: float,
    threshold: float | None = None,
    mode: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    n_syncs: int | None = None,
    failure_probability: float = 0.1,
    literal_d_factor: bool = False,
    on_capacity: str = "raise",
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
    secure_noise: bool = False,
) -> FedUCBRun:
    """Private centralized FedUCB (Alg. 1 + Alg. 2) on every trial of ``tables``.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds (contexts, rewards, θ*) of ``n_trials`` trials.
    epsilon, delta : float
        The claim; the Privatizer's noise is calibrated from it (``mode``).
    threshold : float, optional
        ``D`` >= 0 of the log-det test; None is Theorem 1's value
        (:func:`fedpriv.algorithms.feducb.sync.recommended_threshold`). See
        :func:`~fedpriv.algorithms.feducb.sync.threshold_for_syncs` for a target number of
        syncs; ``0`` syncs every round.
    mode : {"paper", "corrected", "exact"}
        The Privatizer's noise calibration: Alg. 2 line 5 as written, its two errors
        corrected, or the smallest σ the exact accountant allows
        (:mod:`fedpriv.privacy.mechanisms.matrix_tree`).
    beta : {"H", "P", "tuned"}
        Prop. 2's β with the privacy terms of the full text [H] or of the NeurIPS
        text [P], or the constant ``beta_value``.
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    n_syncs : int, optional
        ``n`` fixed a priori: tree depth ``m = 1 + ⌈log2 n⌉`` (and Λ's union bound).
        None uses ``m = 1 + ⌈log2 T⌉`` (Alg. 2 line 2; never exceeds capacity).
    failure_probability : float
        α of Prop. 2 and 4.
    literal_d_factor : bool
        Use the printed ``d log det V`` in β (see
        :func:`~fedpriv.algorithms.feducb.sync.exploration_radius`).
    on_capacity : {"raise", "stop"}
        A sync past the tree's capacity raises
        :class:`~fedpriv.privacy.errors.CapacityExceededError`, or stops that trial's syncs.
    record : bool
        Keep the transcript (:class:`FedUCBTranscript`).
    seed : int or SeedSequence
        Root of the privacy-noise streams ``(trial, 0, agent, Stream.NOISE)`` (an audit's
        second world: :func:`fedpriv.algorithms.feducb.worlds.run_in_world`).
    secure_noise : bool
        Exact integer noise on a grid for the Privatizer (``secure=True`` of
        :class:`~fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer`, same σ_N); charged
        through zCDP (:mod:`fedpriv.privacy.mechanisms.secure_matrix`), so the accountant's ε is
        at least the float Privatizer's.

    Returns
    -------
    FedUCBRun

    Raises
    ------
    ValueError
        On a parameter out of range (named in the message).
    CapacityExceededError
        See ``on_capacity``.
    """
    return private_run_in_world(
        tables,
        side=0,
        fixed=False,
        epsilon=epsilon,
        delta=delta,
        threshold=threshold,
        mode=mode,
        beta=beta,
        beta_value=beta_value,
        n_syncs=n_syncs,
        failure_probability=failure_probability,
        literal_d_factor=literal_d_factor,
        on_capacity=on_capacity,
        record=record,
        seed=seed,
        secure_noise=secure_noise,
    )


def private_run_in_world(
    tables: LinearBanditTables,
    *,
    side: int,
    fixed: bool,
    mode: str,
    sync_every: int | None = None,
    threshold: float | None = None,
    n_syncs: int | None = None,
    on_capacity: str = "raise",
    **options: Any,
) -> FedUCBRun:
    """:func:`run_feducb` or (``fixed``) :func:`run_feducb_fixed` with its noise at ``side``.

    The implementation behind :func:`fedpriv.algorithms.feducb.worlds.run_in_world`; at
    ``side = 0`` it is exactly the public function.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds (contexts, rewards, θ*) of ``n_trials`` trials.
    side : int
        The world whose privacy-noise streams are drawn (0 = D, 1 = D'), >= 0.
    fixed : bool
        The fixed schedule (:func:`run_feducb_fixed`, every ``sync_every`` rounds)
        instead of the adaptive one (:func:`run_feducb`, ``threshold``).
    mode, sync_every, threshold, n_syncs, on_capacity : object
        As in :func:`run_feducb` and :func:`run_feducb_fixed` (``mode`` is the calibration).
    **options
        The other keyword arguments of :func:`run_feducb` (``epsilon``, ``delta``, ...).

    Returns
    -------
    FedUCBRun
    """
    return _run(
        tables,
        private=True,
        fixed=fixed,
        threshold=threshold,
        sync_every=sync_every,
        calibration=mode,
        n_syncs=n_syncs,
        regularizer=1.0,
        on_capacity=on_capacity,
        side=side,
        **options,
    )


def run_feducb_fixed(
    tables: LinearBanditTables,
    *,
    epsilon: float,
    delta: float,
    sync_every: int,
    mode: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    failure_probability: float = 0.1,
    literal_d_factor: bool = False,
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
    secure_noise: bool = False,
) -> FedUCBRun:
    """FedUCB with a data-independent schedule: sync at the end of rounds ``B-1, 2B-1, ...``.

    Zhou & Chowdhury's (ICLR 2024) fix of the sync-timing channel: the sync times
    do not depend on any data, so the only data-dependent messages are the
    Privatizer's, whose tree has ``n = ⌊T/B⌋`` leaves (``m = 1 + ⌈log2 n⌉``).

    Adaptivity is charged: between syncs an agent acts on its own raw data (Alg. 1
    line 4, ``V ← S + U``; Remark 3), so one changed ``(x, y)`` can change that
    agent's later actions up to the sync and its leaf differs in up to ``B`` pairs, not
    one. The Privatizer is charged at ``B × √2(L² + B²)`` per leaf
    (:mod:`fedpriv.algorithms.feducb.adaptivity`; ``records_per_leaf``), and
    :meth:`FedUCBRun.mechanism_epsilon` gives the one-pair (oblivious stream) price.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds (contexts, rewards, θ*) of ``n_trials`` trials.
    epsilon, delta : float
        The claim (ε in nats > 0, δ in (0, 1)); the Privatizer's noise is calibrated
        from it (``mode``).
    sync_every : int
        ``B`` >= 1: every agent syncs at the end of rounds ``B-1, 2B-1, ...``.
    mode : {"paper", "corrected", "exact"}
        The Privatizer's noise calibration: Alg. 2 line 5 as written, its two errors
        corrected, or the smallest σ the exact accountant allows
        (:mod:`fedpriv.privacy.mechanisms.matrix_tree`).
    beta : {"H", "P", "tuned"}
        Prop. 2's β with the privacy terms of the full text [H] or of the NeurIPS
        text [P], or the constant ``beta_value`` (as in :func:`run_feducb`).
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    failure_probability : float
        α of Prop. 2 and 4, in (0, 1).
    literal_d_factor : bool
        Use the printed ``d log det V`` in β (as in :func:`run_feducb`).
    record : bool
        Keep the transcript (:class:`FedUCBTranscript`).
    seed : int or SeedSequence
        Root of the privacy-noise streams ``(trial, 0, agent, Stream.NOISE)`` (an audit's
        second world: :func:`fedpriv.algorithms.feducb.worlds.run_in_world`).
    secure_noise : bool
        Exact integer noise on a grid for the Privatizer (as in :func:`run_feducb`).

    Returns
    -------
    FedUCBRun
        Regret, syncs and the accountant charged with every Privatizer release.

    Raises
    ------
    ValueError
        On a parameter out of range (named in the message).
    """
    return private_run_in_world(
        tables,
        side=0,
        fixed=True,
        epsilon=epsilon,
        delta=delta,
        sync_every=sync_every,
        mode=mode,
        beta=beta,
        beta_value=beta_value,
        failure_probability=failure_probability,
        literal_d_factor=literal_d_factor,
        record=record,
        seed=seed,
        secure_noise=secure_noise,
    )


def run_feducb_nonprivate(
    tables: LinearBanditTables,
    *,
    threshold: float | None = None,
    sync_every: int | None = None,
    regularizer: float = 1.0,
    beta: str = "P",
    beta_value: float | None = None,
    failure_probability: float = 0.1,
    literal_d_factor: bool = False,
    record: bool = False,
    seed: int | np.random.SeedSequence = 0,
) -> FedUCBRun:
    """Non-private FedUCB: ``H = λ I`` (``S`` starts at ``λ I``), raw statistics, no noise.

    The log-det test has no noise shift (``ρ_max = ρ_min = λ/M``); β is Prop. 2's
    with ``M ρ_min = λ`` and privacy term ``S sqrt(λ)`` ([P]) or ``M S sqrt(λ/M)``
    ([H]), i.e. OFUL's radius. With ``sync_every`` the schedule is fixed instead.
    The raw releases are charged as ``events.NonPrivate``.

    Parameters
    ----------
    tables : LinearBanditTables
        The worlds (contexts, rewards, θ*) of ``n_trials`` trials.
    threshold : float, optional
        ``D`` >= 0 of the log-det test (as in :func:`run_feducb`); None is Theorem 1's
        value.
    sync_every : int, optional
        ``B`` >= 1 for the fixed schedule of :func:`run_feducb_fixed`; at most one of
        ``threshold`` and ``sync_every``.
    regularizer : float
        λ > 0.
    beta : {"H", "P", "tuned"}
        Prop. 2's β with the privacy terms of the full text [H] or of the NeurIPS
        text [P], or the constant ``beta_value`` (as in :func:`run_feducb`).
    beta_value : float, optional
        β when ``beta == "tuned"``, > 0.
    failure_probability : float
        α of Prop. 2 and 4, in (0, 1).
    literal_d_factor : bool
        Use the printed ``d log det V`` in β (as in :func:`run_feducb`).
    record : bool
        Keep the transcript (:class:`FedUCBTranscript`).
    seed : int or SeedSequence
        Root of the run's streams (no noise is drawn).

    Returns
    -------
    FedUCBRun
        Regret and syncs; the accountant holds ``NonPrivate`` charges (ε = ∞).

    Raises
    ------
    ValueError
        If both ``threshold`` and ``sync_every`` are given, or a parameter is out of
        range (named in the message).
    """
    if sync_every is not None and threshold is not None:
        raise ValueError("give at most one of `threshold` and `sync_every`.")
    return _run(
        tables,
        private=False,
        fixed=sync_every is not None,
        epsilon=math.inf,
        delta=0.0,
        threshold=threshold,
        sync_every=sync_every,
        calibration="paper",
        beta=beta,
        beta_value=beta_value,
        n_syncs=None,
        regularizer=regularizer,
        failure_probability=failure_probability,
        literal_d_factor=literal_d_factor,
        on_capacity="raise",
        record=record,
        seed=seed,
        side=0,
    )
