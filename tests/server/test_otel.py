"""OpenTelemetry end to end: `thotqen serve` and `thotqen worker` processes with OTEL_EXPORTER_OTLP_ENDPOINT
pointed at a local OTLP/HTTP receiver (tests/server/processes.py), on a Redis broker.

An upload is one trace from the API's request span through the Celery publish into the worker's task
(the context travels in the message headers), with the worker's SQL and embedder spans in it; a
question is one trace from its request through the graph's nodes (named as the LangSmith runs) to the
LLM link attempt. Without the endpoint nothing is installed: a whole question exports no span even
with the other OTLP variables pointing at the receiver.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evals.brokers import RedisServer
from evals.fake_openai import FakeOpenAI
from tests.server.conftest import ask, follow_job, signup, upload
from tests.server.processes import OTLPReceiver, Process, Span, process_env, serve, stop_postgres, worker
from tests.support.cli_run import run_cli

NODES = {"guardrail", "retrieve", "screen", "grade", "route", "generate"}


@pytest.fixture(scope="module")
def receiver() -> Iterator[OTLPReceiver]:
    r = OTLPReceiver()
    yield r
    r.close()


@pytest.fixture(scope="module")
def traced(fake_llm: FakeOpenAI, receiver: OTLPReceiver) -> Iterator[dict[str, Any]]:
    """A data directory, a broker, and a traced server and worker on them."""
    home = Path(tempfile.mkdtemp(prefix="thq-o-", dir="/tmp"))  # short: Postgres sockets live here
    broker = RedisServer(home)
    env = process_env(fake_llm, home, CELERY_BROKER_URL=broker.url, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
                      OTEL_BSP_SCHEDULE_DELAY="200")
    started: list[Process] = []
    try:
        api, url = serve(env, home / "serve.log")
        started.append(api)
        started.append(worker(env, home / "worker.log"))
        yield {"url": url, "env": env, "home": home}
    finally:
        for proc in started:
            proc.stop()
        broker.stop()
        stop_postgres(home)
        shutil.rmtree(home, ignore_errors=True)


def _one(spans: list[Span], name: str) -> Span | None:
    return next((s for s in spans if s.name == name), None)


def test_an_upload_is_one_trace_from_the_request_into_the_workers_task(traced, receiver, report_pdf) -> None:
    with httpx.Client(base_url=traced["url"], timeout=120) as c:
        user = signup(c, "otel")
        res = upload(c, user["headers"], "aurora.pdf", report_pdf)
        assert res.status_code == 202, res.text
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"

    task = receiver.wait(lambda spans: _one(spans, "run/thotqen.ingest"))
    spans = receiver.wait(lambda _: (t := receiver.trace(task.trace_id)) and _one(t, "embed documents") and t)
    request = _one(spans, "POST /api/documents")
    assert request is not None, sorted(s.name for s in spans)
    assert request.parent_id == "" and request.service == "thotqen"
    publish = _one(spans, "apply_async/thotqen.ingest")
    assert publish is not None and task.parent_id == publish.span_id
    # the worker's own work hangs under its task: the SQL it ran and the embedder's batches
    assert any(s.attributes.get("db.system") == "postgresql" or "db.system.name" in s.attributes for s in spans)
    assert _one(spans, "embed documents").attributes["embedding.texts"] > 0


def test_a_question_is_one_trace_through_the_graph_nodes_and_the_llm_link(traced, receiver, report_pdf) -> None:
    with httpx.Client(base_url=traced["url"], timeout=120) as c:
        user = signup(c, "otelq")
        res = upload(c, user["headers"], "aurora.pdf", report_pdf)
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
        chat = c.post("/api/chats", headers=user["headers"], json={"title": "t"}).json()["id"]
        final = ask(c, user["headers"], chat, "What was Aurora Widgets' total revenue in fiscal 2023?")[-1]
        assert final[0] == "done" and final[1]["provider"] == "vllm"

    def question(spans: list[Span]) -> list[Span] | None:
        for s in spans:
            if s.name == "POST /api/chats/{chat_id}/messages":
                t = receiver.trace(s.trace_id)
                if _one(t, "generate") and any(x.name == "llm:vllm" and x.attributes.get("llm.streamed")
                                               for x in t):
                    return t
        return None

    spans = receiver.wait(question)
    by_id = {s.span_id: s for s in spans}
    # the answer's stream is its request's span, not one `http send` span per event
    assert not [s.name for s in spans if s.name.endswith((" http send", " http receive"))]
    assert {s.name for s in spans} >= NODES, sorted(s.name for s in spans)
    answer = next(s for s in spans if s.name == "llm:vllm" and s.attributes.get("llm.streamed"))
    assert by_id[answer.parent_id].name == "generate"  # the attempt nests under its node
    assert answer.attributes["llm.provider"] == "vllm" and answer.attributes["llm.outcome"] == "ok"
    assert answer.attributes["llm.usage.output_tokens"] > 0 and answer.attributes["llm.cutoff_s"] > 0
    grading = next(s for s in spans if s.name == "llm:vllm" and not s.attributes.get("llm.streamed"))
    assert by_id[grading.parent_id].name == "grade"
    assert _one(spans, "embed query") is not None
    # every span says which release and which environment made it (the server's and the answer process's)
    from importlib.metadata import version

    for s in (spans[0], answer):
        assert s.resource["service.version"] == version("thotqen"), s.resource
        assert s.resource["deployment.environment"] == "development" == s.resource["deployment.environment.name"]


def _lone_sql(spans: list[Span], service: str) -> list[Span]:
    """Root spans of `service` that are one SQL statement: a trace of one span each."""
    return [s for s in spans if s.service == service and not s.parent_id
            and (s.attributes.get("db.system") == "postgresql" or "db.system.name" in s.attributes)]


def test_an_idle_server_sends_no_trace_per_poll(traced, receiver, fake_llm) -> None:
    """A server without a broker polls the job queue every 2 s, and /metrics reads the queue depth
    every 5 s: before, each of those statements was a trace of its own (about 42 a minute)."""
    home = Path(tempfile.mkdtemp(prefix="thq-i-", dir="/tmp"))
    env = process_env(fake_llm, home, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="200",
                      OTEL_SERVICE_NAME="thotqen-idle")
    api = None
    try:
        api, url = serve(env, home / "serve.log")
        time.sleep(3)  # what start-up traced (migrations, the first reads) arrives first
        before = {x.span_id for x in _lone_sql(receiver.snapshot(), "thotqen-idle")}
        with httpx.Client(base_url=url, timeout=30) as c:
            for _ in range(12):  # 12 s: six polls and two queue-depth reads at least
                assert "thotqen_ingestion_queue_jobs" in c.get("/metrics").text
                time.sleep(1)
            assert c.get("/api/ready").status_code == 200
        time.sleep(2)
        spans = receiver.snapshot()
        assert any(s.service == "thotqen-idle" for s in spans)  # the process does export
        new = [x for x in _lone_sql(spans, "thotqen-idle") if x.span_id not in before]
        assert not new, [(x.name, x.attributes) for x in new]
    finally:
        if api is not None:
            api.stop()
        stop_postgres(home)
        shutil.rmtree(home, ignore_errors=True)


def test_without_the_endpoint_no_span_is_exported(traced, receiver, fake_llm) -> None:
    """The same question from `thotqen ask`, once with the endpoint (spans arrive: the receiver would see
    them) and once without it but with every other OTLP variable aimed at the receiver: nothing."""
    env = {k: v for k, v in traced["env"].items() if k != "CELERY_BROKER_URL"}
    question = ("ask", "What was Aurora Widgets' total revenue in fiscal 2023?", "--user", "otel-cli")
    before = receiver.requests
    res = run_cli(env, *question)
    assert res.returncode == 0, res.stderr
    receiver.wait(lambda _: receiver.requests > before, timeout=30)

    quiet = {k: v for k, v in env.items() if k != "OTEL_EXPORTER_OTLP_ENDPOINT"}
    quiet.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{receiver.url}/v1/traces", OTEL_TRACES_EXPORTER="otlp")
    before = receiver.requests
    res = run_cli(quiet, *question)
    assert res.returncode == 0, res.stderr
    assert receiver.requests == before


def test_start_up_is_one_trace(receiver, fake_llm) -> None:
    """Start-up's statements (migrations, recovery, the answer processes' warm-up, the model check)
    were each a trace of one span: about 76 at every start. Now one trace; the answer processes' warm-up
    is not traced."""
    home = Path(tempfile.mkdtemp(prefix="thq-s-", dir="/tmp"))
    env = process_env(fake_llm, home, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="200",
                      OTEL_SERVICE_NAME="thotqen-start")
    api = None
    try:
        api, _url = serve(env, home / "serve.log")  # healthy: start-up is over (the probe itself is untraced)
        time.sleep(3)  # the batches' 200 ms, and a poll or two of the idle loops
        spans = [s for s in receiver.snapshot() if s.service == "thotqen-start"]
        roots = [s for s in spans if not s.parent_id]
        assert [s.name for s in roots] == ["start-up"], sorted(
            (s.name, str(s.attributes.get("db.statement", ""))[:60]) for s in roots)
        assert len({s.trace_id for s in spans}) == 1
        names = [s.name for s in spans]
        # the migrations (building the app opens the database) and the lifespan's work are in it
        assert "start-up lifespan" in names and sum(name in ("--", "create", "insert") for name in names) > 30, names
    finally:
        if api is not None:
            api.stop()
