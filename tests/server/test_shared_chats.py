"""A chat shared read-only with its workspace (issue 43): its owner shares and stops sharing it; every
member reads it, at each request (a removed member, a stranger and anyone after unsharing get 404
like a chat that does not exist); nobody but its owner asks in it (403: they can see it)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.server.conftest import ask, signup
from tests.support.workspaces import add, make_workspace


@pytest.fixture(scope="module")
def shared(live) -> dict[str, Any]:
    """A workspace with an owner, an editor and two viewers; the editor's chat over it, one turn asked."""
    with live.client() as c:
        owner, editor = signup(c, "sh-owner"), signup(c, "sh-editor")
        viewers = [signup(c, "sh-viewer") for _ in range(2)]
        stranger = signup(c, "sh-stranger")
        ws = make_workspace(c, owner, "shared-team")
        assert add(c, owner, ws, editor, "editor").status_code == 201
        for v in viewers:
            assert add(c, owner, ws, v, "viewer").status_code == 201
        res = c.post("/api/chats", headers=editor["headers"], json={"title": "team notes", "workspace_id": ws})
        assert res.status_code == 201, res.text
        chat = res.json()["id"]
        assert ask(c, editor["headers"], chat, "What was the revenue?")[-1][0] in ("done", "blocked")
        personal = c.post("/api/chats", headers=editor["headers"], json={"title": "mine"}).json()["id"]
    return {"ws": ws, "owner": owner, "editor": editor, "viewers": viewers, "stranger": stranger, "chat": chat,
            "personal": personal}


def test_members_read_a_shared_chat_and_cannot_ask_in_it(live, shared) -> None:
    chat, editor = shared["chat"], shared["editor"]
    with live.client() as c:
        reader = shared["viewers"][0]["headers"]
        # not shared yet: it looks absent to everyone but its owner
        assert c.get(f"/api/chats/{chat}", headers=reader).status_code == 404
        res = c.put(f"/api/chats/{chat}/share", headers=editor["headers"])
        assert res.status_code == 200, res.text
        assert res.json()["shared"] is True and res.json()["owner"] is None
        own = c.get(f"/api/chats/{chat}", headers=editor["headers"]).json()
        for member in (*shared["viewers"], shared["owner"]):
            got = c.get(f"/api/chats/{chat}", headers=member["headers"])
            assert got.status_code == 200, got.text
            body = got.json()
            assert body["shared"] is True and body["owner"] == editor["username"]
            assert [m["content"] for m in body["messages"]] == [m["content"] for m in own["messages"]]
            assert len(body["messages"]) == 2 and all(m["feedback"] is None for m in body["messages"])
            listed = c.get("/api/chats/shared", headers=member["headers"]).json()["chats"]
            assert [(x["id"], x["owner"], x["message_count"]) for x in listed] == [
                (chat, editor["username"], 2)]
            # read-only: asking, regenerating, renaming, deleting, sharing are refused
            asked = c.post(f"/api/chats/{chat}/messages", headers=member["headers"], json={"question": "And?"})
            assert asked.status_code == 403, asked.text
            last = body["messages"][-1]["id"]
            assert c.post(f"/api/chats/{chat}/messages/{last}/regenerate",
                          headers=member["headers"]).status_code == 403
            assert c.put(f"/api/chats/{chat}/share", headers=member["headers"]).status_code == 403
            assert c.patch(f"/api/chats/{chat}", headers=member["headers"], json={"title": "x"}).status_code == 404
            assert c.delete(f"/api/chats/{chat}", headers=member["headers"]).status_code == 404
            # their own chat list stays theirs
            assert chat not in {x["id"] for x in c.get("/api/chats", headers=member["headers"]).json()["chats"]}
        assert c.get(f"/api/chats/{chat}", headers=editor["headers"]).json()["title"] == "team notes"
        # a stranger: like a chat that does not exist, everywhere
        s = shared["stranger"]["headers"]
        assert c.get(f"/api/chats/{chat}", headers=s).status_code == 404
        assert c.post(f"/api/chats/{chat}/messages", headers=s, json={"question": "x"}).status_code == 404
        assert c.get("/api/chats/shared", headers=s).json()["chats"] == []
        assert c.get("/api/chats/shared", params={"workspace_id": shared["ws"]}, headers=s).status_code == 404
        assert c.get(f"/api/chats/{uuid.uuid4()}", headers=s).status_code == 404


def test_a_removed_member_loses_it_at_once_and_unsharing_hides_it(live, shared) -> None:
    chat, editor, ws = shared["chat"], shared["editor"], shared["ws"]
    with live.client() as c:
        assert c.put(f"/api/chats/{chat}/share", headers=editor["headers"]).status_code == 200
        gone, staying = shared["viewers"]
        assert c.get(f"/api/chats/{chat}", headers=gone["headers"]).status_code == 200
        res = c.delete(f"/api/workspaces/{ws}/members/{gone['username']}", headers=shared["owner"]["headers"])
        assert res.status_code == 204, res.text
        assert c.get(f"/api/chats/{chat}", headers=gone["headers"]).status_code == 404
        assert c.get("/api/chats/shared", headers=gone["headers"]).json()["chats"] == []
        assert c.post(f"/api/chats/{chat}/messages", headers=gone["headers"],
                      json={"question": "x"}).status_code == 404
        assert c.get(f"/api/chats/{chat}", headers=staying["headers"]).status_code == 200
        res = c.delete(f"/api/chats/{chat}/share", headers=editor["headers"])
        assert res.status_code == 200 and res.json()["shared"] is False
        assert c.get(f"/api/chats/{chat}", headers=staying["headers"]).status_code == 404
        assert c.get("/api/chats/shared", headers=staying["headers"]).json()["chats"] == []


def test_only_a_chat_over_a_workspace_is_shared_and_only_by_a_person(live, shared) -> None:
    editor = shared["editor"]
    with live.client() as c:
        res = c.put(f"/api/chats/{shared['personal']}/share", headers=editor["headers"])
        assert res.status_code == 422 and "workspace" in res.json()["detail"]
        assert c.put(f"/api/chats/not-a-uuid/share", headers=editor["headers"]).status_code == 404  # noqa: F541
        key = c.post("/api/keys", headers=editor["headers"], json={"name": "k", "scopes": ["read", "ask"]})
        assert key.status_code == 201, key.text
        by_key = c.put(f"/api/chats/{shared['chat']}/share",
                       headers={"Authorization": f"Bearer {key.json()['key']}"})
        assert by_key.status_code == 403, by_key.text
