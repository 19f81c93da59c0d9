"""Bernoulli multi-armed bandits shared by the MAB algorithms (issue 5).

Li & Song (2022) and Dubey & Pentland (AAMAS 2020) both run M agents on K Bernoulli arms.
Their neighbouring relations change one reward of one agent, so rewards live in a table
indexed by ``(trial, agent, arm, pull)``: the reward of the ``pull``-th pull (0-based) of
``arm`` by ``agent``. Whatever an algorithm does, the same pull sees the same reward, and
two neighbouring runs that share the seed differ only where the table was overridden.

The table is *counter based*: an entry is a SplitMix64 hash of the seed and its four
indices, turned into a uniform U, and the reward is ``U < mean``. It is a pre-drawn table
that costs no memory, so horizons of 10⁶ pulls at 100 agents cost nothing until read, and
a read of any index block is one vectorized expression.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

import numpy as np
from fedpriv.algorithms.environments.heterogeneous import GlobalArmsMixin
from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.privacy.checks import check_generator, check_int_at_least

__all__ = ["BernoulliMAB", "RewardTable", "heterogeneous_bandit", "homogeneous_bandit"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SALTS = tuple(
    np.uint64(s)
    for s in (0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3)
)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer (Steele, Lea & Flood 2014), vectorized over uint64."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _mix_inplace(z: np.ndarray, tmp: np.ndarray) -> None:
    """:func:`_mix` written into ``z`` (``tmp``: a scratch array of z's shape)."""
    for shift, mult in ((30, _MIX1), (27, _MIX2)):
        np.right_shift(z, np.uint64(shift), out=tmp)
        z ^= tmp
        z *= mult
    np.right_shift(z, np.uint64(31), out=tmp)
    z ^= tmp


def _index(name: str, value: object, upper: int | None) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer indices, got dtype {array.dtype}")
    if array.size and array.min() < 0:
        raise ValueError(f"{name} must be >= 0, got {int(array.min())}")
    if upper is not None and array.size and array.max() >= upper:
        raise ValueError(f"{name} must be < {upper}, got {int(array.max())}")
    return array.astype(np.uint64)


@dataclasses.dataclass(frozen=True)
class _Override:
    trial: int | None
    agent: int
    arm: int
    pull: int
    value: float


@dataclasses.dataclass(frozen=True)
class RewardTable:
    """The pre-drawn Bernoulli rewards of one environment under one seed.

    Build it with :meth:`BernoulliMAB.reward_table`. Immutable: :meth:`with_override`
    returns a neighbouring table.
    """

    arm_means: np.ndarray
    key: tuple[int, int]
    overrides: tuple[_Override, ...] = ()

    @property
    def n_agents(self) -> int:
        return int(self.arm_means.shape[0])

    @property
    def n_arms(self) -> int:
        return int(self.arm_means.shape[1])

    def uniforms(self, trial: object, agent: object, arm: object, pull: object) -> np.ndarray:
        """The table's uniforms U in [0, 1) at broadcast indices (float64).

        Parameters
        ----------
        trial, agent, arm, pull : array_like of int
            Indices, broadcast together; each >= 0, ``agent < n_agents``, ``arm <
            n_arms``.

        Returns
        -------
        ndarray of float64, the broadcast shape
            Counter-based uniforms: the same indices always give the same value.
        """
        t = _index("trial", trial, None)
        a = _index("agent", agent, self.n_agents)
        k = _index("arm", arm, self.n_arms)
        n = _index("pull", pull, None)
        k0, k1 = (np.uint64(v) for v in self.key)
        with np.errstate(over="ignore"):
            h = _mix(k0 ^ (t * _SALTS[0] + _GOLDEN))
            h = _mix(h ^ (a * _SALTS[1] + k1))
            h = _mix(h ^ (k * _SALTS[2] + _GOLDEN))
            h = _mix(h ^ (n * _SALTS[3] + k1))
        return np.asarray((h >> np.uint64(11)).astype(np.float64) * 2.0**-53)

    def _prefix_hash(self, t: np.ndarray, a: np.ndarray, k: np.ndarray) -> np.ndarray:
        """The hash state after the trial, agent and arm indices (uint64 arrays)."""
        k0, k1 = (np.uint64(v) for v in self.key)
        with np.errstate(over="ignore"):
            h = _mix(k0 ^ (t * _SALTS[0] + _GOLDEN))
            h = _mix(h ^ (a * _SALTS[1] + k1))
            return _mix(h ^ (k * _SALTS[2] + _GOLDEN))

    def pull_sums(
        self,
        trials: np.ndarray,
        agents: np.ndarray,
        arms: np.ndarray,
        start: np.ndarray,
        length: np.ndarray,
        chunk_elements: int = 1 << 15,
    ) -> np.ndarray | None:
        """Sums of the rewards of pulls ``start .. start + length - 1``, shape (P, A).

        ``trials``, ``arms``, ``start``, ``length`` have shape (P,), ``agents`` (P, A).
        Bit for bit ``rewards(trials, agents, arms, start + j).sum()`` over ``j <
        length`` (the same table entries), at a quarter of the hashing: the trial, agent
        and arm part of each entry's hash is computed once per (pair, agent), only the
        pull index's mix per pull, and ``U < mean`` is compared as the exact integer
        test ``(h >> 11) < ceil(mean * 2**53)``. Returns None (callers read the entries
        with :meth:`rewards`) when the table has overrides or a subclass redefines
        :meth:`uniforms`. ``chunk_elements`` bounds the scratch arrays (entries per
        step); the default keeps them in the CPU cache (measured fastest,
        ``benchmarks/bench_li_song.py``).

        Parameters
        ----------
        trials : ndarray of int64, shape (P,)
            Trial of each pair.
        agents : ndarray of int64, shape (P, A)
            Agents summed for each pair.
        arms : ndarray of int64, shape (P,)
            Arm of each pair.
        start : ndarray of int64, shape (P,)
            First pull index (0-based) of each pair.
        length : ndarray of int64, shape (P,)
            Number of pulls summed, >= 0.
        chunk_elements : int, default 2**15
            Table entries hashed per step.

        Returns
        -------
        ndarray of float64, shape (P, A), or None
            The reward sums (whole numbers), or None as described above.
        """
        if self.overrides or type(self).uniforms is not RewardTable.uniforms:
            return None
        trials = _index("trial", trials, None)
        agents = _index("agent", agents, self.n_agents)
        arms = _index("arm", arms, self.n_arms)
        start = _index("pull", start, None)
        length = np.asarray(length, dtype=np.int64)
        n_pairs, n_agents = agents.shape
        out = np.zeros((n_pairs, n_agents), dtype=np.int64)
        if n_pairs == 0:
            return out.astype(np.float64)
        prefix = self._prefix_hash(trials[:, None], agents, arms[:, None])[:, :, None]
        # u < mean  <=>  (h >> 11) < mean * 2**53  <=>  (h >> 11) < ceil(mean * 2**53)
        means = self.arm_means[agents.astype(np.intp), arms.astype(np.intp)[:, None]]
        bound = np.ceil(means * 2.0**53).astype(np.uint64)[:, :, None]
        k1 = np.uint64(self.key[1])
        longest, shortest = int(length.max()), int(length.min())
        chunk = max(1, chunk_elements // max(1, n_pairs * n_agents))
        with np.errstate(over="ignore"):
            for s0 in range(0, longest, chunk):
                j = np.arange(s0, min(s0 + chunk, longest), dtype=np.uint64)
                z = start[:, None, None] + j[None, None, :]
                z *= _SALTS[3]
                z += k1
                z = prefix ^ z
                _mix_inplace(z, np.empty_like(z))
                z >>= np.uint64(11)
                hit = z < bound
                if s0 + j.size > shortest:
                    hit &= j.astype(np.int64)[None, None, :] < length[:, None, None]
                out += np.count_nonzero(hit, axis=2)
        return out.astype(np.float64)

    def rewards(self, trial: object, agent: object, arm: object, pull: object) -> np.ndarray:
        """Rewards (0.0 or 1.0, float64) at broadcast ``(trial, agent, arm, pull)`` indices.

        Parameters
        ----------
        trial, agent, arm, pull : array_like of int
            Indices, broadcast together (``pull`` is the 0-based pull count of the arm).

        Returns
        -------
        ndarray of float64, the broadcast shape
            Bernoulli rewards ``U < arm_means[agent, arm]``, with the overrides applied.

        Raises
        ------
        TypeError
            If an index is not an integer.
        ValueError
            If an index is negative, or ``agent``/``arm`` is out of range.
        """
        trial_b, agent_b, arm_b, pull_b = np.broadcast_arrays(
            np.asarray(trial), np.asarray(agent), np.asarray(arm), np.asarray(pull)
        )
        u = self.uniforms(trial_b, agent_b, arm_b, pull_b)
        out = (u < self.arm_means[agent_b, arm_b]).astype(np.float64)
        for o in self.overrides:
            hit = (agent_b == o.agent) & (arm_b == o.arm) & (pull_b == o.pull)
            if o.trial is not None:
                hit &= trial_b == o.trial
            out = np.where(hit, o.value, out)
        return out

    def with_override(
        self, *, agent: int, arm: int, pull: int, value: float, trial: int | None = None
    ) -> RewardTable:
        """A neighbouring table: one entry replaced by ``value`` in [0, 1].

        ``trial=None`` replaces the entry in every trial (the usual audit setting, where
        trials are the sample axis).

        Parameters
        ----------
        agent : int
            In ``[0, n_agents)``.
        arm : int
            In ``[0, n_arms)``.
        pull : int
            0-based pull index of ``arm`` by ``agent``, >= 0.
        value : float
            The new reward, in [0, 1].
        trial : int, optional
            The trial whose entry changes, >= 0; None for every trial.

        Returns
        -------
        RewardTable
            A new table; ``self`` is unchanged.

        Raises
        ------
        ValueError
            If an index is out of range or ``value`` is not a reward in [0, 1].
        """
        check_int_at_least("agent", agent, 0)
        check_int_at_least("arm", arm, 0)
        check_int_at_least("pull", pull, 0)
        if agent >= self.n_agents:
            raise ValueError(f"agent must be < n_agents = {self.n_agents}, got {agent}")
        if arm >= self.n_arms:
            raise ValueError(f"arm must be < n_arms = {self.n_arms}, got {arm}")
        if trial is not None:
            check_int_at_least("trial", trial, 0)
        if not (np.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"value must be a reward in [0, 1], got {value!r}")
        override = _Override(trial, int(agent), int(arm), int(pull), float(value))
        return dataclasses.replace(self, overrides=(*self.overrides, override))


class BernoulliMAB(GlobalArmsMixin):
    """M agents on K Bernoulli arms with agent-specific means.

    Parameters
    ----------
    arm_means : array_like, shape (n_agents, n_arms)
        Mean reward of each arm at each agent, in [0, 1].

    Raises
    ------
    ValueError
        If the means are not a finite 2-D array in [0, 1] with at least one agent and arm.

    Notes
    -----
    The global mean of arm k is the average of the agents' means, as in Li & Song §III-A
    (μ_k = (1/M) Σ_i μ_{i,k}); with homogeneous means it is every agent's mean, which is
    Dubey & Pentland's setting. ``best_arm`` (lowest index on ties) and the global
    ``gaps`` come from :class:`fedpriv.algorithms.environments.heterogeneous.GlobalArmsMixin`.
    """

    def __init__(self, arm_means: object) -> None:
        means = np.array(arm_means, dtype=np.float64)
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 1:
            raise ValueError(
                f"arm_means must have shape (n_agents >= 1, n_arms >= 1), got {means.shape}"
            )
        if not np.all(np.isfinite(means)) or means.min() < 0.0 or means.max() > 1.0:
            raise ValueError("arm_means must be finite and in [0, 1]")
        means.setflags(write=False)
        self.arm_means = means

    @property
    def n_agents(self) -> int:
        return int(self.arm_means.shape[0])

    @property
    def n_arms(self) -> int:
        return int(self.arm_means.shape[1])

    @property
    def global_means(self) -> np.ndarray:
        """Shape (n_arms,): the mean over agents of each arm's mean."""
        return self.arm_means.mean(axis=0)

    @property
    def local_best_arms(self) -> np.ndarray:
        """Shape (n_agents,): each agent's own best arm."""
        return np.argmax(self.arm_means, axis=1)

    def pseudo_regret(
        self, arms: object, reference: Literal["global", "local"] = "global"
    ) -> np.ndarray:
        """Per-step pseudo-regret of the chosen arms.

        Parameters
        ----------
        arms : array_like of int, shape (..., n_agents)
            The arm each agent pulled.
        reference : {"global", "local"}
            ``"global"``: max_k μ_k − μ_{arm} with global means (Li & Song's regret);
            ``"local"``: max_k μ_{i,k} − μ_{i,arm} with agent i's own means.

        Returns
        -------
        ndarray, shape (..., n_agents)

        Raises
        ------
        ValueError
            If ``arms``' last axis is not ``n_agents`` long, an arm is out of range, or
            ``reference`` is unknown.
        """
        a = _index("arms", arms, self.n_arms).astype(np.intp)
        if a.ndim < 1 or a.shape[-1] != self.n_agents:
            raise ValueError(f"arms must have a last axis of n_agents = {self.n_agents}")
        if reference == "global":
            return self.gaps[a]
        if reference == "local":
            own = self.arm_means[np.arange(self.n_agents), a]
            return self.arm_means.max(axis=1) - own
        raise ValueError(f"reference must be 'global' or 'local', got {reference!r}")

    def reward_table(self, seed: int | np.random.SeedSequence) -> RewardTable:
        """The counter-based reward table of this environment under ``seed``.

        Parameters
        ----------
        seed : int or SeedSequence
            Root of the table (two 64-bit words of its state are the table's key).

        Returns
        -------
        RewardTable
        """
        words = as_seed_sequence(seed).generate_state(2, dtype=np.uint64)
        return RewardTable(self.arm_means, (int(words[0]), int(words[1])))


def _check_range(mean_range: Sequence[float]) -> tuple[float, float]:
    low, high = (float(v) for v in mean_range)
    if not (0.0 <= low < high <= 1.0):
        raise ValueError(f"mean_range must satisfy 0 <= low < high <= 1, got {mean_range!r}")
    return low, high


def homogeneous_bandit(
    n_agents: int, n_arms: int, rng: np.random.Generator, mean_range: Sequence[float] = (0.0, 1.0)
) -> BernoulliMAB:
    """Every agent shares one mean vector drawn uniformly from ``mean_range``.

    Parameters
    ----------
    n_agents, n_arms : int
        Shape of the means, each >= 1.
    rng : numpy.random.Generator
        Source of the means.
    mean_range : sequence of two float
        ``(low, high)`` within [0, 1].

    Returns
    -------
    BernoulliMAB
        Means of shape ``(n_agents, n_arms)``, equal rows.
    """
    check_int_at_least("n_agents", n_agents, 1)
    check_int_at_least("n_arms", n_arms, 1)
    check_generator("rng", rng)
    low, high = _check_range(mean_range)
    means = rng.uniform(low, high, size=n_arms)
    return BernoulliMAB(np.broadcast_to(means, (n_agents, n_arms)))


def heterogeneous_bandit(
    n_agents: int,
    n_arms: int,
    rng: np.random.Generator,
    mean_range: Sequence[float] = (0.0, 1.0),
    min_mismatch: int = 1,
    max_tries: int = 10_000,
) -> BernoulliMAB:
    """Agent-specific means, redrawn until ``min_mismatch`` agents' best arm is not global.

    Parameters
    ----------
    n_agents, n_arms : int
        Shape of the means, each >= 1.
    rng : numpy.random.Generator
        Source of the means.
    mean_range : sequence of two float
        ``(low, high)`` within [0, 1].
    min_mismatch : int
        Agents whose own best arm must differ from the global best, >= 0.
    max_tries : int
        Draws before giving up.

    Returns
    -------
    BernoulliMAB
        Means of shape ``(n_agents, n_arms)``.

    Raises
    ------
    ValueError
        If ``min_mismatch`` cannot hold (> n_agents, or n_arms < 2 with a positive value),
        or no draw satisfies it within ``max_tries``.
    """
    check_int_at_least("n_agents", n_agents, 1)
    check_int_at_least("n_arms", n_arms, 1)
    check_int_at_least("min_mismatch", min_mismatch, 0)
    check_generator("rng", rng)
    low, high = _check_range(mean_range)
    if min_mismatch > n_agents or (n_arms < 2 and min_mismatch > 0):
        raise ValueError(
            f"min_mismatch must be <= n_agents = {n_agents} and needs n_arms >= 2, "
            f"got {min_mismatch}"
        )
    for _ in range(max_tries):
        env = BernoulliMAB(rng.uniform(low, high, size=(n_agents, n_arms)))
        if int(np.sum(env.local_best_arms != env.best_arm)) >= min_mismatch:
            return env
    raise ValueError(f"no draw met min_mismatch = {min_mismatch} in {max_tries} tries")
