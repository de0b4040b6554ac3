"""Issue 26: bounded work for every request. Each test asserts a bound (a status, a size, a time)
under the attack that broke it, and failed against the code before its fix."""

from __future__ import annotations

import json
import os
import random
import socket
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.server.conftest import LiveServer, signup, unique_ip

DEEP = b"[" * 50_000 + b"]" * 50_000


@pytest.fixture(scope="module")
def edge(start_server, server_settings) -> LiveServer:
    return start_server(server_settings.model_copy(update={"request_max_kb": 64, "body_read_timeout_s": 1.0}))


@pytest.mark.parametrize("path", ["/api/auth/signup", "/api/auth/login", "/rag/invoke", "/rag/batch",
                                  "/v1/chat/completions", "/api/chats"])
def test_deeply_nested_json_is_400_before_authentication(edge, path) -> None:
    with edge.client() as c:
        nested = b'{"username": ' + b"[" * 5000 + b"]" * 5000 + b', "password": "x"}'
        for body in (DEEP[:20_000] + DEEP[-20_000:], nested):
            res = c.post(path, content=body, headers={"Content-Type": "application/json",
                                                      "X-Forwarded-For": unique_ip()})
            assert res.status_code == 400, (path, res.status_code, res.text[:300])
            assert "nests deeper" in res.json()["detail"]


@pytest.mark.parametrize("path", ["/api/auth/login", "/rag/invoke", "/api/chats"])
def test_json_with_too_many_arrays_is_400_before_it_is_parsed(edge, path) -> None:
    """Each array and object is built on the event loop: a body of tens of thousands held it."""
    settings = edge.app.state.settings  # the route's cap: a conversation's, or FORM_MAX_CONTAINERS
    limit = settings.bodies.json_max_containers if path.startswith("/rag/") else settings.bodies.form_max_containers
    body = b'{"title": "t", "pad": [' + b",".join([b"[[]]"] * (limit // 2 + 1)) + b"]}"
    with edge.client() as c:
        res = c.post(path, content=body, headers={"Content-Type": "application/json", "X-Forwarded-For": unique_ip()})
        assert res.status_code == 400, (path, res.status_code, res.text[:300])  # was: 201 on /api/chats
        assert f"more than {limit} arrays and objects" in res.json()["detail"]
        fits = b'{"title": "t", "pad": [' + b",".join([b"[]"] * (limit - 2)) + b"]}"
        res = c.post(path, content=fits, headers={"Content-Type": "application/json", "X-Forwarded-For": unique_ip()})
        assert "arrays and objects" not in res.text  # at the cap: the route sees it


def test_a_form_body_holds_far_fewer_arrays_than_a_conversation(edge) -> None:
    """Every route but /rag and /v1 takes FORM_MAX_CONTAINERS arrays and objects (their largest real
    body holds a handful): the conversations' JSON_MAX_CONTAINERS, decoded on the event loop, was the
    largest share of its samples under the burst. Before: such a body reached the route (401 here)."""
    settings = edge.app.state.settings
    limit = settings.bodies.form_max_containers
    assert limit < settings.bodies.json_max_containers
    body = b'{"title": "t", "pad": [' + b",".join([b"[]"] * limit) + b"]}"
    with edge.client() as c:
        res = c.post("/api/chats", content=body, headers={"Content-Type": "application/json"})
        assert res.status_code == 400 and f"more than {limit} arrays and objects" in res.json()["detail"], res.text
        res = c.post("/rag/invoke", content=body, headers={"Content-Type": "application/json"})
        assert res.status_code == 401 and "arrays and objects" not in res.text  # a conversation's cap is higher
        fits = b'{"title": "t", "pad": [' + b",".join([b"[]"] * (limit - 2)) + b"]}"
        res = c.post("/api/chats", content=fits, headers={"Content-Type": "application/json"})
        assert res.status_code == 401  # at the cap: the route sees it


LONG_NUMBER = b"1" * 5000  # past Python's int-string conversion limit (4300 digits)
PAGE = "/api/documents/00000000-0000-0000-0000-000000000000/pages/1.png"


@pytest.mark.parametrize("path", ["/rag/invoke", "/rag/batch", "/rag/stream", "/rag/c/N4XyA/invoke", "/api/chats",
                                  "/api/auth/login", "/mcp", PAGE])
def test_a_number_past_pythons_digit_limit_is_400_everywhere(edge, path) -> None:
    """Issue 41: json.loads raises ValueError on a 5000-digit integer, which no route caught: 500 on
    /rag/invoke and /rag/batch, a reset connection on /rag/stream. The edge refuses it first, with or
    without a token, as it does deep JSON."""
    body = {"input": {"question": "q"}, "inputs": [{"question": "q"}], "title": "t", "username": "u",
            "password": "p"}
    text = json.dumps(body).encode()[:-1] + b', "n": ' + LONG_NUMBER + b"}"
    with edge.client() as c:
        user = signup(c, "digits")
        for headers in ({}, user["headers"]):
            res = c.request("GET" if path == PAGE else "POST", path, content=text,
                            headers={**headers, "Content-Type": "application/json", "X-Forwarded-For": unique_ip()})
            assert res.status_code == 400, (path, bool(headers), res.status_code, res.text[:300])
            assert "more than 100 digits" in res.json()["detail"]
        # a long number inside a string is text; a hundred digits is a number any parser takes
        fits = json.dumps({**body, "username": f"nobody-{uuid.uuid4().hex[:8]}", "note": LONG_NUMBER.decode()}
                          ).encode()[:-1] + b', "n": ' + b"9" * 100 + b"}"
        res = c.post("/api/auth/login", content=fits, headers={"Content-Type": "application/json",
                                                               "X-Forwarded-For": unique_ip()})
        assert res.status_code == 401, res.text[:300]


def _config_hash(config: object) -> str:
    from langserve.lzstring import LZString

    return str(LZString.compressToEncodedURIComponent(json.dumps(config)))


def test_a_langserve_config_hash_is_bounded_before_it_is_decompressed(edge) -> None:
    """Issue 41: /rag/c/{config_hash}/... decompressed an LZString hash of any length (a 60 KB one held
    the event loop 3-4 s and a gigabyte) and parsed what it held unbounded. A hash is now at most
    1024 characters, and the config it holds is held to a body's bounds (size, depth, arrays, digits)."""
    rng = random.Random(41)
    noise = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(55_000))
    long_hash = _config_hash({"configurable": {"k": noise}})
    assert len(long_hash) > 40_000
    with edge.client() as c:
        user = signup(c, "hasher")
        for headers in ({}, user["headers"]):
            for route in ("input_schema", "invoke", "playground/"):
                res = c.request("POST" if route == "invoke" else "GET", f"/rag/c/{long_hash}/{route}",
                                headers={**headers, "X-Forwarded-For": unique_ip()},
                                **({"json": {"input": {"question": "q"}}} if route == "invoke" else {}))
                assert res.status_code == 414, (route, res.status_code, res.text[:200])
                assert "longer than 1024 characters" in res.json()["detail"]
        deep = _config_hash({"configurable": {"k": json.loads("[" * 100 + "]" * 100)}})
        digits = _config_hash({"configurable": {"k": 10 ** 120}})
        for bad, why in ((deep, "nests deeper"), (digits, "more than 100 digits")):
            assert len(bad) <= 1024
            res = c.get(f"/rag/c/{bad}/input_schema", headers=user["headers"])
            assert res.status_code == 400 and why in res.json()["detail"], res.text[:300]
        # what the playground sends: the served config, every tunable set (about 420 characters)
        from api.routes.rag import served_config

        good = _config_hash(served_config(edge.app.state.settings)().model_dump())
        assert len(good) <= 1024
        res = c.get(f"/rag/c/{good}/input_schema", headers=user["headers"])
        assert res.status_code == 200, res.text[:300]
        page = c.get(f"/rag/c/{good}/playground/", headers=user["headers"])
        assert page.status_code == 200 and "<html" in page.text.lower()


def test_brackets_inside_strings_are_not_nesting(edge) -> None:
    with edge.client() as c:
        res = c.post("/api/auth/login", json={"username": "[" * 200 + "{", "password": "]]]"},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 401


def test_a_body_over_the_cap_is_413_unauthenticated_by_length_and_while_streaming(edge) -> None:
    big = b'{"username": "' + b"a" * 100_000 + b'", "password": "x"}'
    with edge.client() as c:
        res = c.post("/api/chats", content=big, headers={"Content-Type": "application/json"})
        assert res.status_code == 413 and "64 KB" in res.json()["detail"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield big[:50_000]
            yield big[50_000:]

        res = c.post("/api/auth/login", content=chunks(), headers={"Content-Type": "application/json",
                                                                    "X-Forwarded-For": unique_ip()})
        assert res.status_code == 413


def test_a_body_past_what_its_route_holds_is_413_before_it_is_decoded(live) -> None:
    """Every JSON body but /rag's and /v1's (their conversations) is capped at FORM_MAX_KB: a
    megabyte to POST /api/chats was decoded on the event loop before its 422 (the burst's deep JSON)."""
    form_kb = live.app.state.settings.bodies.form_max_kb
    big = b'{"title": "' + b"t" * (form_kb * 1024 + 10) + b'"}'
    with live.client() as c:
        user = signup(c, "former")
        for path in ("/api/chats", "/api/auth/login", "/mcp"):
            res = c.post(path, content=big, headers={**user["headers"], "Content-Type": "application/json",
                                                     "X-Forwarded-For": unique_ip()})
            assert res.status_code == 413, (path, res.status_code, res.text[:200])  # was: 422 once decoded
            assert f"{form_kb} KB" in res.json()["detail"]
        history = [{"role": "user", "content": "t" * 15_000}] * 6  # 90 KB of earlier turns: allowed
        res = c.post("/v1/chat/completions", headers=user["headers"],
                     json={"model": "thotqen", "messages": [*history, {"role": "user", "content": "Revenue?"}]})
        assert res.status_code == 200, res.text[:300]


def test_validation_errors_do_not_echo_large_inputs(edge) -> None:
    with edge.client() as c:
        res = c.post("/api/auth/signup", json={"username": "u" * 30_000, "password": ["p"] * 2000},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 422
        assert len(res.content) < 2000 and "uuuuuuuuuu" * 30 not in res.text


def test_a_stalled_body_is_408(edge) -> None:
    host, port = edge.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"user")
        started = time.monotonic()
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("ctype", ["multipart/form-data", "multipart/form-data; boundary=",
                                   "multipart/form-data; boundary=" + "b" * 500,
                                   'multipart/form-data; boundary="unterminated'])
@pytest.mark.parametrize("path", ["/api/documents", "/rag/invoke", "/api/chats", "/api/auth/login"])
def test_malformed_multipart_bodies_are_4xx(edge, path, ctype) -> None:
    with edge.client() as c:
        headers = {"Content-Type": ctype, "X-Forwarded-For": unique_ip(),
                   **signup(c, "mp")["headers"]}
        res = c.post(path, content=b"--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc\r\n--x--\r\n",
                     headers=headers)
        assert 400 <= res.status_code < 500, (path, ctype, res.status_code, res.text[:300])


# ------------------------------------------------------------------ the CLI's users are no web accounts


@pytest.fixture(scope="module")
def reserved(start_server, server_settings) -> LiveServer:
    return start_server(server_settings.model_copy(update={"reserved_usernames": "operator, backup"}))


@pytest.mark.parametrize("name", ["local", "LOCAL", "Operator"])
def test_web_signup_refuses_the_cli_default_user_and_reserved_names(reserved, name) -> None:
    with reserved.client() as c:
        res = c.post("/api/auth/signup", json={"username": name, "password": "correct horse battery"},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 409 and "reserved" in res.json()["detail"]


def test_a_cli_user_cannot_be_claimed_or_signed_into(edge, db) -> None:
    from storage.users import get_or_create_user

    name = f"ops-{uuid.uuid4().hex[:8]}"
    with db.connection() as conn:
        get_or_create_user(conn, name)  # what `thotqen ingest --user NAME` does first
    with edge.client() as c:
        res = c.post("/api/auth/signup", json={"username": name, "password": "correct horse battery"},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 409
        res = c.post("/api/auth/login", json={"username": name, "password": ""},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code in (401, 422)


def test_the_cli_refuses_a_web_accounts_name_unless_told(edge, db, tmp_path) -> None:
    from storage.users import NotACliUser, get_or_create_user
    from tests.support.cli_run import run_cli

    with edge.client() as c:
        account = signup(c, "webname")
        me = c.get("/api/auth/me", headers=account["headers"]).json()
    with db.connection() as conn:
        with pytest.raises(NotACliUser):
            get_or_create_user(conn, account["username"])
        assert get_or_create_user(conn, account["username"], web_account=True) == me["id"]
    env = {**os.environ, "DATABASE_URL": db.uri, "THOTQEN_HOME": str(tmp_path)}
    res = run_cli(env, "documents", "--user", account["username"], "--json")
    assert res.returncode == 2 and "web account" in res.stderr and "--web-account" in res.stderr, res.stderr
    res = run_cli(env, "documents", "--user", account["username"], "--web-account", "--json")
    assert res.returncode == 0, res.stderr


# ------------------------------------------------------------------ an answer lost in a crash


def test_a_turn_a_dead_process_left_ends_as_a_saved_error_and_a_live_ones_is_kept(edge, db) -> None:
    """What a kill -9 mid-answer leaves (a question saved, no answer, its row running, admitted by a
    process whose lock died with it) next to a live neighbour's running question: the start-up sweep
    ends the first as an error turn the chat shows, and leaves the second running."""
    from answering import accounting
    from storage import chats, query_log

    with edge.client() as c:
        user = signup(c, "crash")
        me = c.get("/api/auth/me", headers=user["headers"]).json()
        chat_id = c.post("/api/chats", headers=user["headers"], json={}).json()["id"]
    dead, alive = uuid.uuid4(), uuid.uuid4()
    neighbour = query_log.hold_instance(db.uri, alive)
    try:
        with db.connection() as conn:
            chats.add_message(conn, owner_id=me["id"], chat_id=uuid.UUID(chat_id), role="user", content="revenue?")
            [lost], _, _, _ = query_log.admit(conn, owner_id=me["id"], source="chat", limit=1000,
                                           chat_id=uuid.UUID(chat_id), instance=dead)
            [kept], _, _, _ = query_log.admit(conn, owner_id=me["id"], source="rag", limit=1000, instance=alive)
        assert accounting.sweep_stale(db) >= 1
        with db.connection() as conn:
            rows = dict(conn.execute("select id, status from query_log where id in (%s, %s)", (lost, kept)).fetchall())
        assert rows == {lost: "error", kept: "running"}
        with edge.client() as c:
            messages = c.get(f"/api/chats/{chat_id}", headers=user["headers"]).json()["messages"]
        assert [(m["role"], m["status"]) for m in messages] == [("user", "ok"), ("assistant", "error")]
        assert "restarted before this answer finished" in messages[-1]["content"]
        accounting.sweep_stale(db)  # a second sweep adds no second error turn
        with edge.client() as c:
            assert len(c.get(f"/api/chats/{chat_id}", headers=user["headers"]).json()["messages"]) == 2
    finally:
        neighbour.close()
        with db.connection() as conn:
            query_log.finish(conn, kept, status="ok", latency_ms=1.0)
