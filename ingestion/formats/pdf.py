"""PDF: told by its `%PDF-` header, read by PyMuPDF (pages needing it recognised by OCR), a unit per page."""

from __future__ import annotations

from pathlib import Path

from ingestion.formats.base import Format, Limits, Progress, Sample
from ingestion.parse import check_pdf_bytes, parse_pdf, precheck_pdf
from ingestion.units import Parsed


def might_be(head: bytes) -> bool:
    return head[:1024].lstrip().startswith(b"%PDF-")


def sniff(sample: Sample) -> bool:
    return might_be(sample.head)


def parse(path: Path, data: bytes, limits: Limits, progress: Progress | None) -> Parsed:
    return parse_pdf(data, ocr=limits.ocr, progress=progress)


def preload() -> None:
    import pymupdf  # noqa: F401 - loaded before the sandbox caps memory


FORMAT = Format(
    name="pdf", label="PDF", accepted="PDF", suffixes=(".pdf",), media_type="application/pdf", unit="page",
    sniff=sniff, might_be=might_be, parse=parse, preload=preload, check=check_pdf_bytes, precheck=precheck_pdf,
    limits=("ocr", "ocr_dpi", "ocr_max_pages", "ocr_max_seconds"), page_images=True,
)
