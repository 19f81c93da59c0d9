"""The successive-elimination core shared by Li & Song's algorithms, simulated in bulk.

Every algorithm of Li & Song ("Privacy-Preserving Communication-Efficient Federated
Multi-Armed Bandits", IEEE JSAC 2022) runs the same epochs: each agent pulls every
active arm ``n_r = S(r) - S(r-1)`` times, perturbs each arm's epoch-only mean with
``Lap(1/(D ε n_r))`` (``D = M``, or ``N = ⌈pM⌉`` under partial participation), folds it
into its running average ȳ (Eq. 6), the ȳ's are averaged (by the server, by every agent
after GIS, or by sinks and server) and arms with ``ȳ_max - ȳ_k >= 2 C(r)`` are
eliminated. This module holds the schedule formulas and the engine; the structures
(who averages, delays, costs, transcripts) are in :mod:`fedpriv.algorithms.li_song.mab`.

Bulk simulation
---------------
Within an epoch every agent pulls every active arm exactly ``n_r`` times in an order
that does not depend on the epoch's rewards, and nothing is released until the epoch
ends. So the engine reads the ``n_r`` rewards of each (agent, arm) at once from the
counter-based reward table (pull indices ``S(r-1) .. S(r) - 1``) and sums them. The
released statistics (x̂, ŷ, ȳ, aggregates, active sets) and the pull counts, hence the
pseudo-regret, are exactly those of a round-by-round run that pulls the arms
round-robin (arm order ascending). Only regret *curves* inside an exploration epoch are
linear interpolations between phase ends (exact at every multiple of ``|I|`` slots).

Resolved ambiguities (paper passage in brackets)
----------------------------------------------------
* ``log`` is natural in ``S(r)`` and ``C(r)`` [Alg. 1 lines 4–5; base unstated]. ``S(r)`` is rounded up, and kept
  strictly increasing: ``S(r) = max(⌈S_real(r)⌉, S(r-1) + 1)`` [fedpriv, Alg. 1 line 4]; ``C(r)``
  uses the realised integer ``S(r)``.
* A horizon hit inside an exploration epoch truncates it (round-robin pulls) and nothing
  is released for it: a release of fewer than ``n_r`` rewards would have sensitivity
  ``1/n_actual`` [fedpriv; the proof of Theorem 1 assumes a full epoch].
* Exploitation (DDP/HDP ``t_delay`` slots) pulls, per agent, the arm of ``I^{(r-1)}``
  with the largest *raw* cumulative exploration mean (literal reading of "local
  empirical best arm", Alg. 2 line 3, Alg. 5 line 11), lowest index on ties; its rewards are never folded into
  x̂ [fedpriv], so they are never read and consume no table entries (the table is
  indexed by exploration pulls). The action is a raw-data output outside Definition 1:
  it is charged as ``events.NonPrivate`` under ``channel="action"``.
* If rounds run out with ``|I| > 1`` (round-limited variants), every agent commits to the
  arm of ``I`` with the largest last aggregate [fedpriv].
* Regret is pseudo-regret with the *global* gaps ``max_k μ_k - μ_k``, summed over agents
  (Eq. 1 with μ_1 the global best; during local exploitation a globally worse arm costs
  its global gap, as in Corollary 3's proof). ``regret_eq1`` also gives Eq. (1) with
  each agent's own means ``μ_1 - μ_{i,a}`` (can be negative, heterogeneous case).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from fedpriv.privacy.ledger.accountant import Accountant

__all__ = [
    "SCHEDULES",
    "LiSongRun",
    "StructurePlan",
    "confidence_width",
    "epoch_gap",
    "epoch_sums",
    "sample_target",
]

SCHEDULES = ("halving", "paper", "corrected")
_CHUNK_ELEMENTS = 1 << 21


def epoch_gap(
    r: int, *, schedule: str, gap: float | None = None, n_rounds: int | None = None
) -> float:
    """Target gap ``Δ̃_r`` of epoch ``r >= 1``.

    ``"halving"``: ``2^{-r}`` (Alg. 1 line 3); ``"paper"``: ``Δ^{r/R}`` (§IV-B);
    ``"corrected"``: ``(Δ/2)^{r/R}``, which makes ``Δ̃_R <= Δ/2`` so that an arm with gap
    ``Δ`` is eliminated within ``R`` rounds (fedpriv's fix: Theorem 2's proof, Step 2, needs ``Δ̃_R <= Δ/2``).

    Parameters
    ----------
    r : int
        Epoch, >= 1.
    schedule : {"halving", "paper", "corrected"}
        The gap schedule.
    gap : float, optional
        Δ in (0, 1), required unless ``"halving"``.
    n_rounds : int, optional
        R >= 1, required unless ``"halving"``.

    Returns
    -------
    float
        Δ̃_r in (0, 1).

    Raises
    ------
    ValueError
        If ``gap`` or ``n_rounds`` is missing for ``"paper"``/``"corrected"``.

    Examples
    --------
    >>> epoch_gap(3, schedule="halving"), epoch_gap(2, schedule="paper", gap=0.01, n_rounds=2)
    (0.125, 0.01)
    """
    if schedule == "halving":
        return 2.0**-r
    if gap is None or n_rounds is None:
        raise ValueError(f"schedule {schedule!r} needs `gap` and `n_rounds`.")
    base = gap if schedule == "paper" else gap / 2.0
    return base ** (r / n_rounds)


def _logs(n_active: np.ndarray, r: int, n_arms: int, horizon: int) -> tuple[np.ndarray, float]:
    l1 = np.log(8.0 * n_active * r * r * horizon)
    l2 = math.log(8.0 * n_arms * r * r * horizon)
    return l1, l2


def sample_target(
    n_active: Any,
    r: int,
    *,
    n_arms: int,
    horizon: int,
    divisor: int,
    epsilon: float,
    target_gap: float,
) -> np.ndarray:
    """Real-valued ``S(r)`` of Alg. 1 line 4 (``S^p(r)`` with ``divisor = N``).

    ``max{8 ln(8|I|r²T) / (D Δ̃²), 8 r sqrt(2 ln(8Kr²T)) / (D^1.5 ε Δ̃)}``; the second
    term is 0 at ``ε = inf``.

    Parameters
    ----------
    n_active : array_like of float
        |I|, the active arms of each row.
    r : int
        Epoch, >= 1.
    n_arms : int
        K.
    horizon : int
        T.
    divisor : int
        D: M (all agents upload) or N (partial participation).
    epsilon : float
        ε > 0 (``inf``: no privacy term).
    target_gap : float
        Δ̃_r.

    Returns
    -------
    ndarray of float64, shape of ``n_active``

    Raises
    ------
    ValueError
        If ``epsilon`` is so small that ``D^1.5 ε Δ̃`` underflows to 0.
    """
    n_active = np.asarray(n_active, dtype=np.float64)
    l1, l2 = _logs(n_active, r, n_arms, horizon)
    hoeffding = 8.0 * l1 / (divisor * target_gap**2)
    if math.isinf(epsilon):
        return np.maximum(hoeffding, 0.0)
    denominator = divisor**1.5 * epsilon * target_gap
    if not denominator > 0.0:  # ε so small that D^1.5 ε Δ̃ underflows to 0
        raise ValueError(
            f"`epsilon` = {epsilon!r} is too small: the privacy term of S(r) "
            f"(8 r sqrt(2 ln(8Kr²T)) / (D^1.5 ε Δ̃), Δ̃ = {target_gap!r}) is not a "
            "finite number."
        )
    privacy = 8.0 * r * np.sqrt(2.0 * l2) / denominator
    return np.maximum(hoeffding, privacy)


def confidence_width(
    n_active: Any,
    r: int,
    *,
    n_arms: int,
    horizon: int,
    divisor: int,
    epsilon: float,
    n_samples: Any,
) -> np.ndarray:
    """``C(r) = sqrt(ln(8|I|r²T) / (2 D S)) + r sqrt(8 ln(8Kr²T)) / (D^1.5 ε S)`` (line 5).

    Parameters
    ----------
    n_active : array_like of float
        |I|, the active arms of each row.
    r : int
        Epoch, >= 1.
    n_arms : int
        K.
    horizon : int
        T.
    divisor : int
        D: M or N.
    epsilon : float
        ε > 0 (``inf``: no privacy term).
    n_samples : array_like of float
        S, the cumulative samples per arm.

    Returns
    -------
    ndarray of float64, broadcast shape of ``n_active`` and ``n_samples``
    """
    n_active = np.asarray(n_active, dtype=np.float64)
    n_samples = np.asarray(n_samples, dtype=np.float64)
    l1, l2 = _logs(n_active, r, n_arms, horizon)
    c = np.sqrt(l1 / (2.0 * divisor * n_samples))
    if math.isinf(epsilon):
        return c
    return c + r * math.sqrt(8.0 * l2) / (divisor**1.5 * epsilon * n_samples)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LiSongRun:
    """Result of a batch of Li & Song runs.

    Attributes
    ----------
    algorithm : str
        CLI name (``"cdp-mab"``, ``"ce-cdp-mab"``, ``"ddp-mab"``, ``"hdp-mab"``, ``"single-mab"``).
    setting : dict
        Parameters of the run.
    counts : ndarray of int64, shape (n_trials, n_agents, n_arms)
        Pulls of each arm by each agent over the horizon.
    total_regret : ndarray of float64, shape (n_trials,)
        Final pseudo-regret summed over agents (global gaps); ``final_regret.sum(axis=1)``
        up to rounding.
    final_regret : ndarray of float64, shape (n_trials, n_agents)
        Each agent's final pseudo-regret (global gaps): ``counts @ gaps``.
    regret_eq1 : ndarray of float64, shape (n_trials,)
        Eq. (1) with each agent's own means.
    exploitation_regret : ndarray of float64, shape (n_trials,)
        The part of ``total_regret`` incurred by local exploitation during ``t_delay`` slots
        (``R_{D(2)}`` of App. D; 0 for CDP-MAB).
    rounds : ndarray of int64, shape (n_trials,)
        Completed communication rounds (epochs with a release); Single-MAB: the most
        epochs of any agent.
    communication_cost : ndarray of float64, shape (n_trials,)
        ``C(T)`` of Eq. (2) under the run's cost model.
    active : ndarray of bool, shape (n_trials, n_arms)
        Final active set (Single-MAB: arms active at any agent).
    best_arm_eliminated : ndarray of bool, shape (n_trials,)
    committed_arm : ndarray of int64, shape (n_trials, n_agents)
        Arm pulled in the commit phase (-1 if the horizon ended first).
    accountant : Accountant
        Every release (``channel="message"``) and the raw action channel.
    epsilon, claimed_epsilon : float
        Input ε and the paper's claimed per-message ε (``M ε`` or ``N ε``).
    messages, actions : pandas.DataFrame or None
        Transcripts (``record=True``, or one of them with ``record="messages"`` or
        ``"actions"``): one row per message (trial, epoch, time, kind,
        sender, receiver, origin, arms, content; -1 is the server) and one row per
        action segment (trial, agent, start, stop, kind, arms; round-robin over ``arms``
        for exploration), see :meth:`actions_array`.
    checkpoint_times, checkpoint_regret : ndarray, shape (n_checkpoints, n_trials, n_units)
        Cumulative regret at phase ends, for :meth:`total_regret_at`.
    seed_entropy : int
    """

    algorithm: str
    setting: dict[str, Any]
    counts: np.ndarray
    total_regret: np.ndarray
    final_regret: np.ndarray
    regret_eq1: np.ndarray
    exploitation_regret: np.ndarray
    rounds: np.ndarray
    communication_cost: np.ndarray
    active: np.ndarray
    best_arm_eliminated: np.ndarray
    committed_arm: np.ndarray
    accountant: Accountant
    epsilon: float
    claimed_epsilon: float
    messages: pd.DataFrame | None
    actions: pd.DataFrame | None
    checkpoint_times: np.ndarray
    checkpoint_regret: np.ndarray
    seed_entropy: int

    def total_regret_at(self, times: Any) -> np.ndarray:
        """``total_regret`` (summed over agents) at ``times`` (slots), (n_trials, len(times)).

        Linear between phase ends (exact for exploitation and commit phases, and at
        every ``|I|``-th slot of an exploration epoch).

        Parameters
        ----------
        times : array_like of float
            Slots, in [0, horizon].

        Returns
        -------
        ndarray of float64, shape (n_trials, len(times))
        """
        times = np.asarray(times, dtype=np.float64)
        n_trials, n_units = self.checkpoint_times.shape[1:]
        out = np.zeros((n_trials, times.size))
        for j in range(n_trials):
            for u in range(n_units):
                out[j] += np.interp(
                    times, self.checkpoint_times[:, j, u], self.checkpoint_regret[:, j, u]
                )
        return out

    def message_epsilon(self) -> tuple[str, float]:
        """``(route, ε)`` of every message of the run, composed (tightest route, δ = 0)."""
        return self.accountant.routes.tightest(0.0, where={"channel": "message"})

    def actions_array(self, trial: int = 0) -> np.ndarray:
        """Arm pulled by each agent in each slot, shape (n_agents, horizon), int16.

        Parameters
        ----------
        trial : int, default 0
            Trial index.

        Returns
        -------
        ndarray of int16, shape (n_agents, horizon)
            -1 where nothing was recorded.

        Raises
        ------
        ValueError
            If the run was not recorded.
        """
        if self.actions is None:
            raise ValueError("the run has no action transcript; pass `record=True`.")
        n_agents = self.counts.shape[1]
        out = np.full((n_agents, int(self.setting["horizon"])), -1, dtype=np.int16)
        rows = self.actions[self.actions["trial"] == trial]
        for agent, start, stop, arms in zip(
            rows["agent"], rows["start"], rows["stop"], rows["arms"], strict=True
        ):
            arms = np.asarray(arms, dtype=np.int16)
            out[agent, start:stop] = arms[np.arange(stop - start) % arms.size]
        return out


def epoch_sums(
    table: Any,
    trials: np.ndarray,
    agents: np.ndarray,
    arms: np.ndarray,
    start: np.ndarray,
    length: np.ndarray,
) -> np.ndarray:
    """Sum of rewards of pulls ``start .. start+length-1`` of each agent and epoch.

    A plain :class:`~fedpriv.algorithms.environments.bernoulli.RewardTable` sums its
    entries itself (``pull_sums``: the same entries, bit for bit, at a quarter of the
    hashing); any other table is read entry by entry.

    Parameters
    ----------
    table : RewardTable or reward-table-like
        Has ``rewards(trial, agent, arm, pull)`` (and optionally ``pull_sums``).
    trials, arms, start, length : ndarray of int64, shape (P,)
        Per row: the trial, the arm, the first pull index and the number of pulls (>= 0).
    agents : ndarray of int64, shape (P, A)
        The agents whose pulls are summed, per row.

    Returns
    -------
    ndarray of float64, shape (P, A)
        The sums.

    Raises
    ------
    ValueError
        If a reward read lies outside [0, 1] or is NaN (Li & Song §III-A).
    """
    fast = getattr(table, "pull_sums", None)
    if fast is not None and agents.size:
        sums = fast(trials, agents, arms, start, length)
        if sums is not None:
            return sums
    n_pairs, n_agents = agents.shape
    out = np.zeros((n_pairs, n_agents))
    longest = int(length.max())
    chunk = max(1, _CHUNK_ELEMENTS // max(1, n_pairs * n_agents))
    tr, ar = trials[:, None, None], arms[:, None, None]
    ag = agents[:, :, None]
    for s0 in range(0, longest, chunk):
        j = np.arange(s0, min(s0 + chunk, longest))
        x = table.rewards(tr, ag, ar, start[:, None, None] + j[None, None, :])
        if x.size and (np.nanmin(x) < 0.0 or np.nanmax(x) > 1.0 or np.isnan(x).any()):
            raise ValueError(
                "rewards must lie in [0, 1] (Li & Song §III-A); the reward "
                f"table returned values in [{np.nanmin(x)}, {np.nanmax(x)}]."
            )
        if s0 + j.size > int(length.min()):
            x = x * (j[None, None, :] < length[:, None, None])
        out += x.sum(axis=2)
    return out


@dataclasses.dataclass(kw_only=True)
class StructurePlan:
    """What distinguishes one structure (CDP, DDP, HDP, ...) from another, for the epoch loop.

    Built by each ``run_*`` of :mod:`fedpriv.algorithms.li_song.mab` and read by
    :mod:`fedpriv.algorithms.li_song.epochs`.
    """

    algorithm: str
    agents_of_unit: np.ndarray  # (U, A) global agent labels
    divisor: int  # M or N in S, C and the noise
    n_agents_claim: int  # M for the scale call (N given separately)
    n_participants: int | None  # N under partial participation
    aggregate: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (b,A,K),(b,A)->(b,K)
    delay: int
    round_cost: Callable[[int], float]
    schedule: str
    gap: float | None
    n_rounds: int | None
    message_hook: Callable[..., None] | None = None  # appends tuples of message_columns
    message_columns: tuple[str, ...] = ()  # the message transcript's columns, in order
