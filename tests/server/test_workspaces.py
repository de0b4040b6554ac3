"""Workspaces (issue 43) through the real HTTP server on the real database: roles, sharing, and the
attacks (a stranger's workspace, role escalation, a removed member, a deleted workspace, the answer
cache between members). Several users per role; every refusal is a 4xx naming what was wrong."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.server.conftest import FACTS, ask, follow_job, signup, upload
from tests.support.workspaces import QUESTION, add, make_workspace, staffed_workspace, upload_into


def cited(c: Any, user: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """The documents a fresh chat's answer to QUESTION cites, and its final event's data."""
    chat = c.post("/api/chats", headers=user["headers"], json={"title": "team"}).json()["id"]
    events = ask(c, user["headers"], chat, QUESTION)
    assert events[-1][0] == "done", events[-1]
    done = events[-1][1]
    return {x["document_id"] for x in done["citations"]}, done


@pytest.fixture(scope="module")
def team(live, report_pdf):
    """A workspace with two of each role; an editor uploaded the report into it (ingested)."""
    with live.client() as c:
        return staffed_workspace(c, report_pdf, "ws", "team", uploader=0)


def test_every_member_reads_the_workspace_and_sees_who_uploaded(live, team) -> None:
    doc, ws = team["document_id"], team["ws"]
    uploader = team["people"]["editor"][0]["username"]
    with live.client() as c:
        for role, users in team["people"].items():
            for user in users:
                h = user["headers"]
                found = c.get(f"/api/documents/{doc}", headers=h)
                assert found.status_code == 200, (role, found.text)
                assert found.json()["workspace_id"] == ws and found.json()["uploaded_by"] == uploader
                assert [d["id"] for d in c.get("/api/documents", params={"workspace_id": ws},
                                                headers=h).json()["documents"]] == [doc]
                assert c.get(f"/api/documents/{doc}/pages/1", headers=h).status_code == 200
                assert c.get(f"/api/jobs/{team['job_id']}", headers=h).status_code == 200
                listed = {w["id"]: w["role"] for w in c.get("/api/workspaces", headers=h).json()["workspaces"]}
                assert listed == {ws: role}
        members = c.get(f"/api/workspaces/{ws}/members", headers=team["people"]["viewer"][1]["headers"]).json()
        assert sorted(m["role"] for m in members["members"]) == sorted(["owner", "admin", "editor", "viewer"] * 2)
        # its stored file and page images are the workspace's: a viewer opens them
        viewer = team["people"]["viewer"][0]["headers"]
        assert c.get(f"/api/documents/{doc}/file", headers=viewer).content.startswith(b"%PDF")
        image = c.get(f"/api/documents/{doc}/pages/1.png", headers=viewer)
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        # a viewer asks: the answer cites the workspace's document
        docs, done = cited(c, team["people"]["viewer"][0])
        assert docs == {doc} and FACTS["revenue"] in done["answer"]


def test_a_stranger_finds_no_workspace_and_none_of_its_documents(live, team) -> None:
    ws, doc, s = team["ws"], team["document_id"], team["stranger"]["headers"]
    missing = 2**62
    with live.client() as c:
        for wid in (ws, missing):  # a stranger's workspace answers exactly like one that does not exist
            answers = []
            for method, path, kwargs in [
                ("GET", f"/api/workspaces/{wid}", {}), ("GET", f"/api/workspaces/{wid}/members", {}),
                ("DELETE", f"/api/workspaces/{wid}", {}), ("POST", f"/api/workspaces/{wid}/leave", {}),
                ("POST", f"/api/workspaces/{wid}/members", {"json": {"username": team["stranger"]["username"],
                                                                      "role": "owner"}}),
                ("PATCH", f"/api/workspaces/{wid}/members/{team['stranger']['username']}", {"json": {"role": "owner"}}),
                ("DELETE", f"/api/workspaces/{wid}/members/{team['people']['owner'][0]['username']}", {}),
                ("GET", "/api/documents", {"params": {"workspace_id": wid}}),
                ("GET", "/api/collections", {"params": {"workspace_id": wid}}),
                ("POST", "/api/collections", {"params": {"workspace_id": wid}, "json": {"name": "mine now"}}),
            ]:
                res = c.request(method, path, headers=s, **kwargs)
                assert res.status_code == 404, (method, path, res.status_code, res.text)
                answers.append(res.json())
            res = upload_into(c, team["stranger"], wid, b"%PDF-1.4 not read")
            assert res.status_code == 404, res.text
            answers.append(res.json())
            if wid == ws:
                real = answers
        assert real == answers, "a stranger's workspace answers differently from a missing one"
        for method, path in [("GET", f"/api/documents/{doc}"), ("DELETE", f"/api/documents/{doc}"),
                             ("GET", f"/api/documents/{doc}/pages/1"), ("GET", f"/api/documents/{doc}/file"),
                             ("GET", f"/api/documents/{doc}/pages/1.png"), ("GET", f"/api/jobs/{team['job_id']}")]:
            assert c.request(method, path, headers=s).status_code == 404, (method, path)
        assert c.get("/api/documents", headers=s).json()["documents"] == []
        assert c.post("/api/chats", headers=s, json={"document_ids": [doc]}).status_code == 404
        docs, _done = cited(c, team["stranger"])
        assert docs == set()
        # the workspace is untouched
        owner = team["people"]["owner"][0]["headers"]
        assert c.get(f"/api/workspaces/{ws}", headers=owner).json()["members"] == 8


def test_viewers_read_but_never_write(live, team, report_pdf) -> None:
    ws, doc = team["ws"], team["document_id"]
    with live.client() as c:
        for viewer in team["people"]["viewer"]:
            h = viewer["headers"]
            res = upload_into(c, viewer, ws, report_pdf)
            assert res.status_code == 403 and "viewer" in res.json()["detail"], res.text
            assert c.delete(f"/api/documents/{doc}", headers=h).status_code == 403
            assert c.patch(f"/api/documents/{doc}", headers=h, json={"company": "Mine"}).status_code == 403
            assert c.post("/api/collections", params={"workspace_id": ws}, headers=h,
                          json={"name": "v"}).status_code == 403
            assert add(c, viewer, ws, team["stranger"], "viewer").status_code == 403
        # nothing changed
        got = c.get(f"/api/documents/{doc}", headers=team["people"]["owner"][0]["headers"]).json()
        assert got["status"] == "ready" and got["company"] != "Mine"


def test_no_one_lifts_anyone_above_their_own_role(live, team) -> None:
    ws = team["ws"]
    admin, editor = team["people"]["admin"][0], team["people"]["editor"][1]
    owner = team["people"]["owner"][0]
    with live.client() as c:
        newcomer = signup(c, "ws-new")
        assert add(c, editor, ws, newcomer, "viewer").status_code == 403  # editors do not manage members
        res = add(c, admin, ws, newcomer, "owner")
        assert res.status_code == 403 and "admin" in res.json()["detail"]
        assert add(c, admin, ws, newcomer, "admin").status_code == 201  # up to their own role
        assert add(c, admin, ws, newcomer, "viewer").status_code == 409  # a member twice
        url = f"/api/workspaces/{ws}/members"
        # an admin can neither make themselves owner nor touch an owner
        assert c.patch(f"{url}/{admin['username']}", headers=admin["headers"],
                       json={"role": "owner"}).status_code == 403
        assert c.patch(f"{url}/{owner['username']}", headers=admin["headers"],
                       json={"role": "viewer"}).status_code == 403
        assert c.delete(f"{url}/{owner['username']}", headers=admin["headers"]).status_code == 403
        # an editor cannot promote themselves
        assert c.patch(f"{url}/{editor['username']}", headers=editor["headers"],
                       json={"role": "admin"}).status_code == 403
        # an admin changes a lower role, and removes a member
        assert c.patch(f"{url}/{newcomer['username']}", headers=admin["headers"],
                       json={"role": "viewer"}).json()["role"] == "viewer"
        assert c.delete(f"{url}/{newcomer['username']}", headers=admin["headers"]).status_code == 204
        roles = {m["username"]: m["role"] for m in c.get(url, headers=owner["headers"]).json()["members"]}
        assert roles[admin["username"]] == "admin" and roles[editor["username"]] == "editor"
        assert roles[owner["username"]] == "owner" and newcomer["username"] not in roles
        # unknown users and bad roles
        assert add(c, owner, ws, {"username": f"nobody-{uuid.uuid4().hex[:6]}"}, "viewer").status_code == 404
        res = c.post(url, headers=owner["headers"], json={"username": newcomer["username"], "role": "god"})
        assert res.status_code == 422


def test_the_last_owner_stays(live) -> None:
    with live.client() as c:
        owner, other = signup(c, "ws-solo"), signup(c, "ws-next")
        ws = make_workspace(c, owner, "solo")
        url = f"/api/workspaces/{ws}/members"
        res = c.post(f"/api/workspaces/{ws}/leave", headers=owner["headers"])
        assert res.status_code == 409 and "last owner" in res.json()["detail"]
        assert c.patch(f"{url}/{owner['username']}", headers=owner["headers"],
                       json={"role": "admin"}).status_code == 409
        assert c.delete(f"{url}/{owner['username']}", headers=owner["headers"]).status_code == 409
        # ownership handed over: then the first owner may step down and leave
        assert add(c, owner, ws, other, "owner").status_code == 201
        assert c.patch(f"{url}/{owner['username']}", headers=owner["headers"],
                       json={"role": "viewer"}).json()["role"] == "viewer"
        assert c.post(f"/api/workspaces/{ws}/leave", headers=owner["headers"]).status_code == 204
        assert c.get(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 404
        assert [m["username"] for m in c.get(url, headers=other["headers"]).json()["members"]] == [other["username"]]


def test_a_removed_member_loses_everything_at_once(live, team, fake_llm) -> None:
    ws, doc = team["ws"], team["document_id"]
    owner = team["people"]["owner"][0]
    with live.client() as c:
        leaving = signup(c, "ws-leaving")
        assert add(c, owner, ws, leaving, "editor").status_code == 201
        h = leaving["headers"]
        # asked twice: the second answer comes from the cache, citing the workspace's document
        first_docs, first = cited(c, leaving)
        again_docs, again = cited(c, leaving)
        assert first_docs == again_docs == {doc} and first["cached"] is False and again["cached"] is True
        chat = c.post("/api/chats", headers=h, json={"document_ids": [doc]}).json()["id"]
        assert c.delete(f"/api/workspaces/{ws}/members/{leaving['username']}",
                        headers=owner["headers"]).status_code == 204
        for method, path in [("GET", f"/api/documents/{doc}"), ("GET", f"/api/documents/{doc}/pages/1"),
                             ("GET", f"/api/documents/{doc}/file"), ("GET", f"/api/documents/{doc}/pages/1.png"),
                             ("DELETE", f"/api/documents/{doc}"), ("GET", f"/api/jobs/{team['job_id']}"),
                             ("GET", f"/api/workspaces/{ws}"), ("GET", f"/api/workspaces/{ws}/members")]:
            res = c.request(method, path, headers=h)
            assert res.status_code == 404, (method, path, res.status_code)
        assert c.get("/api/documents", headers=h).json()["documents"] == []
        assert c.get("/api/workspaces", headers=h).json()["workspaces"] == []
        # the answer cache serves them nothing of it, and a chat scoped to its document cites nothing
        after_docs, after = cited(c, leaving)
        assert after_docs == set() and after["cached"] is False and FACTS["revenue"] not in after["answer"]
        events = ask(c, h, chat, QUESTION)
        assert events[-1][0] == "done" and events[-1][1]["citations"] == []
        found = c.get("/api/search", headers=h, params={"q": "aurora"}).json()
        assert found["documents"] == []
        # the document itself is still there for the members
        assert c.get(f"/api/documents/{doc}", headers=owner["headers"]).status_code == 200


def test_members_never_share_a_cached_answer_across_different_access(live, team, report_pdf) -> None:
    ws = team["ws"]
    owner = team["people"]["owner"][0]
    with live.client() as c:
        # one member also has the report in their personal space; another reads only the workspace
        both, only = signup(c, "ws-both"), signup(c, "ws-only")
        for user in (both, only):
            assert add(c, owner, ws, user, "viewer").status_code == 201
        res = upload(c, both["headers"], "mine.pdf", report_pdf)
        assert follow_job(c, both["headers"], res.json()["job_id"])[-1][0] == "done"
        mine = res.json()["document_id"]
        docs, done = cited(c, both)
        assert done["cached"] is False and docs <= {mine, team["document_id"]} and docs
        # the other member asks the same: never `both`'s cached answer (it may cite `mine`)
        docs, done = cited(c, only)
        assert done["cached"] is False and docs == {team["document_id"]}
        # narrowed to the workspace, `both` reads a different set of owners: a fresh answer too
        chat = c.post("/api/chats", headers=both["headers"], json={"document_ids": [team["document_id"]]}).json()
        events = ask(c, both["headers"], chat["id"], QUESTION)
        assert {x["document_id"] for x in events[-1][1]["citations"]} == {team["document_id"]}


def test_a_deleted_workspace_takes_its_documents_with_it(live, report_pdf, db) -> None:
    with live.client() as c:
        owner, admin, editor = signup(c, "ws-del"), signup(c, "ws-del-admin"), signup(c, "ws-del-editor")
        ws = make_workspace(c, owner, "short-lived")
        assert add(c, owner, ws, admin, "admin").status_code == 201
        assert add(c, owner, ws, editor, "editor").status_code == 201
        res = upload_into(c, editor, ws, report_pdf)
        assert follow_job(c, editor["headers"], res.json()["job_id"])[-1][0] == "done"
        doc, job = res.json()["document_id"], res.json()["job_id"]
        collection = c.post("/api/collections", params={"workspace_id": ws}, headers=editor["headers"],
                            json={"name": "filings", "document_ids": [doc]})
        assert collection.status_code == 201, collection.text
        assert c.delete(f"/api/workspaces/{ws}", headers=admin["headers"]).status_code == 403  # owners only
        assert c.delete(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 204
        for user in (owner, admin, editor):
            h = user["headers"]
            for path in (f"/api/documents/{doc}", f"/api/jobs/{job}", f"/api/workspaces/{ws}",
                         f"/api/collections/{collection.json()['id']}"):
                assert c.get(path, headers=h).status_code == 404, path
            assert cited(c, user)[0] == set()
        assert c.delete(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 404
    with db.connection() as conn:  # nothing of it is left in the database
        for table in ("documents", "child_chunks", "parent_chunks", "collections", "workspace_members"):
            column = "workspace_id" if table == "workspace_members" else "owner_id"
            assert conn.execute(f"select count(*) from {table} where {column} = %s", (ws,)).fetchone()[0] == 0
        assert conn.execute("select count(*) from users where id = %s", (ws,)).fetchone()[0] == 0


def test_a_collection_never_mixes_spaces(live, team, report_pdf) -> None:
    editor = team["people"]["editor"][1]
    with live.client() as c:
        res = upload(c, editor["headers"], "own.pdf", report_pdf)
        assert follow_job(c, editor["headers"], res.json()["job_id"])[-1][0] == "done"
        own = res.json()["document_id"]
        res = c.post("/api/collections", params={"workspace_id": team["ws"]}, headers=editor["headers"],
                     json={"name": f"mixed-{uuid.uuid4().hex[:6]}", "document_ids": [team["document_id"], own]})
        assert res.status_code == 422 and "own space" in res.json()["detail"]
        mine = c.post("/api/collections", headers=editor["headers"], json={"name": f"own-{uuid.uuid4().hex[:6]}"})
        res = c.post(f"/api/collections/{mine.json()['id']}/documents", headers=editor["headers"],
                     json={"document_ids": [team["document_id"]]})
        assert res.status_code == 422


@pytest.mark.parametrize("value", ["abc", "0", "-1", str(2**63), "1.5"])
def test_a_malformed_workspace_id_is_422(live, value) -> None:
    with live.client() as c:
        h = signup(c, "ws-bad")["headers"]
        for method, path, kwargs in [("GET", "/api/documents", {"params": {"workspace_id": value}}),
                                     ("GET", f"/api/workspaces/{value}", {}),
                                     ("POST", "/api/documents", {"params": {"workspace_id": value},
                                                                 "files": {"file": ("a.txt", b"hello", "text/plain")}}),
                                     ("POST", "/rag/invoke", {"json": {"input": {"question": "revenue?"},
                                                                       "config": {"configurable": {
                                                                           "workspace_id": value}}}})]:
            res = c.request(method, path, headers=h, **kwargs)
            assert res.status_code == 422, (method, path, res.status_code, res.text)


@pytest.mark.parametrize("body", [{"name": ""}, {"name": " "}, {"name": "x" * 101}, {"name": "a\u0000b"},
                                  {"name": "ok", "owner_id": 1}, {}])
def test_a_bad_workspace_name_is_422(live, body) -> None:
    with live.client() as c:
        h = signup(c, "ws-name")["headers"]
        res = c.post("/api/workspaces", headers=h, json=body)
        assert res.status_code == 422, res.text
        assert c.get("/api/workspaces", headers=h).json()["workspaces"] == []


def test_names_are_per_member_and_odd_usernames_are_refused(live) -> None:
    with live.client() as c:
        a, b = signup(c, "ws-a"), signup(c, "ws-b")
        first = make_workspace(c, a, "finance")
        assert c.post("/api/workspaces", headers=a["headers"], json={"name": "finance"}).status_code == 409
        second = make_workspace(c, b, "finance")  # another team may use the same name
        assert first != second
        res = c.delete(f"/api/workspaces/{first}/members/a%00b", headers=a["headers"])
        assert res.status_code == 422
        # a workspace's own row in users is nobody anyone can add
        res = c.post(f"/api/workspaces/{first}/members", headers=a["headers"],
                     json={"username": f"workspace:{uuid.uuid4()}", "role": "viewer"})
        assert res.status_code == 404
