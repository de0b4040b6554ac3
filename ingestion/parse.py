"""PDF text, page by page, in a reading order that keeps a label beside its value.

Text lines from PyMuPDF are grouped into visual rows by their vertical position and each row is
ordered left to right, so "Net revenue ........ 1,234" stays one row on forms and statements.
Rows that look like table rows (several cells, numbers) are tagged with a table id so the chunker
can keep a table together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pymupdf

from ingestion.errors import IngestError

PDF_MAGIC = b"%PDF-"
# Wide horizontal gaps inside a row separate cells; narrower ones are ordinary word spacing.
CELL_GAP_POINTS = 12.0
NUMBER_RE = re.compile(r"^[\s$€£(]*-?[\d][\d,.]*%?\)?$|^[—–-]+$")
MIN_TEXT_CHARS_PER_PAGE = 10  # a scan may carry a page number, never a paragraph
# Section labels inside a statement ("Cash Flows from Investing Activities") do not end a table.
MAX_LABEL_ROWS_IN_TABLE = 2


@dataclass(frozen=True)
class Row:
    page: int  # 1-based
    text: str
    table: int | None  # rows of one table share an id (unique within the document)


@dataclass(frozen=True)
class ParsedPdf:
    pages: int
    rows: list[Row]


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


def _row_cells(lines: list[tuple[float, float, float, float, str]]) -> list[str]:
    """Join the lines of one visual row left to right; a wide gap starts a new cell."""
    cells: list[str] = []
    last_x1: float | None = None
    for x0, _y0, x1, _y1, text in sorted(lines, key=lambda item: item[0]):
        if last_x1 is not None and x0 - last_x1 < CELL_GAP_POINTS and cells:
            cells[-1] = f"{cells[-1]} {text}"
        else:
            cells.append(text)
        last_x1 = x1 if last_x1 is None else max(last_x1, x1)
    return cells


def _visual_rows(page: pymupdf.Page) -> list[list[str]]:
    """Group the page's text lines into rows by vertical overlap, top to bottom."""
    lines: list[tuple[float, float, float, float, str]] = []
    flags = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_DEHYPHENATE
    for block in page.get_text("dict", flags=flags)["blocks"]:
        for line in block.get("lines", ()):
            if line["dir"][0] < 0.5:  # vertical or rotated text: keep, but it cannot align with rows
                pass
            text = _clean("".join(span["text"] for span in line["spans"]))
            if text:
                x0, y0, x1, y1 = line["bbox"]
                lines.append((x0, y0, x1, y1, text))
    lines.sort(key=lambda item: ((item[1] + item[3]) / 2, item[0]))
    rows: list[list[tuple[float, float, float, float, str]]] = []
    row_top = row_bottom = 0.0
    for item in lines:
        _x0, y0, _x1, y1, _text = item
        height = max(y1 - y0, 1.0)
        if rows:
            overlap = min(row_bottom, y1) - max(row_top, y0)
            if overlap >= 0.5 * min(height, row_bottom - row_top or height):
                rows[-1].append(item)
                row_top, row_bottom = min(row_top, y0), max(row_bottom, y1)
                continue
        rows.append([item])
        row_top, row_bottom = y0, y1
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


def parse_pdf(data: bytes) -> ParsedPdf:
    """Parse PDF bytes into rows tagged with their page; raise IngestError with a clear reason."""
    with open_checked(data) as doc:
        rows: list[Row] = []
        table_count = 0
        total_chars = 0
        try:
            for index, page in enumerate(doc):
                page_rows = _visual_rows(page)
                total_chars += sum(len(cell) for cells in page_rows for cell in cells)
                tables = _table_ids(page_rows, first_id=table_count + 1)
                table_count = max([table_count, *(t for t in tables if t is not None)])
                rows.extend(
                    Row(index + 1, " | ".join(cells), table)
                    for cells, table in zip(page_rows, tables, strict=True)
                )
        except Exception as exc:
            raise IngestError(f"the PDF is damaged and its text cannot be read: {exc}") from exc
        if total_chars < MIN_TEXT_CHARS_PER_PAGE * doc.page_count:
            raise IngestError(
                "the PDF has no text layer (a scanned image?); OCR is not supported, "
                "export it with text or run OCR first"
            )
        return ParsedPdf(pages=doc.page_count, rows=rows)


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
        return doc.page_count
