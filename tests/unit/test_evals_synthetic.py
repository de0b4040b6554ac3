"""The synthetic question sets' shared row rules (evals/synthetic.py, used by evals/synthetic_kinds.py),
over a statement page as the product's parser hands it (ingestion.units.Parsed)."""

from __future__ import annotations

import random

from evals.synthetic import candidates, header_years, loose_years, rows_with_years
from evals.synthetic_kinds import annual_questions, quarter_questions
from ingestion.units import PageUnit, Parsed, Row

PAGE = ["Consolidated Statements of Operations", "2022 | 2021", "Product revenue | $ | 8,120 | $ | 7,410",
        "Cost of sales | (5,002) | (4,711)", "Total revenue | 8,120 | 7,410", "Research and development | 0 | 311"]
QUARTER = ["Three months | Six months", "2023 | 2022 | 2023 | 2022", "Product revenue | 2,101 | 1,950 | 4,020 | 3,870"]


def parsed(*pages: list[str]) -> Parsed:
    return Parsed("pdf", [PageUnit(n, f"page {n}") for n in range(1, len(pages) + 1)],
                  [Row(n, text, None) for n, page in enumerate(pages, 1) for text in page])


def test_header_years_are_distinct_and_loose_years_may_repeat() -> None:
    assert header_years(["2022", "2021"]) == loose_years(["2022", "2021"]) == ["2022", "2021"]
    assert header_years(["2023", "2022", "2023", "2022"]) == []
    assert loose_years(["2023", "2022", "2023", "2022"]) == ["2023", "2022", "2023", "2022"]


def test_statement_rows_give_each_years_value_but_totals_and_zeros() -> None:
    filing = parsed(PAGE)
    assert [(c["label"], c["year"], c["value"]) for c in candidates(filing)] == [
        ("Product revenue", "2022", "8,120"), ("Product revenue", "2021", "7,410"),
        ("Cost of sales", "2022", "(5,002)"), ("Cost of sales", "2021", "(4,711)"),
        ("Research and development", "2021", "311")]
    assert [r["label"] for r in rows_with_years(parsed(QUARTER), loose_years)] == ["Product revenue"]


def test_the_kinds_ask_of_the_same_rows() -> None:
    quarter = quarter_questions({"doc_name": "AMD_2023Q2_10Q", "company": "AMD"}, parsed(QUARTER), 4,
                                random.Random(0))
    assert [(q["kind"], q["answer"], q["pages"]) for q in quarter] == [("quarter", "2,101", [1])]
    assert "product revenue" in quarter[0]["question"] and "second quarter of fiscal 2023" in quarter[0]["question"]
    annual = annual_questions({"doc_name": "3M_2022_10K", "company": "3M"}, parsed(PAGE), 1, random.Random(0), {2022})
    assert [q["kind"] for q in annual] == ["yoy", "legal_name"]
    assert annual[1]["question"].startswith("What was the year-over-year change in 3M Company's")
