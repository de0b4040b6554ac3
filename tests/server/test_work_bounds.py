"""Issue 26, the cost of a request: page images bounded in pixels, highlight work and time, renders
kept off the threads that authenticate everyone else, per-user caps on renders and progress
streams, /v1's earlier turns bounded as /rag's, and chat lists paged. Each test failed against the
code before its fix."""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pymupdf
import pytest

from answering.bridge import answer_in_thread
from api import drawing
from api.routes import pages
from api.text import MAX
from storage import jobs
from tests.server import slow_render
from tests.server.conftest import LiveServer, follow_job, signup, upload

MAX_PIXELS = 1_000_000
BOUNDS = {"page_render_workers": 1, "page_render_queue": 1, "page_renders_per_user": 2,
          "page_render_timeout_s": 3.0, "page_render_max_pixels": MAX_PIXELS, "job_streams_per_user": 2,
          "chat_page_max": 3, "message_page_max": 4, "upload_mb_per_minute": 0.05}


@pytest.fixture(scope="module")
def bounded(start_server, server_settings) -> LiveServer:
    return start_server(server_settings.model_copy(update=BOUNDS))


def pdf(width: float, height: float, text: str, fontsize: float = 9) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.insert_textbox(pymupdf.Rect(2, 2, width - 2, height - 2), text, fontsize=fontsize)
    return doc.tobytes()


def owner_of(c: httpx.Client, name: str, data: bytes) -> dict[str, Any]:
    user = signup(c, "bounded")
    res = upload(c, user["headers"], name, data)
    assert res.status_code == 202, res.text
    assert follow_job(c, user["headers"], res.json()["job_id"])[-1][0] == "done"
    return {**user, "document_id": res.json()["document_id"],
            "id": c.get("/api/auth/me", headers=user["headers"]).json()["id"]}


@pytest.fixture(scope="module")
def patient(start_server, server_settings) -> LiveServer:
    """As `bounded`, with a render timeout a busy machine's timing fits inside: for a test about which
    renders run, not about when one is given up."""
    return start_server(server_settings.model_copy(update={**BOUNDS, "page_render_timeout_s": 60.0}))


@pytest.fixture(scope="module")
def report_owner(bounded: LiveServer, report_pdf: bytes) -> dict[str, Any]:
    with bounded.client() as c:
        return owner_of(c, "report.pdf", report_pdf)


@pytest.fixture(scope="module")
def small_owner(bounded: LiveServer) -> dict[str, Any]:
    with bounded.client() as c:
        return owner_of(c, "small.pdf", pdf(300, 300, "A small page about Aurora Widgets revenue."))


def test_a_very_tall_narrow_page_is_drawn_within_the_pixel_bound(bounded) -> None:
    words = " ".join(f"Line {n} of a very tall and narrow page about Aurora Widgets." for n in range(60))
    with bounded.client() as c:
        user = owner_of(c, "tall.pdf", pdf(40, 14_400, words, fontsize=3))
        for width in (200, 2000):  # was: 500 at 2000 px (MuPDF refuses the image), 172 MB at 200
            res = c.get(f"/api/documents/{user['document_id']}/pages/1.png", params={"width": width},
                        headers=user["headers"])
            assert res.status_code == 200, (width, res.status_code, res.text[:200])
            image = pymupdf.Pixmap(res.content)
            assert image.width * image.height <= MAX_PIXELS and image.width < width


def test_an_ordinary_page_keeps_the_width_asked(bounded, report_owner) -> None:
    with bounded.client() as c:
        res = c.get(f"/api/documents/{report_owner['document_id']}/pages/1.png", params={"width": 600},
                    headers=report_owner["headers"])
        assert res.status_code == 200 and pymupdf.Pixmap(res.content).width == 600


def test_highlight_matching_is_bounded_however_repetitive_the_page_and_passage() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(page.rect, "a b " * 6000, fontsize=3)  # thousands of words from a vocabulary of two
    assert len(page.get_text("words")) > 8000
    passage = "a b " * 1000  # what the highlight parameter allows (4000 characters)
    started = time.thread_time()  # this thread's CPU time: what the bound is about, and other processes' load
    rects = drawing.passage_rects(page, passage, budget=100_000)  # cannot lengthen it as it does the wall time
    assert time.thread_time() - started < 2.0  # was: tens of seconds of CPU
    assert rects  # the passage's first part is still found
    words = [drawing._norm(w[4]) for w in page.get_text("words")]
    assert drawing.runs(words, passage.split(), budget=100_000)[1] <= 100_000


def test_a_citations_passage_is_highlighted_whole_within_the_budget(report_pdf: bytes) -> None:
    with pymupdf.open(stream=report_pdf) as doc:
        page = doc[0]
        text = " ".join(w[4] for w in page.get_text("words", sort=True)[:150])
        words = [drawing._norm(w[4]) for w in page.get_text("words")]
        wanted = [drawing._norm(w) for w in drawing._WORD.findall(text)]
        assert drawing.comparisons(words, wanted) < 100_000 / 4  # a real passage is far inside the default
        assert len(drawing.passage_rects(page, text, budget=100_000)) >= 3


class Gate:
    """The slow renders' gate (tests/server/slow_render.py: they run in the pool's processes)."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def set(self) -> None:
        (self.where / "open").touch()

    def ran(self) -> list[str]:
        """The passages renders started for, in order."""
        path = self.where / "ran"
        return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def slow_renders(monkeypatch, tmp_path) -> Iterator[Gate]:
    """Renders that wait for the gate (the real drawing after it), recording the passages they ran for."""
    gate = Gate(tmp_path)
    monkeypatch.setattr(pages, "render_page", functools.partial(slow_render.render, str(tmp_path)))
    yield gate
    gate.set()


def ended(pool: Any, within_s: float = 10.0) -> bool:  # api.heavy.Pool
    """Whether the pool is idle with no process running work within `within_s` (the gate stays shut for
    20 s; half that leaves a busy machine its margin): its running render's process was ended, not
    waited for. A process may be left idle: one a call was called off from while it started is kept
    for the next call."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if pool.busy() == 0 and pool.children.running() == 0:
            return True
        time.sleep(0.05)
    return False


def _get(url: str, params: dict[str, Any], headers: dict[str, str], out: dict[str, Any], key: str,
         timeout: float = 120) -> None:  # a busy machine's margin: "left" only where a test means to leave
    try:
        with httpx.Client(timeout=timeout) as c:
            out[key] = c.get(url, params=params, headers=headers)
    except httpx.TimeoutException:
        out[key] = "left"


def test_slow_renders_never_hold_up_sign_in_and_are_capped(bounded, report_owner, small_owner,
                                                             slow_renders) -> None:
    gate = slow_renders
    url = f"{bounded.url}/api/documents/{report_owner['document_id']}/pages/2.png"
    h = report_owner["headers"]
    # as many renders at once as the default thread pool has threads, and one more
    n = min(32, (os.cpu_count() or 1) + 4) + 1
    results: dict[str, Any] = {}
    threads = [threading.Thread(target=_get, args=(url, {"highlight": f"passage {i}"}, h, results, str(i)))
               for i in range(n)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    with bounded.client() as c:
        assert c.get("/api/auth/me", headers=h).status_code == 200
        # answered while the renders were in flight (was: it waited for them to end): none of the admitted ones
        # had yet answered its 503 at PAGE_RENDER_TIMEOUT_S (3 s), the gate being shut
        gave_up = [k for k, r in list(results.items()) if isinstance(r, httpx.Response) and r.status_code == 503]
        assert not gave_up, gave_up
        busy = c.get(f"/api/documents/{small_owner['document_id']}/pages/1.png", headers=small_owner["headers"])
        assert busy.status_code == 503 and int(busy.headers["retry-after"]) >= 1, busy.text  # one running, one waiting
    for t in threads:
        t.join(150)
    statuses = sorted(r.status_code for r in results.values())
    assert statuses.count(429) == n - 2, statuses  # past PAGE_RENDERS_PER_USER
    refused = next(r for r in results.values() if r.status_code == 429)
    assert "2 page renders in progress" in refused.json()["detail"] and refused.headers["retry-after"]
    # the two admitted answer 503 at PAGE_RENDER_TIMEOUT_S: the running one, and the waiting one, which
    # may start in the place the first one's ended process freed if its own deadline has not passed yet;
    # no refused request ever ran
    late = {k: r for k, r in results.items() if r.status_code == 503}
    assert len(late) == 2 and all("longer than 3 s" in r.json()["detail"] for r in late.values())
    assert gate.ran() and set(gate.ran()) <= {f"passage {k}" for k in late}, (gate.ran(), sorted(late))
    # the overdue render's process was ended, not waited for: the pool is free at once, gate still shut
    assert ended(bounded.app.state.renders.pool)
    gate.set()


def test_a_waiting_render_whose_client_left_is_skipped(patient, report_owner, slow_renders) -> None:
    gate = slow_renders
    url = f"{patient.url}/api/documents/{report_owner['document_id']}/pages/3.png"
    h = report_owner["headers"]
    results: dict[str, Any] = {}
    first = threading.Thread(target=_get, args=(url, {"highlight": "first"}, h, results, "first"))
    first.start()
    deadline = time.monotonic() + 60  # the first render has started (polled: a busy machine starts it late)
    while not gate.ran() and time.monotonic() < deadline:
        time.sleep(0.05)
    _get(url, {"highlight": "gone"}, h, results, "gone", timeout=1.0)  # waits behind the first, then leaves
    assert results["gone"] == "left"
    time.sleep(2.0)  # the server notices within POLL_S (ten times that: a busy machine's margin)
    gate.set()
    first.join(150)
    assert results["first"].status_code == 200
    assert gate.ran() == ["first"]
    with patient.client() as c:  # its slot was given back
        again = c.get(url, params={"highlight": "gone"}, headers=h)
        assert again.status_code == 200 and gate.ran() == ["first", "gone"]


def test_a_running_render_whose_client_left_is_ended(bounded, report_owner, slow_renders) -> None:
    gate = slow_renders
    url = f"{bounded.url}/api/documents/{report_owner['document_id']}/pages/4.png"
    h = report_owner["headers"]
    host, port = bounded.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"GET {url.removeprefix(bounded.url)}?highlight=left HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: {h['Authorization']}\r\n\r\n".encode())
        for _ in range(600):  # the render has started in its process (polled: a busy machine starts it late)
            if gate.ran():
                break
            time.sleep(0.1)
        assert gate.ran() == ["left"]
    # the client has gone, the gate still shut
    assert ended(bounded.app.state.renders.pool)  # was: it ran on for the gate's 20 s, holding its place


def test_progress_streams_are_capped_per_user(bounded, report_owner, db) -> None:
    """A job held in processing by a worker that never finishes it keeps its streams open."""
    with db.connection() as conn:
        job_id = jobs.create_job(conn, document_id=uuid.UUID(report_owner["document_id"]),
                                 owner_id=report_owner["id"])
        assert jobs.claim(conn, job_id=job_id, lease_s=3600, max_attempts=3) is not None
    url = f"/api/jobs/{job_id}/events"
    h = report_owner["headers"]
    try:
        with bounded.client() as c, c.stream("GET", url, headers=h) as one, c.stream("GET", url, headers=h) as two:
            assert one.status_code == two.status_code == 200
            third = c.get(url, headers=h, timeout=5)  # was: a third stream, open for good
            assert third.status_code == 429 and "2 progress streams" in third.json()["detail"], third.text
        time.sleep(0.5)  # the closed streams give their slots back
        with bounded.client() as c, c.stream("GET", url, headers=h) as again:
            assert again.status_code == 200
    finally:
        with db.connection() as conn:
            jobs.fail_job(conn, job_id=job_id, reason="test over")


def test_v1_bounds_earlier_turns_as_rag_does(bounded) -> None:
    with bounded.client() as c:
        h = signup(c, "v1turns")["headers"]
        turns = [{"role": ("user", "assistant")[i % 2], "content": f"turn {i}"} for i in range(MAX["history"] + 2)]
        body = {"model": "thotqen", "messages": [*turns, {"role": "user", "content": "And now?"}]}
        res = c.post("/v1/chat/completions", headers=h, json=body)
        assert res.status_code == 400 and "earlier" in res.json()["error"]["message"], res.text
        rag = c.post("/rag/invoke", headers=h, json={"input": {"question": "And now?", "chat_history": turns}})
        assert rag.status_code == 422  # the same bound, in /rag's shape
        long = [{"role": "user", "content": "x" * (MAX["turn"] + 1)}, {"role": "user", "content": "And now?"}]
        res = c.post("/v1/chat/completions", headers=h, json={"model": "thotqen", "messages": long})
        assert res.status_code == 400 and "longer than" in res.json()["error"]["message"], res.text


def test_the_chat_list_is_paged_with_a_cap(bounded) -> None:
    with bounded.client() as c:
        h = signup(c, "pager")["headers"]
        made = [c.post("/api/chats", headers=h, json={"title": f"chat {i}"}).json()["id"] for i in range(5)]
        first = c.get("/api/chats", headers=h).json()
        assert len(first["chats"]) == 3 and first["next_offset"] == 3  # CHAT_PAGE_MAX, the last made first
        assert c.get("/api/chats", params={"limit": 1000}, headers=h).json()["next_offset"] == 3
        rest = c.get("/api/chats", params={"offset": first["next_offset"]}, headers=h).json()
        assert rest["next_offset"] is None
        assert [ch["id"] for ch in first["chats"] + rest["chats"]] == made[::-1]
        two = c.get("/api/chats", params={"limit": 2, "offset": 1}, headers=h).json()
        assert [ch["id"] for ch in two["chats"]] == made[::-1][1:3]
        assert c.get("/api/chats", params={"limit": 0}, headers=h).status_code == 422
        misspelt = c.get("/api/chats", params={"limt": 1}, headers=h)
        assert misspelt.status_code == 422 and misspelt.json()["detail"][0]["loc"] == ["query", "limt"]


def test_a_chats_messages_are_paged_from_the_latest_with_a_cap(bounded, db) -> None:
    """A chat's messages were answered whole, however long the chat: now the latest MESSAGE_PAGE_MAX
    (or `limit`) of them, oldest first within the page, and `next_offset` for the earlier ones."""
    from storage import chats

    with bounded.client() as c:
        h = signup(c, "pager")["headers"]
        chat_id = c.post("/api/chats", headers=h, json={"title": "long"}).json()["id"]
        owner = c.get("/api/auth/me", headers=h).json()["id"]
        with db.connection() as conn:
            made = [chats.add_message(conn, owner_id=owner, chat_id=uuid.UUID(chat_id), role=role, content=f"m{i}")
                    for i, role in enumerate(["user", "assistant"] * 3)]
        first = c.get(f"/api/chats/{chat_id}", headers=h).json()
        assert [m["id"] for m in first["messages"]] == made[2:] and first["next_offset"] == 4  # was: all six
        assert c.get(f"/api/chats/{chat_id}", params={"limit": 1000}, headers=h).json()["next_offset"] == 4
        rest = c.get(f"/api/chats/{chat_id}", params={"offset": 4}, headers=h).json()
        assert [m["id"] for m in rest["messages"]] == made[:2] and rest["next_offset"] is None
        two = c.get(f"/api/chats/{chat_id}", params={"limit": 2, "offset": 1}, headers=h).json()
        assert [m["id"] for m in two["messages"]] == made[3:5] and two["next_offset"] == 3
        assert c.get(f"/api/chats/{chat_id}", params={"limit": 0}, headers=h).status_code == 422
        assert c.get(f"/api/chats/{chat_id}", params={"limt": 1}, headers=h).status_code == 422


def test_a_chats_earlier_page_stays_put_while_the_chat_grows(bounded, db) -> None:
    """The web app loads earlier messages with `before` (the oldest one it shows): an offset would
    shift by the turns asked since the chat opened, and show some twice (before: `before` was an
    unknown parameter, 422)."""
    from storage import chats

    with bounded.client() as c:
        h = signup(c, "before")["headers"]
        chat_id = c.post("/api/chats", headers=h, json={"title": "growing"}).json()["id"]
        owner = c.get("/api/auth/me", headers=h).json()["id"]

        def add(n: int) -> list[int]:
            with db.connection() as conn:
                return [chats.add_message(conn, owner_id=owner, chat_id=uuid.UUID(chat_id),
                                          role=("user", "assistant")[i % 2], content=f"m{i}") for i in range(n)]

        made = add(10)
        first = c.get(f"/api/chats/{chat_id}", headers=h).json()
        assert [m["id"] for m in first["messages"]] == made[6:]
        made += add(2)  # a turn asked after the chat opened
        res = c.get(f"/api/chats/{chat_id}", params={"before": first["messages"][0]["id"]}, headers=h)
        assert res.status_code == 200, res.text
        assert [m["id"] for m in res.json()["messages"]] == made[2:6] and res.json()["next_offset"] == 4
        rest = c.get(f"/api/chats/{chat_id}", params={"before": made[6], "offset": 4}, headers=h).json()
        assert [m["id"] for m in rest["messages"]] == made[:2] and rest["next_offset"] is None
        assert c.get(f"/api/chats/{chat_id}", params={"before": made[0]}, headers=h).json()["messages"] == []
        assert c.get(f"/api/chats/{chat_id}", params={"before": 0}, headers=h).status_code == 422


def test_an_accounts_uploads_are_a_rate_of_megabytes(bounded) -> None:
    """Each upload's body is parsed on the event loop as it streams: UPLOAD_MB_PER_MINUTE bounds what
    one account sends (counted by the body's length, before it is read; a chunked one by what was
    read), past it 429 with Retry-After. Before: every upload was read (the third here was a 415)."""
    limit = bounded.app.state.settings.upload_mb_per_minute
    body = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"x" * int(limit * 1048576 * 0.45)  # refused by its first kilobyte
    with bounded.client() as c:
        h = signup(c, "uprate")["headers"]
        assert upload(c, h, "a.png", body).status_code == 415
        assert upload(c, h, "b.png", body).status_code == 415
        third = upload(c, h, "c.png", body)
        assert third.status_code == 429 and int(third.headers["Retry-After"]) >= 1, third.text
        assert f"at most {limit:g} MB of uploads a minute" in third.json()["detail"]
        other = signup(c, "uprate")["headers"]  # another account has its own
        assert upload(c, other, "d.png", body).status_code == 415

        def chunks():  # no Content-Length: counted by what was read
            yield b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"e.png\"\r\n\r\n"
            yield body
            yield b"\r\n--b--\r\n"

        form = {**signup(c, "uprate")["headers"], "Content-Type": "multipart/form-data; boundary=b"}
        statuses = [c.post("/api/documents", headers=form, content=chunks()).status_code for _ in range(4)]
        assert statuses == [415, 415, 415, 429]  # the window is full once what was read passes the limit


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_background_work_runs_below_the_request_loop(bounded, report_owner) -> None:
    nice = bounded.app.state.settings.background_nice
    assert nice > 0 and _nice(threading.get_native_id()) < nice  # the loop's (and the tests') own
    ingesting = [t for t in threading.enumerate() if t.name.startswith("ingest-")]
    assert ingesting and all(t.native_id is not None and _nice(t.native_id) >= nice for t in ingesting)
    with bounded.client() as c:  # a render leaves its process idle, for the next one
        res = c.get(f"/api/documents/{report_owner['document_id']}/pages/1.png", headers=report_owner["headers"])
        assert res.status_code == 200
    pids = [one.process.pid for one in bounded.app.state.renders.pool.children._idle]
    assert pids and all(_nice(pid) >= nice for pid in pids)

    seen: list[int] = []

    async def answer() -> None:
        events = answer_in_thread(lambda emit: (seen.append(_nice(threading.get_native_id())),
                                                emit("done", {}))[-1],
                                  ticket=cast(Any, None), name="nice-test", nice=nice)
        assert [e async for e, _ in events] == ["done"]

    asyncio.run(answer())
    assert seen == [max(nice, _nice(threading.get_native_id()))]


def test_a_drawing_that_kills_its_process_is_a_422_and_the_next_render_works(bounded, report_owner,
                                                                            monkeypatch) -> None:
    url = f"/api/documents/{report_owner['document_id']}/pages/5.png"
    h = report_owner["headers"]
    with bounded.client() as c:
        monkeypatch.setattr(pages, "render_page", slow_render.crash)
        res = c.get(url, params={"highlight": "crash"}, headers=h)
        assert res.status_code == 422 and "renderer stopped" in res.json()["detail"], res.text
        monkeypatch.undo()
        assert c.get(url, params={"highlight": "after"}, headers=h).status_code == 200  # a fresh process
