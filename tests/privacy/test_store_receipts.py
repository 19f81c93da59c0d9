"""Issue 34: what the ledger's chain covers, receipts, expected heads and the key.

The configuration and the schema are checked on every open (the chain starts from
the configuration); a rewind, an older copy or another ledger's file is detected
with a head kept elsewhere; with an HMAC key nobody without it can re-chain an
edited file.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import sqlite3

import pytest
from fedpriv.cli.main import main
from fedpriv.privacy import Accountant, PureDP
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import LedgerCorruptedError, StoreMismatchError
from fedpriv.privacy.ledger.integrity import LedgerHead
from fedpriv.privacy.ledger.store import LedgerStore

KEY = bytes(range(32))


def _ledger(path, n=3, **options):
    accountant = Accountant(
        disjoint=("agent",), sequential=("round",), budget=PureDP(2.0), store=path, **options
    )
    for agent in range(n):
        accountant.spend(events.Laplace(scale=10.0), key={"agent": agent, "round": agent})
    return accountant


def _sql(path, *statements):
    connection = sqlite3.connect(path)
    with connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()


@pytest.mark.parametrize(
    ("statement", "field"),
    [
        (
            'UPDATE meta SET value = \'{"type": "PureDP", "epsilon": 100.0}\' '
            "WHERE key = 'budget'",
            "budget",
        ),  # raised 50×
        ("UPDATE meta SET value = 'null' WHERE key = 'budget'", "budget"),  # removed
        ("UPDATE meta SET value = '[]' WHERE key = 'disjoint'", "disjoint"),  # levels
        ("UPDATE meta SET value = '[\"agent\"]' WHERE key = 'sequential'", "sequential"),
        (
            "UPDATE meta SET value = '\"replace_one\"' WHERE key = 'neighboring_relation'",
            "neighboring_relation",
        ),
        ("UPDATE meta SET value = 'hmac-sha256' WHERE key = 'chain'", "chain"),
        ("DELETE FROM meta WHERE key = 'anchor'", "anchor"),
    ],
)
def test_a_changed_configuration_is_refused_naming_the_field(tmp_path, statement, field):
    path = tmp_path / "ledger.sqlite"
    _ledger(path).store.close()
    _sql(path, statement)
    with pytest.raises(LedgerCorruptedError, match=field):
        Accountant.open(path)
    assert main(["account", "--verify", str(path)]) == 2


def test_a_configuration_change_with_a_recomputed_anchor_breaks_the_chain(tmp_path):
    """Rewriting the anchor too moves the chain's start: the first row fails."""
    path = tmp_path / "ledger.sqlite"
    _ledger(path).store.close()
    connection = sqlite3.connect(path)
    meta = dict(connection.execute("SELECT key, value FROM meta"))
    meta["budget"] = json.dumps({"type": "PureDP", "epsilon": 100.0})
    anchor = json.loads(meta["anchor"])
    anchor["budget"] = hashlib.sha256(meta["budget"].encode()).hexdigest()
    with connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'budget'", (meta["budget"],))
        connection.execute(
            "UPDATE meta SET value = ? WHERE key = 'anchor'", (json.dumps(anchor, sort_keys=True),)
        )
    connection.close()
    with pytest.raises(LedgerCorruptedError, match="charge row seq 1 fails the hash chain"):
        Accountant.open(path)


def test_a_trigger_that_deletes_new_charges_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    open_accountant = _ledger(path)
    _sql(
        path,
        "CREATE TRIGGER vanish AFTER INSERT ON charges BEGIN "
        "DELETE FROM charges WHERE seq = NEW.seq; END",
    )
    with pytest.raises(LedgerCorruptedError, match="trigger 'vanish'"):
        Accountant.open(path)
    # An accountant that was open before the trigger refuses its next charge rather
    # than acknowledge one the trigger deletes.
    with pytest.raises(LedgerCorruptedError, match="trigger 'vanish'"):
        open_accountant.spend(events.Laplace(scale=10.0), key={"agent": 9})
    assert len(open_accountant.ledger.charges) == 3
    _sql(path, "DROP TRIGGER vanish")
    open_accountant.spend(events.Laplace(scale=10.0), key={"agent": 9})
    assert len(Accountant.open(path).ledger.charges) == 4


def test_every_acknowledged_write_has_a_receipt_that_later_opens_check(tmp_path):
    path = tmp_path / "ledger.sqlite"
    accountant = _ledger(path, n=0)
    assert accountant.store.last_receipt is None
    receipts = []
    for agent in range(3):
        assert accountant.spend(events.Laplace(scale=10.0), key={"agent": agent}) is None
        receipts.append(accountant.store.last_receipt)
    accountant.ledger.record_draws(
        keys={"agent": 0}, node=1, level=0, scale=10.0, l1_sensitivity=1.0
    )
    receipts.append(accountant.store.last_receipt)
    assert [(r.charges, r.draws) for r in receipts] == [(1, 0), (2, 0), (3, 0), (3, 1)]
    assert len({r.digest for r in receipts}) == 4
    for receipt in receipts:  # the ledger extends every earlier receipt
        assert LedgerHead.parse(str(receipt)) == receipt
        Accountant.open(path, expect_head=receipt).store.close()
        Accountant.open(path, expect_head=str(receipt)).store.close()
        assert main(["account", "--verify", str(path), "--expect-head", str(receipt)]) == 0
    other = Accountant(disjoint=("agent",), sequential=("round",), budget=PureDP(2.0), store=path)
    other.spend(events.Laplace(scale=10.0), key={"agent": 5})  # another process's charge
    assert other.store.last_receipt.charges == 4
    assert LedgerStore.open(path, expect_head=receipts[-1]).head() == other.store.last_receipt


def test_a_rewind_an_older_copy_and_another_file_are_detected_with_the_expected_head(
    tmp_path, capsys
):
    path = tmp_path / "ledger.sqlite"
    accountant = _ledger(path, n=2)
    older = tmp_path / "older.sqlite"
    accountant.store.close()
    shutil.copyfile(path, older)
    accountant = Accountant.open(path)
    accountant.spend(events.Laplace(scale=10.0), key={"agent": 7})
    head = accountant.store.last_receipt
    accountant.store.close()
    rewound = tmp_path / "rewound.sqlite"
    shutil.copyfile(path, rewound)
    connection = sqlite3.connect(rewound)  # truncate the tail and rewind the head
    previous = connection.execute("SELECT chain FROM charges WHERE seq = 2").fetchone()[0]
    with connection:
        connection.execute("DELETE FROM charges WHERE seq = 3")
        connection.execute(
            "UPDATE chain_head SET n_rows = 2, last_seq = 2, hash = ? WHERE name = 'charges'",
            (previous,),
        )
    connection.close()
    stranger = tmp_path / "stranger.sqlite"
    _ledger(stranger, n=3).store.close()  # same configuration, same number of charges
    for candidate in (rewound, older):
        Accountant.open(candidate).store.close()  # without the head: opens (documented limit)
        with pytest.raises(LedgerCorruptedError, match="holds 2"):
            Accountant.open(candidate, expect_head=head)
        assert main(["account", "--verify", str(candidate), "--expect-head", str(head)]) == 2
        assert "older copy" in capsys.readouterr().err
    with pytest.raises(LedgerCorruptedError, match="another ledger's file"):
        Accountant.open(stranger, expect_head=head)
    with pytest.raises(ValueError, match="expect_head"):
        Accountant.open(path, expect_head="3:0:nothex")
    assert main(["account", "--verify", str(path), "--expect-head", "3"]) == 2
    assert "expect_head" in capsys.readouterr().err


def test_a_keyed_store_opens_only_with_its_key_and_cannot_be_rechained_without_it(
    tmp_path, monkeypatch, capsys
):
    path = tmp_path / "ledger.sqlite"
    _ledger(path, store_key=KEY).store.close()
    reopened = Accountant.open(path, key=KEY)
    assert len(reopened.ledger.charges) == 3
    head = reopened.store.last_receipt or LedgerStore.open(path, key=KEY).head()
    reopened.store.close()
    with pytest.raises(StoreMismatchError, match="keyed"):
        Accountant.open(path)
    with pytest.raises(LedgerCorruptedError, match="key does not match"):
        Accountant.open(path, key=secrets.token_bytes(32))
    unkeyed = tmp_path / "unkeyed.sqlite"
    _ledger(unkeyed).store.close()
    with pytest.raises(StoreMismatchError, match="without a key"):
        Accountant.open(unkeyed, key=KEY)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Accountant.open(path, key=b"short")
    with pytest.raises(TypeError, match="`key` must be bytes"):
        Accountant.open(path, key="text")
    # Whoever lacks the key can only re-chain an edited ledger with plain SHA-256,
    # which the key holder refuses (as `unkeyed` above); marking it unkeyed without
    # re-chaining breaks the anchor.
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE meta SET value = 'sha256' WHERE key = 'chain'")
    connection.close()
    with pytest.raises(LedgerCorruptedError, match="stored chain"):
        Accountant.open(path, key=KEY)
    monkeypatch.setenv("FEDPRIV_LEDGER_KEY", KEY.hex())
    assert main(["account", "--verify", str(path)]) == 2
    assert main(["account", "--verify", str(tmp_path / "keyed2.sqlite")]) == 2
    keyed = tmp_path / "keyed.sqlite"
    _ledger(keyed, store_key=KEY).store.close()
    capsys.readouterr()
    assert main(["account", "--verify", str(keyed), "--expect-head", str(head)]) == 2
    assert main(["account", "--verify", str(keyed)]) == 0
    assert "keyed" in capsys.readouterr().out
    assert main(["account", str(keyed), "--json"]) == 0
    monkeypatch.delenv("FEDPRIV_LEDGER_KEY")
    assert main(["account", "--verify", str(keyed)]) == 2
    assert "FEDPRIV_LEDGER_KEY" in capsys.readouterr().err


def test_the_postgresql_store_refuses_the_same_tampering(postgres_server):
    """The PostgreSQL store shares the anchor, the chain, receipts and the key."""
    import psycopg

    from tests.privacy.conftest import new_postgres_url

    url = new_postgres_url(postgres_server)
    accountant = _ledger(url)
    head = accountant.store.last_receipt
    accountant.store.close()
    Accountant.open(url, expect_head=head).store.close()

    def sql(*statements):
        with psycopg.connect(url, autocommit=True) as connection:
            for statement in statements:
                connection.execute(statement)

    sql("UPDATE meta SET value = 'null' WHERE key = 'budget'")
    with pytest.raises(LedgerCorruptedError, match="stored budget"):
        Accountant.open(url)
    sql('UPDATE meta SET value = \'{"type": "PureDP", "epsilon": 2.0}\' WHERE key = \'budget\'')
    Accountant.open(url).store.close()  # restored exactly: opens again
    sql(
        "CREATE FUNCTION vanish() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN DELETE FROM charges WHERE seq = NEW.seq; RETURN NULL; END $$",
        "CREATE TRIGGER vanish AFTER INSERT ON charges FOR EACH ROW EXECUTE FUNCTION vanish()",
    )
    with pytest.raises(LedgerCorruptedError, match="trigger 'vanish'"):
        Accountant.open(url)
    sql("DROP TRIGGER vanish ON charges")
    sql(
        "DELETE FROM charges WHERE seq = 3",
        "UPDATE chain_head SET n_rows = 2, last_seq = 2, "
        "hash = (SELECT chain FROM charges WHERE seq = 2) WHERE name = 'charges'",
    )
    Accountant.open(url).store.close()  # a rewind opens without the head (documented)
    with pytest.raises(LedgerCorruptedError, match="holds 2"):
        Accountant.open(url, expect_head=head)
    keyed = new_postgres_url(postgres_server)
    _ledger(keyed, store_key=KEY).store.close()
    with pytest.raises(StoreMismatchError, match="keyed"):
        Accountant.open(keyed)
    assert len(Accountant.open(keyed, key=KEY).ledger.charges) == 3


def test_account_reports_and_verifies_either_store_kind(new_store, capsys):
    """`fedpriv account` takes a SQLite file or a postgresql:// URL; the URL's password
    is never printed."""
    from fedpriv.cli.main import _shown

    location = new_store()
    accountant = _ledger(location)
    receipt = accountant.store.last_receipt
    accountant.store.close()
    capsys.readouterr()
    assert main(["account", "--verify", str(location), "--expect-head", str(receipt)]) == 0
    assert f"head {receipt}" in capsys.readouterr().out
    assert main(["account", str(location), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_charges"] == 3 and report["spent"] == pytest.approx(0.1)
    assert _shown("postgresql://user:secret@host/db") == "postgresql://user:***@host/db"
    assert _shown("postgresql://user@host/db") == "postgresql://user@host/db"
