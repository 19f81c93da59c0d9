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
        ``out[j, i] = stream_rng(root, trial=j, side=side, agent=i, stream=stream)``:
        the same states and the same spawned children, built from the entropy words
        the SeedSequence of each address assembles (:func:`_address_words`).
    """
    out = np.empty((n_trials, n_agents), dtype=object)
    words = _address_words(root, n_trials=n_trials, n_agents=n_agents, side=side, stream=stream)
    if words is None:
        for j in range(n_trials):
            for i in range(n_agents):
                out[j, i] = stream_rng(root, trial=j, side=side, agent=i, stream=stream)
        return out
    n = words.size - 4
    seed_sequence, bit_generator, generator = (
        np.random.SeedSequence,
        np.random.PCG64,
        np.random.Generator,
    )
    for j in range(n_trials):
        words[n] = j
        for i in range(n_agents):
            words[n + 2] = i
            # a copy each: a SeedSequence keeps its entropy object (spawn() reads it)
            out[j, i] = generator(bit_generator(seed_sequence(words.copy())))
    return out


def _uint32_words(value: object) -> list[int] | None:
    """The uint32 words SeedSequence makes of an int or a sequence of ints (None else).

    An int ``n >= 0`` is its little-endian 32-bit words (``0`` is one word); a
    sequence is its items' words in order (NumPy's ``_coerce_to_uint32_array``).
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        n = int(value)
        if n < 0:
            return None
        words = [n & 0xFFFFFFFF]
        n >>= 32
        while n:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
        return words
    if isinstance(value, (tuple, list)):
        words = []
        for item in value:
            item_words = _uint32_words(item)
            if item_words is None:
                return None
            words += item_words
        return words
    return None


def _address_words(
    root: np.random.SeedSequence, *, n_trials: int, n_agents: int, side: int, stream: Stream
) -> np.ndarray | None:
    """The entropy SeedSequence assembles for ``stream_rng(root, trial, side, agent,
    stream)``, with the trial and agent words at ``[-4]`` and ``[-2]`` (None: unknown).

    ``SeedSequence(e, spawn_key=k)`` mixes ``words(e)``, padded with zeros to its pool
    size (4) when ``k`` is not empty, followed by ``words(k)``; a SeedSequence given
    those words as its entropy and no spawn key has the same pool, hence the same
    generator, at a fifth of the cost (no spawn key to convert per stream). The words
    are checked once against ``stream_rng`` (address (0, 0)): on any difference, or
    an entropy or key this reading does not cover, the caller builds each stream with
    ``stream_rng``.
    """
    run, key = _uint32_words(root.entropy), _uint32_words(tuple(root.spawn_key))
    if run is None or key is None or n_trials < 1 or n_agents < 1:
        return None
    if max(n_trials, n_agents, int(side) + 1, int(stream) + 1) > 2**32:
        return None
    words = np.array(
        run + [0] * max(0, 4 - len(run)) + key + [0, int(side), 0, int(stream)], dtype=np.uint32
    )
    first = np.random.Generator(np.random.PCG64(np.random.SeedSequence(words.copy())))
    reference = stream_rng(root, trial=0, side=side, agent=0, stream=stream)
    if first.bit_generator.state != reference.bit_generator.state:
        return None
    return words
