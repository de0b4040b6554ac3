"""Give documents stored before tables were read their cells (`thotqen reindex --tables`).

Ingestion now stores every table's cells with the chunks (ingestion/tables.py). A document stored
earlier, or under older table rules (storage/tables.py TABLES_VERSION), has none or stale ones: this
parses its stored file again exactly as ingestion does (same format check, limits and sandbox),
reads its tables and stores the cells, each linked to the stored chunk that holds its row, one
document per transaction. Chunks and vectors are left as they are. Run it again at any time: a
document already done is skipped, and one stopped halfway is simply redone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ingestion.context import extract_context
from ingestion.errors import IngestError
from ingestion.pipeline import limits, stored_file_path
from ingestion.sandbox import extract
from ingestion.tables import table_cells
from settings import Settings
from storage import tables
from storage.db import Database

log = logging.getLogger(__name__)

# (owner's name, documents done, of total) after each document
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RetableOutcome:
    documents: int  # documents read again in this run
    cells: int  # cells stored
    failed: list[str]  # "name: reason" of the documents whose file could not be read


def retable_document(db: Database, settings: Settings, doc: tables.TablesPending) -> int:
    """Parse one stored document again and store its cells; the number stored."""
    path = stored_file_path(settings, doc.owner_id, doc.content_hash, doc.format)
    if not path.exists():
        raise IngestError("its stored file is missing; upload it again")
    parsed = extract(path, doc.format, limits(settings), timeout_s=settings.ingestion.timeout_s,
                     memory_mb=settings.ingestion.memory_mb)
    context = extract_context(parsed.rows, {u.page: u.title for u in parsed.units if u.title})
    with db.connection() as conn:
        children = tables.chunk_lines(conn, document_id=doc.document_id)
    cells = table_cells(parsed, context, children)
    with db.connection() as conn, conn.transaction():
        tables.replace_cells(conn, owner_id=doc.owner_id, document_id=doc.document_id, cells=cells)
    return len(cells)


def retable(db: Database, settings: Settings, progress: Progress | None = None) -> RetableOutcome:
    with db.connection() as conn:
        todo = tables.documents_to_retable(conn)
    cells = 0
    failed: list[str] = []
    for n, doc in enumerate(todo, 1):
        try:
            cells += retable_document(db, settings, doc)
        except IngestError as exc:  # one unreadable file does not stop the others
            log.warning("reindex --tables: %s: %s", doc.name, exc)
            failed.append(f"{doc.name}: {exc}")
        if progress is not None:
            progress(doc.username, n, len(todo))
    log.info("reindex --tables: %d documents read again, %d cells", len(todo) - len(failed), cells)
    return RetableOutcome(len(todo) - len(failed), cells, failed)
