"""A question's document scope (storage/document_filter.py `question_scope`), read once a question.

The answerable node reads it to check the years of the company named; the first search would read
it again for the same words among the same documents. The state keeps what was read (JSON, so a
checkpointer keeps it: ids as strings) with those words and documents, and retrieve hands it to the
search while its query is still those words (a rewritten query reads its own).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from graph.state import QuestionScope

if TYPE_CHECKING:  # storage is imported where the graph runs, as the nodes do
    from storage.document_filter import Scope


def _ids(document_ids: Sequence[uuid.UUID | str] | None) -> list[str] | None:
    return [str(uuid.UUID(str(d))) for d in document_ids] if document_ids else None


def kept(scope: Scope | None, question: str, document_ids: Sequence[uuid.UUID | str] | None) -> QuestionScope:
    """`scope`, read for `question` among `document_ids`, as the state keeps it."""
    tiers = None if scope is None else [[str(d) for d in tier] for tier in scope.tiers]
    return QuestionScope(question=question, document_ids=_ids(document_ids), tiers=tiers,
                         certain=scope is not None and scope.certain)


def reused(known: QuestionScope | None, query: str,
           document_ids: Sequence[uuid.UUID | str] | None) -> Scope | None | Literal["read"]:
    """The scope kept for `query` among `document_ids`, or "read" when none was kept for them."""
    if known is None or known["question"] != query or known["document_ids"] != _ids(document_ids):
        return "read"
    if known["tiers"] is None:
        return None
    from storage.document_filter import Scope

    return Scope(tuple(tuple(uuid.UUID(d) for d in tier) for tier in known["tiers"]), known["certain"])
