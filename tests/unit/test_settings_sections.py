"""Settings' sections (settings.py `Section`): nested in Python (`settings.supabase.url`), read under
the flat names deployments already set (SUPABASE_URL, LOG_FORMAT), with a field's precedence: a
keyword argument, then the environment, then .env."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest
from pydantic import SecretStr

from settings import (
    FLAT,
    SECTIONS,
    CelerySettings,
    LangSmithSettings,
    LoginSettings,
    ObservabilitySettings,
    Section,
    Settings,
    SupabaseSettings,
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
    assert fields == SECTIONS == {"supabase": SupabaseSettings, "observability": ObservabilitySettings,
                                  "celery": CelerySettings, "login": LoginSettings, "langsmith": LangSmithSettings}


def test_no_flat_name_is_also_a_field_of_settings() -> None:
    """A flat name that were also a field would be read twice, into two places."""
    assert not set(FLAT) & set(Settings.model_fields)
    assert set(FLAT) <= setting_names() and not set(SECTIONS) & setting_names()


def test_every_sections_name_is_documented() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(flat.upper() for flat in FLAT if f"`{flat.upper()}`" not in doc)
    assert not missing, f"document these in docs/configuration.md: {missing}"
