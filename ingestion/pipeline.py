"""Submit a PDF and run its ingestion job: parse → chunk → embed → store (one transaction).

`submit_pdf` validates and stores the file, dedupes by content hash per owner and queues a job;
`run_job` does the work, reporting stage and percent to `document_jobs` (and to a callback).
Both the CLI and the server use these two functions.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.chunk import chunk_rows
from ingestion.errors import IngestError
from ingestion.parse import check_pdf_bytes, parse_pdf
from providers.embeddings import Embedder
from settings import Settings
from storage import documents, jobs
from storage.db import Database
from storage.documents import ChildRow, ParentRow

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]

# Share of the job's percent given to each stage (embedding dominates the time).
STAGES = {"parsing": (0, 8), "chunking": (8, 10), "embedding": (10, 92), "storing": (92, 100)}


@dataclass
class Submission:
    document_id: uuid.UUID
    job_id: uuid.UUID | None  # None when an identical, ready document was reused
    reused: bool
    content_hash: str
    created: bool = False  # this call created the document row (not a reuse or a redo of one)
    queued: bool = False  # this call queued a new job (to be handed to the broker, if there is one)


@dataclass
class JobOutcome:
    document_id: uuid.UUID
    status: str  # ready | failed | cancelled (document deleted, or the job taken over)
    pages: int = 0
    parents: int = 0
    children: int = 0
    seconds: float = 0.0
    error: str | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)


def stored_file_path(settings: Settings, owner_id: int, content_hash: str) -> Path:
    return settings.home / "files" / str(owner_id) / f"{content_hash}.pdf"


def display_title(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if name.lower().endswith(".pdf") else name
    return " ".join(stem.replace("_", " ").split())


def submit_pdf(db: Database, settings: Settings, *, owner_id: int, name: str, data: bytes) -> Submission:
    """Validate, store the raw file, and queue a job. A duplicate that is ready is reused."""
    check_pdf_bytes(data)
    content_hash = hashlib.sha256(data).hexdigest()
    path = stored_file_path(settings, owner_id, content_hash)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a crash never leaves a half-written file under the real name
    with db.connection() as conn, conn.transaction():
        existing = documents.find_by_hash(conn, owner_id=owner_id, content_hash=content_hash)
        if existing and existing["status"] == "ready":
            return Submission(existing["id"], None, True, content_hash)
        if existing and existing["status"] in ("queued", "processing"):
            active = jobs.active_job(conn, document_id=existing["id"])
            if active:
                return Submission(existing["id"], active, False, content_hash)
        created = not existing
        if existing:  # failed before (or lost its job): redo it
            document_id = existing["id"]
            documents.requeue_document(conn, document_id=document_id, name=name)
        else:
            document_id = documents.create_document(
                conn, owner_id=owner_id, name=name, content_hash=content_hash, size_bytes=len(data)
            )
        job_id = jobs.create_job(conn, document_id=document_id, owner_id=owner_id)
    return Submission(document_id, job_id, False, content_hash, created, queued=True)


def run_job(
    db: Database,
    settings: Settings,
    embedder: Embedder,
    job_id: uuid.UUID,
    progress: Progress | None = None,
) -> JobOutcome:
    """Run one queued job to the end. Chunk rows are written in a single transaction."""
    started = time.perf_counter()
    with db.connection() as conn:
        target = jobs.job_target(conn, job_id=job_id)
        if target is None:
            raise KeyError(f"no job {job_id}")
        document_id, owner_id, name, content_hash = (target.document_id, target.owner_id, target.name,
                                                     target.content_hash)
        claim = jobs.claim(conn, job_id=job_id, lease_s=settings.job_lease_s, max_attempts=settings.job_max_attempts)
        if claim is None:
            raise jobs.JobBusy(f"job {job_id} is already running in another process, or has ended")
        lease = jobs.Lease(db, job_id, claim, settings.job_lease_s).start()
        last_report: list = [0.0, ""]
        stage_started: dict[str, float] = {}

        def report(stage: str, fraction: float) -> None:
            lease.check()  # a deleted document stops its job here, within a heartbeat
            stage_started.setdefault(stage, time.perf_counter())
            low, high = STAGES[stage]
            percent = low + (high - low) * fraction
            now = time.monotonic()
            # Throttle writes: a progress row per half second is plenty for any reader.
            if fraction >= 1.0 or now - last_report[0] > 0.5 or stage != last_report[1]:
                if not jobs.set_progress(conn, job_id=job_id, stage=stage, percent=percent, claim=claim):
                    raise jobs.JobCancelled("the job was cancelled (its document was deleted) or taken over")
                last_report[:] = [now, stage]
            if progress is not None:
                progress(stage, percent)

        try:
            documents.set_document_status(conn, document_id=document_id, status="processing")
            report("parsing", 0.0)
            path = stored_file_path(settings, owner_id, content_hash)
            if not path.exists():
                raise IngestError("the uploaded file is missing from storage; upload it again")
            parsed = parse_pdf(path.read_bytes())
            report("chunking", 0.0)
            chunks = chunk_rows(
                parsed.rows,
                embedder.count_tokens,
                title=display_title(name),
                child_tokens=settings.child_tokens,
                overlap_tokens=settings.child_overlap_tokens,
                parent_tokens=settings.parent_tokens,
            )
            children = chunks.children
            report("embedding", 0.0)
            vectors = embedder.embed_documents(
                [f"{c.heading}\n{c.text}" for c in children],
                progress=lambda done, total: report("embedding", done / total),
            )
            report("storing", 0.0)
            parent_rows = [ParentRow(i, p.page_start, p.page_end, p.text) for i, p in enumerate(chunks.parents)]
            child_rows: list[ChildRow] = []
            for parent_ord, parent in enumerate(chunks.parents):
                for child in parent.children:  # same order as `children`, so rows meet their vectors
                    child_rows.append(ChildRow(parent_ord, len(child_rows), child.page, child.heading, child.text))
            with conn.transaction():
                jobs.hold(conn, job_id=job_id, claim=claim)  # still ours: a redelivered job never writes twice
                documents.replace_chunks(
                    conn,
                    owner_id=owner_id,
                    document_id=document_id,
                    parents=parent_rows,
                    children=child_rows,
                    embeddings=vectors,
                )
                documents.set_document_status(conn, document_id=document_id, status="ready", pages=parsed.pages)
                jobs.finish_job(conn, job_id=job_id)
            documents.refresh_term_index(conn)
            if progress is not None:
                progress("done", 100.0)
            ended = time.perf_counter()
            marks = [*stage_started.values(), ended]
            return JobOutcome(
                document_id, "ready", parsed.pages, len(parent_rows), len(child_rows), ended - started,
                stage_seconds={s: round(b - a, 3) for s, a, b in zip(stage_started, marks, marks[1:], strict=False)},
            )
        except jobs.JobCancelled as exc:
            log.info("job %s stopped: %s", job_id, exc)
            return JobOutcome(document_id, "cancelled", seconds=time.perf_counter() - started, error=str(exc))
        except Exception as exc:
            reason = str(exc) if isinstance(exc, IngestError) else f"internal error: {exc!r}"
            if not isinstance(exc, IngestError):
                log.exception("job %s failed", job_id)
            else:
                log.warning("job %s failed: %s", job_id, reason)
            jobs.fail_job(conn, job_id=job_id, reason=reason, claim=claim)
            return JobOutcome(document_id, "failed", seconds=time.perf_counter() - started, error=reason)
        finally:
            lease.stop()
            jobs.release(conn, job_id=job_id, claim=claim)
