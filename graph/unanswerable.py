"""Questions the asker's documents cannot be about, told before any search.

Two checks on what the question names, against the documents it would search (all the asker's,
or those it was limited to), both in SQL through the run's shelf (graph/evidence_store.py):
- a year: when the question names years and none of them is a period any document reports
  (its own period, or a fiscal year one of its tables reports), nor one that a document with no
  period of its own (a manual, a history: the years it writes are of what it tells) writes, the
  documents cannot answer ("net sales for 2009" over 10-Ks of 2017-2019; not "Becker, Chambers
  and Wilks's 1988 book" over a language definition citing it, whatever year another document's
  table was read as reporting); nor when it names a company surely
  (storage/document_filter.py `question_scope`) and none of that company's documents, or of those
  whose company was not read, reports them ("Contoso's 2021" beside another company's 2021);
- a name: when the question names something surely (graph/reading.py `names_in`: a run of capitalised
  words, a possessive, a word written as code) that the documents never mention, "Nike's revenue" over
  filings that never say "Nike", "the Eclipse Public License" in a style guide that names other
  licences, "PYTHONUTF8" in a HOWTO that never sets it, is refused with no citation (each such name
  must be mentioned: measured in evals/results/README.md, "Names the documents never mention"); a lone
  capitalised word ("How much did Tesla spend") when none of the owner's documents has it at all.
  A name counts as mentioned when a passage holds all of its words in any order: a question's words
  for a thing are seldom the document's exact phrase ("the Fullerton Cessna", "the Acting Secretary
  of Homeland Security" for "Chad Wolf, Acting Secretary ... Department of Homeland Security"), and
  in the forms texts write names (lexicon.py `written_forms`: "Cumberland Univ.", "tsarbomba").
Names written in capitals only ("AMCOR", "EBITDA") are not checked: acronyms of metrics look the same.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph.evidence_store import Shelf
from graph.reading import Reading
from graph.reading import read as read_question
from graph.scope import kept
from graph.state import QuestionScope
from lexicon import written_forms

if TYPE_CHECKING:  # storage is imported where the graph runs (graph/evidence_store.py)
    from storage.documents import Coverage

# How each reason opens, before the words of the question it quotes (the years, the name).
NO_YEAR, NO_COMPANY_YEAR, NO_NAME = ("no document reports", "no document of the company named reports",
                                     "no document mentions")


def without_question_words(reason: str) -> str:
    """`reason` as a log may carry it: what kind of reason, none of the question's own words."""
    return next((kind for kind in (NO_COMPANY_YEAR, NO_YEAR, NO_NAME) if reason.startswith(kind)), "another reason")


def needs_documents(reading: Reading) -> bool:
    """Whether the question names anything the checks look for (else it is never refused here)."""
    return bool(reading.period.years or reading.lone_names)


def _mentioned(shelf: Shelf, scoped: list[uuid.UUID] | None, name: str) -> bool:
    """Whether a document mentions `name` in one of the forms a text writes it (lexicon.py `written_forms`):
    as the question writes it ("md5"), with a code word's parts apart ("UTF8" in a text writing "UTF-8"), its
    words joined or its common words abbreviated."""
    return any(shelf.mentions(scoped, form) for form in written_forms(name))


def _may_tell(shelf: Shelf, covered: Coverage, years: Sequence[int]) -> bool:
    """Whether the documents `covered` may tell of one of `years`: one reports it, or one with no period of its
    own writes it."""
    return bool(set(years) & covered.years) or bool(covered.unperiodic) and any(
        shelf.mentions(covered.unperiodic, str(year)) for year in years)


def why_unanswerable(shelf: Shelf, question: str | Reading, scoped: list[uuid.UUID] | None,
                     read: list[QuestionScope] | None = None) -> str:
    """Why the documents (`scoped` of the shelf's, or all) cannot answer `question` (module doc); "" when
    they may. The question's scope, when it is read, is appended to `read` (graph/scope.py: the search
    reuses it)."""
    reading = question if isinstance(question, Reading) else read_question(question)
    question = reading.question
    years = reading.period.years
    names = list(reading.names)
    lone = [n for n in reading.lone_names if n not in names]
    if years:
        covered = shelf.coverage(scoped)
        if covered.years and not _may_tell(shelf, covered, years):
            return f"{NO_YEAR} {', '.join(map(str, years))}"
        # a company named surely: its own filings (and those whose company was not read) must report the year
        scope = shelf.question_scope(question, scoped)
        if read is not None:
            read.append(kept(scope, question, scoped))
        if scope is not None and scope.certain:
            theirs = shelf.coverage(scope.documents())
            if theirs.years and not _may_tell(shelf, theirs, years):
                return f"{NO_COMPANY_YEAR} {', '.join(map(str, years))}"
    if absent := [name for name in names if not _mentioned(shelf, scoped, name)]:
        return f"{NO_NAME} {' or '.join(absent)}"
    # a lone capitalised word is a name when none of the owner's documents has it even as a word
    # ("How much did Tesla spend"); an ordinary word in title case ("the Real change") is somewhere
    for name in lone:
        if not shelf.mentions(None, name):
            return f"{NO_NAME} {name}"
    return ""
