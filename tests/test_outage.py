"""storage/outage.py on the real embedded Postgres: what is and is not an outage. A stopped database is
tests/server/test_operator.py's (a real `thotqen serve`)."""

from __future__ import annotations

import time

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from storage.db import Database
from storage.outage import DatabaseUnavailable


def test_a_statement_timeout_is_the_querys_failure_not_an_outage(db) -> None:
    with pytest.raises(psycopg.errors.QueryCanceled), db.connection() as conn, conn.transaction():
        conn.execute("select set_config('statement_timeout', '50', true)")
        conn.execute("select pg_sleep(2)")
    assert not db.availability.down
    db.ping()


def test_no_free_connection_answers_at_once_but_a_live_database_is_not_marked_down(db) -> None:
    pool: ConnectionPool[psycopg.Connection] = ConnectionPool(db.uri, min_size=1, max_size=1, timeout=0.5,
                                                              kwargs={"autocommit": True}, open=True)
    small = Database(pool=pool, mode="embedded", uri=db.uri)
    try:
        with small.connection():
            started = time.monotonic()
            with pytest.raises(DatabaseUnavailable, match="no database connection was free"), small.connection():
                pass
            assert time.monotonic() - started < 10  # the acquire timeout (0.5 s), not the pool's default 30 s
        assert not small.availability.down  # a fresh connection worked: busy, not down
        small.ping()
    finally:
        small.close()


def test_a_database_that_refuses_connections_is_marked_down_until_one_succeeds(db) -> None:
    pool: ConnectionPool[psycopg.Connection] = ConnectionPool(db.uri, min_size=1, max_size=2, timeout=0.5,
                                                              kwargs={"autocommit": True}, open=True)
    small = Database(pool=pool, mode="embedded", uri=db.uri)
    small.availability.retry_s = 0.2
    try:
        good_uri, small.uri = small.uri, "postgresql:///nothing?host=/nonexistent-socket-dir"  # what probes reach
        with pytest.raises(DatabaseUnavailable), small.connection() as conn:
            conn.execute("select pg_terminate_backend(pg_backend_pid())")  # this connection breaks
        assert small.availability.down
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailable, match="unreachable"), small.connection():
            pass
        assert time.monotonic() - started < 5  # refused at once, no pool wait
        small.uri = good_uri  # reachable again: the retry thread notices
        deadline = time.monotonic() + 30
        while small.availability.down:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        small.ping()  # the broken connection was dropped by the pool's check
    finally:
        small.close()
