"""Result types of Dubey & Pentland's cooperative UCB family (AAMAS 2020) and its baselines.

:class:`UCBRun` is returned by the isolated per-agent baselines
(:mod:`fedpriv.algorithms.dubey_aamas.baselines`), :class:`CoopRun` and its
:class:`Transcript` by the cooperative runs (:mod:`fedpriv.algorithms.dubey_aamas.cooperative`
and :mod:`fedpriv.algorithms.dubey_aamas.byzantine`); both measure regret through
:class:`GapRegretMixin`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from fedpriv.algorithms.networks.flooding import FloodingSchedule
from fedpriv.privacy import Accountant

__all__ = ["CoopRun", "GapRegretMixin", "Transcript", "UCBRun"]


class GapRegretMixin:
    """Regret of a run with ``actions`` (n_trials, n_agents, horizon) and global ``gaps``."""

    __slots__ = ()

    @property
    def cumulative_regret(self) -> np.ndarray:
        """Per-agent cumulative pseudo-regret, shape (n_trials, n_agents, horizon)."""
        return np.cumsum(self.gaps[self.actions], axis=-1)

    @property
    def final_regret(self) -> np.ndarray:
        """Each agent's cumulative pseudo-regret at ``T``, shape (n_trials, n_agents)."""
        return self.cumulative_regret[..., -1]

    @property
    def group_regret(self) -> np.ndarray:
        """Group regret R_G(t) = Σ_v R_v(t) (eq. 2, reconstructed with high confidence), shape (n_trials, horizon)."""
        return self.cumulative_regret.sum(axis=1)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class UCBRun(GapRegretMixin):
    """Result of a batch of isolated per-agent runs (UCB1 or DP-UCB-INT).

    Attributes
    ----------
    algorithm : str
        ``"ucb1"`` or ``"dp-ucb-int"``.
    actions : ndarray of int64, shape (n_trials, n_agents, horizon)
    rewards : ndarray of float64, shape (n_trials, n_agents, horizon)
    gaps : ndarray of float64, shape (n_arms,)
        Global gaps of the environment.
    accountant : Accountant or None
        DP-UCB-INT's releases (keys trial, agent, arm).
    release_counts : ndarray of int64, shape (n_trials, n_agents, n_arms)
        Distinct noisy releases per stream (zeros for UCB1).
    setting : dict
        Parameters of the run.
    seed_entropy : int
    """

    algorithm: str
    actions: np.ndarray
    rewards: np.ndarray
    gaps: np.ndarray
    accountant: Accountant | None
    release_counts: np.ndarray
    setting: dict
    seed_entropy: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Transcript:
    """What was sent and done in a run (``record=True``).

    Attributes
    ----------
    schedule : FloodingSchedule
        Who receives a message of whom and when (``created_round + d(u, v)``).
    content : dict of ndarray, each of shape (n_trials, n_agents, horizon, ...)
        Message content created by agent ``v`` at round ``t`` (index ``t - 1``):
        private/non-private: ``mean`` (n_arms; NaN before the first release) and
        ``count`` (n_arms); Byzantine: ``arm`` and ``value`` (the value sent).
    actions, rewards : ndarray, shape (n_trials, n_agents, horizon)
        Each agent's arm and the reward it observed.
    """

    schedule: FloodingSchedule
    content: dict
    actions: np.ndarray
    rewards: np.ndarray

    def messages(self, trial: int = 0) -> pd.DataFrame:
        """One row per created message: ``sender, created_round`` and its content.

        Array-valued content (one entry per arm) is stored as a tuple per row.

        Parameters
        ----------
        trial : int, default 0
            Trial index.

        Returns
        -------
        pandas.DataFrame
        """
        n_agents, horizon = self.actions.shape[1:]
        sender, created = np.meshgrid(np.arange(n_agents), np.arange(1, horizon + 1), indexing="ij")
        frame = pd.DataFrame({"sender": sender.ravel(), "created_round": created.ravel()})
        for name, array in self.content.items():
            block = array[trial].reshape(n_agents * horizon, -1)
            frame[name] = block[:, 0] if block.shape[1] == 1 else list(map(tuple, block))
        return frame

    def deliveries(self, trial: int = 0) -> pd.DataFrame:
        """One row per (message, receiver): sender, receivers, content, time after delay.

        Columns ``sender, created_round, receiver, delivered_round, hops`` and the
        content columns of :meth:`messages`; only deliveries within the horizon.

        Parameters
        ----------
        trial : int, default 0
            Trial index.

        Returns
        -------
        pandas.DataFrame
            Sorted by ``created_round``, ``sender``, ``receiver``.
        """
        messages = self.messages(trial)
        s = self.schedule
        pairs = pd.DataFrame({"sender": s.senders, "receiver": s.receivers, "hops": s.delays})
        frame = messages.merge(pairs, on="sender", how="inner")
        frame["delivered_round"] = frame["created_round"] + frame["hops"]
        horizon = self.actions.shape[2]
        frame = frame[frame["delivered_round"] <= horizon]
        first = ["sender", "created_round", "receiver", "delivered_round", "hops"]
        rest = [c for c in frame.columns if c not in first]
        return (
            frame[first + rest]
            .sort_values(["created_round", "sender", "receiver"])
            .reset_index(drop=True)
        )

    def action_table(self, trial: int = 0) -> pd.DataFrame:
        """One row per (agent, round): ``agent, round, arm, reward``.

        Parameters
        ----------
        trial : int, default 0
            Trial index.

        Returns
        -------
        pandas.DataFrame
        """
        n_agents, horizon = self.actions.shape[1:]
        agent, rnd = np.meshgrid(np.arange(n_agents), np.arange(1, horizon + 1), indexing="ij")
        return pd.DataFrame(
            {
                "agent": agent.ravel(),
                "round": rnd.ravel(),
                "arm": self.actions[trial].ravel(),
                "reward": self.rewards[trial].ravel(),
            }
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CoopRun(GapRegretMixin):
    """Result of a batch of cooperative runs.

    Attributes
    ----------
    algorithm : str
        ``"private-coop-ucb"``, ``"coop-ucb-nonprivate"`` or ``"byzantine-coop-ucb"``.
    actions, rewards : ndarray, shape (n_trials, n_agents, horizon)
    gaps : ndarray of float64, shape (n_arms,)
    accountant : Accountant or None
    release_counts : ndarray of int64, shape (n_trials, n_agents, n_arms)
        Distinct noisy releases per stream (private only).
    schedule : FloodingSchedule
    transmissions : int
        Link transmissions per trial (every message of every round, duplicates
        included: ``horizon × Σ_u transmissions[u]``); communication cost.
    deliveries : int
        Messages received (first receipts) per trial within the horizon.
    setting : dict
        Parameters of the run.
    transcript : Transcript or None
    seed_entropy : int
    """

    algorithm: str
    actions: np.ndarray
    rewards: np.ndarray
    gaps: np.ndarray
    accountant: Accountant | None
    release_counts: np.ndarray
    schedule: FloodingSchedule
    transmissions: int
    deliveries: int
    setting: dict
    transcript: Transcript | None
    seed_entropy: int
