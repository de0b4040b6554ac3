"""Chats and their messages. Every query is scoped by owner in SQL."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from storage import collections, parse_uuid
from storage.rows import one
from storage.tenancy import owners_only, person_only, person_spaces, scoped
from storage.workspaces import Owners, owner_ids

# A chat's row shows the names of its collection and workspace, rows of a space, not the person's:
# the functions that return it run scoped to every space the person reads (tenancy.person_only).
CHAT_COLUMNS = ("c.id, c.title, c.document_ids, c.collection_id,"
                " (select k.name from collections k where k.id = c.collection_id) as collection_name, c.workspace_id,"
                " (select w.name from workspaces w where w.id = c.workspace_id) as workspace,"
                " c.shared_at is not null as shared, c.created_at, c.updated_at")
RETURNING = ("returning id, title, document_ids, collection_id,"
             " (select k.name from collections k where k.id = collection_id) as collection_name, workspace_id,"
             " (select w.name from workspaces w where w.id = workspace_id) as workspace,"
             " shared_at is not null as shared, created_at, updated_at")


def owned_document_ids(conn: psycopg.Connection, *, owner_id: Owners, document_ids: Sequence[str]) -> list[uuid.UUID]:
    """The subset of `document_ids` the owner has (malformed ids are simply not owned)."""
    parsed = [u for u in (parse_uuid(d) for d in document_ids) if u is not None]
    if not parsed:
        return []
    rows = conn.execute("select id from documents where owner_id = any(%s::bigint[]) and id = any(%s)",
                        (owner_ids(owner_id), parsed))
    return [r[0] for r in rows.fetchall()]


@person_only
def create_chat(conn: psycopg.Connection, *, owner_id: int, title: str,
                document_ids: Sequence[uuid.UUID] | None, collection_id: uuid.UUID | None = None,
                workspace_id: int | None = None) -> dict[str, Any]:
    """A chat over these documents, over a collection (its members at each question), or over all;
    with `workspace_id` (the caller checked membership), over that workspace's only."""
    with conn.cursor(row_factory=dict_row) as cur:
        return one(cur.execute(
            "insert into chats (owner_id, title, document_ids, collection_id, workspace_id)"
            " values (%s, %s, %s, %s, %s) " + RETURNING,
            (owner_id, title, sorted(set(document_ids)) if document_ids else None, collection_id, workspace_id),
        ))


@person_only
def list_chats(conn: psycopg.Connection, *, owner_id: int, limit: int, offset: int = 0) -> list[dict[str, Any]]:
    """One page of the owner's chats, the last updated first (ties by id, so pages never overlap)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select {CHAT_COLUMNS}, (select count(*) from messages m where m.chat_id = c.id) as messages"
            " from chats c where c.owner_id = %s order by c.updated_at desc, c.id desc limit %s offset %s",
            (owner_id, limit, offset),
        ).fetchall()


@person_only
def get_chat(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID | str) -> dict[str, Any] | None:
    chat_uuid = parse_uuid(chat_id)
    if chat_uuid is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {CHAT_COLUMNS} from chats c where c.owner_id = %s and c.id = %s",
                           (owner_id, chat_uuid)).fetchone()


@person_only
def update_chat(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID | str, title: str | None = None,
                document_ids: Sequence[uuid.UUID] | None = None, scope_all: bool = False,
                collection_id: uuid.UUID | None = None) -> dict[str, Any] | None:
    """Change the title and/or the scope: documents, a collection (an owned one: the caller checked),
    or all documents (`scope_all`); a new scope replaces the old one."""
    chat_uuid = parse_uuid(chat_id)
    if chat_uuid is None:
        return None
    docs = None if scope_all or not document_ids else sorted(set(document_ids))
    set_scope = scope_all or document_ids is not None or collection_id is not None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "update chats set title = coalesce(%s, title),"
            " document_ids = case when %s then %s::uuid[] else document_ids end,"
            " collection_id = case when %s then %s::uuid else collection_id end, updated_at = now()"
            " where owner_id = %s and id = %s " + RETURNING,
            (title, set_scope, docs, set_scope, collection_id, owner_id, chat_uuid),
        ).fetchone()


def scope_now(conn: psycopg.Connection, *, owner_id: Owners, chat: dict[str, Any]) -> list[str] | None:
    """The documents a question in this chat searches now: its collection's members when it is over
    one (read at each question), else its own list (an empty one searches nothing), else None: all."""
    if chat.get("collection_id") is not None:
        return collections.member_ids(conn, owner_id=owner_id, collection_id=chat["collection_id"])
    return None if chat["document_ids"] is None else [str(d) for d in chat["document_ids"]]


@owners_only
def delete_chat(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID | str) -> bool:
    chat_uuid = parse_uuid(chat_id)
    if chat_uuid is None:
        return False
    return conn.execute("delete from chats where owner_id = %s and id = %s", (owner_id, chat_uuid)).rowcount == 1


@owners_only
def add_message(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, role: str, content: str,
                status: str = "ok", citations: list[dict[str, Any]] | None = None,
                meta: dict[str, Any] | None = None) -> int:
    """Append a message to an owned chat (the insert selects the chat by owner, so a stranger's id adds nothing)."""
    row = conn.execute(
        "insert into messages (chat_id, owner_id, role, content, status, citations, meta)"
        " select c.id, c.owner_id, %s, %s, %s, %s, %s from chats c where c.id = %s and c.owner_id = %s"
        " returning id",
        (role, content, status, Jsonb(citations or []), Jsonb(meta or {}), chat_id, owner_id),
    ).fetchone()
    if row is None:
        raise LookupError("no such chat")
    conn.execute("update chats set updated_at = now() where id = %s", (chat_id,))
    return int(row[0])


@owners_only
def end_unanswered(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, content: str) -> bool:
    """Save `content` as the error answer of the chat's last question when it has none (a turn the
    server stopped in the middle of); False when the last message is already an answer."""
    row = conn.execute(
        "insert into messages (chat_id, owner_id, role, content, status, meta)"
        " select m.chat_id, m.owner_id, 'assistant', %s, 'error', %s from messages m"
        "  where m.id = (select max(id) from messages where chat_id = %s and owner_id = %s) and m.role = 'user'"
        " returning id", (content, Jsonb({"error": "interrupted"}), chat_id, owner_id)).fetchone()
    return row is not None


@owners_only
def list_messages(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, limit: int,
                  offset: int = 0, before: int | None = None) -> list[dict[str, Any]]:
    """A page of the chat's messages, the newest first (`offset` of them skipped; `before`: only
    those older than that message id), each assistant message with the owner's verdict (None if
    none). The newest first: a long chat opens at its end."""
    return _messages(conn, owner_id, chat_id, limit=limit, offset=offset, before=before)


def _messages(conn: psycopg.Connection, owner_id: int, chat_id: uuid.UUID, *, limit: int, offset: int,
              before: int | None) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select m.id, m.role, m.content, m.status, m.citations, m.meta, m.created_at,"
            " case when f.message_id is null then null"
            "      else jsonb_build_object('rating', f.rating, 'note', f.note) end as feedback"
            " from messages m left join message_feedback f on f.message_id = m.id"
            " where m.owner_id = %s and m.chat_id = %s and (%s::bigint is null or m.id < %s)"
            " order by m.id desc limit %s offset %s",
            (owner_id, chat_id, before, before, limit, offset),
        ).fetchall()


@owners_only
def regenerable(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID,
                message_id: int) -> dict[str, Any] | None:
    """The question an assistant message answers, when that message is the chat's latest (only the
    latest answer is answered again: a new answer further up would reorder the conversation)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select q.id as question_id, q.content as question from messages a"
            " join lateral (select id, content from messages q where q.chat_id = a.chat_id and q.id < a.id"
            "               and q.role = 'user' order by q.id desc limit 1) q on true"
            " where a.id = %s and a.chat_id = %s and a.owner_id = %s and a.role = 'assistant'"
            " and a.id = (select max(id) from messages l where l.chat_id = a.chat_id)",
            (message_id, chat_id, owner_id),
        ).fetchone()


@owners_only
def request_stop(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID | str) -> bool:
    chat_uuid = parse_uuid(chat_id)
    if chat_uuid is None:
        return False
    return conn.execute("update chats set stop_requested_at = now() where owner_id = %s and id = %s",
                        (owner_id, chat_uuid)).rowcount == 1


def clear_stop(conn: psycopg.Connection, *, chat_id: uuid.UUID) -> None:
    conn.execute("update chats set stop_requested_at = null where id = %s and stop_requested_at is not null",
                 (chat_id,))


def stop_requested(conn: psycopg.Connection, *, chat_id: uuid.UUID) -> bool:
    row = conn.execute("select stop_requested_at is not null from chats where id = %s", (chat_id,)).fetchone()
    return bool(row and row[0])


@owners_only
def history(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, turns: int,
            before: int | None = None) -> list[dict[str, str]]:
    """The last `turns` answered question/answer pairs, oldest first, as graph chat_history turns
    (only those before message `before` when given: a regenerated answer does not see its own turn).

    A question whose answer failed, was blocked or stopped is left out: it carries nothing to build
    on; a question answered again counts once, with its latest answer.
    """
    rows = conn.execute(
        "select question, answer from ("
        " select distinct on (q.id) q.id as qid, q.content as question, a.content as answer from messages a"
        " join lateral (select id, content from messages q where q.chat_id = a.chat_id and q.id < a.id"
        "               and q.role = 'user' order by q.id desc limit 1) q on true"
        " where a.owner_id = %s and a.chat_id = %s and a.role = 'assistant' and a.status = 'ok'"
        " and (%s::bigint is null or q.id < %s)"
        " order by q.id, a.id desc) t order by qid desc limit %s",
        (owner_id, chat_id, before, before, turns),
    ).fetchall()
    out: list[dict[str, str]] = []
    for question, answer in reversed(rows):
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


# Shared read-only with the workspace (sql/035_app_role_everywhere.sql): a chat over a workspace that
# its owner shared; any member reads it (at each request: a removed member no longer does), nobody
# but its owner writes to it. The reader's queries run scoped to the spaces they read now, where the
# policy `shared_chats` admits the chat and its messages, for reading only.

@person_only
def set_shared(conn: psycopg.Connection, *, owner_id: int, chat_id: uuid.UUID, shared: bool) -> dict[str, Any] | None:
    """Share the owner's chat with its workspace (when the owner still reads that workspace) or stop
    sharing it; None when it is not theirs, not over a workspace or (sharing) not over one of theirs."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "update chats set shared_at = case when %(on)s then coalesce(shared_at, now()) end"
            " where owner_id = %(owner)s and id = %(id)s and workspace_id is not null"
            " and (not %(on)s or workspace_id = any(%(spaces)s::bigint[])) " + RETURNING,
            {"on": shared, "owner": owner_id, "id": chat_id, "spaces": person_spaces(conn, owner_id)}).fetchone()


SHARED_COLUMNS = f"{CHAT_COLUMNS}, c.owner_id, (select u.username from users u where u.id = c.owner_id) as owner"


def shared_chat(conn: psycopg.Connection, *, reader: int, chat_id: uuid.UUID | str) -> dict[str, Any] | None:
    """A chat shared with a workspace `reader` is a member of now (theirs or another member's)."""
    chat_uuid = parse_uuid(chat_id)
    if chat_uuid is None:
        return None
    spaces = person_spaces(conn, reader)
    with scoped(conn, spaces), conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {SHARED_COLUMNS} from chats c where c.id = %s and c.shared_at is not null"
                           " and c.workspace_id = any(%s::bigint[])", (chat_uuid, spaces)).fetchone()


def shared_messages(conn: psycopg.Connection, *, reader: int, chat: dict[str, Any], limit: int, offset: int = 0,
                    before: int | None = None) -> list[dict[str, Any]]:
    """A page of a shared chat's messages (`chat` from shared_chat), read as `reader` (no verdicts:
    those are the owner's)."""
    with scoped(conn, person_spaces(conn, reader)):
        return _messages(conn, int(chat["owner_id"]), chat["id"], limit=limit, offset=offset, before=before)


def list_shared(conn: psycopg.Connection, *, reader: int, workspace_id: int | None, limit: int,
                offset: int = 0) -> list[dict[str, Any]]:
    """Chats shared with the workspaces `reader` is in now (only `workspace_id`'s when given), the
    last updated first."""
    spaces = [s for s in person_spaces(conn, reader) if workspace_id is None or s == workspace_id]
    with scoped(conn, spaces), conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            f"select {SHARED_COLUMNS}, (select count(*) from messages m where m.chat_id = c.id) as messages"
            " from chats c where c.shared_at is not null and c.workspace_id = any(%s::bigint[])"
            " order by c.updated_at desc, c.id desc limit %s offset %s", (spaces, limit, offset)).fetchall()
