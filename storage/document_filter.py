"""Narrowing a search to the caller's documents of one company, form or period, in SQL.

The values are what ingestion read from each document (ingestion/context.py): `company` as the
cover page writes it, `form` ("10-K", "10-Q", "8-K", "earnings release"), `period` ("FY2022",
"Q2 FY2024", or a date) and `period_end`. A filter is written the ways people write them: "best buy",
"10k", "fiscal 2022", "FY22", "Q2 2023", "2023"; a value that matches nothing narrows to nothing.

`named_documents` does the same from a question's own words: the documents of the companies it
names, by the names people use (evals/results/scope_from_question.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import psycopg

from lexicon import FISCAL, FORM_WRITTEN, RELEASE_WRITTEN, YEAR
from storage.documents import issuer_identities
from storage.issuers import NAMED_EXACTLY, Identity, company_names, group_issuers, named_issuers
from storage.periods import first_quarter, full_year
from storage.question_period import (
    COMPARATIVE,
    OTHER,
    OWN,
    OWNER_VALUE_CHARS,
    FilingPeriod,
    asked_period,
    coverage,
    owner_period,
)
from storage.workspaces import Owners, owner_ids

__all__ = ["DocumentFilter", "Scope", "company_names", "matching_documents", "named_documents", "normal_form",
           "owner_values", "parse_period", "question_scope"]



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
    found = FORM_WRITTEN.match(value)
    if found:
        return f"{found.group(1)}-{found.group(2).upper()}"
    return "earnings release" if RELEASE_WRITTEN.match(value) else value


def owner_values(company: str | None, form: str | None, period: str | None) -> dict[str, Any]:
    """What an owner sets on a document (API and CLI alike), as set_owner_context stores it; ValueError
    with the reason for a value that is too long, or a period that is not one."""
    if company is None and form is None and period is None:
        raise ValueError("give at least one of company, form, period")
    for name, value in (("company", company), ("form", form), ("period", period)):
        if value is not None and len(value) > OWNER_VALUE_CHARS:
            raise ValueError(f"{name} is longer than {OWNER_VALUE_CHARS} characters")
    out: dict[str, Any] = {"company": None if company is None else " ".join(company.split()),
                           "form": None if form is None else normal_form(form)}
    if period is not None:
        out["period"], out["period_end"] = owner_period(period)
    return out


def parse_period(value: str) -> tuple[int | None, int | None, date | None]:
    """(year, quarter, exact date) a period filter names; Nones for what it does not."""
    value = value.strip()
    try:
        return None, None, date.fromisoformat(value)
    except ValueError:
        pass
    quarter = first_quarter(value)
    year = YEAR.search(value)
    if year:
        return int(year.group("year")), quarter, None
    fiscal = FISCAL.search(value)
    return (full_year(fiscal.group("year")) if fiscal else None), quarter, None


def _like(value: str) -> str:
    escaped = " ".join(value.split()).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped + "%"


def matching_documents(conn: psycopg.Connection, *, owner_id: Owners, where: DocumentFilter,
                       document_ids: Sequence[uuid.UUID] | None = None) -> list[uuid.UUID]:
    """Ids of the owner's documents that match every part of `where` (and are among `document_ids`
    when given). Never another owner's: the owner is part of the statement."""
    clauses = ["owner_id = any(%(owner)s::bigint[])"]
    args: dict[str, object] = {"owner": owner_ids(owner_id)}
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


# How far below the filings a question points at each other filing ranks (storage/search.py
# multiplies a hit's score by its filing's weight): the asked issuer's filing of the asked period,
# then those holding it as comparatives, then the issuer's other periods and the filings whose
# issuer was not read but whose period is the one asked, then unread issuers of other periods, then
# other issuers (only when the issuer named is uncertain). Set once (evals/results/issuer_scope.md);
# weights chosen on company-grouped folds did no better on the held-back ones, so these stay
# (evals/results/fusion_cv.md).
TIER_WEIGHTS = (1.0, 0.8, 0.65, 0.5, 0.35)


@dataclass(frozen=True)
class Scope:
    """Where a question points: its documents in tiers (best first), and whether other issuers'
    documents are left out (the issuer was named surely: a hard filter) or ranked last (soft)."""

    tiers: tuple[tuple[uuid.UUID, ...], ...]
    certain: bool

    def documents(self) -> list[uuid.UUID]:
        return [d for tier in self.tiers for d in tier]

    def weights(self) -> dict[uuid.UUID, float]:
        return {d: TIER_WEIGHTS[min(n, len(TIER_WEIGHTS) - 1)] for n, tier in enumerate(self.tiers) for d in tier}


def question_scope(conn: psycopg.Connection, *, owner_id: Owners, question: str,
                   document_ids: Sequence[uuid.UUID] | None = None) -> Scope | None:
    """The owner's documents (among `document_ids`, when given) ranked by how well they fit the
    issuer and the period `question` names; None when it names neither, or every issuer and no
    period. Never another owner's: the owner is part of the statement."""
    rows = issuer_identities(conn, owner_id=owner_id, document_ids=document_ids)
    identities = [Identity(r[0], r[1], tuple(r[2] or ()), r[3], tuple(r[4] or ())) for r in rows]
    issuers = group_issuers(identities)
    named = named_issuers(question, issuers)
    asked = asked_period(question)
    known = {d for i in issuers for d in i.documents}
    unknown = [r[0] for r in rows if r[0] not in known]
    if not named and not asked:
        return None
    if named and len(named) == len(issuers) and not asked:
        return None  # every issuer named, no period: nothing narrows
    period = {r[0]: coverage(FilingPeriod.of(r[5], r[6], r[7]), asked) for r in rows}
    if not named:  # a period alone: every filing, the period's first (soft: the issuer is anyone's)
        by_period = [[r[0] for r in rows if period[r[0]] == level] for level in (OWN, COMPARATIVE, OTHER)]
        return Scope(tuple(tuple(t) for t in by_period if t), certain=False)
    ours = {d for i, _how in named for d in i.documents}
    certain = all(how == NAMED_EXACTLY for _i, how in named)
    tiers: list[list[uuid.UUID]] = [[], [], [], [], []]
    for r in rows:
        doc = r[0]
        if doc in ours:
            tiers[{OWN: 0, COMPARATIVE: 1, OTHER: 2}[period[doc]]].append(doc)
        elif doc in unknown:  # who knows whose: below the issuer's own, above other issuers'
            tiers[2 if asked and period[doc] == OWN else 3].append(doc)
        elif not certain:
            tiers[4].append(doc)
    return Scope(tuple(tuple(t) for t in tiers if t), certain)


def named_documents(conn: psycopg.Connection, *, owner_id: Owners, question: str,
                    document_ids: Sequence[uuid.UUID] | None = None) -> list[uuid.UUID] | None:
    """The documents `question_scope` keeps, best first; None when nothing narrows."""
    scope = question_scope(conn, owner_id=owner_id, question=question, document_ids=document_ids)
    return None if scope is None else scope.documents()
