"""The grader's verdict as a probability, and its threshold chosen on company-grouped folds.

    python evals/grading_threshold.py [--rows evals/results/graph_full.json] [--stride 1]
        [--scores /tmp/grading_scores.jsonl] [--name grading_threshold]

For the excerpts the graph showed for each development question (a `bench_graph.py` result), the
product's grading call (graph/nodes/grade.py: the same prompt, the same grammar-constrained
schema) is sent to the local model's own OpenAI-style endpoint with token log-probabilities on,
and each excerpt's P(yes) is read as the grade node reads it (`yes_probabilities`). An excerpt
from an evidence page should be relevant, any other page not (stricter than relevance).

The threshold is chosen per held-back company: on the other companies' excerpts, the threshold
of the grid with the best balanced accuracy (the mean of evidence kept and other pages dropped:
an excerpt list holds one evidence page in three, so plain accuracy would reward saying no);
then applied to the held-back company. Reported: the held-back figures pooled, the sampled word
(the model's argmax, which is P(yes) >= 0.5 under the grammar) on the same excerpts, and the
threshold the whole set chooses. `GRADE_THRESHOLD` moves from 0.5 only when the held-back
figures beat the sampled word's. Scores are kept in --scores so a stopped run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.answers import dev_items
from evals.bench_grading import grade_once, grading_messages, tally
from evals.common import RESULTS, eval_runtime, write_result

GRID = [round(0.05 * n, 2) for n in range(1, 20)]


def score_row(server: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The product's grading call on the excerpts the graph showed for `row`: P(yes) and the sampled word."""
    from graph import prompts
    from graph.grading import verdicts_model

    excerpts = [{"name": c["name"], "page": c["page"], "text": c["text"]} for c in row["citations"]]
    model = verdicts_model(len(excerpts))
    graded = grade_once(server, grading_messages(excerpts, row["question"], prompts.GRADE_TASK, model), model,
                        [e["text"] for e in excerpts], logprobs=True, cache_prompt=True)
    sampled = graded.verdicts or []
    return {"id": row["id"], "labels": [c["page"] in row["evidence_pages"] for c in row["citations"]],
            "p_yes": [graded.p_yes.get(n) for n in range(1, len(excerpts) + 1)],
            "sampled": [sampled[n] if n < len(sampled) else None for n in range(len(excerpts))],
            "s": round(graded.elapsed, 2)}


def excerpts_of(scored: list[dict[str, Any]]) -> list[tuple[str, bool, float]]:
    """(company, is evidence, P(yes)) for every excerpt whose P(yes) could be read."""
    return [(r["company"], label, p) for r in scored for label, p in zip(r["labels"], r["p_yes"], strict=True)
            if p is not None]


def auc(points: list[tuple[str, bool, float]]) -> float | None:
    """The chance that an evidence excerpt's P(yes) is above another excerpt's (0.5: no better than a coin)."""
    evidence = [p for _c, label, p in points if label]
    other = [p for _c, label, p in points if not label]
    if not evidence or not other:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in evidence for b in other)
    return round(wins / (len(evidence) * len(other)), 3)


def best_threshold(points: list[tuple[str, bool, float]]) -> float:
    return max(GRID, key=lambda t: (tally([(label, p >= t) for _c, label, p in points])["balanced"], -abs(t - 0.5)))


def held_back(points: list[tuple[str, bool, float]]) -> tuple[list[tuple[bool, bool]], dict[str, float]]:
    """Each company's excerpts judged at the threshold the other companies chose."""
    pairs: list[tuple[bool, bool]] = []
    chosen: dict[str, float] = {}
    for company in sorted({c for c, _l, _p in points}):
        threshold = best_threshold([x for x in points if x[0] != company])
        chosen[company] = threshold
        pairs += [(label, p >= threshold) for c, label, p in points if c == company]
    return pairs, chosen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=str(RESULTS / "graph_full.json"), help="a bench_graph.py result")
    parser.add_argument("--stride", type=int, default=1, help="every Nth question")
    parser.add_argument("--scores", type=Path, default=Path("/tmp/grading_scores.jsonl"))
    parser.add_argument("--name", default="grading_threshold")
    parser.add_argument("--note", default="")
    parser.add_argument("--scored-only", action="store_true", help="report on the questions already scored")
    args = parser.parse_args()
    company = {i.id: i.company for i in dev_items()}
    rows = json.loads(Path(args.rows).read_text())["rows"][:: args.stride]
    done = {json.loads(line)["id"]: json.loads(line) for line in args.scores.read_text().splitlines()} \
        if args.scores.is_file() else {}
    server = None
    for row in rows:
        if row["id"] in done or not row.get("citations") or args.scored_only:
            continue
        server = server or eval_runtime().local_model()
        scored = score_row(server, row)
        done[row["id"]] = scored
        with args.scores.open("a") as f:
            f.write(json.dumps(scored) + "\n")
        print(row["id"], scored["labels"], scored["p_yes"], f"{scored['s']}s", file=sys.stderr)
    scored_rows = [{**done[r["id"]], "company": company.get(r["id"], "?")} for r in rows if r["id"] in done]
    points = excerpts_of(scored_rows)
    pairs, chosen = held_back(points)
    sampled = [(label, v) for r in scored_rows for label, v, p in zip(r["labels"], r["sampled"], r["p_yes"],
                                                                      strict=True) if v is not None and p is not None]
    whole = best_threshold(points)
    summary = {"questions": len(scored_rows), "companies": len(chosen), "held_back": tally(pairs),
               "sampled_word": tally(sampled), "threshold_half": tally([(label, p >= 0.5) for _c, label, p in points]),
               "threshold_chosen_per_fold": chosen, "threshold_whole_set": whole,
               "whole_set_in_sample": tally([(label, p >= whole) for _c, label, p in points]),
               "auc": auc(points),
               "p50_s": sorted(r["s"] for r in scored_rows)[len(scored_rows) // 2] if scored_rows else None}
    md = ["# The grader's P(yes) and its threshold on company-grouped folds", "",
          f"{summary['questions']} development questions ({summary['companies']} companies; one row in "
          f"{args.stride} of `{args.rows}`), the excerpts the graph showed for each. An excerpt from an evidence "
          f"page should be kept, any other dropped. {args.note}", "",
          "| verdict | excerpts | balanced accuracy | accuracy | evidence kept | evidence dropped | other kept "
          "| other dropped |", "|---|---|---|---|---|---|---|---|"]
    for label, key in (("sampled word (before)", "sampled_word"), ("P(yes) ≥ 0.5", "threshold_half"),
                       ("P(yes) ≥ the threshold the other companies chose (held back)", "held_back"),
                       (f"P(yes) ≥ {whole} (chosen on the whole set, in sample)", "whole_set_in_sample")):
        s = summary[key]
        md.append(f"| {label} | {s['excerpts']} | {s['balanced']} | {s['accuracy']} | {s['evidence_kept']} | "
                  f"{s['evidence_dropped']} | {s['other_kept']} | {s['other_dropped']} |")
    better = summary["held_back"]["balanced"] > summary["sampled_word"]["balanced"] + 0.02
    md += ["", f"Held back, a chosen threshold {'beats' if better else 'does not beat'} the sampled word: "
           f"GRADE_THRESHOLD {'can move' if better else 'stays 0.5 (the sampled word)'}."]
    md += ["", f"P(yes) ranks an evidence excerpt above another with probability {summary['auc']} (AUC; 0.5 is a "
           "coin). Thresholds chosen with each company held back: "
           + ", ".join(f"{c} {t}" for c, t in chosen.items()) + f". Grading call p50 {summary['p50_s']} s."]
    write_result(args.name, {"rows": args.rows, "stride": args.stride, "summary": summary, "scores": scored_rows},
                 "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
