"""Graceful drain (issue 40, api/drain.py) on a real `thotqen serve`: SIGTERM to its process group (as
systemd and a terminal's Ctrl-C send it) in the middle of a chat's answer stream.

Within SHUTDOWN_GRACE_S the answer runs to its end and the client gets the whole of it (it was cut
0.2 s after the signal, a truncated 200 saved as an error), while new connections are refused; past
the grace the turn is saved with an answer saying to ask again, and its query-log row ends.

The servers share the tests' database (DATABASE_URL) so the report the package's live server ingested
is there; they ingest nothing themselves (INGEST_WORKERS=0: their files live elsewhere)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from answering.accounting import STOPPED
from evals.fake_openai import FakeOpenAI
from tests.server.conftest import FACTS, login_headers, script
from tests.server.processes import Process, process_env, serve

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023? Answer at length."
FILLER = " ".join(f"word{i}" for i in range(120))  # 120 pieces 0.1 s apart: a 12 s answer


def slow_script(kind: str, prompt: str) -> str:
    if kind == "answer":
        return script(kind, prompt) + " " + FILLER + "."
    return script(kind, prompt)


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(slow_script, token_delay_s=0.1)
    yield fake
    fake.close()


def start(slow_llm: FakeOpenAI, db: Any, home: Path, grace_s: float) -> tuple[Process, str]:
    env = process_env(slow_llm, home, DATABASE_URL=db.uri, SHUTDOWN_GRACE_S=str(grace_s), INGEST_WORKERS="0",
                      ANSWER_CACHE="false", LOG_LEVEL="INFO")
    return serve(env, home / "serve.log")


@pytest.fixture
def serve_home() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="thq-d-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def ask_and_terminate(url: str, user: dict[str, Any], proc: Process) -> tuple[str, list[tuple[str, str]], float]:
    """Ask in a new chat, SIGTERM the server's group once the answer is being written, read the stream to
    its end: (the chat id, the (event, data) lines read, seconds from the signal to the stream's end)."""
    with httpx.Client(base_url=url, timeout=120) as c:
        headers = login_headers(c, user["username"], user["password"])
        chat = c.post("/api/chats", headers=headers, json={"title": "drain"}).json()["id"]
        events: list[tuple[str, str]] = []
        signalled = 0.0
        with c.stream("POST", f"/api/chats/{chat}/messages", headers=headers, json={"question": QUESTION}) as res:
            assert res.status_code == 200
            event = "message"
            try:
                for line in res.iter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        events.append((event, line[5:].strip()))
                        if event == "draft" and not signalled:  # the model is writing: stop the server now
                            os.killpg(proc.proc.pid, signal.SIGTERM)
                            signalled = time.monotonic()
            except httpx.RemoteProtocolError:
                events.append(("cut", ""))  # the connection closed in the middle of the response
        assert signalled, events
        return chat, events, time.monotonic() - signalled


def test_an_answer_in_progress_finishes_within_the_grace(slow_llm, db, serve_home, owner_with_report) -> None:
    proc, url = start(slow_llm, db, serve_home, grace_s=60)
    try:
        refused: list[str] = []

        def knock() -> None:  # once draining, a new connection is not accepted
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not refused:
                try:
                    httpx.get(f"{url}/api/health", timeout=1)
                except httpx.ConnectError as exc:
                    refused.append(type(exc).__name__)
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)

        knocker = threading.Thread(target=knock, daemon=True)
        chat, events, after = 0, [], 0.0
        knocker.start()
        chat, events, after = ask_and_terminate(url, owner_with_report, proc)
        knocker.join(35)
        kinds = [e for e, _ in events]
        assert kinds[-1] == "done", kinds  # the whole answer, not a truncated stream
        assert "cut" not in kinds and after > 2, (kinds, after)  # it ran on for seconds after the signal
        assert FACTS["revenue"] in "".join(d for e, d in events if e in ("token", "done"))
        assert refused, "a new connection was accepted while draining"
        assert proc.proc.wait(60) is not None  # then the process ends by itself
        assert "draining" in proc.text()
    finally:
        proc.stop()
    with db.connection() as conn:
        status, content = conn.execute("select status, content from messages where chat_id = %s and role = 'assistant'",
                                       (chat,)).fetchone()
    assert status == "ok" and FACTS["revenue"] in content


def test_past_the_grace_the_turn_is_saved_to_ask_again(slow_llm, db, serve_home, owner_with_report) -> None:
    proc, url = start(slow_llm, db, serve_home, grace_s=2)
    try:
        chat, events, after = ask_and_terminate(url, owner_with_report, proc)
        assert after < 30, after  # the grace, not the whole answer
        assert proc.proc.wait(60) is not None
    finally:
        proc.stop()
    assert "did not finish within SHUTDOWN_GRACE_S" in proc.text(), proc.text()[-2000:]
    with db.connection() as conn:
        rows = conn.execute("select status, content from messages where chat_id = %s and role = 'assistant'",
                            (chat,)).fetchall()
        logged = conn.execute("select q.status, q.error from query_log q where q.chat_id = %s", (chat,)).fetchall()
    assert rows == [("error", STOPPED)], rows  # one saved turn, the answer saying to ask again
    assert logged == [("error", f"interrupted: {STOPPED}")], logged
