"""Which format a file is, from its bytes: the name only tells Markdown from plain text.

PDF by its header; Word, PowerPoint and Excel by the main part inside the ZIP container (a renamed
ZIP, a legacy binary .doc/.xls or an image is refused); HTML by its markup; anything else that
decodes as text is plain text (or Markdown, when the name says so).
"""

from __future__ import annotations

import codecs
import io
import zipfile

from ingestion.errors import IngestError, UnsupportedFormat

FORMATS = ("pdf", "docx", "pptx", "xlsx", "html", "markdown", "text")
ACCEPTED = "PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown or plain text"
SNIFF_BYTES = 8192
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# The part that makes an Office Open XML package a document, a deck or a workbook.
MAIN_PARTS = {"word/document.xml": "docx", "ppt/presentation.xml": "pptx", "xl/workbook.xml": "xlsx"}
HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<meta ", b"<title")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def refuse(what: str) -> UnsupportedFormat:
    return UnsupportedFormat(f"{what}; accepted: {ACCEPTED}")


def office_kind(data: bytes, max_unpacked_mb: float) -> str:
    """docx/pptx/xlsx for an Office Open XML package whose parts unpack within the limit."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise IngestError(f"the Office file is damaged (its ZIP container cannot be read: {exc})") from None
    names = {i.filename for i in infos}
    kind = next((k for part, k in MAIN_PARTS.items() if part in names), None)
    if kind is None or "[Content_Types].xml" not in names:
        raise refuse("a ZIP archive that is not a Word, PowerPoint or Excel file")
    # Declared sizes bound what zipfile will inflate, so summing them catches a zip bomb before any
    # part is read (a part that inflates past its declared size fails its read).
    unpacked = sum(i.file_size for i in infos)
    if unpacked > max_unpacked_mb * 1024 * 1024 or len(infos) > 20_000:
        raise IngestError(
            f"the {kind} file unpacks to {unpacked / 2**20:,.0f} MB in {len(infos):,} parts, over the "
            f"{max_unpacked_mb:g} MB limit (OFFICE_MAX_UNPACKED_MB); a file this size is a zip bomb or needs splitting"
        )
    if any(i.flag_bits & 0x1 for i in infos):
        raise IngestError(f"the {kind} file is encrypted (password protected); upload a decrypted copy")
    return kind


def decode_text(data: bytes) -> str | None:
    """The text of `data` when it is text (a BOM, UTF-8, or a confident guess), else None."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                return None
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(data[: 1024 * 1024]).best()
        if best is None or best.encoding is None:
            return None
        try:
            text = data.decode(best.encoding)
        except (UnicodeDecodeError, LookupError):
            return None
    sample = text[:SNIFF_BYTES]
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\v\x1b")
    return text if controls <= 0.01 * max(len(sample), 1) else None


def looks_like_html(head: bytes) -> bool:
    lowered = head.lstrip().lower()
    return lowered.startswith((b"<!doctype html", b"<html")) or any(m in lowered[:2048] for m in HTML_MARKERS)


def sniff(data: bytes, name: str = "", *, max_unpacked_mb: float = 200) -> str:
    """The format of `data` (one of FORMATS); UnsupportedFormat for anything else."""
    if not data:
        raise IngestError("the file is empty")
    head = data[:SNIFF_BYTES]
    if head[:1024].lstrip().startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(ZIP_MAGIC):
        return office_kind(data, max_unpacked_mb)
    if head.startswith(OLE2_MAGIC):
        raise refuse("a legacy binary Office file (.doc/.xls/.ppt); save it in the current format")
    text = decode_text(data)
    if text is None:
        raise refuse("not a supported format")
    lower = name.lower()
    if looks_like_html(text[:SNIFF_BYTES].encode("utf-8", "replace")) or lower.endswith(HTML_SUFFIXES):
        return "html"
    return "markdown" if lower.endswith(MARKDOWN_SUFFIXES) else "text"


def early_refusal(head: bytes) -> UnsupportedFormat | None:
    """The refusal a file's first bytes already justify while an upload streams in (None: read it all
    and check it in full)."""
    if head[:1024].lstrip().startswith(b"%PDF-") or head.startswith(ZIP_MAGIC):
        return None
    if head.startswith(OLE2_MAGIC):
        return refuse("a legacy binary Office file (.doc/.xls/.ppt); save it in the current format")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" not in head:
        return None
    return refuse("not a supported format")
