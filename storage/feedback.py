"""Verdicts on answers (thumbs up or down with an optional note), one per assistant message.
Every write selects the message by its owner in SQL, so a stranger's message id changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage.tenancy import owners_only


@owners_only
def set_feedback(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, message_id: int,
                 rating: str, note: str) -> dict[str, Any] | None:
    """Record (or replace) the owner's verdict on an assistant message of their chat; None when no such message."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "insert into message_feedback (message_id, owner_id, rating, note)"
            " select m.id, m.owner_id, %s, %s from messages m"
            " where m.id = %s and m.chat_id = %s and m.owner_id = %s and m.role = 'assistant'"
            " on conflict (message_id) do update set rating = excluded.rating, note = excluded.note,"
            " updated_at = now()"
            " returning rating, note, updated_at",
            (rating, note, message_id, chat_id, owner_id),
        ).fetchone()


@owners_only
def clear_feedback(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, message_id: int) -> bool:
    return conn.execute(
        "delete from message_feedback f using messages m where f.message_id = m.id and m.id = %s"
        " and m.chat_id = %s and m.owner_id = %s", (message_id, chat_id, owner_id)).rowcount == 1


def counts(conn: psycopg.Connection, *, hours: float) -> dict[str, Any]:
    """Verdicts given in the window, for the admin metrics: up, down, and the latest notes on downs."""
    row = conn.execute(
        "select count(*) filter (where rating = 'up'), count(*) filter (where rating = 'down')"
        " from message_feedback where updated_at > now() - make_interval(secs => %s)", (hours * 3600,)).fetchone()
    with conn.cursor(row_factory=dict_row) as cur:
        notes = cur.execute(
            "select f.rating, f.note, f.updated_at from message_feedback f"
            " where f.note <> '' and f.updated_at > now() - make_interval(secs => %s)"
            " order by f.updated_at desc limit 10", (hours * 3600,)).fetchall()
    up, down = (row or (0, 0))
    return {"up": int(up), "down": int(down),
            "notes": [{"rating": n["rating"], "note": n["note"], "at": n["updated_at"].isoformat()} for n in notes]}


def export(conn: psycopg.Connection, *, owner_id: int | None = None) -> Iterator[dict[str, Any]]:
    """Every verdict with the question it answers, oldest first: one evaluation case each."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "select f.message_id, f.rating, f.note, f.updated_at, m.chat_id, m.content as answer, m.citations,"
            " m.meta, u.username, c.document_ids,"
            " (select q.content from messages q where q.chat_id = m.chat_id and q.id < m.id and q.role = 'user'"
            "  order by q.id desc limit 1) as question"
            " from message_feedback f join messages m on m.id = f.message_id join users u on u.id = f.owner_id"
            " join chats c on c.id = m.chat_id"
            " where %s::bigint is null or f.owner_id = %s order by f.updated_at, f.message_id",
            (owner_id, owner_id))
        for r in cur:
            yield {"question": r["question"], "answer": r["answer"], "rating": r["rating"], "note": r["note"],
                   "citations": [{k: c.get(k) for k in ("n", "document_id", "name", "page", "text") if k in c}
                                 for c in r["citations"] or []],
                   "cited": (r["meta"] or {}).get("cited") or [],
                   "document_ids": [str(d) for d in r["document_ids"]] if r["document_ids"] else None,
                   "user": r["username"], "chat_id": str(r["chat_id"]), "message_id": r["message_id"],
                   "at": r["updated_at"].isoformat()}
