"""Collections: a user's named groups of documents ("2023 filings"). A chat over a collection
(POST /api/chats with `collection_id`) searches the collection's documents as they are when each
question is asked, so a document added later is part of it from then on. Ownership is in SQL
(storage/collections.py): a stranger's collection or document id answers exactly like a missing one."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from pydantic import BaseModel, Field

from api.access import (
    WORKSPACE_READ_REFUSED,
    WORKSPACE_WRITE_REFUSED,
    WorkspaceQuery,
    not_yours,
    reading,
    target,
    writing,
)
from api.deps import CurrentUser, DbDep, SettingsDep
from api.paging import MAX_OFFSET, space_page_query
from api.routes.chats import owned_scope
from api.schemas import CollectionDetail, CollectionList, CollectionOut, InputErrorOut, error
from api.text import MAX, CollectionName, DocumentIds
from identity.security import User
from storage import chats, collections, parse_uuid

router = APIRouter(prefix="/api/collections", tags=["collections"])


class CollectionIn(BaseModel):
    name: CollectionName
    document_ids: DocumentIds = Field(default_factory=list, description="documents to put in it now")


class CollectionPatch(BaseModel):
    name: CollectionName


class MembersIn(BaseModel):
    document_ids: DocumentIds = Field(min_length=1)


def _out(c: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(c["id"]), "name": c["name"], "document_count": c["document_count"],
            "workspace_id": c["owner_id"] if c.get("workspace") is not None else None, "workspace": c.get("workspace"),
            "created_at": c["created_at"].isoformat(), "updated_at": c["updated_at"].isoformat()}


def _detail(conn: Any, owner_id: list[int], c: dict[str, Any]) -> dict[str, Any]:
    docs = collections.members(conn, owner_id=owner_id, collection_id=c["id"])
    return {**_out(c), "documents": [{**{k: d[k] for k in ("name", "status", "company", "form", "period")},
                                      "id": str(d["id"]), "added_at": d["added_at"].isoformat()} for d in docs]}


def _taken(name: str) -> HTTPException:
    return HTTPException(409, f"you already have a collection named {name!r}")


MIXED = "a collection holds documents of its own space only (yours, or its workspace's)"


@router.post("", status_code=201, response_model=CollectionDetail, responses={
    422: error(MIXED, InputErrorOut),
    **WORKSPACE_WRITE_REFUSED, 404: error("no such document in document_ids, or no such workspace"),
    409: error(f"a collection of that name exists, or you have {MAX['collections']} collections")})
def create_collection(body: CollectionIn, user: CurrentUser, db: DbDep,
                      workspace_id: WorkspaceQuery = None) -> dict[str, Any]:
    """A new collection: yours, or with `workspace_id` that workspace's (editor or above), holding
    documents of the same space only."""
    with db.connection() as conn, conn.transaction():
        owner = target(conn, user, workspace_id)
        docs = _same_space(conn, user, owner, body.document_ids) if body.document_ids else []
        if collections.count_collections(conn, owner_id=owner) >= MAX["collections"]:
            raise HTTPException(409, f"there are {MAX['collections']} collections here, the most one space may "
                                     "have; delete one first")
        try:
            created = collections.create_collection(conn, owner_id=owner, name=body.name)
        except collections.NameTaken:
            raise _taken(body.name) from None
        if docs:
            collections.add_documents(conn, owner_id=owner, collection_id=created["id"], document_ids=docs)
            created = collections.get_collection(conn, owner_id=owner, collection_id=created["id"]) or created
        return _detail(conn, [owner], created)


def _same_space(conn: Any, user: User, owner: int, document_ids: list[str]) -> list[Any]:
    """The documents, each one the caller may read (404 otherwise) and in the collection's space:
    a collection never mixes a workspace's documents with anyone's own (422)."""
    docs = owned_scope(conn, reading(conn, user), document_ids)
    if len(chats.owned_document_ids(conn, owner_id=owner, document_ids=[str(d) for d in docs])) != len(set(docs)):
        raise HTTPException(422, MIXED)
    return docs


@router.get("", response_model=CollectionList, responses=WORKSPACE_READ_REFUSED,
            dependencies=[Depends(space_page_query)])
def list_collections(user: CurrentUser, db: DbDep, settings: SettingsDep,
                     limit: int | None = Query(None, ge=1, description="collections in this page; at most (and by "
                                                                       "default) COLLECTION_PAGE_MAX"),
                     offset: int = Query(0, ge=0, le=MAX_OFFSET, description="collections to skip, by name"),
                     workspace_id: WorkspaceQuery = None) -> dict[str, Any]:
    """A page of the collections you may read (yours and your workspaces', or one workspace's) by
    name; `next_offset` asks for the next (null: no more)."""
    size = min(limit or settings.paging.collection_page_max, settings.paging.collection_page_max)
    with db.connection() as conn:
        page = collections.list_collections(conn, owner_id=reading(conn, user, workspace_id), limit=size + 1,
                                            offset=offset)
    return {"collections": [_out(c) for c in page[:size]], "next_offset": offset + size if len(page) > size else None}


@router.get("/{collection_id}", response_model=CollectionDetail, responses={404: error("no such collection")})
def get_collection(collection_id: str, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """The collection and its documents."""
    with db.connection() as conn:
        owners = reading(conn, user)
        found = collections.get_collection(conn, owner_id=owners, collection_id=collection_id)
        if found is None:
            raise HTTPException(404, "no such collection")
        return _detail(conn, owners, found)


@router.patch("/{collection_id}", response_model=CollectionOut,
              responses={404: error("no such collection"), 409: error("a collection of that name exists")})
def rename_collection(collection_id: str, body: CollectionPatch, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        try:
            renamed = collections.rename_collection(conn, owner_id=writing(conn, user),
                                                    collection_id=collection_id, name=body.name)
        except collections.NameTaken:
            raise _taken(body.name) from None
        if renamed is None:
            raise _refused(conn, user, collection_id)
    return _out(renamed)


def _refused(conn: Any, user: User, collection_id: str) -> HTTPException:
    """A change the caller may not make: 403 on a workspace collection they only view, else 404."""
    seen = collections.get_collection(conn, owner_id=reading(conn, user), collection_id=collection_id)
    return not_yours(seen is not None, "collection")


@router.delete("/{collection_id}", status_code=204, responses={404: error("no such collection")})
def delete_collection(collection_id: str, user: CurrentUser, db: DbDep) -> Response:
    """Delete the collection; its documents stay, and a chat over it keeps answering from the
    documents it had when it was deleted."""
    with db.connection() as conn:
        if not collections.delete_collection(conn, owner_id=writing(conn, user), collection_id=collection_id,
                                             actor_id=user.id):
            raise _refused(conn, user, collection_id)
    return Response(status_code=204)


@router.post("/{collection_id}/documents", response_model=CollectionDetail,
             responses={404: error("no such collection, or no such document in document_ids"),
                        422: error(MIXED, InputErrorOut)})
def add_documents(collection_id: str, body: MembersIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Add documents (one already there stays once); a chat over the collection searches them from
    its next question."""
    with db.connection() as conn, conn.transaction():
        owners = writing(conn, user)
        owner = collections.space_of(conn, owner_id=owners, collection_id=collection_id)
        if owner is None:
            raise _refused(conn, user, collection_id)
        docs = _same_space(conn, user, owner, body.document_ids)
        collections.add_documents(conn, owner_id=owner, collection_id=uuid.UUID(collection_id), document_ids=docs)
        found = collections.get_collection(conn, owner_id=owner, collection_id=collection_id)
        assert found is not None  # locked by nothing, but found a moment ago in this transaction
        return _detail(conn, [owner], found)


@router.delete("/{collection_id}/documents/{document_id}", status_code=204,
               responses={404: error("no such document in such a collection")})
def remove_document(collection_id: str, document_id: str, user: CurrentUser, db: DbDep) -> Response:
    """Take a document out of the collection (the document itself stays)."""
    with db.connection() as conn:
        if parse_uuid(document_id) is None or not collections.remove_document(
                conn, owner_id=writing(conn, user), collection_id=collection_id, document_id=document_id):
            if collections.space_of(conn, owner_id=reading(conn, user), collection_id=collection_id) is not None \
                    and collections.space_of(conn, owner_id=writing(conn, user),
                                             collection_id=collection_id) is None:
                raise HTTPException(403, "your role where this collection is does not allow changing it")
            raise HTTPException(404, "no such document in such a collection")
    return Response(status_code=204)
