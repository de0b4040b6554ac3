"""The MCP server (Model Context Protocol, the official `mcp` SDK): agents search the caller's
documents, ask for cited answers, and read the documents as resources.

One server, two transports. Streamable HTTP at `/mcp` in the app (`mount`): stateless, so every
POST carries the caller's bearer token (an access token or an API key, whose scopes each tool and
resource checks: api/scopes.py) and is authenticated like every route (api/deps.py) before the SDK
sees it, and any of `--workers N` processes answers any request (no session to pin). Only
the bearer header counts: the web app's cookie would need the CSRF check, and MCP clients send
headers. stdio through `thotqen mcp` (`run_stdio`): the caller is the CLI's `--user`.

Every tool and resource is the caller's alone, scoped in SQL like every route: a stranger's
document id answers exactly like a missing one. Inputs have the bounds of the other surfaces (the
types of api/text.py, QUESTION_MAX_CHARS, tunables.py's modes), and `ask` is a question admitted and
finished by answering/accounting.py (source "mcp"), so it counts against the hourly limit.

The low-level `Server`, not `MCPServer`: the latter configures the root logger (Rich, INFO) when
built, which would change the whole server's logging.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from answering import accounting
from answering.bridge import result_in_thread
from answering.processes import AnswerProcesses, AnswersBusy
from answering.stopping import StopWatch
from api import scopes
from api.access import reading
from api.deps import UNAUTHORIZED, bearer_token
from api.heavy import Slots
from api.paging import MAX_OFFSET
from api.routes.documents import _document_out, document_page
from api.routes.prometheus import LabelledRoute
from api.text import MAX, DocumentIds, FilterText, question_type
from api.verify import Verifier
from graph.context import GraphParts
from graph.state import InputState
from graph.stream import run_config, run_graph
from identity.security import AuthError, User
from settings import Settings
from storage import documents
from storage.document_filter import DocumentFilter
from storage.search import Hit, SearchParams, search
from tunables import Mode

log = logging.getLogger(__name__)

PATH = "/mcp"
SCHEME = "thotqen://documents/"
DOCUMENT = re.compile(r"^thotqen://documents/([^/]+)$")
PAGE = re.compile(r"^thotqen://documents/([^/]+)/pages/([0-9]{1,9})$")

Caller = Callable[[ServerRequestContext[Any]], User]


def _filters() -> dict[str, Any]:
    """The narrowing fields /rag's input has (api/routes/rag.py), with the same types."""
    return {
        "document_ids": (DocumentIds, Field(default_factory=list, description="only these documents (empty: all "
                                                                              "of yours)")),
        "company": (FilterText, Field(default="", description="only documents whose cover names this company "
                                                              "(part of its name, any case)")),
        "form": (FilterText, Field(default="", description="only documents of this form: 10-K, 10-Q, 8-K, "
                                                           "earnings release")),
        "period": (FilterText, Field(default="", description="only documents of this period: FY2022, fiscal 2022, "
                                                             "Q2 2023, 2023 or a date")),
    }


def search_input(settings: Settings) -> type[BaseModel]:
    """`search`'s arguments: those of `thotqen search` (k within MAX["search_k"], the search modes) and
    /rag's filters; the query is bounded like a question."""
    return create_model(
        "SearchInput", __config__=ConfigDict(extra="forbid"),
        query=(question_type(settings.questions.max_chars), ...),
        k=(int, Field(default=settings.search_k, ge=1, le=MAX["search_k"], description="hits to return")),
        mode=(Mode, Field(default="hybrid", description="both search sides, or the dense or full-text one alone")),
        **_filters())


def ask_input(settings: Settings) -> type[BaseModel]:
    """`ask`'s arguments: /rag's question and filters (an agent keeps its own conversation, so no history)."""
    return create_model("AskInput", __config__=ConfigDict(extra="forbid"),
                        question=(question_type(settings.questions.max_chars), ...), **_filters())


def body_limit(settings: Settings) -> int:
    """Bytes of the largest valid request: a question of QUESTION_MAX_CHARS written as JSON escapes
    (12 bytes for a character outside the BMP), the most document ids, and room for the rest."""
    return 64 * 1024 + 12 * settings.questions.max_chars + 64 * MAX["document_ids"]


def hit_out(hit: Hit) -> dict[str, Any]:
    """One hit as `thotqen search --json` prints it."""
    return {"document_id": str(hit.document_id), "name": hit.document_name, "page": hit.page,
            "page_label": hit.page_label, "ocr": hit.ocr, "text": hit.parent_text, "score": hit.score,
            "dense_rank": hit.dense_rank, "sparse_rank": hit.sparse_rank, "heading_rank": hit.heading_rank}


def _hits_text(hits: list[dict[str, Any]]) -> str:
    if not hits:
        return "no matches"
    return "\n\n".join(f"[{n}] {h['name']}, {h['page_label']} (document {h['document_id']}, page {h['page']})\n"
                       f"{h['text']}" for n, h in enumerate(hits, 1))


def _answer_text(out: dict[str, Any]) -> str:
    sources = [f"[{c['n']}] {c.get('url') or c.get('name')}, {c.get('page_label') or ''}".rstrip(", ")
               for c in out["citations"] if c["n"] in out["cited"]]
    return str(out["answer"]) + ("\n\nSources:\n" + "\n".join(sources) if sources else "")


def _result(text: str, structured: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _refusal(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _invalid(exc: ValidationError) -> str:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()]
    return "invalid arguments: " + "; ".join(parts)


class Tools:
    """What the tools and resources do for the caller of each call, over the runtime's parts (blocking work in
    threads)."""

    def __init__(self, parts: GraphParts, answers: AnswerProcesses | None = None) -> None:
        self.parts = parts
        self.answers = answers  # the graph's runs go there when given (answering/processes.py)
        self.settings = parts.settings
        self.search_model = search_input(self.settings)
        self.ask_model = ask_input(self.settings)
        self.listed = self._listed()

    def _listed(self) -> list[types.Tool]:
        return [
            types.Tool(name="search", title="Search your documents",
                       description="Hybrid (dense + full-text) search over your documents: the best passages, each "
                                   "with its document, page and text.",
                       input_schema=self.search_model.model_json_schema(),
                       annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
            types.Tool(name="ask", title="Ask your documents",
                       description="A grounded answer to a question, citing document pages as [n]; counts against "
                                   "your hourly question limit.",
                       input_schema=self.ask_model.model_json_schema(),
                       annotations=types.ToolAnnotations(read_only_hint=True)),
        ]

    async def call(self, name: str, arguments: dict[str, Any], user: User) -> types.CallToolResult:
        run: dict[str, tuple[type[BaseModel], Callable[[Any, User], Awaitable[types.CallToolResult]]]] = {
            "search": (self.search_model, self.search), "ask": (self.ask_model, self.ask)}
        if name not in run:
            return _refusal(f"no tool named {name!r}: search or ask")
        model, tool = run[name]
        if refused := scopes.lacks(user, "read" if name == "search" else "ask"):  # an API key's scopes
            return _refusal(refused)
        try:
            args = model.model_validate(arguments)
        except ValidationError as exc:
            return _refusal(_invalid(exc))
        return await tool(args, user)

    async def search(self, args: Any, user: User) -> types.CallToolResult:  # search_input's model
        def run() -> list[Hit]:
            embedding = None if args.mode == "sparse" else self.parts.embedder.embed_query(args.query)
            params = SearchParams.from_tunables(self.settings, k=args.k, mode=args.mode)
            with self.parts.database.connection() as conn:
                return search(conn, owner_id=reading(conn, user), query_text=args.query, query_embedding=embedding,
                              params=params, document_ids=args.document_ids or None,
                              where=DocumentFilter(args.company, args.form, args.period))

        hits = [hit_out(h) for h in await asyncio.to_thread(run)]
        return _result(_hits_text(hits), {"hits": hits})

    async def ask(self, args: Any, user: User) -> types.CallToolResult:  # ask_input's model
        db = self.parts.database
        try:
            if self.answers is not None:
                self.answers.check(user.id)  # a full server: refused before the question is counted
            [ticket] = await asyncio.to_thread(accounting.admit, db, self.settings, owner_id=user.id, source="mcp",
                                               tokens=[accounting.cost(args.question)],
                                               workspace_id=user.workspace_id)
        except (accounting.QuestionLimit, AnswersBusy) as exc:
            return _refusal(f"{exc}; try again in {max(1, round(exc.retry_after_s))} s")
        # empty filters mean all of the caller's documents, as in /rag's input
        inputs = InputState(question=args.question, document_ids=args.document_ids, company=args.company,
                            form=args.form, period=args.period)
        config = run_config(owner_id=user.id, user=user.username, run_name="thotqen mcp ask",
                            metadata={"source": "mcp"}, workspace_id=user.workspace_id)  # a bound key's only

        gone = threading.Event()  # the caller left (a cancelled call): the run stops at its next step

        def answer() -> Any:  # graph.outcome.Outcome
            events = (self.answers.stream(inputs, config, gone=gone.is_set) if self.answers is not None
                      else run_graph(inputs, {**config, "callbacks": [StopWatch(gone.is_set)]}, self.parts))
            return next(data for kind, data in events if kind == "done")

        with ticket:  # an exception or a caller gone away ends the row (error, cancelled)
            try:
                # a thread of its own, as a chat's answer: not a place in the pool that verifies tokens
                outcome = await result_in_thread(answer, name=f"mcp-{user.id}", nice=self.settings.background_nice,
                                                 gone=gone)
            except Exception as exc:
                log.exception("mcp ask: the graph failed")
                await asyncio.to_thread(ticket.close, f"{type(exc).__name__}: {exc}")
                return _refusal("the answer could not be produced; please try again")
            await asyncio.to_thread(ticket.finish_outcome, outcome)
        # summary() is what every surface stores of an answer: whatever it carries (evidence lines, when
        # the outcome has them) comes along
        out = {**outcome.summary(), "status": outcome.status, "block_reason": outcome.block_reason}
        return _result(_answer_text(out), out)

    # -- resources: the caller's documents -------------------------------------------------------
    async def resources(self, user: User, cursor: str | None = None) -> types.ListResourcesResult:
        """A page of the caller's documents (DOCUMENT_PAGE_MAX, as GET /api/documents); the cursor is
        the next page's offset."""
        if cursor is not None and not (cursor.isdigit() and int(cursor) <= MAX_OFFSET):
            raise MCPError(code=types.INVALID_PARAMS, message="unknown cursor", data={"cursor": cursor[:100]})

        def run() -> tuple[list[dict[str, Any]], int | None]:
            with self.parts.database.connection() as conn:
                return document_page(conn, user, None, limit=None, offset=int(cursor or 0),
                                     cap=self.settings.paging.document_page_max)

        found, next_offset = await asyncio.to_thread(run)
        return types.ListResourcesResult(
            resources=[types.Resource(uri=f"{SCHEME}{d['id']}", name=d["name"], mime_type="application/json",
                                      description=f"{d['format']}, {d['status']}, {d['pages'] or 0} pages")
                       for d in found],
            next_cursor=None if next_offset is None else str(next_offset))

    @staticmethod
    def templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uri_template=SCHEME + "{document_id}", name="document",
                                       description="one of your documents: name, format, status, pages, company, "
                                                   "form, period", mime_type="application/json"),
                types.ResourceTemplate(uri_template=SCHEME + "{document_id}/pages/{page}", name="page",
                                       description="one page-like unit of a ready document: its label (what a "
                                                   "citation names), title and text", mime_type="application/json")]

    async def read(self, uri: str, user: User) -> dict[str, Any] | None:
        """A resource's JSON, or None for a missing one (a stranger's included)."""
        def run() -> dict[str, Any] | None:
            if found := DOCUMENT.match(uri):
                with self.parts.database.connection() as conn:
                    doc = documents.get_document(conn, owner_id=reading(conn, user), document_id=found.group(1))
                return _document_out(doc) if doc else None
            if found := PAGE.match(uri):
                with self.parts.database.connection() as conn:
                    unit = documents.get_page(conn, owner_id=reading(conn, user), document_id=found.group(1),
                                              page=int(found.group(2)))
                return {"document_id": found.group(1), **unit} if unit else None
            return None

        return await asyncio.to_thread(run)


def build_server(parts: GraphParts, caller: Caller, answers: AnswerProcesses | None = None) -> Server[Any]:
    """The MCP server over the runtime's parts; `caller` says who asks in a request's context;
    `answers`: the answer processes its questions' runs go to (the HTTP server's)."""
    tools = Tools(parts, answers)

    def reader(ctx: ServerRequestContext[Any]) -> User:
        """The caller, when allowed to read (an API key needs the read scope)."""
        user = caller(ctx)
        if refused := scopes.lacks(user, "read"):
            raise MCPError(code=types.INVALID_REQUEST, message=refused)
        return user

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.listed)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return await tools.call(params.name, params.arguments or {}, caller(ctx))

    async def list_resources(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        return await tools.resources(reader(ctx), params.cursor if params else None)

    async def list_templates(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                             ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=tools.templates())

    async def read_resource(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        uri = str(params.uri)
        found = await tools.read(uri, reader(ctx))
        if found is None:
            raise MCPError(code=types.INVALID_PARAMS, message="no such document or page", data={"uri": uri})
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="application/json", text=json.dumps(found, ensure_ascii=False))])

    return Server("thotqen", version="0.1.0", title="Thotqen",
                  instructions="Search your documents and ask questions answered with page citations.",
                  get_tool_input_schema=lambda name: next(
                      (t.input_schema for t in tools.listed if t.name == name), None),
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                  on_list_resource_templates=list_templates, on_read_resource=read_resource)


# -- streamable HTTP in the app ------------------------------------------------------------------


def _http_caller(ctx: ServerRequestContext[Any]) -> User:
    user = getattr(getattr(ctx.request, "state", None), "user", None)
    if not isinstance(user, User):  # Authenticated always sets it; refuse rather than serve no one
        raise MCPError(code=types.INVALID_REQUEST, message="not signed in")
    return user


class Authenticated:
    """The SDK's endpoint behind the API's bearer check: 401 (like every route) before any MCP work.
    A GET (a stream for server-initiated messages, held open by the SDK until the client leaves)
    takes one of the user's MCP_STREAMS_PER_USER (429 past it) and ends after MCP_STREAM_IDLE_S
    with nothing sent: one account held 997 of them open, and half of everyone's requests got 503."""

    def __init__(self, app: StreamableHTTPASGIApp, verifier: Callable[[], Verifier], streams: Slots,
                 idle_s: float) -> None:
        self.app = app
        self.verifier = verifier  # the app's (api/verify.py), built at start-up
        self.streams = streams
        self.idle_s = idle_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            token = bearer_token(Request(scope))
            if token is None:
                raise HTTPException(401, "not signed in: send Authorization: Bearer <access_token>",
                                    headers=UNAUTHORIZED)
            try:
                user = await self.verifier().user(token)
            except AuthError as exc:
                raise HTTPException(401, str(exc), headers=UNAUTHORIZED) from None
            give_back = self.streams.take(user.id) if scope.get("method") == "GET" else None
        except HTTPException as exc:
            await JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)(
                scope, receive, send)
            return
        scope.setdefault("state", {})["user"] = user  # what the tools read as the caller (_http_caller)
        if give_back is None:
            await self.app(scope, receive, send)
            return
        try:
            await until_idle(self.app, scope, receive, send, self.idle_s)
        finally:
            give_back()


async def until_idle(app: Any, scope: dict[str, Any], receive: Any, send: Any,  # ASGI
                     idle_s: float) -> None:
    """`app` answering one request, ended (its response closed) once `idle_s` pass with nothing sent
    but keep-alive comments (an SSE line starting ':', what sse_starlette pings with)."""
    last = time.monotonic()
    started = ended = False

    async def watched(message: dict[str, Any]) -> None:
        nonlocal last, started, ended
        if message["type"] == "http.response.start":
            started = True
        elif message["type"] == "http.response.body":
            ended = ended or not message.get("more_body", False)
            if not message.get("body", b"").startswith(b":"):
                last = time.monotonic()
        await send(message)

    async with anyio.create_task_group() as group:

        async def watchdog() -> None:
            while (left := last + idle_s - time.monotonic()) > 0:
                await anyio.sleep(left)
            group.cancel_scope.cancel()

        group.start_soon(watchdog)
        await app(scope, receive, watched)
        group.cancel_scope.cancel()
    if started and not ended:  # cut off by the watchdog: end the response rather than drop it
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def mount(app: FastAPI) -> None:
    """`/mcp` on the app, over its runtime. A plain Starlette route, so it stays out of the OpenAPI
    document (it is JSON-RPC, not REST); the SDK's session manager runs inside the app's lifespan."""
    rt = app.state.runtime
    manager = StreamableHTTPSessionManager(
        app=build_server(rt, _http_caller, rt.answers), stateless=True, json_response=True,
        max_request_body_size=body_limit(rt.settings),
        # DNS rebinding protection guards servers that trust whoever reaches them; this one trusts
        # only a bearer token, which a rebinding page does not have (and behind a proxy the Host
        # header is the deployment's, not localhost)
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.state.mcp_streams = Slots(rt.settings.mcp_streams_per_user, "MCP streams (GET /mcp)")
    endpoint = Authenticated(StreamableHTTPASGIApp(manager), lambda: app.state.verifier, app.state.mcp_streams,
                             rt.settings.mcp_stream_idle_s)
    # labelled: its requests are thotqen_http_request_duration_seconds{route="/mcp"}
    app.router.routes.append(LabelledRoute(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    app_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(owner: FastAPI) -> AsyncIterator[Any]:
        async with app_lifespan(owner) as state, manager.run():
            yield state

    app.router.lifespan_context = lifespan


# -- stdio -------------------------------------------------------------------------------------


async def run_stdio(parts: GraphParts, user: User) -> None:
    """Serve MCP on stdin/stdout for one user until the client closes the pipe (`thotqen mcp`)."""
    from mcp.server.stdio import stdio_server

    server = build_server(parts, lambda _ctx: user)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

