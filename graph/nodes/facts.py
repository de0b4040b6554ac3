"""Facts: the table cells that answer a figure question, numbered and cited, before generation.

Runs when route sends the question to generate. Only for a question that asks for a figure
(graph/facts.py `asks_for_figure`), and only over the documents grading kept an excerpt of
(none when it kept none): cells come from storage (owner-scoped in SQL).
A cell whose page no kept excerpt shows brings its rows as an excerpt of their own, so every fact
has a citation marker and a page to open. Facts are stored in the state as plain dicts, each with
the key of the excerpt that cites it and its evidence line.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import facts as lookup
from graph.calc import choose_op
from graph.context import Context, context_of
from graph.formula import lookup_plan
from graph.nodes.common import node, reading_of
from graph.nodes.retrieve import owner_of
from graph.reading import names_in
from graph.state import Excerpt, State
from storage import statements
from storage.workspaces import Owners

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


def company_words(conn: Any, owner_id: Owners, document_ids: list[uuid.UUID]) -> set[str]:  # noqa: ANN401
    """Words of the documents' company names (as their covers say): they name no row."""
    from storage.documents import company_names

    return set().union(set(), *(lookup.label_words(name) for name in company_names(conn, owner_id=owner_id,
                                                                                     document_ids=document_ids)))


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


def candidate_facts(conn: Any, owner_id: Owners, question: str, scoped: list[uuid.UUID],  # noqa: ANN401
                    pages: set[tuple[str, int]]) -> tuple[list[lookup.Cell], set[str]]:
    """The cells offered for `question` over `scoped` documents, best first, and the company-name words
    left out of matching (graph/facts.py `pick`)."""
    from storage.tables import find_cells, glossary_words

    glossary = glossary_words(conn, lookup.without_statement_names(question))
    titles = statements.titles(statements.named_statements(question))
    parts, years = lookup_plan(question)
    found = []
    # each text's rows anywhere, then in the primary statements (those the question names, else all three):
    # a row of a note that shares more of the question's words does not crowd out the statement's own row
    for text, limit in [(f"{question} {glossary}", CANDIDATES),
                        *((f"{part} {glossary_words(conn, lookup.without_statement_names(part))}", CANDIDATES // 2)
                          for part in parts)]:
        text = lookup.with_abbreviations(text)
        found += find_cells(conn, owner_id=owner_id, text=text, document_ids=scoped, limit=limit)
        found += find_cells(conn, owner_id=owner_id, text=text, document_ids=scoped, captions=titles,
                            limit=STATEMENT_CANDIDATES)
    ignore = company_words(conn, owner_id, scoped) | entity_words(question)
    # a formula reads each operand at each of its years: room for two rows of each, two more for the question
    limit = min(max(lookup.MAX_FACTS, 2 * len(parts) * len(years) + 2), MAX_FORMULA_FACTS)
    cells = _cells(found)
    if not parts and choose_op(question) is None:  # a lookup: rows whose figure the document does not report go
        # a dash prints no figure: in a statement it may mean zero, in a form's field ("Flight Conducted
        # Under: -") nothing at all, and a lookup answered from it would write a 0 no document states
        cells = _reported(conn, owner_id, question, [c for c in cells if any(ch.isdigit() for ch in c.value_text)],
                          ignore)
    return lookup.pick(cells, question, pages, ignore=ignore, phrases=parts, glossary=glossary,
                       limit=limit, years=years), ignore


def _reported(conn: Any, owner_id: Owners, question: str, cells: list[lookup.Cell],  # noqa: ANN401
              ignore: set[str]) -> list[lookup.Cell]:
    """The cells but those whose row the question's phrase names with a word the row leaves unsaid
    (graph/facts.py `unsaid_words`) and its document never uses: "casino revenue" of a filing that never
    says "casino" is not its "Unearned revenue", nor "paid subscribers" of one that never says
    "subscribers" its "Dividends paid". That document does not report the figure asked."""
    from graph.compose import asked_clause
    from storage.documents import absent_words

    clause = asked_clause(question)  # not the framing around it ("Assume you are an equities analyst.")
    unsaid = {c.id: lookup.unsaid_words(clause, c, ignore) for c in cells}
    by_document: dict[str, set[str]] = {}
    for c in cells:
        by_document.setdefault(c.document_id, set()).update(unsaid[c.id])
    absent = {d: absent_words(conn, owner_id=owner_id, document_id=d, words=sorted(words))
              for d, words in by_document.items() if words}
    return [c for c in cells if not set(unsaid[c.id]) & absent.get(c.document_id, set())]


@node("facts")
def facts(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    reading = reading_of(state)
    question = reading.question
    relevant = list(state.get("relevant") or [])
    if state.get("unanswerable") or not reading.figure:
        return {"facts": []}
    cfg = context_of(runtime, config)
    kept_docs = {str(e.get("document_id")) for e in relevant if e.get("source") == "document" and e.get("document_id")}
    if not kept_docs:  # nothing in the documents was judged to bear on the question: no figure to offer
        return {"facts": []}
    scoped = [uuid.UUID(d) for d in sorted(kept_docs)]
    pages = {(str(e.get("document_id")), int(e.get("page") or 0)) for e in relevant}
    with cfg.running.database.connection() as conn:
        picked, ignore = candidate_facts(conn, owner_of(conn, cfg), question, scoped, pages)
    if not picked:
        return {"facts": []}
    by_page: dict[tuple[str, int], str] = {}
    for e in relevant:
        by_page.setdefault((str(e.get("document_id")), int(e.get("page") or 0)), e["key"])
    new: dict[tuple[str, int], list[lookup.Cell]] = {}
    for cell in picked:
        if (cell.document_id, cell.page) not in by_page:
            new.setdefault((cell.document_id, cell.page), []).append(cell)
    for where, cells in new.items():
        excerpt = cell_excerpt(cells)
        relevant.append(excerpt)
        by_page[where] = excerpt["key"]
    asked = reading.unit
    out = []
    for n, cell in enumerate(picked, 1):
        fact = lookup.as_fact(n, cell, 0)
        out.append({"n": n, "key": by_page[(cell.document_id, cell.page)], "label": fact.label,
                    "period": fact.period, "value_text": cell.value_text, "shown": lookup.shown_value(fact, asked),
                    "evidence": lookup.evidence_line(cell), "context": lookup.evidence_context(cell),
                    "cell": asdict(cell)})
    return {"facts": out, "relevant": relevant, "company_words": sorted(ignore)}
