"""Answerable: questions the user's documents cannot be about are refused before any search.

Two checks on what the question names, against the documents it would search (all the caller's,
or those it was limited to), both in SQL and owner-scoped:
- a year: when the question names years and none of them is a period any document reports
  (its own period, or a fiscal year one of its tables reports), the documents cannot answer
  ("net sales for 2009" over 10-Ks of 2017-2019); nor when it names a company surely
  (storage/document_filter.py `question_scope`) and none of that company's documents, or of those
  whose company was not read, reports them ("Contoso's 2021" beside another company's 2021);
- a name: when the question names something (graph/reading.py `names_in`) and none of its
  names occurs in the documents, "Nike's revenue" over filings that never say "Nike"
  is refused, with no citation ("Block's (formerly Square)" passes on either name); a lone
  capitalised word ("How much did Tesla spend") when none of the owner's documents has it at all.
  A name counts as mentioned when a passage holds all of its words in any order: a question's words
  for a thing are seldom the document's exact phrase ("the Fullerton Cessna", "the Acting Secretary
  of Homeland Security" for "Chad Wolf, Acting Secretary ... Department of Homeland Security").
A refused question goes straight to the answer with the reason in `unanswerable`; no model is
called. Names written in capitals only ("AMCOR", "EBITDA") are not checked: acronyms of metrics
look the same.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node, reading_of
from graph.nodes.retrieve import owner_of
from graph.reading import Reading
from graph.reading import read as read_question
from graph.scope import kept
from graph.state import QuestionScope, State
from storage.workspaces import Owners

log = logging.getLogger("thotqen.answerable")


def why_unanswerable(conn: Any, owner_id: Owners, question: str | Reading,  # noqa: ANN401
                     scoped: list[uuid.UUID] | None, read: list[QuestionScope] | None = None) -> str:
    """Why the documents (`scoped` of the owner's, or all) cannot answer `question` (module doc); "" when they may.
    The question's scope, when it is read, is appended to `read` (graph/scope.py: the search reuses it)."""
    from storage.document_filter import question_scope
    from storage.documents import coverage, mentions

    reading = question if isinstance(question, Reading) else read_question(question)
    question = reading.question
    years = reading.period.years
    names = list(reading.names)
    lone = [n for n in reading.lone_names if n not in names]
    if years:
        covered = coverage(conn, owner_id=owner_id, document_ids=scoped)
        if covered.years and not set(years) & covered.years:
            return f"no document reports {', '.join(map(str, years))}"
        # a company named surely: its own filings (and those whose company was not read) must report the year
        scope = question_scope(conn, owner_id=owner_id, question=question, document_ids=scoped)
        if read is not None:
            read.append(kept(scope, question, scoped))
        if scope is not None and scope.certain:
            theirs = coverage(conn, owner_id=owner_id, document_ids=scope.documents())
            if theirs.years and not set(years) & theirs.years:
                return f"no document of the company named reports {', '.join(map(str, years))}"
    if names and not any(mentions(conn, owner_id=owner_id, document_ids=scoped, phrase=name)
                         for name in reading.lone_names):
        return f"no document mentions {' or '.join(names)}"
    # a lone capitalised word is a name when none of the owner's documents has it even as a word
    # ("How much did Tesla spend"); an ordinary word in title case ("the Real change") is somewhere
    for name in lone:
        if not mentions(conn, owner_id=owner_id, document_ids=None, phrase=name):
            return f"no document mentions {name}"
    return ""


@node("answerable")
def answerable(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    reading = reading_of(state)
    if not reading.period.years and not reading.lone_names:
        return {"unanswerable": ""}
    scoped = [uuid.UUID(d) for d in state.get("document_ids") or []] or None
    read: list[QuestionScope] = []
    with cfg.running.database.connection() as conn:
        reason = why_unanswerable(conn, owner_of(conn, cfg), reading, scoped, read)
    if reason:
        log.info("refused before search: %s", reason)
    return {"unanswerable": reason, "question_scope": read[0] if read else None}


def after_answerable(state: State, runtime: Runtime[Context]) -> Literal["generate", "hyde", "retrieve"]:
    if state.get("unanswerable"):
        return "generate"
    return "hyde" if context_of(runtime).hyde else "retrieve"
