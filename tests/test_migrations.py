"""Migrations cannot go backwards: released files never change, each function has one body (in
sql/functions/), and the migrator applies versioned files once, refuses edited ones, re-applies
changed functions and adopts databases migrated before the functions moved."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import psycopg.conninfo
import pytest

import sql
from sql import mirror, release
from storage.db import MigrationChanged, migrate, pending_migrations

CREATE_FUNCTION = re.compile(r"\bcreate\s+(?:or\s+replace\s+)?function\s+(\w+)", re.IGNORECASE)
DROP_FUNCTION = re.compile(r"\bdrop\s+function\s+(?:if\s+exists\s+)?(\w+)", re.IGNORECASE)


def bodies(paths: list[Path]) -> Counter[str]:
    return Counter(name.lower() for path in paths for name in CREATE_FUNCTION.findall(path.read_text()))


def test_released_migrations_never_change() -> None:
    missing, changed = release.problems()
    assert changed == [], (f"released migrations changed: {changed}. Restore them (git checkout sql/) and put"
                           " the change in a new sql/NNN_*.sql, or in sql/functions/ for a function")
    assert missing == [], f"not in sql/released.json: {missing}; release them deliberately: python -m sql.release"
    manifest = sql.manifest()
    files = {sql.migration_name(p) for p in sql.versioned_files()}
    assert set(manifest["released"]) <= files, "a released migration was deleted or renamed"
    for name, old in manifest["superseded"].items():
        assert name in manifest["released"] and manifest["released"][name] not in old


def test_each_function_has_one_body_in_a_repeatable_file() -> None:
    everywhere = bodies([*sql.versioned_files(), *sql.repeatable_files()])
    assert {name for name, n in everywhere.items() if n > 1} == set()
    for path in sql.repeatable_files():
        assert list(bodies([path])) == [path.stem], f"{path.name} must define the one function {path.stem}"
    # A function a versioned file creates is history: a later migration drops it (it has no current body).
    versioned = sql.versioned_files()
    for i, path in enumerate(versioned):
        for name in bodies([path]):
            later = {d.lower() for p in versioned[i + 1:] for d in DROP_FUNCTION.findall(p.read_text())}
            assert name in later, f"{name}() is defined in {path.name}: move it to sql/functions/{name}.sql"
    assert bodies(sorted(mirror.SUPABASE_DIR.glob("*.sql"))) == everywhere  # the mirror too, once each


@pytest.fixture
def fresh(db) -> Iterator[str]:
    """A new, empty database in the embedded cluster."""
    name = f"mig_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(db.uri, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    yield psycopg.conninfo.make_conninfo(db.uri, dbname=name)
    with psycopg.connect(db.uri, autocommit=True) as admin:
        admin.execute(f"drop database {name} with (force)")


def recorded(conn: psycopg.Connection) -> dict[str, str]:
    return dict(conn.execute("select name, checksum from schema_migrations").fetchall())


def hybrid_search_signatures(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("select oid::regprocedure::text from pg_proc where proname = 'hybrid_search'")]


def test_fresh_database_gets_versioned_then_repeatable_files_once(fresh: str) -> None:
    with psycopg.connect(fresh) as conn:
        applied = migrate(conn)
        assert applied == [sql.migration_name(p) for p in [*sql.versioned_files(), *sql.repeatable_files()]]
        assert recorded(conn) == {sql.migration_name(p): sql.checksum(p)
                                  for p in [*sql.versioned_files(), *sql.repeatable_files()]}
        assert migrate(conn) == [] and pending_migrations(conn) == []
        assert len(hybrid_search_signatures(conn)) == 1


def test_an_edited_migration_stops_the_migrator(fresh: str) -> None:
    with psycopg.connect(fresh) as conn:
        migrate(conn)
        conn.execute("update schema_migrations set checksum = 'edited' where name = '008_heading_leg.sql'")
        conn.execute("update schema_migrations set checksum = 'old' where name = 'functions/hybrid_search.sql'")
        conn.commit()
        with pytest.raises(MigrationChanged, match="008_heading_leg.sql") as raised:
            migrate(conn)
        assert "sql/functions" in str(raised.value)
        conn.rollback()
        with pytest.raises(MigrationChanged):
            pending_migrations(conn)
        conn.rollback()
        assert recorded(conn)["functions/hybrid_search.sql"] == "old"  # nothing ran


def test_a_changed_function_is_applied_again_and_locked_again(fresh: str) -> None:
    with psycopg.connect(fresh) as conn:
        migrate(conn)
        conn.execute("update schema_migrations set checksum = 'old' where name = 'functions/hybrid_search.sql'")
        conn.commit()
        assert pending_migrations(conn) == ["functions/hybrid_search.sql"]
        assert migrate(conn) == ["functions/hybrid_search.sql"]
        # created anew, then 099 ran again: PUBLIC may not execute it
        executable = conn.execute("select has_function_privilege('public', %s, 'execute')",
                                  (hybrid_search_signatures(conn)[0],)).fetchone()[0]
        assert not executable


def test_a_database_migrated_before_the_functions_moved_is_adopted(fresh: str) -> None:
    """As a database migrated by the previous release: the edited files recorded under their old
    checksums, no repeatable file recorded, hybrid_search in older shapes (other arguments, other
    columns: `create or replace` could replace neither)."""
    superseded = sql.manifest()["superseded"]
    with psycopg.connect(fresh) as conn:
        migrate(conn)
        for name, old in superseded.items():
            conn.execute("update schema_migrations set checksum = %s where name = %s", (old[0], name))
        conn.execute("delete from schema_migrations where name like 'functions/%'")
        for signature in hybrid_search_signatures(conn):
            conn.execute(f"drop function {signature}")
        conn.execute("create function hybrid_search(p_owner_id bigint, p_query_embedding vector(384),"
                     " p_query_text text, p_k integer default 5) returns table (child_id bigint)"
                     " language sql stable as $$ select null::bigint where false $$")
        conn.execute("create function hybrid_search(bigint, vector(384), text, integer, uuid[], text,"
                     " double precision, double precision, integer, integer, boolean, double precision, text,"
                     " double precision) returns table (child_id bigint)"
                     " language sql stable as $$ select null::bigint where false $$")
        conn.commit()
        assert migrate(conn) == [sql.migration_name(p) for p in sql.repeatable_files()]
        assert recorded(conn) == {sql.migration_name(p): sql.checksum(p)
                                  for p in [*sql.versioned_files(), *sql.repeatable_files()]}
        assert len(hybrid_search_signatures(conn)) == 1
        columns = conn.execute("select * from hybrid_search(array[1]::bigint[], %s::vector, 'revenue') limit 0",
                               (np.zeros(384).tolist(),)).description
        assert [c.name for c in columns][-1] == "heading_rank"
        assert migrate(conn) == []


def test_the_postings_backfill_of_011_builds_what_refresh_term_postings_builds(fresh: str) -> None:
    """011 builds missing postings inline (its function's body lives in sql/functions/ now): the same
    rows as the function, for a filing stored before the postings existed."""
    with psycopg.connect(fresh) as conn:
        migrate(conn)
        owner = conn.execute("insert into users (username) values ('old') returning id").fetchone()[0]
        doc = conn.execute("insert into documents (owner_id, name, content_hash, size_bytes, status, children)"
                           " values (%s, 'a.pdf', 'h', 1, 'ready', 2) returning id", (owner,)).fetchone()[0]
        parent = conn.execute("insert into parent_chunks (document_id, owner_id, ord, page_start, page_end, text)"
                              " values (%s, %s, 0, 1, 1, 'p') returning id", (doc, owner)).fetchone()[0]
        vec = (np.ones(384) / np.sqrt(384)).tolist()
        for i, (heading, text) in enumerate([("Balance sheets", "total current assets rose, assets"),
                                             ("Risk factors", "supply of lithium cells")]):
            conn.execute("insert into child_chunks (parent_id, document_id, owner_id, ord, page, heading, text,"
                         " embedding) values (%s, %s, %s, %s, 1, %s, %s, %s::vector)",
                         (parent, doc, owner, i, heading, text, vec))
        conn.execute("select refresh_term_postings(%s)", (doc,))
        rows = "select lexeme, ndoc, child_ids, weights from term_stats where document_id = %s order by lexeme"
        built = conn.execute(rows, (doc,)).fetchall()
        assert len(built) > 5
        conn.execute("update term_stats set child_ids = '{}', weights = '{}' where document_id = %s", (doc,))
        conn.execute("insert into term_stats (document_id, owner_id, lexeme, ndoc) values (%s, %s, 'gone', 1)",
                     (doc, owner))
        conn.execute((sql.MIGRATIONS_DIR / "011_term_postings.sql").read_text())
        assert conn.execute(rows, (doc,)).fetchall() == built
