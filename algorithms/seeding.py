"""One SeedSequence tree per run, with fixed addresses for every random stream.

``stream_rng(root, trial=j, side=s, agent=i, stream=Stream.NOISE)`` is the same generator
whatever the number of trials or agents, because it is addressed by its spawn key
(``SeedSequence(e, spawn_key=(j,)) == SeedSequence(e).spawn(j + 1)[j]``). ``side`` is 0
for the dataset D and 1 for its neighbor D' in an audit; only the privacy-noise and
policy streams should differ between the two sides (CONTRIBUTING.md, Seeding).
"""

from __future__ import annotations

import enum
import numbers

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

__all__ = [
    "Stream",
    "as_seed_sequence",
    "child_seed",
    "spawn_stream_rngs",
    "stream_rng",
    "stream_rngs",
]


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


def child_seed(seed: int | np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """The SeedSequence at address ``keys`` below ``seed``: the one way to address a child.

    The child's spawn key is the parent's own key followed by ``keys``, so a child of a
    child never collides with a child of the root, and ``child_seed(root, i)`` equals
    ``root.spawn(i + 1)[i]`` without spawning (NumPy keeps ``entropy`` and
    ``pool_size`` and appends the index to ``spawn_key``). For an int ``seed`` (spawn
    key ``()``), ``child_seed(seed, *keys)`` is ``SeedSequence(seed, spawn_key=keys)``.

    Parameters
    ----------
    seed : int or SeedSequence
        The parent (an int is read by :func:`as_seed_sequence`; any spawnable seed
        sequence with ``entropy``, ``spawn_key`` and ``pool_size`` is taken as is).
    *keys : int
        The child's address below ``seed``, each >= 0; none gives ``seed``'s own address.

    Returns
    -------
    numpy.random.SeedSequence

    Raises
    ------
    TypeError
        If ``seed`` is neither a non-negative int nor a SeedSequence.
    ValueError
        If ``seed`` or a key is negative.

    Examples
    --------
    >>> import numpy as np
    >>> root = np.random.SeedSequence(7)
    >>> child_seed(root, 2).spawn_key == root.spawn(3)[2].spawn_key
    True
    >>> child_seed(child_seed(root, 2), 0).spawn_key
    (2, 0)
    """
    root = seed if isinstance(seed, ISpawnableSeedSequence) else as_seed_sequence(seed)
    address = tuple(int(k) for k in keys)
    if any(k < 0 for k in address):
        raise ValueError(f"`keys` must be integers >= 0, got {keys!r}.")
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, *address), pool_size=root.pool_size
    )


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
    return np.random.default_rng(child_seed(root, trial, side, agent, int(stream)))


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
    keys = _address_grid(n_trials, n_agents, side, stream)
    return _generators(root, keys).reshape(n_trials, n_agents)


def spawn_stream_rngs(
    root: np.random.SeedSequence,
    *,
    n_trials: int,
    n_agents: int,
    n_children: int,
    side: int = 0,
    stream: Stream,
) -> np.ndarray:
    """Object array (n_trials, n_agents, n_children) of the children of ``stream_rng(...)``.

    ``out[j, i, k]`` is ``stream_rng(root, trial=j, side=side, agent=i,
    stream=stream).spawn(n_children)[k]`` (numpy's ``Generator.spawn``: address
    ``(..., trial, side, agent, stream, k)``), built without the parent generators.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The run's root (:func:`as_seed_sequence`).
    n_trials, n_agents : int
        Numbers of trials and agents, >= 0.
    n_children : int
        Children per (trial, agent), >= 0.
    side : int, default 0
        0 for the world D, 1 for D' in an audit.
    stream : Stream
        Which stream.

    Returns
    -------
    ndarray of object, shape (n_trials, n_agents, n_children)
    """
    keys = _address_grid(n_trials, n_agents, side, stream)
    children = np.arange(n_children, dtype=np.int64)
    keys = np.concatenate(
        [np.repeat(keys, n_children, axis=0), np.tile(children, keys.shape[0])[:, None]], axis=1
    )
    return _generators(root, keys).reshape(n_trials, n_agents, n_children)


# ---------------------------------------------------------------- many generators at once
# numpy's SeedSequence (NEP 19; numpy/random/bit_generator.pyx) hashes its entropy and
# spawn key into a pool of 4 uint32 words, from which PCG64 takes 4 uint64 words. For
# thousands of addresses that differ only in their spawn key the per-object cost
# (~30 µs) dominates a batch of short runs, so the hash below runs once over all the
# addresses as uint32 array arithmetic (the same operations, wrapping mod 2**32), and
# each PCG64 seeds itself from its precomputed words through `_PrecomputedSeed`.
# Tests compare every generator with `stream_rng` bit for bit.
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_MASK32 = 0xFFFFFFFF
_POOL_SIZE = 4  # numpy's DEFAULT_POOL_SIZE


def _address_grid(n_trials: int, n_agents: int, side: int, stream: Stream) -> np.ndarray:
    """Spawn-key tails ``(trial, side, agent, stream)``, int64 (n_trials * n_agents, 4)."""
    trial = np.repeat(np.arange(int(n_trials), dtype=np.int64), int(n_agents))
    agent = np.tile(np.arange(int(n_agents), dtype=np.int64), int(n_trials))
    return np.column_stack(
        [trial, np.full_like(trial, int(side)), agent, np.full_like(trial, int(stream))]
    )


def _words(value: int) -> list[int] | None:
    """numpy's uint32 words of a non-negative int (least significant first; 0 -> [0])."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        return None
    value, words = int(value), []
    while True:
        words.append(value & _MASK32)
        value >>= 32
        if not value:
            return words


def _generators(root: np.random.SeedSequence, tails: np.ndarray) -> np.ndarray:
    """Flat object array of ``default_rng(SeedSequence(root.entropy, spawn_key=root.spawn_key
    + tuple(tail)))`` for every row ``tail`` of ``tails``."""
    out = np.empty(tails.shape[0], dtype=object)
    entropy = _words(root.entropy)
    prefix = [_words(k) for k in root.spawn_key]
    simple = (
        entropy is not None
        and root.pool_size == _POOL_SIZE
        and all(w is not None and len(w) == 1 for w in prefix)
        and (tails.size == 0 or (int(tails.min()) >= 0 and int(tails.max()) <= _MASK32))
    )
    if not simple:  # any other root: numpy's own objects
        for row, tail in enumerate(tails.tolist()):
            out[row] = np.random.default_rng(child_seed(root, *tail))
        return out
    # get_assembled_entropy: run entropy padded to the pool size (a spawn key is given)
    run = entropy + [0] * max(0, _POOL_SIZE - len(entropy))
    n = tails.shape[0]
    assembled = np.empty((n, len(run) + len(prefix) + tails.shape[1]), dtype=np.uint32)
    assembled[:, : len(run)] = run
    assembled[:, len(run) : len(run) + len(prefix)] = [w[0] for w in prefix]
    assembled[:, len(run) + len(prefix) :] = tails
    state = _generate_state(_mix_entropy(assembled))
    base, entropy = tuple(root.spawn_key), root.entropy
    generator, pcg64, seed = np.random.Generator, np.random.PCG64, _PrecomputedSeed
    for row, (tail, words) in enumerate(zip(tails.tolist(), state)):
        out[row] = generator(pcg64(seed(entropy, base, tail, words)))
    return out


def _mix_entropy(entropy: np.ndarray) -> np.ndarray:
    """SeedSequence.mix_entropy over rows: the uint32 pool, shape (n, 4)."""
    n, length = entropy.shape
    hash_const = [_INIT_A]

    def hashmix(value: np.ndarray) -> np.ndarray:
        value = value ^ np.uint32(hash_const[0])
        hash_const[0] = (hash_const[0] * _MULT_A) & _MASK32
        value = value * np.uint32(hash_const[0])
        return value ^ (value >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = x * np.uint32(_MIX_MULT_L) - y * np.uint32(_MIX_MULT_R)
        return result ^ (result >> np.uint32(16))

    mixer = np.empty((n, _POOL_SIZE), dtype=np.uint32)
    zero = np.zeros(n, dtype=np.uint32)
    for i in range(_POOL_SIZE):
        mixer[:, i] = hashmix(entropy[:, i] if i < length else zero)
    for i_src in range(_POOL_SIZE):
        for i_dst in range(_POOL_SIZE):
            if i_src != i_dst:
                mixer[:, i_dst] = mix(mixer[:, i_dst], hashmix(mixer[:, i_src]))
    for i_src in range(_POOL_SIZE, length):
        for i_dst in range(_POOL_SIZE):
            mixer[:, i_dst] = mix(mixer[:, i_dst], hashmix(entropy[:, i_src]))
    return mixer


def _generate_state(pool: np.ndarray) -> np.ndarray:
    """SeedSequence.generate_state(4, np.uint64) over rows: shape (n, 4), uint64."""
    hash_const = _INIT_B
    words = np.empty((pool.shape[0], 8), dtype=np.uint32)
    for i in range(8):
        value = pool[:, i % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_B) & _MASK32
        value = value * np.uint32(hash_const)
        words[:, i] = value ^ (value >> np.uint32(16))
    return np.ascontiguousarray(words.astype("<u4").view("<u8").astype(np.uint64))


_UINT64 = np.dtype(np.uint64)


class _PrecomputedSeed(ISpawnableSeedSequence):
    """A SeedSequence whose ``generate_state(4, uint64)`` is already known.

    PCG64 seeds itself from ``generate_state(4, np.uint64)``; every other use
    (other word counts, ``spawn``, ``entropy``, ``spawn_key``) goes to the real
    ``SeedSequence(entropy, spawn_key=spawn_key)``, built on first use.
    """

    __slots__ = ("_base", "_entropy", "_real", "_state", "_tail")

    def __init__(
        self, entropy: int, base: tuple[int, ...], tail: list[int], state: np.ndarray
    ) -> None:
        # The spawn key base + tail is assembled on first use only (most generators
        # never need their SeedSequence).
        self._entropy, self._base, self._tail, self._state = entropy, base, tail, state
        self._real = None

    def _sequence(self) -> np.random.SeedSequence:
        if self._real is None:
            key = self._base + tuple(self._tail)
            self._real = np.random.SeedSequence(self._entropy, spawn_key=key)
        return self._real

    def generate_state(self, n_words: int, dtype=np.uint32) -> np.ndarray:
        # PCG64 passes the type itself; the identity test spares two dtype constructions
        # (half this call's cost, per generator).
        if n_words == 4 and (dtype is np.uint64 or np.dtype(dtype) == _UINT64):
            return self._state.copy()
        return self._sequence().generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:
        return self._sequence().spawn(n_children)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._sequence(), name)
