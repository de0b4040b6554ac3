"""Prometheus metrics: every series the product counts is declared here, once, and read at `/metrics`.

The counters live in prometheus-client's default registry. With PROMETHEUS_MULTIPROC_DIR in the
process environment (it must be there before prometheus-client loads: `thotqen serve --workers N`
sets it for its children, docs/deployment.md), each process writes its samples to a file in that
directory and `render` adds them up, so any server process answers for all of them. Rates (pages
per second, error rate) are PromQL's job: the product only counts.

`/metrics` is readable from METRICS_ALLOW_IPS (loopback by default) or with the bearer METRICS_TOKEN
from anywhere (`allowed`); the server's route (api/routes/prometheus.py) and `thotqen worker`'s own port
(`serve_worker_metrics`) both ask it.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, ThreadingWSGIServer

from settings import Settings

log = logging.getLogger(__name__)

# -- the series (names are the dashboard's and the alerts' contract: deploy/observability/) -------
HTTP_REQUESTS = Histogram(
    "thotqen_http_request_duration_seconds", "HTTP requests by method, route template and status: "
    "latency buckets, and _count for the rate and the error rate", ["method", "route", "status"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
QUESTIONS = Counter("thotqen_questions", "questions by how they ended: answered (cited), refused (the documents "
                    "do not say), blocked (the guardrail), error, cancelled (the client went away)", ["outcome"])
ANSWER_SECONDS = Histogram("thotqen_answer_duration_seconds", "seconds from a question's admission to its saved "
                           "outcome, by outcome (as thotqen_questions)", ["outcome"],
                           buckets=(0.25, 0.5, 1, 2, 4, 8, 15, 30, 45, 60, 120, 300))
ANSWER_CACHE_HITS = Counter("thotqen_answer_cache_hits", "questions answered from the semantic answer cache")
LLM_ATTEMPTS = Counter("thotqen_llm_link_attempts", "LLM link attempts by link and outcome (ok, failed)",
                       ["provider", "outcome"])
LLM_FAILURES = Counter("thotqen_llm_link_failures", "failed LLM link attempts by link and reason class",
                       ["provider", "reason"])
LLM_CUTOFFS = Counter("thotqen_llm_cutoffs", "LLM link attempts abandoned at the executor cut-off", ["provider"])
LLM_SECONDS = Histogram("thotqen_llm_link_duration_seconds", "LLM link attempts' seconds, from the request to the "
                        "last token or the failure, by link and outcome (ok, failed)", ["provider", "outcome"],
                        buckets=(0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120))
LLM_TOKENS = Counter("thotqen_llm_tokens", "tokens of successful LLM link attempts by link and direction "
                     "(input, output), as the provider reported them", ["provider", "direction"])
# per attempt, as vLLM's request_prompt_tokens / request_generation_tokens and OpenTelemetry's
# gen_ai.client.token.usage: how big prompts and answers are, where the counter gives only the flow
LLM_CALL_TOKENS = Histogram("thotqen_llm_call_tokens", "tokens of each successful LLM link attempt by link and "
                            "direction (input, output), as the provider reported them", ["provider", "direction"],
                            buckets=(16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768))
NODE_SECONDS = Histogram("thotqen_graph_node_duration_seconds", "seconds each answering graph node took, by node "
                         "(a node that runs again in a later round is observed again)", ["node"],
                         buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60))
INGESTED_PAGES = Counter("thotqen_ingested_pages", "pages (slides, sheets, sections) of documents ingested; "
                         "rate() gives pages per second")
INGEST_JOBS = Counter("thotqen_ingestion_jobs", "ingestion jobs that ended, by status (done, failed)", ["status"])

OUTCOMES = ("answered", "refused", "blocked", "error", "cancelled")


def question_outcome(status: str, *, refused: bool = False) -> str:
    """The QUESTIONS label of a query-log status ('ok' splits into answered and refused)."""
    if status == "ok":
        return "refused" if refused else "answered"
    return status if status in OUTCOMES else "error"


# -- observations made in another process (answering/processes.py) --------------------------------
# An answer process runs the graph, so the LLM link and node series are observed there; its own
# registry is nobody's to scrape (in one server process there is no PROMETHEUS_MULTIPROC_DIR to
# share). With a `ship` hook set, count and observe hand each observation to it instead, and the
# server applies it to its own registry (`apply`), where /metrics reads it, in one process as in several.
Shipped = tuple[str, tuple[str, ...], float]  # (series name, label values, amount or observed value)
_ship: Callable[[Shipped], None] | None = None


def ship_to(hook: Callable[[Shipped], None] | None) -> None:
    """Send this process's observations to `hook` rather than recording them here (None: record here)."""
    global _ship
    _ship = hook


def _series() -> dict[str, Any]:
    return {m._name: m for m in globals().values() if isinstance(m, Counter | Histogram)}


def apply(observation: Any) -> None:  # whatever came over the socket
    """Record an observation another process shipped; an unknown series or bad shape is dropped."""
    try:
        name, labels, value = observation
        metric = _series().get(name)
        if metric is None or len(labels) != len(metric._labelnames):
            log.debug("dropped a shipped observation of %r", name)
            return
        if isinstance(metric, Histogram):
            observe(metric, float(value), *map(str, labels))
        else:
            count(metric, *map(str, labels), amount=float(value))
    except Exception:  # a metric must not fail the reader that applies it
        log.debug("could not apply %r", observation, exc_info=True)


def _shipped(metric: Any, labels: tuple[str, ...], value: float) -> bool:
    hook = _ship
    if hook is None:
        return False
    try:
        hook((metric._name, labels, value))
    except Exception:  # the server's socket closed: the observation is lost, not the run
        log.debug("could not ship %s", getattr(metric, "_name", metric), exc_info=True)
    return True


def count(metric: Any, *labels: str, amount: float = 1.0) -> None:  # a Counter
    """Add to a counter; never raises (a metric must not fail the request that it counts)."""
    if _shipped(metric, labels, amount):
        return
    try:
        (metric.labels(*labels) if labels else metric).inc(amount)
    except Exception:  # e.g. a full disk under PROMETHEUS_MULTIPROC_DIR
        log.debug("could not count %s", getattr(metric, "_name", metric), exc_info=True)


def observe(metric: Any, value: float, *labels: str) -> None:  # a Histogram
    if _shipped(metric, labels, value):
        return
    try:
        metric.labels(*labels).observe(value)
    except Exception:
        log.debug("could not observe %s", getattr(metric, "_name", metric), exc_info=True)


# -- exposition ------------------------------------------------------------------------------
def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class _Joined:
    """Several collectors read as one registry (generate_latest only calls `collect`)."""

    def __init__(self, sources: Iterable[Any]) -> None:
        self.sources = list(sources)

    def collect(self) -> Iterator[Metric]:
        for source in self.sources:
            yield from source.collect()


def render(extra: Iterable[Any] = ()) -> bytes:
    """The text exposition: this process's series, or every process's under PROMETHEUS_MULTIPROC_DIR,
    plus `extra` collectors read now (the queue depth, from the database)."""
    if multiprocess_dir():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        base: Any = registry
    else:
        base = REGISTRY
    return generate_latest(_Joined([base, *extra]))


CONTENT_TYPE = CONTENT_TYPE_LATEST


def allowed(settings: Settings, client: str | None, authorization: str | None) -> bool:
    """May this client read the metrics? From METRICS_ALLOW_IPS, or anywhere with the bearer METRICS_TOKEN."""
    secret = settings.observability.metrics_token
    token = secret.get_secret_value() if secret is not None else ""
    if token and authorization:
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    if not client:
        return False
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return False
    for entry in settings.observability.metrics_allow_ips.split(","):
        entry = entry.strip()
        if not entry:
            continue
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            log.warning("METRICS_ALLOW_IPS: %r is no address or network", entry)
    return False


DENIED = b'{"detail": "metrics are readable from METRICS_ALLOW_IPS or with the bearer METRICS_TOKEN"}'


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the base's signature
        pass


def worker_metrics_app(settings: Settings, extra: Callable[[], Iterable[Any]] = tuple) -> Callable[..., Any]:
    """The WSGI app a worker serves: /metrics under the same protection as the server's."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ.get("PATH_INFO", "/") not in ("/metrics", "/"):
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"detail": "Not Found"}']
        if not allowed(settings, environ.get("REMOTE_ADDR"), environ.get("HTTP_AUTHORIZATION")):
            start_response("403 Forbidden", [("Content-Type", "application/json")])
            return [DENIED]
        body = render(extra())
        start_response("200 OK", [("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve_worker_metrics(settings: Settings, extra: Callable[[], Iterable[Any]] = tuple) -> ThreadingWSGIServer | None:
    """`thotqen worker`'s /metrics on WORKER_METRICS_HOST:WORKER_METRICS_PORT, in a daemon thread (None: port 0)."""
    host, port = settings.observability.worker_metrics_host, settings.observability.worker_metrics_port
    if not port:
        return None
    server = make_server(host, port, worker_metrics_app(settings, extra), ThreadingWSGIServer, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="worker-metrics", daemon=True).start()
    log.info("metrics on http://%s:%d/metrics", host, port)
    return server
