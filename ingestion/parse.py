"""PDF text, page by page, in a reading order that keeps a label beside its value.

Text lines from PyMuPDF are grouped into visual rows by their vertical position and each row is
ordered left to right, so "Net revenue ........ 1,234" stays one row on forms and statements.
Rows that look like table rows (several cells, numbers) are tagged with a table id so the chunker
can keep a table together. A page without a usable text layer (a scan, or text whose font maps
to no characters) is rendered and recognised (ingestion/ocr.py); its recognised lines go through
the same row grouping, so a document mixes both freely.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import pymupdf

from ingestion.errors import IngestError
from ingestion.units import Box, PageUnit, Parsed, Row

PDF_MAGIC = b"%PDF-"
# Wide horizontal gaps inside a row separate cells; narrower ones are ordinary word spacing.
CELL_GAP_POINTS = 12.0
NUMBER_RE = re.compile(r"^[\s$€£(]*-?[\d][\d,.]*%?\)?$|^[—–-]+$")
MIN_TEXT_CHARS_PER_PAGE = 10  # a scan may carry a page number, never a paragraph
# A page mostly covered by images with little text is a scan with a stamp or a caption on it.
SCAN_IMAGE_COVER = 0.5
SCAN_MAX_TEXT_CHARS = 200
# Section labels inside a statement ("Cash Flows from Investing Activities") do not end a table.
MAX_LABEL_ROWS_IN_TABLE = 2
LEADER_RE = re.compile(r"([^\w\s])\1{2,}")  # dot leaders and rules are not words
# An OCR box this many times the page's median line height spans more than one printed row.
TALL_LINE = 1.6

Line = tuple[float, float, float, float, str]  # x0, y0, x1, y1, text
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class OcrOptions:
    enabled: bool = True
    dpi: int = 150
    max_pages: int = 200  # pages needing OCR in one document; more fails at once with the reason
    # seconds one document's OCR may take, checked before each page: past it the job fails with
    # the reason (two image-only pages held the only ingestion thread 227 s)
    max_seconds: float = 600.0


def check_pdf_bytes(data: bytes) -> None:
    """Reject what is plainly not a complete PDF before anything is stored."""
    if not data:
        raise IngestError("the file is empty")
    if not data[:1024].lstrip().startswith(PDF_MAGIC):
        raise IngestError("not a PDF (the file does not start with %PDF-)")
    if b"%%EOF" not in data[-2048:]:
        raise IngestError("the PDF is truncated or damaged (no end-of-file marker); upload it again")


def _clean(text: str) -> str:
    # Postgres text cannot hold NUL; ligature/space oddities are normalised by PyMuPDF flags.
    return " ".join(text.replace("\x00", " ").split())


def _row_cells(lines: list[Line]) -> tuple[list[str], list[Box]]:
    """Join the lines of one visual row left to right; a wide gap starts a new cell."""
    cells: list[str] = []
    last_x1: float | None = None
    ordered = sorted(lines, key=lambda item: item[0])
    for x0, _y0, x1, _y1, text in ordered:
        if last_x1 is not None and x0 - last_x1 < CELL_GAP_POINTS and cells:
            cells[-1] = f"{cells[-1]} {text}"
        else:
            cells.append(text)
        last_x1 = x1 if last_x1 is None else max(last_x1, x1)
    return cells, [(round(a, 1), round(b, 1), round(c, 1), round(d, 1)) for a, b, c, d, _t in ordered]


def text_lines(page: pymupdf.Page) -> list[Line]:
    """The page's text-layer lines with their boxes."""
    lines: list[Line] = []
    flags = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_DEHYPHENATE
    for block in page.get_text("dict", flags=flags)["blocks"]:
        for line in block.get("lines", ()):
            text = _clean("".join(span["text"] for span in line["spans"]))
            if text:
                x0, y0, x1, y1 = line["bbox"]
                lines.append((x0, y0, x1, y1, text))
    return lines


def visual_rows(lines: list[Line], recognised: bool = False) -> list[tuple[list[str], list[Box]]]:
    """Group lines into rows by vertical overlap, top to bottom: (cells, line boxes) per row.

    `recognised`: the lines come from OCR, whose detector sometimes boxes two short values stacked in
    a column as one line. Such a box (taller than TALL_LINE times the page's median line) still
    joins the row it overlaps, but does not stretch that row's band: stretched, the band would reach
    the next printed row and chain the rows below into one."""
    lines = sorted(lines, key=lambda item: ((item[1] + item[3]) / 2, item[0]))
    heights = sorted(max(y1 - y0, 1.0) for _x0, y0, _x1, y1, _t in lines)
    tall = TALL_LINE * heights[len(heights) // 2] if recognised and heights else float("inf")
    rows: list[list[Line]] = []
    row_top = row_bottom = 0.0
    for item in lines:
        _x0, y0, _x1, y1, _text = item
        height = max(y1 - y0, 1.0)
        if rows:
            overlap = min(row_bottom, y1) - max(row_top, y0)
            if overlap >= 0.5 * min(height, row_bottom - row_top or height):
                rows[-1].append(item)
                if height <= tall:
                    row_top, row_bottom = min(row_top, y0), max(row_bottom, y1)
                continue
        rows.append([item])
        row_top, row_bottom = y0, y1
        if height > tall:  # a row started by such a box gets one line's band, around its middle
            middle, half = (y0 + y1) / 2, tall / TALL_LINE / 2
            row_top, row_bottom = middle - half, middle + half
    return [_row_cells(row) for row in rows]


def _is_table_row(cells: list[str]) -> bool:
    return len(cells) >= 2 and any(NUMBER_RE.match(cell) for cell in cells[1:])


def _table_ids(page_rows: list[list[str]], first_id: int) -> list[int | None]:
    """Tag runs of table rows; up to MAX_LABEL_ROWS_IN_TABLE label rows between them stay inside."""
    table_rows = [i for i, cells in enumerate(page_rows) if _is_table_row(cells)]
    ids: list[int | None] = [None] * len(page_rows)
    current = first_id - 1
    previous: int | None = None
    for i in table_rows:
        if previous is None or i - previous - 1 > MAX_LABEL_ROWS_IN_TABLE:
            current += 1
            start = i
        else:
            start = previous + 1
        for j in range(start, i + 1):
            ids[j] = current
        previous = i
    return ids


def garbled(text: str) -> bool:
    """Text whose font maps glyphs to no real characters (private-use codes, U+FFFD, symbol soup)."""
    chars = [ch for ch in LEADER_RE.sub("", text) if not ch.isspace()]
    if len(chars) < 20:
        return False
    bad = sum(1 for ch in chars if ch == "\ufffd" or unicodedata.category(ch) in ("Co", "Cn", "Cc", "Cs"))
    return bad / len(chars) > 0.1 or sum(ch.isalnum() for ch in chars) / len(chars) < 0.3


def needs_ocr(page: pymupdf.Page, lines: list[Line]) -> bool:
    """No usable text layer: (almost) no text on a page with something drawn on it, garbled text, or a
    page covered by images with little text on it (a scan with a stamp or a page number)."""
    text = " ".join(line[4] for line in lines)
    visible = sum(1 for ch in text if not ch.isspace())
    if visible >= SCAN_MAX_TEXT_CHARS:
        return garbled(text)
    if garbled(text):
        return True
    area = abs(page.rect) or 1.0
    images = page.get_image_info()
    cover = sum(abs(pymupdf.Rect(i["bbox"]) & page.rect) for i in images) / area
    if cover >= SCAN_IMAGE_COVER:
        return True
    return visible < MIN_TEXT_CHARS_PER_PAGE and bool(images or page.get_drawings())


def parse_pdf(data: bytes, *, ocr: OcrOptions | None = None, progress: Progress | None = None) -> Parsed:
    """Parse PDF bytes into rows tagged with their page, recognising the pages that need it;
    raise IngestError with a clear reason."""
    ocr = ocr or OcrOptions()
    report = progress or (lambda _stage, _done, _total: None)
    with open_checked(data) as doc:
        try:
            page_lines = []
            scanned: list[int] = []
            for index, page in enumerate(doc):
                lines = text_lines(page)
                if needs_ocr(page, lines):
                    scanned.append(index)
                    lines = []  # a garbled layer is not kept beside the recognised text
                page_lines.append(lines)
                report("parsing", index + 1, doc.page_count)
        except Exception as exc:
            raise IngestError(f"the PDF is damaged and its text cannot be read: {exc}") from exc
        if scanned and ocr.enabled:
            if len(scanned) > ocr.max_pages:
                raise IngestError(
                    f"{len(scanned)} pages have no text layer and need OCR; at most {ocr.max_pages} pages of a "
                    "document are recognised (OCR_MAX_PAGES): split the file or raise the limit"
                )
            from ingestion.ocr import recognise_page

            report("ocr", 0, len(scanned))
            deadline = time.monotonic() + ocr.max_seconds
            for done, index in enumerate(scanned, 1):
                if time.monotonic() > deadline:
                    raise IngestError(
                        f"OCR of this document took longer than {ocr.max_seconds:g} s (OCR_MAX_SECONDS) with "
                        f"{done - 1} of {len(scanned)} pages recognised: split the file or raise the limit")
                page_lines[index] = recognise_page(doc[index], ocr.dpi)
                report("ocr", done, len(scanned))
        recognised = set(scanned) if ocr.enabled else set()
        rows: list[Row] = []
        units: list[PageUnit] = []
        table_count = 0
        for index, lines in enumerate(page_lines):
            page_rows = visual_rows(lines, recognised=index in recognised)
            tables = _table_ids([cells for cells, _boxes in page_rows], first_id=table_count + 1)
            table_count = max([table_count, *(t for t in tables if t is not None)])
            texts = [" | ".join(cells) for cells, _boxes in page_rows]
            rows.extend(Row(index + 1, text, table, tuple(boxes))
                        for text, (_cells, boxes), table in zip(texts, page_rows, tables, strict=True))
            units.append(PageUnit(index + 1, f"page {index + 1}", "", index in recognised,
                                  "\n".join(texts)))
        if not rows:
            if scanned and not ocr.enabled:
                raise IngestError("the PDF has no text layer (a scanned image?) and OCR is switched off (OCR=false)")
            raise IngestError("no text found in the PDF, not even by OCR of its pages (blank or pictures only?)")
        return Parsed("pdf", units, rows)


def open_checked(data: bytes) -> pymupdf.Document:
    """The opened PDF after the checks that need no text extraction: complete, opens, not
    encrypted, has pages; raises IngestError with the reason."""
    check_pdf_bytes(data)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises several types for unreadable files
        raise IngestError(f"the PDF cannot be opened: {exc}") from exc
    if doc.needs_pass or doc.is_encrypted:
        doc.close()
        raise IngestError("the PDF is encrypted (password protected); upload a decrypted copy")
    if doc.page_count == 0:
        doc.close()
        raise IngestError("the PDF has no pages")
    return doc


def precheck_pdf(data: bytes) -> int:
    """Fast checks an upload can answer at once (no text extraction). Returns the page count."""
    with open_checked(data) as doc:
        return int(doc.page_count)
