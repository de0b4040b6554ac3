"""Settings' sections (settings.py `Section`): nested in Python (`settings.supabase.url`), read under
the flat names deployments already set (SUPABASE_URL, LOG_FORMAT), with a field's precedence: a
keyword argument, then the environment, then .env."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
from pydantic import SecretStr, TypeAdapter

from settings import (
    FLAT,
    SECTIONS,
    AnswerCacheSettings,
    AnsweringSettings,
    BodySettings,
    CelerySettings,
    ChunkingSettings,
    DatabaseSettings,
    EmbeddingSettings,
    GatewaySettings,
    HttpSettings,
    IngestionSettings,
    JobSettings,
    LangSmithSettings,
    LocalModelSettings,
    LoginSettings,
    MaintenanceSettings,
    ObservabilitySettings,
    PagingSettings,
    QuestionSettings,
    RenderSettings,
    RerankingSettings,
    Section,
    Settings,
    SupabaseSettings,
    TokenSettings,
    UserSettings,
    WebSettings,
    setting_names,
)

ROOT = Path(__file__).resolve().parents[2]


def test_flat_environment_names_fill_the_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPABASE_URL", "https://p.supabase.co/")
    monkeypatch.setenv("supabase_auth", "true")  # case-insensitive, as every setting
    monkeypatch.setenv("LOG_FORMAT", "JSON")
    monkeypatch.setenv("WORKER_METRICS_PORT", "9100")
    monkeypatch.setenv("CELERY_BROKER_URL", "amqp://guest:guest@rabbitmq:5672//")
    monkeypatch.setenv("LOGIN_IP_LIMIT", "7")
    monkeypatch.setenv("LANGSMITH_PROJECT", "ours")
    s = Settings(_env_file=None)
    assert s.celery.broker_url == "amqp://guest:guest@rabbitmq:5672//" and s.celery.publish_timeout_s == 5.0
    assert s.login.ip_limit == 7 and s.langsmith.project == "ours"
    assert s.supabase.url == "https://p.supabase.co/" and s.supabase.auth is True
    assert s.supabase.token_issuer == "https://p.supabase.co/auth/v1"
    assert s.observability.log_format == "json" and s.observability.worker_metrics_port == 9100
    assert s.supabase.bucket == "documents" and s.observability.log_level is None  # the defaults


def test_a_keyword_beats_the_environment_which_beats_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("SUPABASE_BUCKET=from-dotenv\nSUPABASE_AUDIENCE=from-dotenv\nOTEL_SERVICE_NAME=from-dotenv\n")
    monkeypatch.setenv("SUPABASE_AUDIENCE", "from-env")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-env")
    s = Settings(_env_file=dotenv, otel_service_name="from-keyword")
    assert s.supabase.bucket == "from-dotenv"
    assert s.supabase.audience == "from-env"
    assert s.observability.otel_service_name == "from-keyword"


def test_a_section_handed_whole_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPABASE_BUCKET", "from-env")
    s = Settings(_env_file=None, supabase=SupabaseSettings(bucket="given"))
    assert s.supabase == SupabaseSettings(bucket="given")


def test_a_variable_named_as_a_section_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LOGIN is a user name on some systems: it is no JSON for settings.login (it broke start-up)."""
    monkeypatch.setenv("LOGIN", "someone")
    monkeypatch.setenv("CELERY", '{"broker_url": "amqp://elsewhere//"}')
    dotenv = tmp_path / ".env"
    dotenv.write_text("SUPABASE=whatever\nLOGIN_IP_LIMIT=3\n")
    s = Settings(_env_file=dotenv)
    assert s.login == LoginSettings(ip_limit=3) and s.celery == CelerySettings() and s.supabase == SupabaseSettings()


def test_a_bad_value_is_refused_with_its_section_and_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_METRICS_PORT", "70000")
    with pytest.raises(pydantic.ValidationError, match=r"observability\.worker_metrics_port"):
        Settings(_env_file=None)
    with pytest.raises(pydantic.ValidationError, match="log_format"):
        Settings(_env_file=None, worker_metrics_port=1, log_format="xml")


def test_the_cross_checks_read_the_sections() -> None:
    with pytest.raises(pydantic.ValidationError, match="SUPABASE_AUTH=true needs SUPABASE_URL"):
        Settings(_env_file=None, supabase_auth=True)
    with pytest.raises(pydantic.ValidationError, match="SUPABASE_JWT_SECRET is a placeholder"):
        Settings(_env_file=None, thotqen_env="production", jwt_secret="j" * 40, supabase_jwt_secret="changeme")


def test_model_copy_takes_the_flat_names_and_leaves_the_original() -> None:
    s = Settings(_env_file=None)
    copy = s.model_copy(update={"supabase_url": "https://q.supabase.co", "supabase_service_key": SecretStr("k"),
                                "metrics_allow_ips": "10.0.0.0/8", "search_k": 9, "login_ip_limit": 4,
                                "celery_broker_url": "redis://127.0.0.1:1/0"})
    assert copy.supabase.url == "https://q.supabase.co" and copy.supabase.storage
    assert copy.observability.metrics_allow_ips == "10.0.0.0/8" and copy.search_k == 9
    assert copy.login.ip_limit == 4 and copy.login.ip_window_s == 900 and copy.celery.broker_url == "redis://127.0.0.1:1/0"
    assert s.supabase.url is None and not s.supabase.storage and s.observability.metrics_allow_ips == "127.0.0.1,::1"


def test_the_sections_table_matches_the_fields() -> None:
    fields = {name: info.annotation for name, info in Settings.model_fields.items()
              if isinstance(info.annotation, type) and issubclass(info.annotation, Section)}
    assert fields == SECTIONS == {
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


def test_no_flat_name_is_also_a_field_of_settings() -> None:
    """A flat name that were also a field would be read twice, into two places."""
    assert not set(FLAT) & set(Settings.model_fields)
    assert set(FLAT) <= setting_names() and not set(SECTIONS) & setting_names()


def test_every_sections_name_is_documented() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(flat.upper() for flat in FLAT if f"`{flat.upper()}`" not in doc)
    assert not missing, f"document these in docs/configuration.md: {missing}"


# A value other than the default for every flat name (the environment's spelling), and the settings a
# value needs beside it to be accepted.
ENVIRONMENT = {
    "DATABASE_URL": "postgresql://u:p@db.example:5432/d", "DATABASE_POOLER": "transaction", "DB_POOL_SIZE": "3",
    "DB_CONNECT_TIMEOUT_S": "2.5", "DB_ACQUIRE_TIMEOUT_S": "4",
    "EMBEDDING_MODEL_PATH": "/models/e5", "EMBEDDING_BATCH_SIZE": "8", "EMBEDDING_BACKEND": "torch",
    "EMBEDDING_EXPORT_DIR": "/models/exports",
    "CHILD_TOKENS": "200", "CHILD_OVERLAP_TOKENS": "20", "PARENT_TOKENS": "1200",
    "JOB_MAX_ATTEMPTS": "4", "JOB_LEASE_S": "30", "JOB_REPUBLISH_S": "600",
    "RETENTION_DAYS": "30", "MAINTENANCE_INTERVAL_S": "60",
    "INGEST_MEMORY_MB": "2048", "INGEST_TIMEOUT_S": "600", "OCR": "false", "OCR_DPI": "200", "OCR_MAX_PAGES": "20",
    "OCR_MAX_SECONDS": "60", "OFFICE_MAX_UNPACKED_MB": "100", "SHEET_MAX_ROWS": "5000", "ROW_MAX_CHARS": "5000",
    "DOCUMENT_MAX_CHARS": "1000000", "DOCUMENT_MAX_CHUNKS": "500", "INGEST_WORKERS": "2", "INGEST_FAIR_LANES": "0",
    "LOCAL_LLM": "false", "LOCAL_LLM_MODEL_PATH": "/models/q.gguf", "LOCAL_LLM_THREADS": "2", "LOCAL_LLM_CTX": "4096",
    "LOCAL_LLM_PARALLEL": "2",
    "TAVILY_API_KEY": "tv-key", "TAVILY_BASE_URL": "https://tavily.example", "WEB_SEARCH_TIMEOUT_S": "3",
    "WEB_SEARCH_RETRY_S": "0", "DDGS_BACKEND": "auto",
    "ANSWER_CACHE": "false", "ANSWER_CACHE_MAX_DISTANCE": "0.1", "ANSWER_CACHE_TTL_HOURS": "24",
    "DEFAULT_USER": "me", "RESERVED_USERNAMES": "operator", "THOTQEN_ADMINS": "alice,bob",
    "JWT_SECRET": "s" * 40, "ACCESS_TOKEN_MINUTES": "15", "REFRESH_TOKEN_DAYS": "7", "TOKEN_VERSION_TTL_S": "0",
    "TOKEN_VERSION_ENTRIES": "100",
    "RERANKER_MODEL": "/models/bge", "RERANKER_FALLBACK": "dense",
    "ANSWER_PROCESSES": "0", "ANSWERS_PER_PROCESS": "2", "ANSWER_QUEUE": "4", "ANSWER_PROCESS_MAX_MB": "0",
    "PAGE_RENDER_WORKERS": "1", "PAGE_RENDER_QUEUE": "0", "PAGE_RENDERS_PER_USER": "1", "PAGE_RENDER_TIMEOUT_S": "5",
    "PAGE_RENDER_MAX_PIXELS": "1000000", "HIGHLIGHT_MAX_COMPARISONS": "5000", "PAGE_RENDER_CACHE_MB": "0",
    "QUESTIONS_PER_HOUR": "60", "QUESTIONS_PER_MINUTE": "5", "QUESTION_TOKENS_PER_MINUTE": "5000",
    "QUESTION_TOKENS_PER_HOUR": "30000", "QUESTION_MAX_CHARS": "2000", "ANSWERS_PER_USER": "2",
    "UPLOAD_MAX_MB": "10", "REQUEST_MAX_KB": "512", "FORM_MAX_KB": "32", "LARGE_BODIES_PER_MINUTE": "0",
    "JSON_MAX_DEPTH": "16", "JSON_MAX_CONTAINERS": "5000", "FORM_MAX_CONTAINERS": "128", "BODY_READ_TIMEOUT_S": "10",
    "SERVER_MAX_CONNECTIONS": "100", "HEADER_TIMEOUT_S": "5", "CONNECTIONS_PER_ADDRESS": "0", "SHUTDOWN_GRACE_S": "30",
    "ACCESS_LOG": "false",
    "CORS_ORIGINS": "https://app.example.com", "FORWARDED_ALLOW_IPS": "10.0.0.5", "ORIGIN_SECRET": "o" * 40,
    "ORIGIN_SECRET_HEADER": "X-Edge", "ACCEL_REDIRECT_PREFIX": "/_protected/",
    "CHAT_PAGE_MAX": "20", "MESSAGE_PAGE_MAX": "50", "COLLECTION_PAGE_MAX": "20", "DOCUMENT_PAGE_MAX": "50",
    "SUPABASE_URL": "https://p.supabase.co", "SUPABASE_SERVICE_KEY": "service-key", "SUPABASE_AUTH": "true",
    "SUPABASE_JWT_SECRET": "j" * 40, "SUPABASE_JWKS_URL": "https://p.supabase.co/jwks",
    "SUPABASE_AUDIENCE": "ours", "SUPABASE_ISSUER": "https://issuer.example", "SUPABASE_BUCKET": "files",
    "LOG_FORMAT": "json", "LOG_LEVEL": "DEBUG", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
    "OTEL_SERVICE_NAME": "ours", "METRICS_ALLOW_IPS": "10.0.0.0/8", "METRICS_TOKEN": "metrics-token",
    "PROMETHEUS_MULTIPROC_DIR": "/tmp/prometheus", "WORKER_METRICS_PORT": "9100", "WORKER_METRICS_HOST": "0.0.0.0",
    "CELERY_BROKER_URL": "amqp://rabbitmq//", "CELERY_VISIBILITY_TIMEOUT_S": "7200", "CELERY_PUBLISH_TIMEOUT_S": "2",
    "LOGIN_MAX_FAILURES": "6", "LOGIN_LOCK_MINUTES": "16", "LOGIN_ACCOUNT_MAX_FAILURES": "21",
    "LOGIN_ACCOUNT_DELAY_S": "11", "LOGIN_IP_LIMIT": "31", "LOGIN_IP_WINDOW_S": "901",
    "LANGSMITH_API_KEY": "ls-key", "LANGSMITH_ENDPOINT": "https://langsmith.example", "LANGSMITH_PROJECT": "ours",
}
BESIDE = {"SUPABASE_AUTH": {"SUPABASE_URL": "https://p.supabase.co"}}


def _plain(value: object) -> object:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def test_every_flat_name_is_listed_here() -> None:
    assert set(ENVIRONMENT) == {flat.upper() for flat in FLAT}


@pytest.mark.parametrize("name", sorted(ENVIRONMENT))
def test_every_section_field_is_read_from_its_flat_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each variable a section reads is still read under the name deployments set (the name it had as
    a field of Settings' own), into its section's field, and the default stays when it is unset."""
    for flat in ENVIRONMENT:  # the tests' own (EMBEDDING_EXPORT_DIR) too
        monkeypatch.delenv(flat, raising=False)
    section, field = FLAT[name.lower()]
    info = SECTIONS[section].model_fields[field]
    default = getattr(Settings(_env_file=None), section)
    assert getattr(default, field) == info.get_default(call_default_factory=True)
    for other, value in {name: ENVIRONMENT[name], **BESIDE.get(name, {})}.items():
        monkeypatch.setenv(other, value)
    read = getattr(getattr(Settings(_env_file=None), section), field)
    expected = TypeAdapter(info.annotation).validate_python(ENVIRONMENT[name])
    assert _plain(read) == _plain(expected) != _plain(getattr(default, field))
