"""Federated linear contextual environments of Zhou & Chowdhury's experiments (Fig. 2).

Zhou & Chowdhury, ICLR 2024 (arXiv 2302.13945), §6 (Fig. 2a-b): a synthetic instance
"similar to Vaswani et al. (2020)", as their experiment code builds it: at every round and
silo, ``K`` fresh arms on the unit ``(d−2)``-sphere with a bias coordinate 1 appended, the
first ``d`` arms overwritten by the basis ``e_j + e_{d−1}`` (bias kept), every feature then
normalised to ``‖x‖ = 1``; ``θ*`` on the ``(d−2)``-sphere of radius 0.5 with bias 0.5;
reward ``⟨x, θ*⟩ + N(0, R²)`` with ``R = 0.5``, computed on the *unnormalised* feature as
the code does (the mean is ``⟨x̃, θ*⟩``, the agent sees ``x = x̃/‖x̃‖``).

What fedpriv adds: rewards are clipped to ``[−Y, Y]`` (``reward_bound``, default 1) before
they reach the statistics, the bound every sensitivity of the family assumes (the Gaussian
rewards of the experiment are unbounded); the contexts of round ``t`` come from the
counter-based stream ``SeedSequence(entropy, spawn_key=(t,))`` of the environment's seed, so
no ``T × M × K × d`` tensor is stored (10⁴·100·100·10 floats at Fig. 2's size); reward
noise comes from each trial's own stream.

:class:`TableEnvironment` holds given contexts and deterministic rewards (a data set), for
audits of neighbouring data sets.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fedpriv.algorithms.seeding import Stream, as_seed_sequence, child_seed, stream_rng
from fedpriv.privacy.checks import check_int_at_least, check_positive

__all__ = ["SyntheticEnvironment", "TableEnvironment"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SyntheticEnvironment:
    """The Fig. 2a-b synthetic instance (module docstring).

    Parameters
    ----------
    n_agents : int
        ``M`` >= 1 silos.
    n_arms : int
        ``K`` >= ``dim`` arms per round.
    dim : int
        ``d`` >= 3.
    reward_stddev : float
        ``R`` > 0 (0.5 in Fig. 2).
    reward_bound : float
        ``Y`` > 0: rewards are clipped to ``[−Y, Y]``.
    seed : int
        Root of the instance (θ* and contexts), >= 0.
    """

    n_agents: int
    n_arms: int
    dim: int
    reward_stddev: float = 0.5
    reward_bound: float = 1.0
    seed: int = 2

    def __post_init__(self) -> None:
        check_int_at_least("n_agents", self.n_agents, 1)
        check_int_at_least("dim", self.dim, 3)
        check_int_at_least("n_arms", self.n_arms, self.dim)
        check_positive("reward_stddev", self.reward_stddev)
        check_positive("reward_bound", self.reward_bound)
        check_int_at_least("seed", self.seed, 0)

    @property
    def theta(self) -> np.ndarray:
        """``θ*``, shape (d,): radius 0.5 on the first ``d−1`` coordinates, bias 0.5."""
        rng = np.random.default_rng(child_seed(self.seed, 1 << 30))
        head = rng.standard_normal(self.dim - 1)
        head *= 0.5 / np.linalg.norm(head)
        return np.append(head, 0.5)

    def round(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``t``'s features and mean rewards, the same in every trial.

        Parameters
        ----------
        t : int
            0-based round >= 0.

        Returns
        -------
        features : ndarray, shape (n_agents, n_arms, dim)
            Unit-norm ``x``.
        means : ndarray, shape (n_agents, n_arms)
            ``⟨x̃, θ*⟩`` (unnormalised ``x̃``, as the experiment code computes it).
        """
        rng = np.random.default_rng(child_seed(self.seed, int(t)))
        m, k, d = self.n_agents, self.n_arms, self.dim
        x = rng.standard_normal((m, k, d - 1))
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
        raw = np.concatenate([x, np.ones((m, k, 1))], axis=-1)
        basis = np.eye(d)
        basis[:, -1] = 1.0
        raw[:, :d, :] = basis
        means = raw @ self.theta
        return raw / np.linalg.norm(raw, axis=-1, keepdims=True), means

    def reward_noise(self, t: int, rngs: list) -> np.ndarray:
        """``N(0, R²)`` noise of round ``t`` for every trial and silo, shape (n_trials, M).

        Parameters
        ----------
        t : int
            Round (unused: each trial's stream is read in order).
        rngs : list of numpy Generator
            One per trial.

        Returns
        -------
        ndarray of float64, shape (len(rngs), n_agents)
        """
        return np.stack([g.standard_normal(self.n_agents) for g in rngs]) * self.reward_stddev

    def trial_rngs(self, root: np.random.SeedSequence, n_trials: int) -> list:
        """The reward-noise generator of each trial (``Stream.ENVIRONMENT``).

        Parameters
        ----------
        root : SeedSequence
            The run's root.
        n_trials : int
            >= 1.

        Returns
        -------
        list of numpy Generator
        """
        return [
            stream_rng(as_seed_sequence(root), trial=j, stream=Stream.ENVIRONMENT)
            for j in range(n_trials)
        ]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TableEnvironment:
    """A data set: given features and deterministic rewards per (round, silo, arm).

    Parameters
    ----------
    features : ndarray, shape (horizon, n_agents, n_arms, dim)
        ``‖x‖ <= L`` (not normalised here).
    rewards : ndarray, shape (horizon, n_agents, n_arms)
        The user's reward for each arm; also the regret's mean.
    reward_bound : float
        ``Y`` > 0; rewards are clipped to ``[−Y, Y]``.
    """

    features: np.ndarray
    rewards: np.ndarray
    reward_bound: float = 1.0
    reward_stddev: float = 0.5

    def __post_init__(self) -> None:
        f = np.asarray(self.features, dtype=np.float64)
        r = np.asarray(self.rewards, dtype=np.float64)
        if f.ndim != 4 or r.shape != f.shape[:3]:
            raise ValueError(
                "`features` must have shape (horizon, n_agents, n_arms, dim) and `rewards` "
                f"(horizon, n_agents, n_arms); got {f.shape} and {r.shape}."
            )
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(r))):
            raise ValueError("`features` and `rewards` must be finite.")
        object.__setattr__(self, "features", f)
        object.__setattr__(self, "rewards", r)
        check_positive("reward_bound", self.reward_bound)

    @property
    def n_agents(self) -> int:
        """``M``."""
        return int(self.features.shape[1])

    @property
    def n_arms(self) -> int:
        """``K``."""
        return int(self.features.shape[2])

    @property
    def dim(self) -> int:
        """``d``."""
        return int(self.features.shape[3])

    def round(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``t``'s features (M, K, d) and rewards (M, K).

        Parameters
        ----------
        t : int
            0-based round, < horizon.

        Returns
        -------
        tuple of ndarray
        """
        return self.features[t], self.rewards[t]

    def reward_noise(self, t: int, rngs: list) -> np.ndarray:
        """Zero: the data set's rewards are deterministic.

        Parameters
        ----------
        t : int
            Round.
        rngs : list
            One entry per trial.

        Returns
        -------
        ndarray, shape (len(rngs), n_agents)
        """
        return np.zeros((len(rngs), self.n_agents))

    def trial_rngs(self, root: np.random.SeedSequence, n_trials: int) -> list:
        """Placeholders (no randomness is read).

        Parameters
        ----------
        root : SeedSequence
            Unused.
        n_trials : int
            >= 1.

        Returns
        -------
        list of None
        """
        return [None] * int(n_trials)
