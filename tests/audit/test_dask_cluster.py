"""fedpriv on an existing dask.distributed cluster (issue 11 item 5).

``fedpriv verify --scheduler ADDRESS`` (:class:`ClaimsConfig` ``scheduler``) and
``audit_mechanism(executor=<dask Client>)`` run their jobs on the cluster's workers;
every job and batch carries its own SeedSequence address, so the numbers must equal
the in-process run's exactly. Two clusters: a :class:`distributed.LocalCluster`, and a
scheduler and a worker started as separate processes (``python -m dask scheduler`` /
``python -m dask worker``) on loopback, torn down by the fixture. Every wait is
bounded. Budgets are tiny: the tests compare numbers, they assert no statistical
property. The verify run (a ``--paper feducb`` subset) runs on the separate
processes; the LocalCluster runs an ``audit_mechanism`` call and Fed_UCB's job.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

import fedpriv.audit as audit  # noqa: E402
from fedpriv.audit.claims.verify import ClaimsConfig, verify_claims  # noqa: E402
from fedpriv.audit.engine.coupled import AuditBudget  # noqa: E402
from fedpriv.audit.engine.executor import connect_scheduler  # noqa: E402
from fedpriv.audit.families.gossip_fed_ucb.regret import VerifyConfig, verify_gossip_fed_ucb  # noqa: E402
from fedpriv.audit.regression.corpus_mechanisms import laplace_count  # noqa: E402
from fedpriv.privacy import PureDP  # noqa: E402

__all__: list[str] = []

#: Seconds any start-up or shutdown may take before the test fails.
STARTUP_SECONDS = 90.0

TINY = AuditBudget(pilot_samples=30, samples=120, batch_size=60)


def _records(report) -> list[str]:
    """What a verify run found, claim by claim (every number that reaches a report).

    ``repr`` compares floats exactly (shortest round-trip form) and NaN equal to NaN.
    """
    return [
        repr(
            (
                r.key,
                r.verdict,
                r.accountant_epsilon,
                r.accountant_route,
                r.audit,
                r.audit_event,
                r.evidence,
            )
        )
        for r in report.results
    ]


def _verify(**options) -> list[str]:
    config = ClaimsConfig(papers=("feducb",), workers=1, budget=TINY, **options)
    return _records(verify_claims(config))


def _mechanism_audit(executor) -> tuple:
    result = audit.audit_mechanism(
        functools.partial(laplace_count, scale=1.0),
        audit.NeighboringPair(1.0, 0.0),
        claim=PureDP(1.0),
        samples=4_000,
        pilot_samples=1_000,
        batch_size=1_000,
        seed=5,
        executor=executor,
    )
    return (
        result.epsilon_lower_bound,
        result.thresholds,
        result.bound.count_d,
        result.bound.count_d_prime,
    )


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the process group we started, then SIGKILL it if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def separate_processes(tmp_path_factory):
    """Address of a scheduler and one worker (1 thread), each its own process, on loopback."""
    folder: Path = tmp_path_factory.mktemp("dask")
    scheduler_file = folder / "scheduler.json"
    started = []
    common = {
        "cwd": folder,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "start_new_session": True,
    }
    try:
        started.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dask",
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                **common,
            )
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert started[0].poll() is None, "the dask scheduler exited at start-up"
            assert time.monotonic() < deadline, "the dask scheduler did not start in time"
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        started.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dask",
                    "worker",
                    address,
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--death-timeout",
                    "60",
                ],
                **common,
            )
        )
        with distributed.Client(address, timeout=STARTUP_SECONDS) as client:
            client.wait_for_workers(1, timeout=STARTUP_SECONDS)
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 1
            assert set(client.run(os.getpid).values()) != {os.getpid()}
        yield address
    finally:
        for process in reversed(started):
            _stop(process)


@pytest.fixture(scope="module")
def local_cluster():
    """A two-worker LocalCluster (worker processes) on loopback."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
def test_verify_on_a_cluster_equals_the_in_process_run(separate_processes):
    """``fedpriv verify --paper feducb --scheduler ADDRESS`` with tiny budgets."""
    on_cluster = _verify(scheduler=separate_processes)
    assert on_cluster == _verify()
    from fedpriv.audit.claims.register import claims_for

    assert len(on_cluster) == len(claims_for("feducb"))
    assert all(r.startswith("('feducb/") for r in on_cluster)
    assert sum("EpsilonLowerBound(" in r for r in on_cluster) >= 2  # audits ran there


@pytest.mark.parametrize("cluster", ["local_cluster", "separate_processes"])
def test_audit_mechanism_on_a_cluster_equals_the_in_process_run(cluster, request):
    address = request.getfixturevalue(cluster)
    with connect_scheduler(address) as client:
        assert _mechanism_audit(client) == _mechanism_audit(None)


def test_the_fed_ucb_job_runs_on_the_cluster(local_cluster):
    config = VerifyConfig(
        epsilons=(1.0,),
        horizons=(16,),
        audit_horizons=(16,),
        audit_samples=((16, 5_000),),
        audit_product_samples=((16, 5_000),),
        regret_horizon=20,
        n_trials=1,
        ledger_horizon=16,
        workers=1,
    )

    def bounds(report) -> list[str]:
        return [repr((r.verdict, r.audit)) for r in report.claims]

    with connect_scheduler(local_cluster) as client:
        on_cluster = verify_gossip_fed_ucb(config, executor=client)
    reference = verify_gossip_fed_ucb(config)
    assert bounds(on_cluster) == bounds(reference)
    assert on_cluster.regret.equals(reference.regret)


def test_the_cli_option_reaches_the_config():
    import argparse

    from fedpriv.cli.verify import _config, register_verify

    parser = argparse.ArgumentParser(prog="fedpriv")
    register_verify(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        ["verify", "--quick", "--paper", "feducb", "--scheduler", "tcp://127.0.0.1:8786"]
    )
    assert _config(args).scheduler == "tcp://127.0.0.1:8786"
    assert _config(parser.parse_args(["verify", "--quick"])).scheduler is None


@pytest.mark.parametrize(
    ("address", "options", "error", "match"),
    [
        (
            "tcp://127.0.0.1:1",
            {"timeout": 1.0},
            ValueError,
            r"`scheduler`: no dask scheduler answered at 'tcp://127.0.0.1:1'",
        ),
        ("", {}, ValueError, "`scheduler` must be a non-empty address"),
        (8786, {}, TypeError, "`scheduler` must be an address string"),
        ("tcp://127.0.0.1:1", {"timeout": 0}, ValueError, "`timeout` must be > 0"),
    ],
)
def test_bad_scheduler_addresses_raise_clear_errors(address, options, error, match):
    with pytest.raises(error, match=match):
        with connect_scheduler(address, **options):
            pass


def test_a_config_rejects_a_non_string_scheduler():
    with pytest.raises(TypeError, match="`scheduler` must be an address string or None"):
        ClaimsConfig(papers=("feducb",), scheduler=8786)
