"""Authentication for a LangGraph Platform deployment of the graph (langgraph.json's `auth`).

LangGraph's server (Platform, or `langgraph dev`) calls `authenticate` on every request: the bearer
token is verified exactly as the Thotqen server verifies it (signature, expiry, token version, or a
Supabase token), and the verified user becomes the run's `langgraph_auth_user`. The graph then takes
the owner from that user and ignores any `configurable.owner_id`/`user` the caller sent
(graph/configuration.py), so retrieval is scoped to the token's user. Crons, the store and
user-made assistants are refused. A thread is its creator's alone (`own_threads`). Studio's own
sign-in is disabled in langgraph.json (`disable_studio_auth`): Studio needs the same bearer token
(its connection settings take headers). `make_auth` builds the handler over the parts an entry
point made (studio.py: the runtime's token verifier and database).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langgraph_sdk import Auth

from api import scopes
from identity.security import AuthError, Tokens, User
from storage.db import Database

PERMISSION = "thotqen:user"  # marks an identity this handler verified (graph/configuration.py trusts only these)


def verify(authorization: str | None, tokens: Tokens, db: Database) -> User:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Auth.exceptions.HTTPException(status_code=401, detail="send Authorization: Bearer <access_token>")
    try:
        if scopes.is_key(token.strip()):  # an API key: its owner; the graph's runs are questions (ask)
            with db.connection() as conn:
                user = scopes.user_for_key(conn, token.strip())
            if refused := scopes.lacks(user, "ask"):
                raise Auth.exceptions.HTTPException(status_code=403, detail=refused)
            return user
        return tokens.authenticate(token.strip(), db)
    except AuthError as exc:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(exc)) from None


def make_auth(verifier: Callable[[], tuple[Tokens, Database]]) -> Auth:
    """The handler; `verifier` gives the token verifier and the database (built on the first request)."""
    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
        user = await asyncio.to_thread(lambda: verify(authorization, *verifier()))
        return {"identity": str(user.id), "display_name": user.username,  # type: ignore[typeddict-unknown-key]
                "owner_id": user.id, "permissions": [PERMISSION], "is_authenticated": True}

    auth.on.crons(not_offered)
    auth.on.store(not_offered)
    auth.on.assistants.create(not_offered)
    auth.on.assistants.update(not_offered)
    auth.on.assistants.delete(not_offered)
    auth.on.threads(own_threads)
    return auth


async def not_offered(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The graph needs no crons, no store and no user-made assistants (an assistant's config could
    carry settings the server keeps to itself): refused."""
    return False


async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A thread belongs to the user who created it: stamped with its owner on create, on update (so
    nobody stamps a thread as someone else's) and on a run (a stateless run's thread is made from
    the run's metadata); every action on threads (read, search, update, delete, a run on one) sees
    only the caller's, so a stranger's thread answers like a missing one."""
    owner = ctx.user.identity
    metadata = value.get("metadata")
    if ctx.action in ("create", "update", "create_run") and isinstance(metadata, dict):
        metadata["owner"] = owner
    return {"owner": owner}
