"""Answerable: questions the user's documents cannot be about are refused before any search.

The rules are graph/unanswerable.py's. This node is also where the run's readers are resolved, once
(graph/readers.py): the first node after the guardrail on every path that reads documents, so every
later node reads what the asker could read at the moment of asking.
A refused question goes straight to the answer with the reason in `unanswerable`; no model is called.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node, reading_of
from graph.readers import resolve
from graph.state import QuestionScope, State
from graph.unanswerable import needs_documents, why_unanswerable, without_question_words

log = logging.getLogger("thotqen.answerable")


@node("answerable")
def answerable(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    store = cfg.running.evidence
    readers = resolve(store, cfg)
    reading = reading_of(state)
    if not needs_documents(reading):
        return {"unanswerable": "", "readers": readers}
    scoped = [uuid.UUID(d) for d in state.get("document_ids") or []] or None
    read: list[QuestionScope] = []
    with store.shelf(readers["owners"]) as shelf:
        reason = why_unanswerable(shelf, reading, scoped, read)
    if reason:
        log.info("refused before search: %s", without_question_words(reason))  # logs carry no question text
    return {"unanswerable": reason, "question_scope": read[0] if read else None, "readers": readers}


def after_answerable(state: State, runtime: Runtime[Context]) -> Literal["generate", "hyde", "retrieve"]:
    if state.get("unanswerable"):
        return "generate"
    return "hyde" if context_of(runtime).hyde else "retrieve"
