"""Small real PDFs made with PyMuPDF, for tests and the load test (no binary fixtures in the repo)."""

from __future__ import annotations

import pymupdf

LOREM = (
    "The company designs industrial adhesives and sells them through distributors in many regions. "
    "Revenue grew because of strong demand for coated abrasives and filtration products. "
)

# The sentences of the 8-page "Aurora Widgets" report (long_report(AURORA_TOPICS, pages_per_topic=2)):
# one fact per topic, two pages each, so a question about one fact has one right page pair.
AURORA_TOPICS = [
    "Aurora Widgets reported total revenue of 412 million dollars in fiscal 2023",
    "Aurora Widgets employed 5,300 people at the end of fiscal 2023",
    "Capital expenditures on the new Leeds factory were 75 million dollars",
    "The board declared a quarterly dividend of 18 cents per share",
]


def text_pdf(pages: list[str]) -> bytes:
    """One page per string, wrapped into the page's text box."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=612, height=792)
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 740), text, fontsize=9)
    data = doc.tobytes()
    doc.close()
    return data


def long_report(topics: list[str], pages_per_topic: int = 2) -> bytes:
    """A multi-page report: each page repeats a distinctive topic sentence over filler text."""
    pages = []
    for topic in topics:
        for n in range(pages_per_topic):
            pages.append(f"{topic} (part {n + 1}).\n" + (LOREM + topic + ". ") * 12)
    return text_pdf(pages)


def two_column_form() -> bytes:
    """A form: labels on the left, values far to the right on the same lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    rows = [("Applicant name", "Ada Lovelace"), ("Total revenue", "$ 1,234"), ("Fiscal year", "2018")]
    y = 100
    for label, value in rows:
        page.insert_text((72, y), label, fontsize=11)
        page.insert_text((400, y), value, fontsize=11)
        y += 40
    data = doc.tobytes()
    doc.close()
    return data


def table_page() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 80), "Consolidated Statement of Cash Flows", fontsize=12)
    y = 120
    for label, a, b in [("(Millions)", "2018", "2017"), ("Net income", "5,363", "4,869"),
                        ("Purchases of property, plant and equipment", "(1,577)", "(1,373)"),
                        ("Dividends paid", "(3,193)", "(2,803)")]:
        page.insert_text((72, y), label, fontsize=10)
        page.insert_text((400, y), a, fontsize=10)
        page.insert_text((480, y), b, fontsize=10)
        y += 18
    data = doc.tobytes()
    doc.close()
    return data


def encrypted_pdf() -> bytes:
    doc = pymupdf.open(stream=text_pdf(["secret plans for the quarter"]), filetype="pdf")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="user")
    doc.close()
    return data


def image_only_pdf() -> bytes:
    """A page with drawings but no text layer, like a scan."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    data = doc.tobytes()
    doc.close()
    return data


def rasterised(data: bytes, pages: set[int] | None = None, dpi: int = 150) -> bytes:
    """The PDF with the given 1-based pages (all when None) replaced by an image of themselves."""
    from evals.common import rasterise

    return rasterise(data, pages, dpi)
