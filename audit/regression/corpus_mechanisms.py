"""The mechanisms of the known-broken corpus (:mod:`fedpriv.audit.regression.corpus`).

Each is vectorized: ``mechanism(dataset, n_samples, rng) -> ndarray (n_samples, ...)``,
and picklable (module-level functions, configured with ``functools.partial``).

**Noise is drawn with ``rng`` directly here, not through ``privacy/``.** The privacy
noise of a corpus mechanism *is* the thing under test, and the bugs live exactly in
how it is drawn (wrong scale, reused draws, missing clipping). Routing it through
the accountant would either refuse the bug or hide it. No toolkit algorithm may do
this; the corpus is a test fixture, not a mechanism library.
"""

from __future__ import annotations

import numpy as np
from fedpriv.privacy.accounting.tree import nodes_covering

__all__ = [
    "bounded_sum",
    "fresh_noise_prefix_sums",
    "gaussian_count",
    "half_difference",
    "laplace_count",
    "no_noise",
    "noisy_max",
    "per_agent_release",
    "shared_noise_pair",
    "sparse_vector",
    "synced_sum",
    "tree_nodes",
]


def laplace_count(
    dataset: float, n_samples: int, rng: np.random.Generator, *, scale: float
) -> np.ndarray:
    """``x + Lap(scale)``: ε = Δ/scale for a count with sensitivity Δ.

    Parameters
    ----------
    dataset : float
        The count x.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    return dataset + rng.laplace(0.0, scale, n_samples)


def gaussian_count(
    dataset: float, n_samples: int, rng: np.random.Generator, *, noise_stddev: float
) -> np.ndarray:
    """``x + N(0, σ²)``: (Δ/σ)-GDP.

    Parameters
    ----------
    dataset : float
        The count x.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    noise_stddev : float
        σ > 0, in the count's units.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    return dataset + rng.normal(0.0, noise_stddev, n_samples)


def no_noise(dataset: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """The raw value, repeated (B1/A11: the noise scale collapsed to 0).

    Parameters
    ----------
    dataset : float
        The count x.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    return np.full(n_samples, float(dataset))


def noisy_max(
    dataset: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    scale: float,
    return_value: bool,
) -> np.ndarray:
    """Report-noisy-max over counting queries; the index (correct) or the value (A3).

    Parameters
    ----------
    dataset : array_like of float, shape (k,)
        The k counting queries' answers.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    return_value : bool
        Release the noisy maximum's value (A3, not private at ε = 1/scale) instead
        of its index.

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    noisy = np.asarray(dataset, dtype=np.float64) + rng.laplace(
        0.0, scale, (n_samples, len(dataset))
    )
    return noisy.max(axis=1) if return_value else noisy.argmax(axis=1).astype(np.float64)


def sparse_vector(
    dataset: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    epsilon: float,
    variant: int,
    threshold: float = 0.0,
    cutoff: int = 1,
) -> np.ndarray:
    """Sparse vector technique, variants of Lyu, Su & Li (2017), Fig. 1; Δ = 1.

    Alg. 1 (correct): ρ ~ Lap(2/ε), ν_i ~ Lap(4c/ε), stop after c positives.
    Alg. 5: no query noise, never stops (not private for any ε).
    Alg. 6: query noise Lap(4/ε) but never stops (privacy degrades with the number
    of queries). Output: 1 (above), 0 (below), -1 (not answered after stopping).

    Parameters
    ----------
    dataset : array_like of float, shape (k,)
        The k queries' answers (sensitivity 1).
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    epsilon : float
        ε > 0 the variant is calibrated for.
    variant : {1, 5, 6}
        Algorithm number in Lyu, Su & Li (2017), Fig. 1.
    threshold : float
        The public threshold T.
    cutoff : int
        c >= 1, positives before Alg. 1 stops.

    Returns
    -------
    ndarray of float64, shape (n_samples, k)
        1.0, 0.0 or -1.0 per query.

    Raises
    ------
    ValueError
        If ``variant`` is not 1, 5 or 6.
    """
    queries = np.asarray(dataset, dtype=np.float64)
    k = queries.size
    rho = rng.laplace(0.0, 2.0 / epsilon, (n_samples, 1))
    if variant == 1:
        nu = rng.laplace(0.0, 4.0 * cutoff / epsilon, (n_samples, k))
    elif variant == 5:
        nu = np.zeros((n_samples, k))
    elif variant == 6:
        nu = rng.laplace(0.0, 4.0 / epsilon, (n_samples, k))
    else:
        raise ValueError(f"`variant` must be 1, 5 or 6, got {variant!r}.")
    above = queries + nu >= threshold + rho
    if variant != 1:
        return above.astype(np.float64)
    positives_before = np.cumsum(above, axis=1) - above
    answered = positives_before < cutoff
    return np.where(answered, above.astype(np.float64), -1.0)


def half_difference(outputs: np.ndarray) -> np.ndarray:
    """Attacker score for SVT outputs: positives in the first half minus the second.

    Parameters
    ----------
    outputs : ndarray of float64, shape (n, k)
        Outputs of :func:`sparse_vector`.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    k = outputs.shape[1]
    positive = outputs == 1.0
    return positive[:, : k // 2].sum(axis=1) - positive[:, k // 2 :].sum(axis=1).astype(np.float64)


def tree_nodes(
    dataset: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    scale: float,
    position: int = 1,
) -> np.ndarray:
    """Binary-tree counter (B2/B3): the noisy nodes covering round ``position``.

    The other nodes do not contain the changed reward, have the same distribution in
    both worlds and are independent of these, so leaving them out loses nothing.

    Parameters
    ----------
    dataset : array_like of float, shape (horizon,)
        One reward stream.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    position : int
        1-based round whose covering nodes are released, in [1, horizon].

    Returns
    -------
    ndarray of float64, shape (n_samples, depth)
        One column per node covering ``position``.
    """
    stream = np.asarray(dataset, dtype=np.float64)
    nodes = nodes_covering(position, stream.size)
    prefix = np.concatenate([[0.0], np.cumsum(stream)])
    sums = prefix[nodes] - prefix[nodes & (nodes - 1)]
    return sums + rng.laplace(0.0, scale, (n_samples, nodes.size))


def fresh_noise_prefix_sums(
    dataset: np.ndarray, n_samples: int, rng: np.random.Generator, *, scale: float
) -> np.ndarray:
    """B4: every round releases the running sum plus fresh Lap(scale).

    Parameters
    ----------
    dataset : array_like of float, shape (horizon,)
        One reward stream.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.

    Returns
    -------
    ndarray of float64, shape (n_samples, horizon)
    """
    prefix = np.cumsum(np.asarray(dataset, dtype=np.float64))
    return prefix + rng.laplace(0.0, scale, (n_samples, prefix.size))


def bounded_sum(
    dataset: np.ndarray, n_samples: int, rng: np.random.Generator, *, scale: float, clip: bool
) -> np.ndarray:
    """Sum of rewards declared in [0, 1] plus Lap(scale); B5 forgets to clip.

    Parameters
    ----------
    dataset : array_like of float, shape (n,)
        Rewards declared in [0, 1].
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    clip : bool
        Clip to [0, 1] before summing (the correct twin).

    Returns
    -------
    ndarray of float64, shape (n_samples,)
    """
    values = np.asarray(dataset, dtype=np.float64)
    total = np.clip(values, 0.0, 1.0).sum() if clip else values.sum()
    return total + rng.laplace(0.0, scale, n_samples)


def shared_noise_pair(
    dataset: np.ndarray, n_samples: int, rng: np.random.Generator, *, scale: float, reuse: bool
) -> np.ndarray:
    """Two statistics released with Laplace noise; B7 reuses one draw for both.

    Parameters
    ----------
    dataset : array_like of float, shape (m,)
        The statistics, m >= 1.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    reuse : bool
        Reuse the first noise draw for every statistic (B7).

    Returns
    -------
    ndarray of float64, shape (n_samples, m)
    """
    stats = np.asarray(dataset, dtype=np.float64)
    first = rng.laplace(0.0, scale, (n_samples, 1))
    noise = (
        np.repeat(first, stats.size, axis=1)
        if reuse
        else np.concatenate([first, rng.laplace(0.0, scale, (n_samples, stats.size - 1))], axis=1)
    )
    return stats + noise


def synced_sum(
    dataset: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    *,
    scale: float,
    trigger: float | None,
    fixed_round: int,
) -> np.ndarray:
    """An agent syncs its noisy local sum; returns (sync round, noisy sum at sync).

    B6 (``trigger`` set): the sync round is the first round whose *raw* running sum
    reaches ``trigger`` (FedUCB-style adaptive schedule), a channel the accountant
    never charges. Twin (``trigger=None``): a fixed round ``fixed_round``.

    Parameters
    ----------
    dataset : array_like of float, shape (horizon,)
        One agent's reward stream.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.
    trigger : float, optional
        Raw running sum that triggers the sync (B6); None for the fixed round.
    fixed_round : int
        1-based sync round of the twin, in [1, horizon].

    Returns
    -------
    ndarray of float64, shape (n_samples, 2)
        Sync round and noisy sum.
    """
    prefix = np.cumsum(np.asarray(dataset, dtype=np.float64))
    if trigger is None:
        t = fixed_round
    else:
        hits = np.flatnonzero(prefix >= trigger)
        t = int(hits[0]) + 1 if hits.size else prefix.size
    noisy = prefix[t - 1] + rng.laplace(0.0, scale, n_samples)
    return np.column_stack([np.full(n_samples, float(t)), noisy])


def per_agent_release(
    dataset: np.ndarray, n_samples: int, rng: np.random.Generator, *, scale: float
) -> np.ndarray:
    """Each agent releases its own value of one user plus Lap(scale) (B8).

    Parameters
    ----------
    dataset : array_like of float, shape (n_agents,)
        Each agent's value of the user.
    n_samples : int
        Number of independent runs (the batch axis), >= 1.
    rng : numpy.random.Generator
        Source of the noise.
    scale : float
        Laplace scale b > 0, in the statistic's units.

    Returns
    -------
    ndarray of float64, shape (n_samples, n_agents)
    """
    values = np.asarray(dataset, dtype=np.float64)
    return values + rng.laplace(0.0, scale, (n_samples, values.size))


# ---------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------
