"""Issue 41, what one account may take from everyone: storage (bytes and documents per user, a full
disk answered 507 with nothing left behind), sign-in lockouts a stranger cannot set off against the
owner, and the long-lived streams (MCP's GET, ingestion progress) capped per user and ended when
idle. Each test failed against the code before its fix."""

from __future__ import annotations

import contextlib
import errno
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import pytest

from ingestion import pipeline
from ingestion.errors import QuotaExceeded
from storage import jobs
from tests.server.conftest import LiveServer, follow_job, read_sse, signup, unique_ip, upload

KB = 1024
QUOTA_MB = 50 * KB / (1024 * 1024)  # 50 KB: two files of 20 KB fit, a third does not
ACCOUNT_FAILURES = 6
MCP_STREAMS, MCP_IDLE_S = 3, 2.0
JOB_STREAMS, JOB_IDLE_S = 2, 2.0


@pytest.fixture(scope="module")
def shared(start_server, server_settings) -> LiveServer:
    return start_server(server_settings.model_copy(update={
        "storage_mb_per_user": QUOTA_MB, "documents_per_user": 3,
        "login_account_max_failures": ACCOUNT_FAILURES, "login_account_delay_s": 30.0,
        "mcp_streams_per_user": MCP_STREAMS, "mcp_stream_idle_s": MCP_IDLE_S,
        "job_streams_per_user": JOB_STREAMS, "job_stream_idle_s": JOB_IDLE_S}))


def _text(size: int) -> bytes:
    """A text file of `size` bytes whose content no other upload has."""
    head = f"Notes {uuid.uuid4().hex}.\n".encode()
    body = b"The quarter's revenue was steady. " * (size // 34 + 1)
    return (head + body)[:size]


def chunked(name: str, data: bytes) -> Iterator[bytes]:
    """A multipart body without Content-Length: the quota is only known as it streams."""
    yield f'--b\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'.encode()
    for start in range(0, len(data), 4 * KB):
        yield data[start:start + 4 * KB]
    yield b"\r\n--b--\r\n"


def documents_of(c: httpx.Client, headers: dict[str, str]) -> list[dict[str, Any]]:
    res = c.get("/api/documents", headers=headers)
    assert res.status_code == 200, res.text
    docs: list[dict[str, Any]] = res.json()["documents"]
    return docs


def test_an_accounts_storage_is_a_quota_of_bytes_and_documents(shared: LiveServer, db) -> None:
    """Twelve uploads of 45 MB were kept though every one failed ingestion (541 MB): nothing bounded
    what one account keeps. Now STORAGE_MB_PER_USER and DOCUMENTS_PER_USER, counted in SQL over what
    the user uploaded: past either 413 before the body is kept (by Content-Length, or as a chunked
    body streams), every other account unaffected, and the CLI's path refused the same way."""
    with shared.client() as c:
        user = signup(c, "quota")
        h = user["headers"]
        for name in ("a.txt", "b.txt"):
            assert upload(c, h, name, _text(20 * KB), "text/plain").status_code == 202
        third = upload(c, h, "c.txt", _text(20 * KB), "text/plain")  # by its Content-Length
        assert third.status_code == 413, third.text
        assert "storage quota" in third.json()["detail"] and "STORAGE_MB_PER_USER" in third.json()["detail"]
        form = {**h, "Content-Type": "multipart/form-data; boundary=b"}
        streamed = c.post("/api/documents", headers=form, content=chunked("d.txt", _text(20 * KB)))
        assert streamed.status_code == 413, streamed.text  # refused as it streamed past what is left
        assert [d["name"] for d in documents_of(c, h)] == ["a.txt", "b.txt"]  # nothing of either kept

        assert upload(c, h, "small.txt", _text(KB), "text/plain").status_code == 202  # bytes left: fits
        fourth = upload(c, h, "tiny.txt", _text(KB), "text/plain")
        assert fourth.status_code == 413 and "DOCUMENTS_PER_USER" in fourth.json()["detail"], fourth.text

        other = signup(c, "quota")["headers"]  # another account has its own
        assert upload(c, other, "e.txt", _text(20 * KB), "text/plain").status_code == 202

        first = documents_of(c, h)[0]["id"]  # deleting gives the room back
        assert c.delete(f"/api/documents/{first}", headers=h).status_code == 204
        assert upload(c, h, "f.txt", _text(20 * KB), "text/plain").status_code == 202

        me = c.get("/api/auth/me", headers=h).json()["id"]
    # `thotqen ingest` stores through the same function, under the same bound
    with pytest.raises(QuotaExceeded, match="DOCUMENTS_PER_USER"):
        pipeline.submit_document(db, shared.app.state.settings, owner_id=me, name="g.txt", data=_text(KB))


class _FullDisk:
    """A spool file on a full disk: every write is ENOSPC."""

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def seek(self, offset: int) -> int:
        return 0

    def read(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


def test_a_full_disk_answers_507_and_leaves_nothing_behind(shared: LiveServer, monkeypatch) -> None:
    """With the disk full an upload answered 500 and left `.part` files. Now 507 with Retry-After, no
    partial file and no document row, whether the disk fills while the stored copy is written or
    while the body is received; the same file uploads once there is room again."""
    data = _text(8 * KB)
    with shared.client() as c:
        user = signup(c, "diskfull")
        h = user["headers"]
        me = c.get("/api/auth/me", headers=h).json()["id"]

        def half_then_full(out: BinaryIO, chunk: memoryview) -> None:
            out.write(chunk[: len(chunk) // 2])
            out.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

        with monkeypatch.context() as m:
            m.setattr(pipeline, "write_chunk", half_then_full)
            res = upload(c, h, "full.txt", data, "text/plain")
        assert res.status_code == 507 and int(res.headers["Retry-After"]) >= 1, res.text
        assert "disk is full" in res.json()["detail"]
        folder: Path = shared.app.state.settings.home / "files" / str(me)
        assert not list(folder.glob("*")) if folder.exists() else True  # no .part, no file
        assert documents_of(c, h) == []

        with monkeypatch.context() as m:
            m.setattr("api.routes.documents.tempfile.TemporaryFile", _FullDisk)
            res = upload(c, h, "full.txt", data, "text/plain")
        assert res.status_code == 507, res.text
        assert documents_of(c, h) == []

        again = upload(c, h, "full.txt", data, "text/plain")
        assert again.status_code == 202 and again.json()["reused"] is False, again.text



def _login(c: httpx.Client, username: str, password: str, ip: str) -> httpx.Response:
    return c.post("/api/auth/login", json={"username": username, "password": password},
                  headers={"X-Forwarded-For": ip})


def test_guessing_from_many_addresses_is_slowed_never_the_owners_known_place(shared: LiveServer) -> None:
    """Failures from many addresses (one each, under the per-address lock) used to lock the name for
    everyone after five. Now past LOGIN_ACCOUNT_MAX_FAILURES an address the account never signed in
    from may try once per LOGIN_ACCOUNT_DELAY_S (429 with Retry-After), while the owner signs in
    from a place it signed in from before."""
    with shared.client() as c:
        user = signup(c, "guessed")
        home = unique_ip()
        assert _login(c, user["username"], user["password"], home).status_code == 200  # a known place
        for n in range(ACCOUNT_FAILURES):
            res = _login(c, user["username"], f"guess-{n}", unique_ip())
            assert res.status_code == 401, (n, res.text)
        slowed = _login(c, user["username"], "guess-next", unique_ip())
        assert slowed.status_code == 429 and "one attempt at a time" in slowed.json()["detail"], slowed.text
        assert 0 < int(slowed.headers["Retry-After"]) <= 30
        assert _login(c, user["username"], user["password"], home).status_code == 200


def test_mcp_streams_are_capped_per_user_and_end_when_idle(shared: LiveServer) -> None:
    """One account opened 1,000 `GET /mcp` streams: 997 held, never closed, and half of everyone's
    fresh requests got 503. Now one user holds at most MCP_STREAMS_PER_USER (past it 429 with
    Retry-After, while another user still connects), and a stream with nothing to send ends after
    MCP_STREAM_IDLE_S, its place given back."""
    sse = {"Accept": "text/event-stream"}
    with shared.client() as c:
        mine = {**signup(c, "mcpstream")["headers"], **sse}
        theirs = {**signup(c, "mcpstream")["headers"], **sse}
    with shared.client() as c, contextlib.ExitStack() as held:
        opened = [held.enter_context(c.stream("GET", "/mcp", headers=mine)) for _ in range(MCP_STREAMS)]
        assert [res.status_code for res in opened] == [200] * MCP_STREAMS
        refused = c.get("/mcp", headers=mine, timeout=10)  # before: held open, never answered
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1, refused.text
        assert "MCP streams" in refused.json()["detail"]
        other = held.enter_context(c.stream("GET", "/mcp", headers=theirs))
        assert other.status_code == 200
        started = time.monotonic()
        for res in opened:
            res.read()  # ends: the server closes an idle stream
        assert time.monotonic() - started < MCP_IDLE_S + 10
    with shared.client() as c, c.stream("GET", "/mcp", headers=mine) as again:
        assert again.status_code == 200  # the places were given back


def test_progress_streams_are_capped_per_user_and_end_when_idle(shared: LiveServer, db) -> None:
    """A progress stream of a job that made no progress (queued behind others, or held by a worker
    that stopped) stayed open for good, its slot held and Postgres polled twice a second, with only
    keep-alive pings sent. Now one user holds at most JOB_STREAMS_PER_USER (429 with Retry-After),
    and a stream with no progress for JOB_STREAM_IDLE_S ends with an `idle` event, its slot given back."""
    with shared.client() as c:
        user = signup(c, "jobstream")
        h = user["headers"]
        res = upload(c, h, "held.txt", _text(KB), "text/plain")
        assert res.status_code == 202, res.text
        for _ in range(30):  # a stream ends `idle` while the job waits 2 s without progress: reopen it
            if (last := follow_job(c, h, res.json()["job_id"])[-1][0]) != "idle":
                break
        assert last == "done"
        owner = c.get("/api/auth/me", headers=h).json()["id"]
    with db.connection() as conn:  # a job claimed by a worker that never moves it on
        job_id = jobs.create_job(conn, document_id=uuid.UUID(res.json()["document_id"]), owner_id=owner)
        assert jobs.claim(conn, job_id=job_id, lease_s=3600, max_attempts=3) is not None
    url = f"/api/jobs/{job_id}/events"
    try:
        # a read timeout under the server's 15 s ping: a stream that never ends fails, not hangs
        with shared.client() as c, contextlib.ExitStack() as held:
            opened = [held.enter_context(c.stream("GET", url, headers=h, timeout=httpx.Timeout(30, read=10)))
                      for _ in range(JOB_STREAMS)]
            assert [r.status_code for r in opened] == [200] * JOB_STREAMS
            refused = c.get(url, headers=h, timeout=10)
            assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1, refused.text
            assert f"{JOB_STREAMS} progress streams" in refused.json()["detail"]
            started = time.monotonic()
            for r in opened:
                events = read_sse(r)  # before: never ended while the job stood still
                assert [e for e, _ in events] == ["progress", "idle"], events
                assert events[-1][1]["status"] == "processing" and events[-1][1]["job_id"] == str(job_id)
            assert time.monotonic() - started < JOB_IDLE_S + 10
        with shared.client() as c, c.stream("GET", url, headers=h) as again:
            assert again.status_code == 200  # the slots were given back
    finally:
        with db.connection() as conn:
            jobs.fail_job(conn, job_id=job_id, reason="test over")
