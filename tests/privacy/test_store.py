"""The persistent ledger store: round trips, crashes, concurrent budgets, bad files."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fedpriv.cli.main import main
from fedpriv.privacy import (
    Accountant,
    ApproxDP,
    IntervalRelease,
    PureDP,
    SymmetricMatrixGaussianTree,
)
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import (
    BudgetExceededError,
    LedgerCorruptedError,
    StoreError,
    StoreFormatError,
    StoreMismatchError,
)
from fedpriv.privacy.ledger.backends import open_store
from fedpriv.privacy.ledger.codec import decode_event, encode_event
from fedpriv.privacy.ledger.integrity import APPLICATION_ID, SCHEMA_VERSION
from fedpriv.privacy.ledger.store import LedgerStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.privacy._store_worker import RACE_BUDGET, WRITER_LEVELS, step_event
from tests.privacy._support import assert_unchanged, snapshot

WORKER = Path(__file__).with_name("_store_worker.py")
DELTAS = (0.0, 1e-8, 1e-5, 0.01)

#: One event of every registered kind, nested ones included.
EVERY_EVENT = (
    events.Laplace(scale=4.0),
    events.LaplaceTree(scale=4.0, horizon=16, l1_sensitivity=0.5),
    events.Gaussian(noise_multiplier=3.0, l2_sensitivity=2.0),
    events.GaussianTree(noise_multiplier=10.0, horizon=1000),
    events.SymmetricMatrixGaussian(noise_stddev=2.0, dim=3, frobenius_sensitivity=1.5),
    events.DiscreteLaplace(scale=3.0, l1_sensitivity=2),
    events.DiscreteGaussian(sigma=5.0, l2_sensitivity=1.0),
    events.RandomizedResponse(epsilon=0.3),
    events.OpaqueApproxDP(epsilon=0.2, delta=1e-9),
    events.SelfComposed(
        event=events.SelfComposed(event=events.Laplace(scale=9.0), count=2), count=3
    ),
    events.NonPrivate(reason="initial pulls (Zhu et al. Alg. 4 line 1)"),
    IntervalRelease(scales=(1.0, 0.5), l1_sensitivities=(0.5, 0.25), counts=(2, 4)),
    SymmetricMatrixGaussianTree(
        noise_stddev=2.0, dim=3, frobenius_sensitivity=2.0**0.5, capacity=8
    ),
)


def _every_query(accountant: Accountant) -> dict:
    """Everything a reopened accountant must reproduce exactly."""
    return {
        "routes": [accountant.routes.epsilons(delta) for delta in DELTAS],
        "tightest": [accountant.routes.tightest(delta) for delta in DELTAS],
        "lower": [accountant.brackets.lower_bound(delta) for delta in DELTAS[1:]],
        "delta": [accountant.get_delta(epsilon) for epsilon in (0.5, 2.0, 10.0)],
        "cells": accountant.ledger.cells(),
        "where": accountant.routes.epsilons(1e-5, where={"agent": 1}),
        "reasons": accountant.ledger.non_private_reasons(),
        "n_draws": accountant.ledger.n_draws,
        "config": (
            accountant.neighboring_relation,
            accountant.ledger.disjoint,
            accountant.ledger.sequential,
            accountant.ledger.levels,
            accountant.odometer.budget,
            accountant.ledger.keep_draw_rows,
        ),
    }


def _assert_same(reopened: Accountant, original: Accountant) -> None:
    assert _every_query(reopened) == _every_query(original)
    pd.testing.assert_frame_equal(reopened.ledger.draws, original.ledger.draws)
    pd.testing.assert_frame_equal(reopened.ledger.charges, original.ledger.charges)


def _charge_every_event(accountant: Accountant) -> None:
    for index, event in enumerate(EVERY_EVENT):
        if isinstance(event, events.NonPrivate):
            accountant.spend(event, key={"agent": "raw", "arm": 0, "phase": "init"})
            continue
        accountant.spend(event, key={"agent": [index % 3, 1], "arm": index % 2, "phase": "stream"})
    accountant.ledger.record_draws(
        keys={"agent": [0, 1], "arm": 1, "phase": "stream"},
        node=[3, 4],
        level=[0, 1],
        scale=4.0,
        l1_sensitivity=1.0,
    )


# ------------------------------------------------------------------ round trip
@pytest.mark.parametrize("keep_draw_rows", [True, False])
def test_reopening_restores_every_route_the_ledger_and_the_configuration(tmp_path, keep_draw_rows):
    path = tmp_path / "ledger.sqlite"
    options = {
        "neighboring_relation": "replace_one",
        "disjoint": ("agent", "arm"),
        "sequential": ("phase",),
        "keep_draw_rows": keep_draw_rows,
    }
    original = Accountant(**options, store=path)
    _charge_every_event(original)
    memory = Accountant(**options)
    _charge_every_event(memory)
    _assert_same(original, memory)  # the store changes nothing in the answers
    _assert_same(Accountant(**options, store=path), original)
    _assert_same(Accountant.open(path), original)


def test_every_event_encodes_losslessly_and_canonically():
    for event in EVERY_EVENT:
        text = encode_event(event)
        decoded = decode_event(text)
        assert decoded == event and type(decoded) is type(event)
        assert hash(decoded) == hash(event)
        assert encode_event(decoded) == text
    gaussian = events.Gaussian(noise_stddev=0.1 + 0.2, l2_sensitivity=1 / 3)
    assert decode_event(encode_event(gaussian)).noise_stddev == 0.1 + 0.2  # exact float


_LABELS = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", "é"]))
_EVENTS = st.one_of(
    st.builds(events.Laplace, scale=st.floats(0.1, 50), l1_sensitivity=st.floats(0.5, 2)),
    st.builds(events.LaplaceTree, scale=st.floats(0.5, 50), horizon=st.integers(1, 64)),
    st.builds(events.Gaussian, noise_stddev=st.floats(0.5, 50)),
    st.builds(events.RandomizedResponse, epsilon=st.floats(0.01, 2)),
)
_CHARGES = st.lists(
    st.tuples(_EVENTS, st.lists(_LABELS, min_size=1, max_size=3), _LABELS), min_size=0, max_size=6
)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(charges=_CHARGES, budget=st.sampled_from([None, ApproxDP(4.0, 1e-6)]))
def test_any_sequence_of_charges_round_trips(new_store, charges, budget):
    path = new_store()  # a fresh file, or a fresh PostgreSQL database, per example
    stored = Accountant(
        disjoint=("agent",),
        sequential=("round",),
        budget=budget,
        store=path,
        store_synchronous="normal",
    )
    memory = Accountant(disjoint=("agent",), sequential=("round",), budget=budget)
    for event, agents, label in charges:
        outcomes = []
        for accountant in (stored, memory):
            try:
                accountant.spend(event, key={"agent": agents, "round": label})
                outcomes.append("accepted")
            except BudgetExceededError:
                outcomes.append("refused")
        assert outcomes[0] == outcomes[1]
    stored.store.close()
    reopened = Accountant(disjoint=("agent",), sequential=("round",), budget=budget, store=path)
    assert reopened.routes.epsilons(1e-6) == memory.routes.epsilons(1e-6)
    assert reopened.get_delta(1.0) == memory.get_delta(1.0)
    pd.testing.assert_frame_equal(reopened.ledger.charges, memory.ledger.charges)
    reopened.store.close()


def test_label_dtypes_survive(tmp_path):
    path = tmp_path / "ledger.sqlite"
    accountant = Accountant(disjoint=("agent",), sequential=("tag", "weight"), store=path)
    accountant.spend(
        events.Laplace(scale=2.0),
        key={
            "agent": np.array([3, 4], dtype=np.int32),
            "tag": np.array(["x", "yz"]),
            "weight": np.array([0.5, np.nan]),
        },
    )
    accountant.spend(events.Laplace(scale=2.0), key={"agent": np.int64(3), "tag": None})
    reopened = Accountant.open(path)
    for (_, before), (_, after) in zip(
        accountant.ledger.rows(), reopened.ledger.rows(), strict=True
    ):
        assert before.keys() == after.keys()
        for level in before:
            assert after[level].dtype == before[level].dtype
            np.testing.assert_array_equal(after[level], before[level])
    pd.testing.assert_frame_equal(reopened.ledger.charges, accountant.ledger.charges)


# ------------------------------------------------------------------ all or nothing
def test_a_refused_or_failed_charge_leaves_memory_and_store_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.0), store=path)
    accountant.spend(events.Laplace(scale=2.0), key={"agent": 0})
    before = snapshot(accountant)
    with pytest.raises(BudgetExceededError):
        accountant.spend(events.Laplace(scale=1.0), key={"agent": 0})
    with pytest.raises(TypeError, match="label"):  # unstorable label: refused before commit
        accountant.spend(events.Laplace(scale=9.0), key={"agent": frozenset({1})})

    def failing_commit(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(LedgerStore, "commit", failing_commit)
    with pytest.raises(sqlite3.OperationalError):
        accountant.spend(events.Laplace(scale=9.0), key={"agent": 5})
    with pytest.raises(sqlite3.OperationalError):
        accountant.ledger.record_draws(
            keys={"agent": 0}, node=1, level=0, scale=2.0, l1_sensitivity=1.0
        )
    monkeypatch.undo()
    assert_unchanged(accountant, before)
    assert_unchanged(Accountant.open(path), before)
    accountant.spend(events.Laplace(scale=9.0), key={"agent": 5})  # the store still works
    assert len(Accountant.open(path).ledger.charges) == 2
    accountant.store.close()
    with pytest.raises(StoreError, match="closed"):
        accountant.spend(events.Laplace(scale=9.0), key={"agent": 6})
    assert len(accountant.ledger.charges) == 2


def test_a_failed_write_keeps_the_rows_it_read_from_other_writers(tmp_path, monkeypatch):
    path = tmp_path / "ledger.sqlite"
    writer = Accountant(disjoint=("agent",), store=path)
    other = Accountant(disjoint=("agent",), store=path)
    other.spend(events.Laplace(scale=5.0), key={"agent": 1})
    writer.spend(events.Laplace(scale=3.0), key={"agent": 0})  # an event `other` lacks
    writer.ledger.record_draws(keys={"agent": 0}, node=1, level=0, scale=3.0, l1_sensitivity=1.0)

    def failing_commit():
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(other.store.backend, "commit", failing_commit)
    with pytest.raises(sqlite3.OperationalError):  # reads writer's rows, then fails
        other.ledger.record_draws(keys={"agent": 1}, node=1, level=0, scale=5.0, l1_sensitivity=1.0)
    writer.spend(events.Laplace(scale=4.0), key={"agent": 2})
    with pytest.raises(sqlite3.OperationalError):  # an event it knows, after a new one
        other.spend(events.Laplace(scale=5.0), key={"agent": 1})
    monkeypatch.undo()
    _assert_same(other, writer)
    _assert_same(Accountant.open(path), writer)


def test_two_accountants_on_one_file_share_the_ledger_and_the_budget(tmp_path):
    path = tmp_path / "ledger.sqlite"
    first = Accountant(disjoint=("agent",), budget=PureDP(1.0), store=path)
    second = Accountant(disjoint=("agent",), budget=PureDP(1.0), store=path)
    first.spend(events.Laplace(scale=2.0), key={"agent": 0})
    assert second.get_epsilon(0.0) == 0.5  # queries read the other writer's charge
    second.spend(events.Laplace(scale=2.0), key={"agent": 0})
    assert second.odometer.would_exceed(events.Laplace(scale=2.0), key={"agent": 0})
    with pytest.raises(BudgetExceededError):
        first.spend(events.Laplace(scale=2.0), key={"agent": 0})
    assert first.get_epsilon(0.0) == second.get_epsilon(0.0) == 1.0
    assert first.odometer.remaining() == 0.0
    pd.testing.assert_frame_equal(first.ledger.charges, second.ledger.charges)


# ------------------------------------------------------------------ processes
def _start_writer(path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), "write", str(path)], stdout=subprocess.PIPE, text=True
    )


def test_writer_killed_at_random_points_loses_nothing_acknowledged_and_doubles_nothing(new_store):
    """SIGKILL a writer 5 times at seeded random points, each run continuing the same
    file; after each kill the file holds exactly the acknowledged charges and draw
    blocks, plus at most the one in flight, each whole (3 cells, 3 draws). Run against
    SQLite and PostgreSQL."""
    path = new_store()
    rng = np.random.default_rng(20261124)
    acknowledged = {"charge": -1, "draws": -1}
    for _ in range(5):
        child = _start_writer(path)
        wait_for, delay = int(rng.integers(1, 16)), float(rng.uniform(0.0, 0.01))
        for _ in range(wait_for):
            kind, step = child.stdout.readline().split()
            acknowledged[kind] = int(step)
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        for line in child.stdout.read().split("\n"):  # acks written before the kill
            if line:
                kind, step = line.split()
                acknowledged[kind] = int(step)
        child.wait()
        reopened = Accountant(**WRITER_LEVELS, store=path)
        charges = reopened.ledger.charges
        steps = charges["step"].to_numpy()
        last = int(steps.max())
        assert last in (acknowledged["charge"], acknowledged["charge"] + 1)
        assert charges.groupby("step").size().eq(3).all()  # whole charges only
        np.testing.assert_array_equal(steps, np.repeat(np.arange(last + 1), 3))  # none twice
        for step in (0, last):
            assert reopened.ledger.cells(where={"step": step}) == [[(step_event(step), 1)]]
        ledger = reopened.ledger.draws
        blocks = int(ledger["step"].max()) if len(ledger) else -1
        assert blocks in (acknowledged["draws"], acknowledged["draws"] + 1)
        np.testing.assert_array_equal(ledger["step"], np.repeat(np.arange(blocks + 1), 3))
        assert reopened.ledger.n_draws == 3 * (blocks + 1)
        reopened.store.close()
        acknowledged = {"charge": last, "draws": blocks}


def test_four_processes_racing_for_one_budget_never_exceed_it(tmp_path, new_store):
    path, go_file = new_store(), tmp_path / "go"
    workers = [  # they also race to create the file
        subprocess.Popen(
            [sys.executable, str(WORKER), "race", str(path), str(worker), "8", str(go_file)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for worker in range(4)
    ]
    for worker in workers:
        assert worker.stdout.readline().strip() == "ready"
    go_file.touch()
    outputs = [worker.communicate(timeout=120)[0].split() for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    accepted = [output.count("accepted") for output in outputs]
    assert sum(accepted) == 16  # 16 x (1/16) fills the budget exactly; 32 were tried
    final = Accountant.open(path)
    assert final.get_epsilon(0.0) <= RACE_BUDGET.epsilon
    per_worker = final.ledger.charges.groupby("worker").size().reindex(range(4), fill_value=0)
    assert per_worker.tolist() == accepted  # every accepted charge is in the ledger
    if isinstance(path, Path):
        assert not list(tmp_path.glob(f".{path.name}.*"))  # no staging file left behind


# ------------------------------------------------------------------ files it refuses
@pytest.fixture
def store_file(tmp_path) -> Path:
    path = tmp_path / "ledger.sqlite"
    accountant = Accountant(disjoint=("agent",), store=path)
    for block in range(4):  # about 40 pages: a cut or a zeroed page hits live data
        accountant.spend(
            events.Laplace(scale=1.0 + block), key={"agent": [f"agent {i}" for i in range(1500)]}
        )
    accountant.store.close()
    return path


def test_the_store_records_fedpriv_and_schema_versions(store_file):
    from fedpriv import __version__

    connection = sqlite3.connect(store_file)
    meta = dict(connection.execute("SELECT key, value FROM meta"))
    assert meta["fedpriv_version"] == __version__
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    connection.close()


def test_a_renamed_relation_row_is_refused_as_a_configuration_change(tmp_path):
    # Stores written before dp-accounting's name was adopted kept the relation under
    # the meta key `relation`; they predate schema 3, whose chain starts from the
    # configuration, so in a schema-3 store that name can only come from an edit.
    path = tmp_path / "old.sqlite"
    accountant = Accountant(
        neighboring_relation="user_at_all_agents", disjoint=("agent",), store=path
    )
    accountant.spend(events.Laplace(scale=10.0), key={"agent": 0})
    accountant.store.close()
    connection = sqlite3.connect(path)
    meta = dict(connection.execute("SELECT key, value FROM meta"))
    assert json.loads(meta["neighboring_relation"]) == "user_at_all_agents"
    assert "relation" not in meta
    with connection:
        connection.execute("UPDATE meta SET key = 'relation' WHERE key = 'neighboring_relation'")
    connection.close()
    with pytest.raises(LedgerCorruptedError, match="neighboring_relation"):
        Accountant.open(path)


@pytest.mark.parametrize(
    "damage, match",
    [
        (lambda data: b"garbage!" * 512, "not an SQLite database"),
        (lambda data: b"", "empty file"),
        (lambda data: data[: len(data) // 2], "malformed|damaged"),
        (lambda data: data[:200], "malformed|damaged|not a"),
        (lambda data: data[:4096] + b"\x00" * 4096 + data[8192:], "malformed|damaged"),
    ],
)
def test_damaged_files_are_refused_with_a_typed_error(store_file, damage, match):
    store_file.write_bytes(damage(store_file.read_bytes()))
    with pytest.raises(StoreFormatError, match=match):
        Accountant(disjoint=("agent",), store=store_file)
    with pytest.raises(StoreFormatError):
        Accountant.open(store_file)


def test_a_newer_schema_and_a_foreign_database_are_refused(store_file, tmp_path):
    connection = sqlite3.connect(store_file)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreFormatError, match="newer than this fedpriv"):
        Accountant(disjoint=("agent",), store=store_file)
    foreign = tmp_path / "other.sqlite"
    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE t (x)")
    connection.close()
    with pytest.raises(StoreFormatError, match="another application"):
        Accountant(disjoint=("agent",), store=foreign)
    assert sqlite3.connect(foreign).execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_another_configuration_is_refused_naming_the_difference(store_file):
    with pytest.raises(StoreMismatchError, match="budget: stored None, asked PureDP"):
        Accountant(disjoint=("agent",), budget=PureDP(1.0), store=store_file)
    with pytest.raises(StoreMismatchError, match="neighboring_relation"):
        Accountant(neighboring_relation="replace_one", disjoint=("agent",), store=store_file)
    with pytest.raises(StoreMismatchError, match="sequential"):
        Accountant(disjoint=("agent",), sequential=("round",), store=store_file)
    with pytest.raises(FileNotFoundError):
        Accountant.open(store_file.with_name("absent.sqlite"))
    with pytest.raises(ValueError, match="`store_synchronous` must be 'full' or 'normal'"):
        Accountant(disjoint=("agent",), store=store_file, store_synchronous="off")


def test_a_stored_event_of_an_unknown_type_is_refused(store_file):
    connection = sqlite3.connect(store_file)
    with connection:
        connection.execute(
            "UPDATE events SET encoding = ? WHERE id = 1",
            ('{"fields":{"scale":1.0},"type":"Unheard"}',),
        )
    connection.close()
    # The edited event row breaks the hash chain of the charge that names it.
    with pytest.raises(StoreFormatError, match=r"'Unheard' is not registered|hash chain"):
        Accountant.open(store_file)


# ------------------------------------------------------------------ fedpriv account
def test_fedpriv_account_reports_a_running_store(tmp_path, capsys):
    path = tmp_path / "ledger.sqlite"
    accountant = Accountant(disjoint=("agent",), budget=ApproxDP(2.0, 1e-5), store=path)
    accountant.spend(events.Laplace(scale=2.0), key={"agent": [0, 1]})
    accountant.spend(events.Gaussian(noise_multiplier=5.0), key={"agent": 1})
    assert main(["account", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["routes"] == {
        name: value if math.isfinite(value) else "inf"
        for name, value in accountant.routes.epsilons(1e-5).items()
    }
    assert report["tightest"]["epsilon"] == accountant.get_epsilon(1e-5)
    assert report["per_level"]["agent"] == {
        "0": accountant.get_epsilon(1e-5, where={"agent": 0}),
        "1": accountant.get_epsilon(1e-5, where={"agent": 1}),
    }
    assert report["remaining"] == pytest.approx(2.0 - accountant.get_epsilon(1e-5))
    assert report["budget"] == {"epsilon": 2.0, "delta": 1e-5}
    assert report["n_charges"] == 3
    out = tmp_path / "spent.md"
    assert main(["account", str(path), "--delta", "0.001", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "remaining" in text and f"{accountant.get_epsilon(1e-3):.6g}" in text
    assert "## Spent so far" in out.read_text() and "remaining" in out.read_text()
    toml = tmp_path / "deployment.toml"
    toml.write_text('[[release]]\nevent = "Laplace"\nper = { agent = 2 }\nscale = 2.0\n')
    assert main(["account", str(toml), "--delta", "0.001"]) == 2
    assert "`--delta` applies to a ledger store" in capsys.readouterr().err
    (tmp_path / "bad.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x01" * 100)
    assert main(["account", str(tmp_path / "bad.sqlite")]) == 2
    assert "not a readable fedpriv ledger" in capsys.readouterr().err


def test_opening_a_store_while_other_processes_charge_it_never_reports_tampering(new_store, capsys):
    """Issue 34: the rows and the chain head are read in one snapshot, so a charge
    committed by another process between the two reads is no false alarm.

    Two processes write to the store (a block of draws, and every tenth time also a
    charge, one transaction each) while this one opens and verifies it 2,000 times
    (`open_store`, which verifies the whole ledger; every 50th time also
    `Accountant.open` and `fedpriv account --verify`); 500 times on PostgreSQL,
    where each open is a new server connection. Every 4th open asks one writer
    for its next write, which it commits while the following opens run; pacing the
    writes keeps the ledger (and each open's work) small. On the former code the
    first false alarm came within a few dozen opens.
    """
    path = new_store()
    Accountant(disjoint=("agent",), keep_draw_rows=False, store=path).store.close()
    writers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), "churn", str(path), str(worker)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for worker in range(2)
    ]
    try:
        for writer in writers:
            assert writer.stdout.readline().strip() == b"ready"
        seen = set()
        n_opens = 2000 if isinstance(path, Path) else 500  # a server connection each
        for attempt in range(n_opens):
            if attempt % 4 == 0:
                writer = writers[attempt // 4 % 2].stdin
                writer.write(b"w")
                writer.flush()
            store = open_store(path)  # raised LedgerCorruptedError before the fix
            seen.add(tuple(head[0] for head in store.chain_heads().values()))
            store.close()
            if attempt % 50 == 0:
                Accountant.open(path).store.close()
                if isinstance(path, Path):
                    assert main(["account", "--verify", str(path)]) == 0, capsys.readouterr().err
        for writer in writers:
            writer.stdin.close()
            assert writer.wait(timeout=120) == 0
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert len(seen) > 100  # the opens saw the ledger grow under them
    final = Accountant.open(path)
    assert final.ledger.n_draws == n_opens // 4 and set(final.ledger.charges["agent"]) == {0, 1}
    final.store.close()
