"""The graph's evidence store over Postgres (graph/evidence_store.py is the protocol it meets).

A thin wrapper of the storage functions the nodes used to call with a connection: a `PostgresShelf`
binds one connection to a run's owners, so each read is scoped to them in SQL (and by row security,
storage/tenancy.py) without a node passing them again. Each function is read off its module when
called, so what a module holds at that moment is what runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import psycopg

from storage import document_filter, documents, tables, workspaces
from storage import search as searching  # the shelf's own `search` would hide the module
from storage.document_filter import DocumentFilter, Scope
from storage.users import get_or_create_user

if TYPE_CHECKING:
    from storage.db import Database


@dataclass(frozen=True)
class PostgresShelf:
    """The documents of `owners` over one connection."""

    conn: psycopg.Connection
    owners: list[int]

    def search(self, *, query_text: str, query_embedding: np.ndarray | None, params: searching.SearchParams,
               document_ids: Sequence[uuid.UUID | str] | None, where: DocumentFilter | None,
               scope: Scope | None | Literal["read"]) -> list[searching.Hit]:
        return searching.search(self.conn, owner_id=self.owners, query_text=query_text, query_embedding=query_embedding,
                             params=params, document_ids=document_ids, where=where, scope=scope)

    def similarities(self, *, query_embedding: np.ndarray, child_ids: Sequence[int]) -> dict[int, float]:
        return searching.similarities(self.conn, owner_id=self.owners, query_embedding=query_embedding,
                                   child_ids=child_ids)

    def children_of(self, parent_ids: Sequence[int]) -> dict[int, list[searching.ChildUnit]]:
        return searching.children_of(self.conn, owner_id=self.owners, parent_ids=parent_ids)

    def coverage(self, document_ids: Sequence[uuid.UUID] | None) -> documents.Coverage:
        return documents.coverage(self.conn, owner_id=self.owners, document_ids=document_ids)

    def question_scope(self, question: str, document_ids: Sequence[uuid.UUID] | None) -> Scope | None:
        return document_filter.question_scope(self.conn, owner_id=self.owners, question=question,
                                              document_ids=document_ids)

    def mentions(self, document_ids: Sequence[uuid.UUID] | None, phrase: str) -> bool:
        return documents.mentions(self.conn, owner_id=self.owners, document_ids=document_ids, phrase=phrase)

    def find_cells(self, text: str, document_ids: Sequence[uuid.UUID] | None, *, captions: str | None = None,
                   limit: int = 50) -> list[tables.FoundCell]:
        return tables.find_cells(self.conn, owner_id=self.owners, text=text, document_ids=document_ids,
                                 captions=captions, limit=limit)

    def company_names(self, document_ids: Sequence[uuid.UUID]) -> list[str]:
        return documents.company_names(self.conn, owner_id=self.owners, document_ids=document_ids)

    def absent_words(self, document_id: uuid.UUID | str, words: Sequence[str]) -> set[str]:
        return documents.absent_words(self.conn, owner_id=self.owners, document_id=document_id, words=words)

    def filers(self, document_ids: Sequence[uuid.UUID]) -> documents.Filers:
        return documents.filers(self.conn, owner_id=self.owners, document_ids=document_ids)

    def ready_documents(self) -> dict[str, uuid.UUID]:
        return documents.ready_documents(self.conn, owner_id=self.owners)

    def glossary_words(self, text: str) -> str:
        return tables.glossary_words(self.conn, text)


@dataclass(frozen=True)
class PostgresEvidence:
    """The evidence store of a process: its database's pool (runtime.py builds one)."""

    database: Database

    def readers(self, *, user: str, owner_id: int | None, workspace_id: int | None) -> list[int]:
        with self.database.connection() as conn:
            asker = int(owner_id) if owner_id is not None else get_or_create_user(conn, user)
            return workspaces.spaces(conn, asker, workspace_id)

    @contextmanager
    def shelf(self, owners: Sequence[int]) -> Iterator[PostgresShelf]:
        with self.database.connection() as conn:
            yield PostgresShelf(conn, [int(o) for o in owners])
