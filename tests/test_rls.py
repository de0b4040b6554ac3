"""Tenancy enforced twice (issue 43): the app's queries scope by owner, and row-level security under the
role `thotqen_app` admits only the owners of the transaction's `thotqen.owners` setting
(sql/033_tenant_policies.sql, storage/tenancy.py). Here the app's own queries run with their owner
WHERE removed, or handed every owner, and still read nothing of another tenant; on the embedded
Postgres and through PgBouncer in transaction mode."""

from __future__ import annotations

import re
import uuid
from typing import Any

import psycopg
import psycopg.conninfo
import pytest

from evals import pdfs
from storage import answer_cache, chats, collections, documents, finder, invites, search, tables, tenancy, workspaces
from storage.db import Database, open_database

A_TOPICS = ["Aurora Widgets employed 5,300 people at the end of fiscal 2023"]
B_TOPICS = ["Borealis Gears employed 9,100 people at the end of fiscal 2023"]


@pytest.fixture(scope="module")
def tenants(db, settings, embedder) -> dict[str, Any]:
    """Two users, each with an ingested document, a collection holding it and a chat."""
    from ingestion.pipeline import run_job, submit_pdf
    from storage.users import get_or_create_user

    out: dict[str, Any] = {}
    for key, topics in (("a", A_TOPICS), ("b", B_TOPICS)):
        with db.connection() as conn:
            owner = get_or_create_user(conn, f"rls-{key}-{uuid.uuid4().hex[:8]}")
        data = pdfs.long_report(topics)
        sub = submit_pdf(db, settings, owner_id=owner, name=f"{key}.pdf", data=data)
        assert sub.job_id and run_job(db, settings, embedder, sub.job_id).status == "ready"
        with db.connection() as conn:
            coll = collections.create_collection(conn, owner_id=owner, name=f"c-{key}")
            collections.add_documents(conn, owner_id=owner, collection_id=coll["id"], document_ids=[sub.document_id])
            chat = chats.create_chat(conn, owner_id=owner, title=f"chat {key}", document_ids=None)
            chats.add_message(conn, owner_id=owner, chat_id=chat["id"], role="user", content="zebracorn budget")
            conn.execute("insert into table_cells (document_id, owner_id, page, table_key, row_index, label,"
                         " value_text, value) values (%s, %s, 1, '1.1', 0, 'Zebracorn headcount', '5', 5)",
                         (sub.document_id, owner))
        out[key] = {"owner": owner, "document": sub.document_id, "collection": coll["id"], "chat": chat["id"],
                    "hash": sub.content_hash, "data": data}
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


def check_isolation(database: Database, tenants: dict[str, Any], embedding: Any) -> None:
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


def test_app_role_is_bound_by_row_security(db) -> None:
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


def test_queries_without_their_owner_where_see_no_other_tenant(db, embedder, tenants) -> None:
    check_isolation(db, tenants, embedder.embed_query("How many people were employed?"))


def test_app_functions_handed_the_wrong_owners_still_read_only_the_request_s(db, embedder, tenants,
                                                                            monkeypatch) -> None:
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


def test_scoped_inside_a_transaction_gives_back_the_role(db, tenants) -> None:
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


def test_through_pgbouncer_in_transaction_mode(db, settings, embedder, tenants, bouncer) -> None:
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


def test_a_login_that_cannot_take_the_role_reads_as_before(db, tenants, caplog) -> None:
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


def test_writes_under_the_policy_touch_only_the_request_s_owners(db, tenants) -> None:
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


# The rest of the app's paths (uploads, deletes, the chat rows, the finder, the cell search, the
# answer cache, membership changes) run under the app role too. Here every statement they send has its
# owner (or workspace) predicate made true, `x.owner_id = %s` becoming `(x.owner_id = %s or true)`:
# as if each query had forgotten its WHERE. Row security alone must keep the other tenant out.
def _predicate(column: str) -> re.Pattern[str]:
    return re.compile(rf"\b((?:\w+\.)?{column}\s*=\s*(?:any\(%(?:\(\w+\))?s(?:::bigint\[\])?\)|%(?:\(\w+\))?s))")


def forget_where(monkeypatch: pytest.MonkeyPatch, column: str) -> None:
    pattern = _predicate(column)
    for cls in (psycopg.Connection, psycopg.Cursor):
        original = cls.execute

        def execute(self: Any, query: Any, params: Any = None, *args: Any,
                    _original: Any = original, **kwargs: Any) -> Any:
            if isinstance(query, str):
                query = pattern.sub(r"(\1 or true)", query)
            return _original(self, query, params, *args, **kwargs)
        monkeypatch.setattr(cls, "execute", execute)


def test_the_rewrite_does_forget_the_owner_where(db, tenants, monkeypatch) -> None:
    """The rewrite is real: the owner's own SQL, run as the login with it, reads the other tenant."""
    forget_where(monkeypatch, "owner_id")
    a = tenants["a"]["owner"]
    with db.connection() as conn:
        rows = conn.execute("select distinct owner_id from chats where owner_id = %s", (a,)).fetchall()
        assert {r[0] for r in rows} >= {a, tenants["b"]["owner"]}


def test_moved_paths_with_their_owner_where_forgotten_see_no_other_tenant(db, settings, embedder, tenants,
                                                                           monkeypatch) -> None:
    from ingestion.pipeline import submit_pdf

    a, b = tenants["a"]["owner"], tenants["b"]["owner"]
    embedding = embedder.embed_query("What is B's secret?")
    with db.connection() as conn:
        answer_cache.store(conn, owner_id=b, spaces=[b], document_ids=None, question="B's secret?",
                           embedding=embedding, answer={"answer": "B's secret"})
    forget_where(monkeypatch, "owner_id")
    with db.connection() as conn:
        # the finder and the cell search
        assert [d["id"] for d in finder.find_documents(conn, owner_id=a, query=".pdf", limit=10)] == [
            tenants["a"]["document"]]
        assert [c["id"] for c in finder.find_chats(conn, owner_id=a, query="zebracorn", limit=10)] == [
            tenants["a"]["chat"]]
        cells = tables.find_cells(conn, owner_id=a, text="zebracorn headcount")
        assert cells and {c.document_id for c in cells} == {tenants["a"]["document"]}
        # the answer cache: B's answer, asked for with B's own spaces, is not A's to see
        assert answer_cache.lookup(conn, owner_id=a, spaces=[b], document_ids=None, embedding=embedding,
                                   max_distance=0.5, ttl_hours=1) is None
        # the chat rows
        assert chats.get_chat(conn, owner_id=a, chat_id=tenants["b"]["chat"]) is None
        assert {c["id"] for c in chats.list_chats(conn, owner_id=a, limit=50)} == {tenants["a"]["chat"]}
        assert chats.update_chat(conn, owner_id=a, chat_id=tenants["b"]["chat"], title="taken") is None
        # uploads: B's file uploaded by A is a new document of A's, never B's found by its hash
        assert documents.find_by_hash(conn, owner_id=a, content_hash=tenants["b"]["hash"]) is None
    sub = submit_pdf(db, settings, owner_id=a, name="copy.pdf", data=tenants["b"]["data"])
    assert sub.created and sub.document_id != tenants["b"]["document"]
    with db.connection() as conn:
        # deletes: B's document is not A's to delete
        assert not documents.delete_document(conn, owner_id=a, document_id=tenants["b"]["document"], actor_id=a)
        assert not collections.delete_collection(conn, owner_id=a, collection_id=tenants["b"]["collection"],
                                                 actor_id=a)
        assert documents.delete_document(conn, owner_id=a, document_id=sub.document_id, actor_id=a)
    monkeypatch.undo()
    with db.connection() as conn:
        assert conn.execute("select title from chats where id = %s", (tenants["b"]["chat"],)).fetchone() == (
            "chat b",)
        assert conn.execute("select count(*) from documents where id = %s", (tenants["b"]["document"],)
                            ).fetchone() == (1,)
        assert conn.execute("select count(*) from collections where id = %s", (tenants["b"]["collection"],)
                            ).fetchone() == (1,)
        assert answer_cache.lookup(conn, owner_id=b, spaces=[b], document_ids=None, embedding=embedding,
                                   max_distance=0.5, ttl_hours=1) is not None


@pytest.fixture
def two_teams(db) -> dict[str, Any]:
    """Two workspaces with the same two members: `boss` owns both, `member` is an editor of both."""
    from storage.users import get_or_create_user

    with db.connection() as conn:
        boss = get_or_create_user(conn, f"rls-boss-{uuid.uuid4().hex[:8]}")
        member_name = f"rls-member-{uuid.uuid4().hex[:8]}"
        member = get_or_create_user(conn, member_name)
        teams = [workspaces.create(conn, user_id=boss, name=f"t{n}")["id"] for n in (1, 2)]
        for ws in teams:
            workspaces.add_member(conn, user_id=boss, workspace_id=ws, username=member_name, role="editor")
    return {"boss": boss, "member": member, "member_name": member_name, "teams": teams}


def test_membership_changes_with_their_workspace_where_forgotten_touch_one_workspace(db, two_teams,
                                                                                   monkeypatch) -> None:
    boss, member, name = two_teams["boss"], two_teams["member"], two_teams["member_name"]
    one, other = two_teams["teams"]
    forget_where(monkeypatch, "workspace_id")
    with db.connection() as conn:
        workspaces.set_role(conn, user_id=boss, workspace_id=one, username=name, role="viewer")
        token, _made = invites.create(conn, user_id=boss, workspace_id=one, role="viewer", hours=1)
        assert [i["role"] for i in invites.listed(conn, user_id=boss, workspace_id=one)] == ["viewer"]
        workspaces.remove_member(conn, user_id=boss, workspace_id=one, username=name)
    monkeypatch.undo()
    with db.connection() as conn:
        assert workspaces.role_of(conn, member, one) is None
        assert workspaces.role_of(conn, member, other) == "editor"  # untouched in the other workspace
        assert invites.listed(conn, user_id=boss, workspace_id=other) == []
        assert len(invites.listed(conn, user_id=boss, workspace_id=one)) == 1
        assert conn.execute("select count(*) from workspace_audit where workspace_id = %s and action in"
                            " ('role_changed', 'member_removed')", (other,)).fetchone() == (0,)
        assert token


def test_shared_chat_is_read_only_for_the_workspace_and_hidden_from_others(db, tenants, two_teams) -> None:
    """A chat shared with a workspace: its rows and messages are readable under that workspace's
    owners, never writable, and unseen under anyone else's."""
    boss, member = two_teams["boss"], two_teams["member"]
    one, other = two_teams["teams"]
    with db.connection() as conn:
        chat = chats.create_chat(conn, owner_id=boss, title="shared", document_ids=None, workspace_id=one)
        chats.add_message(conn, owner_id=boss, chat_id=chat["id"], role="user", content="shared question")
        assert chats.shared_chat(conn, reader=member, chat_id=chat["id"]) is None  # not shared yet
        assert chats.set_shared(conn, owner_id=boss, chat_id=chat["id"], shared=True)["shared"] is True
        found = chats.shared_chat(conn, reader=member, chat_id=chat["id"])
        assert found is not None and found["owner_id"] == boss
        assert [m["content"] for m in chats.shared_messages(conn, reader=member, chat=found, limit=10)] == [
            "shared question"]
        assert chats.shared_chat(conn, reader=tenants["a"]["owner"], chat_id=chat["id"]) is None
        with tenancy.scoped(conn, [member, one]):
            assert owners_seen(conn, "select owner_id from chats") >= {boss}
            assert conn.execute("update messages set content = 'changed' where chat_id = %s",
                                (chat["id"],)).rowcount == 0
            assert conn.execute("update chats set title = 'changed' where id = %s", (chat["id"],)).rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute("insert into messages (chat_id, owner_id, role, content) values (%s, %s, 'user', 'x')",
                             (chat["id"], boss))
        with tenancy.scoped(conn, [member, other]):
            assert boss not in owners_seen(conn, "select owner_id from chats")
            assert owners_seen(conn, f"select owner_id from messages where chat_id = '{chat['id']}'") == set()
        # a personal chat is never shared
        personal = chats.create_chat(conn, owner_id=boss, title="mine", document_ids=None)
        assert chats.set_shared(conn, owner_id=boss, chat_id=personal["id"], shared=True) is None


def test_a_workspace_document_written_under_the_app_role_clears_members_cached_answers(db, embedder,
                                                                                      two_teams) -> None:
    """The cache's invalidation triggers run as the tables' owner: a document written scoped to its
    workspace still deletes the members' cached answers drawn from it (their own rows)."""
    member, one = two_teams["member"], two_teams["teams"][0]
    embedding = embedder.embed_query("team question")
    with db.connection() as conn:
        answer_cache.store(conn, owner_id=member, spaces=[member, one], document_ids=None, question="q",
                           embedding=embedding, answer={"answer": "old"})
        with tenancy.scoped(conn, one):
            documents.create_document(conn, owner_id=one, name="new.pdf", content_hash=uuid.uuid4().hex,
                                      size_bytes=1, uploaded_by=member)
        assert answer_cache.lookup(conn, owner_id=member, spaces=[member, one], document_ids=None,
                                   embedding=embedding, max_distance=0.5, ttl_hours=1) is None
