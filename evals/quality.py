"""Answer quality on FinanceBench development questions: the compiled graph, scored per question.

    THOTQEN_HOME=/tmp/thb-base python evals/quality.py --scope document --limit 3 [--no-ragas]

Each question is asked through the compiled graph as --user (default `bench`), scoped to its own
filing (`--scope document`) or to all the user's filings (`--scope all`). The LLM chain is
LLM_ORDER from the environment (default here: the embedded local model) and the web is off.
Per question:
  correctness     references that are figures ("$1577.00", "1.9%") by numbers: every figure of
                  the reference found in the answer within --tolerance (relative; $, %, commas,
                  thousands/millions/billions handled); references with prose by the judge (the
                  provider chain, a strict structured yes/no verdict). A refusal is incorrect.
  refusal         the answer is the "cannot answer"/refusal text or cites nothing
  citation_precision  share of cited excerpts whose (filing, page) holds evidence
  numbers_grounded    share of the answer's figures found in the excerpts it was shown
  RAGAS (unless --no-ragas): faithfulness, answer_relevancy, llm_context_precision_with_reference,
                  context_recall (judge = the chain; embeddings = the packaged MiniLM) and the
                  non-LLM non_llm_context_precision_with_reference, non_llm_context_recall,
                  non_llm_string_similarity, bleu_score, rouge_score. Contexts are the citation
                  texts; reference contexts the FinanceBench evidence texts; reference the answer.
Rows are appended to --rows as they finish (`--resume` continues). Writes
evals/results/quality_<scope>.{json,md} (or --name).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.common import FINANCEBENCH, append_row, eval_runtime, load_jsonl, resumable_rows, write_result
from graph.context import GraphParts
from graph.stream import run_config, run_graph

OWN_METRICS = ("correct", "refusal", "citation_precision", "numbers_grounded")
LLM_METRICS = ("faithfulness", "answer_relevancy", "llm_context_precision_with_reference", "context_recall")
NON_LLM_METRICS = ("non_llm_context_precision_with_reference", "non_llm_context_recall",
                   "non_llm_string_similarity", "bleu_score", "rouge_score")
# metrics that read the retrieved contexts: skipped for a row whose answer showed none
NEEDS_CONTEXTS = {"faithfulness", "llm_context_precision_with_reference", "context_recall",
                  "non_llm_context_precision_with_reference", "non_llm_context_recall"}


# -- scoring one answer ---------------------------------------------------------------------------
def judge(chain: Any, question: str, reference: str, answer: str) -> tuple[bool | None, dict]:
    """The chain's strict verdict; (None, why) when every link failed."""
    from providers.llm import AllLinksFailed

    try:
        result = chain.invoke(scoring.judge_messages(question, reference, answer), structured=scoring.Verdict)
    except AllLinksFailed as exc:
        return None, {"error": str(exc)[:300]}
    verdict: scoring.Verdict = result.parsed  # type: ignore[assignment]
    return verdict.correct == "yes", {"reason": verdict.reason, "provider": result.provider,
                                      "s": round(result.elapsed_s, 2)}


def score_answer(out: dict, question: dict, *, tolerance: float, judge_chain: Any = None,
                 refusal_texts: tuple[str, ...] = ()) -> dict:
    """Own (non-RAGAS) scores of one graph output against its FinanceBench question."""
    answer = out.get("answer") or ""
    refusal = scoring.is_refusal(answer, out.get("cited"), refusal_texts)
    reference = question["answer"]
    numeric = scoring.is_numeric_answer(reference)
    numbers = scoring.numeric_match(reference, answer, question=question["question"], rel_tol=tolerance)
    row: dict[str, Any] = {"refusal": refusal, "numeric_reference": numeric, "numbers_match": numbers,
                           "citation_precision": scoring.citation_precision(out, question),
                           "numbers_grounded": scoring.numbers_grounded(
                               answer, [c.get("text") or "" for c in out.get("citations") or []])}
    if refusal:
        row.update(correct=False, correct_by="refusal")
    elif numeric:
        row.update(correct=bool(numbers), correct_by="numbers")
    elif judge_chain is not None:
        verdict, detail = judge(judge_chain, question["question"], reference, answer)
        row.update(correct=verdict, correct_by="judge", judge=detail)
    else:  # no judge: the figures are the best we have, prose without figures stays unscored
        row.update(correct=numbers, correct_by="numbers" if numbers is not None else None)
    return row


# -- RAGAS ----------------------------------------------------------------------------------------
def ragas_metrics(which: str) -> list:
    """Fresh RAGAS metric objects (evaluate() sets their llm/embeddings)."""
    import warnings

    with warnings.catch_warnings():  # 0.4 moved the classes to ragas.metrics.collections (not evaluate()-ready)
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.metrics import (
            BleuScore,
            Faithfulness,
            LLMContextPrecisionWithReference,
            LLMContextRecall,
            NonLLMContextPrecisionWithReference,
            NonLLMContextRecall,
            NonLLMStringSimilarity,
            ResponseRelevancy,
            RougeScore,
        )
    metrics: list = []
    if which in ("all", "llm"):
        # strictness 1: one generated question per answer instead of 3 (each is a full LLM call)
        metrics += [Faithfulness(), ResponseRelevancy(strictness=1), LLMContextPrecisionWithReference(),
                    LLMContextRecall()]
    if which in ("all", "non-llm"):
        metrics += [NonLLMContextPrecisionWithReference(), NonLLMContextRecall(), NonLLMStringSimilarity(),
                    BleuScore(), RougeScore()]
    return metrics


def ragas_scores(sample: dict, llm: Any, embeddings: Any, which: str, timeout_s: int) -> dict:
    """RAGAS scores of one row: {metric name: float or None}; NaN (a failed parse) becomes None."""
    import warnings

    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.run_config import RunConfig

    metrics = ragas_metrics(which)
    if not sample["retrieved_contexts"]:
        metrics = [m for m in metrics if m.name not in NEEDS_CONTEXTS]
        sample = {**sample, "retrieved_contexts": None}
    if not metrics:
        return {}
    dataset = EvaluationDataset(samples=[SingleTurnSample(**sample)])
    # one worker: the local model serves one request at a time; parallel jobs would only time out
    config = RunConfig(timeout=timeout_s, max_workers=1, max_retries=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        result = evaluate(dataset, metrics=metrics, llm=llm, embeddings=embeddings, run_config=config,
                          raise_exceptions=False, show_progress=False)
    scores = result.scores[0] if result.scores else {}
    # "rouge_score(mode=fmeasure)" -> "rouge_score": one stable key per metric
    return {k.split("(", 1)[0]: (None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), 4))
            for k, v in scores.items()}


def ragas_sample(question: dict, out: dict) -> dict:
    return {"user_input": question["question"],
            "retrieved_contexts": [c.get("text") or "" for c in out.get("citations") or []],
            "reference_contexts": [e["evidence_text"] for e in question.get("evidence") or []],
            "response": out.get("answer") or "", "reference": question["answer"]}


# -- running ------------------------------------------------------------------------------------
def ask(question: dict, doc_ids: list[str] | None, config: RunnableConfig, parts: GraphParts) -> tuple[dict, float]:
    """The graph's answer as `thotqen ask --json` prints it (answer, citations, cited, route, provider)."""
    started = time.perf_counter()
    inputs: dict[str, Any] = {"question": question["question"]}
    if doc_ids:
        inputs["document_ids"] = doc_ids
    *_events, (_done, outcome) = run_graph(inputs, config, parts)
    return outcome.summary(), time.perf_counter() - started


def mean(values: list) -> tuple[float | None, int]:
    vals = [float(v) for v in values if v is not None]
    return (round(sum(vals) / len(vals), 3) if vals else None), len(vals)


def summarise(rows: list[dict], args: argparse.Namespace, graph_config: dict, total: int) -> dict:
    names = [*OWN_METRICS, *LLM_METRICS, *NON_LLM_METRICS]
    means = {}
    for name in names:
        values = [r.get(name) if name in OWN_METRICS else (r.get("ragas") or {}).get(name) for r in rows]
        m, n = mean(values)
        if n or name in OWN_METRICS:
            means[name] = {"mean": m, "n": n}
    payload = {"scope": args.scope, "questions_measured": len(rows), "questions_total": total,
               "note": args.note, "tolerance": args.tolerance, "judge": args.judge,
               "ragas": "off" if args.no_ragas else args.ragas_metrics, "llm_order": os.environ.get("LLM_ORDER"),
               "graph_config": graph_config, "means": means,
               "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "rows": rows}
    md = [f"# Answer quality, scope: {args.scope}", "",
          f"Measured {len(rows)} of {total} development questions. {args.note}".rstrip(),
          f"LLM_ORDER={os.environ.get('LLM_ORDER')}; graph overrides `{json.dumps(graph_config)}`; "
          f"numeric tolerance {args.tolerance:.0%}; judge: {args.judge}; RAGAS: {payload['ragas']}.", "",
          "| metric | mean | n |", "|---|---|---|"]
    md += [f"| {k} | {v['mean'] if v['mean'] is not None else '-'} | {v['n']} |" for k, v in means.items()]
    md += ["", "| id | correct (by) | refusal | citation precision | faithfulness | s |", "|---|---|---|---|---|---|"]
    for r in rows:
        faith = (r.get("ragas") or {}).get("faithfulness")
        md.append(f"| {r['id']} | {r.get('correct')} ({r.get('correct_by')}) | {r.get('refusal')} | "
                  f"{r.get('citation_precision')} | {faith if faith is not None else '-'} | {r.get('total_s')} |")
    md += ["", f"Load average at the end: {', '.join(f'{x:.1f}' for x in payload['load_average_at_end'])} "
           f"({os.cpu_count()} cores)."]
    write_result(args.name or f"quality_{args.scope}", payload, "\n".join(md),
                 directory=Path(args.results_dir) if args.results_dir else None)
    print("\n".join(md))
    return payload


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scope", choices=["document", "all"], default="document",
                   help="retrieve within the question's own filing, or across all the user's filings")
    p.add_argument("--limit", type=int, default=0, help="questions to ask (0: all)")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--stride", type=int, default=1, help="every Nth question (a subset spread over filings)")
    p.add_argument("--questions", type=Path, default=FINANCEBENCH / "questions.jsonl",
                   help="FinanceBench-format JSONL (question, answer, doc_name, evidence)")
    p.add_argument("--user", default="bench", help="the user whose ingested filings are searched")
    p.add_argument("--config", default="{}", help='graph configurable overrides as JSON, e.g. \'{"top_k": 3}\'')
    p.add_argument("--tolerance", type=float, default=0.02, help="relative tolerance for figures (0.02 = 2%%)")
    p.add_argument("--judge", choices=["chain", "none"], default="chain",
                   help="who scores prose references: the provider chain, or nobody (figures only)")
    p.add_argument("--no-ragas", action="store_true", help="own scores only (fast)")
    p.add_argument("--ragas-metrics", choices=["all", "llm", "non-llm"], default="all")
    p.add_argument("--ragas-timeout", type=int, default=900, help="seconds per RAGAS job (a metric on one row)")
    p.add_argument("--no-grammar", action="store_true",
                   help="do not send RAGAS's JSON schema as structured output to the judge")
    p.add_argument("--rows", type=Path, default=None, help="JSONL rows are appended to (default /tmp/...)")
    p.add_argument("--resume", action="store_true", help="keep rows already in --rows")
    p.add_argument("--name", default=None, help="result name under evals/results/ (default quality_<scope>)")
    p.add_argument("--results-dir", default=None, help=argparse.SUPPRESS)  # tests write elsewhere
    p.add_argument("--note", default="")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("LLM_ORDER", "local")
    os.environ.setdefault("WEB_SEARCH", "false")

    from graph import prompts
    from storage.documents import list_documents
    from storage.users import find_user

    runtime = eval_runtime()
    with runtime.database.connection() as conn:
        owner_id = find_user(conn, args.user)
        if owner_id is None:
            print(f"no user {args.user!r} under THOTQEN_HOME={runtime.settings.home}; ingest first", file=sys.stderr)
            return 2
        docs = {d["name"].removesuffix(".pdf"): str(d["id"]) for d in list_documents(conn, owner_id=owner_id)
                if d["status"] == "ready"}
    questions = load_jsonl(args.questions)
    chosen = questions[args.offset :: args.stride]
    chosen = chosen[: args.limit] if args.limit else chosen
    rows_path = args.rows or Path(f"/tmp/thotqen-quality-{args.scope}.jsonl")
    rows = resumable_rows(rows_path, args.resume)
    done = {r["id"] for r in rows}
    overrides = json.loads(args.config)
    config = run_config(owner_id=owner_id, user=args.user, tunables={"web_search": False, **overrides})
    chain = runtime.chain()
    judge_chain = chain if args.judge == "chain" else None
    llm = embeddings = None
    if not args.no_ragas and args.ragas_metrics != "non-llm":
        from evals.ragas_adapter import ragas_models

        llm, embeddings, _chat = ragas_models(chain, runtime.embedder, grammar=not args.no_grammar)
    refusal_texts = (prompts.CANNOT_ANSWER, prompts.REFUSAL)
    for q in chosen:
        qid = q.get("financebench_id") or q["question"][:60]
        if qid in done:
            continue
        if q["doc_name"] not in docs:
            print(f"skip {qid}: {q['doc_name']} is not ingested for {args.user}", file=sys.stderr)
            continue
        out, seconds = ask(q, [docs[q["doc_name"]]] if args.scope == "document" else None, config, runtime)
        row: dict[str, Any] = {"id": qid, "doc_name": q["doc_name"], "question": q["question"],
                               "expected": q["answer"], "answer": out.get("answer"), "route": out.get("route"),
                               "provider": out.get("provider"), "total_s": round(seconds, 2),
                               "cited_pages": [[c["name"], c["page"]] for c in scoring.cited_citations(out)],
                               "shown_pages": [[c["name"], c["page"]] for c in out.get("citations") or []],
                               "evidence_pages": sorted(scoring.evidence_pages(q))}
        row.update(score_answer(out, q, tolerance=args.tolerance, judge_chain=judge_chain,
                                refusal_texts=refusal_texts))
        if not args.no_ragas:
            t0 = time.perf_counter()
            row["ragas"] = ragas_scores(ragas_sample(q, out), llm, embeddings, args.ragas_metrics,
                                        args.ragas_timeout)
            row["ragas_s"] = round(time.perf_counter() - t0, 2)
        rows.append(row)
        append_row(rows_path, row)
        print(f"{len(rows)}/{len(chosen)} {qid} correct={row['correct']} ({row['correct_by']}) "
              f"refusal={row['refusal']} cit_prec={row['citation_precision']} {row['total_s']}s "
              f"ragas={row.get('ragas')}", file=sys.stderr)
    summarise(rows, args, overrides, len(questions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
