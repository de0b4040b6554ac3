"""A document's context, the functions alone: a heading's new front, the names people use for a
company, owner filter values (stored and searched: tests/test_document_context.py)."""

from __future__ import annotations

import pytest

from ingestion.recontext import new_heading
from storage.document_filter import (
    company_names,
    owner_values,
)


def test_new_heading_swaps_the_file_name_front() -> None:
    front = "Northwind Traders · 10-K · FY2022 (fiscal 2022)"
    assert new_heading("report 2022 — Item 7", ["report 2022"], front) == f"{front} — Item 7"
    assert new_heading("report 2022", ["report 2022"], front) == front
    assert new_heading(f"{front} — Item 7", ["report 2022"], front) is None
    assert new_heading("Northwind · 10-K · 2022 — Item 7", ["report 2022"], front) == f"{front} — Item 7"


def test_company_names_are_the_names_people_use() -> None:
    assert company_names("Best Buy Co., Inc.") == {"best buy"}
    assert company_names("Amazon.com, Inc.") == {"amazon"}
    assert company_names("3M Company") == {"3m"}
    assert company_names("The Coca-Cola Company") == {"coca cola"}
    assert company_names("Advanced Micro Devices, Inc.") == {"advanced micro devices", "advanced micro", "amd"}
    assert company_names("JPMorgan Chase & Co.") == {"jpmorgan chase"}
    assert company_names("Inc.") == set()


@pytest.mark.parametrize(("values", "message"), [
    ((None, None, None), "at least one"), (("x" * 121, None, None), "longer than 120"),
    ((None, None, "from 2021 to 2022"), "not one period"),
])
def test_owner_values_refuse_what_is_not_a_value(values: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        owner_values(*values)
