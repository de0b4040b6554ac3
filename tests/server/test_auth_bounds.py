"""Issue 26, sign-in under a burst: a token is verified without a queue that one user can fill, and
the question path's heavy parts are built before the server serves (evals/results/burst.md). Each
test failed against the code before its fix."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import jwt
import pytest

from identity.security import ISSUER
from storage import accounts
from tests.server.conftest import LiveServer, signup

POOL_THREADS = 40  # the request pool (anyio's default limiter): FastAPI runs plain `def` code on it

VERIFYING = {"authenticate", "supabase_user", "_current"}


@pytest.fixture
def version_reads(monkeypatch) -> Counter[int]:
    """Reads of a user's token version (what every request used to do), by user id."""
    reads: Counter[int] = Counter()
    real = accounts.token_version

    def counted(conn: Any, user_id: int) -> int | None:
        reads[user_id] += 1
        return real(conn, user_id)

    monkeypatch.setattr(accounts, "token_version", counted)
    return reads


@pytest.fixture
def verifying_threads(monkeypatch) -> list[str]:
    """The token checks sent to a thread (asyncio.to_thread), by the function's name."""
    sent: list[str] = []
    real = asyncio.to_thread

    async def counted(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        name = getattr(fn, "__name__", "")
        if name in VERIFYING:
            sent.append(name)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    from api.verify import Verifier

    real_read = Verifier._current

    def read(self: Verifier, user_id: int) -> int | None:  # the version read, on the verifier's own threads
        sent.append("_current")
        return real_read(self, user_id)

    monkeypatch.setattr(Verifier, "_current", read)
    return sent


def test_a_forged_or_expired_token_never_reaches_a_thread(live: LiveServer, verifying_threads) -> None:
    now = int(time.time())
    forged = jwt.encode({"sub": "1", "typ": "access", "iss": ISSUER, "ver": 0, "exp": now + 600},
                        "not the server's secret, but long enough", algorithm="HS256")
    expired = jwt.encode({"sub": "1", "typ": "access", "iss": ISSUER, "ver": 0, "exp": now - 600},
                         "not the server's secret, but long enough", algorithm="HS256")
    with live.client() as c:
        for token in [forged, expired, "garbage", "a.b.c"] * 5:
            res = c.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
            assert res.status_code == 401, res.text
    assert verifying_threads == []


def test_a_users_burst_reads_their_token_version_once(live: LiveServer, version_reads) -> None:
    with live.client() as c:
        user = signup(c, "burstauth")
        uid = c.get("/api/auth/me", headers=user["headers"]).json()["id"]
    live.app.state.tokens.versions.forget(uid)  # nothing kept: the burst below starts cold
    version_reads.clear()

    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=live.url, timeout=60, headers=user["headers"]) as c:
            return [r.status_code for r in await asyncio.gather(*(c.get("/api/auth/me") for _ in range(30)))]

    assert asyncio.run(burst()) == [200] * 30
    with live.client() as c:  # and the version read is kept for the requests that follow
        assert all(c.get("/api/auth/me", headers=user["headers"]).status_code == 200 for _ in range(10))
    assert version_reads[uid] == 1


def test_kept_versions_are_bounded_and_a_revocation_here_is_seen_at_once() -> None:
    from identity.security import KeptVersions

    kept = KeptVersions(ttl_s=60, entries=3)
    for uid in range(5):
        kept.put(uid, 1, time.monotonic(), kept.stamp())
    assert len(kept) == 3 and kept.get(0) == (False, None) and kept.get(4) == (True, 1)
    stamp = kept.stamp()  # a read starts, the user's tokens are revoked, the read ends
    kept.forget(4)
    kept.put(4, 1, time.monotonic(), stamp)
    assert kept.get(4) == (False, None)
    gone = KeptVersions(ttl_s=0, entries=3)
    gone.put(1, 1, time.monotonic(), gone.stamp())
    assert gone.get(1) == (False, None)
    stale = KeptVersions(ttl_s=1, entries=3)
    stale.put(1, 1, time.monotonic() - 2, stale.stamp())
    assert stale.get(1) == (False, None)


def test_a_reused_refresh_token_revokes_at_once_despite_kept_versions(live: LiveServer) -> None:
    with live.client() as c:
        user = signup(c, "revoked")
        assert c.get("/api/auth/me", headers=user["headers"]).status_code == 200  # its version is kept now
        refresh = user["tokens"]["refresh_token"]
        assert c.post("/api/auth/refresh", json={"refresh_token": refresh}).status_code == 200
        assert c.post("/api/auth/refresh", json={"refresh_token": refresh}).status_code == 401  # reused: leaked
        res = c.get("/api/auth/me", headers=user["headers"])
        assert res.status_code == 401 and "revoked" in res.json()["detail"], res.text


def test_the_server_builds_the_question_paths_models_before_it_serves(start_server, server_settings,
                                                                      parts) -> None:
    from providers.classifiers.injection import InjectionClassifier
    from providers.llm import LLMChain
    from tests.support.settings import make_settings

    guard = InjectionClassifier.load()
    chain = LLMChain(make_settings(vllm_base_url="http://127.0.0.1:9/v1", vllm_model="fake-model", llm_order="vllm"))
    start_server(server_settings, parts={**parts, "guard": guard, "chain": chain})
    assert guard.guardian.loads == 1 and chain.builds == {"vllm": 1}


def test_questions_arriving_together_load_the_guardian_and_build_a_link_once(monkeypatch) -> None:
    from svguardian.model import pure_infer

    from providers.classifiers.injection import Guardian
    from providers.llm import LLMChain
    from providers.llm import chain as chain_module
    from tests.support.settings import make_settings

    calls: Counter[str] = Counter()

    def slow(name: str, value: Any) -> Callable[..., Any]:
        def build(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            time.sleep(0.3)
            return value
        return build

    monkeypatch.setattr(pure_infer.PureGuardian, "load", classmethod(lambda cls, *a, **k: slow("guardian", object())()))
    monkeypatch.setattr(chain_module, "make_chat_model", slow("link", object()))
    guardian = Guardian()
    llm = LLMChain(make_settings(vllm_base_url="http://127.0.0.1:9/v1", vllm_model="fake-model", llm_order="vllm"))
    [spec] = llm.specs
    threads = [threading.Thread(target=guardian.scores, args=("a question",)) for _ in range(8)]
    threads += [threading.Thread(target=llm._chat_model, args=(spec,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert calls == {"guardian": 1, "link": 1}


def test_a_light_request_needs_no_thread_while_the_request_pool_is_full(live: LiveServer, monkeypatch) -> None:
    """Issue 26: FastAPI runs a plain `def` endpoint or dependency on its thread pool (40 threads,
    shared by every request): `GET /api/auth/me` took three hops through it (the settings and
    database dependencies, the endpoint), so with the pool held by other requests it waited for
    them all. Now the dependencies that only read the app's state, and /me itself, are async."""
    release = threading.Event()
    entered: list[int] = []
    returned: list[int] = []
    db = live.app.state.db
    real = db.connection

    def held() -> Any:
        # a slow read by the documents route, holding one of the pool's threads until the test lets go; before
        # the database's own (smaller) pool is asked, so that every request thread is held, not refused a connection
        if sys._getframe(1).f_code.co_name == "list_documents":
            entered.append(1)
            release.wait(120)
            returned.append(1)
        return real()

    monkeypatch.setattr(db, "connection", held)
    with live.client() as c:
        user = signup(c, "pooled")
        assert c.get("/api/auth/me", headers=user["headers"]).status_code == 200  # its token version kept

    def hold() -> None:
        with live.client() as held_client:
            held_client.get("/api/documents", headers=user["headers"], timeout=180)

    holders = [threading.Thread(target=hold) for _ in range(48)]  # more than the pool's 40
    for t in holders:
        t.start()
    try:
        # every thread of the pool waits in `held` (polled, not slept: on a busy machine the requests come late)
        deadline = time.monotonic() + 60
        while len(entered) < POOL_THREADS and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(entered) >= POOL_THREADS, len(entered)
        with live.client() as c:
            res = c.get("/api/auth/me", headers=user["headers"], timeout=60)
        # answered while the pool was still full, none of its reads let go (was: only once the pool freed up)
        assert res.status_code == 200 and not returned, (res.status_code, len(returned))
    finally:
        release.set()
        for t in holders:
            t.join(60)


def test_a_token_sent_again_is_not_decoded_again(live: LiveServer, monkeypatch) -> None:
    """Issue 26: every request decoded its token twice (its issuer, then its signature and claims):
    an eighth of the event loop's time under the burst. A token checked once is kept (bounded)."""
    from identity import security

    decodes: list[int] = []
    real = security.jwt.decode

    def counted(*args: Any, **kwargs: Any) -> Any:
        decodes.append(1)
        return real(*args, **kwargs)

    with live.client() as c:
        user = signup(c, "decoded")
        monkeypatch.setattr(security.jwt, "decode", counted)
        for _ in range(20):
            assert c.get("/api/auth/me", headers=user["headers"]).status_code == 200
    assert len(decodes) <= 2, len(decodes)  # was: 40


def test_a_token_version_read_never_queues_behind_the_default_pool(live: LiveServer) -> None:
    """Issue 26: the read of a user's token version (once per user per TOKEN_VERSION_TTL_S) ran on
    asyncio's default pool, behind whatever else queued there (progress streams' polls, /rag's
    admissions); under the burst it was the tail of `GET /api/auth/me`. It has threads of its own."""
    loop = live.server.servers[0].get_loop()
    release = threading.Event()
    entered: list[int] = []
    returned: list[int] = []

    def wait() -> None:
        entered.append(1)
        release.wait(120)
        returned.append(1)

    async def hold() -> None:
        await asyncio.get_running_loop().run_in_executor(None, wait)

    held = [asyncio.run_coroutine_threadsafe(hold(), loop) for _ in range(40)]  # past the pool's threads
    try:
        # every thread of asyncio's default pool (min(32, CPUs + 4)) waits (polled: a busy machine starts them late)
        threads = min(32, (os.cpu_count() or 1) + 4)
        deadline = time.monotonic() + 60
        while len(entered) < threads and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(entered) >= threads, len(entered)
        with live.client() as c:
            user = signup(c, "queued")  # no version of theirs is kept yet: this request reads it
            res = c.get("/api/auth/me", headers=user["headers"], timeout=60)
        # answered while the default pool was still full, none of its waits let go (was: only once it freed up)
        assert res.status_code == 200 and not returned, (res.status_code, len(returned))
    finally:
        release.set()
        for future in held:
            future.result(30)
