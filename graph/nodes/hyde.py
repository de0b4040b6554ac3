"""HyDE: a hypothetical answer whose embedding is the dense query (the sparse side keeps the
user's words). Falls back to the question itself when the model fails or HyDE is off."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.context import Context, context_of
from graph.nodes.common import llm_call, llm_failed, node
from graph.state import State


@node("hyde")
def hyde(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    question = state.get("standalone_question") or state["question"]
    if not cfg.hyde:
        return {"hyde": ""}
    try:
        result = cfg.running.chain(cfg.llm_order).invoke(prompts.HYDE.format(question=question), cheap=True,
                                                        config=config)
    except Exception as exc:  # retrieval goes on with the question's own embedding
        return {"hyde": "", "llm_calls": llm_failed(state, "hyde", exc)}
    return {"hyde": result.text.strip(), "llm_calls": llm_call(state, "hyde", result)}
