"""Choose: a question that asks for one figure is answered by code from the fact the model picks.

Runs after compute. When the question asks for one figure (graph/compose.py `wants_one_figure`)
and code computed it, the answer is the calculation's sentence and working, with no model call.
When it asks for a figure to look up, the model picks the fact that is the figure asked, or
"none", in one short constrained call over the facts' list (each fact's row, period and value),
and code writes the sentence (graph/compose.py `fact_sentence`): the digits, the unit and the
citation are the cell's. When the chain's first link is the embedded local model, its pick only
says that a listed fact is the figure: code's ranking (graph/facts.py `pick`) names which, measured
more often right (`choose_local` hands the pick back to the model). "none" is the honest "the
documents don't say": no listed row is the figure asked, unless a sentence of the excerpts' prose
states a number beside the question's words (graph/grounding.py `figure_in_prose`): then generate
answers from the prose, checked like any answer. Only facts of the
period the question names are offered (a column whose period was not read stays, beside one of
that period): a fact of another year is another figure, so when no fact is of the year asked, the answer is the refusal,
not the nearest year's value. Anything else (a
question asking for reasons or a verdict, a calculation code could not do, no facts) goes on to
generate. Verify checks a composed answer like any other.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from pydantic import BaseModel, create_model

from graph import compose, prompts
from graph.calc import Fact
from graph.citations import citations_of, clean_markers
from graph.context import Context, context_of
from graph.facts import fact_block, stored_facts
from graph.grounding import figure_in_prose
from graph.nodes.common import llm_call, llm_failed, node, reading_of
from graph.nodes.generate import _turns, excerpt_numbers, shown_excerpts
from graph.state import State

log = logging.getLogger("thotqen.choose")
NONE = "none"


def choice_model(facts: list[Fact]) -> type[BaseModel]:
    """One field whose value is a fact's tag or "none": a grammar cannot let the reply run on."""
    tags = tuple(f"F{f.n}" for f in facts) + (NONE,)
    return create_model("FigureChoice", figure=(Literal[tags], ...))  # type: ignore[arg-type]


def of_asked_years(items: list[dict[str, Any]], years: tuple[int, ...]) -> list[dict[str, Any]]:
    """The facts whose column is of a year the question names (all, when it names none). A column whose
    period was not read stays beside a fact of the year asked, never alone: "AMD's net revenue in 2019"
    is not the 3,991 of a five-year table whose headers were not read, in a 10-K of 2015."""
    if not years:
        return items
    kept = [i for i in items if i["cell"].get("fiscal_year") in (*years, None)]
    return kept if any(i["cell"].get("fiscal_year") in years for i in kept) else []


def after_choose(state: State) -> Literal["verify", "generate"]:
    return "verify" if state.get("answer") else "generate"


def refusal(state: State, choice: dict[str, Any], calls: list[Any], provider: str | None) -> dict[str, Any]:
    """The honest "the documents don't say", citing nothing."""
    return {"answer": prompts.CANNOT_ANSWER, "citations": [], "cited": [], "provider": provider, "llm_calls": calls,
            "figure_choice": choice, "chat_history": _turns(state, prompts.CANNOT_ANSWER)}


@node("choose")
def choose(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    reading = reading_of(state)
    question = reading.question
    items = list(state.get("facts") or [])
    calculation = state.get("calculation")
    if state.get("unanswerable") or not items or not compose.wants_one_figure(question):
        return {"figure_choice": None}
    if compose.wants_a_calculation(question) and not calculation:
        return {"figure_choice": None}  # asked to compute what code could not: generate says what is missing
    items = of_asked_years(items, reading.period.years) if not calculation else items
    calls = list(state.get("llm_calls") or [])
    if not items:
        log.info("no fact of the year asked: refused")
        return refusal(state, {"by": "period", "fact": None}, calls, None)
    cfg = context_of(runtime, config)
    excerpts, _ = shown_excerpts(state)
    facts = stored_facts(items, excerpt_numbers(state))
    asked = reading.unit
    provider = None
    if calculation:
        answer = compose.calculation_answer(question, calculation, set(state.get("company_words") or []))
        choice: dict[str, Any] = {"by": "calculation", "fact": None}
    else:
        messages = prompts.choose_messages(question, fact_block(facts, asked))
        try:
            result = cfg.running.chain(cfg.llm_order).invoke(messages, cheap=True, structured=choice_model(facts),
                                                               config=config)
        except Exception as exc:  # no model could choose: generate tries the free answer
            return {"figure_choice": None, "llm_calls": llm_failed(state, "choose", exc)}
        calls, provider = llm_call(state, "choose", result), result.provider
        tag = str(result.parsed.model_dump()["figure"]) if result.parsed is not None else NONE
        chosen = next((f for f in facts if f"F{f.n}" == tag), None)
        choice = {"by": "model", "fact": chosen.n if chosen else None}
        local = cfg.running.chain(cfg.llm_order).asks_local_first(cheap=True)
        if chosen is not None and local and not cfg.choose_local:
            # the local model's pick is less often right than code's ranking: it says whether one is, code which
            chosen, choice = facts[0], {"by": "ranking", "fact": facts[0].n, "model": chosen.n}
        answer = compose.fact_sentence(chosen, asked) if chosen else prompts.CANNOT_ANSWER
        log.info("figure chosen: %s of %d facts", tag, len(facts))
    if answer == prompts.CANNOT_ANSWER and choice["by"] == "model" and figure_in_prose(excerpts, reading):
        log.info("no listed row is the figure, and a sentence of the excerpts states one: generate answers")
        return {"figure_choice": None, "llm_calls": calls}
    if answer == prompts.CANNOT_ANSWER:
        return refusal(state, choice, calls, provider)
    answer, cited = clean_markers(answer, len(excerpts))
    return {"answer": answer, "citations": citations_of(excerpts), "cited": cited, "provider": provider,
            "llm_calls": calls, "figure_choice": choice, "chat_history": _turns(state, answer)}
