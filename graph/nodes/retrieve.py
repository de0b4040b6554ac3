"""Retrieve: hybrid search over child chunks for the caller's documents, handing back parents.

Each passage is shown where the evidence is (graph/windows.py): around all of its children the
search matched and the lines holding the question's words, within `excerpt_chars`.

The dense side embeds the HyDE passage (question + passage, so the question's own terms still
count) and the sparse side uses the query words. Parents already graded in an earlier round are
left out, so a new round brings new text. The owners are the run's (graph/readers.py); the shelf
enforces them inside SQL (hybrid_search).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.context import Context, context_of
from graph.nodes.common import node
from graph.readers import readers
from graph.scope import reused
from graph.state import Excerpt, PagePart, State
from graph.windows import view

if TYPE_CHECKING:
    from storage.search import ChildUnit

# Matched children asked for per passage wanted: a passage's second and third matches widen its view.
CHILDREN_PER_PARENT = 3


def shown_parts(text: str, children: list[ChildUnit]) -> list[PagePart]:
    """The children of a passage whose lines the shown `text` holds, each with its page."""
    squashed = " ".join(text.split())
    return [PagePart(page=c.page, page_label=c.page_label, boxes=c.boxes, text=c.text) for c in children
            if any(" ".join(line.split()) in squashed for line in c.text.splitlines() if len(line.strip()) >= 20)
            or " ".join(c.text.split()) in squashed]


@node("retrieve")
def retrieve(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    from storage.document_filter import DocumentFilter
    from storage.search import SearchParams

    cfg = context_of(runtime, config)
    parts = cfg.running
    query = state.get("query") or state.get("standalone_question") or state["question"]
    # HyDE applies to the first search; a rewritten query is embedded as it is.
    dense_text = f"{query}\n{state['hyde']}" if state.get("hyde") and not state.get("rounds") else query
    embedding = parts.embedder.embed_query(dense_text) if cfg.mode != "sparse" else None
    seen = set(state.get("seen") or [])
    # every matched child, not only each passage's best: the view shows the passage where they all are
    params = SearchParams.from_tunables(cfg, k=CHILDREN_PER_PARENT * (cfg.retrieve_k + len(seen)), per_parent=False)
    with parts.evidence.shelf(readers(state, parts.evidence, cfg)) as shelf:
        hits = shelf.search(query_text=query, query_embedding=embedding, params=params,
                            document_ids=state.get("document_ids") or None,
                            where=DocumentFilter(state.get("company") or "", state.get("form") or "",
                                                 state.get("period") or ""),
                            scope=reused(state.get("question_scope"), query, state.get("document_ids")))
        # measured against the question itself, not a hypothetical answer the search may have used
        plain = embedding if dense_text == query else parts.embedder.embed_query(query)
        similar = shelf.similarities(query_embedding=plain,
                                     child_ids=[h.child_id for h in hits]) if plain is not None else {}
        # the passages this round shows (the first `retrieve_k` not seen): only theirs are read
        shown = list(dict.fromkeys(h.parent_id for h in hits if f"doc:{h.parent_id}" not in seen))[:cfg.retrieve_k]
        children = shelf.children_of(shown)
    matched: dict[int, list[str]] = {}
    for hit in hits:
        matched.setdefault(hit.parent_id, []).append(hit.child_text)
    asked = " ".join(dict.fromkeys([state.get("standalone_question") or state["question"], query]))
    documents: list[Excerpt] = []
    keys: set[str] = set()
    for hit in hits:
        key = f"doc:{hit.parent_id}"
        if key in seen or key in keys:
            continue
        keys.add(key)
        text = view(hit.parent_text, matched[hit.parent_id], asked, cfg.excerpt_chars)
        documents.append(Excerpt(source="document", key=key, document_id=str(hit.document_id),
                                 name=hit.document_name, page=hit.page, url=None,
                                 page_label=hit.page_label or f"page {hit.page}", ocr=hit.ocr, boxes=hit.boxes,
                                 text=text, parts=shown_parts(text, children.get(hit.parent_id, [])),
                                 score=float(hit.score), similarity=similar.get(hit.child_id), rerank_score=0.0,
                                 screened=[]))
        if len(documents) >= cfg.retrieve_k:
            break
    return {"documents": documents}
