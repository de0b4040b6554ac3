"""Admin metrics per workspace (issue 43): members by role, documents, bytes and questions asked in
it. A server admin sees every workspace's in /api/admin/metrics; a workspace's admins and owners see
theirs at /api/workspaces/{id}/metrics, scoped in SQL to their membership at admin or above; its
editors and viewers are refused (403), a stranger's answer is a missing workspace's (404). Several
users per role."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import ADMIN, ask, follow_job, login_headers, operator_account, signup
from tests.server.test_keys import bearer, make_key
from tests.support.workspaces import QUESTION, add, make_workspace, upload_into


@pytest.fixture(scope="module")
def measured(live, db, report_pdf) -> dict[str, Any]:
    """A workspace with two admins, an editor who uploaded the report, two viewers who each asked in it
    once (a chat over it, /rag with a key bound to it) and once over everything they read (not the workspace's)."""
    with live.client() as c:
        owner = signup(c, "wm-owner")
        people = {"admin": [signup(c, "wm-admin") for _ in range(2)], "editor": [signup(c, "wm-editor")],
                  "viewer": [signup(c, "wm-viewer") for _ in range(2)]}
        ws = make_workspace(c, owner, "measured")
        for role, users in people.items():
            for user in users:
                assert add(c, owner, ws, user, role).status_code == 201
        other = make_workspace(c, signup(c, "wm-other"), "someone else's")
        editor = people["editor"][0]
        res = upload_into(c, editor, ws, report_pdf)
        assert res.status_code == 202, res.text
        assert follow_job(c, editor["headers"], res.json()["job_id"])[-1][0] == "done"
        first, second = people["viewer"]
        chat = c.post("/api/chats", headers=first["headers"], json={"title": "in it", "workspace_id": ws})
        assert chat.status_code == 201, chat.text
        assert ask(c, first["headers"], chat.json()["id"], QUESTION)[-1][0] == "done"
        key = bearer(make_key(c, second, scopes=["ask"], workspace_id=ws))
        res = c.post("/rag/invoke", headers=key, json={"input": {"question": QUESTION}})
        assert res.status_code == 200, res.text
        for viewer in people["viewer"]:  # over all they read: no one workspace's question
            assert c.post("/rag/invoke", headers=viewer["headers"],
                          json={"input": {"question": QUESTION}}).status_code == 200
        operator_account(db, ADMIN, "admin password 1")
        admin = login_headers(c, ADMIN, "admin password 1")
    return {"ws": ws, "other": other, "owner": owner, "people": people, "admin": admin,
            "bytes": len(report_pdf)}


def expected(measured: dict[str, Any]) -> dict[str, Any]:
    return {"id": measured["ws"], "name": "measured", "members": 6,
            "roles": {"owner": 1, "admin": 2, "editor": 1, "viewer": 2}, "documents": 1,
            "bytes": measured["bytes"], "questions": 2}


def test_the_workspace_s_admins_and_owner_see_its_figures(live, measured) -> None:
    ws = measured["ws"]
    with live.client() as c:
        for user in [measured["owner"], *measured["people"]["admin"]]:
            res = c.get(f"/api/workspaces/{ws}/metrics", headers=user["headers"])
            assert res.status_code == 200, res.text
            figures = res.json()
            assert {k: figures[k] for k in expected(measured)} == expected(measured)
            assert figures["created_at"]
            # a window that ends before the questions still counts members and documents
            res = c.get(f"/api/workspaces/{ws}/metrics", params={"hours": 1e-6}, headers=user["headers"])
            assert res.json()["questions"] == 0 and res.json()["documents"] == 1


def test_editors_viewers_and_strangers_are_refused(live, measured) -> None:
    ws = measured["ws"]
    with live.client() as c:
        for user in [*measured["people"]["editor"], *measured["people"]["viewer"]]:
            res = c.get(f"/api/workspaces/{ws}/metrics", headers=user["headers"])
            assert res.status_code == 403 and "admin" in res.json()["detail"], res.text
        stranger = signup(c, "wm-stranger")
        theirs = c.get(f"/api/workspaces/{measured['other']}/metrics", headers=stranger["headers"])
        missing = c.get(f"/api/workspaces/{2**62}/metrics", headers=stranger["headers"])
        assert theirs.status_code == missing.status_code == 404 and theirs.json() == missing.json()
        # the owner of one workspace is a stranger to another, and no server admin
        res = c.get(f"/api/workspaces/{measured['other']}/metrics", headers=measured["owner"]["headers"])
        assert res.status_code == 404 and res.json() == missing.json()
        assert c.get("/api/admin/metrics", headers=measured["owner"]["headers"]).status_code == 403
        for bad in ("0", "-1", "abc", str(24 * 90 + 1)):
            res = c.get(f"/api/workspaces/{ws}/metrics", params={"hours": bad}, headers=measured["owner"]["headers"])
            assert res.status_code == 422, (bad, res.text)
        assert c.get("/api/workspaces/0/metrics", headers=measured["owner"]["headers"]).status_code == 422


def test_a_server_admin_sees_every_workspace(live, measured) -> None:
    with live.client() as c:
        res = c.get("/api/admin/metrics", headers=measured["admin"])
    assert res.status_code == 200, res.text
    spaces = res.json()["workspaces"]
    listed = {w["id"]: w for w in spaces["workspaces"]}
    assert spaces["total"] >= 2 and measured["other"] in listed
    assert {k: listed[measured["ws"]][k] for k in expected(measured)} == expected(measured)
    assert listed[measured["other"]]["questions"] == 0 and listed[measured["other"]]["members"] == 1
    questions = [w["questions"] for w in spaces["workspaces"]]
    assert questions == sorted(questions, reverse=True)  # the busiest first


def test_figures_follow_membership_at_once(live, measured) -> None:
    ws, owner = measured["ws"], measured["owner"]
    with live.client() as c:
        late = signup(c, "wm-late")
        assert add(c, owner, ws, late, "admin").status_code == 201
        assert c.get(f"/api/workspaces/{ws}/metrics", headers=late["headers"]).json()["members"] == 7
        res = c.patch(f"/api/workspaces/{ws}/members/{late['username']}", headers=owner["headers"],
                      json={"role": "viewer"})
        assert res.status_code == 200, res.text
        assert c.get(f"/api/workspaces/{ws}/metrics", headers=late["headers"]).status_code == 403
        assert c.delete(f"/api/workspaces/{ws}/members/{late['username']}",
                        headers=owner["headers"]).status_code == 204
        assert c.get(f"/api/workspaces/{ws}/metrics", headers=late["headers"]).status_code == 404
        assert c.get(f"/api/workspaces/{ws}/metrics", headers=owner["headers"]).json()["members"] == 6
