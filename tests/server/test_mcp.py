"""The MCP server (api/routes/mcp.py) through the official SDK's own client: streamable HTTP against a live
server (the fake LLM behind the real chain), and stdio against `thotqen mcp` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from api.text import MAX
from tests.server.conftest import FACTS, LiveServer, signup
from tests.server.scrape import scraped

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"
ROOT = Path(__file__).resolve().parents[2]


def over_http(live: LiveServer, token: str | None, talk: Callable[[Client], Awaitable[Any]]) -> Any:
    """`talk` with an MCP client connected to the live server's /mcp, sending this bearer token."""

    async def run() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
                Client(streamable_http_client(f"{live.url}/mcp", http_client=http)) as client:
            return await talk(client)

    return asyncio.run(run())


def token_of(user: dict[str, Any]) -> str:
    return user["tokens"]["access_token"]


def user_id(db, username: str) -> int:
    with db.connection() as conn:
        return conn.execute("select id from users where username = %s", (username,)).fetchone()[0]


def mcp_rows(db, owner_id: int) -> list[tuple[str, str | None]]:
    with db.connection() as conn:
        return conn.execute("select status, error from query_log where owner_id = %s and source = 'mcp' order by id",
                            (owner_id,)).fetchall()


def test_tools_search_ask_and_resources(live, owner_with_report, db, server_settings) -> None:
    doc = owner_with_report["document_id"]

    async def talk(client: Client) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        search = await client.call_tool("search", {"query": "total revenue fiscal 2023", "k": 3})
        ask = await client.call_tool("ask", {"question": QUESTION})
        listed = (await client.list_resources()).resources
        meta = await client.read_resource(f"thotqen://documents/{doc}")
        page = await client.read_resource(f"thotqen://documents/{doc}/pages/1")
        too_many = await client.call_tool("search", {"query": "revenue", "k": MAX["search_k"] + 1})
        too_long = await client.call_tool("ask", {"question": "x" * (server_settings.questions.max_chars + 1)})
        unknown = await client.call_tool("search", {"query": "revenue", "owner_id": 1})
        return {"tools": tools, "search": search, "ask": ask, "listed": listed, "meta": meta, "page": page,
                "too_many": too_many, "too_long": too_long, "unknown": unknown}

    out = over_http(live, token_of(owner_with_report), talk)
    assert set(out["tools"]) == {"search", "ask"}
    # the bounds are the other surfaces' own declarations
    search_schema = out["tools"]["search"].input_schema["properties"]
    assert search_schema["k"]["maximum"] == MAX["search_k"] and search_schema["k"]["minimum"] == 1
    assert search_schema["document_ids"]["maxItems"] == MAX["document_ids"]
    max_chars = server_settings.questions.max_chars
    assert out["tools"]["ask"].input_schema["properties"]["question"]["maxLength"] == max_chars

    assert not out["search"].is_error, out["search"].content
    hits = out["search"].structured_content["hits"]
    assert 0 < len(hits) <= 3
    assert {h["document_id"] for h in hits} == {doc}
    assert hits[0]["name"] == "aurora-report.pdf" and FACTS["revenue"] in hits[0]["text"]
    assert isinstance(hits[0]["page"], int) and hits[0]["page_label"] == f"page {hits[0]['page']}"
    assert FACTS["revenue"] in out["search"].content[0].text

    assert not out["ask"].is_error, out["ask"].content
    answer = out["ask"].structured_content
    assert FACTS["revenue"] in answer["answer"] and answer["status"] == "ok" and answer["cited"]
    cited = [c for c in answer["citations"] if c["n"] in answer["cited"]]
    assert cited and {c["document_id"] for c in cited} == {doc}
    assert all(isinstance(c["page"], int) for c in cited)
    assert "Sources:" in out["ask"].content[0].text
    # accounted like every other way to ask
    assert mcp_rows(db, user_id(db, owner_with_report["username"])) == [("ok", None)]

    assert [str(r.uri) for r in out["listed"]] == [f"thotqen://documents/{doc}"]
    meta = json.loads(out["meta"].contents[0].text)
    assert meta["id"] == doc and meta["name"] == "aurora-report.pdf" and meta["pages"] == 8
    page = json.loads(out["page"].contents[0].text)
    assert page["page"] == 1 and page["document_id"] == doc and "Aurora Widgets" in page["text"]

    for refused in ("too_many", "too_long", "unknown"):
        assert out[refused].is_error and "invalid arguments" in out[refused].content[0].text, refused


def test_a_stranger_sees_none_of_the_owners_documents(live, owner_with_report) -> None:
    doc = owner_with_report["document_id"]
    with live.client() as c:
        stranger = signup(c, "stranger")

    async def read_error(client: Client, uri: str) -> str:
        with pytest.raises(MCPError) as err:
            await client.read_resource(uri)
        return err.value.error.message

    async def talk(client: Client) -> dict[str, Any]:
        return {
            "search": await client.call_tool("search", {"query": "total revenue fiscal 2023"}),
            "named": await client.call_tool("search", {"query": "total revenue", "document_ids": [doc],
                                                       "mode": "sparse"}),
            "ask": await client.call_tool("ask", {"question": QUESTION, "document_ids": [doc]}),
            "listed": (await client.list_resources()).resources,
            "theirs": await read_error(client, f"thotqen://documents/{doc}"),
            "their_page": await read_error(client, f"thotqen://documents/{doc}/pages/1"),
            "missing": await read_error(client, f"thotqen://documents/{uuid.uuid4()}"),
        }

    out = over_http(live, token_of(stranger), talk)
    assert out["search"].structured_content == {"hits": []}
    assert out["named"].structured_content == {"hits": []}
    assert FACTS["revenue"] not in out["ask"].structured_content["answer"]
    assert all(c.get("document_id") != doc for c in out["ask"].structured_content["citations"])
    assert out["listed"] == []
    # a stranger's document answers exactly like one that does not exist
    assert out["theirs"] == out["their_page"] == out["missing"]


def test_mcp_requests_are_labelled_by_their_route_in_metrics(live) -> None:
    # a plain Starlette route had no route in its scope: MCP traffic was route="unmatched"
    series = "thotqen_http_request_duration_seconds_count"
    with live.client() as c:
        before = scraped(c, series, route="/mcp", status="401")
        assert c.post("/mcp", json={}, headers={"Accept": "application/json"}).status_code == 401
        assert scraped(c, series, route="/mcp", status="401") == before + 1


def test_no_token_or_a_bad_one_is_401(live) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    with live.client() as c:
        for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}):
            res = c.post("/mcp", json=init, headers={**accept, **headers})
            assert res.status_code == 401, (headers, res.text)
            assert res.headers["www-authenticate"] == "Bearer" and res.json()["detail"]
        # the endpoint is JSON-RPC, not part of the REST API's OpenAPI document
        assert not any(path.startswith("/mcp") for path in c.get("/openapi.json").json()["paths"])

    async def talk(client: Client) -> None:
        await client.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # the SDK's client raises from inside its task groups
        over_http(live, None, talk)
    assert refused.value.subgroup(MCPError) is not None


def test_ask_counts_against_the_hourly_question_limit(start_server, server_settings, db) -> None:
    limited = start_server(server_settings.model_copy(update={"questions_per_hour": 1}))
    with limited.client() as c:
        user = signup(c, "limited")

    async def talk(client: Client) -> tuple[Any, Any, Any]:
        first = await client.call_tool("ask", {"question": QUESTION})
        second = await client.call_tool("ask", {"question": QUESTION})
        search = await client.call_tool("search", {"query": "revenue"})  # searching is not a question
        return first, second, search

    first, second, search = over_http(limited, token_of(user), talk)
    assert not first.is_error, first.content
    assert second.is_error and "hourly question limit reached (1 per hour)" in second.content[0].text
    assert not search.is_error
    assert [status for status, _ in mcp_rows(db, user_id(db, user["username"]))] == ["ok"]
    with limited.client() as c:  # the same hour's limit as the HTTP API's
        res = c.post("/rag/invoke", headers=user["headers"], json={"input": {"question": QUESTION}})
        assert res.status_code == 429


def test_stdio_lists_tools_and_searches_as_the_cli_user(owner_with_report, db, tmp_path: Path) -> None:
    """`thotqen mcp --user NAME` as a subprocess over the same database: the SDK's stdio client."""
    env = {**os.environ, "DATABASE_URL": db.uri, "THOTQEN_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def server(user: str, web: bool) -> StdioServerParameters:
        # a web account's documents only when the operator says so (--web-account): issue 26
        return StdioServerParameters(command=sys.executable, args=["-m", "cli", "mcp", "--user", user,
                                                                   *(["--web-account"] if web else [])],
                                     env=env, cwd=str(ROOT))

    async def run(user: str, web: bool = False) -> tuple[set[str], Any]:
        async with Client(server(user, web), read_timeout_seconds=300) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("search", {"query": "total revenue fiscal 2023", "k": 2})

    tools, found = asyncio.run(run(owner_with_report["username"], web=True))
    assert tools == {"search", "ask"}
    hits = found.structured_content["hits"]
    assert 0 < len(hits) <= 2 and {h["document_id"] for h in hits} == {owner_with_report["document_id"]}
    assert FACTS["revenue"] in hits[0]["text"]

    _, nothing = asyncio.run(run(f"mallory-{uuid.uuid4().hex[:6]}"))
    assert nothing.structured_content == {"hits": []}


def test_a_malformed_body_is_refused_before_any_tool(live, owner_with_report) -> None:
    with live.client() as c:
        res = c.post("/mcp", content=b"{not json", headers={**owner_with_report["headers"],
                                                              "Content-Type": "application/json",
                                                              "Accept": "application/json, text/event-stream"})
        assert res.status_code == 400, res.text
        big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "ask", "arguments": {"question": "x" * 5_000_000}}}
        res = c.post("/mcp", json=big, headers={**owner_with_report["headers"],
                                               "Accept": "application/json, text/event-stream"})
        assert res.status_code == 413, res.text


def test_ask_answers_on_a_thread_of_its_own_not_the_shared_pool(live, owner_with_report, monkeypatch) -> None:
    """Issue 26: an answer on asyncio's default pool holds a place that every user's sign-in and light
    reads need; MCP's ask runs where a chat's answer does, a thread of its own at BACKGROUND_NICE."""
    import threading

    from api.routes import mcp as mcp_module

    ran_on: list[str] = []
    real = mcp_module.run_graph

    def recorded(*args: Any, **kwargs: Any) -> Any:
        ran_on.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(mcp_module, "run_graph", recorded)

    async def talk(client: Client) -> Any:
        return await client.call_tool("ask", {"question": QUESTION})

    out = over_http(live, token_of(owner_with_report), talk)
    assert not out.is_error, out.content
    assert len(ran_on) == 1 and ran_on[0].startswith("mcp-"), ran_on
