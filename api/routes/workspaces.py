"""Workspaces (issue 43): create one, see yours and their members, add a member by username with a
role, change a role, remove a member, leave, delete a workspace with everything in it.

Who may do what is storage/workspaces.py's, in the database transaction that does it: members
manage members as admins or owners, never giving a role above their own; a workspace keeps at least
one owner; only an owner deletes it. A workspace you are not a member of answers 404 like one that
does not exist (docs/teams.md).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, Field

from api.access import BIGINT_MAX, refused
from api.deps import CurrentUser, DbDep
from api.paging import MAX_OFFSET, page, page_query
from api.routes.admin import figures_out
from api.schemas import InputErrorOut, WorkspaceFigures, error
from api.text import LoginName, WorkspaceName, unstorable
from storage import audit, invites, workspace_metrics, workspaces

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/workspaces", tags=["workspaces"])

Role = Literal["owner", "admin", "editor", "viewer"]
WorkspaceId = Annotated[int, Path(ge=1, le=BIGINT_MAX, description="the workspace's id")]
MAX_WORKSPACES = 100  # workspaces one user may create or be in


class WorkspaceIn(BaseModel):
    model_config = {"extra": "forbid"}
    name: WorkspaceName


class MemberIn(BaseModel):
    model_config = {"extra": "forbid"}
    username: LoginName
    role: Role = Field(description="viewer: search, ask, open cited pages; editor: also upload and delete "
                                   "documents, manage collections; admin: also manage members up to admin; "
                                   "owner: everything, deleting the workspace too")


class RoleIn(BaseModel):
    model_config = {"extra": "forbid"}
    role: Role


class WorkspaceOut(BaseModel):
    id: int
    name: str
    role: Role = Field(description="your role in it")
    members: int
    documents: int
    created_at: str


class WorkspaceList(BaseModel):
    workspaces: list[WorkspaceOut]


class MemberOut(BaseModel):
    username: str
    role: Role
    added_at: str


class MemberList(BaseModel):
    members: list[MemberOut]


def _username(value: str) -> str:
    """A username from the path: 422 for what no name can hold (the database would refuse it)."""
    if (problem := unstorable(value)) is not None:
        raise HTTPException(422, f"the username contains {problem}")
    return value


def _out(w: dict[str, Any]) -> dict[str, Any]:
    return {"id": w["id"], "name": w["name"], "role": w["role"], "members": w["members"],
            "documents": w["documents"], "created_at": w["created_at"].isoformat()}


NOT_FOUND = error("no such workspace (or you are not a member of it)")


@router.post("", status_code=201, response_model=WorkspaceOut,
             responses={409: error("you already have a workspace of that name, or too many")})
def create_workspace(body: WorkspaceIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """A new workspace; you are its owner."""
    with db.connection() as conn:
        if len(workspaces.list_mine(conn, user_id=user.id)) >= MAX_WORKSPACES:
            raise HTTPException(409, f"you are in {MAX_WORKSPACES} workspaces, the most one user may be in")
        try:
            created = workspaces.create(conn, user_id=user.id, name=body.name)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s created by user_id=%s", created["id"], user.id)
    return _out(created)


@router.get("", response_model=WorkspaceList)
def list_workspaces(user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """The workspaces you are a member of, with your role in each."""
    with db.connection() as conn:
        return {"workspaces": [_out(w) for w in workspaces.list_mine(conn, user_id=user.id)]}


@router.get("/{workspace_id}", response_model=WorkspaceOut, responses={404: NOT_FOUND})
def get_workspace(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        found = workspaces.get(conn, user_id=user.id, workspace_id=workspace_id)
    if found is None:
        raise HTTPException(404, "no such workspace")
    return _out(found)


@router.delete("/{workspace_id}", status_code=204, responses={403: error("only an owner deletes a workspace"),
                                                               404: NOT_FOUND})
def delete_workspace(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep, request: Request) -> Response:
    """Delete the workspace and everything in it: its documents (their chunks, jobs and files), its
    collections and memberships. Owners only; it cannot be undone."""
    with db.connection() as conn:
        try:
            files = workspaces.delete(conn, user_id=user.id, workspace_id=workspace_id)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    store = request.app.state.files
    for content_hash, fmt in files:
        try:
            store.delete(workspace_id, content_hash, fmt)
        except Exception:  # the rows are gone; a stale file is logged, not fatal
            log.warning("workspace %s: a stored file could not be deleted", workspace_id)
    log.info("workspace %s deleted by user_id=%s (%d documents)", workspace_id, user.id, len(files))
    return Response(status_code=204)


@router.get("/{workspace_id}/members", response_model=MemberList, responses={404: NOT_FOUND})
def list_members(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Every member and their role (any member may see them)."""
    with db.connection() as conn:
        try:
            found = workspaces.members(conn, user_id=user.id, workspace_id=workspace_id)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return {"members": [{"username": m["username"], "role": m["role"], "added_at": m["added_at"].isoformat()}
                        for m in found]}


@router.post("/{workspace_id}/members", status_code=201, response_model=MemberOut, responses={
    403: error("you are not an admin or owner, or the role is above yours"),
    404: error("no such workspace, or no user of that name"), 409: error("already a member")})
def add_member(workspace_id: WorkspaceId, body: MemberIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Add a user by their username, with a role no higher than yours."""
    with db.connection() as conn:
        try:
            workspaces.add_member(conn, user_id=user.id, workspace_id=workspace_id, username=body.username,
                                  role=body.role)
            member = next(m for m in workspaces.members(conn, user_id=user.id, workspace_id=workspace_id)
                          if m["username"] == body.username)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s: user_id=%s added a member as %s", workspace_id, user.id, body.role)
    return {"username": member["username"], "role": member["role"], "added_at": member["added_at"].isoformat()}


@router.patch("/{workspace_id}/members/{username}", response_model=MemberOut, responses={
    403: error("you are not an admin or owner, or their role or the new one is above yours"),
    404: error("no such workspace, or not a member"), 409: error("the last owner stays an owner"),
    422: error("an invalid body, or a username no name can hold", InputErrorOut)})
def change_role(workspace_id: WorkspaceId, username: Annotated[str, Path(max_length=256)], body: RoleIn,
                user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        try:
            workspaces.set_role(conn, user_id=user.id, workspace_id=workspace_id, username=_username(username),
                                role=body.role)
            member = next(m for m in workspaces.members(conn, user_id=user.id, workspace_id=workspace_id)
                          if m["username"] == username)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s: user_id=%s changed a member's role to %s", workspace_id, user.id, body.role)
    return {"username": member["username"], "role": member["role"], "added_at": member["added_at"].isoformat()}


@router.delete("/{workspace_id}/members/{username}", status_code=204, responses={
    403: error("you are not an admin or owner, or their role is above yours"),
    404: error("no such workspace, or not a member"), 409: error("the last owner cannot go"),
    422: error("a username no name can hold", InputErrorOut)})
def remove_member(workspace_id: WorkspaceId, username: Annotated[str, Path(max_length=256)],
                  user: CurrentUser, db: DbDep) -> Response:
    """Remove a member (your own name: leave). They lose access at once: search, answers, cited
    pages and the answer cache."""
    with db.connection() as conn:
        try:
            workspaces.remove_member(conn, user_id=user.id, workspace_id=workspace_id, username=_username(username))
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s: user_id=%s removed a member", workspace_id, user.id)
    return Response(status_code=204)


class TransferIn(BaseModel):
    model_config = {"extra": "forbid"}
    username: LoginName = Field(description="a member who becomes an owner; you step down to admin")


@router.post("/{workspace_id}/transfer", response_model=WorkspaceOut, responses={
    403: error("only an owner hands a workspace over"), 404: error("no such workspace, or not a member"),
    409: error("you named yourself")})
def transfer(workspace_id: WorkspaceId, body: TransferIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Hand the workspace over in one step: the member becomes an owner and you become an admin."""
    with db.connection() as conn:
        try:
            workspaces.transfer(conn, user_id=user.id, workspace_id=workspace_id, username=body.username)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
        found = workspaces.get(conn, user_id=user.id, workspace_id=workspace_id)
    assert found is not None
    log.info("workspace %s: user_id=%s handed it over", workspace_id, user.id)
    return _out(found)


@router.post("/{workspace_id}/leave", status_code=204,
             responses={404: NOT_FOUND, 409: error("the last owner cannot leave")})
def leave(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep) -> Response:
    with db.connection() as conn:
        try:
            workspaces.leave(conn, user_id=user.id, workspace_id=workspace_id)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return Response(status_code=204)


class AuditEntry(BaseModel):
    id: int
    actor: str = Field(description="who did it (their username when they did)")
    action: str = Field(description="workspace_created, member_added, role_changed, member_removed, member_left, "
                                    "document_deleted, collection_deleted, invite_created, invite_accepted, "
                                    "invite_revoked")
    subject: str | None = Field(description="the member, document or collection it was about")
    detail: dict[str, Any] = Field(description="e.g. the role given, or a role change's `from` and `to`")
    at: str


class AuditPage(BaseModel):
    entries: list[AuditEntry]
    next_offset: int | None = Field(default=None, description="the `offset` of the next page; null: the last")


AUDIT_PAGE_MAX = 100


@router.get("/{workspace_id}/audit", response_model=AuditPage, dependencies=[Depends(page_query)],
            responses={403: error("you are not an admin or owner of it"), 404: NOT_FOUND})
def audit_log(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep,
              limit: int | None = Query(None, ge=1, description=f"entries in this page; at most {AUDIT_PAGE_MAX}"),
              offset: int = Query(0, ge=0, le=MAX_OFFSET)) -> dict[str, Any]:
    """Who changed the membership and who deleted what, the newest first (admins and owners)."""
    with db.connection() as conn:
        try:
            workspaces.need(conn, user.id, workspace_id, workspaces.MANAGE)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
        found, next_offset = page(lambda n, skip: audit.entries(conn, workspace_id=workspace_id, limit=n,
                                                                offset=skip),
                                  limit=limit, offset=offset, cap=AUDIT_PAGE_MAX)
    return {"entries": [{**e, "at": e["at"].isoformat()} for e in found], "next_offset": next_offset}


@router.get("/{workspace_id}/metrics", response_model=WorkspaceFigures,
            responses={403: error("you are not an admin or owner of it"), 404: NOT_FOUND})
def metrics(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep,
            hours: float = Query(24.0, gt=0, le=24 * 90, description="the window questions are counted in, in "
                                                                     "hours")) -> dict[str, Any]:
    """The workspace's members by role, documents, bytes and questions in the window (admins and owners)."""
    with db.connection() as conn:
        try:
            workspaces.need(conn, user.id, workspace_id, workspaces.MANAGE)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
        found = workspace_metrics.managed(conn, user_id=user.id, hours=hours, workspace_id=workspace_id)
    if not found:  # demoted or removed between the two reads: as if never a manager
        raise HTTPException(404, "no such workspace")
    return figures_out(found[0])


# one-time invitation links ------------------------------------------------------------------------

class InviteIn(BaseModel):
    model_config = {"extra": "forbid"}
    role: Role = Field(description="the role whoever opens the link joins at: no higher than yours")
    expires_in_hours: int = Field(72, ge=1, le=invites.MAX_HOURS, description="how long the link may be used")


class InviteOut(BaseModel):
    id: int
    role: Role
    created_by: str | None
    created_at: str
    expires_at: str


class InviteMade(InviteOut):
    token: str = Field(description="shown this once: only its hash is stored")
    link: str = Field(description="the web app's page that joins with it (the token in the URL's fragment, "
                                  "which browsers never send to a server)")


class InviteList(BaseModel):
    invites: list[InviteOut]


class JoinIn(BaseModel):
    model_config = {"extra": "forbid"}
    token: str = Field(min_length=len(invites.PREFIX) + 1, max_length=100, pattern=r"^thqi_[A-Za-z0-9_-]+$")


def _invite_out(i: dict[str, Any]) -> dict[str, Any]:
    return {"id": i["id"], "role": i["role"], "created_by": i["created_by"], "created_at": i["created_at"].isoformat(),
            "expires_at": i["expires_at"].isoformat()}


class InvitePreview(BaseModel):
    workspace: str = Field(description="the workspace's name")
    role: Role = Field(description="the role joining gives")
    invited_by: str
    expires_at: str


@router.post("/join/preview", response_model=InvitePreview, responses={
    404: error("the link was used, revoked or has expired (or never existed)")})
def join_preview(body: JoinIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """What joining with the link would do, without joining (the page asks first)."""
    with db.connection() as conn:
        try:
            found = invites.preview(conn, token=body.token)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return {**found, "expires_at": found["expires_at"].isoformat()}


@router.post("/join", response_model=WorkspaceOut, responses={
    404: error("the link was used, revoked or has expired (or never existed)"),
    409: error("you are already a member, or in too many workspaces")})
def join(body: JoinIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Join a workspace with a one-time invitation link's token, at the link's role; the link is spent."""
    with db.connection() as conn:
        if len(workspaces.list_mine(conn, user_id=user.id)) >= MAX_WORKSPACES:
            raise HTTPException(409, f"you are in {MAX_WORKSPACES} workspaces, the most one user may be in")
        try:
            joined = invites.accept(conn, user_id=user.id, token=body.token)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s: user_id=%s joined by an invitation link", joined["id"], user.id)
    return _out(joined)


@router.post("/{workspace_id}/invites", status_code=201, response_model=InviteMade, responses={
    403: error("you are not an admin or owner, or the role is above yours"), 404: NOT_FOUND,
    409: error("too many open links")})
def create_invite(workspace_id: WorkspaceId, body: InviteIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """A one-time link: whoever opens it while signed in, before it expires, joins at its role."""
    with db.connection() as conn:
        try:
            token, made = invites.create(conn, user_id=user.id, workspace_id=workspace_id, role=body.role,
                                         hours=body.expires_in_hours)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    log.info("workspace %s: user_id=%s made an invitation link as %s", workspace_id, user.id, body.role)
    return {**_invite_out(made), "token": token, "link": f"/#/join/{token}"}


@router.get("/{workspace_id}/invites", response_model=InviteList,
            responses={403: error("you are not an admin or owner of it"), 404: NOT_FOUND})
def list_invites(workspace_id: WorkspaceId, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """The links not used yet and not expired (their tokens are not kept)."""
    with db.connection() as conn:
        try:
            found = invites.listed(conn, user_id=user.id, workspace_id=workspace_id)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return {"invites": [_invite_out(i) for i in found]}


@router.delete("/{workspace_id}/invites/{invite_id}", status_code=204, responses={
    403: error("you are not an admin or owner of it"), 404: error("no such workspace, or no such open link")})
def revoke_invite(workspace_id: WorkspaceId, invite_id: Annotated[int, Path(ge=1, le=BIGINT_MAX)],
                  user: CurrentUser, db: DbDep) -> Response:
    with db.connection() as conn:
        try:
            invites.revoke(conn, user_id=user.id, workspace_id=workspace_id, invite_id=invite_id)
        except workspaces.WorkspaceError as exc:
            raise refused(exc) from None
    return Response(status_code=204)
