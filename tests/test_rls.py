"""Tenancy enforced twice (issue 43): the app's queries scope by owner, and row-level security under the
role `thotqen_app` admits only the owners of the transaction's `thotqen.owners` setting
(sql/033_tenant_policies.sql, storage/tenancy.py). Here the app's own queries run with their owner
WHERE removed, or handed every owner, and still read nothing of another tenant; on the embedded
Postgres and through PgBouncer in transaction mode."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import psycopg.conninfo
import pytest

from evals import pdfs
from storage import chats, collections, documents, search, tenancy
from storage.db import Database, open_database

A_TOPICS = ["Aurora Widgets employed 5,300 people at the end of fiscal 2023"]
B_TOPICS = ["Borealis Gears employed 9,100 people at the end of fiscal 2023"]


@pytest.fixture(scope="module")
def tenants(db, settings, embedder) -> dict[str, Any]:  # noqa: ANN001
    """Two users, each with an ingested document, a collection holding it and a chat."""
    from ingestion.pipeline import run_job, submit_pdf
    from storage.users import get_or_create_user

    out: dict[str, Any] = {}
    for key, topics in (("a", A_TOPICS), ("b", B_TOPICS)):
        with db.connection() as conn:
            owner = get_or_create_user(conn, f"rls-{key}-{uuid.uuid4().hex[:8]}")
        sub = submit_pdf(db, settings, owner_id=owner, name=f"{key}.pdf", data=pdfs.long_report(topics))
        assert sub.job_id and run_job(db, settings, embedder, sub.job_id).status == "ready"
        with db.connection() as conn:
            coll = collections.create_collection(conn, owner_id=owner, name=f"c-{key}")
            collections.add_documents(conn, owner_id=owner, collection_id=coll["id"], document_ids=[sub.document_id])
            chat = chats.create_chat(conn, owner_id=owner, title=f"chat {key}", document_ids=None)
        out[key] = {"owner": owner, "document": sub.document_id, "collection": coll["id"], "chat": chat["id"]}
    return out


def tenant_tables(conn: psycopg.Connection) -> list[str]:
    """Every table of the schema with an owner_id column (the policies' tables)."""
    return [r[0] for r in conn.execute(
        "select c.relname from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'owner_id'"
        " where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r' order by 1").fetchall()]


# The app's queries with their owner WHERE removed: the documents listing (storage/documents.py), the
# collections listing, a chat's messages and the search function handed every owner there is.
UNSCOPED = {
    "documents": f"select d.owner_id, d.id from documents d order by d.created_at",  # noqa: F541
    "documents_listing": f"select d.owner_id from (select {documents.DOCUMENT_COLUMNS} from documents d) d",
    "collections": f"select c.owner_id from collections c",  # noqa: F541
    "collection_documents": "select c.owner_id from collection_documents m join documents c on c.id = m.document_id",
    "chats": "select owner_id from chats",
    "pages": "select p.owner_id from document_pages p join documents d on d.id = p.document_id",
}


def owners_seen(conn: psycopg.Connection, sql: str) -> set[int]:
    return {int(r[0]) for r in conn.execute(sql).fetchall()}


def check_isolation(database: Database, tenants: dict[str, Any], embedding: Any) -> None:  # noqa: ANN401
    a, b = tenants["a"]["owner"], tenants["b"]["owner"]
    with database.connection() as conn:
        with tenancy.scoped(conn, a):
            assert conn.execute("select current_user").fetchone() == (tenancy.APP_ROLE,)
            for name, sql in UNSCOPED.items():
                assert owners_seen(conn, sql) == {a}, name
            for table in tenant_tables(conn):
                assert b not in owners_seen(conn, f"select owner_id from {table}"), table
            # hybrid_search handed both tenants' ids: only A's chunks come back
            rows = conn.execute(search.SEARCH_SQL, {
                "owner": [a, b], "embedding": embedding, "text": "employed people", "k": 10, "docs": None,
                "mode": "hybrid", "dense_weight": 1.0, "sparse_weight": 1.0, "rrf_k": 60, "candidates": 50,
                "per_parent": True, "max_df": 0.4, "fusion": "rrf", "heading_weight": 1.0, "dense_rrf_k": None,
            }).fetchall()
            assert rows and {r[2] for r in rows} == {tenants["a"]["document"]}
            # a write naming B's rows changes nothing
            assert conn.execute("update documents set name = name where owner_id = %s", (b,)).rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute("insert into collections (owner_id, name) values (%s, 'planted')", (b,))
        # the transaction is over: the owner again, and no owners left set
        assert conn.execute("select current_user <> %s, coalesce(current_setting('thotqen.owners', true), '')",
                            (tenancy.APP_ROLE,)).fetchone() == (True, "")
        # the app role with no setting at all sees nothing
        with conn.transaction():
            conn.execute(f"set local role {tenancy.APP_ROLE}")
            for name, sql in UNSCOPED.items():
                assert owners_seen(conn, sql) == set(), name


def test_app_role_is_bound_by_row_security(db) -> None:  # noqa: ANN001
    with db.connection() as conn:
        row = conn.execute("select rolsuper, rolbypassrls, rolcanlogin from pg_roles where rolname = %s",
                           (tenancy.APP_ROLE,)).fetchone()
        assert row == (False, False, False)
        owned = conn.execute("select count(*) from pg_class where relowner = to_regrole(%s)",
                             (tenancy.APP_ROLE,)).fetchone()
        assert owned == (0,)
        assert tenancy.enforced(conn)
        # every tenant table has RLS on and a policy
        missing = conn.execute(
            "select c.relname from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'owner_id'"
            " where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'"
            " and not (c.relrowsecurity and exists (select 1 from pg_policy p where p.polrelid = c.oid))").fetchall()
        assert missing == []


def test_queries_without_their_owner_where_see_no_other_tenant(db, embedder, tenants) -> None:  # noqa: ANN001
    check_isolation(db, tenants, embedder.embed_query("How many people were employed?"))


def test_app_functions_handed_the_wrong_owners_still_read_only_the_request_s(db, embedder, tenants,
                                                                            monkeypatch) -> None:  # noqa: ANN001
    """The storage functions' SQL gets both tenants' ids (as if its WHERE were wrong), row security
    gets the request's owner: tenant B's rows never come back."""
    a, b = tenants["a"]["owner"], tenants["b"]["owner"]
    everyone = lambda _owners: [a, b]  # noqa: E731
    for module in (documents, collections, search):
        monkeypatch.setattr(module, "owner_ids", everyone)
    with db.connection() as conn:
        assert {d["id"] for d in documents.list_documents(conn, owner_id=a)} == {tenants["a"]["document"]}
        assert documents.get_document(conn, owner_id=a, document_id=tenants["b"]["document"]) is None
        assert documents.get_page(conn, owner_id=a, document_id=tenants["b"]["document"], page=1) is None
        listed = collections.list_collections(conn, owner_id=a, limit=10)
        assert [c["id"] for c in listed] == [tenants["a"]["collection"]]
        assert collections.get_collection(conn, owner_id=a, collection_id=tenants["b"]["collection"]) is None
        hits = search.search(conn, owner_id=a, query_text="employed people",
                             query_embedding=embedder.embed_query("How many people were employed?"),
                             params=search.SearchParams(k=10))
        assert hits and {h.document_id for h in hits} == {tenants["a"]["document"]}
        # and the unpatched path still finds B's own
        monkeypatch.undo()
        assert {d["id"] for d in documents.list_documents(conn, owner_id=b)} == {tenants["b"]["document"]}
        assert chats.get_chat(conn, owner_id=a, chat_id=tenants["b"]["chat"]) is None
        assert chats.get_chat(conn, owner_id=b, chat_id=tenants["b"]["chat"]) is not None


def test_scoped_inside_a_transaction_gives_back_the_role(db, tenants) -> None:  # noqa: ANN001
    a = tenants["a"]["owner"]
    with db.connection() as conn, conn.transaction():
        before = conn.execute("select current_user").fetchone()
        with tenancy.scoped(conn, a):
            assert conn.execute("select current_user").fetchone() == (tenancy.APP_ROLE,)
        assert conn.execute("select current_user").fetchone() == before
        assert conn.execute("select count(distinct owner_id) > 1 from documents").fetchone() == (True,)
    b = tenants["b"]["owner"]
    with db.connection() as conn, tenancy.scoped(conn, a):
        # a scoped read inside another: the same owners stay; other owners for its block only
        assert [d["id"] for d in documents.list_documents(conn, owner_id=a)] == [tenants["a"]["document"]]
        with tenancy.scoped(conn, b):
            assert owners_seen(conn, UNSCOPED["documents"]) == {b}
        assert owners_seen(conn, UNSCOPED["documents"]) == {a}
        assert conn.execute("select current_user").fetchone() == (tenancy.APP_ROLE,)


@pytest.fixture
def bouncer(db) -> Iterator[Any]:  # noqa: ANN001
    if not shutil.which("pgbouncer"):
        pytest.skip("pgbouncer not installed (.ci/run installs it)")
    from tests.test_supabase import PgBouncer

    workdir = Path(tempfile.mkdtemp(prefix="thq-rls-", dir="/tmp"))
    proxy = PgBouncer(db.uri, workdir)
    yield proxy
    proxy.close()
    shutil.rmtree(workdir, ignore_errors=True)


def test_through_pgbouncer_in_transaction_mode(db, settings, embedder, tenants, bouncer) -> None:  # noqa: ANN001
    """SET LOCAL survives a transaction pooler: each transaction is scoped, and the next one on the
    same server connection (PgBouncer's pool of 4, many transactions from several threads) starts as
    the owner with nothing set."""
    import concurrent.futures

    dbname = psycopg.conninfo.conninfo_to_dict(db.uri).get("dbname", "postgres")
    pooled = settings.model_copy(update={"database_url": bouncer.uri(dbname), "database_pooler": "transaction",
                                         "db_pool_size": 6})
    pdb = open_database(pooled)
    try:
        check_isolation(pdb, tenants, embedder.embed_query("How many people were employed?"))

        def listing(n: int) -> bool:
            key = "ab"[n % 2]
            owner = tenants[key]["owner"]
            with pdb.connection() as conn:
                with tenancy.scoped(conn, owner):
                    seen = owners_seen(conn, UNSCOPED["documents"])
                clean = conn.execute("select current_user <> %s, coalesce(current_setting('thotqen.owners', true), '')",
                                     (tenancy.APP_ROLE,)).fetchone() == (True, "")
            return seen == {owner} and clean

        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            assert all(pool.map(listing, range(60)))
    finally:
        pdb.close()


def test_a_login_that_cannot_take_the_role_reads_as_before(db, tenants, caplog) -> None:  # noqa: ANN001
    """Where the login is no member of thotqen_app (a managed Postgres without CREATEROLE), reads
    still work, as that login, and the start says so."""
    a = tenants["a"]["owner"]
    plain = f"rls_plain_{uuid.uuid4().hex[:8]}"
    with db.connection() as conn:
        conn.execute(f"create role {plain} nologin")
        try:
            with conn.transaction():
                conn.execute(f"grant select on documents to {plain}; set local role {plain}")
                assert not tenancy.check(conn)
                with tenancy.scoped(conn, a):
                    assert conn.execute("select current_user").fetchone() == (plain,)
                conn.execute("reset role")
                conn.execute(f"revoke all on documents from {plain}")
        finally:
            conn.execute(f"drop role {plain}")
    assert "row-level security is not enforced" in caplog.text


def test_writes_under_the_policy_touch_only_the_request_s_owners(db, tenants) -> None:  # noqa: ANN001
    """The chat and collection writes run scoped too: an update with no WHERE changes the request's
    owner's rows only, and a row planted for another owner is refused."""
    a, b = tenants["a"]["owner"], tenants["b"]["owner"]
    with db.connection() as conn:
        mine = conn.execute("select count(*) from chats where owner_id = %s", (a,)).fetchone()
        with tenancy.scoped(conn, a):
            assert (conn.execute("update chats set updated_at = updated_at").rowcount,) == mine
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute("insert into messages (chat_id, owner_id, role, content) values (%s, %s, 'user', 'x')",
                             (tenants["b"]["chat"], b))
        # the storage writes themselves, scoped by the decorator
        assert chats.add_message(conn, owner_id=a, chat_id=tenants["a"]["chat"], role="user", content="hello") > 0
        with pytest.raises(LookupError):
            chats.add_message(conn, owner_id=a, chat_id=tenants["b"]["chat"], role="user", content="planted")
        assert not collections.remove_document(conn, owner_id=a, collection_id=tenants["b"]["collection"],
                                               document_id=tenants["b"]["document"])
        assert collections.member_ids(conn, owner_id=b, collection_id=tenants["b"]["collection"]) == [
            str(tenants["b"]["document"])]
