"""One SeedSequence tree per run, with fixed addresses for every random stream.

``stream_rng(root, trial=j, side=s, agent=i, stream=Stream.NOISE)`` is the same generator
whatever the number of trials or agents, because it is addressed by its spawn key
(``SeedSequence(e, spawn_key=(j,)) == SeedSequence(e).spawn(j + 1)[j]``). ``side`` is 0
for the dataset D and 1 for its neighbor D' in an audit; only the privacy-noise and
policy streams should differ between the two sides (STYLE §6).
"""

from __future__ import annotations

import enum
import numbers

import numpy as np

__all__ = ["Stream", "as_seed_sequence", "stream_rng", "stream_rngs"]


class Stream(enum.IntEnum):
    """Sources of randomness of a run."""

    ENVIRONMENT = 0
    NEIGHBOR = 1
    POLICY = 2
    NOISE = 3
    NETWORK = 4


def as_seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """The root SeedSequence of an entry point's ``seed``.

    Parameters
    ----------
    seed : int or SeedSequence
        A non-negative int, or a SeedSequence returned as is.

    Returns
    -------
    numpy.random.SeedSequence

    Raises
    ------
    TypeError
        If ``seed`` is neither a non-negative int nor a SeedSequence.
    ValueError
        If ``seed`` is a negative int.
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"`seed` must be an int or a SeedSequence, got {type(seed).__name__}.")
    if seed < 0:
        raise ValueError(f"`seed` must be >= 0, got {seed}.")
    return np.random.SeedSequence(int(seed))


def stream_rng(
    root: np.random.SeedSequence, *, trial: int, side: int = 0, agent: int = 0, stream: Stream
) -> np.random.Generator:
    """The generator at address ``(trial, side, agent, stream)`` below ``root``.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The run's root (:func:`as_seed_sequence`).
    trial : int
        Trial index, >= 0.
    side : int, default 0
        0 for the world D, 1 for D' in an audit.
    agent : int, default 0
        Agent index, >= 0.
    stream : Stream
        Which stream (ENVIRONMENT, NEIGHBOR, POLICY or NOISE).

    Returns
    -------
    numpy.random.Generator
        A fresh generator; the same address always gives the same stream, whatever
        other streams were drawn.
    """
    key = tuple(root.spawn_key) + (int(trial), int(side), int(agent), int(stream))
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=key))


def stream_rngs(
    root: np.random.SeedSequence, *, n_trials: int, n_agents: int, side: int = 0, stream: Stream
) -> np.ndarray:
    """Object array (n_trials, n_agents) of the generators ``stream_rng(...)``.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The run's root (:func:`as_seed_sequence`).
    n_trials : int
        Number of trials, >= 0.
    n_agents : int
        Number of agents, >= 0.
    side : int, default 0
        0 for the world D, 1 for D' in an audit.
    stream : Stream
        Which stream.

    Returns
    -------
    ndarray of object, shape (n_trials, n_agents)
        ``out[j, i] = stream_rng(root, trial=j, side=side, agent=i, stream=stream)``.
    """
    out = np.empty((n_trials, n_agents), dtype=object)
    for j in range(n_trials):
        for i in range(n_agents):
            out[j, i] = stream_rng(root, trial=j, side=side, agent=i, stream=stream)
    return out
