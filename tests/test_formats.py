"""Formats told by content, parsed into page-like units with the labels citations name; OCR of pages
without a text layer; bad files end with a clear reason within the parser's memory and time bounds."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest

from evals import pdfs
from ingestion.errors import IngestError, UnsupportedFormat
from ingestion.formats import Limits, parse_file, sniff
from ingestion.parse import OcrOptions, garbled, parse_pdf
from ingestion.sandbox import extract
from tests import documents


def parsed(tmp_path: Path, name: str, data: bytes, limits: Limits | None = None):  # noqa: ANN201
    fmt = sniff(data, name)
    path = tmp_path / name
    path.write_bytes(data)
    return parse_file(path, fmt, limits or Limits())


@pytest.mark.parametrize(("name", "data", "fmt"), [
    ("report.pdf", pdfs.text_pdf(["x"]), "pdf"),
    ("handbook.pdf", documents.docx_bytes(), "docx"),  # a Word file under a PDF name is a Word file
    ("deck", documents.pptx_bytes([("Plan", ["one"])]), "pptx"),
    ("book.bin", documents.xlsx_bytes({"S": [["a", 1]]}), "xlsx"),
    ("page.txt", b"<!DOCTYPE html><html><body><p>hi</p></body></html>", "html"),
    ("notes.md", b"# Title\n\ntext", "markdown"),
    ("notes.txt", b"# Title\n\ntext", "text"),
    ("latin1.txt", "Caf\xe9 cr\xe8me br\xfbl\xe9e, 3 \u20ac".encode("cp1252"), "text"),
    ("utf16.txt", "R\xe9sum\xe9 in UTF-16".encode("utf-16"), "text"),
])
def test_format_is_told_by_content(name: str, data: bytes, fmt: str) -> None:
    assert sniff(data, name) == fmt


@pytest.mark.parametrize(("data", "words"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "not a supported format"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "legacy binary Office"),
    (b"\x7fELF\x02\x01\x01" + bytes(300), "not a supported format"),
])
def test_everything_else_is_refused(data: bytes, words: str) -> None:
    with pytest.raises(UnsupportedFormat, match=words):
        sniff(data, "renamed.docx")


def test_a_zip_that_is_no_office_file_is_refused() -> None:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("photos/cat.jpg", b"\xff\xd8\xff" + bytes(100))
    with pytest.raises(UnsupportedFormat, match="not a Word, PowerPoint or Excel"):
        sniff(out.getvalue(), "cat.docx")


def test_word_sections_are_units_named_by_number(tmp_path: Path) -> None:
    doc = parsed(tmp_path, "h.docx", documents.docx_bytes(table=[["Item", "Cost"], ["Laptop", "1,200"]]))
    assert [(u.label, u.title) for u in doc.units] == [
        ("beginning", ""), ("section 1", "Working hours"), ("section 1.1", "Remote work"), ("section 2", "Expenses")]
    expenses = doc.units[3]
    assert "receipt scanned within thirty days" in expenses.text and "Laptop | 1,200" in expenses.text
    table_rows = [r for r in doc.rows if r.table is not None]
    assert [r.text for r in table_rows] == ["Item | Cost", "Laptop | 1,200"] and {r.page for r in table_rows} == {4}


def test_slides_are_units_in_deck_order_with_notes(tmp_path: Path) -> None:
    deck = parsed(tmp_path, "d.pptx", documents.pptx_bytes(
        [("Strategy 2024", ["Grow exports", "Hire 40 engineers"]), ("Revenue", ["Up 12%"])],
        notes={2: "Mention the euro effect"}))
    assert [(u.page, u.label, u.title) for u in deck.units] == [
        (1, "slide 1", "Strategy 2024"), (2, "slide 2", "Revenue"), (3, "slide 3", "")]
    assert deck.units[1].text.splitlines() == ["Revenue", "Up 12%", "Notes: Mention the euro effect"]


def test_sheets_are_units_and_long_sheets_blocks_of_rows(tmp_path: Path) -> None:
    book = parsed(tmp_path, "s.xlsx", documents.xlsx_bytes({
        "Revenue": [["Region", "Q1", "Q2"], ["North", 1200, 1350.5], ["South", 900, None]],
        "Empty": [],
        "Orders": [["Order", "Units"], *[[f"SO-{n}", n] for n in range(1, 250)]]}))
    labels = [u.label for u in book.units]
    assert labels == ["sheet Revenue", "sheet Orders, rows 1-100", "sheet Orders, rows 101-200",
                      "sheet Orders, rows 201-250"]
    assert book.units[0].text.splitlines() == ["Region | Q1 | Q2", "North | 1200 | 1350.5", "South | 900"]
    assert all(u.title == "sheet Orders — Order | Units" for u in book.units[1:])  # the header goes with each block


def test_html_keeps_text_and_drops_scripts_frames_and_objects(tmp_path: Path) -> None:
    page = parsed(tmp_path, "p.html", documents.HOSTILE_HTML.format(url="http://127.0.0.1:9").encode())
    text = "\n".join(u.text for u in page.units)
    assert [u.label for u in page.units] == ["section 1", "section 1.1"]
    assert "7,450 turbines" in text and "[image: sales chart]" in text and "North | 1,200" in text
    for hidden in ("INJECTED", "fetch", "frame text", "object text", "enable scripts", "background"):
        assert hidden not in text


def test_markdown_sections_tables_and_raw_html(tmp_path: Path) -> None:
    md = parsed(tmp_path, "n.md", documents.MARKDOWN.encode())
    assert [(u.label, u.title) for u in md.units] == [
        ("section 1", "Release notes"), ("section 2.1", "2.1 Fixes"), ("section 1.2", "Known issues")]
    assert "OCR | slow on two cores" in md.units[2].text and "alert" not in md.units[2].text


def test_text_is_cut_into_line_ranges(tmp_path: Path) -> None:
    body = "\n\n".join(f"Paragraph {n} about topic {n}.\nIt has a second line." for n in range(1, 61))
    doc = parsed(tmp_path, "t.txt", body.encode())
    assert doc.units[0].label == "lines 1-119" and doc.units[-1].label.endswith("-179")
    assert "Paragraph 60 about topic 60." in doc.units[-1].text


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


def test_garbled_text_layer_is_recognised_again() -> None:
    assert garbled(" ".join(chr(0xE000 + n) for n in range(40)))  # private-use codes: a font without a map
    assert garbled("!#$%& ()*+,-./:;<=>?@[]^_{|}~!#$%&()*+")
    assert not garbled("Net income | 5,363 | 4,869 ......................... 12")


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


def test_bad_office_files_get_a_reason(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="unpacks to 300 MB .* zip bomb"):
        sniff(documents.zip_bomb("xlsx", 300), "bomb.xlsx")
    broken = documents.corrupt(documents.docx_bytes(HANDBOOK_LONG))
    with pytest.raises(IngestError, match="Word file is damaged"):
        parsed(tmp_path, "broken.docx", broken)
    with pytest.raises(IngestError, match="more than 50 non-empty rows"):
        parsed(tmp_path, "rows.xlsx", documents.big_sheet(80), Limits(sheet_max_rows=50))


HANDBOOK_LONG = documents.HANDBOOK * 40


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
