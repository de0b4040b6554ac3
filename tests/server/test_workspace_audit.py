"""A workspace's audit log, a chat over one workspace, and the sidebar search narrowed to one
(issue 43), through the real HTTP server on the real database."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import ask, follow_job, signup, upload
from tests.support.workspaces import QUESTION, add, make_workspace, upload_into


def log(c: Any, user: dict[str, Any], ws: int, **params: Any) -> Any:
    return c.get(f"/api/workspaces/{ws}/audit", headers=user["headers"], params=params)


def test_membership_changes_and_deletions_are_logged_for_admins_only(live, report_pdf, db) -> None:
    with live.client() as c:
        owner, admin, editor, viewer, stranger = (signup(c, f"audit-{r}") for r in
                                                  ("owner", "admin", "editor", "viewer", "stranger"))
        ws = make_workspace(c, owner, "audited")
        assert add(c, owner, ws, admin, "admin").status_code == 201
        assert add(c, admin, ws, editor, "viewer").status_code == 201
        assert c.patch(f"/api/workspaces/{ws}/members/{editor['username']}", headers=admin["headers"],
                       json={"role": "editor"}).status_code == 200
        assert add(c, owner, ws, viewer, "viewer").status_code == 201
        # a refused change leaves no entry: an admin cannot make an owner
        assert add(c, admin, ws, stranger, "owner").status_code == 403
        res = upload_into(c, editor, ws, report_pdf, "q3.pdf")
        assert follow_job(c, editor["headers"], res.json()["job_id"])[-1][0] == "done"
        collection = c.post("/api/collections", params={"workspace_id": ws}, headers=editor["headers"],
                            json={"name": "filings"}).json()["id"]
        assert c.delete(f"/api/collections/{collection}", headers=editor["headers"]).status_code == 204
        assert c.delete(f"/api/documents/{res.json()['document_id']}", headers=editor["headers"]).status_code == 204
        assert c.delete(f"/api/workspaces/{ws}/members/{viewer['username']}",
                        headers=admin["headers"]).status_code == 204
        assert c.post(f"/api/workspaces/{ws}/leave", headers=editor["headers"]).status_code == 204
        # a personal document's deletion is nobody's workspace business
        mine = upload(c, admin["headers"], "mine.pdf", report_pdf).json()
        follow_job(c, admin["headers"], mine["job_id"])
        assert c.delete(f"/api/documents/{mine['document_id']}", headers=admin["headers"]).status_code == 204

        got = log(c, owner, ws)
        assert got.status_code == 200, got.text
        entries = [(e["actor"], e["action"], e["subject"], e["detail"]) for e in reversed(got.json()["entries"])]
        assert entries == [
            (owner["username"], "workspace_created", None, {"name": "audited"}),
            (owner["username"], "member_added", admin["username"], {"role": "admin"}),
            (admin["username"], "member_added", editor["username"], {"role": "viewer"}),
            (admin["username"], "role_changed", editor["username"], {"from": "viewer", "to": "editor"}),
            (owner["username"], "member_added", viewer["username"], {"role": "viewer"}),
            (editor["username"], "collection_deleted", "filings", {}),
            (editor["username"], "document_deleted", "q3.pdf", {}),
            (admin["username"], "member_removed", viewer["username"], {"role": "viewer"}),
            (editor["username"], "member_left", None, {"role": "editor"}),
        ]
        assert log(c, admin, ws).json() == got.json()
        # paged, the newest first
        first = log(c, owner, ws, limit=2).json()
        assert [e["action"] for e in first["entries"]] == ["member_left", "member_removed"]
        assert first["next_offset"] == 2
        assert [e["action"] for e in log(c, owner, ws, limit=2, offset=8).json()["entries"]] == ["workspace_created"]
        # members below admin: 403; a non-member (or a former one): 404 like a missing workspace
        assert add(c, owner, ws, viewer, "editor").status_code == 201
        assert log(c, viewer, ws).status_code == 403
        for user in (stranger, editor):
            assert log(c, user, ws).status_code == 404
        assert log(c, owner, ws + 10**9).status_code == 404
        assert log(c, owner, ws, limit=0).status_code == 422
        assert log(c, owner, ws, page=1).status_code == 422
        assert c.delete(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 204
    with db.connection() as conn:  # the deletion's own record outlives the workspace
        row = conn.execute("select actor, subject, detail from workspace_audit where workspace_id = %s"
                           " and action = 'workspace_deleted'", (ws,)).fetchone()
        assert row == (owner["username"], "audited", {"documents": 0})


def test_the_entry_is_in_the_changes_transaction(live, db) -> None:
    """The entry is written on the change's own connection, in its transaction: a change rolled back
    leaves no entry, and an entry never outlives its change."""
    from storage import workspaces

    with live.client() as c:
        owner, other = signup(c, "audit-tx-owner"), signup(c, "audit-tx-other")
    with db.connection() as conn:
        ids = dict(conn.execute("select username, id from users where username = any(%s)",
                                ([owner["username"], other["username"]],)).fetchall())
        ws = workspaces.create(conn, user_id=ids[owner["username"]], name="tx")["id"]
        with pytest.raises(RuntimeError), conn.transaction():
            workspaces.add_member(conn, user_id=ids[owner["username"]], workspace_id=ws,
                                  username=other["username"], role="editor")
            raise RuntimeError("the surrounding transaction fails after the change")
        assert workspaces.role_of(conn, ids[other["username"]], ws) is None
        actions = [r[0] for r in conn.execute("select action from workspace_audit where workspace_id = %s",
                                              (ws,)).fetchall()]
        assert actions == ["workspace_created"]
        # the last owner cannot leave: refused, nothing recorded
        with pytest.raises(workspaces.Conflict):
            workspaces.leave(conn, user_id=ids[owner["username"]], workspace_id=ws)
        assert conn.execute("select count(*) from workspace_audit where workspace_id = %s", (ws,)).fetchone()[0] == 1


def test_a_chat_over_a_workspace_reads_it_only_and_nothing_once_removed(live, report_pdf, fake_llm) -> None:
    with live.client() as c:
        owner, viewer, stranger = signup(c, "wschat-owner"), signup(c, "wschat-viewer"), signup(c, "wschat-x")
        ws = make_workspace(c, owner, "chatting")
        assert add(c, owner, ws, viewer, "viewer").status_code == 201
        res = upload_into(c, owner, ws, report_pdf)
        assert follow_job(c, owner["headers"], res.json()["job_id"])[-1][0] == "done"
        doc = res.json()["document_id"]
        # the viewer's own copy stays out of a chat over the workspace
        own = upload(c, viewer["headers"], "own.pdf", report_pdf).json()
        assert follow_job(c, viewer["headers"], own["job_id"])[-1][0] == "done"
        made = c.post("/api/chats", headers=viewer["headers"], json={"title": "team", "workspace_id": ws})
        assert made.status_code == 201, made.text
        chat = made.json()
        assert chat["workspace_id"] == ws and chat["workspace"] == "chatting"
        listed = c.get("/api/chats", headers=viewer["headers"]).json()["chats"]
        assert [x["workspace"] for x in listed if x["id"] == chat["id"]] == ["chatting"]
        events = ask(c, viewer["headers"], chat["id"], QUESTION)
        assert events[-1][0] == "done" and {x["document_id"] for x in events[-1][1]["citations"]} == {doc}
        # narrowed search: the workspace's document only
        found = c.get("/api/search", headers=viewer["headers"], params={"q": "report", "workspace_id": ws})
        assert found.status_code == 200 and [d["id"] for d in found.json()["documents"]] == [doc]
        # a stranger can neither make a chat over it nor search it: 404 like a missing workspace
        assert c.post("/api/chats", headers=stranger["headers"], json={"workspace_id": ws}).status_code == 404
        assert c.get("/api/search", headers=stranger["headers"],
                     params={"q": "report", "workspace_id": ws}).status_code == 404
        # a document of another space cannot scope a chat over the workspace
        assert c.post("/api/chats", headers=viewer["headers"],
                      json={"workspace_id": ws, "document_ids": [own["document_id"]]}).status_code == 404
        assert c.post("/api/chats", headers=viewer["headers"], json={"workspace_id": 0}).status_code == 422
        # removed: the chat stays theirs but answers from nothing of the workspace
        assert c.delete(f"/api/workspaces/{ws}/members/{viewer['username']}",
                        headers=owner["headers"]).status_code == 204
        events = ask(c, viewer["headers"], chat["id"], QUESTION)
        assert events[-1][0] == "done" and events[-1][1]["citations"] == []
        assert c.get("/api/search", headers=viewer["headers"],
                     params={"q": "report", "workspace_id": ws}).status_code == 404
        # deleting the workspace deletes the chats over it
        assert c.delete(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 204
        assert c.get(f"/api/chats/{chat['id']}", headers=viewer["headers"]).status_code == 404


def test_ownership_is_handed_over_in_one_step(live) -> None:
    with live.client() as c:
        owner, admin, viewer, stranger = (signup(c, f"hand-{r}") for r in ("owner", "admin", "viewer", "x"))
        ws = make_workspace(c, owner, "handed")
        assert add(c, owner, ws, admin, "admin").status_code == 201
        assert add(c, owner, ws, viewer, "viewer").status_code == 201

        def hand(by: dict[str, Any], to: str) -> Any:
            return c.post(f"/api/workspaces/{ws}/transfer", headers=by["headers"], json={"username": to})

        assert hand(admin, viewer["username"]).status_code == 403  # owners only
        assert hand(owner, stranger["username"]).status_code == 404  # not a member
        assert hand(owner, "nobody-" + owner["username"]).status_code == 404
        assert hand(owner, owner["username"]).status_code == 409
        assert hand(stranger, viewer["username"]).status_code == 404  # a stranger's workspace looks absent
        done = hand(owner, viewer["username"])
        assert done.status_code == 200, done.text
        assert done.json()["role"] == "admin"
        roles = {m["username"]: m["role"] for m in
                 c.get(f"/api/workspaces/{ws}/members", headers=owner["headers"]).json()["members"]}
        assert roles == {owner["username"]: "admin", admin["username"]: "admin", viewer["username"]: "owner"}
        # the new owner may leave only once there is another owner; the old one may leave now
        assert c.post(f"/api/workspaces/{ws}/leave", headers=viewer["headers"]).status_code == 409
        entries = [(e["action"], e["subject"], e["detail"]) for e in log(c, viewer, ws, limit=2).json()["entries"]]
        assert entries == [("role_changed", owner["username"], {"from": "owner", "to": "admin"}),
                           ("role_changed", viewer["username"], {"from": "viewer", "to": "owner"})]
        assert c.post(f"/api/workspaces/{ws}/leave", headers=owner["headers"]).status_code == 204
