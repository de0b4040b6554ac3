"""The rule-written formula questions (evals/synthetic_formulas.py): references computed from the rows
as printed, one question per page, labels printed on several pages left out."""

from __future__ import annotations

import random
from dataclasses import dataclass

from evals.synthetic_formulas import questions_for


@dataclass
class Row:
    page: int
    text: str


@dataclass
class Parsed:
    rows: list[Row]


def statement(page: int, rows: list[str]) -> list[Row]:
    return [Row(page, "Years ended | 2023 | 2022 | 2021"), *(Row(page, r) for r in rows)]


def test_each_shape_has_its_reference_from_the_printed_rows() -> None:
    parsed = Parsed(statement(3, ["Widget sales | 1,200 | 1,000 | 800", "Service fees | 300 | 250 | 200"])
                    + statement(4, ["Freight costs | 90 | 60 | 45", "Storage costs | 30 | 20 | 15"])
                    + statement(5, ["Royalty income | 12 | 10 | 8", "Licence income | 4 | 5 | 2"]))
    doc = {"doc_name": "FABRIKAM_2023_10K", "company": "Fabrikam"}
    found = questions_for(doc, parsed, 3, random.Random(1))
    assert [q["shape"] for q in found] == ["share", "days", "combined"]
    assert len({q["page"] for q in found}) == 3
    # (x, y) per page: the two labels in sorted order, values for 2023, 2022, 2021
    rows = {3: ((300, 250, 200), (1_200, 1_000, 800)), 4: ((90, 60, 45), (30, 20, 15)),
            5: ((4, 5, 2), (12, 10, 8))}
    for q in found:
        x, y = rows[q["page"]]
        if q["shape"] == "share":
            assert q["reference"] == round(sum(x[i] / y[i] for i in range(3)) / 3 * 100, 1)
        elif q["shape"] == "days":
            assert q["reference"] == round(365 * (x[0] + x[1]) / 2 / y[0], 2)
        else:
            assert q["reference"] == round((x[0] + y[0] - y[1]) / y[0], 2)


def test_a_label_printed_on_several_pages_is_not_used() -> None:
    parsed = Parsed(statement(3, ["Widget sales | 1,200 | 1,000 | 800", "Service fees | 300 | 250 | 200"])
                    + statement(7, ["Widget sales | 40 | 30 | 20", "Other fees | 3 | 2 | 1"]))
    found = questions_for({"doc_name": "F", "company": "Fabrikam"}, parsed, 4, random.Random(1))
    assert found == []
