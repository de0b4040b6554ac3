"""Parsing: page by page, row reading order, tables tagged (bad files' reasons, one of them after OCR:
tests/test_parse.py)."""

from __future__ import annotations

from evals import pdfs
from ingestion.parse import parse_pdf, visual_rows


def test_pages_are_kept_apart_and_one_based() -> None:
    parsed = parse_pdf(pdfs.text_pdf(["alpha page text", "beta page text", "gamma page text"]))
    assert parsed.pages == 3
    by_page = {r.page: r.text for r in parsed.rows}
    assert by_page == {1: "alpha page text", 2: "beta page text", 3: "gamma page text"}


def test_label_stays_beside_its_value_on_a_two_column_form() -> None:
    texts = [r.text for r in parse_pdf(pdfs.two_column_form()).rows]
    assert texts == ["Applicant name | Ada Lovelace", "Total revenue | $ 1,234", "Fiscal year | 2018"]


def test_table_rows_share_one_table_id() -> None:
    rows = parse_pdf(pdfs.table_page()).rows
    assert rows[0].table is None  # the title
    table_ids = {r.table for r in rows[1:]}
    assert len(table_ids) == 1 and None not in table_ids
    assert "Purchases of property, plant and equipment | (1,577) | (1,373)" in [r.text for r in rows]


def test_an_ocr_box_spanning_two_rows_does_not_chain_the_rows_below() -> None:
    """Recognised lines of a dense statement (8-point rows 5 points apart, boxes padded): the detector
    boxed two stacked values as one tall line, which joins the row it overlaps without stretching it."""
    lines = [
        (172.8, 225.6, 248.6, 233.3, "Purchases of common stock for treasury"), (367.2, 225.6, 383.0, 232.8, "(876.8)"),
        (420.5, 223.2, 445.0, 240.0, "(3.4) (1,195.8)"),  # two printed rows in one box
        (173.3, 230.9, 204.0, 237.6, "Dividends paid"), (363.4, 229.9, 383.5, 238.1, "(1,244.5)"),
        (172.8, 235.7, 290.4, 243.4, "Distributions to holders"), (367.2, 236.2, 383.0, 243.4, "(129.8)"),
    ]
    ocr_rows = [cells[0] for cells, _boxes in visual_rows(lines, recognised=True)]
    assert ocr_rows == ["Purchases of common stock for treasury", "Dividends paid", "Distributions to holders"]
    # a text layer's lines never span two rows: its grouping is left as it was
    assert len(visual_rows(lines)) == 1
