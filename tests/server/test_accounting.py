"""One accounting path: every question's query-log row ends in a final state, whatever happens to it;
and a document deleted while it is ingested cancels its job cleanly."""

from __future__ import annotations

import contextlib
import logging
import time

import httpx
import pytest

from evals.fake_openai import FakeOpenAI
from evals.pdfs import AURORA_TOPICS, long_report
from tests.server.conftest import read_sse, script, signup, upload

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def rows(db, owner_id: int) -> list[tuple[str, str, str | None]]:
    with db.connection() as conn:
        return conn.execute("select source, status, error from query_log where owner_id = %s order by id",
                            (owner_id,)).fetchall()


def settled(db, owner_id: int, count: int, timeout: float = 60) -> list[tuple]:
    """The owner's rows once `count` of them exist and none is running."""
    deadline = time.monotonic() + timeout
    while True:
        now = rows(db, owner_id)
        if len(now) >= count and all(status != "running" for _, status, _ in now):
            return now
        assert time.monotonic() < deadline, now
        time.sleep(0.2)


@pytest.fixture(scope="module")
def slow_model():
    fake = FakeOpenAI(script, delay_s=4.0)
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def slow(start_server, server_settings, parts, slow_model):
    from providers.llm import LLMChain
    from tests.support.settings import make_settings

    chain = LLMChain(make_settings(vllm_base_url=f"{slow_model.url}/v1", vllm_model="fake-model", llm_order="vllm"))
    return start_server(server_settings, parts={**parts, "chain": chain})


class BrokenEmbedder:
    """The graph raises in its first step that embeds (retrieval; the chat's cache lookup)."""

    def __init__(self, real) -> None:
        self.real = real

    def embed_query(self, text: str):
        raise RuntimeError("embedder crashed")

    def __getattr__(self, name: str):  # ingestion still works
        return getattr(self.real, name)


@pytest.fixture(scope="module")
def broken(start_server, server_settings, parts):
    return start_server(server_settings, parts={**parts, "embedder": BrokenEmbedder(parts["embedder"])})


@pytest.mark.parametrize("path", ["/rag/stream", "/rag/stream_events", "/rag/stream_log"])
def test_a_stream_the_client_leaves_ends_cancelled(slow, db, path) -> None:
    with slow.client() as c:
        user = signup(c, "leave")
        owner = c.get("/api/auth/me", headers=user["headers"]).json()["id"]
        with c.stream("POST", path, headers=user["headers"], json={"input": {"question": QUESTION}}) as res:
            assert res.status_code == 200
            next(res.iter_lines())  # the run has started; the client goes away
    assert settled(db, owner, 1) == [("rag", "cancelled", "the client disconnected")]


def test_a_stream_read_to_the_end_ends_ok(live, db) -> None:
    with live.client() as c:
        user = signup(c, "stay")
        owner = c.get("/api/auth/me", headers=user["headers"]).json()["id"]
        for path in ("/rag/stream", "/rag/stream_events", "/rag/stream_log"):
            with c.stream("POST", path, headers=user["headers"], json={"input": {"question": QUESTION}}) as res:
                assert res.status_code == 200 and read_sse(res)[-1][0] == "end"
    assert [(s, st) for s, st, _ in settled(db, owner, 3)] == [("rag", "ok")] * 3


def test_a_graph_that_raises_ends_its_row_as_an_error(broken, db) -> None:
    with broken.client() as c:
        user = signup(c, "crash")
        h = user["headers"]
        owner = c.get("/api/auth/me", headers=h).json()["id"]
        res = c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}})
        assert res.status_code == 500 and "embedder crashed" not in res.text  # no internals to the caller
        # LangServe sends an `error` event, then drops the connection
        lines = []
        with c.stream("POST", "/rag/stream", headers=h, json={"input": {"question": QUESTION}}) as res, \
                contextlib.suppress(httpx.RemoteProtocolError):
            lines.extend(res.iter_lines())
        assert "event: error" in lines, lines
        chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        with c.stream("POST", f"/api/chats/{chat}/messages", headers=h, json={"question": QUESTION}) as res:
            events = read_sse(res)
        assert events[-1][0] == "error", events
        messages = c.get(f"/api/chats/{chat}", headers=h).json()["messages"]
        assert [(m["role"], m["status"]) for m in messages] == [("user", "ok"), ("assistant", "error")]
    got = settled(db, owner, 3)
    assert [(s, st) for s, st, _ in got] == [("rag", "error"), ("rag", "error"), ("chat", "error")]
    assert all("embedder crashed" in (e or "") for _, _, e in got)


def test_a_delete_during_ingestion_cancels_the_job_cleanly(live, db, caplog) -> None:
    pdf = long_report(AURORA_TOPICS, pages_per_topic=25)  # long enough to still be embedding when deleted
    with live.client() as c:
        user = signup(c, "delete")
        h = user["headers"]
        res = upload(c, h, "long.pdf", pdf)
        assert res.status_code == 202, res.text
        doc, job = res.json()["document_id"], res.json()["job_id"]
        caplog.set_level(logging.INFO)
        names: list[str] = []
        deleted = False
        with c.stream("GET", f"/api/jobs/{job}/events", headers=h) as stream:
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    names.append(line[6:].strip())
                if not deleted and line.startswith("data:") and '"embedding"' in line:
                    assert c.delete(f"/api/documents/{doc}", headers=h).status_code == 204
                    deleted = True
        assert deleted and names[-1] == "failed", names  # the follower learns the job is gone
        assert c.get(f"/api/jobs/{job}", headers=h).status_code == 404
        assert c.get("/api/documents", headers=h).json()["documents"] == []
    deadline = time.monotonic() + 60
    while not any("cancelled" in r.getMessage() and job in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "the job did not stop"
        time.sleep(0.2)
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING and job in r.getMessage()]
    assert noisy == [], [r.getMessage() for r in noisy]
    with db.connection() as conn:
        assert conn.execute("select count(*) from child_chunks where document_id = %s", (doc,)).fetchone()[0] == 0
