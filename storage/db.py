"""Connection pool, migrations and per-connection settings."""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import psycopg
import psycopg.conninfo
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from settings import Settings
from sql import MIGRATIONS_DIR

log = logging.getLogger(__name__)

MIGRATION_LOCK = 7_160_001  # advisory lock key (transaction-scoped): one migrator at a time
ROW_SECURITY = "099_row_security.sql"  # run again after later migrations (see the file)


def _configure(conn: psycopg.Connection) -> None:
    # No session state here (no SET, no session advisory lock): behind a transaction pooler the next
    # transaction may run on another server connection. Search settings are set per transaction
    # (storage/search.py), job ownership is a lease row (storage/jobs.py).
    register_vector(conn)
    conn.commit()


def transaction_pooler(settings: Settings, uri: str) -> bool:
    """Whether `uri` goes through a transaction-mode pooler (Supabase's port 6543, PgBouncer in
    transaction mode): DATABASE_POOLER=transaction says so, `auto` reads the port."""
    if settings.database_pooler != "auto":
        return settings.database_pooler == "transaction"
    try:
        return psycopg.conninfo.conninfo_to_dict(uri).get("port") == "6543"
    except psycopg.ProgrammingError:
        return False


def connect_kwargs(settings: Settings, uri: str) -> dict:
    """psycopg connection options: prepared statements off behind a transaction pooler, where a
    statement prepared on one server connection is unknown to the next."""
    return {"prepare_threshold": None} if transaction_pooler(settings, uri) else {}


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
        if applied and ROW_SECURITY in {p.name for p in migration_files()} and applied[-1] != ROW_SECURITY:
            # tables and functions added after the lock-down migration are locked down too
            conn.execute((MIGRATIONS_DIR / ROW_SECURITY).read_text())
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


# Two openings at once in one process (tests, a CLI command beside its runtime) must not start the
# embedded server twice.
_opening = threading.Lock()


def open_database(settings: Settings) -> Database:
    """Start or connect, migrate, and return a new pooled Database (runtime.py opens the process's one)."""
    with _opening:
        uri, mode = resolve_uri(settings)
        return _connect(uri, mode, settings.db_pool_size, transaction_pooler(settings, uri))


def _connect(uri: str, mode: str, pool_size: int, pooled: bool) -> Database:
    extra = {"prepare_threshold": None} if pooled else {}  # see connect_kwargs
    with psycopg.connect(uri, autocommit=False, **extra) as conn:
        applied = migrate(conn)
        if applied:
            log.info("migrations applied: %s", ", ".join(applied))
    pool = ConnectionPool(
        uri,
        min_size=1,
        max_size=pool_size,
        configure=_configure,
        kwargs={"autocommit": True, **extra},
        open=True,
    )
    pool.wait(timeout=30)
    return Database(pool=pool, mode=mode, uri=uri)
