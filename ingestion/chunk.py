"""Parent/child chunking.

Children (~220 word pieces plus a short heading, under MiniLM's 256 limit) never span a page and
overlap their neighbour by a few rows. Parents (~1,500 tokens) are runs of consecutive children
and carry their page range; the text a parent holds is the rows its children cover, once.
A table that fits is not split across children or parents.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ingestion.units import Box, Row

TokenCounter = Callable[[Sequence[str]], list[int]]

# A child's heading: the document's context (ingestion/context.py, ~10-20 tokens) and its page's
# title. CHILD_TOKENS (220) + 32 stays within MiniLM's 256 positions, [CLS] and [SEP] included.
HEADING_TOKENS = 32
# A row seen on this share of pages is a running header/footer, not a page title.
RUNNING_ROW_SHARE = 0.2


@dataclass
class Unit:
    """One row (or a piece of an over-long row) with its token count."""

    page: int
    text: str
    tokens: int
    table: int | None
    boxes: tuple[Box, ...] = ()


@dataclass
class Child:
    page: int
    start: int  # unit indices [start, end)
    end: int
    heading: str
    text: str
    tokens: int
    boxes: tuple[Box, ...] = ()  # line boxes of its rows on a PDF page, for highlighting a citation


@dataclass
class Parent:
    children: list[Child] = field(default_factory=list)
    page_start: int = 0
    page_end: int = 0
    text: str = ""
    tokens: int = 0


@dataclass
class Chunks:
    parents: list[Parent]

    @property
    def children(self) -> list[Child]:
        return [c for p in self.parents for c in p.children]


def _split_long(row: Row, tokens: int, limit: int) -> list[Unit]:
    """Split a row longer than `limit` tokens into word runs of roughly equal token counts."""
    if tokens <= limit:
        return [Unit(row.page, row.text, tokens, row.table, row.boxes)]
    words = row.text.split()
    pieces = math.ceil(tokens / limit) + 1  # +1: word-piece counts are uneven across words
    size = math.ceil(len(words) / pieces)
    per_piece = math.ceil(tokens / pieces)
    return [
        Unit(row.page, " ".join(words[i : i + size]), per_piece, row.table, row.boxes)
        for i in range(0, len(words), size)
    ]


def _page_titles(
    rows: Sequence[Row], count_tokens: TokenCounter, title: str, unit_titles: Mapping[int, str]
) -> dict[int, str]:
    """A short heading per page: the document title and the unit's own title (a slide's, a section's,
    a sheet's) or, on a PDF page, the page's first distinctive rows."""
    pages = {r.page for r in rows}
    seen_on = Counter(text for text, _page in {(r.text, r.page) for r in rows})
    running = {t for t, n in seen_on.items() if n >= max(3, RUNNING_ROW_SHARE * len(pages))}
    firsts: dict[int, list[str]] = {}
    for r in rows:
        chosen = firsts.setdefault(r.page, [])
        if len(chosen) < 2 and r.text not in running and any(ch.isalpha() for ch in r.text) and r.table is None:
            chosen.append(r.text)

    def head(page: int) -> str:
        own = unit_titles.get(page)
        if own:  # a unit's title that is the document's own title (its first heading) is said once
            return title if own == title else f"{title} — {own}"
        return " — ".join([title, *firsts.get(page, [])])

    heads = {page: head(page) for page in pages}
    counts = dict(zip(heads, count_tokens(list(heads.values())), strict=True))
    return {page: trim_heading(heads[page], n) for page, n in counts.items()}


def trim_heading(heading: str, tokens: int) -> str:
    """`heading` (of `tokens` word pieces) cut by words to the heading budget: a heading is context,
    not content, and its front (the document's context) is what is kept."""
    if tokens <= HEADING_TOKENS:
        return heading
    words = heading.split()
    return " ".join(words[: max(4, int(len(words) * HEADING_TOKENS / tokens))])


def chunk_rows(
    rows: Sequence[Row],
    count_tokens: TokenCounter,
    *,
    title: str,
    child_tokens: int = 220,
    overlap_tokens: int = 40,
    parent_tokens: int = 1500,
    unit_titles: Mapping[int, str] | None = None,
) -> Chunks:
    token_counts = count_tokens([r.text for r in rows])
    units: list[Unit] = []
    for row, n in zip(rows, token_counts, strict=True):
        units.extend(_split_long(row, n, child_tokens))
    headings = _page_titles(rows, count_tokens, title, unit_titles or {})
    table_tokens: Counter[int | None] = Counter()  # keyed by Unit.table
    for u in units:
        if u.table is not None:
            table_tokens[u.table] += u.tokens

    children: list[Child] = []

    def emit(start: int, end: int) -> None:
        page = units[start].page
        body = units[start:end]
        boxes = tuple(dict.fromkeys(b for u in body for b in u.boxes))  # a split row's pieces share its boxes
        children.append(
            Child(page, start, end, headings[page], "\n".join(u.text for u in body), sum(u.tokens for u in body),
                  boxes)
        )

    start = 0
    used = 0
    i = 0
    while i < len(units):
        u = units[i]
        new_page = i > start and u.page != units[start].page
        # Keep a table that fits in one child together: break before it rather than inside it.
        table_starts = u.table is not None and (i == 0 or units[i - 1].table != u.table)
        table_break = (
            table_starts and i > start and table_tokens[u.table] <= child_tokens
            and used + table_tokens[u.table] > child_tokens
        )
        if i > start and (new_page or used + u.tokens > child_tokens or table_break):
            emit(start, i)
            if new_page:
                start, used = i, 0
            else:
                # Overlap: carry the trailing rows (up to overlap_tokens) into the next child.
                back, carried = i, 0
                while back - 1 > start and carried + units[back - 1].tokens <= overlap_tokens:
                    back -= 1
                    carried += units[back].tokens
                start, used = back, carried
            continue
        used += u.tokens
        i += 1
    if start < len(units):
        emit(start, len(units))
    return Chunks(_group_parents(children, units, parent_tokens, table_tokens))


def _group_parents(
    children: list[Child], units: list[Unit], parent_tokens: int, table_tokens: Counter[int | None]
) -> list[Parent]:
    parents: list[Parent] = []
    current: list[Child] = []
    covered_to = 0  # units before this index are already in an earlier parent's (or this one's) text
    parent_from = 0  # first unit of the current parent's text (overlap rows stay with the earlier one)

    def tokens_of(child: Child, from_unit: int) -> int:
        return sum(u.tokens for u in units[max(child.start, from_unit) : child.end])

    def close() -> None:
        nonlocal current
        if not current:
            return
        first, last = parent_from, current[-1].end
        parts: list[str] = []
        page = None
        for u in units[first:last]:
            if page is not None and u.page != page:
                parts.append("")  # a blank line marks the page break
            parts.append(u.text)
            page = u.page
        parents.append(
            Parent(
                children=current,
                page_start=current[0].page,
                page_end=current[-1].page,
                text="\n".join(parts),
                tokens=sum(u.tokens for u in units[first:last]),
            )
        )
        current = []

    used = 0
    for child in children:
        added = tokens_of(child, covered_to)
        first_unit = units[child.start]
        starts_table = first_unit.table is not None and (
            child.start == 0 or units[child.start - 1].table != first_unit.table
        )
        fits_alone = starts_table and table_tokens[first_unit.table] <= parent_tokens
        table_break = fits_alone and used + table_tokens[first_unit.table] > parent_tokens
        if current and (used + added > parent_tokens or table_break):
            close()
            used = 0
        if not current:
            parent_from = max(child.start, covered_to)
            added = tokens_of(child, parent_from)
        current.append(child)
        used += added
        covered_to = child.end
    close()
    return parents
