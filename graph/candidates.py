"""The table cells offered for a figure question, read from the asker's documents through the run's
shelf (graph/evidence_store.py) and ranked by graph/facts.py `pick`.

A cell whose page no kept excerpt shows brings its rows as an excerpt of their own (`cell_excerpt`),
so every fact has a citation marker and a page to open.
"""

from __future__ import annotations

import uuid
from typing import Any

from graph import facts as lookup
from graph.calc import choose_op
from graph.compose import asked_clause
from graph.evidence_store import Shelf
from graph.formula import lookup_plan
from graph.reading import names_in
from graph.state import Excerpt
from storage import statements

# Candidate cells read from storage before `graph/facts.py` picks; enough for every column of the
# rows a question's words match.
CANDIDATES = 120
# Candidates read again within the primary statements (storage/statements.py), for every text searched.
STATEMENT_CANDIDATES = 40
# The most facts a formula's operands bring (graph/formula.py): a cash conversion cycle's five line items
# at two years each, with an alternative row for each.
MAX_FORMULA_FACTS = 24


def _cells(found: list[Any]) -> list[lookup.Cell]:  # storage.tables.FoundCell
    return [lookup.Cell(id=c.id, document_id=str(c.document_id), document_name=c.document_name, page=c.page,
                        label=c.label, path=c.path, caption=c.caption, period_label=c.period_label,
                        period_kind=c.period_kind, fiscal_year=c.fiscal_year, quarter=c.quarter, months=c.months,
                        scale=c.scale, unit=c.unit, scale_words=c.scale_words, value_text=c.value_text,
                        value=c.value, box=c.box, row_box=c.row_box, rank=c.rank) for c in found]


def company_words(shelf: Shelf, document_ids: list[uuid.UUID]) -> set[str]:
    """Words of the documents' company names (as their covers say): they name no row."""
    return set().union(set(), *(lookup.label_words(name) for name in shelf.company_names(document_ids)))


def cell_excerpt(cells: list[lookup.Cell]) -> Excerpt:
    """An excerpt made of a page's cited rows: what a fact whose page no excerpt shows is cited by."""
    first = cells[0]
    lines = [first.caption] if first.caption else []
    if first.scale_words:
        lines.append(f"({first.scale_words})")
    lines += [f"{lookup.evidence_line(c)} ({lookup.evidence_context(c)})" for c in cells]
    boxes = [c.row_box for c in cells if c.row_box]
    return Excerpt(source="document", key=f"cells:{first.document_id}:{first.page}", document_id=first.document_id,
                   name=first.document_name, page=first.page, page_label=f"page {first.page}", ocr=False,
                   boxes=boxes or None, url=None, text="\n".join(lines), score=0.0, rerank_score=0.0, screened=[])


def entity_words(question: str) -> set[str]:
    """The words of the one-word names the question uses ("Debian", "Cessna"): whose or what the figure
    is of, never a row's measure; a page header "A Brief History of Debian 2 / 21" read as a row is not
    how many packages Debian 1.1 shipped. A name of several words ("Cost of Goods Sold") may be a row's."""
    return lookup.label_words(" ".join(n for n in names_in(question, lone=True) if " " not in n and not n.isupper()))


def candidate_facts(shelf: Shelf, question: str, scoped: list[uuid.UUID],
                    pages: set[tuple[str, int]]) -> tuple[list[lookup.Cell], set[str]]:
    """The cells offered for `question` over `scoped` documents, best first, and the company-name words
    left out of matching (graph/facts.py `pick`)."""
    glossary = shelf.glossary_words(lookup.without_statement_names(question))
    titles = statements.titles(statements.named_statements(question))
    parts, years = lookup_plan(question)
    found = []
    # each text's rows anywhere, then in the primary statements (those the question names, else all three):
    # a row of a note that shares more of the question's words does not crowd out the statement's own row
    for text, limit in [(f"{question} {glossary}", CANDIDATES),
                        *((f"{part} {shelf.glossary_words(lookup.without_statement_names(part))}", CANDIDATES // 2)
                          for part in parts)]:
        text = lookup.with_abbreviations(text)
        found += shelf.find_cells(text, scoped, limit=limit)
        found += shelf.find_cells(text, scoped, captions=titles, limit=STATEMENT_CANDIDATES)
    ignore = company_words(shelf, scoped) | entity_words(question)
    # a formula reads each operand at each of its years: room for two rows of each, two more for the question
    limit = min(max(lookup.MAX_FACTS, 2 * len(parts) * len(years) + 2), MAX_FORMULA_FACTS)
    cells = _cells(found)
    if not parts and choose_op(question) is None:  # a lookup: rows whose figure the document does not report go
        # a dash prints no figure: in a statement it may mean zero, in a form's field ("Flight Conducted
        # Under: -") nothing at all, and a lookup answered from it would write a 0 no document states
        cells = _reported(shelf, question, [c for c in cells if any(ch.isdigit() for ch in c.value_text)], ignore)
    return lookup.pick(cells, question, pages, ignore=ignore, phrases=parts, glossary=glossary,
                       limit=limit, years=years), ignore


def _reported(shelf: Shelf, question: str, cells: list[lookup.Cell], ignore: set[str]) -> list[lookup.Cell]:
    """The cells but those whose row the question's phrase names with a word the row leaves unsaid
    (graph/facts.py `unsaid_words`) and its document never uses: "casino revenue" of a filing that never
    says "casino" is not its "Unearned revenue", nor "paid subscribers" of one that never says
    "subscribers" its "Dividends paid". That document does not report the figure asked."""
    clause = asked_clause(question)  # not the framing around it ("Assume you are an equities analyst.")
    unsaid = {c.id: lookup.unsaid_words(clause, c, ignore) for c in cells}
    by_document: dict[str, set[str]] = {}
    for c in cells:
        by_document.setdefault(c.document_id, set()).update(unsaid[c.id])
    absent = {d: shelf.absent_words(d, sorted(words)) for d, words in by_document.items() if words}
    return [c for c in cells if not set(unsaid[c.id]) & absent.get(c.document_id, set())]
