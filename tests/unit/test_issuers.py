"""One issuer however it is named (storage/issuers.py) and the period a question asks about
(storage/question_period.py): pure rules, no database."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import date

import pytest

from storage.issuers import (
    NAMED_EXACTLY,
    NAMED_SHORT,
    Identity,
    company_names,
    group_issuers,
    named_issuers,
    normal_file_number,
    normal_name,
)
from storage.question_period import COMPARATIVE, OTHER, OWN, AskedPeriod, FilingPeriod, asked_period, coverage


def ids(n: int) -> list[uuid.UUID]:
    return [uuid.uuid4() for _ in range(n)]


@pytest.mark.parametrize(("a", "b"), [
    ("Northwind Traders, Inc.", "NORTHWIND TRADERS INCORPORATED"),
    ("The Fabrikam Company", "Fabrikam Co."),
    ("Contoso & Partners Corp.", "Contoso and Partners Corporation"),
    ("Tailspin Holdings, Ltd.", "Tailspin Limited"),
])
def test_legal_forms_and_punctuation_do_not_make_another_name(a: str, b: str) -> None:
    assert normal_name(a) == normal_name(b) != ""


def test_a_name_is_also_said_without_what_only_describes_the_business() -> None:
    assert "northwind" in company_names("Northwind Systems Incorporated")
    assert "northwind traders" in company_names("Northwind Traders International")
    assert company_names("Inc.") == set()


def test_file_numbers_are_one_spelling() -> None:
    assert normal_file_number("001-03285") == normal_file_number("1-3285") == "1-3285"
    assert normal_file_number("none") == ""


def test_a_renamed_issuer_is_one_issuer_by_its_file_number() -> None:
    old, new, other = ids(3)
    issuers = group_issuers([Identity(old, "Northwind Systems Incorporated", file_number="000-1234"),
                             Identity(new, "Tailspin, Inc.", ("Northwind Systems Incorporated",), "0-1234", ("TSP",)),
                             Identity(other, "Contoso Corporation", file_number="1-999")])
    assert sorted(len(i.documents) for i in issuers) == [1, 2]
    [(issuer, how)] = named_issuers("What did Tailspin report for 2019?", issuers)
    assert set(issuer.documents) == {old, new} and how == NAMED_EXACTLY
    [(issuer, _how)] = named_issuers("Northwind Systems' revenue in 2016", issuers)  # the former name
    assert set(issuer.documents) == {old, new}
    [(issuer, _how)] = named_issuers("TSP operating margin", issuers)  # the ticker, as written
    assert set(issuer.documents) == {old, new}
    [(issuer, how)] = named_issuers("Northwind's revenue", issuers)  # a short name: less sure
    assert set(issuer.documents) == {old, new} and how == NAMED_SHORT
    assert named_issuers("tsp operating margin and the fy2019 EPS", issuers) == []


def test_documents_without_an_issuer_are_in_no_group() -> None:
    [known, unknown] = ids(2)
    issuers = group_issuers([Identity(known, "Contoso Corporation"), Identity(unknown)])
    assert [i.documents for i in issuers] == [[known]]


@pytest.mark.parametrize(("question", "years", "quarter", "day", "form"), [
    ("revenue in Q2 2023", {2023}, 2, None, ""),
    ("2Q23 gross margin", {2023}, 2, None, ""),
    ("second quarter of fiscal 2023 net sales", {2023}, 2, None, ""),
    ("FY23 capex", {2023}, None, None, ""),
    ("cash as of December 31, 2022", {2022}, None, date(2022, 12, 31), ""),
    ("in 2019, what was", {2019}, None, None, ""),
    ("year-over-year from 2021 to 2022", (2021, 2022), None, None, ""),
    ("FY2022 against FY2021", (2021, 2022), None, None, ""),  # earliest first, as written or not
    ("Q3FY22 and the 3rd quarter of fiscal '21", (2021, 2022), 3, None, ""),
    ("fiscal year '19 operating income up 20%", (2019,), None, None, ""),
    ("cash on Sept. 30 2023, not on 30th of June 2023", (2023,), None, date(2023, 9, 30), ""),
    ("the 8-K dated 1st July 2022", {2022}, None, date(2022, 7, 1), "8-K"),
    ("its 10-Q inventory", set(), None, None, "10-Q"),
    ("net income of $2019 million", set(), None, None, ""),
])
def test_a_questions_period_is_read_as_people_write_it(question: str, years: Iterable[int], quarter: int | None,
                                                       day: date | None, form: str) -> None:
    assert asked_period(question) == AskedPeriod(tuple(years), quarter, day, form)


def test_the_own_period_first_then_comparatives() -> None:
    k22, k23, k25 = (FilingPeriod.of("10-K", f"FY{y}", None) for y in (2022, 2023, 2025))
    q2_23, q2_24 = (FilingPeriod.of("10-Q", f"Q2 FY{y}", None) for y in (2023, 2024))
    in_2022 = asked_period("net sales in 2022")
    assert [coverage(f, in_2022) for f in (k22, k23, k25, q2_23)] == [OWN, COMPARATIVE, OTHER, COMPARATIVE]
    q2 = asked_period("second quarter of fiscal 2023 net sales")
    assert [coverage(f, q2) for f in (q2_23, q2_24, k23, k22)] == [OWN, COMPARATIVE, COMPARATIVE, OTHER]
    span = asked_period("change from 2022 to 2023")
    assert [coverage(f, span) for f in (k23, k22)] == [OWN, COMPARATIVE]
    assert coverage(FilingPeriod.of("10-K", "", None), in_2022) == OTHER  # a period not read
    eight_k = FilingPeriod.of("8-K", "2022-07-01", date(2022, 7, 1))
    assert coverage(eight_k, asked_period("the 8-K dated July 1, 2022")) == OWN
    assert coverage(k22, asked_period("the 8-K dated July 1, 2022")) == COMPARATIVE
