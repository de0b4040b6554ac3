"""The query log: one row per question. The hourly limit counts rows; admin metrics aggregate them."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from storage.rows import one

FINAL = ("ok", "blocked", "error", "cancelled")


def admit(conn: psycopg.Connection, *, owner_id: int, source: str, limit: int, count: int = 1,
          chat_id: uuid.UUID | None = None, window_s: float = 3600.0, instance: uuid.UUID | None = None,
          rate: tuple[int, float] | None = None, tokens: list[int] | None = None,
          token_limits: list[tuple[int, float]] | None = None,
          workspace_id: int | None = None) -> tuple[list[int], float, float, bool]:
    """Start `count` questions if they fit in the owner's hourly limit and, when given, the shorter
    `rate` window ((questions, seconds)), and their `tokens` (each question's cost, kept as its
    prompt_tokens) in each of `token_limits` ((tokens, seconds)): (their row ids, 0, 0, False), else
    ([], seconds until they fit, the window that refused them, whether tokens did). Checked and
    inserted under a per-owner lock in one transaction, so parallel requests cannot all pass the
    check before any of them is counted. `workspace_id`: the workspace they are asked in, if one
    (admin metrics count a workspace's questions by it)."""
    costs = tokens if tokens is not None else [0] * count
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"thotqen:admit:{owner_id}",))
        for cap, window in ([rate] if rate is not None else []) + [(limit, window_s)]:
            wait = retry_after_s(conn, owner_id=owner_id, limit=cap, window_s=window, adding=count)
            if wait:
                return [], wait, window, False
        for cap, window in token_limits or []:
            wait = tokens_retry_after_s(conn, owner_id=owner_id, limit=cap, window_s=window, adding=sum(costs))
            if wait:
                return [], wait, window, True
        rows = conn.execute(
            "insert into query_log (owner_id, source, chat_id, instance, prompt_tokens, workspace_id)"
            " select %s, %s, %s, %s, cost, %s from unnest(%s::int[]) as cost returning id",
            (owner_id, source, chat_id, instance, workspace_id, costs)).fetchall()
    return [r[0] for r in rows], 0.0, 0.0, False


def finish(conn: psycopg.Connection, log_id: int, *, status: str, latency_ms: float, provider: str | None = None,
           cached: bool = False, input_tokens: int = 0, output_tokens: int = 0, error: str | None = None) -> bool:
    """Give a running row its final state; False when it already had one (the first final state stays)."""
    return conn.execute(
        "update query_log set status = %s, latency_ms = %s, provider = %s, cached = %s, input_tokens = %s,"
        " output_tokens = %s, error = %s, finished_at = now() where id = %s and status = 'running'",
        (status, latency_ms, provider, cached, input_tokens, output_tokens, (error or "")[:500] or None, log_id),
    ).rowcount == 1


LIVE_LOCK = "thotqen:instance:"  # + the process's instance id: held while it can finish its rows


def hold_instance(uri: str, instance: uuid.UUID) -> psycopg.Connection:
    """A connection holding the instance's lock until it is closed (or the process dies)."""
    conn = psycopg.connect(uri, autocommit=True)
    # session-scoped on purpose: a direct connection, never taken behind a pooler (abandon_running says what then)
    conn.execute("select pg_advisory_lock(hashtextextended(%s, 0))", (f"{LIVE_LOCK}{instance}",))  # on purpose
    return conn


def abandon_running(conn: psycopg.Connection, *, error: str) -> tuple[int, list[tuple[int, uuid.UUID]]]:
    """At a server's start, before it admits a question: rows still running whose process is gone
    (nobody holds their instance's lock; without an instance: admitted before now) can no longer
    finish, and end as errors. (rows ended, the (owner, chat) of each chat question among them)."""
    rows = conn.execute(
        "update query_log set status = 'error', error = %s, finished_at = now()"
        " where status = 'running' and case when instance is null then created_at < statement_timestamp()"
        "  else pg_try_advisory_xact_lock(hashtextextended(%s || instance::text, 0)) end"
        " returning owner_id, chat_id, source", (error, LIVE_LOCK)).fetchall()
    return len(rows), [(owner, chat) for owner, chat, source in rows
                       if source == "chat" and owner is not None and chat is not None]


def end_rows(conn: psycopg.Connection, ids: list[int], *, error: str) -> tuple[int, list[tuple[int, uuid.UUID]]]:
    """End these rows as errors where they are still running (a drain's end: answering/accounting.py);
    (rows ended, the (owner, chat) of each chat question among them)."""
    rows = conn.execute(
        "update query_log set status = 'error', error = %s, finished_at = now()"
        " where id = any(%s) and status = 'running' returning owner_id, chat_id, source", (error, ids)).fetchall()
    return len(rows), [(owner, chat) for owner, chat, source in rows
                       if source == "chat" and owner is not None and chat is not None]


def retry_after_s(conn: psycopg.Connection, *, owner_id: int, limit: int, window_s: float = 3600.0,
                  adding: int = 1) -> float:
    """Seconds until `adding` more questions fit under `limit` in the window (0: they fit now; a number
    above the window when they never can)."""
    if adding > limit:
        return window_s + 1.0
    keep = limit - adding  # questions of the window that may remain alongside the new ones
    count, remaining = one(conn.execute(
        "with recent as (select created_at from query_log where owner_id = %(o)s"
        "                and created_at > now() - make_interval(secs => %(w)s) order by created_at desc"
        "                limit %(n)s)"
        " select count(*), extract(epoch from (min(created_at) + make_interval(secs => %(w)s) - now())) from recent",
        {"o": owner_id, "w": window_s, "n": keep + 1},
    ))
    return max(float(remaining or 0.0), 1.0) if count > keep else 0.0


def tokens_retry_after_s(conn: psycopg.Connection, *, owner_id: int, limit: int, window_s: float,
                         adding: int) -> float:
    """Seconds until questions costing `adding` tokens fit under `limit` tokens in the window (0: now;
    a number above the window when they never can): the newest rows whose running total, newest
    first, leaves no room must age out of the window first."""
    if adding > limit:
        return window_s + 1.0
    (remaining,) = one(conn.execute(
        "with recent as (select created_at, sum(prompt_tokens) over (order by created_at desc, id desc) as newer"
        "                from query_log where owner_id = %(o)s and created_at > now() - make_interval(secs => %(w)s))"
        " select extract(epoch from (max(created_at) + make_interval(secs => %(w)s) - now()))"
        " from recent where newer > %(keep)s",
        {"o": owner_id, "w": window_s, "keep": limit - adding}))
    return max(float(remaining), 1.0) if remaining is not None else 0.0


def metrics(conn: psycopg.Connection, *, hours: float) -> dict[str, Any]:
    """Counts, success rate, latency percentiles, tokens and answers per provider over the last `hours`."""
    window = {"h": hours}
    total, ok, blocked, errors, cancelled, running, cached, users, tin, tout = one(conn.execute(
        "select count(*), count(*) filter (where status = 'ok'), count(*) filter (where status = 'blocked'),"
        " count(*) filter (where status = 'error'), count(*) filter (where status = 'cancelled'),"
        " count(*) filter (where status = 'running'),"
        " count(*) filter (where cached), count(distinct owner_id),"
        " coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)"
        " from query_log where created_at > now() - %(h)s * interval '1 hour'",
        window,
    ))
    percentiles, mean = one(conn.execute(
        "select percentile_cont(array[0.5, 0.9, 0.95, 0.99]) within group (order by latency_ms), avg(latency_ms)"
        " from query_log where created_at > now() - %(h)s * interval '1 hour' and status <> 'running'",
        window,
    ))
    p50, p90, p95, p99 = percentiles or [None] * 4
    providers: dict[str, int] = dict(conn.execute(
        "select coalesce(provider, case when cached then 'cache' else 'none' end), count(*) from query_log"
        " where created_at > now() - %(h)s * interval '1 hour' and status = 'ok' group by 1 order by 2 desc",
        window,
    ).fetchall())
    sources: dict[str, int] = dict(conn.execute(
        "select source, count(*) from query_log where created_at > now() - %(h)s * interval '1 hour'"
        " group by 1", window).fetchall())
    finished = total - running

    def r(value: float | None) -> float | None:
        return round(float(value), 1) if value is not None else None

    return {
        "window_hours": hours,
        "questions": total,
        "by_source": sources,
        "users": users,
        "ok": ok,
        "blocked": blocked,
        "errors": errors,
        "cancelled": cancelled,
        "in_flight": running,
        "success_rate": round(ok / finished, 4) if finished else None,
        "cache_hits": cached,
        "latency_ms": {"p50": r(p50), "p90": r(p90), "p95": r(p95), "p99": r(p99), "mean": r(mean)},
        "tokens": {"input": int(tin), "output": int(tout), "total": int(tin) + int(tout)},
        "answers_by_provider": providers,
    }
