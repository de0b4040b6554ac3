"""The pages: the web app at `/`, Swagger UI at `/docs` and the LangServe playground, all served
from this process (nothing fetched from elsewhere; the Content-Security-Policy forbids it).

- `/` serves web/ (plain HTML, CSS and ES modules: no build step). Its routes live after `#`,
  so the server needs no fallback route.
- `/docs` is Swagger UI from the swagger-ui-bundle-v2 wheel, with an Authorize button for the
  bearer scheme (api/deps.py); a signed-in browser also works through its session cookie.
- `/rag/playground/` gets web/js/csrf-fetch.js injected, which adds the CSRF header to its POSTs.
- The OpenAPI document lists the 401/403/404/429 each operation can answer (`document_errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

import web as web_package
from api.schemas import ErrorOut

WEB_DIR = Path(web_package.__file__).resolve().parent
PLAYGROUND_PREFIX = "/rag/playground"
CSRF_SHIM = b'<script src="/js/csrf-fetch.js"></script>'
SIGN_IN = (b'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in first</title>'
           b'<link rel="stylesheet" href="/app.css"></head><body><main><section class="auth-card">'
           b'<h1>Sign in first</h1><p>The playground runs questions over your documents, so it needs you signed in.'
           b'</p><p><a class="btn btn-primary" href="/#/signin">Sign in</a></p></section></main></body></html>')

_BASE_CSP = ("default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; "
             "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
CSP_APP = f"{_BASE_CSP}; script-src 'self'; style-src 'self'"
CSP_DOCS = f"{_BASE_CSP}; script-src 'self'; style-src 'self' 'unsafe-inline'"  # Swagger sets style attributes
# the playground's page sets its schemas in an inline script (LangServe's template), and its form
# validator (ajv) compiles schemas with `new Function`
CSP_PLAYGROUND = f"{_BASE_CSP}; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'"

AUTH_ERRORS = {
    401: {"description": "not signed in: no, a malformed, an expired or a revoked token"},
    403: {"description": "a cookie-authenticated request without its CSRF token, or from another origin"},
}
NOT_FOUND = {"description": "no such resource (a stranger's id answers exactly like a missing one)"}
TOO_MANY = {"description": "hourly question limit reached; see Retry-After"}
# operations that count against the hourly question limit, besides those that document it themselves
QUESTION_PATHS = ("/rag/invoke", "/rag/batch", "/rag/stream", "/rag/stream_log", "/rag/stream_events")


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Adds to each operation the auth errors (when it has security), 404 (path parameters) and
    429 (questions) it can answer, without overwriting what a route already says. Under /api the
    body is `{"detail": ...}` (api/schemas.py's ErrorOut); /rag and /v1 keep their own shapes."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault(ErrorOut.__name__, ErrorOut.model_json_schema())
    for path, item in schema.get("paths", {}).items():
        for method, op in item.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            responses = op["responses"]
            detail = path.startswith("/api/")
            if op.get("security"):
                responses.setdefault("401", _error(AUTH_ERRORS[401], detail))
                if method.upper() not in ("GET", "HEAD", "OPTIONS"):
                    responses.setdefault("403", _error(AUTH_ERRORS[403], detail))
            if "{" in path:
                responses.setdefault("404", _error(NOT_FOUND, detail))
            if any(path.startswith(p) for p in QUESTION_PATHS) and method == "post":
                responses.setdefault("429", _error(TOO_MANY, detail))
    return schema


def _error(entry: dict[str, Any], detail: bool) -> dict[str, Any]:
    """The response entry, with the `{"detail": ...}` body where the route answers one."""
    if not detail:
        return entry
    return {**entry, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ErrorOut.__name__}"}}}}


class PageHeaders:
    """ASGI middleware: security headers on HTML pages, and the CSRF shim in the playground's page."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        playground = path.startswith(PLAYGROUND_PREFIX)
        csp = CSP_PLAYGROUND if playground else CSP_DOCS if path == "/docs" else CSP_APP
        held: dict[str, Any] = {}
        wants_html = b"text/html" in dict(scope.get("headers") or []).get(b"accept", b"")

        async def wrapped(message: dict[str, Any]) -> None:
            if playground and wants_html and message["type"] == "http.response.start" and message["status"] == 401:
                held["signin"] = True  # a browser without a session: a page that says where to sign in
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(SIGN_IN)).encode()),
                    (b"content-security-policy", CSP_APP.encode())]})
                await send({"type": "http.response.body", "body": SIGN_IN})
                return
            if "signin" in held:
                return
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if not ctype.startswith(b"text/html"):
                    await send(message)
                    return
                headers += [(b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
                            (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY")]
                if playground:  # hold the start: the body grows by the shim
                    held["start"] = {**message, "headers": [(k, v) for k, v in headers
                                                           if k.lower() != b"content-length"]}
                    held["body"] = b""
                    return
                await send({**message, "headers": headers})
            elif message["type"] == "http.response.body" and "start" in held:
                held["body"] += message.get("body", b"")
                if message.get("more_body"):
                    return
                body = held["body"].replace(b"</head>", CSRF_SHIM + b"\n</head>", 1)
                start = held.pop("start")
                start["headers"].append((b"content-length", str(len(body)).encode()))
                await send(start)
                await send({"type": "http.response.body", "body": body})
            else:
                await send(message)

        await self.app(scope, receive, wrapped)


class WebFiles(StaticFiles):
    """web/ as files, except the package's Python (web/__init__.py marks it for packaging only)."""

    SERVED = (".html", ".css", ".js", ".svg", ".png", ".ico", ".txt", ".md")

    def lookup_path(self, path: str) -> tuple[str, Any]:
        full, stat = super().lookup_path(path)
        if stat is not None and full and not Path(full).is_dir() and not full.endswith(self.SERVED):
            return "", None
        return full, stat


def mount(app: FastAPI) -> None:
    """Call last: the static web app at `/` answers only what no route above it does."""
    app.add_middleware(PageHeaders)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        return FileResponse(WEB_DIR / "docs.html", headers={"Cache-Control": "no-cache"})

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_errors(get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.mount("/assets/swagger", StaticFiles(directory=str(swagger_ui_path)), name="swagger")
    app.mount("/", WebFiles(directory=str(WEB_DIR), html=True), name="web")
