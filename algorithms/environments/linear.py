"""The federated linear contextual bandit of FedUCB's experiments (Dubey & Pentland 2020).

M agents each receive, at every round t, a decision set of K actions ``x ∈ ℝ^d`` and
earn ``y = ⟨x, θ*⟩ + η`` for the action they pick (FedUCB §3). The experiments
(§4.4 of the paper) fix ``L = S = 1``, draw θ* in the unit ball and
K actions per (agent, round): ``K - 1`` with ``⟨x, θ*⟩ ∈ [0.5, 0.6]`` and the best
with ``⟨x, θ*⟩ ∈ [0.7, 0.8]`` (gap ≥ 0.1). Rewards are ``Ber(⟨x, θ*⟩)`` in the
NeurIPS text [P] and ``Beta(⟨x, θ*⟩, 1 - ⟨x, θ*⟩)`` in the full text [H]; both have
mean ``⟨x, θ*⟩`` and lie in [0, 1] (B = 1).

Choices the paper leaves open (§4.4 does not state them; resolved here)
--------------------------------------------------------------------------
* θ* is drawn uniformly on the sphere of radius ``S`` (``bound_theta``), once per
  trial: the best band needs ``L ‖θ*‖ >= 0.8`` (fedpriv's derivation), so θ* cannot be
  uniform in the ball. A user may pass ``theta`` to fix it across trials.
* An action with target value ``c`` is ``x = c θ*/‖θ*‖² + r w``: ``w`` is a uniform
  unit direction orthogonal to θ* (``d - 1`` standard normals in an orthonormal basis
  of θ*⊥, normalised) and ``r`` is uniform in
  the ``(d - 1)``-ball slice of radius ``sqrt(L² - c²/‖θ*‖²)``, so ``‖x‖ <= L`` and
  ``⟨x, θ*⟩ = c`` exactly. ``c`` is uniform in its band; the best action sits at a
  uniform position among the K (no rejection sampling).
* One reward is pre-drawn per *action* (not per chosen action), so that two
  algorithms, or two neighbouring runs, see the same reward for the same choice.

Randomness and memory
---------------------
All contexts and rewards of (trial ``j``, agent ``i``) come from one generator at the
SeedSequence address ``(j, 0, i, Stream.ENVIRONMENT, 1)`` (θ* of trial ``j`` from
``(j, 0, 0, Stream.ENVIRONMENT, 0)``), read in chunks of ``CHUNK_ROUNDS`` full rounds
in a fixed order. The tables are generated lazily, one chunk at a time, so that
``n_trials × M × T × K × d`` never sits in memory, and every value depends only on
the seed and its indices (not on the algorithm, the blocks asked for, the horizon
or the number of trials). The side is always 0: the two worlds of an audit share the
environment and differ only by an explicit :meth:`LinearBanditTables.substitute`.
Beta rewards are drawn by inversion (``betaincinv`` of the stream's uniform), so that
each action costs one uniform whatever the reward model.

With ``shared_users=True`` (footnote 4) one user is present at every agent at a
round: every agent gets agent 0's decision set and reward row.

Length: the environment's public types (the bandit, its tables, blocks and
substitutions) with their documentation; the sampling internals are in
:mod:`~fedpriv.algorithms.environments.linear_sampling`.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
from fedpriv.algorithms.environments.linear_sampling import (
    CHUNK_ROUNDS,
    checked_contexts,
    checked_rewards,
    draw_chunk,
    orthonormal_frame,
    stream_generator,
)
from fedpriv.algorithms.seeding import as_seed_sequence
from fedpriv.privacy.checks import check_int_at_least, check_positive, check_real

__all__ = [
    "CHUNK_ROUNDS",
    "OUT_OF_BOUNDS",
    "REWARD_MODELS",
    "LinearBandit",
    "LinearBanditTables",
    "LinearBlock",
    "Substitution",
]

#: Reward models: "bernoulli" (NeurIPS text [P]) and "beta" (full text [H]).
REWARD_MODELS = ("bernoulli", "beta")
#: What to do with a context of norm > L or a reward with |y| > B given by the user.
OUT_OF_BOUNDS = ("raise", "clip")


def _check_band(name: str, band: object) -> tuple[float, float]:
    """Return ``band`` as ``(low, high)`` floats with ``low <= high``."""
    try:
        low, high = band  # type: ignore[misc]
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a pair (low, high), got {band!r}.") from None
    low, high = check_real(name, low), check_real(name, high)
    if not low <= high:
        raise ValueError(f"`{name}` must satisfy low <= high, got {band!r}.")
    return low, high


class LinearBlock(NamedTuple):
    """Contexts, rewards and expected rewards of rounds ``[start, stop)``.

    The arrays are read-only (they may be views of the cached chunk).

    Attributes
    ----------
    contexts : ndarray of float64, shape (n_trials, n_agents, n_rounds, n_arms, dim)
    rewards : ndarray of float64, shape (n_trials, n_agents, n_rounds, n_arms)
        Reward agent ``i`` earns if it picks action ``k`` at that round.
    means : ndarray of float64, shape (n_trials, n_agents, n_rounds, n_arms)
        ``⟨x, θ*⟩`` of every action (expected reward; regret is measured on it).
    """

    contexts: np.ndarray
    rewards: np.ndarray
    means: np.ndarray


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Substitution:
    """Replace one user's data of one agent at one round (the neighbouring hook).

    Attributes
    ----------
    agent : int or None
        Agent whose data changes; ``None`` changes every agent (one user present at
        every agent, ``NeighboringRelation.USER_AT_ALL_AGENTS``).
    t : int
        0-based round.
    contexts : ndarray of float64, shape (n_arms, dim) or (dim,), or None
        New decision set (or the new context of action ``arm``); None keeps it.
    rewards : ndarray of float64, shape (n_arms,) or (), or None
        New reward row (or the new reward of action ``arm``); None keeps it.
    arm : int or None
        Change only action ``arm`` (one (context, reward) pair) instead of the set.
    trial : int or None
        Trial to change; None changes every trial.
    """

    agent: int | None
    t: int
    contexts: np.ndarray | None
    rewards: np.ndarray | None
    arm: int | None
    trial: int | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinearBandit:
    """Specification of the federated linear bandit (no randomness; see `sample`).

    Parameters
    ----------
    n_agents : int
        ``M`` >= 1.
    n_arms : int
        ``K`` >= 2 (one best action and ``K - 1`` others). The paper only says
        ``K <= d²``; this is not enforced.
    dim : int
        ``d`` >= 1.
    reward : {"bernoulli", "beta"}
        ``y ~ Ber(⟨x,θ*⟩)`` ([P]) or ``y ~ Beta(⟨x,θ*⟩, 1 - ⟨x,θ*⟩)`` ([H]).
    bound_x : float
        ``L``: every context has ``‖x‖ <= L`` (Assumption (a)), > 0.
    bound_theta : float
        ``S``: ``‖θ*‖ = S`` for the drawn θ* (Assumption (c)), > 0.
    bound_y : float
        ``B``: every reward has ``|y| <= B`` (Assumption (f)), > 0; must be >= 1 for
        the built-in reward models (rewards in [0, 1]).
    suboptimal_band, best_band : (float, float)
        Bands of ``⟨x, θ*⟩`` of the ``K - 1`` other actions and of the best one.
        Defaults (0.5, 0.6) and (0.7, 0.8) (§4.4). Need ``best_band[0] >=
        suboptimal_band[1]``, ``L S >= best_band[1]``, and both bands inside [0, 1]
        (inside (0, 1) for Beta rewards).
    shared_users : bool
        Footnote 4: one user at every agent at a round (same decision set and reward
        row at all agents).
    theta : array_like of float64, shape (dim,), optional
        Fixed θ* for every trial instead of a random draw; needs ``‖θ‖ <= S``.
    out_of_bounds : {"raise", "clip"}
        For user-given contexts/rewards (substitutions, `LinearBanditTables.from_arrays`):
        ``‖x‖ > L`` or ``|y| > B`` raise ``ValueError`` or are clipped (x scaled to
        norm L, y clipped to [-B, B]).

    Raises
    ------
    ValueError
        On any parameter outside the ranges above (named in the message).
    """

    n_agents: int
    n_arms: int
    dim: int
    reward: str = "bernoulli"
    bound_x: float = 1.0
    bound_theta: float = 1.0
    bound_y: float = 1.0
    suboptimal_band: tuple[float, float] = (0.5, 0.6)
    best_band: tuple[float, float] = (0.7, 0.8)
    shared_users: bool = False
    theta: tuple[float, ...] | None = None
    out_of_bounds: str = "raise"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "n_agents", check_int_at_least("n_agents", self.n_agents, 1))
        set_(self, "n_arms", check_int_at_least("n_arms", self.n_arms, 2))
        set_(self, "dim", check_int_at_least("dim", self.dim, 1))
        if self.reward not in REWARD_MODELS:
            raise ValueError(f"`reward` must be one of {REWARD_MODELS}, got {self.reward!r}.")
        if self.out_of_bounds not in OUT_OF_BOUNDS:
            raise ValueError(
                f"`out_of_bounds` must be one of {OUT_OF_BOUNDS}, got {self.out_of_bounds!r}."
            )
        for name in ("bound_x", "bound_theta", "bound_y"):
            set_(self, name, check_positive(name, getattr(self, name)))
        if self.bound_y < 1.0:
            raise ValueError(f"`bound_y` must be >= 1 for rewards in [0, 1], got {self.bound_y!r}.")
        sub = _check_band("suboptimal_band", self.suboptimal_band)
        best = _check_band("best_band", self.best_band)
        set_(self, "suboptimal_band", sub)
        set_(self, "best_band", best)
        if best[0] < sub[1]:
            raise ValueError(
                f"`best_band` must lie above `suboptimal_band` (gap >= 0), got {best} and {sub}."
            )
        open_unit = self.reward == "beta"
        for name, band in (("suboptimal_band", sub), ("best_band", best)):
            low_ok = band[0] > 0.0 if open_unit else band[0] >= 0.0
            high_ok = band[1] < 1.0 if open_unit else band[1] <= 1.0
            if not (low_ok and high_ok):
                allowed = "(0, 1)" if open_unit else "[0, 1]"
                raise ValueError(
                    f"`{name}` must lie in {allowed} for {self.reward} rewards, got {band}."
                )
        if self.theta is not None:
            theta = np.asarray(self.theta, dtype=np.float64)
            if theta.shape != (self.dim,) or not np.all(np.isfinite(theta)):
                raise ValueError(f"`theta` must be a finite vector of shape ({self.dim},).")
            norm = float(np.linalg.norm(theta))
            if norm > self.bound_theta * (1 + 1e-12):
                raise ValueError(f"`theta` must have norm <= bound_theta, got {norm!r}.")
            set_(self, "theta", tuple(theta.tolist()))
            reach = norm * self.bound_x
        else:
            reach = self.bound_theta * self.bound_x
        if reach < best[1]:
            raise ValueError(
                f"`best_band` upper end {best[1]} is unreachable with ‖x‖ <= L = "
                f"{self.bound_x} and ‖θ*‖ = {reach / self.bound_x}: need L‖θ*‖ >= {best[1]}."
            )

    @property
    def gap(self) -> float:
        """Smallest gap ``best_band[0] - suboptimal_band[1]`` (>= 0)."""
        return self.best_band[0] - self.suboptimal_band[1]

    @property
    def sub_gaussian(self) -> float:
        """σ of the reward noise: 1/2 for rewards in [0, 1] (Hoeffding's lemma)."""
        return 0.5

    def sample(
        self, seed: int | np.random.SeedSequence, *, n_trials: int, horizon: int
    ) -> LinearBanditTables:
        """The lazy tables of ``n_trials`` worlds of ``horizon`` rounds.

        Parameters
        ----------
        seed : int or SeedSequence
            Root of the worlds (θ*, contexts, reward noise).
        n_trials : int
            Number of worlds, >= 1.
        horizon : int
            Rounds T per world, >= 1.

        Returns
        -------
        LinearBanditTables
            Drawn lazily, block by block (:meth:`LinearBanditTables.block`).

        Raises
        ------
        ValueError
            If ``n_trials`` or ``horizon`` < 1, or ``seed`` is negative.
        """
        return LinearBanditTables(
            self, root=as_seed_sequence(seed), n_trials=n_trials, horizon=horizon
        )


class LinearBanditTables:
    """Pre-drawn contexts and rewards of ``n_trials`` worlds, generated lazily.

    Use :meth:`LinearBandit.sample` (random worlds) or :meth:`from_arrays` (given
    worlds). Read rounds with :meth:`block`; build a neighbouring world with
    :meth:`substitute` (a new object; this one is unchanged).

    Attributes
    ----------
    spec : LinearBandit
    n_trials, horizon, n_agents, n_arms, dim : int
    theta : ndarray of float64, shape (n_trials, dim)
        θ* of every trial.
    substitutions : tuple of Substitution
    """

    def __init__(
        self,
        spec: LinearBandit,
        *,
        root: np.random.SeedSequence | None,
        n_trials: int,
        horizon: int,
        substitutions: tuple[Substitution, ...] = (),
        arrays: tuple[np.ndarray, np.ndarray] | None = None,
        theta: np.ndarray | None = None,
    ) -> None:
        self.spec = spec
        self.n_trials = check_int_at_least("n_trials", n_trials, 1)
        self.horizon = check_int_at_least("horizon", horizon, 1)
        self.n_agents, self.n_arms, self.dim = spec.n_agents, spec.n_arms, spec.dim
        self.root = root
        self.substitutions = tuple(substitutions)
        self._arrays = arrays
        self._means_box: list[np.ndarray | None] = [None]  # ⟨x, θ*⟩ of `arrays`, lazily
        if theta is not None:
            self.theta = theta
        elif spec.theta is not None:
            self.theta = np.tile(np.asarray(spec.theta), (self.n_trials, 1))
        else:
            theta = np.empty((self.n_trials, self.dim))
            for j in range(self.n_trials):
                v = stream_generator(root, j, 0, 0).standard_normal(self.dim)
                theta[j] = spec.bound_theta * v / np.linalg.norm(v)
            self.theta = theta
        self.theta.setflags(write=False)
        self._cache: dict[int, tuple[np.ndarray, ...]] = {}
        self._rngs: np.ndarray | None = None
        self._frames: np.ndarray | None = None
        self._next_chunk = 0

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls, spec: LinearBandit, contexts: object, rewards: object, theta: object
    ) -> LinearBanditTables:
        """Tables from given arrays (validated; clipped if ``spec.out_of_bounds == "clip"``).

        Parameters
        ----------
        contexts : array_like, shape (n_trials, n_agents, horizon, n_arms, dim)
        rewards : array_like, shape (n_trials, n_agents, horizon, n_arms)
        theta : array_like, shape (n_trials, dim)

        Parameters
        ----------
        spec : LinearBandit
            The environment (sizes, bounds ``L``, ``B`` and the out-of-bounds rule).

        Returns
        -------
        LinearBanditTables

        Raises
        ------
        ValueError
            On a wrong shape, non-finite values, ``‖x‖ > L`` or ``|y| > B`` (unless
            clipping).
        """
        contexts = np.array(contexts, dtype=np.float64)
        rewards = np.array(rewards, dtype=np.float64)
        theta = np.array(theta, dtype=np.float64)
        if contexts.ndim != 5 or contexts.shape[1:2] + contexts.shape[3:] != (
            spec.n_agents,
            spec.n_arms,
            spec.dim,
        ):
            raise ValueError(
                "`contexts` must have shape (n_trials, n_agents, horizon, n_arms, dim) "
                f"with n_agents={spec.n_agents}, n_arms={spec.n_arms}, dim={spec.dim}; "
                f"got {contexts.shape}."
            )
        if rewards.shape != contexts.shape[:4]:
            raise ValueError(
                f"`rewards` must have shape {contexts.shape[:4]}, got {rewards.shape}."
            )
        if theta.shape != (contexts.shape[0], spec.dim) or not np.all(np.isfinite(theta)):
            raise ValueError(f"`theta` must be finite with shape {(contexts.shape[0], spec.dim)}.")
        contexts = checked_contexts(spec, contexts)
        rewards = checked_rewards(spec, rewards)
        return cls(
            spec,
            root=None,
            n_trials=contexts.shape[0],
            horizon=contexts.shape[2],
            arrays=(contexts, rewards),
            theta=theta,
        )

    def substitute(
        self,
        *,
        agent: int | None,
        t: int,
        contexts: object = None,
        rewards: object = None,
        arm: int | None = None,
        trial: int | None = None,
    ) -> LinearBanditTables:
        """A neighbouring world: one user's data of ``agent`` at round ``t`` replaced.

        Parameters
        ----------
        agent : int or None
            Agent (0-based); None for every agent (a user present at all agents).
        t : int
            Round, ``0 <= t < horizon``.
        contexts : array_like, shape (n_arms, dim), or (dim,) with ``arm``; optional
        rewards : array_like, shape (n_arms,), or scalar with ``arm``; optional
        arm : int, optional
            Replace only this action's (context, reward) pair.
        trial : int, optional
            Only this trial (default: every trial).

        Returns
        -------
        LinearBanditTables
            Shares the seed (every other value is identical).

        Raises
        ------
        ValueError
            On an index out of range, a wrong shape, non-finite values, or a context
            with ``‖x‖ > L`` / reward with ``|y| > B`` (unless the spec clips).
        """
        if agent is not None:
            agent = check_int_at_least("agent", agent, 0)
            if agent >= self.n_agents:
                raise ValueError(f"`agent` must be < n_agents = {self.n_agents}, got {agent}.")
        t = check_int_at_least("t", t, 0)
        if t >= self.horizon:
            raise ValueError(f"`t` must be < horizon = {self.horizon}, got {t}.")
        if trial is not None:
            trial = check_int_at_least("trial", trial, 0)
            if trial >= self.n_trials:
                raise ValueError(f"`trial` must be < n_trials = {self.n_trials}, got {trial}.")
        if arm is not None:
            arm = check_int_at_least("arm", arm, 0)
            if arm >= self.n_arms:
                raise ValueError(f"`arm` must be < n_arms = {self.n_arms}, got {arm}.")
        shape_x = (self.dim,) if arm is not None else (self.n_arms, self.dim)
        shape_y = () if arm is not None else (self.n_arms,)
        if contexts is not None:
            contexts = np.array(contexts, dtype=np.float64)
            if contexts.shape != shape_x:
                raise ValueError(f"`contexts` must have shape {shape_x}, got {contexts.shape}.")
            contexts = checked_contexts(self.spec, contexts)
        if rewards is not None:
            rewards = np.array(rewards, dtype=np.float64)
            if rewards.shape != shape_y:
                raise ValueError(f"`rewards` must have shape {shape_y}, got {rewards.shape}.")
            rewards = checked_rewards(self.spec, rewards)
        if contexts is None and rewards is None:
            raise ValueError("give `contexts` and/or `rewards` to substitute.")
        sub = Substitution(
            agent=agent, t=t, contexts=contexts, rewards=rewards, arm=arm, trial=trial
        )
        neighbour = LinearBanditTables(
            self.spec,
            root=self.root,
            n_trials=self.n_trials,
            horizon=self.horizon,
            substitutions=(*self.substitutions, sub),
            arrays=self._arrays,
            theta=self.theta,
        )
        neighbour._means_box = self._means_box  # same arrays and θ*: same means
        return neighbour

    # ------------------------------------------------------------------ reading
    def block(self, start: int, stop: int) -> LinearBlock:
        """Contexts, rewards and means of rounds ``[start, stop)`` of every trial and agent.

        Parameters
        ----------
        start : int
            First round, >= 0.
        stop : int
            One past the last round, in ``(start, horizon]``.

        Returns
        -------
        LinearBlock
            Contexts ``(n_trials, n_agents, stop - start, n_arms, dim)``, rewards and
            means
            ``(n_trials, n_agents, stop - start, n_arms)``.

        Raises
        ------
        ValueError
            If not ``0 <= start < stop <= horizon``.
        """
        start = check_int_at_least("start", start, 0)
        stop = check_int_at_least("stop", stop, start + 1)
        if stop > self.horizon:
            raise ValueError(f"`stop` must be <= horizon = {self.horizon}, got {stop}.")
        means = None
        if self._arrays is not None:
            contexts = self._arrays[0][:, :, start:stop]
            rewards = self._arrays[1][:, :, start:stop]
            if self._means_box[0] is None:  # once, the same products as block by block
                theta = self.theta[:, None, None, :, None]
                self._means_box[0] = np.matmul(self._arrays[0], theta)[..., 0]
            means = self._means_box[0][:, :, start:stop]
        else:
            first, last = start // CHUNK_ROUNDS, (stop - 1) // CHUNK_ROUNDS
            parts = [self._chunk(c) for c in range(first, last + 1)]
            window = slice(start - first * CHUNK_ROUNDS, stop - first * CHUNK_ROUNDS)

            def join(k: int) -> np.ndarray:
                arrays = [part[k] for part in parts]
                joined = arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=2)
                joined = joined[:, :, window]
                if self.spec.shared_users:  # footnote 4: agent 0's user at every agent
                    joined = np.repeat(joined, self.n_agents, axis=1)
                return joined

            contexts, rewards, means = join(0), join(1), join(2)
        active = [sub for sub in self.substitutions if start <= sub.t < stop]
        if active:
            contexts, rewards, means = contexts.copy(), rewards.copy(), None
        for sub in active:
            trials = slice(None) if sub.trial is None else sub.trial
            agents = slice(None) if sub.agent is None else sub.agent
            arms = slice(None) if sub.arm is None else sub.arm
            if sub.contexts is not None:
                contexts[trials, agents, sub.t - start, arms] = sub.contexts
            if sub.rewards is not None:
                rewards[trials, agents, sub.t - start, arms] = sub.rewards
        if means is None:
            means = np.matmul(contexts, self.theta[:, None, None, :, None])[..., 0]
        for array in (contexts, rewards, means):  # views of the cache: read only
            array.flags.writeable = False
        return LinearBlock(contexts, rewards, means)

    def _generators(self) -> np.ndarray:
        """Fresh generators of every (trial, agent) stream, at the start of round 0."""
        agents = 1 if self.spec.shared_users else self.n_agents
        rngs = np.empty((self.n_trials, agents), dtype=object)
        for j in range(self.n_trials):
            for i in range(agents):
                rngs[j, i] = stream_generator(self.root, j, i, 1)
        return rngs

    def _chunk(self, c: int) -> tuple[np.ndarray, ...]:
        """Chunk ``c`` (rounds ``[c·CHUNK, (c+1)·CHUNK)``) of every trial and agent.

        Every chunk draws ``CHUNK_ROUNDS`` full rounds from each (trial, agent)
        stream in order (the last one is truncated afterwards), so a value depends
        on its indices only; reading backwards replays the streams from round 0.
        """
        if c in self._cache:
            return self._cache[c]
        if self._rngs is None or c < self._next_chunk:
            self._rngs, self._next_chunk = self._generators(), 0
            unit = self.theta / np.linalg.norm(self.theta, axis=1, keepdims=True)
            self._frames = np.stack([orthonormal_frame(u) for u in unit])  # (n_trials, d, d)
        while self._next_chunk <= c:
            raw = draw_chunk(self.spec, self.theta, self._frames, self._rngs)
            self._next_chunk += 1
        rounds = min(CHUNK_ROUNDS, self.horizon - c * CHUNK_ROUNDS)
        result = tuple(np.moveaxis(array[:rounds], 0, 2) for array in raw)
        self._cache = {c: result}  # keep one chunk: sequential reading
        return result
