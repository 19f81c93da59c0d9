"""Heterogeneous multi-agent bandit environments with pre-drawn reward tables.

Zhu et al.'s setting: N agents face the same M arms, but agent i only observes a
locally biased reward X_{i,k}(t) with mean mu_{i,k}; the true (global) mean of arm k
is the average of the local means, ``mu_k = (1/N) sum_i mu_{i,k}``, and regret is
measured against the global means. No single agent can find the best arm alone.

An environment holds all randomness that is not privacy noise in a pre-drawn reward
table (one per trial): entry ``[i, t, k]`` is the reward agent i sees if it pulls
arm k at round t, with row ``t = 0`` reserved for the initial pull of every arm
("time 0" in Algorithms 1 and 4 of Zhu et al.). Draws are independent across agents,
rounds and arms (footnote 1 of Zhu et al.: agents pulling the same arm at the same
time see different realizations).

References
----------
.. [1] Z. Zhu, J. Zhu, J. Liu, Y. Liu, "Federated Bandit: A Gossiping Approach",
   Proc. ACM Meas. Anal. Comput. Syst. 5(1), 2021, Sections 2 (model) and 5
   (synthetic experiments, Section 5.1).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol, runtime_checkable

import numpy as np
from fedpriv.privacy.checks import (
    check_finite_array,
    check_generator,
    check_in_range_array,
    check_int_at_least,
    check_positive,
)

__all__ = [
    "NOISE_MODELS",
    "BanditEnvironment",
    "GlobalArmsMixin",
    "HeterogeneousBandit",
    "paper_synthetic_bandit",
]

NOISE_MODELS: tuple[str, ...] = ("bernoulli", "gaussian")
"""Reward models accepted by :class:`HeterogeneousBandit`."""


@runtime_checkable
class BanditEnvironment(Protocol):
    """A heterogeneous N-agent, M-arm stochastic bandit with global = mean of local.

    Attributes
    ----------
    n_agents : int
        Number of agents N.
    n_arms : int
        Number of arms M.
    arm_means : ndarray of float64, shape (n_agents, n_arms)
        Local means ``mu_{i,k} = E X_{i,k}``.
    global_means : ndarray of float64, shape (n_arms,)
        ``mu_k = arm_means.mean(axis=0)`` (the key assumption of Zhu et al.).
    reward_bounds : tuple of float or None
        ``(low, high)`` enclosing the support of every reward, or None when the
        support is unbounded (the DP guarantees of Fed_UCB need bounded rewards).
    best_arm : int
        ``argmax(global_means)`` (the first one on ties).
    gaps : ndarray of float64, shape (n_arms,)
        ``Delta_k = max(global_means) - global_means[k]`` (>= 0).
    """

    @property
    def n_agents(self) -> int: ...

    @property
    def n_arms(self) -> int: ...

    @property
    def arm_means(self) -> np.ndarray: ...

    @property
    def global_means(self) -> np.ndarray: ...

    @property
    def reward_bounds(self) -> tuple[float, float] | None: ...

    @property
    def best_arm(self) -> int: ...

    @property
    def gaps(self) -> np.ndarray: ...

    def sample_rewards(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw one trial's reward table.

        Parameters
        ----------
        horizon : int
            Number of rounds T after the initial pulls, >= 1.
        rng : numpy.random.Generator
            The trial's environment stream; the simulator calls this once per trial
            with that trial's own generator, so adding trials never shifts others.

        Returns
        -------
        ndarray of float64, shape (n_agents, horizon + 1, n_arms)
            ``[i, t, k]`` is the reward agent i observes if it pulls arm k at round
            t; row ``t = 0`` holds the initial pull of every arm.
        """
        ...


class GlobalArmsMixin:
    """``best_arm`` and ``gaps`` from a ``global_means`` property (shared by environments)."""

    __slots__ = ()

    @property
    def best_arm(self) -> int:
        """Index of the best global arm (the first one on ties)."""
        return int(np.argmax(self.global_means))

    @property
    def gaps(self) -> np.ndarray:
        """Gaps Delta_k = max global mean - mu_k, float64 of shape (n_arms,)."""
        global_means = self.global_means
        return global_means.max() - global_means


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HeterogeneousBandit(GlobalArmsMixin):
    """Independent rewards with agent-specific means (Zhu et al., Section 2).

    Parameters
    ----------
    arm_means : array_like of float, shape (n_agents, n_arms)
        Local means mu_{i,k}; finite, and in [0, 1] for ``noise="bernoulli"``.
        ``n_agents >= 1``, ``n_arms >= 2``. Stored as a read-only float64 copy.
    noise : {"bernoulli", "gaussian"}, default "bernoulli"
        ``"bernoulli"``: X_{i,k}(t) ~ Bernoulli(mu_{i,k}), support {0, 1}.
        ``"gaussian"``: X_{i,k}(t) = mu_{i,k} + noise_stddev * N(0, 1), unbounded
        support; this is the paper's synthetic experiment ("zero-mean Gaussian noise
        with variance 1 is added to each observation", Section 5), which violates
        its own [0, 1] support assumption (Section 2).
    noise_stddev : float, default 1.0
        Standard deviation of the Gaussian noise, in reward units, > 0. Validated
        but unused for ``"bernoulli"``.

    Raises
    ------
    ValueError
        If ``arm_means`` is not 2-D with ``n_agents >= 1`` and ``n_arms >= 2``, has
        NaN or infinite entries, or leaves [0, 1] for Bernoulli rewards; if
        ``noise`` is unknown; or if ``noise_stddev <= 0``.
    TypeError
        If ``noise_stddev`` is not a real number.

    Notes
    -----
    Equality compares the means and the noise model; instances are hashable.

    Examples
    --------
    >>> env = HeterogeneousBandit(arm_means=[[0.9, 0.1], [0.0, 0.6]])
    >>> env.global_means
    array([0.45, 0.35])
    >>> env.best_arm, env.gaps
    (0, array([0. , 0.1]))
    >>> env.sample_rewards(4, rng=np.random.default_rng(0)).shape
    (2, 5, 2)
    """

    arm_means: np.ndarray
    noise: str = "bernoulli"
    noise_stddev: float = 1.0

    def __post_init__(self) -> None:
        if self.noise not in NOISE_MODELS:
            raise ValueError(f"`noise` must be one of {list(NOISE_MODELS)}, got {self.noise!r}.")
        stddev = check_positive("noise_stddev", self.noise_stddev)
        if self.noise == "bernoulli":
            means = check_in_range_array("arm_means", self.arm_means, 0.0, 1.0)
        else:
            means = check_finite_array("arm_means", self.arm_means)
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 2:
            raise ValueError(
                "`arm_means` must have shape (n_agents >= 1, n_arms >= 2), got "
                f"shape {means.shape}."
            )
        means = means.copy()
        means.setflags(write=False)
        object.__setattr__(self, "arm_means", means)
        object.__setattr__(self, "noise_stddev", stddev)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HeterogeneousBandit):
            return NotImplemented
        return (
            self.noise == other.noise
            and self.noise_stddev == other.noise_stddev
            and np.array_equal(self.arm_means, other.arm_means)
        )

    def __hash__(self) -> int:
        return hash((self.noise, self.noise_stddev, self.arm_means.shape, self.arm_means.tobytes()))

    @property
    def n_agents(self) -> int:
        """Number of agents N."""
        return int(self.arm_means.shape[0])

    @property
    def n_arms(self) -> int:
        """Number of arms M."""
        return int(self.arm_means.shape[1])

    @property
    def global_means(self) -> np.ndarray:
        """Global means mu_k = mean over agents, float64 of shape (n_arms,)."""
        return self.arm_means.mean(axis=0)

    @property
    def reward_bounds(self) -> tuple[float, float] | None:
        """``(0.0, 1.0)`` for Bernoulli rewards, None (unbounded) for Gaussian."""
        return (0.0, 1.0) if self.noise == "bernoulli" else None

    def sample_rewards(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw one trial's reward table, fully vectorized.

        Parameters
        ----------
        horizon : int
            Number of rounds T after the initial pulls, >= 1.
        rng : numpy.random.Generator
            The trial's environment stream. One ``rng.random`` (Bernoulli) or
            ``rng.standard_normal`` (Gaussian) call of the table's size is made.

        Returns
        -------
        ndarray of float64, shape (n_agents, horizon + 1, n_arms)
            ``[i, t, k]`` is the reward agent i observes if it pulls arm k at
            round t; row ``t = 0`` holds the initial pulls. Bernoulli entries are
            exactly 0.0 or 1.0.

        Raises
        ------
        ValueError
            If ``horizon < 1``.
        TypeError
            If ``horizon`` is not an integer or ``rng`` is not a Generator.
        """
        horizon = check_int_at_least("horizon", horizon, 1)
        check_generator("rng", rng)
        shape = (self.n_agents, horizon + 1, self.n_arms)
        means = self.arm_means[:, np.newaxis, :]
        if self.noise == "bernoulli":
            return (rng.random(shape) < means).astype(np.float64)
        return means + self.noise_stddev * rng.standard_normal(shape)


def paper_synthetic_bandit(
    n_agents: int,
    n_arms: int,
    *,
    rng: np.random.Generator,
    noise: str = "gaussian",
    max_tries: int = 1000,
) -> HeterogeneousBandit:
    """Draw local means as in Zhu et al.'s synthetic experiments (Section 5).

    The paper says mu_{i,k} "is generated randomly in [0, 1]" and "the rank of arms
    from each agent's perspective is different", without the distribution or a
    precise rule. This function presumes i.i.d. ``U[0, 1)`` means (Section
    5.1 is silent on the distribution) and redraws the whole (n_agents, n_arms) matrix until **both**

    1. the agents' rankings of the arms (``argsort`` of each row, descending) are
       pairwise distinct, which is the literal reading of the quoted sentence; and
    2. at least one agent's local best arm differs from the global best arm
       ``argmax(mean over agents)``, so that some agent cannot find the best arm
       without communication (the motivation of Section 2: "no single agent can
       learn the optimal decision without communication").

    Ties have probability zero under continuous draws. Rule 1 needs
    ``n_agents <= n_arms!``.

    Parameters
    ----------
    n_agents : int
        Number of agents N, >= 2 (the paper uses 3 and 10).
    n_arms : int
        Number of arms M, >= 2 (the paper uses 5 and 10).
    rng : numpy.random.Generator
        Randomness for the means; one ``rng.random((n_agents, n_arms))`` call per
        try.
    noise : {"gaussian", "bernoulli"}, default "gaussian"
        Reward model, see :class:`HeterogeneousBandit`. The paper's experiments use
        ``"gaussian"`` with unit variance; ``"bernoulli"`` is the bounded variant
        that the privacy analysis requires.
    max_tries : int, default 1000
        Number of draws before giving up, >= 1.

    Returns
    -------
    HeterogeneousBandit
        With ``noise_stddev = 1.0``.

    Raises
    ------
    ValueError
        If ``n_agents < 2``, ``n_arms < 2``, ``n_agents > n_arms!``, ``noise`` is
        unknown, ``max_tries < 1``, or no accepted draw occurs in ``max_tries``.
    TypeError
        If an integer argument is not an integer or ``rng`` is not a Generator.

    References
    ----------
    .. [1] Zhu et al. (2021), Section 5, "Synthetic data" (Section 5.1; whether to redraw the means per trial is the caller's choice).

    Examples
    --------
    >>> env = paper_synthetic_bandit(3, 5, rng=np.random.default_rng(0))
    >>> env.arm_means.shape, env.noise, env.reward_bounds
    ((3, 5), 'gaussian', None)
    """
    n_agents = check_int_at_least("n_agents", n_agents, 2)
    n_arms = check_int_at_least("n_arms", n_arms, 2)
    max_tries = check_int_at_least("max_tries", max_tries, 1)
    if noise not in NOISE_MODELS:
        raise ValueError(f"`noise` must be one of {list(NOISE_MODELS)}, got {noise!r}.")
    if n_arms < 20 and n_agents > math.factorial(n_arms):
        raise ValueError(
            f"`n_agents` must be <= n_arms! = {math.factorial(n_arms)} for the agents' "
            f"arm rankings to be pairwise distinct, got {n_agents}."
        )
    check_generator("rng", rng)
    for _ in range(max_tries):
        means = rng.random((n_agents, n_arms))
        rankings = np.argsort(-means, axis=1)
        distinct = np.unique(rankings, axis=0).shape[0] == n_agents
        biased = np.any(rankings[:, 0] != np.argmax(means.mean(axis=0)))
        if distinct and biased:
            return HeterogeneousBandit(arm_means=means, noise=noise)
    raise ValueError(
        f"no draw of U[0, 1) means with pairwise distinct rankings and a locally "
        f"biased agent in `max_tries`={max_tries} tries (n_agents={n_agents}, "
        f"n_arms={n_arms}); increase `max_tries`."
    )
