"""Collections: named groups of one owner's documents. Every query is scoped by owner in SQL (a
stranger's collection or document id finds nothing, exactly like a missing one).

A chat over a collection stores the collection, not its members: `members` is read when each
question is asked, so a document added to the collection later is searched from then on.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from storage import audit, parse_uuid
from storage.tenancy import owners_only, scoped
from storage.workspaces import Owners, owner_ids

COLUMNS = ("c.id, c.name, c.created_at, c.updated_at, c.owner_id,"
           " (select w.name from workspaces w where w.id = c.owner_id) as workspace,"
           " (select count(*) from collection_documents m where m.collection_id = c.id) as document_count")


class NameTaken(ValueError):
    """The owner already has a collection of that name."""


@owners_only
def create_collection(conn: psycopg.Connection, *, owner_id: int, name: str) -> dict[str, Any]:
    with conn.cursor(row_factory=dict_row) as cur:
        try:
            with conn.transaction():
                row = cur.execute("insert into collections (owner_id, name) values (%s, %s) returning id",
                                  (owner_id, name)).fetchone()
        except psycopg.errors.UniqueViolation:
            raise NameTaken(name) from None
    assert row is not None  # an insert returns its row
    found = get_collection(conn, owner_id=owner_id, collection_id=row["id"])
    assert found is not None
    return found


@owners_only
def list_collections(conn: psycopg.Connection, *, owner_id: Owners, limit: int,
                     offset: int = 0) -> list[dict[str, Any]]:
    """One page of the owner's collections by name (ties by id, so pages never overlap)."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {COLUMNS} from collections c where c.owner_id = any(%s::bigint[])"
                           " order by c.name, c.id limit %s offset %s", (owner_ids(owner_id), limit, offset)).fetchall()


@owners_only
def count_collections(conn: psycopg.Connection, *, owner_id: Owners) -> int:
    row = conn.execute("select count(*) from collections where owner_id = any(%s::bigint[])",
                       (owner_ids(owner_id),)).fetchone()
    return int(row[0]) if row else 0


@owners_only
def get_collection(conn: psycopg.Connection, *, owner_id: Owners,
                   collection_id: uuid.UUID | str) -> dict[str, Any] | None:
    parsed = parse_uuid(collection_id)
    if parsed is None:
        return None
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {COLUMNS} from collections c where c.owner_id = any(%s::bigint[]) and c.id = %s",
                           (owner_ids(owner_id), parsed)).fetchone()


def find_by_name(conn: psycopg.Connection, *, owner_id: Owners, name: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(f"select {COLUMNS} from collections c where c.owner_id = any(%s::bigint[]) and c.name = %s",
                           (owner_ids(owner_id), name)).fetchone()


@owners_only
def rename_collection(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID | str,
                      name: str) -> dict[str, Any] | None:
    parsed = parse_uuid(collection_id)
    if parsed is None:
        return None
    try:
        with conn.transaction():
            done = conn.execute("update collections set name = %s, updated_at = now()"
                                " where owner_id = any(%s::bigint[]) and id = %s",
                                (name, owner_ids(owner_id), parsed)).rowcount
    except psycopg.errors.UniqueViolation:
        raise NameTaken(name) from None
    return get_collection(conn, owner_id=owner_id, collection_id=parsed) if done else None


def delete_collection(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID | str,
                      actor_id: int | None = None) -> bool:
    """Delete the collection (its documents stay). A chat over it keeps the documents it had then as
    its own list, so its scope never widens to all of the owner's documents; one over an empty
    collection keeps an empty list, and answers from nothing. `actor_id`: who asked, for a workspace's
    audit log (written in the same transaction)."""
    parsed = parse_uuid(collection_id)
    if parsed is None:
        return False
    with conn.transaction():
        with scoped(conn, owner_id):
            found = conn.execute("select owner_id, name from collections where owner_id = any(%s::bigint[])"
                                 " and id = %s for update", (owner_ids(owner_id), parsed)).fetchone()
            if found is None:
                return False
            audit.deleted(conn, owner_id=int(found[0]), actor_id=actor_id, action="collection_deleted",
                          name=str(found[1]))
        # every chat over it, whoever's: a workspace's collection is in its members' chats too (their
        # lists are scoped again to what each may read when they ask). As the login: those chats are
        # the members' rows, which row security under the workspace's owners would skip, and a chat
        # skipped would widen to all its owner's documents when the collection goes.
        conn.execute(
            "update chats set document_ids = coalesce((select array_agg(m.document_id order by m.document_id)"
            " from collection_documents m where m.collection_id = %s), '{}'), collection_id = null"
            " where collection_id = %s", (parsed, parsed))
        with scoped(conn, owner_id):
            return conn.execute("delete from collections where id = %s", (parsed,)).rowcount == 1


@owners_only
def add_documents(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID,
                  document_ids: Sequence[uuid.UUID]) -> int:
    """Add the owner's documents to the owner's collection (the select joins both by owner); the
    number newly added (one already there is not counted)."""
    added = conn.execute(
        "insert into collection_documents (collection_id, document_id)"
        " select c.id, d.id from collections c join documents d on d.owner_id = c.owner_id"
        " where c.id = %s and c.owner_id = any(%s::bigint[]) and d.id = any(%s)"
        " on conflict do nothing", (collection_id, owner_ids(owner_id), list(document_ids))).rowcount
    conn.execute("update collections set updated_at = now() where id = %s and owner_id = any(%s::bigint[])",
                 (collection_id, owner_ids(owner_id)))
    return added


@owners_only
def remove_document(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID | str,
                    document_id: uuid.UUID | str) -> bool:
    cid, did = parse_uuid(collection_id), parse_uuid(document_id)
    if cid is None or did is None:
        return False
    return conn.execute(
        "delete from collection_documents m using collections c where m.collection_id = c.id"
        " and c.id = %s and c.owner_id = any(%s::bigint[]) and m.document_id = %s",
        (cid, owner_ids(owner_id), did)).rowcount == 1


@owners_only
def members(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID) -> list[dict[str, Any]]:
    """The collection's documents (id, name, status, company, form, period), in the order they were added."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            "select d.id, d.name, d.status, d.company, d.form, d.period, m.added_at from collection_documents m"
            " join collections c on c.id = m.collection_id join documents d on d.id = m.document_id"
            " where c.id = %s and c.owner_id = any(%s::bigint[]) and d.owner_id = c.owner_id"
            " order by m.added_at, d.name",
            (collection_id, owner_ids(owner_id))).fetchall()


@owners_only
def member_ids(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID) -> list[str]:
    """The collection's document ids now, as a chat scope (what a question over it searches)."""
    return sorted(str(m["id"]) for m in members(conn, owner_id=owner_id, collection_id=collection_id))


def space_of(conn: psycopg.Connection, *, owner_id: Owners, collection_id: uuid.UUID | str) -> int | None:
    """The owner (a user or a workspace) of the collection among `owner_id`'s; None when not there."""
    parsed = parse_uuid(collection_id)
    if parsed is None:
        return None
    row = conn.execute("select owner_id from collections where owner_id = any(%s::bigint[]) and id = %s",
                       (owner_ids(owner_id), parsed)).fetchone()
    return int(row[0]) if row else None
