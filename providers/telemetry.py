"""OpenTelemetry traces over OTLP/HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing otherwise.

`configure(settings)` is called once per process by the composition root (runtime.build_runtime):
with an endpoint it installs a TracerProvider whose BatchSpanProcessor sends to
ENDPOINT/v1/traces, and the official psycopg and Celery instrumentations (Celery's carries the
trace context in the task message's headers, so an upload's trace goes on in the worker's task);
the server adds FastAPI's with `instrument_app`. Without an endpoint nothing is installed: the
API's own tracer stays the no-op one, and no span is recorded.

The product's own spans (a graph node, an LLM link attempt, an embedder call) go through `span`
and `start_span`, which never raise: tracing must not fail a request. Export errors stay inside
the SDK's processor thread, which logs and drops them.

Background loops that read the database on a timer (the job poller, the queue-depth read, a job's
lease heartbeat, the outage prober) run `untraced`: each of their statements was a trace of one
span, dozens a minute per idle process. Work they find (a claimed job, a maintenance round) is a
root span of its own, its statements under it. Every span carries the resource attributes
`service.name` (OTEL_SERVICE_NAME), `service.version` (the installed package's) and
`deployment.environment` (THOTQEN_ENV); OTEL_RESOURCE_ATTRIBUTES adds others.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, Status, StatusCode

from settings import Settings

if TYPE_CHECKING:
    import numpy as np

    from providers.embeddings import BatchProgress
    from providers.protocols import DocumentEmbedder

log = logging.getLogger(__name__)

TRACER = "thotqen"
_lock = threading.Lock()
_provider: Any = None  # the SDK's TracerProvider once configured


def enabled() -> bool:
    return _provider is not None


def configure(settings: Settings) -> bool:
    """Install tracing for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (once; later calls
    are no-ops). Returns whether tracing is on. Never raises: a bad exporter setting is logged."""
    global _provider
    endpoint = (settings.observability.otel_exporter_otlp_endpoint or "").strip()
    if not endpoint:
        return enabled()
    with _lock:
        if _provider is not None:
            return True
        try:
            _provider = _install(endpoint, resource_attributes(settings))
        except Exception:  # tracing off is better than a process that will not start
            log.exception("OpenTelemetry could not be configured; tracing is off")
            return False
    log.info("OpenTelemetry: traces to %s/v1/traces", endpoint.rstrip("/"))
    return True


def version() -> str:
    """The installed thotqen's version (a source tree that is not installed: "unknown")."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("thotqen")
    except PackageNotFoundError:
        return "unknown"


def resource_attributes(settings: Settings) -> dict[str, str]:
    """What every span says of the process that made it (OpenTelemetry's resource semantic conventions;
    the environment under both its older and its current name, which backends read one or the other)."""
    environment = settings.thotqen_env.strip().lower() or "development"
    return {"service.name": settings.observability.otel_service_name, "service.version": version(),
            "deployment.environment": environment, "deployment.environment.name": environment}


def _install(endpoint: str, attributes: dict[str, str]) -> Any:  # the SDK's TracerProvider
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create also reads OTEL_RESOURCE_ATTRIBUTES; these win where both name a key
    provider = TracerProvider(resource=Resource.create(attributes))
    # the signal's own path under the base endpoint, as the OTLP exporter specification says
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")))
    trace.set_tracer_provider(provider)
    # before the pool opens its first connection: connections made later are traced
    PsycopgInstrumentor().instrument(tracer_provider=provider)
    # publisher and worker both: the publish injects the context the worker's task continues
    CeleryInstrumentor().instrument(tracer_provider=provider)
    return provider


def instrument_app(app: Any) -> None:  # a FastAPI app
    """Server spans for every request (FastAPI's instrumentation), when tracing is on, a stream one
    span to its end; the probes (liveness and readiness, every few seconds) and the scrape are left out."""
    if not enabled():
        return
    try:
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        # no span per ASGI message: a streamed answer was one `http send` span per event (70 of 141)
        FastAPIInstrumentor.instrument_app(app, tracer_provider=_provider, exclude_spans=["receive", "send"],
                                           excluded_urls="/api/health,/api/ready,/metrics")
    except Exception:
        log.exception("could not instrument the FastAPI app; its requests are not traced")


def carrier() -> dict[str, str]:
    """The current trace context as W3C headers, for work that goes on in another process."""
    if not enabled():
        return {}
    from opentelemetry.propagate import inject

    headers: dict[str, str] = {}
    inject(headers)
    return headers


@contextmanager
def continued(headers: Mapping[str, str] | None) -> Iterator[None]:
    """Spans started inside belong to the trace `headers` (another process's `carrier()`) name."""
    if not headers or not enabled():
        yield
        return
    from opentelemetry import context
    from opentelemetry.propagate import extract

    token = context.attach(extract(dict(headers)))
    try:
        yield
    finally:
        context.detach(token)


@contextmanager
def untraced() -> Iterator[None]:
    """No span inside, the instrumentations' (psycopg's SQL) included: a timer's idle reads."""
    if not enabled():
        yield
        return
    try:
        from opentelemetry.instrumentation.utils import suppress_instrumentation
    except Exception:  # tracing must not fail the loop: traced it is, then
        yield
        return
    with suppress_instrumentation():
        yield


def _suppressed() -> bool:
    try:
        from opentelemetry.instrumentation.utils import is_instrumentation_enabled
    except Exception:
        return False
    return not is_instrumentation_enabled()


def flush(timeout_s: float = 10.0) -> None:
    """Send what is buffered now (a process about to exit; the SDK also does it at exit)."""
    if _provider is not None:
        try:
            _provider.force_flush(int(timeout_s * 1000))
        except Exception:
            log.debug("flush failed", exc_info=True)


def _clean(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """Only values OpenTelemetry accepts (None dropped, anything odd as text)."""
    out: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = str(value)
    return out


def set_attributes(span: Span, **attributes: Any) -> None:
    try:
        span.set_attributes(_clean(attributes))
    except Exception:
        log.debug("could not set span attributes", exc_info=True)


def start_span(name: str, **attributes: Any) -> Span:
    """A span that is not made current (for a generator that yields while it is open); end it with `end`.
    None inside `untraced`, as the instrumentations make none."""
    if not enabled() or _suppressed():
        return INVALID_SPAN
    try:
        return trace.get_tracer(TRACER).start_span(name, attributes=_clean(attributes))
    except Exception:
        log.debug("could not start span %s", name, exc_info=True)
        return INVALID_SPAN


def end(span: Span, error: BaseException | str | None = None, **attributes: Any) -> None:
    """Set the last attributes, an error status when there was one, and end the span; never raises."""
    try:
        if attributes:
            span.set_attributes(_clean(attributes))
        if isinstance(error, BaseException):
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:300]))
        elif error:
            span.set_status(Status(StatusCode.ERROR, str(error)[:300]))
        span.end()
    except Exception:
        log.debug("could not end a span", exc_info=True)


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    """The current span around a block (its children nest under it); the block's own exceptions pass
    through, recorded on the span. Tracing off: nothing at all."""
    if not enabled():
        yield INVALID_SPAN
        return
    opened = start_span(name, **attributes)
    try:
        token = trace.use_span(opened, end_on_exit=False)
        token.__enter__()
    except Exception:
        yield opened
        end(opened)
        return
    try:
        yield opened
    except BaseException as exc:
        token.__exit__(type(exc), exc, exc.__traceback__)
        end(opened, exc)
        raise
    token.__exit__(None, None, None)
    end(opened)


class TracedEmbedder:
    """An embedder whose calls are spans (`embed query`, `embed documents`); everything else is the
    wrapped one's. runtime.py wraps the process's embedders with it when tracing is on."""

    def __init__(self, inner: DocumentEmbedder) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # whatever the wrapped embedder has
        return getattr(self._inner, name)

    # what DocumentEmbedder declares, named so that the type checker sees this class is one
    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    @property
    def max_tokens(self) -> int:
        return self._inner.max_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._inner.count_tokens(texts)

    def embed_query(self, text: str) -> np.ndarray:
        with span("embed query", **{"embedding.identity": getattr(self._inner, "identity", None),
                                    "embedding.chars": len(text)}):
            return self._inner.embed_query(text)

    def embed_documents(self, texts: Sequence[str], progress: BatchProgress | None = None) -> np.ndarray:
        with span("embed documents", **{"embedding.identity": getattr(self._inner, "identity", None),
                                        "embedding.texts": len(texts)}):
            return self._inner.embed_documents(texts, progress=progress)


def traced_embedder(embedder: DocumentEmbedder) -> DocumentEmbedder:
    """The embedder with spans when tracing is on, else the embedder itself."""
    return TracedEmbedder(embedder) if enabled() and not isinstance(embedder, TracedEmbedder) else embedder
