"""Issue 41, the attack suite's answer capacity: one answer place (ANSWERS_PER_PROCESS 1) in one
answer process, a waiting list of one (ANSWER_QUEUE 1), the real runtime and a slow scripted model.

- Fair shares (answering/places.py): a user's first answer waits instead of answering 503 while
  another user holds the place and fills the list, hears its position, and runs before that
  user's second answer. Before, ten accounts holding four streams each kept everyone else at 503,
  and whoever got in waited in arrival order.
- A client that leaves stops its answer (api/leaving.py, answering/bridge.py, the answer process's
  cancel): before, a dropped `/rag/invoke`, `/rag/batch`, `/v1` or MCP `ask` ran to its end for
  nobody (the issue measured 294 CPU-s), and a chat's answer was finished whoever read it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from evals.fake_openai import FakeOpenAI
from tests.server.conftest import signup
from tests.server.test_accounting import rows
from tests.support.answer_processes import answer_process_settings, report_owner, slow_model

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"
PATIENCE_S = 30  # how long a freed place or a stopped run may take on a busy machine (an answer takes minutes)


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    yield from slow_model()


@pytest.fixture(scope="module")
def served(start_server, db, model):
    return start_server(answer_process_settings(db.uri, model, answer_queue=1), parts={})


@pytest.fixture(scope="module")
def owner(served, report_pdf):
    return report_owner(served, "fair", report_pdf)


def until(found: Callable[[], Any], what: str, timeout: float = PATIENCE_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := found()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return value


def answering(model: FakeOpenAI, after: int) -> dict[str, Any] | None:
    """The model's answer request after the first `after` requests, once it has streamed a few pieces."""
    with model._lock:
        found = [r for r in model.requests[after:] if r["kind"] == "answer" and r["pieces"] >= 3]
    return found[-1] if found else None


def running(served) -> int:
    return int(served.app.state.answers._running)  # runs holding a place


def chat_of(served, user: dict[str, Any]) -> str:
    with served.client() as c:
        return str(c.post("/api/chats", headers=user["headers"], json={"title": "fair"}).json()["id"])


def sse_events(lines: list[str]) -> list[tuple[str, Any]]:
    events, event = [], "message"
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            events.append((event, json.loads(line[5:])))
    return events


def test_a_first_answer_waits_with_its_position_and_runs_before_anothers_second(served, owner, model) -> None:
    places = served.app.state.answers.places
    h = owner["headers"]
    with served.client() as c:
        other = signup(c, "fair-b")
    order: list[str] = []
    chat, other_chat = chat_of(served, owner), chat_of(served, other)
    streams: dict[str, list[str]] = {}

    def chat_stream(who: str, headers: dict[str, str], chat_id: str) -> None:
        with served.client() as c, c.stream("POST", f"/api/chats/{chat_id}/messages", headers=headers,
                                            json={"question": QUESTION}) as res:
            streams[who] = [f"status: {res.status_code}"]
            for line in res.iter_lines():
                streams[who].append(line)
        order.append(who)

    def invoke(who: str) -> None:
        with served.client() as c:
            res = c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}})
            assert res.status_code == 200, res.text
        order.append(who)

    model.token_delay_s = 0.1  # the first answer's 200 pieces: twenty seconds
    before = len(model.requests)
    try:
        first = threading.Thread(target=chat_stream, args=("a1", h, chat))
        first.start()
        until(lambda: answering(model, before), "the first answer never started")
        second = threading.Thread(target=invoke, args=("a2",))
        second.start()
        until(lambda: places.snapshot() == (1, 1), "the owner's second answer did not wait")
        with served.client() as c:  # the owner's third: past the list's bound, 503 as before
            busy = c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}})
            assert busy.status_code == 503 and int(busy.headers["Retry-After"]) >= 1, busy.text
            # ... on every surface, before the question is counted: /v1 in OpenAI's shape, MCP as a refusal
            v1 = c.post("/v1/chat/completions", headers=h,
                        json={"model": "thotqen", "messages": [{"role": "user", "content": QUESTION}]})
            assert v1.status_code == 503 and v1.json()["error"]["message"] and v1.headers["Retry-After"], v1.text
            refused = c.post("/mcp", headers={**h, "Accept": "application/json, text/event-stream"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                   "params": {"name": "ask", "arguments": {"question": QUESTION}}}).json()["result"]
            assert refused["isError"] and "busy" in refused["content"][0]["text"], refused
        # the other user's first answer: the list is full, yet it waits (it was 503), ahead of the owner's second
        third = threading.Thread(target=chat_stream, args=("b1", other["headers"], other_chat))
        third.start()
        until(lambda: places.snapshot() == (1, 2), "the other user's first answer was not let wait")
        queued = until(lambda: [d for e, d in sse_events(streams.get("b1", [])) if e == "queued"],
                       "the waiting chat heard no position")
        assert streams["b1"][0] == "status: 200" and queued[0] == {"position": 1}, streams["b1"]
    finally:
        model.token_delay_s = 0.0
    for thread in (first, second, third):
        thread.join(300)
    assert order.index("b1") < order.index("a2"), order  # the other user's first ran before the owner's second
    assert sse_events(streams["b1"])[-1][0] == "done", streams["b1"][-3:]
    assert places.snapshot() == (0, 0)


def _post_and_leave(served, path: str, body: dict[str, Any], headers: dict[str, str]) -> socket.socket:
    """A raw HTTP request whose client will simply close its socket (no response read)."""
    where = urlsplit(served.url)
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: {where.netloc}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(data)}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
    sock = socket.create_connection((where.hostname, where.port))
    sock.sendall(head + data)
    return sock


ASK = {"question": QUESTION}
LEAVERS = {
    "rag-invoke": ("/rag/invoke", {"input": ASK}, "rag"),
    "rag-batch": ("/rag/batch", {"inputs": [ASK]}, "rag"),
    "v1": ("/v1/chat/completions", {"model": "thotqen", "messages": [{"role": "user", "content": QUESTION}]},
           "openai"),
    "v1-stream": ("/v1/chat/completions", {"model": "thotqen", "stream": True,
                                           "messages": [{"role": "user", "content": QUESTION}]}, "openai"),
    "mcp": ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "ask", "arguments": ASK}}, "mcp"),
}


@pytest.mark.parametrize("surface", list(LEAVERS))
def test_a_client_that_leaves_stops_its_answer_and_frees_the_place(served, owner, model, db, surface) -> None:
    path, body, source = LEAVERS[surface]
    model.token_delay_s = 0.3  # the answer's 200 pieces: a minute, were it to run on
    before = len(model.requests)
    count = len(rows(db, owner["id"]))
    try:
        sock = _post_and_leave(served, path, body, owner["headers"])
        record = until(lambda: answering(model, before), "the answer never started")
        assert running(served) == 1
        left = time.monotonic()
        sock.close()  # the client leaves mid-answer
        until(lambda: running(served) == 0, "the place was still held after its client left")
        freed_s = time.monotonic() - left
        print(f"{surface}: the place was free {freed_s:.2f} s after the client left")  # with -s
        pieces = record["pieces"]
        time.sleep(1.0)
        assert not record["completed"] and record["pieces"] <= pieces + 1, record["pieces"]  # the model stopped too
        assert freed_s < PATIENCE_S
    finally:
        model.token_delay_s = 0.0
    found = until(lambda: [r for r in rows(db, owner["id"])[count:] if r[1] != "running"], "no row ended")
    assert found == [(source, "cancelled", "the client disconnected")], found


def test_a_client_that_leaves_while_the_model_grades_stops_that_call(served, owner, model, db) -> None:
    """A model call that does not stream (grading: one JSON reply, nothing until it is written) got no
    callback to stop at, so the run stopped only once the model had replied. The run's thread now shuts
    the call's connection (providers/llm/interrupt.py), and the model sees its client gone."""
    model.kind_delay_s = {"grade": 120.0}  # a grading reply of two minutes, were it waited for
    before = len(model.requests)
    count = len(rows(db, owner["id"]))
    try:
        sock = _post_and_leave(served, "/rag/invoke", {"input": ASK}, owner["headers"])
        until(lambda: [r for r in model.requests[before:] if r["kind"] == "grade"], "grading never started",
              timeout=120)
        left = time.monotonic()
        sock.close()
        until(lambda: running(served) == 0, "the place was still held while the model graded for nobody")
        freed_s = time.monotonic() - left
        print(f"grading: the place was free {freed_s:.2f} s after the client left")  # with -s
        until(lambda: [r for r in model.requests[before:] if r["kind"] == "grade" and r["left"]],
              "the model never saw the grading call's client leave", timeout=5)
    finally:
        model.kind_delay_s = {}
    found = until(lambda: [r for r in rows(db, owner["id"])[count:] if r[1] != "running"], "no row ended")
    assert found == [("rag", "cancelled", "the client disconnected")], found


def test_a_chat_whose_client_leaves_stops_and_keeps_what_was_checked(served, owner, model) -> None:
    chat = chat_of(served, owner)
    model.token_delay_s = 0.3
    before = len(model.requests)
    try:
        sock = _post_and_leave(served, f"/api/chats/{chat}/messages", ASK, owner["headers"])
        record = until(lambda: answering(model, before), "the answer never started")
        sock.close()
        until(lambda: running(served) == 0, "the chat's place was still held after its client left")
        assert not record["completed"]
    finally:
        model.token_delay_s = 0.0
    with served.client() as c:
        messages = until(lambda: [m for m in c.get(f"/api/chats/{chat}", headers=owner["headers"]).json()["messages"]
                                  if m["role"] == "assistant"], "the stopped turn was not saved")
    assert messages[-1]["status"] == "stopped", messages[-1]


def test_an_answer_process_past_its_memory_ceiling_is_started_afresh_between_answers(served, owner) -> None:
    """ANSWER_PROCESS_MAX_MB: one grew to 3.27 GB under the attacks. Its memory is measured after each
    answer; past the ceiling it takes no new run and goes once its answers have ended (this one is
    never cut short), and the next question starts a fresh process."""
    import os

    answers = served.app.state.answers
    [pid] = answers.pids()
    process = answers._processes[0]
    measured = process.rss_mb()
    assert measured is not None and measured > 50, measured  # its models: this is what the ceiling weighs
    print(f"answer process {pid}: {measured:.0f} MB anonymous memory")  # the measurement, with -s
    process.max_mb = answers.max_mb = 1  # any real process is past one megabyte
    try:
        with served.client() as c:
            res = c.post("/rag/invoke", headers=owner["headers"], json={"input": {"question": QUESTION}})
            assert res.status_code == 200 and "412 million" in res.json()["output"]["answer"], res.text
        gone = until(lambda: process.process.poll() is not None, "the process past its ceiling went on")
        assert gone
    finally:
        answers.max_mb = 0
    with served.client() as c:
        res = c.post("/rag/invoke", headers=owner["headers"], json={"input": {"question": QUESTION}})
        assert res.status_code == 200, res.text
    [fresh] = answers.pids()
    assert fresh != pid and not os.path.exists(f"/proc/{pid}")


LONG_QUESTION = "What were Aurora Widgets' revenue and staff in fiscal 2023, sentence by sentence?"


@pytest.mark.parametrize("surface", ["rag-invoke", "chat"])
def test_on_the_servers_own_threads_a_client_that_leaves_stops_its_answer_too(live, owner_with_report, fake_llm,
                                                                              db, surface) -> None:
    """ANSWER_PROCESSES=0 (here: a runtime handed parts): the answer runs on a thread of the server,
    whose StopWatch watches the request's `gone` flag (answering/bridge.py)."""
    h = owner_with_report["headers"]
    with live.client() as c:
        owner_id = c.get("/api/auth/me", headers=h).json()["id"]
        chat = c.post("/api/chats", headers=h, json={"title": "leaving"}).json()["id"]
    path, body = (("/rag/invoke", {"input": {"question": LONG_QUESTION}}) if surface == "rag-invoke"
                  else (f"/api/chats/{chat}/messages", {"question": LONG_QUESTION}))
    fake_llm.token_delay_s = 0.5  # the answer's pieces: half a minute, were it to run on
    before = len(fake_llm.requests)
    count = len(rows(db, owner_id))
    try:
        sock = _post_and_leave(live, path, body, h)
        record = until(lambda: answering(fake_llm, before), "the answer never started", timeout=120)
        sock.close()
        until(lambda: [r for r in rows(db, owner_id)[count:] if r[1] != "running"], "the row did not end")
        pieces = record["pieces"]
        time.sleep(1.0)
        assert not record["completed"] and record["pieces"] <= pieces + 1, record  # the model's stream was closed
    finally:
        fake_llm.token_delay_s = 0.0
    assert rows(db, owner_id)[count:][-1][:2] == ("chat" if surface == "chat" else "rag", "cancelled")
