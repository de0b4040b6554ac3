"""What a document says it is (ingestion/context.py), from text fixtures laid out like SEC covers,
earnings releases and ordinary documents; and how it is written into a chunk's heading."""

from __future__ import annotations

from datetime import date

import pytest

from ingestion.chunk import HEADING_TOKENS, chunk_rows
from ingestion.context import DocumentContext, extract_context, short_company, tidy_company
from ingestion.pipeline import heading_title
from ingestion.units import Row
from storage.document_filter import normal_form, parse_period

COVER_10K = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended December 31, 2022
OR
☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
Commission File Number 001-12345
______________________
NORTHWIND TRADERS, INC.
(Exact name of registrant as specified in its charter)
Delaware | 12-3456789"""

COVER_10Q = """UNITED STATES SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
☒ QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended July 1, 2023
Commission File Number 001-67890
Contoso Corporation
(Exact name of registrant as specified in its charter)"""

STATEMENTS_Q2 = """CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS
Three Months Ended | Six Months Ended
July 1, 2023 | July 2, 2022 | July 1, 2023 | July 2, 2022
Net sales | 1,234 | 1,100 | 2,400 | 2,150"""

STATEMENTS_Q3 = """CONSOLIDATED STATEMENTS OF INCOME
Three Months Ended | Nine Months Ended
Net sales | 1,234 | 1,100 | 2,400 | 2,150"""

COVER_8K = """SECURITIES AND EXCHANGE COMMISSION
FORM 8-K
CURRENT REPORT
Pursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934
Date of Report (Date of earliest event reported): July 1, 2022 (June 30, 2022)
FABRIKAM PLC
(Exact name of registrant as specified in its charter)"""

RELEASE = """Exhibit 99.1
TAILSPIN TOYS REPORTS FOURTH QUARTER AND
FULL YEAR 2022 FINANCIAL RESULTS
• Record revenue in 4Q
Dallas, Texas, February 8, 2023 – Tailspin Toys, Inc. (NYSE: TSP) today reported financial results for the
quarter and year ended December 31, 2022."""


def rows_of(*pages: str) -> list[Row]:
    return [Row(n, line, None) for n, text in enumerate(pages, 1) for line in text.split("\n") if line.strip()]


def test_a_10k_cover_gives_company_form_and_fiscal_year() -> None:
    ctx = extract_context(rows_of(COVER_10K, "Item 1. Business"))
    assert (ctx.company, ctx.form, ctx.period, ctx.period_end) == ("Northwind Traders, Inc.", "10-K", "FY2022",
                                                                 date(2022, 12, 31))
    assert ctx.header() == "Northwind Traders · 10-K · FY2022 (fiscal 2022)"


def test_the_name_below_the_file_number_when_the_cover_has_no_caption() -> None:
    cover = COVER_10K.replace("(Exact name of registrant as specified in its charter)\n", "")
    assert extract_context(rows_of(cover)).company == "Northwind Traders, Inc."


@pytest.mark.parametrize(("statements", "period"), [(STATEMENTS_Q2, "Q2 FY2023"), (STATEMENTS_Q3, "Q3 FY2023"),
                                                    ("Three Months Ended\nNet sales | 1", "Q1 FY2024"),
                                                    ("no statements here", "2023-07-01")])
def test_a_10q_quarter_is_told_by_its_year_to_date_columns(statements: str, period: str) -> None:
    ctx = extract_context(rows_of(COVER_10Q, statements))
    assert (ctx.company, ctx.form, ctx.period, ctx.period_end) == ("Contoso Corporation", "10-Q", period,
                                                                 date(2023, 7, 1))


def test_a_52_week_year_ending_early_in_january_is_the_year_before() -> None:
    cover = COVER_10K.replace("December 31, 2022", "January 1, 2022")
    assert extract_context(rows_of(cover)).period == "FY2021"


def test_a_quarter_of_a_fiscal_year_ending_later_is_named_for_that_year() -> None:
    # a year ending in June: the quarter ended December 31, 2022 is the second of fiscal 2023
    cover = COVER_10Q.replace("July 1, 2023", "December 31, 2022")
    ctx = extract_context(rows_of(cover, STATEMENTS_Q2))
    assert ctx.period == "Q2 FY2023" and ctx.fiscal_year == 2023
    assert "Q2 FY2023 (Q2 2023) ended December 2022" in ctx.header()


@pytest.mark.parametrize(("mentions", "year"), [("fiscal 2022 " * 5 + "fiscal 2021", 2022),
                                                 ("fiscal 2021 " * 5 + "fiscal 2022", 2021), ("", 2022)])
def test_a_year_ending_in_january_is_named_as_the_document_names_it(mentions: str, year: int) -> None:
    cover = COVER_10K.replace("December 31, 2022", "January 29, 2022")
    assert extract_context(rows_of(cover, mentions)).fiscal_year == year


def test_an_8k_gives_its_report_date() -> None:
    ctx = extract_context(rows_of(COVER_8K))
    assert (ctx.company, ctx.form, ctx.period, ctx.period_end) == ("Fabrikam plc", "8-K", "2022-07-01",
                                                                 date(2022, 7, 1))
    assert ctx.header() == "Fabrikam · 8-K · dated July 1, 2022"


def test_an_earnings_release_gives_company_quarter_and_period() -> None:
    ctx = extract_context(rows_of(RELEASE))
    assert (ctx.company, ctx.form, ctx.period, ctx.period_end) == ("Tailspin Toys", "earnings release", "Q4 FY2022",
                                                                 date(2022, 12, 31))


def test_a_release_naming_its_fiscal_year_keeps_that_name() -> None:
    release = ("March 9, 2023\nContoso Beauty Announces Fourth Quarter\nFiscal 2022 Results\n"
               "results for the fifty-two-week period (“fiscal year”) ended January 28, 2023")
    ctx = extract_context(rows_of(release))
    assert (ctx.company, ctx.period, ctx.period_end) == ("Contoso Beauty", "Q4 FY2022", date(2023, 1, 28))
    assert ctx.header().endswith("Q4 FY2022 (Q4 2022) ended January 2023")


@pytest.mark.parametrize("pages", [
    ("MEMORANDUM\nTo: all staff\nThe office moves on Monday.",),
    ("Quarterly planning\nslide notes",),
    ("",),
    ("12 | 34 | 56\n|||",),
    ("\x00 ☒ ¨ ý " * 50, "Form", "ended"),
])
def test_ordinary_documents_get_a_title_or_nothing(pages: tuple[str, ...]) -> None:
    ctx = extract_context(rows_of(*pages))
    assert not (ctx.company or ctx.form or ctx.period or ctx.period_end)
    assert ctx.header() == ctx.title


def test_a_title_from_the_first_unit_of_a_sectioned_document() -> None:
    ctx = extract_context(rows_of("Remote work policy\nEveryone may work from home."), {1: "Remote work policy"})
    assert ctx.title == "Remote work policy" and not ctx.found
    assert heading_title(ctx, "download (3).docx") == "Remote work policy"


def test_nothing_found_falls_back_to_the_file_name() -> None:
    assert heading_title(DocumentContext(), "annual_report.pdf") == "annual report"
    assert extract_context([]) == DocumentContext()


def test_names_are_made_readable() -> None:
    assert tidy_company("BEST BUY CO., INC.") == "Best Buy Co., Inc."
    assert tidy_company("MGM R ESORTS I NTERNATIONAL") == "MGM Resorts International"
    assert tidy_company("AMCOR PLC") == "Amcor plc"
    assert tidy_company("3M COMPANY") == "3M Company"
    assert tidy_company("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES") == "Activision Blizzard, Inc."
    assert short_company("Best Buy Co., Inc.") == "Best Buy" and short_company("Corning Incorporated") == "Corning"
    assert short_company("3M Company") == "3M Company"


def test_the_context_leads_every_heading_within_the_budget() -> None:
    ctx = extract_context(rows_of(COVER_10K))
    title = heading_title(ctx, "download (3).pdf")
    rows = [Row(2, "Consolidated Statements of Cash Flows " + "word " * 40, None), Row(2, "Operating | 1 | 2", 1)]
    chunks = chunk_rows(rows, lambda texts: [len(t.split()) for t in texts], title=title, child_tokens=50)
    heading = chunks.children[0].heading
    assert heading.startswith("Northwind Traders · 10-K · FY2022 (fiscal 2022) — Consolidated Statements")
    assert "download" not in heading and len(heading.split()) <= HEADING_TOKENS


@pytest.mark.parametrize(("value", "parsed"), [
    ("FY2022", (2022, None, None)), ("fiscal 2022", (2022, None, None)), ("Q2 2023", (2023, 2, None)),
    ("second quarter of 2023", (2023, 2, None)), ("FY22", (2022, None, None)),
    ("2023-07-01", (None, None, date(2023, 7, 1))), ("Q3", (None, 3, None)), ("last year", (None, None, None))])
def test_period_filters_are_read_the_ways_people_write_them(value: str, parsed: tuple) -> None:
    assert parse_period(value) == parsed


def test_form_filters_are_normalised() -> None:
    assert [normal_form(v) for v in ("10k", "Form 10-K", "10 q", "8-K", "earnings", "press release", "S-1")] == [
        "10-K", "10-K", "10-Q", "8-K", "earnings release", "earnings release", "S-1"]


COVER_RENAMED = """UNITED STATES SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended September 30, 2023
Commission File Number: 000-05678
TAILSPIN, INC.
(Exact name of registrant as specified in its charter)
Delaware | 98-7654321
(State or other jurisdiction of incorporation or organization) | (I.R.S. Employer Identification No.)
Northwind Systems Incorporated
(Former name, former address and former fiscal year, if changed since last report)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class | Trading Symbol(s) | Name of each exchange on which registered
Common Stock, par value $0.01 per share | TSP | The Nasdaq Stock Market LLC
4.250% Notes due 2030 | TSP30 | New York Stock Exchange
Securities registered pursuant to Section 12(g) of the Act: None"""


def test_the_cover_gives_file_number_former_name_tickers_and_state() -> None:
    ctx = extract_context(rows_of(COVER_RENAMED))
    assert (ctx.company, ctx.file_number, ctx.former_names) == ("Tailspin, Inc.", "0-5678",
                                                                 ("Northwind Systems Incorporated",))
    assert (ctx.tickers, ctx.incorporated, ctx.period) == (("TSP",), "Delaware", "FY2023")
    plain = extract_context(rows_of(COVER_10K.replace("NORTHWIND", "Northwind")))
    assert plain.former_names == () and plain.file_number == "1-12345" and plain.tickers == ()


def test_a_former_name_not_applicable_is_no_name() -> None:
    cover = COVER_RENAMED.replace("Northwind Systems Incorporated", "N/A")
    assert extract_context(rows_of(cover)).former_names == ()


def test_a_10q_numbering_its_fiscal_quarter_is_named_so() -> None:
    cover = COVER_10Q.replace("quarterly period ended July 1, 2023", "Quarter Ended 1 July 2023")
    ctx = extract_context(rows_of(cover, "Results for the second quarter of fiscal 2024 rose. "
                                         "In the second quarter of fiscal 2024 we opened stores."))
    assert (ctx.period, ctx.period_end) == ("Q2 FY2024", date(2023, 7, 1))
