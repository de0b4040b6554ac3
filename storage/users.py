"""Users: CLI users are rows created on first use."""

from __future__ import annotations

import psycopg

from storage.rows import scalar


def get_or_create_user(conn: psycopg.Connection, username: str) -> int:
    row = conn.execute(
        "insert into users (username) values (%s) on conflict (username) do nothing returning id",
        (username,),
    ).fetchone()
    if row:
        return int(row[0])
    return scalar(conn.execute("select id from users where username = %s", (username,)), int)


def find_user(conn: psycopg.Connection, username: str) -> int | None:
    row = conn.execute("select id from users where username = %s", (username,)).fetchone()
    return row[0] if row else None
