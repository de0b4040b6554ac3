"""One log format for every process (LOG_FORMAT, LOG_LEVEL), each line with its request's id.

`dict_config(settings)` is the logging configuration of a process: one handler on stderr for the
root logger, whose formatter is JSON (one object a line: time, level, logger, message, request_id,
trace_id, exc) or text, and uvicorn's loggers sent through it (no handlers of their own).
`thotqen serve` hands it to uvicorn, which applies it in every server process (`--workers N`
included); `configure(settings)` applies it in any other (the CLI's commands, Celery workers, the
answer processes).

`RequestId` (an ASGI middleware, outermost in the server) gives each request an id: the client's
`X-Request-ID` when it is short and plain, else a new one; it is returned in the response's
`X-Request-ID` and held in a context variable while the request runs, so every line logged for it
(uvicorn's access line included) carries `request_id`, and `trace_id` when an OpenTelemetry span is
current. An answer process's lines carry the id of the request whose run logged them (`carrier` /
`continued`, beside the trace context). What is logged is the message: no handler here adds headers,
bodies or questions.
"""

from __future__ import annotations

import contextvars
import json
import logging
import logging.config
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

from settings import Settings

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("thotqen_request_id", default=None)
HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
CARRIED = "x-request-id"  # its key in what crosses to an answer process, beside the W3C trace headers
UVICORN = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


def request_id_of(given: str | None) -> str:
    """The client's id when it is plain (1-64 letters, digits, `.`, `_`, `:`, `-`), else a new one."""
    if given and _SANE.fullmatch(given):
        return given
    return uuid.uuid4().hex


def carrier() -> dict[str, str]:
    """The current request's id, for work on its behalf in another process (an answer process)."""
    rid = REQUEST_ID.get()
    return {CARRIED: rid} if rid else {}


@contextmanager
def continued(carried: Mapping[str, str] | None) -> Iterator[None]:
    """Lines logged inside carry the request id `carried` (another process's `carrier()`) holds."""
    rid = (carried or {}).get(CARRIED)
    if not rid:
        yield
        return
    token = REQUEST_ID.set(request_id_of(rid))
    try:
        yield
    finally:
        REQUEST_ID.reset(token)


def trace_id() -> str | None:
    """The current OpenTelemetry trace's id (32 hex digits), None without a recording span."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


class RequestContext(logging.Filter):
    """Adds `request_id` and `trace_id` (None outside a request or a span) to every record, and cuts the
    query string from uvicorn's access lines (`/api/search?q=...`, a page's `highlight=`: a user's words)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            client, method, path, version, status = record.args
            record.args = (client, method, str(path).split("?", 1)[0], version, status)
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        if not hasattr(record, "trace_id"):
            record.trace_id = trace_id()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, request_id and trace_id
    when there are, exc (the traceback) when the record carries one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        for key in ("request_id", "trace_id"):
            value = getattr(record, key, None)
            if value:
                line[key] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`time level logger: message [request_id=... trace_id=...]` (the brackets only inside a request or span)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        context = " ".join(f"{key}={value}" for key in ("request_id", "trace_id")
                           if (value := getattr(record, key, None)))
        if not context:
            return text
        first, newline, rest = text.partition("\n")  # after the message, before any traceback
        return f"{first} [{context}]{newline}{rest}"


def dict_config(settings: Settings, default_level: str = "WARNING") -> dict[str, Any]:
    """The logging configuration (logging.config.dictConfig's) of a process, all through one stderr
    handler in LOG_FORMAT: LOG_LEVEL for every logger; unset, `default_level` for the root logger and
    INFO for uvicorn's (its start-up and access lines, as before LOG_LEVEL)."""
    chosen = settings.observability
    level = chosen.log_level or default_level
    served = chosen.log_level or "INFO"
    formatter = "providers.logs.JsonFormatter" if chosen.log_format == "json" else "providers.logs.TextFormatter"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "providers.logs.RequestContext"}},
        "formatters": {"thotqen": {"()": formatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr",
                                "formatter": "thotqen", "filters": ["context"]}},
        "root": {"level": level, "handlers": ["stderr"]},
        "loggers": {name: {"level": served, "handlers": [], "propagate": True} for name in UVICORN},
    }


def configure(settings: Settings, default_level: str = "WARNING") -> None:
    """Apply dict_config in this process (replacing the root logger's handlers); Python's warnings
    go through it too."""
    logging.config.dictConfig(dict_config(settings, default_level))
    logging.captureWarnings(True)


class RequestId:
    """ASGI middleware: the request's id in REQUEST_ID while it runs and in the response's X-Request-ID."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope.get("headers", ()) if name == b"x-request-id"), b"")
        rid = request_id_of(given.decode("latin-1"))
        header = (b"x-request-id", rid.encode())

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        token = REQUEST_ID.set(rid)
        try:
            await self.app(scope, receive, sending)
        finally:
            REQUEST_ID.reset(token)
