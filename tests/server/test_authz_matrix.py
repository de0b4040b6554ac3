"""The standing attack suite, part 2: the authorization matrix, walked from the OpenAPI document.

For every operation the server publishes that takes an id (in its path or query, or a `*_id`/`*_ids`
field of its body), a second user sends the owner's real ids and then ids that exist nowhere: the
two answers must be the same (status and body), a status the operation documents, and the owner's
objects must be untouched. A new
route with an id joins by construction; an id this file does not know how to make fails the test
until it is added to ID_KINDS (or NOT_IDS when it names no one's object).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from tests.server.conftest import FACTS, follow_job, read_sse, signup

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"
# path parameters that name an owned object: how the owner's real one is found (keys of `owned`)
ID_KINDS = {"document_id": "document_id", "chat_id": "chat_id", "job_id": "job_id", "message_id": "message_id",
            "collection_id": "collection_id", "workspace_id": "workspace_id", "key_id": "key_id",
            "invite_id": "invite_id"}
# body fields that name an owned object of another kind than a document (keys of `owned`)
FIELD_KINDS = {"collection_id": "collection_id", "workspace_id": "workspace_id"}
# a missing id of a kind that is not a UUID
MISSING = {"message_id": str(2**62), "workspace_id": str(2**62), "invite_id": str(2**62)}
# path parameters that are not an owned object, with a valid value
# config_hash: LangServe's compressed "{}"; username: a workspace member's name (the owner's own, below)
NOT_IDS = {"config_hash": "N4XyA", "page": "1", "username": "matrix-member"}
# a valid body for operations that need one, so the request reaches the id check
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/chats"): {"title": "matrix"},
    ("PATCH", "/api/chats/{chat_id}"): {"title": "renamed by a stranger"},
    ("POST", "/api/chats/{chat_id}/messages"): {"question": QUESTION},
    ("PUT", "/api/chats/{chat_id}/messages/{message_id}/feedback"): {"rating": "down", "note": "by a stranger"},
    ("PATCH", "/api/documents/{document_id}"): {"company": "Set by a stranger"},
    ("POST", "/api/collections"): {"name": "matrix"},
    ("PATCH", "/api/collections/{collection_id}"): {"name": "renamed by a stranger"},
    ("POST", "/api/collections/{collection_id}/documents"): {"document_ids": []},
    ("POST", "/v1/chat/completions"): {"model": "thotqen", "messages": [{"role": "user", "content": QUESTION}]},
    ("POST", "/api/workspaces/{workspace_id}/members"): {"username": "matrix-member", "role": "owner"},
    ("PATCH", "/api/workspaces/{workspace_id}/members/{username}"): {"role": "owner"},
    ("POST", "/api/workspaces/{workspace_id}/invites"): {"role": "owner"},
    ("POST", "/api/workspaces/{workspace_id}/transfer"): {"username": "matrix-member"},
    ("POST", "/api/keys"): {"name": "matrix"},  # bound to a stranger's workspace: like a missing one
}
RAG_BODY = {"input": {"question": QUESTION}}
RAG_BATCH = {"inputs": [{"question": QUESTION}]}


def deref(spec: dict[str, Any], node: Any) -> Any:
    if isinstance(node, dict) and "$ref" in node:
        target: Any = spec
        for part in node["$ref"].split("/")[1:]:
            target = target[part]
        return deref(spec, target)
    return node


def id_fields(spec: dict[str, Any], schema: Any, path: tuple = (), depth: int = 0) -> list[tuple]:
    """Paths (tuples of keys, "[]" for list items) to `*_id`/`*_ids` properties of a request body."""
    schema = deref(spec, schema)
    if not isinstance(schema, dict) or depth > 6:
        return []
    found: list[tuple] = []
    for key, sub in (schema.get("properties") or {}).items():
        if re.fullmatch(r"\w+_ids?", key) and key not in ("chat_id",):  # /rag's chat_id is a free thread label
            found.append((*path, key))
        else:
            found += id_fields(spec, sub, (*path, key), depth + 1)
    for sub in schema.get("anyOf", []) + schema.get("allOf", []) + schema.get("oneOf", []):
        found += id_fields(spec, sub, path, depth + 1)
    if schema.get("type") == "array":
        found += id_fields(spec, schema.get("items"), (*path, "[]"), depth + 1)
    return sorted(set(found))


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict]]:
    return [(method.upper(), path, op) for path, ops in spec["paths"].items() for method, op in ops.items()
            if method in ("get", "post", "put", "patch", "delete")]


def with_field(body: Any, path: tuple, value: Any) -> Any:
    body = json.loads(json.dumps(body))
    node = body
    for key in path[:-1]:
        node = node[0] if key == "[]" else node.setdefault(key, {})
    node[path[-1]] = value
    return body


VOLATILE = {"run_id", "run_ids", "id", "created", "timings", "latency_ms", "llm_elapsed_s", "first_token_s",
            "timestamp", "message_id", "metadata", "parent_ids", "elapsed", "llm_calls", "start_time", "end_time"}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def without_volatile(value: Any) -> Any:
    """`value` with run ids, timings and model-call records dropped, ids masked, at any depth."""
    if isinstance(value, dict):
        if str(value.get("path", "")).rsplit("/", 1)[-1] in VOLATILE:  # a stream_log patch setting a timestamp
            return {**value, "value": "_"}
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [without_volatile(v) for v in value]
    return UUID.sub("<uuid>", value) if isinstance(value, str) else value


def first_difference(a: str, b: str) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"...{a[max(0, at - 300):at + 200]!r} vs ...{b[max(0, at - 300):at + 200]!r}"


def answer_of(res: Any) -> Any:
    """What a response says, for comparison: JSON (minus run ids and timings), or an SSE stream's
    data without them."""
    if res.headers.get("content-type", "").startswith("text/event-stream"):
        events = []
        for name, data in read_sse(res):
            if name == "metadata":
                continue
            try:
                events.append((name, without_volatile(json.loads(data) if isinstance(data, str) else data)))
            except json.JSONDecodeError:
                events.append((name, UUID.sub("<uuid>", data)))
        return json.dumps(events, sort_keys=True)
    try:
        return json.dumps(without_volatile(res.json()), sort_keys=True)
    except ValueError:
        return UUID.sub("<uuid>", res.text)


@pytest.fixture(scope="module", params=["personal", "workspace"])
def owned(live, report_pdf, request):
    """A user who owns one of each kind of object: a document, its job, a chat with one answer, a
    collection, a workspace, an API key. "workspace": the document and the collection are the workspace's
    (issue 43: across workspaces, the stranger being a member of a workspace of their own)."""
    with live.client() as c:
        owner = signup(c, "matrix-owner")
        workspace = c.post("/api/workspaces", headers=owner["headers"], json={"name": "mine"}).json()["id"]
        where = {"workspace_id": workspace} if request.param == "workspace" else {}
        res = c.post("/api/documents", params=where, headers=owner["headers"],
                     files={"file": ("aurora-report.pdf", report_pdf, "application/pdf")})
        assert follow_job(c, owner["headers"], res.json()["job_id"])[-1][0] == "done"
        chat = c.post("/api/chats", headers=owner["headers"], json={"title": "mine"}).json()["id"]
        collection = c.post("/api/collections", params=where, headers=owner["headers"],
                            json={"name": "mine", "document_ids": [res.json()["document_id"]]}).json()["id"]
        with c.stream("POST", f"/api/chats/{chat}/messages", headers=owner["headers"],
                      json={"question": QUESTION}) as answer:
            message = read_sse(answer)[-1][1]["message_id"]
        key = c.post("/api/keys", headers=owner["headers"], json={"name": "mine"}).json()["id"]
        invite = c.post(f"/api/workspaces/{workspace}/invites", headers=owner["headers"], json={"role": "viewer"})
        return {**owner, "document_id": res.json()["document_id"], "job_id": res.json()["job_id"], "chat_id": chat,
                "message_id": str(message), "collection_id": collection, "workspace_id": str(workspace),
                "key_id": key, "invite_id": str(invite.json()["id"])}


def test_a_strangers_ids_answer_exactly_like_missing_ones(live, owned) -> None:
    spec = live.app.openapi()
    checked = []
    with live.client() as c:
        stranger = signup(c, "matrix-stranger")
        # a member (the owner) of a workspace of their own, with a document in it
        theirs = c.post("/api/workspaces", headers=stranger["headers"], json={"name": "mine"}).json()["id"]
        res = c.post("/api/documents", params={"workspace_id": theirs}, headers=stranger["headers"],
                     files={"file": ("theirs.txt", b"The stranger's own notes.", "text/plain")})
        assert res.status_code == 202, res.text
        for method, path, op in operations(spec):
            params = re.findall(r"{(\w+)}", path)
            unknown = [p for p in params if p not in ID_KINDS and p not in NOT_IDS]
            assert not unknown, f"{method} {path}: add {unknown} to ID_KINDS or NOT_IDS in this file"
            queries = [q["name"] for q in op.get("parameters", []) if q["in"] == "query" and q["name"] in ID_KINDS]
            body_schema = ((op.get("requestBody") or {}).get("content") or {}).get("application/json", {})
            fields = id_fields(spec, body_schema.get("schema")) if body_schema else []
            if not [p for p in params if p in ID_KINDS] and not fields and not queries:
                continue
            base = BODIES.get((method, path))
            if base is None and path.startswith("/rag/"):
                base = RAG_BATCH if path.endswith("/batch") else RAG_BODY
            if body_schema and base is None:
                pytest.fail(f"{method} {path} takes a body with ids {fields}: add a valid body to BODIES")

            def call(real: bool, method: str = method, path: str = path, params: list = params,
                     fields: list = fields, base: Any = base, queries: list = queries) -> Any:
                url = path
                query = {q: owned[ID_KINDS[q]] if real else MISSING.get(q, str(uuid.uuid4())) for q in queries}
                for p in params:
                    value = NOT_IDS.get(p) or (owned[ID_KINDS[p]] if real else MISSING.get(p, str(uuid.uuid4())))
                    url = url.replace("{" + p + "}", value)
                body = base
                for field in fields:
                    value = (owned[FIELD_KINDS.get(field[-1], "document_id")] if real
                             else MISSING.get(field[-1], str(uuid.uuid4())))
                    body = with_field(body, field, [value] if field[-1].endswith("_ids") else value)
                with c.stream(method, url, headers=stranger["headers"], params=query,
                              **({"json": body} if body is not None else {})) as res:
                    res.read()
                    return res.status_code, answer_of(res)

            # each id field on its own (with the path's ids): fields that may not be given together
            # (a chat's document_ids and collection_id) are each walked
            for variant in [(f,) for f in fields] or [()]:
                real, missing = call(True, fields=list(variant)), call(False, fields=list(variant))
                assert real == missing, f"{method} {path} ({variant}): a stranger's id differs from a missing id: " + \
                    first_difference(real[1], missing[1]) + f" (statuses {real[0]}, {missing[0]})"
                assert real[0] < 500, (method, path, real)
                assert str(real[0]) in op["responses"], f"{method} {path}: {real[0]} is not a documented status"
                assert FACTS["revenue"] not in real[1], f"{method} {path}: the owner's text leaked"
            checked.append(f"{method} {path}")
        # the owner's objects are untouched
        h = owned["headers"]
        assert c.get(f"/api/documents/{owned['document_id']}", headers=h).status_code == 200
        chat = c.get(f"/api/chats/{owned['chat_id']}", headers=h).json()
        assert chat["title"] == "mine" and [m["role"] for m in chat["messages"]] == ["user", "assistant"]
        assert chat["messages"][1]["feedback"] is None
        assert c.get(f"/api/jobs/{owned['job_id']}", headers=h).json()["status"] == "done"
        kept = c.get(f"/api/collections/{owned['collection_id']}", headers=h).json()
        assert kept["name"] == "mine" and [d["id"] for d in kept["documents"]] == [owned["document_id"]]
        team = c.get(f"/api/workspaces/{owned['workspace_id']}/members", headers=h).json()["members"]
        assert [(m["username"], m["role"]) for m in team] == [(owned["username"], "owner")]
        assert [k["id"] for k in c.get("/api/keys", headers=h).json()["keys"]] == [owned["key_id"]]
        invites = c.get(f"/api/workspaces/{owned['workspace_id']}/invites", headers=h).json()["invites"]
        assert [str(i["id"]) for i in invites] == [owned["invite_id"]]
    # the walk found the routes that take ids (a sanity floor, not a list to keep in sync)
    assert {"GET /api/documents/{document_id}", "DELETE /api/chats/{chat_id}", "GET /api/jobs/{job_id}/events",
            "POST /api/chats", "POST /rag/invoke", "POST /rag/stream_events", "GET /api/collections/{collection_id}",
            "DELETE /api/collections/{collection_id}/documents/{document_id}", "DELETE /api/workspaces/{workspace_id}",
            "POST /api/workspaces/{workspace_id}/members",
            "PATCH /api/workspaces/{workspace_id}/members/{username}",
            "DELETE /api/keys/{key_id}", "GET /api/workspaces/{workspace_id}/audit", "GET /api/documents",
            "GET /api/search", "POST /api/collections",
            "DELETE /api/workspaces/{workspace_id}/invites/{invite_id}"} <= set(checked), checked
