"""Chats: persistent conversations over all of a user's documents or a chosen set; answers stream as SSE."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import psycopg
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from pydantic import BaseModel, Field, model_validator
from sse_starlette import EventSourceResponse

from answering import accounting
from answering.bridge import answer_in_thread
from answering.chat import ChatAnswerer
from answering.processes import AnswerProcesses
from api.access import BIGINT_MAX, reading
from api.deps import CurrentUser, DbDep, SettingsDep
from api.paging import MAX_OFFSET, PAGE_QUERY, page, page_query, query_only, space_page_query
from api.schemas import ChatDetail, ChatList, ChatOut, FeedbackOut, InputErrorOut, Responses, error
from api.text import CollectionId, DocumentIds, FeedbackNote, Title, check_question
from storage import chats, collections, feedback, parse_uuid
from storage.workspaces import Owners

router = APIRouter(prefix="/api/chats", tags=["chats"])


class ChatIn(BaseModel):
    title: Title = ""
    document_ids: DocumentIds | None = Field(default=None, description="limit the chat to these documents; "
                                                                        "omit for all")
    collection_id: CollectionId | None = Field(default=None, description="instead: the chat searches this collection's "
                                                                       "documents, as they are at each question")
    workspace_id: int | None = Field(default=None, ge=1, le=BIGINT_MAX, description=(
        "a workspace you are a member of: the chat searches its documents only (its documents and collection "
        "must be that workspace's); omit to search everything you may read"))

    @model_validator(mode="after")
    def one_scope(self) -> ChatIn:
        if self.document_ids and self.collection_id:
            raise ValueError("give document_ids or collection_id, not both")
        return self


class ChatPatch(BaseModel):
    title: Title | None = None
    document_ids: DocumentIds | None = Field(default=None, description="new scope; an empty list means all "
                                                                        "documents")
    collection_id: CollectionId | None = Field(default=None, description="instead: a collection as the new scope")

    @model_validator(mode="after")
    def one_scope(self) -> ChatPatch:
        if self.document_ids is not None and self.collection_id:
            raise ValueError("give document_ids or collection_id, not both")
        return self


class QuestionIn(BaseModel):
    question: str = Field(min_length=1, description="at most QUESTION_MAX_CHARS characters")


class FeedbackIn(BaseModel):
    rating: Literal["up", "down"]
    note: FeedbackNote = ""


MessageId = Annotated[int, Path(ge=1, le=2**63 - 1, description="a message id (from the chat's messages)")]
STREAM_RESPONSES: Responses = {
    200: {"description": "text/event-stream: `sources`, `token`..., then `done` {message_id, answer, citations, "
                         "route, provider, cached}; `stopped` {message_id, answer written so far, citations} after "
                         "POST .../stop; or `blocked` / `error`", "content": {"text/event-stream": {}}},
    429: error("the question limit per hour or per minute; see Retry-After")}


def _chat_out(chat: dict[str, Any]) -> dict[str, Any]:
    out = {"id": str(chat["id"]), "title": chat["title"],
           "document_ids": [str(d) for d in chat["document_ids"]] if chat["document_ids"] is not None else None,
           "collection_id": str(chat["collection_id"]) if chat.get("collection_id") else None,
           "collection_name": chat.get("collection_name"),
           "workspace_id": chat.get("workspace_id"), "workspace": chat.get("workspace"),
           "shared": bool(chat.get("shared")), "owner": chat.get("owner"),
           "created_at": chat["created_at"].isoformat(), "updated_at": chat["updated_at"].isoformat()}
    if "messages" in chat:
        out["message_count"] = chat["messages"]
    return out


def _message_out(m: dict[str, Any]) -> dict[str, Any]:
    return {"id": m["id"], "role": m["role"], "content": m["content"], "status": m["status"],
            "citations": m["citations"], "meta": m["meta"], "created_at": m["created_at"].isoformat(),
            "feedback": m.get("feedback")}


def owned_scope(conn: psycopg.Connection, owner_id: Owners, document_ids: list[str]) -> list[uuid.UUID]:
    owned = chats.owned_document_ids(conn, owner_id=owner_id, document_ids=document_ids)
    if len(set(owned)) != len(set(document_ids)):
        raise HTTPException(404, "no such document in document_ids")  # a stranger's id looks absent
    return owned


def owned_collection(conn: psycopg.Connection, owner_id: Owners, collection_id: str | None) -> uuid.UUID | None:
    if collection_id is None:
        return None
    found = collections.get_collection(conn, owner_id=owner_id, collection_id=collection_id)
    if found is None:
        raise HTTPException(404, "no such collection")  # a stranger's id looks absent
    return uuid.UUID(str(found["id"]))


@router.post("", status_code=201, response_model=ChatOut,
             responses={404: error("no such document in document_ids, no such collection, or no such workspace "
                                  "(or you are not a member of it)")})
def create_chat(user: CurrentUser, db: DbDep, body: ChatIn | None = None) -> dict[str, Any]:
    body = body or ChatIn()
    with db.connection() as conn:
        # what the caller may read now (their own, their workspaces', or the one workspace: 404 unless a
        # member); each question reads again
        owners = reading(conn, user, body.workspace_id)
        scope = owned_scope(conn, owners, body.document_ids) if body.document_ids else None
        collection = owned_collection(conn, owners, body.collection_id)
        return _chat_out(chats.create_chat(conn, owner_id=user.id, title=body.title, document_ids=scope,
                                           collection_id=collection, workspace_id=body.workspace_id))


MAX_MESSAGE_ID = 2**63 - 1  # Postgres' bigint
# a chat's page also takes `before`, a message id (the web app's "Earlier messages")
message_query = query_only(*PAGE_QUERY, "before")


@router.get("", response_model=ChatList, dependencies=[Depends(page_query)])
def list_chats(user: CurrentUser, db: DbDep, settings: SettingsDep,
               limit: int | None = Query(None, ge=1, description="chats in this page; at most (and by default) "
                                                                 "CHAT_PAGE_MAX"),
               offset: int = Query(0, ge=0, le=MAX_OFFSET, description="chats to skip, the last updated first")
               ) -> dict[str, Any]:
    """A page of your chats, the last updated first; `next_offset` asks for the next (null: no more)."""
    with db.connection() as conn:
        found, next_offset = page(lambda n, skip: chats.list_chats(conn, owner_id=user.id, limit=n, offset=skip),
                                  limit=limit, offset=offset, cap=settings.paging.chat_page_max)
    return {"chats": [_chat_out(c) for c in found], "next_offset": next_offset}


@router.get("/shared", response_model=ChatList, dependencies=[Depends(space_page_query)],
            responses={404: error("no such workspace (or you are not a member of it)")})
def list_shared(user: CurrentUser, db: DbDep, settings: SettingsDep,
                workspace_id: int | None = Query(None, ge=1, le=BIGINT_MAX, description="one workspace's only"),
                limit: int | None = Query(None, ge=1, description="chats in this page; at most (and by default) "
                                                                  "CHAT_PAGE_MAX"),
                offset: int = Query(0, ge=0, le=MAX_OFFSET, description="chats to skip, the last updated first")
                ) -> dict[str, Any]:
    """Chats shared read-only with the workspaces you are a member of (yours among them), the last
    updated first; each names its `owner`."""
    with db.connection() as conn:
        if workspace_id is not None:
            reading(conn, user, workspace_id)  # 404 unless a member
        found, next_offset = page(
            lambda n, skip: chats.list_shared(conn, reader=user.id, workspace_id=workspace_id, limit=n, offset=skip),
            limit=limit, offset=offset, cap=settings.paging.chat_page_max)
    return {"chats": [_chat_out(c) for c in found], "next_offset": next_offset}


@router.get("/{chat_id}", response_model=ChatDetail, responses={404: error("no such chat")},
            dependencies=[Depends(message_query)])
def get_chat(chat_id: str, user: CurrentUser, db: DbDep, settings: SettingsDep,
             limit: int | None = Query(None, ge=1, description="messages in this page; at most (and by default) "
                                                               "MESSAGE_PAGE_MAX"),
             offset: int = Query(0, ge=0, le=MAX_OFFSET, description="the newest messages to skip"),
             before: int | None = Query(None, ge=1, le=MAX_MESSAGE_ID,
                                        description="only messages older than this message id: the page "
                                                    "before the oldest one shown, which stays put while "
                                                    "the chat grows (an offset would shift)")
             ) -> dict[str, Any]:
    """The chat and a page of its messages: the latest ones (oldest first within the page);
    `next_offset` asks for the earlier ones (null: none), with the same `before`. An assistant
    message carries its citations and meta (route, provider)."""
    with db.connection() as conn:
        chat = chats.get_chat(conn, owner_id=user.id, chat_id=chat_id)
        if chat is not None:
            chat_uuid = chat["id"]
            messages, next_offset = page(lambda n, skip: chats.list_messages(
                conn, owner_id=user.id, chat_id=chat_uuid, limit=n, offset=skip, before=before),
                limit=limit, offset=offset, cap=settings.paging.message_page_max)
        else:  # one shared with a workspace the caller is in now, read-only
            chat = chats.shared_chat(conn, reader=user.id, chat_id=chat_id)
            if chat is None:
                raise HTTPException(404, "no such chat")
            shared = chat
            messages, next_offset = page(lambda n, skip: chats.shared_messages(
                conn, reader=user.id, chat=shared, limit=n, offset=skip, before=before),
                limit=limit, offset=offset, cap=settings.paging.message_page_max)
    return {**_chat_out(chat), "messages": [_message_out(m) for m in reversed(messages)], "next_offset": next_offset}


@router.patch("/{chat_id}", response_model=ChatOut,
              responses={404: error("no such chat, or no such document in document_ids, or no such collection")})
def patch_chat(chat_id: str, body: ChatPatch, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        if chats.get_chat(conn, owner_id=user.id, chat_id=chat_id) is None:
            raise HTTPException(404, "no such chat")
        scope = owned_scope(conn, reading(conn, user), body.document_ids) if body.document_ids else None
        collection = owned_collection(conn, reading(conn, user), body.collection_id)
        chat = chats.update_chat(conn, owner_id=user.id, chat_id=chat_id,
                                 title=body.title, collection_id=collection,
                                 document_ids=scope, scope_all=body.document_ids == [])
    if chat is None:
        raise HTTPException(404, "no such chat")
    return _chat_out(chat)


def read_only(conn: psycopg.Connection, user_id: int, chat_id: str) -> HTTPException:
    """The refusal of a write to a chat that is not the caller's: 403 when it is shared with them
    (they see it), else 404 like a missing one."""
    if chats.shared_chat(conn, reader=user_id, chat_id=chat_id) is not None:
        return HTTPException(403, "this chat is shared with you read-only: only its owner asks in it or changes it")
    return HTTPException(404, "no such chat")


@router.put("/{chat_id}/share", response_model=ChatOut, responses={
    403: error("a chat shared with you (only its owner shares it)"), 404: error("no such chat"),
    422: error("the chat is not over a workspace, or you are no longer a member of it")})
def share(chat_id: str, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Share your chat read-only with the members of its workspace (a chat started in a workspace:
    its answers cite that workspace's documents only). They read it, as long as they are members;
    only you ask in it."""
    return _set_shared(chat_id, user, db, shared=True)


@router.delete("/{chat_id}/share", response_model=ChatOut, responses={
    403: error("a chat shared with you (only its owner stops sharing it)"), 404: error("no such chat")})
def unshare(chat_id: str, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Stop sharing your chat: its workspace's members no longer see it, at once."""
    return _set_shared(chat_id, user, db, shared=False)


def _set_shared(chat_id: str, user: CurrentUser, db: DbDep, *, shared: bool) -> dict[str, Any]:
    with db.connection() as conn:
        chat = chats.get_chat(conn, owner_id=user.id, chat_id=chat_id)
        if chat is None:
            raise read_only(conn, user.id, chat_id)
        changed = chats.set_shared(conn, owner_id=user.id, chat_id=chat["id"], shared=shared)
    if changed is None:
        raise HTTPException(422, "only a chat over a workspace you are a member of can be shared"
                                 " (start it in the workspace)")
    return _chat_out(changed)


@router.delete("/{chat_id}", status_code=204, responses={404: error("no such chat")})
def delete_chat(chat_id: str, user: CurrentUser, db: DbDep) -> Response:
    with db.connection() as conn:
        if not chats.delete_chat(conn, owner_id=user.id, chat_id=chat_id):
            raise HTTPException(404, "no such chat")
    return Response(status_code=204)


@router.post("/{chat_id}/messages", response_class=EventSourceResponse, responses={
    **STREAM_RESPONSES, 403: error("a chat shared with you read-only"), 404: error("no such chat"),
    422: error("empty or too long question", InputErrorOut)})
async def ask(chat_id: str, body: QuestionIn, request: Request, user: CurrentUser, db: DbDep,
              settings: SettingsDep) -> EventSourceResponse:
    """Ask a question in the chat; the answer streams as Server-Sent Events and is saved with the chat."""
    question = check_question(body.question, settings.questions.max_chars)
    return await _answer(request, user, db, settings, chat_id, question, regenerate=None)


@router.post("/{chat_id}/messages/{message_id}/regenerate", response_class=EventSourceResponse, responses={
    **STREAM_RESPONSES, 403: error("a chat shared with you read-only"), 404: error("no such chat"),
    409: error("only the chat's latest answer can be answered again")})
async def regenerate(chat_id: str, message_id: MessageId, request: Request, user: CurrentUser, db: DbDep,
                     settings: SettingsDep) -> EventSourceResponse:
    """Answer the question of the chat's latest answer again, as a new message (the earlier answer
    stays in the chat; the new one's meta `regenerates` names it). Counts as a question."""

    def find() -> tuple[str, int]:
        with db.connection() as conn:
            chat = chats.get_chat(conn, owner_id=user.id, chat_id=chat_id)
            if chat is None:
                raise read_only(conn, user.id, chat_id)
            found = chats.regenerable(conn, owner_id=user.id, chat_id=chat["id"], message_id=message_id)
        if found is None:
            raise HTTPException(409, "only the chat's latest answer can be answered again")
        return str(found["question"]), int(found["question_id"])

    question, question_id = await asyncio.to_thread(find)
    return await _answer(request, user, db, settings, chat_id, question,
                         regenerate={"message_id": message_id, "question_id": question_id})


async def _answer(request: Request, user: CurrentUser, db: DbDep, settings: SettingsDep, chat_id: str,
                  question: str, regenerate: dict[str, Any] | None) -> EventSourceResponse:
    answers: AnswerProcesses | None = request.app.state.answers

    def prepare() -> tuple[dict[str, Any], accounting.Ticket]:
        with db.connection() as conn:
            chat = chats.get_chat(conn, owner_id=user.id, chat_id=chat_id)
            if chat is None:
                raise read_only(conn, user.id, chat_id)
        if answers is not None:
            answers.check(user.id)  # a full server: 503 with Retry-After before the question is counted
        with db.connection() as conn:  # what the model will see with the question: its cost in tokens
            seen = chats.history(conn, owner_id=user.id, chat_id=chat["id"], turns=settings.history_turns,
                                 before=regenerate["question_id"] if regenerate else None)
        [ticket] = accounting.admit(db, settings, owner_id=user.id, source="chat", chat_id=chat["id"],
                                    tokens=[accounting.cost(question, seen)], workspace_id=chat.get("workspace_id"))
        return chat, ticket

    chat, ticket = await asyncio.to_thread(prepare)
    answerer: ChatAnswerer = request.app.state.answerer
    gone = threading.Event()  # the client left: the answer stops, what was checked is saved (issue 41)
    answer = answer_in_thread(lambda emit: answerer.ask(owner_id=user.id, username=user.username, chat=chat,
                                                        question=question, emit=emit, ticket=ticket,
                                                        regenerate=regenerate, gone=gone),
                              ticket=ticket, name=f"chat-{chat['id']}", nice=settings.background_nice, gone=gone)

    async def events() -> AsyncIterator[dict[str, str]]:
        async for event, data in answer:
            yield {"event": event, "data": json.dumps(data, default=str)}

    return EventSourceResponse(events(), ping=15)


class StopOut(BaseModel):
    stopping: bool = Field(description="true: the answer being written (if any) ends with a `stopped` event")


@router.post("/{chat_id}/stop", status_code=202, response_model=StopOut, responses={404: error("no such chat")})
def stop(chat_id: str, user: CurrentUser, db: DbDep) -> dict[str, bool]:
    """Stop the answer being written in this chat: the model call ends on the server, and what was
    written so far is saved with status `stopped` (its stream ends with a `stopped` event)."""
    with db.connection() as conn:
        if not chats.request_stop(conn, owner_id=user.id, chat_id=chat_id):
            raise HTTPException(404, "no such chat")
    return {"stopping": True}


@router.put("/{chat_id}/messages/{message_id}/feedback", response_model=FeedbackOut,
            responses={404: error("no such answer in this chat")})
def put_feedback(chat_id: str, message_id: MessageId, body: FeedbackIn, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Thumbs up or down on an answer, with an optional note; given again, it replaces the earlier one."""
    chat_uuid = parse_uuid(chat_id)
    with db.connection() as conn:
        row = feedback.set_feedback(conn, owner_id=user.id, chat_id=chat_uuid, message_id=message_id,
                                    rating=body.rating, note=body.note) if chat_uuid else None
    if row is None:
        raise HTTPException(404, "no such answer in this chat")
    return {"rating": row["rating"], "note": row["note"]}


@router.delete("/{chat_id}/messages/{message_id}/feedback", status_code=204,
               responses={404: error("no verdict on such an answer in this chat")})
def delete_feedback(chat_id: str, message_id: MessageId, user: CurrentUser, db: DbDep) -> Response:
    chat_uuid = parse_uuid(chat_id)
    with db.connection() as conn:
        if chat_uuid is None or not feedback.clear_feedback(conn, owner_id=user.id, chat_id=chat_uuid,
                                                            message_id=message_id):
            raise HTTPException(404, "no verdict on such an answer in this chat")
    return Response(status_code=204)
