"""An audit's second world: a FedUCB run whose privacy noise sits at another ``side``.

An end-to-end audit runs the algorithm on D and on its neighbour D' with independent
privacy noise in each world: world ``s`` draws from ``stream_rng(root, trial, side=s,
agent, Stream.NOISE)`` (:mod:`fedpriv.algorithms.seeding`; CONTRIBUTING.md, Seeding). The public
``run_feducb*`` functions always run world 0 and have no ``side`` argument; the audit
recipes (:mod:`fedpriv.audit.families.feducb.recipes`) call :func:`run_in_world` with the
same arguments plus ``side``, which gives exactly the run the public function gives at
``side = 0`` (a test checks it) and fresh noise streams at any other side.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fedpriv.algorithms.feducb import centralized, decentralized

__all__ = ["run_in_world"]

#: Public entry point -> its implementation taking ``side`` (every argument by keyword).
_WORLD_RUNS: dict[Callable[..., Any], Callable[..., Any]] = {
    centralized.run_feducb: functools.partial(centralized.private_run_in_world, fixed=False),
    centralized.run_feducb_fixed: functools.partial(centralized.private_run_in_world, fixed=True),
    decentralized.run_feducb_decentralized: decentralized.decentralized_run_in_world,
}


def run_in_world(
    run: Callable[..., Any], /, *args: Any, side: int, until_first_sync: bool = False, **kwargs: Any
) -> Any:
    """``run(*args, **kwargs)`` with its privacy-noise streams at ``side``.

    Parameters
    ----------
    run : callable
        :func:`~fedpriv.algorithms.feducb.centralized.run_feducb`,
        :func:`~fedpriv.algorithms.feducb.centralized.run_feducb_fixed` or
        :func:`~fedpriv.algorithms.feducb.decentralized.run_feducb_decentralized`.
    *args, **kwargs
        Its arguments, checked against its signature (its defaults apply).
    side : int
        0 for the world D (the public function's own run), 1 for D' in an audit; >= 0.
    until_first_sync : bool
        Stop after the round at whose end the last trial has its first sync
        (centralized) or has sent its first Synchronize request (decentralized,
        adaptive schedule), for an observer who reads nothing later (the first sync
        times and broadcasts, the first request times). The rounds played are
        exactly the full run's; ``setting["rounds_played"]`` says how many (absent
        when every round is played), ``regret_curve`` is NaN after them and
        ``final_regret`` is the regret at that round.

    Returns
    -------
    FedUCBRun or DecentralizedFedUCBRun
        What ``run`` returns.

    Raises
    ------
    ValueError
        If ``run`` is not one of the three, or ``side < 0``, or ``until_first_sync``
        is asked of the decentralized run with the fixed schedule.
    TypeError
        If the arguments do not fit ``run``'s signature.
    """
    try:
        implementation = _WORLD_RUNS[run]
    except (KeyError, TypeError):
        names = sorted(f.__name__ for f in _WORLD_RUNS)
        raise ValueError(f"`run` must be one of {names}, got {run!r}.") from None
    bound = inspect.signature(run).bind(*args, **kwargs)
    bound.apply_defaults()
    positional = [
        bound.arguments.pop(name)
        for name, p in inspect.signature(run).parameters.items()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    if until_first_sync:
        bound.arguments["until_first_sync"] = True
    return implementation(*positional, side=side, **bound.arguments)
