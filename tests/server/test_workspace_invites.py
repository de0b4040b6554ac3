"""One-time invitation links to a workspace (issue 43), through the real HTTP server on the real
database: made by admins and owners up to their own role, used once while signed in, void when
expired, revoked or when their maker no longer manages the workspace; each step in the audit log."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import signup
from tests.support.workspaces import add, make_workspace


def invite(c: Any, by: dict[str, Any], ws: int, role: str = "viewer", **extra: Any) -> Any:
    return c.post(f"/api/workspaces/{ws}/invites", headers=by["headers"], json={"role": role, **extra})


def join(c: Any, user: dict[str, Any], token: str) -> Any:
    return c.post("/api/workspaces/join", headers=user["headers"], json={"token": token})


def test_a_link_lets_one_person_in_once_at_its_role(live, db) -> None:
    with live.client() as c:
        owner, first, second = signup(c, "inv-owner"), signup(c, "inv-first"), signup(c, "inv-second")
        ws = make_workspace(c, owner, "invited")
        made = invite(c, owner, ws, "editor", expires_in_hours=24)
        assert made.status_code == 201, made.text
        body = made.json()
        token = body["token"]
        assert token.startswith("thqi_") and body["link"] == f"/#/join/{token}" and body["role"] == "editor"
        listed = c.get(f"/api/workspaces/{ws}/invites", headers=owner["headers"]).json()["invites"]
        assert [i["id"] for i in listed] == [body["id"]] and "token" not in listed[0]
        offer = c.post("/api/workspaces/join/preview", headers=second["headers"], json={"token": token})
        assert offer.status_code == 200, offer.text
        assert {k: offer.json()[k] for k in ("workspace", "role", "invited_by")} == {
            "workspace": "invited", "role": "editor", "invited_by": owner["username"]}
        assert c.get(f"/api/workspaces/{ws}/members", headers=second["headers"]).status_code == 404  # not joined
        joined = join(c, first, token)
        assert joined.status_code == 200, joined.text
        assert joined.json()["id"] == ws and joined.json()["role"] == "editor"
        members = {m["username"]: m["role"] for m in
                   c.get(f"/api/workspaces/{ws}/members", headers=owner["headers"]).json()["members"]}
        assert members[first["username"]] == "editor"
        # spent: nobody else gets in with it, and it is no longer listed
        assert join(c, second, token).status_code == 404
        assert c.post("/api/workspaces/join/preview", headers=second["headers"], json={"token": token}).json() == \
            join(c, second, token).json()  # spent: the preview answers like the join, 404
        assert join(c, first, token).status_code == 404
        assert c.get(f"/api/workspaces/{ws}/invites", headers=owner["headers"]).json()["invites"] == []
        actions = [(e["actor"], e["action"], e["detail"].get("role")) for e in
                   reversed(c.get(f"/api/workspaces/{ws}/audit", headers=owner["headers"]).json()["entries"])]
        assert actions[1:] == [(owner["username"], "invite_created", "editor"),
                               (first["username"], "invite_accepted", "editor")]
    with db.connection() as conn:  # only the token's hash is kept
        assert conn.execute("select count(*) from workspace_invites where token_hash = %s", (token,)).fetchone()[0] == 0


def test_who_may_make_links_and_up_to_which_role(live) -> None:
    with live.client() as c:
        owner, admin, editor, stranger = (signup(c, f"inv-{r}") for r in ("o", "a", "e", "x"))
        ws = make_workspace(c, owner, "roles")
        assert add(c, owner, ws, admin, "admin").status_code == 201
        assert add(c, owner, ws, editor, "editor").status_code == 201
        assert invite(c, admin, ws, "admin").status_code == 201
        assert invite(c, admin, ws, "owner").status_code == 403  # above their own role
        assert invite(c, editor, ws, "viewer").status_code == 403
        assert c.get(f"/api/workspaces/{ws}/invites", headers=editor["headers"]).status_code == 403
        for path in (f"/api/workspaces/{ws}/invites", f"/api/workspaces/{ws + 10**9}/invites"):
            assert c.post(path, headers=stranger["headers"], json={"role": "viewer"}).status_code == 404
            assert c.get(path, headers=stranger["headers"]).status_code == 404
        assert invite(c, owner, ws, "owner").status_code == 201
        for bad in ({"role": "root"}, {"role": "viewer", "expires_in_hours": 0},
                    {"role": "viewer", "expires_in_hours": 10**6}, {"role": "viewer", "extra": 1}):
            assert c.post(f"/api/workspaces/{ws}/invites", headers=owner["headers"], json=bad).status_code == 422


@pytest.mark.parametrize("token", ["", "thqi_", "abc", "thqi_a b", "thqi_" + "a" * 200])
def test_a_malformed_token_is_422(live, token) -> None:
    with live.client() as c:
        user = signup(c, "inv-bad")
        assert join(c, user, token).status_code == 422


def test_expired_revoked_and_void_links_answer_like_none(live, db) -> None:
    with live.client() as c:
        owner, admin, member, joiner = (signup(c, f"inv-v-{r}") for r in ("o", "a", "m", "j"))
        ws = make_workspace(c, owner, "void")
        assert add(c, owner, ws, admin, "admin").status_code == 201
        assert add(c, owner, ws, member, "viewer").status_code == 201
        never = join(c, joiner, "thqi_" + "x" * 32)
        assert never.status_code == 404
        # expired
        expired = invite(c, owner, ws).json()
        with db.connection() as conn:
            conn.execute("update workspace_invites set expires_at = now() - interval '1 second' where id = %s",
                         (expired["id"],))
        assert join(c, joiner, expired["token"]).json() == never.json()
        # revoked (twice: the second is 404), by an admin
        revoked = invite(c, owner, ws).json()
        assert c.delete(f"/api/workspaces/{ws}/invites/{revoked['id']}", headers=admin["headers"]).status_code == 204
        assert c.delete(f"/api/workspaces/{ws}/invites/{revoked['id']}", headers=admin["headers"]).status_code == 404
        assert c.delete(f"/api/workspaces/{ws}/invites/{revoked['id']}",
                        headers=member["headers"]).status_code == 403
        assert join(c, joiner, revoked["token"]).status_code == 404
        # void: its maker was demoted below the link's role
        void = invite(c, admin, ws, "admin").json()
        assert c.patch(f"/api/workspaces/{ws}/members/{admin['username']}", headers=owner["headers"],
                       json={"role": "editor"}).status_code == 200
        assert join(c, joiner, void["token"]).status_code == 404
        assert c.post("/api/workspaces/join/preview", headers=joiner["headers"],
                      json={"token": void["token"]}).status_code == 404
        # already a member: refused, and the link stays for someone else
        kept = invite(c, owner, ws).json()
        assert join(c, member, kept["token"]).status_code == 409
        assert join(c, joiner, kept["token"]).status_code == 200
        # a deleted workspace's links go with it
        last = invite(c, owner, ws).json()
        assert c.delete(f"/api/workspaces/{ws}", headers=owner["headers"]).status_code == 204
        assert join(c, admin, last["token"]).status_code == 404
    with db.connection() as conn:
        actions = [r[0] for r in conn.execute("select action from workspace_audit where workspace_id = %s",
                                              (ws,)).fetchall()]
    assert actions.count("invite_revoked") == 1 and actions.count("invite_accepted") == 1


def test_links_and_memberships_are_bounded(live) -> None:
    from api.routes.workspaces import MAX_WORKSPACES
    from storage.invites import MAX_OPEN

    with live.client() as c:
        owner, busy = signup(c, "inv-bound-o"), signup(c, "inv-bound-b")
        ws = make_workspace(c, owner, "bounded")
        for _ in range(MAX_OPEN):
            assert invite(c, owner, ws).status_code == 201
        refused = invite(c, owner, ws)
        assert refused.status_code == 409 and "open invitation links" in refused.json()["detail"]
        # a person already in the most workspaces cannot join another by a link (which stays unused)
        for i in range(MAX_WORKSPACES):
            assert make_workspace(c, busy, f"mine-{i}") > 0
        first = c.get(f"/api/workspaces/{ws}/invites", headers=owner["headers"]).json()["invites"][0]
        assert c.delete(f"/api/workspaces/{ws}/invites/{first['id']}", headers=owner["headers"]).status_code == 204
        token = invite(c, owner, ws).json()["token"]
        full = join(c, busy, token)
        assert full.status_code == 409 and str(MAX_WORKSPACES) in full.json()["detail"]
        assert join(c, owner, token).status_code == 409  # already a member
        assert len(c.get(f"/api/workspaces/{ws}/invites", headers=owner["headers"]).json()["invites"]) == MAX_OPEN
