"""Give documents stored before contextual headings their context (`thotqen reindex --context`).

Ingestion now reads each document's company, form and period from its own text
(ingestion/context.py), stores them on the document and starts every chunk's heading with them
instead of the file name. A document ingested earlier keeps working as it was; this command reads
its context again from its stored units (no file is parsed again), stores it, swaps the file-name
front of each heading for the context and re-embeds those chunks with the index's model, one
document per transaction. Run it again at any time: a document already done is only re-read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ingestion.chunk import trim_heading
from ingestion.context import extract_context
from ingestion.pipeline import display_title, embedding_text, heading_title, store_context
from ingestion.units import Row
from providers.protocols import DocumentEmbedder
from storage import documents, embedding_index
from storage.db import Database

log = logging.getLogger(__name__)

# (owner's name, documents done, of total) after each document
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RecontextOutcome:
    documents: int  # ready documents read again
    changed: int  # documents whose chunk headings changed
    chunks: int  # chunks re-embedded


def new_heading(old: str, previous_fronts: list[str], front: str) -> str | None:
    """`old` with its document part (one of `previous_fronts`) replaced by `front`; None when it
    already starts with `front`. What follows the front (the page or section title) is kept."""
    if old == front or old.startswith(f"{front} — "):
        return None
    for prev in sorted(previous_fronts, key=len, reverse=True):
        if old == prev:
            return front
        if old.startswith(f"{prev} — "):
            return f"{front} — {old[len(prev) + 3:]}"
    first, sep, rest = old.partition(" — ")
    if " · " in first:  # a context written by another version ("company · form · period"): replaced
        return f"{front}{sep}{rest}"
    return f"{front} — {old}"  # a heading cut inside a long file name: keep what there is after the front


def recontext_document(db: Database, embedder: DocumentEmbedder, doc: documents.StoredDocument) -> int:
    """Read one document's context again, store it and fix its headings; the chunks re-embedded."""
    with db.connection() as conn:
        units = documents.stored_units(conn, document_id=doc.document_id)
        children = documents.child_headings(conn, document_id=doc.document_id)
    rows = [Row(page, line, None) for page, _title, text in units for line in text.split("\n") if line.strip()]
    context = extract_context(rows, {page: title for page, title, _text in units if title})
    front = heading_title(context, doc.name)
    changed: list[tuple[int, str, str]] = []
    old = {cid: heading for cid, heading, _text in children}
    renamed = [(cid, new_heading(heading, [display_title(doc.name)], front), text) for cid, heading, text in children]
    fresh = [(cid, heading, text) for cid, heading, text in renamed if heading is not None]
    if fresh:
        counts = embedder.count_tokens([h for _c, h, _t in fresh])
        changed = [(cid, trim_heading(h, n), text) for (cid, h, text), n in zip(fresh, counts, strict=True)]
        # a context longer than the heading budget is cut where ingestion cut it: already done
        changed = [(cid, h, text) for cid, h, text in changed if h != old[cid]]
    vectors = embedder.embed_documents([embedding_text(h, t) for _c, h, t in changed]) if changed else None
    with db.connection() as conn, conn.transaction():
        store_context(conn, doc.document_id, context)
        if vectors is not None:  # there are changed headings
            embedding_index.assert_model(conn, embedder.identity, embedder.dimension)
            documents.replace_headings(conn, document_id=doc.document_id, child_ids=[c for c, _h, _t in changed],
                                       headings=[h for _c, h, _t in changed], embeddings=vectors)
    return len(changed)


def recontext(db: Database, embedder: DocumentEmbedder, progress: Progress | None = None) -> RecontextOutcome:
    with db.connection() as conn:
        todo = documents.ready_documents_of_all(conn)
    changed = chunks = 0
    for n, doc in enumerate(todo, 1):
        done = recontext_document(db, embedder, doc)
        changed += bool(done)
        chunks += done
        if progress is not None:
            progress(doc.username, n, len(todo))
    if chunks:
        with db.connection() as conn:
            documents.refresh_term_index(conn)
    log.info("recontext: %d of %d documents got new headings (%d chunks)", changed, len(todo), chunks)
    return RecontextOutcome(len(todo), changed, chunks)
