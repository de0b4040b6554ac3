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

import sql
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
    assert ROW_SECURITY in {p.name for p in sql.versioned_files()}
    have = mirror.actual()
    functions = [name for name in have if mirror.FUNCTIONS.fullmatch(name)]
    # after every versioned one: the current functions migration is the newest version (the
    # generations it replaced are empty, and versioned migrations added since sort between them)
    assert functions and functions[-1] == max(have, key=mirror.version)
    assert all(have[name] == mirror.STUB for name in functions[:-1])


def test_no_version_is_repeated_or_sorts_before_a_released_one() -> None:
    """Issue 42: 027_b_collections and 027_chat_feedback were one version, so `supabase db reset` failed on
    a duplicate key and `db push` skipped whichever a database did not have. Every version is unique,
    the released ones all stay, and every other sorts after them (a plain `db push`, no --include-all)."""
    assert mirror.problems(mirror.actual(), sql.manifest()["supabase"]) == []
    assert mirror.problems(["20260101000027_b_collections.sql", "20260101000027_chat_feedback.sql"]) == [
        "version 20260101000027 is used by 2 files"]
    released = ["20260101000027", "20260101001002"]
    assert mirror.problems(["20260101000027_a.sql", "20260101000028_b.sql", "20260101001002_functions.sql"],
                           released) == ["version 20260101000028 sorts before the released 20260101001002:"
                                         " `db push` would need --include-all"]
    assert mirror.problems(["20260101001002_functions.sql"], released) == ["released version 20260101000027 is missing"]


def test_a_shared_version_becomes_two_migrations_after_every_version() -> None:
    """The folder as released with the two 027s under one version regenerates into today's: that version
    emptied, each 027 a migration of its own after every released version, then the functions again."""
    have = mirror.actual()
    old = {name: text for name, text in have.items() if mirror.version(name) <= 20260101001002}
    old.update({f"20260101000027_{name.removeprefix('027_')}": (sql.MIGRATIONS_DIR / name).read_text()
                for name in ("027_b_collections.sql", "027_chat_feedback.sql")})
    del old["20260101000027_superseded.sql"]
    old["20260101001002_functions.sql"] = mirror.functions_migration()
    assert mirror.problems(old) == ["version 20260101000027 is used by 2 files"]
    # the versioned files of that day (later ones, 028 on, are mirrored after these: the next test)
    versioned = {sql.migration_name(p): p.read_text() for p in sql.versioned_files() if p.name < "028"}
    regenerated = mirror.expected(old, versioned)
    newest = max(map(mirror.version, old))
    assert sorted(name for name in regenerated if mirror.version(name) > newest) == [
        f"{newest + 1}_027_b_collections.sql", f"{newest + 2}_027_chat_feedback.sql", f"{newest + 3}_functions.sql"]
    assert all(have[name] == regenerated[name] for name in regenerated if "027" in name)


def test_a_new_migration_sorts_after_every_released_version() -> None:
    have = mirror.actual()
    versioned = {sql.migration_name(p): p.read_text() for p in sql.versioned_files()}
    want = mirror.expected(have, {**versioned, "028_next.sql": "select 1;\n"})
    newest = max(map(mirror.version, have))
    assert set(want) == set(have) | {f"{newest + 1}_028_next.sql", f"{newest + 2}_functions.sql"}
    assert want[max(have, key=mirror.version)] == mirror.STUB  # the functions come last again, with row security
    assert mirror.problems(want, sql.manifest()["supabase"]) == []
    assert mirror.expected(want, {**versioned, "028_next.sql": "select 1;\n"}) == want


def test_a_changed_function_is_mirrored_as_the_next_generation() -> None:
    """The CLI applies a version once and refuses a database holding a version the folder lacks: a
    changed function gets a new, later version, and the version it replaces stays, emptied."""
    have = mirror.actual()
    (current,) = [name for name in have if mirror.FUNCTIONS.fullmatch(name) and have[name] != mirror.STUB]
    generation = int(mirror.FUNCTIONS.fullmatch(current).group(1))
    following = f"{generation + 1}_functions.sql"
    pushed = {**have, current: have[current].replace("create function hybrid_search", "create function old_search")}
    want = mirror.expected(pushed)
    assert want[current] == mirror.STUB and want[following] == mirror.functions_migration()
    assert set(want) == set(have) | {following}
    assert mirror.expected(want) == want  # regenerating again changes nothing


@pytest.fixture
def fresh_database(db):
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


def push(conn: psycopg.Connection, folder: dict[str, str], applied: set[int]) -> None:
    """`supabase db push` without --include-all: each file whose version the database lacks, in order, in
    its own transaction; refused when one sorts before the newest version the database has."""
    pending = sorted((name for name in folder if mirror.version(name) not in applied), key=mirror.version)
    assert not pending or not applied or mirror.version(pending[0]) > max(applied), f"needs --include-all: {pending}"
    for name in pending:
        with conn.transaction():
            conn.execute(folder[name])
        applied.add(mirror.version(name))


@pytest.mark.parametrize("pushed", ["027_chat_feedback.sql", "027_b_collections.sql"])
def test_a_database_that_had_either_027_gets_both(fresh_database: str, pushed: str) -> None:
    """Before issue 42 a database got version 027 from whichever 027 file it saw first, and never the
    other. A plain `db push` of today's folder now gives it both, and runs the one it had again harmlessly."""
    have = mirror.actual()
    released = {name: text for name, text in have.items() if mirror.version(name) <= 20260101001002}
    released["20260101000027_superseded.sql"] = (sql.MIGRATIONS_DIR / pushed).read_text()
    released["20260101001002_functions.sql"] = mirror.functions_migration()  # then the newest generation
    applied: set[int] = set()
    with psycopg.connect(fresh_database) as conn:
        push(conn, released, applied)
        push(conn, have, applied)
        assert applied == set(map(mirror.version, have))
        tables = {r[0] for r in conn.execute("select relname from pg_class where relname = any(%s) and relrowsecurity",
                                             (["collections", "collection_documents", "message_feedback"],))}
        assert tables == {"collections", "collection_documents", "message_feedback"}
        columns = conn.execute("select count(*) from information_schema.columns where (table_name, column_name)"
                               " in (('chats', 'stop_requested_at'), ('chats', 'collection_id'),"
                               " ('messages', 'search_tsv'))").fetchone()[0]
        assert columns == 3


def test_api_roles_read_nothing(fresh_database: str) -> None:
    # `supabase db push`: each file of supabase/migrations in order, in its own transaction
    with psycopg.connect(fresh_database) as conn:
        for path in sorted(mirror.SUPABASE_DIR.glob("*.sql")):
            with conn.transaction():
                conn.execute(path.read_text())
        # the pushed functions are locked already: the functions migration ends with row security
        for role in ("anon", "authenticated"):
            conn.execute(f"set role {role}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("select * from hybrid_search(array[1]::bigint[], null::vector, 'revenue')")
            conn.rollback()
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
        assert conn.execute("select count(*) from hybrid_search(array[%s]::bigint[], %s::vector, 'revenue')",
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
                conn.execute("select * from hybrid_search(array[%s]::bigint[], %s::vector, 'revenue')",
                             (owner, vec.tolist()))
            conn.rollback()
            conn.execute(f"set role {role}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("insert into users (username) values ('mallory')")
            conn.rollback()


def test_transaction_pooler_turns_prepared_statements_off(settings) -> None:
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
    banned = re.compile(r"pg_(try_)?advisory_lock(_shared)?\(|[\"']set (?!local)|\blisten\b|temporary table|"
                        r"temp table", re.IGNORECASE)
    offenders = []
    for folder in ("storage", "ingestion", "identity", "api", "jobqueue", "answering", "graph"):
        for path in (ROOT / folder).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                # the embedding-model lock is session-scoped on purpose and not taken behind a pooler
                if banned.search(line) and not line.lstrip().startswith("#") and "on purpose" not in line:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


class PgBouncer:
    """PgBouncer (Debian's package, installed by .ci/run) in transaction mode in front of the embedded
    Postgres: the kind of pooler Supabase's port 6543 is. It runs as the embedded server's system user
    (pgserver runs Postgres as `pgserver` when started by root), which can reach its unix socket."""

    def __init__(self, db_uri: str, workdir: Path) -> None:
        import os
        import pwd
        import shutil
        import socket
        import subprocess
        import time

        info = psycopg.conninfo.conninfo_to_dict(db_uri)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "users.txt").write_text(f'"{info.get("user", "postgres")}" ""\n')
        (workdir / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={info['host']} port={info.get('port', '5432')} user={info.get('user', 'postgres')}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {workdir / 'users.txt'}\npool_mode = transaction\n"
            "default_pool_size = 4\nmax_client_conn = 200\nignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {workdir / 'pgbouncer.log'}\npidfile = {workdir / 'pgbouncer.pid'}\n")
        args = [shutil.which("pgbouncer"), str(workdir / "pgbouncer.ini")]
        if os.getuid() == 0:  # PgBouncer refuses to run as root
            user = pwd.getpwnam("pgserver")
            for path in [workdir, *workdir.iterdir()]:
                os.chown(path, user.pw_uid, user.pw_gid)
            args[1:1] = ["-u", "pgserver"]
        self.workdir = workdir
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                with psycopg.connect(self.uri(info.get("dbname", "postgres")), connect_timeout=2,
                                     prepare_threshold=None) as conn:
                    conn.execute("select 1")
                return
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (workdir / "pgbouncer.log")
                    raise RuntimeError(f"pgbouncer did not start: {self.proc.stderr.read()} "
                                       f"{log.read_text() if log.exists() else ''}") from None
                time.sleep(0.2)

    def uri(self, dbname: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.mark.skipif(not __import__("shutil").which("pgbouncer"), reason="pgbouncer not installed (.ci/run installs it)")
def test_everything_works_through_a_transaction_pooler(db, settings, embedder) -> None:
    """Migrations, uploads, a job (claim, lease heartbeats, progress, the store transaction, vacuum),
    recovery, search and retention, from several threads, all through PgBouncer in transaction mode."""
    import concurrent.futures
    import shutil
    import tempfile

    from evals.pdfs import AURORA_TOPICS, long_report
    from ingestion.pipeline import run_job, submit_pdf
    from jobqueue.maintenance import purge, sweep_jobs
    from storage import jobs
    from storage.db import open_database
    from storage.search import SearchParams, search
    from storage.users import get_or_create_user

    workdir = Path(tempfile.mkdtemp(prefix="thq-pgb-", dir="/tmp"))  # not under root's 0700 pytest folders
    bouncer = PgBouncer(db.uri, workdir)
    try:
        dbname = psycopg.conninfo.conninfo_to_dict(db.uri).get("dbname", "postgres")
        pooled = settings.model_copy(update={"database_url": bouncer.uri(dbname), "database_pooler": "transaction",
                                             "job_lease_s": 1.0, "db_pool_size": 6})
        pdb = open_database(pooled)
        try:
            with pdb.connection() as conn:
                assert conn.prepare_threshold is None
                owner = get_or_create_user(conn, f"pooled-{uuid.uuid4().hex[:8]}")

            def ingest(n: int) -> str:
                sub = submit_pdf(pdb, pooled, owner_id=owner, name=f"r{n}.pdf",
                                 data=long_report([f"{t} (pooled {n})" for t in AURORA_TOPICS], pages_per_topic=2))
                return run_job(pdb, pooled, embedder, sub.job_id).status

            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                assert list(pool.map(ingest, range(3))) == ["ready"] * 3
            query = embedder.embed_query("How many people did Aurora Widgets employ?")
            for _ in range(8):  # past psycopg's prepare threshold, had it been on
                with pdb.connection() as conn:
                    hits = search(conn, owner_id=owner, query_text="employ people", query_embedding=query,
                                  params=SearchParams(k=3))
                assert hits and "5,300" in hits[0].parent_text
            assert set(purge(pdb, pooled)) == {"refresh_tokens", "login_attempts", "query_log", "answer_cache",
                                               "ended_sessions"}
            assert sweep_jobs(pdb, pooled)["failed"] >= 0
            with pdb.connection() as conn:
                assert jobs.recover_interrupted(conn, max_attempts=3) is not None
        finally:
            pdb.close()
    finally:
        bouncer.close()
        shutil.rmtree(workdir, ignore_errors=True)
