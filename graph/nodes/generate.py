"""Generate: an answer from the relevant excerpts only, each fact cited as [n].

The model sees the excerpts numbered 1..m (see `shown_excerpts`) and may cite only those
numbers; the citations returned are exactly that list, so every [n] resolves to a document and
page (or a URL). A marker outside 1..m is removed from the answer, and a sentence whose figures
sit in other excerpts than it cites is re-pointed to them, and an answer none of whose figures
appears in any excerpt is replaced by "cannot answer" (graph/citations.py). With no
relevant excerpt there is no model call: the answer says plainly that the documents do not
answer the question.
Streamed to `stream_mode="custom"`: {"sources": citations} first (numbered like the final
answer's markers), then {"token": piece} ({"reset": link} when a provider fails mid-answer and
the next one starts over). A refusal ("cannot answer") cites nothing.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.citations import citations_of, clean_markers, repair_citations, ungrounded
from graph.context import Context, context_of
from graph.nodes.common import history, llm_failed, node
from graph.state import Excerpt, State, Turn

log = logging.getLogger("thotqen.generate")


def shown_excerpts(state: State) -> tuple[list[Excerpt], list[int]]:
    """The excerpts the answer may cite, and the numbers of those graded relevant.

    When this round found something relevant, its excerpts are shown in the order they were
    graded (with earlier rounds' relevant ones after them): the prompt then begins as grading's
    did and the model server reads it from its prefix cache instead of again (half the prompt
    tokens of a question). Otherwise only the relevant excerpts of earlier rounds are shown.
    """
    relevant = list(state.get("relevant") or [])
    round_docs = list(state.get("documents") or [])
    kept = {g["key"] for g in state.get("grades") or [] if g.get("relevant") is True}
    if not any(d["key"] in kept for d in round_docs):
        return relevant, list(range(1, len(relevant) + 1))
    keys = {d["key"] for d in round_docs}
    shown = [*round_docs, *[d for d in relevant if d["key"] not in keys]]
    good = {d["key"] for d in relevant}
    return shown, [n for n, d in enumerate(shown, 1) if d["key"] in good]


def _writer() -> Any:  # noqa: ANN401
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except Exception:  # noqa: BLE001 - called outside a graph run (a direct call in a test)
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
    question = state.get("standalone_question") or state["question"]
    if not relevant:
        return {"answer": prompts.CANNOT_ANSWER, "citations": [], "cited": [], "provider": None,
                "chat_history": _turns(state, prompts.CANNOT_ANSWER)}
    block = prompts.excerpt_block(excerpts, question, history(state, cfg.history_turns))
    messages = [("system", prompts.EXCERPTS_SYSTEM),
                ("human", block + prompts.relevant_note(relevant, len(excerpts)) + prompts.ANSWER_TASK)]
    citations = citations_of(excerpts)
    write = _writer()
    write({"sources": citations})
    started, first_token = time.perf_counter(), None
    result: ChainResult | None = None
    try:
        for item in cfg.running.chain(cfg.llm_order).stream(messages, cheap=classify(question) == "cheap",
                                                           config=config):
            if isinstance(item, str):
                if first_token is None:
                    first_token = time.perf_counter() - started
                write({"token": item})
            elif isinstance(item, StreamReset):
                write({"reset": item.link})
            elif isinstance(item, ChainResult):
                result = item
    except Exception as exc:  # noqa: BLE001 - every provider failed: say so, never invent an answer
        answer = "No language model could answer right now; please try again later."
        return {"answer": answer, "citations": [], "cited": [], "provider": None,
                "llm_calls": llm_failed(state, "generate", exc), "chat_history": _turns(state, answer)}
    assert result is not None
    texts = [e.get("text") or "" for e in excerpts]
    answer, _ = clean_markers(result.text, len(excerpts))
    answer, cited = clean_markers(repair_citations(answer, texts, question), len(excerpts))
    if ungrounded(answer, texts, question):  # every figure invented or computed from unstated inputs
        log.info("answer withheld: none of its figures appears in the excerpts")
        answer, cited = prompts.CANNOT_ANSWER, []
    if prompts.CANNOT_ANSWER.rstrip(".").lower() in answer.lower() and not cited:
        answer = prompts.CANNOT_ANSWER
    if answer == prompts.CANNOT_ANSWER:
        citations = []
    return {"answer": answer, "citations": citations, "cited": cited, "provider": result.provider,
            "first_token_s": first_token, "llm_calls": [*(state.get("llm_calls") or []),
                                                        {"node": "generate", **result.metadata()}],
            "chat_history": _turns(state, answer)}
