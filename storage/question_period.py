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

from dataclasses import dataclass
from datetime import date

from lexicon import FORMS_NAMED, PERIOD_LABEL
from storage.periods import first_date, first_quarter, years_named

_FORM_NAMED = FORMS_NAMED  # the kind of filing a question names
ANNUAL_FORMS = frozenset({"10-K", "20-F", "40-F"})
COMPARATIVE_YEARS = {"10-K": 2, "20-F": 2, "40-F": 2, "10-Q": 1, "earnings release": 1}

OWN, COMPARATIVE, OTHER = 0, 1, 2  # how a filing covers the period asked


@dataclass(frozen=True)
class AskedPeriod:
    years: tuple[int, ...] = ()  # every year named (fiscal or calendar), earliest first
    quarter: int | None = None
    day: date | None = None  # "as of December 31, 2022"
    form: str = ""  # "10-K", "10-Q", "8-K", "earnings release" where the question names one

    @property
    def latest(self) -> int | None:
        """The year a question spanning several ("from 2021 to 2022") is answered from: its last."""
        return self.years[-1] if self.years else None

    def __bool__(self) -> bool:
        return bool(self.years or self.quarter or self.day or self.form)


def asked_period(question: str) -> AskedPeriod:
    form = next((f for pattern, f in _FORM_NAMED if pattern.search(question)), "")
    return AskedPeriod(years_named(question), first_quarter(question), first_date(question), form)


@dataclass(frozen=True)
class FilingPeriod:
    form: str = ""
    fiscal_year: int | None = None
    quarter: int | None = None
    end: date | None = None

    @classmethod
    def of(cls, form: str | None, period: str | None, end: date | None) -> FilingPeriod:
        label = PERIOD_LABEL.match(period or "")
        if label:
            q = label.group("quarter")
            return cls(form or "", int(label.group("year")), int(q) if q else None, end)
        return cls(form or "", None, None, end)

    @property
    def known(self) -> bool:
        return self.fiscal_year is not None or self.end is not None


def coverage(filing: FilingPeriod, asked: AskedPeriod) -> int:
    """OWN when the filing is of the period (and the form) asked, COMPARATIVE when it holds the
    period as an earlier one (or is of another year the question names, or of the period but not
    of the form named), OTHER else (and for a filing whose period was not read: nothing says it
    is not about it, nothing says it is)."""
    level = _period_coverage(filing, asked)
    if asked.form and filing.form and filing.form != asked.form:
        return max(level, COMPARATIVE)
    if asked.form and filing.form == asked.form and not (asked.years or asked.quarter or asked.day):
        return OWN  # "the 8-K": the form alone
    return level


def _period_coverage(filing: FilingPeriod, asked: AskedPeriod) -> int:
    if not (asked.years or asked.quarter or asked.day) or not filing.known:
        return OTHER
    if asked.day is not None and filing.end == asked.day:
        return OWN
    year = filing.fiscal_year
    years = set(asked.years)
    if year is None:  # an 8-K or an unlabelled filing: its date's calendar year
        assert filing.end is not None
        if filing.end.year in years:
            return OWN if asked.form and asked.form == filing.form else COMPARATIVE
        return OTHER
    latest = asked.latest
    annual = filing.form in ANNUAL_FORMS or filing.quarter is None
    back = COMPARATIVE_YEARS.get(filing.form, 1)
    if asked.quarter is not None:
        same_quarter = filing.quarter == asked.quarter or (asked.quarter == 4 and annual)
        if same_quarter and (latest is None or year == latest):
            return OWN
        if latest is not None and same_quarter and 0 < year - latest <= back:
            return COMPARATIVE
        return COMPARATIVE if latest is not None and year == latest else OTHER
    if latest is None:
        return OTHER
    if year == latest:
        return OWN if annual else COMPARATIVE
    if year in years:  # "from 2021 to 2022": the 2021 filing also holds what is asked
        return COMPARATIVE
    # a 10-K holds the two years before its own, a 10-Q and a release the year before
    return COMPARATIVE if 0 < year - latest <= back else OTHER


OWNER_VALUE_CHARS = 120  # the longest company / form / period an owner may set (every surface)


def owner_period(value: str) -> tuple[str, date | None]:
    """A period an owner sets by hand as the label ingestion writes: "fy22", "fiscal 2022" ->
    "FY2022"; "Q2 2024", "2Q FY24" -> "Q2 FY2024"; "2022-07-01" -> that date. "" clears it.
    ValueError, with what is accepted, for anything else."""
    value = " ".join(value.split())
    if not value:
        return "", None
    try:
        day = date.fromisoformat(value)
        return day.isoformat(), day
    except ValueError:
        pass
    asked = asked_period(value)
    if len(asked.years) == 1 and asked.day is None and not asked.form:
        year = asked.latest
        return (f"Q{asked.quarter} FY{year}" if asked.quarter else f"FY{year}"), None
    raise ValueError(f"period {value!r} is not one period: write FY2022, Q2 FY2024 or a date (2022-07-01)")
