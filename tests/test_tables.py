"""Statement rows carry their column's year (ingestion/tables.py)."""

from __future__ import annotations

from ingestion.tables import header_years, with_column_years


def test_a_header_of_years_labels_the_figures_of_its_table() -> None:
    rows = [["Consolidated Statement of Income"], ["(in millions)", "2022", "2021", "2020"],
            ["Net sales", "$", "32,765", "$", "31,657", "$", "30,109"], ["Cost of sales", "(19,000)", "—", "(17,000)"]]
    out = with_column_years(rows, [None, 1, 1, 1])
    assert out[2] == ["Net sales", "2022: 32,765", "2021: 31,657", "2020: 30,109"]
    assert out[3] == ["Cost of sales", "2022: (19,000)", "2021: —", "2020: (17,000)"]
    assert out[:2] == rows[:2]  # titles and the header itself are left as they are


def test_rows_that_do_not_fit_the_header_are_left_alone() -> None:
    rows = [["2022", "2021"], ["Net sales", "10", "9", "8"], ["Narrative text with 2022 in it"],
            ["Margin", "12%", "11%"]]
    out = with_column_years(rows, [1, 1, None, 2])
    assert out[1] == rows[1]  # three figures under two years
    assert out[3] == rows[3]  # another table, no header of its own


def test_a_header_just_above_its_table_counts() -> None:
    rows = [["Year ended December 31, 2019", "2018"], ["(in millions)"], ["Revenue", "5", "4"]]
    assert with_column_years(rows, [None, None, 3])[2] == ["Revenue", "2019: 5", "2018: 4"]


def test_what_is_a_header() -> None:
    assert header_years(["Fiscal year", "2019", "2018", "2017"]) == ["2019", "2018", "2017"]
    assert header_years(["Net sales", "2019", "1,234"]) == []  # a figure is not a year
    assert header_years(["2019", "2019"]) == []  # the same year twice: quarters or halves, not columns
    assert header_years(["Page 4"]) == []
