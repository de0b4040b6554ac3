"""Finding the owner's own things by what they are called or say: documents by name, company, form
and period; chats by title and message text (Postgres full text: messages.search_tsv and its GIN
index, sql/027_b_collections.sql). Everything is scoped by owner in SQL and bounded in rows read,
and runs under row security (storage/tenancy.py); the messages' full-text match goes through
tenant_message_matches() (sql/functions/tenant_message_matches.sql), which keeps their index
usable there.

This is the sidebar's search box, not retrieval for answers (storage/search.py): no embedding, no
ranking across passages, just "where did I see that".
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage.tenancy import owners_only
from storage.workspaces import Owners, owner_ids

# Where a snippet's matched words start and end: control characters no text shows, so the page
# marks the words with elements and never reads the snippet as markup.
MARK_START, MARK_END = "\x02", "\x03"
SCANNED = 500  # matching messages read at most before ranking: a word in every message stays cheap
MAX_WORDS = 8
_WORD = re.compile(r"\w+", re.UNICODE)


def words(query: str) -> list[str]:
    """The words of a query (letters and digits; anything else separates them), at most MAX_WORDS."""
    return _WORD.findall(query)[:MAX_WORDS]


def ts_query(query: str) -> str:
    """A to_tsquery text matching messages that have every word, the last one as a prefix (the box
    searches while the person types); '' when the query has no words."""
    found = words(query)
    return " & ".join(f"{w}:*" if i == len(found) - 1 else w for i, w in enumerate(found))


def _like(query: str) -> str:
    escaped = query.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@owners_only
def find_documents(conn: psycopg.Connection, *, owner_id: Owners, query: str, limit: int) -> list[dict[str, Any]]:
    """The owner's documents whose name, company, form or period contains the query (any case)."""
    if not query.strip():
        return []
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select d.id, d.name, d.status, d.company, d.form, d.period from documents d"
            " where d.owner_id = any(%s::bigint[])"
            " and (d.name ilike %s or d.company ilike %s or d.form ilike %s or d.period ilike %s)"
            " order by d.created_at desc, d.id limit %s",
            (owner_ids(owner_id), *[_like(query)] * 4, limit)).fetchall()


@owners_only
def find_chats(conn: psycopg.Connection, *, owner_id: int, query: str, limit: int) -> list[dict[str, Any]]:
    """The owner's chats whose title or messages have every word of the query, best first: each
    with its best message's id, role and a snippet (matched words between MARK_START and MARK_END).
    A title match with no matching message has no message (its snippet is the title)."""
    tsq = ts_query(query)
    if not tsq:
        return []
    options = f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=24, MinWords=10, ShortWord=2"
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "with q as (select to_tsquery('english', %(q)s) as q),"
            " hits as (select m.id, m.chat_id, m.role, m.content, ts_rank(m.search_tsv, q.q) as rank"
            "          from q cross join tenant_message_matches(q.q, %(scanned)s) t join messages m on m.id = t.id"
            "          where m.owner_id = %(owner)s order by m.id desc limit %(scanned)s),"
            " best as (select distinct on (chat_id) * from hits order by chat_id, rank desc, id desc),"
            " titled as (select c.id from chats c, q where c.owner_id = %(owner)s"
            "            and to_tsvector('english', c.title) @@ q.q)"
            " select c.id, c.title, c.updated_at, b.id as message_id, b.role,"
            "  case when b.id is null then c.title"
            "       else ts_headline('english', b.content, q.q, %(options)s) end as snippet,"
            "  coalesce(b.rank, 0) + case when t.id is null then 0 else 1 end as rank"
            " from chats c cross join q left join best b on b.chat_id = c.id left join titled t on t.id = c.id"
            " where c.owner_id = %(owner)s and (b.id is not null or t.id is not null)"
            " order by rank desc, c.updated_at desc, c.id limit %(limit)s",
            {"q": tsq, "owner": owner_id, "scanned": SCANNED, "options": options, "limit": limit}).fetchall()
