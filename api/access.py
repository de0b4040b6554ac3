"""Which owners a request reads or writes (a user's personal space, their workspaces), from the
database at the moment of the request (storage/workspaces.py), and the workspace refusals as HTTP.

Reading needs membership (viewer or above), writing an editor's role. Without a workspace a request
reads everything the caller may read and writes where they may write; with one, only that
workspace. A workspace the caller is not a member of answers 404, exactly like one that does not
exist; a member whose role is too low gets 403.
"""

from __future__ import annotations

from typing import Annotated

import psycopg
from fastapi import HTTPException, Query

from api.schemas import Responses, error
from identity.security import User
from storage import workspaces

BIGINT_MAX = 2**63 - 1  # a larger id cannot be a workspace's: refused before the database sees it

WorkspaceQuery = Annotated[int | None, Query(ge=1, le=BIGINT_MAX, description=(
    "a workspace's id: only its documents (you must be a member; uploading needs editor or above). "
    "Left out: everything you may read, and uploads go to your personal space"))]

# what a route that takes a workspace documents for it (404 for a stranger's, 403 below the role)
WORKSPACE_READ_REFUSED: Responses = {404: error("no such workspace (or you are not a member of it)")}
WORKSPACE_WRITE_REFUSED: Responses = {**WORKSPACE_READ_REFUSED,
                                      403: error("a viewer of the workspace (writing needs editor or above)")}


def refused(exc: workspaces.WorkspaceError) -> HTTPException:
    """The HTTP answer to a refused workspace action."""
    if isinstance(exc, workspaces.NoSuchWorkspace | workspaces.NoSuchMember):
        return HTTPException(404, str(exc))
    if isinstance(exc, workspaces.NotAllowed):
        return HTTPException(403, str(exc))
    return HTTPException(409, str(exc))


def bound(user: User, workspace_id: int | None) -> int | None:
    """The workspace a request is limited to: the one it names, or its API key's when the key is bound
    to one (naming another then answers 404, like a workspace the caller is not in)."""
    if user.workspace_id is None:
        return workspace_id
    if workspace_id is not None and workspace_id != user.workspace_id:
        raise HTTPException(404, "no such workspace (this API key is bound to another one)")
    return user.workspace_id


def reading(conn: psycopg.Connection, user: User, workspace_id: int | None = None) -> list[int]:
    """The owners the caller reads: all of theirs, or the one workspace (404 unless a member)."""
    workspace_id = bound(user, workspace_id)
    if workspace_id is not None:
        try:
            workspaces.need(conn, user.id, workspace_id, workspaces.READ)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return workspaces.spaces(conn, user.id, workspace_id)


def writing(conn: psycopg.Connection, user: User, workspace_id: int | None = None) -> list[int]:
    """The owners the caller writes: their own and their workspaces as an editor or above, or the one
    workspace (404 unless a member, 403 below editor)."""
    workspace_id = bound(user, workspace_id)
    if workspace_id is not None:
        try:
            workspaces.need(conn, user.id, workspace_id, workspaces.WRITE)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return workspaces.spaces(conn, user.id, workspace_id, least=workspaces.WRITE)


def target(conn: psycopg.Connection, user: User, workspace_id: int | None) -> int:
    """Where something new goes: the workspace (its editors and above) or the caller's own space."""
    workspace_id = bound(user, workspace_id)
    if workspace_id is None:
        return user.id
    writing(conn, user, workspace_id)
    return workspace_id


def not_yours(found: bool, what: str) -> HTTPException:
    """The refusal of a write the caller's role does not allow, on a thing `found` among what they
    read (403: they can see it), else 404 like a missing one."""
    if found:
        return HTTPException(403, f"your role where this {what} is does not allow changing it (editor or above)")
    return HTTPException(404, f"no such {what}")
