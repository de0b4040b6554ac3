"""One issuer however it is named: a user's documents grouped by what the filings say of themselves.

A company's filings name it differently over the years ("Adobe Systems Incorporated", later
"Adobe Inc."; "Square, Inc.", later "Block, Inc."), and a question names it as people do ("Adobe",
"Block", its ticker "SQ"). Documents are one issuer when they share a Commission file number (one
per registrant, kept across renames), a normalised name (legal forms, "The", "&"/"and" and
punctuation dropped) or a trading symbol; the issuer is known by every name any of its documents
gives (the cover's registrant name and former names) and by its tickers. Nothing here is fitted to
particular companies: the rules are the legal forms and the cover's fields.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lexicon import alnum_words

# Legal forms left out of a company's name as people say it ("Best Buy" for "Best Buy Co., Inc.").
LEGAL_FORMS = frozenset({"the", "inc", "incorporated", "corp", "corporation", "co", "company", "companies",
                         "plc", "ltd", "limited", "llc", "lp", "sa", "nv", "ag", "se", "holdings", "holding"})
# Words that describe a business rather than name it: a name ending in them is also said without them
# ("Adobe Systems" -> "Adobe", "MGM Resorts International" -> "MGM Resorts").
DESCRIPTORS = frozenset({"systems", "group", "international", "technologies", "technology", "industries",
                         "enterprises", "worldwide", "global", "brands", "resources", "solutions",
                         "communications", "services"})
# Upper-case words a question uses that are not tickers, however a symbol is spelt.
NOT_TICKERS = frozenset({"FY", "EPS", "GAAP", "EBIT", "EBITDA", "CEO", "CFO", "US", "USA", "UK", "EU", "SEC",
                         "Q", "QTD", "YTD", "YOY", "LTM", "TTM", "ROE", "ROA", "ROI", "ROIC", "FCF", "PP", "PPE",
                         "COGS", "SGA", "R", "D", "IT", "AI", "OK", "A", "I", "AND", "OR", "THE", "OF", "NI",
                         "DPO", "DSO", "DIO", "CCC", "NA", "M", "K", "B", "MM", "BN", "USD", "EUR", "GBP"})


def words(text: str) -> list[str]:
    text = re.sub(r"\.com\b", "", text.lower().replace("&", " and "))  # "Amazon.com, Inc." -> amazon
    return alnum_words(text.replace("'s", "").replace("’s", ""))


def normal_name(company: str) -> str:
    """The name without legal forms, "The", punctuation or a trailing "and" ("JPMorgan Chase & Co.")."""
    kept = [w for w in words(company) if w not in LEGAL_FORMS]
    while kept and kept[-1] == "and":
        kept.pop()
    while kept and kept[0] == "and":
        kept.pop(0)
    return " ".join(kept)


def company_names(company: str) -> set[str]:
    """How people name a company: without its legal form ("best buy"), without words that only
    describe its business ("adobe" for Adobe Systems), and for a name of three words or more also
    its first two ("mgm resorts") and its initials ("amd")."""
    full = normal_name(company).split()
    if not full:
        return set()
    names = {" ".join(full)}
    short = list(full)
    while len(short) > 1 and short[-1] in DESCRIPTORS:
        short.pop()
        names.add(" ".join(short))
    if len(full) >= 3:
        names |= {" ".join(full[:2]), "".join(w[0] for w in full)}
    return names


def normal_file_number(value: str) -> str:
    """"001-03285" and "1-3285" are the same file number."""
    found = re.fullmatch(r"\s*(\d{1,4})\s*-\s*(\d{3,6})\s*", value or "")
    return f"{int(found.group(1))}-{int(found.group(2))}" if found else ""


@dataclass(frozen=True)
class Identity:
    """What one document says of its issuer (documents' columns, sql/025_issuer.sql)."""

    document_id: uuid.UUID
    company: str = ""
    former_names: tuple[str, ...] = ()
    file_number: str = ""
    tickers: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return bool(self.company or self.file_number or self.tickers)


@dataclass
class Issuer:
    documents: list[uuid.UUID] = field(default_factory=list)
    names: set[str] = field(default_factory=set)  # normalised full names, current and former
    tickers: set[str] = field(default_factory=set)
    file_numbers: set[str] = field(default_factory=set)

    def spoken_names(self) -> set[str]:
        return {n for name in self.names for n in company_names(name)}


def group_issuers(identities: Iterable[Identity]) -> list[Issuer]:
    """The issuers of `identities` that say who they are: documents sharing a file number, a
    normalised name (current or former) or a ticker are one issuer (transitively)."""
    known = [i for i in identities if i.known]
    parent = list(range(len(known)))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    seen: dict[str, int] = {}
    for n, ident in enumerate(known):
        keys = {f"name:{normal_name(c)}" for c in (ident.company, *ident.former_names) if normal_name(c)}
        keys |= {f"file:{normal_file_number(ident.file_number)}"} if normal_file_number(ident.file_number) else set()
        keys |= {f"ticker:{t.upper()}" for t in ident.tickers}
        for key in keys:
            if key in seen:
                parent[root(n)] = root(seen[key])
            else:
                seen[key] = n
    groups: dict[int, Issuer] = {}
    for n, ident in enumerate(known):
        issuer = groups.setdefault(root(n), Issuer())
        issuer.documents.append(ident.document_id)
        issuer.names |= {normal_name(c) for c in (ident.company, *ident.former_names) if normal_name(c)}
        issuer.tickers |= {t.upper() for t in ident.tickers}
        if normal_file_number(ident.file_number):
            issuer.file_numbers.add(normal_file_number(ident.file_number))
    return list(groups.values())


NAMED_EXACTLY, NAMED_SHORT = 2, 1  # how surely a question names an issuer


def naming(question: str, issuer: Issuer) -> int:
    """NAMED_EXACTLY when `question` writes one of the issuer's full names or its ticker,
    NAMED_SHORT when only a short name (first words, initials, without descriptors), else 0.
    A one-word name counts only as a name is written, capitalised ("Target", "Block", "3M"), so
    "the target ratio" or "a block of shares" names nobody; a ticker only in upper case."""
    asked = f" {' '.join(words(question))} "
    written = {w.lower() for w in alnum_words(question) if w[0].isupper() or w[0].isdigit()}
    upper = set(re.findall(r"(?<![A-Za-z0-9])[A-Z]{1,5}(?:\.[A-Z])?(?![A-Za-z0-9])", question))

    def said(name: str) -> bool:
        return (name in written) if " " not in name else (f" {name} " in asked)

    if any(said(n) for n in issuer.names) or any(t in upper and t not in NOT_TICKERS for t in issuer.tickers):
        return NAMED_EXACTLY
    return NAMED_SHORT if any(said(n) for n in issuer.spoken_names()) else 0


def named_issuers(question: str, issuers: Sequence[Issuer]) -> list[tuple[Issuer, int]]:
    """The issuers `question` names, each with how surely (naming); a short name that is also a
    full name of another named issuer is that one's, not both's."""
    out = [(i, how) for i in issuers if (how := naming(question, i))]
    exact = [i for i, how in out if how == NAMED_EXACTLY]
    if exact:  # "Adobe Systems" asked: the short "Adobe" of another issuer does not count
        out = [(i, how) for i, how in out if how == NAMED_EXACTLY or not any(i.spoken_names() & e.spoken_names()
                                                                               for e in exact)]
    return out
