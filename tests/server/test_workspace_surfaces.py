"""A workspace on /v1 and MCP with several users per role (issue 43): every member, two of each role,
reads the workspace's document there with their own session (search, resources, an answer citing
it); a stranger and a member removed a moment ago see none of it, and a stranger's reading of the
document's resource fails as for a document nobody has."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.server.conftest import FACTS, signup
from tests.server.test_mcp import over_http, token_of
from tests.support.workspaces import QUESTION, ROLES, add, staffed_workspace


@pytest.fixture(scope="module")
def crew(live, report_pdf) -> dict[str, Any]:
    """Two of each role in one workspace, the report uploaded by an editor; a stranger."""
    with live.client() as c:
        return staffed_workspace(c, report_pdf, "wsf", "surfaces", uploader=1)


def v1_cited(live: Any, user: dict[str, Any]) -> tuple[set[str], str]:
    res = httpx.post(f"{live.url}/v1/chat/completions", timeout=120,
                     headers={"Authorization": f"Bearer {token_of(user)}"},
                     json={"model": "thotqen", "messages": [{"role": "user", "content": QUESTION}]})
    assert res.status_code == 200, res.text
    return {c["document_id"] for c in res.json()["citations"]}, res.json()["choices"][0]["message"]["content"]


def mcp_view(live: Any, user: dict[str, Any], doc: str) -> dict[str, Any]:
    async def talk(client: Client) -> dict[str, Any]:
        search = await client.call_tool("search", {"query": "total revenue fiscal 2023", "k": 5})
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        try:
            await client.read_resource(f"thotqen://documents/{doc}")
            read = "ok"
        except MCPError as exc:
            read = exc.error.message
        try:
            await client.read_resource(f"thotqen://documents/{uuid.uuid4()}")
            missing = "ok"
        except MCPError as exc:
            missing = exc.error.message
        return {"hits": {h["document_id"] for h in search.structured_content["hits"]}, "listed": listed,
                "read": read, "missing": missing}

    return dict(over_http(live, token_of(user), talk))


def test_every_member_reads_the_workspace_on_v1_and_mcp(live, crew) -> None:
    doc = crew["document_id"]
    for role in ROLES:
        for user in crew["people"][role]:
            cited, text = v1_cited(live, user)
            assert cited == {doc} and FACTS["revenue"] in text, (role, user["username"])
            seen = mcp_view(live, user, doc)
            assert doc in seen["hits"] and f"thotqen://documents/{doc}" in seen["listed"], role
            assert seen["read"] == "ok", (role, seen)


def test_a_stranger_and_a_removed_member_see_nothing_of_it(live, crew) -> None:
    doc = crew["document_id"]
    with live.client() as c:
        late = signup(c, "wsf-late")
        assert add(c, crew["owner"], crew["ws"], late, "editor").status_code == 201
        assert doc in mcp_view(live, late, doc)["hits"]
        assert c.delete(f"/api/workspaces/{crew['ws']}/members/{late['username']}",
                        headers=crew["owner"]["headers"]).status_code == 204
    for outsider in (crew["stranger"], late):
        cited, text = v1_cited(live, outsider)
        assert doc not in cited and FACTS["revenue"] not in text, outsider["username"]
        seen = mcp_view(live, outsider, doc)
        assert doc not in seen["hits"] and all(doc not in uri for uri in seen["listed"]), seen
        assert seen["read"] == seen["missing"] != "ok"  # as unknown as a document nobody has
