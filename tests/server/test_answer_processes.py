"""Issue 26: the graph's runs in answer processes of their own (answering/processes.py), apart
from the interpreter whose event loop authenticates everyone: a server with its real runtime (no
handed parts, so ANSWER_PROCESSES applies), the provider chain pointed at a slow scripted model
server. Streaming, a stop, a crash mid-answer, /rag's invoke and the waiting list's 503, each
through the process. Before answering/processes.py every run was a thread of the server process
(these fail: `app.state.answers` did not exist). /rag's three streams went on running in the
server after that (the stream tests here failed: no run reached the process, a full server
streamed anyway)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from evals.fake_openai import FakeOpenAI
from tests.server.conftest import FACTS, read_sse
from tests.server.scrape import scraped
from tests.server.test_accounting import settled
from tests.server.test_chat_actions import LONG, read_sse_text
from tests.support.answer_processes import answer_process_settings, report_owner, slow_model

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    yield from slow_model()


@pytest.fixture(scope="module")
def served(start_server, db, model):
    return start_server(answer_process_settings(db.uri, model, answer_queue=0), parts={})


@pytest.fixture(scope="module")
def owner(served, report_pdf):
    user = report_owner(served, "procs", report_pdf)
    with served.client() as c:
        chat = c.post("/api/chats", headers=user["headers"], json={"title": "procs"}).json()
    return {**user, "chat_id": chat["id"]}


def _pid(served) -> int:
    [pid] = served.app.state.answers.pids()
    return pid


def test_answers_stream_from_a_process_below_the_request_loop(served, owner, model) -> None:
    answers = served.app.state.answers
    pid = _pid(served)
    assert pid != os.getpid()
    assert os.getpriority(os.PRIO_PROCESS, pid) >= served.app.state.settings.background_nice
    with served.client() as c:
        with c.stream("POST", f"/api/chats/{owner['chat_id']}/messages", headers=owner["headers"],
                      json={"question": QUESTION}) as res:
            events = read_sse(res)
        kinds = [e for e, _ in events]
        assert kinds[-1] == "done" and "sources" in kinds and "token" in kinds, kinds
        assert FACTS["revenue"] in events[-1][1]["answer"], events[-1][1]
        assert next(answers._ids) > 1  # the run went to the process
        res = c.post("/rag/invoke", headers=owner["headers"], json={"input": {"question": QUESTION}})
        assert res.status_code == 200, res.text
        out = res.json()["output"]
        assert FACTS["revenue"] in out["answer"] and out["citations"][0]["document_id"] == owner["document_id"]
        v1 = c.post("/v1/chat/completions", headers=owner["headers"],
                    json={"model": "thotqen", "messages": [{"role": "user", "content": QUESTION}]})
        assert v1.status_code == 200 and FACTS["revenue"] in v1.json()["choices"][0]["message"]["content"]
    assert _pid(served) == pid  # one process, kept


def test_the_runs_llm_and_node_series_reach_the_servers_metrics(served, owner, model) -> None:
    # the LLM calls and the nodes run in the answer process, whose registry nobody scrapes: before
    # the observations came back over its socket, these stayed as they were (one server process, no
    # PROMETHEUS_MULTIPROC_DIR)
    series = {"attempts": ("thotqen_llm_link_attempts_total", {"provider": "vllm", "outcome": "ok"}),
              "seconds": ("thotqen_llm_link_duration_seconds_count", {"provider": "vllm", "outcome": "ok"}),
              "input": ("thotqen_llm_tokens_total", {"provider": "vllm", "direction": "input"}),
              "output": ("thotqen_llm_tokens_total", {"provider": "vllm", "direction": "output"}),
              "per_call": ("thotqen_llm_call_tokens_count", {"provider": "vllm", "direction": "output"}),
              "generate": ("thotqen_graph_node_duration_seconds_count", {"node": "generate"}),
              "retrieve": ("thotqen_graph_node_duration_seconds_count", {"node": "retrieve"})}
    with served.client() as c:
        before = {key: scraped(c, name, **labels) for key, (name, labels) in series.items()}
        res = c.post("/rag/invoke", headers=owner["headers"], json={"input": {"question": QUESTION}})
        assert res.status_code == 200, res.text
        after = {key: scraped(c, name, **labels) for key, (name, labels) in series.items()}
    grown = {key for key in series if after[key] > before[key]}
    assert grown == set(series), (before, after)
    assert after["attempts"] - before["attempts"] >= 2  # the grade and the answer at least
    assert after["seconds"] - before["seconds"] == after["attempts"] - before["attempts"]


def test_a_stop_reaches_the_run_in_its_process(served, owner, model) -> None:
    h, chat_id = owner["headers"], owner["chat_id"]
    model.token_delay_s = 0.05  # the answer's 200 pieces take ten seconds
    try:
        with served.client() as c:
            with c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h, json={"question": QUESTION}) as res:
                lines = res.iter_lines()
                drafts = 0
                for line in lines:
                    if line.startswith("event: draft"):
                        drafts += 1
                        if drafts == 5:
                            stopped_at = time.monotonic()
                            answer = next(r for r in reversed(model.requests) if r["kind"] == "answer")
                            at_stop = answer["pieces"]
                            threading.Thread(target=lambda: served.client().post(
                                f"/api/chats/{chat_id}/stop", headers=h).raise_for_status()).start()
                            break
                events = read_sse_text("\n".join(lines))
            took = time.monotonic() - stopped_at
            assert events[-1][0] == "stopped", events[-3:]
            # the stop, not the answer's end, ended it: when the client had "stopped" the model had not finished,
            # and the rest of its answer would have taken longer than the stop did (its pieces' delays: a floor
            # that a busy machine only lengthens)
            assert not answer["completed"], answer["pieces"]
            rest_s = (len(LONG.split()) - at_stop) * model.token_delay_s
            assert took < rest_s, (took, rest_s, at_stop)
            messages = c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"]
            assert messages[-1]["status"] == "stopped" and len(messages[-1]["content"]) < len(LONG)
    finally:
        model.token_delay_s = 0.0


def test_a_full_server_answers_503_and_a_crash_mid_answer_is_saved_as_an_error(served, owner, model) -> None:
    h, chat_id = owner["headers"], owner["chat_id"]
    answers = served.app.state.answers
    pid = _pid(served)
    model.token_delay_s = 0.05
    try:
        with served.client() as c:
            with c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h, json={"question": QUESTION}) as res:
                lines = res.iter_lines()
                for line in lines:
                    if line.startswith("event: draft"):
                        break
                # ANSWERS_PER_PROCESS (1) runs and ANSWER_QUEUE (0) waiting: the next question is refused
                other = c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}})
                assert other.status_code == 503 and int(other.headers["Retry-After"]) >= 1, other.text
                for path in ("/rag/stream", "/rag/stream_log", "/rag/stream_events"):  # before the stream starts
                    other = c.post(path, headers=h, json={"input": {"question": QUESTION}})
                    assert other.status_code == 503 and int(other.headers["Retry-After"]) >= 1, (path, other.text)
                busy = c.post(f"/api/chats/{chat_id}/messages", headers=h, json={"question": QUESTION})
                assert busy.status_code == 503, busy.text
                os.kill(pid, 9)  # the process dies mid-answer
                events = read_sse_text("\n".join(lines))
            assert events[-1][0] == "error", events[-3:]
            messages = c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"]
            assert messages[-1]["role"] == "assistant" and messages[-1]["status"] == "error"
    finally:
        model.token_delay_s = 0.0
    assert answers._running == 0  # its place was given back
    with served.client() as c, c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h,
                                        json={"question": QUESTION}) as res:
        assert read_sse(res)[-1][0] == "done"  # a fresh process answers the next one
    assert _pid(served) != pid


def test_rag_streams_run_in_the_process_in_langserves_formats(served, owner, db) -> None:
    """/rag/stream, /rag/stream_log and /rag/stream_events each run the graph in the answer process,
    and LangServe's own client (RemoteRunnable) reads each as it reads a run in the server."""
    import asyncio

    from langchain_core.tracers.log_stream import RunLog
    from langserve import RemoteRunnable

    answers = served.app.state.answers
    remote = RemoteRunnable(f"{served.url}/rag", headers=owner["headers"], timeout=120)
    before = next(answers._ids)
    chunks = list(remote.stream({"question": QUESTION}))
    assert any(FACTS["revenue"] in str(chunk) for chunk in chunks), chunks

    async def log_and_events() -> tuple[RunLog, list[dict[str, Any]]]:
        log = None
        async for patch in remote.astream_log({"question": QUESTION}):
            log = patch if log is None else log + patch
        events = [e async for e in remote.astream_events({"question": QUESTION}, version="v2")]
        return log, events

    log, events = asyncio.run(log_and_events())
    # the log's final output: the graph's node updates, merged (its default stream mode)
    assert isinstance(log, RunLog) and FACTS["revenue"] in str(log.state["final_output"]), log
    assert {"retrieve", "generate"} <= set(log.state["logs"]), sorted(log.state["logs"])
    started = {e["name"] for e in events if e["event"] == "on_chain_start"}
    assert {"guardrail", "retrieve", "generate"} <= started, started
    assert any(e["event"] == "on_chat_model_stream" for e in events)
    assert FACTS["revenue"] in events[-1]["data"]["output"]["answer"]
    assert next(answers._ids) == before + 4  # each of the three was a run in the process
    owner_id = served.client().get("/api/auth/me", headers=owner["headers"]).json()["id"]
    assert [(s, st) for s, st, _ in settled(db, owner_id, 3)[-3:]] == [("rag", "ok")] * 3


def test_a_rag_stream_the_client_leaves_stops_its_run_in_the_process(served, owner, model, db) -> None:
    answers = served.app.state.answers
    model.token_delay_s = 0.05  # the answer's 200 pieces take ten seconds
    try:
        with served.client() as c, c.stream("POST", "/rag/stream_events", headers=owner["headers"],
                                             json={"input": {"question": QUESTION}}) as res:
            assert res.status_code == 200
            for line in res.iter_lines():
                if "on_chat_model_stream" in line:  # the model is writing
                    break
            assert answers._running == 1  # the run holds the process's place
            left = time.monotonic()
        # polled up to the whole answer's time (its 200 pieces' delays): a run that went on would still be running
        whole_s = len(LONG.split()) * model.token_delay_s
        while answers._running and time.monotonic() - left < whole_s:
            time.sleep(0.05)
        assert answers._running == 0, "the run went on after its client left"
        answer = next(r for r in reversed(model.requests) if r["stream"])  # the streamed answer, however tagged
        assert not answer["completed"], answer["pieces"]  # the model's stream was cut, not run to its end
        owner_id = served.client().get("/api/auth/me", headers=owner["headers"]).json()["id"]
        assert settled(db, owner_id, 1)[-1] == ("rag", "cancelled", "the client disconnected")
    finally:
        model.token_delay_s = 0.0


def test_a_dead_answer_process_is_not_ready_until_it_is_started_again(served) -> None:
    """/api/ready (api/routes/ready.py): a crashed answer process makes the server not ready, and the probe
    starts it again (no question would come to do so while the probe keeps traffic away)."""
    import signal
    import time

    with served.client() as c:
        assert c.get("/api/ready").json()["checks"]["answer_processes"] == "ok"
        pid = _pid(served)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pid in served.app.state.answers.pids():
            assert time.monotonic() < deadline
            time.sleep(0.1)
        res = c.get("/api/ready")
        assert res.status_code == 503 and res.json()["status"] == "not ready", res.text
        assert res.json()["checks"]["answer_processes"] == "0 of 1 running; starting again"
        deadline = time.monotonic() + 180  # the probe started it again: it loads its models first
        while (res := c.get("/api/ready")).status_code != 200:
            assert time.monotonic() < deadline, res.json()
            time.sleep(0.5)
        assert _pid(served) != pid
