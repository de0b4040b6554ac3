"""Facts: the table cells that answer a figure question, numbered and cited, before generation.

Runs when route sends the question to generate. Only for a question that asks for a figure
(graph/facts.py `asks_for_figure`), and only over the documents grading kept an excerpt of
(none when it kept none): cells come from the run's shelf (graph/candidates.py, owner-scoped in SQL).
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
from graph.candidates import candidate_facts, cell_excerpt
from graph.context import Context, context_of
from graph.nodes.common import node, reading_of
from graph.readers import readers
from graph.state import State


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
    store = cfg.running.evidence
    with store.shelf(readers(state, store, cfg)) as shelf:
        picked, ignore = candidate_facts(shelf, question, scoped, pages)
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
