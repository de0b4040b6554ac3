"""providers/logs.py: the request id a client may choose, and both formats' lines (the served process's JSON
lines are checked end to end in tests/server/test_operator.py)."""

from __future__ import annotations

import io
import json
import logging
import re

from providers import logs
from settings import Settings


def test_a_plain_client_id_is_kept_and_anything_else_replaced() -> None:
    assert logs.request_id_of("req-42.a_b:c") == "req-42.a_b:c"
    for bad in (None, "", "a b", 'x"y', "é", "a" * 65, "line\nbreak"):
        assert re.fullmatch(r"[0-9a-f]{32}", logs.request_id_of(bad)), bad


def emitted(fmt: str, level: str | None = None) -> tuple[io.StringIO, logging.Logger]:
    config = logs.dict_config(Settings(_env_file=None, log_format=fmt, log_level=level))
    handler = config["handlers"]["stderr"]
    assert config["root"]["handlers"] == ["stderr"] and handler["filters"] == ["context"]
    stream = io.StringIO()
    out = logging.StreamHandler(stream)
    out.setFormatter(logs.JsonFormatter() if fmt == "json" else logs.TextFormatter())
    out.addFilter(logs.RequestContext())
    logger = logging.getLogger(f"thotqen.test.{fmt}")
    logger.handlers, logger.propagate, logger.level = [out], False, logging.DEBUG
    return stream, logger


def test_lines_carry_the_request_id_inside_a_request_only() -> None:
    stream, logger = emitted("json")
    token = logs.REQUEST_ID.set("abc-1")
    try:
        logger.warning("inside %s", "a request")
    finally:
        logs.REQUEST_ID.reset(token)
    logger.warning("outside")
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "inside a request" and first["request_id"] == "abc-1" and first["level"] == "WARNING"
    assert "request_id" not in second and "trace_id" not in second  # no span, no request
    assert third["exc"].startswith("Traceback") and "ValueError: boom" in third["exc"]

    stream, logger = emitted("text")
    token = logs.REQUEST_ID.set("abc-2")
    try:
        logger.info("hello")
    finally:
        logs.REQUEST_ID.reset(token)
    assert stream.getvalue().rstrip().endswith("INFO thotqen.test.text: hello [request_id=abc-2]")


def test_access_lines_lose_their_query_string_and_levels_follow_log_level() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/api/search?q=secret+words", "1.1", 200), None)
    logs.RequestContext().filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "GET /api/search HTTP/1.1" 200'
    unset = logs.dict_config(Settings(_env_file=None), default_level="WARNING")
    assert unset["root"]["level"] == "WARNING" and unset["loggers"]["uvicorn.access"]["level"] == "INFO"
    assert unset["formatters"]["thotqen"]["()"].endswith("TextFormatter")
    debug = logs.dict_config(Settings(_env_file=None, log_level="debug", log_format="JSON"))
    assert debug["root"]["level"] == "DEBUG" and debug["loggers"]["uvicorn"]["level"] == "DEBUG"
    assert debug["formatters"]["thotqen"]["()"].endswith("JsonFormatter")


def test_the_request_id_crosses_to_another_process_and_stays_plain() -> None:
    # what an answer process receives with a run (answering/processes.py), beside the trace headers
    token = logs.REQUEST_ID.set("abc-3")
    try:
        carried = logs.carrier()
    finally:
        logs.REQUEST_ID.reset(token)
    assert carried == {"x-request-id": "abc-3"} and logs.carrier() == {}
    stream, logger = emitted("json")
    with logs.continued({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01", **carried}):
        logger.warning("in the run")
    with logs.continued({"x-request-id": 'forged"\n'}):  # never trusted as given
        logger.warning("forged")
    with logs.continued({}):
        logger.warning("no request")
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["request_id"] == "abc-3"
    assert second["request_id"] != 'forged"\n' and len(second["request_id"]) == 32
    assert "request_id" not in third and logs.REQUEST_ID.get() is None
