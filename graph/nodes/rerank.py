"""Rerank: the providers' reranker orders the candidates; the best `top_k` go on.

With `distinct_pages` the kept excerpts come from different pages where the candidates allow:
a citation names a page, so a second excerpt of a page already shown adds no new source and
takes the slot of the next page (often the neighbouring table page the answer is on).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.state import Excerpt, State


@node("rerank")
def rerank(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    documents = list(state.get("documents") or [])
    if not documents:
        return {"documents": []}
    query = state.get("standalone_question") or state["question"]
    scores = cfg.running.reranker(cfg.reranker).rerank(query, [d["text"] for d in documents])
    ranked = sorted(zip(scores, range(len(documents)), documents, strict=True), key=lambda t: (-t[0], t[1]))
    kept: list[Excerpt] = [{**d, "rerank_score": float(s)} for s, _, d in ranked]
    return {"documents": one_per_page(kept, cfg.top_k) if cfg.distinct_pages else kept[: cfg.top_k]}


def one_per_page(documents: list[Excerpt], k: int) -> list[Excerpt]:
    """The first `k` in order whose page (or URL) is not yet taken; repeats fill any slots left."""
    seen: set[tuple[str | int | None, ...]] = set()
    first: list[Excerpt] = []
    repeats: list[Excerpt] = []
    for d in documents:
        where = (d.get("document_id"), d.get("page"), d.get("url"))
        (repeats if where in seen else first).append(d)
        seen.add(where)
    picked = {id(d) for d in (first + repeats)[:k]}
    return [d for d in documents if id(d) in picked]
