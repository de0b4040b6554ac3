"""Retrieve: hybrid search over child chunks for the caller's documents, handing back parents.

The dense side embeds the HyDE passage (question + passage, so the question's own terms still
count) and the sparse side uses the query words. Parents already graded in an earlier round are
left out, so a new round brings new text. Ownership is enforced inside SQL (hybrid_search).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.configuration import Configuration
from graph.context import Context, context_of
from graph.nodes.common import node
from graph.scope import reused
from graph.state import Excerpt, State


def excerpt_text(parent: str, child: str, limit: int) -> str:
    """At most `limit` characters of the parent, centred on the matched child."""
    if len(parent) <= limit:
        return parent
    at = parent.find(child[:80])
    if at < 0:
        return child[:limit]
    centre = at + min(len(child), limit) // 2
    start = max(0, min(centre - limit // 2, len(parent) - limit))
    # start and end on a word boundary
    if start > 0:
        space = parent.find(" ", start)
        start = space + 1 if 0 <= space < start + 40 else start
    end = start + limit
    if end < len(parent):
        space = parent.rfind(" ", start, end)
        end = space if space > end - 40 else end
    return ("… " if start > 0 else "") + parent[start:end].strip() + (" …" if end < len(parent) else "")


def owner_of(conn: Any, cfg: Configuration) -> int:  # noqa: ANN401
    if cfg.owner_id is not None:
        return int(cfg.owner_id)
    from storage.users import get_or_create_user

    return get_or_create_user(conn, cfg.user)


@node("retrieve")
def retrieve(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    from storage.document_filter import DocumentFilter
    from storage.search import SearchParams, search, similarities

    cfg = context_of(runtime, config)
    parts = cfg.running
    query = state.get("query") or state.get("standalone_question") or state["question"]
    # HyDE applies to the first search; a rewritten query is embedded as it is.
    dense_text = f"{query}\n{state['hyde']}" if state.get("hyde") and not state.get("rounds") else query
    embedding = parts.embedder.embed_query(dense_text) if cfg.mode != "sparse" else None
    seen = set(state.get("seen") or [])
    params = SearchParams.from_tunables(cfg, k=cfg.retrieve_k + len(seen))
    with parts.database.connection() as conn:
        owner_id = owner_of(conn, cfg)
        hits = search(conn, owner_id=owner_id, query_text=query, query_embedding=embedding, params=params,
                      document_ids=state.get("document_ids") or None,
                      where=DocumentFilter(state.get("company") or "", state.get("form") or "",
                                           state.get("period") or ""),
                      scope=reused(state.get("question_scope"), query, state.get("document_ids")))
        # measured against the question itself, not a hypothetical answer the search may have used
        plain = embedding if dense_text == query else parts.embedder.embed_query(query)
        similar = similarities(conn, owner_id=owner_id, query_embedding=plain,
                               child_ids=[h.child_id for h in hits]) if plain is not None else {}
    documents: list[Excerpt] = []
    keys: set[str] = set()
    for hit in hits:
        key = f"doc:{hit.parent_id}"
        if key in seen or key in keys:
            continue
        keys.add(key)
        documents.append(Excerpt(source="document", key=key, document_id=str(hit.document_id),
                                 name=hit.document_name, page=hit.page, url=None,
                                 page_label=hit.page_label or f"page {hit.page}", ocr=hit.ocr, boxes=hit.boxes,
                                 text=excerpt_text(hit.parent_text, hit.child_text, cfg.excerpt_chars),
                                 score=float(hit.score), similarity=similar.get(hit.child_id), rerank_score=0.0,
                                 screened=[]))
        if len(documents) >= cfg.retrieve_k:
            break
    return {"documents": documents}
