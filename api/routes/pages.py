"""A PDF's page as a PNG (the passage a citation quotes highlighted) and any document's original file.

Owner-scoped like every route: a stranger's document id answers 404, exactly like a missing one.
The image is rendered by PyMuPDF on demand and cached twice: the browser keeps it
(`Cache-Control: private` + an ETag for revalidation) and the server keeps the last renders in
memory, so a citation clicked again costs nothing (timings: evals/results/page_latency.md).

An OCR'd page is an image with no words to find the passage in: there the line boxes its
recognised chunks stored at ingestion (child_chunks.boxes) mark the lines of the chunks the passage quotes.

Behind nginx (ACCEL_REDIRECT_PREFIX, deploy/nginx/) neither route sends bytes: once ownership is
checked, the answer is an empty response whose `X-Accel-Redirect` names the file under nginx's internal
location, and nginx streams it from the file store; a page image is rendered once into the store
(ingestion/files.py render_path) for that. With Supabase Storage the file download is a redirect to a
short-lived signed URL instead.

Bounded work (docs/protection.md#bounded-work): an image holds at most PAGE_RENDER_MAX_PIXELS (a
very tall or wide page is drawn narrower than asked, never larger), aligning the passage with the
page costs at most HIGHLIGHT_MAX_COMPARISONS word comparisons (a longer passage is cut until it
fits), and renders (api/drawing.py) run in a bounded pool of processes of their own (api/heavy.py),
never on the threads or the interpreter that authenticate every other request.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse, RedirectResponse

from api.access import reading
from api.deps import CurrentUser, DbDep
from api.drawing import Unrenderable, render_page
from api.heavy import NoWorkProcess, Pool, WorkLost
from api.schemas import InputErrorOut, error
from identity.security import User
from ingestion.formats import registry
from settings import Settings
from storage import documents

router = APIRouter(prefix="/api/documents", tags=["documents"])

RENDER_VERSION = "3"  # part of the ETag: bump when the drawing changes


class _Kept:
    """The last renders, by ETag (which names the file's content hash, page, passage and width),
    at most `max_bytes` of images together (the oldest go first)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[bytes, int, str]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[bytes, int, str] | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: str, value: tuple[bytes, int, str]) -> None:
        if len(value[0]) > self.max_bytes:
            return
        with self._lock:
            if key in self._items:
                self._bytes -= len(self._items.pop(key)[0])
            self._items[key] = value
            self._bytes += len(value[0])
            while self._bytes > self.max_bytes:
                self._bytes -= len(self._items.popitem(last=False)[1][0])


class Renders:
    """A server process's page rendering: its bounded pool (api/heavy.py), the bounds of one render,
    and the last images kept in memory. server.py makes one at start-up (app.state.renders)."""

    def __init__(self, settings: Settings) -> None:
        self.pool = Pool(workers=settings.renders.workers, queue=settings.renders.queue,
                         per_user=settings.renders.per_user, timeout_s=settings.renders.timeout_s,
                         what="page renders", nice=settings.background_nice, preload=("api.drawing",))
        self.max_pixels = settings.renders.max_pixels
        self.budget = settings.renders.highlight_max_comparisons
        self.kept = _Kept(settings.renders.cache_mb * 1024 * 1024)

    def close(self) -> None:
        self.pool.close()


def _owned(db: Any, user: User, document_id: str) -> dict[str, Any]:
    """The document when the user may read it now (theirs, or a workspace's they are in); else 404."""
    with db.connection() as conn:
        doc = documents.get_document(conn, owner_id=reading(conn, user), document_id=document_id)
    if doc is None:
        raise HTTPException(404, "no such document")
    return doc


def _recognised(db: Any, owner_id: int, document_id: str, page: int) -> list[tuple[str, list[list[float]]]]:
    """`owner_id`: the document's own owner (_owned found it readable a moment before)."""
    with db.connection() as conn:
        return documents.recognised_chunks(conn, owner_id=owner_id, document_id=document_id, page=page)


def _format(doc: dict[str, Any]) -> str:
    return doc.get("format") or "pdf"


def _local_file(request: Request, owner_id: int, doc: dict[str, Any]) -> Path:
    files = request.app.state.files
    fmt = _format(doc)
    try:
        files.ensure_local(owner_id, doc["content_hash"], fmt)  # Supabase: fetch the durable copy back
    except Exception:  # the store is down: say so, do not 500
        raise HTTPException(503, "the stored file is unavailable right now; try again later",
                            headers={"Retry-After": "30"}) from None
    path: Path = files.path(owner_id, doc["content_hash"], fmt)
    if not path.exists():
        raise HTTPException(404, "the original file of this document is no longer stored")
    return path


@router.get("/{document_id}/pages/{page}.png", response_class=Response, responses={
    200: {"content": {"image/png": {}}, "description": "the page; X-Highlighted-Lines says how many lines of "
                                                        "the passage were found and marked, X-Highlight-Box where "
                                                        "(top,left,bottom,right as fractions of the page)"},
    304: {"description": "not modified (If-None-Match)"},
    404: error("no such document or page"), 422: error("bad parameters, or a page that cannot be drawn", InputErrorOut),
    429: error("this user's page renders at once (PAGE_RENDERS_PER_USER); see Retry-After"),
    503: error("file storage unavailable, the render pool full, or a render past PAGE_RENDER_TIMEOUT_S")})
async def page_image(document_id: str, page: int, request: Request, user: CurrentUser, db: DbDep,
                     highlight: str = Query("", max_length=4000, description="passage to mark (a citation's text)"),
                     width: int = Query(1000, ge=200, le=2000, description="image width in pixels")) -> Response:
    """A page of the document as a PNG, with `highlight` marked where it appears on the page."""
    doc = await asyncio.to_thread(_owned, db, user, document_id)
    known = registry.find(_format(doc))
    if known is None or not known.page_images:  # slides, sheets, web pages, text: the quote is the source
        raise HTTPException(404, f"a {_format(doc)} document has no page images; "
                                 f"GET /api/documents/{document_id}/pages/{page} gives the unit's text")
    passage = highlight.strip()
    renders: Renders = request.app.state.renders
    drawing = f"{RENDER_VERSION}\x00{renders.max_pixels}\x00{renders.budget}"  # the bounds change the image
    etag = '"' + hashlib.sha256("\x00".join([drawing, doc["content_hash"], str(page), passage,
                                             str(width)]).encode()).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "private, max-age=86400"}
    if etag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)

    async def render() -> tuple[bytes, int, str]:
        path = await asyncio.to_thread(_local_file, request, doc["owner_id"], doc)
        ocr = bool(passage and doc.get("ocr_pages"))  # only a document with OCR'd pages has line boxes to use
        recognised = await asyncio.to_thread(_recognised, db, doc["owner_id"], document_id, page) if ocr else []
        try:  # on the renders' own pool: 429 past the user's share, 503 when full or too slow
            return await renders.pool.run(request, user.id, functools.partial(
                render_page, max_pixels=renders.max_pixels, budget=renders.budget),
                path, page, passage, width, recognised)
        except KeyError:
            raise HTTPException(404, f"the document has no page {page}") from None
        except Unrenderable as exc:
            raise HTTPException(422, f"page {page} cannot be drawn: {exc}") from None
        except WorkLost:  # the drawing crashed its process (nothing else ends one without answering first)
            raise HTTPException(422, f"page {page} cannot be drawn: the renderer stopped on it") from None
        except NoWorkProcess:
            raise HTTPException(503, "page rendering is unavailable right now; try again shortly",
                                headers={"Retry-After": "5"}) from None

    prefix = request.app.state.settings.gateway.accel_redirect_prefix
    if prefix:  # nginx sends the image from the file store, rendered there once
        files = request.app.state.files
        # the ETag's inputs but the content hash, which names the directory (deleted with the file)
        name = f"{page}-{width}-" + hashlib.sha256(f"{drawing}\x00{passage}".encode()).hexdigest()[:32]
        kept = files.render_path(doc["owner_id"], doc["content_hash"], name)
        marks = await asyncio.to_thread(_kept_marks, kept)
        if marks is None:
            png, lines, box = await render()
            await asyncio.to_thread(_keep_render, kept, png, lines, box)
            marks = (lines, box)
        lines, box = marks
        extra = {"X-Highlighted-Lines": str(lines), **({"X-Highlight-Box": box} if box else {})}
        return _accel(prefix, files.relative(kept), {"Content-Type": "image/png", **headers, **extra})
    cached = renders.kept.get(etag)
    if cached is None:
        cached = await render()
        renders.kept.put(etag, cached)
    png, lines, box = cached
    extra = {"X-Highlighted-Lines": str(lines), **({"X-Highlight-Box": box} if box else {})}
    return Response(png, media_type="image/png", headers={**headers, **extra})


def _kept_marks(png: Path) -> tuple[int, str] | None:
    """What a kept render marked (its highlighted lines and box), None when it is not kept yet."""
    try:
        marks = json.loads(png.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return None
    return (int(marks["lines"]), str(marks["box"])) if png.exists() else None


def _keep_render(png: Path, data: bytes, lines: int, box: str) -> None:
    """Write the render and its marks, each whole or not at all (a concurrent render writes the same)."""
    png.parent.mkdir(parents=True, exist_ok=True)
    for path, content in ((png.with_suffix(".json"), json.dumps({"lines": lines, "box": box}).encode()),
                          (png, data)):  # the marks first: an image on disk always has them
        tmp = path.with_name(f"{path.name}.{threading.get_ident()}.part")
        tmp.write_bytes(content)
        tmp.replace(path)


def _accel(prefix: str, relative: str, headers: dict[str, str]) -> Response:
    """The empty answer nginx turns into the file: X-Accel-Redirect names it under the internal location;
    Content-Type, Content-Disposition and Cache-Control are kept by nginx from this response."""
    return Response(b"", headers={"X-Accel-Redirect": prefix.rstrip("/") + "/" + quote(relative), **headers})


def attachment(name: str) -> str:
    """Content-Disposition for a download under `name` (RFC 6266; as Starlette's FileResponse writes it)."""
    quoted = quote(name)
    return f"attachment; filename*=utf-8''{quoted}" if quoted != name else f'attachment; filename="{name}"'


@router.get("/{document_id}/file", response_class=FileResponse, responses={
    200: {"content": {t.split(";")[0]: {} for t in [*(f.media_type for f in registry.formats()),
                                                      "application/octet-stream"]},
          "description": "the file as uploaded (PDF, Office, HTML, text), in its own media type"},
    307: {"description": "Supabase Storage: a short-lived signed URL of the file (Location)"},
    404: error("no such document"), 503: error("file storage unavailable")})
async def download(document_id: str, request: Request, user: CurrentUser, db: DbDep) -> Response:
    """The original file, as an attachment under its uploaded name."""
    doc = await asyncio.to_thread(_owned, db, user, document_id)
    files = request.app.state.files
    fmt = _format(doc)
    headers = {"Cache-Control": "private, no-cache"}
    try:
        signed = await asyncio.to_thread(files.signed_url, doc["owner_id"], doc["content_hash"], fmt, doc["name"])
    except Exception:  # the store is down: say so, do not 500
        raise HTTPException(503, "the stored file is unavailable right now; try again later",
                            headers={"Retry-After": "30"}) from None
    if signed is not None:
        return RedirectResponse(signed, status_code=307, headers={"Cache-Control": "private, no-store"})
    path = await asyncio.to_thread(_local_file, request, doc["owner_id"], doc)
    prefix = request.app.state.settings.gateway.accel_redirect_prefix
    if prefix:
        return _accel(prefix, files.relative(path), {"Content-Type": registry.served_type(fmt),
                                                      "Content-Disposition": attachment(doc["name"]), **headers})
    return FileResponse(path, media_type=registry.served_type(fmt), filename=doc["name"], headers=headers)
