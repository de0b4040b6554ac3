"""Tables as data: invented statements (PDFs laid out as filings lay them, an XLSX and an HTML table)
read into cells with their label, section path, period, scale, unit, value and box (stored and
reindexed: tests/test_tables.py)."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

import pymupdf

from ingestion.context import DocumentContext
from ingestion.formats import office, web
from ingestion.numbers import read_values
from ingestion.parse import OcrOptions, parse_pdf
from ingestion.periods import read_period
from ingestion.tables import build_cells
from storage import tables
from tests.support.documents import docx_bytes, xlsx_bytes

LABEL_X = 60
COLUMN_RIGHT = (380, 450, 520, 590)

Line = tuple[str, list[str], int]  # label, values, indent (points)


def statement_pdf(captions: list[str], headers: list[list[str]], body: list[Line], *,
                  spans: dict[int, list[tuple[str, int, int]]] | None = None) -> bytes:
    """One page laid out like a filing's statement: centred caption lines, header rows right-aligned
    over their columns (`spans`: header row -> (text, first column, last column) centred over them),
    then label rows indented by depth with their values right-aligned in columns."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 60.0

    def right(text: str, column: int) -> None:
        page.insert_text((COLUMN_RIGHT[column] - pymupdf.get_text_length(text, fontsize=8), y), text, fontsize=8)

    for caption in captions:
        page.insert_text(((612 - pymupdf.get_text_length(caption, fontsize=9)) / 2, y), caption, fontsize=9)
        y += 13
    for n, header in enumerate(headers):
        for text, first, last in (spans or {}).get(n, []):
            middle = (COLUMN_RIGHT[first] - 30 + COLUMN_RIGHT[last]) / 2
            page.insert_text((middle - pymupdf.get_text_length(text, fontsize=8) / 2, y), text, fontsize=8)
        for column, text in enumerate(header):
            if text:
                right(text, column)
        y += 12
    for label, values, indent in body:
        page.insert_text((LABEL_X + indent, y), label, fontsize=8)
        for column, text in enumerate(values):
            right(text, column)
        y += 12
    page.insert_text((60, y + 20), "The accompanying notes are an integral part of these financial statements.",
                     fontsize=7)
    page.insert_text((300, 760), "42", fontsize=8)
    data = doc.tobytes()
    doc.close()
    return data


INCOME_IN_THOUSANDS = statement_pdf(
    ["Northwind Tools, Inc.", "Consolidated Statements of Operations", "(In thousands, except per share data)"],
    [["Year Ended December 31,", "", ""], ["2023", "2022", "2021"]],
    [("Net revenue", ["$ 1,693,954", "$ 1,512,300", "$ 1,204,877"], 0),
     ("Operating expenses:", [], 0),
     ("Cost of revenue", ["903,112", "850,004", "700,250"], 10),
     ("Restructuring", ["(4,210)", "-", "12,000"], 10),
     ("Total operating expenses", ["898,902", "850,004", "712,250"], 20),
     ("Net income (loss)", ["$ 795,052", "$ (12,004)", "$ 492,627"], 0),
     ("Diluted earnings per share", ["$ 3.12", "$ (0.05)", "$ 1.98"], 0),
     ("Weighted-average shares outstanding, diluted", ["254,820", "250,110", "248,700"], 0)],
)

QUARTER_IN_MILLIONS = statement_pdf(
    ["Fabrikam Corp.", "Condensed Consolidated Statements of Income", "(In millions, except per share amounts)"],
    [["", "", "", ""], ["March 31, 2024", "March 31, 2023", "March 31, 2024", "March 31, 2023"]],
    [("Revenues", ["$ 4,210", "$ 3,980", "$ 8,300", "$ 7,750"], 0),
     ("Gross margin", ["1,420", "1,305", "2,790", "2,560"], 0),
     ("Net income", ["$ 512", "$ 430", "$ 1,001", "$ 845"], 0),
     ("Basic earnings per share", ["$ 1.25", "$ 1.04", "$ 2.44", "$ 2.05"], 0)],
    spans={0: [("Three Months Ended", 0, 1), ("Six Months Ended", 2, 3)]},
)
QUARTER_CONTEXT = DocumentContext("Fabrikam Corp.", "10-Q", "Q2 FY2024", date(2024, 3, 31), 2024, 2)

CASH_AND_BALANCE = statement_pdf(
    ["Contoso Ltd.", "Consolidated Balance Sheets", "(Dollars in millions)"],
    [["December 31, 2023", "December 31, 2022"]],
    [("Assets", [], 0),
     ("Current assets:", [], 0),
     ("Cash and cash equivalents", ["$ 2,853", "$ 3,053"], 10),
     ("Inventories", ["4,366", "4,034"], 10),
     ("Total current assets", ["7,219", "7,087"], 20),
     ("Goodwill", ["10,051", "10,513"], 0),
     ("Total assets", ["$ 17,270", "$ 17,600"], 0)],
)

CASH_FLOWS = statement_pdf(
    ["Contoso Ltd.", "Consolidated Statements of Cash Flows", "(Millions)"],
    [["Years ended December 31,", ""], ["2023", "2022"]],
    [("Cash flows from operating activities", [], 0),
     ("Net income", ["$ 5,363", "$ 4,869"], 10),
     ("Adjustments to reconcile net income to net cash provided by operating activities:", [], 10),
     ("Depreciation and amortization", ["1,488", "1,544"], 20),
     ("Net cash provided by operating activities", ["6,439", "6,240"], 30),
     ("Cash flows from investing activities", [], 0),
     ("Purchases of property, plant and equipment", ["(1,577)", "(1,373)"], 10),
     ("Net cash used in investing activities", ["(222)", "(3,086)"], 30)],
)


def cells_of(data: bytes, context: DocumentContext | None = None) -> list[tables.CellRow]:
    return build_cells(parse_pdf(data, ocr=OcrOptions(enabled=False)), context)


def cell(cells: list[tables.CellRow], label: str, column: int) -> tables.CellRow:
    found = [c for c in cells if c.label == label and c.column == column]
    assert len(found) == 1, (label, column, [(c.label, c.column) for c in cells])
    return found[0]


def test_values_as_written() -> None:
    assert [(v.text, v.number) for v in read_values("(1,234)")] == [("(1,234)", -1234.0)]
    assert [(v.number, v.percent) for v in read_values("12.5%")] == [(12.5, True)]
    assert [(v.number, v.percent) for v in read_values("(0.7)%")] == [(-0.7, True)]
    assert [v.number for v in read_values("—")] == [0.0]
    assert [v.number for v in read_values("$ 32,765 $ 31,657")] == [32765.0, 31657.0]
    assert read_values("10-K") == []
    # storage/numbers.py's currency signs: a Canadian dollar cell is a value, not a word's tail
    assert [(v.text, v.number, v.currency) for v in read_values("C$ 1,234")] == [("1,234", 1234.0, "CAD")]


def test_periods_as_headers_write_them() -> None:
    fiscal = read_period("Fiscal 2023")
    assert (fiscal.kind, fiscal.fiscal_year) == ("year", 2023)
    q = read_period("Q2 2024")
    assert (q.kind, q.fiscal_year, q.quarter) == ("quarter", 2024, 2)
    instant = read_period("As of December 31, 2023")
    assert (instant.kind, instant.end, instant.fiscal_year) == ("instant", date(2023, 12, 31), 2023)
    ytd = read_period("Six Months Ended June 30, 2024")
    assert (ytd.kind, ytd.months, ytd.quarter, ytd.end) == ("ytd", 6, 2, date(2024, 6, 30))
    assert read_period("% Change") is None
    # a retailer's year ending in January, placed by the filing's own fiscal calendar
    retail = DocumentContext("R", "10-K", "FY2023", date(2024, 2, 3), 2023)
    assert read_period("February 3, 2024", retail, "Fiscal Year Ended").fiscal_year == 2023
    assert read_period("January 28, 2023", retail, "Fiscal Year Ended").fiscal_year == 2022


def test_statement_in_thousands_with_three_years() -> None:
    cells = cells_of(INCOME_IN_THOUSANDS)
    revenue = cell(cells, "Net revenue", 0)
    assert (revenue.value, revenue.scale, revenue.unit) == (1693954.0, 1e3, "USD")
    assert revenue.value * revenue.scale == 1_693_954_000
    assert (revenue.period_kind, revenue.fiscal_year, revenue.period_end) == ("year", 2023, date(2023, 12, 31))
    assert [cell(cells, "Net revenue", c).fiscal_year for c in range(3)] == [2023, 2022, 2021]
    assert "thousands" in revenue.scale_words and revenue.caption == "Consolidated Statements of Operations"
    loss = cell(cells, "Net income (loss)", 1)
    assert (loss.value_text, loss.value) == ("(12,004)", -12004.0)
    dash = cell(cells, "Restructuring", 1)
    assert (dash.value_text, dash.value) == ("-", 0.0)
    eps = cell(cells, "Diluted earnings per share", 1)
    assert (eps.value, eps.scale, eps.unit) == (-0.05, 1.0, "USD/share")
    shares = cell(cells, "Weighted-average shares outstanding, diluted", 0)
    assert (shares.unit, shares.scale) == ("shares", 1e3)
    assert cell(cells, "Cost of revenue", 0).section == ("Operating expenses",)
    assert cell(cells, "Total operating expenses", 0).section == ("Operating expenses",)
    assert cell(cells, "Net income (loss)", 0).section == ()
    assert {c.value for c in cells}.isdisjoint({42.0})  # the page number is no cell
    # each value's box is on its row, over its own column
    box, row = revenue.box, revenue.row_box
    assert box is not None and row is not None and row[1] <= box[1] <= box[3] <= row[3]
    assert COLUMN_RIGHT[0] - 60 < box[0] < box[2] <= COLUMN_RIGHT[0] + 2


def test_quarterly_header_in_millions_except_per_share() -> None:
    cells = cells_of(QUARTER_IN_MILLIONS, QUARTER_CONTEXT)
    quarter = cell(cells, "Net income", 0)
    assert quarter.period_label == "Three Months Ended March 31, 2024"
    assert (quarter.period_kind, quarter.months, quarter.fiscal_year, quarter.quarter) == ("quarter", 3, 2024, 2)
    assert (quarter.value, quarter.scale) == (512.0, 1e6)
    prior = cell(cells, "Net income", 1)
    assert (prior.period_kind, prior.fiscal_year, prior.quarter, prior.period_end) == \
        ("quarter", 2023, 2, date(2023, 3, 31))
    ytd = cell(cells, "Net income", 2)
    assert (ytd.period_label, ytd.period_kind, ytd.months) == ("Six Months Ended March 31, 2024", "ytd", 6)
    eps = cell(cells, "Basic earnings per share", 3)
    assert (eps.value, eps.scale, eps.unit, eps.fiscal_year) == (2.05, 1.0, "USD/share", 2023)


def test_balance_sheet_and_cash_flow_sections() -> None:
    balance = cells_of(CASH_AND_BALANCE)
    cash = cell(balance, "Cash and cash equivalents", 1)
    assert (cash.period_kind, cash.period_end, cash.fiscal_year, cash.scale) == \
        ("instant", date(2022, 12, 31), 2022, 1e6)
    assert cash.section[-1] == "Current assets"
    assert cell(balance, "Total current assets", 0).section[-1] == "Current assets"
    assert "Current assets" not in cell(balance, "Goodwill", 0).section
    flows = cells_of(CASH_FLOWS)
    total = cell(flows, "Net cash provided by operating activities", 0)
    assert total.section == ("Cash flows from operating activities",)
    assert " › ".join([*total.section, total.label]) == \
        "Cash flows from operating activities › Net cash provided by operating activities"
    assert cell(flows, "Depreciation and amortization", 0).section == (
        "Cash flows from operating activities",
        "Adjustments to reconcile net income to net cash provided by operating activities")
    capex = cell(flows, "Purchases of property, plant and equipment", 1)
    assert (capex.section, capex.value, capex.fiscal_year, capex.period_kind) == \
        (("Cash flows from investing activities",), -1373.0, 2022, "year")


def test_a_statements_title_above_the_companys_name_titles_its_table() -> None:
    # the caption line nearest the table is the company's; the statement's title stands above it
    data = statement_pdf(["Consolidated Statements of Cash Flows", "FABRIKAM, INC. AND SUBSIDIARIES", "(In Millions)"],
                         [["Fiscal Year", ""], ["2023", "2022"]],
                         [("Net cash provided by operating activities", ["3,676.2", "2,807.0"], 0)])
    flows = cell(cells_of(data), "Net cash provided by operating activities", 0)
    assert flows.caption == "Consolidated Statements of Cash Flows"
    note = statement_pdf(["Note 7. Debt", "FABRIKAM, INC. AND SUBSIDIARIES", "(In Millions)"],
                         [["Fiscal Year", ""], ["2023", "2022"]], [("Notes payable", ["279.0", "1,468.7"], 0)])
    assert cell(cells_of(note), "Notes payable", 0).caption == "FABRIKAM, INC. AND SUBSIDIARIES"  # the nearest


def test_xlsx_and_html_tables() -> None:
    data = xlsx_bytes({"Income": [
        ["Statement of income (in millions)"],
        [None, "Fiscal 2024", "Fiscal 2023"],
        ["Revenue", 1250.5, 1100],
        ["Operating costs", None, None],
        ["Selling", "(210)", "(190)"],
    ]})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "book.xlsx"
        path.write_bytes(data)
        parsed = office.parse_xlsx(path, max_rows=1000)
    cells = build_cells(parsed)
    revenue = cell(cells, "Revenue", 0)
    assert (revenue.value, revenue.scale, revenue.fiscal_year, revenue.period_kind, revenue.box) == \
        (1250.5, 1e6, 2024, "year", None)
    selling = cell(cells, "Selling", 1)
    assert (selling.value, selling.fiscal_year, selling.section) == (-190.0, 2023, ("Operating costs",))

    html = b"""<html><body><h2>Results</h2><p>(Dollars in thousands)</p><table>
      <tr><th></th><th colspan="2">Three Months Ended</th><th colspan="2">Nine Months Ended</th></tr>
      <tr><th></th><th>September 30, 2024</th><th>September 30, 2023</th>
          <th>September 30, 2024</th><th>September 30, 2023</th></tr>
      <tr><td>Net sales</td><td>$ 9,100</td><td>$ 8,200</td><td>$ 27,000</td><td>$ 24,500</td></tr>
      <tr><td>Gross margin</td><td>31.2%</td><td>30.1%</td><td>30.8%</td><td>29.9%</td></tr>
    </table></body></html>"""
    cells = build_cells(web.parse_html(html))
    sales = cell(cells, "Net sales", 2)
    assert (sales.value, sales.scale, sales.period_kind, sales.months, sales.period_end) == \
        (27000.0, 1e3, "ytd", 9, date(2024, 9, 30))
    assert cell(cells, "Net sales", 1).period_label == "Three Months Ended September 30, 2023"
    margin = cell(cells, "Gross margin", 0)
    assert (margin.value, margin.unit, margin.scale, margin.quarter) == (31.2, "%", 1.0, 3)


def test_docx_table() -> None:
    data = docx_bytes([("Heading 1", "Balance sheet"), ("Normal", "(In thousands)")],
                      table=[["", "As of June 30, 2024", "As of June 30, 2023"],
                             ["Cash", "12,400", "9,800"], ["Total liabilities", "(3,100)", "(2,950)"]])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sheet.docx"
        path.write_bytes(data)
        cells = build_cells(office.parse_docx(path))
    cash = cell(cells, "Cash", 1)
    assert (cash.value, cash.scale, cash.period_kind, cash.period_end) == (9800.0, 1e3, "instant", date(2023, 6, 30))
    assert cell(cells, "Total liabilities", 0).value == -3100.0


# ------------------------------------------------------------------ stored


def test_a_table_of_contents_and_running_headers_give_no_cells() -> None:
    # issue 39: "How many packages did Debian 1.1 ship" was offered "Building the package = 38" from the
    # contents page and "A Brief History of Debian = 2" from the running header "... | 2 / 21"
    doc = pymupdf.open()
    pages = 5
    for n in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        page.insert_text((60, 40), f"A Brief History of Widgets | {n} / {pages}", fontsize=8)
        if n == 1:
            for i, (heading, start) in enumerate([("1 Introduction", 1), ("2 Building the package", 2),
                                                  ("3 Updating the package", 3), ("4 Uploading the package", 4),
                                                  ("5 Index", 5)]):
                page.insert_text((LABEL_X, 100 + 14 * i), heading, fontsize=9)
                page.insert_text((COLUMN_RIGHT[0], 100 + 14 * i), str(start), fontsize=9)
        else:
            page.insert_text((LABEL_X, 100), "The widget project grew every year since its founding by volunteers.",
                             fontsize=9)
    statement = pymupdf.open(stream=INCOME_IN_THOUSANDS, filetype="pdf")
    doc.insert_pdf(statement)
    data = doc.tobytes()
    cells = cells_of(data)
    assert not [c for c in cells if c.page == 1 or "History" in c.label], [(c.page, c.label) for c in cells]
    assert cell(cells, "Net revenue", 0).value == 1_693_954  # the statement's figures stay


def pages_pdf(pages: list[list[tuple[float, float, str]]]) -> bytes:
    """Pages of text set where each (x, y, text) says."""
    doc = pymupdf.open()
    for items in pages:
        page = doc.new_page(width=612, height=792)
        for x, y, text in items:
            page.insert_text((x, y), text, fontsize=9)
    data = doc.tobytes()
    doc.close()
    return data


def right_at(column: int, y: float, text: str) -> tuple[float, float, str]:
    return COLUMN_RIGHT[column] - pymupdf.get_text_length(text, fontsize=9), y, text


def test_running_headers_with_section_titles_and_page_numbers_give_no_cells() -> None:
    # issue 39's fifth held-back batch: the FAQ's running header "CHAPTER 8. THE DEBIAN PACKAGE … | 8.1. WHAT
    # PROGRAMS DOES DEBIAN …" (a section's number, no page number) was composed as "… () was 8.1", and the
    # Developer's Reference's footer "8.3. I18N & L10N FAQ for translators | 95" as "… was 95": the title
    # changes with the section, so the words do not repeat; the page number runs with the pages.
    pages = []
    for n in range(1, 9):
        k = (n + 1) // 2  # a section every two pages
        title = ("Washing", "Drying", "Oiling", "Storing")[k - 1]
        items = [(60, 40, "CHAPTER 8. WIDGET CARE"), (330, 40, f"8.{k}. {title.upper()} THE WIDGET")]
        if n % 2:
            items += [(60, 760, f"8.{k}. {title} the widget"), right_at(3, 760, str(n + 6))]
        else:
            items += [(60, 760, str(n + 6)), (330, 760, "Chapter 8. Widget care")]
        if n == 5:  # a real table of figures, its first column numbered like sections
            items += [(60, 100, "Budget by section (in thousands)"), right_at(0, 114, "2023"), right_at(1, 114, "2022"),
                      (60, 128, "8.1 Personnel"), right_at(0, 128, "1,200"), right_at(1, 128, "1,350"),
                      (60, 142, "8.2 Travel"), right_at(0, 142, "300"), right_at(1, 142, "250"),
                      (60, 156, "Average rate (%)"), right_at(0, 156, "8.1"), right_at(1, 156, "7.9")]
        else:
            items.append((60, 100, "Clean the widget with a soft cloth before every use, as the maker advises."))
        pages.append(items)
    cells = cells_of(pages_pdf(pages))
    assert sorted((c.label, c.column, c.value) for c in cells) == [
        ("8.1 Personnel", 0, 1200), ("8.1 Personnel", 1, 1350), ("8.2 Travel", 0, 300), ("8.2 Travel", 1, 250),
        ("Average rate (%)", 0, 8.1), ("Average rate (%)", 1, 7.9)], [(c.page, c.label, c.value_text) for c in cells]
    assert cell(cells, "8.1 Personnel", 0).period_label == "2023"


def test_page_references_after_dot_leaders_are_no_figures() -> None:
    # an index set in two columns ("arcs . . . . 14, 16, 33 | fmfgraph . . . 9"): its numbers say where a word
    # is printed; a statement whose labels run to their figures with leaders keeps its figures
    index = [("arcs . . . . . . . 14, 16, 33", "fmfgraph . . . . . 9"), ("blobs . . . . . . . 17", "labels . . . . 31"),
             ("colors . . . . . . 12", "pens . . . . . . 24"), ("dots . . . . . . . 30", "shapes . . . . . 8")]
    pages = [[item for i, (left, right) in enumerate(index) for item in ((60, 100 + 14 * i, left),
                                                                         (330, 100 + 14 * i, right))]]
    pages.append([(60, 100, "Results (in thousands)"), right_at(0, 114, "2023"), right_at(1, 114, "2022"),
                  (60, 128, "Net sales . . . . . . . . . . . ."), right_at(0, 128, "1,234"), right_at(1, 128, "1,100"),
                  (60, 142, "Stores open at year end . . . . ."), right_at(0, 142, "45"), right_at(1, 142, "43")])
    # the pages the index refers to (no reference past the document's last page: 40)
    pages += [[(60, 100, "The widget project grew every year since its founding by volunteers.")] for _ in range(38)]
    for n, page in enumerate(pages, 1):
        page.append((300, 760, str(n)))
    cells = cells_of(pages_pdf(pages))
    assert sorted((c.page, c.value) for c in cells) == [(2, 43), (2, 45), (2, 1100), (2, 1234)], [
        (c.page, c.label, c.value_text) for c in cells]
