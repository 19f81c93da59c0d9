"""Batched, addressed sampling of a mechanism, in-process or on an executor.

Samples of one world are drawn in batches of ``batch_size``; batch ``b`` of world
``side`` draws from ``stream_rng(root, trial=b, side=side, stream=Stream.NOISE)``
(:mod:`fedpriv.algorithms.seeding`). A batch's stream depends only on its address, never on
which worker runs it or how many workers there are, so an audit gives the same
numbers in-process, on a local process pool or on a ``dask.distributed`` cluster
(CONTRIBUTING.md, Seeding: derive child streams before any parallel hand-off). Each batch is reduced
inside the worker: :func:`sample_scores` (the pilot) to scores, so memory stays
bounded by ``batch_size`` outputs per worker plus one float64 per sample;
:func:`count_scores` (the confirmation) to its counts at the pilot's thresholds, so
memory stays at one batch per worker whatever the number of samples.

``executor`` may be

- ``None`` or ``"serial"``: run in this process;
- ``"processes"``: a local :class:`concurrent.futures.ProcessPoolExecutor`;
- ``"local"`` (the default of :func:`audit.audit_mechanism`, which additionally
  keeps cheap confirmations in-process, see its docstring): a local process pool
  when there are at least two batches to run, more than one CPU, and the work can be
  pickled (lambdas and closures cannot); otherwise in-process. The choice never
  changes the numbers, only the wall time;
- any :class:`concurrent.futures.Executor`;
- a ``dask.distributed.Client`` (recognised by its ``get_executor`` method; its
  executor is a ``concurrent.futures.Executor``). ``distributed`` is optional;
  :func:`connect_scheduler` opens a client on an existing cluster from its address.

Length: the audits' whole batch layer (addressed batches, the two reductions of the
black-box audit, the executor choice, the job map of ``verify``) in one place, so that
every parallel path derives its streams the same way; half of it is documentation.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from fedpriv.algorithms.seeding import Stream, stream_rng
from fedpriv.audit.estimators.threshold import count_at_least_unsorted
from fedpriv.privacy.checks import check_finite_array, check_int_at_least
from fedpriv.privacy.errors import MechanismError

if TYPE_CHECKING:
    import concurrent.futures

__all__ = [
    "connect_scheduler",
    "count_scores",
    "mechanism_name",
    "open_executor",
    "parallel_map",
    "sample_scores",
]


@contextlib.contextmanager
def connect_scheduler(address: str, *, timeout: float = 30.0) -> Iterator[Any]:
    """A ``dask.distributed.Client`` on the existing scheduler at ``address``, closed on exit.

    Pass it as ``executor`` (or give ``fedpriv verify --scheduler ADDRESS``). Jobs are
    shipped with cloudpickle and import ``fedpriv`` on the workers, so every worker
    needs the same fedpriv version installed; the numbers do not depend on the
    cluster (every batch and job carries its own SeedSequence address).

    Parameters
    ----------
    address : str
        Scheduler address, e.g. ``"tcp://10.0.0.5:8786"``.
    timeout : float
        Seconds to wait for the connection, > 0.

    Yields
    ------
    distributed.Client
        Connected to ``address``; closed when the ``with`` block exits.

    Raises
    ------
    TypeError
        If ``address`` is not a str.
    ValueError
        If ``address`` is empty, ``timeout <= 0``, ``distributed`` is not installed
        or no scheduler answers at ``address`` within ``timeout``.
    """
    if not isinstance(address, str):
        raise TypeError(f"`scheduler` must be an address string, got {type(address).__name__}.")
    if not address.strip():
        raise ValueError("`scheduler` must be a non-empty address such as 'tcp://host:8786'.")
    if not timeout > 0:
        raise ValueError(f"`timeout` must be > 0, got {timeout!r}.")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "`scheduler` needs dask.distributed: pip install 'distributed>=2024.1'."
        ) from None
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise ValueError(
            f"`scheduler`: no dask scheduler answered at {address!r} within {timeout:g} s "
            f"({type(error).__name__}: {error})."
        ) from None
    try:
        yield client
    finally:
        client.close()


def mechanism_name(mechanism: Any) -> str:
    """A readable name of a mechanism (its qualified name, through functools.partial).

    Parameters
    ----------
    mechanism : callable
        A function, a ``functools.partial`` of one, or a callable object.

    Returns
    -------
    str
        ``"module.qualname"`` (only the name for builtins).
    """
    inner = getattr(mechanism, "func", mechanism)
    module = getattr(inner, "__module__", None)
    name = getattr(inner, "__qualname__", None) or type(inner).__name__
    return f"{module}.{name}" if module and module != "builtins" else name


def _run_batch(
    mechanism: Callable[..., np.ndarray],
    dataset: Any,
    size: int,
    root: np.random.SeedSequence,
    batch: int,
    side: int,
    transform: Callable[[np.ndarray], np.ndarray] | None,
) -> np.ndarray:
    """Draw one addressed batch and reduce it with ``transform`` (worker side).

    Raises
    ------
    MechanismError
        If the mechanism raises, or returns no array of ``size`` rows, or NaN; if the
        score function raises or returns the wrong shape.
    """
    name, world = mechanism_name(mechanism), ("D", "D'")[side]
    rng = stream_rng(root, trial=batch, side=side, stream=Stream.NOISE)
    try:
        outputs = np.asarray(mechanism(dataset, size, rng))
    except Exception as error:
        raise MechanismError(
            f"mechanism {name} raised {type(error).__name__} on world {world} "
            f"(n_samples={size}): {error}"
        ) from error
    if outputs.ndim == 0 or outputs.shape[0] != size:
        raise MechanismError(
            f"mechanism {name} must return an array with n_samples = {size} rows "
            f"(mechanism(dataset, n_samples, rng) -> ndarray (n_samples, ...)), got "
            f"shape {outputs.shape} on world {world}."
        )
    if outputs.dtype.kind not in "biuf":
        raise MechanismError(
            f"mechanism {name} must return real numbers (bool, int or float), got an "
            f"array of dtype {outputs.dtype} on world {world}."
        )
    if outputs.dtype.kind == "f" and np.isnan(outputs).any():
        raise MechanismError(
            f"mechanism {name} returned {int(np.isnan(outputs).sum())} NaN value(s) on "
            f"world {world}; outputs must be numbers (NaN has no probability to audit)."
        )
    if transform is None:
        return outputs
    try:
        scores = np.asarray(transform(outputs), dtype=np.float64)
    except Exception as error:
        raise MechanismError(
            f"the score function {mechanism_name(transform)} raised "
            f"{type(error).__name__} on the outputs of {name}: {error}"
        ) from error
    if scores.shape != (size,):
        raise MechanismError(f"the score function must return shape ({size},), got {scores.shape}.")
    return scores


def _picklable(*objects: Any) -> bool:
    try:
        pickle.dumps(objects)
    except Exception:
        return False
    return True


@contextlib.contextmanager
def open_executor(
    executor: Any, n_tasks: int, n_workers: int | None, work: tuple[Any, ...]
) -> Iterator[concurrent.futures.Executor | None]:
    """Yield the concurrent.futures executor ``executor`` stands for, or None for
    in-process execution (a local pool is shut down on exit).

    Parameters
    ----------
    executor : see module docstring
    n_tasks : int
        Batches to run; a local pool gets at most that many workers (one task runs
        in-process).
    n_workers : int, optional
        Local pool size (default: CPU count).
    work : tuple
        The objects the tasks send to workers; a local pool needs them picklable.

    Returns
    -------
    contextlib.AbstractContextManager
        Yields a ``concurrent.futures.Executor`` or None.

    Raises
    ------
    ValueError
        If the executor string is unknown, or ``"processes"`` is asked for with
        unpicklable work.
    TypeError
        If `executor` is of an unsupported type.
    """
    if executor is None or executor == "serial":
        yield None
        return
    if isinstance(executor, str):
        if executor not in ("local", "processes"):
            raise ValueError(
                "`executor` must be None, 'serial', 'local', 'processes', a "
                f"concurrent.futures.Executor or a dask Client, got {executor!r}."
            )
        cpus = os.cpu_count() or 1
        workers = min(n_workers or cpus, n_tasks)
        picklable = _picklable(*work)
        if executor == "local" and (workers < 2 or not picklable):
            yield None
            return
        if not picklable:
            raise ValueError(
                "`executor='processes'` needs a picklable mechanism, datasets and score "
                "(module-level functions or functools.partial, not lambdas or closures)."
            )
        import concurrent.futures  # threading, logging: only when a pool is used

        with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
            yield pool
        return
    if hasattr(executor, "get_executor"):  # dask.distributed.Client
        yield executor.get_executor()
        return
    import concurrent.futures

    if isinstance(executor, concurrent.futures.Executor):
        yield executor
        return
    raise TypeError(
        "`executor` must be None, a string, a concurrent.futures.Executor or a dask "
        f"Client, got {type(executor).__name__}."
    )


def _map_batches(
    worker: Callable[..., Any],
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    *,
    n_samples: int,
    root: np.random.SeedSequence,
    transform: Callable[[np.ndarray], np.ndarray] | None,
    batch_size: int,
    executor: Any,
    n_workers: int | None,
    extra: tuple[Any, ...] = (),
) -> tuple[list[Any], list[Any]]:
    """``worker(mechanism, dataset, size, root, batch, side, transform, *extra)`` on
    every addressed batch: the results of world D, then those of world D', in batch
    order (whoever runs them)."""
    n_samples = check_int_at_least("n_samples", n_samples, 1)
    batch_size = check_int_at_least("batch_size", batch_size, 1)
    starts = range(0, n_samples, batch_size)
    tasks = [
        (side, b, min(batch_size, n_samples - start))
        for side in (0, 1)
        for b, start in enumerate(starts)
    ]
    work = (mechanism, datasets, transform, *extra)
    with open_executor(executor, len(tasks), n_workers, work) as pool:
        if pool is None:
            parts = [
                worker(mechanism, datasets[side], size, root, b, side, transform, *extra)
                for side, b, size in tasks
            ]
        else:
            futures = [
                pool.submit(
                    worker, mechanism, datasets[side], size, root, b, side, transform, *extra
                )
                for side, b, size in tasks
            ]
            parts = [f.result() for f in futures]
    n_batches = len(starts)
    return parts[:n_batches], parts[n_batches:]


def sample_scores(
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    *,
    n_samples: int,
    root: np.random.SeedSequence,
    transform: Callable[[np.ndarray], np.ndarray] | None,
    batch_size: int,
    executor: Any = None,
    n_workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample both worlds in addressed batches and reduce each batch with `transform`.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, n_samples, rng) -> ndarray (n_samples, ...)``.
    datasets : (D, D')
        World 0 (side 0) and world 1 (side 1).
    n_samples : int
        Samples per world, >= 1.
    root : SeedSequence
        Root of this sampling stage; batch ``b`` of world ``s`` uses the NOISE stream
        at ``(trial=b, side=s)`` below it.
    transform : callable or None
        Score function applied to each batch in the worker; None returns the raw
        outputs (concatenated on the first axis).
    batch_size : int
        Samples per batch, >= 1; fixes the batch addresses, hence the numbers.
    executor : see module docstring
    n_workers : int, optional
        Process-pool size for ``"local"``/``"processes"`` (default: CPU count).

    Returns
    -------
    (ndarray, ndarray)
        Scores (or outputs) of world D and of world D', each with n_samples rows.

    Raises
    ------
    ValueError
        If a size is out of range, the executor string is unknown, or a batch
        comes back with the wrong number of rows.
    TypeError
        If `executor` is of an unsupported type.
    """
    parts_d, parts_dp = _map_batches(
        _run_batch,
        mechanism,
        datasets,
        n_samples=n_samples,
        root=root,
        transform=transform,
        batch_size=batch_size,
        executor=executor,
        n_workers=n_workers,
    )
    return np.concatenate(parts_d, axis=0), np.concatenate(parts_dp, axis=0)


def _count_batch(
    mechanism: Callable[..., np.ndarray],
    dataset: Any,
    size: int,
    root: np.random.SeedSequence,
    batch: int,
    side: int,
    transform: Callable[[np.ndarray], np.ndarray],
    thresholds: np.ndarray,
    orientation: int,
) -> np.ndarray:
    """One addressed batch's scores counted at the thresholds (worker side).

    Raises
    ------
    MechanismError
        As :func:`_run_batch`, and if a score is NaN or infinite (the message names
        the score function when it is the caller's own).
    """
    scores = _run_batch(mechanism, dataset, size, root, batch, side, transform)
    finite = np.isfinite(scores)
    if not finite.all():
        world, name = ("D", "D'")[side], mechanism_name(mechanism)
        source = (
            f"the outputs of mechanism {name}"
            if getattr(transform, "__module__", None) == _OWN_SCORES
            else f"the score function {mechanism_name(transform)} on the outputs of {name}"
        )
        raise MechanismError(
            f"the confirmation scores must be finite, but {source} gave "
            f"{int(size - np.count_nonzero(finite))} NaN or infinite value(s) in one batch "
            f"of {size} on world {world}."
        )
    return count_at_least_unsorted(scores, thresholds, orientation)


#: Module of the audit's own scores (the identity, the pilot's projection).
_OWN_SCORES = "fedpriv.audit.regression._selection"


def count_scores(
    mechanism: Callable[..., np.ndarray],
    datasets: tuple[Any, Any],
    *,
    n_samples: int,
    root: np.random.SeedSequence,
    transform: Callable[[np.ndarray], np.ndarray],
    thresholds: np.ndarray,
    orientation: int,
    batch_size: int,
    executor: Any = None,
    n_workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """How many of each world's oriented scores are >= each threshold, batch by batch.

    The counts :func:`sample_scores` followed by sorting and counting would give
    (the same batches, addresses and scores; integer sums are exact), but each
    batch is counted in its worker and dropped: memory stays at one batch per
    worker instead of one float64 per sample, a process pool sends back ``m``
    integers per batch instead of its scores, and no world is sorted (issue 23).

    Parameters
    ----------
    mechanism, datasets, n_samples, root, batch_size, executor, n_workers
        As :func:`sample_scores`.
    transform : callable
        Score function ``outputs -> (size,)`` applied to each batch.
    thresholds : ndarray, shape (m,)
        float64 thresholds, in oriented units.
    orientation : {1, -1}
        Sign applied to every score before it is compared.

    Returns
    -------
    (ndarray, ndarray), each shape (m,), int64
        ``count_d[i]`` = #{scores of D with orientation * score >= thresholds[i]}; the
        same for D'.

    Raises
    ------
    MechanismError
        If the mechanism or the score fails as in :func:`sample_scores`, or a score is
        NaN or infinite.
    ValueError, TypeError
        As :func:`sample_scores`; ValueError also if `orientation` is not 1 or -1, or
        `thresholds` is not a non-empty 1-D array of finite numbers; TypeError if
        `transform` is not callable (each batch must become one float64 score per row).
    """
    if not callable(transform):
        raise TypeError(
            f"`transform` must be a score function outputs -> (n,), got {type(transform).__name__}."
        )
    if orientation not in (1, -1) or isinstance(orientation, bool):
        raise ValueError(f"`orientation` must be 1 or -1, got {orientation!r}.")
    thresholds = check_finite_array("thresholds", thresholds)
    if thresholds.ndim != 1 or thresholds.size == 0:
        raise ValueError(
            f"`thresholds` must be a non-empty 1-D array, got shape {thresholds.shape}."
        )
    parts_d, parts_dp = _map_batches(
        _count_batch,
        mechanism,
        datasets,
        n_samples=n_samples,
        root=root,
        transform=transform,
        batch_size=batch_size,
        executor=executor,
        n_workers=n_workers,
        extra=(thresholds, orientation),
    )
    return np.sum(parts_d, axis=0), np.sum(parts_dp, axis=0)


def parallel_map(
    function: Callable[[dict], Any],
    jobs: list[dict],
    *,
    workers: int,
    say: Callable[[str], None],
    describe: Callable[[dict, Any], str],
    executor: Any = None,
) -> list:
    """``[function(job) for job in jobs]``, on a local process pool when ``workers > 1``.

    Every job carries its own SeedSequence address, so the results do not depend on
    the number of workers or on the order in which they finish; they are returned in
    the order of ``jobs``. Each finished job sends ``say("[i/n] " + describe(job,
    result))``, ``i`` counting jobs as they finish.

    Parameters
    ----------
    function : callable
        ``job -> result``; picklable (a module-level function) when a pool runs it.
    jobs : list of dict
        The units of work.
    workers : int
        Processes of the local pool (1, or a single job, runs them in this process).
    say : callable
        Receives one progress line per finished job.
    describe : callable
        ``(job, result) -> str``: the job's progress line after ``[i/n]``.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Replaces the local pool when given.

    Returns
    -------
    list
        The results, in the order of ``jobs``.
    """
    results: list = [None] * len(jobs)
    if executor is not None:
        if hasattr(executor, "get_executor"):  # dask.distributed.Client
            executor = executor.get_executor()
        _collect(executor, function, jobs, results, say, describe)
        return results
    if workers <= 1 or len(jobs) <= 1:
        for done, job in enumerate(jobs):
            results[done] = function(job)
            say(f"[{done + 1}/{len(jobs)}] {describe(job, results[done])}")
        return results
    import concurrent.futures

    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        _collect(pool, function, jobs, results, say, describe)
    return results


def _collect(pool, function, jobs: list[dict], results: list, say, describe) -> None:
    """Submit every job to ``pool``; store each result at its job's position."""
    import concurrent.futures

    futures = {pool.submit(function, job): position for position, job in enumerate(jobs)}
    for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
        position = futures[future]
        results[position] = future.result()
        say(f"[{done}/{len(jobs)}] {describe(jobs[position], results[position])}")
