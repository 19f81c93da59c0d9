"""Ledger-store fixtures: the same tests run against SQLite and PostgreSQL.

The PostgreSQL server comes from ``pgserver`` (a server shipped as a wheel, started
without root set-up in a temporary folder, once per test session); each test gets a
fresh database. Where ``pgserver`` or ``psycopg`` is missing, or the server cannot
start, the PostgreSQL variants skip with the reason.
"""

from __future__ import annotations

import uuid

import pytest

STORE_KINDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory):
    """A PostgreSQL server for the session (skips if none can be started)."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver is not installed")
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    try:
        server = pgserver.get_server(tmp_path_factory.mktemp("postgres"), cleanup_mode="stop")
    except Exception as error:  # no server on this machine: say why
        pytest.skip(f"no PostgreSQL server could be started: {error!r}")
    yield server
    server.cleanup()


def new_postgres_url(server) -> str:
    """URL of a fresh, empty database on ``server``."""
    import psycopg

    base = server.get_uri()
    name = f"ledger_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    head, _, query = base.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}?{query}"


@pytest.fixture(params=STORE_KINDS)
def new_store(request, tmp_path):
    """A function returning a fresh store location of the parametrized kind: a file
    path under ``tmp_path`` (SQLite) or a ``postgresql://`` URL of a new database."""
    if request.param == "sqlite":
        counter = iter(range(10**6))
        return lambda: tmp_path / f"ledger{next(counter)}.sqlite"
    server = request.getfixturevalue("postgres_server")
    return lambda: new_postgres_url(server)
