"""How text names a period: months, dates, years, fiscal years and quarters, read one way (the
words and patterns are lexicon.py's; here their matches become dates, years and quarters).

Three readers use them: the period a question asks about (storage/question_period.py, and
through it the graph's figure lookup and refusals), a filing's cover page (ingestion/context.py) and
a table column's header (ingestion/periods.py). They live here, in the lowest layer all of them may
import (tests/test_structure.py), so that "Q2 FY23", "2Q23", "fiscal '22" or "Sept. 30, 2023" read
the same wherever they are written.
"""

from __future__ import annotations

import re
from datetime import date

from lexicon import DATES, FISCAL, MONTHS, QUARTER, YEAR
from lexicon import QUARTER_ORDINALS as _ORDINAL


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
