"""Retrieval quality on FinanceBench by evidence page: hybrid vs dense vs sparse, one run.

    python evals/retrieval.py [--home DIR] [--user NAME]

Uses the filings already ingested under --home for --user (run evals/bench_ingest.py first, or
`thotqen ingest`); ingests any missing ones. For each development question it searches within
its own filing and across all filings and reports hit@1/3/5/10 and MRR, where a hit is a result
whose page is an evidence page (the data set's pages are 0-based; ours are 1-based).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.common import FINANCEBENCH, load_jsonl, open_bench, write_result
from evals.scoring import first_hit_rank, percentile, rank_scores

CUTOFFS = (1, 3, 4, 5, 10)  # 3 and 4: how many excerpts the graph shows (GRAPH_TOP_K)


def evidence_pages(question: dict) -> set[int]:
    """1-based evidence pages of the question's own filing."""
    return {page for doc, page in scoring.evidence_pages(question) if doc == question["doc_name"]}


def summarise(ranks: list[int | None]) -> dict:
    return rank_scores(ranks, CUTOFFS, digits=3)


def ingest_missing(db, settings, embedder, owner: int, docs: dict) -> None:
    """Ingest the development filings `docs` (name -> id) lacks, updating it in place."""
    from ingestion.pipeline import run_job, submit_pdf

    for pdf in sorted((FINANCEBENCH / "pdfs").glob("*.pdf")):
        if pdf.name not in docs:
            sub = submit_pdf(db, settings, owner_id=owner, name=pdf.name, data=pdf.read_bytes())
            if sub.job_id:
                run_job(db, settings, embedder, sub.job_id)
            docs[pdf.name] = sub.document_id


def one_per_page(hits: list) -> list:
    """The first hit of each (document, page), as the graph keeps them with GRAPH_DISTINCT_PAGES."""
    seen: set[tuple] = set()
    out = []
    for hit in hits:
        if (hit.document_id, hit.page) not in seen:
            seen.add((hit.document_id, hit.page))
            out.append(hit)
    return out


def question_ranks(db, embedder, owner: int, docs: dict, questions: list[dict], params,
                   scope: str, distinct_pages: bool = False) -> list[tuple[int | None, list[int], float]]:
    """(rank of the first evidence page or None, top-5 pages, seconds) for each question."""
    from storage.search import search

    out = []
    for q in questions:
        scope_ids = [docs[q["doc_name"] + ".pdf"]] if scope == "within_document" else None
        t0 = time.perf_counter()
        vec = embedder.embed_query(q["question"]) if params.mode != "sparse" else None
        with db.connection() as conn:
            hits = search(conn, owner_id=owner, query_text=q["question"], query_embedding=vec, params=params,
                          document_ids=scope_ids)
        hits = one_per_page(hits)[:10] if distinct_pages else hits
        out.append((first_hit_rank(hits, q["doc_name"], evidence_pages(q)), [h.page for h in hits[:5]],
                    time.perf_counter() - t0))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=None, help="THOTQEN_HOME holding the ingested filings")
    parser.add_argument("--user", default="bench")
    parser.add_argument("--modes", default="hybrid,dense,sparse")
    parser.add_argument("--name", default="retrieval", help="result file name under evals/results/")
    parser.add_argument("--dense-weight", type=float, default=None)
    parser.add_argument("--sparse-weight", type=float, default=None)
    parser.add_argument("--heading-weight", type=float, default=None,
                        help="weight of the statement-heading leg (0: off; default from settings)")
    parser.add_argument("--per-parent", choices=["on", "off"], default="on")
    parser.add_argument("--distinct-pages", action="store_true",
                        help="rank pages, not parents: later hits on a page already ranked are skipped")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--ingested-only", action="store_true",
                        help="only the questions on filings already ingested (no ingestion; backend comparisons)")
    args = parser.parse_args()
    settings, db, embedder, owner, docs = open_bench(args.home, args.user)

    from storage.search import SearchParams

    questions = load_jsonl(FINANCEBENCH / "questions.jsonl")
    if args.ingested_only:
        questions = [q for q in questions if f"{q['doc_name']}.pdf" in docs]
        questions = [q for q in questions if all(f"{e['doc_name']}.pdf" in docs for e in q["evidence"])]
    else:
        ingest_missing(db, settings, embedder, owner, docs)
    modes = args.modes.split(",")
    dense_w = settings.dense_weight if args.dense_weight is None else args.dense_weight
    sparse_w = settings.sparse_weight if args.sparse_weight is None else args.sparse_weight
    heading_w = settings.heading_weight if args.heading_weight is None else args.heading_weight
    results: dict = {"questions": len(questions), "embedding": embedder.identity, "filings": len(docs),
                     "dense_weight": dense_w, "sparse_weight": sparse_w,
                     "heading_weight": heading_w,
                     "rrf_k": settings.rrf_k, "candidates": settings.candidates, "max_df": settings.max_df,
                     "per_parent": args.per_parent == "on", "distinct_pages": args.distinct_pages,
                     "scopes": {}}
    per_question: list[dict] = []
    latencies: list[float] = []
    embedder.embed_query("warm up")
    for scope in ("within_document", "all_filings"):
        results["scopes"][scope] = {}
        for mode in modes:
            params = SearchParams.from_tunables(settings, k=20 if args.distinct_pages else 10, mode=mode,
                                                dense_weight=dense_w,
                                                sparse_weight=sparse_w, heading_weight=heading_w,
                                                per_parent=args.per_parent == "on")
            ranks: list[int | None] = []
            for q, (rank, pages, seconds) in zip(
                    questions, question_ranks(db, embedder, owner, docs, questions, params, scope, args.distinct_pages),
                    strict=True):
                latencies.append(seconds)
                ranks.append(rank)
                per_question.append({"id": q["financebench_id"], "scope": scope, "mode": mode, "rank": rank,
                                     "top_pages": pages})
            results["scopes"][scope][mode] = summarise(ranks)
    results["search_latency_ms"] = {
        "p50": round(statistics.median(latencies) * 1000, 1),
        "p95": percentile([s * 1000 for s in latencies], 95, digits=1, method="exclusive"),
    }
    results["per_question"] = per_question

    cuts = [f"hit@{k}" for k in CUTOFFS]
    lines = [f"| scope | mode | {' | '.join(cuts)} | MRR |", "|---|---|" + "---|" * (len(cuts) + 1)]
    for scope, by_mode in results["scopes"].items():
        for mode, m in by_mode.items():
            lines.append(f"| {scope} | {mode} | {' | '.join(str(m[c]) for c in cuts)} | {m['mrr']} |")
    md = "\n".join(lines) + (
        f"\n\n{len(questions)} development questions on {len(docs)} filings, embeddings {embedder.identity}; "
        f"weights dense {dense_w} / sparse {sparse_w}, "
        f"RRF k={settings.rrf_k}, {settings.candidates} candidates a side, one hit per parent: "
        f"{args.per_parent}; one hit per page: {'on' if args.distinct_pages else 'off'}. "
        f"Search latency (query embedding included) p50 "
        f"{results['search_latency_ms']['p50']} ms, p95 {results['search_latency_ms']['p95']} ms.\n"
    )
    if args.show_misses:
        for row in per_question:
            if row["scope"] == "within_document" and row["mode"] == modes[0] and not (row["rank"] and row["rank"] <= 5):
                q = next(q for q in questions if q["financebench_id"] == row["id"])
                print(f"MISS {row['id']} {q['doc_name']} evidence={sorted(evidence_pages(q))} "
                      f"top={row['top_pages']}\n   {q['question'][:160]}", file=sys.stderr)
    write_result(args.name, results, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
