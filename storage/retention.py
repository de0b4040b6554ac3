"""Retention: rows that only grow unless something deletes them.

Expired refresh tokens (a spent token is kept until it expires: presenting it again is how a leak is
detected) and signed-out sessions, login attempts and query-log rows older than the retention window (the lockout and
per-IP windows are minutes, so days of history are plenty), and answer-cache entries past their TTL.
"""

from __future__ import annotations

import psycopg


def purge(conn: psycopg.Connection, *, retention_days: int, answer_cache_ttl_hours: float) -> dict[str, int]:
    """Delete what is past its time; the number of rows deleted per table."""
    days = {"d": retention_days}
    counts = {
        "refresh_tokens": conn.execute("delete from refresh_tokens where expires_at < now()").rowcount,
        "ended_sessions": conn.execute("delete from ended_sessions where expires_at < now()").rowcount,
        "login_attempts": conn.execute(
            "delete from login_attempts where at < now() - make_interval(days => %(d)s)", days).rowcount,
        "query_log": conn.execute(
            "delete from query_log where created_at < now() - make_interval(days => %(d)s)", days).rowcount,
        "answer_cache": conn.execute(
            "delete from answer_cache where created_at < now() - %s * interval '1 hour'",
            (answer_cache_ttl_hours,)).rowcount,
    }
    return counts
