"""Connection pool, migrations and per-connection settings."""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from settings import Settings
from sql import MIGRATIONS_DIR

log = logging.getLogger(__name__)

MIGRATION_LOCK = 7_160_001  # advisory lock key: one migrator at a time


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)
    # A filtered HNSW scan keeps walking the graph until enough rows pass the filter (pgvector 0.8).
    conn.execute("set hnsw.iterative_scan = relaxed_order")
    conn.execute("set hnsw.ef_search = 100")
    conn.commit()


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS_DIR.glob("*.sql"))


def _checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply every migration that is new or changed since it was applied. Idempotent.

    Migration files are written to be re-runnable (`if not exists`, `create or replace`).
    """
    applied: list[str] = []
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "create table if not exists schema_migrations ("
            " name text primary key, checksum text not null,"
            " applied_at timestamptz not null default now())"
        )
        done = dict(conn.execute("select name, checksum from schema_migrations").fetchall())
        for path in migration_files():
            checksum = _checksum(path)
            if done.get(path.name) == checksum:
                continue
            log.info("applying migration %s", path.name)
            conn.execute(path.read_text())
            conn.execute(
                "insert into schema_migrations (name, checksum) values (%s, %s)"
                " on conflict (name) do update set checksum = excluded.checksum, applied_at = now()",
                (path.name, checksum),
            )
            applied.append(path.name)
    return applied


def pending_migrations(conn: psycopg.Connection) -> list[str]:
    exists = conn.execute("select to_regclass('schema_migrations') is not null").fetchone()[0]
    done = dict(conn.execute("select name, checksum from schema_migrations").fetchall()) if exists else {}
    return [p.name for p in migration_files() if done.get(p.name) != _checksum(p)]


def server_version(conn: psycopg.Connection) -> str:
    return conn.execute("show server_version").fetchone()[0]


def pgvector_version(conn: psycopg.Connection) -> str | None:
    """The installed pgvector version, else the one the server could install; None when it has none."""
    row = conn.execute(
        "select coalesce((select extversion from pg_extension where extname = 'vector'),"
        " (select default_version from pg_available_extensions where name = 'vector'))"
    ).fetchone()
    return row[0] if row else None


@dataclass
class Database:
    """A pool on a migrated database. `mode` is 'embedded' or 'external'."""

    pool: ConnectionPool
    mode: str
    uri: str

    def connection(self):  # noqa: ANN201 - a context manager yielding psycopg.Connection
        return self.pool.connection()

    def ping(self) -> None:
        """Raise unless the database answers a trivial query."""
        with self.connection() as conn:
            conn.execute("select 1")

    def close(self) -> None:
        self.pool.close()


def resolve_uri(settings: Settings) -> tuple[str, str]:
    if settings.database_url:
        return settings.database_url, "external"
    from storage.embedded import start_embedded_postgres

    return start_embedded_postgres(settings.home / "pg"), "embedded"


# Concurrent first callers (lazy graph services) must not start the server or migrate twice.
_opening = threading.Lock()


def open_database(settings: Settings) -> Database:
    """Start or connect, migrate, and return a pooled Database (one per URI and pool size per process)."""
    with _opening:
        uri, mode = resolve_uri(settings)
        return _database(uri, mode, settings.db_pool_size)


@functools.cache
def _database(uri: str, mode: str, pool_size: int) -> Database:
    with psycopg.connect(uri, autocommit=False) as conn:
        applied = migrate(conn)
        if applied:
            log.info("migrations applied: %s", ", ".join(applied))
    pool = ConnectionPool(
        uri,
        min_size=1,
        max_size=pool_size,
        configure=_configure,
        kwargs={"autocommit": True},
        open=True,
    )
    pool.wait(timeout=30)
    return Database(pool=pool, mode=mode, uri=uri)
