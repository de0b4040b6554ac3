"""Rerank: the providers' reranker orders the candidates; the best `top_k` go on."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.configuration import Configuration
from graph.services import get_services
from graph.state import State
from nodes._common import node


@node("rerank")
def rerank(state: State, config: RunnableConfig) -> dict[str, Any]:
    cfg = Configuration.from_runnable_config(config)
    documents = list(state.get("documents") or [])
    if not documents:
        return {"documents": []}
    query = state.get("standalone_question") or state["question"]
    scores = get_services(config, cfg).reranker.rerank(query, [d["text"] for d in documents])
    ranked = sorted(zip(scores, range(len(documents)), documents, strict=True), key=lambda t: (-t[0], t[1]))
    return {"documents": [{**d, "rerank_score": float(s)} for s, _, d in ranked[: cfg.top_k]]}
