"""Documents and ingestion jobs: streaming upload (size cap, type by content), list, show, delete,
one page-like unit's text, job status and job progress as Server-Sent Events."""

from __future__ import annotations

import asyncio
import contextvars
import errno
import functools
import json
import logging
import re
import tempfile
import time
import unicodedata
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from python_multipart.multipart import MultipartParser, parse_options_header
from sse_starlette import EventSourceResponse
from starlette.background import BackgroundTask

from api import drain
from api.access import (
    WORKSPACE_READ_REFUSED,
    WorkspaceQuery,
    bound,
    not_yours,
    reading,
    refused,
    target,
    writing,
)
from api.deps import CurrentUser, DbDep, SettingsDep
from api.edge import MULTIPART_OVERHEAD, BodyRefused
from api.heavy import Slots
from api.limits import Rate, too_many
from api.paging import MAX_OFFSET, cut, page_size, space_page_query
from api.schemas import DocumentList, DocumentOut, DocumentPatch, InputErrorOut, JobOut, PageOut, UploadOut, error
from identity.security import User
from ingestion.errors import DiskFull, IngestError, QuotaExceeded, UnsupportedFormat
from ingestion.formats import registry
from ingestion.formats.sniff import ACCEPTED, early_refusal
from ingestion.pipeline import Submission, check_file, submit_document
from jobqueue.worker import QueueUnavailable
from settings import Settings
from storage import documents, jobs, quota, workspaces
from storage.db import Database
from storage.document_filter import owner_values
from storage.quota import Quota

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks  # declared for type checkers only

T = TypeVar("T")
log = logging.getLogger(__name__)
router = APIRouter(tags=["documents"])

SNIFF_BYTES = 1024  # the first kilobyte tells a binary nobody accepts from a candidate (checked in full later)


class _TooLarge(Exception):
    pass


class _NotAccepted(Exception):
    """The first bytes already show a format that is refused (the message says which)."""


class _OverQuota(Exception):
    """The file has outgrown what the uploader's storage quota has left (the message says so)."""


Fits = Callable[[int], str | None]  # why a file of so many bytes does not fit the quota (None: it fits)


def clean_filename(raw: str | None) -> str:
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in unicodedata.normalize("NFC", name) if unicodedata.category(ch)[0] != "C")
    name = re.sub(r"\s+", " ", name).strip()[:200]
    return name or "document"


class _FilePart:
    """Multipart callbacks that keep the `file` field, checking type and size as bytes arrive. The
    bytes go to a temporary file as they come, and are read back at the end in one call that lets go
    of the interpreter lock while the kernel copies them: turning a 50 MB buffer into `bytes` took a
    tenth of a second holding it, every other request's time (docs/protection.md#bounded-work)."""

    def __init__(self, cap: int, fits: Fits = lambda size: None) -> None:
        self.cap = cap
        self.fits = fits
        self.size = 0
        self.head = bytearray()  # the first SNIFF_BYTES, for the early refusal
        self.spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed by read_upload, however it ends
        self.filename: str | None = None
        self.found = False
        self._field = b""
        self._value = b""
        self._headers: dict[bytes, bytes] = {}
        self._in_file = False
        self._sniffed = False

    def callbacks(self) -> MultipartCallbacks:
        return {"on_part_begin": self._begin, "on_header_field": self._hfield, "on_header_value": self._hvalue,
                "on_header_end": self._hend, "on_headers_finished": self._hdone, "on_part_data": self._pdata,
                "on_part_end": self._pend}

    def _begin(self) -> None:
        self._headers, self._in_file = {}, False

    def _hfield(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _hvalue(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _hend(self) -> None:
        self._headers[self._field.lower()] = self._value
        self._field, self._value = b"", b""

    def _hdone(self) -> None:
        _disp, params = parse_options_header(self._headers.get(b"content-disposition", b""))
        if params.get(b"name") == b"file" and not self.found:
            self._in_file, self.found = True, True
            raw = params.get(b"filename")
            self.filename = raw.decode("utf-8", "replace") if raw else None

    def _pdata(self, data: bytes, start: int, end: int) -> None:
        if not self._in_file:
            return
        self.size += end - start
        if self.size > self.cap:
            raise _TooLarge
        if (refusal := self.fits(self.size)) is not None:
            raise _OverQuota(refusal)
        if len(self.head) < SNIFF_BYTES:
            self.head += data[start:min(end, start + SNIFF_BYTES - len(self.head))]
        try:
            self.spool.write(memoryview(data)[start:end])
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFull("the server's disk is full: nothing was kept, please upload again later") from exc
            raise
        if not self._sniffed and len(self.head) >= SNIFF_BYTES:
            self._sniff()

    def _pend(self) -> None:
        if self._in_file and not self._sniffed and self.size:
            self._sniff()
        self._in_file = False

    def read(self) -> bytes:
        self.spool.seek(0)
        return self.spool.read()

    def _sniff(self) -> None:
        self._sniffed = True
        refusal = early_refusal(bytes(self.head))
        if refusal is not None:
            raise _NotAccepted(str(refusal))


def _document_out(doc: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(doc["id"]), "name": doc["name"], "format": doc["format"], "status": doc["status"],
            "pages": doc["pages"], "ocr_pages": doc["ocr_pages"],
            "chunks": doc["children"], "parents": doc["parents"], "size_bytes": doc["size_bytes"],
            "error": doc["error"], "created_at": doc["created_at"].isoformat(),
            "updated_at": doc["updated_at"].isoformat(),
            # what the document says it is (ingestion/context.py); null where it does not say
            "company": doc["company"], "form": doc["form"], "period": doc["period"],
            "period_end": doc["period_end"].isoformat() if doc["period_end"] else None,
            "issuer": "set" if doc["context_set_by_owner"] else "read" if doc["company"] else "unknown",
            "former_names": list(doc["former_names"] or []), "file_number": doc["file_number"],
            "tickers": list(doc["tickers"] or []),
            "workspace_id": doc["owner_id"] if doc["workspace"] is not None else None,
            "workspace": doc["workspace"], "uploaded_by": doc["uploaded_by"]}


def _job_out(job: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(job["id"]), "document_id": str(job["document_id"]), "status": job["status"],
            "stage": job["stage"], "percent": job["percent"], "error": job["error"], "attempts": job["attempts"],
            "created_at": job["created_at"].isoformat(), "updated_at": job["updated_at"].isoformat()}


UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file"],
    "properties": {"file": {"type": "string", "format": "binary", "description": ACCEPTED}}}}}}}


class _StorageDown(Exception):
    """The file store or the broker refused the upload (the message says which)."""


def disk_full(exc: DiskFull) -> HTTPException:
    return HTTPException(507, str(exc), headers={"Retry-After": "60"})


def _too_large(settings: Settings) -> HTTPException:
    return HTTPException(413, f"the file is larger than {settings.bodies.upload_max_mb:g} MB")


def _multipart_boundary(request: Request, cap: int, settings: Settings) -> bytes:
    """The body's boundary, after the headers say it is a multipart form no larger than the cap allows."""
    ctype, params = parse_options_header(request.headers.get("content-type"))
    if ctype != b"multipart/form-data":
        raise HTTPException(415, "send multipart/form-data with the document in the field `file`")
    boundary = params.get(b"boundary")
    if not boundary:
        raise HTTPException(400, "multipart body without a boundary")
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > cap + MULTIPART_OVERHEAD:
        raise _too_large(settings)
    return boundary


async def read_upload(request: Request, settings: Settings, fits: Fits = lambda size: None) -> tuple[str, bytes]:
    """(cleaned file name, bytes) of the form's `file` field, read as it streams in: refused as soon
    as it outgrows UPLOAD_MAX_MB or what the uploader's quota has left (`fits`), or its first
    kilobyte shows a format nobody accepts."""
    cap = int(settings.bodies.upload_max_mb * 1024 * 1024)
    boundary = _multipart_boundary(request, cap, settings)
    part = _FilePart(cap, fits)
    try:
        return await _read_part(request, settings, part, boundary, cap)
    finally:
        part.spool.close()


async def _read_part(request: Request, settings: Settings, part: _FilePart, boundary: bytes,
                     cap: int) -> tuple[str, bytes]:
    received = 0
    try:
        parser = MultipartParser(boundary, part.callbacks())
        async for chunk in request.stream():
            received += len(chunk)
            request.state.upload_bytes = received
            if received > cap + MULTIPART_OVERHEAD:
                raise _TooLarge
            parser.write(chunk)
        parser.finalize()
    except _TooLarge:
        raise _too_large(settings) from None
    except _NotAccepted as exc:
        raise HTTPException(415, str(exc)) from None
    except _OverQuota as exc:
        raise HTTPException(413, str(exc)) from None
    except DiskFull as exc:
        raise disk_full(exc) from None
    except BodyRefused:  # the edge's own refusal (api/edge.py): its status, not a malformed body
        raise
    except Exception as exc:  # python-multipart raises on malformed bodies
        raise HTTPException(400, f"malformed multipart body: {type(exc).__name__}") from None
    if not part.found:
        raise HTTPException(422, "no field named `file` in the form")
    if not part.size:
        raise HTTPException(422, "the file is empty")
    # read back off the event loop (UPLOAD_MAX_MB at most)
    return clean_filename(part.filename), await upload_work(request, part.read)


async def upload_work(request: Request, fn: Callable[..., T], *args: object) -> T:
    """fn(*args) on the uploads' own threads (server.py: UPLOADS_AT_ONCE of them, as many as uploads
    being received), not asyncio's default pool: that pool verifies every request's token, and six
    uploads copying, checking and storing their 50 MB held all its threads on 2 cores, so every
    other request waited seconds for its sign-in (evals/results/burst.md)."""
    loop = asyncio.get_running_loop()
    # with the request's context (its trace, as asyncio.to_thread would): the job it publishes is one trace
    return await loop.run_in_executor(request.app.state.upload_work,
                                      functools.partial(contextvars.copy_context().run, fn, *args))


async def check_upload(request: Request, settings: Settings, name: str, data: bytes) -> str:
    """The upload's format; 415 for a format told by content that nobody accepts, 422 for a file that
    cannot be parsed (encrypted, damaged, a zip bomb), before anything is kept."""

    def precheck() -> str:
        fmt = check_file(settings, name, data)
        opened = registry.get(fmt).precheck
        if opened is not None:
            opened(data)
        return fmt

    try:
        return await upload_work(request, precheck)
    except UnsupportedFormat as exc:
        raise HTTPException(415, str(exc)) from None
    except IngestError as exc:
        raise HTTPException(422, str(exc)) from None


def _undo(db: Database, files: Any, owner_id: int, sub: Submission) -> None:  # ingestion/files.py's store
    """Take back what this upload kept: the new document (and its files), or the redo's new job."""
    with db.connection() as conn:
        if sub.created:
            documents.delete_document(conn, owner_id=owner_id, document_id=str(sub.document_id))
        else:
            if sub.job_id is not None:  # a redo queued a new job
                jobs.delete_job(conn, job_id=sub.job_id)
            documents.set_document_status(conn, document_id=sub.document_id, status="failed",
                                          error="could not be queued; upload it again")
    if sub.created:
        try:
            files.delete(owner_id, sub.content_hash, sub.format)
        except Exception:  # the rows are gone; a stale file is logged, not fatal
            log.warning("upload user_id=%s: stored file could not be removed", owner_id)
            files.path(owner_id, sub.content_hash, sub.format).unlink(missing_ok=True)


def store_upload(db: Database, settings: Settings, files: Any, *, owner_id: int, name: str,
                 data: bytes, fmt: str | None = None,
                 uploaded_by: int | None = None) -> tuple[Submission, uuid.UUID | None]:
    """The document row (deduplicated by content within its owner: a ready twin is reused) and its
    durable copy; (the submission, the job a client follows). A reuse gets a finished job of its own,
    so clients follow one flow for every upload. `owner_id` a workspace: `uploaded_by` the member."""
    sub = submit_document(db, settings, owner_id=owner_id, name=name, data=data, fmt=fmt, uploaded_by=uploaded_by)
    if sub.reused:
        with db.connection() as conn:
            job_id = jobs.create_job(conn, document_id=sub.document_id, owner_id=owner_id)
            jobs.finish_job(conn, job_id=job_id)
        return sub, job_id
    if sub.created:  # a document seen before already has its durable copy
        try:
            files.saved(owner_id, sub.content_hash, sub.format)
        except Exception as exc:  # the durable copy failed: undo the upload rather than keep half of it
            log.warning("upload user_id=%s: file storage (%s) failed, upload undone: %s", owner_id, files.kind,
                        type(exc).__name__)
            _undo(db, files, owner_id, sub)
            raise _StorageDown("file storage is unavailable") from exc
    return sub, sub.job_id


def enqueue_upload(db: Database, files: Any, queue: Any, *, owner_id: int, sub: Submission) -> None:
    """Hand a newly queued job to the queue (the server's threads or a Celery broker); a broker that
    refuses it takes the upload back."""
    if not sub.queued:
        return
    try:
        queue.submit(sub.job_id)
    except QueueUnavailable as exc:
        _undo(db, files, owner_id, sub)
        raise _StorageDown("the job queue (broker) is unavailable") from exc


def _upload_out(sub: Submission, job_id: uuid.UUID | None) -> dict[str, Any]:
    return {"document_id": str(sub.document_id), "job_id": str(job_id), "reused": sub.reused}


@router.post("/api/documents", status_code=202, openapi_extra=UPLOAD_BODY, response_model=UploadOut,
             # text/plain 400: the HTTP server's own refusal of a malformed request, before any route
             responses={400: {**error("a malformed multipart body"), "content": {"text/plain": {}}},
                        413: error("larger than UPLOAD_MAX_MB, or past the uploader's storage quota "
                                   "(STORAGE_MB_PER_USER, DOCUMENTS_PER_USER)"),
                        415: error(f"none of: {ACCEPTED} (told by content, not by name)"),
                        403: error("a viewer of the workspace (uploading needs editor or above)"),
                        404: error("no such workspace (or not yours to see)"),
                        422: error("empty, truncated, encrypted, damaged or over-large (zip bomb) file, or an "
                                   "invalid workspace_id", InputErrorOut),
                        429: error("UPLOADS_PER_USER of your uploads are being received, or UPLOAD_MB_PER_MINUTE "
                                   "were sent this minute; see Retry-After"),
                        503: error("file storage (Supabase) or the job broker failed, or UPLOADS_AT_ONCE "
                                   "uploads are being received; nothing was kept"),
                        507: error("the server's disk is full; nothing was kept, see Retry-After")})
async def upload_document(request: Request, user: CurrentUser, db: DbDep, settings: SettingsDep,
                          workspace_id: WorkspaceQuery = None) -> dict[str, Any]:
    """Upload a document (multipart field `file`): PDF, Word, PowerPoint, Excel, HTML, Markdown or
    text, told by its content. Ingestion runs in the background. With `workspace_id`, into that
    workspace (editor or above: 403 for a viewer, 404 for a non-member); else your own space.

    Answers `{document_id, job_id, reused}`: follow `/api/jobs/{job_id}/events`. An identical file
    already ingested is reused (its job is already done).
    """
    # what one account's bodies cost to read per minute (UPLOAD_MB_PER_MINUTE), by their length when
    # the request says it, else by what was read (counted afterwards)
    with db.connection() as conn:  # refused before a byte is read; checked again when the row is made
        owner_id = target(conn, user, workspace_id)
        used = quota.usage(conn, user.id)  # what this user's uploads keep (STORAGE_MB_PER_USER)
    length = request.headers.get("content-length") or ""
    room = Quota.of(settings.storage_mb_per_user, settings.documents_per_user)
    # by the length when it is said (the file is at least the body less the form's overhead), else
    # as the body streams; counted again under a lock when the row is made (ingestion/pipeline.py)
    if refusal := room.refusal(used, max(int(length) - MULTIPART_OVERHEAD, 0) if length.isdigit() else 0):
        raise HTTPException(413, refusal)
    rate: Rate = request.app.state.upload_rate
    said = int(length) / 1048576 if length.isdigit() else 0.0
    if wait := rate.take(f"user:{user.id}", said):
        raise too_many(f"at most {rate.limit:g} MB of uploads a minute per account; try again later", wait)
    # bodies held in memory at once: each user's, then everyone's (UPLOADS_PER_USER, UPLOADS_AT_ONCE)
    mine = request.app.state.uploads.take(user.id)
    try:
        everyone = request.app.state.uploads_at_once.take()
    except HTTPException:
        mine()
        raise
    try:
        return await _upload(request, user, db, settings, owner_id, lambda size: room.refusal(used, size))
    finally:
        everyone()
        mine()
        if not said:  # a chunked body: what it was is known now
            rate.add(f"user:{user.id}", request.state.upload_bytes / 1048576
                     if hasattr(request.state, "upload_bytes") else 0.0)


async def _upload(request: Request, user: CurrentUser, db: DbDep, settings: SettingsDep,
                  owner_id: int, fits: Fits) -> dict[str, Any]:
    name, data = await read_upload(request, settings, fits)
    fmt = await check_upload(request, settings, name, data)  # checked once: it is stored as this format
    files = request.app.state.files
    queue = request.app.state.jobs  # jobqueue.dispatch: the server's threads, or a Celery broker

    def submit() -> dict[str, Any]:
        sub, job_id = store_upload(db, settings, files, owner_id=owner_id, name=name, data=data, fmt=fmt,
                                   uploaded_by=user.id)
        enqueue_upload(db, files, queue, owner_id=owner_id, sub=sub)
        return _upload_out(sub, job_id)

    try:
        out = await upload_work(request, submit)
    except QuotaExceeded as exc:
        raise HTTPException(413, str(exc)) from None
    except DiskFull as exc:
        raise disk_full(exc) from None
    except IngestError as exc:
        raise HTTPException(422, str(exc)) from None
    except workspaces.WorkspaceError as exc:  # removed, or made a viewer, while the body arrived
        raise refused(exc) from None
    except _StorageDown as exc:
        raise HTTPException(503, f"{exc}; nothing was kept, please upload again later",
                            headers={"Retry-After": "30"}) from None
    log.info("upload user_id=%s document=%s reused=%s bytes=%d", user.id, out["document_id"], out["reused"],
             len(data))
    return out


@router.get("/api/documents", response_model=DocumentList, responses=WORKSPACE_READ_REFUSED,
            dependencies=[Depends(space_page_query)])
def list_documents(user: CurrentUser, db: DbDep, settings: SettingsDep,
                   limit: int | None = Query(None, ge=1, description="documents in this page; at most (and by "
                                                                     "default) DOCUMENT_PAGE_MAX"),
                   offset: int = Query(0, ge=0, le=MAX_OFFSET, description="documents to skip, the oldest first"),
                   workspace_id: WorkspaceQuery = None) -> dict[str, Any]:
    """A page of the documents you may read (yours and your workspaces', or one workspace's), the
    oldest first; `next_offset` asks for the next (null: no more)."""
    with db.connection() as conn:
        found, next_offset = document_page(conn, user, workspace_id, limit=limit, offset=offset,
                                           cap=settings.paging.document_page_max)
    return {"documents": [_document_out(d) for d in found], "next_offset": next_offset}


def document_page(conn: psycopg.Connection, user: User, workspace_id: int | None, *, limit: int | None, offset: int,
                  cap: int) -> tuple[list[dict[str, Any]], int | None]:
    """A page of the documents the caller reads and the next page's offset (api/paging.py), in one
    round trip: membership, tenancy and the page (storage/documents.py readable_documents, issue 41).
    A workspace they are not a member of answers 404, as reading() does."""
    space = bound(user, workspace_id)
    size = page_size(limit, cap)
    owners, rows = documents.readable_documents(conn, user_id=user.id, workspace_id=space, limit=size + 1,
                                                offset=offset)
    if space is not None and not owners:
        raise refused(workspaces.NoSuchWorkspace("no such workspace"))
    return cut(rows, size, offset)


@router.get("/api/documents/{document_id}", response_model=DocumentOut, responses={404: error("no such document")})
def get_document(document_id: str, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        doc = documents.get_document(conn, owner_id=reading(conn, user), document_id=document_id)
    if doc is None:
        raise HTTPException(404, "no such document")
    return _document_out(doc)


@router.patch("/api/documents/{document_id}", response_model=DocumentOut,
              responses={404: error("no such document"), 422: error("a value that is not a company, form or period")})
def patch_document(document_id: str, body: DocumentPatch, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """Say what the document is where it did not (its company "unknown") or was read wrong; kept when
    its context is read again. Only the owner's own document: another's answers 404 like a missing one."""
    try:
        values = owner_values(body.company, body.form, body.period)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    with db.connection() as conn, conn.transaction():
        if not documents.set_owner_context(conn, owner_id=writing(conn, user), document_id=document_id, **values):
            seen = documents.get_document(conn, owner_id=reading(conn, user), document_id=document_id)
            raise not_yours(seen is not None, "document")
        doc = documents.get_document(conn, owner_id=reading(conn, user), document_id=document_id)
    assert doc is not None
    return _document_out(doc)


@router.delete("/api/documents/{document_id}", status_code=204, responses={404: error("no such document")})
def delete_document(document_id: str, user: CurrentUser, db: DbDep, request: Request) -> Response:
    """Delete the document, its chunks, jobs and stored file (cached answers over it go too). A
    workspace's document: editors and above (a viewer gets 403)."""
    with db.connection() as conn:
        owners = writing(conn, user)
        doc = documents.get_document(conn, owner_id=owners, document_id=document_id)
        if doc is None or not documents.delete_document(conn, owner_id=owners, document_id=document_id,
                                                                       actor_id=user.id):
            seen = documents.get_document(conn, owner_id=reading(conn, user), document_id=document_id)
            raise not_yours(seen is not None, "document")
    try:
        request.app.state.files.delete(doc["owner_id"], doc["content_hash"], doc["format"])
    except Exception:  # the rows are gone; a stale file is logged, not fatal
        log.warning("document %s: stored file could not be deleted", document_id)
    return Response(status_code=204)


# `{page:int}`: digits only, so `/pages/3.png` (api/routes/pages.py, the page image) is not taken for a unit.
@router.get("/api/documents/{document_id}/pages/{page:int}", response_model=PageOut,
            responses={404: error("no such document or page")})
def get_page(document_id: str, page: int, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    """One page-like unit of a ready document: its label (what a citation names), title, whether its
    text was recognised by OCR, and its text. A citation's `page` is this number; a PDF page can
    also be shown as an image of the stored file, a slide, sheet block or section only as this text."""
    with db.connection() as conn:
        unit = documents.get_page(conn, owner_id=reading(conn, user), document_id=document_id, page=page)
    if unit is None:
        raise HTTPException(404, "no such document or page")
    return {"document_id": document_id, **unit}


@router.get("/api/jobs/{job_id}", response_model=JobOut, responses={404: error("no such job")})
def get_job(job_id: str, user: CurrentUser, db: DbDep) -> dict[str, Any]:
    with db.connection() as conn:
        job = jobs.get_job(conn, owner_id=reading(conn, user), job_id=job_id)
    if job is None:
        raise HTTPException(404, "no such job")
    return _job_out(job)


def sse(event: str, data: dict[str, Any]) -> dict[str, str]:
    return {"event": event, "data": json.dumps(data, default=str)}


@router.get("/api/jobs/{job_id}/events", response_class=EventSourceResponse, responses={
    200: {"description": "text/event-stream: `progress` {stage, percent} ..., then `done` {job_id, document_id, "
                         "pages, chunks} or `failed` {error} (with job_id and document_id while the job exists), "
                         "or `idle` {job_id, status, stage, percent} after JOB_STREAM_IDLE_S without progress",
          "content": {"text/event-stream": {}}},
    404: error("no such job"), 429: error("this user's open progress streams (JOB_STREAMS_PER_USER)")})
async def job_events(job_id: str, request: Request, user: CurrentUser, db: DbDep,
                     settings: SettingsDep) -> EventSourceResponse:
    """Progress of an ingestion job as Server-Sent Events, until it is done or failed. One user may
    hold JOB_STREAMS_PER_USER open at once (each polls the database): past it 429. A stream with no
    progress to send for JOB_STREAM_IDLE_S ends with an `idle` event (the job's state as it stands):
    a queued job or a forgotten tab no longer holds a slot and a poll twice a second for good."""

    def read() -> dict[str, Any] | None:
        with db.connection() as conn:
            owners = reading(conn, user)  # each poll: a member removed meanwhile sees it end
            job = jobs.get_job(conn, owner_id=owners, job_id=job_id)
            if job is not None and job["status"] == "done":
                doc = documents.get_document(conn, owner_id=owners, document_id=job["document_id"])
                job["document"] = _document_out(doc) if doc else None
            return job

    first = await asyncio.to_thread(read)
    if first is None:
        raise HTTPException(404, "no such job")
    streams: Slots = request.app.state.job_streams
    give_back = streams.take(user.id)

    async def events() -> AsyncIterator[dict[str, str]]:
        try:
            async for event in progress():
                yield event
        finally:
            give_back()

    async def progress() -> AsyncIterator[dict[str, str]]:
        job: dict[str, Any] | None = first
        last: tuple[str, float] | None = None
        started = sent = time.monotonic()
        idle_s = settings.job_stream_idle_s
        while True:
            if job is None:
                yield sse("failed", {"error": "the job no longer exists (its document was deleted)"})
                return
            if job["status"] in ("queued", "processing"):
                now = (job["stage"], float(job["percent"]))
                if now != last:
                    yield sse("progress", {"stage": now[0], "percent": now[1]})
                    last, sent = now, time.monotonic()
                elif time.monotonic() - sent >= idle_s:
                    yield sse("idle", {"job_id": str(job["id"]), "status": job["status"], "stage": now[0],
                                       "percent": now[1], "idle_s": idle_s,
                                       "detail": "no progress for JOB_STREAM_IDLE_S: reopen the stream "
                                                 "or read GET /api/jobs/{id}"})
                    return
            elif job["status"] == "done":
                if last is None or last[1] < 100:
                    yield sse("progress", {"stage": "done", "percent": 100.0})
                doc = job.get("document") or {}
                yield sse("done", {"job_id": str(job["id"]), "document_id": str(job["document_id"]),
                                   "pages": doc.get("pages"), "chunks": doc.get("chunks")})
                return
            else:
                yield sse("failed", {"job_id": str(job["id"]), "document_id": str(job["document_id"]),
                                     "error": job["error"] or "ingestion failed"})
                return
            if await request.is_disconnected() or drain.STATE.draining:  # draining: follow it on another server
                return
            # poll fast at first (small files finish in a second or two), then ease off
            await asyncio.sleep(0.2 if time.monotonic() - started < 10 else 0.5)
            job = await asyncio.to_thread(read)

    # the background task gives the slot back too: a stream the client left before it started
    return EventSourceResponse(events(), ping=15, background=BackgroundTask(give_back))
