"""Submit a document and run its ingestion job: parse (and OCR) → chunk → embed → store (one transaction).

`submit_document` tells the format from the bytes, stores the file, dedupes by content hash per
owner and queues a job; `run_job` does the work as steps (claim, parse, chunk, embed, store), a
ProgressReport between them writing stage and percent to `document_jobs` (and to a callback).
Parsing runs in a child process with a memory cap and a deadline (ingestion/sandbox.py). Both the
CLI and the server use these two functions.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np
import psycopg

from ingestion.chunk import Chunks, chunk_rows
from ingestion.context import DocumentContext, extract_context
from ingestion.errors import DiskFull, IngestError, QuotaExceeded
from ingestion.formats import Limits, registry, sniff
from ingestion.parse import OcrOptions
from ingestion.prefetch import Prefetcher, Prepared
from ingestion.sandbox import extract
from ingestion.tables import table_cells
from ingestion.units import Parsed
from providers.protocols import DocumentEmbedder
from settings import Settings
from storage import documents, embedding_index, jobs, quota, tables, tenancy, workspaces
from storage.db import Database
from storage.documents import ChildRow, PageRow, ParentRow
from storage.quota import Quota

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]
WRITE_BYTES = 1024 * 1024  # the stored file is written a megabyte at a time

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
    s = settings.ingestion
    return Limits(OcrOptions(s.ocr, s.ocr_dpi, s.ocr_max_pages, s.ocr_max_seconds),
                  s.office_max_unpacked_mb, s.sheet_max_rows, s.row_max_chars, s.document_max_chars)


def check_file(settings: Settings, name: str, data: bytes) -> str:
    """The file's format, after the checks that need no parsing; IngestError (UnsupportedFormat for
    what is not accepted) with the reason otherwise."""
    fmt = sniff(data, name, max_unpacked_mb=settings.ingestion.office_max_unpacked_mb)
    check = registry.get(fmt).check
    if check is not None:
        check(data)
    return fmt


def make_prefetcher(settings: Settings) -> Prefetcher:
    """Parses a file ahead exactly as run_job would (same format check, limits and sandbox)."""

    def prepare(path: Path) -> Prepared:
        data = path.read_bytes()
        fmt = check_file(settings, path.name, data)
        parsed = extract(path, fmt, limits(settings), timeout_s=settings.ingestion.timeout_s,
                         memory_mb=settings.ingestion.memory_mb)
        return Prepared(hashlib.sha256(data).hexdigest(), parsed)

    return Prefetcher(prepare)


def submit_document(db: Database, settings: Settings, *, owner_id: int, name: str, data: bytes,
                    fmt: str | None = None, uploaded_by: int | None = None) -> Submission:
    """Validate, store the raw file, and queue a job. A duplicate that is ready is reused. `fmt`: what
    check_file already said of this data (an upload's check, before it is stored), else checked here.
    `owner_id` a workspace: `uploaded_by` is the member, an editor or above when the row is made
    (storage.workspaces.NotAllowed otherwise). A new document must fit the uploader's quota
    (QuotaExceeded, nothing written); a full disk is DiskFull, with nothing left behind."""
    fmt = fmt if fmt is not None else check_file(settings, name, data)
    content_hash = hashlib.sha256(data).hexdigest()
    uploader = uploaded_by if uploaded_by is not None else owner_id
    path = stored_file_path(settings, owner_id, content_hash, fmt)
    with db.connection() as conn, conn.transaction():
        # identical uploads in parallel: the first creates the document, the others wait here and find it
        documents.lock_content(conn, owner_id=owner_id, content_hash=content_hash)
        if uploaded_by is not None and uploaded_by != owner_id:
            workspaces.need(conn, uploaded_by, owner_id, workspaces.WRITE)  # in this transaction: no race
        with tenancy.scoped(conn, owner_id):  # the space's rows only (storage/tenancy.py)
            existing = documents.find_by_hash(conn, owner_id=owner_id, content_hash=content_hash)
            if existing and existing["status"] == "ready":
                return Submission(existing["id"], None, True, content_hash, format=fmt)
            if existing and existing["status"] in ("queued", "processing"):
                active = jobs.active_job(conn, document_id=existing["id"])
                if active:
                    return Submission(existing["id"], active, False, content_hash, format=fmt)
        created = not existing
        # The quota as the login: it counts what the uploader put in every space, some of which
        # they may no longer read (a workspace they left), so no request's owners would show it all.
        if created:  # counted under the uploader's lock: parallel uploads cannot all slip under it
            quota.lock(conn, uploader)
            refusal = Quota.of(settings.storage_mb_per_user, settings.documents_per_user).refusal(
                quota.usage(conn, uploader), len(data))
            if refusal is not None:
                raise QuotaExceeded(refusal)
        wrote = store_file(path, data)  # before the row commits: a failure here rolls the row back
        try:
            with tenancy.scoped(conn, owner_id):  # the new rows are refused for any other owner
                if existing:  # failed before (or lost its job): redo it
                    document_id = existing["id"]
                    documents.requeue_document(conn, document_id=document_id, name=name)
                else:
                    document_id = documents.create_document(
                        conn, owner_id=owner_id, name=name, content_hash=content_hash, size_bytes=len(data),
                        fmt=fmt, uploaded_by=uploaded_by)
                job_id = jobs.create_job(conn, document_id=document_id, owner_id=owner_id)
        except BaseException:
            if wrote and created:  # no row will name it
                path.unlink(missing_ok=True)
            raise
    return Submission(document_id, job_id, False, content_hash, created, fmt, queued=True)


def write_chunk(out: BinaryIO, data: memoryview) -> None:
    """One write of the stored file (its own function so a test can fill the disk here)."""
    out.write(data)


def store_file(path: Path, data: bytes) -> bool:
    """The raw file under its real name, written whole or not at all (False: it was there already):
    a full disk (ENOSPC, EDQUOT) is DiskFull and its partial `.part` file is removed, as is one any
    other error leaves."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{uuid.uuid4().hex}.part")  # one per writer: uploads may race
    try:
        with tmp.open("wb") as out:
            view = memoryview(data)
            for start in range(0, len(data), WRITE_BYTES):
                write_chunk(out, view[start:start + WRITE_BYTES])
        tmp.replace(path)  # atomic: a crash never leaves a half-written file under the real name
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull("the server's disk is full: nothing was kept, please upload again later") from exc
        raise
    return True


submit_pdf = submit_document  # the name from when only PDFs were accepted


@dataclass(frozen=True)
class ClaimedJob:
    """A job this worker holds: what it works on, its claim token (every write names it) and the
    connection it writes through."""

    conn: psycopg.Connection
    target: jobs.JobTarget
    claim: uuid.UUID

    @property
    def job_id(self) -> uuid.UUID:
        return self.target.job_id


class ProgressReport:
    """A claimed job's stage and percent, written to `document_jobs` (and to the caller's callback).

    Every report first checks the lease, so a deleted document stops its job within a heartbeat,
    and a progress write that finds the job no longer ours stops it too. Percent maps a stage's
    fraction onto the stage's share of the job (STAGES, or STAGES_WITH_OCR once OCR starts)."""

    def __init__(self, job: ClaimedJob, lease: jobs.Lease, callback: Progress | None) -> None:
        self.job, self.lease, self.callback = job, lease, callback
        self.plan = STAGES
        self.stage_started: dict[str, float] = {}  # perf_counter at each stage's first report
        self._written_at, self._written_stage = 0.0, ""

    def __call__(self, stage: str, fraction: float) -> None:
        self.lease.check()
        if stage == "ocr":
            self.plan = STAGES_WITH_OCR
        self.stage_started.setdefault(stage, time.perf_counter())
        low, high = self.plan[stage]
        percent = low + (high - low) * fraction
        self._write(stage, percent, final=fraction >= 1.0)
        if self.callback is not None:
            self.callback(stage, percent)

    def _write(self, stage: str, percent: float, *, final: bool) -> None:
        now = time.monotonic()
        # Throttle writes: a progress row per half second is plenty for any reader.
        if final or now - self._written_at > 0.5 or stage != self._written_stage:
            if not jobs.set_progress(self.job.conn, job_id=self.job.job_id, stage=stage, percent=percent,
                                     claim=self.job.claim):
                raise jobs.JobCancelled("the job was cancelled (its document was deleted) or taken over")
            self._written_at, self._written_stage = now, stage

    def done(self) -> None:
        """The job stored its results (the job row already says done: finish_job wrote it)."""
        if self.callback is not None:
            self.callback("done", 100.0)

    def stage_seconds(self, ended: float) -> dict[str, float]:
        """How long each stage took, from its first report to the next stage's (the last to `ended`)."""
        marks = [*self.stage_started.values(), ended]
        return {s: round(b - a, 3) for s, a, b in zip(self.stage_started, marks, marks[1:], strict=False)}


@dataclass(frozen=True)
class Chunked:
    """The chunk step's result: the chunks and what the document says it is (stored with them)."""

    chunks: Chunks
    context: DocumentContext


def claim_job(conn: psycopg.Connection, settings: Settings, job_id: uuid.UUID) -> ClaimedJob:
    """Claim step: the job's target and a fresh claim; KeyError for no such job, JobBusy when another
    live worker holds it or it has ended (a redelivery of a finished job runs nothing)."""
    target = jobs.job_target(conn, job_id=job_id)
    if target is None:
        raise KeyError(f"no job {job_id}")
    claim = jobs.claim(conn, job_id=job_id, lease_s=settings.jobs.lease_s, max_attempts=settings.jobs.max_attempts)
    if claim is None:
        raise jobs.JobBusy(f"job {job_id} is already running in another process, or has ended")
    return ClaimedJob(conn, target, claim)


def parse_step(settings: Settings, target: jobs.JobTarget, report: ProgressReport,
               prepared: Prepared | None) -> Parsed:
    """Parse step: the stored file's units and rows, from the prefetcher when it parsed these very
    bytes, else in the sandbox (whose OCR progress switches the report to the OCR plan)."""
    report("parsing", 0.0)
    path = stored_file_path(settings, target.owner_id, target.content_hash, target.format)
    if not path.exists():
        raise IngestError("the uploaded file is missing from storage; upload it again")
    if prepared is not None and prepared.content_hash == target.content_hash:
        return prepared.parsed
    return extract(path, target.format, limits(settings), timeout_s=settings.ingestion.timeout_s,
                   memory_mb=settings.ingestion.memory_mb,
                   progress=lambda stage, done, total: report(stage, done / max(total, 1)))


def chunk_step(settings: Settings, embedder: DocumentEmbedder, name: str, parsed: Parsed,
               report: ProgressReport) -> Chunked:
    """Chunk step: what the document says it is, then parent and child chunks headed with it."""
    report("chunking", 0.0)
    unit_titles = {u.page: u.title for u in parsed.units if u.title}
    context = extract_context(parsed.rows, unit_titles)
    chunks = chunk_rows(
        parsed.rows,
        embedder.count_tokens,
        title=heading_title(context, name),
        child_tokens=settings.chunking.child_tokens,
        overlap_tokens=settings.chunking.child_overlap_tokens,
        parent_tokens=settings.chunking.parent_tokens,
        unit_titles=unit_titles,
    )
    if len(chunks.children) > settings.ingestion.document_max_chunks:
        raise IngestError(f"the document makes {len(chunks.children):,} chunks, more than DOCUMENT_MAX_CHUNKS "
                          f"({settings.ingestion.document_max_chunks:,}) allows")
    return Chunked(chunks, context)


def embed_step(embedder: DocumentEmbedder, chunks: Chunks, report: ProgressReport) -> np.ndarray:
    """Embed step: one vector per child chunk, in `chunks.children` order."""
    report("embedding", 0.0)
    return embedder.embed_documents(
        [embedding_text(c.heading, c.text) for c in chunks.children],
        progress=lambda done, total: report("embedding", done / total),
    )


def store_context(conn: psycopg.Connection, document_id: uuid.UUID, context: DocumentContext) -> None:
    """What the document says it is, stored on it (ingestion and `reindex --context` alike)."""
    documents.set_document_context(conn, document_id=document_id, company=context.company, form=context.form,
                                   period=context.period, period_end=context.period_end,
                                   former_names=context.former_names, file_number=context.file_number,
                                   tickers=context.tickers, incorporated=context.incorporated)


def chunk_table_rows(parsed: Parsed, chunks: Chunks) -> tuple[list[ParentRow], list[ChildRow]]:
    """The chunks as the rows storage writes, children with their unit's label and OCR flag."""
    units = {u.page: u for u in parsed.units}
    parent_rows = [ParentRow(i, p.page_start, p.page_end, p.text) for i, p in enumerate(chunks.parents)]
    child_rows: list[ChildRow] = []
    for parent_ord, parent in enumerate(chunks.parents):
        for child in parent.children:  # same order as `chunks.children`, so rows meet their vectors
            unit = units[child.page]
            child_rows.append(ChildRow(parent_ord, len(child_rows), child.page, child.heading, child.text,
                                       unit.label, unit.ocr, [list(b) for b in child.boxes] or None))
    return parent_rows, child_rows


def store_step(job: ClaimedJob, embedder: DocumentEmbedder, parsed: Parsed, chunked: Chunked,
               vectors: np.ndarray, report: ProgressReport) -> tuple[int, int]:
    """Store step: chunks, vectors, pages, table cells and context in one transaction that first checks the claim
    is still ours, so a redelivered job never writes twice; (parents, children) written."""
    report("storing", 0.0)
    target = job.target
    parent_rows, child_rows = chunk_table_rows(parsed, chunked.chunks)
    context = chunked.context
    cells = table_cells(parsed, context, [(c.ord, c.page, c.text) for c in child_rows])
    with job.conn.transaction():
        jobs.hold(job.conn, job_id=job.job_id, claim=job.claim)
        embedding_index.assert_model(job.conn, embedder.identity, embedder.dimension)
        documents.replace_chunks(
            job.conn,
            owner_id=target.owner_id,
            document_id=target.document_id,
            parents=parent_rows,
            children=child_rows,
            embeddings=vectors,
            model=embedder.identity,
            pages=[PageRow(u.page, u.label, u.title, u.ocr, u.text) for u in parsed.units],
        )
        tables.replace_cells(job.conn, owner_id=target.owner_id, document_id=target.document_id, cells=cells)
        store_context(job.conn, target.document_id, context)
        documents.set_document_status(job.conn, document_id=target.document_id, status="ready", pages=parsed.pages)
        jobs.finish_job(job.conn, job_id=job.job_id)
    documents.refresh_term_index(job.conn)
    return len(parent_rows), len(child_rows)


def failed_outcome(job: ClaimedJob, exc: Exception, seconds: float) -> JobOutcome:
    """A step raised: a cancellation when the job is gone (a delete removed its file or rows first),
    else the job fails through jobs.fail_job, with the reason a user can act on where there is one."""
    document_id = job.target.document_id
    if jobs.job_target(job.conn, job_id=job.job_id) is None:
        log.info("job %s cancelled: its document was deleted", job.job_id)
        return JobOutcome(document_id, "cancelled", seconds=seconds)
    known = isinstance(exc, IngestError | embedding_index.ModelMismatch)  # reasons a user can act on
    reason = str(exc) if known else f"internal error: {exc!r}"
    if known:
        log.warning("job %s failed: %s", job.job_id, reason)
    else:
        log.exception("job %s failed", job.job_id)
    jobs.fail_job(job.conn, job_id=job.job_id, reason=reason, claim=job.claim)
    return JobOutcome(document_id, "failed", seconds=seconds, error=reason)


def run_job(
    db: Database,
    settings: Settings,
    embedder: DocumentEmbedder,
    job_id: uuid.UUID,
    progress: Progress | None = None,
    prepared: Prepared | None = None,
) -> JobOutcome:
    """Run one queued job to the end: claim, parse, chunk, embed, store, reporting progress between
    them while a lease keeps the claim alive. `prepared`: this file parsed ahead by a Prefetcher
    (used only if its bytes are the job's)."""
    started = time.perf_counter()
    with db.connection() as conn:
        job = claim_job(conn, settings, job_id)
        lease = jobs.Lease(db, job_id, job.claim, settings.jobs.lease_s).start()
        report = ProgressReport(job, lease, progress)
        document_id = job.target.document_id
        try:
            documents.set_document_status(conn, document_id=document_id, status="processing")
            parsed = parse_step(settings, job.target, report, prepared)
            chunked = chunk_step(settings, embedder, job.target.name, parsed, report)
            vectors = embed_step(embedder, chunked.chunks, report)
            parents, children = store_step(job, embedder, parsed, chunked, vectors, report)
            report.done()
            ended = time.perf_counter()
            return JobOutcome(document_id, "ready", parsed.pages, parents, children, ended - started,
                              stage_seconds=report.stage_seconds(ended))
        except jobs.JobCancelled as exc:
            log.info("job %s stopped: %s", job_id, exc)
            return JobOutcome(document_id, "cancelled", seconds=time.perf_counter() - started, error=str(exc))
        except Exception as exc:
            return failed_outcome(job, exc, time.perf_counter() - started)
        finally:
            lease.stop()
            jobs.release(conn, job_id=job_id, claim=job.claim)
