"""Calculations in code (graph/calc.py): each operation, its rounding, its working with citation
markers, the request a model writes, and the operation a question's wording asks for. Companies
and numbers are invented."""

from __future__ import annotations

import pytest

from graph.calc import DEFAULT_DECIMALS, CalcError, Fact, calculate, choose_op, parse_request
from graph.figures import read_figures

# Two invented statements: one in millions, one in thousands, so operands cross scales.
INCOME = """Corvell Instruments (in millions, except per share amounts)
Operating income | 1,234 | 1,100
Net sales | 2,000 | 1,800
Gross margin % | 23.0% | 21.5%
Diluted earnings per share | $ 2.47 | $ 2.20
Weighted-average diluted shares | 500 | 480
"""
CASH = """Corvell Instruments cash flows (in thousands)
Net cash provided by operating activities | 412,600
Purchases of property and equipment | (98,300)
Inventories | 150,000 | 130,000
"""


def facts() -> list[Fact]:
    income = read_figures(INCOME)
    cash = read_figures(CASH)
    periods = ["FY2023", "FY2022"] * 5
    out = [Fact(n, f, label="", source=1, period=p) for n, (f, p) in enumerate(zip(income, periods, strict=True), 1)]
    return out + [Fact(len(out) + n, f, source=2) for n, f in enumerate(cash, 1)]


# facts: 1 operating income 2023, 2 in 2022, 3 net sales 2023, 4 in 2022, 5/6 gross margin %, 7/8 EPS,
# 9/10 shares, 11 operating cash flow, 12 capex (negative), 13/14 inventories
@pytest.mark.parametrize(("request_", "question", "text", "working"), [
    ({"op": "ratio", "operands": [1, 3]}, "", "0.62", "1,234 / 2,000 = 0.62 [1]"),
    ({"op": "percentage", "operands": [1, 3]}, "", "61.7%", "1,234 / 2,000 = 61.7% [1]"),
    ({"op": "margin", "operands": [1, 3]}, "", "61.7%", "1,234 / 2,000 = 61.7% [1]"),
    ({"op": "growth", "operands": [4, 3]}, "", "11.1%", "2,000 / 1,800 − 1 = 11.1% [1]"),
    ({"op": "difference", "operands": [3, 4]}, "", "200 million", "2,000 − 1,800 = 200 million [1]"),
    ({"op": "sum", "operands": [1, 3]}, "", "3,234 million", "1,234 + 2,000 = 3,234 million [1]"),
    ({"op": "average", "operands": [1, 2]}, "", "1,167.0 million", "(1,234 + 1,100) / 2 = 1,167.0 million [1]"),
    ({"op": "cagr", "operands": [4, 3], "years": 2}, "", "5.4%", "(2,000 / 1,800)^(1/2) − 1 = 5.4% [1]"),
    ({"op": "turnover", "operands": [3, 1, 2]}, "", "1.71", "2,000 / ((1,234 + 1,100) / 2) = 1.71 [1]"),
    ({"op": "per_share", "operands": [1, 9]}, "", "$2.47", "1,234 / 500 = $2.47 [1]"),
    ({"op": "days", "operands": [1, 3]}, "", "225.2 days", "365 × 1,234 / 2,000 = 225.2 days [1]"),
])
def test_each_operation_computes_and_shows_its_working(request_: dict, question: str, text: str,
                                                       working: str) -> None:
    result = calculate(request_, facts(), question)
    assert result.text == text
    assert result.working == working


def test_a_ratio_the_question_defines_is_rounded_as_it_asks() -> None:
    question = "What is Corvell's operating income divided by net sales, rounded to three decimal places?"
    result = calculate({"op": "ratio", "operands": [1, 3], "round": 1}, facts(), question)
    assert result.text == "0.617" and result.value == pytest.approx(0.617)  # the question wins over the request
    assert calculate({"op": "ratio", "operands": [1, 3], "round": 1}, facts()).text == "0.6"  # then the request
    assert calculate({"op": "ratio", "operands": [1, 3]}, facts(), "as a percentage").text == "61.7%"


def test_default_rounding_is_two_decimals_for_ratios_and_one_for_percentages() -> None:
    assert DEFAULT_DECIMALS["ratio"] == 2 and DEFAULT_DECIMALS["percent"] == 1
    assert calculate({"op": "ratio", "operands": [2, 4]}, facts()).decimals == 2
    assert calculate({"op": "growth", "operands": [2, 1]}, facts()).decimals == 1


def test_operands_from_tables_of_different_scales_and_negatives_in_parentheses() -> None:
    # free cash flow: operating cash flow plus capex, which the statement shows as (98,300) thousand
    fcf = calculate({"op": "sum", "operands": [11, 12]}, facts(), "in USD millions")
    assert fcf.value == pytest.approx(314_300_000)
    # shown in the unit asked, with every digit the thousands operands carry and no more
    assert fcf.working == "412.6 + (-98.3) = $314.300 million [2]"
    # a ratio across statements: operating cash flow (thousands) over net sales (millions)
    assert calculate({"op": "ratio", "operands": [11, 3]}, facts()).text == "0.21"
    across = calculate({"op": "ratio", "operands": [11, 3]}, facts())
    assert across.working == "412,600 thousand / 2,000 million = 0.21 [2][1]"  # each with its own scale


def test_a_result_in_the_questions_unit() -> None:
    result = calculate({"op": "difference", "operands": [11, 13]}, facts(), "in USD millions")
    assert result.text == "$262.600 million" and result.scale == 1e6
    assert result.working.endswith("[2]")


def test_per_share_rows_under_in_millions_stay_dollars() -> None:
    change = calculate({"op": "difference", "operands": [7, 8]}, facts())
    assert change.kind == "per_share" and change.text == "$0.27"


def test_a_difference_of_percentages_is_in_percentage_points() -> None:
    result = calculate({"op": "difference", "operands": [5, 6]}, facts())
    assert result.points and result.text == "1.5 percentage points"
    assert result.working == "23.0% − 21.5% = 1.5 percentage points [1]"


def test_cagr_reads_its_years_from_the_facts_periods() -> None:
    assert calculate({"op": "cagr", "operands": [4, 3]}, facts()).text == "11.1%"  # FY2022 -> FY2023: one year
    no_periods = [Fact(1, read_figures("1,000")[0]), Fact(2, read_figures("1,500")[0])]
    with pytest.raises(CalcError, match="number of years"):
        calculate({"op": "cagr", "operands": [1, 2]}, no_periods)


def test_a_request_is_read_from_the_models_text() -> None:
    request = parse_request('Here it is:\n```json\n{"op": "Per-Share", "operands": [1, 9], "round": 3}\n```')
    assert request.op == "per_share" and request.operands == [1, 9] and request.round == 3


@pytest.mark.parametrize(("raw", "reason"), [
    ('{"op": "divide", "operands": [1, 2]}', "unknown operation 'divide'; one of ratio"),
    ('{"op": "ratio"}', "operands: Field required"),
    ('{"op": "ratio", "operands": [1]}', "ratio takes 2 operands, got 1"),
    ('{"op": "turnover", "operands": [1, 2]}', "turnover takes 3 operands"),
    ('{"op": "ratio", "operands": [1, 2], "round": 9}', "round"),
    ("the ratio of 1 to 2", "no JSON object"),
    ('{"op": "ratio", "operands": [1, 2}', "not JSON"),
])
def test_a_malformed_request_is_refused_with_a_reason(raw: str, reason: str) -> None:
    with pytest.raises(CalcError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_request(raw)


def test_arithmetic_that_cannot_be_done_is_refused() -> None:
    zero = [Fact(1, read_figures("1,000")[0]), Fact(2, read_figures("0.0")[0])]
    with pytest.raises(CalcError, match="divides by zero"):
        calculate({"op": "ratio", "operands": [1, 2]}, zero)
    with pytest.raises(CalcError, match="no fact 40"):
        calculate({"op": "ratio", "operands": [1, 40]}, facts())
    with pytest.raises(CalcError, match="positive starting value"):
        calculate({"op": "growth", "operands": [12, 11]}, facts())  # from a negative base
    with pytest.raises(CalcError, match="mixes percentages"):
        calculate({"op": "sum", "operands": [5, 1]}, facts())


@pytest.mark.parametrize(("question", "op"), [
    ("What is the company's research spending divided by its headcount?", "ratio"),
    ("Compute the ratio of long-term debt to shareholders' equity.", "ratio"),
    ("What was the interest coverage of the firm last year?", "ratio"),
    ("Express marketing expense as a percentage of net sales.", "percentage"),
    ("What share of total deposits came from retail customers?", "percentage"),
    ("What was the year-over-year change in freight revenue?", "growth"),
    ("How fast did subscriptions grow from 2020 to 2021?", "growth"),
    ("What was the revenue growth from 2021 to 2022?", "growth"),
    ("By how much did operating expenses increase from 2021 to 2022 (in USD millions)?", "difference"),
    ("What was the percentage change in backlog between the two years?", "growth"),
    ("What is the three-year CAGR of net sales?", "cagr"),
    ("What was the compound annual growth rate of bookings?", "cagr"),
    ("What was the operating margin in 2022?", "margin"),
    ("What was the asset turnover ratio?", "turnover"),
    ("What were days sales outstanding at year end?", "days"),
    ("What is free cash flow per share?", "per_share"),
    ("What was the average of the two years' capital expenditures?", "average"),
    ("What were cash and short-term investments combined?", "sum"),
    ("What is the difference between gross and net leverage?", "difference"),
    ("What was the debt ratio, as a percentage?", "percentage"),
])
def test_the_operation_a_question_asks_for(question: str, op: str) -> None:
    assert choose_op(question) == op


@pytest.mark.parametrize("question", [
    "What was net revenue in fiscal 2023?",
    "Who is the chief executive officer?",
    "What was the weighted average number of diluted shares?",
    "What was gross margin in USD millions?",  # a reported dollar figure, not a calculation
])
def test_a_question_that_asks_for_no_calculation(question: str) -> None:
    assert choose_op(question) is None


def test_a_fact_without_a_period_is_written_without_empty_brackets() -> None:
    # held-back batches 15 and 17: "Species 15 () was 21.850718 [4].", "... in the file. () was 64 [1]."
    from graph.compose import fact_sentence
    from graph.figures import Asked

    assert fact_sentence(Fact(1, read_figures("64")[0], "numberOfHashBuckets The number of hash buckets.", 1),
                         Asked()) == "numberOfHashBuckets The number of hash buckets was 64 [1]."
    assert fact_sentence(Fact(1, read_figures("1,577")[0], "Capital expenditure", 2, "FY2018"), Asked()).startswith(
        "Capital expenditure (FY2018) was ")
