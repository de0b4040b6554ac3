"""A documents page (GET /api/documents) in one round trip of two statements (issue 41): the membership
check, the tenancy (owners and role) and the page. Counted from libpq's trace of the connection
(tests/support/statements.py), so a statement added on the way shows here. Under a burst each round
trip waits for a core (evals/results/burst_issue41_4.md); it was five, six with a workspace
(member_spaces, BEGIN, ENTER, the page, COMMIT, and the workspace's role before them)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import HTTPException

from api.routes.documents import list_documents
from identity.security import User
from storage import documents, workspaces
from storage.tenancy import APP_ROLE, OWNERS, SETTING, enforced, member_read
from tests.support.statements import TracedDatabase

PAGE_MAX = 3


@pytest.fixture(scope="module")
def people(db: Any) -> dict[str, Any]:
    """A member with four documents of their own and two in a workspace, and a stranger with one
    document and a workspace of their own."""
    import uuid

    from storage.users import get_or_create_user

    def person(prefix: str) -> int:
        with db.connection() as conn:
            return get_or_create_user(conn, f"{prefix}-{uuid.uuid4().hex[:8]}")

    member, stranger = person("page-member"), person("page-stranger")
    with db.connection() as conn:
        team = int(workspaces.create(conn, user_id=member, name="page team")["id"])
        elsewhere = int(workspaces.create(conn, user_id=stranger, name="page team")["id"])
        for owner, n in ((member, 4), (team, 2), (stranger, 1), (elsewhere, 1)):
            for i in range(n):
                documents.create_document(conn, owner_id=owner, name=f"{owner}-{i}.pdf", content_hash=f"{owner}:{i}",
                                          size_bytes=10, uploaded_by=member if owner == team else None)
    return {"member": member, "stranger": stranger, "team": team, "elsewhere": elsewhere}


def page(db: Any, settings: Any, user_id: int, **query: Any) -> dict[str, Any]:
    """The route's answer, called as FastAPI calls it (the page capped at PAGE_MAX)."""
    capped = settings.model_copy(update={"document_page_max": PAGE_MAX})
    assert capped.paging.document_page_max == PAGE_MAX
    return list_documents(User(id=user_id, username="page"), db, capped, limit=query.get("limit"),
                          offset=query.get("offset", 0), workspace_id=query.get("workspace_id"))


def names(answer: dict[str, Any]) -> list[str]:
    return [d["name"] for d in answer["documents"]]


def test_a_page_is_one_round_trip_of_two_statements(db, settings, people) -> None:
    traced = TracedDatabase(db)
    # past psycopg's prepare threshold (5 runs of a statement on a connection): prepared pages too
    for _ in range(7):
        for query in ({}, {"offset": PAGE_MAX}, {"workspace_id": people["team"]}, {"limit": 1, "offset": 2}):
            page(traced, settings, people["member"], **query)
    with pytest.raises(HTTPException):
        page(traced, settings, people["member"], workspace_id=people["elsewhere"])
    assert len(traced.sent) == 29  # one connection a page
    for sent in traced.sent:
        assert sent.round_trips == 1, sent
        assert len(sent.statements) == 2, sent
        assert "member_spaces" in sent.statements[0] and "from documents d" in sent.statements[1], sent


def test_the_pages_are_the_caller_s_documents_oldest_first(db, settings, people) -> None:
    member, team = people["member"], people["team"]
    with db.connection() as conn:
        everything = [d["name"] for d in documents.list_documents(conn, owner_id=[member, team])]
    assert len(everything) == 6
    first, second = page(db, settings, member), page(db, settings, member, offset=PAGE_MAX)
    assert names(first) == everything[:3] and first["next_offset"] == PAGE_MAX
    assert names(second) == everything[3:] and second["next_offset"] is None
    narrow = page(db, settings, member, limit=2, offset=1)
    assert names(narrow) == everything[1:3] and narrow["next_offset"] == 3
    assert page(db, settings, member, limit=50)["next_offset"] == PAGE_MAX  # the cap holds
    assert page(db, settings, member, offset=6) == {"documents": [], "next_offset": None}
    ws = page(db, settings, member, workspace_id=team)
    assert names(ws) == [n for n in everything if n.startswith(f"{team}-")] and ws["next_offset"] is None
    assert {d["workspace_id"] for d in ws["documents"]} == {team}
    assert {d["workspace"] for d in first["documents"]} <= {None, "page team"}
    # the stranger sees only theirs, the member nothing of the stranger's
    assert len(page(db, settings, people["stranger"])["documents"]) == 2
    assert not any(n.startswith((f"{people['stranger']}-", f"{people['elsewhere']}-"))
                   for n in everything + names(second))


def test_a_stranger_s_workspace_answers_like_a_missing_one(db, settings, people) -> None:
    refusals = []
    for workspace_id in (people["elsewhere"], 2**62, people["stranger"], people["member"]):
        with pytest.raises(HTTPException) as refused:
            page(db, settings, people["member"], workspace_id=workspace_id)
        refusals.append((refused.value.status_code, refused.value.detail))
    assert refusals == [(404, "no such workspace")] * 4


def test_the_read_runs_under_row_security_and_leaves_nothing_behind(db, people) -> None:
    member, team = people["member"], people["team"]
    with db.connection() as conn:
        if not enforced(conn):
            pytest.skip("this login cannot take the app role")
        # a query that forgot its owner WHERE still reads the member's rows only (the second line)
        forgot = "select distinct owner_id, current_user as who from documents"
        owners, rows = member_read(conn, member, None, forgot, ())
        assert owners == sorted([member, team])
        assert {r["owner_id"] for r in rows} == {member, team} and {r["who"] for r in rows} == {APP_ROLE}
        counted = f"select count(*) as n from documents where owner_id = any({OWNERS})"
        owners, rows = member_read(conn, member, team, counted, ())
        assert owners == [team] and rows == [{"n": 2}]
        # the transaction ended with the pipeline: the pooled connection is the login's again
        row = conn.execute(f"select current_user, coalesce(current_setting('{SETTING}', true), '')").fetchone()
        assert row is not None and row[0] != APP_ROLE and row[1] == ""
        # a failing read leaves no transaction open either
        with pytest.raises(Exception, match="division by zero"):
            member_read(conn, member, None, "select 1 / 0 as n", ())
        assert conn.execute("select current_user").fetchone() == (row[0],)


def test_member_read_refuses_an_open_transaction(db, people) -> None:
    with db.connection() as conn, conn.transaction(), pytest.raises(RuntimeError, match="idle autocommit"):
        member_read(conn, people["member"], None, "select 1", ())


def test_through_pgbouncer_in_transaction_mode(db, settings, people, bouncer) -> None:
    """The pipeline's one transaction through a transaction pooler (each page on whichever server
    connection it gets, several threads at once): every page the caller's, and the next transaction
    on that connection starts as the login with nothing set."""
    import concurrent.futures

    import psycopg.conninfo

    from storage.db import open_database

    dbname = psycopg.conninfo.conninfo_to_dict(db.uri).get("dbname", "postgres")
    pdb = open_database(settings.model_copy(update={"database_url": bouncer.uri(dbname),
                                                    "database_pooler": "transaction", "db_pool_size": 6}))
    expected = {people["member"]: ([people["member"], people["team"]], 6), people["stranger"]: (
        [people["stranger"], people["elsewhere"]], 2)}

    def listing(n: int) -> bool:
        user = [people["member"], people["stranger"]][n % 2]
        with pdb.connection() as conn:
            owners, rows = documents.readable_documents(conn, user_id=user, workspace_id=None, limit=50)
            clean = conn.execute(f"select current_user <> %s, coalesce(current_setting('{SETTING}', true), '')",
                                 (APP_ROLE,)).fetchone() == (True, "")
        return (owners, len(rows)) == expected[user] and {r["owner_id"] for r in rows} <= set(owners) and clean

    try:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            assert all(pool.map(listing, range(60)))
    finally:
        pdb.close()
