"""Small real Office, web and text files made by the tests with the libraries that read them (no
binary fixtures in the repo), and bad ones: damaged, zip bombs, hostile HTML, a huge sheet."""

from __future__ import annotations

import io
import zipfile

HANDBOOK = [
    ("Title", "Aurora Widgets Employee Handbook"),
    ("Heading 1", "Working hours"),
    ("Normal", "The office opens at eight and the core hours run from ten to four."),
    ("Heading 2", "Remote work"),
    ("Normal", "Staff may work remotely on Fridays after their manager approves a written plan."),
    ("Heading 1", "Expenses"),
    ("Normal", "Travel expenses above 500 euros need a receipt scanned within thirty days."),
]


def docx_bytes(paragraphs: list[tuple[str, str]] = HANDBOOK, table: list[list[str]] | None = None) -> bytes:
    from docx import Document

    doc = Document()
    for style, text in paragraphs:
        doc.add_paragraph(text, style=style)
    if table:
        grid = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def pptx_bytes(slides: list[tuple[str, list[str]]], notes: dict[int, str] | None = None) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for n, (title, bullets) in enumerate(slides, 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1] if bullets else deck.slide_layouts[5])
        slide.shapes.title.text = title
        if bullets:
            body = slide.placeholders[1].text_frame
            body.text = bullets[0]
            for line in bullets[1:]:
                body.add_paragraph().text = line
        if notes and n in notes:
            slide.notes_slide.notes_text_frame.text = notes[n]
    # a picture-only slide keeps the numbering of the slides after it
    deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_shape(1, Inches(1), Inches(1), Inches(2), Inches(2))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def big_sheet(rows: int = 10_000) -> bytes:
    data: list[list[object]] = [["Order", "Region", "Product", "Units", "Revenue"]]
    regions = ["North", "South", "East", "West"]
    for n in range(1, rows):
        data.append([f"SO-{n:05d}", regions[n % 4], f"widget model {n % 37}", n % 90 + 1, round(n * 3.25, 2)])
    return xlsx_bytes({"Orders": data})


HOSTILE_HTML = """<!DOCTYPE html>
<html><head><title>Quarterly note</title>
<script>fetch("{url}/script-ran"); document.write("INJECTED BY SCRIPT");</script>
<link rel="stylesheet" href="{url}/style.css"><style>body {{ background: url({url}/bg.png) }}</style>
</head><body>
<h1>Results</h1>
<p>Aurora Widgets sold 7,450 turbines in the quarter.<img src="{url}/pixel.png" alt="sales chart"></p>
<iframe src="{url}/frame.html">frame text</iframe>
<h2>Outlook</h2>
<p>Management expects flat demand in the north.</p>
<table><tr><th>Region</th><th>Units</th></tr><tr><td>North</td><td>1,200</td></tr></table>
<object data="{url}/movie.swf">object text</object>
<noscript>enable scripts</noscript>
<script src="{url}/remote.js"></script>
</body></html>
"""

MARKDOWN = """# Release notes

Intro paragraph before any section.

## 2.1 Fixes

The importer no longer drops the last row of a sheet.

## Known issues

| Area | Status |
|------|--------|
| OCR  | slow on two cores |

<script>alert("markdown script")</script>
"""


def zip_bomb(kind: str = "docx", unpacked_mb: int = 300) -> bytes:
    """An Office-looking ZIP whose main part inflates to `unpacked_mb` of zeros (a few hundred KB packed)."""
    main = {"docx": "word/document.xml", "xlsx": "xl/workbook.xml", "pptx": "ppt/presentation.xml"}[kind]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with archive.open(main, "w", force_zip64=True) as part:
            block = bytes(1024 * 1024)
            for _ in range(unpacked_mb):
                part.write(block)
    return out.getvalue()


def corrupt(data: bytes) -> bytes:
    """The file with its middle overwritten: the ZIP directory still lists the parts, their data is noise."""
    middle = len(data) // 2
    return data[: middle - 2000] + bytes((i * 37) % 251 for i in range(4000)) + data[middle + 2000:]


def huge_paragraph_docx(megabytes: int = 150) -> bytes:
    """A real Word file whose one paragraph holds `megabytes` of text: within the unpack limit, small
    when packed, and more than a parser should be allowed to hold in memory."""
    base = zipfile.ZipFile(io.BytesIO(docx_bytes([("Normal", "placeholder")])))
    xml = base.read("word/document.xml").decode()
    words = "revenue grew " * (megabytes * 1024 * 1024 // 13)
    xml = xml.replace(">placeholder<", f">{words}<")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in base.infolist():
            data = xml.encode() if info.filename == "word/document.xml" else base.read(info.filename)
            archive.writestr(info.filename, data)
    return out.getvalue()
