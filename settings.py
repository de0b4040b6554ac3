"""Settings read from the environment (and an optional `.env`), documented in docs/configuration.md."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self, TypedDict

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from tunables import ServerTunables, Tunables

PLACEHOLDER_SECRETS = {"changeme", "changethis", "change-me", "secret", "password", "jwt-secret", "your-secret",
                       "your-super-secret-jwt-token-with-at-least-32-characters-long", "test", "dev"}


def is_placeholder_secret(value: str) -> bool:
    """A secret nobody should run production with: a known placeholder or too short to resist guessing."""
    return value.strip().lower() in PLACEHOLDER_SECRETS or len(value.strip()) < 32


# --- LLM links (providers/llm, docs/providers.md) ------------------------------------------------

LinkKind = Literal["nvidia", "groq", "gemini", "openai-compatible", "local"]


class LLMLink(BaseModel):
    """One link of the LLM chain: a full provider switch (its own account and endpoint), tried once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # What LLM_ORDER and a run's llm_order name; lower case, no commas or "#" (repeats are "name#2").
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    kind: LinkKind
    # Required for nvidia, groq and gemini (LLM_LINKS fills in the kind's, e.g. GROQ_MODEL);
    # openai-compatible unset: the first model the server lists; local: the embedded model.
    model: str | None = None
    base_url: str | None = None  # unset: the kind's hosted endpoint; openai-compatible needs one
    key: SecretStr | None = None  # a link without one is left out (local needs none)
    complex_only: bool = False  # cheap calls (cheap questions, grading) skip it
    # Seconds, or "cloud" (LLM_TIMEOUT_S) or "local" (LOCAL_LLM_TIMEOUT_S, the default of kind local).
    timeout_s: float | Literal["cloud", "local"] = "cloud"
    # The server enforces response_format with a grammar (vLLM, llama.cpp; default of kind local).
    native_json_schema: bool = False

    @model_validator(mode="before")
    @classmethod
    def _local_defaults(cls, data: Any) -> Any:  # pydantic's raw input
        if isinstance(data, dict) and data.get("kind") == "local":
            return {"timeout_s": "local", "native_json_schema": True, **data}
        return data

    @model_validator(mode="after")
    def _has_model(self) -> LLMLink:
        if self.model is None and self.kind in ("nvidia", "groq", "gemini"):
            raise ValueError(f"LLM link {self.name!r} of kind {self.kind} needs a model")
        return self


class Var:
    """A link field read from settings variables: the first of `names` that is set, else `default`."""

    __slots__ = ("default", "names")

    def __init__(self, *names: str, default: str | None = None) -> None:
        self.names = names
        self.default = default

    def read(self, sources: Sequence[Mapping[str, Any]]) -> str | None:
        """The first source holding any of the names decides (so init None unsets an alias set in the
        environment, as for a field); within it the first name with a value wins."""
        for source in sources:
            present = [source[name] for name in self.names if name in source]
            if present:
                return next(filter(None, map(_text, present)), self.default)
        return self.default


def _text(value: object) -> str:
    return str(value.get_secret_value() if isinstance(value, SecretStr) else value or "").strip()


# What a link of a cloud kind takes when it names no model or base URL (the card's links too).
KIND_DEFAULTS: dict[str, dict[str, Var]] = {
    "nvidia": {"model": Var("nvidia_model", default="meta/llama-3.1-70b-instruct"),
               "base_url": Var("nvidia_base_url")},  # unset: NVIDIA's hosted endpoint
    "groq": {"model": Var("groq_model", default="llama-3.3-70b-versatile"), "base_url": Var("groq_base_url")},
    "gemini": {"model": Var("gemini_model", default="gemini-2.5-flash"), "base_url": Var("gemini_base_url")},
}
_OPENROUTER: dict[str, Any] = {
    "name": "openrouter", "kind": "openai-compatible", "key": Var("openrouter_api_key"),
    # the free auto-router: a random free model per call, so a second attempt is another draw
    "model": Var("openrouter_model", default="openrouter/free"),
    "base_url": Var("openrouter_base_url", default="https://openrouter.ai/api/v1"),
}
# The design card's chain (shared/docs/DESIGN.md "LLM providers"), in its order: the links when
# LLM_LINKS is unset, and what a name in LLM_LINKS stands for. Each reads the variables deployments
# set before links were a list (NVIDIA_API_KEY, GROQ_API_KEY_2, ...), so they keep working.
CARD_LINKS: tuple[dict[str, Any], ...] = (
    # the slow 70B on NVIDIA's shared endpoint is only worth it for complex questions
    {"name": "nvidia", "kind": "nvidia", "key": Var("nvidia_api_key"), "complex_only": True},
    {"name": "groq2", "kind": "groq", "key": Var("groq_api_key_2")},
    {"name": "gemini2", "kind": "gemini", "key": Var("gemini_api_key_2", "google_api_key_2")},
    _OPENROUTER,
    _OPENROUTER,
    {"name": "groq1", "kind": "groq", "key": Var("groq_api_key")},
    {"name": "gemini1", "kind": "gemini", "key": Var("gemini_api_key", "google_api_key")},
    # a self-hosted OpenAI-compatible server (VLLM_BASE_URL, e.g. http://gpu:8000/v1); any key
    # unless it was started with one
    {"name": "vllm", "kind": "openai-compatible", "base_url": Var("vllm_base_url"), "model": Var("vllm_model"),
     "key": Var("vllm_api_key", default="none"), "timeout_s": "local", "native_json_schema": True},
    {"name": "local", "kind": "local"},  # the embedded model (LOCAL_LLM=false removes it)
)


def _filled(entry: Mapping[str, Any], sources: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A link object with its variables read and its kind's model and base URL where it names none."""
    link = {field: value.read(sources) if isinstance(value, Var) else value for field, value in entry.items()}
    for field, var in KIND_DEFAULTS.get(str(link.get("kind")), {}).items():
        if link.get(field) is None:
            link[field] = var.read(sources)
    return link


def _card_link(name: str, sources: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    for entry in CARD_LINKS:
        if entry["name"] == name.strip().lower():
            return _filled(entry, sources)
    known = ", ".join(dict.fromkeys(entry["name"] for entry in CARD_LINKS))
    raise ValueError(f"LLM_LINKS names {name!r}, which is no link of the card ({known}); give it as an object")


class _LayeredSource(PydanticBaseSettingsSource):
    """A source that reads several settings at once where any setting comes from: init arguments, the
    environment, .env, in that precedence (`_layers`, names in lower case)."""

    def __init__(self, settings_cls: type[BaseSettings], init: InitSettingsSource, env: EnvSettingsSource,
                 dotenv: DotEnvSettingsSource) -> None:
        super().__init__(settings_cls)
        self._init, self._env, self._dotenv = init, env, dotenv

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, "", False  # everything happens in __call__

    def _layers(self) -> tuple[Mapping[str, Any], ...]:
        given = {key.lower(): value for key, value in self._init.init_kwargs.items()}
        return given, self._env.env_vars, self._dotenv.env_vars


class _LinksSource(_LayeredSource):
    """`llm_links`: LLM_LINKS (or the init argument) with its names resolved, else the card's chain.

    The card's links read their keys from variables that are not fields (GROQ_API_KEY_2, ...), so
    this source looks them up where any setting comes from: init arguments, the environment, .env
    (in that precedence; an init argument of None unsets one)."""

    def __call__(self) -> dict[str, Any]:
        sources = self._layers()
        links: Any = next((source["llm_links"] for source in sources if "llm_links" in source), None)
        if isinstance(links, str):
            try:
                links = json.loads(links) if links.strip() else None
            except json.JSONDecodeError as exc:
                raise ValueError(f"LLM_LINKS is not JSON: {exc}") from exc
        if links is None:
            return {"llm_links": [_filled(entry, sources) for entry in CARD_LINKS]}
        if not isinstance(links, list):
            raise ValueError("LLM_LINKS must be a JSON list of link objects and card link names")
        return {"llm_links": [_card_link(link, sources) if isinstance(link, str)
                              else _filled(link, sources) if isinstance(link, Mapping) else link
                              for link in links]}


# --- Sections: settings nested by what they configure, each read from its flat environment names ---


class Section(BaseModel):
    """A group of settings nested in Settings (`settings.supabase.url`). Each field is read from the
    environment (and .env, and Settings' keyword arguments) under its flat name, ENV_PREFIX + the
    field's name in upper case (SUPABASE_URL), the names deployments set before there were sections."""

    model_config = ConfigDict(extra="forbid")
    ENV_PREFIX: ClassVar[str] = ""
    # Fields whose flat name is not ENV_PREFIX + their name: {field name: flat name in lower case}.
    ENV_NAMES: ClassVar[dict[str, str]] = {}

    @classmethod
    def flat_names(cls) -> dict[str, str]:
        """{flat name in lower case: field name}."""
        return {cls.ENV_NAMES.get(name, f"{cls.ENV_PREFIX}{name}"): name for name in cls.model_fields}


class DatabaseSettings(Section):
    """Postgres (storage/db.py): embedded, or external with DATABASE_URL (e.g. a Supabase direct
    connection string)."""

    ENV_PREFIX: ClassVar[str] = "db_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"url": "database_url", "pooler": "database_pooler"}

    # External Postgres. Unset: embedded Postgres.
    url: str | None = None
    # auto: a URL on port 6543 (Supabase's transaction pooler) is treated as a transaction-mode pooler
    # (prepared statements off); "transaction" for another such pooler; "none" never.
    pooler: Literal["auto", "transaction", "none"] = "auto"
    pool_size: int = 10
    # A database that is down or unreachable must not hold requests (storage/outage.py): a new
    # connection gives up after DB_CONNECT_TIMEOUT_S (libpq's whole seconds, at least 2), a request
    # waits at most DB_ACQUIRE_TIMEOUT_S for a pooled connection, and once a fresh connection fails
    # every request answers 503 with Retry-After at once until one succeeds again.
    connect_timeout_s: float = Field(default=5.0, gt=0)
    acquire_timeout_s: float = Field(default=10.0, gt=0)


class EmbeddingSettings(Section):
    """The embedding model (providers/embeddings.py, runtime.py)."""

    ENV_PREFIX: ClassVar[str] = "embedding_"

    # A local path to a sentence-transformers model; unset: the packaged MiniLM.
    model_path: str | None = None
    batch_size: int = 64
    # "torch", "onnx" or "onnx-int8" (ONNX Runtime, exported once from the same weights into
    # THOTQEN_HOME): same model, measured side by side in evals/results/embed_backends.md.
    backend: Literal["torch", "onnx", "onnx-int8"] = "onnx-int8"
    # Where the ONNX exports live; unset: THOTQEN_HOME/models/embeddings (one export per data directory).
    export_dir: Path | None = None


class ChunkingSettings(Section):
    """Chunk sizes in word pieces (ingestion/chunk.py): MiniLM truncates at 256, so children stay under
    it. The flat names are the fields' own (CHILD_TOKENS, ...)."""

    child_tokens: int = 220
    child_overlap_tokens: int = 40
    parent_tokens: int = 1500


class JobSettings(Section):
    """Ingestion jobs (storage/jobs.py): attempts, leases, republishing to the broker."""

    ENV_PREFIX: ClassVar[str] = "job_"

    # A job tried this many times by workers that died is failed with the reason.
    max_attempts: int = 3
    # A running job's lease: its worker renews it every quarter of this; a job whose lease ran out
    # belongs to a dead worker and is taken over. Longer than any pause between heartbeats.
    lease_s: float = 60.0
    # A queued job handed to the broker longer ago than this is handed over again (a lost message);
    # running it twice is harmless (a finished job is a no-op).
    republish_s: float = 1800.0


class MaintenanceSettings(Section):
    """Retention (storage/retention.py) and abandoned-job recovery (jobqueue/maintenance.py), run by
    Celery beat or, without a broker, by the server every MAINTENANCE_INTERVAL_S: query-log rows and
    login attempts older than RETENTION_DAYS go, and so do expired refresh tokens."""

    ENV_PREFIX: ClassVar[str] = "maintenance_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"retention_days": "retention_days"}

    retention_days: int = Field(default=90, ge=1)
    interval_s: float = 3600.0


class IngestionSettings(Section):
    """Reading files (ingestion/, docs/formats.md) and the threads that ingest them. The flat names
    are the fields' own (OCR_DPI, SHEET_MAX_ROWS: the names a format's `limits` declare), but for
    the INGEST_* four."""

    ENV_NAMES: ClassVar[dict[str, str]] = {"memory_mb": "ingest_memory_mb", "timeout_s": "ingest_timeout_s",
                                           "workers": "ingest_workers", "fair_lanes": "ingest_fair_lanes"}

    # Each file is parsed in a child process (ingestion/sandbox.py) with this memory cap and deadline;
    # past either its job fails with the reason.
    memory_mb: int = 4096
    timeout_s: float = 3600.0
    # OCR of PDF pages without a usable text layer (RapidOCR, packaged models). A page takes
    # seconds on 2 cores (evals/results/ocr.md), so a document with more pages to recognise
    # than ocr_max_pages fails at once with the reason instead of occupying the worker for hours.
    ocr: bool = True
    ocr_dpi: int = 150
    ocr_max_pages: int = 200
    # Seconds one document's OCR may take (checked before each page; past it the job fails with the
    # reason): about OCR_MAX_PAGES pages at a few seconds each.
    ocr_max_seconds: float = Field(default=600.0, gt=0)
    # Office files: what their ZIP parts may unpack to (zip bombs), and the rows a workbook may hold.
    office_max_unpacked_mb: float = 200.0
    sheet_max_rows: int = 100_000
    # What parsed text may hold, checked in the parsing child (under its memory cap) before the server
    # tokenises and chunks it: characters in one row (a line, cell or paragraph) and in the document.
    row_max_chars: int = Field(default=100_000, ge=1000)
    document_max_chars: int = Field(default=30_000_000, ge=1000)
    # Child chunks one document may make (each is embedded and stored); past it the job fails.
    document_max_chunks: int = Field(default=50_000, ge=1)
    # Background ingestion threads in each server process (embedding is CPU-bound: 1 on 2 cores).
    workers: int = 1
    # Threads beyond those that take a job only while every ingestion thread is busy, and only of an
    # owner with no job running (jobqueue/worker.py): another user's small file never waits behind one
    # user's long job (a 2-page scan held the only thread 227 s). 0: none.
    fair_lanes: int = Field(default=1, ge=0, le=8)


class LocalModelSettings(Section):
    """The embedded local model (providers/local_model.py: llama.cpp through xllamacpp, on loopback),
    the chain's last link. LOCAL_LLM_TIMEOUT_S, the cut-off of every "local" link, stays with the
    chain's settings."""

    ENV_PREFIX: ClassVar[str] = "local_llm_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"enabled": "local_llm"}

    enabled: bool = True  # LOCAL_LLM=false removes the link
    # A GGUF file to serve instead of the packaged Qwen2.5-Coder-1.5B-Instruct.
    model_path: Path | None = None
    threads: int = 0  # 0: every core
    ctx: int = 8192  # context window (tokens), shared by the parallel slots
    parallel: int = 1  # concurrent requests the local server decodes together


class WebSettings(Section):
    """Web search's backends (providers/web_search.py): Tavily with a key, else DuckDuckGo; both cut
    off so offline fails fast. Whether the graph may search the web at all is the WEB_SEARCH tunable
    (Settings' own, with `web_search_allowed`)."""

    ENV_NAMES: ClassVar[dict[str, str]] = {"timeout_s": "web_search_timeout_s", "retry_s": "web_search_retry_s"}

    tavily_api_key: SecretStr | None = None
    tavily_base_url: str | None = None
    timeout_s: float = 8.0
    retry_s: float = Field(default=300.0, ge=0)  # a failed web backend is skipped this long
    ddgs_backend: str = "duckduckgo"  # ddgs engine(s), comma-separated; "auto" tries several


class AnswerCacheSettings(Section):
    """The semantic answer cache (answering/chat.py, storage/answer_cache.py): a first question of the
    same user and scope, its embedding within max_distance (cosine) of an earlier one, is answered
    from that one; rows older than ttl_hours are purged (jobqueue/maintenance.py)."""

    ENV_PREFIX: ClassVar[str] = "answer_cache_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"enabled": "answer_cache"}

    enabled: bool = True
    max_distance: float = 0.05
    ttl_hours: float = 168.0


class UserSettings(Section):
    """Who the users are (storage/users.py keeps the CLI's users and web accounts apart); Settings'
    reserved_names, admin_names and admins read them. The flat names are the fields' own."""

    # The CLI's user when --user is not given.
    default_user: str = "local"
    # Names web signup refuses besides DEFAULT_USER, comma-separated (case-insensitive): the operator's
    # command-line users-to-be.
    reserved_usernames: str = ""
    # Usernames allowed to read /api/admin/metrics, comma-separated. Web signup refuses these names
    # (case-insensitive, like RESERVED_USERNAMES): an admin's account is made by the operator
    # (`thotqen account NAME`), never by whoever signs the name up first.
    thotqen_admins: str = ""


class TokenSettings(Section):
    """The server's own tokens (identity/security.py): the secret they are signed with (JWT_SECRET;
    THOTQEN_ENV says whether a placeholder or none is refused), how long they last, how long a user's
    token version is kept. The flat names are the fields' own."""

    jwt_secret: SecretStr | None = None
    access_token_minutes: int = 30
    refresh_token_days: int = 30
    # How long a user's token version, once read, is kept: the longest another process's revocation
    # takes to reach this one (this process's own is seen at once); 0 reads it on every request. How
    # many users' versions are kept (the least recently used go first).
    token_version_ttl_s: float = Field(default=5.0, ge=0, le=300)
    token_version_entries: int = Field(default=10_000, ge=0)


class RerankingSettings(Section):
    """The reranker's weights (providers/reranker.py); which reranker runs is the RERANKER tunable
    (tunables.py, Settings' own `reranker`)."""

    ENV_PREFIX: ClassVar[str] = "reranker_"

    model: str = "BAAI/bge-reranker-base"  # hub id (cached) or local path
    fallback: str = "none"


class AnsweringSettings(Section):
    """Answer processes (answering/processes.py): the graph's runs (chats, /v1, /rag's invoke and batch,
    MCP's ask) go to ANSWER_PROCESSES processes of their own at BACKGROUND_NICE, apart from the
    interpreter that authenticates every request; each runs at most ANSWERS_PER_PROCESS at once and
    ANSWER_QUEUE more may wait, shared fairly between users (answering/places.py: an owner with nothing
    running or waiting may wait past a full list, up to twice ANSWER_QUEUE; past it: 503 with
    Retry-After). 0 processes: on the server's own threads. Each process holds its own models
    (docs/protection.md#bounded-work says what that costs in memory)."""

    ENV_NAMES: ClassVar[dict[str, str]] = {"processes": "answer_processes", "per_process": "answers_per_process",
                                           "queue": "answer_queue", "process_max_mb": "answer_process_max_mb"}

    processes: int = Field(default=1, ge=0, le=64)
    per_process: int = Field(default=8, ge=1)
    queue: int = Field(default=32, ge=0)
    # An answer process whose anonymous resident memory (RssAnon) passes this many MB after an answer
    # takes no new run and is started afresh once its answers have ended (issue 41: one grew to 3.27 GB
    # under the attacks; one measured about 350 MB under the burst). 0: no ceiling.
    process_max_mb: int = Field(default=1536, ge=0)


class RenderSettings(Section):
    """Page images (api/routes/pages.py, api/heavy.py): renders run in child processes of their own,
    apart from the interpreter that authenticates every request."""

    ENV_PREFIX: ClassVar[str] = "page_render_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"per_user": "page_renders_per_user",
                                           "highlight_max_comparisons": "highlight_max_comparisons"}

    # Its processes (started when first needed), the renders that may wait beyond them (past both: 503
    # with Retry-After), one user's renders at once (past it: 429), and how long a render may take
    # before the request answers 503 (its process is ended then, as it is when the client leaves).
    workers: int = Field(default=2, ge=1)
    queue: int = Field(default=8, ge=0)
    per_user: int = Field(default=2, ge=1)
    timeout_s: float = Field(default=20.0, gt=0)
    # Pixels in one page image: a page that would hold more at the width asked is drawn narrower.
    max_pixels: int = Field(default=8_000_000, ge=200 * 200)
    # Word comparisons finding a highlight on a page may cost (a longer passage is cut until it fits).
    highlight_max_comparisons: int = Field(default=100_000, ge=1000)
    # Page images kept in memory for a repeat click, all together.
    cache_mb: int = Field(default=64, ge=0)


class QuestionSettings(Section):
    """What one user may ask (answering/accounting.py; docs/protection.md), every surface together."""

    ENV_PREFIX: ClassVar[str] = "question_"
    ENV_NAMES: ClassVar[dict[str, str]] = {"per_hour": "questions_per_hour", "per_minute": "questions_per_minute",
                                           "answers_per_user": "answers_per_user"}

    # Questions per user per rolling hour, chats and /rag together (429 with Retry-After beyond it).
    per_hour: int = 120
    # Questions per user per rolling minute, every surface together (a /rag batch counts each input):
    # the hour's limit alone let one account spend its 120 in a minute of back-to-back answers, the
    # server's CPU all the while (evals/results/burst.md). Past it 429 with Retry-After.
    per_minute: int = Field(default=10, ge=1)
    # ... and what they cost, in tokens of each question and the earlier turns the model sees (estimated
    # at 4 characters a token, answering/accounting.py `cost`; issue 41: a 4,000-character question cost
    # 7-18x a short one, and a /rag history of long turns more): per rolling minute and hour, every surface.
    tokens_per_minute: int = Field(default=10_000, ge=1)
    tokens_per_hour: int = Field(default=60_000, ge=1)
    max_chars: int = 4000
    # Answers one user may have in progress at once, every surface together (a chat's stream, /rag,
    # /v1, MCP's ask; a /rag batch holds as many as it runs at once): past it 429 with Retry-After.
    answers_per_user: int = Field(default=4, ge=1)


class BodySettings(Section):
    """Request bodies (api/edge.py, server.py; docs/protection.md): how large, how deep, how slow. The
    flat names are the fields' own."""

    # Upload size cap, enforced while the body streams in (413 as soon as it is passed).
    upload_max_mb: float = 50.0
    # Every other request body (JSON): read in full before any route or authentication sees it
    # (api/edge.py), up to REQUEST_MAX_KB on the routes that carry a conversation (/rag, /v1) and
    # FORM_MAX_KB on every other (a chat question with its scope, a login: tens of KB at most);
    # larger answers 413, by Content-Length or as it streams.
    request_max_kb: int = Field(default=1024, ge=1)
    form_max_kb: int = Field(default=64, ge=1)
    # Bodies past FORM_MAX_KB on /rag and /v1 (up to REQUEST_MAX_KB each, decoded on the event loop
    # before any question is admitted) one account may send per rolling minute, in this process:
    # past it 429 with Retry-After before the body is read; without a valid token 401. 0: no limit.
    large_bodies_per_minute: int = Field(default=10, ge=0)
    # JSON bodies nesting arrays/objects deeper than this answer 400 before they are parsed.
    json_max_depth: int = Field(default=32, ge=2)
    # JSON bodies holding more arrays and objects than this answer 400 before they are parsed (the
    # decoder builds them on the event loop: docs/protection.md#bounded-work). A /rag/batch of an
    # hour's questions (QUESTIONS_PER_HOUR, 120) with 50 earlier turns each holds about 6300.
    json_max_containers: int = Field(default=10_000, ge=100)
    # The same on every other route (FORM_MAX_KB's): their largest real body, a question with a scope
    # of documents, holds a handful; the conversation routes' JSON_MAX_CONTAINERS decoded on the event
    # loop was the largest share of its samples under the burst (evals/results/burst_profile.md).
    form_max_containers: int = Field(default=256, ge=16)
    # A request body (an upload included) that sends nothing for this long answers 408.
    body_read_timeout_s: float = Field(default=30.0, gt=0)


class HttpSettings(Section):
    """The HTTP server process's connections (uvicorn_options below, api/connections.py, api/drain.py;
    docs/protection.md). The flat names are the fields' own."""

    # Connections and in-flight requests one server process takes (uvicorn's limit_concurrency):
    # beyond it a new one answers 503, so stalled connections cannot use up file descriptors.
    server_max_connections: int = Field(default=1000, ge=1)
    # A connection must finish a request's headers within this many seconds of opening (or of its
    # previous response), else it is closed; also how long an idle kept-alive connection is kept.
    header_timeout_s: int = Field(default=10, ge=1)
    # Connections one client address may hold open at once (api/connections.py; a tenth of
    # SERVER_MAX_CONNECTIONS): ~1,100 half-open sockets from one address, reopened as the server closed
    # them, held every other user at 503. Past it a new connection answers 503 and is closed. Peers in
    # FORWARDED_ALLOW_IPS (the edge) are not counted: nginx caps its clients (deploy/nginx/). 0: no cap.
    connections_per_address: int = Field(default=100, ge=0)
    # SIGTERM: answers and streams in progress get this long to finish before they are ended as saved
    # turns (api/drain.py); at least one p95 answer (59 s end to end: README), and what compose's
    # stop_grace_period and the image's docs leave before the kill
    shutdown_grace_s: float = Field(default=90.0, ge=0, le=3600)
    # uvicorn's access log, a line per request written on the event loop (in the burst's profile, a
    # share of the loop's samples: evals/results/burst_profile.md). Off, requests are still counted
    # (/metrics) and errors still logged.
    access_log: bool = True


class GatewaySettings(Section):
    """What fronts the server (docs/deployment.md "Gateway", deploy/nginx/): the browsers' origins, the
    proxies believed, the secret a proxy adds, where nginx serves stored files. The flat names are the
    fields' own."""

    # Browser origins allowed by CORS, comma-separated ("*" is refused outside development).
    cors_origins: str = ""
    # Proxies whose X-Forwarded-For/-Proto are believed (comma-separated addresses or networks, "*" for
    # any); empty: none, the client address is the TCP peer's. `thotqen serve` hands it to uvicorn.
    forwarded_allow_ips: str = ""
    # Shared secret a fronting proxy/CDN adds to every request; when set, requests without it get 403
    # (except /api/health, so load balancers can probe).
    origin_secret: SecretStr | None = None
    origin_secret_header: str = "X-Origin-Verify"
    # Behind nginx (deploy/nginx/): the internal location that serves THOTQEN_HOME/files, e.g.
    # "/_protected/". Set, a stored file or rendered page image is answered with an empty response whose
    # X-Accel-Redirect names it there, once ownership is checked, and nginx sends the bytes. Empty: the
    # API sends them itself. Supabase Storage answers downloads with a short-lived signed URL either way.
    accel_redirect_prefix: str = Field(default="", pattern=r"^(/[A-Za-z0-9_.~-]+)*/?$")


class PagingSettings(Section):
    """How many items one page of a list holds at most (and by default): chats, a chat's messages,
    collections, documents. The flat names are the fields' own."""

    # Chats one page of GET /api/chats holds at most (and by default).
    chat_page_max: int = Field(default=100, ge=1)
    # Messages one page of a chat (GET /api/chats/{id}) holds at most (and by default): the latest
    # (`before`, a message id: the latest older than it; the web app's "Earlier messages").
    message_page_max: int = Field(default=200, ge=1)
    # Collections one page of GET /api/collections (and of /v1/models' collection models) holds at most.
    collection_page_max: int = Field(default=100, ge=1)
    # Documents one page of GET /api/documents (and of MCP's resource list) holds at most (and by default).
    document_page_max: int = Field(default=200, ge=1)


class SupabaseSettings(Section):
    """Supabase, two separate switches. Storage for the raw files: on with SUPABASE_URL and the
    service-role key. Auth: SUPABASE_AUTH=true accepts Supabase Auth access tokens (HS256 with the
    project's JWT secret, or its JWKS for asymmetric keys), checking signature, expiry, audience and
    issuer. Unset: local accounts and files on disk."""

    ENV_PREFIX: ClassVar[str] = "supabase_"

    url: str | None = None
    service_key: SecretStr | None = None
    auth: bool = False
    jwt_secret: SecretStr | None = None
    jwks_url: str | None = None  # unset: SUPABASE_URL/auth/v1/.well-known/jwks.json
    audience: str = "authenticated"
    issuer: str | None = None  # unset: SUPABASE_URL/auth/v1 (what Supabase Auth writes in `iss`)
    bucket: str = "documents"

    @property
    def token_issuer(self) -> str | None:
        if self.issuer:
            return self.issuer.rstrip("/")
        return f"{self.url.rstrip('/')}/auth/v1" if self.url else None

    @property
    def storage(self) -> bool:
        """Whether raw files go to Supabase Storage (both the URL and the service-role key set)."""
        return bool(self.url and self.service_key)


class ObservabilitySettings(Section):
    """Logs (providers/logs.py), metrics and tracing (providers/metrics.py, providers/telemetry.py);
    docs/deployment.md. The flat names are the fields' own (LOG_FORMAT, OTEL_SERVICE_NAME, ...)."""

    log_format: Literal["text", "json"] = Field(default="text", description=(
        "`json`: one JSON object a line (time, level, logger, message, request_id, trace_id, exc); "
        "`text`: one readable line. The same for the app's loggers and uvicorn's, in every process"))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] | None = Field(default=None, description=(
        "the level of every logger; unset: the server and workers log INFO and up, other commands "
        "WARNING and up (`-v`: DEBUG)"))
    otel_exporter_otlp_endpoint: str | None = Field(default=None, description=(
        "OTLP/HTTP collector base URL (e.g. http://collector:4318): traces go to its /v1/traces. "
        "Unset: no tracer provider is installed and no span is recorded. The SDK reads the other "
        "OTEL_* variables (OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*) itself."))
    otel_service_name: str = Field(default="thotqen", description="service.name of every span")
    metrics_allow_ips: str = Field(default="127.0.0.1,::1", description=(
        "client addresses (comma-separated addresses or networks) that may read /metrics without a "
        "token; the TCP peer, or X-Forwarded-For from FORWARDED_ALLOW_IPS proxies"))
    metrics_token: SecretStr | None = Field(default=None, description=(
        "a bearer token that opens /metrics from any address (Prometheus' `authorization` block)"))
    prometheus_multiproc_dir: Path | None = Field(default=None, description=(
        "prometheus-client's shared directory: every process (`serve --workers N`, Celery workers on "
        "the same host) writes its samples there and /metrics adds them up. Read from the process "
        "environment before the client loads, so it must be exported, not only in .env; `thotqen serve "
        "--workers N` uses THOTQEN_HOME/prometheus when it is unset"))
    worker_metrics_port: int = Field(default=0, ge=0, le=65535, description=(
        "`thotqen worker` serves its /metrics on this port (same protection); 0: none"))
    worker_metrics_host: str = Field(default="127.0.0.1", description="the address `thotqen worker` serves /metrics on")

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:  # pydantic's raw input
        if isinstance(value, str):
            value = value.strip()
            return (value.lower() if value.lower() in ("text", "json") else value.upper()) or None
        return value


class CelerySettings(Section):
    """Celery (jobqueue/): with a broker URL (amqp://... RabbitMQ, or redis://...), uploads become
    tasks that `thotqen worker` processes run, and `thotqen serve` runs no ingestion itself. Unset:
    ingestion threads inside the server, as before."""

    ENV_PREFIX: ClassVar[str] = "celery_"

    broker_url: str | None = None
    # Redis only: an unacknowledged task goes back to the queue after this long (a worker that died
    # mid-job). Keep it above the longest job; a live job redelivered early is held back by its lease.
    visibility_timeout_s: float = 3600.0
    # Connect timeout to the broker: an upload answers 503 (Retry-After) about this soon when the broker
    # refuses connections; one that accepts but never answers is cut off after 4x this (at least 30 s).
    publish_timeout_s: float = 5.0


class LoginSettings(Section):
    """How hard guessing passwords is (api/routes/auth.py, storage/accounts.py; docs/protection.md)."""

    ENV_PREFIX: ClassVar[str] = "login_"

    # Failed logins from one address that lock that address out of a username, and the sliding window
    # they count in (kept in Postgres): per address, so a stranger cannot lock the owner out.
    max_failures: int = 5
    lock_minutes: int = 15
    # Failed logins at one username from every address together (within LOGIN_LOCK_MINUTES, since its
    # last success) past which an address it never signed in from may try once per
    # LOGIN_ACCOUNT_DELAY_S: guessing from many addresses is slowed, never locked, and the owner's
    # known addresses are not slowed at all.
    account_max_failures: int = Field(default=20, ge=1)
    account_delay_s: float = Field(default=10.0, gt=0)
    # Login and signup attempts per client IP per window (429 with Retry-After beyond it).
    ip_limit: int = 30
    ip_window_s: int = 900


class LangSmithSettings(Section):
    """LangSmith's API for /api/admin/metrics (the SDK reads the same LANGSMITH_* variables for tracing)."""

    ENV_PREFIX: ClassVar[str] = "langsmith_"

    api_key: SecretStr | None = None
    endpoint: str = "https://api.smith.langchain.com"
    project: str = "default"


# Settings' sections by field name (kept in step with its fields of these types; a test checks).
SECTIONS: dict[str, type[Section]] = {
    "database": DatabaseSettings,
    "embedding": EmbeddingSettings,
    "chunking": ChunkingSettings,
    "jobs": JobSettings,
    "maintenance": MaintenanceSettings,
    "ingestion": IngestionSettings,
    "local_model": LocalModelSettings,
    "web": WebSettings,
    "cache": AnswerCacheSettings,
    "users": UserSettings,
    "tokens": TokenSettings,
    "reranking": RerankingSettings,
    "answering": AnsweringSettings,
    "renders": RenderSettings,
    "questions": QuestionSettings,
    "bodies": BodySettings,
    "http": HttpSettings,
    "gateway": GatewaySettings,
    "paging": PagingSettings,
    "supabase": SupabaseSettings,
    "observability": ObservabilitySettings,
    "celery": CelerySettings,
    "login": LoginSettings,
    "langsmith": LangSmithSettings,
}
FLAT: dict[str, tuple[str, str]] = {flat: (section, field) for section, model in SECTIONS.items()
                                    for flat, field in model.flat_names().items()}

_UNSET = object()


class _SectionsSource(_LayeredSource):
    """Each section's fields from their flat names, where any setting comes from: init arguments, the
    environment, .env, in that precedence (as for a field of Settings' own). A section handed whole
    (`Settings(supabase=SupabaseSettings(...))`) is left to the init source."""

    def __call__(self) -> dict[str, Any]:
        sources = self._layers()
        given = sources[0]
        # every section not handed whole, {} when none of its variables is set: what a variable named
        # as the section itself would say is never read
        out: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS if section not in given}
        for flat, (section, field) in FLAT.items():
            value = next((source[flat] for source in sources if flat in source), _UNSET)
            if section in out and value is not _UNSET:
                out[section][field] = value
        return out


class Settings(Tunables, ServerTunables, BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    # Data directory: embedded Postgres, stored PDFs, assembled models.
    thotqen_home: Path = Field(default=Path(".thotqen"))

    # Retrieval and graph knobs are declared in tunables.py (inherited here, set by their env vars).
    search_k: int = 5  # hits `thotqen search` prints by default


    # --- LLM providers (providers/llm): an ordered fallback chain, documented in docs/providers.md ---
    # The chain's links in order. LLM_LINKS is a JSON list of link objects (LLMLink) and of names of
    # the card's links (CARD_LINKS); unset: the card's chain. A name may repeat: each repeat is
    # another attempt ("openrouter#2"). Links without credentials are left out when the chain is built.
    llm_links: list[LLMLink] = Field(default_factory=list)  # always given by _LinksSource
    # Names from llm_links to try instead of the whole list, in this order (a repeat is another
    # attempt); empty: the list as it stands. A run's `llm_order` sets it per request.
    llm_order: str = ""
    # Hard cut-off per cloud call (a link's timeout_s "cloud"), enforced by a ThreadPoolExecutor
    # (SDK timeouts not trusted).
    llm_timeout_s: float = 18.0
    # Cut-off of links with timeout_s "local" (the embedded model, vLLM): a CPU reads a long prompt
    # in minutes (evals/results/local_llm_1_5b.md).
    local_llm_timeout_s: float = 300.0
    llm_temperature: float = 0.0
    # Bounds the local model's time (its speed: evals/results/local_llm_1_5b.md); a cited answer needs far fewer.
    llm_max_tokens: int = 512


    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        assert isinstance(init_settings, InitSettingsSource) and isinstance(env_settings, EnvSettingsSource)
        assert isinstance(dotenv_settings, DotEnvSettingsSource)
        links = _LinksSource(settings_cls, init_settings, env_settings, dotenv_settings)
        sections = _SectionsSource(settings_cls, init_settings, env_settings, dotenv_settings)
        return links, sections, init_settings, env_settings, dotenv_settings, file_secret_settings

    @field_validator("llm_links")
    @classmethod
    def _one_link_per_name(cls, links: list[LLMLink]) -> list[LLMLink]:
        # a repeated name is another attempt at the same link, so LLM_ORDER's names stay unambiguous
        first: dict[str, LLMLink] = {}
        for link in links:
            if first.setdefault(link.name, link) != link:
                raise ValueError(f"two different LLM links are named {link.name!r}")
        return links

    @property
    def home(self) -> Path:
        return self.thotqen_home.expanduser().resolve()

    @property
    def embedding_export_root(self) -> Path:
        if self.embedding.export_dir is not None:
            return self.embedding.export_dir.expanduser().resolve()
        return self.home / "models" / "embeddings"

    @property
    def embedded(self) -> bool:
        return not self.database.url

    # --- HTTP server (server.py, api/): accounts, uploads, chats, protection, metrics -----------
    # Kept as the last block of the class so merges with other settings stay easy.
    # "development" (default) generates a JWT secret once and keeps it in THOTQEN_HOME/jwt_secret;
    # any other value (e.g. "production") refuses to start without a real JWT_SECRET and refuses
    # placeholder secrets ("changeme", "secret", shorter than 32 characters ...).
    thotqen_env: str = "development"
    # Uploads being received at once (each body is held in memory, up to UPLOAD_MAX_MB): one user's
    # (past it: 429) and everyone's in this process (past it: 503), both with Retry-After.
    uploads_per_user: int = Field(default=2, ge=1)
    # Megabytes of upload bodies one account may send per rolling minute, in this process (each is
    # parsed on the event loop as it streams: the burst's 50 MB uploads were a fifth of its samples);
    # past it 429 with Retry-After before the body is read. Four uploads of UPLOAD_MAX_MB by default.
    upload_mb_per_minute: float = Field(default=200.0, gt=0)
    uploads_at_once: int = Field(default=8, ge=1)
    # What one user's uploads may keep (storage/quota.py), every document they uploaded counted in
    # SQL whatever its status (a failed one keeps its file until deleted): megabytes and documents.
    # Past either an upload answers 413 before its body is kept (by Content-Length, or as it streams);
    # the CLI's `ingest` fails the file with the same reason.
    storage_mb_per_user: float = Field(default=2048.0, gt=0)
    documents_per_user: int = Field(default=2000, ge=1)
    # Ingestion progress streams (GET /api/jobs/{id}/events) one user may hold open (past it: 429),
    # and how long one stays open with no progress to send (a job queued behind others, or one a
    # stopped worker holds) before the server ends it with an `idle` event (the client reopens it).
    job_streams_per_user: int = Field(default=16, ge=1)
    job_stream_idle_s: float = Field(default=300.0, gt=0)
    # MCP's streams for server-initiated messages (GET /mcp, which the SDK holds open until the
    # client leaves) one user may hold open (past it: 429), and how long one may stay open with
    # nothing sent but keep-alive pings before the server ends it (the client reconnects if it cares).
    mcp_streams_per_user: int = Field(default=8, ge=1)
    mcp_stream_idle_s: float = Field(default=300.0, gt=0)
    # CPU priority (nice, 0-19) of the server's background work: answering threads, in-process
    # ingestion threads and page-render processes run at least this nice, the request loop at the
    # server's own (Linux: per thread; 0 leaves every thread as it is).
    background_nice: int = Field(default=10, ge=0, le=19)
    # --- Sections (above, SECTIONS), each read from its flat variable names (DATABASE_URL, DB_POOL_SIZE) ---
    # NoDecode: a variable named as a section (LOGIN is a user name on some systems) is not JSON to
    # parse; _SectionsSource's value for every section wins over it.
    database: Annotated[DatabaseSettings, NoDecode] = Field(default_factory=DatabaseSettings)
    embedding: Annotated[EmbeddingSettings, NoDecode] = Field(default_factory=EmbeddingSettings)
    chunking: Annotated[ChunkingSettings, NoDecode] = Field(default_factory=ChunkingSettings)
    jobs: Annotated[JobSettings, NoDecode] = Field(default_factory=JobSettings)
    maintenance: Annotated[MaintenanceSettings, NoDecode] = Field(default_factory=MaintenanceSettings)
    ingestion: Annotated[IngestionSettings, NoDecode] = Field(default_factory=IngestionSettings)
    local_model: Annotated[LocalModelSettings, NoDecode] = Field(default_factory=LocalModelSettings)
    web: Annotated[WebSettings, NoDecode] = Field(default_factory=WebSettings)
    cache: Annotated[AnswerCacheSettings, NoDecode] = Field(default_factory=AnswerCacheSettings)
    users: Annotated[UserSettings, NoDecode] = Field(default_factory=UserSettings)
    tokens: Annotated[TokenSettings, NoDecode] = Field(default_factory=TokenSettings)
    reranking: Annotated[RerankingSettings, NoDecode] = Field(default_factory=RerankingSettings)
    answering: Annotated[AnsweringSettings, NoDecode] = Field(default_factory=AnsweringSettings)
    renders: Annotated[RenderSettings, NoDecode] = Field(default_factory=RenderSettings)
    questions: Annotated[QuestionSettings, NoDecode] = Field(default_factory=QuestionSettings)
    bodies: Annotated[BodySettings, NoDecode] = Field(default_factory=BodySettings)
    http: Annotated[HttpSettings, NoDecode] = Field(default_factory=HttpSettings)
    gateway: Annotated[GatewaySettings, NoDecode] = Field(default_factory=GatewaySettings)
    paging: Annotated[PagingSettings, NoDecode] = Field(default_factory=PagingSettings)
    supabase: Annotated[SupabaseSettings, NoDecode] = Field(default_factory=SupabaseSettings)
    observability: Annotated[ObservabilitySettings, NoDecode] = Field(default_factory=ObservabilitySettings)
    celery: Annotated[CelerySettings, NoDecode] = Field(default_factory=CelerySettings)
    login: Annotated[LoginSettings, NoDecode] = Field(default_factory=LoginSettings)
    langsmith: Annotated[LangSmithSettings, NoDecode] = Field(default_factory=LangSmithSettings)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's copy (not validated), where a section's flat name (`supabase_url`) updates that
        section's field, as it does in the environment or as a keyword argument."""
        rest = dict(update or {})
        for flat in sorted(FLAT.keys() & rest.keys()):
            section, field = FLAT[flat]
            rest[section] = rest.get(section, getattr(self, section)).model_copy(update={field: rest.pop(flat)})
        return super().model_copy(update=rest, deep=deep)

    @property
    def development(self) -> bool:
        return self.thotqen_env.strip().lower() in ("development", "dev")

    @property
    def reserved_names(self) -> set[str]:
        """Names (lower case) no web signup may take: the CLI's default user and RESERVED_USERNAMES."""
        names = {name.strip().lower() for name in self.users.reserved_usernames.split(",") if name.strip()}
        return names | {self.users.default_user.strip().lower()}

    @property
    def admin_names(self) -> set[str]:
        """THOTQEN_ADMINS in lower case: names no web signup may take (the operator makes them)."""
        return {name.lower() for name in self.admins}

    @property
    def admins(self) -> set[str]:
        return {name.strip() for name in self.users.thotqen_admins.split(",") if name.strip()}

    @property
    def web_search_allowed(self) -> bool:
        """Whether this deployment may send anything to a web search engine (a question's rewrite):
        only when asked, by a provider key (TAVILY_API_KEY) or by an operator setting WEB_SEARCH=true.
        Unset, an offline or data-resident install sends nothing out (issue 40)."""
        if not self.web_search:
            return False
        key = self.web.tavily_api_key
        keyed = key is not None and bool(key.get_secret_value().strip())
        return keyed or "web_search" in self.model_fields_set

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        if self.supabase.auth and not self.supabase.token_issuer:
            raise ValueError("SUPABASE_AUTH=true needs SUPABASE_URL (or SUPABASE_ISSUER): tokens are checked "
                             "against the issuer as well as the audience")
        if self.supabase.auth and not (self.supabase.jwt_secret or self.supabase.jwks_url or self.supabase.url):
            raise ValueError("SUPABASE_AUTH=true needs SUPABASE_JWT_SECRET or a JWKS (SUPABASE_URL or "
                             "SUPABASE_JWKS_URL) to verify tokens")
        if self.development:
            return self
        secrets = {"jwt_secret": self.tokens.jwt_secret, "supabase_jwt_secret": self.supabase.jwt_secret,
                   "origin_secret": self.gateway.origin_secret}
        for name, value in secrets.items():
            if value is not None and is_placeholder_secret(value.get_secret_value()):
                raise ValueError(f"{name.upper()} is a placeholder or shorter than 32 characters; "
                                 f"set a real secret (THOTQEN_ENV={self.thotqen_env})")
        if "*" in self.gateway.cors_origins.split(","):
            raise ValueError("CORS_ORIGINS='*' is only allowed in development; list the origins")
        return self


def setting_names() -> set[str]:
    """Every name a setting is read under, in lower case (the environment's, upper case): Settings'
    own fields and each section's flat names."""
    return (set(Settings.model_fields) - set(SECTIONS)) | set(FLAT)


class UvicornOptions(TypedDict):
    proxy_headers: bool
    forwarded_allow_ips: str | None
    limit_concurrency: int
    http: str
    timeout_keep_alive: int
    access_log: bool
    timeout_graceful_shutdown: int


def uvicorn_options(settings: Settings) -> UvicornOptions:
    """How uvicorn treats X-Forwarded-For/-Proto: believed only from FORWARDED_ALLOW_IPS (none by
    default; uvicorn's own default trusts loopback, so anyone on the host could pick their address),
    how many connections it keeps, how long a request's headers may take (api/connections.py), and
    whether it logs each request (ACCESS_LOG)."""
    trusted = settings.gateway.forwarded_allow_ips.strip()
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": trusted or None,
            "limit_concurrency": settings.http.server_max_connections,
            "http": "api.connections:HeaderDeadline", "timeout_keep_alive": settings.http.header_timeout_s,
            "access_log": settings.http.access_log,
            # after SIGTERM: what still runs this long after is cancelled (api/drain.py ends it as saved turns)
            "timeout_graceful_shutdown": math.ceil(settings.http.shutdown_grace_s)}
