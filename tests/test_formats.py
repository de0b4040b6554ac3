"""OCR of pages without a text layer (the packaged ONNX recogniser) and the parsing child's memory and
time bounds (formats told by content and parsed into units: tests/unit/test_formats.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest

from evals import pdfs
from ingestion.errors import IngestError
from ingestion.formats import Limits
from ingestion.parse import OcrOptions, parse_pdf
from ingestion.sandbox import extract
from tests.support import documents


def test_ocr_reads_a_page_without_text_layer_next_to_one_with_it() -> None:
    original = pdfs.text_pdf(["Aurora Widgets sold 7,450 turbines in fiscal 2023 for 412 million dollars.",
                              "The second page keeps its text layer."])
    doc = parse_pdf(pdfs.rasterised(original, {1}))
    first, second = doc.units
    assert first.ocr and not second.ocr
    assert "7,450 turbines" in first.text and "412 million" in first.text
    assert second.text == "The second page keeps its text layer."
    recognised = [r for r in doc.rows if r.page == 1]
    x0, y0, x1, y1 = recognised[0].boxes[0]  # where the line is on the page, in points
    assert 60 < x0 < 90 and 60 < y0 < 90 and x1 > x0 + 200 and y0 < y1 < y0 + 30


def test_ocr_keeps_a_table_a_table_and_can_be_switched_off() -> None:
    scan = pdfs.rasterised(pdfs.table_page())
    rows = parse_pdf(scan).rows
    assert "Purchases of property, plant and equipment | (1,577) | (1,373)" in [r.text for r in rows]
    assert len({r.table for r in rows[1:]}) == 1 and rows[1].table is not None
    with pytest.raises(IngestError, match="OCR is switched off"):
        parse_pdf(scan, ocr=OcrOptions(enabled=False))


def test_ocr_past_its_time_budget_fails_with_the_reason() -> None:
    """Issue 41: two image-only pages held the only ingestion thread 227 s, bounded only by the job's
    hour. OCR_MAX_SECONDS bounds one document's OCR, checked before each page."""
    scan = pdfs.rasterised(pdfs.table_page())
    doc = pymupdf.open(stream=scan, filetype="pdf")
    for _ in range(2):
        doc.insert_pdf(pymupdf.open(stream=scan, filetype="pdf"))
    with pytest.raises(IngestError, match=r"longer than 0\.01 s \(OCR_MAX_SECONDS\) with 1 of 3 pages recognised"):
        parse_pdf(doc.tobytes(), ocr=OcrOptions(max_seconds=0.01))


def test_too_many_pages_to_recognise_fail_at_once() -> None:
    """500 image-only pages, over the OCR page limit: refused before any page is recognised."""
    doc = pymupdf.open()
    stamp = pymupdf.open()
    stamp.new_page(width=200, height=50).insert_text((10, 30), "scanned", fontsize=14)
    png = stamp[0].get_pixmap(dpi=72).tobytes("png")
    xref = 0
    for _ in range(500):
        page = doc.new_page()
        xref = page.insert_image(page.rect, stream=png) if not xref else page.insert_image(page.rect, xref=xref)
    data = doc.tobytes(garbage=3)
    started = time.monotonic()
    with pytest.raises(IngestError, match="500 pages have no text layer and need OCR; at most 200"):
        parse_pdf(data, ocr=OcrOptions(max_pages=200))
    assert time.monotonic() - started < 60  # text-layer checks only, no recognition


def test_sandbox_bounds_time_and_memory_and_reports_progress(tmp_path: Path) -> None:
    sheet = tmp_path / "big.xlsx"
    sheet.write_bytes(documents.big_sheet(10_000))
    seen: list[tuple] = []
    started = time.monotonic()
    book = extract(sheet, "xlsx", Limits(), timeout_s=300, memory_mb=2048, progress=lambda *a: seen.append(a))
    assert time.monotonic() - started < 120
    assert len(book.rows) == 10_000 and len(book.units) == 100
    assert book.units[-1].label == "sheet Orders, rows 9901-10000"
    with pytest.raises(IngestError, match="longer than 0.5 s"):
        extract(sheet, "xlsx", Limits(), timeout_s=0.5, memory_mb=2048)
    huge = tmp_path / "huge.docx"  # 150 MB of text in one paragraph, within the unpack limit, ~200 KB packed
    huge.write_bytes(documents.huge_paragraph_docx(150))
    with pytest.raises(IngestError, match="more than 700 MB of memory"):
        extract(huge, "docx", Limits(), timeout_s=300, memory_mb=700)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(pdfs.rasterised(pdfs.text_pdf(["A scanned page with a few words on it."])))
    doc = extract(scan, "pdf", Limits(), timeout_s=300, memory_mb=4096, progress=lambda *a: seen.append(a))
    assert doc.units[0].ocr and "scanned page" in doc.units[0].text
    assert ("ocr", 1, 1) in seen and ("parsing", 1, 1) in seen
