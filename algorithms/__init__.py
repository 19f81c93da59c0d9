"""Environments, networks and the federated/private bandit algorithms of every paper family.

Every public ``run_*`` function and ``*Run`` result is importable flat, e.g.
``from fedpriv.algorithms import run_gossip_fed_ucb, homogeneous_bandit``. The flat names are
generated from each subpackage's ``__all__`` (``algorithms/<key>/__init__.py``: a new
family folder is exported without editing this file) and imported on first use (PEP 562),
so ``import fedpriv.algorithms`` imports no NumPy; two subpackages may not export the
same name.

One signature convention
------------------------
``run_x(world, [graph,] *, <the paper's parameters>, mode=..., n_trials=1, seed=0,
record=False, ...) -> XRun``

``world``
    What the algorithm plays: an environment (``BernoulliMAB``, ``HeterogeneousBandit``,
    ``HospitalBandit``) whose reward table is drawn from ``seed``, or pre-drawn
    ``LinearBanditTables`` (FedUCB and LinUCB; they carry ``n_trials``). The network,
    where the paper has one, is the second positional argument (a networkx graph).
Paper parameters
    Keyword-only, under the field-standard names (``horizon``, ``epsilon``, ``delta``,
    ``gamma``, ``contamination``, ...).
``mode``
    The switch between the paper's behaviour as written (``"paper"``) and fedpriv's
    correction where the paper is wrong (``"corrected"``): Fed_UCB's noise calibration
    and clipping (:func:`run_gossip_fed_ucb`), Li & Song's gap schedule ``Δ̃_r`` with ``R``
    rounds (:func:`run_cdp_mab`, :func:`run_ddp_mab`, :func:`run_hdp_mab`), FedUCB's
    Privatizer calibration (:func:`run_feducb` and its variants, which add ``"exact"``:
    the smallest noise the exact accountant allows). Each function documents its
    default (``"corrected"`` for Fed_UCB, ``"paper"`` elsewhere). Options that choose
    between two algorithms or two readings keep their own names: FedUCB's
    ``schedule="adaptive"|"fixed"`` (the log-det test or Zhou & Chowdhury's fixed
    syncs), Li & Song's ``cost_model``/``delay_convention``/``aggregation``, the AAMAS
    paper's ``rule``/``own_term``/``count_field``, Fed_UCB's ``log_base``.
``seed``
    An int or SeedSequence, the root of every stream of the run
    (:mod:`fedpriv.algorithms.seeding`). An audit's second world (side 1) is not a
    parameter of the public functions: :func:`fedpriv.algorithms.feducb.worlds.run_in_world`.
``record``
    Keep what the run's observers saw (messages, actions, releases): ``transcript``,
    ``trace`` (Gossip_UCB / Fed_UCB), ``messages``/``actions`` (Li & Song) or
    ``actions`` (LinUCB).

Results
-------
Every ``*Run`` is an :class:`AlgorithmRun` (``algorithm``, ``final_regret``,
``accountant``, ``seed_entropy``). Regret names mean one thing each:

``final_regret``, shape (n_trials, n_agents)
    Each agent's cumulative pseudo-regret after the last round; on every result.
``regret``, shape (n_trials, n_agents, rounds)
    Per-round pseudo-regret (``GossipRun``, where actions are kept).
``cumulative_regret``, shape (n_trials, n_agents, rounds)
    Running sum of ``regret`` (``GossipRun``, ``CoopRun``, ``UCBRun``).
``regret_curve``, shape (n_trials, horizon)
    Average per-agent cumulative regret after each round (the FedUCB family's results).
``group_regret``, ``total_regret``
    Summed over agents: the AAMAS paper's ``R_G(t)``, shape (n_trials, horizon); Li &
    Song's final total, shape (n_trials,), and ``total_regret_at(times)`` between.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Names defined in this package's own modules (not in a subpackage).
_OWN = {"AlgorithmRun": "fedpriv.algorithms.results"}
_INDEX: dict[str, str] | None = None


def _index() -> dict[str, str]:
    global _INDEX
    if _INDEX is None:
        from fedpriv.algorithms.exports import flat_index  # pkgutil: on first lookup

        index = flat_index(__name__, __path__)
        clash = sorted(set(index) & set(_OWN))
        if clash:
            raise ValueError(f"fedpriv.algorithms: {clash} exported twice.")
        _INDEX = {**index, **_OWN}
    return _INDEX


def __getattr__(name: str) -> Any:
    """A flat public name (or ``__all__``), imported on first use (PEP 562)."""
    if name == "__all__":
        return sorted(_index())
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = _index()[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_index()))
