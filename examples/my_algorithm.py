"""A small private federated UCB, written as a user of fedpriv would write their own.

This is the worked example of docs/guides/your-claims.md: an algorithm that is not one
of the four papers, whose privacy claims ``fedpriv verify --claims examples/my_claims.py``
checks. It is deliberately simple; it is not a published algorithm.

The algorithm (M agents, K arms, a server)
------------------------------------------
Epoch 0: every agent pulls every arm ``base_pulls`` times. Epoch r = 1, 2, ...: the
server picks one arm by a UCB index computed from the noisy sums it has received, and
every agent pulls that arm ``base_pulls * 2**r`` times. At the end of each epoch every
agent sends the server, for each arm it pulled in the epoch, the sum of those rewards
plus Laplace noise, released through :func:`fedpriv.privacy.laplace_release` (which
charges the run's :class:`fedpriv.privacy.Accountant` before it draws the noise).

Privacy (the claim of ``my_claims.py``): ε-DP for one changed reward of one agent, as
seen by the server (every message of that agent). The agents act only on what the
server tells them, which is a function of the noisy messages, so no raw reward
reaches an output except through a message, and the pull that reads reward
``rewards[i, k, j]`` falls in one epoch chosen by the earlier messages alone: each
reward enters exactly one released sum, whose sensitivity is 1 (rewards lie in
[0, 1]). Laplace noise of scale 1/ε per sum therefore gives ε for every reward
(parallel composition over agents, arms and epochs, which the accountant applies
through its ``disjoint`` key levels).

The leaky variant (``leaky=True``) is a classic slip: it calibrates the noise of the
epoch's *sum* for the sensitivity of the epoch's *mean*, 1/n for n pulls, and declares
that sensitivity to the accountant. Its accountant therefore reports ε, while one
changed reward moves the sum by 1 and the true ε of that message is n·ε. Only an audit
can see this: the accountant prices what it is told.

Randomness: the reward table is the whole environment (drawn by the caller); the
privacy noise of trial ``t`` comes from child ``t`` of ``seed`` (a SeedSequence tree),
so adding trials never changes the noise of the others.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fedpriv.privacy import Accountant, NeighboringRelation, laplace_release

__all__ = ["FedUCBRun", "private_fed_ucb", "pulls_needed"]

#: Key levels of every release: one reward sits in exactly one (trial, agent, arm,
#: epoch) cell, so the cells compose in parallel.
LEVELS = ("trial", "agent", "arm", "epoch")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FedUCBRun:
    """What one call of :func:`private_fed_ucb` returns.

    Attributes
    ----------
    initial : ndarray of float64, shape (n_trials, n_agents, n_arms)
        Epoch 0's messages: each agent's noisy sum of each arm's rewards.
    arms : ndarray of int64, shape (n_trials, n_epochs - 1)
        The arm the server chose in epochs 1, 2, ... (public: a function of messages).
    sums : ndarray of float64, shape (n_trials, n_epochs - 1, n_agents)
        The messages of epochs 1, 2, ...: each agent's noisy sum of the chosen arm.
    pulls : ndarray of int64, shape (n_trials, n_arms)
        Pulls of each arm by all agents together.
    accountant : Accountant
        Charged for every message.
    """

    initial: np.ndarray
    arms: np.ndarray
    sums: np.ndarray
    pulls: np.ndarray
    accountant: Accountant

    def agent_view(self, agent: int = 0) -> np.ndarray:
        """Everything the server receives from ``agent``, one row per trial.

        Parameters
        ----------
        agent : int
            Agent index, in [0, n_agents).

        Returns
        -------
        ndarray of float64, shape (n_trials, n_arms + 2 * (n_epochs - 1))
            Epoch 0's K sums, then (arm chosen, noisy sum) of each later epoch.
        """
        later = np.stack([self.arms.astype(np.float64), self.sums[:, :, agent]], axis=2)
        return np.concatenate([self.initial[:, agent, :], later.reshape(len(later), -1)], axis=1)

    def regret(self, arm_means: np.ndarray) -> np.ndarray:
        """Pseudo-regret of every trial (all agents together) for the given arm means.

        Parameters
        ----------
        arm_means : array_like of float, shape (n_arms,)

        Returns
        -------
        ndarray of float64, shape (n_trials,)
        """
        means = np.asarray(arm_means, dtype=np.float64)
        return self.pulls @ (means.max() - means)


def pulls_needed(n_epochs: int, base_pulls: int) -> int:
    """Pull-index capacity of one (agent, arm) the reward table must hold.

    Parameters
    ----------
    n_epochs : int
        Epochs, >= 1.
    base_pulls : int
        Pulls per arm in epoch 0, >= 1.

    Returns
    -------
    int
        ``base_pulls * (2**n_epochs - 1)``: an arm chosen in every epoch.
    """
    return int(base_pulls) * (2 ** int(n_epochs) - 1)


def _check(
    rewards: np.ndarray, epsilon: float, n_epochs: int, base_pulls: int, n_trials: int
) -> None:
    if rewards.ndim != 3:
        raise ValueError(
            f"`rewards` must have shape (n_agents, n_arms, n_pulls); got {rewards.ndim} axes."
        )
    if not np.all((rewards >= 0.0) & (rewards <= 1.0)):
        raise ValueError("`rewards` must lie in [0, 1] (the sensitivity of a sum is 1).")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"`epsilon` must be a finite number > 0; got {epsilon!r}.")
    for name, value in (("n_epochs", n_epochs), ("base_pulls", base_pulls), ("n_trials", n_trials)):
        if int(value) != value or value < 1:
            raise ValueError(f"`{name}` must be an integer >= 1; got {value!r}.")
    need = pulls_needed(n_epochs, base_pulls)
    if rewards.shape[2] < need:
        raise ValueError(
            f"`rewards` must hold at least {need} pulls per (agent, arm) "
            f"for n_epochs={n_epochs}, base_pulls={base_pulls}; got "
            f"{rewards.shape[2]}."
        )


def private_fed_ucb(
    rewards: np.ndarray,
    seed: int | np.random.SeedSequence,
    *,
    epsilon: float,
    n_epochs: int = 4,
    base_pulls: int = 8,
    n_trials: int = 1,
    leaky: bool = False,
) -> FedUCBRun:
    """Run the private federated UCB of this module on one reward table.

    Parameters
    ----------
    rewards : array_like of float, shape (n_agents, n_arms, n_pulls)
        ``rewards[i, k, j]``: the reward agent ``i`` gets on its ``j``-th pull of arm
        ``k``, in [0, 1]; ``n_pulls >= pulls_needed(n_epochs, base_pulls)``.
    seed : int or numpy.random.SeedSequence
        Root of the privacy noise (trial ``t`` draws from its child ``t``).
    epsilon : float
        Privacy parameter of every message, > 0: Laplace scale 1/ε (or 1/(n ε) for the
        leaky variant).
    n_epochs : int
        Epochs, >= 1 (epoch 0 explores every arm).
    base_pulls : int
        Pulls of every arm in epoch 0; epoch r >= 1 pulls one arm ``base_pulls * 2**r``
        times.
    n_trials : int
        Independent runs on the same table (a leading batch axis), >= 1.
    leaky : bool
        The deliberately leaky variant (module docstring).

    Returns
    -------
    FedUCBRun

    Raises
    ------
    ValueError
        If ``rewards`` is not a 3-axis table in [0, 1] with enough pulls, or a size or
        ``epsilon`` is out of range.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    _check(rewards, epsilon, n_epochs, base_pulls, n_trials)
    n_agents, n_arms, _ = rewards.shape
    rows = np.arange(n_trials)
    agent = np.arange(n_agents)
    # cumulative[i, k, j] = sum of rewards[i, k, :j]: an epoch's sum is one difference.
    cumulative = np.concatenate(
        [np.zeros((n_agents, n_arms, 1)), np.cumsum(rewards, axis=2)], axis=2
    )
    accountant = Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        disjoint=LEVELS,
        keep_draw_rows=False,
    )
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    noise = np.empty(n_trials, dtype=object)
    noise[:] = [np.random.default_rng(child) for child in root.spawn(n_trials)]

    def release(values: np.ndarray, n: int, keys: dict) -> np.ndarray:
        sensitivity = 1.0 / n if leaky else 1.0  # the leak: a mean's sensitivity on a sum
        return laplace_release(
            values,
            scale=sensitivity / epsilon,
            l1_sensitivity=sensitivity,
            accountant=accountant,
            keys={"trial": rows.reshape((-1,) + (1,) * (values.ndim - 1)), **keys},
            rng=noise,
        )

    used = np.full((n_trials, n_arms), base_pulls, dtype=np.int64)
    initial = release(
        cumulative[:, :, base_pulls][None].repeat(n_trials, axis=0),
        base_pulls,
        {"agent": agent[:, None], "arm": np.arange(n_arms), "epoch": 0},
    )
    # The server's statistics: noisy total, pulls and noise variance per arm.
    total = initial.sum(axis=1)
    variance = np.full(
        (n_trials, n_arms),
        n_agents * 2.0 * (1.0 / epsilon) ** 2 * (1.0 / base_pulls**2 if leaky else 1.0),
    )
    arms = np.empty((n_trials, n_epochs - 1), dtype=np.int64)
    sums = np.empty((n_trials, n_epochs - 1, n_agents))
    for r in range(1, n_epochs):
        n_total = n_agents * used
        elapsed = n_total.sum(axis=1, keepdims=True)
        width = np.sqrt(2.0 * np.log(elapsed) / n_total)
        index = total / n_total + width + np.sqrt(2.0 * variance * np.log(elapsed)) / n_total
        arm = index.argmax(axis=1)
        length = base_pulls * 2**r
        start = used[rows, arm]
        true = (
            cumulative[agent[None, :], arm[:, None], (start + length)[:, None]]
            - cumulative[agent[None, :], arm[:, None], start[:, None]]
        )
        noisy = release(true, length, {"agent": agent[None, :], "arm": arm[:, None], "epoch": r})
        arms[:, r - 1], sums[:, r - 1] = arm, noisy
        used[rows, arm] += length
        total[rows, arm] += noisy.sum(axis=1)
        variance[rows, arm] += (
            n_agents * 2.0 * (1.0 / epsilon) ** 2 * (1.0 / length**2 if leaky else 1.0)
        )
    return FedUCBRun(
        initial=initial, arms=arms, sums=sums, pulls=n_agents * used, accountant=accountant
    )
