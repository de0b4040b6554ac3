"""Submit a document and run its ingestion job: parse (and OCR) → chunk → embed → store (one transaction).

`submit_document` tells the format from the bytes, stores the file, dedupes by content hash per
owner and queues a job; `run_job` does the work, reporting stage and percent to `document_jobs`
(and to a callback). Parsing runs in a child process with a memory cap and a deadline
(ingestion/sandbox.py). Both the CLI and the server use these two functions.
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
from ingestion.context import DocumentContext, extract_context
from ingestion.errors import IngestError
from ingestion.formats import Limits, registry, sniff
from ingestion.parse import OcrOptions
from ingestion.prefetch import Prefetcher, Prepared
from ingestion.sandbox import extract
from providers.embeddings import Embedder
from settings import Settings
from storage import documents, embedding_index, jobs
from storage.db import Database
from storage.documents import ChildRow, PageRow, ParentRow

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]

# Share of the job's percent given to each stage (embedding dominates the time, OCR when there is any).
# Parsing has the same share in both plans: whether OCR follows is known only once it is done.
STAGES = {"parsing": (0, 3), "chunking": (3, 10), "embedding": (10, 92), "storing": (92, 100)}
STAGES_WITH_OCR = {"parsing": (0, 3), "ocr": (3, 70), "chunking": (70, 71), "embedding": (71, 97),
                   "storing": (97, 100)}


@dataclass
class Submission:
    document_id: uuid.UUID
    job_id: uuid.UUID | None  # None when an identical, ready document was reused
    reused: bool
    content_hash: str
    created: bool = False  # this call created the document row (not a reuse or a redo of one)
    format: str = "pdf"
    queued: bool = False  # this call queued a new job (to be handed to the broker, if there is one)


JobCancelled = jobs.JobCancelled  # the job's document was deleted (or the job taken over): stop, write nothing


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


def stored_file_path(settings: Settings, owner_id: int, content_hash: str, fmt: str = "pdf") -> Path:
    return settings.home / "files" / str(owner_id) / f"{content_hash}.{registry.suffix(fmt)}"


def display_title(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    return " ".join(stem.replace("_", " ").split())


def heading_title(context: DocumentContext, name: str) -> str:
    """What every chunk's heading starts with: what the document says it is ("3M · 10-K · FY2018
    (fiscal 2018)"), or its own title; the file name only when it says neither."""
    return context.header() or display_title(name)


def embedding_text(heading: str, text: str) -> str:
    """What a chunk's vector is made from (ingestion and `thotqen reindex` alike)."""
    return f"{heading}\n{text}"


def limits(settings: Settings) -> Limits:
    return Limits(OcrOptions(settings.ocr, settings.ocr_dpi, settings.ocr_max_pages),
                  settings.office_max_unpacked_mb, settings.sheet_max_rows)


def check_file(settings: Settings, name: str, data: bytes) -> str:
    """The file's format, after the checks that need no parsing; IngestError (UnsupportedFormat for
    what is not accepted) with the reason otherwise."""
    fmt = sniff(data, name, max_unpacked_mb=settings.office_max_unpacked_mb)
    check = registry.get(fmt).check
    if check is not None:
        check(data)
    return fmt


def make_prefetcher(settings: Settings) -> Prefetcher:
    """Parses a file ahead exactly as run_job would (same format check, limits and sandbox)."""

    def prepare(path: Path) -> Prepared:
        data = path.read_bytes()
        fmt = check_file(settings, path.name, data)
        parsed = extract(path, fmt, limits(settings), timeout_s=settings.ingest_timeout_s,
                         memory_mb=settings.ingest_memory_mb)
        return Prepared(hashlib.sha256(data).hexdigest(), parsed)

    return Prefetcher(prepare)


def submit_document(db: Database, settings: Settings, *, owner_id: int, name: str, data: bytes) -> Submission:
    """Validate, store the raw file, and queue a job. A duplicate that is ready is reused."""
    fmt = check_file(settings, name, data)
    content_hash = hashlib.sha256(data).hexdigest()
    path = stored_file_path(settings, owner_id, content_hash, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        tmp = path.with_name(f"{path.stem}.{uuid.uuid4().hex}.part")  # one per writer: uploads may race
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a crash never leaves a half-written file under the real name
    with db.connection() as conn, conn.transaction():
        # identical uploads in parallel: the first creates the document, the others wait here and find it
        documents.lock_content(conn, owner_id=owner_id, content_hash=content_hash)
        existing = documents.find_by_hash(conn, owner_id=owner_id, content_hash=content_hash)
        if existing and existing["status"] == "ready":
            return Submission(existing["id"], None, True, content_hash, format=fmt)
        if existing and existing["status"] in ("queued", "processing"):
            active = jobs.active_job(conn, document_id=existing["id"])
            if active:
                return Submission(existing["id"], active, False, content_hash, format=fmt)
        created = not existing
        if existing:  # failed before (or lost its job): redo it
            document_id = existing["id"]
            documents.requeue_document(conn, document_id=document_id, name=name)
        else:
            document_id = documents.create_document(
                conn, owner_id=owner_id, name=name, content_hash=content_hash, size_bytes=len(data), fmt=fmt
            )
        job_id = jobs.create_job(conn, document_id=document_id, owner_id=owner_id)
    return Submission(document_id, job_id, False, content_hash, created, fmt, queued=True)


submit_pdf = submit_document  # the name from when only PDFs were accepted


def run_job(
    db: Database,
    settings: Settings,
    embedder: Embedder,
    job_id: uuid.UUID,
    progress: Progress | None = None,
    prepared: Prepared | None = None,
) -> JobOutcome:
    """Run one queued job to the end. Chunk rows are written in a single transaction. `prepared`:
    this file parsed ahead by a Prefetcher (used only if its bytes are the job's)."""
    started = time.perf_counter()
    with db.connection() as conn:
        target = jobs.job_target(conn, job_id=job_id)
        if target is None:
            raise KeyError(f"no job {job_id}")
        document_id, owner_id, name, content_hash, fmt = (target.document_id, target.owner_id, target.name,
                                                          target.content_hash, target.format)
        claim = jobs.claim(conn, job_id=job_id, lease_s=settings.job_lease_s, max_attempts=settings.job_max_attempts)
        if claim is None:
            raise jobs.JobBusy(f"job {job_id} is already running in another process, or has ended")
        lease = jobs.Lease(db, job_id, claim, settings.job_lease_s).start()
        last_report: list = [0.0, ""]
        stage_started: dict[str, float] = {}
        plan = [STAGES]

        def report(stage: str, fraction: float) -> None:
            lease.check()  # a deleted document stops its job here, within a heartbeat
            if stage == "ocr":
                plan[0] = STAGES_WITH_OCR
            stage_started.setdefault(stage, time.perf_counter())
            low, high = plan[0][stage]
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
            path = stored_file_path(settings, owner_id, content_hash, fmt)
            if not path.exists():
                raise IngestError("the uploaded file is missing from storage; upload it again")
            if prepared is not None and prepared.content_hash == content_hash:
                parsed = prepared.parsed
            else:
                parsed = extract(path, fmt, limits(settings), timeout_s=settings.ingest_timeout_s,
                                 memory_mb=settings.ingest_memory_mb,
                                 progress=lambda stage, done, total: report(stage, done / max(total, 1)))
            report("chunking", 0.0)
            units = {u.page: u for u in parsed.units}
            unit_titles = {u.page: u.title for u in parsed.units if u.title}
            context = extract_context(parsed.rows, unit_titles)
            chunks = chunk_rows(
                parsed.rows,
                embedder.count_tokens,
                title=heading_title(context, name),
                child_tokens=settings.child_tokens,
                overlap_tokens=settings.child_overlap_tokens,
                parent_tokens=settings.parent_tokens,
                unit_titles=unit_titles,
            )
            children = chunks.children
            report("embedding", 0.0)
            vectors = embedder.embed_documents(
                [embedding_text(c.heading, c.text) for c in children],
                progress=lambda done, total: report("embedding", done / total),
            )
            report("storing", 0.0)
            parent_rows = [ParentRow(i, p.page_start, p.page_end, p.text) for i, p in enumerate(chunks.parents)]
            child_rows: list[ChildRow] = []
            for parent_ord, parent in enumerate(chunks.parents):
                for child in parent.children:  # same order as `children`, so rows meet their vectors
                    unit = units[child.page]
                    child_rows.append(ChildRow(parent_ord, len(child_rows), child.page, child.heading, child.text,
                                               unit.label, unit.ocr, [list(b) for b in child.boxes] or None))
            with conn.transaction():
                jobs.hold(conn, job_id=job_id, claim=claim)  # still ours: a redelivered job never writes twice
                embedding_index.assert_model(conn, embedder.identity, embedder.dimension)
                documents.replace_chunks(
                    conn,
                    owner_id=owner_id,
                    document_id=document_id,
                    parents=parent_rows,
                    children=child_rows,
                    embeddings=vectors,
                    model=embedder.identity,
                    pages=[PageRow(u.page, u.label, u.title, u.ocr, u.text) for u in parsed.units],
                )
                documents.set_document_context(conn, document_id=document_id, company=context.company,
                                               form=context.form, period=context.period,
                                               period_end=context.period_end)
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
            if jobs.job_target(conn, job_id=job_id) is None:
                # a delete during ingestion (its file or rows went first): a cancellation, not an error
                log.info("job %s cancelled: its document was deleted", job_id)
                return JobOutcome(document_id, "cancelled", seconds=time.perf_counter() - started)
            known = isinstance(exc, IngestError | embedding_index.ModelMismatch)  # reasons a user can act on
            reason = str(exc) if known else f"internal error: {exc!r}"
            if not known:
                log.exception("job %s failed", job_id)
            else:
                log.warning("job %s failed: %s", job_id, reason)
            jobs.fail_job(conn, job_id=job_id, reason=reason, claim=claim)
            return JobOutcome(document_id, "failed", seconds=time.perf_counter() - started, error=reason)
        finally:
            lease.stop()
            jobs.release(conn, job_id=job_id, claim=claim)
