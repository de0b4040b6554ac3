"""Workspaces: documents and collections a team shares, with roles (sql/029_workspaces.sql).

A workspace owns its documents the way a user owns theirs (its row in `users` is their `owner_id`),
so reading and writing come down to a list of owners: `spaces` answers which owners a user may use
at a least role, from the database at the moment of asking. Every rule about who may change a
membership lives here, inside one transaction that locks the workspace, so two admins at once never
leave it without an owner. A workspace the user is not a member of is NoSuchWorkspace, exactly like
one that does not exist.

A membership change runs under row security scoped to its workspace (storage/tenancy.py,
sql/035_app_role_everywhere.sql): its statements touch that workspace's members and audit log only.
Making a workspace and deleting one stay the login's: each adds or removes a row of `users` (the
workspace's owner id, a new tenant), which the app role never writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import audit, tenancy
from storage.rows import scalar

ROLES = ("viewer", "editor", "admin", "owner")  # lowest first
READ, WRITE, MANAGE = "viewer", "editor", "admin"  # the least role that reads, writes, manages members
MAX_NAME = 100

Owners = int | Sequence[int]  # one owner (a user's personal space, a workspace) or several


def owner_ids(owners: Owners) -> list[int]:
    """The owners a query is scoped to, as the list its `owner_id = any(%s::bigint[])` takes."""
    return [owners] if isinstance(owners, int) else [int(o) for o in owners]


class WorkspaceError(Exception):
    """A refused workspace action; the message is safe to show the caller."""


class NoSuchWorkspace(WorkspaceError, LookupError):
    """No workspace of that id or name among the caller's (a stranger's answers the same)."""


class NoSuchMember(WorkspaceError, LookupError):
    """No user of that name, or not a member (for role changes and removal)."""


class NotAllowed(WorkspaceError):
    """The caller's role does not allow it (a viewer uploading, an admin naming an owner)."""


class Conflict(WorkspaceError):
    """It would break a rule of the workspace's state: the last owner, a name taken, a member twice."""


def rank(role: str) -> int:
    return ROLES.index(role)


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    return role


def check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not 1 <= len(cleaned) <= MAX_NAME:
        raise ValueError(f"a workspace name has 1 to {MAX_NAME} characters")
    return cleaned


def spaces(conn: psycopg.Connection, user_id: int, workspace_id: int | None = None, *,
           least: str = READ) -> list[int]:
    """The owners whose documents `user_id` may use at role `least` or above: their own and their
    workspaces' (only `workspace_id`'s when given; empty when they are not a member at that role)."""
    row = conn.execute("select member_spaces(%s, %s, %s)", (user_id, workspace_id, check_role(least))).fetchone()
    return [int(o) for o in row[0]] if row else []


def role_of(conn: psycopg.Connection, user_id: int, workspace_id: int, *, lock: bool = False) -> str | None:
    sql = "select role from workspace_members where workspace_id = %s and user_id = %s"
    row = conn.execute(sql + (" for update" if lock else ""), (workspace_id, user_id)).fetchone()
    return str(row[0]) if row else None


def need(conn: psycopg.Connection, user_id: int, workspace_id: int, least: str) -> str:
    """The caller's role in the workspace when it is at least `least`; NoSuchWorkspace for a
    non-member (a stranger's workspace looks absent), NotAllowed for a lower role."""
    role = role_of(conn, user_id, workspace_id)
    if role is None:
        raise NoSuchWorkspace("no such workspace")
    if rank(role) < rank(least):
        raise NotAllowed(f"your role in this workspace is {role}; this needs {least} or above")
    return role


def _lock(conn: psycopg.Connection, workspace_id: int) -> None:
    """Serialise membership changes of one workspace until the transaction ends."""
    conn.execute("select 1 from workspaces where id = %s for update", (workspace_id,))


WORKSPACE_COLUMNS = ("w.id, w.name, m.role, w.created_at,"
                     " (select count(*) from workspace_members a where a.workspace_id = w.id) as members,"
                     " (select count(*) from documents d where d.owner_id = w.id) as documents")


def create(conn: psycopg.Connection, *, user_id: int, name: str) -> dict[str, Any]:
    """A new workspace with `user_id` as its owner; Conflict when they already have one of that name."""
    name = check_name(name)
    with conn.transaction():
        # one name per member: serialise this user's creations so two at once cannot both pass the check
        conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"thotqen:workspaces:{user_id}",))
        if find_by_name(conn, user_id=user_id, name=name) is not None:
            raise Conflict(f"you already have a workspace named {name!r}")
        ws = scalar(conn.execute("insert into users (username, kind) values (%s, 'workspace') returning id",
                                 (f"workspace:{uuid.uuid4()}",)), int)
        conn.execute("insert into workspaces (id, name, created_by) values (%s, %s, %s)", (ws, name, user_id))
        conn.execute("insert into workspace_members (workspace_id, user_id, role, added_by)"
                     " values (%s, %s, 'owner', %s)", (ws, user_id, user_id))
        audit.record(conn, workspace_id=ws, actor_id=user_id, action="workspace_created", detail={"name": name})
    found = get(conn, user_id=user_id, workspace_id=ws)
    assert found is not None
    return found


def get(conn: psycopg.Connection, *, user_id: int, workspace_id: int) -> dict[str, Any] | None:
    """The workspace with the caller's role; None unless they are a member."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {WORKSPACE_COLUMNS} from workspaces w join workspace_members m"
                           " on m.workspace_id = w.id and m.user_id = %s where w.id = %s",
                           (user_id, workspace_id)).fetchone()


def find_by_name(conn: psycopg.Connection, *, user_id: int, name: str) -> dict[str, Any] | None:
    """The caller's workspace of that name (names are unique among one member's workspaces only)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {WORKSPACE_COLUMNS} from workspaces w join workspace_members m"
                           " on m.workspace_id = w.id and m.user_id = %s where w.name = %s order by w.id limit 1",
                           (user_id, " ".join(name.split()))).fetchone()


def list_mine(conn: psycopg.Connection, *, user_id: int) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {WORKSPACE_COLUMNS} from workspaces w join workspace_members m"
                           " on m.workspace_id = w.id and m.user_id = %s order by w.name, w.id", (user_id,)).fetchall()


def members(conn: psycopg.Connection, *, user_id: int, workspace_id: int) -> list[dict[str, Any]]:
    """Every member with their role, owners first; any member may see who else is in it."""
    with tenancy.scoped(conn, workspace_id), conn.cursor(row_factory=dict_row) as cur:
        need(conn, user_id, workspace_id, READ)
        return cur.execute(
            "select u.username, m.role, m.added_at from workspace_members m join users u on u.id = m.user_id"
            " where m.workspace_id = %s order by array_position(array['owner', 'admin', 'editor', 'viewer'], m.role),"
            " u.username", (workspace_id,)).fetchall()


def _person(conn: psycopg.Connection, username: str) -> int:
    row = conn.execute("select id from users where username = %s and kind <> 'workspace'", (username,)).fetchone()
    if row is None:
        raise NoSuchMember(f"no user is named {username!r}")
    return int(row[0])


def _owners(conn: psycopg.Connection, workspace_id: int) -> int:
    return scalar(conn.execute("select count(*) from workspace_members where workspace_id = %s and role = 'owner'",
                               (workspace_id,)), int)


def add_member(conn: psycopg.Connection, *, user_id: int, workspace_id: int, username: str,
               role: str) -> dict[str, Any]:
    """Add the user named `username` at `role`: the caller is an admin or owner, and gives no role
    above their own."""
    check_role(role)
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        _lock(conn, workspace_id)
        mine = need(conn, user_id, workspace_id, MANAGE)
        if rank(role) > rank(mine):
            raise NotAllowed(f"an {mine} cannot make anyone {role}")
        target = _person(conn, username)
        added = conn.execute("insert into workspace_members (workspace_id, user_id, role, added_by)"
                             " values (%s, %s, %s, %s) on conflict do nothing", (workspace_id, target, role, user_id))
        if added.rowcount != 1:
            raise Conflict(f"{username!r} is already a member; change their role instead")
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="member_added", subject=username,
                     detail={"role": role})
    return {"username": username, "role": role}


def set_role(conn: psycopg.Connection, *, user_id: int, workspace_id: int, username: str,
             role: str) -> dict[str, Any]:
    """Change a member's role: the caller manages members, outranks neither the member's present role
    nor the new one by less than nothing (no one lifts anyone above themselves), and the last owner
    stays an owner."""
    check_role(role)
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        _lock(conn, workspace_id)
        mine = need(conn, user_id, workspace_id, MANAGE)
        target = _person(conn, username)
        theirs = role_of(conn, target, workspace_id, lock=True)
        if theirs is None:
            raise NoSuchMember(f"{username!r} is not a member of this workspace")
        if rank(theirs) > rank(mine) or rank(role) > rank(mine):
            raise NotAllowed(f"an {mine} can change roles up to {mine} only")
        if theirs == "owner" and role != "owner" and _owners(conn, workspace_id) == 1:
            raise Conflict("the workspace's last owner stays an owner: make another member owner first")
        conn.execute("update workspace_members set role = %s where workspace_id = %s and user_id = %s",
                     (role, workspace_id, target))
        if role != theirs:
            audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="role_changed", subject=username,
                         detail={"from": theirs, "to": role})
    return {"username": username, "role": role}


def remove_member(conn: psycopg.Connection, *, user_id: int, workspace_id: int, username: str) -> None:
    """Remove a member (the caller's own name: leave). Others are removed by an admin or owner who
    ranks at least as high as they do; the last owner never goes."""
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        _lock(conn, workspace_id)
        mine = need(conn, user_id, workspace_id, READ)  # a non-member learns nothing, not even who exists
        target = _person(conn, username) if username else user_id
        if target != user_id:
            need(conn, user_id, workspace_id, MANAGE)
        theirs = role_of(conn, target, workspace_id, lock=True)
        if theirs is None:
            raise NoSuchMember(f"{username!r} is not a member of this workspace")
        if rank(theirs) > rank(mine):
            raise NotAllowed(f"an {mine} cannot remove an {theirs}")
        if theirs == "owner" and _owners(conn, workspace_id) == 1:
            raise Conflict("the workspace's last owner cannot leave it: make another member owner first, "
                           "or delete the workspace")
        conn.execute("delete from workspace_members where workspace_id = %s and user_id = %s",
                     (workspace_id, target))
        left = target == user_id
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id,
                     action="member_left" if left else "member_removed", subject=None if left else username,
                     detail={"role": theirs})


def transfer(conn: psycopg.Connection, *, user_id: int, workspace_id: int, username: str) -> None:
    """Hand the workspace over in one step: the member named becomes an owner and the caller, an
    owner, steps down to admin (both recorded as role changes). Nobody is ever left without an owner,
    and two owners handing over at once are serialised by the lock."""
    with conn.transaction(), tenancy.scoped(conn, workspace_id):
        _lock(conn, workspace_id)
        need(conn, user_id, workspace_id, "owner")
        target = _person(conn, username)
        if target == user_id:
            raise Conflict("you are an owner already: name another member to hand the workspace to")
        theirs = role_of(conn, target, workspace_id, lock=True)
        if theirs is None:
            raise NoSuchMember(f"{username!r} is not a member of this workspace; add them first")
        conn.execute("update workspace_members set role = 'owner' where workspace_id = %s and user_id = %s",
                     (workspace_id, target))
        conn.execute("update workspace_members set role = 'admin' where workspace_id = %s and user_id = %s",
                     (workspace_id, user_id))
        if theirs != "owner":
            audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="role_changed", subject=username,
                         detail={"from": theirs, "to": "owner"})
        me = scalar(conn.execute("select username from users where id = %s", (user_id,)), str)
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="role_changed", subject=me,
                     detail={"from": "owner", "to": "admin"})


def leave(conn: psycopg.Connection, *, user_id: int, workspace_id: int) -> None:
    remove_member(conn, user_id=user_id, workspace_id=workspace_id, username="")


def delete(conn: psycopg.Connection, *, user_id: int, workspace_id: int) -> list[tuple[str, str]]:
    """Delete the workspace and everything in it (documents, chunks, jobs, collections, memberships:
    they cascade from its row); owners only. Answers (content_hash, format) of each document's
    stored file, for the caller to delete from the file store."""
    with conn.transaction():
        _lock(conn, workspace_id)
        need(conn, user_id, workspace_id, "owner")
        files = [(str(h), str(f)) for h, f in conn.execute(
            "select content_hash, format from documents where owner_id = %s", (workspace_id,)).fetchall()]
        name = scalar(conn.execute("select name from workspaces where id = %s", (workspace_id,)), str)
        audit.record(conn, workspace_id=workspace_id, actor_id=user_id, action="workspace_deleted", subject=name,
                     detail={"documents": len(files)})
        conn.execute("delete from users where id = %s and kind = 'workspace'", (workspace_id,))
    return files


def names(conn: psycopg.Connection, owners: Sequence[int]) -> dict[int, str]:
    """{id: name} of the workspaces among `owners` (a personal space is not one)."""
    return dict(conn.execute("select id, name from workspaces where id = any(%s::bigint[])",
                             (list(owners),)).fetchall())
