"""Condense: a follow-up ("and in 2019?") becomes a standalone question from the chat history."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.context import Context, context_of
from graph.nodes.common import history, llm_call, llm_failed, node
from graph.reading import read
from graph.state import State


@node("condense")
def condense(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    question = state["question"]
    turns = history(state, cfg.history_turns)
    if not turns:  # the graph skips this node without history; a direct call is a no-op
        return {"standalone_question": question, "query": question}
    messages = [("system", prompts.CONDENSE_SYSTEM), *turns, ("human", f"Follow-up question: {question}")]
    try:
        result = cfg.running.chain(cfg.llm_order).invoke(messages, cheap=True, config=config)
    except Exception as exc:  # without a model, search with the user's own words
        return {"standalone_question": question, "query": question, "llm_calls": llm_failed(state, "condense", exc)}
    standalone = result.text.strip().strip('"').splitlines()[0].strip() or question
    return {"standalone_question": standalone, "query": standalone, "reading": read(standalone).to_state(),
            "llm_calls": llm_call(state, "condense", result)}
