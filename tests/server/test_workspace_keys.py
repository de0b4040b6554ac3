"""API keys bound to a workspace (issue 43): such a key reads (and, as its owner's role allows,
writes) that workspace only, on /api, /rag, /v1 and MCP; never its owner's personal documents or
chats. Naming another workspace answers 404; removing the member, or their leaving, revokes it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from evals import pdfs
from tests.server.conftest import FACTS, follow_job, signup, upload
from tests.server.test_keys import bearer, make_key
from tests.server.test_mcp import over_http
from tests.support.workspaces import QUESTION, add, make_workspace, upload_into


@pytest.fixture(scope="module")
def bound(live, report_pdf) -> dict[str, Any]:
    """An owner's workspace with the report (ingested); a viewer of it who has a personal document of
    their own and a key bound to the workspace."""
    with live.client() as c:
        owner, viewer = signup(c, "wk-owner"), signup(c, "wk-viewer")
        ws = make_workspace(c, owner, "keyed")
        other = make_workspace(c, owner, "other")
        assert add(c, owner, ws, viewer, "viewer").status_code == 201
        res = upload_into(c, owner, ws, report_pdf)
        assert res.status_code == 202, res.text
        assert follow_job(c, owner["headers"], res.json()["job_id"])[-1][0] == "done"
        mine = upload(c, viewer["headers"], "personal.pdf", pdfs.long_report(["Borealis Gears personal notes"]))
        assert mine.status_code == 202, mine.text
        key = make_key(c, viewer, scopes=["read", "ask", "ingest"], workspace_id=ws)
    return {"ws": ws, "other": other, "owner": owner, "viewer": viewer, "key": key,
            "document": res.json()["document_id"], "personal": mine.json()["document_id"]}


def test_a_bound_key_reads_its_workspace_only(live, bound) -> None:
    key, ws = bearer(bound["key"]), bound["ws"]
    assert bound["key"]["workspace_id"] == ws and bound["key"]["workspace"] == "keyed"
    with live.client() as c:
        listed = c.get("/api/keys", headers=bound["viewer"]["headers"]).json()["keys"]
        assert [(k["workspace_id"], k["workspace"]) for k in listed] == [(ws, "keyed")]
        # the person sees both; the key, the workspace's only
        assert len(c.get("/api/documents", headers=bound["viewer"]["headers"]).json()["documents"]) == 2
        assert [d["id"] for d in c.get("/api/documents", headers=key).json()["documents"]] == [bound["document"]]
        assert c.get(f"/api/documents/{bound['personal']}", headers=key).status_code == 404
        assert c.get(f"/api/documents/{bound['personal']}/pages/1", headers=key).status_code == 404
        assert c.get(f"/api/documents/{bound['document']}/pages/1", headers=key).status_code == 200
        assert c.get("/api/documents", params={"workspace_id": ws}, headers=key).status_code == 200
        for other in (bound["other"], 10**12):
            assert c.get("/api/documents", params={"workspace_id": other}, headers=key).status_code == 404
        # its owner's chats, their search and their workspaces are the person's, not the workspace's
        for path in ("/api/chats", "/api/search?q=aurora", "/api/workspaces"):
            res = c.get(path, headers=key)
            assert res.status_code == 403 and "bound to a workspace" in res.json()["detail"], path
        # a viewer's key writes nothing, and never falls back to the personal space
        res = upload(c, key, "more.pdf", pdfs.long_report(["Anything"]))
        assert res.status_code == 403, res.text
        assert c.post("/api/collections", headers=key, json={"name": "x"}).status_code == 403
        # /rag answers from the workspace's documents only
        res = c.post("/rag/invoke", headers=key, json={"input": {"question": QUESTION}})
        assert res.status_code == 200 and FACTS["revenue"] in res.json()["output"]["answer"], res.text
        cited = {x["document_id"] for x in res.json()["output"]["citations"]}
        assert cited == {bound["document"]}

    async def talk(client: Client) -> dict[str, Any]:
        search = await client.call_tool("search", {"query": "personal notes Borealis", "k": 5})
        listed = (await client.list_resources()).resources
        return {"search": search, "listed": listed}

    out = over_http(live, bound["key"]["key"], talk)
    assert not out["search"].is_error and bound["personal"] not in str(out["search"].content)
    assert [str(r.uri) for r in out["listed"]] == [f"thotqen://documents/{bound['document']}"]


def test_a_key_for_a_workspace_you_are_not_in_is_refused_and_leaving_revokes_it(live, bound) -> None:
    with live.client() as c:
        stranger = signup(c, "wk-stranger")
        res = c.post("/api/keys", headers=stranger["headers"], json={"name": "k", "workspace_id": bound["ws"]})
        assert res.status_code == 404, res.text
        assert c.get("/api/keys", headers=stranger["headers"]).json() == {"keys": []}
        viewer = bound["viewer"]
        extra = make_key(c, viewer, scopes=["read"], workspace_id=bound["ws"])
        personal = make_key(c, viewer, scopes=["read"])
        assert c.get("/api/documents", headers=bearer(extra)).status_code == 200
        res = c.delete(f"/api/workspaces/{bound['ws']}/members/{viewer['username']}",
                       headers=bound["owner"]["headers"])
        assert res.status_code == 204, res.text
        for made in (extra, bound["key"]):
            assert c.get("/api/documents", headers=bearer(made)).status_code == 401
        # the personal key stays, reading what the person reads now
        assert [d["id"] for d in c.get("/api/documents", headers=bearer(personal)).json()["documents"]] == [
            bound["personal"]]
        assert [k["id"] for k in c.get("/api/keys", headers=viewer["headers"]).json()["keys"]] == [personal["id"]]
