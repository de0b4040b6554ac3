"""API keys: `POST /api/keys` makes one (the key in the answer, once), `GET /api/keys` lists them,
`DELETE /api/keys/{id}` revokes one at once. Only a person's session manages keys (api/scopes.py
refuses a key here); ownership is in SQL (storage/api_keys.py), so a stranger's key id answers
exactly like a missing one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Response
from pydantic import BaseModel, ConfigDict, Field

from api import scopes
from api.access import BIGINT_MAX, reading
from api.deps import CurrentUser, DbDep
from api.schemas import ApiKeyCreated, ApiKeyList, error
from api.text import MAX, KeyName
from storage import api_keys

router = APIRouter(prefix="/api/keys", tags=["keys"])
Scope = Literal["read", "ask", "ingest"]


def _all_scopes() -> list[Scope]:
    return ["read", "ask", "ingest"]


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: KeyName = Field(description="what the key is for (\"CI upload\", \"Claude Desktop\")")
    scopes: list[Scope] = Field(default_factory=_all_scopes, min_length=1, max_length=3,
                                description="what the key may do: read, ask, ingest (default: all three)")
    expires_in_days: int | None = Field(default=None, ge=1, le=MAX["key_days"],
                                        description="days until the key stops working (default: until revoked)")
    workspace_id: int | None = Field(default=None, ge=1, le=BIGINT_MAX, description=(
        "bind the key to a workspace you are a member of: it reads (and, as your role allows, writes) that "
        "workspace only, on /api, /v1, MCP and /rag, and stops working when you leave it"))


def create_key(conn: Any, user_id: int, name: str, wanted: list[str], days: int | None,
               workspace_id: int | None = None) -> dict[str, Any]:
    """A new key for the user (the route's and `thotqen keys create`'s); ValueError past MAX["api_keys"]."""
    if api_keys.count(conn, user_id=user_id) >= MAX["api_keys"]:
        raise ValueError(f"you have {MAX['api_keys']} API keys, the most one user may have; revoke one first")
    key, digest, prefix = scopes.mint()
    expires = datetime.now(UTC) + timedelta(days=days) if days else None
    ordered = [s for s in scopes.SCOPES if s in set(wanted)]  # one each, in a fixed order
    row = api_keys.create(conn, user_id=user_id, name=name, key_hash=digest, prefix=prefix, scopes=ordered,
                          expires_at=expires, workspace_id=workspace_id)
    return {**scopes.out(row), "key": key}


@router.post("", status_code=201, response_model=ApiKeyCreated, responses={
    403: error("an API key cannot manage API keys"), 404: error("no such workspace (or you are not a member of it)"),
    409: error(f"you have {MAX['api_keys']} API keys")})
def create(body: KeyIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """A new API key. `key` is in this answer only: it is stored hashed and cannot be shown again."""
    with db.connection() as conn, conn.transaction():
        conn.execute("select pg_advisory_xact_lock(hashtext('api_keys'), %s)", (user.id,))  # the cap holds
        if body.workspace_id is not None:
            reading(conn, user, body.workspace_id)  # 404 unless a member
        try:
            return create_key(conn, user.id, body.name, list(body.scopes), body.expires_in_days, body.workspace_id)
        except ValueError as exc:
            raise HTTPException(409, str(exc)) from None


@router.get("", response_model=ApiKeyList, responses={403: error("an API key cannot manage API keys")})
def list_keys(user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Your API keys, the oldest first (their prefixes, never the keys)."""
    with db.connection() as conn:
        return {"keys": [scopes.out(k) for k in api_keys.list_keys(conn, user_id=user.id)]}


@router.delete("/{key_id}", status_code=204, responses={
    403: error("an API key cannot manage API keys"), 404: error("no such API key")})
def revoke(key_id: str, user: CurrentUser, db: DbDep) -> Response:
    """Revoke a key: the next request with it answers 401, in every server process."""
    with db.connection() as conn:
        if not api_keys.delete(conn, user_id=user.id, key_id=key_id):
            raise HTTPException(404, "no such API key")
    return Response(status_code=204)
