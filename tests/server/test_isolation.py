"""Two users: every route that takes an id answers a stranger exactly like a missing id (404)."""

from __future__ import annotations

import uuid

import pytest

from tests.server.conftest import ask, signup


@pytest.fixture
def two_users(live, owner_with_report):
    with live.client() as c:
        owner = owner_with_report
        h = owner["headers"]
        chat = c.post("/api/chats", headers=h, json={"title": "mine"}).json()
        stranger = signup(c, "stranger")
    return owner, stranger, chat["id"]


def test_stranger_gets_404_on_every_owned_route(live, two_users, report_pdf) -> None:
    owner, stranger, chat_id = two_users
    s = stranger["headers"]
    doc = owner["document_id"]
    with live.client() as c:
        # the owner's job id, found through the owner's own upload of the same file (reused, done)
        job_id = c.post("/api/documents", headers=owner["headers"],
                        files={"file": ("again.pdf", report_pdf, "application/pdf")}).json()["job_id"]
        for method, path, body in [
            ("GET", f"/api/documents/{doc}", None), ("DELETE", f"/api/documents/{doc}", None),
            ("GET", f"/api/jobs/{job_id}", None), ("GET", f"/api/jobs/{job_id}/events", None),
            ("GET", f"/api/chats/{chat_id}", None), ("PATCH", f"/api/chats/{chat_id}", {"title": "mine now"}),
            ("DELETE", f"/api/chats/{chat_id}", None),
            ("POST", f"/api/chats/{chat_id}/messages", {"question": "What was the revenue?"}),
            ("POST", "/api/chats", {"document_ids": [doc]}),
        ]:
            res = c.request(method, path, json=body, headers=s)
            assert res.status_code == 404, (method, path, res.status_code, res.text)
        # the stranger's lists are empty, and nothing of the owner's changed
        assert c.get("/api/documents", headers=s).json()["documents"] == []
        assert c.get("/api/chats", headers=s).json()["chats"] == []
        assert c.get(f"/api/documents/{doc}", headers=owner["headers"]).json()["status"] == "ready"
        mine = c.get(f"/api/chats/{chat_id}", headers=owner["headers"]).json()
        assert mine["title"] == "mine" and mine["messages"] == []


@pytest.mark.parametrize("bad", ["not-a-uuid", "1", "' or 1=1 --", "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"])
def test_malformed_or_unknown_ids_are_404_never_500(live, bad) -> None:
    with live.client() as c:
        h = signup(c, "ids")["headers"]
        for method, path in [("GET", f"/api/documents/{bad}"), ("DELETE", f"/api/documents/{bad}"),
                             ("GET", f"/api/jobs/{bad}"), ("GET", f"/api/jobs/{bad}/events"),
                             ("GET", f"/api/chats/{bad}"), ("DELETE", f"/api/chats/{bad}")]:
            res = c.request(method, path, headers=h)
            assert res.status_code == 404, (method, path, res.status_code)
        # in a body an id is typed (a UUID): a malformed one is a bad request, an unknown one is absent
        res = c.post("/api/chats", headers=h, json={"document_ids": [bad]})
        try:
            uuid.UUID(bad)
        except ValueError:
            assert res.status_code == 422 and "document_ids" in res.text, res.text
        else:
            assert res.status_code == 404


def test_owner_scoped_chat_and_delete(live, owner_with_report, db) -> None:
    """A chat limited to a document answers from it; PATCH can widen it; DELETE removes rows and file."""
    h = owner_with_report["headers"]
    doc = owner_with_report["document_id"]
    with live.client() as c:
        chat = c.post("/api/chats", headers=h, json={"title": " Q1 ", "document_ids": [doc]}).json()
        assert chat["title"] == "Q1" and chat["document_ids"] == [doc]
        done = ask(c, h, chat["id"], "How much was the quarterly dividend?")[-1]
        assert done[0] == "done" and {x["document_id"] for x in done[1]["citations"]} == {doc}
        patched = c.patch(f"/api/chats/{chat['id']}", headers=h, json={"document_ids": []}).json()
        assert patched["document_ids"] is None and patched["title"] == "Q1"
        renamed = c.patch(f"/api/chats/{chat['id']}", headers=h, json={"title": "Dividends"}).json()
        assert renamed["title"] == "Dividends" and renamed["document_ids"] is None

        with db.connection() as conn:
            content_hash, owner_id = conn.execute("select content_hash, owner_id from documents where id = %s",
                                                  (doc,)).fetchone()
        from ingestion.pipeline import stored_file_path

        path = stored_file_path(live.app.state.settings, owner_id, content_hash)
        assert path.exists()
        assert c.delete(f"/api/documents/{doc}", headers=h).status_code == 204
        assert not path.exists()
        with db.connection() as conn:
            left = conn.execute("select (select count(*) from child_chunks where document_id = %s),"
                                " (select count(*) from parent_chunks where document_id = %s),"
                                " (select count(*) from document_jobs where document_id = %s)",
                                (doc, doc, doc)).fetchone()
        assert left == (0, 0, 0)
        assert c.get(f"/api/documents/{doc}", headers=h).status_code == 404
        assert c.delete(f"/api/chats/{chat['id']}", headers=h).status_code == 204
        assert c.get(f"/api/chats/{chat['id']}", headers=h).status_code == 404
