"""Semantic answer cache: an owner's earlier answer to a near-identical question over the same scope.

Rows are deleted by a trigger on `documents` (sql/functions/answer_cache_invalidate.sql) whenever a document in their
scope appears, changes status or goes away, so a hit never predates the documents it was built on; and
by one on `workspace_members` when their owner leaves a workspace they read (answer_cache_member_left.sql).
Both read and write as the asker under row security (storage/tenancy.py): the rows are the asker's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from storage.tenancy import owners_only


def _scope(document_ids: Sequence[uuid.UUID | str] | None) -> list[uuid.UUID] | None:
    return sorted({uuid.UUID(str(d)) for d in document_ids}) if document_ids else None


@owners_only
def lookup(conn: psycopg.Connection, *, owner_id: int, spaces: Sequence[int],
           document_ids: Sequence[uuid.UUID | str] | None, embedding: np.ndarray, max_distance: float,
           ttl_hours: float) -> dict[str, Any] | None:
    """The cached answer nearest to `embedding` within `max_distance` (cosine), counting the hit:
    one the owner was given while reading exactly `spaces` (storage.workspaces.spaces), so an answer
    drawn from a workspace they have left, or since joined, is never served."""
    row = conn.execute(
        "select id, answer, question, embedding <=> %(e)s as distance from answer_cache"
        " where owner_id = %(o)s and spaces = %(s)s::bigint[] and document_ids is not distinct from %(d)s::uuid[]"
        "   and created_at > now() - %(ttl)s * interval '1 hour'"
        " order by embedding <=> %(e)s limit 1",
        {"e": embedding, "o": owner_id, "s": sorted(spaces), "d": _scope(document_ids), "ttl": ttl_hours},
    ).fetchone()
    if row is None or row[3] > max_distance:
        return None
    conn.execute("update answer_cache set hits = hits + 1, last_hit_at = now() where id = %s", (row[0],))
    return {**row[1], "cached_question": row[2], "cache_distance": round(float(row[3]), 5)}


@owners_only
def store(conn: psycopg.Connection, *, owner_id: int, spaces: Sequence[int],
          document_ids: Sequence[uuid.UUID | str] | None, question: str, embedding: np.ndarray,
          answer: dict[str, Any]) -> None:
    conn.execute(
        "insert into answer_cache (owner_id, spaces, document_ids, question, embedding, answer)"
        " values (%s, %s, %s, %s, %s, %s)",
        (owner_id, sorted(spaces), _scope(document_ids), question, embedding, Jsonb(answer)),
    )
