"""What the graph reads from storage, as a typed protocol: the nodes never hold a connection.

The composition root (runtime.py) builds one `EvidenceStore` a process (storage/evidence_store.py
wraps Postgres); a run's nodes reach it through their context (graph/context.py `GraphParts.evidence`)
and tests may hand in another. `readers` answers, once a run, whose documents the asker reads
(graph/readers.py keeps the answer in the state); `shelf` opens those owners' documents for one
node's reads, every one of them scoped to the owners in SQL.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:  # storage is imported where the graph runs, as the nodes do
    import numpy as np

    from storage.document_filter import DocumentFilter, Scope
    from storage.documents import Coverage, Filers
    from storage.search import ChildUnit, Hit, SearchParams
    from storage.tables import FoundCell


class Shelf(Protocol):
    """The documents of some owners, for one node's reads (one connection): ownership is the shelf's,
    so no read can name other owners."""

    def search(self, *, query_text: str, query_embedding: np.ndarray | None, params: SearchParams,
               document_ids: Sequence[uuid.UUID | str] | None, where: DocumentFilter | None,
               scope: Scope | None | Literal["read"]) -> list[Hit]:
        """Hybrid search over the child chunks (storage/search.py `search`)."""
        ...

    def similarities(self, *, query_embedding: np.ndarray, child_ids: Sequence[int]) -> dict[int, float]:
        """Cosine of the query and each child."""
        ...

    def children_of(self, parent_ids: Sequence[int]) -> dict[int, list[ChildUnit]]:
        """Each passage's children, with their pages."""
        ...

    def coverage(self, document_ids: Sequence[uuid.UUID] | None) -> Coverage:
        """The years and names the documents (all the owners' when None) report."""
        ...

    def question_scope(self, question: str, document_ids: Sequence[uuid.UUID] | None) -> Scope | None:
        """The documents the question's company and period point to (storage/document_filter.py)."""
        ...

    def mentions(self, document_ids: Sequence[uuid.UUID] | None, phrase: str) -> bool:
        """Whether one passage holds every word of `phrase`."""
        ...

    def find_cells(self, text: str, document_ids: Sequence[uuid.UUID] | None, *, captions: str | None = None,
                   limit: int = 50) -> list[FoundCell]:
        """Table cells whose row matches `text` (storage/tables.py `find_cells`)."""
        ...

    def company_names(self, document_ids: Sequence[uuid.UUID]) -> list[str]:
        """The companies the documents' covers name."""
        ...

    def absent_words(self, document_id: uuid.UUID | str, words: Sequence[str]) -> set[str]:
        """The words the document never uses."""
        ...

    def filers(self, document_ids: Sequence[uuid.UUID]) -> Filers:
        """The documents' filers: names, former names and tickers."""
        ...

    def ready_documents(self) -> dict[str, uuid.UUID]:
        """Every ready document of the owners, by name."""
        ...

    def glossary_words(self, text: str) -> str:
        """The filing words the query glossary gives for `text` (shared by every owner)."""
        ...


class EvidenceStore(Protocol):
    """Where the documents are: who reads which, and a shelf of them."""

    def readers(self, *, user: str, owner_id: int | None, workspace_id: int | None) -> list[int]:
        """The owners whose documents the asker (`owner_id`, else the user named `user`) may read now:
        their own and their workspaces' (only `workspace_id`'s when given)."""
        ...

    def shelf(self, owners: Sequence[int]) -> AbstractContextManager[Shelf]:
        """The owners' documents, open for the reads of one node."""
        ...
