"""What a document is, read from the document itself: company, form and fiscal period.

A chunk's heading used to start with the file name, which says nothing when a user's file is called
"download (3).pdf". SEC filings state what they are on their cover page, in a fixed layout:
"FORM 10-Q", "For the quarterly period ended July 1, 2023", the registrant's name above
"(Exact name of registrant as specified in its charter)". Earnings releases say it in their title
("X Reports Fourth Quarter and Full Year 2022 Results") and their first sentence ("... ended
December 31, 2022"). The rules below are written once from those layouts; the file name is never
read. Anything else (a memo, a slide deck) gets a title where one is found, or nothing.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from ingestion.units import Row
from lexicon import DATE, DAY_FIRST
from storage.periods import matched_date

COVER_PAGES = 3  # the cover page and what may precede it (a "Table of Contents" link page)
SAMPLE_PAGES = 15  # where a 10-Q's "six months ended" statement headers and "fiscal 2024" mentions are
RUNNING_ROW_SHARE = 0.2  # as in chunk.py: a row on this share of pages is a running header or footer

_FORM = re.compile(r"\bFORM\s+(10-?K|10-?Q|8-?K|20-?F|40-?F|6-?K)\b", re.I)
_FORM_BY_REPORT = (  # a cover page without the "FORM" line still names its report
    (re.compile(r"\bANNUAL\s+REPORT\s+PURSUANT\s+TO\s+SECTION", re.I), "10-K"),
    (re.compile(r"\bQUARTERLY\s+REPORT\s+PURSUANT\s+TO\s+SECTION", re.I), "10-Q"),
    (re.compile(r"\bCURRENT\s+REPORT\s+PURSUANT\s+TO\s+SECTION", re.I), "8-K"),
)
_FISCAL_YEAR_ENDED = re.compile(r"fiscal\s+year\s+ended\s*:?\s*" + DATE, re.I)
_QUARTER_ENDED = re.compile(r"(?:quarterly\s+period|fiscal\s+quarter|quarter)\s+ended\s*:?\s*" + DATE, re.I)
# a cover written day first ("For the quarterly period ended 30 June 2023")
_QUARTER_ENDED_DAY_FIRST = re.compile(r"(?:quarterly\s+period|fiscal\s+quarter|quarter)\s+ended\s*:?\s*"
                                      + DAY_FIRST, re.I)
_FISCAL_YEAR_ENDED_DAY_FIRST = re.compile(r"fiscal\s+year\s+ended\s*:?\s*" + DAY_FIRST, re.I)
# "second quarter of fiscal 2024", "fiscal 2024 second quarter": how a 10-Q names its own quarter
_FISCAL_QUARTER_NAMED = re.compile(
    r"\b(?:(?P<q1>first|second|third|fourth)\s+quarter\s+of\s+fiscal\s+(?:year\s+)?(?P<y1>(?:19|20)\d{2})"
    r"|fiscal\s+(?:year\s+)?(?P<y2>(?:19|20)\d{2})\s+(?P<q2>first|second|third|fourth)\s+quarter)\b", re.I)
_FILE_NUMBER_VALUE = re.compile(r"commission\s+file\s+(?:number|no\.?)\s*[:.]?\s*(\d{1,4})\s*-\s*(\d{3,6})\b", re.I)
_FORMER_CAPTION = re.compile(r"\(?\s*former\s+name", re.I)
_STATE_CAPTION = re.compile(r"\(?\s*state\s+(?:or\s+other\s+jurisdiction\b|of\s+(?:incorporation|organi[sz]ation))",
                            re.I)
_STATE_SAID = re.compile(r"state\s+of\s+incorporation\s*:\s*([A-Za-z .]{3,40}?)\s*(?:\||$|I\.R\.S|IRS)", re.I)
_TRADING_SYMBOL = re.compile(r"trading\s+symbols?(?:\(s\))?", re.I)
_SYMBOL = re.compile(r"[A-Z]{1,5}(?:\.[A-Z])?")
_NOT_A_SYMBOL = frozenset({"NYSE", "N/A", "NA", "NONE", "USD", "LLC", "INC", "THE", "CO", "PLC", "ADS", "ADR"})
_EXCHANGE_TICKER = re.compile(r"\((?:NYSE|NASDAQ|Nasdaq|NYSE American|ASX|LSE|TSX)\s*:\s*([A-Z]{1,5}(?:\.[A-Z])?)\)")
_NOTHING = re.compile(r"^(?:n/?a|none|not\s+applicable|no\s+change|unchanged)\.?$", re.I)
_REPORT_DATE = re.compile(r"date\s+of\s+report\b[^:]{0,60}:?\s*" + DATE, re.I)
_PERIOD_ENDED = re.compile(r"\b(?:quarter|year|months|weeks|period)\b[^.]{0,40}?\bended\s*:?\s*" + DATE, re.I)
_RELEASE_PREFIX = re.compile(  # what may precede a release's title: "Exhibit 99.1", "PRESS RELEASE", its date
    r"^(?:(?:exhibit\s+[\d.]+|(?:for\s+immediate|press|news)\s+release)\W*|" + DATE + r"\W*)+", re.I)
_REGISTRANT = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_FILE_NUMBER = re.compile(r"commission\s+file\s+(?:number|no)", re.I)
_RELEASE_TITLE = re.compile(
    r"^(?P<company>.{2,80}?)\s+(?:reports?|announces?|posts?|delivers?)\s+.*?\b(?:results?|quarter|earnings)\b", re.I)
_TICKER = re.compile(r"(?P<company>(?:[A-Z0-9][\w.&'’-]*,?\s+){0,5}[A-Z0-9][\w.&'’-]*)\s*\((?:NYSE|NASDAQ|Nasdaq|"
                     r"NYSE American|ASX|LSE|TSX)\s*:\s*[A-Z.]{1,6}\)")
_QUARTER_WORD = re.compile(r"\b(first|second|third|fourth)\s+quarter\b", re.I)
_QUARTER_NUM = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_FISCAL_NAMED = re.compile(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d{2})\b", re.I)
_YTD = ((re.compile(r"\b(?:nine|thirty[\s-]nine|39)[\s-]+(?:months|weeks)\s+ended", re.I), 3),
        (re.compile(r"\b(?:six|twenty[\s-]six|26)[\s-]+(?:months|weeks)\s+ended", re.I), 2),
        (re.compile(r"\b(?:three|thirteen|13)[\s-]+(?:months|weeks)\s+ended", re.I), 1))
_LEGAL = re.compile(r"(?:,?\s+(?:inc|incorporated|corp|corporation|co|ltd|limited|plc|llc|l\.p|lp|n\.v|s\.a|ag|se)"
                    r"\.?)+$", re.I)
_SUBSIDIARIES = re.compile(r"\s+and\s+(?:its\s+)?(?:consolidated\s+)?subsidiaries\b.*$", re.I)
_KEEP_UPPER = {"AG", "SE", "NV", "N.V.", "S.A.", "LLC", "L.P.", "LP", "USA", "US", "UK"}
_LOWER_FORMS = {"PLC": "plc"}


@dataclass(frozen=True)
class DocumentContext:
    company: str = ""  # as the document writes it ("3M Company", "Best Buy Co., Inc.")
    form: str = ""  # 10-K | 10-Q | 8-K | 20-F | 40-F | 6-K | earnings release | ""
    period: str = ""  # "FY2022", "Q2 FY2024", or the end date ("2023-07-01") when no more can be told
    period_end: date | None = None
    fiscal_year: int | None = None
    quarter: int | None = None
    title: str = ""  # a non-filing's own title, where one is found
    former_names: tuple[str, ...] = ()  # the cover's "(Former name ... if changed since last report)"
    file_number: str = ""  # the Commission file number, leading zeros dropped ("1-3285"): one per registrant
    tickers: tuple[str, ...] = ()  # the trading symbols of the registrant's stock (12(b) table, "(NYSE: X)")
    incorporated: str = ""  # the state or jurisdiction of incorporation ("Delaware", "Jersey")

    @property
    def found(self) -> bool:
        return bool(self.company or self.form or self.period)

    def header(self) -> str:
        """The context a chunk's heading starts with: "3M · 10-K · FY2018 (fiscal 2018)". The period
        is written the ways people ask for it ("FY2022", "fiscal 2022", "2022", "Q2 2023")."""
        parts = [short_company(self.company), self.form, self.period_words()]
        return " · ".join(p for p in parts if p) or self.title

    def period_words(self) -> str:
        end = self.period_end
        if self.fiscal_year is None:
            if end is None:
                return ""
            said = f"{calendar.month_name[end.month]} {end.day}, {end.year}"
            return f"dated {said}" if self.form == "8-K" else f"period ended {said}"
        fy = self.fiscal_year
        words = f"Q{self.quarter} FY{fy} (Q{self.quarter} {fy})" if self.quarter else f"FY{fy} (fiscal {fy})"
        if end is not None and end.year != fy:  # a fiscal year named for another calendar year
            words += f" ended {calendar.month_name[end.month]} {end.year}"
        return words


def short_company(name: str) -> str:
    """The name without its legal form ("Best Buy Co., Inc." -> "Best Buy"): what people write."""
    short = _LEGAL.sub("", name).strip(" ,")
    return short or name


def _first_date(pattern: re.Pattern[str], text: str) -> date | None:
    for match in pattern.finditer(text):
        found = matched_date(match)
        if found is not None:
            return found
    return None


def tidy_company(raw: str) -> str:
    """One line of a cover page as a company name: spacing, small caps read as "R ESORTS", and
    upper case made readable ("BEST BUY CO., INC." -> "Best Buy Co., Inc.")."""
    name = " ".join(raw.replace("|", " ").split()).strip(" ,;:-–—_")
    name = _SUBSIDIARIES.sub("", name)
    if not any(c.islower() for c in name):
        name = re.sub(r"\b([A-Z]) ([A-Z]{2,})\b", r"\1\2", name)  # small caps split off their first letter
        words: list[str] = []
        for word in name.split():
            letters = re.sub(r"[^A-Za-z]", "", word)
            # a short first word is an acronym ("MGM Resorts", "AMD"); later short words are not ("Co.")
            acronym = not words and len(letters) <= 3 and letters not in ("THE", "A")
            if word in _KEEP_UPPER or acronym or any(c.isdigit() for c in word):
                words.append(_LOWER_FORMS.get(word, word))
            else:
                words.append(_LOWER_FORMS.get(word, word[:1] + word[1:].lower()))
        name = " ".join(words)
    return name[:120]


def _looks_like_name(text: str) -> bool:
    words = text.split()
    return (0 < len(words) <= 10 and any(c.isalpha() for c in text) and not text.startswith("(")
            and not re.search(r"\b(section|state|securities|commission|report|pursuant|delaware)\b", text, re.I))


def _registrant(rows: Sequence[str]) -> str:
    """The registrant's name: the line above "(Exact name of registrant ...)" or, on covers without
    that caption, the line below the Commission file number."""
    for i, text in enumerate(rows):
        if _REGISTRANT.search(text):
            before = _REGISTRANT.split(text)[0].strip(" |")
            if _looks_like_name(before):
                return tidy_company(before)
            for back in range(i - 1, max(-1, i - 4), -1):
                candidate = rows[back].strip(" |")
                if re.fullmatch(r"[\W_]*", candidate):
                    continue  # a rule of underscores between the caption and the name
                return tidy_company(candidate) if _looks_like_name(candidate) else ""
    for i, text in enumerate(rows):
        if _FILE_NUMBER.search(text):
            for candidate in rows[i + 1:i + 4]:
                candidate = candidate.strip(" |")
                if re.fullmatch(r"[\W_]*", candidate):
                    continue
                return tidy_company(candidate) if _looks_like_name(candidate) else ""
    return ""


def _release_company(first_rows: Sequence[str], text: str) -> str:
    title = _RELEASE_TITLE.search(" ".join(first_rows[:6]))
    if title:
        name = _RELEASE_PREFIX.sub("", title.group("company").split(" – ")[-1])
        if _looks_like_name(name):
            return tidy_company(name)
    ticker = _TICKER.search(text)
    return tidy_company(ticker.group("company")) if ticker else ""


def _running_company(rows: Sequence[Row]) -> str:
    """A running header naming a company ("ACTIVISION BLIZZARD, INC. AND SUBSIDIARIES")."""
    pages = {r.page for r in rows}
    seen = Counter(text for text, _page in {(r.text, r.page) for r in rows})
    for text, n in seen.most_common():
        if n < max(3, RUNNING_ROW_SHARE * len(pages)):
            break
        if _LEGAL.search(_SUBSIDIARIES.sub("", text)) and _looks_like_name(text):
            return tidy_company(text)
    return ""


def _cell_before(rows: Sequence[str], caption: re.Pattern[str]) -> str:
    """The first cell of the row above a cover caption ("Delaware | 12-3456789" above "(State or
    other jurisdiction ...)"), or what precedes the caption on its own row; "" when none."""
    for i, text in enumerate(rows):
        found = caption.search(text)
        if not found:
            continue
        before = text[:found.start()].strip(" |")
        if before and not re.fullmatch(r"[\W_]*", before):
            return before.split("|")[0].strip()
        for back in range(i - 1, max(-1, i - 3), -1):
            candidate = rows[back].strip(" |")
            if candidate and not re.fullmatch(r"[\W_]*", candidate):
                return candidate.split("|")[0].strip()
        return ""
    return ""


def _file_number(cover: str) -> str:
    """The Commission file number as one spelling: "000-22513" and "0-22513" are the same registrant."""
    found = _FILE_NUMBER_VALUE.search(cover)
    return f"{int(found.group(1))}-{int(found.group(2))}" if found else ""


def _former_names(rows: Sequence[str]) -> tuple[str, ...]:
    said = _cell_before(rows, _FORMER_CAPTION)
    if not said or _NOTHING.match(said) or not _looks_like_name(said) or _REGISTRANT.search(said):
        return ()
    return (tidy_company(said),)


def _incorporated(rows: Sequence[str], cover: str) -> str:
    said = _STATE_SAID.search(cover)
    if said:
        return said.group(1).strip().title()
    state = _cell_before(rows, _STATE_CAPTION)
    return state.title() if state and re.fullmatch(r"[A-Za-z .]{3,40}", state) else ""


def _tickers(rows: Sequence[str], text: str) -> tuple[str, ...]:
    """The symbols in the 12(b) table's "Trading Symbol(s)" column (a cell that is all a symbol;
    notes' symbols carry digits or a slash and are left out), or a release's "(NYSE: X)"."""
    found: list[str] = []
    for i, row in enumerate(rows):
        if not _TRADING_SYMBOL.search(row):
            continue
        for later in rows[i + 1:i + 12]:
            if re.search(r"section\s+12\s*\(g\)", later, re.I):
                break
            for cell in later.split("|"):
                cell = cell.strip()
                if _SYMBOL.fullmatch(cell) and cell not in _NOT_A_SYMBOL and cell not in found:
                    found.append(cell)
        break
    if not found:
        found = list(dict.fromkeys(_EXCHANGE_TICKER.findall(text)))[:3]
    return tuple(found)


def _named_quarter(text: str) -> tuple[int, int] | None:
    """(quarter, fiscal year) a 10-Q names itself most often ("second quarter of fiscal 2024")."""
    said = Counter((_QUARTER_NUM[(m.group("q1") or m.group("q2")).lower()], int(m.group("y1") or m.group("y2")))
                   for m in _FISCAL_QUARTER_NAMED.finditer(text))
    return said.most_common(1)[0][0] if said else None


def _add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _fiscal_year(year_end: date, text: str) -> int:
    """A fiscal year is named for the calendar year it ends in, except that some retailers whose
    year ends in January or February name it for the year it starts in: then the document's own
    "fiscal 2022" mentions decide between the two. A 52/53-week year ending in the first days of
    January is the year before's ("fiscal year ended January 1, 2022" is fiscal 2021)."""
    if year_end.month == 1 and year_end.day <= 7:
        return year_end.year - 1
    if year_end.month > 3:
        return year_end.year
    named = Counter(int(y) for y in _FISCAL_NAMED.findall(text))
    return year_end.year - 1 if named[year_end.year - 1] > named[year_end.year] else year_end.year


def _quarter_from_statements(text: str) -> int | None:
    """A 10-Q's statements show three months, and six or nine months year to date: that tells the quarter."""
    for pattern, quarter in _YTD:
        if pattern.search(text):
            return quarter
    return None


def _first_title(rows: Sequence[Row], unit_titles: Mapping[int, str]) -> str:
    if unit_titles:
        first = unit_titles[min(unit_titles)]
        if first:
            return " ".join(first.split())[:120]
    for row in rows[:3]:
        words = row.text.split()
        if 1 <= len(words) <= 12 and row.table is None and sum(c.isalpha() for c in row.text) >= 3:
            return " ".join(words)[:120]
    return ""


def extract_context(rows: Sequence[Row], unit_titles: Mapping[int, str] | None = None) -> DocumentContext:
    """The company, form and fiscal period a document states about itself ("" / None where it does
    not); never raises on odd input."""
    if not rows:
        return DocumentContext()
    pages = sorted({r.page for r in rows})
    cover_pages = set(pages[:COVER_PAGES])
    sample_pages = set(pages[:SAMPLE_PAGES])
    cover_rows = [r.text for r in rows if r.page in cover_pages]
    cover = " ".join(cover_rows)
    sample = " ".join(r.text for r in rows if r.page in sample_pages)
    first_rows = [r.text for r in rows if r.page == pages[0]]

    form_match = _FORM.search(cover)
    form = ""
    if form_match:
        form = form_match.group(1).upper().replace("-", "")
        form = f"{form[:-1]}-{form[-1]}"
    else:
        form = next((f for pattern, f in _FORM_BY_REPORT if pattern.search(cover)), "")
    release = False
    if not form and _RELEASE_TITLE.search(" ".join(first_rows[:6])):
        form, release = "earnings release", True

    company = ""
    if form and not release:
        company = _registrant(cover_rows)
    if not company and (release or not form):
        company = _release_company(first_rows, sample) if release else ""
    if not company and form:
        company = _running_company(rows)

    end: date | None = None
    fiscal_year: int | None = None
    quarter: int | None = None
    if form in ("10-K", "20-F", "40-F"):
        end = _first_date(_FISCAL_YEAR_ENDED, cover) or _first_date(_FISCAL_YEAR_ENDED_DAY_FIRST, cover)
        if end is not None:
            fiscal_year = _fiscal_year(end, sample)
    elif form == "10-Q":
        end = _first_date(_QUARTER_ENDED, cover) or _first_date(_QUARTER_ENDED_DAY_FIRST, cover)
        quarter = _quarter_from_statements(sample)
        named_quarter = _named_quarter(sample)
        if named_quarter is not None and quarter in (None, named_quarter[0]):
            # the filing numbers its own fiscal quarter: that is its name, whatever month the year ends
            quarter, fiscal_year = named_quarter
        elif end is not None and quarter is not None:
            fiscal_year = _fiscal_year(_add_months(end, 3 * (4 - quarter)), sample)
    elif form in ("8-K", "6-K"):
        end = _first_date(_REPORT_DATE, cover)
    elif release:
        head = " ".join(first_rows[:8])
        # the latest period end named up front: a release compares with earlier periods, never later ones
        ends = [matched_date(m) for m in _PERIOD_ENDED.finditer(" ".join(r.text for r in rows if r.page in pages[:2]))]
        end = max((e for e in ends if e is not None), default=None)
        said = _QUARTER_WORD.search(head)
        quarter = _QUARTER_NUM[said.group(1).lower()] if said else None
        named = _FISCAL_NAMED.search(head)
        if named:
            fiscal_year = int(named.group(1))
        elif end is not None:
            fiscal_year = _fiscal_year(_add_months(end, 3 * (4 - (quarter or 4))), sample)

    if fiscal_year is not None:
        period = f"Q{quarter} FY{fiscal_year}" if quarter else f"FY{fiscal_year}"
    else:
        period = end.isoformat() if end else ""
    title = "" if (form or company) else _first_title(rows, unit_titles or {})
    return DocumentContext(company, form, period, end, fiscal_year, quarter, title,
                           former_names=_former_names(cover_rows), file_number=_file_number(cover),
                           tickers=_tickers(cover_rows, sample), incorporated=_incorporated(cover_rows, cover))
