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
answered from Block's statement). Each kept citation gets its evidence lines: the table row a fact
rests on (with the row's box on the page), the excerpt line holding a figure the answer copied, or
the excerpt sentence closest to the answer sentence that cites it. Streams {"sources": citations}
then {"token": piece}... of the verified answer, past what
generate already sent checked while the model wrote (graph/nodes/early.py), which stays.

The rules are the domain modules' (graph/verify.py, graph/claims.py, graph/mechanics.py,
graph/grounding.py, graph/filers.py, graph/dates.py); this node reads what they need through the
run's shelf (graph/evidence_store.py) and streams what they let through.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import claims, confirm, dates, prompts
from graph.calc import Result
from graph.candidates import company_words
from graph.citations import citations_of, marked, on_evidence_page
from graph.context import Context, context_of
from graph.evidence_store import Shelf
from graph.facts import label_words, stored_facts, without_statement_names
from graph.filers import names_another_filer, names_unmet
from graph.grounding import bare_figures, evidence_of, unsupported_claims
from graph.mechanics import without_mechanics
from graph.nodes.common import llm_call, node, reading_of
from graph.nodes.generate import _turns, _writer, excerpt_numbers, shown_excerpts
from graph.readers import readers
from graph.reading import Reading
from graph.state import Citation, State
from graph.verify import Source, sentences, verify
from lexicon import CAPITALS

log = logging.getLogger("thotqen.verify")


def _with_answer(state: State, answer: str) -> list[Any]:
    """The history generate wrote, its last (assistant) turn holding the verified answer."""
    turns = list(state.get("chat_history") or [])
    if turns and isinstance(turns[-1], dict) and turns[-1].get("role") == "assistant":
        return [*turns[:-1], {"role": "assistant", "content": answer}]
    return _turns(state, answer)


def _marked(text: str) -> set[int]:
    return set(marked(text))


def _documents_of(citations: list[Citation]) -> list[str]:
    return sorted({str(c["document_id"]) for c in citations if c.get("document_id")})


def _words_of(state: State, shelf: Shelf, question: str, cited_docs: list[str]) -> tuple[set[str], set[str]]:
    """The cited documents' company-name words (the facts node's, else read), which say whose a figure is;
    and the filing words the query glossary gives for the question's ("capex": purchases of property)."""
    asked = label_words(shelf.glossary_words(without_statement_names(question)))
    if state.get("company_words") or not cited_docs:
        return set(state.get("company_words") or []), asked
    return company_words(shelf, [uuid.UUID(d) for d in cited_docs]), asked


@dataclass(frozen=True)
class Checked:
    """What the check lets through: the answer, the sources to show, and the state's update."""

    answer: str
    sources: list[Citation]
    update: dict[str, Any]
    awaiting: bool = False  # a sentence to confirm was not (checked without confirming: graph/nodes/early.py)

    @property
    def passed(self) -> bool:
        """Something cited came through: no refusal, no failure message."""
        return bool(self.update.get("cited")) and self.answer != prompts.CANNOT_ANSWER


def _unmet_names(shelf: Shelf, state: State, reading: Reading, cited_docs: list[str], composed: bool) -> list[str]:
    """The question's names the answer's sources do not bear out (`names_unmet`, `names_another_filer`)."""
    question = reading.question
    if not (reading.names or (composed and (reading.lone_names or CAPITALS.search(question)))):
        return []
    citations = list(state.get("citations") or [])
    filed = shelf.filers([uuid.UUID(d) for d in cited_docs])
    own_table = composed and not filed.unknown
    unmet = names_unmet(question, citations, filed.names, filers_only=own_table)
    if own_table and not unmet and CAPITALS.search(question):
        # the filer of the rows the answer cites, not of every excerpt it was shown
        marked = _marked(str(state.get("answer") or ""))
        used = _documents_of([c for c in citations if c["n"] in marked])
        theirs = shelf.filers([uuid.UUID(d) for d in used])
        mine = shelf.filers(list(shelf.ready_documents().values()))
        unmet = names_another_filer(question, theirs.names, mine.names)
    return unmet


def _confirmation(cfg: Context, config: RunnableConfig, item: confirm.ToConfirm,
                  question: str) -> tuple[float | None, Any]:
    """P(yes) that the statement holding a sentence's value answers the question (graph/confirm.py `p_yes`);
    None when no link answered or the reply said neither (the sentence then stands: nothing says it is
    wrong). With the call's result for the run's record."""
    try:
        result = cfg.running.chain(cfg.llm_order).invoke(
            prompts.confirm_messages(item.window, question), cheap=True, token_probabilities=True, config=config)
    except Exception as exc:
        log.warning("no model confirmed an answer sentence's value (%s): the sentence stands", type(exc).__name__)
        return None, None
    return confirm.p_yes(result.token_logprobs or [], result.text), result


def check(state: State, config: RunnableConfig, runtime: Runtime[Context], *, confirming: bool = True) -> Checked:
    """The state's answer checked (module doc); verify_node streams it, generate checks a draft's
    finished sentences with it (graph/nodes/early.py), not `confirming` (no model call while the model
    writes): a sentence that would be confirmed then stands and the result is `awaiting`."""
    answer = str(state.get("answer") or "")
    citations = list(state.get("citations") or [])
    reading = reading_of(state)
    question = reading.question
    in_view = citations or (citations_of(shown_excerpts(state)[0]) if reading.asks == "yes_no" else [])
    in_view_texts = {c["n"]: c.get("text") or "" for c in in_view}
    if denial := (claims.denied_by_evidence(reading, in_view_texts)
                  or claims.denial_quoted(answer, reading, in_view_texts)):
        n, statement = denial  # the excerpts say no: the answer is theirs, whatever the model wrote (or refused)
        log.info("yes/no answered from the evidence: excerpt [%d] denies what is asked", n)
        answer, citations = f'No: "{statement}" [{n}]', in_view
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
    pending = confirm.to_confirm(sentences(cleaned), cleaned, texts, question) if (
        not composed and cfg.confirm_floor > 0) else []
    calls = list(state.get("llm_calls") or [])
    for item in pending if confirming else []:
        p_yes, result = _confirmation(cfg, config, item, question)
        calls = llm_call({"llm_calls": calls}, "verify", result) if result is not None else calls
        if p_yes is not None and p_yes < cfg.confirm_floor:
            log.info("sentence dropped: the model did not confirm that its cited statement answers (P(yes) %.2f)",
                     p_yes)
            failed.append(claims.Failure(item.sentence.strip(), confirm.NOT_CONFIRMED))
            cleaned = cleaned.replace(item.sentence, "")
    if not composed and reading.asks == "date":  # as precise as the excerpts write it (graph/dates.py)
        cleaned = dates.completed(cleaned, sentences(cleaned), named)
    if not composed and reading.asks == "yes_no":  # its first word as its sentence says it (graph/claims.py)
        cleaned = claims.verdict_as_stated(cleaned, reading)
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
    cited = sorted(_marked(final))
    if cited and not report.refused and claims.states_no_quantity(final, reading):
        log.info("answer withheld: what the figures' check left states no quantity, and one is asked")
        cited = []
    if report.refused or not cited:
        final, citations, cited = prompts.CANNOT_ANSWER, [], []
    else:
        evidence = evidence_of(final, report, citations, fact_items, numbers)
        shown, _ = shown_excerpts(state)
        parts = {n: list(e.get("parts") or []) for n, e in enumerate(shown, 1)}
        citations = [on_evidence_page(Citation(**{**c, "evidence": evidence.get(c["n"], [])}), parts.get(c["n"], []))
                     for c in citations]
    confirmed = {"llm_calls": calls} if confirming and pending else {}
    return Checked(final, citations, {"answer": final, "citations": citations, "cited": cited,
                                      "verification": report.model_dump() | {"answer": final},
                                      "chat_history": _with_answer(state, final), **confirmed},
                   awaiting=bool(pending) and not confirming)


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
