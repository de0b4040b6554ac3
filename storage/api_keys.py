"""API keys (sql/030_api_keys.sql): rows by their owner, and the one lookup a request with a key makes.

Takes key hashes, never keys: making and hashing keys lives in api/routes/keys.py. Every read and delete
but `by_hash` names the owner, so a stranger's key id matches nothing, exactly like a missing one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import parse_uuid

COLUMNS = ("id, name, prefix, scopes, created_at, expires_at, last_used_at, workspace_id,"
           " (select w.name from workspaces w where w.id = workspace_id) as workspace")
TOUCH_EVERY_S = 60  # last_used_at moves at most this often: one write a minute per key, not one a request


def create(conn: psycopg.Connection, *, user_id: int, name: str, key_hash: str, prefix: str, scopes: list[str],
           expires_at: datetime | None, workspace_id: int | None = None) -> dict[str, Any]:
    """A key; `workspace_id`: bound to that workspace (the caller checked the membership)."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"insert into api_keys (user_id, name, key_hash, prefix, scopes, expires_at, workspace_id)"
                          f" values (%s, %s, %s, %s, %s, %s, %s) returning {COLUMNS}",
                          (user_id, name, key_hash, prefix, scopes, expires_at, workspace_id)).fetchone()
    assert row is not None
    return row


def count(conn: psycopg.Connection, *, user_id: int) -> int:
    row = conn.execute("select count(*) from api_keys where user_id = %s", (user_id,)).fetchone()
    return int(row[0]) if row else 0


def list_keys(conn: psycopg.Connection, *, user_id: int) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {COLUMNS} from api_keys where user_id = %s order by created_at, id",
                           (user_id,)).fetchall()


def delete(conn: psycopg.Connection, *, user_id: int, key_id: str) -> bool:
    """Whether the user's key of that id existed (and is gone now)."""
    found = parse_uuid(key_id)
    if found is None:
        return False
    return conn.execute("delete from api_keys where id = %s and user_id = %s",
                        (found, user_id)).rowcount == 1


def by_hash(conn: psycopg.Connection, key_hash: str) -> dict[str, Any] | None:
    """The live key with this hash and its user's name, or None (no such key, revoked, or expired).
    Stamps last_used_at when it is older than TOUCH_EVERY_S."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "select k.id, k.user_id, u.username, k.scopes, k.workspace_id,"
            " k.last_used_at < now() - make_interval(secs => %s) or k.last_used_at is null as stale"
            " from api_keys k join users u on u.id = k.user_id"
            " where k.key_hash = %s and (k.expires_at is null or k.expires_at > now())",
            (TOUCH_EVERY_S, key_hash)).fetchone()
    if row is not None and row["stale"]:
        conn.execute("update api_keys set last_used_at = now() where id = %s", (row["id"],))
    return row
