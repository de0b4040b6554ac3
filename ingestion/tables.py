"""Statement rows that say which year each figure belongs to.

A financial statement prints its years once, in a header row ("2022 | 2021 | 2020"), and each line
item below as "Net sales | 32,765 | 31,657 | 30,109". Read alone, as a chunk is, that row cannot
tell a question about 2022 net sales from one about 2020. Under such a header each figure of a
row is written with its column's year ("Net sales | 2022: 32,765 | 2021: 31,657 | 2020: 30,109"),
so the year sits beside the value for the full-text index, the embedding and the model alike.
The rule is general layout, not tuned on questions: a header is a row whose figures are all
distinct years, and it labels the rows of its table below it that have exactly one figure per year.
"""

from __future__ import annotations

import re

YEAR_RE = re.compile(r"\b(19[5-9]\d|20[0-9]\d)\b")
FIGURE_RE = re.compile(r"^\(?[-–]?\$?\s*\d[\d,]*(\.\d+)?\)?\s*%?$|^[—–-]+$")
CURRENCY_CELLS = {"$", "€", "£", "%"}
HEADER_REACH = 3  # untagged rows (titles, "(in millions)") a header may sit above its table


def header_years(cells: list[str]) -> list[str]:
    """The years of a header row ("2022 | 2021", "Year ended Dec 31, 2022 | 2021"), else []."""
    years = [m.group(1) for cell in cells for m in [YEAR_RE.search(cell)] if m]
    with_digits = [c for c in cells if any(ch.isdigit() for ch in c)]
    if len(years) >= 2 and len(years) == len(with_digits) and len(set(years)) == len(years):
        return years
    return []


def _figures(cells: list[str]) -> tuple[str, list[str]] | None:
    """(label, figures) of "label | figure | figure ...", currency cells dropped; else None."""
    kept = [c for c in cells if c.strip() not in CURRENCY_CELLS]
    if len(kept) < 2 or not any(ch.isalpha() for ch in kept[0]):
        return None
    figures = kept[1:]
    if not all(FIGURE_RE.match(f.strip()) for f in figures):
        return None
    return kept[0], figures


def with_column_years(page_rows: list[list[str]], tables: list[int | None]) -> list[list[str]]:
    """The page's rows (cells), each figure of a statement row prefixed with its column's year."""
    out: list[list[str]] = []
    years: list[str] = []
    years_table: int | None = None
    pending: list[str] = []  # a header seen just above a table, waiting for the table's first row
    since_pending = 0
    for cells, table in zip(page_rows, tables, strict=True):
        found = header_years(cells)
        if found:
            if table is None:
                pending, since_pending = found, 0
            else:
                years, years_table = found, table
            out.append(cells)
            continue
        if table is not None and pending and table != years_table:
            years, years_table, pending = pending, table, []
        if table is None:
            since_pending += 1
            if since_pending > HEADER_REACH:
                pending = []
        row = _figures(cells) if table is not None and table == years_table else None
        if row is not None and len(row[1]) == len(years):
            label, figures = row
            out.append([label, *(f"{y}: {f}" for y, f in zip(years, figures, strict=True))])
        else:
            out.append(cells)
    return out
