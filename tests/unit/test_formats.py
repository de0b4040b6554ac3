"""Formats told by content, parsed into page-like units with the labels citations name; bad files end
with a clear reason (OCR and the parsing child's bounds: tests/test_formats.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals import pdfs
from ingestion.errors import IngestError, UnsupportedFormat
from ingestion.formats import Limits, parse_file, sniff
from ingestion.parse import garbled
from tests.support import documents


def parsed(tmp_path: Path, name: str, data: bytes, limits: Limits | None = None):
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


def test_garbled_text_layer_is_recognised_again() -> None:
    assert garbled(" ".join(chr(0xE000 + n) for n in range(40)))  # private-use codes: a font without a map
    assert garbled("!#$%& ()*+,-./:;<=>?@[]^_{|}~!#$%&()*+")
    assert not garbled("Net income | 5,363 | 4,869 ......................... 12")


def test_bad_office_files_get_a_reason(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="unpacks to 300 MB .* zip bomb"):
        sniff(documents.zip_bomb("xlsx", 300), "bomb.xlsx")
    broken = documents.corrupt(documents.docx_bytes(HANDBOOK_LONG))
    with pytest.raises(IngestError, match="Word file is damaged"):
        parsed(tmp_path, "broken.docx", broken)
    with pytest.raises(IngestError, match="more than 50 non-empty rows"):
        parsed(tmp_path, "rows.xlsx", documents.big_sheet(80), Limits(sheet_max_rows=50))


HANDBOOK_LONG = documents.HANDBOOK * 40
