"""Rerankers on FinanceBench development questions: hit@5 by evidence page, and latency.

    .venv/bin/python evals/bench_rerank.py --home /tmp/thb --user bench [--llm-questions 12]

Searches each question within its own filing (hybrid, --candidates hits, one per parent),
reranks the candidates' child texts with each reranker, and scores hit@1/3/5 (a hit is a page
that holds the evidence). `none` is the retriever's own order. BGE is measured only when
--bge-model points at weights (none ship in any package). The `llm` reranker (local model
P(yes)) is slow on CPU, so it runs on the first --llm-questions questions and the top
--llm-candidates candidates only; its row says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, bench_user, eval_runtime, load_jsonl, write_result  # noqa: E402
from evals.retrieval import evidence_pages  # noqa: E402


def ranks_after(order: list[int], pages: list[int], doc_ok: list[bool], evidence: set[int]) -> int | None:
    for rank, i in enumerate(order, 1):
        if doc_ok[i] and pages[i] in evidence:
            return rank
    return None


def hit(ranks: list[int | None], k: int) -> float:
    return round(sum(1 for r in ranks if r and r <= k) / len(ranks), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--llm-questions", type=int, default=12)
    parser.add_argument("--llm-candidates", type=int, default=10)
    parser.add_argument("--bge-model", default=None)
    parser.add_argument("--name", default="rerank")
    args = parser.parse_args()
    runtime = eval_runtime(args.home)
    settings, db, embedder = runtime.settings, runtime.database, runtime.embedder
    owner, docs = bench_user(runtime, args.user, create_user=False)

    from providers.reranker import BGEReranker
    from storage.search import SearchParams, search

    questions = [q for q in load_jsonl(FINANCEBENCH / "questions.jsonl") if q["doc_name"] + ".pdf" in docs]
    params = SearchParams.from_tunables(settings, k=args.candidates, mode="hybrid",
                                        candidates=max(settings.candidates, args.candidates), per_parent=True)
    embedder.embed_query("warm up")
    pools = []
    for q in questions:
        with db.connection() as conn:
            hits = search(conn, owner_id=owner, query_text=q["question"], query_embedding=embedder.embed_query(
                q["question"]), params=params, document_ids=[docs[q["doc_name"] + ".pdf"]])
        pools.append((q, hits))

    rerankers = {"none": runtime.reranker("none"), "dense": runtime.reranker("dense")}
    if args.bge_model:
        rerankers["bge"] = BGEReranker(args.bge_model)  # these weights, not RERANKER_MODEL's
    if args.llm_questions > 0:
        rerankers["llm"] = runtime.reranker("llm")
    results: dict = {"questions": len(questions), "candidates": args.candidates, "rerankers": {}}
    lines = ["| reranker | questions | candidates | hit@1 | hit@3 | hit@5 | rerank latency p50 / max (s) |",
             "|---|---|---|---|---|---|---|"]
    for name, reranker in rerankers.items():
        subset = pools[: args.llm_questions] if name == "llm" else pools
        n_cand = args.llm_candidates if name == "llm" else args.candidates
        ranks, base_ranks, seconds = [], [], []
        for q, hits in subset:
            hits = hits[:n_cand]
            pages = [h.page for h in hits]
            doc_ok = [h.document_name == q["doc_name"] + ".pdf" for h in hits]
            evidence = evidence_pages(q)
            t0 = time.perf_counter()
            scores = reranker.rerank(q["question"], [h.child_text for h in hits])
            seconds.append(time.perf_counter() - t0)
            order = sorted(range(len(hits)), key=lambda i: -scores[i])
            ranks.append(ranks_after(order, pages, doc_ok, evidence))
            base_ranks.append(ranks_after(list(range(len(hits))), pages, doc_ok, evidence))
        row = {"questions": len(subset), "candidates": n_cand, "hit@1": hit(ranks, 1), "hit@3": hit(ranks, 3),
               "hit@5": hit(ranks, 5), "retriever_hit@5_same_subset": hit(base_ranks, 5),
               f"hit@{n_cand}_ceiling": hit(base_ranks, n_cand),
               "latency_p50_s": round(statistics.median(seconds), 3), "latency_max_s": round(max(seconds), 3)}
        results["rerankers"][name] = row
        lines.append(f"| {name} | {row['questions']} | {n_cand} | {row['hit@1']} | {row['hit@3']} | {row['hit@5']}"
                     f" (retriever on the same questions: {row['retriever_hit@5_same_subset']}) | "
                     f"{row['latency_p50_s']} / {row['latency_max_s']} |")
        print(lines[-1], flush=True)
    md = "\n".join(lines) + (
        f"\n\nHybrid search within each question's own filing, {args.candidates} candidates (one per parent), "
        "reranked on the candidates' child texts; a hit is a result on an evidence page. "
        f"Ceiling (evidence anywhere in the candidates): "
        f"{results['rerankers']['none'][f'hit@{args.candidates}_ceiling']}. "
        f"Load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.\n")
    write_result(args.name, results, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
