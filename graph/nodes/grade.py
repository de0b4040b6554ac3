"""Grade: ONE batched LLM call judges every excerpt of the round, under a relevance floor.

An excerpt whose cosine similarity to the question is below `relevance_floor` is not relevant
whatever the grader says, unless one of its statements holds half the question's words
(graph/grading.py `holds_the_question`: a list's line, an almanac's entry, whose passage's other lines hold
its embedding far from any one question): general-knowledge questions sit below it, and the floor is
chosen on company-grouped folds (evals/results/relevance_floor.md). When the chain asks the embedded local
model first, no grading call is made unless `grade_local` asks for it: that model's P(yes) ranks
evidence no better than a coin, at most of a question's time (evals/results/grading_threshold.md);
the floor alone decides.

Structured output with one field per excerpt (`excerpt_1` ... `excerpt_n`, each "yes" or
"no"): the chain puts the schema in the prompt and parses leniently, and the local model and
vLLM enforce it with a grammar, so the reply has exactly n verdicts (free text let the 1.5B
model copy an example list until it hit the token limit). Where the server gives token
probabilities (the local model, vLLM) a verdict is P(yes) against `grade_threshold`, which moves
from the sampled word's 0.5 only when company-grouped folds say so
(evals/results/grading_threshold.md). No reasons: on the local model a
reason per excerpt multiplied the generated tokens, and the time a question waits for them, and
the reasoned grader called every excerpt relevant, where the bare one sometimes said no
(evals/results/grading.md has both, per variant). When the
structured call fails everywhere, the raw text of a plain call is parsed by `parse_grades`
(JSON, JSON in prose or a fence, "1: yes" lines). An excerpt without a readable verdict counts
as NOT relevant: a malformed reply must never pass everything through. Excerpts judged
relevant accumulate over rounds. Reading the reply and the floor are graph/grading.py's.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.context import Context, context_of
from graph.grading import above_floor, holds_the_question, parse_grades, verdicts_model, yes_probabilities
from graph.nodes.common import llm_call, llm_failed, node
from graph.state import Excerpt, State


def grades_with_llm(cfg: Context) -> bool:
    """Grading is on, and its model is not the embedded one unless `grade_local` asks for it: on the
    local model P(yes) ranks an evidence excerpt below another more often than above, and the call
    is most of a question's time (evals/results/grading_threshold.md). A 70B link keeps it."""
    return cfg.grade and (cfg.grade_local or not cfg.running.chain(cfg.llm_order).asks_local_first(cheap=True))


def _llm_verdicts(state: State, cfg: Context, config: RunnableConfig, documents: list[Excerpt],
                  question: str) -> tuple[dict[int, bool], dict[int, float], list[Any]]:
    """The grading call's verdicts by excerpt number, its P(yes) where the server gives them, and the
    run's LLM calls with it."""
    p_yes: dict[int, float] = {}
    messages = [("system", prompts.EXCERPTS_SYSTEM),
                ("human", prompts.excerpt_block(documents, question) + prompts.GRADE_TASK)]
    chain = cfg.running.chain(cfg.llm_order)
    try:
        result = chain.invoke(messages, cheap=True, structured=verdicts_model(len(documents)),
                              token_probabilities=True, config=config)
        parsed = result.parsed.model_dump() if result.parsed is not None else {}
        p_yes = yes_probabilities(result.token_logprobs or [])
        verdicts = {n: p_yes[n] >= cfg.grade_threshold if n in p_yes else parsed[f"excerpt_{n}"] == "yes"
                    for n in range(1, len(documents) + 1) if f"excerpt_{n}" in parsed}
        calls = llm_call(state, "grade", result)
    except Exception as exc:  # no valid structured reply anywhere: read a plain one leniently
        calls = llm_failed(state, "grade", exc)
        try:
            result = chain.invoke(messages, cheap=True, config=config)
            verdicts, calls = parse_grades(result.text, len(documents)), llm_call({"llm_calls": calls}, "grade",
                                                                                      result)
        except Exception as exc2:  # no grader at all: nothing counts as relevant
            verdicts, calls = {}, llm_failed({"llm_calls": calls}, "grade", exc2)
    return verdicts, p_yes, calls


@node("grade")
def grade(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    documents = list(state.get("documents") or [])
    seen = [*(state.get("seen") or []), *[d["key"] for d in documents]]
    relevant = list(state.get("relevant") or [])
    if not documents:
        return {"grades": [], "seen": seen, "relevant": relevant}
    question = state.get("standalone_question") or state["question"]
    if grades_with_llm(cfg):
        verdicts, p_yes, calls = _llm_verdicts(state, cfg, config, documents, question)
    else:  # no LLM call: every excerpt counts, as far as the floor lets it
        verdicts, p_yes = dict.fromkeys(range(1, len(documents) + 1), True), {}
        calls = list(state.get("llm_calls") or [])
    verdicts = {n: v and (above_floor(documents[n - 1], cfg.relevance_floor)
                          or holds_the_question(str(documents[n - 1].get("text") or ""), question))
                for n, v in verdicts.items()}
    grades: list[dict[str, Any]] = [
        {"n": n, "key": d["key"], "relevant": verdicts.get(n), "p_yes": p_yes.get(n), "similarity": d.get("similarity"),
         "name": d.get("name"), "page": d.get("page")} for n, d in enumerate(documents, 1)]
    known = {d["key"] for d in relevant}
    relevant += [d for n, d in enumerate(documents, 1) if verdicts.get(n) is True and d["key"] not in known]
    return {"grades": grades, "seen": seen, "relevant": relevant, "llm_calls": calls}
