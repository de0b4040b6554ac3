"""Web search: results enter as web sources with their URLs (screened and graded like chunks)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.state import Excerpt, State
from graph.windows import view


@node("web_search")
def web_search(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    cfg = context_of(runtime, config)
    query = state.get("query") or state.get("standalone_question") or state["question"]
    web = cfg.running.web
    results = web.search(query, k=cfg.top_k) if cfg.web_search else []
    seen = set(state.get("seen") or [])
    documents = []
    for r in results:
        key = f"web:{r.get('url')}"
        if not r.get("url") or key in seen:
            continue
        documents.append(Excerpt(source="web", key=key, document_id=None, name=str(r.get("title") or r["url"]),
                                 page=None, url=str(r["url"]),
                                 text=view(str(r.get("content") or ""), [], query, cfg.excerpt_chars),
                                 score=0.0, rerank_score=0.0, screened=[]))
    return {"documents": documents, "searched_web": True, "web_failures": list(getattr(web, "last_failures", []) or [])}
