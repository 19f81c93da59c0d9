"""Huber ε-contamination and the split-sample trimmed mean (Dubey & Pentland, AAMAS 2020, §4).

The AAMAS text lost every formula; this module implements fedpriv's reconstruction of
§4.1's Robust Trimmed Estimator, eq. 8 [reconstructed with medium confidence] (Prasad, Balakrishnan & Ravikumar 2019, univariate robust
mean). The contamination rate is called ``contamination`` (the paper's ε; ``epsilon``
is reserved for privacy; the paper uses ε for both).

Trimmed mean of ``2n`` samples, contamination ``ε_c``, confidence ``δ`` [reconstructed with medium confidence]::

    ε̃ = max(ε_c, ln(1/δ)/n)
    τ = 2ε̃ + 2 sqrt(ε̃ ln(1/δ)/n) + ln(1/δ)/n           (defined only if τ < 1/2)
    Î = shortest interval holding m = ⌈n(1 - τ)⌉ points of the first half Z1
    μ̂ = (1/n) Σ_{z ∈ Z2} z 1{z ∈ Î}                    (normalization "n", Prasad)
      or the mean of Z2 ∩ Î                            (normalization "inside", RUME)

Resolved choices (ours, documented): ``m = ⌈n(1 - τ)⌉`` points ("an interval
containing n(1 - τ) points", so at least that many; the RUME reference code writes
``[z(i), z(i+m)]`` with ``⌊n(1 - τ)⌋``); ties between equally short intervals go to
the lowest one. The split ``"alternate"`` puts samples 0, 2, 4, ... (arrival order) in
Z1 and 1, 3, 5, ... in Z2, so the halves grow one sample at a time (split by arrival
order, fedpriv's reading of §4.1's two halves); ``"halves"`` is the RUME code's split (first n, next n).

Confidence width (Thm 4.1, reconstructed with medium confidence; constants U): ``σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ)/n))``.
Defaults ``c1 = 4, c2 = 2`` with ``σ = 1/2`` are our choice for rewards in [0, 1]:
``σ c2 sqrt(ln(1/δ)/n) = sqrt(ln(1/δ)/n) >= sqrt(ln(2/δ)/(2n))`` (Hoeffding, two
sided, δ <= 1/2), and ``σ c1 sqrt(ε_c) = 2 sqrt(ε_c) >= 4 ε_c`` bounds the bias of a
contaminated interval of width <= 1 plus the trimmed clean tail for ε_c < 1/4.

Contaminating distributions ``Q`` (:class:`Contamination`): a point mass, a discrete
uniform on a grid, a shift of the true reward, the complement Bernoulli(1 - μ_k) and
an adversary that reports 1 for every suboptimal arm and 0 for the best arm. Every Q
has finite support, so a sample set can be held as counts over a finite sorted
alphabet and :func:`histogram_trimmed_mean` computes the same estimator exactly,
vectorized over cells (the Byzantine algorithm uses it every round).

Length: one estimator and the contamination models it is tested against; the sample
and histogram forms must stay side by side so that they compute the same estimator,
and each public function carries its full numpydoc sections.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from fedpriv.privacy.checks import check_int_at_least, check_positive, check_real

__all__ = [
    "CONTAMINATION_KINDS",
    "NORMALIZATIONS",
    "SPLITS",
    "Contamination",
    "check_contamination",
    "cumsum_last",
    "histogram_trimmed_mean",
    "histogram_trimmed_mean_unchecked",
    "trim_fraction",
    "trimmed_mean",
    "trimmed_mean_width",
    "trimmed_mean_width_unchecked",
]

CONTAMINATION_KINDS = ("point", "uniform", "shift", "complement", "adversarial")
NORMALIZATIONS = ("n", "inside")
SPLITS = ("alternate", "halves")


def check_contamination(value: object, name: str = "contamination") -> float:
    """Return a contamination rate in [0, 1/4) (the trimmed mean is undefined beyond).

    Parameters
    ----------
    value : float
        The rate ε_c.
    name : str
        The parameter's name in the message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the value is outside [0, 1/4): with ε_c >= 1/4, ``τ >= 2 ε_c >= 1/2``
        and no interval is trimmed (fedpriv's derivation; contrary to §4.2's remark on overestimating ε).

    Examples
    --------
    >>> check_contamination(0.3)
    Traceback (most recent call last):
    ...
    ValueError: `contamination` must be in [0, 0.25) (the trimmed mean is undefined for contamination >= 1/4), got 0.3.
    """
    value = check_real(name, value)
    if not 0.0 <= value < 0.25:
        raise ValueError(
            f"`{name}` must be in [0, 0.25) (the trimmed mean is undefined for "
            f"contamination >= 1/4), got {value!r}."
        )
    return value


def _check_delta(delta: object) -> float:
    delta = check_real("delta", delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"`delta` must be in (0, 1), got {delta!r}.")
    return delta


def trim_fraction(n: object, contamination: float, delta: float) -> np.ndarray:
    """τ of the trimmed mean for half-size ``n`` (``inf`` where ``n == 0``).

    Parameters
    ----------
    n : array_like of int
        Samples per half, >= 0.
    contamination : float
        Assumed ε_c in [0, 1/4).
    delta : float
        Confidence δ in (0, 1).

    Returns
    -------
    ndarray of float64, shape of ``n``
        ``τ``; the estimator is defined where ``τ < 1/2``.

    Examples
    --------
    >>> float(trim_fraction(1000, 0.0, math.exp(-10)).round(4))
    0.05
    """
    contamination = check_contamination(contamination)
    log_term = math.log(1.0 / _check_delta(delta))
    return _trim_fraction(np.asarray(n, dtype=np.float64), contamination, log_term)


def _trim_fraction(n: np.ndarray, contamination: float, log_term: float) -> np.ndarray:
    """:func:`trim_fraction` of float ``n`` with ``log_term = ln(1/δ)``, unchecked."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(n > 0, log_term / np.maximum(n, 1.0), np.inf)
        eps = np.maximum(contamination, ratio)
        tau = 2.0 * eps + 2.0 * np.sqrt(eps * ratio) + ratio
    return np.where(n > 0, tau, np.inf)


def trimmed_mean_width(
    n: object,
    contamination: float,
    delta: float,
    *,
    sigma: float = 0.5,
    c1: float = 4.0,
    c2: float = 2.0,
) -> np.ndarray:
    """Confidence width ``σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ)/n))`` (Thm 4.1, reconstructed with medium confidence).

    ``inf`` where ``n == 0``. Constants are unknown in the paper [U]; see the module
    docstring for the defaults.

    Parameters
    ----------
    n : array_like of int
        Sample counts, >= 0.
    contamination : float
        ε_c in [0, 1/4).
    delta : float
        δ in (0, 1) of the bound.
    sigma : float
        Sub-Gaussian scale σ of the rewards.
    c1, c2 : float
        The theorem's constants.

    Returns
    -------
    ndarray of float64, shape of ``n``

    Examples
    --------
    >>> float(trimmed_mean_width(100, 0.0, math.exp(-1)))
    0.1
    """
    contamination = check_contamination(contamination)
    log_term = math.log(1.0 / _check_delta(delta))
    sigma = check_positive("sigma", sigma)
    c1 = check_positive("c1", c1)
    c2 = check_positive("c2", c2)
    return trimmed_mean_width_unchecked(
        np.asarray(n, dtype=np.float64), contamination, log_term, sigma, c1, c2
    )


def trimmed_mean_width_unchecked(
    n: np.ndarray, contamination: float, log_term: float, sigma: float, c1: float, c2: float
) -> np.ndarray:
    """:func:`trimmed_mean_width` of float ``n`` with ``log_term = ln(1/δ)``, unchecked.

    The Byzantine algorithm's per-round form: its arguments were checked once per run.

    Parameters
    ----------
    n : ndarray of float64, any shape
        Sample counts, >= 0.
    contamination : float
        ε_c in [0, 1/4).
    log_term : float
        ``ln(1/δ)`` of the bound, > 0.
    sigma, c1, c2 : float
        Sub-Gaussian scale σ and the theorem's constants, > 0.

    Returns
    -------
    ndarray of float64, shape of ``n``
        ``σ (c1 sqrt(ε_c) + c2 sqrt(ln(1/δ)/n))``, ``inf`` where ``n == 0`` (Thm 4.1).
    """
    with np.errstate(divide="ignore"):
        width = sigma * (c1 * math.sqrt(contamination) + c2 * np.sqrt(log_term / n))
    return np.where(n > 0, width, np.inf)


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {allowed}, got {value!r}.")
    return value


def trimmed_mean(
    samples: object,
    contamination: float,
    delta: float,
    *,
    normalization: str = "n",
    split: str = "alternate",
) -> np.ndarray:
    """Split-sample trimmed mean of each row of ``samples`` (reference implementation).

    Parameters
    ----------
    samples : array_like of float64, shape (..., n_samples)
        Samples of ``(1 - ε_c) P + ε_c Q`` in arrival order; ``n = n_samples // 2``
        per half (an odd last sample is unused). Finite.
    contamination : float
        Assumed ε_c in [0, 1/4).
    delta : float
        Confidence δ in (0, 1).
    normalization : {"n", "inside"}
        Divide the Z2 ∩ Î sum by ``n`` (Prasad et al.) or by ``|Z2 ∩ Î|`` (RUME).
    split : {"alternate", "halves"}
        See the module docstring.

    Returns
    -------
    ndarray of float64, shape (...)
        μ̂; NaN where ``τ >= 1/2`` (too few samples for δ) or ``Z2 ∩ Î`` is empty
        under ``"inside"``.

    Raises
    ------
    ValueError
        If ``contamination`` is not in [0, 1/4), ``delta`` not in (0, 1), samples not
        finite, or an unknown option.

    Examples
    --------
    >>> x = np.r_[np.zeros(300), np.ones(300), np.full(60, 50.0)]
    >>> z = np.random.default_rng(0).permutation(x)
    >>> float(trimmed_mean(z, 0.1, 0.01, normalization="inside").round(1))
    0.5
    """
    contamination = check_contamination(contamination)
    delta = _check_delta(delta)
    _check_choice("normalization", normalization, NORMALIZATIONS)
    _check_choice("split", split, SPLITS)
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim < 1:
        raise ValueError("`samples` must have at least one axis (the sample axis).")
    if not np.all(np.isfinite(samples)):
        raise ValueError("`samples` must be finite.")
    n = samples.shape[-1] // 2
    batch = samples.shape[:-1]
    tau = float(trim_fraction(n, contamination, delta))
    if not tau < 0.5:
        return np.full(batch, np.nan)
    if split == "alternate":
        z1, z2 = samples[..., 0 : 2 * n : 2], samples[..., 1 : 2 * n : 2]
    else:
        z1, z2 = samples[..., :n], samples[..., n : 2 * n]
    m = min(n, math.ceil(n * (1.0 - tau) - 1e-12))
    z1 = np.sort(z1, axis=-1)
    widths = z1[..., m - 1 :] - z1[..., : n - m + 1]
    start = np.argmin(widths, axis=-1)[..., None]
    low = np.take_along_axis(z1, start, axis=-1)
    high = np.take_along_axis(z1, start + m - 1, axis=-1)
    inside = (z2 >= low) & (z2 <= high)
    total = np.where(inside, z2, 0.0).sum(axis=-1)
    if normalization == "n":
        return total / n
    count = inside.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def histogram_trimmed_mean(
    counts1: np.ndarray,
    counts2: np.ndarray,
    alphabet: np.ndarray,
    contamination: float,
    delta: float,
    *,
    normalization: str = "n",
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`trimmed_mean` of samples held as counts over a sorted finite alphabet.

    Parameters
    ----------
    counts1, counts2 : ndarray of int64, shape (..., n_values)
        Counts of each alphabet value in Z1 and Z2; both halves must hold the same
        number ``n`` of samples per cell.
    alphabet : ndarray of float64, shape (n_values,)
        Strictly increasing values.
    contamination, delta, normalization
        As in :func:`trimmed_mean`.

    Returns
    -------
    estimate : ndarray of float64, shape (...)
        μ̂ (NaN where undefined, as :func:`trimmed_mean`).
    n : ndarray of int64, shape (...)
        Samples per half.

    Raises
    ------
    ValueError
        If the halves differ in size, or as :func:`trimmed_mean`.
    """
    contamination = check_contamination(contamination)
    delta = _check_delta(delta)
    _check_choice("normalization", normalization, NORMALIZATIONS)
    c1 = np.cumsum(counts1, axis=-1)
    c2 = np.cumsum(counts2, axis=-1)
    if np.any(c2[..., -1] != c1[..., -1]):
        raise ValueError("`counts1` and `counts2` must hold the same number of samples per cell.")
    return histogram_trimmed_mean_unchecked(
        c1, counts2, c2, alphabet, contamination, math.log(1.0 / delta), normalization
    )


_SMALL_ALPHABET = 8


def cumsum_last(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.cumsum(values, axis=-1, out=out)``, looped over a small last axis.

    The same sequential additions as ``np.add.accumulate`` (bit-identical for floats).

    Parameters
    ----------
    values : ndarray, shape (..., n_values)
        The values to add up along the last axis.
    out : ndarray, shape of ``values``, optional
        Where to write the sums (a new array when omitted).

    Returns
    -------
    ndarray, shape of ``values``
        The running sums along the last axis (``out`` when given).
    """
    n_values = values.shape[-1]
    if n_values > _SMALL_ALPHABET:
        return np.cumsum(values, axis=-1, out=out)
    if out is None:
        out = np.empty_like(values)
    out[..., 0] = values[..., 0]
    for j in range(1, n_values):
        np.add(out[..., j - 1], values[..., j], out=out[..., j])
    return out


def _first_argmin(width: np.ndarray) -> np.ndarray:
    """``np.argmin(width, axis=1)`` (first minimum; no NaN), looped over a small last axis."""
    n_values = width.shape[1]
    if n_values > _SMALL_ALPHABET:
        return np.argmin(width, axis=1)
    best = width[:, 0].copy()
    left = np.zeros(width.shape[0], dtype=np.int64)
    for i in range(1, n_values):
        better = width[:, i] < best
        left[better] = i
        np.minimum(best, width[:, i], out=best)
    return left


def histogram_trimmed_mean_unchecked(
    c1: np.ndarray,
    counts2: np.ndarray,
    c2: np.ndarray,
    alphabet: np.ndarray,
    contamination: float,
    log_term: float,
    normalization: str,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`histogram_trimmed_mean` from the cumulative counts ``c1``, ``c2``, unchecked.

    ``log_term = ln(1/δ)``; the halves must hold the same number of samples per cell.
    The Byzantine algorithm's per-round form: its arguments were checked once per run.

    Parameters
    ----------
    c1, c2 : ndarray of int64, shape (..., n_values)
        Cumulative counts over ``alphabet`` of the first (Z1) and second (Z2) half.
    counts2 : ndarray of int64, shape (..., n_values)
        Counts over ``alphabet`` of the second half.
    alphabet : ndarray of float64, shape (n_values,)
        The sorted values the samples can take.
    contamination : float
        ε_c in [0, 1/4).
    log_term : float
        ``ln(1/δ)``, > 0.
    normalization : str
        One of ``NORMALIZATIONS``.

    Returns
    -------
    estimate : ndarray of float64, shape ``c1.shape[:-1]``
        The trimmed mean per cell (NaN where it is undefined).
    n : ndarray of int64, shape ``c1.shape[:-1]``
        Samples per half.
    """
    n = c1[..., -1]
    tau = _trim_fraction(n.astype(np.float64), contamination, log_term)
    defined = tau < 0.5
    m = np.where(
        defined, np.minimum(n, np.ceil(n * (1.0 - np.where(defined, tau, 0.0)) - 1e-12)), 0
    )
    m = m.astype(np.int64)
    n_values = alphabet.size
    flat = c1.reshape(-1, n_values)
    rows = flat.shape[0]
    row_index = np.arange(rows)
    before = np.zeros_like(flat)
    before[:, 1:] = flat[:, :-1]
    need = before + m.reshape(-1, 1)  # cumulative count to reach from left index i
    # right end j(i): first index with flat[j] >= need[i] = number of j with flat[j] < need[i]
    if n_values <= _SMALL_ALPHABET:
        right = np.zeros((rows, n_values), dtype=np.int64)
        for j in range(n_values):
            right += flat[:, j : j + 1] < need
    else:  # one searchsorted; row offsets keep rows apart
        offset = (row_index * (int(n.max(initial=0)) + 1))[:, None]
        right = np.searchsorted((flat + offset).ravel(), (need + offset).ravel(), side="left")
        right = right.reshape(rows, n_values) - (row_index * n_values)[:, None]
    width = np.where(
        right < n_values, alphabet[np.minimum(right, n_values - 1)] - alphabet[None, :], np.inf
    )
    left = _first_argmin(width)
    right_end = np.minimum(right.reshape(-1)[row_index * n_values + left], n_values - 1)
    weighted = np.zeros((rows, n_values + 1))
    cumsum_last((counts2 * alphabet).reshape(rows, n_values), out=weighted[:, 1:])
    base = row_index * (n_values + 1)
    weighted = weighted.reshape(-1)
    total = weighted[base + right_end + 1] - weighted[base + left]
    n_flat = n.reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if normalization == "n":
            estimate = total / np.maximum(n_flat, 1)
        else:
            flat2 = np.zeros((rows, n_values + 1), dtype=np.int64)
            flat2[:, 1:] = c2.reshape(rows, n_values)
            flat2 = flat2.reshape(-1)
            inside = flat2[base + right_end + 1] - flat2[base + left]
            estimate = np.where(inside > 0, total / np.maximum(inside, 1), np.nan)
    estimate = np.where(defined.reshape(-1), estimate, np.nan)
    return estimate.reshape(n.shape), n


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Contamination:
    """Huber ε-contamination of the rewards that byzantine agents send (§4, eq. 7).

    With probability ``rate`` a byzantine agent's message carries a draw of ``Q``
    instead of its reward (independently per message, corruption at the source
    only, §4: 'any corruption occurs only at the source'). Byzantine agents choose arms honestly, use their
    true rewards themselves, and count in the group regret (our choices; §4 leaves them open).

    Parameters
    ----------
    rate : float
        Contamination probability ε_c in [0, 1).
    kind : {"point", "uniform", "shift", "complement", "adversarial"}
        ``point``: Q = δ_value. ``uniform``: uniform on ``n_levels`` equally spaced
        points of ``[low, high]``. ``shift``: the true reward plus ``value``.
        ``complement``: Bernoulli(1 - μ_k) (our choice). ``adversarial``: 1 for every
        arm except the best, 0 for the best (inside [0, 1], so never trimmable).
    byzantine : tuple of int or None
        Byzantine agents; ``None`` means all (the algorithm's conservative model).
    value, low, high : float
        Parameters of ``point`` / ``shift`` and ``uniform``.
    n_levels : int
        Grid size of ``uniform``, >= 2.

    Raises
    ------
    ValueError
        On a rate outside [0, 1), an unknown kind, ``low >= high`` or ``n_levels < 2``.
    """

    rate: float
    kind: str = "point"
    byzantine: tuple[int, ...] | None = None
    value: float = 0.0
    low: float = 0.0
    high: float = 1.0
    n_levels: int = 101

    def __post_init__(self) -> None:
        rate = check_real("rate", self.rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"`rate` must be in [0, 1), got {rate!r}.")
        object.__setattr__(self, "rate", rate)
        _check_choice("kind", self.kind, CONTAMINATION_KINDS)
        check_real("value", self.value)
        if not check_real("low", self.low) < check_real("high", self.high):
            raise ValueError(f"`low` must be < `high`, got {self.low!r} >= {self.high!r}.")
        check_int_at_least("n_levels", self.n_levels, 2)
        if self.byzantine is not None:
            object.__setattr__(self, "byzantine", tuple(int(v) for v in self.byzantine))

    def support(self) -> np.ndarray:
        """Values a corrupted message can carry besides the rewards {0, 1}."""
        if self.kind == "point":
            return np.array([self.value])
        if self.kind == "uniform":
            return np.linspace(self.low, self.high, self.n_levels)
        if self.kind == "shift":
            return np.array([self.value, 1.0 + self.value])
        return np.array([0.0, 1.0])

    def byzantine_mask(self, n_agents: int) -> np.ndarray:
        """Shape (n_agents,) bool: which agents corrupt their messages.

        Parameters
        ----------
        n_agents : int
            M >= 1.

        Returns
        -------
        ndarray of bool, shape (n_agents,)

        Raises
        ------
        ValueError
            If a listed Byzantine agent is not in ``[0, n_agents)``.
        """
        mask = np.zeros(n_agents, dtype=bool)
        if self.byzantine is None:
            mask[:] = True
        else:
            if any(not 0 <= v < n_agents for v in self.byzantine):
                raise ValueError(
                    f"`byzantine` agents must be in [0, {n_agents}), got {self.byzantine}."
                )
            mask[list(self.byzantine)] = True
        return mask

    @property
    def uses_uniforms(self) -> bool:
        """Whether :meth:`corrupt` reads its ``uniforms`` (Q drawn at random: "uniform",
        "complement"); the other kinds are deterministic given the reward and arm."""
        return self.kind in ("uniform", "complement")

    def corrupt(
        self,
        rewards: np.ndarray,
        arms: np.ndarray,
        corrupted: np.ndarray,
        uniforms: np.ndarray,
        arm_means: np.ndarray,
    ) -> np.ndarray:
        """The values sent: ``rewards`` where not ``corrupted``, a draw of Q elsewhere.

        Parameters
        ----------
        rewards : ndarray of float64, shape (...)
        arms : ndarray of int, shape (...)
            Arm of each message.
        corrupted : ndarray of bool, shape (...)
        uniforms : ndarray of float64, shape (...)
            U(0, 1) draws of the contamination stream, used to sample Q.
        arm_means : ndarray of float64, shape (..., n_arms) broadcastable
            Sender's arm means (for ``complement`` and ``adversarial``).

        Returns
        -------
        ndarray of float64, shape (...)
        """
        if self.kind == "point":
            draw = np.full(rewards.shape, float(self.value))
        elif self.kind == "uniform":
            grid = self.support()
            draw = grid[np.minimum((uniforms * grid.size).astype(np.int64), grid.size - 1)]
        elif self.kind == "shift":
            draw = rewards + self.value
        else:
            arm_means = np.broadcast_to(arm_means, (*arms.shape, np.shape(arm_means)[-1]))
            means = np.take_along_axis(arm_means, arms[..., None], axis=-1)[..., 0]
            if self.kind == "complement":
                draw = (uniforms < 1.0 - means).astype(np.float64)
            else:
                best = np.argmax(arm_means, axis=-1)
                draw = (arms != best).astype(np.float64)
        return np.where(corrupted, draw, rewards)
