"""Verify: the check between the model and the user; what it lets through streams as the answer.

Every figure the answer states must rest on a cited fact, the shown calculation or a figure of
a cited excerpt printed on a line that its sentence names (graph/verify.py repairs or drops the
rest; an answer left with nothing becomes the refusal, with no citation). A sentence that states
no figure and cites excerpts must share at least one of its own words (beyond the question's) with
them: "Lima is the capital of Peru [1]" citing a paragraph about leases is dropped, and so is a
sentence that states figures and names nothing ("5,472 million [3]."). Talk of the system's
mechanics ("as stated in the first excerpt") is removed. An answer whose sources never mention a
name the question uses ("Nike's revenue" answered from another company's table) is refused, and so
is one copying a filer's own table for a question naming another filer in capitals ("AMD's"
answered from Block's statement). Each kept citation gets its
evidence lines: the table row a fact rests on (with the row's box on the page), the excerpt line
holding a figure the answer copied, or the excerpt sentence closest to the answer sentence that
cites it. Streams {"sources": citations} then {"token": piece}... of the verified answer, past what
generate already sent checked while the model wrote (graph/nodes/early.py), which stays.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import claims, dates, prompts
from graph.calc import Result
from graph.candidates import company_words
from graph.citations import MARK, before_stop, marked, on_evidence_page
from graph.context import Context, context_of
from graph.evidence_store import Shelf
from graph.facts import label_words, stored_facts, without_statement_names
from graph.figures import read_figures
from graph.nodes.common import node, reading_of
from graph.nodes.generate import _turns, _writer, excerpt_numbers, shown_excerpts
from graph.readers import readers
from graph.reading import Reading, names_in
from graph.state import Citation, Evidence, State
from graph.verify import Source, VerifyReport, sentences, verify
from lexicon import EXCERPT_TALK, POLARITY_WORDS, SCALES, letter_words
from lexicon import squashed as _squashed

log = logging.getLogger("thotqen.verify")
# Two content words sharing this many first letters count as one ("leases" / "leased").
STEM = 5


# A sentence that only says where something is written ("This information is found in [1].")
_POINTER_WORDS = frozenset({"this", "that", "these", "the", "information", "data", "figure", "figures", "it", "is",
                            "are", "was", "can", "be", "found", "stated", "shown", "given", "mentioned", "noted",
                            "listed", "provided", "reported", "in", "on", "from", "according", "to", "see", "source",
                            "and", "both", "also", "occurred", "occurs", "happened", "described", "explained",
                            "discussed", "detailed", "specified", "written", "cited", "says", "states", "explains",
                            "describes", "mentions", "indicates", "shows", "refer", "refers", "line", "lines",
                            "section", "sections", "paragraph", "paragraphs", "clause", "clauses", "article",
                            "articles", "part", "parts", "at", "first", "second", "third", "fourth", "fifth",
                            "sources", "as", "document", "documents", "page", "pages", "excerpt", "excerpts", "answer",
                            "correct", "relevant", "which"})
_POINTER = re.compile(
    r"(?:(?<=^)|(?<=[.!?]))\s*([^.!?]*?((?:(?:[\s,]*|\s+and\s+)\[\d+(?:,\s*\d+)*\])+)[^.!?\[]*[.!?]?)(?=\s|$)")


def _pointers_merged(answer: str) -> str:
    """Each pointer sentence removed, its citations given to the sentence before it, which is
    the claim it points for: the claim is then checked against what it cites."""
    out = answer
    for m in reversed(list(_POINTER.finditer(answer))):
        words = letter_words(MARK.sub("", m.group(1)).lower())
        before = out[:m.start()].rstrip()
        if not words or not all(w in _POINTER_WORDS for w in words) or not before:
            continue
        end = len(before) - 1 if before[-1] in ".!?" else len(before)
        claim = before[before.rfind(".", 0, end) + 1:]  # the sentence it points for: its markers need no repeat
        markers = "".join(x for x in dict.fromkeys(marker.group(0) for marker in MARK.finditer(m.group(2)))
                          if x not in claim)
        gap = "" if before[:end].endswith("]") or not markers else " "  # "[2][1]", not "[2] [1]"
        out = before[:end] + gap + markers + before[end:] + out[m.end():]
    return out


# every word the talk of excerpts may be made of (EXCERPT_TALK's own, with the regex's letters: harmless)
_TALK_WORDS = frozenset(letter_words(EXCERPT_TALK.pattern.lower()))


def opens_no_pointer(begun: str) -> bool:
    """Whether a sentence begun so (the text of it written so far) can no longer change the one
    before it: a pointer sentence gives that one its markers (`_pointers_merged`), and so does a
    first clause of such words beside talk of excerpts ("This is stated in excerpt [2], which ...":
    `without_mechanics`). A whole word before any comma that is neither a pointer's nor the talk's
    rules both out, whatever follows (graph/nodes/early.py sends the sentence before it then)."""
    head = MARK.sub(" ", begun.split(",", 1)[0])
    if "," not in begun:
        head = re.sub(r"[A-Za-z]+$", "", head)  # the last word may still grow ("Thi" -> "This")
    return any(w not in _POINTER_WORDS and w not in _TALK_WORDS for w in letter_words(head.lower()))


def _with_marks(sentence: str, marks: list[str]) -> str:
    return before_stop(sentence, "".join(marks)) if marks else sentence


def without_mechanics(answer: str) -> str:
    """The answer without talk of excerpts: it speaks of the documents, not of how it was made. A
    citation marker inside the talk removed ("as stated in excerpt [1]") stays with its sentence."""
    merged = _pointers_merged(answer)
    pieces: list[str] = []
    for start, end in sentences(merged):
        sentence = merged[start:end]
        words = letter_words(sentence.lower())
        if words and not MARK.search(sentence) and all(w in _POINTER_WORDS for w in words):
            continue  # "This information is found in the excerpt.": where, citing nothing
        talk = [m.group(0) for m in EXCERPT_TALK.finditer(sentence)]
        cleaned = EXCERPT_TALK.sub("", sentence)
        markers = [x.group(0) for t in talk for x in MARK.finditer(t)]
        head = letter_words(MARK.sub("", cleaned.split(",")[0]).lower())
        if talk and pieces and head and all(w in _POINTER_WORDS for w in head):
            # "This is stated in excerpt [1], which describes ...": where, and more of the excerpt
            markers += [x.group(0) for x in MARK.finditer(cleaned)]
            pieces[-1] = _with_marks(pieces[-1], [x for x in dict.fromkeys(markers) if x not in pieces[-1]])
            continue
        kept = [x for x in dict.fromkeys(markers) if x not in cleaned]
        pieces.append(_with_marks(cleaned, kept))
    cleaned = "".join(pieces)
    cleaned = re.sub(r"\s+([.,;:])", r"\1", cleaned)
    cleaned = re.sub(r"(^|[.!?]\s+)[,;:]\s*", r"\1", cleaned)
    return re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), cleaned).strip()


def _stems(text: str) -> set[str]:
    return {w[:STEM] for w in label_words(text) if len(w) > 2}


def _cited(sentence: str) -> set[int]:
    return set(marked(sentence))


_WHETHER = {w[:STEM] for w in POLARITY_WORDS}  # "Yes," says whether, not what: no word of its own


def unsupported_claims(answer: str, texts: dict[int, str], question: str) -> list[tuple[str, str | None]]:
    """Sentences stating no figure that cite excerpts none of whose own words (beyond the question's)
    the excerpts hold, each with its repair: citing instead the excerpt that holds most of them, when
    one does (the model cited the wrong one); a sentence stating figures is checked figure by figure
    (graph/verify.py)."""
    asked = _stems(question)
    out: list[tuple[str, str | None]] = []
    for start, end in sentences(answer):
        sentence = answer[start:end]
        cited = _cited(sentence)
        own = _stems(MARK.sub("", sentence)) - asked - _WHETHER
        if not cited or not own or any(f.identifying for f in read_figures(sentence, headers=False)):
            continue
        held = set().union(*(_stems(texts.get(n, "")) for n in cited))
        if not own & held:
            shares = sorted(((len(own & _stems(t)), -n) for n, t in texts.items() if n not in cited), reverse=True)
            better = -shares[0][1] if shares and shares[0][0] else None
            uncited = re.sub(rf"\s*(?:{MARK.pattern})", "", sentence)
            out.append((sentence, claims.with_markers(uncited, (better,)) if better else None))
    return out


_SCALE_WORDS = frozenset([*SCALES, "usd", "dollars", "percent", "per", "share"])


def bare_figures(answer: str) -> list[str]:
    """Sentences that state figures and name nothing ("5,472 million [3]."): a reader cannot tell what
    the figure is of, so it answers nothing."""
    out = []
    for start, end in sentences(answer):
        sentence = answer[start:end]
        words = [w for w in letter_words(MARK.sub("", sentence), 3) if w.lower() not in _SCALE_WORDS]
        if not words and read_figures(sentence, headers=False):
            out.append(sentence)
    return out


def _closest_line(text: str, sentence: str) -> str:
    words = _stems(MARK.sub("", sentence))
    best, best_score = "", 0
    for line in filter(None, text.split("\n")):
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line):
            score = len(_stems(part) & words)
            if score > best_score:
                best, best_score = part.strip(), score
    return best


def evidence_of(answer: str, report: VerifyReport, citations: list[Citation],
                facts: list[dict[str, Any]], numbers: dict[str, int]) -> dict[int, list[Evidence]]:
    """For each cited source, the rows and sentences the answer rests on (module doc)."""
    by_fact = {int(f["n"]): f for f in facts}
    texts = {c["n"]: c.get("text") or "" for c in citations}
    out: dict[int, list[Evidence]] = {}

    def add(n: int, item: Evidence) -> None:
        if n in texts and all(e["text"] != item["text"] for e in out.get(n, [])):
            out.setdefault(n, []).append(item)

    for check in report.figures:
        if check.action == "dropped":
            continue
        if check.fact is not None and (fact := by_fact.get(check.fact)):
            cell = fact["cell"]
            add(numbers.get(str(fact["key"]), 0), Evidence(text=str(fact["evidence"]), box=cell.get("row_box"),
                                                           context=str(fact.get("context") or ""),
                                                           kind="row"))
        elif check.excerpt is not None and check.held:
            line = next((x.strip() for x in texts.get(check.excerpt, "").split("\n") if x and check.held in x), "")
            if line:
                add(check.excerpt, Evidence(text=line, box=None, kind="row" if "\t" in line or "|" in line
                                            else "sentence"))
    for start, end in sentences(answer):
        sentence = answer[start:end]
        for n in _cited(sentence):
            if n not in out and (line := _closest_line(texts.get(n, ""), sentence)):
                add(n, Evidence(text=line, box=None, kind="sentence"))
    return out


def _with_answer(state: State, answer: str) -> list[Any]:
    """The history generate wrote, its last (assistant) turn holding the verified answer."""
    turns = list(state.get("chat_history") or [])
    if turns and isinstance(turns[-1], dict) and turns[-1].get("role") == "assistant":
        return [*turns[:-1], {"role": "assistant", "content": answer}]
    return _turns(state, answer)


_CAPS = re.compile(r"\b(?=[A-Z0-9&.-]*[A-Z])[A-Z0-9][A-Z0-9&.-]+\b")  # "AMCOR", "3M"; not "2023"


def names_unmet(question: str, citations: list[Citation], companies: list[str], *,
                filers_only: bool = False) -> list[str]:
    """The names the question uses (graph/reading.py `names_in`) that none of the cited sources,
    their documents' names nor their covers' companies mention: "Nike's revenue" answered from
    another company's statement.

    `filers_only`: the answer states figures of the cited filings' own tables, which are the
    filer's; then a name the question uses, even a lone one ("How much did Tesla spend"), must be
    the filer's (its cover's names and tickers, or the document's name), not merely mentioned in
    its text. The question passes when any of its names or upper-case words ("AMCOR") is."""
    names = names_in(question, lone=filers_only)
    if not names:
        return []
    sources = [*(c.get("name") or "" for c in citations), *companies]
    if not filers_only:
        sources += [c.get("text") or "" for c in citations]
    held = _squashed(" ".join(sources))
    lone = names_in(question, lone=True) + (_CAPS.findall(question) if filers_only else [])
    return [] if any(_squashed(n) and _squashed(n) in held for n in lone) else names


def _documents_of(citations: list[Citation]) -> list[str]:
    return sorted({str(c["document_id"]) for c in citations if c.get("document_id")})


def _words_of(state: State, shelf: Shelf, question: str, cited_docs: list[str]) -> tuple[set[str], set[str]]:
    """The cited documents' company-name words (the facts node's, else read), which say whose a figure is;
    and the filing words the query glossary gives for the question's ("capex": purchases of property)."""
    asked = label_words(shelf.glossary_words(without_statement_names(question)))
    if state.get("company_words") or not cited_docs:
        return set(state.get("company_words") or []), asked
    return company_words(shelf, [uuid.UUID(d) for d in cited_docs]), asked


def names_another_filer(question: str, cited_filers: list[str], all_filers: list[str]) -> list[str]:
    """The question's words in capitals ("AMD") that are another filer's name or ticker among the owner's
    documents, not the cited documents' filer's: "AMD's operating income" answered from Block's table.
    A word in capitals no filer goes by ("EBITDA") says nothing of whose the figure is."""
    cited = {k for n in cited_filers for k in _goes_by(n)}
    everyone = {k for n in all_filers for k in _goes_by(n)}
    # "MGM" is MGM Resorts International's, whether or not that filing printed its ticker
    return [w for w in dict.fromkeys(_CAPS.findall(question))
            if _squashed(w) in everyone and not any(_squashed(w) in key for key in cited)]


_SUFFIX = frozenset(["inc", "corp", "corporation", "co", "company", "ltd", "plc", "llc", "the", "and", "of"])


def _goes_by(name: str) -> set[str]:
    """A filer's name squashed, and its initials: "Advanced Micro Devices, Inc." goes by "amd" too."""
    words = [w for w in re.findall(r"[A-Za-z0-9][\w&'-]*", name) if w.lower() not in _SUFFIX]
    initials = "".join(w[0] for w in words).lower() if len(words) > 1 else ""
    return {_squashed(name), *([initials] if initials else [])}


@dataclass(frozen=True)
class Checked:
    """What the check lets through: the answer, the sources to show, and the state's update."""

    answer: str
    sources: list[Citation]
    update: dict[str, Any]

    @property
    def passed(self) -> bool:
        """Something cited came through: no refusal, no failure message."""
        return bool(self.update.get("cited")) and self.answer != prompts.CANNOT_ANSWER


def _unmet_names(shelf: Shelf, state: State, reading: Reading, cited_docs: list[str], composed: bool) -> list[str]:
    """The question's names the answer's sources do not bear out (`names_unmet`, `names_another_filer`)."""
    question = reading.question
    if not (reading.names or (composed and (reading.lone_names or _CAPS.search(question)))):
        return []
    citations = list(state.get("citations") or [])
    filed = shelf.filers([uuid.UUID(d) for d in cited_docs])
    own_table = composed and not filed.unknown
    unmet = names_unmet(question, citations, filed.names, filers_only=own_table)
    if own_table and not unmet and _CAPS.search(question):
        # the filer of the rows the answer cites, not of every excerpt it was shown
        marked = _cited(str(state.get("answer") or ""))
        used = _documents_of([c for c in citations if c["n"] in marked])
        theirs = shelf.filers([uuid.UUID(d) for d in used])
        mine = shelf.filers(list(shelf.ready_documents().values()))
        unmet = names_another_filer(question, theirs.names, mine.names)
    return unmet


def check(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> Checked:
    """The state's answer checked (module doc); verify_node streams it, generate checks a draft's
    finished sentences with it (graph/nodes/early.py)."""
    answer = str(state.get("answer") or "")
    citations = list(state.get("citations") or [])
    reading = reading_of(state)
    question = reading.question
    if not citations or answer == prompts.CANNOT_ANSWER:  # nothing to check: a refusal or a failure message
        return Checked(answer, citations, {})
    cited_docs = _documents_of(citations)
    composed = bool(state.get("figure_choice"))  # the answer states the cited filings' own table figures
    cfg = context_of(runtime, config)
    store = cfg.running.evidence
    with store.shelf(readers(state, store, cfg)) as shelf:
        unmet = _unmet_names(shelf, state, reading, cited_docs, composed)
        if unmet:
            log.info("answer withheld: its sources never mention %s", ", ".join(unmet))
            return Checked(prompts.CANNOT_ANSWER, [], {"answer": prompts.CANNOT_ANSWER, "citations": [], "cited": [],
                                                       "chat_history": _with_answer(state, prompts.CANNOT_ANSWER)})
        ignore, glossary = _words_of(state, shelf, question, cited_docs)
    numbers = excerpt_numbers(state)
    fact_items = list(state.get("facts") or [])
    facts = stored_facts(fact_items, numbers)
    texts = {c["n"]: c.get("text") or "" for c in citations}
    cleaned = without_mechanics(answer)
    named = {c["n"]: f"{c.get('name') or ''}\n{c.get('text') or ''}" for c in citations}
    unsupported = unsupported_claims(cleaned, texts, question)
    for sentence, repair in [*unsupported, *((s, None) for s in bare_figures(cleaned))]:
        cleaned = cleaned.replace(sentence, repair or "")
    # the model's sentences (not code's, composed from a table's row) say only what they cite
    failed = [] if composed else claims.failures(sentences(cleaned), cleaned, named, question)
    for failure in failed:
        log.info("sentence %s by the claim check: %s", "cited again" if failure.repair else "dropped", failure.check)
        cleaned = cleaned.replace(failure.sentence, failure.repair or "")
    failed = [f for f in failed if not f.repair]
    if not composed and reading.asks == "date":  # as precise as the excerpts write it (graph/dates.py)
        cleaned = dates.completed(cleaned, sentences(cleaned), named)
    model_wrote = not composed and cleaned.strip()
    if model_wrote and (whole := claims.answer_failure(cleaned, reading, sentences(cleaned), named)):
        log.info("answer withheld by the claim check %s: it %s", whole.name, whole.why)
        failed.append(claims.Failure(cleaned.strip(), whole.name))
        cleaned = ""
    report = verify(cleaned, refusal=prompts.CANNOT_ANSWER, facts=facts,
                    excerpts=[Source(n=n, text=t) for n, t in texts.items()],
                    result=Result.from_dict(calc) if (calc := state.get("calculation")) else None, question=question,
                    ignore=ignore, question_words=glossary)
    report.original = answer
    report.claims = [{"sentence": f.sentence.strip(), "check": f.check} for f in failed]
    final = report.answer
    cited = sorted(_cited(final))
    if report.refused or not cited:
        final, citations, cited = prompts.CANNOT_ANSWER, [], []
    else:
        evidence = evidence_of(final, report, citations, fact_items, numbers)
        shown, _ = shown_excerpts(state)
        parts = {n: list(e.get("parts") or []) for n, e in enumerate(shown, 1)}
        citations = [on_evidence_page(Citation(**{**c, "evidence": evidence.get(c["n"], [])}), parts.get(c["n"], []))
                     for c in citations]
    return Checked(final, citations, {"answer": final, "citations": citations, "cited": cited,
                                      "verification": report.model_dump() | {"answer": final},
                                      "chat_history": _with_answer(state, final)})


def pieces(text: str) -> list[str]:
    """Word by word, as a reader expects an answer to arrive."""
    return re.findall(r"\S+\s*|^\s+", text)


@node("verify")
def verify_node(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """The answer checked and streamed: only what generate did not already send checked
    (`streamed`, graph/nodes/early.py). What was sent stays: when the whole answer's check would
    not begin with it, the answer is what was sent, as its own check left it."""
    write = _writer()
    checked = check(state, config, runtime)
    sent = str(state.get("streamed") or "")
    if sent and not (checked.passed and checked.answer.startswith(sent)):
        early = dict(state.get("early") or {})
        log.warning("the whole answer's check changed what was already sent checked: the answer is what was sent")
        write({"sources": early.get("citations") or []})
        return {**early, "chat_history": _with_answer(state, sent)}
    write({"sources": checked.sources})
    for piece in pieces(checked.answer[len(sent):]):
        write({"token": piece})
    return checked.update
