"""What the JSON routes answer, as the OpenAPI document shows it (`/docs`).

Each model mirrors the dict its route builds, field for field: FastAPI validates the dict into the
model and writes it back out, so a field missing here would be dropped from the answer, and a value
of the wrong type would be a 500. Times are the ISO 8601 strings the routes write themselves
(`datetime.isoformat()`), so they are typed as strings with a format, not re-serialised.
Streams (Server-Sent Events) and files (PNG pages, downloads) are no JSON: their routes declare a
media type in `responses=` instead.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from storage.question_period import OWNER_VALUE_CHARS

Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Day = Annotated[str, Field(json_schema_extra={"format": "date"})]
Uuid = Annotated[str, Field(json_schema_extra={"format": "uuid"})]


# errors ------------------------------------------------------------------------------------------

class ErrorOut(BaseModel):
    """Every refusal a route raises itself (HTTPException): `detail` says what was wrong."""

    detail: str


class FieldError(BaseModel):
    """One invalid input, as FastAPI's own validation reports it (more keys may follow)."""

    loc: list[str | int]
    msg: str
    type: str


class InputErrorOut(BaseModel):
    """A 422 on a route that checks its input beyond the schema: the list of invalid fields (api/text.py
    shapes its own checks like FastAPI's), or a sentence when the database refuses a value (server.py)."""

    detail: str | list[FieldError]


Responses = dict[int | str, dict[str, Any]]  # a route's `responses=`


def error(description: str, model: type[BaseModel] = ErrorOut) -> dict[str, Any]:
    """One entry of a route's `responses=`: the description and the `{"detail": ...}` body."""
    return {"description": description, "model": model}


# health ------------------------------------------------------------------------------------------

class HealthOut(BaseModel):
    status: str = Field(description="`ok`, or `unavailable` (with status 503)")
    database: str = Field(description="the database's mode when reachable, else why it is not")


class ReadyOut(BaseModel):
    status: str = Field(description="`ready`, `not ready` or `draining` (both with status 503)")
    checks: dict[str, str] = Field(description="each part (database, broker, answer_processes, models): `ok`, "
                                               "`not configured ...`, or why it is not ready")


# accounts and sessions ---------------------------------------------------------------------------

class TokenOut(BaseModel):
    access_token: str
    refresh_token: str
    token_type: str = "bearer"
    expires_in: int = Field(description="seconds the access token is valid")


class UserOut(BaseModel):
    id: int
    username: str
    source: str = Field(description="`local` (this server's accounts) or `supabase`")
    admin: bool


class SessionOut(BaseModel):
    user: UserOut
    csrf_token: str = Field(description="echo it in X-CSRF-Token on every state-changing request")
    expires_in: int | None = Field(default=None, description="seconds the access cookie is valid; null when "
                                                             "only reading the session")


# documents and jobs ------------------------------------------------------------------------------

class UploadOut(BaseModel):
    document_id: Uuid
    job_id: Uuid = Field(description="follow GET /api/jobs/{job_id}/events")
    reused: bool = Field(description="an identical file was already ingested: its job is already done")


class DocumentOut(BaseModel):
    id: Uuid
    name: str
    format: str = Field(description="the format told from the content, not the name")
    status: str = Field(description="queued, processing, ready or failed")
    pages: int | None = Field(description="page-like units (pages, slides, sheet blocks, sections); null until "
                                          "parsed")
    ocr_pages: int = Field(description="units whose text was recognised by OCR")
    chunks: int
    parents: int
    size_bytes: int
    error: str | None
    created_at: Timestamp
    updated_at: Timestamp
    company: str | None = Field(description="what the document says it is; null where it does not say")
    form: str | None = Field(description="10-K, 10-Q, 8-K, earnings release, ...")
    period: str | None = Field(description="FY2022, Q2 FY2024, ...")
    period_end: Day | None = Field(description="the last day of that period (or the report date)")
    issuer: str = Field(description="`read` (from the document), `set` (by its owner) or `unknown`: the company "
                                    "was not read; set it with PATCH /api/documents/{id}")
    former_names: list[str] = Field(default_factory=list, description="former names the cover gives")
    file_number: str | None = Field(default=None, description="the Commission file number")
    tickers: list[str] = Field(default_factory=list, description="trading symbols the document gives")
    workspace_id: int | None = Field(default=None, description="the workspace it belongs to; null: your own")
    workspace: str | None = Field(default=None, description="that workspace's name")
    uploaded_by: str | None = Field(default=None, description="the username of who uploaded it")


class DocumentPatch(BaseModel):
    """What the owner says a document is; a field left out is kept, "" clears it."""

    model_config = {"extra": "forbid"}
    company: str | None = Field(default=None, max_length=OWNER_VALUE_CHARS)
    form: str | None = Field(default=None, max_length=OWNER_VALUE_CHARS,
                             description="10-K, 10-Q, 8-K, earnings release")
    period: str | None = Field(default=None, max_length=OWNER_VALUE_CHARS,
                               description="FY2022, Q2 FY2024 or a date (2022-07-01)")


class DocumentList(BaseModel):
    documents: list[DocumentOut]
    next_offset: int | None = Field(default=None, description="the `offset` of the next page; null: this is the "
                                                              "last")


class PageOut(BaseModel):
    document_id: str
    page: int
    label: str = Field(description="what a citation names: page 4, slide 4, sheet Revenue, section 2.1")
    title: str
    ocr: bool = Field(description="the text was recognised by OCR")
    text: str
    format: str


class JobOut(BaseModel):
    id: Uuid
    document_id: Uuid
    status: str = Field(description="queued, processing, done or failed")
    stage: str
    percent: float
    error: str | None
    attempts: int
    created_at: Timestamp
    updated_at: Timestamp


# chats -------------------------------------------------------------------------------------------

class ChatOut(BaseModel):
    id: Uuid
    title: str
    document_ids: list[Uuid] | None = Field(description="the documents the chat searches; null for all (or for "
                                                        "its collection's)")
    collection_id: Uuid | None = Field(default=None, description="the collection the chat searches: its documents "
                                                                 "when each question is asked")
    collection_name: str | None = None
    workspace_id: int | None = Field(default=None, description="the workspace the chat searches only (as you may "
                                                               "read it at each question); null: all you may read")
    workspace: str | None = Field(default=None, description="that workspace's name")
    shared: bool = Field(default=False, description="shared read-only with its workspace's members")
    owner: str | None = Field(default=None, description="a chat shared with you: whose it is (you read it, "
                                                        "only they ask in it); null: yours")
    created_at: Timestamp
    updated_at: Timestamp


class ChatListed(ChatOut):
    message_count: int


class ChatList(BaseModel):
    chats: list[ChatListed]
    next_offset: int | None = Field(default=None, description="the `offset` of the next page; null: this is the "
                                                              "last")


class FeedbackOut(BaseModel):
    rating: Literal["up", "down"]
    note: str


class MessageOut(BaseModel):
    id: int
    role: str = Field(description="user or assistant")
    content: str
    status: str = Field(description="ok, blocked, error or stopped (the person stopped the answer)")
    citations: list[dict[str, Any]] = Field(description="an answer's sources, numbered as its [n] markers: n, "
                                                        "document_id, name, page, page_label, ocr, boxes, url, text")
    meta: dict[str, Any] = Field(description="how the answer was made: route, provider, cached, timings; "
                                             "`regenerates`: the earlier answer this one replaces")
    created_at: Timestamp
    feedback: FeedbackOut | None = Field(default=None, description="the owner's verdict on an answer")


class ChatDetail(ChatOut):
    messages: list[MessageOut] = Field(description="the latest MESSAGE_PAGE_MAX (or `limit`) messages past "
                                                   "`offset` (and older than `before`), oldest first")
    next_offset: int | None = Field(description="the offset of the earlier messages' page (with the same "
                                                "`before`); null: none")


# API keys ------------------------------------------------------------------------------------------

class ApiKeyOut(BaseModel):
    id: Uuid
    name: str
    prefix: str = Field(description="the key's first characters, to tell keys apart")
    scopes: list[str] = Field(description="read, ask, ingest")
    created_at: Timestamp
    expires_at: Timestamp | None = Field(description="null: until revoked")
    last_used_at: Timestamp | None = Field(description="to the minute; null: never used")
    workspace_id: int | None = Field(default=None, description="the workspace the key is bound to: it reads and "
                                                               "writes that one only; null: all you may")
    workspace: str | None = Field(default=None, description="that workspace's name")


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="the key itself, shown this once: send it as `Authorization: Bearer <key>`")


class ApiKeyList(BaseModel):
    keys: list[ApiKeyOut]


# collections ---------------------------------------------------------------------------------------

class CollectionOut(BaseModel):
    id: Uuid
    name: str
    document_count: int
    workspace_id: int | None = Field(default=None, description="the workspace it belongs to; null: your own")
    workspace: str | None = Field(default=None, description="that workspace's name")
    created_at: Timestamp
    updated_at: Timestamp


class CollectionList(BaseModel):
    collections: list[CollectionOut]
    next_offset: int | None = Field(default=None, description="the `offset` of the next page; null: this is the "
                                                              "last")


class MemberOut(BaseModel):
    id: Uuid
    name: str
    status: str
    company: str | None
    form: str | None
    period: str | None
    added_at: Timestamp


class CollectionDetail(CollectionOut):
    documents: list[MemberOut] = Field(description="the collection's documents, in the order they were added")


# search ------------------------------------------------------------------------------------------

class FoundDocument(BaseModel):
    id: Uuid
    name: str
    status: str
    company: str | None
    form: str | None
    period: str | None


class FoundChat(BaseModel):
    id: Uuid
    title: str
    message_id: int | None = Field(description="the chat's best matching message; null when only its title matches")
    role: str | None
    snippet: str = Field(description="the matching text; each matched word between U+0002 and U+0003")
    updated_at: Timestamp


class SearchOut(BaseModel):
    documents: list[FoundDocument]
    chats: list[FoundChat]


# admin -------------------------------------------------------------------------------------------

class LatencyOut(BaseModel):
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    mean: float | None


class TokensOut(BaseModel):
    input: int
    output: int
    total: int


class QueryLogMetrics(BaseModel):
    """storage/query_log.py's metrics over the window."""

    window_hours: float
    questions: int
    by_source: dict[str, int]
    users: int
    ok: int
    blocked: int
    errors: int
    cancelled: int
    in_flight: int
    success_rate: float | None
    cache_hits: int
    latency_ms: LatencyOut
    tokens: TokensOut
    answers_by_provider: dict[str, int]


class LangSmithLatency(BaseModel):
    p50: float | None
    p95: float | None
    p99: float | None


class LangSmithMetrics(BaseModel):
    project: str
    runs: int
    errors: int
    latency_ms: LangSmithLatency
    tokens: int
    truncated: bool = Field(description="the window held more root runs than were read")


class LangSmithDown(BaseModel):
    error: str


class FeedbackNoteOut(BaseModel):
    rating: Literal["up", "down"]
    note: str
    at: Timestamp


class FeedbackMetrics(BaseModel):
    up: int = Field(description="thumbs up given in the window")
    down: int
    notes: list[FeedbackNoteOut] = Field(description="the latest notes (at most 10)")


class WorkspaceFigures(BaseModel):
    id: int
    name: str
    created_at: str
    members: int
    roles: dict[str, int] = Field(description="members by role: owner, admin, editor, viewer")
    documents: int
    bytes: int = Field(description="what its documents' files keep, in bytes")
    questions: int = Field(description="questions asked in it in the window: in a chat over it, or "
                                       "with an API key bound to it (/rag, /v1, MCP)")


class WorkspacesMetrics(BaseModel):
    total: int = Field(description="workspaces on this server")
    workspaces: list[WorkspaceFigures] = Field(description="the busiest (most questions, then bytes), at most 100")


class MetricsOut(BaseModel):
    query_log: QueryLogMetrics
    feedback: FeedbackMetrics
    workspaces: WorkspacesMetrics
    langsmith: LangSmithMetrics | LangSmithDown | None = Field(
        default=None, description="only when LANGSMITH_API_KEY is set")
