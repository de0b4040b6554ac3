"""Connection pool, migrations and per-connection settings."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

import sql
from settings import Settings
from sql import ROW_SECURITY
from storage.embedded import start_embedded_postgres
from storage.outage import Availability, DatabaseUnavailable
from storage.rows import scalar
from storage.tenancy import check as check_tenancy

log = logging.getLogger(__name__)

MIGRATION_LOCK = 7_160_001  # advisory lock key (transaction-scoped): one migrator at a time


def _configure(conn: psycopg.Connection) -> None:
    # No session state here (no SET, no session advisory lock): behind a transaction pooler the next
    # transaction may run on another server connection. Search settings are set per transaction
    # (storage/search.py), job ownership is a lease row (storage/jobs.py).
    register_vector(conn)
    conn.commit()


def transaction_pooler(settings: Settings, uri: str) -> bool:
    """Whether `uri` goes through a transaction-mode pooler (Supabase's port 6543, PgBouncer in
    transaction mode): DATABASE_POOLER=transaction says so, `auto` reads the port."""
    if settings.database.pooler != "auto":
        return settings.database.pooler == "transaction"
    try:
        return psycopg.conninfo.conninfo_to_dict(uri).get("port") == "6543"
    except psycopg.ProgrammingError:
        return False


def connect_kwargs(settings: Settings, uri: str) -> dict[str, Any]:
    """psycopg connection options: prepared statements off behind a transaction pooler, where a
    statement prepared on one server connection is unknown to the next."""
    return {"prepare_threshold": None} if transaction_pooler(settings, uri) else {}


# Migrations (the rules: sql/__init__.py). Versioned files, sql/NNN_*.sql, are applied once each, by
# name, and never again: one that changed after it was applied stops the migrator (MigrationChanged)
# rather than run, since an edited old migration would bring back old code (issue 23). Repeatable
# files, sql/functions/*.sql, each the one body of a function, are applied after them whenever their
# checksum changes. Then row security runs again over whatever was created. All in one transaction
# under a transaction-scoped advisory lock: a half-applied schema is never seen, two starts never race.


class MigrationChanged(RuntimeError):
    """A versioned migration differs from the one this database applied."""


def _recorded(conn: psycopg.Connection) -> dict[str, str]:
    exists = scalar(conn.execute("select to_regclass('schema_migrations') is not null"), bool)
    return dict(conn.execute("select name, checksum from schema_migrations").fetchall()) if exists else {}


def _plan(done: dict[str, str]) -> tuple[list[Path], list[Path], list[str]]:
    """(versioned files to apply, repeatable files to apply, applied files recorded under a superseded
    checksum, to record under their released one). Raises MigrationChanged before anything runs."""
    superseded = sql.manifest()["superseded"]
    versioned, adopt, changed = [], [], []
    for path in sql.versioned_files():
        name, checksum = sql.migration_name(path), sql.checksum(path)
        recorded = done.get(name)
        if recorded is None:
            versioned.append(path)
        elif recorded in superseded.get(name, ()):
            adopt.append(name)
        elif recorded != checksum:
            changed.append(name)
    if changed:
        raise MigrationChanged(
            f"migrations changed since this database applied them: {', '.join(changed)}. A released"
            " migration is never applied twice: restore the file (git checkout sql/) and put the change"
            " in a new sql/NNN_*.sql, or, for a function, in sql/functions/. Only if the migration was"
            " never released (a local draft), delete its row from schema_migrations to apply it again."
        )
    repeatable = [p for p in sql.repeatable_files() if done.get(sql.migration_name(p)) != sql.checksum(p)]
    return versioned, repeatable, adopt


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply the versioned migrations not yet applied, then the repeatable files that changed, and
    return their names. Idempotent; raises MigrationChanged when an applied migration was edited."""
    applied: list[str] = []
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "create table if not exists schema_migrations ("
            " name text primary key, checksum text not null,"
            " applied_at timestamptz not null default now())"
        )
        versioned, repeatable, adopt = _plan(_recorded(conn))
        for name in adopt:
            log.info("migration %s: recording its released checksum (its functions moved to sql/functions)", name)
            _record(conn, sql.MIGRATIONS_DIR / name)
        for path in [*versioned, *repeatable]:
            log.info("applying migration %s", sql.migration_name(path))
            conn.execute(path.read_text())
            _record(conn, path)
            applied.append(sql.migration_name(path))
        if applied and applied[-1] != ROW_SECURITY and (sql.MIGRATIONS_DIR / ROW_SECURITY).exists():
            # tables and functions created after the lock-down migration are locked down too
            conn.execute((sql.MIGRATIONS_DIR / ROW_SECURITY).read_text())
    return applied


def _record(conn: psycopg.Connection, path: Path) -> None:
    conn.execute(
        "insert into schema_migrations (name, checksum) values (%s, %s)"
        " on conflict (name) do update set checksum = excluded.checksum, applied_at = now()",
        (sql.migration_name(path), sql.checksum(path)),
    )


def pending_migrations(conn: psycopg.Connection) -> list[str]:
    """What migrate() would apply; raises MigrationChanged as it would."""
    versioned, repeatable, _ = _plan(_recorded(conn))
    return [sql.migration_name(p) for p in [*versioned, *repeatable]]


def server_version(conn: psycopg.Connection) -> str:
    return scalar(conn.execute("show server_version"), str)


def pgvector_version(conn: psycopg.Connection) -> str | None:
    """The installed pgvector version, else the one the server could install; None when it has none."""
    row = conn.execute(
        "select coalesce((select extversion from pg_extension where extname = 'vector'),"
        " (select default_version from pg_available_extensions where name = 'vector'))"
    ).fetchone()
    return row[0] if row else None


@dataclass
class Database:
    """A pool on a migrated database. `mode` is 'embedded' or 'external'.

    `connection()` fails fast while the database is down (storage/outage.py): DatabaseUnavailable at
    once instead of the pool's wait, which the server answers with 503 and Retry-After."""

    pool: ConnectionPool[psycopg.Connection]
    mode: str
    uri: str
    connect_timeout_s: float = 5.0
    availability: Availability = field(init=False)

    def __post_init__(self) -> None:
        self.availability = Availability(self._probe, recovered=self.pool.check)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        self.availability.check()
        try:
            with self.pool.connection() as conn:
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if not conn.broken:  # a query's own failure (a statement timeout): not an outage
                        raise
                    self.availability.suspect(exc)  # down unless a fresh connection works
                    raise DatabaseUnavailable(f"the connection to the database was lost ({type(exc).__name__})",
                                              self.availability.retry_s) from exc
        except PoolTimeout as exc:
            down = self.availability.suspect(exc)
            raise DatabaseUnavailable("the database is unreachable" if down else
                                      "no database connection was free in time", self.availability.retry_s) from exc

    def _probe(self) -> None:
        """A fresh connection (not the pool's) and a trivial query, within the connect timeout."""
        with psycopg.connect(self.uri, autocommit=True, connect_timeout=_libpq_seconds(self.connect_timeout_s),
                             prepare_threshold=None) as conn:
            conn.execute("select 1")

    def ping(self) -> None:
        """Raise unless the database answers a trivial query."""
        with self.connection() as conn:
            conn.execute("select 1")

    def close(self) -> None:
        self.availability.close()
        self.pool.close()


def _libpq_seconds(seconds: float) -> int:
    """libpq's connect_timeout is whole seconds, and it takes 1 as 2."""
    return max(2, math.ceil(seconds))


def resolve_uri(settings: Settings) -> tuple[str, str]:
    if settings.database.url:
        return settings.database.url, "external"
    return start_embedded_postgres(settings.home / "pg"), "embedded"


# Two openings at once in one process (tests, a CLI command beside its runtime) must not start the
# embedded server twice.
_opening = threading.Lock()


def open_database(settings: Settings) -> Database:
    """Start or connect, migrate, and return a new pooled Database (runtime.py opens the process's one)."""
    with _opening:
        uri, mode = resolve_uri(settings)
        return _connect(uri, mode, settings, transaction_pooler(settings, uri))


def _connect(uri: str, mode: str, settings: Settings, pooled: bool) -> Database:
    extra: dict[str, Any] = {"prepare_threshold": None} if pooled else {}  # see connect_kwargs
    # every connection gives up after DB_CONNECT_TIMEOUT_S (a host that drops packets), and a pooled
    # request waits at most DB_ACQUIRE_TIMEOUT_S for one (was the pool's 30 s)
    extra["connect_timeout"] = _libpq_seconds(settings.database.connect_timeout_s)
    with psycopg.connect(uri, autocommit=False, **extra) as conn:
        applied = migrate(conn)
        if applied:
            log.info("migrations applied: %s", ", ".join(applied))
        check_tenancy(conn)  # warns when reads cannot switch to the role row security binds
    pool = ConnectionPool(
        uri,
        min_size=1,
        max_size=settings.database.pool_size,
        configure=_configure,
        kwargs={"autocommit": True, **extra},
        timeout=settings.database.acquire_timeout_s,
        open=True,
    )
    pool.wait(timeout=30)
    return Database(pool=pool, mode=mode, uri=uri, connect_timeout_s=settings.database.connect_timeout_s)
