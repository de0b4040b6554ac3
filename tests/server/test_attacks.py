"""The attacks of issue 17's table, one test per row: each failed against the code before its fix.

Row 1: NUL in stored text. Row 2: NUL in a chat question. Row 3: /rag/batch past the hourly limit.
Row 4: an oversized /rag question. Row 5: a malformed document id in /rag. Row 6: an upper-case
document id. Row 7: concurrent identical uploads. Row 8: X-Forwarded-For from an untrusted peer.
Plus the notes: refresh-token reuse revokes access tokens, identity in the /rag body is refused.
"""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from evals import pdfs
from tests.server.conftest import signup, unique_ip, upload

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def log_rows(db, owner_id: int) -> list[tuple[str, str]]:
    with db.connection() as conn:
        return conn.execute("select source, status from query_log where owner_id = %s order by id",
                            (owner_id,)).fetchall()


def user_id(client, headers) -> int:
    return client.get("/api/auth/me", headers=headers).json()["id"]


def send(client, method: str, path: str, body: object, headers: dict | None = None):
    """JSON with non-ASCII escaped (\\u0000, \\ud800), as an attacker's client would send it."""
    return client.request(method, path, content=json.dumps(body).encode(),
                          headers={**(headers or {}), "Content-Type": "application/json"})


# ------------------------------------------------------------------ row 1


@pytest.mark.parametrize("bad", ["a\u0000b", "lone \ud800 surrogate"])
def test_row1_unstorable_text_is_422_naming_the_field(live, bad) -> None:
    with live.client() as c:
        user = signup(c, "nul")
        h = user["headers"]
        res = send(c, "POST", "/api/chats", {"title": bad}, h)
        assert res.status_code == 422 and "title" in res.text, res.text
        chat = c.post("/api/chats", headers=h, json={"title": "fine"}).json()["id"]
        res = send(c, "PATCH", f"/api/chats/{chat}", {"title": bad}, h)
        assert res.status_code == 422 and "title" in res.text, res.text
        res = send(c, "POST", "/api/auth/login", {"username": bad, "password": "whatever-pass"},
                   {"X-Forwarded-For": unique_ip()})
        assert res.status_code == 422 and "username" in res.text, res.text
        res = send(c, "POST", "/rag/invoke", {"input": {"question": bad}}, h)
        assert res.status_code == 422 and "question" in res.text, res.text
        # the same keep-alive connection still answers, and the chat kept its title
        assert c.get(f"/api/chats/{chat}", headers=h).json()["title"] == "fine"


# ------------------------------------------------------------------ row 2


def test_row2_nul_in_a_chat_question_is_refused_and_nothing_stays_running(live, db) -> None:
    with live.client() as c:
        user = signup(c, "nulq")
        h = user["headers"]
        chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        res = send(c, "POST", f"/api/chats/{chat}/messages", {"question": "Revenue\u0000?"}, h)
        assert res.status_code == 422 and "question" in res.text, res.text
        assert c.get(f"/api/chats/{chat}", headers=h).json()["messages"] == []
        assert [s for _, s in log_rows(db, user_id(c, h))] == []  # refused before it counted


# ------------------------------------------------------------------ row 3


@pytest.fixture(scope="module")
def limited(start_server, server_settings):
    return start_server(server_settings.model_copy(update={"questions_per_hour": 3}))


def test_row3_batch_inputs_are_counted_and_limited_like_invoke(limited, db) -> None:
    with limited.client() as c:
        user = signup(c, "batch")
        h = user["headers"]
        owner = user_id(c, h)
        res = c.post("/rag/batch", headers=h, json={"inputs": [{"question": QUESTION}] * 12})
        assert res.status_code == 429 and int(res.headers["Retry-After"]) > 0, res.text
        assert log_rows(db, owner) == []  # refused whole: nothing ran, nothing counted
        res = c.post("/rag/batch", headers=h, json={"inputs": [{"question": QUESTION}] * 2})
        assert res.status_code == 200, res.text
        assert log_rows(db, owner) == [("rag", "ok"), ("rag", "ok")]
        assert c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}}).status_code == 200
        assert c.post("/rag/invoke", headers=h, json={"input": {"question": QUESTION}}).status_code == 429
        res = c.post("/rag/batch", headers=h, json={"inputs": [{"question": QUESTION}]})
        assert res.status_code == 429
        assert log_rows(db, owner) == [("rag", "ok")] * 3


# ------------------------------------------------------------------ rows 4 and 5


def test_row4_an_oversized_rag_question_is_422(live, db) -> None:
    with live.client() as c:
        user = signup(c, "long")
        for path, body in [("/rag/invoke", {"input": {"question": "x" * 100_000}}),
                           ("/rag/batch", {"inputs": [{"question": "ok?"}, {"question": "x" * 100_000}]}),
                           ("/rag/stream", {"input": {"question": "x" * 100_000}})]:
            res = c.post(path, headers=user["headers"], json=body)
            assert res.status_code == 422 and "question" in res.text, (path, res.status_code, res.text[:300])
        assert log_rows(db, user_id(c, user["headers"])) == []


def test_a_batch_whose_configs_do_not_match_its_inputs_is_a_documented_422(live) -> None:
    # LangServe refuses it with a plain-string detail; the OpenAPI document promises a list of errors
    with live.client() as c:
        user = signup(c, "configs")
        res = c.post("/rag/batch", headers=user["headers"], json={"inputs": [{"question": "ok?"}] * 2, "config": []})
        assert res.status_code == 422, res.text
        [error] = res.json()["detail"]
        assert error["loc"] == ["body"] and "Number of configs (0)" in error["msg"]


@pytest.mark.parametrize("ids", [["not-a-uuid"], ["12345"], [7], "not-a-list"])
def test_row5_a_malformed_document_id_in_rag_is_422(live, ids) -> None:
    with live.client() as c:
        user = signup(c, "ids")
        res = c.post("/rag/invoke", headers=user["headers"], json={"input": {"question": QUESTION,
                                                                             "document_ids": ids}})
        assert res.status_code == 422 and "document_ids" in res.text, res.text


# ------------------------------------------------------------------ row 6


def test_row6_an_upper_case_document_id_is_the_same_document(live, owner_with_report) -> None:
    h = owner_with_report["headers"]
    doc = owner_with_report["document_id"]
    with live.client() as c:
        res = c.post("/api/chats", headers=h, json={"document_ids": [doc.upper()]})
        assert res.status_code == 201, res.text
        assert res.json()["document_ids"] == [doc]
        chat = res.json()["id"]
        res = c.patch(f"/api/chats/{chat}", headers=h, json={"document_ids": [doc.upper(), doc]})
        assert res.status_code == 200 and res.json()["document_ids"] == [doc], res.text
        assert c.get(f"/api/documents/{doc.upper()}", headers=h).json()["id"] == doc
        assert c.get(f"/api/chats/{chat.upper()}", headers=h).json()["id"] == chat


# ------------------------------------------------------------------ row 7


def test_row7_concurrent_identical_uploads_share_one_document(live) -> None:
    with live.client() as c:
        user = signup(c, "race")

    def post(i: int, data: bytes, barrier: threading.Barrier, results: list) -> None:
        with live.client() as c:
            barrier.wait()
            results[i] = upload(c, user["headers"], f"race-{i}.pdf", data)

    racers = 2  # UPLOADS_PER_USER's default: more at once from one user are a 429 (tests/server/test_open_bounds.py)
    for round_ in range(3):
        data = pdfs.text_pdf([f"Race round {round_} {uuid.uuid4().hex}: revenue was 9 million."])
        results: list = [None] * racers
        barrier = threading.Barrier(racers)
        threads = [threading.Thread(target=post, args=(i, data, barrier, results)) for i in range(racers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [r.status_code for r in results] == [202] * racers, [r.text for r in results]
        assert len({r.json()["document_id"] for r in results}) == 1
    with live.client() as c:
        assert len(c.get("/api/documents", headers=user["headers"]).json()["documents"]) == 3


# ------------------------------------------------------------------ row 8


@pytest.fixture(scope="module")
def direct(start_server, server_settings):
    """A server reached directly (no proxy configured, the default): X-Forwarded-For is not trusted."""
    return start_server(server_settings.model_copy(update={"login_ip_limit": 4, "forwarded_allow_ips": ""}))


def test_row8_forwarded_headers_from_an_untrusted_peer_do_not_reset_the_ip_limit(direct) -> None:
    # every test server is reached from 127.0.0.1: attempts other tests made from it (the fuzzer's
    # signups) would count against this one's limit of four
    with direct.app.state.db.connection() as conn:
        conn.execute("delete from login_attempts where ip = '127.0.0.1'")
    with direct.client() as c:
        codes = [c.post("/api/auth/signup", json={"username": f"fwd-{uuid.uuid4().hex[:8]}", "password": "x" * 12},
                        headers={"X-Forwarded-For": unique_ip()}).status_code for _ in range(6)]
    assert codes == [201] * 4 + [429] * 2


def test_forwarded_headers_from_a_configured_proxy_are_used(live) -> None:
    # the shared test server is configured with 127.0.0.1 as its proxy (every other test relies on it)
    assert live.app.state.settings.gateway.forwarded_allow_ips == "127.0.0.1"
    ip = unique_ip()
    with live.client() as c:
        res = c.post("/api/auth/login", json={"username": "nobody-here", "password": "wrong-pass"},
                     headers={"X-Forwarded-For": ip})
        assert res.status_code == 401
    db = live.app.state.db
    with db.connection() as conn:
        assert conn.execute("select count(*) from login_attempts where ip = %s", (ip,)).fetchone()[0] == 1


# ------------------------------------------------------------------ notes


def test_refresh_token_reuse_revokes_the_access_tokens_too(live) -> None:
    with live.client() as c:
        user = signup(c, "reuse")
        first = user["tokens"]
        second = c.post("/api/auth/refresh", json={"refresh_token": first["refresh_token"]}).json()
        for tokens in (first, second):
            assert c.get("/api/auth/me", headers={"Authorization": f"Bearer {tokens['access_token']}"}).is_success
        # the spent refresh token comes back: it leaked, so everything issued so far is revoked
        assert c.post("/api/auth/refresh", json={"refresh_token": first["refresh_token"]}).status_code == 401
        for tokens in (first, second):
            res = c.get("/api/documents", headers={"Authorization": f"Bearer {tokens['access_token']}"})
            assert res.status_code == 401 and "revoked" in res.json()["detail"], res.text
        # logging in again works, and other users are untouched
        res = c.post("/api/auth/login", json={"username": user["username"], "password": user["password"]},
                     headers={"X-Forwarded-For": unique_ip()})
        assert c.get("/api/auth/me", headers={"Authorization": f"Bearer {res.json()['access_token']}"}).is_success


@pytest.mark.parametrize("extra", [{"owner_id": 1}, {"user": "root-admin"}, {"user_id": 1}, {"owner": "x"}])
def test_identity_in_the_rag_body_is_422(live, extra) -> None:
    with live.client() as c:
        user = signup(c, "ident")
        res = c.post("/rag/invoke", headers=user["headers"], json={"input": {"question": QUESTION, **extra}})
        assert res.status_code == 422 and next(iter(extra)) in res.text, res.text


def test_the_openai_endpoint_follows_the_same_text_rules(live, db) -> None:
    with live.client() as c:
        user = signup(c, "v1nul")
        h = user["headers"]
        res = send(c, "POST", "/v1/chat/completions",
                   {"model": "thotqen", "messages": [{"role": "user", "content": "Revenue\u0000?"}]}, h)
        assert res.status_code == 400 and "NUL" in res.text, res.text
        res = send(c, "POST", "/v1/chat/completions", {"model": "thotqen", "document_ids": ["not-a-uuid"],
                                                       "messages": [{"role": "user", "content": "Revenue?"}]}, h)
        assert res.status_code in (400, 422) and "document_ids" in res.text, res.text
        assert log_rows(db, user_id(c, h)) == []
