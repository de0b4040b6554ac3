"""The graph end to end on the FinanceBench development questions with the local model.

    THOTQEN_HOME=/tmp/thq-graphbench python evals/bench_graph.py [--limit N] [--offset K]

Each question is asked through the compiled graph as user `bench`, scoped to its own filing
(like the retrieval evaluation), with the LLM chain restricted to the embedded local model
(LLM_ORDER=local) and the web off (the machine is offline). Measured per question: seconds per
node, end-to-end seconds, time to first answer token (from the start of the request), the
route, and whether the answer cites a page that holds the evidence (evidence_page_num is
0-based; citations are 1-based). A question counts as answered when its answer cites at least
one excerpt. Rows are appended to a JSONL file as they finish, so a run cut short still reports
what it measured (`--resume` continues it). Writes evals/results/graph.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.common import FINANCEBENCH, append_row, eval_runtime, load_jsonl, resumable_rows, write_result
from evals.scoring import fraction, percentile
from graph.context import GraphParts
from graph.outcome import Outcome
from graph.stream import run_config, run_graph


def ask(question: dict, doc_id: str, config: dict, parts: GraphParts) -> dict:
    started = time.perf_counter()
    first_token = None
    shown_sources: list[dict] = []  # the excerpts the answer was written from, as numbered for it
    pieces: list[str] = []  # the model's answer as streamed, before the citation checks
    for kind, data in run_graph({"question": question["question"], "document_ids": [doc_id]}, config, parts):
        if kind == "sources":
            shown_sources = data
        elif kind == "token":
            first_token = first_token if first_token is not None else time.perf_counter() - started
            pieces.append(data)
        elif kind == "reset":
            pieces = []
        elif kind == "done":
            out: Outcome = data
    total = time.perf_counter() - started
    evidence = scoring.evidence_pages(question)
    cited = scoring.cited_citations({"citations": out.citations, "cited": out.cited})
    doc_name = question["doc_name"]
    hit = any((doc_name, c["page"]) in evidence for c in cited)
    shown = any((doc_name, c["page"]) in evidence for c in shown_sources)
    return {"id": question["financebench_id"], "question": question["question"], "answer": out.answer,
            "model_answer": "".join(pieces),
            "expected": question["answer"], "route": out.route, "rounds": out.rounds,
            "timings": out.timings, "total_s": round(total, 2),
            "first_token_s": round(first_token, 2) if first_token is not None else None,
            "blocked": out.status == "blocked", "answered": bool(cited), "evidence_cited": hit,
            "evidence_shown": shown, "cited_pages": [c["page"] for c in cited],
            "evidence_pages": sorted(p for _, p in evidence), "provider": out.provider,
            "cited": out.cited,
            "grades": [g.get("relevant") for g in out.grades],  # the last round's verdicts
            "citations": [{k: c.get(k) for k in ("n", "name", "page", "text")} for c in shown_sources],
            "llm_failures": [f for call in out.llm_calls for f in call.get("llm_failures") or []],
            "llm_calls": [{"node": c.get("node"), "s": c.get("llm_elapsed_s"), **(c.get("llm_usage") or {})}
                          for c in out.llm_calls]}


def summarise(rows: list[dict], total_questions: int, note: str, name: str, config: dict) -> None:
    nodes = sorted({n for r in rows for n in r["timings"] or {}})
    per_node = {n: {"p50": percentile([r["timings"][n] for r in rows if n in r["timings"]], 50),
                    "p95": percentile([r["timings"][n] for r in rows if n in r["timings"]], 95),
                    "runs": sum(1 for r in rows if n in r["timings"])} for n in nodes}
    totals = [r["total_s"] for r in rows]
    ttft = [r["first_token_s"] for r in rows if r["first_token_s"] is not None]
    answered = [r for r in rows if r["answered"]]
    blocked = sum(1 for r in rows if r["blocked"])
    payload = {
        "questions_measured": len(rows), "questions_total": total_questions, "note": note,
        "end_to_end_s": {"p50": percentile(totals, 50), "p95": percentile(totals, 95),
                         "max": max(totals) if totals else None},
        "first_token_s": {"p50": percentile(ttft, 50), "p95": percentile(ttft, 95), "n": len(ttft)},
        "graph_config": config, "per_node_s": per_node, "blocked": blocked, "answered": len(answered),
        "answered_share": fraction(len(answered), len(rows)),
        "evidence_cited_share_of_answered": fraction(sum(r["evidence_cited"] for r in answered), len(answered)),
        "evidence_shown_share": fraction(sum(r["evidence_shown"] for r in rows), len(rows)),
        "rounds": {str(k): sum(1 for r in rows if r["rounds"] == k) for k in range(3)},
        "load_average_at_end": os.getloadavg(), "rows": rows,
    }
    dominant = max(per_node, key=lambda n: (per_node[n]["p50"] or 0) * per_node[n]["runs"]) if per_node else "-"
    md = [f"Measured {len(rows)} of {total_questions} development questions. {note}",
          f"Graph configuration overrides: `{json.dumps(config)}` (defaults otherwise: settings.py).", "",
          "| | p50 s | p95 s |", "|---|---|---|",
          f"| **end to end** | **{payload['end_to_end_s']['p50']}** | **{payload['end_to_end_s']['p95']}** |",
          f"| time to first answer token | {payload['first_token_s']['p50']} | {payload['first_token_s']['p95']} |"]
    md += [f"| {n} (ran in {v['runs']} questions) | {v['p50']} | {v['p95']} |" for n, v in per_node.items()]
    md += ["", f"Blocked: {blocked}. Answered with citations: {len(answered)} of {len(rows)} "
           f"({payload['answered_share']:.0%}). Of those, citing an evidence page: "
           f"{payload['evidence_cited_share_of_answered'] if answered else '-'}. Evidence page among the excerpts "
           f"shown to the model: {payload['evidence_shown_share']}. Rounds: {payload['rounds']}.",
           f"Largest total time: `{dominant}`. Load average at the end: "
           f"{', '.join(f'{x:.1f}' for x in payload['load_average_at_end'])} (2 cores, shared)."]
    write_result(name, payload, "# The graph end to end with the local model\n\n" + "\n".join(md))
    print("\n".join(md))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="questions to ask (0: all)")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--stride", type=int, default=1, help="every Nth question (a subset spread over filings)")
    parser.add_argument("--rows", default="/tmp/thotqen-bench-graph.jsonl", help="where rows are appended")
    parser.add_argument("--resume", action="store_true", help="keep rows already in --rows")
    parser.add_argument("--ids", default="", help="only these question ids (comma-separated suffixes)")
    parser.add_argument("--note", default="")
    parser.add_argument("--config", default="{}", help='graph configuration as JSON, e.g. \'{"top_k": 3}\'')
    parser.add_argument("--name", default="graph", help="result file name under evals/results/")
    args = parser.parse_args()
    os.environ.setdefault("LLM_ORDER", "local")
    os.environ.setdefault("WEB_SEARCH", "false")

    from storage.documents import list_documents
    from storage.users import get_or_create_user

    runtime = eval_runtime()
    with runtime.database.connection() as conn:
        owner_id = get_or_create_user(conn, "bench")
        docs = {d["name"].removesuffix(".pdf"): str(d["id"]) for d in list_documents(conn, owner_id=owner_id)}
    questions = load_jsonl(FINANCEBENCH / "questions.jsonl")
    chosen = questions[args.offset :: args.stride]
    chosen = chosen[: args.limit] if args.limit else chosen
    if args.ids:
        chosen = [q for q in chosen if q["financebench_id"].endswith(tuple(args.ids.split(",")))]
    rows_path = Path(args.rows)
    rows = resumable_rows(rows_path, args.resume)
    done = {r["id"] for r in rows}
    config = run_config(owner_id=owner_id, user="bench", tunables={"web_search": False, **json.loads(args.config)})
    for q in chosen:
        if q["financebench_id"] in done:
            continue
        row = ask(q, docs[q["doc_name"]], config, runtime)
        rows.append(row)
        append_row(rows_path, row)
        print(f"{len(rows)}/{len(chosen)} {row['total_s']}s answered={row['answered']} "
              f"evidence={row['evidence_cited']} route={','.join(row['route'] or [])}", file=sys.stderr)
    summarise(rows, len(questions), args.note, args.name, json.loads(args.config))


if __name__ == "__main__":
    main()
