"""Heading sections as page-like units (Word, HTML, Markdown).

A document is a list of blocks (headings, paragraphs, table rows). Each heading opens a section
numbered by its depth (2.1 is the first sub-section of the second section), unless its text
carries its own number ("3.2 Results" is section 3.2). Text before the first heading is the
"beginning"; a document without headings is cut into parts. A section longer than SECTION_CHARS
is cut into parts as well, so a unit stays something a person can read on one screen or two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingestion.units import Parsed, UnitBuilder

SECTION_CHARS = 6000
TITLE_CHARS = 120
OWN_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")


@dataclass(frozen=True)
class Heading:
    level: int  # 1 = top
    text: str


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class TableRow:
    cells: list[str]
    table: int  # rows of one table share the number (within the document)


Block = Heading | Para | TableRow


def clean(text: str) -> str:
    return " ".join(text.replace("\x00", " ").split())


def build_sections(blocks: list[Block], fmt: str) -> Parsed:
    out = UnitBuilder()
    has_headings = any(isinstance(b, Heading) and clean(b.text) for b in blocks)
    label, title, part = ("beginning" if has_headings else "part 1"), "", 1
    out.start(label, title)
    stack: list[int] = []  # heading levels open above the current section
    counters: list[int] = []
    tables: dict[int, int] = {}
    for block in blocks:
        if isinstance(block, Heading):
            text = clean(block.text)
            if not text:
                continue
            while stack and stack[-1] >= block.level:
                stack.pop()
            stack.append(block.level)
            depth = len(stack)
            counters = [*counters[:depth], *([0] * max(0, depth - len(counters)))][:depth]
            counters[depth - 1] += 1
            own = OWN_NUMBER.match(text)
            number = own.group(1) if own else ".".join(map(str, counters))
            label, title, part = f"section {number}", text[:TITLE_CHARS], 1
            out.start(label, title)
            out.add(text)
            continue
        if out.chars > SECTION_CHARS:  # a long section goes on in a new unit with the same title
            part += 1
            base = label if has_headings else "part"
            out.start(f"{base}, part {part}" if has_headings else f"{base} {part}", title)
        if isinstance(block, TableRow):
            table = tables.setdefault(block.table, out.new_table())
            out.add(" | ".join(clean(c) for c in block.cells), table)
        else:
            out.add(block.text)
    return out.parsed(fmt)
