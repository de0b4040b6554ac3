"""How text names a period: months, dates, years, fiscal years and quarters, read one way.

Three readers use these words: the period a question asks about (storage/question_period.py, and
through it the graph's figure lookup and refusals), a filing's cover page (ingestion/context.py) and
a table column's header (ingestion/periods.py). They live here, in the lowest layer all of them may
import (tests/test_structure.py), so that "Q2 FY23", "2Q23", "fiscal '22" or "Sept. 30, 2023" read
the same wherever they are written.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
# a month's name or abbreviation, as a pattern to embed (every spelling is a key of MONTHS)
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
_YEAR4 = r"(?P<year>(?:19|20)\d{2})"
# "December 31, 2022", "Sept. 30 2023"; DAY_FIRST: "30 June 2023", "1st of July, 2022" (patterns to embed)
DATE = rf"(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})\s*,?\s*{_YEAR4}"
DAY_FIRST = rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{MONTH}),?\s+{_YEAR4}"
DATES = (re.compile(rf"\b{DATE}\b", re.I), re.compile(rf"\b{DAY_FIRST}\b", re.I))
# a year written alone: not part of an amount ("$2019 million", "1,2019", "2019.5") nor a percentage
YEAR = re.compile(rf"(?<![\d,.$]){_YEAR4}(?![\d%]|[,.]\d)")
# "FY23", "fiscal 2022", "fiscal year '22"
FISCAL = re.compile(r"\b(?:fiscal(?:\s+year)?|fy)\s*'?(?P<year>(?:19|20)?\d{2})\b", re.I)
# "Q2", "Q2 FY23", "2Q23", "second quarter", "2nd fiscal quarter of fiscal 2023", with the year when it follows
QUARTER = re.compile(
    r"\b(?:q(?P<n>[1-4])|(?P<n2>[1-4])q|(?P<word>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter)"
    r"(?:\s*(?:(?:of|in|for)\s+)?(?:the\s+)?(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(?P<year>(?:19|20)?\d{2})\b|\b)", re.I)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def full_year(text: str) -> int:
    """A year as written, two digits meaning this century ("23" -> 2023)."""
    year = int(text)
    return year + 2000 if year < 100 else year


def date_of(month: str, day: str | int, year: str | int) -> date | None:
    """The date a month's name, a day and a year write; None for one that is not a day ("February 30")."""
    number = MONTHS.get(month.lower().rstrip("."))
    try:
        return date(int(year), number, int(day)) if number else None
    except ValueError:
        return None


def matched_date(match: re.Match[str]) -> date | None:
    """The date a match of DATE or DAY_FIRST (groups month, day, year) writes."""
    return date_of(match.group("month"), match.group("day"), match.group("year"))


def first_date(text: str) -> date | None:
    """The first real date `text` writes, month first or day first."""
    found = sorted((m.start(), d) for pattern in DATES for m in pattern.finditer(text)
                   if (d := matched_date(m)) is not None)
    return found[0][1] if found else None


def quarter_of(match: re.Match[str]) -> int:
    """The quarter (1-4) a QUARTER match names."""
    number = match.group("n") or match.group("n2")
    return int(number) if number else _ORDINAL[match.group("word").lower()]


def first_quarter(text: str) -> int | None:
    """The first quarter `text` names ("the second quarter" -> 2), None when it names none."""
    match = QUARTER.search(text)
    return quarter_of(match) if match else None


def years_named(text: str) -> tuple[int, ...]:
    """Every year `text` names, alone, as a fiscal year or with a quarter ("2Q23"), earliest first."""
    years = {int(m.group("year")) for m in YEAR.finditer(text)}
    years |= {full_year(m.group("year")) for pattern in (FISCAL, QUARTER) for m in pattern.finditer(text)
              if m.group("year")}
    return tuple(sorted(years))
