"""Narrowing a search to the caller's documents of one company, form or period, in SQL.

The values are what ingestion read from each document (ingestion/context.py): `company` as the
cover page writes it, `form` ("10-K", "10-Q", "8-K", "earnings release"), `period` ("FY2022",
"Q2 FY2024", or a date) and `period_end`. A filter is written the ways people write them: "best buy",
"10k", "fiscal 2022", "FY22", "Q2 2023", "2023"; a value that matches nothing narrows to nothing.

`named_documents` does the same from a question's own words: the documents of the companies it
names, by the names people use (evals/results/scope_from_question.md).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import psycopg

_FORM = re.compile(r"^(?:form\s*)?(10|8|20|40|6)\s*-?\s*([kqf])$", re.I)
_RELEASE = re.compile(r"^(?:earnings|press|news)?\s*(?:release|results|earnings)$", re.I)
_QUARTER = re.compile(r"\b(?:q([1-4])|([1-4])q|(first|second|third|fourth)\s+quarter)\b", re.I)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
_SHORT_YEAR = re.compile(r"\b(?:fy|fiscal)\s*'?(\d{2})\b", re.I)
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}


@dataclass(frozen=True)
class DocumentFilter:
    company: str = ""
    form: str = ""
    period: str = ""

    def __bool__(self) -> bool:
        return bool(self.company.strip() or self.form.strip() or self.period.strip())


def normal_form(value: str) -> str:
    """"10k", "Form 10-K", "10 K" -> "10-K"; "earnings", "press release" -> "earnings release"."""
    value = " ".join(value.split())
    found = _FORM.match(value)
    if found:
        return f"{found.group(1)}-{found.group(2).upper()}"
    return "earnings release" if _RELEASE.match(value) else value


def parse_period(value: str) -> tuple[int | None, int | None, date | None]:
    """(year, quarter, exact date) a period filter names; Nones for what it does not."""
    value = value.strip()
    try:
        return None, None, date.fromisoformat(value)
    except ValueError:
        pass
    quarter = _QUARTER.search(value)
    q = None
    if quarter:
        q = int(quarter.group(1) or quarter.group(2) or _ORDINAL[quarter.group(3).lower()])
    year = _YEAR.search(value)
    if year:
        return int(year.group(1)), q, None
    short = _SHORT_YEAR.search(value)
    return (2000 + int(short.group(1)) if short else None), q, None


def _like(value: str) -> str:
    return "%" + re.sub(r"([\\%_])", r"\\\1", " ".join(value.split())) + "%"


def matching_documents(conn: psycopg.Connection, *, owner_id: int, where: DocumentFilter,
                       document_ids: Sequence[uuid.UUID] | None = None) -> list[uuid.UUID]:
    """Ids of the owner's documents that match every part of `where` (and are among `document_ids`
    when given). Never another owner's: the owner is part of the statement."""
    clauses = ["owner_id = %(owner)s"]
    args: dict[str, object] = {"owner": owner_id}
    if document_ids is not None:
        clauses.append("id = any(%(docs)s)")
        args["docs"] = list(document_ids)
    if where.company.strip():
        clauses.append(r"company ilike %(company)s escape '\'")
        args["company"] = _like(where.company)
    if where.form.strip():
        clauses.append("lower(form) = lower(%(form)s)")
        args["form"] = normal_form(where.form)
    if where.period.strip():
        year, quarter, exact = parse_period(where.period)
        if exact is not None:
            clauses.append("(period_end = %(end)s or period = %(period)s)")
            args.update(end=exact, period=exact.isoformat())
        elif year is None and quarter is None:
            clauses.append("lower(period) = lower(%(period)s)")
            args["period"] = " ".join(where.period.split())
        else:
            if year is not None:
                # the fiscal year the label names, or the calendar year the period ended in
                clauses.append("(period ~ %(year_re)s or extract(year from period_end) = %(year)s)")
                args.update(year_re=f"(^|[^0-9]){year}([^0-9]|$)", year=year)
            if quarter is not None:
                clauses.append("period ~* %(quarter_re)s")
                args["quarter_re"] = f"^Q{quarter}( |$)"
    rows = conn.execute(f"select id from documents where {' and '.join(clauses)} order by created_at, id",
                        args).fetchall()
    return [r[0] for r in rows]


# Legal forms left out of a company's name as people say it ("Best Buy" for "Best Buy Co., Inc.").
_LEGAL_FORMS = frozenset({"the", "inc", "incorporated", "corp", "corporation", "co", "company", "companies",
                          "plc", "ltd", "limited", "llc", "lp", "sa", "nv", "ag", "se"})


def _words(text: str) -> list[str]:
    text = re.sub(r"\.com\b", "", text.lower().replace("&", " and "))  # "Amazon.com, Inc." -> amazon
    return re.findall(r"[a-z0-9]+", text)


def company_names(company: str) -> set[str]:
    """How people name a company: without its legal form ("best buy"), and for a name of three
    words or more also its first two ("mgm resorts") and its initials ("amd")."""
    words = [w for w in _words(company) if w not in _LEGAL_FORMS]
    while words and words[-1] == "and":  # "JPMorgan Chase & Co." -> jpmorgan chase
        words.pop()
    if not words:
        return set()
    names = {" ".join(words)}
    if len(words) >= 3:
        names |= {" ".join(words[:2]), "".join(w[0] for w in words)}
    return names


def years_named(text: str) -> set[int]:
    years = {int(y) for y in _YEAR.findall(text)}
    return years | {2000 + int(y) for y in _SHORT_YEAR.findall(text)}


def named_documents(conn: psycopg.Connection, *, owner_id: int, question: str,
                    document_ids: Sequence[uuid.UUID] | None = None) -> list[uuid.UUID] | None:
    """The owner's documents (among `document_ids`, when given) that `question` points at: those of
    the companies it names, and of those the ones of the fiscal years it names where there are
    any. Documents that do not say their company stay in (they may be about anything). None when
    nothing narrows: no company named, or every one named and no year singled out."""
    clauses = "owner_id = %(owner)s"
    args: dict[str, object] = {"owner": owner_id}
    if document_ids is not None:
        clauses += " and id = any(%(docs)s)"
        args["docs"] = list(document_ids)
    rows = conn.execute(f"select id, company from documents where {clauses} order by created_at, id",
                        args).fetchall()
    asked = f" {' '.join(_words(question))} "
    # A one-word name counts only as a name is written, capitalised ("Target", "Block", "3M"), so
    # "the target ratio" or "a block of shares" names nobody.
    written = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", question) if w[0].isupper() or w[0].isdigit()}
    companies = {company for _, company in rows if company}
    named = {c for c in companies
             if any((name in written) if " " not in name else (f" {name} " in asked) for name in company_names(c))}
    if not named:
        return None
    chosen = [doc for doc, company in rows if company in named]
    # a year's documents as the --period filter finds them (its fiscal-year label or its end date)
    of_years = {doc for year in years_named(question) for doc in matching_documents(
        conn, owner_id=owner_id, where=DocumentFilter(period=str(year)), document_ids=chosen)}
    in_years = [doc for doc in chosen if doc in of_years]
    if not in_years and named == companies:
        return None
    unknown = [doc for doc, company in rows if not company]
    return (in_years or chosen) + unknown
