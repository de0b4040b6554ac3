"""Protection: hourly question limit, per-IP login limit, CORS allow-list, origin-verification header."""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr

from tests.server.conftest import signup, unique_ip

ORIGIN_SECRET = "origin-" + uuid.uuid4().hex + uuid.uuid4().hex


@pytest.fixture(scope="module")
def guarded(start_server, server_settings):
    return start_server(server_settings.model_copy(update={
        "questions_per_hour": 2, "login_ip_limit": 4, "cors_origins": "https://app.example.com",
        "origin_secret": SecretStr(ORIGIN_SECRET)}))


def test_origin_header_is_required_except_for_health(guarded) -> None:
    with guarded.client() as c:
        assert c.get("/api/health").json()["status"] == "ok"
        res = c.post("/api/auth/login", json={"username": "x", "password": "y"})
        assert res.status_code == 403 and "origin" in res.json()["detail"]
        assert c.get("/docs", headers={"X-Origin-Verify": "wrong"}).status_code == 403
        assert c.get("/docs", headers={"X-Origin-Verify": ORIGIN_SECRET}).status_code == 200


def test_cors_allow_list(guarded) -> None:
    with guarded.client(headers={"X-Origin-Verify": ORIGIN_SECRET}) as c:
        pre = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
        ok = c.options("/api/chats", headers={"Origin": "https://app.example.com", **pre})
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://app.example.com"
        bad = c.options("/api/chats", headers={"Origin": "https://evil.example.net", **pre})
        assert "access-control-allow-origin" not in bad.headers
        got = c.get("/api/health", headers={"Origin": "https://evil.example.net"})
        assert "access-control-allow-origin" not in got.headers


# what a browser MCP client (the official SDK's streamable HTTP) and the OpenAI JavaScript SDK ask to send
MCP_HEADERS = "authorization,content-type,mcp-protocol-version,mcp-session-id,last-event-id"
OPENAI_HEADERS = ("authorization,content-type,openai-organization,openai-project,x-stainless-arch,x-stainless-lang,"
                  "x-stainless-os,x-stainless-package-version,x-stainless-retry-count,x-stainless-runtime,"
                  "x-stainless-runtime-version,x-stainless-timeout")


def test_cors_lets_browser_mcp_and_openai_clients_send_their_headers(guarded) -> None:
    # before: Starlette refused these preflights (400 "Disallowed CORS headers"), so a browser never sent them
    origin = "https://app.example.com"
    with guarded.client(headers={"X-Origin-Verify": ORIGIN_SECRET}) as c:
        for path, asked in (("/mcp", MCP_HEADERS), ("/v1/chat/completions", OPENAI_HEADERS)):
            pre = c.options(path, headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                           "Access-Control-Request-Headers": asked})
            assert pre.status_code == 200, (path, pre.text)
            allowed = {h.strip().lower() for h in pre.headers["access-control-allow-headers"].split(",")}
            assert set(asked.split(",")) <= allowed, (path, allowed)
        # the session id an MCP server answers with is readable by the page's script
        res = c.post("/mcp", json={}, headers={"Origin": origin, "Accept": "application/json"})
        assert res.status_code == 401 and res.headers["access-control-allow-origin"] == origin
        exposed = {h.strip().lower() for h in res.headers["access-control-expose-headers"].split(",")}
        assert {"mcp-session-id", "x-request-id", "retry-after", "www-authenticate"} <= exposed


def test_login_attempts_per_ip(guarded) -> None:
    ip = unique_ip()
    with guarded.client(headers={"X-Origin-Verify": ORIGIN_SECRET, "X-Forwarded-For": ip}) as c:
        codes = [c.post("/api/auth/login", json={"username": f"u{n}", "password": "nope-nope"}).status_code
                 for n in range(5)]
        assert codes == [401, 401, 401, 401, 429]
        res = c.post("/api/auth/signup", json={"username": f"new-{uuid.uuid4().hex[:6]}", "password": "x" * 12})
        assert res.status_code == 429 and int(res.headers["Retry-After"]) > 0
    # another address is not affected
    with guarded.client(headers={"X-Origin-Verify": ORIGIN_SECRET, "X-Forwarded-For": unique_ip()}) as c:
        assert c.post("/api/auth/login", json={"username": "u0", "password": "nope-nope"}).status_code == 401


def test_hourly_question_limit(guarded) -> None:
    with guarded.client(headers={"X-Origin-Verify": ORIGIN_SECRET}) as c:
        user = signup(c, "limit")
        h = user["headers"]
        chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        for _ in range(2):
            with c.stream("POST", f"/api/chats/{chat}/messages", headers=h, json={"question": "Revenue?"}) as res:
                assert res.status_code == 200
                res.read()
        res = c.post(f"/api/chats/{chat}/messages", headers=h, json={"question": "Revenue?"})
        assert res.status_code == 429 and 3000 < int(res.headers["Retry-After"]) <= 3600
        # /rag counts against the same budget
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": "Revenue?"}})
        assert res.status_code == 429 and "Retry-After" in res.headers
        # the refused question was not saved; another user still has their budget
        assert len(c.get(f"/api/chats/{chat}", headers=h).json()["messages"]) == 4
        other = signup(c, "limit")
        res = c.post("/rag/invoke", headers=other["headers"], json={"input": {"question": "Revenue?"}})
        assert res.status_code == 200
