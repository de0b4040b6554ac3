"""Accounts: signup, login, refresh rotation, lockout, secrets policy, Supabase tokens, admin metrics."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from pydantic import SecretStr, ValidationError

from evals import local_http
from evals.local_http import JSONHandler
from tests.server.conftest import ADMIN, ask, login_headers, operator_account, signup, unique_ip


def test_signup_login_refresh_rotation(live) -> None:
    with live.client() as c:
        user = signup(c, "acct")
        assert user["tokens"]["token_type"] == "bearer"
        me = c.get("/api/auth/me", headers=user["headers"]).json()
        assert me["username"] == user["username"] and me["source"] == "local" and me["admin"] is False
        ip = {"X-Forwarded-For": unique_ip()}
        res = c.post("/api/auth/login", json={"username": user["username"], "password": user["password"]}, headers=ip)
        assert res.status_code == 200 and set(res.json()) >= {"access_token", "refresh_token", "token_type"}
        # a taken name, a short password, a bad name
        assert c.post("/api/auth/signup", json={"username": user["username"], "password": "x" * 12},
                      headers=ip).status_code == 409
        assert c.post("/api/auth/signup", json={"username": "shorty", "password": "short"},
                      headers=ip).status_code == 422
        assert c.post("/api/auth/signup", json={"username": "a b/c", "password": "x" * 12},
                      headers=ip).status_code == 422
        # refresh tokens are single use; reusing a spent one revokes the newer one too (theft)
        first = res.json()["refresh_token"]
        second = c.post("/api/auth/refresh", json={"refresh_token": first})
        assert second.status_code == 200
        assert c.get("/api/auth/me", headers={"Authorization": f"Bearer {second.json()['access_token']}"}).is_success
        again = c.post("/api/auth/refresh", json={"refresh_token": first})
        assert again.status_code == 401 and "already used" in again.json()["detail"]
        assert c.post("/api/auth/refresh", json={"refresh_token": second.json()["refresh_token"]}).status_code == 401
        assert c.post("/api/auth/refresh", json={"refresh_token": user["tokens"]["access_token"]}).status_code == 401


def test_five_failures_lock_the_address_out_never_the_owner(live) -> None:
    """Five wrong passwords locked a username for 15 minutes for everyone: anyone could lock any
    account out (issue 41). Now the lock is per (address, account): the stranger's address stays
    locked, the owner signs in from another."""
    with live.client() as c:
        user = signup(c, "lock")
        stranger = {"X-Forwarded-For": unique_ip()}
        for n in range(5):
            res = c.post("/api/auth/login", json={"username": user["username"], "password": f"wrong-{n}"},
                         headers=stranger)
            assert res.status_code == 401
        res = c.post("/api/auth/login", json={"username": user["username"], "password": user["password"]},
                     headers=stranger)  # even the right password, from the locked address
        assert res.status_code == 429 and "locked" in res.json()["detail"]
        assert 0 < int(res.headers["Retry-After"]) <= 15 * 60
        owner = c.post("/api/auth/login", json={"username": user["username"], "password": user["password"]},
                       headers={"X-Forwarded-For": unique_ip()})  # from a place it never signed in from
        assert owner.status_code == 200, owner.text
        res = c.post("/api/auth/login", json={"username": user["username"], "password": "wrong-again"},
                     headers=stranger)  # the owner's success elsewhere does not unlock the stranger
        assert res.status_code == 429
        # another user is unaffected, and the lock is in the database (it outlives this app)
        other = signup(c, "lock")
        assert c.post("/api/auth/login", json={"username": other["username"], "password": other["password"]},
                      headers=stranger).status_code == 200
    from storage import accounts

    with live.app.state.db.connection() as conn:
        assert accounts.lock_remaining_s(conn, username=user["username"], ip=stranger["X-Forwarded-For"],
                                         max_failures=5, window_s=900) > 0


def test_unknown_username_fails_like_a_wrong_password(live) -> None:
    with live.client() as c:
        res = c.post("/api/auth/login", json={"username": f"nobody-{uuid.uuid4().hex[:6]}", "password": "whatever1"},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 401 and res.json()["detail"] == "wrong username or password"
        # a CLI user has no password: it cannot log in
        assert c.post("/api/auth/login", json={"username": "local", "password": "anything1"},
                      headers={"X-Forwarded-For": unique_ip()}).status_code == 401


def test_production_refuses_placeholder_or_missing_secrets(settings, tmp_path) -> None:
    from identity.security import resolve_jwt_secret
    from settings import Settings

    for bad in ["changeme", "secret", "short-but-not-placeholder"]:
        with pytest.raises(ValidationError, match="JWT_SECRET"):
            Settings(_env_file=None, thotqen_env="production", jwt_secret=bad)
    with pytest.raises(ValidationError, match="CORS"):
        Settings(_env_file=None, thotqen_env="production", cors_origins="*")
    with pytest.raises(RuntimeError, match="needs JWT_SECRET"):
        resolve_jwt_secret(Settings(_env_file=None, thotqen_env="production", thotqen_home=tmp_path))
    real = "k" * 20 + uuid.uuid4().hex
    assert resolve_jwt_secret(Settings(_env_file=None, thotqen_env="production", jwt_secret=real)) == real
    # development: one generated secret, kept (0600) and reused across restarts
    dev = Settings(_env_file=None, thotqen_home=tmp_path)
    first = resolve_jwt_secret(dev)
    assert len(first) >= 32 and resolve_jwt_secret(dev) == first
    assert (tmp_path / "jwt_secret").stat().st_mode & 0o777 == 0o600


class _Jwks:
    """A local JWKS endpoint with one EC P-256 key, like Supabase's asymmetric signing keys."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        keys = {"keys": [{**jwk, "kid": "k1", "alg": "ES256", "use": "sig"}]}

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                self.send_json(200, keys)

        self.server = local_http.serve(Handler)
        self.url = f"{local_http.url(self.server)}/auth/v1/.well-known/jwks.json"


def test_supabase_tokens_hs256_and_jwks(own_server, server_settings) -> None:
    jwks = _Jwks()
    secret = "supabase-project-jwt-secret-" + uuid.uuid4().hex
    issuer = "https://project-ref.supabase.co/auth/v1"
    live = own_server(server_settings.model_copy(update={
        "supabase_auth": True, "supabase_issuer": issuer,
        "supabase_jwt_secret": SecretStr(secret), "supabase_jwks_url": jwks.url}))
    now = datetime.now(UTC)
    sub = str(uuid.uuid4())
    claims = {"sub": sub, "email": f"ann-{sub[:6]}@example.com", "aud": "authenticated", "role": "authenticated",
              "iss": issuer, "iat": now, "exp": now + timedelta(hours=1)}
    hs = jwt.encode(claims, secret, algorithm="HS256")
    es = jwt.encode(claims, jwks.key, algorithm="ES256", headers={"kid": "k1"})
    with live.client() as c:
        first = c.get("/api/auth/me", headers={"Authorization": f"Bearer {hs}"})
        assert first.status_code == 200, first.text
        assert first.json()["source"] == "supabase" and first.json()["username"] == claims["email"]
        second = c.get("/api/auth/me", headers={"Authorization": f"Bearer {es}"}).json()
        assert second["id"] == first.json()["id"]  # one user per Supabase identity, whichever key signed
        listed = c.get("/api/documents", headers={"Authorization": f"Bearer {es}"}).json()
        assert listed == {"documents": [], "next_offset": None}
        no_iss = {k: v for k, v in claims.items() if k != "iss"}
        for bad in [jwt.encode({**claims, "aud": "anon"}, secret, algorithm="HS256"),
                    jwt.encode({**claims, "iss": "https://other-project.supabase.co/auth/v1"}, secret,
                               algorithm="HS256"),  # another project's token, signed with a shared secret
                    jwt.encode(no_iss, secret, algorithm="HS256"),
                    jwt.encode({**claims, "exp": now - timedelta(minutes=1)}, secret, algorithm="HS256"),
                    jwt.encode(claims, "wrong-secret-" + "x" * 30, algorithm="HS256"),
                    jwt.encode(claims, ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                               headers={"kid": "k1"})]:
            assert c.get("/api/auth/me", headers={"Authorization": f"Bearer {bad}"}).status_code == 401
    # Supabase Storage settings alone (SUPABASE_URL) accept no Supabase token: auth is its own switch
    storage_only = own_server(server_settings.model_copy(update={
        "supabase_url": "https://project-ref.supabase.co", "supabase_jwt_secret": SecretStr(secret)}))
    with storage_only.client() as c:
        assert c.get("/api/auth/me", headers={"Authorization": f"Bearer {hs}"}).status_code == 401
    jwks.server.shutdown()


def test_supabase_auth_needs_an_issuer(tmp_path) -> None:
    from settings import Settings

    with pytest.raises(ValueError, match="issuer"):
        Settings(_env_file=None, thotqen_home=tmp_path, supabase_auth=True, supabase_jwt_secret="x" * 40)
    ok = Settings(_env_file=None, thotqen_home=tmp_path, supabase_auth=True, supabase_url="https://p.supabase.co/")
    assert ok.supabase.token_issuer == "https://p.supabase.co/auth/v1"


def test_admin_metrics(live, owner_with_report, db) -> None:
    h = owner_with_report["headers"]
    with live.client() as c:
        chat = c.post("/api/chats", headers=h, json={}).json()["id"]
        assert ask(c, h, chat, "How many people did Aurora Widgets employ?")[-1][0] == "done"
        question = {"input": {"question": "What was total revenue in fiscal 2023?"}}
        assert c.post("/rag/invoke", headers=h, json=question).is_success
        assert c.get("/api/admin/metrics", headers=h).status_code == 403
        operator_account(db, ADMIN, "admin password 1")  # web signup refuses THOTQEN_ADMINS (issue 41)
        admin = login_headers(c, ADMIN, "admin password 1")
        assert c.get("/api/auth/me", headers=admin).json()["admin"] is True
        m = c.get("/api/admin/metrics", headers=admin).json()["query_log"]
        assert m["questions"] >= 2 and m["by_source"].get("chat", 0) >= 1 and m["by_source"].get("rag", 0) >= 1
        assert 0 < m["success_rate"] <= 1
        assert m["latency_ms"]["p50"] > 0 and m["latency_ms"]["p95"] >= m["latency_ms"]["p50"]
        assert m["answers_by_provider"].get("vllm", 0) >= 2
        assert m["tokens"]["input"] > 0 and m["tokens"]["output"] > 0
        assert c.get("/api/admin/metrics?hours=0", headers=admin).status_code == 422


def test_an_admins_name_cannot_be_claimed_by_signing_up(live, db, tmp_path) -> None:
    """Issue 41: whoever first signed up a name listed in THOTQEN_ADMINS became the admin. Web signup
    now refuses those names (any case, both signups); the operator makes the account
    (`thotqen account NAME`, the password on stdin), and only then does it sign in as an admin."""
    import os

    from tests.support.cli_run import run_cli

    with live.client() as c:
        for path in ("/api/auth/signup", "/api/session/signup"):
            for name in (ADMIN, ADMIN.upper(), f" {ADMIN}"):
                res = c.post(path, json={"username": name, "password": "an attacker's password"},
                             headers={"X-Forwarded-For": unique_ip()})
                assert res.status_code == 409 and "reserved" in res.json()["detail"], (path, name, res.text)
        res = c.post("/api/auth/login", json={"username": ADMIN, "password": "an attacker's password"},
                     headers={"X-Forwarded-For": unique_ip()})
        assert res.status_code == 401
    name = f"ops-admin-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": db.uri, "THOTQEN_HOME": str(tmp_path), "THOTQEN_ADMINS": name}
    res = run_cli(env, "account", name, stdin="the operator's password\n")
    assert res.returncode == 0 and "an admin" in res.stdout, res.stderr
    assert run_cli(env, "account", name, stdin="another password\n").returncode == 2  # taken: never replaced
    assert run_cli(env, "account", f"{name}-2", stdin="short\n").returncode == 2
    with live.client() as c:
        headers = login_headers(c, name, "the operator's password")
        assert c.get("/api/auth/me", headers=headers).json()["admin"] is False  # this server lists ADMIN only
        operator_account(db, ADMIN, "admin password 1")
        admin = login_headers(c, ADMIN, "admin password 1")
        assert c.get("/api/auth/me", headers=admin).json()["admin"] is True


def test_langsmith_outage_keeps_local_metrics(settings, db) -> None:
    from api.routes.admin import metrics

    s = settings.model_copy(update={"langsmith_api_key": SecretStr("lsv2-test"),
                                    "langsmith_endpoint": "http://127.0.0.1:9"})  # nothing listens there
    out = metrics(None, db, s, hours=1.0)
    assert "questions" in out["query_log"] and "error" in out["langsmith"]


def test_langsmith_metrics_summarise_the_projects_root_runs(settings, db) -> None:
    """The happy path against a local endpoint speaking LangSmith's read API (sessions, runs/query)."""

    from api.routes.admin import metrics
    from tests.support.fakes import FakeLangSmith

    now = datetime.now(UTC)

    def run(seconds: float, tokens: int, error: str | None = None) -> dict:
        run_id = str(uuid.uuid4())
        return {"id": run_id, "trace_id": run_id, "name": "rag", "run_type": "chain", "error": error,
                "start_time": (now - timedelta(minutes=5)).isoformat(),
                "end_time": (now - timedelta(minutes=5) + timedelta(seconds=seconds)).isoformat(),
                "total_tokens": tokens}

    stored = [run(2.0, 100), run(4.0, 300), run(8.0, 0, error="TimeoutError"), run(1.0, 50)]
    smith = FakeLangSmith(project="thotqen-metrics", stored_runs=stored, page_size=3)
    try:
        s = settings.model_copy(update={"langsmith_api_key": SecretStr("lsv2-test"), "langsmith_endpoint": smith.url,
                                        "langsmith_project": "thotqen-metrics"})
        out = metrics(None, db, s, hours=2.0)["langsmith"]
    finally:
        smith.close()
    assert out["project"] == "thotqen-metrics" and out["runs"] == 4 and out["errors"] == 1
    assert out["tokens"] == 450 and out["truncated"] is False
    assert out["latency_ms"] == {"p50": 4000.0, "p95": 8000.0, "p99": 8000.0}
    first = smith.queries[0]  # the project's root runs of the window, read across two pages
    assert first["session"] == [FakeLangSmith.PROJECT_ID] and first["is_root"] is True
    assert datetime.fromisoformat(first["start_time"]) >= now - timedelta(hours=2, minutes=1)
    assert len(smith.queries) == 2 and smith.queries[1]["cursor"] == "3"
