"""Batched, executor-capable sampling of end-to-end audits (fedpriv.audit.engine.tasks)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading

import numpy as np
import pytest
from fedpriv.algorithms.seeding import child_seed
from fedpriv.audit.engine.coupled import AuditBudget, search_and_confirm
from fedpriv.audit.engine.tasks import SampleTask, run_sample_tasks

BUDGET = AuditBudget(pilot_samples=120, samples=400)


def _shifted_laplace(world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    """Two columns: Laplace(world, 1) and a shared-coupling column (module level)."""
    rng = np.random.default_rng(seed)
    return np.stack([world + rng.laplace(size=n), rng.random(n)], axis=1)


def _make_closure_sampler(shift: float):
    def sample(world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
        return shift * world + np.random.default_rng(seed).laplace(size=n)

    return sample


def _samplers() -> dict:
    # Two candidate pairs: a closure (needs cloudpickle for processes) and a module function.
    return {"weak pair": _make_closure_sampler(0.2), "strong pair": _shifted_laplace}


def _audit(**options):
    return search_and_confirm(
        _samplers(), budget=BUDGET, seed=11, delta=0.0, channel="test", **options
    )


def _key(result):
    return (
        result.bound.epsilon_lower_bound,
        result.event,
        result.neighbors,
        result.pilot_epsilon,
        result.bound.n_samples,
    )


def test_default_path_is_one_call_per_world_at_the_original_addresses():
    seen = []

    def sample(world, n, seed):
        seen.append((world, n, tuple(seed.spawn_key)))
        return np.random.default_rng(seed).random(n)

    search_and_confirm(
        {"a": sample, "b": sample},
        budget=AuditBudget(pilot_samples=30, samples=40),
        seed=3,
        delta=0.0,
        channel="test",
    )
    assert seen[:4] == [
        (0, 30, (0, 0, 0)),
        (1, 30, (0, 0, 1)),
        (0, 30, (0, 1, 0)),
        (1, 30, (0, 1, 1)),
    ]
    assert seen[4:] == [(0, 40, (1, 0)), (1, 40, (1, 1))]


def test_an_executor_without_batch_size_keeps_the_default_numbers():
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        assert _key(_audit(executor=pool)) == _key(_audit())


def test_batches_are_drawn_at_their_own_addresses():
    lock = threading.Lock()
    seen = []

    def sample(world, n, seed):
        with lock:
            seen.append((world, n, tuple(seed.spawn_key)))
        return np.random.default_rng(seed).random(n)

    search_and_confirm(
        {"only": sample},
        budget=AuditBudget(pilot_samples=25, samples=23),
        seed=5,
        delta=0.0,
        channel="test",
        batch_size=10,
    )
    expected = {(w, size, (0, 0, w, b)) for w in (0, 1) for b, size in enumerate((10, 10, 5))}
    expected |= {(w, size, (1, w, b)) for w in (0, 1) for b, size in enumerate((10, 10, 3))}
    assert sorted(seen) == sorted(expected)


def test_batched_observations_are_the_concatenated_batch_calls():
    """run_sample_tasks returns exactly what direct calls at the addresses return."""
    root = np.random.SeedSequence(7)
    tasks = [
        SampleTask(sampler=0, world=w, n_samples=s, seed=child_seed(root, w, b))
        for w in (0, 1)
        for b, s in enumerate((4, 3))
    ]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        parts = run_sample_tasks([_shifted_laplace], tasks, executor=pool)
    for task, part in zip(tasks, parts, strict=True):
        np.testing.assert_array_equal(part, _shifted_laplace(task.world, task.n_samples, task.seed))


def test_serial_processes_and_dask_give_identical_bounds():
    serial = _key(_audit(batch_size=64))
    threads = concurrent.futures.ThreadPoolExecutor(max_workers=3)
    with threads:
        assert _key(_audit(batch_size=64, executor=threads)) == serial
    assert _key(_audit(batch_size=64, executor="processes", n_workers=2)) == serial
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert _key(_audit(batch_size=64, executor=client)) == serial
    # The strong pair (a shift of 1 in a Laplace(1) location) is the one chosen, and the
    # bound is a valid positive lower bound below the true ε = 1.
    assert serial[2] == "strong pair" and 0.0 < serial[0] < 1.0


@dataclasses.dataclass
class _Locked:
    lock: object = dataclasses.field(default_factory=threading.Lock)

    def __call__(self, world, n, seed):
        return np.zeros(n)


def test_unserializable_sampler_on_processes_names_the_parameter():
    with pytest.raises(ValueError, match=r"`samplers`.*'locked'"):
        search_and_confirm(
            {"locked": _Locked()},
            budget=BUDGET,
            seed=0,
            delta=0.0,
            channel="test",
            batch_size=50,
            executor="processes",
            n_workers=2,
        )


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"n_workers": 0, "executor": "processes"}, ValueError, "n_workers"),
        ({"executor": "threads"}, ValueError, "executor"),
        ({"executor": object()}, TypeError, "executor"),
    ],
)
def test_bad_options_raise_clear_errors(options, error, match):
    with pytest.raises(error, match=match):
        _audit(**options)


def test_a_sampler_returning_the_wrong_rows_is_rejected():
    def short(world, n, seed):
        return np.zeros(n - 1)

    with pytest.raises(ValueError, match="n_samples = 50 rows"):
        search_and_confirm(
            {"short": short}, budget=BUDGET, seed=0, delta=0.0, channel="test", batch_size=50
        )


def test_fed_ucb_closure_sampler_runs_on_processes():
    """The whole Fed_UCB run (tiny horizon) as a closure sampler, shipped by cloudpickle."""
    from fedpriv.algorithms.gossip_fed_ucb.gossip_ucb import run_gossip_fed_ucb
    from fedpriv.algorithms.networks.graphs import make_graph
    from fedpriv.audit.families.gossip_fed_ucb.recipes import FixedTableBandit

    horizon, graph = 8, make_graph("complete", 3)
    table = (np.random.default_rng(0).random((3, horizon + 1, 2)) < 0.5).astype(float)
    envs = []
    for value in (1.0, 0.0):
        t = table.copy()
        t[0, 1, :] = value
        envs.append(FixedTableBandit(table=t, arm_means=np.full((3, 2), 0.5)))

    def sample(world, n, seed):
        run = run_gossip_fed_ucb(
            envs[world], graph, horizon=horizon, epsilon=1.0, n_trials=n, seed=seed
        )
        return run.counts[:, 0, :]

    budget = AuditBudget(pilot_samples=20, samples=30)
    results = [
        search_and_confirm(
            {"round 1 of agent 0": sample},
            budget=budget,
            seed=2,
            delta=0.0,
            channel="test",
            batch_size=16,
            **options,
        )
        for options in ({}, {"executor": "processes", "n_workers": 2})
    ]
    assert _key(results[0]) == _key(results[1])


def _pid_sampler(world: int, n: int, seed: np.random.SeedSequence) -> np.ndarray:
    import os

    return np.full(n, float(os.getpid()))


def test_processes_really_run_elsewhere():
    import os

    tasks = [SampleTask(sampler=0, world=0, n_samples=2, seed=child_seed(0, b)) for b in range(4)]
    parts = run_sample_tasks([_pid_sampler], tasks, executor="processes", n_workers=2)
    pids = {float(p[0, 0]) for p in parts}
    assert float(os.getpid()) not in pids
    serial = run_sample_tasks([_pid_sampler], tasks)
    assert {float(p[0, 0]) for p in serial} == {float(os.getpid())}
