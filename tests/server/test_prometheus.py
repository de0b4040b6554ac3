"""Prometheus metrics: Debian's `prometheus` (2.42, as an operator runs it; .ci/run installs it) scrapes
`/metrics` of `thotqen serve --workers 2` (two server processes adding up their samples through
PROMETHEUS_MULTIPROC_DIR) and of a `thotqen worker`, and PromQL over its HTTP API finds the questions
answered and the pages ingested after a real upload and questions; every query of the shipped Grafana
dashboard returns data from that scrape, and the shipped alert rules load. Then the protection:
/metrics answers allowed addresses and the bearer token, and refuses anyone else with 403."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from evals.brokers import RedisServer, free_port, wait_for_port
from evals.fake_openai import FakeOpenAI
from settings import Settings
from tests.server.conftest import ask, follow_job, script, signup, upload
from tests.server.processes import process_env, serve, stop_postgres, worker

PROMETHEUS = shutil.which("prometheus")
SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "observability"
QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"
FLAKY = "What dividend did Aurora Widgets pay in fiscal 2023?"  # its grading call fails (bad JSON)


def flaky_script(kind: str, prompt: str) -> str:
    """The tests' script, but the grade of a dividend question is no JSON: a real link failure."""
    if kind == "grade" and "dividend" in prompt.rsplit("Question:", 1)[-1]:
        return "I cannot grade these."
    return script(kind, prompt)


@pytest.fixture(scope="module")
def flaky_llm() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(flaky_script)
    yield fake
    fake.close()


class Prometheus:
    """A Prometheus server of its own: config, data directory and port in `workdir`, scraping every second."""

    def __init__(self, workdir: Path, jobs: dict[str, str]) -> None:
        assert PROMETHEUS is not None
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "prometheus.yml"
        scrape = "".join(f"  - job_name: {name}\n    static_configs:\n      - targets: ['{target}']\n"
                         for name, target in jobs.items())
        shutil.copy(SHIPPED / "alerts.yml", workdir / "alerts.yml")  # the shipped rules, loaded as an operator would
        config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                          f"rule_files:\n  - alerts.yml\nscrape_configs:\n{scrape}")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = workdir / "prometheus.log"
        self.proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{port}"],
                                     stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        wait_for_port(port, self.proc, 60, "prometheus")

    def api(self, path: str, **params: str) -> Any:
        res = httpx.get(f"{self.url}/api/v1/{path}", params=params, timeout=10).json()
        assert res["status"] == "success", res
        return res["data"]

    def query(self, promql: str) -> float | None:
        result = self.api("query", query=promql)["result"]
        return float(result[0]["value"][1]) if result else None

    def wait(self, promql: str, expected: float, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.query(promql)
            if value == expected:
                return
            time.sleep(0.5)
        raise AssertionError(f"{promql} = {value}, expected {expected}\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def scraped(flaky_llm: FakeOpenAI) -> Iterator[dict[str, Any]]:
    if PROMETHEUS is None:
        pytest.skip("Debian's prometheus is not installed (apt-get install prometheus; .ci/run does)")
    home = Path(tempfile.mkdtemp(prefix="thq-p-", dir="/tmp"))  # short: Postgres sockets live here
    broker = RedisServer(home)
    worker_port = free_port()
    env = process_env(flaky_llm, home, CELERY_BROKER_URL=broker.url)
    started: list[Any] = []
    try:
        api, url = serve(env, home / "serve.log", "--workers", "2")
        started.append(api)
        started.append(worker({**env, "WORKER_METRICS_PORT": str(worker_port)}, home / "worker.log"))
        prometheus = Prometheus(home / "prometheus", {"thotqen-api": url.removeprefix("http://"),
                                                      "thotqen-worker": f"127.0.0.1:{worker_port}"})
        started.append(prometheus)
        yield {"url": url, "prometheus": prometheus, "home": home}
    finally:
        for part in reversed(started):
            part.stop()
        broker.stop()
        stop_postgres(home)
        shutil.rmtree(home, ignore_errors=True)


def test_prometheus_counts_an_upload_and_questions_across_processes(scraped, report_pdf) -> None:
    prom: Any = scraped["prometheus"]
    prom.wait('sum(up{job=~"thotqen-.*"})', 2)  # both targets scraped: the API's processes and the worker
    with httpx.Client(base_url=scraped["url"], timeout=120) as c:
        user = scraped["owner"] = signup(c, "prom")
        res = upload(c, user["headers"], "aurora.pdf", report_pdf)
        assert res.status_code == 202, res.text
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
        pages = c.get(f"/api/documents/{res.json()['document_id']}", headers=user["headers"]).json()["pages"]
        for n in range(3):  # the second and third come from the answer cache
            chat = c.post("/api/chats", headers=user["headers"], json={"title": f"t{n}"}).json()["id"]
            final = ask(c, user["headers"], chat, QUESTION)[-1]
            assert final[0] == "done" and final[1]["citations"], final
    # whichever server process answered each question, every scrape adds them all up
    prom.wait('sum(thotqen_questions_total{outcome="answered"})', 3)
    prom.wait("sum(thotqen_answer_cache_hits_total)", 2)
    prom.wait("sum(thotqen_ingested_pages_total)", pages)
    prom.wait('sum(thotqen_ingestion_jobs_total{job="thotqen-worker",status="done"})', 1)
    assert prom.query('sum(thotqen_llm_link_attempts_total{provider="vllm",outcome="ok"})') >= 2  # grade, answer
    assert prom.query('sum(thotqen_http_request_duration_seconds_count{route="/api/chats/{chat_id}/messages",'
                      'status="200"})') == 3
    assert prom.query('max(thotqen_ingestion_queue_jobs{status="queued"})') == 0


def test_every_dashboard_query_returns_data_and_the_alerts_load(scraped) -> None:
    prom: Any = scraped["prometheus"]
    rules = [r for group in prom.api("rules")["groups"] for r in group["rules"]]
    assert {r["name"] for r in rules} == {"ThotqenHighErrorRate", "ThotqenIngestionQueueBacklog", "ThotqenDatabaseDown",
                                          "ThotqenLLMLinkFailures", "ThotqenAnswersFailing", "ThotqenAnswerLatencyHigh"}
    assert all(r["health"] in ("ok", "unknown") for r in rules), rules
    with httpx.Client(base_url=scraped["url"], timeout=120) as c:  # a link failure, for the failure panels
        user = scraped["owner"]  # the report's owner (the first test): a question over it is graded
        chat = c.post("/api/chats", headers=user["headers"], json={"title": "flaky"}).json()["id"]
        ask(c, user["headers"], chat, FLAKY)
    prom.wait('count(rate(thotqen_llm_link_failures_total{provider="vllm"}[5m])) > bool 0', 1)  # two scrapes
    assert prom.query("min(thotqen_database_up)") == 1
    dashboard = json.loads((SHIPPED / "grafana-dashboard.json").read_text())
    empty: list[str] = []
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            # a query Prometheus cannot parse fails here; one over a series nobody exports is empty
            if not prom.api("query", query=target["expr"])["result"]:
                empty.append(f"{panel['title']}: {target['expr']}")
    assert not empty, empty


# -- the protection ----------------------------------------------------------------------------
def metrics_app(**settings: Any) -> FastAPI:
    from api.routes import prometheus

    app = FastAPI()
    app.state.settings = Settings(_env_file=None, **settings)
    app.include_router(prometheus.router)
    return app


def scrape(app: FastAPI, client: str, **headers: str) -> httpx.Response:
    """GET /metrics as if from the address `client` (the TCP peer the app sees)."""

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=(client, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://thotqen") as c:
            return await c.get("/metrics", headers=headers)

    return asyncio.run(get())


def test_metrics_answer_loopback_and_refuse_other_addresses_without_the_token() -> None:
    app = metrics_app()
    ok = scrape(app, "127.0.0.1")
    assert ok.status_code == 200 and "thotqen_questions" in ok.text
    assert ok.headers["content-type"].startswith("text/plain")
    refused = scrape(app, "203.0.113.9")
    assert refused.status_code == 403 and "thotqen" not in refused.text.replace("METRICS", "")
    assert scrape(app, "203.0.113.9", Authorization="Bearer anything").status_code == 403  # no token configured


def test_the_bearer_token_opens_metrics_from_anywhere_and_networks_are_allowed() -> None:
    app = metrics_app(metrics_token="a-long-scrape-token-for-prometheus", metrics_allow_ips="10.0.0.0/8")
    assert scrape(app, "203.0.113.9", Authorization="Bearer a-long-scrape-token-for-prometheus").status_code == 200
    assert scrape(app, "203.0.113.9", Authorization="Bearer a-wrong-token").status_code == 403
    assert scrape(app, "203.0.113.9", Authorization="Basic a-long-scrape-token-for-prometheus").status_code == 403
    assert scrape(app, "10.20.30.40").status_code == 200
    assert scrape(app, "127.0.0.1").status_code == 403  # the allow list replaces loopback


def test_the_workers_metrics_port_has_the_same_protection() -> None:
    from providers.metrics import worker_metrics_app

    app = worker_metrics_app(Settings(_env_file=None))
    seen: list[str] = []

    def call(addr: str, **extra: str) -> tuple[str, bytes]:
        body = b"".join(app({"PATH_INFO": "/metrics", "REMOTE_ADDR": addr, **extra},
                            lambda status, headers: seen.append(status)))
        return seen[-1], body

    status, body = call("127.0.0.1")
    assert status.startswith("200") and b"thotqen_ingested_pages" in body
    assert call("198.51.100.7")[0].startswith("403")
