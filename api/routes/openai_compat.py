"""An OpenAI-compatible surface, so any OpenAI client or chat front end can use Thotqen as a model.

- `GET /v1/models`: one model, `thotqen`.
- `POST /v1/chat/completions`, streamed (`"stream": true`, Server-Sent Events of
  `chat.completion.chunk`, then `[DONE]`) or not. The last user message is the question, earlier
  user/assistant turns are the history (system messages are the server's business and ignored).
  The answer carries [n] markers; the cited sources follow it in the message text and come as an
  extra field `citations` (n, document_id, name, page, text). An optional extra field
  `document_ids` limits retrieval to some of the caller's documents; a collection of theirs is
  asked as the model `thotqen:NAME` (listed by /v1/models, so a chat front end offers it) or with
  the extra field `collection` (its name); its documents are read when the question is asked.

A question goes the same way as a chat's: admitted by `answering.accounting` (the hourly limit
and one query-log row with source `openai`), then answered by ChatAnswerer.ask_stateless (the
answer cache, the graph) in a thread whose events reach the response through answering/bridge.py;
only nothing is saved as a chat. Authentication is the bearer token of /api/auth (the session
cookie works too, with its CSRF header). Errors come in OpenAI's shape: {"error": {"message", ...}}.
A stream says `: keep-alive` (an SSE comment, which OpenAI's SDKs skip) every KEEPALIVE_S seconds
while the graph works and has nothing to send yet; its content is the checked answer, whose first
sentences come while the model still writes (graph/nodes/early.py), the rest once the check is done.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from answering import accounting
from answering.bridge import FINALS, Event, answer_in_thread, with_keepalive
from answering.chat import ChatAnswerer
from answering.processes import AnswersBusy
from api.access import reading
from api.deps import CurrentUser, DbDep, SettingsDep
from api.text import MAX, CollectionName, DocumentIds, unstorable
from storage import chats, collections

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
MODEL_ID = "thotqen"
# a streamed answer sends an SSE comment after this many seconds without an event: retrieval and
# grading come before the first token, and a client (or a proxy's read timeout) that hears nothing
# for 20 s may give up
KEEPALIVE_S = 5.0
CREATED = 1_767_225_600  # 2026-01-01: a fixed date for the model list
_SOURCES = re.compile(r"\n\nSources:\n(?:\[\d+\].*(?:\n|$))+\s*$")


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class CompletionIn(BaseModel):
    """OpenAI's request body; sampling fields (temperature, max_tokens ...) are accepted and ignored:
    the server's providers and their settings write the answer."""

    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[Message] = Field(min_length=1, max_length=200)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    document_ids: DocumentIds | None = Field(default=None,
                                             description="Thotqen extra: limit retrieval to these documents")
    collection: CollectionName | None = Field(default=None, description="Thotqen extra: search this collection "
                                                                        "of yours (its name); or use the model "
                                                                        "`thotqen:NAME`")


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(str(p.get("text") or "") for p in content if p.get("type") == "text")
    return content or ""


def split_messages(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """(question, history): the last message must be the user's; earlier turns become the history,
    assistant turns without the sources block this endpoint appended. The history is bounded as
    /rag's chat_history is (api/text.py MAX "history" turns of MAX "turn" characters), else 400."""
    if messages[-1].role != "user":
        raise HTTPException(400, "the last message must be the user's question")
    question = _text(messages[-1].content).strip()
    if not question:
        raise HTTPException(400, "the last user message is empty")
    history = []
    for m in messages[:-1]:
        if m.role in ("user", "assistant") and (text := _SOURCES.sub("", _text(m.content)).strip()):
            history.append({"role": m.role, "content": text})
    if len(history) > MAX["history"]:
        raise HTTPException(400, f"messages: at most {MAX['history']} earlier user and assistant turns")
    if any(len(turn["content"]) > MAX["turn"] for turn in history):
        raise HTTPException(400, f"messages: an earlier turn is longer than {MAX['turn']} characters")
    return question, history


def sources_text(citations: list[dict[str, Any]], cited: list[int]) -> str:
    used = [c for c in citations if c.get("n") in set(cited)] if cited else []
    if not used:
        return ""
    lines = [f"[{c['n']}] {c.get('name') or c.get('url') or 'source'}"
             + (f", page {c['page']}" if c.get("page") else "")
             + "".join(f"\n    “{e['text']}”" for e in c.get("evidence") or []) for c in used]
    return "\n\nSources:\n" + "\n".join(lines)


def _error(status: int, message: str, kind: str, code: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}},
                        status_code=status, headers=headers)


@router.get("/models", responses={401: {"description": "not signed in"}})
def list_models(user: CurrentUser, db: DbDep, settings: SettingsDep) -> dict[str, Any]:
    """`thotqen` (all your documents), then `thotqen:NAME` for each of your collections (the first
    COLLECTION_PAGE_MAX by name)."""
    with db.connection() as conn:
        named = collections.list_collections(conn, owner_id=reading(conn, user),
                                             limit=settings.paging.collection_page_max)
    return {"object": "list", "data": [{"id": model, "object": "model", "created": CREATED, "owned_by": "thotqen"}
                                       for model in [MODEL_ID, *(f"{MODEL_ID}:{c['name']}" for c in named)]]}


def collection_of(model: str, field: str | None) -> str | None:
    """The collection a request names (by the model `thotqen:NAME` or the field), or None; 404 for
    an unknown model and 400 when the two name different collections."""
    if model == MODEL_ID:
        return field
    if not model.startswith(f"{MODEL_ID}:") or not model[len(MODEL_ID) + 1:].strip():
        raise HTTPException(404, f"the model `{model}` does not exist; use `{MODEL_ID}` or `{MODEL_ID}:COLLECTION`")
    name = model[len(MODEL_ID) + 1:].strip()
    if field is not None and field != name:
        raise HTTPException(400, "the model and the `collection` field name different collections")
    return name


@router.post("/chat/completions", responses={
    200: {"description": "a chat.completion, or text/event-stream of chat.completion.chunk when stream is true",
          "content": {"text/event-stream": {}}},
    400: {"description": "no user question last, or too long"}, 401: {"description": "not signed in"},
    404: {"description": "unknown model (or collection), or a document in document_ids that is not the caller's"},
    429: {"description": "the question limit per hour or per minute; see Retry-After"}})
async def chat_completions(body: CompletionIn, request: Request, user: CurrentUser, db: DbDep,
                           settings: SettingsDep) -> Any:  # JSON or a stream
    """Answer the last user message from the caller's documents, with [n] citations."""
    collection = collection_of(body.model, body.collection)
    if collection is not None and body.document_ids:
        raise HTTPException(400, "give document_ids or a collection, not both")
    question, history = split_messages(body.messages)
    if len(question) > settings.questions.max_chars:
        raise HTTPException(400, f"the question is longer than {settings.questions.max_chars} characters")
    for text in [question, *(turn["content"] for turn in history)]:  # api/text.py's rule, in OpenAI's 400
        if (problem := unstorable(text)) is not None:
            raise HTTPException(400, f"messages: contains {problem}, which cannot be stored")

    def prepare() -> tuple[list[str] | None, accounting.Ticket]:
        scope = None
        if collection is not None:
            with db.connection() as conn:
                owners = reading(conn, user)  # theirs and their workspaces', as they are now
                found = collections.find_by_name(conn, owner_id=owners, name=collection)
                scope = collections.member_ids(conn, owner_id=owners, collection_id=found["id"]) if found else None
            if found is None:  # a stranger's collection is as unknown as one nobody has
                raise HTTPException(404, f"the model `{MODEL_ID}:{collection}` does not exist: you have no "
                                         "collection of that name")
            if not scope:
                raise HTTPException(400, f"the collection `{collection}` has no documents yet")
        if body.document_ids:
            with db.connection() as conn:
                owned = chats.owned_document_ids(conn, owner_id=reading(conn, user), document_ids=body.document_ids)
            if len(owned) != len(set(body.document_ids)):
                raise HTTPException(404, "no such document in document_ids")
            scope = [str(d) for d in owned]
        if (answers := request.app.state.answers) is not None:
            try:  # a full server: 503 with Retry-After (in OpenAI's shape) before the question is counted
                answers.check(user.id)
            except AnswersBusy as exc:
                raise HTTPException(503, str(exc), headers={"Retry-After": str(math.ceil(exc.retry_after_s))}) from None
        [ticket] = accounting.admit(db, settings, owner_id=user.id, source="openai",
                                    tokens=[accounting.cost(question, history, settings.history_turns)],
                                    workspace_id=user.workspace_id)
        return scope, ticket

    scope, ticket = await asyncio.to_thread(prepare)
    answerer: ChatAnswerer = request.app.state.answerer
    gone = threading.Event()  # the client left (api/leaving.py cancels a request waiting for its answer)
    answer = answer_in_thread(lambda emit: answerer.ask_stateless(
        owner_id=user.id, username=user.username, question=question, history=history, scope=scope,
        source="openai", emit=emit, ticket=ticket, gone=gone,
        workspace_id=user.workspace_id),  # a key's workspace, if bound
        ticket=ticket, name=f"v1-{user.id}", nice=settings.background_nice, gone=gone)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if body.stream:
        include_usage = bool((body.stream_options or {}).get("include_usage"))
        return StreamingResponse(_stream(answer, completion_id, created, include_usage), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    final: Event | None = None
    async for item in answer:
        if item[0] in FINALS:
            final = item
    if final is None or final[0] == "error":
        return _error(503, (final[1].get("error") if final else None) or "the answer could not be produced; "
                      "please try again", "server_error")
    event, data = final
    content = data.get("answer") or ""
    citations = data.get("citations") or []
    content += sources_text(citations, data.get("cited") or [])
    return {"id": completion_id, "object": "chat.completion", "created": created, "model": MODEL_ID,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "content_filter" if event == "blocked" else "stop"}],
            "usage": _usage(data), "citations": citations, **_extra(event, data)}


def _usage(data: dict[str, Any]) -> dict[str, int]:
    usage = data.get("usage") or {}
    tin, tout = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}


def _extra(event: str, data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"thotqen": {k: data.get(k) for k in ("route", "provider", "cached", "cited",
                                                                 "verification", "calculation")}}
    if event == "blocked":
        out["thotqen"]["blocked"] = True
        out["thotqen"]["block_reason"] = data.get("reason")
    return out


async def _stream(answer: AsyncIterator[Event], completion_id: str, created: int,
                  include_usage: bool) -> AsyncIterator[str]:
    base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID}

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(payload, default=str)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    async for item in with_keepalive(answer, KEEPALIVE_S):
        if item is None:  # an SSE comment: OpenAI's SDKs skip it, proxies and clients see the stream is alive
            yield ": keep-alive\n\n"
            continue
        event, data = item
        if event == "queued":  # waiting for a place in the answer processes (1: next)
            yield f": queued, position {data.get('position')}\n\n"
        elif event == "token":
            yield chunk({"content": data.get("token") or ""})
        elif event == "reset":  # what streamed cannot be taken back: say that the answer starts over
            yield chunk({"content": "\n\n(The model failed mid-answer; another one starts over.)\n\n"})
        elif event == "error":
            error = {"message": data.get("error") or "the answer could not be produced", "type": "server_error"}
            yield f"data: {json.dumps({'error': error})}\n\n"
        elif event in ("done", "blocked"):
            citations = data.get("citations") or []
            if tail := sources_text(citations, data.get("cited") or []):
                yield chunk({"content": tail})
            yield chunk({}, "content_filter" if event == "blocked" else "stop", citations=citations,
                        **_extra(event, data))
            if include_usage:
                yield f"data: {json.dumps({**base, 'choices': [], 'usage': _usage(data)})}\n\n"
    yield "data: [DONE]\n\n"


async def _respond(response: Response | Awaitable[Response]) -> Response:
    """What an earlier exception handler gave: Starlette's handlers may be sync or async."""
    return await response if inspect.isawaitable(response) else response


def mount(app: FastAPI) -> None:
    """The routes, and errors under /v1 in OpenAI's shape (every other path keeps the app's handlers)."""
    app.include_router(router)
    earlier_http = app.exception_handlers.get(HTTPException, http_exception_handler)
    earlier_invalid = app.exception_handlers.get(RequestValidationError, request_validation_exception_handler)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if not request.url.path.startswith("/v1/"):
            return await _respond(earlier_http(request, exc))
        kind = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
                429: "rate_limit_exceeded"}.get(exc.status_code, "invalid_request_error")
        return _error(exc.status_code, str(exc.detail), kind, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if not request.url.path.startswith("/v1/"):
            return await _respond(earlier_invalid(request, exc))
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return _error(400, f"{where}: {first.get('msg')}" if where else str(first.get("msg")), "invalid_request_error")
