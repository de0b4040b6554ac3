"""A workspace's audit log (sql/032_teams.sql): who changed its membership and who deleted what in it.

`record` is called inside the transaction that makes the change, so a change committed always has
its row and a change rolled back has none. Reading it is for the workspace's admins and owners.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

ACTIONS = ("workspace_created", "member_added", "role_changed", "member_removed", "member_left",
           "document_deleted", "collection_deleted", "workspace_deleted", "invite_created", "invite_accepted",
           "invite_revoked")


def record(conn: psycopg.Connection, *, workspace_id: int, actor_id: int, action: str, subject: str | None = None,
           detail: dict[str, Any] | None = None) -> None:
    """One entry; the actor's name is copied so the entry still says who after they are gone."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    conn.execute("insert into workspace_audit (workspace_id, actor_id, actor, action, subject, detail)"
                 " select %s, u.id, u.username, %s, %s, %s from users u where u.id = %s",
                 (workspace_id, action, subject, Jsonb(detail or {}), actor_id))


def deleted(conn: psycopg.Connection, *, owner_id: int, actor_id: int | None, action: str, name: str) -> None:
    """Record the deletion of a thing that belonged to `owner_id` when that is a workspace (a
    personal space has no log); `actor_id` None: a deletion no person asked for, not recorded."""
    if actor_id is None:
        return
    conn.execute("insert into workspace_audit (workspace_id, actor_id, actor, action, subject)"
                 " select w.id, u.id, u.username, %s, %s from workspaces w, users u where w.id = %s and u.id = %s",
                 (action, name, owner_id, actor_id))


def entries(conn: psycopg.Connection, *, workspace_id: int, limit: int, offset: int = 0) -> list[dict[str, Any]]:
    """A page of the workspace's entries, the newest first (the caller checked the reader's role)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("select id, actor, action, subject, detail, at from workspace_audit"
                           " where workspace_id = %s order by id desc limit %s offset %s",
                           (workspace_id, limit, offset)).fetchall()
