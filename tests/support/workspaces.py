"""Workspaces through the real HTTP server (issue 43): making one, adding members, uploading into it,
and the staffed workspace several test modules start from."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import follow_job, signup

ROLES = ("owner", "admin", "editor", "viewer")
# what the workspace tests ask of the report they upload (report_pdf)
QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def make_workspace(c: Any, owner: dict[str, Any], name: str = "team") -> int:
    res = c.post("/api/workspaces", headers=owner["headers"], json={"name": name})
    assert res.status_code == 201, res.text
    assert res.json()["role"] == "owner" and res.json()["members"] == 1
    return int(res.json()["id"])


def add(c: Any, by: dict[str, Any], ws: int, user: dict[str, Any], role: str) -> Any:
    return c.post(f"/api/workspaces/{ws}/members", headers=by["headers"],
                  json={"username": user["username"], "role": role})


def upload_into(c: Any, user: dict[str, Any], ws: int, data: bytes, name: str = "report.pdf") -> Any:
    return c.post("/api/documents", params={"workspace_id": ws}, headers=user["headers"],
                  files={"file": (name, data, "application/pdf")})


def staffed_workspace(c: Any, report: bytes, prefix: str, name: str, *, uploader: int) -> dict[str, Any]:
    """A workspace with two members of each role (the first owner made it and added the others), the
    report uploaded into it by editor number `uploader` and ingested, and a stranger signed up:
    {"ws", "people" (by role), "owner", "stranger", "document_id", "job_id"}."""
    people = {role: [signup(c, f"{prefix}-{role}") for _ in range(2)] for role in ROLES}
    stranger = signup(c, f"{prefix}-stranger")
    owner = people["owner"][0]
    ws = make_workspace(c, owner, name)
    for role, users in people.items():
        for user in users:
            if user is not owner:
                assert add(c, owner, ws, user, role).status_code == 201
    editor = people["editor"][uploader]
    res = upload_into(c, editor, ws, report)
    assert res.status_code == 202, res.text
    assert follow_job(c, editor["headers"], res.json()["job_id"])[-1][0] == "done"
    return {"ws": ws, "people": people, "owner": owner, "stranger": stranger,
            "document_id": res.json()["document_id"], "job_id": res.json()["job_id"]}
