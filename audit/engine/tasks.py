"""Addressed sampling tasks of end-to-end audits, in-process or on an executor.

:func:`fedpriv.audit.engine.coupled.search_and_confirm` turns each (neighboring pair, world, batch)
into one :class:`SampleTask`: a call ``sampler(world, size, seed)`` whose ``seed`` is
a fixed SeedSequence address. :func:`run_sample_tasks` runs the tasks and returns
their observations in task order. Because every batch draws from its own address,
the numbers never depend on where the tasks run or on how many workers there are
(CONTRIBUTING.md, Seeding: derive child streams before any parallel hand-off).

``executor`` may be (as in :mod:`fedpriv.audit.engine.executor`)

- ``None`` or ``"serial"``: in this process, in task order (the default);
- ``"processes"``: a local :class:`concurrent.futures.ProcessPoolExecutor`;
- ``"local"``: a local process pool when there are at least two tasks and two CPUs,
  in-process otherwise;
- any :class:`concurrent.futures.Executor` (a thread pool, a process pool, ...);
- a ``dask.distributed.Client`` (recognised by its ``get_executor`` method).
  ``distributed`` is optional.

Pickling. Samplers of end-to-end audits are usually closures over the algorithm's
setting (see :mod:`fedpriv.audit.families.gossip_fed_ucb.initial`), which the standard :mod:`pickle` cannot
ship to another process. Process pools therefore receive the sampler serialized
once with ``cloudpickle`` (installed with ``dask``; closures and ``__main__``
functions are pickled by value), or with the standard pickle when cloudpickle is
not installed; a sampler neither can serialize raises a ``ValueError`` naming
``samplers``. A dask client
serializes with cloudpickle itself. Thread pools and in-process runs need no
pickling.

Memory. Each task holds one batch of the algorithm's state in its worker and returns
only the observables (a few float64 per run), so the peak memory of a worker is that
of one batch, whatever the sample count.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from fedpriv.audit.engine.executor import open_executor

__all__ = ["SampleTask", "run_sample_tasks"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SampleTask:
    """One addressed call ``sampler(world, n_samples, seed)``.

    Attributes
    ----------
    sampler : int
        Index of the sampler in the list given to :func:`run_sample_tasks`.
    world : int
        0 (D) or 1 (D').
    n_samples : int
        Runs in this batch, >= 1.
    seed : SeedSequence
        The batch's fixed address.
    """

    sampler: int
    world: int
    n_samples: int
    seed: np.random.SeedSequence


def _as_columns(observed: Any, n_samples: int) -> np.ndarray:
    observed = np.asarray(observed, dtype=np.float64)
    if observed.ndim == 0 or observed.shape[0] != n_samples:
        raise ValueError(
            f"a sampler must return an array with n_samples = {n_samples} rows, "
            f"got shape {observed.shape}."
        )
    if observed.ndim == 1:
        return observed[:, None]
    # (n, n_messages, size) stays as it is: the audit reads its messages
    # (fedpriv.audit.engine.joint); anything else becomes (n, columns).
    return observed if observed.ndim == 3 else observed.reshape(n_samples, -1)


def _call(
    sampler: Callable[..., Any], world: int, n: int, seed: np.random.SeedSequence
) -> np.ndarray:
    """Run one task (worker side): observations as (n, columns), or (n, messages, size)."""
    return _as_columns(sampler(world, n, seed), n)


def _call_pickled(payload: bytes, world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    """Run one task whose sampler was serialized in the parent (process pools)."""
    return _call(pickle.loads(payload), world, n, seed)


def _serialize(sampler: Callable[..., Any], name: str) -> bytes:
    """The sampler as bytes a fresh process can load: cloudpickle, else pickle.

    cloudpickle (when installed) pickles importable functions by reference and
    closures, lambdas and ``__main__`` objects by value, so a fresh worker process can
    load them whatever its start method; the standard pickle is the fallback.
    """
    try:
        import cloudpickle
    except ImportError:
        cloudpickle = None
    try:
        return (cloudpickle or pickle).dumps(sampler)
    except Exception as error:  # any serialization failure: report it
        hint = (
            ""
            if cloudpickle is not None
            else " (closures and lambdas need cloudpickle, which is not installed)"
        )
        raise ValueError(
            f"`samplers`: the sampler {name!r} cannot be serialized for a process pool"
            f"{hint}: {type(error).__name__}: {error}. Pass a module-level function or "
            "functools.partial, or run with executor=None, a thread pool or a dask client."
        ) from error


def run_sample_tasks(
    samplers: Sequence[Callable[..., Any]],
    tasks: Sequence[SampleTask],
    *,
    executor: Any = None,
    n_workers: int | None = None,
    names: Sequence[str] | None = None,
) -> list[np.ndarray]:
    """Run addressed sampling tasks and return their observations in task order.

    Parameters
    ----------
    samplers : sequence of callables
        ``sampler(world, n_samples, seed) -> ndarray (n_samples,) or (n_samples, ...)``.
    tasks : sequence of SampleTask
        What to draw; ``task.sampler`` indexes ``samplers``.
    executor : see the module docstring
    n_workers : int, optional
        Process-pool size for ``"local"``/``"processes"`` (default: CPU count, at
        most the number of tasks).
    names : sequence of str, optional
        Names of the samplers, for error messages.

    Returns
    -------
    list of ndarray
        Observations of each task, float64 of shape (task.n_samples, n_columns).

    Raises
    ------
    ValueError
        If the executor string is unknown, a sampler cannot be serialized for a
        process pool, or a sampler returns the wrong number of rows.
    TypeError
        If ``executor`` is of an unsupported type.
    """
    names = list(names) if names is not None else [f"#{i}" for i in range(len(samplers))]
    with open_executor(executor, len(tasks), n_workers, ()) as pool:
        if pool is None:
            return [_call(samplers[t.sampler], t.world, t.n_samples, t.seed) for t in tasks]
        if isinstance(pool, concurrent.futures.ProcessPoolExecutor):
            payloads = {i: _serialize(samplers[i], names[i]) for i in {t.sampler for t in tasks}}
            futures = [
                pool.submit(_call_pickled, payloads[t.sampler], t.world, t.n_samples, t.seed)
                for t in tasks
            ]
        else:  # threads need no pickling; a dask client cloudpickles by itself
            futures = [
                pool.submit(_call, samplers[t.sampler], t.world, t.n_samples, t.seed) for t in tasks
            ]
        return [future.result() for future in futures]
