"""Supabase as a target, checked on the embedded Postgres: the migrations `supabase db push` would
apply are sql/'s, Supabase's API roles read nothing, and nothing needs a session a pooler would lose."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import numpy as np
import psycopg
import psycopg.conninfo
import pytest

from sql import mirror
from storage.db import ROW_SECURITY, connect_kwargs, migrate, transaction_pooler

ROOT = Path(__file__).resolve().parents[1]

# What a Supabase project does before any migration: API roles, and default privileges that grant
# them everything created in `public` (so a table is readable through PostgREST unless locked).
SUPABASE_ROLES = """
do $$ begin
    if not exists (select 1 from pg_roles where rolname = 'anon') then create role anon nologin; end if;
    if not exists (select 1 from pg_roles where rolname = 'authenticated') then create role authenticated nologin;
    end if;
end $$;
"""
SUPABASE_GRANTS = """
grant usage on schema public to anon, authenticated;
alter default privileges in schema public grant all on tables to anon, authenticated;
alter default privileges in schema public grant all on functions to anon, authenticated;
alter default privileges in schema public grant all on sequences to anon, authenticated;
"""


def test_supabase_migrations_equal_sql() -> None:
    assert mirror.actual() == mirror.expected(), "run `python -m sql.mirror`"
    assert ROW_SECURITY in {p.name for p in mirror.MIGRATIONS_DIR.glob("*.sql")}


@pytest.fixture
def fresh_database(db):  # noqa: ANN001, ANN201
    """A new, empty database in the embedded cluster, with Supabase's roles and default grants."""
    name = f"supa_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(db.uri, autocommit=True) as admin:
        admin.execute(SUPABASE_ROLES)
        admin.execute(f"create database {name}")
    uri = psycopg.conninfo.make_conninfo(db.uri, dbname=name)
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(SUPABASE_GRANTS)
    yield uri
    with psycopg.connect(db.uri, autocommit=True) as admin:
        admin.execute(f"drop database {name} with (force)")


def test_api_roles_read_nothing(fresh_database: str) -> None:
    # `supabase db push`: each file of supabase/migrations in order, in its own transaction
    with psycopg.connect(fresh_database) as conn:
        for path in sorted(mirror.SUPABASE_DIR.glob("*.sql")):
            with conn.transaction():
                conn.execute(path.read_text())
        # then Thotqen starts on the pushed database: its own migrator re-applies (idempotently)
        assert migrate(conn)
        conn.commit()
        owner = conn.execute("insert into users (username) values ('alice') returning id").fetchone()[0]
        doc = conn.execute("insert into documents (owner_id, name, content_hash, size_bytes, status, children)"
                           " values (%s, 'a.pdf', 'h', 1, 'ready', 1) returning id", (owner,)).fetchone()[0]
        parent = conn.execute("insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)"
                              " values (%s, %s, 0, 1, 1, 'secret revenue') returning id", (doc, owner)).fetchone()[0]
        vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
        conn.execute("insert into child_chunks (parent_id, document_id, owner_id, ord, page, text, embedding)"
                     " values (%s, %s, %s, 0, 1, 'secret revenue', %s::vector)", (parent, doc, owner, vec.tolist()))
        conn.execute("insert into query_log (owner_id, source) values (%s, 'chat')", (owner,))
        conn.commit()
        tables = [r[0] for r in conn.execute(
            "select c.relname from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'"
            " and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')").fetchall()]
        assert {"users", "documents", "child_chunks", "query_log", "refresh_tokens", "schema_migrations"} <= set(tables)
        unlocked = conn.execute(
            "select relname from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r'"
            " and not relrowsecurity and relname = any(%s)", (tables,)).fetchall()
        assert unlocked == []
        # the owner (the app) still reads and searches
        assert conn.execute("select count(*) from child_chunks").fetchone()[0] == 1
        assert conn.execute("select count(*) from hybrid_search(%s, %s::vector, 'revenue')",
                            (owner, vec.tolist())).fetchone()[0] == 1
        conn.commit()
        for role in ("anon", "authenticated"):
            for table in tables:
                conn.execute(f"set role {role}")
                try:
                    rows = conn.execute(f'select count(*) from "{table}"').fetchone()[0]
                    assert rows == 0, f"{role} reads {rows} rows of {table}"
                except psycopg.errors.InsufficientPrivilege:
                    pass
                finally:
                    conn.rollback()
            conn.execute(f"set role {role}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("select * from hybrid_search(%s, %s::vector, 'revenue')", (owner, vec.tolist()))
            conn.rollback()
            conn.execute(f"set role {role}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("insert into users (username) values ('mallory')")
            conn.rollback()


def test_transaction_pooler_turns_prepared_statements_off(settings) -> None:  # noqa: ANN001
    pooler = "postgresql://postgres.ref:pw@aws-0-eu-west-1.pooler.supabase.com:6543/postgres"
    session = "postgresql://postgres.ref:pw@aws-0-eu-west-1.pooler.supabase.com:5432/postgres"
    assert transaction_pooler(settings, pooler) and connect_kwargs(settings, pooler) == {"prepare_threshold": None}
    assert not transaction_pooler(settings, session) and connect_kwargs(settings, session) == {}
    forced = settings.model_copy(update={"database_pooler": "transaction"})
    assert transaction_pooler(forced, session)
    assert not transaction_pooler(settings.model_copy(update={"database_pooler": "none"}), pooler)


def test_no_session_state_in_the_code() -> None:
    """A transaction pooler hands each transaction to any server connection: no session advisory lock,
    no plain SET, no LISTEN, no temporary table may be relied on (transaction-scoped ones are fine)."""
    banned = re.compile(r"pg_(try_)?advisory_lock\(|[\"']set (?!local)|\blisten\b|temporary table|temp table",
                        re.IGNORECASE)
    offenders = []
    for folder in ("storage", "ingestion", "api", "jobqueue", "answering", "graph"):
        for path in (ROOT / folder).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if banned.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
