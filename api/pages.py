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
(api/files.py render_path) for that. With Supabase Storage the file download is a redirect to a
short-lived signed URL instead.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pymupdf
from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse, RedirectResponse

from api.deps import CurrentUser, DbDep
from api.schemas import error
from ingestion.formats import registry
from storage import documents

router = APIRouter(prefix="/api/documents", tags=["documents"])

RENDER_VERSION = "2"  # part of the ETag: bump when the drawing changes
HIGHLIGHT_FILL = (1.0, 0.78, 0.0)  # amber, drawn with the Multiply blend of a highlight annotation
MIN_RUN = 3  # words in a row that must match for a stretch of the page to count as the passage
_WORD = re.compile(r"[\w$%.,-]+")


def _norm(word: str) -> str:
    return word.lower().strip(".,;:()[]\"'")


def passage_rects(page: pymupdf.Page, passage: str) -> list[pymupdf.Rect]:
    """The page's word boxes that spell the passage, one box per line.

    The excerpt a citation quotes is chunk text (whitespace normalised, cut mid-word at both ends,
    sometimes running onto the next page), so it is aligned word by word with the page's words
    instead of searched as one string; runs of MIN_RUN words or more count.
    """
    words = page.get_text("words", sort=True)  # (x0, y0, x1, y1, word, block, line, word_no)
    if not words or not passage.strip():
        return []
    page_words = [_norm(w[4]) for w in words]
    wanted = [_norm(w) for w in _WORD.findall(passage)]
    matcher = difflib.SequenceMatcher(None, page_words, wanted, autojunk=False)
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for block in matcher.get_matching_blocks():
        if block.size < MIN_RUN:
            continue
        for w in words[block.a:block.a + block.size]:
            key = (w[5], w[6])
            box = pymupdf.Rect(w[:4])
            lines[key] = lines[key] | box if key in lines else box
    return list(lines.values())


def recognised_rects(passage: str, chunks: Sequence[tuple[str, list[list[float]]]]) -> list[pymupdf.Rect]:
    """On an OCR'd page (an image, no words to align with): the line boxes of the recognised chunks
    the passage quotes, i.e. those sharing a run of MIN_RUN words or more with it, the same test
    passage_rects applies to the page's words. Each box is one recognised line, as there."""
    wanted = [_norm(w) for w in _WORD.findall(passage)]
    rects: dict[tuple[float, ...], pymupdf.Rect] = {}
    for text, boxes in chunks:
        words = [_norm(w) for w in _WORD.findall(text)]
        matcher = difflib.SequenceMatcher(None, words, wanted, autojunk=False)
        if any(block.size >= MIN_RUN for block in matcher.get_matching_blocks()):
            for box in boxes:  # neighbouring chunks overlap by a few rows: each line once
                rects.setdefault(tuple(box[:4]), pymupdf.Rect(box[:4]))
    return list(rects.values())


def render_page(path: Path, page_no: int, passage: str, width: int,
                recognised: Sequence[tuple[str, list[list[float]]]] = ()) -> tuple[bytes, int, str]:
    """(PNG bytes, number of highlighted lines, the highlight's box as "top,left,bottom,right"
    fractions of the page or ""); KeyError when the page does not exist. `recognised`: the page's
    OCR'd chunks (text, line boxes), used when the page itself has no text that spells the passage."""
    with pymupdf.open(path) as doc:
        if not 1 <= page_no <= doc.page_count:
            raise KeyError(page_no)
        page = doc[page_no - 1]
        rects = passage_rects(page, passage) if passage else []
        if passage and not rects and recognised:
            rects = [r & page.rect for r in recognised_rects(passage, recognised)]
            rects = [r for r in rects if not r.is_empty]
        for rect in rects:  # in memory only: the stored file is never written
            annot = page.add_highlight_annot(rect)
            annot.set_colors(stroke=HIGHLIGHT_FILL)
            annot.update(opacity=0.45)
        zoom = width / page.rect.width
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        box = ""
        if rects:
            union = pymupdf.Rect(rects[0])
            for rect in rects[1:]:
                union |= rect
            w, h = page.rect.width, page.rect.height
            box = ",".join(f"{v:.4f}" for v in (union.y0 / h, union.x0 / w, union.y1 / h, union.x1 / w))
        return pix.tobytes("png"), len(rects), box


class _Renders:
    """The last renders, by ETag (which names the file's content hash, page, passage and width)."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[bytes, int, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[bytes, int, str] | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: str, value: tuple[bytes, int, str]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_renders = _Renders()


def _owned(db: Any, owner_id: int, document_id: str) -> dict[str, Any]:  # noqa: ANN401
    with db.connection() as conn:
        doc = documents.get_document(conn, owner_id=owner_id, document_id=document_id)
    if doc is None:
        raise HTTPException(404, "no such document")
    return doc


def _recognised(db: Any, owner_id: int, document_id: str, page: int) -> list[tuple[str, list[list[float]]]]:  # noqa: ANN401
    with db.connection() as conn:
        return documents.recognised_chunks(conn, owner_id=owner_id, document_id=document_id, page=page)


def _format(doc: dict[str, Any]) -> str:
    return doc.get("format") or "pdf"


def _local_file(request: Request, owner_id: int, doc: dict[str, Any]) -> Path:
    files = request.app.state.files
    fmt = _format(doc)
    try:
        files.ensure_local(owner_id, doc["content_hash"], fmt)  # Supabase: fetch the durable copy back
    except Exception:  # noqa: BLE001 - the store is down: say so, do not 500
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
    404: error("no such document or page"), 503: error("file storage unavailable")})
async def page_image(document_id: str, page: int, request: Request, user: CurrentUser, db: DbDep,
                     highlight: str = Query("", max_length=4000, description="passage to mark (a citation's text)"),
                     width: int = Query(1000, ge=200, le=2000, description="image width in pixels")) -> Response:
    """A page of the document as a PNG, with `highlight` marked where it appears on the page."""
    doc = await asyncio.to_thread(_owned, db, user.id, document_id)
    known = registry.find(_format(doc))
    if known is None or not known.page_images:  # slides, sheets, web pages, text: the quote is the source
        raise HTTPException(404, f"a {_format(doc)} document has no page images; "
                                 f"GET /api/documents/{document_id}/pages/{page} gives the unit's text")
    passage = highlight.strip()
    etag = '"' + hashlib.sha256("\x00".join([RENDER_VERSION, doc["content_hash"], str(page), passage,
                                             str(width)]).encode()).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "private, max-age=86400"}
    if etag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)

    async def render() -> tuple[bytes, int, str]:
        path = await asyncio.to_thread(_local_file, request, user.id, doc)
        ocr = bool(passage and doc.get("ocr_pages"))  # only a document with OCR'd pages has line boxes to use
        recognised = await asyncio.to_thread(_recognised, db, user.id, document_id, page) if ocr else []
        try:
            return await asyncio.to_thread(render_page, path, page, passage, width, recognised)
        except KeyError:
            raise HTTPException(404, f"the document has no page {page}") from None

    prefix = request.app.state.settings.accel_redirect_prefix
    if prefix:  # nginx sends the image from the file store, rendered there once
        files = request.app.state.files
        # the ETag's inputs but the content hash, which names the directory (deleted with the file)
        name = f"{page}-{width}-" + hashlib.sha256(f"{RENDER_VERSION}\x00{passage}".encode()).hexdigest()[:32]
        kept = files.render_path(user.id, doc["content_hash"], name)
        marks = await asyncio.to_thread(_kept_marks, kept)
        if marks is None:
            png, lines, box = await render()
            await asyncio.to_thread(_keep_render, kept, png, lines, box)
            marks = (lines, box)
        lines, box = marks
        extra = {"X-Highlighted-Lines": str(lines), **({"X-Highlight-Box": box} if box else {})}
        return _accel(prefix, files.relative(kept), {"Content-Type": "image/png", **headers, **extra})
    cached = _renders.get(etag)
    if cached is None:
        cached = await render()
        _renders.put(etag, cached)
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
    doc = await asyncio.to_thread(_owned, db, user.id, document_id)
    files = request.app.state.files
    fmt = _format(doc)
    headers = {"Cache-Control": "private, no-cache"}
    try:
        signed = await asyncio.to_thread(files.signed_url, user.id, doc["content_hash"], fmt, doc["name"])
    except Exception:  # noqa: BLE001 - the store is down: say so, do not 500
        raise HTTPException(503, "the stored file is unavailable right now; try again later",
                            headers={"Retry-After": "30"}) from None
    if signed is not None:
        return RedirectResponse(signed, status_code=307, headers={"Cache-Control": "private, no-store"})
    path = await asyncio.to_thread(_local_file, request, user.id, doc)
    prefix = request.app.state.settings.accel_redirect_prefix
    if prefix:
        return _accel(prefix, files.relative(path), {"Content-Type": registry.served_type(fmt),
                                                      "Content-Disposition": attachment(doc["name"]), **headers})
    return FileResponse(path, media_type=registry.served_type(fmt), filename=doc["name"], headers=headers)
