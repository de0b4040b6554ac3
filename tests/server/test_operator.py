"""Operator-ready (issue 40): a real `thotqen serve` on a data directory of its own, with LOG_FORMAT=json and
tracing to a local OTLP receiver. Its log lines (its answer process's too) are JSON, each request's id comes
back and is on its lines with the trace's id (the answer process's lines for its run included), and no
question text is logged. Then its Postgres is stopped:
a request that needs it answers 503 with Retry-After in moments (it waited the pool's 30 s and answered 500
with a traceback), logged as one line, /metrics still answers at once; and once Postgres is started again,
so does the server.

The bounds are the issue's (2 s for a 503, 1 s for /metrics), far above what a loaded machine takes."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evals.fake_openai import FakeOpenAI
from tests.server.conftest import read_sse, signup
from tests.server.processes import OTLPReceiver, Process, process_env, serve, stop_postgres

# in a question: it must never reach the log (a plain word: one written as code, "zebra7781", is a name no
# document mentions, and its question would be refused before it reached the model)
MARKER = "zebracrossingquux"
# issue 40's bounds: a 503 within 2 s, /metrics within 1 s (measured: 5 ms each on a loaded 2-core machine;
# the old behaviour was the pool's 30 s, and /metrics 30-41 s)
FAST, SCRAPE = 2.0, 1.0


def lines(proc: Process) -> list[dict[str, Any]]:
    """The server's log as JSON objects; a line that is not one fails the test (LOG_FORMAT=json)."""
    out = []
    for line in proc.text().splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise AssertionError(f"not a JSON log line: {line!r}") from None
    return out


def of_request(proc: Process, request_id: str) -> list[dict[str, Any]]:
    return [line for line in lines(proc) if line.get("request_id") == request_id]


def wait_for_line(proc: Process, found: Any, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = next((line for line in lines(proc) if found(line)), None)
        if line is not None:
            return line
        time.sleep(0.2)
    raise AssertionError(f"no such line in:\n{proc.text()[-3000:]}")


@pytest.fixture(scope="module")
def served(fake_llm: FakeOpenAI) -> Iterator[dict[str, Any]]:
    home = Path(tempfile.mkdtemp(prefix="thq-o-", dir="/tmp"))  # short: Postgres sockets live here
    receiver = OTLPReceiver()
    env = process_env(fake_llm, home, LOG_FORMAT="json", LOG_LEVEL="INFO",
                      OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_BSP_SCHEDULE_DELAY="200")
    proc = None
    try:
        proc, url = serve(env, home / "serve.log")
        yield {"proc": proc, "url": url, "home": home, "receiver": receiver, "llm": fake_llm.url}
    finally:
        if proc is not None:
            proc.stop()
        receiver.close()
        stop_postgres(home)
        shutil.rmtree(home, ignore_errors=True)


def test_json_logs_carry_the_request_id_and_trace_id_and_no_question_text(served) -> None:
    proc: Process = served["proc"]
    with httpx.Client(base_url=served["url"], timeout=120) as c:
        user = signup(c, "operator")
        rid = f"op-{uuid.uuid4().hex[:12]}"
        res = c.get("/api/documents", headers={**user["headers"], "X-Request-ID": rid})
        assert res.status_code == 200 and res.headers["X-Request-ID"] == rid
        # an id that is not plain (spaces, quotes) or too long is replaced by a fresh one
        for bad in ('x" y', "a" * 65):
            other = c.get("/api/health", headers={"X-Request-ID": bad}).headers["X-Request-ID"]
            assert re.fullmatch(r"[0-9a-f]{32}", other), other
        minted = c.get("/api/health").headers["X-Request-ID"]
        assert re.fullmatch(r"[0-9a-f]{32}", minted)
        assert c.get("/api/search", params={"q": MARKER}, headers=user["headers"]).status_code == 200  # not logged
        chat = c.post("/api/chats", headers=user["headers"], json={"title": "t"}).json()["id"]
        asked = f"ask-{uuid.uuid4().hex[:12]}"
        with c.stream("POST", f"/api/chats/{chat}/messages", headers={**user["headers"], "X-Request-ID": asked},
                      json={"question": f"What was the {MARKER} revenue in fiscal 2023?"}) as answer:
            assert answer.status_code == 200
            assert read_sse(answer)[-1][0] == "done"
    # uvicorn's access line for the request, with its id and the trace's; the trace reached the receiver
    access = wait_for_line(proc, lambda line: line.get("request_id") == rid and line["logger"] == "uvicorn.access")
    assert "GET /api/documents" in access["message"] and access["level"] == "INFO"
    assert re.fullmatch(r"[0-9a-f]{32}", access["trace_id"]), access
    served["receiver"].wait(lambda spans: [s for s in spans if s.trace_id == access["trace_id"]])
    log = proc.text()
    assert MARKER not in log
    assert user["tokens"]["access_token"] not in log and "correct horse" not in log
    assert {"time", "level", "logger", "message"} <= set(lines(proc)[0])
    # the answer process (ANSWER_PROCESSES=1, its stderr the server's) logs through the same configuration
    loading = [line for line in lines(proc)
               if line["logger"] == "runtime" and line["message"].startswith("loading the")]
    assert len(loading) >= 2, loading  # the server's embedder, and the answer process's
    # the model is called from the answer process: its lines (the HTTP client's, one per call) carry the request's
    # id and trace id too (they carried neither: the id stayed in the server process)
    chat_line = wait_for_line(proc, lambda line: line.get("request_id") == asked and line["logger"] == "uvicorn.access")
    called = [line for line in lines(proc) if line["logger"].startswith("httpx") and served["llm"] in line["message"]
              and line.get("request_id") == asked]
    assert called, [line for line in lines(proc) if line["logger"].startswith("httpx")]
    assert {line.get("trace_id") for line in called} == {chat_line["trace_id"]}, (called, chat_line)


def test_a_stopped_database_answers_503_at_once_and_metrics_still_answer(served) -> None:
    proc: Process = served["proc"]
    home: Path = served["home"]
    with httpx.Client(base_url=served["url"], timeout=120) as c:
        user = signup(c, "outage")
        assert c.get("/api/documents", headers=user["headers"]).status_code == 200
        assert "thotqen_ingestion_queue_read_age_seconds" in c.get("/metrics").text  # read once while up
        assert re.search(r"^thotqen_database_up 1\.0$", c.get("/metrics").text, re.M)

        stop_postgres(home)
        for n in range(3):  # the first finds the pool's connections broken; the next, the database marked down
            rid = f"down-{n}-{uuid.uuid4().hex[:8]}"
            started = time.monotonic()
            res = c.get("/api/documents", headers={**user["headers"], "X-Request-ID": rid})
            took = time.monotonic() - started
            assert res.status_code == 503, res.text
            assert int(res.headers["Retry-After"]) >= 1 and took < FAST, (took, res.headers)
            assert res.headers["X-Request-ID"] == rid
            line = wait_for_line(proc, lambda line, rid=rid: line.get("request_id") == rid
                                 and ": 503, the database is unavailable" in line["message"])
            assert line["level"] == "WARNING" and "exc" not in line  # one line, no traceback
            # no traceback; besides the 503 line, only the outage's own (logged once, by whichever request or
            # background read met the outage first: a race), the pool's note of a broken connection it dropped and
            # psycopg's of a pipeline it could not end on that connection
            mine = [x for x in of_request(proc, rid) if x["logger"] != "uvicorn.access"]
            assert all("exc" not in x for x in mine), mine
            assert [x for x in mine if ": 503, " in x["message"]] == [line], mine
            assert all(x == line or x["message"].startswith(("database unreachable", "discarding closed connection",
                                                               "error ignored terminating"))
                       for x in mine), mine
        started = time.monotonic()
        assert c.get("/api/health").status_code == 503 and time.monotonic() - started < FAST
        started = time.monotonic()
        scraped = c.get("/metrics")
        assert scraped.status_code == 200 and time.monotonic() - started < SCRAPE
        age = re.search(r"^thotqen_ingestion_queue_read_age_seconds ([0-9.e+]+)$", scraped.text, re.M)
        assert age is not None and float(age.group(1)) >= 0  # the last value read, and how old it is
        assert "thotqen_ingestion_queue_jobs{" in scraped.text
        # what the ThotqenDatabaseDown alert reads: the next background read (every 5 s) failed
        deadline = time.monotonic() + 30
        while not re.search(r"^thotqen_database_up 0\.0$", c.get("/metrics").text, re.M):
            assert time.monotonic() < deadline, c.get("/metrics").text[-2000:]
            time.sleep(0.5)
        down = [line for line in lines(proc) if line["message"].startswith("database unreachable")]
        assert len(down) == 1 and down[0]["level"] == "ERROR" and "exc" not in down[0], down  # once per outage

        # started again (from here: the data directory's own), the server serves again by itself
        from storage.embedded import start_embedded_postgres

        start_embedded_postgres(home / "pg")
        deadline = time.monotonic() + 60
        while c.get("/api/health").status_code != 200:
            assert time.monotonic() < deadline, proc.text()[-3000:]
            time.sleep(0.5)
        assert c.get("/api/documents", headers=user["headers"]).status_code == 200
        wait_for_line(proc, lambda line: line["message"].startswith("database reachable again"))
