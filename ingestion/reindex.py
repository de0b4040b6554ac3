"""Re-embed every stored chunk with the configured model (`thotqen reindex`).

Owner by owner and document by document, each document's new vectors are staged in one
transaction (storage/embedding_index.py), so an interrupted run resumes where it stopped and the
old vectors keep serving until the last document is done. Then one transaction swaps them all in
and records the new model. The texts embedded are the ones ingestion embedded (heading + text).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby

from ingestion.pipeline import embedding_text
from providers.protocols import DocumentEmbedder
from storage import embedding_index
from storage.db import Database

log = logging.getLogger(__name__)

# (owner's name, documents of that owner done, of total, chunks done, of total) after each batch
Progress = Callable[[str, int, int, int, int], None]


@dataclass(frozen=True)
class ReindexOutcome:
    model: str
    owners: int
    documents: int  # re-embedded in this run
    chunks: int  # re-embedded in this run
    swapped: int  # chunks holding the new model's vectors after the swap
    already: bool  # the index already held this model's vectors


def _reembed_owner(db: Database, embedder: DocumentEmbedder, username: str,
                   owned: list[embedding_index.PendingDocument], progress: Progress | None) -> int:
    """Stage new vectors for one owner's documents; returns the chunks embedded."""
    total = sum(d.children for d in owned)
    done = 0
    for n, doc in enumerate(owned, 1):
        with db.connection() as conn:
            rows = embedding_index.chunk_texts(conn, doc.document_id)

        def tick(batch_done: int, _total: int, n: int = n, base: int = done) -> None:
            if progress is not None:
                progress(username, n - 1, len(owned), base + batch_done, total)

        vectors = embedder.embed_documents([embedding_text(h, t) for _id, h, t in rows], progress=tick)
        with db.connection() as conn:
            embedding_index.stage_vectors(conn, document_id=doc.document_id, owner_id=doc.owner_id,
                                          model=embedder.identity, child_ids=[r[0] for r in rows], vectors=vectors)
        done += len(rows)
        if progress is not None:
            progress(username, n, len(owned), done, total)
    return done


def reindex(db: Database, embedder: DocumentEmbedder, progress: Progress | None = None) -> ReindexOutcome:
    model, dimension = embedder.identity, embedder.dimension
    with db.connection() as conn:
        now = embedding_index.state(conn)
        todo = embedding_index.pending(conn, model)
    if now.model == model and not todo:
        return ReindexOutcome(model, 0, 0, 0, now.chunks, True)
    owners = chunks = 0
    for (_owner_id, username), group in groupby(todo, key=lambda d: (d.owner_id, d.username)):
        owners += 1
        chunks += _reembed_owner(db, embedder, username, list(group), progress)
    with db.connection() as conn:
        swapped = embedding_index.swap(conn, model, dimension)
    log.info("reindex: %d chunks now hold vectors of %s", swapped, model)
    return ReindexOutcome(model, owners, len(todo), chunks, swapped, False)
