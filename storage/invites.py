"""One-time invitation links to a workspace (sql/032_teams.sql): an admin or owner makes one with a
role (no higher than their own) and an expiry; whoever opens it while signed in joins at that role,
once. Only the token's sha256 is stored, like an API key's; the link is shown once.

A link stands for its maker: it is honoured only while they still manage the workspace at a role at
least as high as the link's, so demoting or removing them voids their links. A used, revoked,
expired or voided link answers exactly like one that never existed.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import audit, tenancy, workspaces
from storage.workspaces import MANAGE, Conflict, NoSuchWorkspace, NotAllowed, need, rank

PREFIX = "thqi_"
MAX_OPEN = 50  # open links per workspace: an admin's script cannot fill the table
MAX_HOURS = 30 * 24


class NoSuchInvite(NoSuchWorkspace):
    """No usable link of that token (or id): never used, revoked, expired and void look alike."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(conn: psycopg.Connection, *, user_id: int, workspace_id: int, role: str,
           hours: int) -> tuple[str, dict[str, Any]]:
    """A new link and its row; the token is returned this once."""
    workspaces.check_role(role)
    if not 1 <= hours <= MAX_HOURS:
        raise ValueError(f"a link expires in 1 to {MAX_HOURS} hours")
    token = PREFIX + secrets.token_urlsafe(24)
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        conn.execute("select 1 from workspaces where id = %s for update", (workspace_id,))
        mine = need(conn, user_id, workspace_id, MANAGE)
        if rank(role) > rank(mine):
            raise NotAllowed(f"an {mine} cannot invite anyone as {role}")
        if len(open_invites(conn, workspace_id=workspace_id)) >= MAX_OPEN:
            raise Conflict(f"the workspace has {MAX_OPEN} open invitation links; revoke some first")
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute("insert into workspace_invites (workspace_id, token_hash, role, created_by, expires_at)"
                              " values (%s, %s, %s, %s, now() + %s) returning id", (
                                  workspace_id, _hash(token), role, user_id, timedelta(hours=hours))).fetchone()
        assert row is not None
        made = next(i for i in open_invites(conn, workspace_id=workspace_id) if i["id"] == row["id"])
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="invite_created",
                     detail={"role": role, "expires_at": made["expires_at"].isoformat()})
    return token, made


def open_invites(conn: psycopg.Connection, *, workspace_id: int) -> list[dict[str, Any]]:
    """The workspace's links not used and not expired, the newest first (the caller checked the role)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select i.id, i.role, i.created_at, i.expires_at, u.username as created_by from workspace_invites i"
            " left join users u on u.id = i.created_by"
            " where i.workspace_id = %s and i.used_by is null and i.expires_at > now()"
            " order by i.id desc", (workspace_id,)).fetchall()


def listed(conn: psycopg.Connection, *, user_id: int, workspace_id: int) -> list[dict[str, Any]]:
    with tenancy.scoped(conn, workspace_id):
        need(conn, user_id, workspace_id, MANAGE)
        return open_invites(conn, workspace_id=workspace_id)


def revoke(conn: psycopg.Connection, *, user_id: int, workspace_id: int, invite_id: int) -> None:
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        need(conn, user_id, workspace_id, MANAGE)
        row = conn.execute("delete from workspace_invites where id = %s and workspace_id = %s and used_by is null"
                           " returning role", (invite_id, workspace_id)).fetchone()
        if row is None:
            raise NoSuchInvite("no such invitation link (or it was used)")
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="invite_revoked",
                     detail={"role": row[0]})


GONE = "this invitation link cannot be used: it was used already, revoked or has expired"


def preview(conn: psycopg.Connection, *, token: str) -> dict[str, Any]:
    """What a usable link offers (the workspace's name, the role, its maker, its expiry), for the page
    that asks whether to join; NoSuchInvite like `accept` for any link that cannot be used. As the
    login: the token is what names the workspace, and its reader is no member of it yet."""
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(
            "select w.name as workspace, i.role, u.username as invited_by, i.expires_at, m.role as makers_role"
            " from workspace_invites i join workspaces w on w.id = i.workspace_id"
            " join users u on u.id = i.created_by"
            " join workspace_members m on m.workspace_id = i.workspace_id and m.user_id = i.created_by"
            " where i.token_hash = %s and i.used_by is null and i.expires_at > now()", (_hash(token),)).fetchone()
    if found is None or not _honoured(found["makers_role"], found["role"]):
        raise NoSuchInvite(GONE)
    return {k: found[k] for k in ("workspace", "role", "invited_by", "expires_at")}


def _honoured(makers_role: str | None, role: str) -> bool:
    """A link stands while its maker manages the workspace at a role at least as high as the link's."""
    return makers_role is not None and rank(makers_role) >= rank(MANAGE) and rank(makers_role) >= rank(role)


def accept(conn: psycopg.Connection, *, user_id: int, token: str) -> dict[str, Any]:
    """Join the link's workspace at its role and spend the link; the workspace, with the role."""
    gone = NoSuchInvite(GONE)
    with conn.transaction():
        # the token names the workspace: found as the login (its reader is no member yet), the rest
        # scoped to that workspace (storage/tenancy.py)
        found = conn.execute("select id, workspace_id, role, created_by from workspace_invites where token_hash = %s"
                             " and used_by is null and expires_at > now() for update", (_hash(token),)).fetchone()
        if found is None:
            raise gone
        invite_id, workspace_id, role, maker = found
        _join(conn, user_id=user_id, invite_id=invite_id, workspace_id=int(workspace_id), role=role, maker=maker)
    joined = workspaces.get(conn, user_id=user_id, workspace_id=int(workspace_id))
    assert joined is not None
    return joined


def _join(conn: psycopg.Connection, *, user_id: int, invite_id: int, workspace_id: int, role: str,
          maker: int | None) -> None:
    gone = NoSuchInvite(GONE)
    with tenancy.scoped(conn, workspace_id):
        conn.execute("select 1 from workspaces where id = %s for update", (workspace_id,))
        theirs = workspaces.role_of(conn, maker, workspace_id) if maker is not None else None
        if not _honoured(theirs, role):
            raise gone  # its maker no longer manages the workspace at that role: the link is void
        if workspaces.role_of(conn, user_id, workspace_id) is not None:
            raise Conflict("you are already a member of this workspace; the link stays unused")
        conn.execute("insert into workspace_members (workspace_id, user_id, role, added_by) values (%s, %s, %s, %s)",
                     (workspace_id, user_id, role, maker))
        conn.execute("update workspace_invites set used_by = %s, used_at = now() where id = %s", (user_id, invite_id))
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="invite_accepted",
                     detail={"role": role})
