"""Answerable: questions the user's documents cannot be about are refused before any search.

Two checks on what the question names, against the documents it would search (all the caller's,
or those it was limited to), both in SQL and owner-scoped:
- a year: when the question names years and none of them is a period any document reports
  (its own period, or a fiscal year one of its tables reports), the documents cannot answer
  ("net sales for 2009" over 10-Ks of 2017-2019); nor when it names a company surely
  (storage/document_filter.py `question_scope`) and none of that company's documents, or of those
  whose company was not read, reports them ("Contoso's 2021" beside another company's 2021);
- a name: when the question names something (graph.nodes.answerable.names_in) and none of its
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
import re
import uuid
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.nodes.retrieve import owner_of
from graph.scope import kept
from graph.state import QuestionScope, State
from storage.periods import MONTH
from storage.question_period import asked_period
from storage.workspaces import Owners

log = logging.getLogger("thotqen.answerable")

_TITLE = r"[A-Z][a-z][\w&'.-]*"
_NAME = re.compile(rf"{_TITLE}(?:\s+(?:&\s+|of\s+|and\s+)?{_TITLE})*")
# Capitalised words that are the question's own phrasing, not a name.
_PHRASING = frozenset(
    ["what", "who", "whom", "whose", "how", "which", "when", "where", "why", "is", "was", "were", "are", "did",
    "does", "do", "can", "could", "would", "should", "will", "tell", "give", "please", "answer", "using", "use",
    "based", "by", "in", "for", "according", "considering", "consider", "assume", "assuming", "taking", "take",
    "the", "a", "an", "if", "has", "have", "had", "we", "you", "i", "it", "of", "and", "or", "on", "at", "from",
    "to", "as", "with", "this", "that", "these", "those", "there", "here", "calculate", "compute", "find", "list",
    "name", "show", "describe", "explain", "compare", "summarize", "summarise", "provide", "state", "what's",
    "how's", "roughly", "approximately", "about", "between", "during", "since", "after", "before", "among",
    "given"])
_CALENDAR = re.compile(rf"^{MONTH}$|^(?:mon|tue|wed|thu|fri|"
                       r"sat|sun)[a-z]*day$|^(?:fiscal|year|quarter|q[1-4]|fy\d*)$", re.IGNORECASE)


def names_in(question: str, *, lone: bool = False) -> list[str]:
    """The names a question uses: runs of two or more capitalised words, or one word in the possessive
    ("Nike's"), without its phrasing words, possessives cut. A lone capitalised word is too often an
    ordinary word set in title case ("the Real change", "Highest") to refuse on; `lone` adds those
    (a question is not refused when one of them is mentioned: "Block's (formerly Square)")."""
    out: list[str] = []
    for m in _NAME.finditer(question or ""):
        possessive = bool(re.search(r"(?:'s|’s|s')$", m.group(0))) or question[m.end():m.end() + 2] in ("'s", "’s")
        words = [w for w in re.sub(r"'s\b|’s\b", "", m.group(0)).split()]
        while words and (words[0].lower() in _PHRASING or _CALENDAR.match(words[0])):
            words.pop(0)
        while words and (words[-1].lower() in _PHRASING or _CALENDAR.match(words[-1])):
            words.pop()
        name = " ".join(words).strip(" .,'")
        # a sentence's first word is capitalised by orthography, not because it is a name
        first = not question[:m.start()].strip() or question[:m.start()].rstrip()[-1] in ".?!:;\n"
        single_at_start = len(words) == 1 and first and m.group(0).split()[0] == words[0]
        if name and name not in out and (len(words) > 1 or possessive or (lone and not single_at_start)):
            out.append(name)
    return out


def why_unanswerable(conn: Any, owner_id: Owners, question: str, scoped: list[uuid.UUID] | None,  # noqa: ANN401
                     read: list[QuestionScope] | None = None) -> str:
    """Why the documents (`scoped` of the owner's, or all) cannot answer `question` (module doc); "" when they may.
    The question's scope, when it is read, is appended to `read` (graph/scope.py: the search reuses it)."""
    from storage.document_filter import question_scope
    from storage.documents import coverage, mentions

    years = asked_period(question).years
    names = names_in(question)
    lone = [n for n in names_in(question, lone=True) if n not in names]
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
                         for name in names_in(question, lone=True)):
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
    question = state.get("standalone_question") or state["question"]
    if not asked_period(question).years and not names_in(question, lone=True):
        return {"unanswerable": ""}
    scoped = [uuid.UUID(d) for d in state.get("document_ids") or []] or None
    read: list[QuestionScope] = []
    with cfg.running.database.connection() as conn:
        reason = why_unanswerable(conn, owner_of(conn, cfg), question, scoped, read)
    if reason:
        log.info("refused before search: %s", reason)
    return {"unanswerable": reason, "question_scope": read[0] if read else None}


def after_answerable(state: State, runtime: Runtime[Context]) -> Literal["generate", "hyde", "retrieve"]:
    if state.get("unanswerable"):
        return "generate"
    return "hyde" if context_of(runtime).hyde else "retrieve"
