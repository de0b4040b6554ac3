"""Figures per workspace for admin metrics (issue 43): members by role, documents and the bytes they
keep, and the questions asked in it over a window (query_log.workspace_id, sql/036_workspace_metrics.sql).

Two readers: a server admin (THOTQEN_ADMINS) sees every workspace, the busiest first; a workspace's
own admins and owners see theirs. For the latter the scope is in the query itself (a join on the
caller's membership at admin or above), so a workspace they only view, or are no member of, is
absent from the result exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

MAX_LISTED = 100  # workspaces listed in one answer; `total` says how many there are
# Equally busy, the newest first: past the cap an admin sees the workspaces just made, not the oldest idle ones.

_FIGURES = """
select w.id, w.name, w.created_at,
  (select count(*) from workspace_members m where m.workspace_id = w.id) as members,
  (select coalesce(jsonb_object_agg(r.role, r.n), '{{}}'::jsonb) from (select m.role, count(*) as n
     from workspace_members m where m.workspace_id = w.id group by m.role) r) as roles,
  d.documents, d.bytes,
  (select count(*) from query_log q where q.workspace_id = w.id
     and q.created_at > now() - %(h)s * interval '1 hour') as questions
from workspaces w
cross join lateral (select count(*) as documents, coalesce(sum(size_bytes), 0)::bigint as bytes
                    from documents where owner_id = w.id) d
where {scope}
order by questions desc, d.bytes desc, w.id desc
limit %(limit)s
"""

# the caller manages it: an admin or owner of it, read at this moment
_MANAGED = ("exists (select 1 from workspace_members me where me.workspace_id = w.id"
            " and me.user_id = %(user)s and me.role in ('owner', 'admin'))")


def _rows(conn: psycopg.Connection, scope: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(_FIGURES.format(scope=scope), params).fetchall()


def every(conn: psycopg.Connection, *, hours: float, limit: int = MAX_LISTED) -> dict[str, Any]:
    """Every workspace's figures, the busiest `limit` (for a server admin)."""
    total = conn.execute("select count(*) from workspaces").fetchone()
    return {"total": int(total[0]) if total else 0,
            "workspaces": _rows(conn, "true", {"h": hours, "limit": limit})}


def managed(conn: psycopg.Connection, *, user_id: int, hours: float,
            workspace_id: int | None = None) -> list[dict[str, Any]]:
    """The figures of the workspaces `user_id` is an admin or owner of (only `workspace_id`'s when
    given: empty when they do not manage it, whether or not it exists)."""
    scope, params = _MANAGED, {"h": hours, "limit": MAX_LISTED, "user": user_id}
    if workspace_id is not None:
        scope, params = f"w.id = %(ws)s and {_MANAGED}", {**params, "ws": workspace_id}
    return _rows(conn, scope, params)
