"""What a format is: the facts each format module declares once, and what sniffing hands to them.

A format module (ingestion/formats/pdf.py, docx.py, ...) declares one `Format`; ingestion/formats/
registry.py lists them, with the `Refusal`s, in sniffing order. Everything else (the sniffing
dispatch, stored file names, the file and page routes' media types, GET /api/formats and the web
app's upload list) reads the registry, so adding a format is its module and one line there.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ingestion.errors import IngestError
from ingestion.parse import OcrOptions
from ingestion.units import Parsed

SNIFF_BYTES = 8192
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Limits:
    """Bounds one document's parse works within (Settings: OCR_*, OFFICE_MAX_UNPACKED_MB, SHEET_MAX_ROWS,
    ROW_MAX_CHARS, DOCUMENT_MAX_CHARS)."""

    ocr: OcrOptions = field(default_factory=OcrOptions)
    max_unpacked_mb: float = 200.0
    sheet_max_rows: int = 100_000
    row_max_chars: int = 100_000
    document_max_chars: int = 30_000_000

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        return cls(OcrOptions(**data["ocr"]), **{k: v for k, v in data.items() if k != "ocr"})

    def check(self, parsed: Parsed) -> Parsed:
        """The parsed text within its bounds (in the parsing process, under its memory cap), or an
        IngestError saying which: a cell, line or paragraph that unpacks to megabytes would otherwise
        be tokenised and chunked in the server's own process."""
        total = 0
        for row in parsed.rows:
            if len(row.text) > self.row_max_chars:
                raise IngestError(f"a line, cell or paragraph of part {row.page} holds {len(row.text):,} characters, "
                                  f"more than ROW_MAX_CHARS ({self.row_max_chars:,}) allows")
            total += len(row.text)
        if total > self.document_max_chars:
            raise IngestError(f"the document holds {total:,} characters of text, more than DOCUMENT_MAX_CHARS "
                              f"({self.document_max_chars:,}) allows")
        return parsed


PIECE = 1 << 20  # bytes decoded at a time when a file is checked for text


def _pieces(data: bytes, encoding: str) -> Iterator[str]:
    """`data` decoded as `encoding` a piece at a time (UnicodeDecodeError, LookupError as a decode
    would raise): no single call holds the interpreter lock for the whole file, as one `decode` of a
    50 MB upload did for 50 ms, every other request's time (docs/protection.md#bounded-work)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    view = memoryview(data)
    for start in range(0, max(len(data), 1), PIECE):
        yield decoder.decode(view[start:start + PIECE], final=start + PIECE >= len(data))


def _decoded(data: bytes, encoding: str, whole: bool) -> str | None:
    """All of `data` decoded (`whole`: in one call, for a parser, which runs in its own process), or
    only its first SNIFF_BYTES characters though every piece is checked (sniffing, in the server's);
    None when it does not decode."""
    try:
        if whole:
            return data.decode(encoding)
        head = ""
        for piece in _pieces(data, encoding):
            if len(head) < SNIFF_BYTES:
                head += piece[:SNIFF_BYTES - len(head)]
    except (UnicodeDecodeError, LookupError):
        return None
    return head


def _text(data: bytes, whole: bool) -> str | None:
    for bom, encoding in BOMS:
        if data.startswith(bom):
            return _decoded(data, encoding, whole)
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return None
    text = _decoded(data, "utf-8", whole)
    if text is None:
        from charset_normalizer import from_bytes  # only text that is not UTF-8 needs the guesser

        best = from_bytes(data[: 1024 * 1024]).best()
        if best is None or best.encoding is None:
            return None
        text = _decoded(data, best.encoding, whole)
        if text is None:
            return None
    sample = text[:SNIFF_BYTES]
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\v\x1b")
    return text if controls <= 0.01 * max(len(sample), 1) else None


def decode_text(data: bytes) -> str | None:
    """The text of `data` when it is text (a BOM, UTF-8, or a confident guess), else None."""
    return _text(data, whole=True)


def text_head(data: bytes) -> str | None:
    """The first SNIFF_BYTES characters of `data` when decode_text would find it text, else None,
    without building the whole text (what sniffing needs)."""
    return _text(data, whole=False)


def or_list(words: Sequence[str]) -> str:
    """"a, b or c"."""
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


def might_be_text(head: bytes) -> bool:
    """Whether a file's first bytes may begin text (UTF-16 holds NULs; any other text holds none)."""
    return head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" not in head


def is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGIC)


class Sample:
    """One file being sniffed. What several rules read (its text, its ZIP directory) is worked out
    once, when the first rule asks."""

    def __init__(self, data: bytes, name: str = "", *, max_unpacked_mb: float = 200) -> None:
        self.data = data
        self.head = data[:SNIFF_BYTES]
        self.name = name.lower()
        self.max_unpacked_mb = max_unpacked_mb

    def named(self, suffixes: Sequence[str]) -> bool:
        return self.name.endswith(tuple(suffixes))

    @cached_property
    def text(self) -> str | None:
        """The first SNIFF_BYTES characters when the whole file is text (base.text_head), else None."""
        return text_head(self.data)

    @cached_property
    def zip_entries(self) -> list[zipfile.ZipInfo] | None:
        """The ZIP container's entries (None: not a ZIP); IngestError when its directory is unreadable."""
        if not is_zip(self.head):
            return None
        try:
            return zipfile.ZipFile(io.BytesIO(self.data)).infolist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise IngestError(f"the Office file is damaged (its ZIP container cannot be read: {exc})") from None


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Format:
    """Everything the system knows about one accepted format, declared once."""

    name: str  # stored in documents.format and used in every API: never renamed
    label: str  # what a person calls it ("Word"): the web app's hint, parse errors
    accepted: str  # how "accepted: ..." lists name it ("Word (.docx)")
    # The first names the stored file ({hash}.{suffix without the dot}: never changed, files on disk
    # carry it); all of them are offered by the web app's file picker.
    suffixes: tuple[str, ...]
    media_type: str  # served by GET /api/documents/{id}/file and stored with the file in Supabase
    unit: str  # what one page-like unit is ("page", "slide", "sheet", "section", "lines"): its labels start so
    sniff: Callable[[Sample], bool]  # the whole file is this format (IngestError: it is, but unusable)
    might_be: Callable[[bytes], bool]  # the first bytes of an upload may begin this format
    parse: Callable[[Path, bytes, Limits, Progress | None], Parsed]
    preload: Callable[[], None] = _nothing  # imports its parser needs, before the sandbox caps memory
    check: Callable[[bytes], None] | None = None  # cheap checks before the file is stored (IngestError)
    precheck: Callable[[bytes], object] | None = None  # checks an upload answers at once, opening the file
    limits: tuple[str, ...] = ()  # the Settings fields that bound its parse (reported by GET /api/formats)
    container: str = ""  # "zip": its files are ZIP packages (a ZIP that no such format claims is refused)
    page_images: bool = False  # GET /api/documents/{id}/pages/{n}.png can draw its units


@dataclass(frozen=True)
class Refusal:
    """A sniffing rule that turns a file away with a reason, at its place in the order."""

    name: str
    matches: Callable[[Sample], bool]
    what: Callable[[Sequence[Format]], str]  # the reason, given the registered formats
    early: Callable[[bytes], bool] | None = None  # the first bytes already justify it (None: needs the whole file)
