"""Ablations from one command: each pipeline choice against the defaults, on the same questions.

    python evals/ablations.py --home DIR [--graph-questions 6] [--variants baseline,dense,...]

Variants (graph configuration overrides; the defaults are settings.py's):
  baseline      the defaults: hybrid search (with the statement-heading leg), RRF, HyDE off,
                reranker auto, grading on, top_k 3
  no_heading_leg  hybrid search without the statement-heading leg (sql/008_heading_leg.sql)
  dense/sparse  one side of the hybrid search alone
  score_fusion  alpha-weighted normalised scores (alpha 0.5) instead of RRF
  hyde          HyDE on
  rerank_dense  the embedding reranker; rerank_llm the local model's yes-probability
  no_grading    every retrieved excerpt counts as relevant (no grading call)
  k5            top_k 5 instead of the default

For each variant:
  hit@5     the evidence page among the first five excerpts the graph's own retrieve (+HyDE,
            +rerank) nodes hand on, within the question's filing, over --retrieval-questions
            (variants that call the LLM before ranking use --llm-questions of them: slow on CPU)
  graph     the whole graph over --graph-questions questions (every --stride-th): share
            answered with a citation, citation precision (cited excerpts on an evidence page),
            correctness (evals/quality.py's scorer; figures only), end-to-end seconds p50
Rows are appended to --rows as they finish (`--resume` continues a run cut short).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, append_row, bench_user, eval_runtime, load_jsonl, resumable_rows, write_result
from evals.retrieval import evidence_pages
from evals.scoring import fraction
from graph.context import GraphParts
from graph.stream import run_config, run_context

VARIANTS: dict[str, dict] = {
    "baseline": {},
    "no_heading_leg": {"heading_weight": 0.0},
    "dense": {"mode": "dense"},
    "sparse": {"mode": "sparse"},
    "score_fusion": {"fusion": "score"},
    "hyde": {"hyde": True},
    "rerank_dense": {"reranker": "dense"},
    "rerank_llm": {"reranker": "llm"},
    "no_grading": {"grade": False},
    "k5": {"top_k": 5},
}
LLM_BEFORE_RANKING = {"hyde", "rerank_llm"}
RETRIEVAL_SAME_AS_BASELINE = {"no_grading", "k5"}  # they change what happens after the top 5


def retrieval_hit(question: dict, doc_id: str, config: RunnableConfig, parts: GraphParts) -> bool:
    """Evidence page among the first five excerpts of the graph's own retrieval nodes (`config`:
    the variant's run configuration with top_k 5), called with the runtime context the graph gives them."""
    from graph.nodes.hyde import hyde
    from graph.nodes.rerank import rerank
    from graph.nodes.retrieve import retrieve

    runtime = Runtime(context=run_context(parts, config))
    state: dict = {"question": question["question"], "document_ids": [doc_id]}
    if config["configurable"].get("hyde"):
        state |= hyde(state, config, runtime)
    state |= retrieve(state, config, runtime)
    state |= rerank(state, config, runtime)
    pages = evidence_pages(question)
    return any(d.get("page") in pages for d in state["documents"][:5])


def graph_row(question: dict, doc_id: str, config: RunnableConfig, parts: GraphParts) -> dict:
    """One graph run, scored like evals/quality.py (figures within 2%; prose left unscored here:
    judging it would add a local-model call per question to every variant)."""
    from evals.bench_graph import ask
    from evals.quality import score_answer

    row = ask(question, doc_id, config, parts)
    row.update(score_answer(row, question, tolerance=0.02))
    return row


def summarise(variant: str, hits: list[bool], rows: list[dict]) -> dict:
    answered = [r for r in rows if r["answered"]]
    scored = [r for r in rows if r.get("correct") is not None]
    cited = [p for r in answered for p in r["cited_pages"]]
    on_evidence = [p for r in answered for p in r["cited_pages"] if p in r["evidence_pages"]]
    return {
        "variant": variant, "overrides": VARIANTS[variant],
        "hit@5": fraction(sum(hits), len(hits)), "retrieval_questions": len(hits),
        "graph_questions": len(rows),
        "answered": fraction(len(answered), len(rows)),
        "citation_precision": fraction(len(on_evidence), len(cited)),
        "answers_citing_evidence": fraction(sum(r["evidence_cited"] for r in answered), len(answered)),
        "correct": fraction(sum(bool(r["correct"]) for r in scored), len(scored)),
        "correct_scored": len(scored),
        "latency_p50_s": round(statistics.median(r["total_s"] for r in rows), 1) if rows else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="THOTQEN_HOME with the filings ingested")
    parser.add_argument("--user", default="bench")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--retrieval-questions", type=int, default=0, help="0: all development questions")
    parser.add_argument("--llm-questions", type=int, default=17, help="retrieval questions for LLM variants")
    parser.add_argument("--graph-questions", type=int, default=6)
    parser.add_argument("--stride", type=int, default=8, help="graph questions: every Nth development question")
    parser.add_argument("--rows", default="/tmp/thotqen-ablations.jsonl")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--name", default="ablations")
    args = parser.parse_args()
    os.environ.setdefault("LLM_ORDER", "local")
    os.environ.setdefault("WEB_SEARCH", "false")
    runtime = eval_runtime(args.home)
    owner, docs = bench_user(runtime, args.user, create_user=False)

    questions = [q for q in load_jsonl(FINANCEBENCH / "questions.jsonl") if q["doc_name"] + ".pdf" in docs]
    retrieval_qs = questions[: args.retrieval_questions] if args.retrieval_questions else questions
    graph_qs = questions[:: args.stride][: args.graph_questions]
    base = {"web_search": False}
    rows_path = Path(args.rows)
    done = resumable_rows(rows_path, args.resume)
    seen = {(r["variant"], r["kind"], r["id"]) for r in done}

    def record(row: dict) -> None:
        done.append(row)
        append_row(rows_path, row)

    load_start = os.getloadavg()
    started = time.perf_counter()
    for variant in args.variants.split(","):
        tunables = {**base, **VARIANTS[variant]}
        config = run_config(owner_id=owner, user=args.user, tunables=tunables)
        top5 = run_config(owner_id=owner, user=args.user, tunables={**tunables, "top_k": 5})
        if variant not in RETRIEVAL_SAME_AS_BASELINE:
            subset = retrieval_qs[:: max(1, len(retrieval_qs) // args.llm_questions)][: args.llm_questions] \
                if variant in LLM_BEFORE_RANKING else retrieval_qs
            for q in subset:
                if (variant, "retrieval", q["financebench_id"]) not in seen:
                    record({"variant": variant, "kind": "retrieval", "id": q["financebench_id"],
                            "hit": retrieval_hit(q, str(docs[q["doc_name"] + ".pdf"]), top5, runtime)})
        for q in graph_qs:
            if (variant, "graph", q["financebench_id"]) not in seen:
                row = graph_row(q, str(docs[q["doc_name"] + ".pdf"]), config, runtime)
                record({"variant": variant, "kind": "graph", **row})
                print(f"{variant} {q['financebench_id']} {row['total_s']}s answered={row['answered']} "
                      f"evidence={row['evidence_cited']} correct={row['correct']}", file=sys.stderr, flush=True)

    table = []
    baseline_hits = {r["id"]: r["hit"] for r in done if r["variant"] == "baseline" and r["kind"] == "retrieval"}
    for variant in args.variants.split(","):
        source = "baseline" if variant in RETRIEVAL_SAME_AS_BASELINE else variant
        retrieved = [r for r in done if r["variant"] == source and r["kind"] == "retrieval"]
        rows = [r for r in done if r["variant"] == variant and r["kind"] == "graph"]
        table.append(summarise(variant, [r["hit"] for r in retrieved], rows))
        same = [baseline_hits[r["id"]] for r in retrieved if r["id"] in baseline_hits]
        if variant != "baseline" and same and len(same) < len(baseline_hits):
            # a variant on a subset (HyDE): the baseline on the same questions, for a fair comparison
            table[-1]["baseline_hit@5_same_questions"] = fraction(sum(same), len(same))
    lines = ["| variant | hit@5 (questions) | answered | citation precision | answers citing evidence "
             "| correct (scored) | p50 s |", "|---|---|---|---|---|---|---|"]
    for t in table:
        same = t.get("baseline_hit@5_same_questions")
        base = f"; baseline on the same: {same}" if same is not None else ""
        lines.append(f"| {t['variant']} | {t['hit@5']} ({t['retrieval_questions']}{base}) | {t['answered']} | "
                     f"{t['citation_precision']} | {t['answers_citing_evidence']} | "
                     f"{t['correct']} ({t['correct_scored']}) | "
                     f"{t['latency_p50_s']} |")
    md = "\n".join(lines) + (
        f"\n\nGraph columns over {len(graph_qs)} development questions (every {args.stride}th), each within its "
        f"own filing, LLM_ORDER={os.environ['LLM_ORDER']}. hit@5 over the retrieval questions shown "
        f"(LLM variants use a spread subset). Wall time "
        f"{(time.perf_counter() - started) / 60:.0f} min; load average at the start "
        f"{load_start[0]:.1f}, at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.\n")
    write_result(args.name, {"variants": table, "graph_questions": [q["financebench_id"] for q in graph_qs],
                             "rows": done}, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
