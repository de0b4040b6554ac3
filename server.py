"""HTTP server (FastAPI + LangServe): accounts, uploads with SSE progress, chats, /rag, metrics.

`create_app()` builds an app from settings; `app` is the one `thotqen serve` / `make run` start.
Start-up opens the database (embedded by default), migrates, and, without a broker, recovers
interrupted ingestion jobs and starts the background ingestion worker and upkeep thread; with
CELERY_BROKER_URL, uploads become Celery tasks for `thotqen worker` (jobqueue/). Route groups
live in `api/routes/`, the server's infrastructure they stand on in `api/`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import psycopg
import pydantic
from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout

from answering import accounting
from answering.chat import ChatAnswerer
from answering.processes import AnswersBusy
from api import cors, drain, edge, errors, heavy, leaving
from api.limits import Rate
from api.routes import (
    admin,
    auth,
    chats,
    collections,
    documents,
    find,
    formats,
    keys,
    mcp,
    openai_compat,
    pages,
    prometheus,
    rag,
    ready,
    session,
    web,
    workspaces,
)
from api.schemas import HealthOut
from api.verify import Verifier
from jobqueue.depth import QueueDepth
from jobqueue.maintenance import MaintenanceThread
from providers import logs, telemetry
from providers.runtime import configure_process
from runtime import Runtime, build_runtime
from settings import Settings
from storage import embedding_index, jobs
from storage.db import Database, transaction_pooler
from storage.outage import RETRY_S, DatabaseUnavailable

log = logging.getLogger("thotqen.server")

DESCRIPTION = """Corrective RAG over your PDFs. Sign up or log in under `/api/auth`, send
`Authorization: Bearer <access_token>` everywhere else (the **Authorize** button), or an API key from
`POST /api/keys` in its place (machines: scoped read / ask / ingest, revocable), upload PDFs to
`/api/documents`, follow `/api/jobs/{id}/events`, then ask in a chat (`/api/chats/{id}/messages`,
Server-Sent Events), call the graph directly under `/rag` (LangServe), or use any OpenAI client
against `/v1`. The web app at `/` signs in with an HttpOnly session cookie (`/api/session`); a
state-changing request that the cookie authenticates must carry the `X-CSRF-Token` header."""


UNGUARDED = ("/api/health", "/api/ready", "/metrics")


class OriginSecretMiddleware:
    """Rejects requests without the shared secret header a fronting proxy adds (health probes pass)."""

    def __init__(self, app: Any, header: str, secret: str) -> None:
        self.app = app
        self.header = header.lower().encode()
        self.secret = secret.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # /metrics has its own protection (METRICS_ALLOW_IPS, METRICS_TOKEN): Prometheus scrapes the origin
        if scope["type"] == "http" and scope["path"] not in UNGUARDED and scope["method"] != "OPTIONS":
            given = dict(scope["headers"]).get(self.header, b"")
            if not hmac.compare_digest(given, self.secret):
                response = JSONResponse({"detail": "origin verification failed"}, status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None, runtime: Runtime | None = None, start_worker: bool = True) -> FastAPI:
    """The app: its route groups over one runtime's parts. `runtime` None builds the real one from
    `settings` (None: the environment); tests hand in a runtime with fakes."""
    configure_process()  # before the start-up loads torch or llama.cpp
    drain.keep_streams_open()  # SIGTERM leaves answer streams their grace (api/drain.py)
    rt = runtime if runtime is not None else build_runtime(settings)
    # start-up is one trace: building the app opens and migrates the database (rag.mount starts the answer
    # processes' pool, which needs its address), the lifespan goes on in it (`start-up lifespan`)
    with telemetry.span("start-up"):
        # /docs is served offline by api/routes/web.py; ReDoc would need a CDN
        app = FastAPI(title="Thotqen", version="0.1.0", description=DESCRIPTION, lifespan=lifespan(rt, start_worker),
                      docs_url=None, redoc_url=None)
        app.state.settings = rt.settings
        app.state.runtime = rt
        add_middleware(app, rt.settings)
        add_error_handlers(app)
        add_routes(app)
        # inside the edge (its body is read and bounded first): an answering request whose client left is cancelled
        app.add_middleware(leaving.CancelWhenClientLeaves)
        # outside every route and the origin check: a body is bounded before anything reads it
        bodies = rt.settings.bodies
        app.add_middleware(edge.BodyLimits, body_max_bytes=bodies.request_max_kb * 1024,
                           upload_max_bytes=int(bodies.upload_max_mb * 1024 * 1024),
                           json_max_depth=bodies.json_max_depth, read_timeout_s=bodies.body_read_timeout_s,
                           json_max_containers=bodies.json_max_containers,
                           form_max_containers=bodies.form_max_containers,
                           form_max_bytes=bodies.form_max_kb * 1024,
                           large_per_minute=bodies.large_bodies_per_minute,
                           verifier=lambda: getattr(app.state, "verifier", None))
        app.add_middleware(prometheus.RequestMetrics)  # outermost: refused requests are counted too
        app.add_middleware(logs.RequestId)  # every response's X-Request-ID, every log line's request_id
        app.state.start_trace = telemetry.carrier()
    telemetry.instrument_app(app)  # a span per request when OTEL_EXPORTER_OTLP_ENDPOINT is set
    return app


def lifespan(rt: Runtime, start_worker: bool) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Start-up and shut-down: open and check the parts before the first request, stop the threads after."""

    @asynccontextmanager
    async def run(app: FastAPI) -> AsyncIterator[None]:
        settings = rt.settings
        # start-up's trace (create_app's), not a trace of one span for each of its statements
        with telemetry.continued(getattr(app.state, "start_trace", None)), telemetry.span("start-up lifespan"):
            tokens = rt.tokens  # refuses to start in production without a real secret
            db = await asyncio.to_thread(lambda: rt.database)
            broker = bool(settings.celery.broker_url)
            if not broker:  # with a broker, `thotqen worker` and beat recover jobs (jobqueue/app.py)
                with db.connection() as conn:
                    requeued, failed = jobs.recover_interrupted(conn, max_attempts=settings.jobs.max_attempts)
                if requeued or failed:
                    log.warning("recovered interrupted jobs: %d re-queued, %d failed", len(requeued), len(failed))
            if stale := accounting.sweep_stale(db):
                log.warning("%d question(s) left running by a stopped server ended as errors", stale)
            instance = accounting.hold_instance(db, pooled=transaction_pooler(settings, db.uri))
            embedder = await asyncio.to_thread(lambda: rt.embedder)  # now, not under the first burst of questions
            await asyncio.to_thread(rt.warm)  # the question path's models and clients, too (runtime.py)
            answers = rt.answers  # the graph's runs in processes of their own (answering/processes.py)
            if answers is not None:
                await asyncio.to_thread(answers.start)  # each loads its models before the first question
            # Refuse to serve questions against another model's vectors (storage/embedding_index.py), and
            # hold the model lock so no reindex swaps them while this process runs.
            try:
                with db.connection() as conn:
                    embedding_index.check_model(conn, embedder.identity, embedder.dimension)
            except embedding_index.ModelMismatch as exc:
                log.error("refusing to start: %s", exc)
                raise
            model_lock = embedding_index.hold(db.uri, pooled=transaction_pooler(settings, db.uri))
            app.state.db = db
            app.state.queue_depth = QueueDepth(db)  # /metrics' database gauges, read in the background
            app.state.tokens = tokens
            app.state.verifier = Verifier(tokens, db)
            app.state.files = rt.files
            app.state.worker = rt.ingest_worker
            app.state.jobs = rt.jobs
            app.state.answers = answers
            app.state.answerer = ChatAnswerer(rt, answers)
            app.state.models_ready = True  # the embedder loaded, the question path warmed (api/routes/ready.py)
            app.state.renders = pages.Renders(settings)  # page images on their own bounded pool
            app.state.job_streams = heavy.Slots(settings.job_streams_per_user, "progress streams")
            app.state.uploads = heavy.Slots(settings.uploads_per_user, "uploads")
            app.state.uploads_at_once = heavy.Gate(settings.uploads_at_once, "uploads")
            app.state.upload_rate = Rate(settings.upload_mb_per_minute)  # megabytes per account per minute
            # an upload's copy, check and storing run here, off the default pool that authenticates everyone
            app.state.upload_work = ThreadPoolExecutor(settings.uploads_at_once, thread_name_prefix="upload")
            maintenance = MaintenanceThread(db, settings)
            if start_worker and not broker:  # with a broker, ingestion and upkeep run in `thotqen worker`/beat
                rt.ingest_worker.start(settings.ingestion.workers, settings.ingestion.fair_lanes)
                maintenance.start()
            log.info("ingestion: %s", app.state.jobs.kind)
        watcher = asyncio.create_task(drain.watch(settings.http.shutdown_grace_s))
        yield
        watcher.cancel()
        # the grace is over (uvicorn cancelled what still ran): end this process's open questions as
        # saved turns that say to ask again, before the answer processes go
        try:
            if ended := await asyncio.to_thread(accounting.end_in_flight, db):
                log.warning("drain: %d answer(s) did not finish within SHUTDOWN_GRACE_S; saved as interrupted",
                            ended)
        except Exception as exc:  # the database is gone: the next start's sweep ends them
            log.warning("drain: could not end the open answers: %s", type(exc).__name__)
        rt.ingest_worker.stop(timeout=10)
        maintenance.stop()
        model_lock.close()
        app.state.renders.close()
        app.state.verifier.close()
        app.state.upload_work.shutdown(wait=False, cancel_futures=True)
        if answers is not None:
            answers.close()
        instance.close()

    return run


def add_middleware(app: FastAPI, settings: Settings) -> None:
    origins = [o.strip() for o in settings.gateway.cors_origins.split(",") if o.strip()]
    if origins:
        # bearer tokens, not cookies: no credentials mode
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["*"],
                           allow_headers=[*cors.ALLOW_HEADERS, settings.gateway.origin_secret_header],
                           expose_headers=list(cors.EXPOSE_HEADERS), max_age=600)
    if settings.gateway.origin_secret is not None:
        app.add_middleware(OriginSecretMiddleware, header=settings.gateway.origin_secret_header,
                           secret=settings.gateway.origin_secret.get_secret_value())


def add_error_handlers(app: FastAPI) -> None:
    """Every failure a request can meet answers with a status and a message, never a bare 500."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own shape, without echoing the input (api/errors.py)
        return JSONResponse({"detail": errors.validation_errors(exc.errors())}, status_code=422)

    @app.exception_handler(edge.BodyRefused)
    async def body_refused(request: Request, exc: edge.BodyRefused) -> JSONResponse:
        # a streamed body (an upload) passed the edge's cap or stalled while a route read it
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers={**exc.headers,
                                                                                     "Connection": "close"})

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse | Any:
        if exc.status_code == 422 and isinstance(exc.detail, str) and request.url.path.startswith("/rag/"):
            # LangServe refuses some bodies (a batch's config list of the wrong length) with a plain
            # string where its OpenAPI document promises FastAPI's list of errors
            return JSONResponse({"detail": [{"type": "value_error", "loc": ["body"], "msg": exc.detail}]},
                                status_code=422, headers=exc.headers)
        return await http_exception_handler(request, exc)

    @app.exception_handler(pydantic.ValidationError)
    async def invalid_input(request: Request, exc: pydantic.ValidationError) -> JSONResponse:
        # LangServe validates each input of a batch outside FastAPI's request validation
        found = [{**e, "loc": ["body", *e["loc"]]} for e in exc.errors()]
        return JSONResponse({"detail": errors.validation_errors(found)}, status_code=422)

    @app.exception_handler(UnicodeDecodeError)
    async def not_utf8(request: Request, exc: UnicodeDecodeError) -> JSONResponse:
        # LangServe reads /rag bodies itself and lets a body that is not UTF-8 escape
        return JSONResponse({"detail": "the body is not UTF-8 JSON"}, status_code=400)

    @app.exception_handler(accounting.QuestionLimit)
    async def question_limit(request: Request, exc: accounting.QuestionLimit) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=429,
                            headers={"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))})

    @app.exception_handler(AnswersBusy)
    async def answers_busy(request: Request, exc: AnswersBusy) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503,
                            headers={"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))})

    @app.exception_handler(rag.GraphFailed)
    async def graph_failed(request: Request, exc: rag.GraphFailed) -> JSONResponse:
        return JSONResponse({"detail": "the answer could not be produced; please try again"}, status_code=500)

    @app.exception_handler(psycopg.DataError)
    async def unstorable(request: Request, exc: psycopg.DataError) -> JSONResponse:
        # the last line behind api/text.py: a value the database refused is the request's fault, not
        # the server's; logged, since it means a field escaped the validation layer
        log.warning("%s %s: the database refused a value: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": "a value in the request cannot be stored (invalid characters or out of "
                                       "range)"}, status_code=422)

    @app.exception_handler(DatabaseUnavailable)
    @app.exception_handler(PoolTimeout)
    @app.exception_handler(psycopg.OperationalError)
    async def database_unavailable(request: Request, exc: Exception) -> JSONResponse:
        return database_down(request, exc)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        if database_failure(exc):  # raised where the handlers above do not reach (a middleware)
            return database_down(request, exc)
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "internal error"}, status_code=500)


def database_failure(exc: BaseException) -> bool:
    """Whether `exc`, or what it was raised from (`raise ... from`), is the database being unreachable or
    out of connections."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, DatabaseUnavailable | PoolTimeout | psycopg.OperationalError):
            return True
        seen = seen.__cause__
    return False


def database_down(request: Request, exc: BaseException) -> JSONResponse:
    """503 with Retry-After for a request the database could not serve, logged as one line (no traceback:
    storage/outage.py logs the outage itself once)."""
    retry = exc.retry_after_s if isinstance(exc, DatabaseUnavailable) else RETRY_S
    log.warning("%s %s: 503, the database is unavailable: %s", request.method, request.url.path,
                " ".join(str(exc).split())[:200] or type(exc).__name__)
    return JSONResponse({"detail": "the database is unavailable; please try again shortly"}, status_code=503,
                        headers={"Retry-After": str(max(1, math.ceil(retry)))})


def add_routes(app: FastAPI) -> None:
    @app.get("/api/health", tags=["health"], response_model=HealthOut,
             responses={503: {"model": HealthOut, "description": "the database is unreachable"}})
    async def health(request: Request) -> JSONResponse:
        """Database reachability within a 2 s deadline."""
        db: Database = request.app.state.db
        try:
            with telemetry.untraced():  # a probe: neither its request nor its statement is a trace
                await asyncio.wait_for(asyncio.to_thread(db.ping), timeout=2.0)
        except Exception as exc:  # timeout or connection error: report, never raise
            return JSONResponse({"status": "unavailable", "database": f"unreachable: {type(exc).__name__}"},
                                status_code=503)
        return JSONResponse({"status": "ok", "database": db.mode})

    # pages before documents: its `{page}.png` is more specific than documents' `{page}`
    for module in (ready, auth, session, keys, pages, documents, formats, chats, collections, workspaces, find, admin,
                   prometheus):
        app.include_router(module.router)
    rag.mount(app)
    openai_compat.mount(app)
    mcp.mount(app)  # /mcp: the MCP server's streamable HTTP (api/routes/mcp.py)
    web.mount(app)  # last: the web app answers what no route above does
    document_input_errors(app)


QUESTIONS = ("/messages", "/invoke", "/batch", "/stream", "/stream_log", "/stream_events", "/chat/completions")
ERRORS = {
    400: "a malformed HTTP request (bad header values or body framing, refused before any route), a body that "
         "is not JSON (or not UTF-8), JSON past the body's bounds (nesting, arrays and objects, a number of over "
         "100 digits), a malformed multipart body, or a bad LangServe config hash",
    403: "not allowed: admins only, or a LangServe endpoint this server turns off",
    422: "a field is missing, malformed, out of bounds, or holds text that cannot be stored; `detail` names it",
    414: "a LangServe config hash longer than 1024 characters (refused before it is decompressed)",
    429: "a rate limit: the hourly question limit, or login/signup attempts per address; see Retry-After",
}


def document_input_errors(app: FastAPI) -> None:
    """The OpenAPI document lists the input errors every route can answer, on top of the auth and
    not-found ones api/routes/web.py adds (the attack suite holds the server to all of them): 400 everywhere
    (the HTTP server refuses a malformed request, e.g. a `Transfer-Encoding` it cannot parse, before
    any route), 422 wherever there is input, 403 for admins' routes, 414 on LangServe's config-hash
    routes (api/edge.py), 429 where limits apply."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        spec = build()  # cached by the builder; adding to it again changes nothing
        for path, operations in spec.get("paths", {}).items():
            for op in operations.values():
                if not isinstance(op, dict) or "responses" not in op:
                    continue
                codes = []
                if path.startswith("/api/admin") or path.endswith("_feedback"):
                    codes.append(403)
                codes.append(400)
                if "{config_hash}" in path:
                    codes.append(414)
                if op.get("parameters") or op.get("requestBody"):
                    codes.append(422)
                if path.endswith(QUESTIONS) or path in ("/api/auth/signup", "/api/auth/login"):
                    codes.append(429)
                for code in codes:
                    op["responses"].setdefault(str(code), {"description": ERRORS[code]})
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


app = create_app()
