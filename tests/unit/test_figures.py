"""Figures as filings and answers write them (graph/figures.py): signs, units, a table's scale, a
question's unit, and when two figures are the same. Companies and numbers are invented."""

from __future__ import annotations

import pytest

from graph.figures import (
    Figure,
    Scale,
    asked_unit,
    format_figure,
    present,
    read_figures,
    round_half_up,
    same_figure,
    scale_of,
    states,
)


def one(text: str) -> Figure:
    found = read_figures(text, headers=False)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("text", "value", "kind"), [
    ("$1,234", 1234, "money"),
    ("1,234.5", 1234.5, "count"),
    ("(1,234)", -1234, "count"),  # accounting negative
    ("$(1,234)", -1234, "money"),
    ("($1,234)", -1234, "money"),
    ("-1,234", -1234, "count"),
    ("−1,234", -1234, "count"),  # the minus sign U+2212
    ("–$1,234", -1234, "money"),  # the en dash a PDF prints for a minus, as the tables' reader reads it
    ("-$1,234", -1234, "money"),
    ("12.5%", 12.5, "percent"),
    ("(12.5%)", -12.5, "percent"),
    ("12.5 percent", 12.5, "percent"),
    ("$1.2 billion", 1.2e9, "money"),
    ("$2,018mn", 2.018e9, "money"),
    ("5.1 bn", 5.1e9, "count"),
    ("5.1bn", 5.1e9, "count"),
    ("$3M", 3e6, "money"),
    ("$450k", 450e3, "money"),
    ("7.25 million dollars", 7.25e6, "money"),
    ("0.62x", 0.62, "ratio"),
    ("14.8 times", 14.8, "ratio"),
    ("$3.21 per share", 3.21, "per_share"),
    ("$1.07 per diluted share", 1.07, "per_share"),
])
def test_a_figure_is_read_with_its_sign_unit_and_scale(text: str, value: float, kind: str) -> None:
    figure = one(f"Ostrava Tile reported {text} for the year.")
    assert figure.value == pytest.approx(value) and figure.kind == kind
    assert figure.text == text  # the span is the figure as written, sign and unit included


def test_percentage_points_and_basis_points_are_differences_of_percentages() -> None:
    pp, bps, pct = one("up 1.5 percentage points"), one("up 150 bps"), one("up 1.5%")
    assert pp.kind == bps.kind == pct.kind == "percent"
    assert pp.points and bps.points and not pct.points
    assert pp.value == pytest.approx(1.5) and bps.value == pytest.approx(1.5)
    assert same_figure(pp, bps)
    assert not same_figure(pp, pct)  # a 1.5-point rise in a margin is not a 1.5% rise


@pytest.mark.parametrize("text", [
    "in 2023", "fiscal 2023", "FY2022", "FY 2021", "Note 12", "see page 145", "Item 7", "Part II, Item 1A",
    "December 31", "the 10-K", "3M", "COVID-19", "the 401(k) plan", "Section 404", "ASC 842", "pages 45-47",
    "the 2nd quarter", "[1] [2, 3]", "fiscal 2022-23",
])
def test_years_references_and_names_are_not_figures(text: str) -> None:
    assert read_figures(f"Brightwater Mills {text} says", headers=False) == []


def test_a_year_shaped_amount_is_a_figure() -> None:
    assert [f.value for f in read_figures("$2,018mn and 1,995 employees and $2019", headers=False)] == [
        2.018e9, 1995, 2019]
    assert [f.value for f in read_figures("in 2019", years=True)] == [2019]  # the scorer's references


@pytest.mark.parametrize(("header", "factor", "money"), [
    ("(in millions)", 1e6, False),
    ("(Millions, except per share amounts)", 1e6, False),
    ("in thousands", 1e3, False),
    ("(in thousands of U.S. dollars)", 1e3, True),
    ("Dollars in millions", 1e6, True),
    ("($ in millions, except per share data)", 1e6, True),
    ("(In thousands, except per share data)", 1e3, False),
    ("(in billions)", 1e9, False),
    ("($000s)", 1e3, True),
])
def test_a_tables_scale_is_read_from_its_header(header: str, factor: float, money: bool) -> None:
    scale = scale_of(header)
    assert scale is not None and scale.factor == factor and scale.money == money


def test_a_percent_header_and_plain_text() -> None:
    scale = scale_of("Segment margins (%)")
    assert scale is not None and scale.percent and scale.factor == 1.0
    assert scale_of("Net sales rose in every region.") is None
    assert scale_of("millions of customers") is None  # a plural scale word alone is no header


STATEMENT = """Halvorsen Freight Inc.
Consolidated Statements of Income
(In thousands, except per share data)
Total revenues | $ 1,693,954 | $ 1,402,118
Net loss | (45,210) | 12,004
Diluted net income per share | $ 3.21 | $ 2.64
Gross margin percentage | 41.2 | 39.7
Earnings per basic and diluted share | $ 3.05 | $ 2.51
Interest coverage (times) | 14.8 | 12.1
Weighted-average diluted shares | 52,810 | 51,990
Management expects revenue to grow across 250 new terminals over time.
"""


def test_a_table_in_thousands_scales_its_amounts() -> None:
    found = {f.text: f for f in read_figures(STATEMENT)}
    revenue = found["$ 1,693,954"]
    assert revenue.value == 1_693_954_000 and revenue.header and revenue.kind == "money"
    assert revenue.as_written().value == 1_693_954  # the digits a reader sees in the table
    assert found["(45,210)"].value == -45_210_000  # negatives in parentheses, scaled too
    assert found["52,810"].value == 52_810_000  # share counts follow the table's scale


def test_per_share_and_percentage_rows_are_not_scaled_by_the_header() -> None:
    found = {f.text: f for f in read_figures(STATEMENT)}
    assert found["$ 3.21"].value == pytest.approx(3.21) and found["$ 3.21"].kind == "per_share"
    assert found["41.2"].value == pytest.approx(41.2) and found["41.2"].kind == "percent"
    # the rows ingestion's cells leave unscaled (storage/numbers.py), read the same in an excerpt
    assert found["$ 3.05"].value == pytest.approx(3.05) and found["$ 3.05"].kind == "per_share"
    assert found["14.8"].value == pytest.approx(14.8) and found["14.8"].kind == "ratio"
    assert found["250"].value == 250  # prose under the table is not in thousands


def test_the_header_that_applies_is_the_nearest_one_before() -> None:
    text = ("(in millions)\nCapital expenditures | 812 | 790\n"
            "Segment detail (in thousands)\nLogistics revenue | 97,450 | 88,120\n")
    values = [f.value for f in read_figures(text)]
    assert values == [812e6, 790e6, 97_450e3, 88_120e3]
    # a header at the end of its own line still scales that line (text-laid statements)
    assert read_figures("Net income | $ | 213,906 $ | 175,002 (in thousands)")[0].value == 213_906_000
    # a caption the caller knows overrides what the text says
    assert read_figures("Revenue 4,210", scale=Scale(1e6))[0].value == 4_210e6


@pytest.mark.parametrize(("question", "scale", "percent", "decimals"), [
    ("What was Pellworth's FY2022 capex (in USD millions)?", 1e6, False, None),
    ("Net income in USD billions, round to one decimal.", 1e9, False, 1),
    ("Answer in thousands.", 1e3, False, None),
    ("What is the operating margin as a percentage, rounded to two decimal places?", None, True, 2),
    ("What percentage of sales came from services?", None, True, None),
    ("Round your answer to the nearest whole number.", None, False, 0),
    ("Give the figure to the nearest tenth.", None, False, 1),
    ("What was revenue?", None, False, None),
])
def test_the_unit_a_question_asks(question: str, scale: float | None, percent: bool, decimals: int | None) -> None:
    asked = asked_unit(question)
    assert (asked.scale, asked.percent, asked.decimals) == (scale, percent, decimals)


def test_a_value_is_written_the_way_the_question_asks() -> None:
    value = 1_693_954_000.0
    assert present(value, "money", asked_unit("in USD millions, rounded to two decimal places")) == "$1,693.95 million"
    assert present(value, "money", asked_unit("in USD billions")) == "$1.693954 billion"
    assert present(0.6171, "ratio", asked_unit("as a percentage, round to one decimal")) == "61.7%"
    assert present(0.6171, "ratio", asked_unit("rounded to two decimal places")) == "0.62"
    assert format_figure(-45_210_000, "money", scale=1e6, decimals=1) == "-$45.2 million"
    assert format_figure(1.5, "percent", decimals=1, points=True) == "1.5 percentage points"
    assert format_figure(3.214, "per_share") == "$3.21"


def test_rounding_is_half_up() -> None:
    assert str(round_half_up(2.675, 2)) == "2.68"  # float round() gives 2.67
    assert str(round_half_up(0.125, 2)) == "0.13"


def test_the_same_figure_across_scales_at_the_rounding_shown() -> None:
    held = read_figures("(in thousands)\nNet income | 1,693,954")[0]
    for stated in ("$1,693.954 million", "$1.69 billion", "$1.7 billion", "$1,694 million", "1,693,954 thousand"):
        assert same_figure(one(stated), held), stated
    for stated in ("$1,693,954 million", "$1.70 billion", "$1,693 million", "1,693,954"):
        assert not same_figure(one(stated), held), stated  # a thousand times off, or another figure
    assert states(one("1,693,954"), held.as_written())  # the digits as the table prints them


def test_same_figure_rules() -> None:
    assert same_figure(one("(1,234)"), one("$1,234"))  # signs are said in words ("a loss of")
    assert not same_figure(one("12.5%"), one("12.5"))  # a percentage is not an amount
    assert not same_figure(one("0.62x"), one("$0.62"))
    assert not same_figure(one("$2 billion"), one("$1.5 billion"))  # one significant digit: exact only
    assert same_figure(one("100"), one("101.5"), tolerance=0.02)
    assert not same_figure(one("100"), one("101.5"), tolerance=0.01)
    assert not states(one("$1,694.1 million"), one("$1,694 million"))  # an answer never adds digits


def test_a_format_code_is_no_percent_sign() -> None:
    """Issue 39 (batch 13's strptime answer): "%y" in a sentence is a format's code, so the years the sentence
    maps are counts, not percentages; "Revenue growth %" still heads percentages."""
    prose = ("Function strptime() can parse 2-digit years when given %y format code. When 2-digit years are parsed, "
             "values 69–99 are mapped to 1969–1999.")
    assert {f.text: f.kind for f in read_figures(prose)}["1969"] == "count"
    assert [f.kind for f in read_figures("Revenue growth % | 12 | 14")] == ["percent", "percent"]
    assert [f.kind for f in read_figures("Share of revenue (in %) | 12")] == ["percent"]


def test_a_line_of_percent_signs_after_a_number_is_no_percent_sign() -> None:
    """Held-back batch 27: a song anthology separates its entries by lines of "%", and the right "dated 26/10 1792"
    was refused as "1792%" stood in its excerpt. A percentage written on one line, or in words on the next, is one."""
    anthology = ('The Rights of Woman merit some attention.\n-- Robert Burns, Address, 26/10 1792\n%\n'
                 'Go on, do not rest.')
    assert {f.text: f.kind for f in read_figures(anthology)}["1792"] == "count"
    assert [(f.text, f.kind) for f in read_figures("rose 12.5 %, or 5\npercent")] == [("12.5 %", "percent"),
                                                                                     ("5\npercent", "percent")]
