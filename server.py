"""HTTP server (FastAPI + LangServe): accounts, uploads with SSE progress, chats, /rag, metrics.

`create_app()` builds an app from settings; `app` is the one `thotqen serve` / `make run` start.
Start-up opens the database (embedded by default), migrates, recovers interrupted ingestion jobs
and starts the background ingestion worker. Route groups live in `api/`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch/llama.cpp start OpenMP (see cli.py)

import psycopg  # noqa: E402
import pydantic  # noqa: E402
from fastapi import FastAPI, Request  # noqa: E402
from fastapi.encoders import jsonable_encoder  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.middleware.cors import CORSMiddleware  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402

from answering import accounting  # noqa: E402
from api.text import printable  # noqa: E402
from settings import Settings, get_settings  # noqa: E402
from storage import jobs  # noqa: E402
from storage.db import Database, open_database  # noqa: E402

log = logging.getLogger("thotqen.server")

DESCRIPTION = """Corrective RAG over your PDFs. Sign up or log in under `/api/auth`, send
`Authorization: Bearer <access_token>` everywhere else, upload PDFs to `/api/documents`, follow
`/api/jobs/{id}/events`, then ask in a chat (`/api/chats/{id}/messages`, Server-Sent Events) or call
the graph directly under `/rag` (LangServe)."""


class OriginSecretMiddleware:
    """Rejects requests without the shared secret header a fronting proxy adds (health probes pass)."""

    def __init__(self, app: Any, header: str, secret: str) -> None:  # noqa: ANN401
        self.app = app
        self.header = header.lower().encode()
        self.secret = secret.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:  # noqa: ANN401
        if scope["type"] == "http" and scope["path"] != "/api/health" and scope["method"] != "OPTIONS":
            given = dict(scope["headers"]).get(self.header, b"")
            if not hmac.compare_digest(given, self.secret):
                response = JSONResponse({"detail": "origin verification failed"}, status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None, services: Any = None,  # noqa: ANN401
               start_worker: bool = True) -> FastAPI:
    """The app. `services` (graph.services.Services) replaces the graph's defaults: tests inject
    their fake LLM chain this way; production leaves it None."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from answering.chat import ChatAnswerer
        from api.files import make_file_store
        from api.security import Tokens, resolve_jwt_secret
        from api.worker import IngestWorker

        secret = resolve_jwt_secret(settings)  # refuses to start in production without a real secret
        db = await asyncio.to_thread(open_database, settings)
        with db.connection() as conn:
            requeued, failed = jobs.recover_interrupted(conn, max_attempts=settings.job_max_attempts)
        if requeued or failed:
            log.warning("recovered interrupted jobs: %d re-queued, %d failed", len(requeued), len(failed))
        if stale := accounting.sweep_stale(db):
            log.warning("%d question(s) left running by a stopped server ended as errors", stale)
        if getattr(services, "embedder", None) is None:  # load it now, not under the first burst of questions
            from providers.embeddings import get_embedder

            await asyncio.to_thread(get_embedder, settings.embedding_model_path, settings.embedding_batch_size)
        files = make_file_store(settings)
        worker = IngestWorker(db, settings, files, embedder=getattr(services, "embedder", None))
        app.state.db = db
        app.state.tokens = Tokens(settings, secret)
        app.state.files = files
        app.state.worker = worker
        app.state.answerer = ChatAnswerer(db, settings, services)
        if start_worker:
            worker.start(settings.ingest_workers)
        yield
        worker.stop(timeout=10)

    app = FastAPI(title="Thotqen", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.services = services

    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:
        # bearer tokens, not cookies: no credentials mode
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type", settings.origin_secret_header],
                           max_age=600)
    if settings.origin_secret is not None:
        app.add_middleware(OriginSecretMiddleware, header=settings.origin_secret_header,
                           secret=settings.origin_secret.get_secret_value())

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own handler, but the offending input echoed back may hold what UTF-8 cannot encode
        return JSONResponse({"detail": printable(jsonable_encoder(exc.errors()))}, status_code=422)

    @app.exception_handler(pydantic.ValidationError)
    async def invalid_input(request: Request, exc: pydantic.ValidationError) -> JSONResponse:
        # LangServe validates each input of a batch outside FastAPI's request validation
        errors = [{"type": e["type"], "loc": ["body", *e["loc"]], "msg": e["msg"]} for e in exc.errors()]
        return JSONResponse({"detail": printable(jsonable_encoder(errors))}, status_code=422)

    @app.exception_handler(UnicodeDecodeError)
    async def not_utf8(request: Request, exc: UnicodeDecodeError) -> JSONResponse:
        # LangServe reads /rag bodies itself and lets a body that is not UTF-8 escape
        return JSONResponse({"detail": "the body is not UTF-8 JSON"}, status_code=400)

    @app.exception_handler(accounting.QuestionLimit)
    async def question_limit(request: Request, exc: accounting.QuestionLimit) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=429,
                            headers={"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))})

    from api.rag import GraphFailed

    @app.exception_handler(GraphFailed)
    async def graph_failed(request: Request, exc: GraphFailed) -> JSONResponse:
        return JSONResponse({"detail": "the answer could not be produced; please try again"}, status_code=500)

    @app.exception_handler(psycopg.DataError)
    async def unstorable(request: Request, exc: psycopg.DataError) -> JSONResponse:
        # the last line behind api/text.py: a value the database refused is the request's fault, not
        # the server's; logged, since it means a field escaped the validation layer
        log.warning("%s %s: the database refused a value: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": "a value in the request cannot be stored (invalid characters or out of "
                                       "range)"}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "internal error"}, status_code=500)

    @app.get("/api/health", tags=["health"])
    async def health(request: Request) -> JSONResponse:
        """Database reachability within a 2 s deadline."""
        db: Database = request.app.state.db
        try:
            await asyncio.wait_for(asyncio.to_thread(db.ping), timeout=2.0)
        except Exception as exc:  # timeout or connection error: report, never raise
            return JSONResponse({"status": "unavailable", "database": f"unreachable: {type(exc).__name__}"},
                                status_code=503)
        return JSONResponse({"status": "ok", "database": db.mode})

    from api import admin, auth, chats, documents, rag

    for module in (auth, documents, chats, admin):
        app.include_router(module.router)
    rag.mount(app)
    document_errors(app)
    return app


PUBLIC = {"/api/health", "/api/auth/signup", "/api/auth/login", "/api/auth/refresh"}
QUESTIONS = ("/messages", "/invoke", "/batch", "/stream", "/stream_log", "/stream_events", "/chat/completions")
ERRORS = {
    400: "a body that is not JSON (or not UTF-8), a malformed multipart body, or a bad LangServe config hash",
    401: "no or bad bearer token (WWW-Authenticate: Bearer)",
    403: "not allowed: admins only, or a LangServe endpoint this server turns off",
    422: "a field is missing, malformed, out of bounds, or holds text that cannot be stored; `detail` names it",
    429: "a rate limit: the hourly question limit, or login/signup attempts per address; see Retry-After",
}


def document_errors(app: FastAPI) -> None:
    """The OpenAPI document lists the errors every route can answer (the attack suite holds the server
    to it): 401 wherever a token is needed, 422 wherever there is input, 429 where limits apply."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        spec = build()
        for path, operations in spec.get("paths", {}).items():
            for op in operations.values():
                responses = op.setdefault("responses", {})
                codes = []
                if path not in PUBLIC:
                    codes.append(401)
                if path.startswith("/api/admin") or path.endswith("_feedback"):
                    codes.append(403)
                if op.get("requestBody") or "{config_hash}" in path:
                    codes.append(400)
                if op.get("parameters") or op.get("requestBody"):
                    codes.append(422)
                if path.endswith(QUESTIONS) or path in ("/api/auth/signup", "/api/auth/login"):
                    codes.append(429)
                for code in codes:
                    responses.setdefault(str(code), {"description": ERRORS[code]})
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


app = create_app()
