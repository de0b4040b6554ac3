"""The web session: HttpOnly SameSite=Strict cookies, CSRF on every state-changing request the
cookie authenticates, silent refresh, sign-out; the bearer header keeps working without CSRF."""

from __future__ import annotations

import uuid
from contextlib import closing

import httpx

from tests.server.conftest import FACTS, read_sse, signup, unique_ip

PASSWORD = "correct horse battery"
QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


def web_signup(live, prefix: str = "web") -> tuple[httpx.Client, str, str]:
    """(a client holding the session cookies, the CSRF token, the username)."""
    c = live.client(headers={"X-Forwarded-For": unique_ip()})
    username = f"{prefix}-{uuid.uuid4().hex[:8]}"
    res = c.post("/api/session/signup", json={"username": username, "password": PASSWORD})
    assert res.status_code == 201, res.text
    return c, res.json()["csrf_token"], username


def test_sign_up_sets_httponly_strict_cookies_and_no_token_in_the_body(live) -> None:
    c, csrf, username = web_signup(live)
    with closing(c):
        res = c.post("/api/session", json={"username": username, "password": PASSWORD})
        assert res.status_code == 200
        body = res.json()
        assert set(body) == {"user", "csrf_token", "expires_in"} and body["user"]["username"] == username
        assert "access_token" not in res.text and "refresh_token" not in res.text
        cookies = {h.split("=", 1)[0]: h.lower() for h in res.headers.get_list("set-cookie")}
        assert set(cookies) == {"thotqen_access", "thotqen_refresh", "thotqen_csrf"}
        for name, header in cookies.items():
            assert "samesite=strict" in header
            assert ("httponly" in header) == (name != "thotqen_csrf")  # the page reads only the CSRF token
        assert "path=/api/session" in cookies["thotqen_refresh"]
        assert res.headers["cache-control"] == "no-store"
        assert c.get("/api/session").json()["user"]["username"] == username


def test_cookie_requests_need_the_csrf_header_to_change_anything(live) -> None:
    c, csrf, _ = web_signup(live)
    with closing(c):
        assert c.get("/api/chats").status_code == 200  # reading needs no token
        refused = c.post("/api/chats", json={"title": "x"})
        assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
        assert c.post("/api/chats", json={}, headers={"X-CSRF-Token": "not-the-token"}).status_code == 403
        # another site's page: right token (it cannot have it, but even so) from the wrong origin
        cross = c.post("/api/chats", json={}, headers={"X-CSRF-Token": csrf, "Origin": "https://evil.example"})
        assert cross.status_code == 403
        ok = c.post("/api/chats", json={"title": "mine"}, headers={"X-CSRF-Token": csrf, "Origin": live.url})
        assert ok.status_code == 201, ok.text
        chat_id = ok.json()["id"]
        assert c.delete(f"/api/chats/{chat_id}").status_code == 403
        assert c.delete(f"/api/chats/{chat_id}", headers={"X-CSRF-Token": csrf}).status_code == 204
        # an upload and a question are state-changing too
        files = {"file": ("a.pdf", b"%PDF-1.4 nothing", "application/pdf")}
        assert c.post("/api/documents", files=files).status_code == 403
        assert c.post("/rag/invoke", json={"input": {"question": "hi"}}).status_code == 403


def test_a_csrf_token_from_another_session_does_not_pass(live) -> None:
    a, _csrf_a, _ = web_signup(live, "alice")
    b, csrf_b, _ = web_signup(live, "bob")
    with closing(a), closing(b):
        assert a.post("/api/chats", json={}, headers={"X-CSRF-Token": csrf_b}).status_code == 403


def test_bearer_clients_need_no_csrf(live) -> None:
    with live.client() as c:
        user = signup(c, "api")
        res = c.post("/api/chats", json={"title": "t"}, headers=user["headers"])
        assert res.status_code == 201
        # a bearer token placed in the cookie is no session: it carries no CSRF binding
        c.cookies.set("thotqen_access", user["tokens"]["access_token"])
        assert c.get("/api/chats").status_code == 200
        assert c.post("/api/chats", json={}, headers={"X-CSRF-Token": "anything"}).status_code == 403


def test_refresh_rotates_the_cookies_and_keeps_the_csrf_token(live) -> None:
    c, csrf, username = web_signup(live)
    with closing(c):
        old_refresh = c.cookies.get("thotqen_refresh", path="/api/session")
        assert c.post("/api/session/refresh").status_code == 403  # CSRF applies to the refresh too
        res = c.post("/api/session/refresh", headers={"X-CSRF-Token": csrf})
        assert res.status_code == 200, res.text
        assert res.json()["csrf_token"] == csrf and res.json()["user"]["username"] == username
        assert c.cookies.get("thotqen_refresh", path="/api/session") != old_refresh
        assert c.post("/api/chats", json={}, headers={"X-CSRF-Token": csrf}).status_code == 201
        # the old refresh cookie is spent: replaying it ends the session and clears the cookies
        replay = httpx.Client(base_url=live.url, cookies={"thotqen_refresh": old_refresh})
        with replay:
            res = replay.post("/api/session/refresh", headers={"X-CSRF-Token": csrf})
            assert res.status_code == 401 and "sign in again" in res.json()["detail"]
            assert any("thotqen_refresh=" in h and "max-age=0" in h.lower() for h in res.headers.get_list("set-cookie"))


def test_an_expired_access_cookie_answers_401_and_refresh_brings_it_back(live) -> None:
    c, csrf, _ = web_signup(live)
    with closing(c):
        c.cookies.delete("thotqen_access")
        assert c.get("/api/documents").status_code == 401
        assert c.post("/api/session/refresh", headers={"X-CSRF-Token": csrf}).status_code == 200
        assert c.get("/api/documents").status_code == 200


def test_sign_out_revokes_the_refresh_token(live) -> None:
    c, csrf, _ = web_signup(live)
    with closing(c):
        refresh = c.cookies.get("thotqen_refresh", path="/api/session")
        assert c.delete("/api/session").status_code == 403  # no CSRF: a forged sign-out is refused
        res = c.delete("/api/session", headers={"X-CSRF-Token": csrf})
        assert res.status_code == 204
        assert c.get("/api/session").status_code == 401
    with httpx.Client(base_url=live.url, cookies={"thotqen_refresh": refresh}) as replay:
        assert replay.post("/api/session/refresh", headers={"X-CSRF-Token": csrf}).status_code == 401


def test_a_signed_out_sessions_access_cookie_no_longer_works(live) -> None:
    """Issue 41: sign-out cleared the cookies and spent the refresh token, but the access token is a JWT
    valid until it expires: a copy of the cookie (another tab, a stolen one) kept working. The session
    now ends on the server; the user's other sessions and bearer tokens are untouched."""
    c, csrf, username = web_signup(live)
    other = live.client(headers={"X-Forwarded-For": unique_ip()})
    with closing(c), closing(other):
        access = c.cookies.get("thotqen_access")
        assert other.post("/api/session", json={"username": username, "password": PASSWORD}).status_code == 200
        bearer = c.post("/api/auth/login", json={"username": username, "password": PASSWORD}).json()
        assert c.delete("/api/session", headers={"X-CSRF-Token": csrf}).status_code == 204
        with httpx.Client(base_url=live.url, cookies={"thotqen_access": access}) as copy:
            assert copy.get("/api/session").status_code == 401  # was: 200 until the token expired
            assert copy.get("/api/documents").status_code == 401
            assert copy.post("/api/chats", json={}, headers={"X-CSRF-Token": csrf}).status_code == 401
        with httpx.Client(base_url=live.url) as api:  # the cookie's token sent as a bearer token
            assert api.get("/api/auth/me", headers={"Authorization": f"Bearer {access}"}).status_code == 401
            # the same user's other sign-ins keep working
            assert api.get("/api/auth/me", headers={"Authorization": f"Bearer {bearer['access_token']}"}).is_success
        assert other.get("/api/session").json()["user"]["username"] == username


def test_signing_out_without_a_refresh_cookie_still_ends_the_session(live) -> None:
    """...and a copy of its refresh cookie, never spent, refreshes nothing."""
    c, csrf, _ = web_signup(live)
    with closing(c):
        access = c.cookies.get("thotqen_access")
        refresh = c.cookies.get("thotqen_refresh", path="/api/session")
        c.cookies.delete("thotqen_refresh", path="/api/session")
        assert c.delete("/api/session").status_code == 403  # the access cookie names it: CSRF still needed
        assert c.delete("/api/session", headers={"X-CSRF-Token": csrf}).status_code == 204
    with httpx.Client(base_url=live.url, cookies={"thotqen_access": access}) as copy:
        assert copy.get("/api/session").status_code == 401
    with httpx.Client(base_url=live.url, cookies={"thotqen_refresh": refresh}) as replay:
        assert replay.post("/api/session/refresh", headers={"X-CSRF-Token": csrf}).status_code == 401


def test_session_sign_in_keeps_the_login_lockout(live) -> None:
    c, _csrf, username = web_signup(live)
    with closing(c):
        codes = [c.post("/api/session", json={"username": username, "password": "wrong password"}).status_code
                 for _ in range(6)]
        assert codes[:5] == [401] * 5 and codes[5] == 429


def test_a_question_streams_through_the_cookie_session(live, owner_with_report) -> None:
    with live.client(headers={"X-Forwarded-For": unique_ip()}) as c:
        res = c.post("/api/session", json={"username": owner_with_report["username"], "password": PASSWORD})
        csrf = res.json()["csrf_token"]
        chat = c.post("/api/chats", json={}, headers={"X-CSRF-Token": csrf}).json()
        with c.stream("POST", f"/api/chats/{chat['id']}/messages", json={"question": QUESTION},
                      headers={"X-CSRF-Token": csrf}) as stream:
            events = read_sse(stream)
        assert events[-1][0] == "done" and FACTS["revenue"] in events[-1][1]["answer"]
