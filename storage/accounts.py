"""Password accounts, login attempts (lockout, per-IP limits), refresh tokens, external identities.

Takes password hashes, never passwords: hashing lives in the server (identity/security.py).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage.rows import one


def create_password_user(conn: psycopg.Connection, *, username: str, password_hash: str) -> int | None:
    """The new user's id, or None when the username is taken (by anyone, CLI users included)."""
    row = conn.execute(
        "insert into users (username, password_hash, kind) values (%s, %s, 'web') on conflict (username) do nothing"
        " returning id",
        (username, password_hash),
    ).fetchone()
    return row[0] if row else None


def credentials(conn: psycopg.Connection, username: str) -> tuple[int, str | None] | None:
    # only web accounts sign in with a password: a CLI or external user has none to check
    row = conn.execute("select id, password_hash from users where username = %s and kind = 'web'",
                       (username,)).fetchone()
    return (row[0], row[1]) if row else None


def set_password_hash(conn: psycopg.Connection, *, user_id: int, password_hash: str) -> None:
    conn.execute("update users set password_hash = %s where id = %s", (password_hash, user_id))


def get_user(conn: psycopg.Connection, user_id: int) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("select id, username, external_id, created_at from users where id = %s",
                           (user_id,)).fetchone()


def get_or_create_external_user(conn: psycopg.Connection, *, external_id: str, username: str) -> int:
    """Map an external identity (a Supabase user) to a row; the username gets a suffix if taken."""
    row = conn.execute("select id from users where external_id = %s", (external_id,)).fetchone()
    if row:
        return int(row[0])
    for candidate in (username, f"{username}#{external_id[-12:]}", external_id):
        row = conn.execute(
            "insert into users (username, external_id, kind) values (%s, %s, 'external') on conflict do nothing"
            " returning id",
            (candidate, external_id),
        ).fetchone()
        if row:
            return int(row[0])
        row = conn.execute("select id from users where external_id = %s", (external_id,)).fetchone()
        if row:  # a concurrent request created it
            return int(row[0])
    raise RuntimeError("could not create a user for the external identity")


# ------------------------------------------------------------------ login attempts


def record_login_attempt(conn: psycopg.Connection, *, username: str, ip: str, success: bool) -> None:
    conn.execute("insert into login_attempts (username, ip, success) values (%s, %s, %s)", (username, ip, success))


def lock_remaining_s(conn: psycopg.Connection, *, username: str, ip: str, max_failures: int,
                     window_s: float) -> float:
    """Seconds this address stays locked out of the username: `max_failures` failures from it within
    the window since its last success there lock the pair until the oldest of them leaves the window.
    Per address: a stranger's failures never lock the owner out from elsewhere. 0 when not locked."""
    count, remaining = one(conn.execute(
        "with recent as ("
        "  select at from login_attempts"
        "   where username = %(u)s and ip = %(ip)s and not success and at > now() - make_interval(secs => %(w)s)"
        "     and at > coalesce((select max(at) from login_attempts where username = %(u)s and ip = %(ip)s"
        "                        and success), '-infinity')"
        "   order by at desc limit %(n)s)"
        " select count(*), extract(epoch from (min(at) + make_interval(secs => %(w)s) - now())) from recent",
        {"u": username, "ip": ip, "w": window_s, "n": max_failures},
    ))
    return max(float(remaining or 0.0), 1.0) if count >= max_failures else 0.0


def known_place(conn: psycopg.Connection, *, username: str, ip: str) -> bool:
    """Whether the username signed in from this address (within the attempts kept: RETENTION_DAYS)."""
    return conn.execute("select 1 from login_attempts where username = %s and ip = %s and success limit 1",
                        (username, ip)).fetchone() is not None


def slow_remaining_s(conn: psycopg.Connection, *, username: str, max_failures: int, window_s: float,
                     delay_s: float) -> float:
    """Seconds before the next attempt at the username from an unknown place: once `max_failures`
    failures from every address together fell within the window since its last success, one attempt
    per `delay_s` (guessing from many addresses is slowed, never locked). 0 when it may try now."""
    count, remaining = one(conn.execute(
        "with recent as ("
        "  select at from login_attempts"
        "   where username = %(u)s and not success and at > now() - make_interval(secs => %(w)s)"
        "     and at > coalesce((select max(at) from login_attempts where username = %(u)s and success),"
        "                       '-infinity')"
        "   order by at desc limit %(n)s)"
        " select count(*), extract(epoch from (max(at) + make_interval(secs => %(d)s) - now())) from recent",
        {"u": username, "w": window_s, "n": max_failures, "d": delay_s},
    ))
    return max(float(remaining or 0.0), 1.0) if count >= max_failures and (remaining or 0) > 0 else 0.0


def ip_retry_after_s(conn: psycopg.Connection, *, ip: str, limit: int, window_s: float) -> float:
    """Seconds until this IP may try again when it made `limit` attempts within the window; else 0."""
    count, remaining = one(conn.execute(
        "with recent as (select at from login_attempts where ip = %(ip)s and at > now() - make_interval(secs => %(w)s)"
        "                order by at desc limit %(n)s)"
        " select count(*), extract(epoch from (min(at) + make_interval(secs => %(w)s) - now())) from recent",
        {"ip": ip, "w": window_s, "n": limit},
    ))
    return max(float(remaining or 0.0), 1.0) if count >= limit else 0.0


# ------------------------------------------------------------------ refresh tokens


def store_refresh_token(conn: psycopg.Connection, *, jti: uuid.UUID, user_id: int, expires_at: datetime) -> None:
    conn.execute("insert into refresh_tokens (jti, user_id, expires_at) values (%s, %s, %s)",
                 (jti, user_id, expires_at))


def spend_refresh_token(conn: psycopg.Connection, *, jti: uuid.UUID, user_id: int) -> bool:
    """Mark the token used; False when it is unknown, expired or already spent.

    A spent token presented again means it leaked: every live token of the user is revoked.
    """
    row = conn.execute(
        "update refresh_tokens set used_at = now() where jti = %s and user_id = %s and used_at is null"
        " and expires_at > now() returning jti",
        (jti, user_id),
    ).fetchone()
    if row:
        return True
    reused = conn.execute("select 1 from refresh_tokens where jti = %s and used_at is not null", (jti,)).fetchone()
    if reused:
        revoke_tokens(conn, user_id=user_id)
    return False


def revoke_tokens(conn: psycopg.Connection, *, user_id: int) -> None:
    """Every token of the user stops working: live refresh tokens are spent, and the token version
    moves on, so access tokens issued before answer 401 too."""
    conn.execute("update refresh_tokens set used_at = now() where user_id = %s and used_at is null", (user_id,))
    conn.execute("update users set token_version = token_version + 1 where id = %s", (user_id,))


def end_session(conn: psycopg.Connection, *, user_id: int, session: str, until: datetime) -> None:
    """Sign a web session out (sql/028_signed_out.sql): its tokens, which carry `session`, stop
    working; the row is kept `until` no token of the session can still be valid."""
    conn.execute("insert into ended_sessions (user_id, session, expires_at) values (%s, %s, %s)"
                 " on conflict (user_id, session) do update set expires_at = greatest(ended_sessions.expires_at,"
                 " excluded.expires_at)", (user_id, session, until))


def ended_sessions(conn: psycopg.Connection, user_id: int) -> frozenset[str]:
    """The user's signed-out web sessions whose tokens could still be valid."""
    rows = conn.execute("select session from ended_sessions where user_id = %s and expires_at > now()",
                        (user_id,)).fetchall()
    return frozenset(row[0] for row in rows)


def token_version(conn: psycopg.Connection, user_id: int) -> int | None:
    """The version the user's access tokens must carry; None when the user no longer exists."""
    row = conn.execute("select token_version from users where id = %s", (user_id,)).fetchone()
    return row[0] if row else None
