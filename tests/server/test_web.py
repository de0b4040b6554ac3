"""The pages the server serves itself: the web app, offline Swagger UI, the playground's schema and
page, and what the OpenAPI document promises (bearer scheme, documented 401/403/404/429, a body
schema or media type for every answer)."""

from __future__ import annotations

import json
import re

from tests.server.conftest import signup


def test_the_web_app_and_its_assets_come_from_the_server(live) -> None:
    with live.client() as c:
        index = c.get("/")
        assert index.status_code == 200 and "text/html" in index.headers["content-type"]
        csp = index.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "connect-src 'self'" in csp and "'unsafe-inline'" not in csp
        for ref in re.findall(r'(?:src|href)="(/[^"#]*)"', index.text):
            if not ref.startswith("/rag/"):  # the playground needs a session (test below)
                assert c.get(ref).status_code == 200, ref
        # a signed-out browser opening the playground is told to sign in, as a page
        page = c.get("/rag/playground/", headers={"Accept": "text/html"})
        assert page.status_code == 401 and "text/html" in page.headers["content-type"]
        assert 'href="/#/signin"' in page.text
        for module in ("main", "api", "auth", "chats", "documents", "viewer", "metrics", "dom"):
            res = c.get(f"/js/{module}.js")
            assert res.status_code == 200 and "javascript" in res.headers["content-type"], module
            # nothing fetched from elsewhere (the SVG namespace is a name, not an address)
            text = res.text.replace("http://www.w3.org/2000/svg", "")
            assert "http://" not in text and "https://" not in text, module
        assert c.get("/__init__.py").status_code == 404  # web/ is a package only for installs


def test_docs_are_offline_with_an_authorize_button(live) -> None:
    with live.client() as c:
        docs = c.get("/docs")
        assert docs.status_code == 200 and "cdn" not in docs.text.lower()
        for ref in re.findall(r'(?:src|href)="(/[^"]*)"', docs.text):
            assert c.get(ref).status_code == 200, ref
        assert c.get("/redoc").status_code == 404  # ReDoc needs a CDN: not offered
        schema = c.get("/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                 "description": schemes["bearer"]["description"]}
    assert schemes["session_cookie"]["in"] == "cookie"
    ops = {(m.upper(), p): op for p, item in schema["paths"].items() for m, op in item.items()}
    for (method, path), op in ops.items():
        if op.get("security"):
            assert "401" in op["responses"], (method, path)
            if method != "GET":
                assert "403" in op["responses"], (method, path)
        if "{" in path:
            assert "404" in op["responses"], (method, path)
    for key in [("POST", "/api/chats/{chat_id}/messages"), ("POST", "/rag/invoke"), ("POST", "/rag/stream"),
                ("POST", "/v1/chat/completions"), ("POST", "/api/auth/login"), ("POST", "/api/session")]:
        assert "429" in ops[key]["responses"], key
    assert "security" not in ops[("POST", "/api/auth/login")] and "security" not in ops[("GET", "/api/health")]


# LangServe's routes and the OpenAI-compatible API describe their own bodies (and errors, in their own shapes)
OWN_SCHEMAS = ("/rag", "/v1")


def described(code: str, response: dict) -> bool:
    """A 2xx that says what it answers: a JSON model, a non-JSON media type with its own description, or no body."""
    content = response.get("content") or {}
    if not content:
        return code == "204"
    for media, entry in content.items():
        schema = entry.get("schema") or {}
        if "json" in media and "$ref" not in schema and "properties" not in schema:
            return False  # a bare `object` is what a hand-built dict gives
        if "json" not in media and response.get("description") == "Successful Response":
            return False
    return True


def test_every_operation_declares_what_it_answers(live) -> None:
    spec = live.app.openapi()
    undeclared, bodiless = [], []
    for path, item in spec["paths"].items():
        if path.startswith(OWN_SCHEMAS):
            continue
        for method, op in item.items():
            if not any(described(code, r) for code, r in op["responses"].items() if code.startswith("2")):
                undeclared.append(f"{method.upper()} {path}")
            # every refusal carries `{"detail": ...}`; 400 may also be the HTTP server's own text/plain
            bodiless += [f"{method.upper()} {path} {code}" for code, r in op["responses"].items()
                         if int(code) > 400 and "application/json" not in (r.get("content") or {})]
    assert len(spec["paths"]) > 20 and not undeclared, undeclared
    assert not bodiless, bodiless
    detail = spec["components"]["schemas"]["ErrorOut"]
    assert detail["required"] == ["detail"] and detail["properties"]["detail"]["type"] == "string"


def test_playground_schema_has_no_null_branches_and_server_defaults(live) -> None:
    with live.client() as c:
        user = signup(c, "pg")
        shown = c.get("/rag/config_schema", headers=user["headers"]).json()
        inputs = c.get("/rag/input_schema", headers=user["headers"]).json()
    assert '{"type": "null"}' not in json.dumps(inputs)  # the playground's form cannot render one
    with live.client() as c:
        page = c.get("/rag/playground/", headers=user["headers"])
    text = json.dumps(shown)
    assert '{"type": "null"}' not in text
    tunables = shown["$defs"]["RagTunables"]["properties"]
    assert len(tunables) >= 17 and all("default" in p for p in tunables.values())
    assert tunables["web_search"]["default"] is False  # this server's setting (tests turn web search off)
    assert tunables["top_k"]["type"] == "integer" and tunables["top_k"]["minimum"] == 1
    assert page.status_code == 200
    assert '<script src="/js/csrf-fetch.js"></script>' in page.text
    assert int(page.headers["content-length"]) == len(page.content)
    assert "'unsafe-eval'" in page.headers["content-security-policy"]  # its form validator compiles schemas
