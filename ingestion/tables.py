"""Every table of a parsed document as cells with meaning: row label, section, period, scale, value, box.

Financial statements lay a table out the same way whatever the format: caption rows above it (the
statement's name, "(In thousands, except per share data)", "Years ended December 31"), one or more
header rows naming each column's period (parts may span columns: "Three Months Ended" over two
dates), then rows of a label and one value per column. Label rows without values open a section
("Cash flows from operating activities", "Current assets:"); deeper-indented rows sit inside it; a
total ("Total current assets", "Net cash provided by operating activities", or a sum row with no
label) closes the section whose words it repeats. PDF rows (ingestion/parse.py, text-layer and
OCR'd pages alike) carry their line boxes, so columns are matched by position and each value gets
its box; XLSX, DOCX and HTML rows carry their cells in order, so columns are matched by order.

`build_cells` reads a parsed document's rows into `CellRow`s (storage/tables.py writes them);
`table_cells` also links each to the child chunk that holds its row.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from ingestion.context import DocumentContext
from ingestion.numbers import TableScale, Value, cell_unit, is_value_text, read_scale, read_values
from ingestion.parse import CELL_GAP_POINTS
from ingestion.periods import Period, has_period_words, is_header_text, read_period
from ingestion.units import Box, Parsed, Row
from storage.statements import statement_of
from storage.tables import CellRow

CAPTION_ROWS = 8  # rows above a table that may hold its caption, scale and period words
CAPTION_WORDS = 16  # longer rows are prose: they end a table and are no caption
INDENT_TOLERANCE = 1.5  # points: labels this close are at the same depth
SECTION_STOP = {"total", "net", "of", "and", "the", "from", "by", "in", "for", "to", "provided", "used", "a", "an",
                "on", "at", "with", "less", "other"}
_TOTAL = re.compile(r"^total\b", re.I)
_YEAR_END = re.compile(r"(?<![\d,.])(?:19|20)\d{2}(?![\d,.]\d)[*†‡]?")
_DIGIT_WORD = re.compile(r"(?<=\d)(?=[A-Za-z]{3})")  # "2023December": two lines' text set without a space
# A heading's or a list item's number opening a cell, with its point: "8.1. WHAT PROGRAMS ...", "3. Install"
# (a figure glued to the next column's words, "232 Other assets", "37.4 Higher Market Volatility", has none).
_HEADING_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)*)\.\s+[^\W\d_]")
# Dot leaders before a page reference or a list of them (". . . . 14", "...... 14, 16, 33"): a contents or
# index line, whose numbers say where something is printed.
_REF = r"\d+(?![.,]?\d)"  # a whole number: "14", not the "1" of "1.25" or "1,234"
_LEADER_REFS = re.compile(rf"(?:\.\s?){{3,}}\s*({_REF}(?:,\s+{_REF})*)")


@dataclass
class _Frag:
    """One cell of a row as laid out: its text and where it stands (points on a PDF page, else its index)."""

    text: str
    x0: float
    x1: float
    box: Box | None = None

    @property
    def center(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass
class _Line:
    index: int  # in the document's rows
    row: Row
    frags: list[_Frag]
    positioned: bool  # frags carry page positions (PDF), not just an order
    last_page: int = 0  # the highest page number the document may print (its references go no further)

    @property
    def label(self) -> str:
        first = self.frags[0].text if self.frags else ""
        return "" if not first or is_value_text(first) else first.strip(" :")

    @property
    def indent(self) -> float | None:
        return self.frags[0].x0 if self.positioned and self.label else None

    @property
    def words(self) -> int:
        return len(self.row.text.split())

    def values(self) -> list[tuple[Value, _Frag, Box | None]]:
        """The row's values, each with its cell and its own box (a cell may hold several)."""
        start = 1 if self.label else 0
        found = []
        for frag in self.frags[start:]:
            refs = _page_references(frag.text, self.last_page)
            for value in read_values(frag.text):
                if not _numbers_a_heading(frag.text, value) and not any(a <= value.start < b for a, b in refs):
                    found.append((value, frag, _part_box(frag, value)))
        return found

    def header_frags(self) -> list[_Frag] | None:
        """The column headers this row writes, or None when it is not a header row."""
        frags = [f for f in self.frags if f.text]
        if not frags:
            return None
        corner = frags[0] if not is_header_text(frags[0].text) else None
        cols = frags[1:] if corner is not None else frags
        if not cols or not all(is_header_text(f.text) for f in cols):
            return None
        if corner is not None and len(cols) == 1 and not _corner_like(corner.text):
            return None  # "Expires | 2026": a body row whose value is a year
        return [part for frag in cols for part in _split_years(frag)]


def _numbers_a_heading(text: str, value: Value) -> bool:
    """`value` opens `text` as a heading's or a list item's number ("8.1. WHAT PROGRAMS DOES DEBIAN ...",
    a running header's section): it says where the text stands in the document, not how much of anything."""
    m = _HEADING_NUMBER.match(text)
    return m is not None and m.start(1) == value.start and m.end(1) == value.end


def _page_references(text: str, last_page: int) -> list[tuple[int, int]]:
    """Spans of `text` that are page references after dot leaders ("Index . . . . 14, 16, 33"): whole
    numbers no greater than the document's last page, not followed by another figure ("Cost of sales ....
    812 790" is a row of figures set with leaders)."""
    out = []
    for m in _LEADER_REFS.finditer(text):
        refs = [int(n) for n in m.group(1).split(",")]
        after = text[m.end(1):].lstrip()[:1]
        if last_page and max(refs) <= last_page and not (after.isdigit() or after in ("$", "(")):
            out.append((m.start(1), m.end(1)))
    return out


def _split_years(frag: _Frag) -> list[_Frag]:
    """Column headers set so close that they read as one cell ("December 31, 2023 December 31, 2022",
    "2023 2022"), cut after each year, each part taking its share of the box."""
    cuts = [m.end() for m in _YEAR_END.finditer(frag.text)]
    if len(cuts) < 2 or cuts[-1] != len(frag.text):
        return [frag]
    parts, start = [], 0
    for end in cuts:
        text = frag.text[start:end]
        lead = len(text) - len(text.lstrip())
        piece = _Frag(text.strip(), frag.x0, frag.x1)
        if frag.box is not None:
            width = (frag.x1 - frag.x0) / max(len(frag.text), 1)
            x0, x1 = frag.x0 + width * (start + lead), frag.x0 + width * end
            piece = _Frag(text.strip(), x0, x1, (x0, frag.box[1], x1, frag.box[3]))
        parts.append(piece)
        start = end
    return parts


def _corner_like(text: str) -> bool:
    return text.startswith("(") or bool(read_scale([text]).words) or has_period_words(text)


def _joined(over: str, under: str) -> str:
    """A header's lines as one ("Six Months Ended June 30," over "2023"; "Years ended December 31, 2018")."""
    if over and under and over[-1].isdigit() and under[:1].isdigit():
        return f"{over}, {under}"
    return " ".join(p for p in (over, under) if p)


def _sentence(text: str) -> bool:
    """A note under a table ("The accompanying notes are an integral part of ..."), not a label."""
    return text.endswith(".") and len(text.split()) >= 6


def _part_box(frag: _Frag, value: Value) -> Box | None:
    """The share of a cell's box that one of its values takes, by its characters."""
    if frag.box is None:
        return None
    x0, y0, x1, y1 = frag.box
    width = (x1 - x0) / max(len(frag.text), 1)
    return (round(x0 + width * value.start, 1), y0, round(x0 + width * value.end, 1), y1)


def _union(boxes: Sequence[Box]) -> Box | None:
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _distance(anchor: _Frag, frag: _Frag) -> float:
    return abs(frag.center - anchor.center)


def _frags(row: Row) -> tuple[list[_Frag], bool]:
    """A row's cells: with their boxes on a PDF page (the line boxes grouped as parse.py grouped
    them into cells), else in order."""
    if row.boxes:
        cells = [_DIGIT_WORD.sub(" ", c) for c in row.text.split(" | ")]
        groups: list[list[Box]] = []
        last_x1: float | None = None
        for box in row.boxes:  # parse.py's rule: a gap of CELL_GAP_POINTS starts a new cell
            if last_x1 is not None and box[0] - last_x1 < CELL_GAP_POINTS and groups:
                groups[-1].append(box)
            else:
                groups.append([box])
            last_x1 = box[2] if last_x1 is None else max(last_x1, box[2])
        if len(groups) == len(cells):
            frags = []
            for text, group in zip(cells, groups, strict=True):
                cell = _union(group)
                assert cell is not None
                frags.append(_Frag(text.strip(), cell[0], cell[2], cell))
            return frags, True
    return [_Frag(_DIGIT_WORD.sub(" ", text).strip(), i, i + 1) for i, text in enumerate(row.text.split("|"))], False


def _section_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower()) if w not in SECTION_STOP}


@dataclass
class _Section:
    label: str
    indent: float | None


@dataclass
class _Table:
    key: str
    caption: str
    scale: TableScale
    periods: list[Period | None]  # one per column (empty: a table whose header was not found)
    anchors: list[_Frag]  # the header cells that define the columns, left to right
    positioned: bool
    sections: list[_Section] = field(default_factory=list)

    def column(self, line: _Line, values: list[tuple[Value, _Frag, Box | None]], i: int) -> int | None:
        """Which column the i-th value of the row stands in."""
        n = len(self.anchors)
        if not n:
            return None
        if len(values) == n:
            return i
        frag = values[i][1]
        if self.positioned and line.positioned:
            box = values[i][2]
            center = (box[0] + box[2]) / 2 if box else frag.center
            spacing = min((b.center - a.center for a, b in zip(self.anchors, self.anchors[1:], strict=False)),
                          default=120.0)
            nearest = min(range(n), key=lambda c: abs(self.anchors[c].center - center))
            return nearest if abs(self.anchors[nearest].center - center) <= 0.6 * spacing else None
        if not self.positioned and not line.positioned:
            return next((c for c, a in enumerate(self.anchors) if a.x0 == frag.x0), None)
        return None

    def open_section(self, label: str, indent: float | None, *, lead_in: bool) -> None:
        """A label row opens a section: inside those less indented than it (PDF), or, where rows
        carry no indentation, inside the open one when it leads in to a list ("Adjustments to ...:")."""
        if indent is not None:
            self.sections = [s for s in self.sections if s.indent is not None and s.indent < indent - INDENT_TOLERANCE]
        elif not lead_in:
            self.sections = []
        self.sections.append(_Section(label, indent))

    def path_of(self, label: str, indent: float | None) -> tuple[str, ...]:
        """The section path of a value row; a total closes the section it sums (after its own row)."""
        if indent is not None:
            self.sections = [s for s in self.sections if s.indent is None or s.indent < indent - INDENT_TOLERANCE]
        words = _section_words(label)
        total = not label or bool(_TOTAL.match(label))
        scores = [len(_section_words(s.label) & words) / max(len(_section_words(s.label)), 1) for s in self.sections]
        best = max(range(len(scores)), key=lambda i: (scores[i], i), default=None)
        closes: int | None = None
        if best is not None and (scores[best] >= 0.5 or (total and scores[best] > 0)):
            closes = best
        elif total and self.sections:
            closes = len(self.sections) - 1
        if closes is None:
            return tuple(s.label for s in self.sections)
        path = tuple(s.label for s in self.sections[:closes + 1])
        self.sections = self.sections[:closes]
        return path


def _column_headers(header: list[_Line], positioned: bool) -> tuple[list[_Frag], list[str], str]:
    """(the cells defining the columns, each column's header text, the period words over all columns)."""
    rows = [(line, line.header_frags() or []) for line in header]
    anchor_frags = max((frags for _line, frags in rows), key=len, default=[])
    n = len(anchor_frags)
    texts: list[list[str]] = [[] for _ in range(n)]
    spanning: list[str] = []
    for _line, frags in rows:
        k = len(frags)
        if k == 0:
            continue
        if k == 1 and n > 1:
            spanning.append(frags[0].text)
        elif k == n:
            for c, frag in enumerate(frags):
                texts[c].append(frag.text)
        elif positioned and all(f.box is not None for f in frags):
            for c, anchor in enumerate(anchor_frags):
                texts[c].append(min(frags, key=partial(_distance, anchor)).text)
        elif n % k == 0:
            for c in range(n):
                texts[c].append(frags[c * k // n].text)
    return anchor_frags, [" ".join(t) for t in texts], " ".join(spanning)


class _Reader:
    """Walks one document's rows page by page, keeping the open table."""

    def __init__(self, context: DocumentContext | None, running: set[str]) -> None:
        self.context = context
        self.running = running
        self.cells: list[CellRow] = []
        self.table: _Table | None = None
        self.carried: _Table | None = None  # the table the previous page ended in
        self.above: list[_Line] = []  # rows since the last value row: captions and header rows
        self.tables_on_page = 0
        self.page_scale: str | None = None  # the last caption on this page that stated a scale

    def page(self, lines: list[_Line]) -> None:
        self.carried, self.table, self.above, self.tables_on_page = self.table, None, [], 0
        self.page_scale = None
        for line in lines:
            if line.words <= CAPTION_WORDS and not line.values() and read_scale([line.row.text]).words:
                self.page_scale = line.row.text
            self.line(line)

    def line(self, line: _Line) -> None:
        if line.header_frags() is not None:
            self.above = [*self.above, line][-CAPTION_ROWS:]
            return
        values = line.values()
        if not values:
            if line.words > CAPTION_WORDS or _sentence(line.row.text):  # prose ends the table
                self.table, self.carried, self.above = None, None, []
                return
            if line.label and self.table is not None and not self._header_rows():
                self.table.open_section(line.label, line.indent, lead_in=line.frags[0].text.endswith(":"))
            self.above = [*self.above, line][-CAPTION_ROWS:]
            return
        if self._header_rows():
            self.table = self._start(line)
        elif self.table is None:
            carried = self.carried
            if carried is not None and len(carried.anchors) == len(values) and carried.positioned == line.positioned:
                self.tables_on_page += 1
                self.table = _Table(f"{line.row.page}.{self.tables_on_page}", carried.caption, carried.scale,
                                    carried.periods, carried.anchors, carried.positioned, carried.sections)
            else:
                self.table = self._start(line)
            self.carried = None
        self._emit(line, values)
        self.above = []

    def _header_block(self) -> tuple[int, int] | None:
        """[start, end) in `above` of the header rows just above: the last run of header rows, with
        the caption-like rows between them ("(Unaudited)", "Years ended December 31")."""
        ends = [i for i, line in enumerate(self.above) if line.header_frags() is not None]
        if not ends:
            return None
        start = end = ends[-1]
        while start > 0:
            before = self.above[start - 1]
            caption_like = before.row.text.startswith("(") or has_period_words(before.row.text)
            if before.header_frags() is None and not caption_like:
                break
            start -= 1
        while start < end and self.above[start].header_frags() is None:
            start += 1  # the caption rows before the first header row are captions
        return start, end + 1

    def _header_rows(self) -> list[_Line]:
        block = self._header_block()
        return [line for line in self.above[block[0]:block[1]] if line.header_frags() is not None] if block else []

    def _start(self, first: _Line) -> _Table:
        block = self._header_block()
        start, end = block if block else (len(self.above), len(self.above))
        header = [line for line in self.above[start:end] if line.header_frags() is not None]
        captions = self.above[:start] + [line for line in self.above[start:end] if line.header_frags() is None]
        inside = self.above[end:]  # label rows between the header and the first value row open sections
        corner = [line.frags[0].text for line in header if line.frags and not is_header_text(line.frags[0].text)]
        scale = read_scale([line.row.text for line in captions] + corner + [first.row.text])
        if not scale.words and self.page_scale:  # a tall header pushed the caption out of reach: the page's
            scale = read_scale([self.page_scale] + [line.row.text for line in captions] + corner)
        anchors, labels, spanning = _column_headers(header, first.positioned)
        period_words = " ".join(line.row.text for line in captions if has_period_words(line.row.text))
        periods = [read_period(_joined(spanning, label), self.context, period_words) if label else None
                   for label in labels]
        titles = [line.row.text for line in reversed(self.above[:start])
                  if not line.row.text.startswith("(") and not has_period_words(line.row.text)
                  and not read_scale([line.row.text]).words and any(ch.isalpha() for ch in line.row.text)
                  and line.words <= CAPTION_WORDS and line.row.text not in self.running]
        # the nearest caption line, unless another names a primary statement: a statement's title often
        # stands above the company's name ("Consolidated Statements of Cash Flows" / "ACME INC. AND SUBSIDIARIES")
        title = next((t for t in titles if statement_of(t)), titles[0] if titles else "")
        self.tables_on_page += 1
        table = _Table(f"{first.row.page}.{self.tables_on_page}", title, scale, periods, anchors,
                       first.positioned and all(a.box is not None for a in anchors))
        for line in inside:
            if line.label:
                table.open_section(line.label, line.indent, lead_in=line.frags[0].text.endswith(":"))
        return table

    def _emit(self, line: _Line, values: list[tuple[Value, _Frag, Box | None]]) -> None:
        table = self.table
        assert table is not None
        label = line.label
        section = table.path_of(label, line.indent)
        row_box = _union(list(line.row.boxes))
        for i, (value, _frag, box) in enumerate(values):
            column = table.column(line, values, i)
            if not label and (column is None or len(values) < min(2, len(table.anchors))):
                continue  # a lone number without a label: a page number, a footnote's
            period = table.periods[column] if column is not None and column < len(table.periods) else None
            scale, unit = cell_unit(label, section, value, table.scale)
            self.cells.append(CellRow(
                page=line.row.page, table_key=table.key, row_index=line.index, column=column, label=label,
                section=section, caption=table.caption,
                period_label=period.label if period else (table.anchors[column].text if column is not None
                                                           and column < len(table.anchors) else ""),
                period_kind=period.kind if period else None, fiscal_year=period.fiscal_year if period else None,
                quarter=period.quarter if period else None, period_end=period.end if period else None,
                months=period.months if period else None, scale=scale, unit=unit, scale_words=table.scale.words,
                value_text=value.text, value=value.number, box=box, row_box=row_box))


def _running_rows(rows: Sequence[Row]) -> set[str]:
    """Rows printed on many pages (running headers and footers): never captions."""
    pages = {r.page for r in rows}
    seen = Counter(text for text, _page in {(r.text, r.page) for r in rows})
    return {t for t, n in seen.items() if n >= max(3, 0.2 * len(pages)) and not read_values(t)}


EDGE_ROWS = 2  # rows at a page's top or bottom that may be its running header or footer
CONTENTS_ROWS = 4  # a page with this many heading rows ending in rising page numbers is a table of contents
_NUMBERING = re.compile(r"[\d\W_]+")


def _page_numbers(rows: Sequence[Row], edges: set[int], enough: float) -> dict[int, int]:
    """{edge row index: the page number it prints}, where the number standing as a cell of its own at the
    row's start or end ("35", "8.3. I18N & L10N FAQ for translators | 95", "96 | Chapter 8. ...") runs
    with the pages: the same offset from the page's index on many pages (front matter may be counted
    apart, so the offset need not be 0), and no greater than twice the pages (a year is no page number)."""
    pages = max((rows[i].page for i in edges), default=0)
    numbers: dict[int, list[int]] = {}
    for i in edges:
        if rows[i].boxes:  # a printed page's row (other formats' units are no pages: "Year | 2021" on a sheet)
            cells = [c.strip() for c in rows[i].text.split("|")]
            numbers[i] = [int(c) for c in {cells[0], cells[-1]} if c.isdigit() and 0 < int(c) <= 2 * pages]
    counts = Counter(offset for offset, _page in {(n - rows[i].page, rows[i].page)
                                                 for i, ns in numbers.items() for n in ns})
    running = {offset for offset, n in counts.items() if n >= enough}
    return {i: n for i, ns in numbers.items() for n in ns if n - rows[i].page in running}


def _page_furniture(rows: Sequence[Row]) -> tuple[set[int], int]:
    """Indexes of running headers and footers, and the highest page number the document may print (its
    last page's, where its pages are numbered). Furniture stands at a page's top or bottom on many pages:
    the same text but its numbers ("A Brief History of Debian | 2 / 21"), or a page number that runs with
    the pages beside whatever title the page is under ("8.3. I18N & L10N FAQ for translators | 95"). It
    is no table."""
    by_page: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_page.setdefault(row.page, []).append(i)
    edges = {i for indexes in by_page.values() for i in (*indexes[:EDGE_ROWS], *indexes[-EDGE_ROWS:])}
    shape = {i: _NUMBERING.sub(" ", rows[i].text).strip().lower() for i in edges}
    pages = Counter(text for text, _page in {(shape[i], rows[i].page) for i in edges} if text)
    enough = max(3, 0.2 * len(by_page))
    printed = _page_numbers(rows, edges, enough)
    last = max(by_page, default=0)
    last_printed = max((n + last - rows[i].page for i, n in printed.items()), default=last)
    return {i for i in edges if shape[i] and pages[shape[i]] >= enough} | set(printed), last_printed


def _contents_pages(cells: Sequence[CellRow]) -> set[int]:
    """Pages whose value rows are mostly one whole number each, rising down the page: a table of
    contents, whose numbers are the pages its headings start on, not figures of anything."""
    by_page: dict[int, dict[int, list[CellRow]]] = {}
    for c in cells:
        by_page.setdefault(c.page, {}).setdefault(c.row_index, []).append(c)
    out = set()
    for page, rows in by_page.items():
        numbers = [one[0].value for _, one in sorted(rows.items())
                   if len(one) == 1 and one[0].value_text.isdigit() and not one[0].unit]
        rising = sum(b >= a for a, b in zip(numbers, numbers[1:], strict=False))
        if len(numbers) >= CONTENTS_ROWS and len(numbers) >= 0.6 * len(rows) and rising >= 0.9 * (len(numbers) - 1):
            out.add(page)
    return out


def build_cells(parsed: Parsed, context: DocumentContext | None = None) -> list[CellRow]:
    """The value cells of every table in the document, page by page, in reading order; running headers
    and footers, tables of contents, a heading's number and an index's page references give none."""
    reader = _Reader(context, _running_rows(parsed.rows))
    furniture, last_page = _page_furniture(parsed.rows)
    by_page: dict[int, list[_Line]] = {}
    for index, row in enumerate(parsed.rows):
        if index in furniture:
            continue
        frags, positioned = _frags(row)
        by_page.setdefault(row.page, []).append(_Line(index, row, frags, positioned, last_page))
    for page in sorted(by_page):
        reader.page(by_page[page])
    contents = _contents_pages(reader.cells)
    return [c for c in reader.cells if c.page not in contents]


def chunk_ords(rows: Sequence[Row], children: Sequence[tuple[int, int, str]]) -> dict[int, int]:
    """{row index: ord of the first child chunk holding that row}, from (ord, page, text) of each child."""
    lines: dict[tuple[int, str], int] = {}
    for ord_, page, text in sorted(children):
        for line in text.split("\n"):
            lines.setdefault((page, line), ord_)
    return {i: lines[(r.page, r.text)] for i, r in enumerate(rows) if (r.page, r.text) in lines}


def table_cells(parsed: Parsed, context: DocumentContext | None,
                children: Sequence[tuple[int, int, str]]) -> list[CellRow]:
    """The document's cells, each linked to the child chunk ((ord, page, text) of each) holding its row."""
    ords = chunk_ords(parsed.rows, children)
    return [replace(c, child_ord=ords.get(c.row_index)) for c in build_cells(parsed, context)]
