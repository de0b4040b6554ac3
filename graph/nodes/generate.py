"""Generate: an answer from the relevant excerpts only, each fact cited as [n].

The model sees the excerpts numbered 1..m (see `shown_excerpts`) and may cite only those
numbers; the citations returned are exactly that list, so every [n] resolves to a document and
page (or a URL). Figure lookup's facts (graph/nodes/facts.py) are listed after the excerpts with
tags: the model writes "{F1}" and code writes the cell's value and its marker, and "{C}" stands
for the calculation code did (graph/nodes/compute.py), whose working the answer then shows. A
marker outside 1..m is removed, and a sentence whose figures sit in other excerpts than it cites
is re-pointed to them (graph/citations.py). With no relevant excerpt there is no model call.
Streamed as {"draft_sources": citations} then {"draft": piece}...: the model's text before the check,
whose progress a chat shows, and, as each of its sentences passes the check, {"token": piece}... of
that checked beginning (graph/nodes/early.py); the check after it (graph/nodes/verify.py) streams the
rest of the answer it lets through. A refusal ("cannot answer") cites nothing.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.calc import Fact
from graph.citations import citations_of, cite_uncited, clean_markers, repair_citations
from graph.compose import fact_sentence
from graph.context import Context, context_of
from graph.facts import fact_block, shown_value, stored_facts
from graph.figures import Asked
from graph.nodes.common import history, llm_failed, node, reading_of
from graph.state import Excerpt, State, Turn
from lexicon import letter_words

log = logging.getLogger("thotqen.generate")


def shown_excerpts(state: State) -> tuple[list[Excerpt], list[int]]:
    """The excerpts the answer may cite, and the numbers of those graded relevant.

    When this round found something relevant, its excerpts are shown in the order they were
    graded (with earlier rounds' relevant ones after them): the prompt then begins as grading's
    did and the model server reads it from its prefix cache instead of again (half the prompt
    tokens of a question). Otherwise (no grading call was made: the floor alone judged; or this round
    found nothing relevant) only the relevant excerpts are shown: an excerpt of another document
    that nothing judged relevant lends the model a wrong name or figure and costs prompt time.
    """
    relevant = list(state.get("relevant") or [])
    round_docs = list(state.get("documents") or [])
    kept = {g["key"] for g in state.get("grades") or [] if g.get("relevant") is True}
    graded = any(c.get("node") == "grade" for c in state.get("llm_calls") or [])
    if not graded or not any(d["key"] in kept for d in round_docs):
        return relevant, list(range(1, len(relevant) + 1))
    keys = {d["key"] for d in round_docs}
    shown = [*round_docs, *[d for d in relevant if d["key"] not in keys]]
    good = {d["key"] for d in relevant}
    return shown, [n for n, d in enumerate(shown, 1) if d["key"] in good]


def excerpt_numbers(state: State) -> dict[str, int]:
    """Each shown excerpt's key -> the [n] it is cited by."""
    shown, _ = shown_excerpts(state)
    return {e["key"]: n for n, e in enumerate(shown, 1)}


_TAG = re.compile(r"\{\s*F(\d+)\s*\}|\{\s*C\s*\}")
# A bare tag left in the answer ("as F2 shows", "(F1)"): the model's own bookkeeping, not the document's.
_BARE_TAG = re.compile(r"\s*\(?\bF\d+\b\)?(?=[\s.,;:]|$)")


_LEADING_TAG = re.compile(r"^\s*\{\s*F\d+\s*\}\s*:\s*(?=\S)")


def fill_tags(answer: str, facts: list[Fact], calculation: dict[str, Any] | None, asked: Asked) -> str:
    """The model's {Fn} and {C} tags replaced by the values code holds, with their citation markers.

    A sentence that is little more than its tags ("{F3}: {F3}", a small model copying the list's
    layout) is written by code from the facts it names: "Purchases of property, plant and equipment
    (FY2018) was $1,577 million [1]." The model chose the fact; code writes its row and value."""
    by_n = {f.n: f for f in facts}

    def stated(fact: Fact) -> str:
        mark = f" [{fact.source}]" if fact.source else ""
        return shown_value(fact, asked) + mark

    def value(m: re.Match[str]) -> str:
        if m.group(1) is None:
            if calculation is None:
                return ""
            marks = "".join(f"[{n}]" for n in calculation.get("markers") or [])
            return f"{calculation['text']} {marks}".strip()
        fact = by_n.get(int(m.group(1)))
        return "" if fact is None else stated(fact)

    answer = _LEADING_TAG.sub("", answer)  # "{F3}: The capex was {F3}.": the list's layout copied
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer):
        named = [by_n[int(n)] for n in dict.fromkeys(m.group(1) for m in _TAG.finditer(sentence) if m.group(1))
                 if int(n) in by_n]
        words = letter_words(_BARE_TAG.sub("", _TAG.sub("", sentence)), 3)
        if named and len(words) < 3:
            out.append(" ".join(fact_sentence(f, asked) for f in named))
        elif sentence.strip():
            out.append(_BARE_TAG.sub("", _TAG.sub(value, sentence)).strip())
    return " ".join(out)


def _writer() -> Any:
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except Exception:  # called outside a graph run (a direct call in a test)
        return lambda _chunk: None


def _turns(state: State, answer: str) -> list[Turn]:
    past: list[Turn] = [t if isinstance(t, dict) else {"role": t[0], "content": t[1]}
                        for t in state.get("chat_history") or []]
    return [*past, {"role": "user", "content": state["question"]}, {"role": "assistant", "content": answer}]


@node("generate")
def generate(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    from providers.classifier import classify
    from providers.llm import ChainResult, StreamReset

    cfg = context_of(runtime, config)
    excerpts, relevant = shown_excerpts(state)
    reading = reading_of(state)
    question = reading.question
    if not relevant or state.get("unanswerable"):
        return {"answer": prompts.CANNOT_ANSWER, "citations": [], "cited": [], "provider": None,
                "chat_history": _turns(state, prompts.CANNOT_ANSWER)}
    asked = reading.unit
    facts = stored_facts(list(state.get("facts") or []), excerpt_numbers(state))
    calculation = state.get("calculation")
    block = prompts.excerpt_block(excerpts, question, history(state, cfg.history_turns))
    figures = fact_block(facts, asked)
    if figures:
        figures += prompts.FACTS_TASK
    if calculation:
        figures += prompts.calculation_note(str(calculation["working"]))
    messages = [("system", prompts.EXCERPTS_SYSTEM),
                ("human", block + prompts.relevant_note(relevant, len(excerpts)) + figures + prompts.ANSWER_TASK)]
    citations = citations_of(excerpts)
    write = _writer()
    write({"draft_sources": citations})
    from graph.nodes.early import Early  # it checks with verify's check, which imports this module

    early = Early(state, config, runtime, citations, write)
    started, first_token = time.perf_counter(), None
    result: ChainResult | None = None
    try:
        for item in cfg.running.chain(cfg.llm_order).stream(messages, cheap=classify(question) == "cheap",
                                                           config=config):
            if isinstance(item, str):
                if first_token is None:
                    first_token = time.perf_counter() - started
                write({"draft": item})
                early.add(item)
            elif isinstance(item, StreamReset):
                write({"reset": item.link})
                early.reset()
            elif isinstance(item, ChainResult):
                result = item
    except Exception as exc:  # every provider failed: say so, never invent an answer
        answer = "No language model could answer right now; please try again later."
        return {"answer": answer, "citations": [], "cited": [], "provider": None,
                "llm_calls": llm_failed(state, "generate", exc), "chat_history": _turns(state, answer),
                **early.sent()}  # what was sent checked before the failure stays the answer (verify)
    assert result is not None
    answer, cited = finished(result.text, state)
    if answer == prompts.CANNOT_ANSWER:
        citations = []
    return {"answer": answer, "citations": citations, "cited": cited, "provider": result.provider,
            "first_token_s": first_token, "llm_calls": [*(state.get("llm_calls") or []),
                                                        {"node": "generate", **result.metadata()}],
            "chat_history": _turns(state, answer), **early.sent()}


def finished(text: str, state: State) -> tuple[str, list[int]]:
    """The model's text as the answer: its tags filled, its markers cleaned and repaired (module
    doc), the calculation's working shown; and the [n] it cites."""
    excerpts, _ = shown_excerpts(state)
    reading = reading_of(state)
    facts = stored_facts(list(state.get("facts") or []), excerpt_numbers(state))
    calculation = state.get("calculation")
    texts = [e.get("text") or "" for e in excerpts]
    answer = fill_tags(text, facts, calculation, reading.unit)
    answer, _ = clean_markers(answer, len(excerpts))
    answer, cited = clean_markers(cite_uncited(repair_citations(answer, texts, reading.question), texts,
                                               reading.question), len(excerpts))
    if calculation and str(calculation["working"]) not in answer:
        answer = f"{answer.rstrip()}\n\nCalculation: {calculation['working']}".strip()
        _, cited = clean_markers(answer, len(excerpts))
    if prompts.CANNOT_ANSWER.rstrip(".").lower() in answer.lower() and not cited:
        return prompts.CANNOT_ANSWER, cited
    return answer, cited
