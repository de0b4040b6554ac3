"""The period a question asks about, and how well each filing covers it.

A question names a period as people write it: "Q2 2023", "2Q23", "second quarter of fiscal 2023",
"FY23", "fiscal 2022", "as of December 31, 2022", "in 2019", "from 2021 to 2022". A filing covers
its own period (a 10-K its fiscal year, a 10-Q its quarter, an 8-K or a release its date) and holds
earlier ones as comparatives: a 10-K's statements show the two years before its own (income and cash
flows: three years; the balance sheet two), a 10-Q the same quarter a year earlier, a release the
year before. So the filing of the period asked comes first, those holding it as comparatives after
it; the rest are not excluded (storage/document_filter.py ranks them lowest).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_DATE = re.compile(r"\b(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2})\s*,?\s*(?P<year>(?:19|20)\d{2})\b")
_YEAR = re.compile(r"(?<![\d$.,])((?:19|20)\d{2})(?![\d%])")
_SHORT_YEAR = re.compile(r"\b(?:fy|fiscal(?:\s+year)?)\s*'?(\d{2})\b", re.I)
_QUARTER = re.compile(
    r"\b(?:q([1-4])\s*(?:fy\s*)?'?((?:19|20)?\d{2})?|([1-4])q\s*'?((?:19|20)?\d{2})?"
    r"|(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter"
    r"(?:\s+(?:of|in|for)\s+(?:the\s+)?(?:fiscal\s+(?:year\s+)?|fy\s*)?'?((?:19|20)?\d{2}))?)\b", re.I)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
# a filing's own period label (ingestion/context.py): "FY2022", "Q2 FY2024"
_LABEL = re.compile(r"^(?:Q(?P<quarter>[1-4])\s+)?FY(?P<year>\d{4})$")
ANNUAL_FORMS = frozenset({"10-K", "20-F", "40-F"})
COMPARATIVE_YEARS = {"10-K": 2, "20-F": 2, "40-F": 2, "10-Q": 1, "earnings release": 1}

OWN, COMPARATIVE, OTHER = 0, 1, 2  # how a filing covers the period asked


def _year(text: str | None) -> int | None:
    if not text:
        return None
    y = int(text)
    return y if y >= 1900 else 2000 + y


@dataclass(frozen=True)
class AskedPeriod:
    years: frozenset[int] = frozenset()  # every year named (fiscal or calendar)
    quarter: int | None = None
    day: date | None = None  # "as of December 31, 2022"

    @property
    def latest(self) -> int | None:
        """The year a question spanning several ("from 2021 to 2022") is answered from: its last."""
        return max(self.years) if self.years else None

    def __bool__(self) -> bool:
        return bool(self.years or self.quarter or self.day)


def asked_period(question: str) -> AskedPeriod:
    years: set[int] = set()
    day: date | None = None
    for m in _DATE.finditer(question):
        month = _MONTHS.get(m.group("month").lower())
        if month is None:
            continue
        try:
            day = day or date(int(m.group("year")), month, int(m.group("day")))
        except ValueError:
            continue
    quarter: int | None = None
    for m in _QUARTER.finditer(question):
        q = m.group(1) or m.group(3) or m.group(5)
        quarter = quarter or (int(q) if q.isdigit() else _ORDINAL[q.lower()])
        y = _year(m.group(2) or m.group(4) or m.group(6))
        if y:
            years.add(y)
    years |= {int(y) for y in _YEAR.findall(question)}
    years |= {2000 + int(y) for y in _SHORT_YEAR.findall(question)}
    return AskedPeriod(frozenset(years), quarter, day)


@dataclass(frozen=True)
class FilingPeriod:
    form: str = ""
    fiscal_year: int | None = None
    quarter: int | None = None
    end: date | None = None

    @classmethod
    def of(cls, form: str | None, period: str | None, end: date | None) -> FilingPeriod:
        label = _LABEL.match(period or "")
        if label:
            q = label.group("quarter")
            return cls(form or "", int(label.group("year")), int(q) if q else None, end)
        return cls(form or "", None, None, end)

    @property
    def known(self) -> bool:
        return self.fiscal_year is not None or self.end is not None


def coverage(filing: FilingPeriod, asked: AskedPeriod) -> int:
    """OWN when the filing is of the period asked, COMPARATIVE when it holds it as an earlier
    period (or is of another year the question names), OTHER else (and for a filing whose period
    was not read: nothing says it is not about it, nothing says it is)."""
    if not asked or not filing.known:
        return OTHER
    if asked.day is not None and filing.end == asked.day:
        return OWN
    year = filing.fiscal_year
    years = set(asked.years)
    if year is None:  # an 8-K or an unlabelled filing: its date's calendar year
        assert filing.end is not None
        return COMPARATIVE if filing.end.year in years else OTHER
    latest = asked.latest
    annual = filing.form in ANNUAL_FORMS or filing.quarter is None
    if asked.quarter is not None:
        same_quarter = filing.quarter == asked.quarter or (asked.quarter == 4 and annual)
        if same_quarter and (latest is None or year == latest):
            return OWN
        back = COMPARATIVE_YEARS.get(filing.form, 1)
        if latest is not None and same_quarter and 0 < year - latest <= back:
            return COMPARATIVE
        return COMPARATIVE if latest is not None and year == latest else OTHER
    if latest is None:
        return OTHER
    if year == latest:
        return OWN if annual else COMPARATIVE
    if year in years:  # "from 2021 to 2022": the 2021 filing also holds what is asked
        return COMPARATIVE
    back = COMPARATIVE_YEARS.get(filing.form, 0) if annual else 0
    return COMPARATIVE if 0 < year - latest <= back else OTHER
