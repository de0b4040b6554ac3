"""Calls `hybrid_search()` (its one body: sql/functions/hybrid_search.sql) for one owner, then
reads what a citation shows of each hit's unit (label, OCR mark, line boxes; sql/009)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

import numpy as np
import psycopg

from storage.document_filter import DocumentFilter, Scope, matching_documents, question_scope
from storage.tenancy import scoped
from storage.workspaces import Owners, owner_ids
from tunables import Fusion, Mode, Tunables

MODES: tuple[Mode, ...] = get_args(Mode)
FUSIONS: tuple[Fusion, ...] = get_args(Fusion)


@dataclass(frozen=True)
class Hit:
    child_id: int
    parent_id: int
    document_id: uuid.UUID
    document_name: str
    page: int  # 1-based page of the matched child
    page_start: int
    page_end: int
    child_text: str
    parent_text: str
    score: float
    dense_rank: int | None
    sparse_rank: int | None
    heading_rank: int | None  # rank on the statement-heading leg (sql/008_heading_leg.sql)
    page_label: str = ""  # what a citation names: "page 4", "slide 4", "sheet Revenue", "section 2.1"
    ocr: bool = False  # the page's text was recognised by OCR
    boxes: list[list[float]] | None = None  # the child's line boxes on a PDF page, in points


_DEFAULTS = Tunables()


@dataclass(frozen=True)
class SearchParams:
    """One search's parameters: the retrieval tunables (tunables.py) plus what the caller decides."""

    k: int = 5
    per_parent: bool = True
    mode: Mode = _DEFAULTS.mode
    dense_weight: float = _DEFAULTS.dense_weight
    sparse_weight: float = _DEFAULTS.sparse_weight
    heading_weight: float = _DEFAULTS.heading_weight
    rrf_k: int = _DEFAULTS.rrf_k
    dense_rrf_k: int = _DEFAULTS.dense_rrf_k
    candidates: int = _DEFAULTS.candidates
    max_df: float = _DEFAULTS.max_df
    fusion: Fusion = _DEFAULTS.fusion
    scope_from_question: bool = _DEFAULTS.scope_from_question

    @classmethod
    def from_tunables(cls, source: Tunables, **overrides: object) -> SearchParams:
        """The retrieval tunables `source` holds (Settings or the graph's Configuration), `overrides` on top."""
        held = {f.name: getattr(source, f.name) for f in fields(cls) if f.name in Tunables.model_fields}
        return cls(**{**held, **overrides})


SEARCH_SQL = (
    "select * from hybrid_search(%(owner)s::bigint[], %(embedding)s, %(text)s, %(k)s, %(docs)s::uuid[], %(mode)s,"
    " %(dense_weight)s, %(sparse_weight)s, %(rrf_k)s, %(candidates)s, %(per_parent)s,"
    " %(max_df)s, %(fusion)s, %(heading_weight)s, %(dense_rrf_k)s)"
)


def search(
    conn: psycopg.Connection,
    *,
    owner_id: Owners,
    query_text: str,
    query_embedding: np.ndarray | None,
    params: SearchParams,
    document_ids: Sequence[uuid.UUID | str] | None = None,
    where: DocumentFilter | None = None,
    scope: Scope | None | Literal["read"] = "read",
) -> list[Hit]:
    """The best `params.k` hits among the owner's documents (those of `document_ids`, and those
    matching `where`'s company / form / period, when given: no match, no hits). Without `where`,
    a query that names some of those documents' companies searches theirs alone
    (`params.scope_from_question`, storage/document_filter.py): `scope` "read" reads the query's
    scope here; a Scope, or None for none, is that scope already read for these words and documents."""
    with scoped(conn, owner_id):  # and row security admits only these owners' rows (storage/tenancy.py)
        return _search(conn, owner_id, query_text, query_embedding, params, document_ids, where, scope)


def _search(conn: psycopg.Connection, owner_id: Owners, query_text: str, query_embedding: np.ndarray | None,
            params: SearchParams, document_ids: Sequence[uuid.UUID | str] | None, where: DocumentFilter | None,
            scope: Scope | None | Literal["read"]) -> list[Hit]:
    if params.mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    if params.fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}")
    docs = [uuid.UUID(str(d)) for d in document_ids] if document_ids else None
    found: Scope | None = None
    if where:
        docs = matching_documents(conn, owner_id=owner_id, where=where, document_ids=docs)
        if not docs:
            return []
    elif params.scope_from_question and (docs is None or len(docs) > 1):  # one document: nothing to narrow
        found = question_scope(conn, owner_id=owner_id, question=query_text, document_ids=docs) \
            if isinstance(scope, str) else scope
    with conn.transaction():
        # Per transaction, not per connection, so a transaction pooler keeps them: a filtered HNSW
        # scan keeps walking the graph until enough rows pass the filter (pgvector 0.8).
        one_filing = docs is not None and len(docs) == 1
        conn.execute(ONE_FILING_SETTINGS if one_filing else SEARCH_SETTINGS)
        if found is None:
            hits = [Hit(*row) for row in _run(conn, owner_id, query_text, query_embedding, params, docs)]
        else:
            hits = _scoped(conn, owner_id, query_text, query_embedding, params, found)
    if not hits:
        return hits
    extra = {
        child_id: (label, ocr, boxes)
        for child_id, label, ocr, boxes in conn.execute(
            "select id, coalesce(page_label, 'page ' || page), ocr, boxes from child_chunks"
            " where owner_id = any(%s::bigint[]) and id = any(%s)",
            (owner_ids(owner_id), [h.child_id for h in hits]),
        ).fetchall()
    }
    return [replace(h, page_label=extra[h.child_id][0], ocr=extra[h.child_id][1], boxes=extra[h.child_id][2])
            if h.child_id in extra else h for h in hits]


_HNSW_SETTINGS = "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '100', true)"
# A plan made for the call's own arguments: which dense path a larger scope takes (the graph, or a
# scan of its chunks) is the planner's choice on them, and a prepared statement's generic plan,
# which PostgreSQL may otherwise switch to after five calls, could choose the other one.
SEARCH_SETTINGS = f"select {_HNSW_SETTINGS}, set_config('plan_cache_mode', 'force_custom_plan', true)"
# One filing: its dense side is an exact scan whatever the plan (hybrid_search.sql), so the
# connection's one generic plan serves every such call instead of a fresh plan per call (planning
# was about as much of the database's work as the search itself: evals/results/search_scale_1m.md).
ONE_FILING_SETTINGS = f"select {_HNSW_SETTINGS}, set_config('plan_cache_mode', 'force_generic_plan', true)"


def _scoped(conn: psycopg.Connection, owner_id: Owners, query_text: str, query_embedding: np.ndarray | None,
            params: SearchParams, scope: Scope) -> list[Hit]:
    """Soft scoping: the first tier searched alone (its candidates never crowded out), the whole
    scope searched beside it, each hit's score times its document's tier weight, best first."""
    if not scope.tiers:  # the owner has no documents in scope: nothing to search
        return []
    first = list(scope.tiers[0])
    rest = scope.documents()
    runs = [_run(conn, owner_id, query_text, query_embedding, params, first)]
    if len(rest) > len(first):
        runs.append(_run(conn, owner_id, query_text, query_embedding, replace(params, k=2 * params.k), rest))
    weights = scope.weights()
    best: dict[int, Hit] = {}
    for rows in runs:
        for row in rows:
            hit = Hit(*row)
            hit = replace(hit, score=hit.score * weights.get(hit.document_id, 0.0))
            if hit.child_id not in best or best[hit.child_id].score < hit.score:
                best[hit.child_id] = hit
    ranked = sorted(best.values(), key=lambda h: (-h.score, h.child_id))
    if params.per_parent:
        kept: list[Hit] = []
        seen: set[int] = set()
        for h in ranked:
            if h.parent_id not in seen:
                seen.add(h.parent_id)
                kept.append(h)
        ranked = kept
    return ranked[:params.k]


@dataclass(frozen=True)
class ChildUnit:
    """A child chunk as a citation names it: its page, label, line boxes and text."""

    parent_id: int
    page: int
    page_label: str
    boxes: list[list[float]] | None
    text: str


def children_of(conn: psycopg.Connection, *, owner_id: Owners, parent_ids: Sequence[int]) -> dict[int, list[ChildUnit]]:
    """The owner's child chunks of each of `parent_ids`, in order: which page each part of a parent is on."""
    if not parent_ids:
        return {}
    out: dict[int, list[ChildUnit]] = {}
    with scoped(conn, owner_id):
        rows = conn.execute(
            "select parent_id, page, coalesce(page_label, 'page ' || page), boxes, text from child_chunks"
            " where owner_id = any(%s::bigint[]) and parent_id = any(%s) order by parent_id, ord",
            (owner_ids(owner_id), list(parent_ids))).fetchall()
    for row in rows:
        out.setdefault(int(row[0]), []).append(ChildUnit(int(row[0]), int(row[1]), str(row[2]), row[3], str(row[4])))
    return out


def similarities(conn: psycopg.Connection, *, owner_id: Owners, query_embedding: np.ndarray,
                 child_ids: Sequence[int]) -> dict[int, float]:
    """Cosine similarity of the query to each of the owner's child chunks `child_ids`: an absolute
    measure where the fused score is a rank's (graph/nodes/grade.py's relevance floor)."""
    if not child_ids:
        return {}
    with scoped(conn, owner_id):
        rows = conn.execute("select id, 1 - (embedding <=> %s) from child_chunks"
                            " where owner_id = any(%s::bigint[]) and id = any(%s)",
                            (query_embedding, owner_ids(owner_id), list(child_ids))).fetchall()
    return {int(i): float(sim) for i, sim in rows}


def _run(conn: psycopg.Connection, owner_id: Owners, query_text: str, query_embedding: np.ndarray | None,
         params: SearchParams, docs: list[uuid.UUID] | None) -> list[tuple[Any, ...]]:
    return conn.execute(
        SEARCH_SQL,
        {
            "owner": owner_ids(owner_id),
            "embedding": query_embedding,
            "text": query_text,
            "k": params.k,
            "docs": docs,
            "mode": params.mode,
            "dense_weight": params.dense_weight,
            "sparse_weight": params.sparse_weight,
            "rrf_k": params.rrf_k,
            "candidates": max(params.candidates, params.k),
            "per_parent": params.per_parent,
            "max_df": params.max_df,
            "fusion": params.fusion,
            "heading_weight": params.heading_weight,
            "dense_rrf_k": params.dense_rrf_k,
        },
    ).fetchall()
