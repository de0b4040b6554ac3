"""Rewrite: a better search query in the documents' own words, for another retrieval round."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph import prompts
from graph.context import Context, context_of
from graph.nodes.common import llm_call, llm_failed, node
from graph.state import State


@node("rewrite")
def rewrite(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    question = state.get("standalone_question") or state["question"]
    try:
        result = cfg.running.chain(cfg.llm_order).invoke(prompts.REWRITE.format(question=question), cheap=True,
                                                        config=config)
    except Exception as exc:  # search again with the question; new parents still come up
        return {"query": question, "rewritten": True, "llm_calls": llm_failed(state, "rewrite", exc)}
    lines = [line.strip().strip('"') for line in result.text.strip().splitlines() if line.strip()]
    return {"query": (lines[0] if lines else "") or question, "rewritten": True,
            "llm_calls": llm_call(state, "rewrite", result)}
