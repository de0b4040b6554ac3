"""What every format's parser hands to the chunker: rows of text on page-like units.

A unit is what a person opens to check a citation: a PDF page, a slide, a sheet (or a block of its
rows), a heading section, or a run of lines of a text file. Its index (1-based) is stored where a
PDF page number is; its label is what a citation names ("page 4", "slide 4", "sheet Revenue",
"section 2.1"), and its text is what a page view shows where there is no page image to render.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in PDF points (72 per inch), top-left origin


@dataclass(frozen=True)
class Row:
    page: int  # 1-based unit index
    text: str
    table: int | None  # rows of one table share an id (unique within the document)
    boxes: tuple[Box, ...] = ()  # the row's line boxes on a PDF page (empty for other formats)


@dataclass(frozen=True)
class PageUnit:
    page: int  # 1-based, the same number the unit's rows carry
    label: str  # what a citation names
    title: str = ""  # heading carried into each chunk ("" on PDF pages: the chunker picks the page's first rows)
    ocr: bool = False  # the text was recognised from the rendered page (no usable text layer)
    text: str = ""  # the unit's text, for a page view


@dataclass
class Parsed:
    format: str  # pdf | docx | pptx | xlsx | html | markdown | text
    units: list[PageUnit]
    rows: list[Row] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return len(self.units)

    @property
    def ocr_pages(self) -> int:
        return sum(1 for u in self.units if u.ocr)

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "units": [asdict(u) for u in self.units],
                "rows": [[r.page, r.text, r.table, [list(b) for b in r.boxes]] for r in self.rows]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Parsed:
        return cls(
            format=data["format"],
            units=[PageUnit(**u) for u in data["units"]],
            rows=[Row(page, text, table, tuple(tuple(b) for b in boxes)) for page, text, table, boxes in data["rows"]],
        )


class UnitBuilder:
    """Collects rows unit by unit for the formats without pages (sections, slides, sheets, lines)."""

    def __init__(self) -> None:
        self.units: list[PageUnit] = []
        self.rows: list[Row] = []
        self.tables = 0
        self._open: tuple[str, str, bool] | None = None
        self._texts: list[str] = []

    def start(self, label: str, title: str = "", *, keep_empty: bool = False) -> None:
        """Close the current unit (dropped when it holds no text, unless kept) and open the next."""
        self.close()
        self._open = (label, title, keep_empty)

    def add(self, text: str, table: int | None = None) -> None:
        text = " ".join(text.replace("\x00", " ").split())
        if not text:
            return
        if self._open is None:
            self.start("beginning")
        self.rows.append(Row(len(self.units) + 1, text, table))
        self._texts.append(text)

    def new_table(self) -> int:
        self.tables += 1
        return self.tables

    @property
    def chars(self) -> int:
        """Characters in the open unit so far (long sections are cut into parts)."""
        return sum(len(t) + 1 for t in self._texts)

    def close(self) -> None:
        if self._open is not None and (self._texts or self._open[2]):
            label, title, _keep = self._open
            self.units.append(PageUnit(len(self.units) + 1, label, title, False, "\n".join(self._texts)))
        self._open, self._texts = None, []

    def parsed(self, fmt: str) -> Parsed:
        self.close()
        return Parsed(fmt, self.units, self.rows)
