"""API keys as credentials: making one, checking one, and what each scope lets a key do.

A key is `thq_` and 43 random URL-safe characters (256 bits): shown once, stored as its SHA-256
(storage/api_keys.py), looked up on every request so a revoked or expired key answers 401 on the
next request in every process. Its user is its owner, with the owner's limits (they count per user,
so ten keys buy no more questions than one), narrowed to its scopes:

- read: every GET (documents, pages, chats, collections, search, jobs, /v1/models), MCP search and resources;
- ask: questions (/api/chats writes, /rag, /v1/chat/completions, MCP ask);
- ingest: documents and collections (uploads, edits, deletions).

A key may be bound to one workspace (api_keys.workspace_id): api/access.py then limits every
request's reads and writes to it, and PERSONAL below keeps it off its owner's chats.

Account routes (keys themselves, sessions, sign-in, admin; changes to workspaces and their members)
take a person's session, never a key: a leaked key cannot mint keys nor let anyone into a workspace,
and a request no rule names refuses keys (403), so a new route is closed to keys until it is placed
here (tests/server/test_keys.py walks every route).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

import psycopg

from identity.security import AuthError, User
from storage import api_keys

PREFIX = "thq_"
SHOWN = 12  # characters of a key kept and listed (the prefix and 8 random ones) to tell keys apart
SCOPES = ("read", "ask", "ingest")
MAX_LENGTH = len(PREFIX) + 43
_SHAPE = re.compile(r"thq_[A-Za-z0-9_-]{43}")

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# (methods or None for any, full-match path pattern, scope or None for "never a key"): the first match decides
RULES: tuple[tuple[frozenset[str] | None, re.Pattern[str], str | None], ...] = (
    (None, re.compile(r"/api/(keys|session|admin)(/.*)?|/api/auth/(?!me$).*"), None),
    (frozenset({"GET", "HEAD"}), re.compile(r".*"), "read"),
    (WRITES, re.compile(r"/api/chats/[^/]+/share"), None),  # who reads a chat: a person decides
    (WRITES, re.compile(r"/api/chats(/.*)?|/v1/chat/completions"), "ask"),
    (frozenset({"POST"}), re.compile(r"/rag/(c/[^/]+/)?(invoke|batch|stream|stream_log|stream_events)"), "ask"),
    (WRITES, re.compile(r"/api/(documents|collections)(/.*)?"), "ingest"),
    (WRITES, re.compile(r"/api/workspaces(/.*)?"), None),  # who may read a team's documents: a person decides
)


def mint() -> tuple[str, str, str]:
    """A new key: (the key, its hash, its listed prefix)."""
    key = PREFIX + secrets.token_urlsafe(32)
    return key, digest(key), key[:SHOWN]


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def is_key(token: str) -> bool:
    """Whether a bearer token is meant as an API key (a JWT never starts so)."""
    return token.startswith(PREFIX)


def required_scope(method: str, path: str) -> tuple[bool, str | None]:
    """(whether any rule names the request, the scope it needs: None when keys are never accepted)."""
    for methods, pattern, scope in RULES:
        if (methods is None or method in methods) and pattern.fullmatch(path):
            return True, scope
    return False, None


# A key bound to a workspace reads that workspace's documents and collections, searches and asks over
# them (/api, /v1, MCP, /rag); never the person's own chats, their search over them, nor their list of
# workspaces: those are the person's, not the workspace's.
PERSONAL = re.compile(r"/api/(chats|search|find|workspaces)(/.*)?")


def refusal(user: User, method: str, path: str) -> str | None:
    """Why a key may not make this request (a 403's detail), or None when it may (or no key is in use)."""
    if user.scopes is None:
        return None
    if user.workspace_id is not None and PERSONAL.fullmatch(path):
        return "an API key bound to a workspace reads that workspace's documents only, not your chats"
    _named, scope = required_scope(method, path)
    if scope is None:
        return "an API key cannot be used here: sign in as the account's owner"
    return lacks(user, scope)


def lacks(user: User, scope: str) -> str | None:
    """The refusal when `user` is a key without `scope`, else None."""
    if user.scopes is None or scope in user.scopes:
        return None
    return f"this API key lacks the {scope!r} scope (it has: {', '.join(sorted(user.scopes))})"


def user_for_key(conn: psycopg.Connection, key: str) -> User:
    """The key's owner narrowed to its scopes, or AuthError (malformed, unknown, revoked or expired)."""
    if not _SHAPE.fullmatch(key):
        raise AuthError("the API key is not valid")
    row = api_keys.by_hash(conn, digest(key))
    if row is None:
        raise AuthError("the API key is not valid (unknown, revoked or expired)")
    return User(int(row["user_id"]), str(row["username"]), scopes=frozenset(row["scopes"]), key_id=str(row["id"]),
                workspace_id=row["workspace_id"])


def out(row: dict[str, Any]) -> dict[str, Any]:
    """A key as listed: never the key, nor its hash."""
    def when(value: Any) -> str | None:  # a datetime or None
        return value.isoformat() if value is not None else None

    return {"id": str(row["id"]), "name": row["name"], "prefix": row["prefix"], "scopes": list(row["scopes"]),
            "created_at": when(row["created_at"]), "expires_at": when(row["expires_at"]),
            "last_used_at": when(row["last_used_at"]), "workspace_id": row.get("workspace_id"),
            "workspace": row.get("workspace")}
