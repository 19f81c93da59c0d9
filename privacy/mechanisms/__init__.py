"""Noise mechanisms. Each one charges the accountant *before* it draws or releases.

Secure noise
------------
With ``secure=True`` a mechanism releases on a grid of spacing ``granularity = 2**k``
with exact integer noise (:mod:`fedpriv.privacy.mechanisms.secure_noise`): the statistic is
rounded to the grid, integer discrete Laplace noise of scale ``scale / granularity``
is added and the result is multiplied back (exact in float64), so every released
value is a grid point whatever the data, and floating point cannot leak the input
(Mironov 2012). The sensitivity on the grid is ``⌈Δ / granularity⌉`` steps and the
event charged is :class:`~fedpriv.privacy.accounting.events.DiscreteLaplace` with that scale and
sensitivity, so the accountant's guarantee is the exact one of what is released. The
grid noise scale is ``⌈Δ/g⌉ · scale / Δ`` steps
(:func:`~fedpriv.privacy.mechanisms.secure_noise.grid_noise_scale`), which keeps ε at the float
mechanism's ``Δ/scale``: the noise is wider by the rounding factor ``⌈Δ/g⌉/(Δ/g)``,
below ``1 + 2**-10`` on the default grid ``2**(⌊log2 Δ⌋ - 10)`` and exactly 1 when
``Δ/g`` is an integer.

Randomness
----------
``rng`` is a :class:`numpy.random.Generator`, or an object array of Generators whose
shape is the leading axes of the released array (for example one noise stream per
``(trial, agent)``). In the second form each generator draws only its own block, so
adding a trial or an agent never changes the noise of the others (CONTRIBUTING.md, Seeding).

Length: every float mechanism that charges the accountant (Laplace, raw release, tree
counter) sits beside its event, so that no release can be drawn without its charge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting.events import (
    DiscreteLaplace,
    Laplace,
    LaplaceTree,
    NonPrivate,
    SelfComposed,
)
from fedpriv.privacy.accounting.tree import released_tree_depth, tree_depth
from fedpriv.privacy.checks import check_int_at_least, check_positive, check_real
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.laplace_draw import sample_laplace
from fedpriv.privacy.mechanisms.recording import active_recorder
from fedpriv.privacy.mechanisms.release_keys import distinct_entries as _distinct_entries
from fedpriv.privacy.mechanisms.release_keys import flatten_keys as _flatten_keys
from fedpriv.privacy.mechanisms.secure_noise import (
    from_grid,
    grid_noise_scale,
    grid_sensitivity,
    round_to_grid,
    sample_discrete_laplace,
)
from fedpriv.privacy.mechanisms.secure_noise import release_grid as _grid

__all__ = ["LaplaceTreeCounter", "laplace_noise", "laplace_release", "raw_release"]

#: Largest number of node noises pre-drawn per chunk (memory bound of the counter).
_CHUNK_ELEMENTS = 1 << 22
#: Nodes in the first pre-drawn chunk of a tree counter (later chunks double).
_FIRST_CHUNK = 8


def _rng_shape(rng: Any) -> tuple[int, ...]:
    if isinstance(rng, np.random.Generator):
        return ()
    if isinstance(rng, np.ndarray) and rng.dtype == object:
        if not all(isinstance(g, np.random.Generator) for g in rng.flat):
            raise TypeError("`rng` array must hold numpy Generators only.")
        return rng.shape
    raise TypeError(
        f"`rng` must be a numpy Generator or an object array of them, got {type(rng).__name__}."
    )


def _draw_laplace(
    rng: Any, scale: float, shape: tuple[int, ...], *, lead: int = 0, secure: bool = False
) -> np.ndarray:
    """Laplace(0, scale) of ``shape``; generator ``g`` fills block ``g`` of the rng axes.

    ``lead`` leading axes of ``shape`` come before the rng axes (node-major chunks).
    ``secure``: exact discrete Laplace of scale ``scale`` instead (int64 values).
    """

    def draw(generator: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        if not secure:  # generator.laplace(0.0, scale, size) bit for bit, state too
            return sample_laplace(generator, scale, size)
        n = int(np.prod(size, dtype=np.int64))
        return sample_discrete_laplace(scale, size=n, rng=generator).reshape(size)

    rshape = _rng_shape(rng)
    if not rshape:
        return draw(rng, shape)
    body = shape[lead:]
    if body[: len(rshape)] != rshape:
        raise ValueError(f"`rng` shape {rshape} does not match the leading axes of {body}.")
    out = np.empty(shape, dtype=np.int64 if secure else np.float64)
    inner = shape[:lead] + body[len(rshape) :]
    # The rng axes as one (a view of the new array); rng.flat is np.ndindex's order.
    blocks = out.reshape(shape[:lead] + (math.prod(rshape),) + inner[lead:])
    head = (slice(None),) * lead
    for k, generator in enumerate(rng.flat):
        blocks[head + (k,)] = draw(generator, inner)
    return out


def laplace_release(
    values: Any,
    *,
    scale: float,
    l1_sensitivity: float,
    accountant: Accountant,
    keys: Mapping[str, Any],
    rng: Any,
    secure: bool = False,
    granularity: float | None = None,
) -> np.ndarray:
    """Release every entry of ``values`` with independent ``Lap(scale)`` noise.

    Each entry is one release about the records of its own cell: entry ``j`` is
    charged ``events.Laplace(scale, l1_sensitivity)`` under ``{level: keys[level][j]}``.
    With ``secure=True`` entry ``j`` is released on the grid (module docstring) and
    charged ``events.DiscreteLaplace(t, ⌈l1_sensitivity / g⌉)`` with ``t`` from
    :func:`~fedpriv.privacy.mechanisms.secure_noise.grid_noise_scale` (same ε).

    Parameters
    ----------
    values : array_like of float64, any shape
        True statistics; finite.
    scale : float
        Laplace scale ``b`` (units of the statistic), > 0.
    l1_sensitivity : float
        Declared sensitivity of one entry under the accountant's relation, > 0.
    accountant : Accountant
        Charged before any noise is drawn.
    keys : mapping of str to array_like
        Labels per level, each broadcastable to ``values.shape``.
    rng : Generator or object ndarray of Generator
        The privacy-noise stream(s).
    secure : bool, default False
        Exact discrete noise on a grid instead of floating-point Laplace noise.
    granularity : float, optional
        Grid spacing (a power of two) when ``secure``; default
        :func:`~fedpriv.privacy.mechanisms.secure_noise.default_granularity` of
        ``l1_sensitivity``. The sensitivity is that of ``values`` as computed.

    Returns
    -------
    ndarray of float64, same shape as ``values`` (grid points when ``secure``)

    Raises
    ------
    ValueError
        If ``values`` is not finite or ``scale``/``l1_sensitivity`` are not > 0,
        or ``granularity`` is not a power of two (or given without ``secure``).
    BudgetExceededError
        If the accountant's budget would be exceeded (nothing is drawn).
    """
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(_distinct_entries(values))):
        raise ValueError("`values` must be finite.")
    event = Laplace(scale=scale, l1_sensitivity=l1_sensitivity)
    grid = _grid(secure, granularity, event.l1_sensitivity)
    if grid is not None:
        steps = round_to_grid(values, grid)
        sensitivity = grid_sensitivity(event.l1_sensitivity, grid)
        event = DiscreteLaplace(
            scale=grid_noise_scale(event.scale, event.l1_sensitivity, sensitivity),
            l1_sensitivity=sensitivity,
        )
    noise = _charged_noise(event, values.shape, accountant, keys, rng, secure=grid is not None)
    out = values + noise if grid is None else from_grid(steps + noise, grid)
    recorder = active_recorder()  # check mode (recording.py); off: one lookup
    if recorder is not None:
        flat = _flatten_keys(keys, values.shape)
        out = recorder.observe("laplace", values, out, flat, accountant, l1_sensitivity)
    return out


def laplace_noise(
    shape: tuple[int, ...],
    *,
    scale: float,
    l1_sensitivity: float,
    accountant: Accountant,
    keys: Mapping[str, Any],
    rng: Any,
) -> np.ndarray:
    """``laplace_release(np.zeros(shape), ...)`` bit for bit, without the zeros.

    The release of a statistic known to be zero (an audit's pure noise): charged,
    drawn and recorded exactly as :func:`laplace_release` of zeros (same event, keys,
    draws and ledger rows). Adding the zeros changes no bit: NumPy's ``Lap(0, b)`` is
    C's ``0.0 - b·log(2 - 2U)`` or ``0.0 + b·log(2U)`` (``random_laplace`` with
    ``loc = 0.0``), never ``-0.0`` (an exact zero sum with ``+0.0`` is ``+0.0`` under
    round to nearest), and ``0.0 + x == x`` for every other double. Float noise only.

    Parameters
    ----------
    shape : tuple of int
        Shape of the zero statistic (and of the noise).
    scale, l1_sensitivity, accountant, keys, rng
        As in :func:`laplace_release`.

    Returns
    -------
    ndarray of float64, shape ``shape``

    Raises
    ------
    ValueError
        If ``scale``/``l1_sensitivity`` are not > 0, or the keys or ``rng`` do not fit
        ``shape``.
    BudgetExceededError
        If the accountant's budget would be exceeded (nothing is drawn).
    """
    shape = tuple(check_int_at_least("shape", n, 0) for n in shape)
    event = Laplace(scale=scale, l1_sensitivity=l1_sensitivity)
    noise = _charged_noise(event, shape, accountant, keys, rng, secure=False)
    recorder = active_recorder()
    if recorder is not None:
        flat = _flatten_keys(keys, shape)
        noise = recorder.observe(
            "laplace", np.zeros(shape), noise, flat, accountant, l1_sensitivity
        )
    return noise


def _charged_noise(
    event: Laplace | DiscreteLaplace,
    shape: tuple[int, ...],
    accountant: Accountant,
    keys: Mapping[str, Any],
    rng: Any,
    *,
    secure: bool,
) -> np.ndarray:
    """Charge ``event`` to every entry's keys, draw its noise of ``shape``, record the
    draws (ledger rows ``node = level = -1``): a flat release's noise."""
    rshape = _rng_shape(rng)
    if rshape and shape[: len(rshape)] != rshape:
        raise ValueError(f"`rng` shape {rshape} does not match the leading axes of {shape}.")
    flat = _flatten_keys(keys, shape)
    accountant.spend(event, key=flat)
    noise = _draw_laplace(rng, event.scale, shape, secure=secure)
    accountant.ledger.record_draws(
        keys=flat, node=-1, level=-1, scale=event.scale, l1_sensitivity=event.l1_sensitivity
    )
    return noise


def raw_release(
    values: Any, *, accountant: Accountant, keys: Mapping[str, Any], reason: str
) -> np.ndarray:
    """Publish ``values`` without noise, charging ``events.NonPrivate`` (ε = ∞).

    Used to reproduce a paper that releases raw data, so that the report names the
    channel instead of hiding it. Returns a copy of ``values``.

    Parameters
    ----------
    values : array_like of float
        The statistics to publish, any shape, in their own units.
    accountant : Accountant
        Charged one ``NonPrivate(reason=reason)`` per element of ``values``.
    keys : mapping of str to label or array_like
        One label per declared level, each a scalar or an array broadcast to
        ``values.shape``.
    reason : str
        Why the release is raw (shown in reports, e.g. the paper's step it reproduces).

    Returns
    -------
    ndarray of float64, same shape as ``values``
        A copy of ``values``.

    Raises
    ------
    ValueError, TypeError, BudgetExceededError
        What :meth:`Accountant.spend` raises for an invalid key or an exceeded
        budget; nothing is charged then.
    """
    values = np.array(values, dtype=np.float64)
    flat = _flatten_keys(keys, values.shape)
    accountant.spend(NonPrivate(reason=reason), key=flat)
    recorder = active_recorder()
    if recorder is not None:
        values = recorder.observe("raw", values, values, flat, accountant, None)
    return values


class LaplaceTreeCounter:
    """Binary-tree continual counters with Laplace node noise, vectorized over streams.

    One tree per stream (e.g. per ``(trial, agent, arm)``), all advancing one round per
    :meth:`step`. Node ``s`` covers rounds ``(s & (s-1), s]`` (Zhu et al. 2021, Alg. 2);
    its noise is drawn once, memoised and reused by every later prefix that contains it
    (Alg. 3, map 𝒫). At release time the noisy prefix sum of the current round is
    ``sum over the prefix nodes of (node sum + node noise)``.

    Parameters
    ----------
    stream_shape : tuple of int
        Shape of the stream batch, e.g. ``(n_trials, n_agents, n_arms)``.
    horizon : int
        Capacity ``T``: the counter accepts ``T`` steps, then raises. Depth is
        ``floor(log2 T) + 1`` levels.
    scale : float
        Per-node Laplace scale ``b`` >= 0. ``0`` is the non-private counter (no noise;
        charged as ``events.NonPrivate``), used for ε = ∞.
    accountant : Accountant
        Charged ``events.LaplaceTree(scale, horizon, l1_sensitivity,
        released_prefixes)`` once per stream when the counter is opened, i.e. the
        worst case over the released prefixes; every node draw then appends a ledger
        row.
    keys : mapping of str to array_like
        Accountant labels of each stream, broadcastable to ``stream_shape``.
    rng : Generator or object ndarray of Generator
        Privacy-noise stream(s); an array covers the leading axes of ``stream_shape``.
    value_bounds : (float, float)
        Declared range ``[low, high]`` of one observation; ``l1_sensitivity = high - low``.
    out_of_bounds : {"raise", "clip", "ignore"}
        What to do with an observation outside ``value_bounds``: raise ``ValueError``
        (default), clip it into range, or keep it (the paper-literal behaviour; the
        count is kept in :attr:`n_out_of_bounds` and the accountant's ε then does not
        hold for those records).
    noise_on_empty_nodes : bool
        ``False`` (the paper's text, §4.1: noise "if there exists observations in that
        partial sum") or ``True`` (Algorithm 3 as printed: noise on every node used).
    secure : bool, default False
        Exact integer noise on a grid (module docstring): every observation is
        rounded to the grid (so node sums are exact integer sums of grid steps and
        one record moves a node by at most ``⌈l1_sensitivity / g⌉`` steps, whatever
        the floating-point summation order), node noise is discrete Laplace of scale
        ``t = ⌈l1_sensitivity / g⌉ · scale / l1_sensitivity`` steps, and the counter
        is charged ``SelfComposed(DiscreteLaplace(t, ⌈l1_sensitivity / g⌉),
        released_depth)``: the same pure ``released_depth · l1_sensitivity / scale``
        as the float tree.
        Releases are grid points. Ignored when ``scale == 0`` (no noise).
    granularity : float, optional
        Grid spacing, a power of two; default
        :func:`~fedpriv.privacy.mechanisms.secure_noise.default_granularity` of ``high - low``.
    released_prefixes : int, optional
        How many prefixes ``1..R`` reach an output (``1 <= R <= horizon``, default
        ``horizon``): the accountant is charged for the nodes ``1..R`` only, i.e.
        ``floor(log2 R) + 1`` nodes per record
        (:func:`~fedpriv.privacy.accounting.tree.released_tree_depth`). The caller may still
        compute a later prefix as internal state, and must then let it reach no
        output. Zhu et al.'s Fed_UCB (Algorithm 4) sends and acts on ϑ̃(t−1) only
        (lines 19 and 9), so it opens its trees with ``R = T − 1``.

    Raises
    ------
    ValueError
        On a bad parameter (named in the message).
    BudgetExceededError
        If opening the counter would exceed the accountant's budget.
    """

    def __init__(
        self,
        *,
        stream_shape: tuple[int, ...],
        horizon: int,
        scale: float,
        accountant: Accountant,
        keys: Mapping[str, Any],
        rng: Any,
        value_bounds: tuple[float, float] = (0.0, 1.0),
        out_of_bounds: str = "raise",
        noise_on_empty_nodes: bool = False,
        secure: bool = False,
        granularity: float | None = None,
        released_prefixes: int | None = None,
    ) -> None:
        self.stream_shape = tuple(check_int_at_least("stream_shape", n, 1) for n in stream_shape)
        self.horizon = check_int_at_least("horizon", horizon, 1)
        scale = check_real("scale", scale)
        if not 0.0 <= scale < np.inf:
            raise ValueError(f"`scale` must be in [0, inf), got {scale!r}.")
        self.scale = scale
        low, high = (check_real("value_bounds", v) for v in value_bounds)
        if not low < high:
            raise ValueError(f"`value_bounds` must satisfy low < high, got {value_bounds!r}.")
        self.value_bounds = (low, high)
        self.l1_sensitivity = check_positive("l1_sensitivity", high - low)
        if out_of_bounds not in ("raise", "clip", "ignore"):
            raise ValueError(
                f"`out_of_bounds` must be 'raise', 'clip' or 'ignore', got {out_of_bounds!r}."
            )
        self.out_of_bounds = out_of_bounds
        self.noise_on_empty_nodes = bool(noise_on_empty_nodes)
        self._rng = rng
        rshape = _rng_shape(rng)
        if rshape and self.stream_shape[: len(rshape)] != rshape:
            raise ValueError(
                f"`rng` shape {rshape} must match the leading axes of {self.stream_shape}."
            )
        self.depth = tree_depth(self.horizon)
        released = self.horizon if released_prefixes is None else released_prefixes
        self.released_prefixes = check_int_at_least("released_prefixes", released, 1)
        if self.released_prefixes > self.horizon:
            raise ValueError(
                f"`released_prefixes` must be <= `horizon` = {self.horizon}, "
                f"got {self.released_prefixes}."
            )
        self.released_depth = released_tree_depth(self.horizon, self.released_prefixes)
        self._keys = _flatten_keys(keys, self.stream_shape)
        self.granularity = _grid(secure, granularity, self.l1_sensitivity)
        self.secure = self.granularity is not None and self.scale > 0
        # Ledger rows and node noise in the units of the release (grid steps if secure).
        self._row_scale, self._row_sensitivity = self.scale, self.l1_sensitivity
        if self.secure:
            steps = grid_sensitivity(self.l1_sensitivity, self.granularity)
            self._row_scale = grid_noise_scale(self.scale, self.l1_sensitivity, steps)
            self._row_sensitivity = float(steps)
            node = DiscreteLaplace(scale=self._row_scale, l1_sensitivity=self._row_sensitivity)
            self.event = SelfComposed(event=node, count=self.released_depth)
        elif self.scale > 0:
            self.event = LaplaceTree(
                scale=self.scale,
                horizon=self.horizon,
                l1_sensitivity=self.l1_sensitivity,
                released_prefixes=self.released_prefixes,
            )
        else:
            self.event = NonPrivate(reason="tree counter without noise (epsilon = inf)")
        accountant.spend(self.event, key=self._keys)  # raises before any state exists
        self.accountant = accountant
        shape = (self.depth,) + self.stream_shape  # level-first: contiguous levels
        self.t = 0
        # Per node, only whether it holds an observation is read (release's ``used``);
        # its true sum is never needed: a prefix is the raw running total plus noise.
        self._node_count = np.zeros(shape, dtype=np.int64)
        self._node_noise = np.zeros(shape)
        self._node_drawn = np.zeros(shape, dtype=bool)
        self._level_drawn = np.zeros(self.depth, dtype=bool)  # every stream's node drawn
        self._raw_total = np.zeros(self.stream_shape)
        n_streams = int(np.prod(self.stream_shape))
        self._chunk_len = max(1, min(self.horizon, _CHUNK_ELEMENTS // n_streams))
        self._chunk_start = 0  # nodes chunk_start+1 .. chunk_start+len are pre-drawn
        self._chunk = np.zeros((0,) + self.stream_shape)
        self.n_out_of_bounds = 0
        self.n_draws = 0

    # ------------------------------------------------------------------ internals
    def _noise_of_node(self, s: int) -> np.ndarray:
        """Noise of node ``s`` for every stream (pre-drawn node-major, fixed address)."""
        if self.scale == 0:
            return np.zeros(self.stream_shape)
        offset = s - 1 - self._chunk_start
        if offset >= self._chunk.shape[0]:
            # Chunks double from _FIRST_CHUNK nodes up to the memory bound, so a run
            # stopped early draws little more than it used. Each generator draws its
            # block node-major, one value per draw, so the noise of a node is the same
            # whatever the chunk lengths.
            grown = max(_FIRST_CHUNK, 2 * self._chunk.shape[0])
            self._chunk_start += self._chunk.shape[0]
            length = min(self._chunk_len, grown, self.horizon - self._chunk_start)
            self._chunk = _draw_laplace(
                self._rng,
                self._row_scale,
                (length,) + self.stream_shape,
                lead=1,
                secure=self.secure,
            )
            offset = s - 1 - self._chunk_start
        return self._chunk[offset]

    def _check_values(self, values: np.ndarray, observed: np.ndarray) -> np.ndarray:
        low, high = self.value_bounds
        if np.any(observed & ~np.isfinite(values)):
            raise ValueError("`values` must be finite where observed (NaN or inf found).")
        outside = observed & ((values < low) | (values > high))
        if outside.any():
            if self.out_of_bounds == "raise":
                bad = values[outside]
                raise ValueError(
                    f"`values` must lie in the declared range [{low}, {high}]; "
                    f"{bad.size} observation(s) outside, e.g. {bad.flat[0]!r}."
                )
            self.n_out_of_bounds += int(outside.sum())
            if self.out_of_bounds == "clip":
                values = np.clip(values, low, high)
        return values

    # ------------------------------------------------------------------ public API
    def step(self, values: Any, observed: Any) -> None:
        """Add round ``t + 1``'s observation of every stream.

        Parameters
        ----------
        values : ndarray of float64, shape ``stream_shape``
            Observation of each stream (ignored where not observed).
        observed : ndarray of bool, shape ``stream_shape``
            Whether the stream has an observation this round (the arm was pulled).

        Raises
        ------
        CapacityExceededError
            If the counter already holds ``horizon`` rounds.
        ValueError
            On non-finite or (with ``out_of_bounds="raise"``) out-of-range values.
        """
        if self.t >= self.horizon:
            raise CapacityExceededError(
                f"tree capacity is `horizon` = {self.horizon} rounds; cannot add round "
                f"{self.t + 1}."
            )
        values = np.asarray(values, dtype=np.float64)
        observed = np.asarray(observed, dtype=bool)
        if values.shape != self.stream_shape or observed.shape != self.stream_shape:
            raise ValueError(
                f"`values` and `observed` must have shape {self.stream_shape}, got "
                f"{values.shape} and {observed.shape}."
            )
        values = self._check_values(values, observed)
        x = np.where(observed, values, 0.0)
        if self.secure:  # grid steps, summed exactly in float64 (integers < 2**53)
            x = round_to_grid(x, self.granularity).astype(np.float64)
        self.t += 1
        level = (self.t & -self.t).bit_length() - 1
        self._node_count[level] = self._node_count[:level].sum(axis=0) + observed
        self._node_count[:level] = 0
        self._node_noise[level] = self._noise_of_node(self.t)
        self._node_drawn[level] = False
        self._level_drawn[level] = False
        self._raw_total += x

    def release(self, mask: Any) -> np.ndarray:
        """Noisy prefix sums ``[1, t]`` of the streams in ``mask`` (NaN elsewhere).

        A node's noise is drawn (ledger row) the first time a released prefix uses it
        and it holds an observation (or always, with ``noise_on_empty_nodes``).

        Parameters
        ----------
        mask : ndarray of bool, shape ``stream_shape``

        Returns
        -------
        ndarray of float64, shape ``stream_shape``

        Raises
        ------
        ValueError
            If ``mask`` does not have shape ``stream_shape``.
        """
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != self.stream_shape:
            raise ValueError(f"`mask` must have shape {self.stream_shape}, got {mask.shape}.")
        levels = [ell for ell in range(self.depth) if (self.t >> ell) & 1]
        if not levels:
            return np.where(mask, 0.0, np.nan)
        levels = np.asarray(levels, dtype=np.intp)
        if self.noise_on_empty_nodes:
            used = np.broadcast_to(mask, (levels.size,) + self.stream_shape)
        else:
            used = mask & (self._node_count[levels] > 0)
        if self.scale > 0:
            pending = ~self._level_drawn[levels]
            if pending.any():
                todo = levels[pending]
                new = used[pending] & ~self._node_drawn[todo]
                which, stream_index = np.nonzero(new.reshape(todo.size, -1))
                if stream_index.size:
                    level_arr = todo[which].astype(np.int64)
                    self.accountant.ledger.record_draws(
                        keys={k: v[stream_index] for k, v in self._keys.items()},
                        node=(self.t >> level_arr) << level_arr,
                        level=level_arr,
                        scale=self._row_scale,
                        l1_sensitivity=self._row_sensitivity,
                    )
                    self.n_draws += int(stream_index.size)
                    drawn = self._node_drawn[todo] | new
                    self._node_drawn[todo] = drawn
                    self._level_drawn[todo] = drawn.reshape(todo.size, -1).all(axis=1)
        noise = (used * self._node_noise[levels]).sum(axis=0)
        total = self._raw_total + noise  # exact integers of grid steps when secure
        if self.secure:
            total = total * self.granularity  # exact: a power of two
        out = np.where(mask, total, np.nan)
        recorder = active_recorder()
        if recorder is not None:
            out = self._observe(recorder, mask.reshape(-1), out)
        return out

    def step_release_rows(self, index: Any, values: Any) -> np.ndarray:
        """Add round ``t + 1`` with one observation per row and release the observed sums.

        A row is a stream's position but the last axis (e.g. a ``(trial, agent)``); in
        each row, the stream ``index`` along the last axis (e.g. the pulled arm) observes
        its ``values`` entry and the others observe nothing. Bit for bit this is
        ``step(v, observed)`` then ``release(observed)`` read at ``observed`` (``observed``
        marks the indexed streams, ``v`` holds ``values`` there): the same node noises,
        ledger rows (by level, then stream) and float operations per stream, computed on
        the observed streams only, in fewer array passes.

        Parameters
        ----------
        index : ndarray of int, shape ``stream_shape[:-1]``
            Observed stream of each row, in ``[0, stream_shape[-1])``.
        values : ndarray of float64, shape ``stream_shape[:-1]``
            Its observation.

        Returns
        -------
        ndarray of float64, shape ``stream_shape[:-1]``
            The noisy prefix sums ``[1, t]`` of the observed streams.

        Raises
        ------
        CapacityExceededError
            If the counter already holds ``horizon`` rounds.
        ValueError
            On a bad shape or index, or as :meth:`step` on the values.
        """
        if self.t >= self.horizon:
            raise CapacityExceededError(
                f"tree capacity is `horizon` = {self.horizon} rounds; cannot add round "
                f"{self.t + 1}."
            )
        index = np.asarray(index)
        values = np.asarray(values, dtype=np.float64)
        rows, width = self.stream_shape[:-1], self.stream_shape[-1]
        if index.shape != rows or values.shape != rows or index.dtype.kind not in "iu":
            raise ValueError(
                f"`index` (integers) and `values` must have shape {rows}, got "
                f"{index.shape} ({index.dtype}) and {values.shape}."
            )
        index = index.reshape(-1)
        if index.size and (np.minimum.reduce(index) < 0 or np.maximum.reduce(index) >= width):
            raise ValueError(f"`index` must lie in [0, {width}).")
        if self.secure:  # grid rounding: the dense path
            observed = index.reshape(rows + (1,)) == np.arange(width)
            self.step(np.where(observed, values[..., None], 0.0), observed)
            return self.release(observed)[observed].reshape(rows)
        n_streams = index.size * width
        streams = np.arange(0, n_streams, width) + index  # increasing: one per row
        x = self._check_observed(values.reshape(-1))
        self.t += 1
        t = self.t
        level = (t & -t).bit_length() - 1
        count = self._node_count.reshape(self.depth, n_streams)
        if level:  # the new node takes the lower levels' counts, as in step
            np.add.reduce(count[:level], axis=0, out=count[level])
            count[:level] = 0
        else:
            count[0] = 0
        count[level, streams] += 1
        self._node_noise[level] = self._noise_of_node(t)
        self._node_drawn[level] = False
        self._level_drawn[level] = False
        raw = self._raw_total.reshape(-1)
        total = raw.take(streams) + x
        raw[streams] = total
        levels = np.array([ell for ell in range(level, self.depth) if (t >> ell) & 1], np.int64)
        at = np.add.outer(levels * n_streams, streams)  # (levels, rows) flat node indices
        if self.noise_on_empty_nodes:
            used = np.ones(at.shape, dtype=bool)
        else:
            used = count.reshape(-1).take(at) > 0
        if self.scale > 0:
            drawn = self._node_drawn.reshape(-1)
            hits = np.flatnonzero(used > drawn.take(at))  # used and not yet drawn
            if hits.size:
                which, row = np.divmod(hits, index.size)
                level_arr = levels.take(which)
                stream_index = streams[row]
                self.accountant.ledger.record_draws(
                    keys={k: v[stream_index] for k, v in self._keys.items()},
                    node=(t >> level_arr) << level_arr,
                    level=level_arr,
                    scale=self._row_scale,
                    l1_sensitivity=self._row_sensitivity,
                )
                self.n_draws += int(hits.size)
                drawn[at.reshape(-1)[hits]] = True
            noise = self._node_noise.reshape(-1).take(at)
            noise *= used  # as release's used * noise: the same products
            total = total + np.add.reduce(noise, axis=0)  # level by level, as release
        out = total.reshape(rows)
        recorder = active_recorder()
        if recorder is not None:
            out = self._observe(recorder, streams, out)
        return out

    def _observe(self, recorder, which: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Check mode: the true prefix sums of the released streams ``which`` (a flat
        mask or indices), in the units of ``value_bounds``."""
        raw = self._raw_total.reshape(-1)[which]
        if self.secure:
            raw = raw * self.granularity
        keys = {k: v[which] for k, v in self._keys.items()}
        return recorder.observe("tree", raw, out, keys, self.accountant, self.l1_sensitivity)

    def _check_observed(self, x: np.ndarray) -> np.ndarray:
        """:meth:`_check_values` of observed values (1-D), on one min/max pass if in range."""
        low, high = self.value_bounds
        smallest, largest = np.minimum.reduce(x), np.maximum.reduce(x)  # NaN propagates
        if low <= smallest and largest <= high:
            return x
        if not (np.isfinite(smallest) and np.isfinite(largest)) or self.out_of_bounds == "raise":
            return self._check_values(x, np.ones(x.shape, dtype=bool))  # raises
        self.n_out_of_bounds += int(np.count_nonzero((x < low) | (x > high)))
        return np.clip(x, low, high) if self.out_of_bounds == "clip" else x

    @property
    def guarantee_epsilon(self) -> float:
        """Pure ε of one stream's released nodes: ``released_depth * l1_sensitivity /
        scale`` (∞ if no noise; in grid units when secure)."""
        if self.scale == 0:
            return np.inf
        return self.released_depth * self._row_sensitivity / self._row_scale
