"""HTML, Markdown and plain text.

HTML goes through BeautifulSoup on lxml's parser, which builds a tree and nothing more: no script
runs, no stylesheet, image or frame is fetched (nothing here opens a URL), and script, style,
template, frame and embedded-object contents are dropped before any text is read. Markdown is
rendered to HTML by markdown-it-py (CommonMark plus tables) and read the same way. Both are cut
into heading sections (ingestion/formats/sections.py). Plain text is cut into runs of lines at
blank lines, cited by line range ("lines 120-164").
"""

from __future__ import annotations

from bs4 import BeautifulSoup, CData, Comment, Declaration, Doctype, ProcessingInstruction, Tag
from bs4.element import NavigableString  # bs4 does not re-export it in __all__

from ingestion.errors import IngestError
from ingestion.formats.base import decode_text
from ingestion.formats.sections import Block, Heading, Para, TableRow, build_sections, clean
from ingestion.units import Parsed, UnitBuilder

DROP = {"script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed", "applet",
        "svg", "math", "canvas", "video", "audio", "source", "track", "head", "nav", "button", "select",
        "input", "textarea", "link", "meta", "base"}
NOT_TEXT = (Comment, Doctype, Declaration, CData, ProcessingInstruction)
HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "pre", "ul", "ol",
          "li", "dl", "dt", "dd", "figure", "figcaption", "address", "details", "summary", "form", "fieldset",
          "hr", "caption", "center"}
TEXT_LINES_PER_UNIT = 80
TEXT_CHARS_PER_UNIT = 6000


class _Walker:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.inline: list[str] = []
        self.tables = 0

    def flush(self) -> None:
        text = clean(" ".join(self.inline))
        if text:
            self.blocks.append(Para(text))
        self.inline = []

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, NOT_TEXT):
                    self.inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower()
            if name in DROP:
                continue
            if name in HEADINGS:
                self.flush()
                self.blocks.append(Heading(HEADINGS[name], child.get_text(" ", strip=True)))
            elif name == "table":
                self.flush()
                self.table(child)
            elif name == "br":
                self.flush()
            elif name == "img":
                alt = clean(str(child.get("alt") or ""))
                if alt:
                    self.inline.append(f"[image: {alt}]")  # the alt text only; the image is never fetched
            elif name in BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            else:
                self.walk(child)

    def table(self, table: Tag) -> None:
        self.tables += 1
        number = self.tables
        for row in table.find_all("tr"):
            if row.find_parent("table") is not table:
                continue  # a nested table's rows belong to its cell's text
            cells = [cell.get_text(" ", strip=True) for cell in row.find_all(["td", "th"], recursive=False)]
            if any(cells):
                self.blocks.append(TableRow(cells, number))


def html_blocks(markup: str | bytes) -> list[Block]:
    soup = BeautifulSoup(markup, "lxml")
    walker = _Walker()
    walker.walk(soup.body or soup)
    walker.flush()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if title and not any(isinstance(b, Heading) for b in walker.blocks[:1]):
        walker.blocks.insert(0, Para(title))
    return walker.blocks


def parse_html(data: bytes) -> Parsed:
    text = decode_text(data)
    parsed = build_sections(html_blocks(text if text is not None else data), "html")
    if not parsed.rows:
        raise IngestError("the HTML page has no text to index")
    return parsed


def parse_markdown(data: bytes) -> Parsed:
    from markdown_it import MarkdownIt

    text = _text(data)
    # Raw HTML inside Markdown passes through to the HTML reader, which drops scripts like any other.
    markup = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    parsed = build_sections(html_blocks(markup), "markdown")
    if not parsed.rows:
        raise IngestError("the Markdown file has no text to index")
    parsed.format = "markdown"
    return parsed


def _text(data: bytes) -> str:
    text = decode_text(data)
    if text is None:
        raise IngestError("the file is not readable text (unknown encoding)")
    return text


def parse_text(data: bytes) -> Parsed:
    """Runs of lines, cut at a blank line once a run is long enough; cited as "lines a-b"."""
    lines = _text(data).splitlines()
    out = UnitBuilder()
    run: list[tuple[int, str]] = []
    chars = 0

    def close() -> None:
        nonlocal run, chars
        if run:
            out.start(f"lines {run[0][0]}-{run[-1][0]}")
            for _n, line in run:
                out.add(line)
            out.close()
        run, chars = [], 0

    for number, line in enumerate(lines, 1):
        blank = not line.strip()
        if blank and (len(run) >= TEXT_LINES_PER_UNIT or chars >= TEXT_CHARS_PER_UNIT / 2):
            close()
            continue
        if not blank:
            if chars + len(line) > TEXT_CHARS_PER_UNIT and run:
                close()
            run.append((number, line))
            chars += len(line) + 1
    close()
    parsed = out.parsed("text")
    if not parsed.rows:
        raise IngestError("the text file is empty (only blank lines)")
    return parsed
