"""Centralized FedUCB up to its first synchronisation: the run truncated where it stops being raw.

Before the first sync of a trial, every agent of centralized FedUCB (Alg. 1) acts on
the data-independent ``S₀ = M ρ_min I`` and its own raw statistics ``(U, ū)``: no
Privatizer release has happened, so no noise has been drawn. The first sync round is
therefore a deterministic function of the data, and — the algorithm being causal — of
the rounds up to it only. :func:`first_sync_rounds` plays exactly the rounds of
:class:`fedpriv.algorithms.feducb.loop.CentralizedLoop` (the same ``play`` step as
:func:`fedpriv.algorithms.feducb.centralized.run_feducb`, so the same floating-point
values) and stops once every trial has requested its first sync, or at the end of the
simulated rounds. The calibration (``σ_N``, ``ρ_min``, ``ρ_max``, β's privacy term)
and Theorem 1's default threshold are those of a run of ``horizon`` rounds, so a
horizon too long to run (Fig. 1A: ``T = 10⁷``) is simulated only up to the round the
first sync time depends on.

What this releases: the controller's first observation, the round of the first sync
request, which :func:`~fedpriv.algorithms.feducb.centralized.run_feducb`'s accountant
charges as ``events.NonPrivate`` (``SYNC_TIMING_REASON``; Alg. 1 line 12).
No Privatizer is opened and no noise is drawn.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fedpriv.algorithms.environments.linear import CHUNK_ROUNDS, LinearBanditTables
from fedpriv.algorithms.feducb.loop import CentralizedLoop, configure_loop
from fedpriv.algorithms.feducb.privatizer import PrivatizerCalibration
from fedpriv.privacy.checks import check_int_at_least

__all__ = ["FirstSync", "first_sync_rounds"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FirstSync:
    """First sync requests of a batch of trials (see :func:`first_sync_rounds`).

    Attributes
    ----------
    rounds : ndarray of int64, shape (n_trials,)
        0-based round at whose end the first sync happens; ``tables.horizon`` (the
        number of simulated rounds) when no agent requests one in them.
    statistic : ndarray of float64, shape (n_trials, n_agents, rounds_played)
        Alg. 1 line 12's test value ``Δt (log det W − log det S)`` of every agent at
        every played round up to the trial's first sync (NaN after it).
    threshold : float
        The ``D`` of the run.
    calibration : PrivatizerCalibration
        The calibration of a run of ``horizon`` rounds.
    """

    rounds: np.ndarray
    statistic: np.ndarray
    threshold: float
    calibration: PrivatizerCalibration


def first_sync_rounds(
    tables: LinearBanditTables,
    *,
    epsilon: float,
    delta: float,
    horizon: int | None = None,
    threshold: float | None = None,
    mode: str = "paper",
    beta: str = "H",
    beta_value: float | None = None,
    n_syncs: int | None = None,
    failure_probability: float = 0.1,
    literal_d_factor: bool = False,
) -> FirstSync:
    """Private centralized FedUCB on ``tables``, stopped at each trial's first sync.

    Parameters
    ----------
    tables : LinearBanditTables
        The first rounds of the worlds; ``tables.horizon`` rounds at most are played.
    epsilon, delta, threshold, mode, beta, beta_value, n_syncs, \
failure_probability, literal_d_factor
        As in :func:`fedpriv.algorithms.feducb.centralized.run_feducb`.
    horizon : int, optional
        ``T`` of the run (>= ``tables.horizon``) for the calibration and the default
        threshold; default ``tables.horizon``.

    Returns
    -------
    FirstSync
        ``rounds[j]`` equals the first entry of ``run_feducb(...).transcript.sync_times[j]``
        of the full run with the same options on any tables extending these (a test
        checks it), or ``tables.horizon`` if that sync comes later.

    Raises
    ------
    ValueError
        If ``horizon < tables.horizon`` or another option is out of range (named).
    TypeError
        If ``tables`` is not :class:`LinearBanditTables`.
    """
    if not isinstance(tables, LinearBanditTables):
        raise TypeError(f"`tables` must be LinearBanditTables, got {type(tables).__name__}.")
    rounds = tables.horizon
    horizon = rounds if horizon is None else check_int_at_least("horizon", horizon, rounds)
    setup = configure_loop(
        tables,
        private=True,
        fixed=False,
        epsilon=epsilon,
        delta=delta,
        threshold=threshold,
        sync_every=None,
        calibration=mode,
        beta=beta,
        beta_value=beta_value,
        n_syncs=n_syncs,
        regularizer=1.0,
        failure_probability=failure_probability,
        on_capacity="raise",
        side=0,
        horizon=horizon,
    )
    n_trials, n_agents = tables.n_trials, tables.n_agents
    loop = CentralizedLoop(
        setup,
        n_trials=n_trials,
        n_agents=n_agents,
        dim=tables.dim,
        horizon=rounds,
        sub_gaussian=tables.spec.sub_gaussian,
        literal_d_factor=literal_d_factor,
        record=False,
    )
    first = np.full(n_trials, rounds, dtype=np.int64)
    statistic = np.full((n_trials, n_agents, rounds), np.nan)
    t = -1
    while t + 1 < rounds and (first == rounds).any():
        start = t + 1
        stop = min(rounds, start + CHUNK_ROUNDS)
        # round-major contiguous copies, as CentralizedLoop.run makes them
        block = tables.block(start, stop)
        contexts, rewards, means = (
            np.ascontiguousarray(np.moveaxis(a, 2, 0))
            for a in (block.contexts, block.rewards, block.means)
        )
        for t in range(start, stop):
            waiting = first == rounds
            sync = loop.play(
                t, t - start, contexts[t - start], rewards[t - start], means[t - start]
            )
            # the product play() has just compared with D, for every agent
            value = loop.dt[:, None] * (loop.logdet_w - loop.logdet_s[:, None])
            statistic[waiting, :, t] = value[waiting]
            first[waiting & sync] = t
            if not (first == rounds).any():
                break
    return FirstSync(
        rounds=first,
        statistic=statistic[..., : t + 1],
        threshold=float(setup.threshold),
        calibration=setup.calibration,
    )
