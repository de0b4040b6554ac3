"""The sidebar's search box: GET /api/search?q=... finds the caller's documents (name, company,
form, period) and chats (title and message text, Postgres full text), owner-scoped in SQL
(storage/finder.py), at most MAX["find_results"] of each."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query

from api.access import WORKSPACE_READ_REFUSED, WorkspaceQuery, reading
from api.deps import CurrentUser, DbDep
from api.paging import query_only
from api.schemas import InputErrorOut, SearchOut, error
from api.text import MAX, unstorable
from storage import finder

router = APIRouter(prefix="/api/search", tags=["search"])


@router.get("", response_model=SearchOut, responses={**WORKSPACE_READ_REFUSED,
                                                     422: error("no query, or one too long", InputErrorOut)},
            dependencies=[Depends(query_only("q", "limit", "workspace_id"))])
def search(user: CurrentUser, db: DbDep,
           q: str = Query(min_length=1, max_length=MAX["find_query"], description="words to find; the last one may "
                                                                                  "be the start of a word"),
           limit: int = Query(MAX["find_results"], ge=1, le=MAX["find_results"],
                              description="documents, and chats, at most"),
           workspace_id: WorkspaceQuery = None) -> dict[str, Any]:
    """Your documents and chats that match: chats with their best matching message and a snippet.
    With `workspace_id`, documents of that workspace only (404 unless you are a member)."""
    if (problem := unstorable(q)) is not None:
        raise HTTPException(422, [{"type": "value_error", "loc": ["query", "q"],
                                   "msg": f"contains {problem}, which cannot be searched"}])
    with db.connection() as conn:
        docs = finder.find_documents(conn, owner_id=reading(conn, user, workspace_id), query=q, limit=limit)
        found = finder.find_chats(conn, owner_id=user.id, query=q, limit=limit)
    return {"documents": [{**{k: d[k] for k in ("name", "status", "company", "form", "period")}, "id": str(d["id"])}
                          for d in docs],
            "chats": [{"id": str(c["id"]), "title": c["title"], "message_id": c["message_id"], "role": c["role"],
                       "snippet": c["snippet"], "updated_at": c["updated_at"].isoformat()} for c in found]}
