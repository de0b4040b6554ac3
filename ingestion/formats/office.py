"""Word, PowerPoint and Excel files through python-docx, python-pptx and openpyxl.

These read the Office Open XML parts directly (no office suite, nothing converted to PDF); their
XML parsers resolve no external entities, and openpyxl parses through defusedxml when it is
installed (it is a dependency here). Macros are never run: none of these libraries can.
Units: a heading section for Word, a slide for PowerPoint, a sheet (or a block of its rows) for Excel.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from ingestion.errors import IngestError
from ingestion.formats.sections import Block, Heading, Para, TableRow, build_sections, clean
from ingestion.units import Parsed, UnitBuilder

ROWS_PER_BLOCK = 100  # a sheet longer than this is cited by row range ("sheet Revenue, rows 102-201")
BLOCK_CHARS = 8000
MAX_EMPTY_ROWS = 2_000_000  # row gaps the reader fills in; past this the sheet is not a table


def _heading_level(style_name: str) -> int | None:
    """Heading 1..9 open sections; the Title style is the document's name, text of the beginning."""
    name = style_name.lower()
    if name.startswith("heading "):
        rest = name.removeprefix("heading ").strip()
        return int(rest) if rest.isdigit() else None
    return None


def parse_docx(path: Path) -> Parsed:
    from docx import Document
    from docx.table import Table

    doc = Document(str(path))
    blocks: list[Block] = []
    tables = 0
    for item in doc.iter_inner_content():
        if isinstance(item, Table):
            tables += 1
            for row in item.rows:
                cells, seen = [], set()
                for cell in row.cells:  # a merged cell comes back once per grid column it spans
                    if id(cell._tc) not in seen:
                        seen.add(id(cell._tc))
                        cells.append(cell.text)
                if any(c.strip() for c in cells):
                    blocks.append(TableRow(cells, tables))
            continue
        style = item.style.name if item.style is not None else ""
        level = _heading_level(style or "")
        blocks.append(Heading(level, item.text) if level else Para(item.text))
    return build_sections(blocks, "docx")


def _shape_texts(shapes: Any, out: UnitBuilder) -> None:  # a python-pptx shape collection
    """Text of the shapes in reading order (top to bottom, then left to right); groups recursed."""
    ordered = sorted(shapes, key=lambda s: ((s.top or 0) // 100_000, s.left or 0))  # ~0.1 inch bands
    for shape in ordered:
        if shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
            _shape_texts(shape.shapes, out)
        elif getattr(shape, "has_table", False) and shape.has_table:
            table = out.new_table()
            for row in shape.table.rows:
                out.add(" | ".join(clean(cell.text) for cell in row.cells), table)
        elif getattr(shape, "has_chart", False) and shape.has_chart:
            chart = shape.chart
            if chart.has_title and chart.chart_title.has_text_frame:
                out.add(f"Chart: {chart.chart_title.text_frame.text}")
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            for paragraph in shape.text_frame.paragraphs:
                out.add(paragraph.text)


def parse_pptx(path: Path) -> Parsed:
    from pptx import Presentation

    deck = Presentation(str(path))
    out = UnitBuilder()
    for number, slide in enumerate(deck.slides, 1):
        title_shape = slide.shapes.title
        title = clean(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
        out.start(f"slide {number}", title, keep_empty=True)  # slide n stays unit n, pictures-only or not
        _shape_texts(slide.shapes, out)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            for line in slide.notes_slide.notes_text_frame.text.splitlines():
                out.add(f"Notes: {line}" if line.strip() else "")
    parsed = out.parsed("pptx")
    if not parsed.rows:
        raise IngestError("the presentation has no text (pictures only?); nothing to index")
    return parsed


def cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return f"{value:.10g}"
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return clean(str(value))


class _SheetBlocks:
    """Rows of one sheet, handed to the builder a block at a time once each block's range is known."""

    def __init__(self, out: UnitBuilder, sheet: str) -> None:
        self.out, self.sheet = out, sheet
        self.header = ""
        self.rows: list[tuple[int, str]] = []
        self.chars = 0
        self.flushed = 0

    def add(self, number: int, text: str) -> None:
        if not self.header:
            self.header = text
        if len(self.rows) >= ROWS_PER_BLOCK or self.chars > BLOCK_CHARS:
            self.flush(last=False)
        self.rows.append((number, text))
        self.chars += len(text) + 1

    def flush(self, *, last: bool) -> None:
        if not self.rows:
            return
        whole = last and self.flushed == 0
        label = f"sheet {self.sheet}" if whole else f"sheet {self.sheet}, rows {self.rows[0][0]}-{self.rows[-1][0]}"
        title = f"sheet {self.sheet}" + (f" — {self.header}" if self.header else "")
        self.out.start(label, title[:200])
        table = self.out.new_table()
        for _number, text in self.rows:
            self.out.add(text, table)
        self.out.close()
        self.flushed += 1
        self.rows, self.chars = [], 0


def parse_xlsx(path: Path, *, max_rows: int) -> Parsed:
    import openpyxl

    book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    out = UnitBuilder()
    kept = 0
    try:
        for sheet in book.worksheets:
            sheet.reset_dimensions()  # a declared A1:XFD1048576 would otherwise pad every row to 16,384 cells
            blocks = _SheetBlocks(out, sheet.title)
            for number, values in enumerate(sheet.iter_rows(values_only=True), 1):
                if number > MAX_EMPTY_ROWS:
                    raise IngestError(f"sheet {sheet.title!r} runs past row {MAX_EMPTY_ROWS:,}; not indexed")
                cells = [cell_text(v) for v in values]
                while cells and not cells[-1]:
                    cells.pop()
                if not cells:
                    continue
                kept += 1
                if kept > max_rows:
                    raise IngestError(f"the workbook has more than {max_rows:,} non-empty rows (SHEET_MAX_ROWS); "
                                      "split it or raise the limit")
                blocks.add(number, " | ".join(cells))
            blocks.flush(last=True)
    finally:
        book.close()
    parsed = out.parsed("xlsx")
    if not parsed.rows:
        raise IngestError("the workbook has no cell values; nothing to index")
    return parsed
