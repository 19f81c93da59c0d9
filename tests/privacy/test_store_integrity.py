"""Issue 20: a damaged store never opens as a wrong ledger.

Each row carries a hash chained over the previous row, the store identity and its
own content; the chain heads count the rows. Every defect below raises a typed
:class:`~fedpriv.privacy.errors.StoreFormatError` (``LedgerCorruptedError`` naming
the first bad row) on open, and ``fedpriv account`` exits non-zero on it.
"""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from fedpriv.cli.main import main
from fedpriv.privacy import Accountant
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import LedgerCorruptedError, StoreFormatError, StorePathError


def _ledger(path, n=3):
    accountant = Accountant(disjoint=("agent",), store=path)
    for agent in range(n):
        accountant.spend(events.Laplace(scale=2.0 + agent), key={"agent": [agent, agent + 10]})
    accountant.ledger.record_draws(
        keys={"agent": [0]}, node=[1], level=[0], scale=2.0, l1_sensitivity=1.0
    )
    return accountant


@pytest.fixture
def store_file(tmp_path):
    path = tmp_path / "ledger.sqlite"
    _ledger(path).store.close()
    return path


def _sql(path, *statements):
    connection = sqlite3.connect(path)
    with connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()


def _refused(path, match, capsys=None):
    with pytest.raises(StoreFormatError, match=match):
        Accountant(disjoint=("agent",), store=path)
    with pytest.raises(StoreFormatError, match=match):
        Accountant.open(path)


@pytest.mark.parametrize(
    ("statements", "match"),
    [
        (["DELETE FROM events"], "charge row seq 1 names event id .* missing"),
        (
            ["PRAGMA foreign_keys = OFF", "DELETE FROM events WHERE id = 2"],
            "charge row seq 2 names event id 2",
        ),
        (["DELETE FROM charges", "DELETE FROM events"], "rows were removed"),
        (["DELETE FROM charges WHERE seq = 3"], "rows were removed"),
        (["DELETE FROM charges WHERE seq = 2"], "charge row seq 3 fails the hash chain"),
        (
            ['UPDATE charges SET keys = \'{"agent":["<i8",[0,10,20]]}\' WHERE seq = 1'],
            "charge row seq 1 records 2 cell",
        ),
        (
            [
                'UPDATE charges SET n_cells = 3, keys = \'{"agent":["<i8",[0,10,20]]}\' WHERE seq = 1'
            ],
            "charge row seq 1 fails the hash chain",
        ),
        (["UPDATE draws SET n_draws = 5"], "draw row seq 1 fails the hash chain"),
        (["DELETE FROM chain_head"], "chain head"),
    ],
)
def test_edited_ledgers_name_the_first_bad_row(store_file, statements, match):
    _sql(store_file, *statements)
    _refused(store_file, match)
    with pytest.raises(LedgerCorruptedError):
        Accountant.open(store_file)


def test_a_wal_copied_from_another_store_is_detected(tmp_path):
    mine, theirs = tmp_path / "mine.sqlite", tmp_path / "theirs.sqlite"
    _ledger(mine, n=1).store.close()
    other = _ledger(theirs, n=4)  # stays open: its charges are still in its WAL
    wal = theirs.with_name(theirs.name + "-wal")
    assert wal.stat().st_size > 0
    shutil.copyfile(wal, mine.with_name(mine.name + "-wal"))
    other.store.close()
    _refused(mine, "hash chain|rows were removed|store identity")


@pytest.mark.parametrize(
    "statement", ["DROP TABLE draws", "DROP TABLE chain_head", "DROP TABLE meta"]
)
def test_a_dropped_table_is_a_typed_error(store_file, statement):
    _sql(store_file, statement)
    _refused(
        store_file,
        "not a readable fedpriv ledger|no such table|store identity|malformed|schema was changed",
    )


def test_flipped_bits_are_a_typed_error_at_every_position(store_file):
    data = store_file.read_bytes()
    broken = store_file.with_name("broken.sqlite")
    for position in range(100, len(data), max(1, len(data) // 40)):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        broken.write_bytes(bytes(damaged))
        try:
            accountant = Accountant.open(broken)
        except StoreFormatError:
            continue  # refused with a typed error
        # Opened: the flip hit unused space, so the ledger must be the original one.
        assert len(accountant.ledger.charges) == 6 and accountant.ledger.n_draws == 1
        accountant.store.close()


@pytest.mark.parametrize(
    "make_path, match",
    [
        (lambda tmp: "", "empty string"),
        (lambda tmp: tmp, "directory"),
        (lambda tmp: tmp / "missing" / "ledger.sqlite", "does not exist"),
        (lambda tmp: 3, "must be a file path"),
    ],
)
def test_bad_store_paths_raise_a_value_error_naming_store(tmp_path, make_path, match):
    with pytest.raises(StorePathError, match=f"`store`.*{match}|{match}"):
        Accountant(store=make_path(tmp_path))
    with pytest.raises(ValueError, match="`store`"):
        Accountant(store=make_path(tmp_path))


def test_fedpriv_account_exits_non_zero_on_a_damaged_store(store_file, capsys):
    assert main(["account", str(store_file)]) == 0
    capsys.readouterr()
    _sql(store_file, "DELETE FROM events")
    assert main(["account", str(store_file)]) == 2
    err = capsys.readouterr().err
    assert "missing from the events table" in err and "Traceback" not in err


def test_fedpriv_account_verify(store_file, capsys):
    assert main(["account", "--verify", str(store_file)]) == 0
    assert "ledger verified" in capsys.readouterr().out
    _sql(store_file, "UPDATE charges SET pid = pid, keys = replace(keys, '10', '11') WHERE seq = 1")
    assert main(["account", "--verify", str(store_file)]) == 2
    assert "charge row seq 1" in capsys.readouterr().err
