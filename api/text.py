"""Text that reaches Postgres: what is refused, and how long each kind may be, in one place.

Postgres `text` cannot hold NUL (U+0000), and UTF-8 cannot encode a lone surrogate (U+D800-U+DFFF)
that JSON can still carry as an escape ("\\ud800"): either one fails in the database driver, a 500.
Every text field of every request model is one of the types below (or is built by a function
below), so such a value answers 422 naming the field, before anything is stored or run.
Questions are limited by the QUESTION_MAX_CHARS setting; every other limit is in `MAX`.
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any

from fastapi import HTTPException
from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

MAX = {
    "title": 200,  # chat titles
    "username": 64,  # a new account's name
    "login": 256,  # a name given to log in (an account's, or anything an attacker tries)
    "password": 1024,
    "token": 4096,  # a refresh token
    "filename": 200,  # an upload's name, after cleaning
    "turn": 20_000,  # one earlier turn of a /rag chat_history
    "history": 50,  # turns in a /rag chat_history
    "document_ids": 500,  # ids in one scope
    "chat_id": 200,  # a caller's thread id in /rag (logs and traces only)
    "document_filter": 200,  # a company, form or period that narrows the documents searched
    "search_k": 100,  # hits one search returns (`thotqen search --k`, the MCP `search` tool)
    "feedback_note": 2000,  # the note on a thumbs up or down (sql/027_chat_feedback.sql checks the same)
    "collection_name": 200,  # sql/027_b_collections.sql checks the same
    "collections": 1000,  # collections one user may have
    "find_query": 200,  # the sidebar's search box (GET /api/search)
    "find_results": 20,  # documents, and chats, one search answers at most
    "workspace_name": 100,  # sql/029_workspaces.sql checks the same
    "key_name": 100,  # an API key's name (sql/030_api_keys.sql checks the same)
    "api_keys": 50,  # API keys one user may have
    "key_days": 3650,  # the longest an API key may be made to last (none: until revoked)
}

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(value: str) -> str | None:
    """What makes `value` unstorable in Postgres text, or None when it is fine."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    return "NUL (U+0000)" if found.group() == "\x00" else f"an unpaired surrogate (U+{ord(found.group()):04X})"


def _storable(value: str) -> str:
    problem = unstorable(value)
    if problem is not None:
        raise ValueError(f"contains {problem}, which cannot be stored")
    return value


def strip_unstorable(value: str) -> str:
    """For text we clean rather than refuse (an uploaded file's name): the characters dropped."""
    return _UNSTORABLE.sub("", value)


def printable(value: Any) -> Any:
    """A JSON-able value with unstorable characters shown as U+FFFD (error messages echo the input)."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, list):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {k: printable(v) for k, v in value.items()}
    return value


Storable = Annotated[str, AfterValidator(_storable)]


def text(max_chars: int, *, min_chars: int = 0, strip: bool = False, pattern: str | None = None) -> Any:
    """A storable string type with these bounds (for a field whose limit is not in MAX)."""
    return Annotated[str, StringConstraints(strip_whitespace=strip, min_length=min_chars, max_length=max_chars,
                                            pattern=pattern), AfterValidator(_storable)]


Title = text(MAX["title"], strip=True)
Username = text(MAX["username"], min_chars=3, strip=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@+-]*$")
LoginName = text(MAX["login"], min_chars=1, strip=True)
Password = text(MAX["password"], min_chars=8)
LoginPassword = text(MAX["password"], min_chars=1)
RefreshToken = text(MAX["token"], min_chars=1)
Turn = text(MAX["turn"])
ChatId = text(MAX["chat_id"])
FilterText = text(MAX["document_filter"], strip=True)
FeedbackNote = text(MAX["feedback_note"], strip=True)
CollectionName = text(MAX["collection_name"], min_chars=1, strip=True)
WorkspaceName = text(MAX["workspace_name"], min_chars=1, strip=True)
KeyName = text(MAX["key_name"], min_chars=1, strip=True)


def _canonical_uuid(what: str) -> Any:
    """A validator: an id as its canonical lower-case string (UUIDs are case-insensitive, RFC 9562)."""

    def check(value: Any) -> Any:
        if isinstance(value, str):
            try:
                return str(uuid.UUID(value))
            except ValueError:
                raise ValueError(f"is not a {what} id (a UUID)") from None
        return value

    return check


DocumentId = Annotated[str, BeforeValidator(_canonical_uuid("document")),
                       Field(json_schema_extra={"format": "uuid"}, description="a document id (UUID)")]
CollectionId = Annotated[str, BeforeValidator(_canonical_uuid("collection")),
                         Field(json_schema_extra={"format": "uuid"}, description="a collection id (UUID)")]
DocumentIds = Annotated[list[DocumentId], Field(max_length=MAX["document_ids"])]


def question_type(max_chars: int) -> Any:
    """The question field of a request model, bounded by the QUESTION_MAX_CHARS setting."""
    return Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=max_chars),
                     AfterValidator(_storable),
                     Field(description=f"the question, 1 to {max_chars} characters")]


def unprocessable(loc: list[str | int], msg: str) -> HTTPException:
    """A 422 shaped like FastAPI's own validation errors (what the OpenAPI document promises)."""
    return HTTPException(422, [{"type": "value_error", "loc": ["body", *loc], "msg": msg}])


def check_question(question: str, max_chars: int, field: str = "question") -> str:
    """A question from a model whose limit could not be set at import (a route's body): stripped,
    storable and within QUESTION_MAX_CHARS, else 422 naming the field."""
    question = question.strip()
    if not question:
        raise unprocessable([field], "the question is empty")
    if len(question) > max_chars:
        raise unprocessable([field], f"the question is longer than {max_chars} characters")
    problem = unstorable(question)
    if problem is not None:
        raise unprocessable([field], f"contains {problem}, which cannot be stored")
    return question
