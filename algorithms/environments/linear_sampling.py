"""Sampling internals of :mod:`fedpriv.algorithms.environments.linear` (decision sets and rewards).

See the module docstring of :mod:`fedpriv.algorithms.environments.linear` for the construction and the
addresses of the random streams; nothing here is part of the public API.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from fedpriv.algorithms.seeding import Stream, child_seed


class LinearSpec(Protocol):
    """What the samplers read of a :class:`~fedpriv.algorithms.environments.linear.LinearBandit`.

    A structural type, so this module does not import the module that imports it.
    """

    n_arms: int
    dim: int
    bound_x: float
    bound_y: float
    best_band: tuple[float, float]
    suboptimal_band: tuple[float, float]
    reward: str
    out_of_bounds: str


__all__ = [
    "CHUNK_ROUNDS",
    "LinearSpec",
    "checked_contexts",
    "checked_rewards",
    "draw_chunk",
    "orthonormal_frame",
    "stream_generator",
]

#: Rounds per generated chunk: the unit of reproducibility of the lazy tables.
CHUNK_ROUNDS = 32


def stream_generator(
    root: np.random.SeedSequence, trial: int, agent: int, index: int
) -> np.random.Generator:
    """The generator at ``(trial, 0, agent, Stream.ENVIRONMENT, index)`` below ``root``.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The tables' root.
    trial, agent : int
        The stream's trial and agent.
    index : int
        0 for θ* (drawn at agent 0), 1 for the agent's decision sets and rewards.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng(child_seed(root, trial, 0, agent, int(Stream.ENVIRONMENT), index))


def draw_chunk(
    spec: LinearSpec, theta: np.ndarray, frames: np.ndarray, rngs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The next ``CHUNK_ROUNDS`` decision sets, reward rows and ⟨x, θ*⟩ of every stream.

    Per stream, two draws in this fixed order: uniforms of shape
    ``(CHUNK_ROUNDS, 3K + 1)`` (each action's place in its band, its radius, its
    reward, and the best action's position), then the ``d - 1`` standard normals
    (float32) of each action's direction in θ*⊥. The transform is vectorized.

    Parameters
    ----------
    spec : LinearSpec
        Sizes and bounds.
    theta : ndarray of float64, shape (n_trials, dim)
        θ* of each trial.
    frames : ndarray of float64, shape (n_trials, dim, dim)
        Orthonormal frames whose first column is θ*/‖θ*‖.
    rngs : ndarray of object, shape (n_trials, n_agents)
        The streams' generators, advanced in place.

    Returns
    -------
    tuple of (ndarray, ndarray, ndarray)
        Contexts ``(CHUNK_ROUNDS, n_trials, n_agents, n_arms, dim)``, rewards and
        ⟨x, θ*⟩ ``(CHUNK_ROUNDS, n_trials, n_agents, n_arms)`` (round-major).
    """
    n_trials, agents = rngs.shape
    rounds, n_arms, dim, bound_x = CHUNK_ROUNDS, spec.n_arms, spec.dim, spec.bound_x
    uniforms = np.empty((n_trials, agents, rounds, 3 * n_arms + 1))
    normals = np.empty((n_trials, agents, rounds, n_arms, max(dim - 1, 0)), dtype=np.float32)
    for j in range(n_trials):
        for i in range(agents):
            rng = rngs[j, i]
            rng.random(out=uniforms[j, i])
            rng.standard_normal(out=normals[j, i], dtype=np.float32)
    # round-major storage (rounds, trials, agents, ...): an algorithm that walks the
    # rounds reads contiguous slices (the block is returned as a transposed view)
    uniforms = np.ascontiguousarray(np.moveaxis(uniforms, 2, 0))
    normals = np.ascontiguousarray(np.moveaxis(normals, 2, 0))
    u_value = uniforms[..., :n_arms]
    u_radius = uniforms[..., n_arms : 2 * n_arms]
    u_reward = uniforms[..., 2 * n_arms : 3 * n_arms]
    position = np.minimum((uniforms[..., -1] * n_arms).astype(np.int64), n_arms - 1)
    low, high = spec.suboptimal_band
    best_low, best_high = spec.best_band
    # the same two formulas as np.where(onehot, best, other), without computing both
    # everywhere: every action gets the "other" band, then the best action is rewritten
    values = low + (high - low) * u_value
    best = position[..., None]
    np.put_along_axis(
        values, best, best_low + (best_high - best_low) * np.take_along_axis(u_value, best, -1), -1
    )
    # x = Q c with Q = [θ*/‖θ*‖, basis of θ*⊥] orthonormal and c = (along, r w/‖w‖):
    # ⟨x, θ*⟩ = along ‖θ*‖ = value and ‖x‖² = along² + r² <= L².
    norm = np.linalg.norm(theta, axis=1)  # (n_trials,)
    along = values / norm[None, :, None, None]
    coefficients = np.empty((rounds, n_trials, agents, n_arms, dim))
    coefficients[..., 0] = along
    if dim > 1:
        lengths = np.sqrt(np.einsum("...e,...e->...", normals, normals, dtype=np.float64))
        lengths[lengths == 0.0] = 1.0
        # (1 - 1e-12) keeps ‖x‖ <= L despite float rounding
        # in place, the same operations: r_max = sqrt(max(L² - along², 0)) (1 - 1e-12),
        # scale = r_max u^(1/(d-1)) / ‖w‖
        scale = np.subtract(bound_x**2, along**2)
        np.maximum(scale, 0.0, out=scale)
        np.sqrt(scale, out=scale)
        scale *= 1.0 - 1e-12
        scale *= u_radius ** (1.0 / (dim - 1))
        scale /= lengths
        np.multiply(scale[..., None], normals, out=coefficients[..., 1:])
    # one (agents·K, d) @ (d, d) product per (round, trial) rather than per (round,
    # trial, agent): 10x fewer BLAS calls, the same per-row dot products
    contexts = np.matmul(
        coefficients.reshape(rounds, n_trials, agents * n_arms, dim), frames.swapaxes(-1, -2)
    ).reshape(rounds, n_trials, agents, n_arms, dim)
    mean = np.clip(values, 0.0, 1.0)
    if spec.reward == "bernoulli":
        rewards = (u_reward < mean).astype(np.float64)
    else:  # Beta(μ, 1-μ) by inversion of the stream's uniform (one draw per action)
        from scipy.special import betaincinv

        rewards = betaincinv(mean, 1.0 - mean, u_reward)
    return contexts, rewards, values  # each (rounds, n_trials, agents, ...)


def orthonormal_frame(unit: np.ndarray) -> np.ndarray:
    """An orthonormal basis (d, d) whose first column is the unit vector ``unit``.

    Parameters
    ----------
    unit : ndarray of float64, shape (d,)
        A unit vector.

    Returns
    -------
    ndarray of float64, shape (d, d)
    """
    q, _ = np.linalg.qr(np.column_stack([unit, np.eye(unit.size)]))
    return _first_column(q, unit)


def _first_column(q: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """``q`` with its first column's sign fixed to ``+unit``."""
    q = q[:, : unit.size].copy()
    if q[:, 0] @ unit < 0:
        q[:, 0] = -q[:, 0]
    return q


def checked_contexts(spec: LinearSpec, contexts: np.ndarray) -> np.ndarray:
    """Finite contexts with ``‖x‖ <= L`` (or scaled onto the ball when clipping).

    Parameters
    ----------
    spec : LinearSpec
        Bounds and the out-of-bounds rule (``"raise"`` or ``"clip"``).
    contexts : ndarray of float64, shape (..., dim)
        Contexts.

    Returns
    -------
    ndarray of float64, same shape

    Raises
    ------
    ValueError
        If a value is not finite, or a norm exceeds ``L`` under ``"raise"``.
    """
    if not np.all(np.isfinite(contexts)):
        raise ValueError("`contexts` must be finite (NaN or inf found).")
    norms = np.linalg.norm(contexts, axis=-1)
    limit = spec.bound_x * (1 + 1e-12)
    if np.any(norms > limit):
        if spec.out_of_bounds == "raise":
            raise ValueError(
                f"`contexts` must have norm <= L = {spec.bound_x}; found "
                f"{int(np.sum(norms > limit))} with norm up to {float(norms.max())!r}."
            )
        contexts = contexts * np.minimum(1.0, spec.bound_x / np.maximum(norms, 1e-300))[..., None]
    return contexts


def checked_rewards(spec: LinearSpec, rewards: np.ndarray) -> np.ndarray:
    """Finite rewards with ``|y| <= B`` (or clipped to [-B, B]).

    Parameters
    ----------
    spec : LinearSpec
        Bounds and the out-of-bounds rule.
    rewards : ndarray of float64
        Rewards.

    Returns
    -------
    ndarray of float64, same shape

    Raises
    ------
    ValueError
        If a value is not finite, or exceeds ``B`` in absolute value under ``"raise"``.
    """
    if not np.all(np.isfinite(rewards)):
        raise ValueError("`rewards` must be finite (NaN or inf found).")
    if np.any(np.abs(rewards) > spec.bound_y):
        if spec.out_of_bounds == "raise":
            raise ValueError(
                f"`rewards` must satisfy |y| <= B = {spec.bound_y}; found "
                f"{float(np.abs(rewards).max())!r}."
            )
        rewards = np.clip(rewards, -spec.bound_y, spec.bound_y)
    return rewards
