"""Stop, regenerate and feedback over real HTTP, with the real provider chain streaming from a
slow scripted model server: a stop ends the model's stream on the server (the model server sees
its response cut short), the turn is saved as stopped; a regenerated answer is a new message and
the old one stays; a verdict is stored per answer, shown to admins and exported as JSONL."""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

import pytest

from evals.fake_openai import FakeOpenAI
from tests.server.conftest import (
    follow_job,
    login_headers,
    operator_account,
    read_sse,
    script,
    signup,
    unique_ip,
    upload,
)

ADMIN = f"actions-admin-{uuid.uuid4().hex[:6]}"
LONG = " ".join(f"word{i}" for i in range(200))


def slow_script(kind: str, prompt: str) -> str:
    """The servers' script, with a long answer (200 pieces, each 50 ms apart: ten seconds)."""
    if kind == "answer":
        return script(kind, prompt) + " " + LONG + "."  # the filler a sentence of its own: it names no row
    return script(kind, prompt)


@pytest.fixture(scope="module")
def slow_llm() -> Any:
    fake = FakeOpenAI(slow_script, token_delay_s=0.05)
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def slow_live(start_server, server_settings, parts, slow_llm):
    from providers.llm import LLMChain
    from tests.support.settings import make_settings

    chain = LLMChain(make_settings(vllm_base_url=f"{slow_llm.url}/v1", vllm_model="fake-model", llm_order="vllm"))
    settings = server_settings.model_copy(update={"answer_cache": False, "thotqen_admins": ADMIN})
    return start_server(settings, parts={**parts, "chain": chain})


@pytest.fixture(scope="module")
def chat(slow_live, report_pdf):
    with slow_live.client() as c:
        user = signup(c, "actions")
        res = upload(c, user["headers"], "aurora-report.pdf", report_pdf)
        assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
        chat = c.post("/api/chats", headers=user["headers"], json={"title": "actions"}).json()
        return {**user, "chat_id": chat["id"]}


def test_stop_ends_the_model_call_and_saves_the_turn_as_stopped(slow_live, slow_llm, chat) -> None:
    h, chat_id = chat["headers"], chat["chat_id"]
    events: list[tuple[str, Any]] = []
    with slow_live.client() as c:
        with c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h,
                      json={"question": "What was Aurora Widgets' total revenue in fiscal 2023?"}) as res:
            lines = res.iter_lines()
            tokens = 0
            # stop from another request at the first draft, while the model writes its first sentence: once the
            # next has begun, that sentence is checked and sent (graph/nodes/early.py) and a stop keeps it
            for line in lines:
                if line.startswith("event: draft"):
                    tokens += 1
                    if tokens == 1:
                        stopped_at = time.monotonic()
                        threading.Thread(target=lambda: slow_live.client().post(
                            f"/api/chats/{chat_id}/stop", headers=h).raise_for_status()).start()
                        break
            rest = "\n".join(lines)
        events = read_sse_text(rest)
        took = time.monotonic() - stopped_at
        answer = slow_llm.requests[-1]
        # when the client had its last event, the model had not finished: the stop, not the answer's end, ended it
        assert answer["kind"] == "answer" and not answer["completed"], answer["pieces"]
        cut = answer["pieces"]
        assert events[-1][0] == "stopped", events[-3:]
        final = events[-1][1]
        time.sleep(1.5)  # the model server is not asked again, nor does it go on streaming (30 more pieces if it did)
        assert answer["pieces"] < min(cut + 20, 200) and not answer["completed"], (cut, answer["pieces"])
        assert slow_llm.requests[-1] is answer
        messages = c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"]
        assert messages[-1]["status"] == "stopped" and messages[-1]["id"] == final["message_id"]
        # the stop came while the model wrote: nothing unchecked is shown or kept. What is kept is what the client
        # was sent as checked text: nothing, or the first sentence where its check ended before the stop came (a
        # busy machine's case: the stop is asked for at the first draft, the sentence takes the model 0.3 s), never
        # the long sentence the model was still writing
        shown = "".join(data["token"] for name, data in events if name == "token")
        assert messages[-1]["content"] == shown and "word0" not in shown, (shown, messages[-1]["content"])
        assert bool(messages[-1]["citations"]) == bool(shown), messages[-1]["citations"]
        assert all(set(data) == {"chars"} for name, data in events if name == "draft")
        # the next question is not stopped by the old request; it runs to its end: from its first draft on, the
        # time the stopped answer would have taken (the same question, the same slow model, the machine as busy)
        with c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h,
                      json={"question": "What was Aurora Widgets' total revenue in fiscal 2023?"}) as res:
            first_draft = None
            for line in (lines := res.iter_lines()):
                if line.startswith("event: draft"):
                    first_draft = time.monotonic()
                    break
            assert first_draft is not None
            assert read_sse_text("\n".join(lines))[-1][0] == "done"
            whole = time.monotonic() - first_draft
        assert whole > 200 * slow_llm.token_delay_s / 2, whole  # it did stream the long answer to its end
        assert took < whole / 2, (took, whole)  # the stop: not the ten seconds the whole answer takes
        # a stranger's stop is refused like a missing chat
        stranger = signup(c, "stranger")
        assert c.post(f"/api/chats/{chat_id}/stop", headers=stranger["headers"]).status_code == 404


def admin_headers(c: Any, db: Any) -> dict[str, str]:
    # the operator makes an admin's account: web signup refuses THOTQEN_ADMINS' names (issue 41)
    res = c.post("/api/auth/signup", json={"username": ADMIN, "password": "admin password 1"},
                 headers={"X-Forwarded-For": unique_ip()})
    assert res.status_code == 409, res.text
    operator_account(db, ADMIN, "admin password 1")
    headers = login_headers(c, ADMIN, "admin password 1")
    assert c.get("/api/auth/me", headers=headers).json()["admin"] is True
    return headers


def read_sse_text(text: str) -> list[tuple[str, Any]]:
    events, event, data = [], None, []
    for line in text.split("\n") + [""]:
        if line == "":
            if event or data:
                events.append((event or "message", json.loads("\n".join(data)) if data else None))
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return events


def test_regenerate_adds_an_answer_and_keeps_the_old_one(slow_live, slow_llm, chat) -> None:
    h, chat_id = chat["headers"], chat["chat_id"]
    with slow_live.client() as c:
        with c.stream("POST", f"/api/chats/{chat_id}/messages", headers=h,
                      json={"question": "How many people did Aurora Widgets employ?"}) as res:
            first = read_sse(res)[-1][1]["message_id"]
        before = len(slow_llm.prompts("answer"))
        with c.stream("POST", f"/api/chats/{chat_id}/messages/{first}/regenerate", headers=h) as res:
            assert res.status_code == 200
            done = read_sse(res)[-1]
        assert done[0] == "done" and "5,300" in done[1]["answer"] and done[1]["regenerates"] == first
        assert len(slow_llm.prompts("answer")) == before + 1  # answered again, not from a cache
        # its history is the turns before the question, never the answer it replaces
        assert "5,300 word0" not in slow_llm.prompts("answer")[-1]
        messages = c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"]
        assert [m["id"] for m in messages if m["role"] == "assistant"][-2:] == [first, done[1]["message_id"]]
        assert messages[-2]["role"] == "assistant" and messages[-3]["role"] == "user"
        # only the latest answer can be answered again
        res = c.post(f"/api/chats/{chat_id}/messages/{first}/regenerate", headers=h)
        assert res.status_code == 409 and "latest" in res.json()["detail"]
        res = c.post(f"/api/chats/{chat_id}/messages/{2**63}/regenerate", headers=h)
        assert res.status_code == 422


def test_feedback_is_stored_shown_to_admins_and_exported(slow_live, chat, tmp_path, db) -> None:
    h, chat_id = chat["headers"], chat["chat_id"]
    with slow_live.client() as c:
        messages = c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"]
        answer = next(m for m in reversed(messages) if m["role"] == "assistant" and m["status"] == "ok")
        question = next(m for m in reversed(messages) if m["role"] == "user" and m["id"] < answer["id"])
        url = f"/api/chats/{chat_id}/messages/{answer['id']}/feedback"
        note = "The figure is right but it should say <b>which year</b>"
        res = c.put(url, headers=h, json={"rating": "up"})
        assert res.status_code == 200 and res.json() == {"rating": "up", "note": ""}
        res = c.put(url, headers=h, json={"rating": "down", "note": note})
        assert res.json() == {"rating": "down", "note": note}
        got = next(m for m in c.get(f"/api/chats/{chat_id}", headers=h).json()["messages"] if m["id"] == answer["id"])
        assert got["feedback"] == {"rating": "down", "note": note}
        assert c.put(url, headers=h, json={"rating": "meh"}).status_code == 422
        assert c.put(url, headers=h, json={"rating": "up", "note": "x" * 2001}).status_code == 422
        # a user's own question message takes no verdict
        assert c.put(f"/api/chats/{chat_id}/messages/{question['id']}/feedback", headers=h,
                     json={"rating": "up"}).status_code == 404

        ah = admin_headers(c, db)
        metrics = c.get("/api/admin/metrics?hours=1", headers=ah).json()["feedback"]
        assert metrics["down"] >= 1 and any(n["note"] == note for n in metrics["notes"])

    # `thotqen feedback export`, on this server's database: one JSON line per verdict
    import argparse

    from cli import cmd_feedback_export

    out = tmp_path / "feedback.jsonl"
    args = argparse.Namespace(user=chat["username"], rating="down", output=str(out))
    assert cmd_feedback_export(args, slow_live.app.state.runtime) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["message_id"] for r in rows] == [answer["id"]]
    assert rows[0]["question"] == question["content"] and rows[0]["rating"] == "down" and rows[0]["note"] == note
    assert rows[0]["answer"] == answer["content"] and rows[0]["citations"] and rows[0]["user"] == chat["username"]
    args = argparse.Namespace(user=chat["username"], rating="up", output=str(out))
    assert cmd_feedback_export(args, slow_live.app.state.runtime) == 0 and out.read_text() == ""

    with slow_live.client() as c:
        assert c.delete(url, headers=h).status_code == 204
        assert c.delete(url, headers=h).status_code == 404
