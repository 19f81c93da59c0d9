"""The bracket of a claim as curves over δ: accountant ε(δ) above, audit ε_lb(δ) below.

The report page (:mod:`fedpriv.audit.claims.html`) plots, for each claim, the
accountant's upper bound ε(δ) and the audit's lower bound ε_lb(δ) on one δ grid,
with the claim as a point. Both curves are cheap to compute:

* **Accountant.** An (ε, δ) claim's accountant recipe (the register's, see
  :class:`fedpriv.audit.claims.register.RegisteredClaim`) is evaluated again with
  the claimed δ replaced by each grid value; the recipes of approximate-DP claims
  rebuild a small ledger (< 0.1 s each). The curve is the **end-to-end** upper bound,
  as the row's accountant column: ∞ at every δ when the entry names a raw channel
  (the recipe's finite ε is then the noise alone). A pure claim's recipe answers at
  δ = 0 only, and a pure ε bounds ε(δ) at every δ, so its curve is flat at that ε
  (an upper bound, not necessarily the tightest one at δ > 0).
* **Mechanism.** Where the row's noise alone is priced apart from the end-to-end ε
  (a raw channel, or a ``mechanism`` recipe), the mechanism-only ε(δ) is a second
  curve (``mechanism``), drawn and labelled apart: it is not an upper bound on what
  the observer sees.
* **Audit.** A threshold audit's best event has Clopper–Pearson bounds
  ``p_lo`` (numerator world) and ``q_hi`` (denominator world) that hold jointly
  for every event of the audit at its confidence
  (:func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound`), so
  ``ε_lb(δ) = ln((p_lo − δ) / q_hi)`` (0 where ``p_lo <= δ``) is a lower bound at
  every δ of the grid at that same confidence, not only at the audited δ. The
  event was selected at the audited δ; at other δ another event could give more.

Curves are stored in a record's optional ``curve`` field,
``{"delta": [...], "accountant": [...], "mechanism": [...], "audit": [...],
"audit_at_1e-6": [...]}`` (``"inf"`` for ∞, a missing key when unknown;
``audit_at_1e-6`` is the curve of the second audit made for δ = 10⁻⁶, where a row
has one); the page falls back to the audited points when a record has no audit
curve (records merged from an earlier ``--paper`` run).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from fedpriv.audit.claims.claim import json_number
from fedpriv.audit.estimators.threshold import clopper_pearson_interval

__all__ = [
    "DELTA_GRID",
    "accountant_curve",
    "attach_curves",
    "audit_curve",
    "mechanism_curve",
    "recipe_curves",
]

#: δ values of every curve: one per decade from 1e-12 to 1e-1.
DELTA_GRID: tuple[float, ...] = tuple(float(10.0**k) for k in range(-12, 0))


def _grid_with(delta: float) -> list[float]:
    """The grid plus the claimed δ (when it is in (0, 1)), sorted."""
    values = set(DELTA_GRID)
    if 0.0 < delta < 1.0:
        values.add(float(delta))
    return sorted(values)


def _entry(key: str | None):
    from fedpriv.audit.claims.register import claims_for

    return next((e for e in claims_for(None) if e.key == key), None)


def _recipe_curve(entry, recipe, deltas: list[float]) -> list[Any] | None:
    """``recipe(claim at δ)[1]`` for each δ (JSON-ready), or None if it fails."""
    from fedpriv.privacy import ApproxDP

    claim = entry.claim
    out = []
    try:
        for delta in deltas:
            moved = dataclasses.replace(claim, claimed=ApproxDP(claim.claimed.epsilon, delta))
            out.append(json_number(float(recipe(moved)[1])))
    except Exception:
        return None
    return out


def accountant_curve(key: str | None, deltas: list[float]) -> list[Any] | None:
    """The accountant's end-to-end ε at each δ for the registered claim ``key``.

    Parameters
    ----------
    key : str or None
        A register key.
    deltas : list of float
        δ values in (0, 1), ascending.

    Returns
    -------
    list or None
        ε per δ (``"inf"`` for ∞; JSON-ready): ``"inf"`` at every δ when the entry
        names a raw channel, as in the row's accountant column. None when ``key`` is
        not in the register, the claim is pure (the page draws the pure ε flat) or the
        recipe fails (the page then shows the accountant's point only).
    """
    entry = _entry(key)
    if entry is None or entry.claim.claimed_delta == 0.0:
        return None
    if entry.raw_channel:
        return ["inf"] * len(deltas)
    return _recipe_curve(entry, entry.accountant, deltas)


def mechanism_curve(key: str | None, deltas: list[float]) -> list[Any] | None:
    """The noise mechanisms' ε alone at each δ, where it differs from the end-to-end
    curve: the ``mechanism`` recipe's, or the accountant recipe's finite ε of an entry
    with a raw channel. None otherwise (and for pure claims, as
    :func:`accountant_curve`).

    Parameters
    ----------
    key : str or None
        A register key.
    deltas : list of float
        δ values in (0, 1), ascending.

    Returns
    -------
    list or None
        ε per δ (JSON-ready), or None.
    """
    entry = _entry(key)
    if entry is None or entry.claim.claimed_delta == 0.0:
        return None
    if entry.mechanism is not None:
        return _recipe_curve(entry, entry.mechanism, deltas)
    if entry.raw_channel:
        return _recipe_curve(entry, entry.accountant, deltas)
    return None


def recipe_curves(key: str | None, delta: float) -> dict[str, Any]:
    """The recipe curves of the registered claim ``key`` on the δ grid of a claim at
    ``delta``: ``{"delta": grid, "accountant": ..., "mechanism": ...}``, each curve
    present where :func:`accountant_curve` / :func:`mechanism_curve` gives one.

    ``fedpriv verify`` computes them in the process that evaluated the row, right after
    its recipes ran there, so that the recipes' caches (e.g. an AAMAS setting's PLD,
    seconds to build) serve them; :func:`attach_curves` then takes them as they are.
    The same functions of the same register entry, so the same values wherever they
    are computed.

    Parameters
    ----------
    key : str or None
        A register key.
    delta : float
        The claimed δ, in [0, 1).

    Returns
    -------
    dict
        The grid (``"delta"``) and the curves that exist.
    """
    deltas = _grid_with(float(delta))
    out: dict[str, Any] = {"delta": deltas}
    accountant = accountant_curve(key, deltas)
    if accountant is not None:
        out["accountant"] = accountant
    mechanism = mechanism_curve(key, deltas)
    if mechanism is not None:
        out["mechanism"] = mechanism
    return out


def audit_curve(bound: Any, deltas: list[float]) -> list[float] | None:
    """``ε_lb(δ) = max(0, ln((p_lo − δ)/q_hi))`` of the audit's best event.

    ``bound`` is an :class:`~fedpriv.audit.estimators.EpsilonLowerBound`; the
    Clopper–Pearson level is the audit's, ``(1 − confidence) / (2 n_tests)``.
    Returns None when ``bound`` carries no counts (or no evidence: all zeros).

    Parameters
    ----------
    bound : EpsilonLowerBound or None
        The audit's bound with its counts.
    deltas : list of float
        δ values in [0, 1).

    Returns
    -------
    list of float or None
        ε in nats per δ, >= 0.
    """
    needed = (
        "count_d",
        "count_d_prime",
        "n_samples_d",
        "n_samples_d_prime",
        "n_tests",
        "confidence",
        "direction",
    )
    if bound is None or not all(hasattr(bound, name) for name in needed):
        return None
    if bound.direction not in ("D>D'", "D'>D"):
        return [0.0] * len(deltas)
    level = (1.0 - bound.confidence) / (2 * bound.n_tests)
    top, n_top = bound.count_d, bound.n_samples_d
    bottom, n_bottom = bound.count_d_prime, bound.n_samples_d_prime
    if bound.direction == "D'>D":
        top, n_top, bottom, n_bottom = bottom, n_bottom, top, n_top
    p_lo = float(clopper_pearson_interval(top, n_top, significance=level, side="lower")[0])
    q_hi = float(clopper_pearson_interval(bottom, n_bottom, significance=level, side="upper")[1])
    excess = p_lo - np.asarray(deltas, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(excess > 0.0, np.log(np.maximum(excess, 1e-300)) - math.log(q_hi), 0.0)
    return [float(v) for v in np.maximum(values, 0.0)]


def _consistent_audit_curve(bound: Any, deltas: list[float]) -> list[float] | None:
    """:func:`audit_curve` of ``bound``, or None when its counts do not give the bound
    itself at the audited δ (a bound from another estimator, e.g. a product audit node by
    node, whose counts belong to another event): a plot then shows the audited point
    only, never a curve that contradicts it."""
    curve = audit_curve(bound, deltas)
    if curve is None:
        return None
    at = audit_curve(bound, [float(getattr(bound, "delta", 0.0) or 0.0)])
    reported = float(bound.epsilon_lower_bound)
    if at is None or not math.isclose(at[0], max(reported, 0.0), rel_tol=1e-6, abs_tol=1e-9):
        return None
    return curve


def attach_curves(records: list[dict], results=()) -> list[dict]:
    """Copies of ``records`` with a ``curve`` field where one can be computed.

    Parameters
    ----------
    records : list of dict
        ``claims.json`` records (matched to ``results`` by ``key``).
    results : iterable of ClaimResult, optional
        This run's results; their audit bounds give the audit curves. Records
        without a result (merged from an earlier run) get the accountant curve only.

    Returns
    -------
    list of dict
        New records; ``records`` is not modified.
    """
    bounds = {r.key: r.audit for r in results if getattr(r, "key", None)}
    second = {r.key: getattr(r, "audit_at_1e6", None) for r in results if getattr(r, "key", None)}
    computed = {
        r.key: r.recipe_curves
        for r in results
        if getattr(r, "key", None) and getattr(r, "recipe_curves", None) is not None
    }
    out = []
    for record in records:
        record = dict(record)
        if not isinstance(record.get("curve"), dict):
            claimed = record.get("claimed") or {}
            delta = claimed.get("delta") or 0.0
            delta = float(delta) if isinstance(delta, (int, float)) else 0.0
            curve = computed.get(record.get("key"))
            if curve is None or curve["delta"] != _grid_with(delta):
                curve = recipe_curves(record.get("key"), delta)
            curve = dict(curve)
            deltas = curve["delta"]
            audit = _consistent_audit_curve(bounds.get(record.get("key")), deltas)
            if audit is not None:
                curve["audit"] = audit
            audit = _consistent_audit_curve(second.get(record.get("key")), deltas)
            if audit is not None:
                curve["audit_at_1e-6"] = audit
            if len(curve) > 1:
                record["curve"] = curve
        out.append(record)
    return out
