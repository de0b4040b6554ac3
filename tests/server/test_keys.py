"""API keys (api/routes/keys.py, api/scopes.py): made, listed and revoked over HTTP and by `thotqen keys`,
used as the bearer on /api, /v1 (the official openai client), /mcp (the official mcp client) and
/rag, narrowed by their scopes, with the owner's limits."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import uuid
from typing import Any

import httpx
import openai
import pytest
from mcp import Client

from api import scopes
from tests.server.conftest import FACTS, LiveServer, signup, upload
from tests.server.test_mcp import over_http

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def make_key(c: httpx.Client, user: dict[str, Any], **body: Any) -> dict[str, Any]:
    res = c.post("/api/keys", headers=user["headers"], json={"name": "machine", **body})
    assert res.status_code == 201, res.text
    return dict(res.json())


def bearer(key: dict[str, Any] | str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key if isinstance(key, str) else key['key']}"}


def test_create_list_use_and_revoke(live, db) -> None:
    with live.client() as c:
        user = signup(c, "keys")
        made = make_key(c, user, name="CI upload", scopes=["ask", "read"], expires_in_days=30)
        assert set(made) == {"id", "name", "key", "prefix", "scopes", "created_at", "expires_at", "last_used_at",
                             "workspace_id", "workspace"}
        assert made["workspace_id"] is None  # not bound to a workspace: reads all its owner may
        assert re.fullmatch(r"thq_[A-Za-z0-9_-]{43}", made["key"]) and made["key"].startswith(made["prefix"])
        assert made["scopes"] == ["read", "ask"] and made["name"] == "CI upload" and made["last_used_at"] is None
        assert made["expires_at"] > made["created_at"]
        # hashed at rest: the row holds the SHA-256, never the key
        with db.connection() as conn:
            row = conn.execute("select key_hash, prefix from api_keys where id = %s", (made["id"],)).fetchone()
        assert row == (hashlib.sha256(made["key"].encode()).hexdigest(), made["prefix"])
        assert made["key"] not in json.dumps(c.get("/api/keys", headers=user["headers"]).json())

        me = c.get("/api/auth/me", headers=bearer(made))
        assert me.status_code == 200 and me.json()["username"] == user["username"]
        listed = c.get("/api/keys", headers=user["headers"]).json()["keys"]
        assert [k["id"] for k in listed] == [made["id"]] and "key" not in listed[0]
        assert listed[0]["last_used_at"] is not None  # stamped by the request above

        assert c.delete(f"/api/keys/{made['id']}", headers=user["headers"]).status_code == 204
        gone = c.get("/api/auth/me", headers=bearer(made))  # at once: nothing is kept
        assert gone.status_code == 401 and "revoked" in gone.json()["detail"]
        assert c.get("/api/keys", headers=user["headers"]).json() == {"keys": []}


def test_a_strangers_key_id_answers_like_a_missing_one(live, db) -> None:
    with live.client() as c:
        owner, stranger = signup(c, "keyown"), signup(c, "keystr")
        made = make_key(c, owner)
        theirs = c.delete(f"/api/keys/{made['id']}", headers=stranger["headers"])
        missing = c.delete(f"/api/keys/{uuid.uuid4()}", headers=stranger["headers"])
        not_uuid = c.delete("/api/keys/not-a-uuid", headers=stranger["headers"])
        assert theirs.status_code == missing.status_code == not_uuid.status_code == 404
        assert theirs.json() == missing.json() == not_uuid.json()
        assert c.get("/api/keys", headers=stranger["headers"]).json() == {"keys": []}
        assert c.get("/api/auth/me", headers=bearer(made)).status_code == 200  # untouched


@pytest.mark.parametrize("body", [
    {}, {"name": ""}, {"name": "   "}, {"name": "x" * 101}, {"name": "nul\u0000"}, {"name": 5},
    {"name": "k", "scopes": []}, {"name": "k", "scopes": ["admin"]}, {"name": "k", "scopes": "read"},
    {"name": "k", "expires_in_days": 0}, {"name": "k", "expires_in_days": 3651}, {"name": "k", "expires_in_days": "x"},
    {"name": "k", "owner": 1},
])
def test_bad_input_is_a_422(live, body) -> None:
    with live.client() as c:
        user = signup(c, "keybad")
        res = c.post("/api/keys", headers=user["headers"], json=body)
        assert res.status_code == 422, res.text
        assert c.get("/api/keys", headers=user["headers"]).json() == {"keys": []}


def test_bad_keys_answer_401(live, db) -> None:
    with live.client() as c:
        user = signup(c, "keyexp")
        made = make_key(c, user, expires_in_days=1)
        with db.connection() as conn:
            conn.execute("update api_keys set expires_at = now() - interval '1 second' where id = %s", (made["id"],))
        for token in (made["key"], "thq_short", "thq_" + "A" * 43, "thq_" + "A" * 5000, made["key"][:-1] + "?"):
            res = c.get("/api/auth/me", headers=bearer(token))
            assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer", (token[:20], res.text)
        # a key in the session cookie is refused: a browser would send it along to anyone's page
        fresh = make_key(c, user)
    with live.client(cookies={"thotqen_access": fresh["key"]}) as c:
        res = c.get("/api/auth/me")
        assert res.status_code == 401 and "Authorization header" in res.json()["detail"]


def test_a_key_cannot_manage_keys_or_the_account(live) -> None:
    with live.client() as c:
        user = signup(c, "keyman")
        made = make_key(c, user)
        for method, path in (("GET", "/api/keys"), ("POST", "/api/keys"), ("DELETE", f"/api/keys/{made['id']}"),
                             ("GET", "/api/session"), ("GET", "/api/admin/metrics")):
            res = c.request(method, path, headers=bearer(made), json={"name": "minted by a key"})
            assert res.status_code == 403 and "sign in" in res.json()["detail"], (method, path, res.text)
        assert len(c.get("/api/keys", headers=user["headers"]).json()["keys"]) == 1


def test_scopes(live) -> None:
    with live.client() as c:
        user = signup(c, "keyscope")
        read, ask, ingest = (make_key(c, user, scopes=[s]) for s in ("read", "ask", "ingest"))
        assert c.get("/api/documents", headers=bearer(read)).status_code == 200
        for key in (ask, ingest):
            res = c.get("/api/documents", headers=bearer(key))
            assert res.status_code == 403 and "'read' scope" in res.json()["detail"]
        for key in (read, ingest):
            assert c.post("/api/chats", headers=bearer(key), json={}).status_code == 403
            assert c.post("/rag/invoke", headers=bearer(key), json={"input": {"question": QUESTION}}).status_code == 403
        assert c.post("/api/chats", headers=bearer(ask), json={}).status_code == 201
        pdf = b"%PDF-1.4\n" + b"0" * 100
        for key in (read, ask):
            assert upload(c, bearer(key), "x.pdf", pdf).status_code == 403
            assert c.post("/api/collections", headers=bearer(key), json={"name": "c"}).status_code == 403
        assert c.post("/api/collections", headers=bearer(ingest), json={"name": "c"}).status_code == 201


def test_every_route_is_placed_for_keys(live) -> None:
    """A new route is closed to keys until api/scopes.py names it; this says which ones are unplaced."""
    spec = httpx.get(f"{live.url}/openapi.json").json()
    unplaced = [(m.upper(), p) for p, ops in spec["paths"].items() for m in ops
                if m in ("get", "post", "put", "patch", "delete")
                and not scopes.required_scope(m.upper(), re.sub(r"\{[^}]+\}", "x", p))[0]]
    # the public ones, which take no credentials at all
    assert sorted(unplaced) == [("POST", "/rag/token_feedback")]
    assert scopes.required_scope("POST", "/api/auth/login") == (True, None)
    assert scopes.required_scope("GET", "/api/auth/me") == (True, "read")


def test_openai_client_with_a_key(live, owner_with_report) -> None:
    with live.client() as c:
        made = make_key(c, owner_with_report, scopes=["read", "ask"])
        reader = make_key(c, owner_with_report, scopes=["read"])
    client = openai.OpenAI(base_url=f"{live.url}/v1", api_key=made["key"], max_retries=0, timeout=120)
    assert [m.id for m in client.models.list()] == ["thotqen"]
    completion = client.chat.completions.create(model="thotqen", messages=[{"role": "user", "content": QUESTION}])
    assert FACTS["revenue"] in completion.choices[0].message.content
    only_reads = openai.OpenAI(base_url=f"{live.url}/v1", api_key=reader["key"], max_retries=0, timeout=120)
    assert [m.id for m in only_reads.models.list()] == ["thotqen"]
    with pytest.raises(openai.PermissionDeniedError):
        only_reads.chat.completions.create(model="thotqen", messages=[{"role": "user", "content": QUESTION}])
    with live.client() as c:
        assert c.delete(f"/api/keys/{made['id']}", headers=owner_with_report["headers"]).status_code == 204
    with pytest.raises(openai.AuthenticationError):
        client.models.list()


def test_mcp_and_rag_with_a_key(live, owner_with_report) -> None:
    with live.client() as c:
        full = make_key(c, owner_with_report, scopes=["read", "ask"])
        reader = make_key(c, owner_with_report, scopes=["read"])
        res = c.post("/rag/invoke", headers=bearer(full), json={"input": {"question": QUESTION}})
        assert res.status_code == 200 and FACTS["revenue"] in res.json()["output"]["answer"]

    async def talk(client: Client) -> dict[str, Any]:
        search = await client.call_tool("search", {"query": "total revenue fiscal 2023", "k": 3})
        ask = await client.call_tool("ask", {"question": QUESTION})
        listed = (await client.list_resources()).resources
        return {"search": search, "ask": ask, "listed": listed}

    out = over_http(live, full["key"], talk)
    assert not out["search"].is_error and not out["ask"].is_error
    assert FACTS["revenue"] in out["ask"].content[0].text and len(out["listed"]) == 1
    limited = over_http(live, reader["key"], talk)
    assert not limited["search"].is_error and len(limited["listed"]) == 1
    assert limited["ask"].is_error and "'ask' scope" in limited["ask"].content[0].text
    with live.client() as c:
        assert c.delete(f"/api/keys/{full['id']}", headers=owner_with_report["headers"]).status_code == 204
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises its transport's error for a 401
        over_http(live, full["key"], talk)


def test_limits_are_the_users_not_the_keys(start_server, server_settings) -> None:
    limited = start_server(server_settings.model_copy(update={"questions_per_hour": 1}), start_worker=False)
    with limited.client() as c:
        user = signup(c, "keylimit")
        first, second = make_key(c, user), make_key(c, user)
        body = {"input": {"question": QUESTION}}
        assert c.post("/rag/invoke", headers=bearer(first), json=body).status_code == 200
        for headers in (bearer(second), bearer(first), user["headers"]):
            res = c.post("/rag/invoke", headers=headers, json=body)
            assert res.status_code == 429 and int(res.headers["Retry-After"]) > 0


def test_at_most_so_many_keys(live) -> None:
    from api.text import MAX

    with live.client() as c:
        user = signup(c, "keymany")
        for n in range(MAX["api_keys"]):
            make_key(c, user, name=f"k{n}")
        res = c.post("/api/keys", headers=user["headers"], json={"name": "one more"})
        assert res.status_code == 409 and "revoke one" in res.json()["detail"]


def test_cli_keys(live: LiveServer, db, tmp_path) -> None:
    """`thotqen keys` against the server's database: a key it makes works on the server, and revoking it ends it."""
    import subprocess

    with live.client() as c:
        user = signup(c, "keycli")
    env = {**os.environ, "THOTQEN_HOME": str(tmp_path), "DATABASE_URL": db.uri}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli", "keys", *args], capture_output=True, text=True,
                              env=env, timeout=120, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

    made = cli("create", "deploy bot", "--user", user["username"], "--scopes", "read", "--expires-in-days", "7",
               "--json")
    assert made.returncode == 0, made.stderr
    key = json.loads(made.stdout)
    assert key["scopes"] == ["read"] and key["expires_at"] and key["name"] == "deploy bot"
    with live.client() as c:
        assert c.get("/api/documents", headers=bearer(key["key"])).status_code == 200
        assert c.post("/api/chats", headers=bearer(key["key"]), json={}).status_code == 403
    listed = cli("list", "--user", user["username"], "--json")
    assert listed.returncode == 0 and [k["id"] for k in json.loads(listed.stdout)["keys"]] == [key["id"]]
    assert key["key"] not in listed.stdout
    text = cli("list", "--user", user["username"])
    assert key["prefix"] in text.stdout and "deploy bot" in text.stdout
    for bad in (("create", "k", "--user", user["username"], "--scopes", "admin"),
                ("create", "k", "--user", f"nobody-{uuid.uuid4().hex[:6]}"),
                ("create", "k", "--user", user["username"], "--expires-in-days", "0"),
                ("revoke", str(uuid.uuid4()), "--user", user["username"])):
        res = cli(*bad)
        assert res.returncode == 2 and "error" in res.stderr and "Traceback" not in res.stderr, (bad, res.stderr)
    assert cli("revoke", key["id"], "--user", user["username"]).returncode == 0
    with live.client() as c:
        assert c.get("/api/documents", headers=bearer(key["key"])).status_code == 401
