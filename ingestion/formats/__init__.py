"""Every accepted format, parsed into rows on page-like units (ingestion/units.py).

`sniff` tells the format from the bytes; `parse_file` runs that format's parser. Both raise
IngestError with a reason a user can act on (UnsupportedFormat for what is not accepted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ingestion.errors import IngestError
from ingestion.formats.sniff import ACCEPTED, FORMATS, sniff
from ingestion.parse import OcrOptions
from ingestion.units import Parsed

__all__ = ["ACCEPTED", "FORMATS", "Limits", "parse_file", "preload", "sniff"]

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Limits:
    """Bounds one document's parse works within (Settings: OCR_*, OFFICE_MAX_UNPACKED_MB, SHEET_MAX_ROWS)."""

    ocr: OcrOptions = field(default_factory=OcrOptions)
    max_unpacked_mb: float = 200.0
    sheet_max_rows: int = 100_000

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        return cls(OcrOptions(**data["ocr"]), data["max_unpacked_mb"], data["sheet_max_rows"])


def preload(fmt: str) -> None:
    """Import what parsing `fmt` needs (the sandbox does so before it caps its memory)."""
    import lxml.etree  # noqa: F401 - every XML/HTML reader below sits on it

    if fmt == "pdf":
        import pymupdf  # noqa: F401
    elif fmt in ("docx", "pptx", "xlsx"):
        import docx  # noqa: F401
        import openpyxl  # noqa: F401
        import pptx  # noqa: F401

        from ingestion.formats import office  # noqa: F401
    else:
        import bs4  # noqa: F401
        import markdown_it  # noqa: F401

        from ingestion.formats import web  # noqa: F401


def parse_file(path: Path, fmt: str, limits: Limits, progress: Progress | None = None) -> Parsed:
    data = path.read_bytes()
    if fmt == "pdf":
        from ingestion.parse import parse_pdf

        return parse_pdf(data, ocr=limits.ocr, progress=progress)
    if fmt in ("docx", "pptx", "xlsx"):
        # the container is checked again here: the stored file is what gets parsed
        if sniff(data, max_unpacked_mb=limits.max_unpacked_mb) != fmt:
            raise IngestError(f"the stored file is no longer a {fmt} file; upload it again")
        from ingestion.formats import office

        try:
            if fmt == "docx":
                return office.parse_docx(path)
            if fmt == "pptx":
                return office.parse_pptx(path)
            return office.parse_xlsx(path, max_rows=limits.sheet_max_rows)
        except (IngestError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the libraries raise many types on damaged parts
            names = {"docx": "Word", "pptx": "PowerPoint", "xlsx": "Excel"}
            raise IngestError(f"the {names[fmt]} file is damaged and cannot be read: {exc}") from exc
    from ingestion.formats import web

    if fmt == "html":
        return web.parse_html(data)
    if fmt == "markdown":
        return web.parse_markdown(data)
    if fmt == "text":
        return web.parse_text(data)
    raise IngestError(f"unknown format {fmt!r}")
