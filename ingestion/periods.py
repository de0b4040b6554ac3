"""A table column's header read as a period: a fiscal year, a quarter, a year to date or a date.

Statements head their columns with what the period is and when it ends, often over several lines
and with parts that span columns: "Three Months Ended | Six Months Ended" over "July 29, 2023 |
July 30, 2022 | ...", "Years ended December 31" over "2018 | 2017 | 2016", "December 31," over
"2023", "Fiscal 2023", "Q2 2024", "As of December 31, 2023". The column's joined header (the
caption's period words first) is read here into a kind (year | quarter | ytd | instant), an end
date where one is written, and the fiscal year and quarter. A date is placed in the document's
own fiscal calendar (ingestion/context.py: the filing's fiscal year and where it ends) when the
document states one; else by the calendar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from ingestion.context import DocumentContext, _add_months, _fiscal_year
from lexicon import DATE, FISCAL, MONTH, QUARTER, YEAR
from storage.periods import date_of, full_year, matched_date, quarter_of

Kind = Literal["year", "quarter", "ytd", "instant"]

_FULL_DATE = re.compile(rf"\b{DATE}\b", re.I)
_MONTH_DAY = re.compile(rf"\b(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})\b(?!\s*,?\s*\d)", re.I)
_MONTHS_ENDED = (
    (re.compile(r"\b(?:three|3|thirteen|13|twelve|12|fourteen|14)[\s-]+weeks\b", re.I), 3),
    (re.compile(r"\b(?:three|3)[\s-]+months\b|\bquarters?\s+ended\b|\bfourth\s+quarter\b", re.I), 3),
    (re.compile(r"\b(?:six|6|twenty[\s-]six|26|twenty[\s-]seven|27)[\s-]+(?:months|weeks)\b", re.I), 6),
    (re.compile(r"\b(?:nine|9|thirty[\s-]nine|39|forty|40)[\s-]+(?:months|weeks)\b", re.I), 9),
    (re.compile(r"\b(?:twelve|12)[\s-]+months\b|\b(?:fifty[\s-]two|52|fifty[\s-]three|53)[\s-]+weeks\b"
                r"|\byears?\b(?!\s+to\s+date)", re.I), 12),
)
_YTD_WORDS = re.compile(r"\b(?:year|fiscal\s+year)[\s-]+to[\s-]+date\b|\bytd\b", re.I)
_ENDED = re.compile(r"\b(?:ended|ending|end)\b", re.I)
_INSTANT = re.compile(r"\b(?:as\s+of|as\s+at|at|balance)\b", re.I)
# Words a column header is made of; a header row holds nothing else.
HEADER_WORDS = re.compile(
    rf"^(?:{MONTH}|\d{{1,2}},?|(?:19|20)\d{{2}}[*†‡]?|\(?\d\)|fiscal|fy\d*|years?|quarters?|months|weeks|ended|ending|"
    r"as|of|at|to|date|the|and|three|six|nine|twelve|thirteen|twenty[\s-]?six|thirty[\s-]?nine|fifty[\s-]?(?:two|three)|"
    r"\d{1,2}|q[1-4]|[1-4]q|first|second|third|fourth|ytd|full|period|unaudited|audited|restated|actual|"
    r"change|%|increase|decrease|\(decrease\)|\(increase\)|variance|[-–—/,:()*]+)$", re.I)


@dataclass(frozen=True)
class Period:
    label: str  # the header as written, lines joined ("Three Months Ended July 29, 2023")
    kind: Kind | None
    fiscal_year: int | None = None
    quarter: int | None = None  # 1-4: the quarter, or the last quarter a year to date covers
    end: date | None = None
    months: int | None = None  # 3, 6, 9 or 12 for a duration; None for an instant


def is_header_text(text: str) -> bool:
    """`text` (one header cell) is made of period words only, and names a year, a month or a duration."""
    words = re.findall(r"[^\s]+", text.replace("\u00a0", " "))
    if not words or not all(HEADER_WORDS.match(w) for w in words):
        return False
    return bool(YEAR.search(text) or FISCAL.search(text) or QUARTER.search(text)
                or re.search(rf"\b{MONTH}\b|\bended\b|\bmonths\b|\bweeks\b|\byears?\b", text, re.I))


def has_period_words(text: str) -> bool:
    """A caption row that says something about the columns' periods ("Years ended December 31")."""
    return bool(re.search(r"\b(?:ended|ending|months|weeks|fiscal|quarters?|as\s+of|as\s+at|at\s+"
                          rf"{MONTH})\b", text, re.I)) and len(text) <= 80


def _fiscal_year_end(context: DocumentContext | None) -> tuple[date, int] | None:
    """(the end of the document's fiscal year, that year's number), when the document says."""
    if context is None or context.period_end is None or context.fiscal_year is None:
        return None
    if context.quarter:
        return _add_months(context.period_end, 3 * (4 - context.quarter)), context.fiscal_year
    if context.form in ("10-K", "20-F", "40-F") or context.period.startswith("FY"):
        return context.period_end, context.fiscal_year
    return None


def _place(end: date, context: DocumentContext | None) -> tuple[int, int]:
    """(fiscal year, quarter 1-4) a period ending on `end` closes, in the document's calendar."""
    anchor = _fiscal_year_end(context)
    if anchor is not None:
        fy_end, fiscal_year = anchor
        offset = round((fy_end - end).days / (365.25 / 4))  # quarters before the fiscal year's end
        return fiscal_year - offset // 4, 4 - offset % 4
    shifted = end - timedelta(days=7) if end.day <= 7 else end  # 52/53-week periods end in a month's first days
    return _fiscal_year(end, ""), (shifted.month - 1) // 3 + 1


def read_period(label: str, context: DocumentContext | None = None, caption: str = "") -> Period | None:
    """The period a column header names (`caption`: the table's period words above all columns),
    or None when the header names none (a "% Change" column)."""
    text = " ".join(f"{caption} {label}".split())
    if not text:
        return None
    months = next((n for pattern, n in _MONTHS_ENDED if pattern.search(text)), None)
    ytd = bool(_YTD_WORDS.search(text))
    end = None
    full = _FULL_DATE.search(text)
    if full:
        end = matched_date(full)
    year_match = YEAR.search(_FULL_DATE.sub(" ", text)) if end is None else None
    if end is None and year_match:
        month_day = _MONTH_DAY.search(text)
        if month_day:
            end = date_of(month_day.group("month"), month_day.group("day"), year_match.group("year"))
    fiscal = FISCAL.search(text)
    quarter_said = QUARTER.search(text)
    fiscal_year = quarter = None
    if quarter_said:
        quarter = quarter_of(quarter_said)
        if quarter_said.group("year"):
            fiscal_year = full_year(quarter_said.group("year"))
        months = months if months and months != 12 else 3
    if fiscal:
        fiscal_year = full_year(fiscal.group("year"))
    if end is not None:
        placed_year, placed_quarter = _place(end, context)
        fiscal_year = fiscal_year or placed_year
        quarter = quarter or placed_quarter
    elif fiscal_year is None and year_match:
        fiscal_year = int(year_match.group("year"))
    if fiscal_year is None:
        return None
    kind: Kind
    if ytd:
        kind, months = "ytd", months if months in (6, 9) else None
    elif months == 3:
        kind = "quarter"
    elif months in (6, 9):
        kind = "ytd"
    elif months == 12:
        kind = "year"
    elif _ENDED.search(text):
        kind = "quarter" if context is not None and context.form == "10-Q" else "year"
        months = 3 if kind == "quarter" else 12
    elif end is not None or _INSTANT.search(text):
        kind = "instant"
    else:
        kind, months = "year", 12  # "2023", "Fiscal 2023": a fiscal year
    if kind == "year":
        quarter = None
    if kind == "instant":
        months = None
        quarter = quarter if quarter != 4 else None
    if kind == "ytd" and months and end is None and quarter is None:
        quarter = months // 3
    return Period(" ".join(label.split()) or " ".join(caption.split()), kind, fiscal_year, quarter, end, months)
