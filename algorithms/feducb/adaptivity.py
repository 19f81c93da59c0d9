"""How far one changed (x, y) pair reaches into FedUCB's fixed-schedule Privatizer leaves.

Between syncs an agent acts on its raw local Gram matrix: Alg. 1 line 4 sets
``V_{i,t} ← S_{i,t} + U_{i,t}`` and ``ũ_{i,t} ← s_{i,t} + ū_{i,t}``, line 8 picks
``x_{i,t}`` from them (eqs. 2-3 of the paper), and line 10 adds the new pair to
``U, ū``. So a pair changed at round τ changes the agent's later actions, hence its
later ``(x, y)``, up to the next sync; the leaf the Privatizer receives at that sync
(Alg. 1 line 16, ``Q̂_{i,t}``: the sum of ``v vᵀ``, ``v = [x; y]``, since the last
sync) then differs in up to every position from τ to the end of the batch, not in one.
Remark 3 of the paper names this: its analysis takes "the L2-sensitivity with respect to
a single differing observation ... and not the entire message itself, ... which may
potentially have O(t) sensitivity".

Which positions a change can reach (fixed schedule, sync at the end of rounds
``B-1, 2B-1, ...``, 0-based rounds; :func:`positions_reached`)
---------------------------------------------------------------------------------
* Same batch, at and after τ: the raw ``U`` carries the change (lines 4, 8, 10).
* Earlier batches: no (causality).
* Later batches: the sync resets ``U, ū`` (line 24, read into the sync branch; the
  NeurIPS text resets ``U`` to 0, the full text to ``ρ_min I``: data-independent either
  way) and the
  agent then acts on ``S, s``, sums of the Privatizer's *releases* (lines 18-20), and
  its new raw data, which is the same in both worlds. Conditioned on the releases so
  far, every later leaf is the same function in both worlds (adaptive composition:
  Dong, Roth & Su 2019, Thm. 3.2 for Gaussian DP), so only τ's own leaf differs.
* A batch that ends after the horizon is never released (0 positions).
* Decentralized (Alg. 3, γ parameter sets used round-robin, ``g = t mod γ``): set g's
  ``V^(g) = S^(g) + U^(g)`` reads only set g's raw data, and every set is released
  at the tick, so a change reaches the set-g rounds of its own batch from τ on:
  ``⌊(end − τ)/γ⌋ + 1`` positions, at most ``⌈B/γ⌉``.

The charged sensitivity (group privacy over the reached positions)
------------------------------------------------------------------
With ``‖x‖ <= L`` (assumption (a)) and ``|y| <= B`` (assumption (f); the paper's
calibration takes ``B = 1``: Alg. 2 line 5's ``(L² + 1)²``), each ``v vᵀ`` is PSD with
``‖v vᵀ‖_F = ‖v‖² <= L² + B²``. If ``k`` positions differ, the two leaves' differing
parts ``A = Σ_k v vᵀ`` and ``A' = Σ_k v' v'ᵀ`` are PSD with trace ``<= k (L² + B²)``, and
``⟨A, A'⟩ >= 0``, so::

    ‖A − A'‖_F² = ‖A‖_F² + ‖A'‖_F² − 2⟨A, A'⟩ <= (tr A)² + (tr A')² <= 2 k² (L² + B²)²,

i.e. ``‖Q − Q'‖_F <= k √2 (L² + B²)``: ``k`` times the one-pair substitution
sensitivity ``√2 (L² + B²)``. It is attained when ``L = B`` (the paper's setting:
``L = 1``, ``|y| <= B = 1``): ``v = [L e₀; B]`` at every reached position in D and
``v' = [−L e₀; B]`` in D' give ``k · 2√2 L B``, and decision sets {L e₀, −L e₀} make the
agent choose exactly these after one reward is flipped at τ
(:mod:`fedpriv.audit.families.feducb.adaptive`).
Each tree node is a Gaussian release of a sum of leaves, so group privacy over ``k``
pairs is exact here: it scales the node's L2 sensitivity, hence its Gaussian-DP ``μ``,
by ``k`` (no ``e^{kε}``/``kδ`` blow-up of generic group privacy). A leaf sits in at most
``⌊log₂ n⌋ + 1`` released nodes (``n`` leaves), each moved by the same ``Q − Q'``, so the
view is ``μ``-GDP with ``μ = √(⌊log₂ n⌋ + 1) · k √2 (L² + B²) / (√2 σ_N)``, ``k =``
:func:`leaf_reach` (the worst position: the first round of a released batch).
"""

from __future__ import annotations

from fedpriv.privacy.checks import check_int_at_least

__all__ = ["leaf_reach", "positions_reached"]


def positions_reached(t: int, *, sync_every: int, horizon: int, gamma: int = 1) -> int:
    """Leaf positions (pairs) a change at round ``t`` can move: the module docstring.

    Parameters
    ----------
    t : int
        0-based round of the changed pair, in ``[0, horizon)``.
    sync_every : int
        ``B`` >= 1: syncs at the end of rounds ``B-1, 2B-1, ...``.
    horizon : int
        ``T`` >= 1.
    gamma : int
        Parameter sets (decentralized FedUCB, Alg. 3); 1 for centralized.

    Returns
    -------
    int
        ``0`` when ``t``'s batch is never released, else the rounds of ``t``'s set from
        ``t`` to the end of its batch.

    Raises
    ------
    ValueError
        If an argument is out of range.

    Examples
    --------
    >>> [positions_reached(t, sync_every=8, horizon=64) for t in (0, 5, 7, 8)]
    [8, 3, 1, 8]
    >>> positions_reached(0, sync_every=8, horizon=64, gamma=2)
    4
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    sync_every = check_int_at_least("sync_every", sync_every, 1)
    gamma = check_int_at_least("gamma", gamma, 1)
    t = check_int_at_least("t", t, 0)
    if t >= horizon:
        raise ValueError(f"`t` must be < horizon = {horizon}, got {t}.")
    end = (t // sync_every + 1) * sync_every - 1  # the batch's sync round
    if end >= horizon:
        return 0
    return (end - t) // gamma + 1


def leaf_reach(*, sync_every: int, horizon: int, gamma: int = 1) -> int:
    """The most leaf positions one change can move, over every round (>= 1).

    ``min(B, T)`` rounded up to the set's share, ``⌈B/γ⌉``: the first round of a released
    batch (when ``T < B`` no batch is released and 1 is returned, the one-pair charge).

    Parameters
    ----------
    sync_every : int
        B >= 1.
    horizon : int
        T >= 1.
    gamma : int
        γ >= 1 (decentralized sets), 1 for the centralized algorithm.

    Returns
    -------
    int
        >= 1.

    Raises
    ------
    ValueError
        If an argument is out of range (named in the message).

    Examples
    --------
    >>> leaf_reach(sync_every=8, horizon=64), leaf_reach(sync_every=8, horizon=64, gamma=2)
    (8, 4)
    """
    horizon = check_int_at_least("horizon", horizon, 1)
    sync_every = check_int_at_least("sync_every", sync_every, 1)
    gamma = check_int_at_least("gamma", gamma, 1)
    if horizon < sync_every:
        return 1
    return max(
        positions_reached(t, sync_every=sync_every, horizon=horizon, gamma=gamma)
        for t in range(min(horizon, sync_every * gamma))
    )
