"""Formulas a question defines (graph/formula.py): read into an expression over line items at their
years, each leaf matched to a fact of its year, computed and shown with its working. Companies and
numbers are invented."""

from __future__ import annotations

import pytest

from graph.calc import CalcError, Fact
from graph.figures import asked_unit, read_figures
from graph.formula import Bin, Item, Mean, Num, calculation_for, evaluate, lookup_plan, parse

# An invented company's rows in millions: (label, {year: value}).
ROWS = {
    "Current liabilities › Accounts payable": {2022: "4,200", 2023: "4,600"},
    "Current assets › Accounts receivable, net": {2022: "3,100", 2023: "3,500"},
    "Cost of sales": {2022: "20,000", 2023: "22,000"},
    "Current assets › Inventories": {2022: "5,000", 2023: "5,400"},
    "Net sales": {2021: "30,000", 2022: "31,000", 2023: "33,000"},
    "Purchases of property and equipment": {2021: "900", 2022: "1,000", 2023: "1,100"},
    "Operating income": {2021: "3,000", 2022: "3,300", 2023: "3,600"},
    "Depreciation and amortization": {2021: "700", 2022: "750", 2023: "800"},
}


def facts(rows: dict[str, dict[int, str]] = ROWS, header: str = "(in millions)") -> list[Fact]:
    out = []
    for label, by_year in rows.items():
        for year, text in by_year.items():
            figure = read_figures(f"{header}\nRow | $ {text}")[0]
            out.append(Fact(len(out) + 1, figure, label=label, source=len(out) % 3 + 1, period=f"FY{year}"))
    return out


CAPEX = "purchases of property plant equipment additions capital expenditures investing activities"
DPO = ("What is Fabrikam's FY2023 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts "
       "payable between FY2022 and FY2023) / (FY2023 COGS + change in inventory between FY2022 and FY2023). "
       "Round your answer to two decimal places.")


def test_a_defined_formula_is_read_with_its_leaves_years() -> None:
    formula = parse(DPO)
    assert formula is not None
    assert formula.expr == Bin("/", Bin("*", Num(365.0), Item("accounts payable", "average", (2022, 2023))),
                               Bin("+", Item("COGS", "value", (2023,)), Item("inventory", "change", (2022, 2023))))
    assert lookup_plan(DPO) == (["accounts payable", "COGS", "inventory"], [2022, 2023])


def test_days_payable_outstanding_is_computed_from_the_rows_of_each_year() -> None:
    result = evaluate(parse(DPO), facts(), asked_unit(DPO))  # type: ignore[arg-type]
    expected = 365 * (4_200 + 4_600) / 2 / (22_000 + (5_400 - 5_000))
    assert result.text == f"{expected:.2f} days" and result.unit == "days"
    assert result.working.startswith("(365 × ((4,200 + 4,600) / 2)) / (22,000 + (5,400 − 5,000)) = ")
    assert set(result.markers) == {1, 2, 3}


def test_a_years_average_of_a_share_averages_each_years_ratio() -> None:
    question = ("What is the FY2021 - FY2023 3 year average of capex as a % of revenue for Fabrikam? "
                "Answer in units of percents and round to one decimal place.")
    formula = parse(question)
    assert formula is not None and isinstance(formula.expr, Mean) and formula.expr.years == (2021, 2022, 2023)
    # the query glossary's filing words for "capex" (sql/003_query_glossary.sql; the graph test reads the real one)
    result = evaluate(formula, facts(), asked_unit(question), words=lambda p: CAPEX if "capex" in p else "")
    expected = (900 / 30_000 + 1_000 / 31_000 + 1_100 / 33_000) / 3 * 100
    assert result.kind == "percent" and result.text == f"{expected:.1f}%"


def test_a_name_the_question_defines_is_replaced_by_its_definition() -> None:
    question = ("What is the FY2021 - FY2023 3 year average EBITDA % margin for Fabrikam? Define EBITDA as "
                "operating income + depreciation and amortization. Answer in units of percents and round to one "
                "decimal place.")
    result = calculation_for(question, facts())
    assert result is not None
    expected = sum((oi + da) / rev for oi, da, rev in ((3_000, 700, 30_000), (3_300, 750, 31_000),
                                                        (3_600, 800, 33_000))) / 3 * 100
    assert result.text == f"{expected:.1f}%"


def test_a_year_without_its_row_is_no_calculation_not_a_nearby_years_value() -> None:
    rows = {**ROWS, "Cost of sales": {2022: "20,000"}}
    with pytest.raises(CalcError, match="COGS"):
        evaluate(parse(DPO), facts(rows), asked_unit(DPO))  # type: ignore[arg-type]
    assert calculation_for(DPO, facts(rows)) is None


def test_receivables_are_not_read_from_the_payables_row() -> None:
    question = ("What is Fabrikam's FY2023 DSO? DSO is defined as: 365 * (average accounts receivable between "
                "FY2022 and FY2023) / (FY2023 revenue).")
    result = calculation_for(question, facts())
    assert result is not None and "3,100 + 3,500" in result.working and "4,200" not in result.working
    without = {k: v for k, v in ROWS.items() if "receivable" not in k}
    assert calculation_for(question, facts(without)) is None


def test_amounts_whose_table_scale_was_not_read_are_not_mixed_with_scaled_ones() -> None:
    unscaled = facts({"Current liabilities › Accounts payable": ROWS["Current liabilities › Accounts payable"]},
                     header="")
    scaled = [f for f in facts() if "payable" not in f.label]
    mixed = [Fact(n, f.figure, f.label, f.source, f.period) for n, f in enumerate(unscaled + scaled, 1)]
    assert calculation_for(DPO, mixed) is None


def test_a_formula_that_adds_an_amount_to_a_number_is_refused() -> None:
    question = "What is Fabrikam's FY2023 adjusted ratio? It is defined as: (cost of sales + 10) / net sales."
    assert calculation_for(question, facts()) is None


def test_a_question_without_a_formula_has_none() -> None:
    assert parse("What was Fabrikam's net sales in FY2023?") is None
    plain_ratio = parse("What is Fabrikam's FY2023 working capital ratio? Define working capital ratio as total "
                        "current assets divided by total current liabilities.")
    assert plain_ratio is not None and plain_ratio.expr == Bin("/", Item("total current assets"),
                                                               Item("total current liabilities"))


def test_two_line_items_are_not_read_from_one_figure_printed_twice() -> None:
    # a revenue row printed in two tables, and no net income row: "net income / revenue" is no calculation
    rows = {"Net sales to customers › Total revenue": {2021: "30,000", 2022: "31,000", 2023: "33,000"},
            "Revenue › Net income and revenue": {2021: "30,000", 2022: "31,000", 2023: "33,000"}}
    question = ("What is the FY2021 - FY2023 3 year average net profit margin (as a %) for Fabrikam? Answer in "
                "units of percents and round to one decimal place.")
    assert calculation_for(question, facts(rows)) is None


def test_a_margin_of_a_line_item_the_closed_set_does_not_name_is_that_item_over_revenue() -> None:
    question = ("According to the P&L statement and the statement of cash flows, what is the FY2023 depreciation and "
                "amortization (D&A from cash flow statement) % margin for Fabrikam?")
    result = calculation_for(question, facts())
    assert result is not None and result.working.startswith("800 / 33,000 × 100 = 2.4%"), result


def test_a_named_margin_the_closed_set_lacks_is_not_a_line_item_over_revenue() -> None:
    # issue 24: "net interest margin" (a bank's income over its earning assets) was computed as a retailer's
    # "Interest expense, net" over its revenue
    rows = {"Interest expense, net": {2023: "379"}, "Revenue": {2023: "33,000"}}
    question = "What was Fabrikam's net interest margin in fiscal 2023?"
    assert calculation_for(question, facts(rows)) is None
    assert calculation_for("What is the FY2023 interest expense % margin for Fabrikam?", facts(rows)) is not None


def test_net_income_is_the_bottom_line_whatever_the_statement_calls_it() -> None:
    # "net earnings attributable to ... shareholders" is the net income; the continuing-operations line is a part
    rows = {"Net earnings from continuing operations": {2021: "1,246", 2022: "807", 2023: "1,207"},
            "Net earnings attributable to Fabrikam Co., Inc. shareholders": {2021: "1,233", 2022: "897", 2023: "1,228"},
            "Operating income": {2021: "1,450", 2022: "1,375", 2023: "1,854"},
            "Revenue": {2021: "40,339", 2022: "39,528", 2023: "39,403"}}
    question = ("What is the FY2021 - FY2023 3 year average net profit margin (as a %) for Fabrikam? Answer in units "
                "of percents and round to one decimal place.")
    result = calculation_for(question, facts(rows), ignore={"fabrikam"})
    assert result is not None
    assert result.working.startswith("(1,233 / 40,339 × 100 + 897 / 39,528 × 100 + 1,228 / 39,403 × 100) / 3 = 2.8%")
